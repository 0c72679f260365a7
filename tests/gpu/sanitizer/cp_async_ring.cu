// Does compute-sanitizer's racecheck follow an mbarrier arrival that cp.async.mbarrier.arrive.noinc ties to a warp's
// copies? The block-scaled GEMM's scale warp fills its ring that way (kiln_gemm_wgmma.h, copy_scales and
// produce_scales), and racecheck reports hazards between those copies and the consumers' ld.shared reads of them.
// This is the same ring with nothing else in it:
//   warp 0 (the filler): for each stage, waits on the stage's empty barrier, copies ROW floats from global memory
//     with 4-byte cp.async, and arrives on the stage's full barrier (init count 32: one arrival a lane);
//       mode 0: cp.async.mbarrier.arrive.noinc (the arrival happens when the lane's copies have landed);
//       mode 1: cp.async.wait_all, then a plain mbarrier.arrive (release semantics at CTA scope);
//       mode 2: no cp.async: ld.global and st.shared by the lanes themselves, then a plain mbarrier.arrive (whether
//         the tool models mbarrier synchronization at all);
//   warps 1..4 (the readers): wait on the full barrier, sum the stage with ld.shared, then __threadfence_block,
//     __syncwarp and one arrival a warp on the empty barrier (init count 4), as the kernels' release_read does.
// All three modes are correct by the PTX memory model: the readers' sums must equal the host's. Prints one line per mode
// (all, or the one named by the argument); run one mode at a time under `compute-sanitizer --tool racecheck` to see
// which one the tool reports (tests/gpu/device_run.sh does):
//   nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a tests/gpu/sanitizer/cp_async_ring.cu -o /tmp/ring
//   compute-sanitizer --tool racecheck /tmp/ring 0
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace {

constexpr int STAGES = 4, ROW = 128, ITERS = 64, READERS = 4;

__device__ uint32_t smem_u32(const void *p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ void bar_init(uint64_t *b, int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(b)), "r"(count) : "memory");
}
__device__ void bar_arrive(uint64_t *b) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(b)) : "memory");
}
__device__ void bar_wait(uint64_t *b, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(smem_u32(b)), "r"(parity)
                     : "memory");
    } while (!done);
}

__global__ void ring(const float *src, float *sums, int mode) {
    __shared__ alignas(16) float slot[STAGES][ROW];
    __shared__ uint64_t full[STAGES], empty[STAGES];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            bar_init(&full[s], 32);
            bar_init(&empty[s], READERS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) {
        for (int it = 0; it < ITERS; ++it) {
            const int s = it % STAGES;
            bar_wait(&empty[s], ((it / STAGES) & 1) ^ 1);
            if (mode == 2) {
                for (int i = lane; i < ROW; i += 32)
                    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(smem_u32(&slot[s][i])), "f"(src[(size_t)it * ROW + i])
                                 : "memory");
                bar_arrive(&full[s]);
                continue;
            }
            for (int i = lane; i < ROW; i += 32)
                asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(smem_u32(&slot[s][i])),
                             "l"(src + (size_t)it * ROW + i)
                             : "memory");
            if (mode == 0) {
                asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(&full[s])) : "memory");
            } else {
                asm volatile("cp.async.wait_all;\n" ::: "memory");
                bar_arrive(&full[s]);
            }
        }
        asm volatile("cp.async.wait_all;\n" ::: "memory");
    } else {
        float acc = 0.f;
        for (int it = 0; it < ITERS; ++it) {
            const int s = it % STAGES;
            bar_wait(&full[s], (it / STAGES) & 1);
            for (int i = lane; i < ROW; i += 32) {
                float v;
                asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(smem_u32(&slot[s][i])) : "memory");
                acc += v;
            }
            __threadfence_block();
            __syncwarp();
            if (lane == 0) bar_arrive(&empty[s]);
        }
        for (int o = 16; o; o /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        if (lane == 0) sums[warp - 1] = acc;
    }
}

}  // namespace

int main(int argc, char **argv) {
    const int only = argc > 1 ? atoi(argv[1]) : -1;
    const size_t n = (size_t)ITERS * ROW;
    float *h = static_cast<float *>(malloc(n * sizeof(float)));
    double want = 0.0;
    for (size_t i = 0; i < n; ++i) {
        h[i] = (float)((i * 7919) % 1000) / 8.f;  // exact in float, and so are the sums
        want += h[i];
    }
    float *src, *sums;
    if (cudaMalloc(&src, n * sizeof(float)) != cudaSuccess || cudaMalloc(&sums, READERS * sizeof(float)) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc failed\n");
        return 2;
    }
    cudaMemcpy(src, h, n * sizeof(float), cudaMemcpyHostToDevice);
    int bad = 0;
    for (int mode = 0; mode < 3; ++mode) {
        if (only >= 0 && mode != only) continue;
        cudaMemset(sums, 0xff, READERS * sizeof(float));
        ring<<<1, 32 * (READERS + 1)>>>(src, sums, mode);
        float got[READERS];
        const cudaError_t e = cudaMemcpy(got, sums, sizeof got, cudaMemcpyDeviceToHost);
        int ok = e == cudaSuccess;
        for (int r = 0; ok && r < READERS; ++r) ok = (double)got[r] == want;
        printf("mode %d (%s): %s (reader 0 sum %.1f, want %.1f)\n", mode,
               mode == 0 ? "cp.async.mbarrier.arrive.noinc"
               : mode == 1 ? "cp.async.wait_all + mbarrier.arrive"
                           : "st.shared + mbarrier.arrive",
               ok ? "sums right" : (e != cudaSuccess ? cudaGetErrorString(e) : "SUMS WRONG"), (double)got[0], want);
        bad |= !ok;
    }
    cudaFree(src);
    cudaFree(sums);
    free(h);
    return bad;
}
