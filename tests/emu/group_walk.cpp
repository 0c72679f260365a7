// The grouped walk of kiln_schedule.h (Schedule::of_group_index, group_has) on the CPU: for random group sizes
// (contiguous ends with empty groups, decreasing and out-of-range offsets; masked counts with negatives and counts
// above m), tiles, WorkGroupMapping and grid sizes, the CTAs of a persistent grid (tiles t = b, b + grid, ...; each
// with its own cursor, as each role of a wgmma CTA has) must together visit every tile of every group exactly once,
// with the group's rows (m0 .. m_end), batch and B matrix, and group_has must agree with the walk. The bound on the
// tile count is the runtime's (select.c, kiln_solution_geometry). Built and run by tests/py/test_group_walk.py.
#include "amd_emu.h"  // __HIP__ host environment: device code compiles for the CPU

#include <cstdio>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "kiln_schedule.h"

template <int M0, int M1, int W> struct Cfg {
    using TA = uint8_t;
    static constexpr int MT0 = M0, MT1 = M1, DU = 128, WGM = W, GSU = 1, SU = 0, SUS = 0, SUM = 0;
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

int main() {
    std::mt19937 rng(12345);
    int cases = 0;
    for (int i = 0; i < 150; ++i)
        for (int mode = 1; mode <= 2; ++mode) {
            one_case<Cfg<128, 128, 8>>(rng, mode, cases++);
            one_case<Cfg<64, 256, 1>>(rng, mode, cases++);
            one_case<Cfg<256, 128, 4>>(rng, mode, cases++);
        }
    std::printf("group_walk: %d cases, %d failures\n", cases, failures);
    return failures != 0;
}
