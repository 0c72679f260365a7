// Hopper (sm_90a) primitives of the wgmma family: mbarriers, TMA bulk tensor copies, wgmma shared-memory
// descriptors and fences, register reallocation, named barriers. Each is one PTX instruction; kiln_gemm_wgmma.h
// composes them.
#ifndef KILN_SM90_H
#define KILN_SM90_H

#include "kiln_mma_ptx.h"  // smem_addr

namespace kiln {
namespace sm90 {

// ---- mbarrier ----
KILN_DEVICE void mbar_init(uint64_t *bar, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Programmatic dependent launch: waits until the grids this one depends on (the stream's previous kernel, when it was
// launched overlapped with it) have completed and their memory is visible; returns at once otherwise.
KILN_DEVICE void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// Lets the stream's next kernel, if launched overlapped, start once every CTA of this grid has said so (or exited).
KILN_DEVICE void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
// Makes the initialised barriers visible to the async proxy (TMA) and the other threads.
KILN_DEVICE void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
KILN_DEVICE void mbar_arrive_expect_tx(uint64_t *bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}
KILN_DEVICE void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// An arrival on the barrier once this thread's earlier cp.async copies have landed (counted in its init count).
KILN_DEVICE void cp_async_mbar_arrive(uint64_t *bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
// An arrival on the barrier at the same shared-memory offset in CTA `cta` of the cluster. The default semantics
// (release at CTA scope): what it orders is the arriving warp's wgmma reads of the stage, done before it arrives;
// .release.cluster made every arrival a fence, and the multicast kernels 3x slower.
KILN_DEVICE void mbar_arrive_cluster(uint64_t *bar, uint32_t cta) {
    asm volatile(
        "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_addr(bar)),
        "r"(cta)
        : "memory");
}
#ifdef KILN_PROBE_WAITS
// Timing probe (tuning/probes/gemm_waits_run.sh): the SM cycles each warp's lane 0 spends in mbar_wait, one counter
// a warp in shared memory; the GEMM kernel zeroes them at its start and writes them out at its end (kiln_gemm_wgmma.h).
KILN_DEVICE unsigned long long *probe_waits() {
    __shared__ unsigned long long waits[16];
    return waits;
}
#endif
// Waits until the barrier's phase with the given parity has completed.
KILN_DEVICE void mbar_wait(uint64_t *bar, uint32_t parity) {
    const uint32_t addr = smem_addr(bar);
    uint32_t done;
#ifdef KILN_PROBE_WAITS
    const long long t0 = clock64();
#endif
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(addr), "r"(parity)
            : "memory");
    } while (!done);
#ifdef KILN_PROBE_WAITS
    if (threadIdx.x % 32 == 0) atomicAdd(&probe_waits()[threadIdx.x / 32 % 16], (unsigned long long)(clock64() - t0));
#endif
}

// One f32 from shared memory (ld.shared: a pointer into the realigned dynamic shared memory would be read with
// generic loads). Volatile: it stays after the mbarrier wait that made the value visible.
KILN_DEVICE float lds_f32(uint32_t addr) {
    float v;
    asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr));
    return v;
}

// ---- TMA (cp.async.bulk.tensor), maps are __grid_constant__ kernel parameters ----
KILN_DEVICE void tma_prefetch(const kiln_tma_desc *map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"((uint64_t)map) : "memory");
}
// Box at (c0, c1, c2) of a 3-D map into shared memory; completes `bytes` on bar.
KILN_DEVICE void tma_load_3d(void *dst, const kiln_tma_desc *map, uint64_t *bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n"
        ::"r"(smem_addr(dst)), "l"((uint64_t)map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}
// The same box into the same shared-memory offset of every CTA in `ctas` (a bit per rank of the cluster), each
// completing its bytes on the barrier at bar's offset in that CTA.
KILN_DEVICE void tma_load_3d_multicast(void *dst, const kiln_tma_desc *map, uint64_t *bar, int c0, int c1, int c2,
                                       uint16_t ctas) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4, %5}], [%2], %6;\n"
        ::"r"(smem_addr(dst)), "l"((uint64_t)map), "r"(smem_addr(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(ctas)
        : "memory");
}

// Box at (c0, c1, c2) of a 3-D map from shared memory to global memory, as one bulk async-group of the issuing
// thread (commit with bulk_commit). Elements outside the map's extents are not written.
KILN_DEVICE void tma_store_3d(const kiln_tma_desc *map, uint32_t src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 ::"l"((uint64_t)map), "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// The same for a 4-D map at (c0, c1, c2, c3).
KILN_DEVICE void tma_store_4d(const kiln_tma_desc *map, uint32_t src, int c0, int c1, int c2, int c3) {
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n"
                 ::"l"((uint64_t)map), "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
}
// Closes the issuing thread's bulk stores so far into one group (an empty group when there were none).
KILN_DEVICE void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of the issuing thread's groups still read shared memory (their sources may be rewritten).
template <int N> KILN_DEVICE void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of the issuing thread's groups are still running (their global writes done).
template <int N> KILN_DEVICE void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory"); }
// Orders this thread's shared-memory writes before later async-proxy (TMA) reads of them.
KILN_DEVICE void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Orders global memory that this thread's generic accesses observed (e.g. another CTA's stores, acquired) before its
// later async-proxy (TMA) accesses of global memory.
KILN_DEVICE void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }
// Device-scope acquire load and release store of a 32-bit flag in global memory.
KILN_DEVICE int ld_acquire_gpu(const int32_t *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
KILN_DEVICE void st_release_gpu(int32_t *p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
KILN_DEVICE void red_release_gpu_add(int32_t *p, int v) {
    asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
// An 8-byte global load through the read-only (non-coherent) path: for data no thread of the kernel writes.
KILN_DEVICE uint2 ldg_nc_v2(const void *p) {
    uint2 v;
    asm("ld.global.nc.v2.b32 {%0, %1}, [%2];\n" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}
KILN_DEVICE void sts_u32(uint32_t addr, uint32_t v) {
    asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
KILN_DEVICE void sts_v2_u32(uint32_t addr, uint32_t v0, uint32_t v1) {
    asm volatile("st.shared.v2.u32 [%0], {%1, %2};\n" ::"r"(addr), "r"(v0), "r"(v1) : "memory");
}
KILN_DEVICE void sts_v4_u32(uint32_t addr, uint32_t v0, uint32_t v1, uint32_t v2, uint32_t v3) {
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v0), "r"(v1), "r"(v2), "r"(v3)
                 : "memory");
}
KILN_DEVICE uint4 lds_v4_u32(uint32_t addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

// ---- wgmma ----
// Shared-memory matrix descriptor of a K-major tile stored as rows of 128 bytes in the 128-byte swizzle (the layout
// TMA writes with CU_TENSOR_MAP_SWIZZLE_128B): 8-row groups 1024 bytes apart (stride byte offset), leading byte
// offset unused for this layout, swizzle mode 1. Moving along K inside the 128 bytes adds to the start address.
KILN_DEVICE uint64_t desc_k128(uint32_t smem_addr) {
    return (uint64_t)((smem_addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
           ((uint64_t)1 << 62);
}
// desc_k128(smem_addr + off) from desc_k128(smem_addr), for off a multiple of 16: only the start address field (the
// low 14 bits, address / 16) moves, and within a CTA's shared memory (< 256 KB) it cannot carry into the fields above,
// so one 32-bit add does it. With the base descriptor computed once, each wgmma of a K-tile costs one add of a
// constant instead of rebuilding its descriptors.
KILN_DEVICE uint64_t desc_add(uint64_t desc, uint32_t off) {
    return ((desc >> 32) << 32) | (uint32_t)((uint32_t)desc + (off >> 4));
}
KILN_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
KILN_DEVICE void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> KILN_DEVICE void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }
// Keeps the compiler from moving accumulator reads/writes across the asynchronous wgmma.
template <int R> KILN_DEVICE void fence_regs(float (&r)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
KILN_DEVICE void fence_reg(uint32_t &r) { asm volatile("" : "+r"(r)::"memory"); }

// ---- registers and barriers ----
template <int REGS> KILN_DEVICE void regs_dealloc() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS)); }
template <int REGS> KILN_DEVICE void regs_alloc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS)); }
// Barrier over `threads` threads (a multiple of 32) with id 1..15 (0 is __syncthreads).
KILN_DEVICE void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Arrives at barrier `id` without waiting (the waiting side uses named_barrier with the same thread count).
KILN_DEVICE void named_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// named_barrier that also ANDs a predicate over its threads (bar.red.and.pred): true in every thread only where
// every thread passed true. A decision that must be uniform over a warpgroup (code holding wgmma, which all four
// warps must execute together) is taken this way; a warp vote leaves the four warps free to disagree.
KILN_DEVICE bool named_barrier_and(int id, int threads, bool pred) {
    uint32_t all;
    asm volatile("{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.and.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}\n"
                 : "=r"(all)
                 : "r"((uint32_t)pred), "r"(id), "r"(threads)
                 : "memory");
    return all != 0;
}

// ---- thread-block clusters (a CTA's rank in a cluster of __cluster_dims__(n, 1, 1) is blockIdx.x % n) ----
// Every thread of every CTA in the cluster: this one's earlier shared-memory accesses (and barrier inits) are
// visible to the others' later ones.
KILN_DEVICE void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// The same in two halves, so that a CTA can work between them (every thread arrives once, then waits once).
KILN_DEVICE void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;\n" ::: "memory"); }
KILN_DEVICE void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory"); }
// The address in CTA `rank`'s shared memory (of this cluster) of this CTA's shared-memory address `addr`.
KILN_DEVICE uint32_t cluster_peer(uint32_t addr, int rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
KILN_DEVICE void sts_v4_f32(uint32_t addr, float a, float b, float c, float d) {
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
// Four floats from a cluster shared-memory address (cluster_peer).
KILN_DEVICE void ld_cluster_v4_f32(uint32_t addr, float (&v)[4]) {
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v[0]), "=f"(v[1]), "=f"(v[2]), "=f"(v[3])
                 : "r"(addr)
                 : "memory");
}

// stmatrix .x4: four 8x8 matrices of 16-bit elements, each thread holding row l / 4, elements 2 (l % 4) and
// 2 (l % 4) + 1 of each (ldmatrix's layout, which is also a wgmma accumulator's pair layout); lane l gives the address
// of row l % 8 of matrix l / 8 (16 bytes).
KILN_DEVICE void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
                 "r"(r2), "r"(r3)
                 : "memory");
}
// stmatrix .x4 .trans: four 8x8 matrices of 16-bit elements, each thread holding row l / 4, elements 2 (l % 4) and
// 2 (l % 4) + 1 of each (ldmatrix's layout), stored transposed: lane l gives the address of row l % 8 of matrix l / 8,
// which receives column l % 8 of the fragment.
KILN_DEVICE void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

// ldmatrix .x4 at a shared-memory address: four 8x8 matrices of 16-bit elements; lane l gives the row address of
// row l % 8 of matrix l / 8, and receives row l / 4, elements 2 (l % 4) and 2 (l % 4) + 1 of each matrix.
KILN_DEVICE void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// .x2: two matrices; lanes 0..15 give the row addresses (the others' are ignored but must be valid).
KILN_DEVICE void ldmatrix_x2(uint32_t (&r)[2], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

}  // namespace sm90
}  // namespace kiln

#endif  // KILN_SM90_H
