// Runs one generated AMD kernel on the CPU (amd_emu.h) and checks every element of D against a float64 reference.
// Built per kernel by tests/py/test_amd_emulation.py:
//   clang++-19 -std=c++20 -D__gfxNNN__ -DKILN_EMU_KERNEL_FILE='"<kernel>.hip"' -DKILN_EMU_KERNEL=<kernel> ...
// Usage: emulate M N K BATCH ACT(0..3) EPILOGUE(0: alpha only, 1: C + bias + vector scales) SEED
//        emulate M N K GROUPS ACT EPILOGUE SEED MODE INDEX...   (grouped kernels, Config::GROUPED)
// Prints "max_rel_l2 <value>"; exits 1 when an element is NaN, unwritten, or written outside D, or the error is large.
// Grouped kernels (MoE): MODE 1 (contiguous: INDEX are the groups' end rows of A [M, K] and D [M, N]) or 2 (masked:
// INDEX are the groups' row counts of batch g of A [GROUPS, M, K] and D); B [GROUPS, N, K]. MODE 3 (k-grouped, the
// weight gradient): INDEX are the groups' end columns of A [M, K] and B [N, K] (one matrix each), D [GROUPS, M, N];
// D[g] sums K columns [end(g-1), end(g)) only, the ends clamped into [end(g-1), K] and rounded down to a multiple of
// 128 unless they are K (kiln_schedule.h, load_group); an empty group's D[g] is act(bias). EPILOGUE 0: tensor scales
// (block scales for block-scaled kernels), 1: per-row scales of A and per-column scales of each group's B (k-grouped:
// scale_a [GROUPS, M], scale_b [GROUPS, N]), and a bias row per group (no C: a grouped GEMM reads none). Block scales
// of a k-grouped problem are one A's and one B's over all of K (group strides 0). D starts as NaN; rows outside every
// group must stay NaN. The grid is the runtime's (select.c): a bound on the walk's tiles, so workgroups past the last
// group run and must exit; k-grouped, exactly GROUPS * tiles_m * tiles_n.
// K = 0 is an empty sum: D = act(beta * C + bias), zeros with EPILOGUE 0. A and B are then NULL, so a kernel that
// reads either crashes.
#include "amd_emu.h"

#include KILN_EMU_KERNEL_FILE

#include <algorithm>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "kiln/kiln.h"

extern "C" uint8_t kiln_f32_to_fp8(kiln_dtype t, float x, int saturate);  // runtime/src/fp8.c

namespace kiln {
alignas(16) uint8_t kiln_amd_lds[65536];  // the launch's dynamic LDS (one workgroup runs at a time)
}

#define KILN_EMU_CAT2(a, b) a##b
#define KILN_EMU_CAT(a, b) KILN_EMU_CAT2(a, b)

namespace {

template <class T> struct Ty;
template <> struct Ty<kiln_f16> { static constexpr int dtype = KILN_DTYPE_F16; };
template <> struct Ty<kiln_bf16> { static constexpr int dtype = KILN_DTYPE_BF16; };
template <> struct Ty<float> { static constexpr int dtype = KILN_DTYPE_F32; };
template <> struct Ty<kiln_e4m3> { static constexpr int dtype = KILN_DTYPE_E4M3; };
template <> struct Ty<kiln_e5m2> { static constexpr int dtype = KILN_DTYPE_E5M2; };
template <> struct Ty<kiln_e4m3fnuz> { static constexpr int dtype = KILN_DTYPE_E4M3FNUZ; };
template <> struct Ty<kiln_e5m2fnuz> { static constexpr int dtype = KILN_DTYPE_E5M2FNUZ; };

template <class T> float value(const T &x) {
    if constexpr (sizeof(T) == 1) return kiln_fp8_to_f32(Ty<T>::dtype, x.bits);
    else return (float)x;
}

// A random element: normal values, scaled by 2^-8 .. 2^2 so fp8 subnormals and large codes occur and sums of products
// stay inside the f16 range.
template <class T> T random_element(std::mt19937 &rng) {
    std::normal_distribution<float> d(0.f, 1.f);
    const float x = std::ldexp(d(rng), (int)(rng() % 11) - 8);
    if constexpr (sizeof(T) == 1) return T{kiln_f32_to_fp8((kiln_dtype)Ty<T>::dtype, x, 1)};
    else return (T)x;
}

}  // namespace

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

struct Launch {
    int threads, wave;
};

template <class F> void run_workgroup(F kernel, const kiln_gemm_params &p, Launch l, int bx, int bz) {
    static emu::Workgroup w;
    std::barrier<> all(l.threads);
    std::vector<std::unique_ptr<std::barrier<>>> waves;
    for (int i = 0; i < l.threads / l.wave; ++i) {
        waves.push_back(std::make_unique<std::barrier<>>(l.wave));
        w.wave[i] = waves.back().get();
    }
    w.all = &all;
    w.wave_size = l.wave;
    w.waves = l.threads / l.wave;
    std::memset(kiln::kiln_amd_lds, 0xFF, sizeof kiln::kiln_amd_lds);  // stale LDS reads as NaN
    std::vector<std::thread> ts;
    for (int t = 0; t < l.threads; ++t)
        ts.emplace_back([&, t] {
            emu::tid = t, emu::bid_x = bx, emu::bid_z = bz, emu::wg = &w;
            kernel(p);
        });
    for (auto &t : ts) t.join();
}

}  // namespace

int main(int argc, char **argv) {
    using C = Config;
    using TA = C::TA;
    using TB = C::TB;
    using TD = C::TD;
    constexpr bool grouped = kiln::GroupedConfig<C>::value;
    if (grouped ? argc < 9 || argc != 9 + std::atoi(argv[4]) : argc != 8) {
        std::fprintf(stderr, "usage: %s M N K BATCH ACT EPILOGUE SEED [MODE INDEX...]\n", argv[0]);
        return 2;
    }
    const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]), batch = std::atoi(argv[4]);
    const int act = std::atoi(argv[5]), full = std::atoi(argv[6]) && !grouped, grouped_epi = std::atoi(argv[6]);
    // Grouped: batches of A (1 contiguous and k-grouped, GROUPS masked), of B (GROUPS; k-grouped 1) and of D (1
    // contiguous, GROUPS masked and k-grouped); group_index; each row of D's group (-1: none); k-grouped: each
    // group's K columns [k_start, k_end).
    const int mode = grouped ? std::atoi(argv[8]) : 0;
    if (grouped && (mode < 1 || mode > 3)) return std::fprintf(stderr, "MODE %d: 1, 2 or 3\n", mode), 2;
    const int ab = mode == 1 || mode == 3 ? 1 : batch, bb = mode == 3 ? 1 : batch, db = mode == 1 ? 1 : batch;
    std::vector<int32_t> group_index;
    for (int g = 0; grouped && g < batch; ++g) group_index.push_back(std::atoi(argv[9 + g]));
    std::vector<int> row_group(grouped ? (size_t)db * m : 0, -1), k_start(batch, 0), k_end(batch, k);
    for (int g = 0, end = 0; g < (int)group_index.size(); ++g) {  // the clamping kiln_schedule.h's load_group does
        const int v = group_index[g];
        if (mode == 3) {  // K ends: within [end(g-1), K], rounded down to a multiple of 128 unless K
            k_start[g] = end;
            end = v >= k ? k : std::max(end, (int)std::floor(v / 128.0) * 128);
            k_end[g] = end;
            for (int i = 0; i < m; ++i) row_group[(size_t)g * m + i] = g;
            continue;
        }
        const int start = mode == 1 ? end : 0;
        end = mode == 1 ? std::clamp(v, start, m) : std::clamp(v, 0, m);
        for (int i = start; i < end; ++i) row_group[(mode == 1 ? 0 : (size_t)g * m) + i] = g;
    }
    std::mt19937 rng((unsigned)std::atoi(argv[7]));
    const int wave = C::Op::WAVE, threads = wave * C::WG0 * C::WG1;
    const bool fp8_inputs = sizeof(TA) == 1 || sizeof(TB) == 1;

    // Operands with padded leading dimensions (multiples of 16 elements satisfy every alignment).
    const int64_t lda = (k + 15) / 16 * 16 + 16, kp = (k + 15) / 16 * 16;
    const int64_t ldb = C::B_PACKED ? kp : C::B_KMAJOR ? lda : (n + 15) / 16 * 16 + 16;
    const int64_t ldd = n + 5, ldc = n + 3;
    const int64_t sa_ = m * lda, sb_ = C::B_KMAJOR ? n * ldb : k * ldb, sc_ = m * ldc, sd_ = m * ldd;
    // (k-grouped: A and B hold one matrix each; stride_a and stride_b are not to be used: they step past the ends)
    std::vector<TA> a(ab * sa_);
    std::vector<TB> b(bb * sb_), packed(C::B_PACKED ? bb * sb_ : 0);
    std::vector<double> av(ab * m * k), bv(bb * k * n);  // values, [batch][m][k] and [batch][k][n]
    for (int z = 0; z < ab; ++z)
        for (int i = 0; i < m; ++i)
            for (int kk = 0; kk < k; ++kk) {
                TA x = random_element<TA>(rng);
                a[z * sa_ + i * lda + kk] = x;
                av[(z * m + i) * k + kk] = value(x);
            }
    std::vector<TB> logical(C::B_PACKED ? (size_t)n * k : 0);
    for (int z = 0; z < bb; ++z) {
        for (int kk = 0; kk < k; ++kk)
            for (int j = 0; j < n; ++j) {
                TB x = random_element<TB>(rng);
                if constexpr (C::B_PACKED) logical[(size_t)j * k + kk] = x;
                else b[z * sb_ + (C::B_KMAJOR ? j * ldb + kk : kk * ldb + j)] = x;
                bv[(z * k + kk) * n + j] = value(x);
            }
        if constexpr (C::B_PACKED) {  // kiln_prepack_b, the runtime's: B [n][k] -> [n][kp] with the K permutation
            if (k > 0 && kiln_prepack_b((const uint8_t *)logical.data(), KILN_LAYOUT_TN, n, k, k,
                               (uint8_t *)packed.data() + z * sb_, (size_t)sb_) != KILN_STATUS_SUCCESS)
                return 2;
        }
    }
    // Grouped: scale_a per row of each batch of A, scale_b and bias per group, padded group strides; k-grouped:
    // scale_a [GROUPS, M] and scale_b [GROUPS, N] packed (the runtime's default strides), bias padded.
    const int64_t gsa_ = mode == 2 || mode == 3 ? m : 0, gsb_ = mode == 3 ? n : grouped ? n + 3 : 0;
    const int64_t gbias_ = grouped ? n + 1 : 0;
    std::vector<TD> c(db * sc_), d(db * sd_);
    std::vector<float> scale_a(grouped ? (mode == 3 ? batch : ab) * m : m), scale_b(grouped ? batch * gsb_ : n);
    std::vector<float> bias(grouped ? batch * gbias_ : n);
    std::uniform_real_distribution<float> u(0.5f, 2.f);
    for (auto &x : scale_a) x = u(rng);
    for (auto &x : scale_b) x = u(rng);
    for (auto &x : bias) x = u(rng) - 1.25f;
    for (auto &x : c) x = random_element<TD>(rng);
    const float nan = std::nanf("");
    for (auto &x : d) x = (TD)nan;

    // Block-scaled kernels (Config::BLOCK_SCALES): a scale per row and 128-K group of A and per 128-column block (or
    // column) and group of B, 2^-10 .. 2^10 apart across groups; the seed's bits pick B's block width (4: 1, else 128),
    // A's layout (2: K-major, else M-major, padded to 4 rows as DeepGEMM's) and B's (8: K-major, else N-major).
    constexpr bool block = kiln::BlockScaled<C>::value;
    const int groups = (k + 127) / 128, seed = std::atoi(argv[7]);
    const int sb_block = seed & 4 ? 1 : 128, nblk = (n + sb_block - 1) / sb_block;
    const bool a_kmajor = seed & 2, b_kmajor = seed & 8;
    const int64_t ma = (m + 3) / 4 * 4;
    // grouped: masked A's scales one [ma, groups] block per group; B's one [nblk, groups] block per group (k-grouped:
    // one A's and one B's over all of K, group strides 0)
    const int64_t gsa_blk = mode == 2 ? ma * groups : 0, gsb_blk = grouped && mode != 3 ? (int64_t)nblk * groups : 0;
    std::vector<float> block_a(block ? (size_t)(grouped ? ab : 1) * ma * groups + 1 : 0);
    std::vector<float> block_b(block ? (size_t)(grouped ? bb : 1) * nblk * groups + 1 : 0);
    std::uniform_real_distribution<float> ex(-10.f, 10.f);
    for (auto &x : block_a) x = std::exp2(ex(rng));
    for (auto &x : block_b) x = std::exp2(ex(rng));
    const int64_t sam = a_kmajor ? groups : 1, sak = a_kmajor ? 1 : ma;
    const int64_t sbn = b_kmajor ? groups : 1, sbk = b_kmajor ? 1 : nblk;
    auto bsa = [&](int z, int i, int g) { return (double)block_a[z * gsa_blk + i * sam + g * sak]; };
    auto bsb = [&](int z, int j, int g) { return (double)block_b[z * gsb_blk + (j / sb_block) * sbn + g * sbk]; };

    kiln_gemm_params p;
    std::memset(&p, 0, sizeof p);
    p.a = k > 0 ? a.data() : nullptr;
    p.b = k == 0 ? nullptr : C::B_PACKED ? (const void *)packed.data() : (const void *)b.data();
    p.c = full ? c.data() : nullptr;
    p.d = d.data();
    p.lda = lda, p.ldb = ldb, p.ldc = ldc, p.ldd = ldd;
    p.stride_a = sa_, p.stride_b = sb_, p.stride_c = sc_, p.stride_d = sd_;
    p.m = m, p.n = n, p.k = k, p.batch = batch;
    p.tiles_m = (m + C::MT0 - 1) / C::MT0, p.tiles_n = (n + C::MT1 - 1) / C::MT1;
    const int kb = C::B_PACKED ? (int)kp : k, k_tiles = (kb + C::DU - 1) / C::DU;
    p.k_tiles_per_split = (k_tiles + C::GSU - 1) / C::GSU;
    p.scale_a_mode = full ? KILN_SCALE_VECTOR : KILN_SCALE_NONE;
    p.scale_b_mode = full ? KILN_SCALE_VECTOR : KILN_SCALE_NONE;
    p.scale_a = full ? scale_a.data() : nullptr;
    p.scale_b = full ? scale_b.data() : nullptr;
    if (block) {
        p.scale_a_mode = p.scale_b_mode = KILN_SCALE_BLOCK;
        p.scale_a = block_a.data(), p.scale_b = block_b.data();
        p.sa_stride_m = sam, p.sa_stride_k = sak, p.sb_stride_n = sbn, p.sb_stride_k = sbk, p.sb_block_n = sb_block;
    }
    p.bias = full ? bias.data() : nullptr;
    p.bias_type = KILN_DTYPE_F32;
    p.activation = act;
    p.has_c = full;
    p.alpha = 0.75f, p.beta = full ? 0.5f : 0.f;
    std::vector<float> workspace(C::GSU > 1 ? (size_t)C::GSU * batch * m * n : 0, nan);
    p.workspace = C::GSU > 1 ? workspace.data() : nullptr;
    const float tensor_a = 0.625f, tensor_b = 1.5f;
    if (grouped) {
        p.batch = 1;
        p.group_mode = mode, p.groups = batch, p.group_index = group_index.data();
        p.g_stride_sa = block ? gsa_blk : gsa_;
        p.g_stride_sb = block ? gsb_blk : gsb_;
        p.g_stride_bias = gbias_;
        if (!block) {
            p.scale_a_mode = p.scale_b_mode = grouped_epi ? KILN_SCALE_VECTOR : KILN_SCALE_TENSOR;
            p.scale_a = grouped_epi ? scale_a.data() : &tensor_a;
            p.scale_b = grouped_epi ? scale_b.data() : &tensor_b;
        }
        p.bias = grouped_epi ? bias.data() : nullptr;
    }
    // The launch: select.c's grid (grouped: a bound on the walk's tiles, grid z 1; masked and k-grouped GROUPS *
    // tiles_m * tiles_n).
    const int grid_x = !grouped ? p.tiles_m * p.tiles_n
                       : mode == 1 ? (p.tiles_m + batch) * p.tiles_n : batch * p.tiles_m * p.tiles_n;
    for (int z = 0; z < (grouped ? 1 : batch * C::GSU); ++z)
        for (int x = 0; x < grid_x; ++x)
            run_workgroup(KILN_EMU_KERNEL, p, {threads, wave}, x, z);
#if KILN_EMU_GSU > 1
    for (int z = 0; z < batch; ++z)
        for (int x = 0; x < (m * n + KILN_REDUCE_THREADS - 1) / KILN_REDUCE_THREADS; ++x)
            run_workgroup(KILN_EMU_CAT(KILN_EMU_KERNEL, _reduce), p, {KILN_REDUCE_THREADS, wave}, x, z);
#endif

    double worst = 0;
    int64_t rows_checked = 0;
    for (int z = 0; z < db; ++z) {
        double num = 0, den = 0;
        const int za = ab == 1 ? 0 : z;  // A's batch
        for (int i = 0; i < m; ++i) {
            const int grp = grouped ? row_group[(size_t)z * m + i] : z;  // the group; -1: a row of no group
            const int zb = mode == 3 ? 0 : grp;                            // B's matrix
            const int k0 = mode == 3 && grp >= 0 ? k_start[grp] : 0, k1 = mode == 3 && grp >= 0 ? k_end[grp] : k;
            rows_checked += grp >= 0;
            for (int j = 0; j < ldd; ++j) {
                const float got = (float)d[z * sd_ + i * ldd + j];
                if (j >= n || grp < 0) {  // the padding of D, and rows outside every group, must stay untouched
                    if (!std::isnan(got)) return std::fprintf(stderr, "wrote D[%d][%d][%d] outside\n", z, i, j), 1;
                    continue;
                }
                double acc = 0;
                if (block) {  // each 128-K group (of the group's K columns) summed alone, then times its two scales
                    for (int g = 0; g < groups; ++g) {
                        double part = 0;
                        for (int kk = std::max(k0, g * 128); kk < std::min(k1, g * 128 + 128); ++kk)
                            part += av[((int64_t)za * m + i) * k + kk] * bv[((int64_t)zb * k + kk) * n + j];
                        acc += part * bsa(za, i, g) * bsb(zb, j, g);
                    }
                } else {
                    for (int kk = k0; kk < k1; ++kk)
                        acc += av[((int64_t)za * m + i) * k + kk] * bv[((int64_t)zb * k + kk) * n + j];
                }
                double v = acc * p.alpha;
                if (full && !block) v = v * scale_a[i] * scale_b[j];
                if (full) v = v + p.beta * (double)(float)c[z * sc_ + i * ldc + j] + bias[j];
                if (grouped && !block) v *= grouped_epi ? scale_a[z * gsa_ + i] * scale_b[grp * gsb_ + j]
                                                        : (double)tensor_a * tensor_b;
                if (grouped && grouped_epi) v += bias[grp * gbias_ + j];
                if (act == 1) v = v > 0 ? v : 0;
                if (act == 2) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
                if (act == 3) v = v / (1 + std::exp(-v));
                if (std::isnan(got))
                    return std::fprintf(stderr, "D[%d][%d][%d] is NaN (unwritten or poisoned)\n", z, i, j), 1;
                num += (got - v) * (got - v);
                den += v * v;
            }
        }
        worst = std::max(worst, std::sqrt(num / (den > 0 ? den : 1)));
    }
    if (grouped) std::printf("rows %lld ", (long long)rows_checked);
    std::printf("max_rel_l2 %.3g\n", worst);
    const double tol = fp8_inputs ? 1e-2 : 4e-3;
    return worst <= tol ? 0 : 1;
}
