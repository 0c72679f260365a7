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

/* name, hash (FNV-1a 64 of name), arch, family, a, b, d, layout, b_prepacked, mt0, mt1, depth_u, threads, lds_bytes,
 * gsu, wgm, align_a, align_b, k_multiple, reduce_name, persistent */
const kiln_solution kiln_solutions[] = {
    {"fake_F8F8B_TN_MT128x128x64_SM90", UINT64_C(0xB9BC96377FD9C196), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     128, 128, 64, 256, 65536, 1, 8, 16, 16, 1, NULL, 0},
    {"fake_F8F8B_TN_MT64x64x64_SM90", UINT64_C(0x4A1FF5D677C1E176), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     64, 64, 64, 128, 24576, 1, 1, 16, 16, 1, NULL, 0},
    {"fake_F8F8B_TN_MT256x128x128_SM90", UINT64_C(0x0F3DAF4E6E4B1F6B), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     256, 128, 128, 256, 300000, 1, 8, 16, 16, 1, NULL, 0},
    {"fake_F8F8B_TN_MT64x64x128_GSU4_SM90", UINT64_C(0x52C54EA72C023263), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     64, 64, 128, 128, 49152, 4, 1, 16, 16, 1, "fake_F8F8B_TN_MT64x64x128_GSU4_SM90_reduce", 0},
    {"fake_F8F8B_TN_MT128x128x128_KM128_SM90", UINT64_C(0x9EF55F121A28D40D), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     128, 128, 128, 256, 131072, 1, 8, 16, 16, 128, NULL, 0},
    {"fake_F8F8B_TN_MT32x32x32_A1_SM90", UINT64_C(0x67B823FB43C98142), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     32, 32, 32, 64, 4096, 1, 1, 1, 1, 1, NULL, 0},
    {"fake_HF8H_TN_MT64x64x64_P_SM90", UINT64_C(0xE11DC3BAB0DA9659), "sm90", "mma", F16, E4M3, F16, TN, 1,
     64, 64, 64, 128, 24576, 1, 1, 8, 16, 1, NULL, 0},
    {"fake_HHH_NN_MT128x128x32_SM90", UINT64_C(0xD88928DD5F5DD2E3), "sm90", "mma", F16, F16, F16, NN, 0,
     128, 128, 32, 256, 32768, 1, 4, 8, 8, 1, NULL, 0},
    {"fake_F8F8B_TN_MT128x128x64_SM89", UINT64_C(0xB9C023377FDCE704), "sm89", "mma", E4M3, E4M3, BF16, TN, 0,
     128, 128, 64, 256, 65536, 1, 8, 16, 16, 1, NULL, 0},
    {"fake_F8F8B_TN_MT128x64x64_NOCODE_SM90", UINT64_C(0x46AAEA17B6FA748C), "sm90", "mma", E4M3, E4M3, BF16, TN, 0,
     128, 64, 64, 128, 49152, 1, 1, 16, 16, 1, NULL, 0},
    {"fake_B8B8B_TN_MT128x128x64_NOCODE_SM90", UINT64_C(0xBDE405104FF4530F), "sm90", "mma", E5M2, E5M2, BF16, TN, 0,
     128, 128, 64, 256, 65536, 1, 8, 16, 16, 1, NULL, 0},
    {"fake_F8F8S_TN_MT128x128x128_WGMMA_SM90", UINT64_C(0xD287174CA86CBE28), "sm90", "wgmma", E4M3, E4M3, F32, TN, 0,
     128, 128, 128, 384, 196608, 1, 1, 16, 16, 1, NULL, 1},
    {"fake_F8F8S_TN_MT128x128x128_GSU2_WGMMA_SM90", UINT64_C(0xBA59968AADB1A6C4), "sm90", "wgmma", E4M3, E4M3, F32,
     TN, 0, 128, 128, 128, 384, 196608, 2, 1, 16, 16, 1, "fake_F8F8S_TN_MT128x128x128_GSU2_WGMMA_SM90_reduce", 0},
    {"fake_HF8S_TN_MT128x128x64_P_WGMMA_SM90", UINT64_C(0xC9CA19454D59DDDE), "sm90", "wgmma", F16, E4M3, F32, TN, 1,
     128, 128, 64, 384, 131072, 1, 1, 8, 16, 1, NULL, 1},
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

const kiln_logic kiln_logics[] = {
    {"sm90", "fake/sm90/fp8.yaml", E4M3, E4M3, BF16, TN, 0, SM90_FP8, COUNT(SM90_FP8), SM90_FP8_EXACT,
     COUNT(SM90_FP8_EXACT), KILN_DISTANCE_LOG_MNK, FAKE_FP8_ANY, NULL, NULL, 0, 0},
    {"sm90", "fake/sm90/mixed.yaml", F16, E4M3, F16, TN, 1, SM90_MIXED, COUNT(SM90_MIXED), NULL, 0,
     KILN_DISTANCE_LOG_MNK, FAKE_MIXED, NULL, NULL, 0, 0},
    {"sm90", "fake/sm90/gemm.yaml", F16, F16, F16, NN, 0, SM90_GEMM, COUNT(SM90_GEMM), SM90_GEMM_EXACT,
     COUNT(SM90_GEMM_EXACT), KILN_DISTANCE_LINEAR_MNK, FAKE_GEMM, NULL, NULL, 0, 0},
    {"sm89", "fake/sm89/fp8.yaml", E4M3, E4M3, BF16, TN, 0, SM89_FP8, COUNT(SM89_FP8), NULL, 0,
     KILN_DISTANCE_LOG_MNK, FAKE_FP8_SM89, NULL, NULL, 0, 0},
    {"sm90", "fake/sm90/e5m2.yaml", E5M2, E5M2, BF16, TN, 0, SM90_E5M2, COUNT(SM90_E5M2), NULL, 0,
     KILN_DISTANCE_LOG_MNK, FAKE_E5M2_NOCODE, NULL, NULL, 0, 0},
    {"sm90", "fake/sm90/fp8_f32_wgmma.yaml", E4M3, E4M3, F32, TN, 0, SM90_WG_FP8, COUNT(SM90_WG_FP8), NULL, 0,
     KILN_DISTANCE_LOG_MNK, FAKE_WG_FP8, NULL, NULL, 0, 0},
    {"sm90", "fake/sm90/mixed_f32_wgmma.yaml", F16, E4M3, F32, TN, 1, SM90_WG_MIXED, COUNT(SM90_WG_MIXED), NULL, 0,
     KILN_DISTANCE_LOG_MNK, FAKE_WG_MIXED, NULL, NULL, 0, 0},
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
};
const int kiln_num_code_objects = COUNT(kiln_code_objects);

kiln_tables fake_tables(void)
{
    kiln_tables t = {kiln_solutions,  kiln_num_solutions,   kiln_logics,
                     kiln_num_logics, kiln_code_objects,    kiln_num_code_objects};
    return t;
}
