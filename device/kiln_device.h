// kiln device vocabulary: the few names kernels use for types, indices and barriers, on both vendors.
// NVIDIA: kernels compile with nvcc as CUDA. AMD: clang -x hip -nogpulib with clang builtins (no HIP headers, see
// DESIGN.md: ROCm 5.2's headers route threadIdx through ockl and lack gfx942 bitcode).
#ifndef KILN_DEVICE_H
#define KILN_DEVICE_H

#include <stdint.h>

#include "abi/kiln_abi.h"  // the argument kernels take, shared with the runtime

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define KILN_DEVICE __device__ __forceinline__
#define KILN_KERNEL extern "C" __global__
#define KILN_RESTRICT __restrict__

typedef __half kiln_f16;
typedef __nv_bfloat16 kiln_bf16;

namespace kiln {
KILN_DEVICE int thread_x() { return (int)threadIdx.x; }
KILN_DEVICE int block_x() { return (int)blockIdx.x; }
KILN_DEVICE int block_z() { return (int)blockIdx.z; }
KILN_DEVICE void barrier() { __syncthreads(); }
KILN_DEVICE float f16_to_f32(kiln_f16 v) { return __half2float(v); }
KILN_DEVICE float bf16_to_f32(kiln_bf16 v) { return __bfloat162float(v); }
KILN_DEVICE kiln_f16 f32_to_f16(float v) { return __float2half_rn(v); }
KILN_DEVICE kiln_bf16 f32_to_bf16(float v) { return __float2bfloat16_rn(v); }
KILN_DEVICE float fast_erf(float v) { return erff(v); }
KILN_DEVICE float fast_exp(float v) { return __expf(v); }
KILN_DEVICE float fast_div(float a, float b) { return a / b; }
}  // namespace kiln

#elif defined(__HIP__)
#define KILN_DEVICE __attribute__((device)) inline __attribute__((always_inline))
#define KILN_KERNEL extern "C" __attribute__((global))
#define KILN_RESTRICT __restrict__

typedef _Float16 kiln_f16;
typedef __bf16 kiln_bf16;

namespace kiln {
KILN_DEVICE int thread_x() { return (int)__builtin_amdgcn_workitem_id_x(); }
KILN_DEVICE int block_x() { return (int)__builtin_amdgcn_workgroup_id_x(); }
KILN_DEVICE int block_z() { return (int)__builtin_amdgcn_workgroup_id_z(); }
// barrier(): __syncthreads() (memory of every kind ordered at workgroup scope). lds_barrier(): only LDS ordered, so
// global loads in flight (the GEMMs' prefetch) are not waited for, and gfx12 needs no cache write-back/invalidate.
KILN_DEVICE void barrier() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
KILN_DEVICE void lds_barrier() {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup", "local");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup", "local");
}
KILN_DEVICE float f16_to_f32(kiln_f16 v) { return (float)v; }
KILN_DEVICE float bf16_to_f32(kiln_bf16 v) { return (float)v; }
KILN_DEVICE kiln_f16 f32_to_f16(float v) { return (kiln_f16)v; }
KILN_DEVICE kiln_bf16 f32_to_bf16(float v) { return (kiln_bf16)v; }
KILN_DEVICE float fast_exp(float v) { return __builtin_amdgcn_exp2f(v * 1.4426950408889634f); }
// a / b to 1 ulp (v_rcp_f32): the IEEE division sequence is ten instructions per epilogue element.
KILN_DEVICE float fast_div(float a, float b) { return a * __builtin_amdgcn_rcpf(b); }
// erf without a device math library (-nogpulib): Abramowitz & Stegun 7.1.26, |error| < 1.5e-7.
KILN_DEVICE float fast_erf(float v) {
    const float x = __builtin_fabsf(v), t = fast_div(1.f, 1.f + 0.3275911f * x);
    const float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    const float r = 1.f - poly * fast_exp(-x * x);
    return v < 0.f ? -r : r;
}
}  // namespace kiln
#else
#error "kiln_device.h: compile as CUDA (nvcc) or HIP (clang -x hip)"
#endif

// fp8 storage types: one byte each; the type says how to read it.
struct kiln_e4m3 { uint8_t bits; };
struct kiln_e5m2 { uint8_t bits; };
struct kiln_e4m3fnuz { uint8_t bits; };
struct kiln_e5m2fnuz { uint8_t bits; };

#endif  // KILN_DEVICE_H
