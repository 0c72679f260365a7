// Runs one AMD attention kernel (device/kiln_attn_mfma.h) on the CPU (amd_emu.h) and checks O and the lse against a
// float64 reference computed from the same fp8 inputs (decoded by the runtime's fp8.c). Built per kernel by
// tests/py/test_attn_emulation.py:
//   clang++-19 -std=c++20 -D__gfx942__ -DKILN_EMU_KERNEL_FILE='"<tu>.hip"' -DKILN_EMU_KERNEL=<name> ... fp8.o
// where the translation unit defines `Config` and instantiates KILN_ATTN_MFMA_KERNEL(<name>, Config).
// The RDNA kernels (device/kiln_attn_wmma.h, KILN_ATTN_WMMA_KERNEL) build the same way with -D__gfx1201__ or
// -D__gfx1151__: wave32, OCP fp8 inputs, and on gfx12 v_cvt_pk_fp8_f32 writes OCP e4m3 (emulated below).
//
// Usage: attn_emulate HQ HKV CAUSAL VARLEN DESCALE LSE SEED LQ LK
//   LQ, LK: comma-separated lengths, one per sequence (the batch); without VARLEN they must all be equal.
//   DESCALE: 0 none (NULL), 1 one per tensor, 2 one per (batch, kv head).
//   attn_emulate --check-cvt: the emulated v_cvt_pk_fp8_f32 against fp8.c's encoder.
//   attn_emulate --launch: the launch the kernel needs ("bm <rows per workgroup> threads <n> lds_bytes <dynamic LDS>").
// Tensors have padded strides (head, sequence and batch), O and the lse are poisoned with NaN: every element of a
// valid row must be written and finite, the padding must stay NaN. Prints "rel_l2 <O's relative L2 error> lse_err
// <max abs error>"; exits 1 when an element is wrong, unwritten or written outside its row, or an error is over the
// gate (relative L2 2.5e-2, lse 1e-2).
#include "amd_emu.h"

#if defined(__gfx1200__) || defined(__gfx1201__)
// gfx12's v_cvt_pk_fp8_f32 (RDNA4 ISA) converts to OCP e4m3: bias 7, normals from 2^-6, subnormal step 2^-9, largest
// finite 448, -0 kept; round to nearest even. As with amd_emu.h's FNUZ form, values past +-448 (where the clamp bit
// decides) stop the emulator.
namespace emu {
inline uint32_t f32_to_e4m3(float x) {
    const float a = std::fabs(x);
    if (!(a <= 448.f)) {
        std::fprintf(stderr, "emu: gfx12 v_cvt_pk_fp8_f32 of %g (beyond +-448: the clamp bit decides)\n", x);
        std::abort();
    }
    int e;
    std::frexp(a, &e);  // a in [2^(e-1), 2^e)
    const float step = std::ldexp(1.f, (e - 1 > -6 ? e - 1 : -6) - 3);
    const float r = std::nearbyint(a / step) * step;  // ties to even (the default rounding mode)
    uint32_t mag = 0;
    if (r != 0.f) {
        const float f = std::frexp(r, &e);  // r = f * 2^e, f in [0.5, 1)
        mag = e - 1 < -6 ? (uint32_t)(r * 512.f) : (uint32_t)(e - 1 + 7) << 3 | ((uint32_t)(f * 16.f) & 7u);
    }
    return mag | (std::signbit(x) ? 0x80u : 0u);
}
inline int cvt_pk_e4m3(float a, float b, int old, bool hi) {
    const uint32_t pair = f32_to_e4m3(a) | f32_to_e4m3(b) << 8, o = (uint32_t)old;
    return (int)(hi ? (o & 0xffffu) | pair << 16 : (o & 0xffff0000u) | pair);
}
}  // namespace emu
#undef __builtin_amdgcn_cvt_pk_fp8_f32
#define __builtin_amdgcn_cvt_pk_fp8_f32(a, b, old, hi) emu::cvt_pk_e4m3(a, b, old, hi)
#endif

#include KILN_EMU_KERNEL_FILE

#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "kiln/kiln.h"

extern "C" uint8_t kiln_f32_to_fp8(kiln_dtype t, float x, int saturate);  // runtime/src/fp8.c

namespace kiln {
alignas(16) uint8_t kiln_amd_lds[65536];  // the launch's dynamic LDS (one workgroup runs at a time)
}

// libgcc 12 has no float -> bf16 conversion for the host compiler's __bf16: round to nearest even, as the GPU does.
extern "C" __bf16 __truncsfbf2(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    const uint16_t h = std::isnan(x) ? (uint16_t)((u >> 16) | 0x40) : (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
    __bf16 out;
    std::memcpy(&out, &h, 2);
    return out;
}

namespace {

#if defined(KILN_ATTN_WMMA_H)
using A = kiln::AttnWmma<Config>;
constexpr int WAVE = 32;
#else
using A = kiln::AttnMfma<Config>;
constexpr int WAVE = 64;
#endif
using T8 = Config::T8;
using TO = Config::TO;
constexpr int D = Config::D;
constexpr kiln_dtype FP8 = std::is_same_v<T8, kiln_e4m3fnuz> ? KILN_DTYPE_E4M3FNUZ
                           : std::is_same_v<T8, kiln_e5m2fnuz> ? KILN_DTYPE_E5M2FNUZ
                           : std::is_same_v<T8, kiln_e4m3>     ? KILN_DTYPE_E4M3
                                                               : KILN_DTYPE_E5M2;
constexpr kiln_dtype OUT = std::is_same_v<TO, kiln_f16> ? KILN_DTYPE_F16 : KILN_DTYPE_BF16;

float out_value(TO x) { return (float)x; }

void run_workgroup(const kiln_attn_params &p, int bx, int by, int bz) {
    static emu::Workgroup w;
    std::barrier<> all(A::THREADS);
    std::vector<std::unique_ptr<std::barrier<>>> waves;
    for (int i = 0; i < A::THREADS / WAVE; ++i) {
        waves.push_back(std::make_unique<std::barrier<>>(WAVE));
        w.wave[i] = waves.back().get();
    }
    w.all = &all;
    w.wave_size = WAVE;
    w.waves = A::THREADS / WAVE;
    std::memset(kiln::kiln_amd_lds, 0xFF, sizeof kiln::kiln_amd_lds);  // stale LDS reads as -240 / -57344 (OCP: NaN)
    std::vector<std::thread> ts;
    for (int t = 0; t < A::THREADS; ++t)
        ts.emplace_back([&, t] {
            emu::tid = t, emu::bid_x = bx, emu::bid_y = by, emu::bid_z = bz, emu::wg = &w;
            KILN_EMU_KERNEL(p);
        });
    for (auto &t : ts) t.join();
}

std::vector<int> lengths(const char *s) {
    std::vector<int> out;
    for (std::string item; *s; ++s) {
        if (*s != ',') item += *s;
        if (*s == ',' || s[1] == 0) out.push_back(std::atoi(item.c_str())), item.clear();
    }
    return out;
}

// An emulated conversion to fp8 type t (saturating; max its largest finite value, top the code just below it) against
// fp8.c on both sides of every rounding boundary, +-0, +-max, around 2^-sub (half the smallest subnormal) and at
// random, and the word select of its packed form.
template <class Cvt, class CvtPk>
int check_cvt_of(kiln_dtype t, const char *name, float max, int top, int sub, Cvt cvt, CvtPk cvt_pk) {
    std::vector<float> xs = {0.f, -0.f, max, -max, std::ldexp(1.f, -sub), std::ldexp(3.f, -sub - 1),
                             std::ldexp(1.f, -sub - 1), std::ldexp(5.f, -sub - 1)};
    for (int c = 0; c < top; ++c) {
        const float a = kiln_fp8_to_f32(t, (uint8_t)c);
        const float b = kiln_fp8_to_f32(t, (uint8_t)(c + 1));
        const float mid = (a + b) / 2;
        for (float x : {a, b, mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e9f)})
            xs.push_back(x), xs.push_back(-x);
    }
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.f, max);
    for (int i = 0; i < 100000; ++i) xs.push_back(i % 2 ? u(rng) : std::ldexp(u(rng), -(int)(rng() % 24)));
    int bad = 0;
    for (float x : xs) {
        const uint32_t got = cvt(x), want = kiln_f32_to_fp8(t, x, 1);
        if (got != want && bad++ < 10) std::fprintf(stderr, "cvt %a: emulator 0x%02x, fp8.c 0x%02x\n", x, got, want);
    }
    const int pk = cvt_pk(1.f, -2.f, 0x12345678, true);
    if (pk != (int)(0x5678u | (uint32_t)kiln_f32_to_fp8(t, 1.f, 1) << 16 | (uint32_t)kiln_f32_to_fp8(t, -2.f, 1) << 24))
        ++bad, std::fprintf(stderr, "cvt_pk word select: 0x%08x\n", pk);
    std::printf("cvt checked %zu values, %d mismatches (%s)\n", xs.size(), bad, name);
    return bad ? 1 : 0;
}

// The target's P conversion: gfx12's OCP e4m3, else gfx942's e4m3fnuz.
int check_cvt() {
#if defined(__gfx1200__) || defined(__gfx1201__)
    return check_cvt_of(KILN_DTYPE_E4M3, "OCP e4m3", 448.f, 0x7e, 10, emu::f32_to_e4m3, emu::cvt_pk_e4m3);
#else
    return check_cvt_of(KILN_DTYPE_E4M3FNUZ, "e4m3fnuz", 240.f, 0x7f, 11, emu::f32_to_e4m3fnuz, emu::cvt_pk_fp8);
#endif
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::string(argv[1]) == "--check-cvt") return check_cvt();
    if (argc == 2 && std::string(argv[1]) == "--launch")
        return std::printf("bm %d threads %d lds_bytes %d\n", A::BM, A::THREADS, A::LDS_BYTES) < 0;
    if (argc != 10) {
        std::fprintf(stderr, "usage: %s HQ HKV CAUSAL VARLEN DESCALE LSE SEED LQ LK\n", argv[0]);
        return 2;
    }
    const int hq = std::atoi(argv[1]), hkv = std::atoi(argv[2]), causal = std::atoi(argv[3]);
    const int varlen = std::atoi(argv[4]), dmode = std::atoi(argv[5]), want_lse = std::atoi(argv[6]);
    std::mt19937 rng((unsigned)std::atoi(argv[7]));
    const std::vector<int> lq = lengths(argv[8]), lk = lengths(argv[9]);
    const int batch = (int)lq.size();
    if (batch == 0 || lk.size() != lq.size() || hq % hkv) return std::fprintf(stderr, "bad arguments\n"), 2;
    int max_q = 0, max_k = 0, tot_q = 0, tot_k = 0;
    std::vector<int> cu_q(1, 0), cu_k(1, 0);
    for (int b = 0; b < batch; ++b) {
        max_q = std::max(max_q, lq[b]), max_k = std::max(max_k, lk[b]);
        cu_q.push_back(tot_q += lq[b]), cu_k.push_back(tot_k += lk[b]);
        if (!varlen && (lq[b] != lq[0] || lk[b] != lk[0])) return std::fprintf(stderr, "fixed lengths differ\n"), 2;
    }

    // Element strides: padded heads and rows; the batch stride is unused (and huge) with varlen.
    const int64_t unused = (int64_t)1 << 40;
    const int64_t qsh = D + 16, qss = hq * qsh + 32, qsb = varlen ? unused : max_q * qss + 64;
    const int64_t ksh = D + 32, kss = hkv * ksh + 16, ksb = varlen ? unused : max_k * kss + 48;
    const int64_t vsh = D + 48, vss = hkv * vsh + 64, vsb = varlen ? unused : max_k * vss + 16;
    const int64_t osh = D + 4, oss = hq * osh + 8, osb = varlen ? unused : max_q * oss + 12;
    const int64_t lsh = (varlen ? tot_q : max_q) + 3, lsb = varlen ? unused : hq * lsh + 5;
    const int rows_q = varlen ? tot_q : batch * max_q, rows_k = varlen ? tot_k : batch * max_k;
    const size_t nq = varlen ? (size_t)tot_q * qss : (size_t)batch * qsb;
    const size_t nk = varlen ? (size_t)tot_k * kss : (size_t)batch * ksb;
    const size_t nv = varlen ? (size_t)tot_k * vss : (size_t)batch * vsb;
    const size_t no = varlen ? (size_t)tot_q * oss : (size_t)batch * osb;
    const size_t nl = varlen ? (size_t)hq * lsh : (size_t)batch * lsb;
    (void)rows_q, (void)rows_k;

    // Inputs: normal values quantized to the kernel's fp8 type (the padding holds codes too: it must not matter).
    std::normal_distribution<float> normal(0.f, 1.f);
    auto fill = [&](std::vector<uint8_t> &x) {
        for (auto &c : x) c = kiln_f32_to_fp8(FP8, normal(rng), 1);
    };
    std::vector<uint8_t> q(nq), k(nk), v(nv);
    fill(q), fill(k), fill(v);
    auto val = [](uint8_t c) { return (double)kiln_fp8_to_f32(FP8, c); };
    std::vector<float> qd(batch * hkv, 1.f), kd(batch * hkv, 1.f), vd(batch * hkv, 1.f);
    std::uniform_real_distribution<float> u(0.5f, 2.f);
    if (dmode)
        for (auto *d : {&qd, &kd, &vd})
            for (auto &x : *d) x = u(rng);
    const int64_t dsb = dmode == 2 ? hkv : 0, dsh = dmode == 2 ? 1 : 0;

    std::vector<TO> o(no, (TO)std::nanf(""));
    std::vector<float> lse(nl, std::nanf(""));

    kiln_attn_params p;
    std::memset(&p, 0, sizeof p);
    p.q = q.data(), p.k = k.data(), p.v = v.data(), p.o = o.data();
    p.lse = want_lse ? lse.data() : nullptr;
    p.cu_seqlens_q = varlen ? cu_q.data() : nullptr;
    p.cu_seqlens_k = varlen ? cu_k.data() : nullptr;
    p.q_descale = dmode ? qd.data() : nullptr;
    p.k_descale = dmode ? kd.data() : nullptr;
    p.v_descale = dmode ? vd.data() : nullptr;
    p.q_stride_b = qsb, p.q_stride_s = qss, p.q_stride_h = qsh;
    p.k_stride_b = ksb, p.k_stride_s = kss, p.k_stride_h = ksh;
    p.v_stride_b = vsb, p.v_stride_s = vss, p.v_stride_h = vsh;
    p.o_stride_b = osb, p.o_stride_s = oss, p.o_stride_h = osh;
    p.lse_stride_b = lsb, p.lse_stride_h = lsh;
    p.descale_stride_b = dsb, p.descale_stride_h = dsh;
    p.batch = batch, p.heads_q = hq, p.heads_kv = hkv;
    p.seqlen_q = max_q, p.seqlen_k = max_k;
    p.head_dim = D;
    p.softmax_scale = 1.f / std::sqrt((float)D);
    p.causal = causal;
    p.o_dtype = OUT;

    for (int z = 0; z < batch; ++z)
        for (int y = 0; y < hq; ++y)
            for (int x = 0; x < (max_q + A::BM - 1) / A::BM; ++x) run_workgroup(p, x, y, z);

    // Reference and checks.
    std::vector<bool> o_valid(no, false), l_valid(nl, false);
    double num = 0, den = 0, lse_err = 0;
    std::vector<double> s, pr;
    for (int b = 0; b < batch; ++b) {
        const int64_t q0 = varlen ? cu_q[b] * qss : b * qsb, k0 = varlen ? cu_k[b] * kss : b * ksb;
        const int64_t v0 = varlen ? cu_k[b] * vss : b * vsb, o0 = varlen ? cu_q[b] * oss : b * osb;
        for (int h = 0; h < hq; ++h) {
            const int kvh = h / (hq / hkv);
            const int di = (int)(b * dsb + kvh * dsh);
            const double sc = (double)p.softmax_scale * qd[di] * kd[di];
            for (int i = 0; i < lq[b]; ++i) {
                const int last = causal ? std::min(lk[b] - 1, i + lk[b] - lq[b]) : lk[b] - 1;  // visible: j <= last
                s.assign(std::max(last + 1, 0), 0.0);
                double m = -INFINITY;
                for (int j = 0; j <= last; ++j) {
                    double acc = 0;
                    for (int d = 0; d < D; ++d)
                        acc += val(q[q0 + i * qss + h * qsh + d]) * val(k[k0 + j * kss + kvh * ksh + d]);
                    s[j] = acc * sc;
                    m = std::max(m, s[j]);
                }
                double sum = 0;
                pr.assign(s.size(), 0.0);
                for (size_t j = 0; j < s.size(); ++j) sum += pr[j] = std::exp(s[j] - m);
                const int64_t orow = o0 + i * oss + h * osh;
                for (int d = 0; d < D; ++d) {
                    double ref = 0;
                    for (size_t j = 0; j < s.size(); ++j) ref += pr[j] * val(v[v0 + j * vss + kvh * vsh + d]);
                    ref = s.empty() ? 0.0 : ref / sum * vd[di];
                    const float got = out_value(o[orow + d]);
                    o_valid[orow + d] = true;
                    if (!std::isfinite(got) || (s.empty() && got != 0.f))
                        return std::fprintf(stderr, "O[b%d][i%d][h%d][d%d] = %g (want %g)\n", b, i, h, d, got, ref), 1;
                    num += (got - ref) * (got - ref), den += ref * ref;
                }
                if (want_lse) {
                    const int64_t li = (varlen ? cu_q[b] : b * lsb) + h * lsh + i;
                    const double ref = s.empty() ? -INFINITY : m + std::log(sum);
                    l_valid[li] = true;
                    if (s.empty() ? lse[li] != -INFINITY : !(std::fabs(lse[li] - ref) <= 1e-2))
                        return std::fprintf(stderr, "lse[b%d][h%d][i%d] = %g (want %g)\n", b, h, i, lse[li], ref), 1;
                    if (!s.empty()) lse_err = std::max(lse_err, std::fabs(lse[li] - ref));
                }
            }
        }
    }
    for (size_t i = 0; i < no; ++i)
        if (!o_valid[i] && !std::isnan(out_value(o[i])))
            return std::fprintf(stderr, "O written outside the rows (element %zu)\n", i), 1;
    for (size_t i = 0; i < nl; ++i)
        if (!l_valid[i] && !std::isnan(lse[i])) return std::fprintf(stderr, "lse written outside (%zu)\n", i), 1;
    const double rel = std::sqrt(num / (den > 0 ? den : 1));
    std::printf("rel_l2 %.4g lse_err %.3g\n", rel, lse_err);
    return rel <= 2.5e-2 ? 0 : 1;
}
