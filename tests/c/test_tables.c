/* Consistency of the dispatch tables linked in (the fake ones, or the generated ones for c.tables_generated):
 * hashes match names, enums are in range and agree (a TMA launch is the wgmma family's; the kind follows from the
 * types), indices stay in range, every solution a logic names solves that logic's problem type, split-K solutions
 * carry a reduce kernel, and names are unique. (Several logics may share a problem type: they pool.) Then the enum
 * name tables and kiln_set_arch, which maps a name through them. */
#include <stdint.h>
#include <string.h>

#include "select.h"
#include "test_util.h"

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = UINT64_C(0xCBF29CE484222325);
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(0x100000001B3);
    }
    return h;
}

/* Checked here without the runtime's helpers, so that this test can link against libkiln alone. */
static int valid_dtype(kiln_dtype t) { return (unsigned)t < (unsigned)KILN_DTYPE_COUNT; }

static int is_fp8(kiln_dtype t)
{
    return t == KILN_DTYPE_E4M3 || t == KILN_DTYPE_E5M2 || t == KILN_DTYPE_E4M3FNUZ || t == KILN_DTYPE_E5M2FNUZ;
}

/* The kind a problem type makes (vocab.py KIND_INFO). */
static kiln_kind kind_of(kiln_dtype a, kiln_dtype b, int b_prepacked)
{
    if (is_fp8(a) && is_fp8(b))
        return KILN_KIND_FP8_SCALED;
    if (b_prepacked)
        return KILN_KIND_MIXED_W8;
    return a == b && (a == KILN_DTYPE_F16 || a == KILN_DTYPE_BF16) ? KILN_KIND_GEMM : KILN_KIND_NONE;
}

static void check_solution(int i)
{
    const kiln_solution *s = &kiln_solutions[i];
    CHECK(s->name && s->name[0], "solution %d: name", i);
    if (!s->name)
        return;
    CHECK(s->name_hash == fnv1a64(s->name), "%s: name_hash is not FNV-1a 64 of the name", s->name);
    CHECK(valid_dtype(s->a_type) && valid_dtype(s->b_type) && valid_dtype(s->d_type) &&
              (unsigned)s->layout < KILN_LAYOUT_COUNT && (s->b_prepacked == 0 || s->b_prepacked == 1),
          "%s: enums", s->name);
    CHECK(s->arch > KILN_ARCH_UNKNOWN && s->arch < KILN_ARCH_COUNT && (unsigned)s->family < KILN_FAMILY_COUNT &&
              (unsigned)s->launch < KILN_LAUNCH_COUNT,
          "%s: arch, family or launch out of range", s->name);
    CHECK((s->launch == KILN_LAUNCH_TMA) == (s->family == KILN_FAMILY_WGMMA), "%s: launch kind of its family",
          s->name);
    CHECK(s->kind != KILN_KIND_NONE && (s->kind == kind_of(s->a_type, s->b_type, s->b_prepacked) ||
                                        ((s->kind == KILN_KIND_FP8_BLOCK || s->kind == KILN_KIND_FP8_GROUPED ||
                                          s->kind == KILN_KIND_FP8_BLOCK_GROUPED) &&
                                         kind_of(s->a_type, s->b_type, s->b_prepacked) == KILN_KIND_FP8_SCALED)),
          "%s: kind", s->name);
    CHECK(s->mt0 > 0 && s->mt1 > 0 && s->depth_u > 0 && s->threads > 0 && s->lds_bytes >= 0 && s->gsu > 0 &&
              s->wgm > 0 && s->align_a > 0 && s->align_b > 0 && s->k_multiple > 0,
          "%s: sizes", s->name);
    CHECK(kiln_solution_reduces(s) == (s->reduce_name != NULL),
          "%s: reduce_name exactly when gsu > 1 and the splits are not reduced in a cluster", s->name);
    CHECK(!kiln_solution_cluster_split(s) || (s->gsu >= 2 && s->gsu <= 8 && !s->persistent &&
                                              s->kind != KILN_KIND_FP8_GROUPED && s->kind != KILN_KIND_FP8_BLOCK_GROUPED),
          "%s: split-K in a cluster: gsu 2..8, one tile a cluster, not grouped", s->name);
    for (int j = 0; j < i; j++)
        CHECK(kiln_solutions[j].name && strcmp(kiln_solutions[j].name, s->name) != 0, "%s: listed twice", s->name);
}

/* Index s is a solution for logic l's arch and problem type. */
static int solves(const kiln_logic *l, int s)
{
    if (s < 0 || s >= kiln_num_solutions)
        return 0;
    const kiln_solution *x = &kiln_solutions[s];
    return x->arch == l->arch && x->kind == l->kind && x->a_type == l->a_type && x->b_type == l->b_type &&
           x->d_type == l->d_type && x->layout == l->layout && x->b_prepacked == l->b_prepacked;
}

static void check_logic(int i)
{
    const kiln_logic *l = &kiln_logics[i];
    CHECK(l->arch > KILN_ARCH_UNKNOWN && l->arch < KILN_ARCH_COUNT && l->source && l->num_solutions > 0 &&
              (l->num_exact == 0 || l->exact),
          "logic %d: fields", i);
    for (int j = 0; j < l->num_solutions; j++)
        CHECK(solves(l, l->solutions[j]), "%s: candidate %d does not solve its problem", l->source, l->solutions[j]);
    for (int j = 0; j < l->num_exact; j++) {
        const kiln_exact *e = &l->exact[j];
        CHECK(e->m > 0 && e->n > 0 && e->k > 0 && solves(l, e->solution), "%s: exact entry %d", l->source, j);
    }
    CHECK(solves(l, l->fallback), "%s: fallback %d", l->source, l->fallback);
    CHECK(l->distance == KILN_DISTANCE_LOG_MNK || l->distance == KILN_DISTANCE_LINEAR_MNK, "%s: distance",
          l->source);
}

/* Every enum value has its own name, and an arch name maps back to its id. */
static void check_names(void)
{
    for (int i = 0; i < KILN_ARCH_COUNT; i++) {
        const char *name = kiln_arch_name((kiln_arch_id)i);
        CHECK(name && strcmp(name, "?") != 0, "arch %d has a name", i);
        CHECK(i == KILN_ARCH_UNKNOWN || kiln_arch_from_name(name) == (kiln_arch_id)i, "arch %s maps back", name);
        for (int j = 0; j < i; j++)
            CHECK(strcmp(kiln_arch_name((kiln_arch_id)j), name) != 0, "arch name %s twice", name);
    }
    for (int i = 0; i < KILN_FAMILY_COUNT; i++)
        CHECK(strcmp(kiln_family_name((kiln_family_id)i), "?") != 0, "family %d has a name", i);
    for (int i = 0; i < KILN_LAUNCH_COUNT; i++)
        CHECK(strcmp(kiln_launch_name((kiln_launch_kind)i), "?") != 0, "launch %d has a name", i);
    for (int i = 0; i < KILN_KIND_COUNT; i++)
        CHECK(strcmp(kiln_kind_name((kiln_kind)i), "?") != 0, "kind %d has a name", i);
    CHECK(strcmp(kiln_arch_name(KILN_ARCH_COUNT), "?") == 0 && strcmp(kiln_family_name((kiln_family_id)-1), "?") == 0,
          "out-of-range names");
    CHECK(kiln_arch_from_name(NULL) == KILN_ARCH_UNKNOWN && kiln_arch_from_name("unknown") == KILN_ARCH_UNKNOWN &&
              kiln_arch_from_name("sm91") == KILN_ARCH_UNKNOWN && kiln_arch_from_name("SM90") == KILN_ARCH_UNKNOWN &&
              kiln_arch_from_name("sm90") == KILN_ARCH_SM90,
          "arch lookup");
}

/* kiln_set_arch takes only a name of the arch table; the handle keeps the arch it had otherwise. */
static void check_set_arch(void)
{
    kiln_handle h = NULL;
    const char *arch = NULL;
    if (kiln_create(&h) != KILN_STATUS_SUCCESS || !h) {
        CHECK(0, "kiln_create");
        return;
    }
    CHECK(kiln_set_arch(h, "gfx942") == KILN_STATUS_SUCCESS, "set gfx942");
    CHECK(kiln_set_arch(h, "sm91") == KILN_STATUS_INVALID_VALUE, "sm91 is not an arch");
    CHECK(kiln_set_arch(h, "") == KILN_STATUS_INVALID_VALUE, "empty arch");
    CHECK(kiln_set_arch(h, "unknown") == KILN_STATUS_INVALID_VALUE, "the placeholder name is not an arch");
    CHECK(kiln_set_arch(h, NULL) == KILN_STATUS_NULL_POINTER && kiln_set_arch(NULL, "sm90") == KILN_STATUS_NULL_POINTER,
          "NULL");
    CHECK(kiln_device_arch(h, &arch) == KILN_STATUS_SUCCESS && strcmp(arch, "gfx942") == 0, "arch kept: %s", arch);
    kiln_destroy(h);
}

static void check_code_object(int i)
{
    const kiln_code_object *c = &kiln_code_objects[i];
    int named = 0;
    for (int s = 0; s < kiln_num_solutions; s++)
        named |= c->name && kiln_solutions[s].name && strcmp(c->name, kiln_solutions[s].name) == 0;
    for (int s = 0; s < kiln_num_attn_solutions; s++)
        named |= c->name && kiln_attn_solutions[s].name && strcmp(c->name, kiln_attn_solutions[s].name) == 0;
    CHECK(named && c->data && c->size > 0, "code object %d (%s): names a solution and has data", i,
          c->name ? c->name : "NULL");
    for (int j = 0; j < i; j++)
        CHECK(!c->name || strcmp(kiln_code_objects[j].name, c->name) != 0, "code object %s twice", c->name);
}

/* An attention kernel's entry: its name hashed, enums in range, the types and head dims attention takes, a
 * workgroup and its shared memory; names unique across both tables. */
static void check_attn_solution(int i)
{
    const kiln_attn_solution *s = &kiln_attn_solutions[i];
    CHECK(s->name && s->name_hash == fnv1a64(s->name), "attention %d: name and hash", i);
    CHECK(s->arch > KILN_ARCH_UNKNOWN && s->arch < KILN_ARCH_COUNT && (unsigned)s->family < KILN_FAMILY_COUNT,
          "%s: arch, family", s->name);
    CHECK((s->qkv_type == KILN_DTYPE_E4M3 || s->qkv_type == KILN_DTYPE_E5M2 || s->qkv_type == KILN_DTYPE_E4M3FNUZ ||
           s->qkv_type == KILN_DTYPE_E5M2FNUZ) &&
              (s->o_type == KILN_DTYPE_F16 || s->o_type == KILN_DTYPE_BF16),
          "%s: types", s->name);
    CHECK((s->head_dim == 64 || s->head_dim == 128 || s->head_dim == 256) && s->bm > 0 && s->bn > 0 &&
              s->threads > 0 && s->threads <= 1024 && s->lds_bytes > 0,
          "%s: sizes", s->name);
    CHECK(s->v_packed >= 0 && s->v_packed <= 2 && (s->p_bits == 8 || s->p_bits == 16) &&
              (!s->v_packed || (s->family == KILN_FAMILY_WGMMA && s->p_bits == 16)),
          "%s: v_packed %d (wgmma, f16 P V), p_bits %d", s->name, s->v_packed, s->p_bits);
    for (int j = 0; j < i; j++)
        CHECK(strcmp(kiln_attn_solutions[j].name, s->name) != 0, "%s listed twice", s->name);
    for (int j = 0; j < kiln_num_solutions; j++)
        CHECK(strcmp(kiln_solutions[j].name, s->name) != 0, "%s is also a GEMM solution", s->name);
}

int main(void)
{
    CHECK(kiln_num_solutions >= 0 && kiln_num_logics >= 0 && kiln_num_code_objects >= 0, "counts");
    for (int i = 0; i < kiln_num_solutions; i++)
        check_solution(i);
    for (int i = 0; i < kiln_num_logics; i++)
        check_logic(i);
    for (int i = 0; i < kiln_num_attn_solutions; i++)
        check_attn_solution(i);
    for (int i = 0; i < kiln_num_code_objects; i++)
        check_code_object(i);
    check_names();
    check_set_arch();
    return test_summary("test_tables");
}
