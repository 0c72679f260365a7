// Probe: how fast the weight read of a small-M GEMM can stream, with kiln's access pattern and others.
//
// A small-M wgmma kernel reads B [N, K] (fp8, K-major) through TMA boxes of 64 rows x 128 bytes: each box takes
// 128 bytes from 64 rows 7 KB (K) apart, and the CTA walks K one box (K-tile) at a time. This probe streams B the
// same way with no math (one producer thread issuing the boxes into a ring of stages, one warp taking each stage as it
// lands and giving it back), and varies what the memory system sees:
//   g      K-tiles issued together: the producer waits for g free stages, then issues their g boxes back to back, so
//          each row is asked for g x 128 contiguous bytes at once (g = 1: a stage at a time);
//   split  CTAs along K (split-K: each CTA takes a K range of its 64-row block);
//   tiled  B stored box by box (each 64 x 128 box 8 KB contiguous, boxes of a row block in K order): the same bytes in
//          the order the kernel reads them, read with the same boxes through a 3-d tensor map;
// and reports the rate of B's bytes (cold L2: B rotated over copies that together exceed the L2).
// The barriers and copies are kiln's own (device/kiln_sm90.h); tuning/results/probe_weight_stream_h100/dram_rows.txt
// came from 4bc48c4's version of this file (its own PTX wrappers, a 2-d map for the plain layout: the same boxes).
// Build: nvcc -O3 -arch=sm_90a -I device -o dram_rows tuning/probes/dram_rows.cu -lcuda
// Run:   ./dram_rows            (prints one line a configuration)
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>

#include "kiln_sm90.h"

using namespace kiln::sm90;

static void check(cudaError_t e, const char *what, int line) {
    if (e == cudaSuccess) return;
    fprintf(stderr, "dram_rows.cu:%d %s: %s\n", line, what, cudaGetErrorString(e));
    exit(1);
}
#define CK(x) check((x), #x, __LINE__)

constexpr int ROWS = 64, BOX = 128, STAGE = ROWS * BOX, MAXS = 16;

// Work item w = (row block w / split, K slice w % split); CTA c takes items c, c + gridDim.x, ... (persistent where
// the items outnumber the SMs); the ring's stage and phase run on across a CTA's items.
__global__ void __launch_bounds__(64) stream(const __grid_constant__ kiln_tma_desc map, int tiled, int kt_total,
                                             int split, int items, int stages, int g, unsigned *sink) {
    extern __shared__ __align__(1024) uint8_t smem_raw[];
    uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + MAXS * STAGE), *empty = full + MAXS;
    const int per = (kt_total + split - 1) / split;
    if (threadIdx.x == 0) {
        for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], 1);
        mbar_init_fence();
    }
    __syncthreads();
    int t = 0;  // K-tiles of this CTA so far (the ring position)
    unsigned acc = 0;
    for (int w = blockIdx.x; w < items; w += gridDim.x) {
        const int blk = w / split, sp = w % split;
        const int k0 = sp * per, k1 = min(kt_total, k0 + per), n = max(k1 - k0, 0);
        if (threadIdx.x == 0) {  // producer: g K-tiles at a time
            for (int i = 0; i < n; i += g) {
                const int cnt = min(g, n - i);
                for (int j = 0; j < cnt; ++j) {
                    const int u = t + i + j, s = u % stages;
                    if (u >= stages) mbar_wait(&empty[s], ((u / stages) - 1) & 1);
                }
                for (int j = 0; j < cnt; ++j) {
                    const int u = t + i + j, s = u % stages, kt = k0 + i + j;
                    mbar_arrive_expect_tx(&full[s], STAGE);
                    if (tiled)
                        tma_load_3d(smem + s * STAGE, &map, &full[s], 0, kt * ROWS, blk);
                    else
                        tma_load_3d(smem + s * STAGE, &map, &full[s], kt * BOX, blk * ROWS, 0);
                }
            }
        } else if (threadIdx.x >= 32) {  // the consumer warp: each stage as it lands, then back
            for (int i = 0; i < n; ++i) {
                const int u = t + i, s = u % stages;
                mbar_wait(&full[s], (u / stages) & 1);
                acc += smem[s * STAGE + (threadIdx.x - 32) * 4];
                __syncwarp();
                if (threadIdx.x == 32) mbar_arrive(&empty[s]);
            }
        }
        t += n;
    }
    if (acc == 0xdeadbeef) sink[0] = acc;
}

// A 3-d map of bytes with boxes of {128 bytes, 64 rows, 1}, 128-byte swizzle (as the runtime's operand maps).
static kiln_tma_desc map_u8(void *base, cuuint64_t d0, cuuint64_t d1, cuuint64_t d2, cuuint64_t s1, cuuint64_t s2) {
    kiln_tma_desc m;
    const cuuint64_t dims[3] = {d0, d1, d2}, strides[2] = {s1, s2};
    const cuuint32_t box[3] = {BOX, ROWS, 1}, es[3] = {1, 1, 1};
    const CUresult r = cuTensorMapEncodeTiled(
        reinterpret_cast<CUtensorMap *>(&m), CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, base, dims, strides, box, es,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", (int)r), exit(1);
    return m;
}
// plain: {K bytes, N rows, one batch}; box of K-tile kt of row block blk at (kt * 128, blk * 64, 0)
static kiln_tma_desc map_plain(void *base, int n, int k) { return map_u8(base, k, n, 1, k, (cuuint64_t)k * n); }
// tiled: {128 bytes, 64 rows x K-tiles, row blocks}; box of K-tile kt of row block blk at (0, kt * 64, blk)
static kiln_tma_desc map_tiled(void *base, int n, int k) {
    const cuuint64_t kt = k / BOX;
    return map_u8(base, BOX, ROWS * kt, n / ROWS, BOX, BOX * ROWS * kt);
}

int main(int argc, char **argv) {
    CK(cudaFree(0));  // the primary context
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const size_t smem = MAXS * STAGE + 2 * MAXS * 8 + 1024;
    CK(cudaFuncSetAttribute(stream, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    unsigned *sink;
    CK(cudaMalloc(&sink, 4));
    const int shapes[][2] = {{4096, 7168}, {7168, 2048}, {2112, 7168}, {7168, 16384}, {24576, 1536}};
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    printf("%-12s %5s %5s %6s %3s %6s %9s %8s\n", "NxK", "ctas", "split", "layout", "g", "stages", "us", "TB/s");
    for (auto &sh : shapes) {
        const int n = sh[0], k = sh[1], kt = k / BOX;
        const size_t bytes = (size_t)n * k;
        const int copies = (int)((160u << 20) / bytes) + 2;  // > 2 x the 50 MB L2 together: every call cold
        std::vector<uint8_t *> buf(copies);
        for (auto &b : buf) {
            CK(cudaMalloc(&b, bytes));
            CK(cudaMemset(b, 1, bytes));
        }
        std::vector<kiln_tma_desc> plain(copies), tiled(copies);
        for (int c = 0; c < copies; ++c) plain[c] = map_plain(buf[c], n, k), tiled[c] = map_tiled(buf[c], n, k);
        const int blocks = n / ROWS;
        for (int split : {1, 2, 4}) {
            const int items = blocks * split, grid = items < sms ? items : sms;  // one CTA an SM (128 KB each)
            if (split > 1 && blocks >= sms) continue;
            for (int lay = 0; lay < 2; ++lay)
                for (int stages : {8, 12})
                    for (int g : {1, 2, 4, 8}) {
                        if (g > stages / 2) continue;
                        auto launch = [&](int c) {
                            stream<<<grid, 64, smem>>>(lay ? tiled[c] : plain[c], lay, kt, split, items, stages, g,
                                                       sink);
                        };
                        for (int w = 0; w < copies; ++w) launch(w);
                        // five batches of 4 x copies calls back to back (each call on the next copy, so L2 is
                        // cold), the median batch's time a call
                        const int reps = 4 * copies;
                        std::vector<float> ts;
                        for (int b = 0; b < 5; ++b) {
                            CK(cudaEventRecord(e0));
                            for (int r = 0; r < reps; ++r) launch(r % copies);
                            CK(cudaEventRecord(e1));
                            CK(cudaEventSynchronize(e1));
                            float ms;
                            CK(cudaEventElapsedTime(&ms, e0, e1));
                            ts.push_back(ms / reps);
                        }
                        CK(cudaGetLastError());
                        std::sort(ts.begin(), ts.end());
                        const float med = ts[ts.size() / 2];
                        printf("%5dx%-6d %5d %5d %6s %3d %6d %9.2f %8.3f\n", n, k, grid, split,
                               lay ? "tiled" : "plain", g, stages, med * 1e3, bytes / (med * 1e-3) / 1e12);
                    }
        }
        for (auto &b : buf) CK(cudaFree(b));
    }
    // reference: device-to-device copy of 1 GB (reads + writes)
    {
        uint8_t *a, *b;
        const size_t sz = 1u << 30;
        CK(cudaMalloc(&a, sz));
        CK(cudaMalloc(&b, sz));
        CK(cudaMemcpy(b, a, sz, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e0));
        for (int i = 0; i < 5; ++i) CK(cudaMemcpy(b, a, sz, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        printf("memcpy d2d 1 GiB: %.3f TB/s (read + write)\n", 2.0 * 5 * sz / (ms * 1e-3) / 1e12);
    }
    return 0;
}
