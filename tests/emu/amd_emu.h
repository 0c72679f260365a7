// Host emulation of the AMD device vocabulary: a generated mfma/wmma kernel compiles for the CPU unchanged and runs
// with one OS thread per work-item: workgroup barriers are real barriers, and each matrix instruction is a rendezvous
// of its wave where every lane takes its part of D from all lanes' operands. The operand and result layouts below are
// ISA documents' (lane, register) <-> (row, column, k) maps, written from those documents, not the kernels' op traits:
//   MFMA MxNxK (CDNA3 ISA "matrix fused multiply-add", wave64): A[i][k] is element k % KPL of lane
//     i + M * (k / KPL), KPL = K * M / 64 (B alike with column j); D[i][j] is item 4 * (i / 8) + i % 4 of lane
//     j + 32 * ((i / 4) % 2) for 32x32, item i % 4 of lane j + 16 * (i / 4) for 16x16.
//   WMMA gfx11 (RDNA3 ISA, wave32): A[i][k] is element k of lane i and of lane i + 16 (the two must agree); D[i][j]
//     is item i / 2 of lane j + 16 * (i % 2).
//   WMMA gfx12 (RDNA4 ISA, wave32): A[i][k] is element k % 8 of lane i + 16 * (k / 8); D[i][j] is item i % 8 of lane
//     j + 16 * (i / 8).
// Included before a kernel source (tests/emu/emulate.cpp); compiled with clang++ for the host, -D__gfxNNN__.
#ifndef KILN_AMD_EMU_H
#define KILN_AMD_EMU_H

#define __HIP__ 1
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <thread>

extern "C" float kiln_fp8_to_f32(int type, uint8_t code);  // runtime/src/fp8.c (kiln_dtype as int)

namespace emu {

enum Fmt { F16, BF16, FP8_FNUZ, BF8_FNUZ, FP8_OCP, BF8_OCP };

struct Workgroup {
    std::barrier<> *all;       // s_barrier
    std::barrier<> *wave[32];  // the lanes of one wave, for matrix instructions
    int wave_size, waves;
    float a[32][64][16], b[32][64][16], c[32][64][16];  // per wave, per lane: operands and accumulators
};

inline thread_local int tid, bid_x, bid_z;
inline thread_local Workgroup *wg;

inline void s_barrier() { wg->all->arrive_and_wait(); }

inline int skew_us() {
    static const int us = std::getenv("KILN_EMU_SKEW_US") ? std::atoi(std::getenv("KILN_EMU_SKEW_US")) : 300;
    return us;
}

inline float element(Fmt f, const void *data, int j) {
    if (f == F16) return (float)((const _Float16 *)data)[j];
    if (f == BF16) {
        uint32_t u = (uint32_t)((const uint16_t *)data)[j] << 16;
        float x;
        std::memcpy(&x, &u, 4);
        return x;
    }
    const uint8_t code = ((const uint8_t *)data)[j];
    // kiln_dtype: 3 e4m3, 4 e5m2, 5 e4m3fnuz, 6 e5m2fnuz
    return kiln_fp8_to_f32(f == FP8_OCP ? 3 : f == BF8_OCP ? 4 : f == FP8_FNUZ ? 5 : 6, code);
}

// One matrix instruction of a wave: D = A x B + C, M x N x K, from each lane's operand vectors.
enum Kind { MFMA, WMMA11, WMMA12 };

template <Kind KIND, int M, int K, class VA, class VB, class VC>
inline VC mma(Fmt fa, Fmt fb, const VA &va, const VB &vb, const VC &vc) {
    const int W = wg->wave_size, lane = tid % W, wave = tid / W;
    constexpr int N = M;
    constexpr int KPL = KIND == WMMA11 ? K : KIND == WMMA12 ? K / 2 : K * M / 64;
    constexpr int ITEMS = sizeof(VC) / sizeof(float);
    for (int j = 0; j < KPL; ++j) {
        wg->a[wave][lane][j] = element(fa, &va, j);
        wg->b[wave][lane][j] = element(fb, &vb, j);
    }
    for (int e = 0; e < ITEMS; ++e) wg->c[wave][lane][e] = vc[e];
    wg->wave[wave]->arrive_and_wait();
    // The last wave lags (KILN_EMU_SKEW_US per matrix instruction, default 300): without a workgroup barrier where
    // one is needed, the other waves overwrite LDS it still reads, and the result shows it.
    if (lane == 0 && wave == wg->waves - 1 && wave > 0)
        std::this_thread::sleep_for(std::chrono::microseconds(skew_us()));
    auto src = [&](int row, int k, int &l, int &j) {  // which lane and element hold A[row][k] (B[k][col] alike)
        if (KIND == MFMA) l = row + M * (k / KPL), j = k % KPL;
        else if (KIND == WMMA11) l = row, j = k;
        else l = row + 16 * (k / 8), j = k % 8;
    };
    auto dst = [&](int i, int jcol, int &l, int &e) {  // which lane and item hold D[i][jcol]
        if (KIND == MFMA && M == 32) l = jcol + 32 * ((i / 4) % 2), e = 4 * (i / 8) + i % 4;
        else if (KIND == MFMA) l = jcol + 16 * (i / 4), e = i % 4;
        else if (KIND == WMMA11) l = jcol + 16 * (i % 2), e = i / 2;
        else l = jcol + 16 * (i / 8), e = i % 8;
    };
    if (KIND == WMMA11 && lane < 16)  // gfx11: lanes 16..31 repeat the A and B of lanes 0..15
        for (int j = 0; j < KPL; ++j)
            if (wg->a[wave][lane][j] != wg->a[wave][lane + 16][j] && !(std::isnan(wg->a[wave][lane][j]))) {
                std::fprintf(stderr, "emu: gfx11 WMMA lanes %d and %d hold different A\n", lane, lane + 16);
                std::abort();
            }
    VC out = vc;
    for (int i = 0; i < M; ++i)
        for (int jc = 0; jc < N; ++jc) {
            int l, e;
            dst(i, jc, l, e);
            if (l != lane) continue;
            float acc = wg->c[wave][l][e];
            for (int k = 0; k < K; ++k) {
                int la, ja, lb, jb;
                src(i, k, la, ja);
                src(jc, k, lb, jb);
                acc += wg->a[wave][la][ja] * wg->b[wave][lb][jb];
            }
            out[e] = acc;
        }
    wg->wave[wave]->arrive_and_wait();
    return out;
}

}  // namespace emu

// Kernel attributes the host compiler does not take.
#define amdgpu_flat_work_group_size(lo, hi) unused
#define amdgpu_waves_per_eu(n) unused

#define __builtin_amdgcn_workitem_id_x() (emu::tid)
#define __builtin_amdgcn_workgroup_id_x() (emu::bid_x)
#define __builtin_amdgcn_workgroup_id_z() (emu::bid_z)
#define __builtin_amdgcn_s_barrier() emu::s_barrier()
#define __builtin_amdgcn_fence(...) ((void)0)
#define __builtin_amdgcn_sched_barrier(x) ((void)0)
#define __builtin_amdgcn_exp2f(x) exp2f(x)
#define __builtin_amdgcn_rcpf(x) (1.0f / (x))

// Matrix instructions: (kind, M, K, format of A, format of B).
#define KILN_EMU(KIND, M, K, FA, FB, a, b, c) emu::mma<emu::KIND, M, K>(emu::FA, emu::FB, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, ...) KILN_EMU(MFMA, 32, 8, F16, F16, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, ...) KILN_EMU(MFMA, 16, 16, F16, F16, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, ...) KILN_EMU(MFMA, 32, 8, BF16, BF16, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, ...) KILN_EMU(MFMA, 16, 16, BF16, BF16, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a, b, c, ...) KILN_EMU(MFMA, 32, 16, FP8_FNUZ, FP8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x16_fp8_bf8(a, b, c, ...) KILN_EMU(MFMA, 32, 16, FP8_FNUZ, BF8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x16_bf8_fp8(a, b, c, ...) KILN_EMU(MFMA, 32, 16, BF8_FNUZ, FP8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_32x32x16_bf8_bf8(a, b, c, ...) KILN_EMU(MFMA, 32, 16, BF8_FNUZ, BF8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a, b, c, ...) KILN_EMU(MFMA, 16, 32, FP8_FNUZ, FP8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(a, b, c, ...) KILN_EMU(MFMA, 16, 32, FP8_FNUZ, BF8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(a, b, c, ...) KILN_EMU(MFMA, 16, 32, BF8_FNUZ, FP8_FNUZ, a, b, c)
#define __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(a, b, c, ...) KILN_EMU(MFMA, 16, 32, BF8_FNUZ, BF8_FNUZ, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c) KILN_EMU(WMMA11, 16, 16, F16, F16, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c) KILN_EMU(WMMA11, 16, 16, BF16, BF16, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c) KILN_EMU(WMMA12, 16, 16, F16, F16, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, c) KILN_EMU(WMMA12, 16, 16, BF16, BF16, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(a, b, c) \
    KILN_EMU(WMMA12, 16, 16, FP8_OCP, FP8_OCP, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_fp8_bf8_w32_gfx12(a, b, c) \
    KILN_EMU(WMMA12, 16, 16, FP8_OCP, BF8_OCP, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_bf8_fp8_w32_gfx12(a, b, c) \
    KILN_EMU(WMMA12, 16, 16, BF8_OCP, FP8_OCP, a, b, c)
#define __builtin_amdgcn_wmma_f32_16x16x16_bf8_bf8_w32_gfx12(a, b, c) \
    KILN_EMU(WMMA12, 16, 16, BF8_OCP, BF8_OCP, a, b, c)

// ---- Added for the attention kernels (device/kiln_attn_mfma.h, run by tests/emu/attn_emulate.cpp) ----------------
// The y workgroup index; ds_bpermute_b32 (lane l receives `src` of lane (addr / 4) mod the wave size: a rendezvous of
// the wave, like a matrix instruction); v_cvt_pk_fp8_f32 (CDNA3 ISA: two floats -> two e4m3fnuz bytes, round to
// nearest even, into the low or high 16 bits of `old`). Only finite values within +-240 are converted: past that the
// instruction's result depends on its clamp bit, so the emulator stops instead of guessing.
namespace emu {

inline thread_local int bid_y;

inline int ds_bpermute(int addr, int src) {
    static int32_t lanes[32][64];
    const int W = wg->wave_size, lane = tid % W, wave = tid / W;
    lanes[wave][lane] = src;
    wg->wave[wave]->arrive_and_wait();
    const int out = lanes[wave][((unsigned)addr >> 2) % W];
    wg->wave[wave]->arrive_and_wait();
    return out;
}

inline uint32_t f32_to_e4m3fnuz(float x) {  // e4m3fnuz: bias 8, normals from 2^-7, subnormal step 2^-10, max 240
    const float a = std::fabs(x);
    if (!(a <= 240.f)) {
        std::fprintf(stderr, "emu: v_cvt_pk_fp8_f32 of %g (beyond +-240: the result depends on the clamp bit)\n", x);
        std::abort();
    }
    int e;
    std::frexp(a, &e);  // a in [2^(e-1), 2^e)
    const float step = std::ldexp(1.f, (e - 1 > -7 ? e - 1 : -7) - 3);
    const float r = std::nearbyint(a / step) * step;  // ties to even (the default rounding mode)
    if (r == 0.f) return 0;                           // no negative zero in FNUZ
    const float f = std::frexp(r, &e);                // r = f * 2^e, f in [0.5, 1)
    const uint32_t mag = e - 1 < -7 ? (uint32_t)(r * 1024.f) : (uint32_t)(e - 1 + 8) << 3 | ((uint32_t)(f * 16.f) & 7u);
    return mag | (x < 0 ? 0x80u : 0u);
}

inline int cvt_pk_fp8(float a, float b, int old, bool hi) {
    const uint32_t pair = f32_to_e4m3fnuz(a) | f32_to_e4m3fnuz(b) << 8, o = (uint32_t)old;
    return (int)(hi ? (o & 0xffffu) | pair << 16 : (o & 0xffff0000u) | pair);
}

}  // namespace emu

#define __builtin_amdgcn_workgroup_id_y() (emu::bid_y)
#define __builtin_amdgcn_ds_bpermute(addr, src) emu::ds_bpermute(addr, src)
#define __builtin_amdgcn_cvt_pk_fp8_f32(a, b, old, hi) emu::cvt_pk_fp8(a, b, old, hi)

#endif  // KILN_AMD_EMU_H
