// The grouped walk of kiln_schedule.h (Schedule::of_group_index, group_has) on the CPU: for random group sizes
// (contiguous ends with empty groups, decreasing and out-of-range offsets; masked counts with negatives and counts
// above m), tiles, WorkGroupMapping and grid sizes, the CTAs of a persistent grid (tiles t = b, b + grid, ...; each
// with its own cursor, as each role of a wgmma CTA has) must together visit every tile of every group exactly once,
// with the group's rows (m0 .. m_end), batch and B matrix, and group_has must agree with the walk. The bound on the
// tile count is the runtime's (select.c, kiln_solution_geometry).
// k-grouped problems (GROUP_K, the weight gradient): random K and K ends (empty groups, decreases, negatives, ends
// off the 128 grid that must be rounded down, ends past K, a last end at a K off the grid) over DepthU 16 .. 128: every
// (group, tile row, tile column) once, tile t in group t / (tiles_m * tiles_n), the group's K tiles (kt0 = start / DU,
// iters = ceil((end - start) / DU), each K tile inside its group), all of m, D's batch = the group, A's batch and B's
// matrix 0, and the walk ends exactly at groups * tiles_m * tiles_n (the runtime's grid).
// Built and run by tests/py/test_group_walk.py.
#include "amd_emu.h"  // __HIP__ host environment: device code compiles for the CPU

#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "kiln_schedule.h"

template <int M0, int M1, int W, int D = 128> struct Cfg {
    using TA = uint8_t;
    static constexpr int MT0 = M0, MT1 = M1, DU = D, WGM = W, GSU = 1, SU = 0, SUS = 0, SUM = 0;
    static constexpr bool B_PACKED = false;
};

static int failures = 0;
#define EXPECT(cond, ...)                                                                                             \
    do {                                                                                                              \
        if (!(cond)) {                                                                                                \
            if (failures++ < 20) {                                                                                    \
                std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
                std::printf(__VA_ARGS__);                                                                             \
                std::printf("\n");                                                                                    \
            }                                                                                                         \
        }                                                                                                             \
    } while (0)

template <class C> static void one_case(std::mt19937 &rng, int mode, int case_id) {
    using S = kiln::Schedule<C>;
    std::uniform_int_distribution<int> groups_d(1, 40), n_d(1, 1000), k_d(1, 700), pick(0, 9);
    const int groups = groups_d(rng), n = n_d(rng), k = k_d(rng);
    std::vector<int32_t> index(groups);
    int m = 0;
    if (mode == 1) {  // contiguous ends: mostly growing, with empty groups, decreases and ends past m
        int end = 0;
        for (auto &v : index) {
            const int r = pick(rng);
            end += r == 0 ? 0 : r == 1 ? 1 : r < 8 ? (int)(rng() % 300) : (int)(rng() % 1500);
            v = r == 9 ? end - (int)(rng() % 400) : end;  // a decrease now and then
        }
        m = std::max(1, end - (int)(rng() % 200));  // rows past m (clamped) now and then
    } else {  // masked counts over m rows per group: negatives, zeros, above m
        m = 1 + (int)(rng() % 700);
        for (auto &v : index) {
            const int r = pick(rng);
            v = r == 0 ? 0 : r == 1 ? -(int)(rng() % 5) : r == 2 ? m + (int)(rng() % 50) : (int)(rng() % (m + 1));
        }
    }
    kiln_gemm_params p;
    std::memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.batch = 1;
    p.tiles_m = (m + C::MT0 - 1) / C::MT0, p.tiles_n = (n + C::MT1 - 1) / C::MT1;
    p.k_tiles_per_split = (k + C::DU - 1) / C::DU;
    p.group_mode = mode, p.groups = groups, p.group_index = index.data();
    const long bound = mode == 1 ? (long)(p.tiles_m + groups) * p.tiles_n : (long)groups * p.tiles_m * p.tiles_n;

    // what must be visited: (group, first row, tile column) -> (batch, m_end)
    std::map<std::tuple<int, int, int>, std::pair<int, int>> want;
    int end = 0;
    for (int g = 0; g < groups; ++g) {
        int start, stop;
        if (mode == 1) {
            start = end;
            stop = std::min(std::max((int)index[g], start), m);
            end = stop;
        } else {
            start = 0;
            stop = std::min(std::max((int)index[g], 0), m);
        }
        for (int r = start; r < stop; r += C::MT0)
            for (int tn = 0; tn < p.tiles_n; ++tn) want[{g, r, tn}] = {mode == 1 ? 0 : g, stop};
    }
    const int grids[] = {1, 3, 132, (int)std::min<long>(bound, 1000)};
    for (int grid : grids) {
        std::map<std::tuple<int, int, int>, int> seen;
        for (int b = 0; b < grid; ++b) {
            kiln::GroupCursor c;
            for (long t = b; t < bound; t += grid) {
                const bool has = S::group_has(p, (int)t, c);
                kiln::WorkTile w;
                const bool ok = S::of_group_index(p, (int)t, c, w);
                EXPECT(has == ok, "case %d grid %d cta %d t %ld: group_has %d, walk %d", case_id, grid, b, t, has, ok);
                if (!ok) break;
                const auto key = std::make_tuple(w.group, w.m0, w.tn);
                auto it = want.find(key);
                EXPECT(it != want.end(), "case %d: t %ld gave group %d rows %d.. column tile %d, not a tile of it",
                       case_id, t, w.group, w.m0, w.tn);
                if (it != want.end())
                    EXPECT(it->second.first == w.batch && it->second.second == w.m_end && w.n0 == w.tn * C::MT1 &&
                               w.iters == p.k_tiles_per_split && w.kt0 == 0,
                           "case %d: tile (%d, %d, %d): batch %d m_end %d iters %d", case_id, w.group, w.m0, w.tn,
                           w.batch, w.m_end, w.iters);
                ++seen[key];
            }
        }
        EXPECT(seen.size() == want.size(), "case %d mode %d grid %d: %zu of %zu tiles visited", case_id, mode, grid,
               seen.size(), want.size());
        for (auto &kv : seen)
            EXPECT(kv.second == 1, "case %d grid %d: tile (%d, %d, %d) visited %d times", case_id, grid,
                   std::get<0>(kv.first), std::get<1>(kv.first), std::get<2>(kv.first), kv.second);
    }
}

// The K columns [start, end) of each k-grouped group, from group_index as kiln.h states the rule: end(g) =
// group_index[g] clamped into [end(g - 1), k] and, unless it is k, rounded down to a multiple of 128.
static std::vector<std::pair<int, int>> k_groups(const std::vector<int32_t> &index, int k) {
    std::vector<std::pair<int, int>> out;
    int prev = 0;
    for (int32_t v : index) {
        int e = v >= k ? k : (int)(std::floor(v / 128.0) * 128);
        if (e < prev) e = prev;
        out.push_back({prev, e});
        prev = e;
    }
    return out;
}

template <class C> static void k_case(std::mt19937 &rng, int case_id) {
    using S = kiln::Schedule<C>;
    std::uniform_int_distribution<int> groups_d(1, 40), mn_d(1, 1000), pick(0, 9);
    const int groups = groups_d(rng), m = mn_d(rng), n = mn_d(rng);
    const int kr = pick(rng);  // K: 0 now and then, a multiple of 128, or anything
    const int k = kr == 0 ? 0 : kr < 4 ? 128 * (int)(rng() % 24) : 1 + (int)(rng() % 3000);
    std::vector<int32_t> index(groups);
    int end = 0;  // the offsets as a caller might pass them
    for (auto &v : index) {
        const int r = pick(rng);
        v = r == 0 ? end                                    // empty
            : r == 1 ? end + 128 * (1 + (int)(rng() % 4))  // whole 128s
            : r == 2 ? end + 1 + (int)(rng() % 400)        // off the grid: rounded down
            : r == 3 ? end - (int)(rng() % 300)            // a decrease (empty)
            : r == 4 ? -1 - (int)(rng() % 200)             // negative (empty)
            : r == 5 ? k + (int)(rng() % 100)              // at or past K
            : end + (int)(rng() % 700);
        if (v >= 0) end = v;
    }
    if (pick(rng) < 5) index.back() = k;  // the last group ends at K (on or off the grid)
    const auto want_k = k_groups(index, k);

    kiln_gemm_params p;
    std::memset(&p, 0, sizeof p);
    p.m = m, p.n = n, p.k = k, p.batch = 1;
    p.tiles_m = (m + C::MT0 - 1) / C::MT0, p.tiles_n = (n + C::MT1 - 1) / C::MT1;
    p.k_tiles_per_split = (k + C::DU - 1) / C::DU;
    p.group_mode = kiln::GROUP_K, p.groups = groups, p.group_index = index.data();
    const int per = p.tiles_m * p.tiles_n;
    const long bound = (long)groups * per;  // select.c: grid x = groups * tiles_m * tiles_n

    // the tiles of a group: every (tile row, tile column), as the WorkGroupMapping of its own index
    std::vector<std::pair<int, int>> coords(per);
    for (int r = 0; r < per; ++r) S::tile_coords(p.tiles_m, p.tiles_n, r, coords[r].first, coords[r].second);
    const int grids[] = {1, 3, 132, (int)std::min<long>(bound, 1000), (int)bound + 7};
    for (int grid : grids) {
        std::map<std::tuple<int, int, int>, int> seen;
        for (int b = 0; b < grid; ++b) {
            kiln::GroupCursor c;
            for (long t = b; t < bound + grid; t += grid) {  // one step past the walk's end
                const bool has = S::group_has(p, (int)t, c);
                kiln::WorkTile w;
                const bool ok = S::of_group_index(p, (int)t, c, w);
                EXPECT(has == ok && ok == (t < bound), "k case %d grid %d cta %d t %ld of %ld: group_has %d, walk %d",
                       case_id, grid, b, t, bound, has, ok);
                if (!ok) break;
                const int g = (int)(t / per);
                EXPECT(w.group == g && w.batch == g, "k case %d: t %ld in group %d, walk says group %d batch %d",
                       case_id, t, g, w.group, w.batch);
                if (w.group < 0 || w.group >= groups) continue;
                const auto [ks, ke] = want_k[w.group];
                const int kt0 = ks / C::DU, iters = (ke - ks + C::DU - 1) / C::DU;
                EXPECT(w.tm == coords[t % per].first && w.tn == coords[t % per].second && w.m0 == w.tm * C::MT0 &&
                           w.n0 == w.tn * C::MT1 && w.m_end == m && w.split == 0 && w.stagger == 0,
                       "k case %d: t %ld: tile (%d, %d) at (%d, %d) m_end %d split %d stagger %d", case_id, t, w.tm,
                       w.tn, w.m0, w.n0, w.m_end, w.split, w.stagger);
                EXPECT(w.kt0 == kt0 && w.iters == iters,
                       "k case %d (k %d, DU %d): group %d has K [%d, %d): kt0 %d iters %d, walk says kt0 %d iters %d",
                       case_id, k, C::DU, w.group, ks, ke, kt0, iters, w.kt0, w.iters);
                // its K tiles lie inside the group: [kt0 * DU, (kt0 + iters) * DU) covers [ks, ke) and no other
                // group's columns (ke is a multiple of 128 or K)
                if (w.iters > 0)
                    EXPECT(w.kt0 * C::DU == ks && std::min((w.kt0 + w.iters) * C::DU, k) == ke,
                           "k case %d: group %d K [%d, %d) read as K tiles %d .. %d of %d", case_id, w.group, ks, ke,
                           w.kt0, w.kt0 + w.iters - 1, C::DU);
                for (int i = 0; i < w.iters; ++i)
                    EXPECT(S::k_tile(w, i) == w.kt0 + i, "k case %d: step %d reads K tile %d", case_id, i,
                           S::k_tile(w, i));
                EXPECT((S::template a_batch<true>(p, w) == 0 && S::template b_matrix<true>(p, w) == 0),
                       "k case %d: A's batch %d, B's matrix %d (one matrix each)", case_id,
                       S::template a_batch<true>(p, w), S::template b_matrix<true>(p, w));
                ++seen[{w.group, w.tm, w.tn}];
            }
        }
        EXPECT(seen.size() == (size_t)bound, "k case %d grid %d: %zu of %ld tiles visited", case_id, grid, seen.size(),
               bound);
        for (auto &kv : seen)
            EXPECT(kv.second == 1, "k case %d grid %d: tile (%d, %d, %d) visited %d times", case_id, grid,
                   std::get<0>(kv.first), std::get<1>(kv.first), std::get<2>(kv.first), kv.second);
    }
}

int main() {
    std::mt19937 rng(12345);
    int cases = 0;
    for (int i = 0; i < 150; ++i)
        for (int mode = 1; mode <= 2; ++mode) {
            one_case<Cfg<128, 128, 8>>(rng, mode, cases++);
            one_case<Cfg<64, 256, 1>>(rng, mode, cases++);
            one_case<Cfg<256, 128, 4>>(rng, mode, cases++);
        }
    for (int i = 0; i < 150; ++i) {  // k-grouped, DepthU 16 .. 128
        k_case<Cfg<128, 128, 8, 64>>(rng, cases++);
        k_case<Cfg<64, 256, 1, 128>>(rng, cases++);
        k_case<Cfg<256, 128, 4, 32>>(rng, cases++);
        k_case<Cfg<32, 64, 8, 16>>(rng, cases++);
    }
    std::printf("group_walk: %d cases, %d failures\n", cases, failures);
    return failures != 0;
}
