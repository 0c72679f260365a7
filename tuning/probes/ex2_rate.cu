// Throughput of the softmax's exponentials on one GPU: ex2.approx.f32 (one element an instruction) against
// ex2.approx.f16x2 (two), each thread running 8 independent chains y = 2^-y so that nothing waits on latency.
// Prints elements per clock per SM (the SM clock read from the device properties), to compare with the MUFU
// rate of 16 a clock per SM. Build: nvcc -O3 -arch=sm_90a tuning/probes/ex2_rate.cu -o ex2_rate
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

constexpr int CHAINS = 8, ITERS = 4096;

__global__ void ex2_f32(float *out) {
    float y[CHAINS];
    for (int c = 0; c < CHAINS; ++c) y[c] = 0.001f * (threadIdx.x + c);
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y[c]) : "f"(-y[c]));
    float s = 0;
    for (int c = 0; c < CHAINS; ++c) s += y[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void ex2_f16x2(float *out) {
    uint32_t y[CHAINS];
    for (int c = 0; c < CHAINS; ++c) y[c] = 0x2c002c00u + threadIdx.x + c;
    for (int it = 0; it < ITERS; ++it)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c)
            asm volatile("{\n.reg .b32 t;\nxor.b32 t, %1, 0x80008000;\nex2.approx.f16x2 %0, t;\n}" : "=r"(y[c]) : "r"(y[c]));
    uint32_t s = 0;
    for (int c = 0; c < CHAINS; ++c) s ^= y[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = (float)s;
}

template <class K> static int time(const char *name, K kern, int elems_per_op, const cudaDeviceProp &p, float *d) {
    const int blocks = p.multiProcessorCount * 4, threads = 256;
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    kern<<<blocks, threads>>>(d);
    CK(cudaEventRecord(a));
    for (int r = 0; r < 5; ++r) kern<<<blocks, threads>>>(d);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    const double elems = 5.0 * blocks * threads * (double)CHAINS * ITERS * elems_per_op;
    int khz = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    const double clocks = ms * 1e-3 * khz * 1e3;
    printf("%-10s %8.3f ms  %6.2f elements / clock / SM (at %d MHz)\n", name, ms, elems / clocks / p.multiProcessorCount,
           khz / 1000);
    return 0;
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    float *d;
    CK(cudaMalloc(&d, sizeof(float) * p.multiProcessorCount * 4 * 256));
    printf("%s\n", p.name);
    if (time("ex2.f32", ex2_f32, 1, p, d) || time("ex2.f16x2", ex2_f16x2, 2, p, d)) return 1;
    return 0;
}
