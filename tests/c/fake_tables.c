/* Fake dispatch tables (see fake_tables.h). Exact entries of the sm90 fp8 logic, in order:
 *   0: 4096^3 -> FAKE_FP8_BIG_LDS   1: 4096^3 -> FAKE_FP8_MT128   2: 64^3 -> FAKE_FP8_MT64
 *   3: 128x128x16384 -> FAKE_FP8_SPLITK   4: 1024^3 -> FAKE_FP8_KMUL      fallback: FAKE_FP8_ANY */
#include "fake_tables.h"

#define E4M3 KILN_DTYPE_E4M3
#define E5M2 KILN_DTYPE_E5M2
#define BF16 KILN_DTYPE_BF16
#define F16 KILN_DTYPE_F16
#define F32 KILN_DTYPE_F32
#define TN KILN_LAYOUT_TN
#define NN KILN_LAYOUT_NN
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The block-scaled and grouped kinds: e4m3 x e4m3 -> bf16 TN wgmma kernels, MT0 x 128 x 128, persistent, D through a
 * map. */
#define FAKE_WG_F8(k, n, hash, m0, lds)                                                                                \
    {.name = n, .name_hash = UINT64_C(hash), .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_WGMMA,                  \
     .launch = KILN_LAUNCH_TMA, .kind = k, .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN,           \
     .b_prepacked = 0, .mt0 = m0, .mt1 = 128, .depth_u = 128, .threads = 384, .lds_bytes = lds, .gsu = 1, .wgm = 8, \
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 1, .overlap = 1,           \
     .tma_store = 1}

const kiln_solution kiln_solutions[] = {
    {.name = "fake_F8F8B_TN_MT128x128x64_SM90",
     .name_hash = UINT64_C(0xB9BC96377FD9C196),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 64, .threads = 256, .lds_bytes = 65536, .gsu = 1, .wgm = 8,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT64x64x64_SM90",
     .name_hash = UINT64_C(0x4A1FF5D677C1E176),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 64, .mt1 = 64, .depth_u = 64, .threads = 128, .lds_bytes = 24576, .gsu = 1, .wgm = 1,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT256x128x128_SM90",
     .name_hash = UINT64_C(0x0F3DAF4E6E4B1F6B),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 256, .mt1 = 128, .depth_u = 128, .threads = 256, .lds_bytes = 300000, .gsu = 1, .wgm = 8,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT64x64x128_GSU4_SM90",
     .name_hash = UINT64_C(0x52C54EA72C023263),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 64, .mt1 = 64, .depth_u = 128, .threads = 128, .lds_bytes = 49152, .gsu = 4, .wgm = 1,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = "fake_F8F8B_TN_MT64x64x128_GSU4_SM90_reduce",
     .persistent = 0},
    {.name = "fake_F8F8B_TN_MT128x128x128_KM128_SM90",
     .name_hash = UINT64_C(0x9EF55F121A28D40D),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 128, .threads = 256, .lds_bytes = 131072, .gsu = 1, .wgm = 8,
     .align_a = 16, .align_b = 16, .k_multiple = 128, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT32x32x32_A1_SM90",
     .name_hash = UINT64_C(0x67B823FB43C98142),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 32, .mt1 = 32, .depth_u = 32, .threads = 64, .lds_bytes = 4096, .gsu = 1, .wgm = 1,
     .align_a = 1, .align_b = 1, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_HF8H_TN_MT64x64x64_P_SM90",
     .name_hash = UINT64_C(0xE11DC3BAB0DA9659),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_MIXED_W8,
     .a_type = F16, .b_type = E4M3, .d_type = F16, .layout = TN, .b_prepacked = 1,
     .mt0 = 64, .mt1 = 64, .depth_u = 64, .threads = 128, .lds_bytes = 24576, .gsu = 1, .wgm = 1,
     .align_a = 8, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_HHH_NN_MT128x128x32_SM90",
     .name_hash = UINT64_C(0xD88928DD5F5DD2E3),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_GEMM,
     .a_type = F16, .b_type = F16, .d_type = F16, .layout = NN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 32, .threads = 256, .lds_bytes = 32768, .gsu = 1, .wgm = 4,
     .align_a = 8, .align_b = 8, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT128x128x64_SM89",
     .name_hash = UINT64_C(0xB9C023377FDCE704),
     .arch = KILN_ARCH_SM89, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 64, .threads = 256, .lds_bytes = 65536, .gsu = 1, .wgm = 8,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8B_TN_MT128x64x64_NOCODE_SM90",
     .name_hash = UINT64_C(0x46AAEA17B6FA748C),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 64, .depth_u = 64, .threads = 128, .lds_bytes = 49152, .gsu = 1, .wgm = 1,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_B8B8B_TN_MT128x128x64_NOCODE_SM90",
     .name_hash = UINT64_C(0xBDE405104FF4530F),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_MMA, .launch = KILN_LAUNCH_PLAIN, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E5M2, .b_type = E5M2, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 64, .threads = 256, .lds_bytes = 65536, .gsu = 1, .wgm = 8,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 0},
    {.name = "fake_F8F8S_TN_MT128x128x128_WGMMA_SM90",
     .name_hash = UINT64_C(0xD287174CA86CBE28),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_WGMMA, .launch = KILN_LAUNCH_TMA, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = F32, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 128, .threads = 384, .lds_bytes = 196608, .gsu = 1, .wgm = 1,
     .align_a = 16, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 1, .overlap = 1,
     .tma_store = 1},
    {.name = "fake_F8F8S_TN_MT128x128x128_GSU2_WGMMA_SM90",
     .name_hash = UINT64_C(0xBA59968AADB1A6C4),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_WGMMA, .launch = KILN_LAUNCH_TMA, .kind = KILN_KIND_FP8_SCALED,
     .a_type = E4M3, .b_type = E4M3, .d_type = F32, .layout = TN, .b_prepacked = 0,
     .mt0 = 128, .mt1 = 128, .depth_u = 128, .threads = 384, .lds_bytes = 196608, .gsu = 2, .wgm = 1,
     .align_a = 16, .align_b = 16, .k_multiple = 1,
     .reduce_name = "fake_F8F8S_TN_MT128x128x128_GSU2_WGMMA_SM90_reduce", .persistent = 0, .overlap = 1},
    {.name = "fake_HF8S_TN_MT128x128x64_P_WGMMA_SM90",
     .name_hash = UINT64_C(0xC9CA19454D59DDDE),
     .arch = KILN_ARCH_SM90, .family = KILN_FAMILY_WGMMA, .launch = KILN_LAUNCH_TMA, .kind = KILN_KIND_MIXED_W8,
     .a_type = F16, .b_type = E4M3, .d_type = F32, .layout = TN, .b_prepacked = 1,
     .mt0 = 128, .mt1 = 128, .depth_u = 64, .threads = 384, .lds_bytes = 131072, .gsu = 1, .wgm = 1,
     .align_a = 8, .align_b = 16, .k_multiple = 1, .reduce_name = NULL, .persistent = 1, .overlap = 0},
    FAKE_WG_F8(KILN_KIND_FP8_BLOCK, "fake_F8F8BQ_TN_MT128x128x128_WGMMA_SM90", 0x462E4764EAEC2FFE, 128, 200704),
    FAKE_WG_F8(KILN_KIND_FP8_GROUPED, "fake_F8F8BG_TN_MT64x128x128_WGMMA_SM90", 0xC32EDB31E85607FF, 64, 140368),
    FAKE_WG_F8(KILN_KIND_FP8_BLOCK_GROUPED, "fake_F8F8BQG_TN_MT64x128x128_WGMMA_SM90", 0xCE15B22B0FC6C26A, 64, 195824),
};
const int kiln_num_solutions = COUNT(kiln_solutions);

static const int SM90_FP8[] = {FAKE_FP8_MT128, FAKE_FP8_MT64, FAKE_FP8_BIG_LDS, FAKE_FP8_SPLITK,
                               FAKE_FP8_KMUL,  FAKE_FP8_ANY,  FAKE_FP8_NOCODE};
static const kiln_exact SM90_FP8_EXACT[] = {
    {4096, 4096, 4096, FAKE_FP8_BIG_LDS}, {4096, 4096, 4096, FAKE_FP8_MT128}, {64, 64, 64, FAKE_FP8_MT64},
    {128, 128, 16384, FAKE_FP8_SPLITK},   {1024, 1024, 1024, FAKE_FP8_KMUL},
};
static const int SM90_MIXED[] = {FAKE_MIXED};
static const int SM90_GEMM[] = {FAKE_GEMM};
static const kiln_exact SM90_GEMM_EXACT[] = {{256, 256, 256, FAKE_GEMM}};
static const int SM89_FP8[] = {FAKE_FP8_SM89};
static const int SM90_E5M2[] = {FAKE_E5M2_NOCODE};
static const int SM90_WG_FP8[] = {FAKE_WG_FP8, FAKE_WG_FP8_SPLITK};
static const int SM90_WG_MIXED[] = {FAKE_WG_MIXED};
static const int SM90_WG_BLOCK[] = {FAKE_WG_BLOCK};
static const int SM90_WG_GROUPED[] = {FAKE_WG_GROUPED};
static const int SM90_WG_BLOCK_GROUPED[] = {FAKE_WG_BLOCK_GROUPED};

/* The logic of one FAKE_WG_F8 kernel, alone in it. */
#define FAKE_WG_LOGIC(k, src, list, fb)                                                                                \
    {.arch = KILN_ARCH_SM90, .kind = k, .source = src, .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, \
     .b_prepacked = 0, .solutions = list, .num_solutions = 1, .exact = NULL, .num_exact = 0,                        \
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = fb}

const kiln_logic kiln_logics[] = {
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_FP8_SCALED, .source = "fake/sm90/fp8.yaml",
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .solutions = SM90_FP8, .num_solutions = COUNT(SM90_FP8), .exact = SM90_FP8_EXACT,
     .num_exact = COUNT(SM90_FP8_EXACT),
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_FP8_ANY},
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_MIXED_W8, .source = "fake/sm90/mixed.yaml",
     .a_type = F16, .b_type = E4M3, .d_type = F16, .layout = TN, .b_prepacked = 1,
     .solutions = SM90_MIXED, .num_solutions = COUNT(SM90_MIXED), .exact = NULL, .num_exact = 0,
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_MIXED},
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_GEMM, .source = "fake/sm90/gemm.yaml",
     .a_type = F16, .b_type = F16, .d_type = F16, .layout = NN, .b_prepacked = 0,
     .solutions = SM90_GEMM, .num_solutions = COUNT(SM90_GEMM), .exact = SM90_GEMM_EXACT,
     .num_exact = COUNT(SM90_GEMM_EXACT),
     .distance = KILN_DISTANCE_LINEAR_MNK, .fallback = FAKE_GEMM},
    {.arch = KILN_ARCH_SM89, .kind = KILN_KIND_FP8_SCALED, .source = "fake/sm89/fp8.yaml",
     .a_type = E4M3, .b_type = E4M3, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .solutions = SM89_FP8, .num_solutions = COUNT(SM89_FP8), .exact = NULL, .num_exact = 0,
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_FP8_SM89},
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_FP8_SCALED, .source = "fake/sm90/e5m2.yaml",
     .a_type = E5M2, .b_type = E5M2, .d_type = BF16, .layout = TN, .b_prepacked = 0,
     .solutions = SM90_E5M2, .num_solutions = COUNT(SM90_E5M2), .exact = NULL, .num_exact = 0,
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_E5M2_NOCODE},
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_FP8_SCALED, .source = "fake/sm90/fp8_f32_wgmma.yaml",
     .a_type = E4M3, .b_type = E4M3, .d_type = F32, .layout = TN, .b_prepacked = 0,
     .solutions = SM90_WG_FP8, .num_solutions = COUNT(SM90_WG_FP8), .exact = NULL, .num_exact = 0,
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_WG_FP8},
    {.arch = KILN_ARCH_SM90, .kind = KILN_KIND_MIXED_W8, .source = "fake/sm90/mixed_f32_wgmma.yaml",
     .a_type = F16, .b_type = E4M3, .d_type = F32, .layout = TN, .b_prepacked = 1,
     .solutions = SM90_WG_MIXED, .num_solutions = COUNT(SM90_WG_MIXED), .exact = NULL, .num_exact = 0,
     .distance = KILN_DISTANCE_LOG_MNK, .fallback = FAKE_WG_MIXED},
    FAKE_WG_LOGIC(KILN_KIND_FP8_BLOCK, "fake/sm90/fp8_block_wgmma.yaml", SM90_WG_BLOCK, FAKE_WG_BLOCK),
    FAKE_WG_LOGIC(KILN_KIND_FP8_GROUPED, "fake/sm90/fp8_grouped_wgmma.yaml", SM90_WG_GROUPED, FAKE_WG_GROUPED),
    FAKE_WG_LOGIC(KILN_KIND_FP8_BLOCK_GROUPED, "fake/sm90/fp8_block_grouped_wgmma.yaml", SM90_WG_BLOCK_GROUPED,
                  FAKE_WG_BLOCK_GROUPED),
};
const int kiln_num_logics = COUNT(kiln_logics);

/* Stand-in images: the fake backend never looks inside. */
static const unsigned char IMAGE[] = "not a real code object";

const kiln_code_object kiln_code_objects[] = {
    {"fake_F8F8B_TN_MT128x128x64_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8B_TN_MT64x64x64_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8B_TN_MT256x128x128_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8B_TN_MT64x64x128_GSU4_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8B_TN_MT128x128x128_KM128_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8B_TN_MT32x32x32_A1_SM90", IMAGE, sizeof IMAGE},
    {"fake_HF8H_TN_MT64x64x64_P_SM90", IMAGE, sizeof IMAGE},
    {"fake_HHH_NN_MT128x128x32_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8S_TN_MT128x128x128_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8S_TN_MT128x128x128_GSU2_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_HF8S_TN_MT128x128x64_P_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8BQ_TN_MT128x128x128_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8BG_TN_MT64x128x128_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_F8F8BQG_TN_MT64x128x128_WGMMA_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_d128_bm128_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_d128_bm64_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_d64_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_d256_big_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_d128_GFX942", IMAGE, sizeof IMAGE},
    {"fake_attn_f16_mma_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_f16_wgmma_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_f16_vpre_SM90", IMAGE, sizeof IMAGE},
    {"fake_attn_f16_vpre_d64_SM90", IMAGE, sizeof IMAGE},
};
const int kiln_num_code_objects = COUNT(kiln_code_objects);

/* (the packed-V kernels are persistent; the one that packs V itself, v_packed 2, also has the split tail: 2) */
#define ATTN_V(n, hash, a, fam, q, o, d, m, b, t, lds, pb, vp)                                                      \
    {.name = n, .name_hash = hash, .arch = a, .family = fam, .qkv_type = q, .o_type = o, .head_dim = d, .bm = m,     \
     .bn = b, .threads = t, .lds_bytes = lds, .p_bits = pb, .v_packed = vp, .persistent = vp}
#define ATTN(n, hash, a, fam, q, o, d, m, b, t, lds, pb) ATTN_V(n, hash, a, fam, q, o, d, m, b, t, lds, pb, 0)
const kiln_attn_solution kiln_attn_solutions[] = {
    [FAKE_ATTN_D128_BM128] = ATTN("fake_attn_d128_bm128_SM90", 0x0bd89e11cccb5465ull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, BF16, 128, 128, 64, 256, 40960, 8),
    [FAKE_ATTN_D128_BM64] = ATTN("fake_attn_d128_bm64_SM90", 0xf997effd5dbead80ull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, BF16, 128, 64, 64, 128, 24576, 8),
    [FAKE_ATTN_D64] = ATTN("fake_attn_d64_SM90", 0x8aea3efebe733291ull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, BF16, 64, 128, 64, 256, 24576, 8),
    [FAKE_ATTN_D256_NOCODE] = ATTN("fake_attn_d256_nocode_SM90", 0xf14e4e2c0934fb07ull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, BF16, 256, 64, 32, 128, 40960, 8),
    [FAKE_ATTN_BIG_LDS] = ATTN("fake_attn_d256_big_SM90", 0x0a76faec2373eff1ull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, BF16, 256, 128, 64, 256, 300000, 8),
    [FAKE_ATTN_GFX942] = ATTN("fake_attn_d128_GFX942", 0xce935ba978d1b603ull, KILN_ARCH_GFX942, KILN_FAMILY_MFMA,
        KILN_DTYPE_E4M3FNUZ, BF16, 128, 128, 64, 256, 32768, 8),
    [FAKE_ATTN_MMA_F16] = ATTN("fake_attn_f16_mma_SM90", 0x8abed88326dfa8faull, KILN_ARCH_SM90, KILN_FAMILY_MMA,
        E4M3, F16, 128, 128, 64, 256, 40960, 8),
    [FAKE_ATTN_WGMMA_F16] = ATTN("fake_attn_f16_wgmma_SM90", 0xac932fe1f6a0b988ull, KILN_ARCH_SM90, KILN_FAMILY_WGMMA,
        E4M3, F16, 128, 128, 64, 384, 115768, 16),
    [FAKE_ATTN_VPRE_F16] = ATTN_V("fake_attn_f16_vpre_SM90", 0x6dd29b0625208e2aull, KILN_ARCH_SM90, KILN_FAMILY_WGMMA,
        E4M3, F16, 128, 128, 128, 384, 132096, 16, 2),
    [FAKE_ATTN_VPRE_D64] = ATTN_V("fake_attn_f16_vpre_d64_SM90", 0x49b713854d9fecb1ull, KILN_ARCH_SM90, KILN_FAMILY_WGMMA,
        E4M3, F16, 64, 128, 128, 384, 90112, 16, 1),
};
const int kiln_num_attn_solutions = COUNT(kiln_attn_solutions);

kiln_tables fake_tables(void)
{
    kiln_tables t = {kiln_solutions,  kiln_num_solutions,   kiln_logics,          kiln_num_logics,
                     kiln_code_objects, kiln_num_code_objects, kiln_attn_solutions, kiln_num_attn_solutions,
                     NULL,              0};
    return t;
}
