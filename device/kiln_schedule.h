// Where a workgroup works: the scheduling every GEMM family shares (mma, mfma, wmma, wgmma).
//
//   tile coordinates  WorkGroupMapping (WGM): consecutive tiles walk WGM tile-rows together before moving along N, so
//                     the tiles in flight at once share rows of A and columns of B in the L2 cache.
//   K split           GlobalSplitU (GSU): a (batch, split) pair's slice covers K tiles
//                     [split * k_tiles_per_split, + k_tiles_per_split), clipped to the problem's K tiles.
//   stagger           StaggerU (SU, SUS, SUM): a workgroup's K loop starts `stagger` tiles into its range and wraps, so
//                     that workgroups running together read different K columns of A and B.
//                     stagger = ((id mod SU) * (SUS / DepthU bytes of A)) mod iters; SUM picks id: 0 the tile row,
//                     1 the tile column, 2 the batch, 3 the workgroup's (or persistent tile's) linear index.
//
//   groups            grouped GEMMs (MoE, kiln_gemm_params.group_mode): the tiles of group 0, then of group 1, ...;
//                     a group of rows start .. end - 1 (contiguous: its rows of A and D; masked: rows 0 .. count - 1
//                     of batch g) has ceil((end - start) / MT0) tile rows by tiles_n, walked with WorkGroupMapping,
//                     and B's matrix g. The sizes are on the device (group_index), so a walker keeps a cursor
//                     (GroupCursor) that moves forward over the groups as its tile index grows.
//                     k-grouped (GROUP_K, the MoE weight gradient): group g is K columns start .. end - 1 of A and B
//                     (one matrix each) and the whole of D's batch g: tiles_m * tiles_n tiles per group, K tiles
//                     start / DU .. ceil(end / DU) - 1. Ends are clamped non-decreasing and within K, and rounded down
//                     to a multiple of 128 unless they are K, so that every K tile lies inside one group (DU divides
//                     128); an empty group's tiles store D = act(bias).
//
// Zero K tiles (K = 0, or a split past the last K tile) give iters = 0 and stagger = 0: the K loop reads nothing (no
// step ever asks for k_tile), and the epilogue stores the zero accumulators, D = act(beta * C + bias).
//
// The kernel's Config C gives TA (A's element type), MT0, MT1, DU, WGM, GSU, SU, SUS, SUM and B_PACKED.
#ifndef KILN_SCHEDULE_H
#define KILN_SCHEDULE_H

#include "kiln_device.h"

namespace kiln {

// One unit of work: an output tile of one batch and one split-K slice, and its K tiles.
struct WorkTile {
    int tm, tn;       // tile row and column within the batch
    int m0, n0;       // the tile's first row and column of D: tm * MT0, tn * MT1
    int batch, split; // batch index; split-K slice (0 .. GSU-1)
    int kt0, iters;   // the K tiles kt0 .. kt0 + iters - 1 (iters = 0: none)
    int stagger;      // loop step i reads K tile kt0 + (i + stagger) % iters (k_tile)
    int group;        // B's matrix (the batch; grouped GEMMs: the group)
    int m_end;        // rows m0 .. m_end - 1 of A and D are the tile's to compute (m; grouped: the group's end)
};

// kiln_gemm_params.group_mode (kiln.h kiln_group_mode)
enum GroupMode { GROUP_NONE = 0, GROUP_CONTIGUOUS = 1, GROUP_MASKED = 2, GROUP_K = 3 };
constexpr int K_GROUP_ALIGN = 128;  // k-grouped ends are multiples of this (or K)

// A walker's place among the groups: group g (-1: not started), its first tile index `base`, its rows.
struct GroupCursor {
    int g = -1, base = 0;
    int start = 0, end = 0;
};

template <class C> struct Schedule {
    static constexpr int EA = (int)sizeof(typename C::TA);

    // WorkGroupMapping of tile t (0 .. tiles_m * tiles_n - 1) of one batch.
    KILN_DEVICE static void tile_coords(const kiln_gemm_params &p, int t, int &tm, int &tn) {
        tile_coords(p.tiles_m, p.tiles_n, t, tm, tn);
    }
    KILN_DEVICE static void tile_coords(int tiles_m, int tiles_n, int t, int &tm, int &tn) {
        const int per_group = C::WGM * tiles_n;
        const int first_m = (t / per_group) * C::WGM;
        const int rows = tiles_m - first_m < C::WGM ? tiles_m - first_m : C::WGM;
        tm = first_m + (t % per_group) % rows;
        tn = (t % per_group) / rows;
    }

    // K extent of B's rows: prepacked B is zero-padded to a multiple of 16 (and K-permuted inside each 16).
    KILN_DEVICE static int k_extent(const kiln_gemm_params &p) { return C::B_PACKED ? (p.k + 15) / 16 * 16 : p.k; }

    // Where the tile starts in D.
    KILN_DEVICE static void origin(const kiln_gemm_params &p, WorkTile &w) {
        w.m0 = w.tm * C::MT0, w.n0 = w.tn * C::MT1;
        w.group = w.batch, w.m_end = p.m;
    }

    // The K tiles of w.split and the stagger (id: the SUM = 3 index). Needs w.tm, w.tn, w.batch, w.split.
    KILN_DEVICE static void k_range(const kiln_gemm_params &p, WorkTile &w, int id) {
        const int k_tiles = (k_extent(p) + C::DU - 1) / C::DU;
        w.kt0 = w.split * p.k_tiles_per_split;
        const int kt1 = w.kt0 + p.k_tiles_per_split < k_tiles ? w.kt0 + p.k_tiles_per_split : k_tiles;
        w.iters = kt1 > w.kt0 ? kt1 - w.kt0 : 0;
        w.stagger = 0;
        if constexpr (C::SU > 0) {
            const int sid = C::SUM == 0 ? w.tm : C::SUM == 1 ? w.tn : C::SUM == 2 ? w.batch : id;
            if (w.iters > 0) w.stagger = ((sid % C::SU) * (C::SUS / (C::DU * EA))) % w.iters;
        }
    }

    // The work of this workgroup in a grid (tiles_m * tiles_n, 1, batch * GSU).
    KILN_DEVICE static WorkTile of_block(const kiln_gemm_params &p) {
        WorkTile w;
        tile_coords(p, block_x(), w.tm, w.tn);
        w.batch = block_z() / C::GSU, w.split = block_z() % C::GSU;
        origin(p, w);
        k_range(p, w, block_x());
        return w;
    }

    // Tile t of a linear walk: t -> (batch, split) = divmod(t / (tiles_m * tiles_n), GSU), then WorkGroupMapping
    // inside the batch (persistent kernels walk t over CTAs).
    KILN_DEVICE static WorkTile of_index(const kiln_gemm_params &p, int t) {
        WorkTile w;
        const int per_batch = p.tiles_m * p.tiles_n;
        const int bs = t / per_batch, r = t % per_batch;
        w.batch = bs / C::GSU;
        w.split = bs % C::GSU;
        tile_coords(p, r, w.tm, w.tn);
        origin(p, w);
        k_range(p, w, t);
        return w;
    }

    // Tile t of the walk of a split-K cluster (C::MC 3): the GSU CTAs of cluster t all take output tile t (as
    // of_index walks the tiles of one split), CTA `rank` its K slice `rank`.
    KILN_DEVICE static WorkTile of_split_index(const kiln_gemm_params &p, int t, int rank) {
        WorkTile w;
        const int per_batch = p.tiles_m * p.tiles_n;
        w.batch = t / per_batch;
        w.split = rank;
        tile_coords(p, t % per_batch, w.tm, w.tn);
        origin(p, w);
        k_range(p, w, t);
        return w;
    }

    // Tile t of the walk of a two-CTA cluster (C::MC, multicast) for CTA `rank` of the pair: t walks the pairs as
    // of_index walks tiles, over ceil(tiles_m / 2) x tiles_n pairs of M-adjacent tiles (MC 1) or tiles_m x
    // ceil(tiles_n / 2) of N-adjacent ones (MC 2); rank 0 takes the pair's first tile, rank 1 the second, which lies
    // past D's edge when the count along the pair is odd (it computes and stores nothing of D). Both take the pair's
    // K range and stagger, so that they load the same K-tiles.
    KILN_DEVICE static WorkTile of_cluster_index(const kiln_gemm_params &p, int t, int rank) {
        static_assert(C::MC == 1 || C::MC == 2, "pairs along M or N");
        WorkTile w;
        const int pm = C::MC == 1 ? (p.tiles_m + 1) / 2 : p.tiles_m, pn = C::MC == 2 ? (p.tiles_n + 1) / 2 : p.tiles_n;
        const int per_batch = pm * pn;
        const int bs = t / per_batch;
        w.batch = bs / C::GSU;
        w.split = bs % C::GSU;
        tile_coords(pm, pn, t % per_batch, w.tm, w.tn);
        k_range(p, w, t);
        if (C::MC == 1) w.tm = 2 * w.tm + rank;
        else w.tn = 2 * w.tn + rank;
        origin(p, w);
        return w;
    }

    // ---- grouped GEMMs ----
    KILN_DEVICE static int group_tiles(const kiln_gemm_params &p, const GroupCursor &c) {
        return (c.end - c.start + C::MT0 - 1) / C::MT0 * p.tiles_n;
    }

    // Group c.g's rows: contiguous ends held non-decreasing and within A (a decreasing offset makes an empty group);
    // masked counts clamped to [0, m].
    KILN_DEVICE static void load_group(const kiln_gemm_params &p, GroupCursor &c) {
        const int v = p.group_index[c.g];
        if (p.group_mode == GROUP_CONTIGUOUS) {
            c.start = c.end;
            c.end = v < c.start ? c.start : v > p.m ? p.m : v;
        } else {
            c.start = 0;
            c.end = v < 0 ? 0 : v > p.m ? p.m : v;
        }
    }

    // Tile t of the grouped walk into w, moving the cursor forward (calls with t below the cursor's group are not
    // allowed); false when t is past the last group's tiles.
    KILN_DEVICE static bool of_group_index(const kiln_gemm_params &p, int t, GroupCursor &c, WorkTile &w) {
        if (p.group_mode == GROUP_K) return of_k_group(p, t, c, w);
        if (c.g < 0) {
            c = GroupCursor{};
            c.g = 0;
            load_group(p, c);
        }
        while (t >= c.base + group_tiles(p, c)) {
            c.base += group_tiles(p, c);
            if (++c.g >= p.groups) return false;
            load_group(p, c);
        }
        tile_coords((c.end - c.start + C::MT0 - 1) / C::MT0, p.tiles_n, t - c.base, w.tm, w.tn);
        w.batch = p.group_mode == GROUP_CONTIGUOUS ? 0 : c.g;
        w.split = 0;
        w.m0 = c.start + w.tm * C::MT0, w.n0 = w.tn * C::MT1;
        w.group = c.g, w.m_end = c.end;
        k_range(p, w, t);
        return true;
    }

    // Whether the grouped walk has a tile t (t >= the cursor's group base; the cursor is left where it is): at once
    // inside the cursor's group, else by walking a copy over the next groups.
    KILN_DEVICE static bool group_has(const kiln_gemm_params &p, int t, const GroupCursor &c) {
        if (p.group_mode == GROUP_K) return (c.g >= 0 && t < c.base + p.tiles_m * p.tiles_n) || k_group_has(p, t, c);
        if (c.g >= 0 && t < c.base + group_tiles(p, c)) return true;
        GroupCursor n = c;
        WorkTile w;
        return of_group_index(p, t, n, w);
    }

    // k-grouped (GROUP_K): the cursor holds group c.g's K columns start .. end - 1; every group has tiles_m * tiles_n
    // tiles. Ends as contiguous ones within K, rounded down to a multiple of K_GROUP_ALIGN unless they reach K.
    // (Kept apart from the row-grouped walk, whose code it leaves as it was.)
    KILN_DEVICE static void load_k_group(const kiln_gemm_params &p, GroupCursor &c) {
        const int v = p.group_index[c.g];
        c.start = c.end;
        const int e = v >= p.k ? p.k : v & ~(K_GROUP_ALIGN - 1);
        c.end = e < c.start ? c.start : e;
    }

    KILN_DEVICE static bool of_k_group(const kiln_gemm_params &p, int t, GroupCursor &c, WorkTile &w) {
        static_assert(K_GROUP_ALIGN % C::DU == 0, "k-grouped tiles: DepthU divides the groups' alignment");
        const int per_group = p.tiles_m * p.tiles_n;
        if (c.g < 0) {
            c = GroupCursor{};
            c.g = 0;
            load_k_group(p, c);
        }
        while (t >= c.base + per_group) {
            c.base += per_group;
            if (++c.g >= p.groups) return false;
            load_k_group(p, c);
        }
        tile_coords(p, t - c.base, w.tm, w.tn);
        w.batch = c.g;  // D's batch; A and B are one matrix each (a_batch, b_matrix)
        w.split = 0;
        w.m0 = w.tm * C::MT0, w.n0 = w.tn * C::MT1;
        w.group = c.g, w.m_end = p.m;
        w.kt0 = c.start / C::DU;
        w.iters = (c.end - c.start + C::DU - 1) / C::DU;
        w.stagger = 0;
        return true;
    }

    KILN_DEVICE static bool k_group_has(const kiln_gemm_params &p, int t, const GroupCursor &c) {
        GroupCursor n = c;
        WorkTile w;
        return of_k_group(p, t, n, w);
    }

    // A's batch and B's matrix of a tile: its batch and group, but k-grouped problems have one A and one B (the
    // groups are K columns of both) while the group is D's batch. GROUPED: the kernel's (others: batch, batch).
    template <bool GROUPED> KILN_DEVICE static int a_batch(const kiln_gemm_params &p, const WorkTile &w) {
        if constexpr (GROUPED) return p.group_mode == GROUP_K ? 0 : w.batch;
        return w.batch;
    }
    template <bool GROUPED> KILN_DEVICE static int b_matrix(const kiln_gemm_params &p, const WorkTile &w) {
        if constexpr (GROUPED) return p.group_mode == GROUP_K ? 0 : w.group;
        return w.group;
    }

    // The K tile loop step i reads; only for 0 <= i < w.iters.
    // (stagger < iters and i < iters: one conditional subtraction is the modulo; without StaggerU, stagger is 0)
    KILN_DEVICE static int k_tile(const WorkTile &w, int i) {
        if constexpr (C::SU == 0) return w.kt0 + i;
        const int j = i + w.stagger;
        return w.kt0 + (j >= w.iters ? j - w.iters : j);
    }
};

}  // namespace kiln

#endif  // KILN_SCHEDULE_H
