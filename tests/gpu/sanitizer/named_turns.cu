// The attention kernels' turn-taking between two consumer warpgroups (kiln_attn_wgmma.h, schedules 2 and 3), alone:
// consumer c waits on named barrier 2 + c (its own 128 threads with bar.sync, the other consumer's 128 with
// bar.arrive), does its turn, and hands over with bar.arrive on 3 - c; consumer 1 arrives on 2 once before the
// first turn, and consumer 0 absorbs consumer 1's last hand-over. Each turn appends the consumer's index to a log in
// shared memory; the log must read 0 1 0 1 ... Warpgroup 0 only waits at the end (the kernels' producer). Prints
// the log's check; run under `compute-sanitizer --tool racecheck` to see whether the tool follows bar.arrive
// hand-overs (the schedule-3 attention kernel did not finish under it).
//   nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a tests/gpu/sanitizer/named_turns.cu -o /tmp/turns
#include <cstdio>

#include <cuda_runtime.h>

namespace {

constexpr int TURNS = 8;

__device__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
__device__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }

__global__ void turns(int *out) {
    __shared__ int log[2 * TURNS];
    __shared__ int next;
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (threadIdx.x == 0) next = 0;
    __syncthreads();
    if (wg > 0) {
        const int cw = wg - 1;
        if (cw == 1) bar_arrive(2, 256);
        for (int j = 0; j < TURNS; ++j) {
            bar_sync(2 + cw, 256);
            if (tid == 0) log[next++] = cw;  // the turn: only this consumer touches the log now
            bar_arrive(3 - cw, 256);
        }
        if (cw == 0) bar_sync(2, 256);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int bad = next != 2 * TURNS;
        for (int i = 0; i < 2 * TURNS && !bad; ++i) bad = log[i] != i % 2;
        *out = bad;
    }
}

}  // namespace

int main() {
    int *d, h = -1;
    cudaMalloc(&d, sizeof(int));
    turns<<<1, 384>>>(d);
    const cudaError_t e = cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("turns: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : h == 0 ? "log 0 1 0 1 ... right" : "LOG WRONG");
    cudaFree(d);
    return e != cudaSuccess || h != 0;
}
