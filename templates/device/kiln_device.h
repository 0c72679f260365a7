// kiln device vocabulary: the few names kernels use for types, indices and barriers, on both vendors.
// NVIDIA: kernels compile with nvcc as CUDA. AMD: clang -x hip -nogpulib with clang builtins (no HIP headers, see
// DESIGN.md: ROCm 5.2's headers route threadIdx through ockl and lack gfx942 bitcode).
#ifndef KILN_DEVICE_H
#define KILN_DEVICE_H

#include <stdint.h>

#include "kiln_abi.h"

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
KILN_DEVICE void barrier() { __builtin_amdgcn_s_barrier(); }
KILN_DEVICE float f16_to_f32(kiln_f16 v) { return (float)v; }
KILN_DEVICE float bf16_to_f32(kiln_bf16 v) { return (float)v; }
KILN_DEVICE kiln_f16 f32_to_f16(float v) { return (kiln_f16)v; }
KILN_DEVICE kiln_bf16 f32_to_bf16(float v) { return (kiln_bf16)v; }
KILN_DEVICE float fast_exp(float v) { return __builtin_amdgcn_exp2f(v * 1.4426950408889634f); }
KILN_DEVICE float fast_erf(float v) { return __builtin_erff(v); }
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
