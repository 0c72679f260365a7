/* Consistency of the dispatch tables linked in (the fake ones, or the generated ones for c.tables_generated):
 * hashes match names, indices stay in range, every solution a logic names solves that logic's problem type, split-K
 * solutions carry a reduce kernel, and names are unique. (Several logics may share a problem type: they pool.) */
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

static void check_solution(int i)
{
    const kiln_solution *s = &kiln_solutions[i];
    CHECK(s->name && s->name[0] && s->arch && s->arch[0] && s->family, "solution %d: names", i);
    if (!s->name)
        return;
    CHECK(s->name_hash == fnv1a64(s->name), "%s: name_hash is not FNV-1a 64 of the name", s->name);
    CHECK(valid_dtype(s->a_type) && valid_dtype(s->b_type) && valid_dtype(s->d_type) &&
              (unsigned)s->layout < KILN_LAYOUT_COUNT && (s->b_prepacked == 0 || s->b_prepacked == 1),
          "%s: enums", s->name);
    CHECK(s->mt0 > 0 && s->mt1 > 0 && s->depth_u > 0 && s->threads > 0 && s->lds_bytes >= 0 && s->gsu > 0 &&
              s->wgm > 0 && s->align_a > 0 && s->align_b > 0 && s->k_multiple > 0,
          "%s: sizes", s->name);
    CHECK((s->gsu > 1) == (s->reduce_name != NULL), "%s: reduce_name exactly when gsu > 1", s->name);
    for (int j = 0; j < i; j++)
        CHECK(kiln_solutions[j].name && strcmp(kiln_solutions[j].name, s->name) != 0, "%s: listed twice", s->name);
}

/* Index s is a solution for logic l's arch and problem type. */
static int solves(const kiln_logic *l, int s)
{
    if (s < 0 || s >= kiln_num_solutions)
        return 0;
    const kiln_solution *x = &kiln_solutions[s];
    return strcmp(x->arch, l->arch) == 0 && x->a_type == l->a_type && x->b_type == l->b_type &&
           x->d_type == l->d_type && x->layout == l->layout && x->b_prepacked == l->b_prepacked;
}

static void check_logic(int i)
{
    const kiln_logic *l = &kiln_logics[i];
    CHECK(l->arch && l->source && l->num_solutions > 0 && (l->num_exact == 0 || l->exact), "logic %d: fields", i);
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

static void check_code_object(int i)
{
    const kiln_code_object *c = &kiln_code_objects[i];
    int named = 0;
    for (int s = 0; s < kiln_num_solutions; s++)
        named |= c->name && kiln_solutions[s].name && strcmp(c->name, kiln_solutions[s].name) == 0;
    CHECK(named && c->data && c->size > 0, "code object %d (%s): names a solution and has data", i,
          c->name ? c->name : "NULL");
    for (int j = 0; j < i; j++)
        CHECK(!c->name || strcmp(kiln_code_objects[j].name, c->name) != 0, "code object %s twice", c->name);
}

int main(void)
{
    CHECK(kiln_num_solutions >= 0 && kiln_num_logics >= 0 && kiln_num_code_objects >= 0, "counts");
    for (int i = 0; i < kiln_num_solutions; i++)
        check_solution(i);
    for (int i = 0; i < kiln_num_logics; i++)
        check_logic(i);
    for (int i = 0; i < kiln_num_code_objects; i++)
        check_code_object(i);
    return test_summary("test_tables");
}
