// The wgmma family (sm_90a): a warp-specialized, persistent GEMM.
//
//   warpgroup 0 (producer, 40 registers): one thread walks the CTA's tiles and issues TMA loads of A and B K-tiles
//                into a ring of STAGES shared-memory stages; stage s completes on full[s] (transaction bytes) and is
//                given back on empty[s] by every consumer warp.
//   warpgroups 1..WG0*WG1 (consumers, 232 registers): consumer (cm, cn) owns rows cm*RPC.. and columns cn*CPC.. of
//                the MT0 x MT1 tile; it issues wgmma.mma_async on each stage, keeps one K-tile of wgmma in flight,
//                and runs the fused epilogue (scales, bias, activation, conversion) through its own shared-memory
//                staging: D's boxes stored by the copy engine (TMA, epilogue_tma) where the runtime maps D, else
//                coalesced 16-byte stores (split-K: f32 partial sums to the workspace).
//
// Two operand paths:
//   SS   (SWAP = false): A and B both from shared memory, K-major, 128-byte swizzle; fp8 m64nNk32 or 16-bit m64nNk16.
//   SS with BLOCK_SCALES: fp8 with block scales (one per 128 of K: 1x128 for A's rows, 128x128 or 1x128 for B). Each
//                K-tile (one 128-K group) is summed alone by wgmma in `part`, then promoted: acc += part * scale_a(row)
//                * scale_b(column), while the other consumer's wgmma keeps the tensor cores busy. Each K-tile's scales
//                (MT0 of A's, B's of the tile's blocks or columns) travel in its stage, so that the consumers read
//                them from shared memory: loaded by the TMA thread with A and B where the runtime could map them
//                (P.scale_tma: scale_a M-major, scale_b K- or N-major, 16-byte strides), else copied by warp 1 of the
//                producer warpgroup with cp.async, full[s] then also waiting for its 32 lanes.
//   SS with PR > 0 (tensor/row-scaled fp8): wgmma's reduced-precision fp8 sums are promoted to FP32 accumulators every
//                PR K-tiles (mainloop_pipelined, mainloop_split, mainloop_promoted); PR 0 keeps one wgmma sum over all
//                of K (fast accumulation, only for problems that allow it).
//   SWAP (SWAP = true):  16-bit activations x prepacked fp8 weights. wgmma takes only its A operand from registers,
//                so the weights are that operand: each consumer reads them from shared memory as bytes, widens them
//                in registers and computes D^T = B * A^T; the epilogue writes the transpose back. The next K-tile's
//                weights are widened while this one's wgmma run, or (FINE: the prefill tiles of 128 weight rows a
//                consumer) the next 16-K group's.
//
// Tiles: t -> (batch, split) = divmod(t / (tiles_m * tiles_n), GSU), then WorkGroupMapping inside the batch
// (kiln_schedule.h, Schedule::of_index). CTA b takes tiles b, b + gridDim.x, ... (gridDim.x = number of tiles when not
// persistent).
// Split-K (GSU > 1): each split's f32 sums go to the workspace and a second kernel (`_reduce`) adds them up and runs
// the epilogue; with MC 3 the GSU splits of a tile are the CTAs of one cluster instead (one tile a cluster, not
// persistent): ranks 1.. leave their sums in their shared memory, rank 0 adds them (read over DSMEM, in rank order)
// to its own and runs the epilogue, with no workspace and no second launch (cluster_sum).
// Grouped (GROUPED, MoE): the tiles of group 0, then group 1, ...: a group of rows r0 .. r0 + count - 1 (contiguous:
// its rows of A and D; masked: rows 0 .. count - 1 of batch g) has ceil(count / MT0) * tiles_n tiles, walked with
// WorkGroupMapping; B is the group's matrix. The group sizes are read on the device (group_index), so every role
// (TMA thread, scale warp, consumers) walks the same groups with its own cursor (Groups), forward only, and stops
// after the last group. A tile's rows past its group's end are computed from whatever A holds there (the next
// group's rows, or zeros past A) and never stored.
#ifndef KILN_GEMM_WGMMA_H
#define KILN_GEMM_WGMMA_H

#include "kiln_epilogue.h"
#include "kiln_gemm_direct.h"
#include "kiln_mma_ptx.h"
#include "kiln_schedule.h"
#include "kiln_sm90.h"

namespace kiln {

template <class C> struct WgmmaGemm {
    using TA = typename C::TA;
    using TB = typename C::TB;
    using TD = typename C::TD;
    static constexpr int EA = (int)sizeof(TA), EB = (int)sizeof(TB), ED = (int)sizeof(TD);
    // PK 2 (ping-pong): two consumer warpgroups take alternate tiles, each a whole tile (wg 1x1); their mainloops
    // take turns on the tensor cores so that one's epilogue overlaps the other's mainloop.
    static constexpr bool PINGPONG = C::PK == 2;
    static constexpr int CONSUMERS = PINGPONG ? 2 : C::WG0 * C::WG1;
    static constexpr int STAGE_READERS = PINGPONG ? 1 : CONSUMERS;  // consumer warpgroups that read each stage
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int STAGES = C::PGR + 1;
    static constexpr int RPC = C::MT0 / C::WG0;  // tile rows (M) per consumer
    static constexpr int CPC = C::MT1 / C::WG1;  // tile columns (N) per consumer
    // SS: wgmma M runs along the tile's rows; SWAP: along its columns (the weights' rows).
    static constexpr int REP = C::SWAP ? CPC / 64 : RPC / 64;
    static constexpr bool RS = C::SWAP && C::B_PACKED;  // the weights through registers (mainloop_swap, _fine, _sync)
    static constexpr int ACC = C::Mma::N / 2;  // f32 accumulators per thread per wgmma
    static constexpr int A_SUBS = C::DU * EA / 128, B_SUBS = C::DU * EB / 128;
    static constexpr int A_STAGE = C::MT0 * C::DU * EA, B_STAGE = C::MT1 * C::DU * EB;
    static constexpr int KSTEPS = RS ? C::DU / 16 : C::DU * EA / 32;  // wgmma per K-tile (32 bytes of A each)
    // Epilogue staging per consumer: the staged path needs one 32-column f32 chunk of its rows; the TMA-store path
    // (TMA_D) holds the consumer's whole sub-tile of D, so that a tile's stores are waited for only when the next
    // tile's epilogue rewrites the boxes (a store reads its box long after it is issued). TMA_D where that fits
    // beside the ring within the 227 KB a CTA may have (wgmma.py, lds_bytes, computes the same).
    static constexpr int RING_BYTES = STAGES * (A_STAGE + B_STAGE);
    // Block scales per stage: A's (MT0 f32, + 32 of room for a box started up to 3 rows early), then B's (up to one
    // f32 per column).
    static constexpr int SA_FLOATS = C::MT0 + 32;
    static constexpr int SCALE_STAGE = C::BLOCK_SCALES ? (SA_FLOATS + C::MT1) * 4 : 0;
    static constexpr int SCALE_BYTES = STAGES * SCALE_STAGE;
    static constexpr int EPI_SMALL = RPC * 128, SUBTILE_D = RPC * CPC * ED;
    // Split-K through the workspace and a reduce kernel (GSU > 1), or inside a cluster (MC 3: CLUSTER_SPLIT).
    static constexpr bool CLUSTER_SPLIT = C::MC == 3;
    static constexpr bool MULTICAST = C::MC == 1 || C::MC == 2;  // pairs of CTAs share an operand's K-tiles
    static constexpr bool WS_SPLIT = C::GSU > 1 && !CLUSTER_SPLIT;
    // CLUSTER_SPLIT: each consumer thread's accumulators, as float4 [consumer][REP * ACC / 4][128 threads]. The
    // buffer has its own room beside the ring where the staged epilogue still fits with it, else it takes the ring's
    // (REDUCE_IN_RING: one tile a CTA, so no stage is read after the mainloop; cluster_sum lets every consumer finish
    // first). wgmma.py, _reduce, decides the same.
    static constexpr int REDUCE_NEED = CLUSTER_SPLIT ? CONSUMERS * REP * ACC * 128 * 4 : 0;
    static constexpr bool REDUCE_IN_RING =
        CLUSTER_SPLIT && REDUCE_NEED <= RING_BYTES &&
        RING_BYTES + SCALE_BYTES + REDUCE_NEED + CONSUMERS * EPI_SMALL + 2 * STAGES * 8 + 1024 > 227 * 1024;
    static constexpr int REDUCE_BYTES = REDUCE_IN_RING ? 0 : REDUCE_NEED;
    // Each consumer's whole sub-tile of D fits in shared memory beside the ring (wgmma.py, _sub_tile_fits).
    static constexpr bool SUBTILE_FITS =
        RING_BYTES + SCALE_BYTES + REDUCE_BYTES + CONSUMERS * SUBTILE_D + 2 * STAGES * 8 + 1024 <= 227 * 1024;
    static constexpr bool TMA_D = !C::SWAP && !WS_SPLIT && SUBTILE_D >= EPI_SMALL &&
                                  CPC * ED % 128 == 0 &&  // whole 128-byte boxes across a consumer's columns
                                  SUBTILE_FITS;
    static constexpr bool TMA_VEC = TMA_D && !C::BLOCK_SCALES;  // the TMA-store epilogue with vector scales, bias
    // The prepacked-weight kernels' TMA-store epilogue (epilogue_swap_tma), where the consumer's sub-tile of D, in
    // whole 64 x 64 boxes of a 16-bit type, fits beside the ring (wgmma.py, swap_tma).
    static constexpr bool SWAP_TMA = C::SWAP && !WS_SPLIT && ED == 2 && RPC % 64 == 0 && CPC % 64 == 0 && SUBTILE_FITS;
    static constexpr int EPI_REGION = TMA_D || SWAP_TMA ? SUBTILE_D : EPI_SMALL;
    static constexpr int EPI_BYTES = CONSUMERS * EPI_REGION;
    static constexpr int SCALE_OFFSET = RING_BYTES + EPI_BYTES;
    static constexpr int REDUCE_OFFSET = REDUCE_IN_RING ? 0 : SCALE_OFFSET + SCALE_BYTES;
    static constexpr int BAR_OFFSET = SCALE_OFFSET + SCALE_BYTES + REDUCE_BYTES;
    // + 1024: the dynamic shared memory base is realigned to the 1024 bytes the 128-byte swizzle needs
    static constexpr int LDS_BYTES = BAR_OFFSET + 2 * STAGES * 8 + 1024;
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    // PR > 0: tensor- and row/column-scaled fp8 sums promoted to FP32 every PR K-tiles (wgmma keeps them in a
    // reduced-precision accumulator; mainloop_pipelined for PR 1, mainloop_promoted for more); 0 keeps
    // each tile's sum over all of K in wgmma's accumulator (fast accumulation). Block-scaled kernels promote every
    // K-tile with their scales (mainloop_block) whatever PR is (the generator gives them 0).
    static constexpr bool PROMOTED = C::PR > 0 && !C::BLOCK_SCALES;
    static_assert(C::SPLIT == (PROMOTED && C::PR == 1 && !PINGPONG && REP * ACC > 64),
                  "split promotion exactly where pr 1 holds more than 64 accumulators (generator: wgmma.split)");
    static_assert(!C::SPLIT || (ACC % 2 == 0 && (C::Mma::N / 2) % 8 == 0), "halves of whole wgmma N");

    static_assert(C::Mma::N == (C::SWAP ? RPC : CPC), "wgmma N must be the consumer's extent along it");
    static_assert(REP >= 1 && (C::SWAP ? CPC : RPC) % 64 == 0, "wgmma M is 64");
    static_assert(A_SUBS >= 1 && B_SUBS >= 1 && A_SUBS * 128 == C::DU * EA && B_SUBS * 128 == C::DU * EB,
                  "each K-tile row is whole 128-byte swizzle rows");
    static_assert(C::MT0 <= 256 && C::MT1 <= 256 && RPC <= 256, "TMA boxes are at most 256 rows");
    static_assert(CPC % 32 == 0, "the epilogue works in 32-column chunks");
    static_assert(CONSUMERS <= 2, "one producer and at most two consumer warpgroups");
    static_assert(C::PR >= 0 && (C::PR == 0 || (!RS && EA == 1 && EB == 1)),
                  "promotion is for fp8 x fp8 from shared memory");
    static_assert(!C::GROUPED || (C::GSU == 1 && !C::SWAP), "grouped kernels: no split-K, no prepacked B");
    static_assert(!C::BLOCK_SCALES || (SCALE_OFFSET % 128 == 0 && SCALE_STAGE % 128 == 0 && SA_FLOATS * 4 % 128 == 0),
                  "the scale boxes land 128-byte aligned");
    static_assert(!C::BLOCK_SCALES || (C::DU == 128 && !C::SWAP && !PINGPONG && (CPC % 128 == 0 || 128 % CPC == 0)),
                  "block scales: one 128-K group per K-tile, B's column blocks whole within a consumer");

    static_assert(!MULTICAST || (!C::GROUPED && !C::SWAP && !C::SYNC && (C::MC == 1 ? C::MT1 : C::MT0) % 16 == 0),
                  "multicast: one GEMM's SS kernels, the shared operand's tile in two halves of whole swizzle groups");
    static_assert(!CLUSTER_SPLIT || (C::GSU >= 2 && C::GSU <= 8 && C::PK == 0 && !C::GROUPED && ACC % 4 == 0),
                  "split-K in a cluster: 2..8 CTAs (a portable cluster), one tile a cluster, one GEMM");

    // A tile of the persistent walk: its output tile, batch, split-K slice and K tiles (kiln_schedule.h).
    using Sched = Schedule<C>;
    using Tile = WorkTile;

    // Each role (TMA thread, scale warp, consumers) walks the CTA's tiles t = block, block + gridDim.x, ... with its
    // own cursor over the groups (GROUPED; kiln_schedule.h); the cursor is four registers beside the accumulators.
    using Groups = GroupCursor;

    // Tile t of the walk into T; false past the last tile.
    KILN_DEVICE static bool tile(const kiln_tma_params &P, int t, Groups &c, Tile &T) {
        if (t >= P.num_tiles) return false;
        if constexpr (C::GROUPED) return Sched::of_group_index(P.p, t, c, T);
        if constexpr (CLUSTER_SPLIT) T = Sched::of_split_index(P.p, t, cluster_rank());
        else if constexpr (MULTICAST) T = Sched::of_cluster_index(P.p, t, cluster_rank());
        else T = Sched::of_index(P.p, t);
        return true;
    }

    // The walk: CTA b takes tiles b, b + gridDim.x, ...; with multicast the two CTAs of cluster b / 2 (consecutive
    // on grid x, __cluster_dims__(2, 1, 1)) take pair b / 2, + gridDim.x / 2, ... (P.num_tiles counts pairs); with
    // split-K in a cluster the GSU CTAs of cluster b / GSU take tile b / GSU (P.num_tiles counts tiles).
    static constexpr int CLUSTER = CLUSTER_SPLIT ? C::GSU : MULTICAST ? 2 : 1;
    KILN_DEVICE static int cluster_rank() { return (int)((unsigned)block_x() % CLUSTER); }  // its place in its cluster
    KILN_DEVICE static int first_tile() { return block_x() / CLUSTER; }
    KILN_DEVICE static int tile_step() { return (int)gridDim.x / CLUSTER; }

    // A consumer warp gives a stage back: to its CTA's producer, and with multicast to both CTAs' (each producer
    // writes its half of the shared operand into both CTAs' stage, so it waits for the readers of both).
    KILN_DEVICE static void release(uint64_t *bar) {
        sm90::mbar_arrive(bar);
        if constexpr (MULTICAST) sm90::mbar_arrive_cluster(bar, cluster_rank() ^ 1);
    }

    // The same after the warp read the stage with ordinary shared-memory loads (ldmatrix, ld.shared), not only
    // through wgmma: ptxas places the arrive while such loads may still be in flight (the mma.sync mainloop's last
    // ldmatrix of a stage were, and a refill from L2 overwrote activations they had yet to read). membar.cta first
    // completes this thread's loads; then lane 0 gives the stage back for the warp. (fence.proxy.async removed the
    // race as well, but cost the block-scaled kernels 2-6 %; membar.cta costs them nothing measurable.)
    KILN_DEVICE static void release_read(uint64_t *bar, int lane) {
        __threadfence_block();
        __syncwarp();
        if (lane == 0) release(bar);
    }

    // The tile's scales and bias: its group's (GROUPED, kiln_epilogue.h group_operands), else the problem's.
    KILN_DEVICE static GroupOperands operands(const kiln_gemm_params &p, const Tile &T) {
        if constexpr (C::GROUPED) return group_operands(p, T.group);
        return GroupOperands{p.scale_a, p.scale_b, p.bias};
    }

    // Whether the walk has a tile t (the cursor left where it is).
    KILN_DEVICE static bool more(const kiln_tma_params &P, int t, const Groups &c) {
        if (t >= P.num_tiles) return false;
        if constexpr (C::GROUPED) return Sched::group_has(P.p, t, c);
        return true;
    }

    KILN_DEVICE static void advance(int &stage, uint32_t &phase) {
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
        }
    }

    KILN_DEVICE static void produce(const kiln_tma_params &P, uint8_t *smem, uint64_t *full, uint64_t *empty) {
        int stage = 0;
        uint32_t phase = 0;
        Groups c;
        Tile T;
        for (int t = first_tile(); tile(P, t, c, T); t += tile_step()) {
            const int ab = Sched::template a_batch<C::GROUPED>(P.p, T);
            const int bm = Sched::template b_matrix<C::GROUPED>(P.p, T);
            for (int i = 0; i < T.iters; ++i) {
                const int k0 = Sched::k_tile(T, i) * C::DU;
                sm90::mbar_wait(&empty[stage], phase ^ 1);
                if (C::BLOCK_SCALES && P.scale_tma) {  // the stage's scales come with it
                    sm90::mbar_arrive_expect_tx(&full[stage], A_STAGE + B_STAGE + P.scale_tma_bytes);
                    load_scales(P, T, Sched::k_tile(T, i), stage_scales(smem, stage), &full[stage], ab, bm);
                } else {
                    sm90::mbar_arrive_expect_tx(&full[stage], A_STAGE + B_STAGE);
                }
                uint8_t *sa = smem + stage * A_STAGE;
                uint8_t *sb = smem + STAGES * A_STAGE + stage * B_STAGE;
                load_operand<C::MC == 2, A_SUBS, C::MT0, EA>(sa, &P.a, &full[stage], k0, T.m0, ab);
                load_operand<C::MC == 1, B_SUBS, C::MT1, EB>(sb, &P.b, &full[stage], k0, T.n0, bm);
                advance(stage, phase);
            }
        }
    }

    // One operand's K-tile (SUBS 128-byte column blocks of ROWS rows from row0) into a stage. SHARED (multicast):
    // this CTA of the pair loads rows cluster_rank() * ROWS / 2 .. of the tile into both CTAs, the other CTA the
    // other half; the map's box is ROWS / 2 rows (the runtime's), and the halves stay whole 8-row swizzle groups.
    template <bool SHARED, int SUBS, int ROWS, int E>
    KILN_DEVICE static void load_operand(uint8_t *dst, const kiln_tma_desc *map, uint64_t *bar, int k0, int row0,
                                         int batch) {
        if constexpr (SHARED) {
#ifdef KILN_PROBE_MC_NOSHARE
            // Probe (tuning/probes/mc_cost_run.sh): each CTA loads both halves itself, the pair's hand-off kept.
#pragma unroll
            for (int j = 0; j < SUBS; ++j)
                for (int h = 0; h < 2; ++h)
                    sm90::tma_load_3d(dst + j * ROWS * 128 + h * (ROWS / 2) * 128, map, bar, k0 + j * (128 / E),
                                      row0 + h * (ROWS / 2), batch);
#else
            const int r0 = cluster_rank() * (ROWS / 2);
#pragma unroll
            for (int j = 0; j < SUBS; ++j)
                sm90::tma_load_3d_multicast(dst + j * ROWS * 128 + r0 * 128, map, bar, k0 + j * (128 / E), row0 + r0,
                                            batch, 0x3);
#endif
        } else {
#pragma unroll
            for (int j = 0; j < SUBS; ++j)
                sm90::tma_load_3d(dst + j * ROWS * 128, map, bar, k0 + j * (128 / E), row0, batch);
        }
    }

    KILN_DEVICE static float *stage_scales(uint8_t *smem, int stage) {
        return reinterpret_cast<float *>(smem + SCALE_OFFSET + stage * SCALE_STAGE);
    }

    // Block scales through the copy engine (P.scale_tma; kiln_abi.h): A's of the tile's rows at the stage's start,
    // B's of its column blocks (or 1x128's columns) from SA_FLOATS on. A box's first coordinate must fall on 16 bytes
    // (4 floats), so boxes start at the multiple of 4 at or below the one wanted, and scale_at says where the wanted
    // values landed.
    // ab, bm: A's batch and B's matrix of the tile (Schedule::a_batch, b_matrix).
    KILN_DEVICE static void load_scales(const kiln_tma_params &P, const Tile &T, int kt, float *ss, uint64_t *bar,
                                        int ab, int bm) {
        sm90::tma_load_3d(ss, &P.sa, bar, T.m0 & ~3, kt, ab);
        if (P.scale_tma & KILN_SCALE_TMA_B_K)
            sm90::tma_load_3d(ss + SA_FLOATS, &P.sb, bar, kt & ~3, T.n0 >> 7, bm);
        else if (P.p.sb_block_n == 1)
            sm90::tma_load_3d(ss + SA_FLOATS, &P.sb, bar, T.n0, kt, bm);
        else
            sm90::tma_load_3d(ss + SA_FLOATS, &P.sb, bar, (T.n0 >> 7) & ~3, kt, bm);
    }

    // Where a stage holds K-tile kt's scales of tile T: A's of the tile's row r at a + r; B's of block slot j (block
    // (tile's first column >> 7) + j) at b + j * step, or of the tile's column c at b + c (1x128).
    struct ScaleAt {
        int a, b, step;
    };
    KILN_DEVICE static ScaleAt scale_at(const kiln_tma_params &P, const Tile &T, int kt) {
        if (!P.scale_tma) return {0, SA_FLOATS, 1};  // the scale warp's copies (copy_scales)
        const int a = T.m0 & 3;
        if (P.scale_tma & KILN_SCALE_TMA_B_K) return {a, SA_FLOATS + (kt & 3), 4};  // 4 groups of K per block
        return {a, SA_FLOATS + (P.p.sb_block_n == 1 ? 0 : (T.n0 >> 7) & 3), 1};
    }

    // Block scales (warp 1 of the producer warpgroup, where P.scale_tma is 0): for every stage the TMA thread fills,
    // A's scales of the tile's MT0 rows and B's of its column blocks (slot j: block (tile's first column >> 7) + j;
    // per-column scales: slot c for column c) for the stage's K group, copied by cp.async (zeros past M and N), B's
    // from SA_FLOATS on; each lane's arrival on the
    // stage's full barrier is tied to its copies landing (cp.async.mbarrier.arrive), so every stage of the ring can
    // have its copies in flight. A's go 4 rows per copy where they are M-major in 16-byte aligned groups (sa_vec),
    // else one by one; B's one per block. The loops stay rolled: the producer warpgroup runs in 40 registers.
    // (Measured: one 4-byte copy per row and column made the scale warp's instructions the stage rate, 0.4x the
    // tensor-scaled kernel; announcing stages two behind after cp.async.wait_group capped the copies in flight.)
    static constexpr int TILE_BLOCKS = (C::MT1 + 127) / 128;  // B blocks of 128 columns a tile can touch

    KILN_DEVICE static void copy_scales(const kiln_gemm_params &p, const Tile &T, int64_t kt, float *ss, int lane) {
        const GroupOperands o = operands(p, T);
        const float *scale_a = o.scale_a, *scale_b = o.scale_b;
        if (p.sa_vec && (!C::GROUPED || T.m0 % 4 == 0)) {  // (a contiguous group may start at any row)
#pragma unroll 1
            for (int r = lane * 4; r < C::MT0; r += 128) {
                const int row = T.m0 + r, valid = min(max(T.m_end - row, 0), 4) * 4;
                cp_async<16>(ss + r, valid ? scale_a + row + kt * p.sa_stride_k : p.scale_a, valid);
            }
        } else {
#pragma unroll 1
            for (int r = lane; r < C::MT0; r += 32) {
                const int row = T.m0 + r;
                const bool in = row < T.m_end;
                cp_async<4>(ss + r, in ? scale_a + row * p.sa_stride_m + kt * p.sa_stride_k : p.scale_a, in ? 4 : 0);
            }
        }
        float *sb = ss + SA_FLOATS;
        if (p.sb_block_n == 1) {
#pragma unroll 1
            for (int c = lane; c < C::MT1; c += 32) {
                const int col = T.n0 + c;
                const bool in = col < p.n;
                cp_async<4>(sb + c, in ? scale_b + col * p.sb_stride_n + kt * p.sb_stride_k : p.scale_b, in ? 4 : 0);
            }
        } else if (lane < TILE_BLOCKS) {
            const int blk = (T.n0 >> 7) + lane;
            const bool in = blk * 128 < p.n;
            cp_async<4>(sb + lane, in ? scale_b + blk * p.sb_stride_n + kt * p.sb_stride_k : p.scale_b, in ? 4 : 0);
        }
    }

    KILN_DEVICE static void produce_scales(const kiln_tma_params &P, uint8_t *smem, uint64_t *full, uint64_t *empty,
                                           int lane) {
        int stage = 0;
        uint32_t phase = 0;
        Groups c;
        Tile T;
        for (int t = first_tile(); tile(P, t, c, T); t += tile_step()) {
            for (int i = 0; i < T.iters; ++i) {
                sm90::mbar_wait(&empty[stage], phase ^ 1);
                copy_scales(P.p, T, Sched::k_tile(T, i), stage_scales(smem, stage), lane);
                sm90::cp_async_mbar_arrive(&full[stage]);
                advance(stage, phase);
            }
        }
        cp_async_wait<0>();  // the CTA's shared memory outlives the last copies
    }

    // SS: one K-tile of wgmma from shared memory. a_base / b_base: the consumer's rows of A's and B's stage; with
    // swap-AB (SWAP, not RS) B's rows are wgmma's A operand (its M side) and A's rows its B operand.
    static constexpr int WA_ROWS = C::SWAP ? C::MT1 : C::MT0, WB_ROWS = C::SWAP ? C::MT0 : C::MT1;
    KILN_DEVICE static void mma_ss(float (&acc)[REP][ACC], uint32_t a_base, uint32_t b_base, int first) {
        static_assert(!RS, "both operands from shared memory");
        const uint64_t da = sm90::desc_k128(C::SWAP ? b_base : a_base);
        const uint64_t db = sm90::desc_k128(C::SWAP ? a_base : b_base);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const uint32_t koff = (kk * 32) % 128;
            const uint32_t a = (kk * 32 / 128) * (WA_ROWS * 128) + koff;
            const uint32_t b = (kk * 32 / 128) * (WB_ROWS * 128) + koff;
#pragma unroll
            for (int r = 0; r < REP; ++r)
                C::Mma::run(acc[r], sm90::desc_add(da, a + r * 64 * 128), sm90::desc_add(db, b),
                            (first && kk == 0) ? 0 : 1);
        }
    }

    // SS, split promotion: one K-tile of wgmma over column half H (0 or 1) of the consumer's columns, into a fresh
    // half-width sum (the MmaH instruction). In wgmma's accumulator layout a thread's first ACC / 2 registers are the
    // columns of the first half.
    template <int H>
    KILN_DEVICE static void mma_ss_half(float (&part)[REP][ACC / 2], uint32_t a_base, uint32_t b_base) {
        static_assert(C::SPLIT && !RS, "the half-width wgmma exists in SS split kernels only");
        const uint64_t da = sm90::desc_k128(C::SWAP ? b_base : a_base);
        const uint64_t db = sm90::desc_k128(C::SWAP ? a_base : b_base);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const uint32_t koff = (kk * 32) % 128;
            const uint32_t a = (kk * 32 / 128) * (WA_ROWS * 128) + koff;
            const uint32_t b = (kk * 32 / 128) * (WB_ROWS * 128) + koff + H * (C::Mma::N / 2) * 128;
#pragma unroll
            for (int r = 0; r < REP; ++r)
                C::MmaH::run(part[r], sm90::desc_add(da, a + r * 64 * 128), sm90::desc_add(db, b), kk == 0 ? 0 : 1);
        }
    }

    // SWAP: the weight fragments of one K-tile, widened (times 1 / Up::UNIT; mainloop_swap scales the sums back).
    // Thread (warp w, lane 4g+q) holds rows 16w+g and 16w+g+8 of each 64-row block; in the prepack order the 4 bytes
    // at 4q of a 16-K group are exactly its K indices (2q, 2q+1, 2q+8, 2q+9) -> registers a0/a2 (row) and a1/a3
    // (row + 8). Read as 8x8 matrices of 16-bit pairs, that is ldmatrix's layout: one ldmatrix.x4 brings two
    // 16-K groups of both rows (matrices: rows 0-7 and 8-15 of group kk, then of group kk + 1; lane l gives the
    // address of row l % 8 of matrix l / 8).
    using Up = Upcast<TB, typename C::T16>;
    static_assert(!RS || KSTEPS % 2 == 0, "ldmatrix.x4 reads two 16-K groups");

    // The address of 16-K group kg of weight row `row` in a stage (j = row & 7: the row's swizzle).
    KILN_DEVICE static uint32_t weight_addr(uint32_t w_base, int row, int j, int kg) {
        return w_base + (kg * 16 / 128) * (C::MT1 * 128) + row * 128 + ((((kg * 16 % 128) >> 4) ^ j) << 4);
    }

    // One group's fragments from its two matrices (rows 0-7 and 8-15 of the thread's 16), widened.
    KILN_DEVICE static void widen_group(uint32_t (&f)[4], uint32_t lo, uint32_t hi) {
        f[0] = Up::pair_unit(lo, 0);
        f[1] = Up::pair_unit(hi, 0);
        f[2] = Up::pair_unit(lo, 1);
        f[3] = Up::pair_unit(hi, 1);
    }

    // The fragments of groups kk and kk + 1 of 64-row block r (one ldmatrix.x4), widened.
    KILN_DEVICE static void load_weight_pair(uint32_t (&f)[2][4], uint32_t w_base, int r, int kk, int warp, int lane) {
        const int mat = lane >> 3, j = lane & 7;
        const int row = r * 64 + warp * 16 + (mat & 1) * 8 + j;  // row & 7 == j: the row's swizzle
        uint32_t w[4];
        sm90::ldmatrix_x4(w, weight_addr(w_base, row, j, kk + (mat >> 1)));
#pragma unroll
        for (int h = 0; h < 2; ++h) widen_group(f[h], w[2 * h], w[2 * h + 1]);
    }

    // Per-group weight scales (mixed kernels with scale_b_mode SCALE_BLOCK; kiln.h, "Block scales"): one f32 per
    // weight row (sb_block_n 1) or 128-row block (128) and K-tile of 128, at scale_b[(row / sb_block_n) *
    // sb_stride_n + kt * sb_stride_k]. They multiply the widened weights, so the epilogue has no column scale
    // (epilogue_scales): each thread's rows are g and g + 8 of its warp's 16 in each 64-row block (f[h][0], f[h][2]
    // and f[h][1], f[h][3] of load_weight_pair), and it reads their scales two K-tiles before it widens them.
    using PS = PairScale<typename C::T16>;

    template <bool GS> struct WeightScales {
        int blk[REP][2];                 // each row's index along scale_b's N (row / sb_block_n)
        float at[REP][2], then[REP][2];  // the next K-tile widened, and the one after it
        KILN_DEVICE void fetch(const kiln_gemm_params &p, float (&v)[REP][2], const Tile &T, int i) {
            if (i >= T.iters) return;
            const float *col = p.scale_b + (int64_t)Sched::k_tile(T, i) * p.sb_stride_k;
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int j = 0; j < 2; ++j) v[r][j] = __ldg(col + (int64_t)blk[r][j] * p.sb_stride_n);
        }
        KILN_DEVICE void start(const kiln_gemm_params &p, const Tile &T, int cn, int warp, int lane) {
            if constexpr (GS) {
#pragma unroll
                for (int r = 0; r < REP; ++r)
#pragma unroll
                    for (int j = 0; j < 2; ++j)
                        blk[r][j] = min(T.n0 + cn * CPC + r * 64 + warp * 16 + (lane >> 2) + 8 * j, p.n - 1) /
                                    p.sb_block_n;
                fetch(p, at, T, 0);
                fetch(p, then, T, 1);
            }
        }
        // The scales of K-tile i (the next one taken, in K order) as the weights' multipliers (PS::Scale) or as
        // f32 (SUM_SCALE), and the read of K-tile i + 2.
        KILN_DEVICE void take(const kiln_gemm_params &p, typename PS::Scale (&sc)[REP][2], const Tile &T, int i) {
            if constexpr (GS) {
#pragma unroll
                for (int r = 0; r < REP; ++r)
#pragma unroll
                    for (int j = 0; j < 2; ++j) sc[r][j] = PS::prep(at[r][j]);
                next(p, T, i);
            }
        }
        // take, and whether every scale of the warp's rows allows one multiply a pair (PS::single; warp-uniform),
        // in which case sc holds them that way. bar >= 0: the decision is the warpgroup's, over every row of its four
        // warps (named barrier `bar` of the consumer warpgroup, 128 threads): the FINE loop branches between two
        // copies of code that issue wgmma, and the four warps must take the same one.
        KILN_DEVICE bool take_one(const kiln_gemm_params &p, typename PS::Scale (&sc)[REP][2], const Tile &T, int i,
                                  int bar = -1) {
            bool single = true;
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int j = 0; j < 2; ++j) single = single && PS::single(at[r][j]);
            // (bf16: every scale takes one multiply, so the warpgroup needs no barrier to agree)
            const bool one = bar >= 0 ? PS::ALWAYS_SINGLE || sm90::named_barrier_and(bar, 128, single)
                                      : __all_sync(0xffffffffu, single);
            if (one) {
#pragma unroll
                for (int r = 0; r < REP; ++r)
#pragma unroll
                    for (int j = 0; j < 2; ++j) PS::make_single(sc[r][j], at[r][j]);
                next(p, T, i);
            } else {
                take(p, sc, T, i);
            }
            return one;
        }
        KILN_DEVICE void take(const kiln_gemm_params &p, float (&sc)[REP][2], const Tile &T, int i) {
            if constexpr (GS) {
#pragma unroll
                for (int r = 0; r < REP; ++r)
#pragma unroll
                    for (int j = 0; j < 2; ++j) sc[r][j] = at[r][j];
                next(p, T, i);
            }
        }
        KILN_DEVICE void next(const kiln_gemm_params &p, const Tile &T, int i) {
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int j = 0; j < 2; ++j) at[r][j] = then[r][j];
            fetch(p, then, T, i + 2);
        }
    };

    // Decode tiles (8 to 32 tokens a consumer, at most 32 accumulators a thread) scale each K-tile's sum instead of
    // the weights: its wgmma or mma.sync start from zero into `part`, and acc += part * scale(row) in f32 (ACC fused
    // multiply-adds a K-tile instead of a packed multiply per weight pair; the scale is not rounded). (64-token
    // tiles spilled with the second set of accumulators.)
    static constexpr bool SUM_SCALE = ACC <= 16 && REP * ACC <= 32;
    KILN_DEVICE static void add_scaled(float (&acc)[REP][ACC], const float (&part)[REP][ACC],
                                       const float (&sc)[REP][2]) {
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int e = 0; e < ACC; ++e) acc[r][e] = fmaf(part[r][e], sc[r][(e >> 1) & 1], acc[r][e]);
    }

    // ONE: the scales take one multiply a pair (WeightScales::take_one).
    template <bool ONE = false>
    KILN_DEVICE static void scale_pair(uint32_t (&f)[2][4], const typename PS::Scale (&sc)[2]) {
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int x = 0; x < 4; ++x) f[h][x] = ONE ? PS::mul_one(f[h][x], sc[x & 1]) : PS::mul(f[h][x], sc[x & 1]);
    }

    template <bool GS, bool ONE = false>
    KILN_DEVICE static void load_weights(uint32_t (&frag)[REP][KSTEPS][4], uint32_t w_base, int warp, int lane,
                                         const typename PS::Scale (&sc)[REP][2]) {
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int kk = 0; kk < KSTEPS; kk += 2) {
                uint32_t f[2][4];
                load_weight_pair(f, w_base, r, kk, warp, lane);
                if constexpr (GS) scale_pair<ONE>(f, sc[r]);
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int x = 0; x < 4; ++x) frag[r][kk + h][x] = f[h][x];
            }
    }

    KILN_DEVICE static void mma_rs(float (&acc)[REP][ACC], const uint32_t (&frag)[REP][KSTEPS][4], uint32_t x_base,
                                   int first) {
        const uint64_t dx = sm90::desc_k128(x_base);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            const uint64_t x = sm90::desc_add(dx, (kk * 32 / 128) * (C::MT0 * 128) + (kk * 32) % 128);
#pragma unroll
            for (int r = 0; r < REP; ++r) C::Mma::run(acc[r], frag[r][kk], x, (first && kk == 0) ? 0 : 1);
        }
    }

    // Block scales of one K-tile for this thread, from its stage: A's for its rows (wgmma rows g and g + 8 of each
    // 64-row block), B's for the NSB 128-column blocks its consumer's columns span (the first column of each).
    static constexpr int NSB = CPC > 128 ? CPC / 128 : 1;
    struct BlockScales {
        float a[REP][2];
        float b[NSB];
    };

    KILN_DEVICE static void read_block_scales(uint32_t ss, const ScaleAt &at, int cm, int slot, int warp, int lane,
                                              BlockScales &s) {
        const int g = lane >> 2;
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int i = 0; i < 2; ++i)
                s.a[r][i] = sm90::lds_f32(ss + 4 * (at.a + cm * RPC + r * 64 + warp * 16 + g + 8 * i));
#pragma unroll
        for (int j = 0; j < NSB; ++j) s.b[j] = sm90::lds_f32(ss + 4 * (at.b + (slot + j) * at.step));
    }

    // acc += part * scale_a(row) * scale_b(column), over the accumulator layout (element e: row 8 * ((e >> 1) & 1),
    // column 8 * (e >> 2) + 2q + (e & 1) of the thread's 64-row block). Per-column B scales (sb_block_n 1) are read
    // from the stage here (the stage is given back after).
    KILN_DEVICE static void promote(float (&acc)[REP][ACC], const float (&part)[REP][ACC], const BlockScales &s,
                                    uint32_t ss, bool per_column, int cn, int lane) {
        const int q = lane & 3;
        if (per_column) {
#pragma unroll
            for (int c = 0; c < ACC / 4; ++c)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const float sb = sm90::lds_f32(ss + 4 * (SA_FLOATS + cn * CPC + 8 * c + 2 * q + j));
#pragma unroll
                    for (int r = 0; r < REP; ++r)
#pragma unroll
                        for (int i = 0; i < 2; ++i) {
                            const int e = 4 * c + 2 * i + j;
                            acc[r][e] = fmaf(part[r][e], s.a[r][i] * sb, acc[r][e]);
                        }
                }
            return;
        }
        float f[REP][2][NSB];
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < NSB; ++j) f[r][i][j] = s.a[r][i] * s.b[j];
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int e = 0; e < ACC; ++e)
                acc[r][e] = fmaf(part[r][e], f[r][(e >> 1) & 1][(8 * (e >> 2)) / 128], acc[r][e]);
    }

    // The epilogue, in chunks of 32 columns of the consumer's sub-tile (128 bytes of f32 per row):
    //   A: the accumulators of the chunk go to the consumer's f32 staging (rows of 128 bytes, 16-byte chunks
    //      XOR-swizzled by row & 7: conflict-free for the wgmma register layout and for row reads);
    //   B: a rolled loop over the chunk, 4 threads per row and 8 columns each, applies the epilogue and writes D with
    //      16-byte coalesced stores (split-K: the raw partial sums to the workspace).
    // Only B carries the epilogue's code, once: the unrolled part A is a store per accumulator pair.
    static constexpr int CHUNK = 32;
    // Rows a thread flushes per step: two where the accumulators leave the registers for it (a third of the
    // 168 ptxas allocates under the launch bounds) and the rows are whole steps of 64 (the loads of a step come
    // before its rows are checked, so a partial last step would read past the staging: swap-AB's 96-token tiles),
    // else one.
    static constexpr int FLUSH_ROWS = REP * ACC <= 64 && RPC >= 64 && RPC % 64 == 0 ? 2 : 1;
    static constexpr int CHUNKS = CPC / CHUNK;

    KILN_DEVICE static uint32_t staging_addr(uint32_t base, int row, int col) {
        return base + row * 128 + ((((col * 4) >> 4) ^ (row & 7)) << 4) + ((col * 4) & 15);
    }

    KILN_DEVICE static void stage_chunk(float (&acc)[REP][ACC], uint32_t base, int ch, int warp, int lane) {
        const int g = lane >> 2, q = lane & 3;
        if constexpr (C::SWAP) {
            // wgmma rows are D columns: chunk ch is rows 32*ch.. of the wgmma block r = ch / 2, held by warps
            // 2*(ch%2) and 2*(ch%2)+1.
            constexpr int PER_R = 64 / CHUNK;
            if (warp / 2 != ch % PER_R) return;
            const int r = ch / PER_R;
            // Element e goes to row m = 8 (e >> 2) + 2q + (e & 1), column n = 16 (warp % 2) + g + 8 ((e >> 1) & 1).
            // A row's swizzle is m & 7, the same for every e >> 2: four addresses a thread, + 1024 (e >> 2). (Written
            // per element, the 64 addresses were hoisted out of the tile loop and held in registers: 128-accumulator
            // tiles spilled.)
            uint32_t at[2][2];
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
                for (int j = 0; j < 2; ++j) at[h][j] = staging_addr(base, 2 * q + j, (warp % 2) * 16 + g + 8 * h);
#pragma unroll
            for (int e = 0; e < ACC; ++e)
                asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(at[(e >> 1) & 1][e & 1] + 1024 * (e >> 2)),
                             "f"(acc[r][e])
                             : "memory");
        } else {
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int c = 0; c < CHUNK / 8; ++c)
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int e = (ch * (CHUNK / 8) + c) * 4 + 2 * i;
                        const int row = r * 64 + warp * 16 + g + 8 * i, col = c * 8 + 2 * q;
                        asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(staging_addr(base, row, col)),
                                     "f"(acc[r][e]), "f"(acc[r][e + 1])
                                     : "memory");
                    }
        }
    }

    // A thread's 8 column factors (column scale, bias) as read from memory, before any arithmetic: loaded when a
    // decode tile starts, they wait in these registers through the K loop, and an instruction that used them there
    // (the scale's multiply, the bias's widening) would stall the consumer for the loads' whole latency under the
    // weight stream (ncu on 1 x 57344 x 8192: ~8% of the kernel's stall samples). vec: the 8 columns were whole
    // 16-byte vectors of both (two or three loads; s[j] = scale j, b packs two 16-bit biases a word, or one f32);
    // else one scalar load each, at a column clamped into [0, n) (s[j], b[j] = bias j in its low bits).
    struct RawColumns {
        uint32_t s[8], b[8];
        bool vec;
    };

    KILN_DEVICE static void load_columns(const kiln_gemm_params &p, const EpilogueScales &sc, const void *bias,
                                         int col, RawColumns &r) {
        const int bias_bytes = p.bias_type == DT_F32 ? 4 : 2;
#pragma unroll
        for (int j = 0; j < 8; ++j) r.s[j] = r.b[j] = 0u;  // (what a missing vector leaves: never read)
        r.vec = col + 8 <= p.n && (!sc.col || ((uintptr_t)(sc.col + col) & 15) == 0) &&
                (!bias || (((uintptr_t)bias + (uintptr_t)col * bias_bytes) & 15) == 0);
        if (r.vec) {
            if (sc.col) {
                const uint4 x = *(const uint4 *)(sc.col + col), y = *(const uint4 *)(sc.col + col + 4);
                r.s[0] = x.x, r.s[1] = x.y, r.s[2] = x.z, r.s[3] = x.w;
                r.s[4] = y.x, r.s[5] = y.y, r.s[6] = y.z, r.s[7] = y.w;
            }
            if (bias) {
                const uint4 *b4 = (const uint4 *)((const uint8_t *)bias + (size_t)col * bias_bytes);
                const uint4 x = b4[0];
                r.b[0] = x.x, r.b[1] = x.y, r.b[2] = x.z, r.b[3] = x.w;
                if (bias_bytes == 4) {
                    const uint4 y = b4[1];
                    r.b[4] = y.x, r.b[5] = y.y, r.b[6] = y.z, r.b[7] = y.w;
                }
            }
            return;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int c = max(min(col + j, p.n - 1), 0);
            if (sc.col) r.s[j] = __float_as_uint(sc.col[c]);
            if (bias)
                r.b[j] = bias_bytes == 4 ? ((const uint32_t *)bias)[c] : (uint32_t)((const uint16_t *)bias)[c];
        }
    }

    // The factors of RawColumns: scale (tensor x column scale) and bias (0 past N's edge).
    KILN_DEVICE static void cook_columns(const kiln_gemm_params &p, const EpilogueScales &sc, const void *bias,
                                         int col, const RawColumns &r, float (&cs)[8], float (&cb)[8]) {
        const bool f32 = p.bias_type == DT_F32, bf16 = p.bias_type == DT_BF16;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const bool in = col + j < p.n;
            cs[j] = sc.col && in ? sc.tensor * __uint_as_float(r.s[j]) : sc.tensor;
            uint32_t h = f32 ? r.b[j] : r.vec ? r.b[j / 2] >> (16 * (j % 2)) : r.b[j];
            float v = f32 ? __uint_as_float(h)
                          : bf16 ? __uint_as_float(h << 16) : __half2float(__ushort_as_half((unsigned short)h));
            cb[j] = bias && in ? v : 0.f;
        }
    }

    // The column factors of a thread's 8 columns from col, read now.
    KILN_DEVICE static void column_factors(const kiln_gemm_params &p, const EpilogueScales &sc, const void *bias,
                                           int col, float (&cs)[8], float (&cb)[8]) {
        RawColumns r;
        load_columns(p, sc, bias, col, r);
        cook_columns(p, sc, bias, col, r, cs, cb);
    }

    // Decode tiles (prepacked weights, no split-K, at most 64 columns and 32 accumulators a consumer): the factors of
    // all their chunks are read when the tile starts and wait in registers, as read, through the K loop. Read after
    // it, each 32-column chunk cost a round trip to memory: ~2 us of a ~25 us kernel (1 x 8192 x 8192, timed inside
    // the kernel).
    static constexpr bool EARLY_COLUMNS = C::SWAP && !WS_SPLIT && CPC <= 64 && REP * ACC <= 32;
    struct Columns {
        RawColumns raw[EARLY_COLUMNS ? CHUNKS : 1];
    };

    KILN_DEVICE static void early_columns(const kiln_gemm_params &p, const Tile &T, int cn, int tid, Columns &cols) {
        if constexpr (EARLY_COLUMNS) {
            const EpilogueScales sc = epilogue_scales(p);
#pragma unroll
            for (int ch = 0; ch < CHUNKS; ++ch)
                load_columns(p, sc, p.bias, T.n0 + cn * CPC + ch * CHUNK + (tid & 3) * 8, cols.raw[ch]);
        }
    }

    // Thread t owns columns col..col+7 of the chunk (t % 4) in rows t/4, t/4 + 32, ...: the column factors (scale,
    // bias) are read once per chunk (decode tiles: taken from `early`), the row scale once per row; the per-element
    // work is a multiply-add, the activation when there is one, and the conversion.
    KILN_DEVICE static void flush_chunk(const kiln_gemm_params &p, const EpilogueScales &sc, const Tile &T,
                                        uint32_t base, int row0, int col0, int tid, const Columns &early, int ch) {
        const int cq = tid & 3;
        const int col = col0 + cq * 8;
        if (col >= p.n) return;
        const bool full = col + 8 <= p.n;
        float cs[8], cb[8];
        if constexpr (EARLY_COLUMNS) {
            cook_columns(p, sc, p.bias, col, early.raw[ch], cs, cb);
        } else {
            column_factors(p, sc, operands(p, T).bias, col, cs, cb);
        }
        TD *d = (TD *)p.d + (int64_t)T.batch * p.stride_d + col;
        const bool vec = full && (8 * ED) % 16 == 0 && ((uintptr_t)d & 15) == 0 && ((int64_t)p.ldd * ED) % 16 == 0;
        const bool extra = p.has_c || p.activation != ACT_NONE;
        // FLUSH_ROWS rows per step, all read from shared memory before any is written out (one warp per scheduler
        // here: the loads of the second row hide behind the first's arithmetic).
        for (int lr0 = tid >> 2; lr0 < RPC; lr0 += 32 * FLUSH_ROWS) {
            float v[FLUSH_ROWS][8];
#pragma unroll
            for (int h = 0; h < FLUSH_ROWS; ++h) {
                const int lr = lr0 + 32 * h;
                asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                             : "=f"(v[h][0]), "=f"(v[h][1]), "=f"(v[h][2]), "=f"(v[h][3])
                             : "r"(staging_addr(base, lr, cq * 8)));
                asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                             : "=f"(v[h][4]), "=f"(v[h][5]), "=f"(v[h][6]), "=f"(v[h][7])
                             : "r"(staging_addr(base, lr, cq * 8 + 4)));
            }
#pragma unroll
            for (int h = 0; h < FLUSH_ROWS; ++h) {
                const int lr = lr0 + 32 * h, row = row0 + lr;
                if (lr >= RPC || row >= T.m_end) break;
                flush_row(p, sc, T, d, v[h], cs, cb, row, col, full, vec, extra);
            }
        }
    }

    KILN_DEVICE static void flush_row(const kiln_gemm_params &p, const EpilogueScales &sc, const Tile &T, TD *d,
                                      float (&v)[8], const float (&cs)[8], const float (&cb)[8], int row, int col,
                                      bool full, bool vec, bool extra) {
        if constexpr (WS_SPLIT) {
            float *out = splitk_slice(p, T.batch, T.split, C::GSU) + (int64_t)row * p.n + col;
            if (full && p.n % 4 == 0) {  // 16-byte aligned: the slices and rows are whole float4s, col is 8k
                reinterpret_cast<float4 *>(out)[0] = make_float4(v[0], v[1], v[2], v[3]);
                reinterpret_cast<float4 *>(out)[1] = make_float4(v[4], v[5], v[6], v[7]);
                return;
            }
#pragma unroll
            for (int j = 0; j < 8; ++j)
                if (full || col + j < p.n) out[j] = v[j];
        } else {
            const float rs = sc.row ? sc.row[row] : 1.f;
#pragma unroll
            for (int j = 0; j < 8; ++j) v[j] = v[j] * rs * cs[j] + cb[j];
            if (extra) {
                const TD *c = (const TD *)p.c + (int64_t)T.batch * p.stride_c + (int64_t)row * p.ldc + col;
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    if (p.has_c && (full || col + j < p.n)) v[j] += p.beta * load_f32(c, j);
                    v[j] = activate(v[j], p.activation);
                }
            }
            TD out[8];
#pragma unroll
            for (int j = 0; j < 8; ++j) store_f32(out, j, v[j]);
            TD *dst = d + (int64_t)row * p.ldd;
            if (vec) {
#pragma unroll
                for (int j = 0; j < 8 * ED / 16; ++j)
                    reinterpret_cast<uint4 *>(dst)[j] = reinterpret_cast<const uint4 *>(out)[j];
            } else {
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    if (full || col + j < p.n) dst[j] = out[j];
            }
        }
    }

    // The TMA-store epilogue (TMA_D kernels; d_tma: the runtime maps D where there is no activation and no C). A box
    // is one 64-row wgmma block of the consumer's sub-tile by BOXB = 128 bytes of D (the map's swizzle); the
    // consumer's staging region holds its whole sub-tile. Per box: the scales on the accumulators, the output type
    // into the box (conflict-free under the swizzle), fence.proxy.async, one barrier of the consumer, and thread 0
    // issues the bulk store. Before a tile's first box is rewritten, thread 0 waits until the previous tile's stores
    // have read their boxes (by then a whole mainloop later) and the consumer's barrier passes that on. The consumer
    // goes back to its mainloop while the copy engine writes D.
    // VEC (row scales scale_a[m], column scales scale_b[n], a bias row): each thread reads the row scales of its
    // 2 x REP rows once per tile, and per box the column scales and bias of its 2 x DCOLS / 8 columns, so that an
    // element is one multiply-add. The activations stay on the staged path: unrolled over 128 accumulators with the
    // column factors, an earlier version made the kernel 260 KB of SASS, stalled on instruction fetch (2.7x slower
    // at 4096x32768x512).
    template <int BOXB, bool VEC>
    KILN_DEVICE static void epilogue_tma(const kiln_tma_params &P, const Tile &T, float (&acc)[REP][ACC],
                                         const EpilogueScales &sc, const void *bias, uint8_t *region, int cw, int cm,
                                         int cn, int tid, int warp, int lane) {
        constexpr int DCOLS = BOXB / ED, BOX = 64 * BOXB;
        static_assert(CPC % DCOLS == 0 && (CPC / DCOLS) * REP * BOX == EPI_REGION, "the boxes tile the sub-tile");
        const kiln_gemm_params &p = P.p;
        const int g = lane >> 2, q = lane & 3;
        const int row0 = T.m0 + cm * RPC, col0 = T.n0 + cn * CPC;
        // (the same value both ways; each is the code its kernels were measured with)
        const float scale = TMA_VEC ? sc.tensor : epilogue_scales(p).tensor;
        float rf[REP][2];  // VEC: tensor x row scale of the thread's rows
        if constexpr (VEC) {
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const int row = row0 + r * 64 + warp * 16 + g + 8 * i;
                    rf[r][i] = sc.row && row < T.m_end ? scale * sc.row[row] : scale;
                }
        }
        const uint32_t base = smem_addr(region);
        if (tid == 0) sm90::bulk_wait_read<0>();  // the previous tile's stores have read the boxes
        sm90::named_barrier(1 + cw, 128);
#pragma unroll
        for (int ch = 0; ch < CPC / DCOLS; ++ch) {
            const int colc = col0 + ch * DCOLS;
            float cf[DCOLS / 8][2], cb[DCOLS / 8][2];  // VEC: the column scales and bias of the thread's columns
            if constexpr (VEC) {
#pragma unroll
                for (int c = 0; c < DCOLS / 8; ++c)
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const int col = colc + c * 8 + 2 * q + j;
                        const bool in = col < p.n;
                        cf[c][j] = sc.col && in ? sc.col[col] : 1.f;
                        cb[c][j] = bias && in ? load_any(bias, p.bias_type, col) : 0.f;
                    }
            }
#pragma unroll
            for (int r = 0; r < REP; ++r) {
                const uint32_t buf = base + (ch * REP + r) * BOX;
#pragma unroll
                for (int c = 0; c < DCOLS / 8; ++c)
#pragma unroll
                    for (int i = 0; i < 2; ++i) {
                        const int e = ((ch * DCOLS) / 8 + c) * 4 + 2 * i;
                        float v[2] = {acc[r][e] * scale, acc[r][e + 1] * scale};
                        if constexpr (VEC) {
                            v[0] = fmaf(acc[r][e], rf[r][i] * cf[c][0], cb[c][0]);
                            v[1] = fmaf(acc[r][e + 1], rf[r][i] * cf[c][1], cb[c][1]);
                        }
                        Pair<TD> out;
                        store_f32(&out.x, 0, v[0]);
                        store_f32(&out.y, 0, v[1]);
                        // 16-byte chunk k of box row lr sits at chunk k ^ (the row's swizzle phase)
                        const int lr = warp * 16 + g + 8 * i, b = (c * 8 + 2 * q) * ED;
                        const int phase = BOXB == 128 ? (lr & 7) : ((lr >> 1) & 3);
                        const uint32_t addr = buf + lr * BOXB + (((b >> 4) ^ phase) << 4) + (b & 15);
                        if constexpr (ED == 2) {
                            sm90::sts_u32(addr, *reinterpret_cast<const uint32_t *>(&out));
                        } else {
                            const uint2 w = *reinterpret_cast<const uint2 *>(&out);
                            sm90::sts_v2_u32(addr, w.x, w.y);
                        }
                    }
                sm90::fence_proxy_async_smem();
                sm90::named_barrier(1 + cw, 128);
                if (tid == 0 && row0 + r * 64 < p.m && colc < p.n)
                    sm90::tma_store_3d(&P.d, buf, colc, row0 + r * 64, T.batch);
            }
        }
        if (tid == 0) sm90::bulk_commit();
    }

    KILN_DEVICE static void epilogue(const kiln_tma_params &P, const Tile &T, float (&acc)[REP][ACC], uint8_t *region,
                                     int cw, int cm, int cn, int tid, int warp, int lane, const Columns &early) {
        const kiln_gemm_params &p = P.p;
        const int row0 = T.m0 + cm * RPC, col0 = T.n0 + cn * CPC;
        EpilogueScales sc = epilogue_scales(p);
        if constexpr (C::GROUPED) {  // the group's row and column scales
            const GroupOperands o = operands(p, T);
            if (sc.row) sc.row = o.scale_a;
            if (sc.col) sc.col = o.scale_b;
        }
        const uint32_t base = smem_addr(region);
        if constexpr (SWAP_TMA) {  // the runtime maps D where there is no C and no activation
            if (P.d_tma == 128 && !sc.row) {
                epilogue_swap_tma(P, T, acc, sc, region, cw, cm, cn, tid, warp, lane);
                return;
            }
        }
        if constexpr (TMA_D) {
            // Grouped: the copy engine writes whole 64-row boxes, so only tiles whose rows all belong to their group
            // (or whose group ends at D's last row, where the map clips) go through it; a group's last partial tile
            // row takes the staged path, which stores its rows one by one.
            const bool whole = !C::GROUPED || T.m_end == p.m || T.m0 + C::MT0 <= T.m_end;
            // (a 64-byte-row variant was no faster, and took registers)
            if (P.d_tma == 128 && whole) {
                // The row/column-scale and bias variant only where a problem can have vector scales: in the
                // block-scaled kernels its code alone (never run there) made the grouped kernel 15% slower; the
                // runtime maps no D for a block-scaled problem with a bias (tma.c).
                if constexpr (TMA_VEC) {
                    const void *bias = operands(p, T).bias;
                    if (sc.row || sc.col || bias) {
                        epilogue_tma<128, true>(P, T, acc, sc, bias, region, cw, cm, cn, tid, warp, lane);
                        return;
                    }
                }
                epilogue_tma<128, false>(P, T, acc, sc, nullptr, region, cw, cm, cn, tid, warp, lane);
                return;
            }
            if (C::GROUPED && P.d_tma) {  // the staging region may still be read by an earlier tile's stores
                if (tid == 0) sm90::bulk_wait_read<0>();
                sm90::named_barrier(1 + cw, 128);
            }
        }
#pragma unroll
        for (int ch = 0; ch < CHUNKS; ++ch) {
            stage_chunk(acc, base, ch, warp, lane);
            sm90::named_barrier(1 + cw, 128);
            flush_chunk(p, sc, T, base, row0, col0 + ch * CHUNK, tid, early, ch);
            sm90::named_barrier(1 + cw, 128);
        }
    }

    // SWAP_TMA: the epilogue of a prepacked-weight tile through the copy engine. The staged path below writes D from
    // the consumers, 32 columns at a time between barriers, and all CTAs of a persistent wave do so at once: at
    // 8192^3 the tensor cores idled ~5% of the time (timed without the epilogue). Here the consumer puts its whole
    // sub-tile, scaled and converted, into 64-token x 64-weight boxes of its staging region and goes back to its
    // mainloop while thread 0's bulk stores write D. wgmma's M side is the weights (D's columns), so each thread's
    // pairs of tokens are a column pair of D: stmatrix .trans writes the 8 x 8 blocks of (8 weights x 8 tokens)
    // transposed, 16 bytes of one D row a lane, the 128-byte swizzle making each matrix's 8 rows conflict-free. Each
    // thread's 2 x REP weights take their column scale and bias once a tile. Row scales (none in the mixed problems
    // the runtime builds) take the staged path.
    KILN_DEVICE static void epilogue_swap_tma(const kiln_tma_params &P, const Tile &T, float (&acc)[REP][ACC],
                                              const EpilogueScales &sc, uint8_t *region, int cw, int cm, int cn,
                                              int tid, int warp, int lane) {
        constexpr int BOX = 64 * 128, TOKEN_BLOCKS = RPC / 64;
        const kiln_gemm_params &p = P.p;
        const int g = lane >> 2;
        const int row0 = T.m0 + cm * RPC, col0 = T.n0 + cn * CPC;  // D's rows are tokens, its columns weights
        float cf[REP][2], cb[REP][2];
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const int col = col0 + r * 64 + warp * 16 + g + 8 * i;
                const bool in = col < p.n;
                cf[r][i] = sc.col && in ? sc.tensor * sc.col[col] : sc.tensor;
                cb[r][i] = p.bias && in ? load_any(p.bias, p.bias_type, col) : 0.f;
            }
        const uint32_t base = smem_addr(region);
        if (tid == 0) sm90::bulk_wait_read<0>();  // the previous tile's stores have read the boxes
        sm90::named_barrier(1 + cw, 128);
        const int mat = lane >> 3, rho = lane & 7;  // the matrix and the row of it whose address this lane gives
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int jp = 0; jp < RPC / 16; ++jp) {
                // matrix m: weights warp * 16 + 8 (m & 1) .. of block r by tokens 8 (2 jp + (m >> 1)) ..
                uint32_t w[4];
#pragma unroll
                for (int m = 0; m < 4; ++m) {
                    const int i = m & 1, e = 4 * (2 * jp + (m >> 1)) + 2 * i;
                    Pair<TD> o;
                    store_f32(&o.x, 0, fmaf(acc[r][e], cf[r][i], cb[r][i]));
                    store_f32(&o.y, 0, fmaf(acc[r][e + 1], cf[r][i], cb[r][i]));
                    w[m] = *reinterpret_cast<const uint32_t *>(&o);
                }
                const int tok = 8 * (2 * jp + (mat >> 1)) + rho, lr = tok & 63, chunk = warp * 2 + (mat & 1);
                sm90::stmatrix_x4_trans(base + ((tok >> 6) * REP + r) * BOX + lr * 128 + ((chunk ^ (lr & 7)) << 4),
                                        w[0], w[1], w[2], w[3]);
            }
        sm90::fence_proxy_async_smem();
        sm90::named_barrier(1 + cw, 128);
        if (tid == 0) {
#pragma unroll
            for (int tb = 0; tb < TOKEN_BLOCKS; ++tb)
#pragma unroll
                for (int r = 0; r < REP; ++r)
                    if (row0 + tb * 64 < p.m && col0 + r * 64 < p.n)
                        sm90::tma_store_3d(&P.d, base + (tb * REP + r) * BOX, col0 + r * 64, row0 + tb * 64, T.batch);
            sm90::bulk_commit();
        }
    }

    // The mainloop of a block-scaled tile. Each K-tile's wgmma run into a sum started from zero, its stage's scales
    // are read while they run, and the sum is promoted: acc += sum * scale_a(row) * scale_b(column). With 128-column
    // blocks of B, two K-tiles per wgmma batch (as mainloop_pipelined): K-tiles i and i + 1 run into p0 and p1, p0 is
    // promoted while p1's wgmma still run and p1 after them, while the other consumer's wgmma keep the tensor cores
    // busy; an odd last K-tile runs alone. K-tile i + 1's scales are read after p0's promotion (read before it, the
    // 128x128 tile with TMA stores spilled). Per-column B scales (sb_block_n 1, the 1x128 recipe) are read from the
    // stage by the promotion itself, one K-tile per batch. A stage goes back once its sum is done and its scales read
    // (per-column: after its promotion).
    template <bool PER_COLUMN>
    KILN_DEVICE static void block_retire(float (&acc)[REP][ACC], float (&part)[REP][ACC], const BlockScales &sc,
                                         uint32_t ss, uint64_t *empty, int s, int cn, int lane) {
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
        if (!PER_COLUMN) release_read(&empty[s], lane);  // every lane's scale reads are done: the stage goes back
        promote(acc, part, sc, ss, PER_COLUMN, cn, lane);
        if (PER_COLUMN) release_read(&empty[s], lane);
    }

    template <bool PER_COLUMN>
    KILN_DEVICE static void block_tiles(const kiln_tma_params &P, const Tile &T, uint8_t *smem, uint64_t *full,
                                        uint64_t *empty, float (&acc)[REP][ACC], int &stage, uint32_t &phase, int cm,
                                        int cn, int slot, int warp, int lane) {
        float p0[REP][ACC], p1[REP][ACC];
        BlockScales c0, c1;
        int i = 0;
        if constexpr (!PER_COLUMN)
            for (; i + 1 < T.iters; i += 2) {
                int s0, s1;
                issue_pair(p0, p1, smem, full, stage, phase, cm, cn, s0, s1);
                const uint32_t ss0 = smem_addr(stage_scales(smem, s0)), ss1 = smem_addr(stage_scales(smem, s1));
                read_block_scales(ss0, scale_at(P, T, Sched::k_tile(T, i)), cm, slot, warp, lane, c0);
#pragma unroll
                for (int r = 0; r < REP; ++r) {
                    sm90::fence_regs(p0[r]);
                    sm90::fence_regs(p1[r]);
                }
                sm90::wgmma_wait<1>();  // K-tile i done, i + 1 may still run
                block_retire<false>(acc, p0, c0, ss0, empty, s0, cn, lane);
                read_block_scales(ss1, scale_at(P, T, Sched::k_tile(T, i + 1)), cm, slot, warp, lane, c1);
                sm90::wgmma_wait<0>();
                block_retire<false>(acc, p1, c1, ss1, empty, s1, cn, lane);
            }
        for (; i < T.iters; ++i) {  // (at most one K-tile left where !PER_COLUMN)
            sm90::mbar_wait(&full[stage], phase);
#pragma unroll
            for (int r = 0; r < REP; ++r) sm90::fence_regs(p0[r]);
            sm90::wgmma_fence();
            mma_ss(p0, stage_a(smem, stage, cm), stage_b(smem, stage, cn), 1);
            sm90::wgmma_commit();
            const uint32_t ss = smem_addr(stage_scales(smem, stage));
            read_block_scales(ss, scale_at(P, T, Sched::k_tile(T, i)), cm, slot, warp, lane, c0);
#pragma unroll
            for (int r = 0; r < REP; ++r) sm90::fence_regs(p0[r]);
            sm90::wgmma_wait<0>();
            block_retire<PER_COLUMN>(acc, p0, c0, ss, empty, stage, cn, lane);
            advance(stage, phase);
        }
    }

    KILN_DEVICE static void mainloop_block(const kiln_tma_params &P, const Tile &T, uint8_t *smem, uint64_t *full,
                                           uint64_t *empty, float (&acc)[REP][ACC], int &stage, uint32_t &phase,
                                           int cm, int cn, int warp, int lane) {
        const int tile_col = T.tn * C::MT1, slot = ((tile_col + cn * CPC) >> 7) - (tile_col >> 7);  // B's first block
        zero(acc);
        if (P.p.sb_block_n == 1)
            block_tiles<true>(P, T, smem, full, empty, acc, stage, phase, cm, cn, slot, warp, lane);
        else
            block_tiles<false>(P, T, smem, full, empty, acc, stage, phase, cm, cn, slot, warp, lane);
    }

    KILN_DEVICE static void zero(float (&acc)[REP][ACC]) {
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int e = 0; e < ACC; ++e) acc[r][e] = 0.f;
    }

    // acc[r][OFF + e] += part[r][e] in FP32 (a whole K-tile sum, or a column half of one at OFF 0 / ACC / 2).
    template <int N, int OFF = 0>
    KILN_DEVICE static void add_part(float (&acc)[REP][ACC], float (&part)[REP][N]) {
        static_assert(OFF + N <= ACC, "the sum lies within the accumulators");
#pragma unroll
        for (int r = 0; r < REP; ++r) {
            sm90::fence_regs(part[r]);
#pragma unroll
            for (int e = 0; e < N; ++e) acc[r][OFF + e] += part[r][e];
        }
    }

    // Two K-tiles per wgmma batch (mainloop_pipelined, block_tiles): waits for the next two stages (s0, s1), then
    // issues K-tile s0's wgmma into p0 and s1's into p1, each sum started from zero, as two commit groups after one
    // fence.
    KILN_DEVICE static void issue_pair(float (&p0)[REP][ACC], float (&p1)[REP][ACC], uint8_t *smem, uint64_t *full,
                                       int &stage, uint32_t &phase, int cm, int cn, int &s0, int &s1) {
        s0 = stage;
        sm90::mbar_wait(&full[s0], phase);
        advance(stage, phase);
        s1 = stage;
        sm90::mbar_wait(&full[s1], phase);
        advance(stage, phase);
#pragma unroll
        for (int r = 0; r < REP; ++r) {
            sm90::fence_regs(p0[r]);
            sm90::fence_regs(p1[r]);
        }
        sm90::wgmma_fence();
        mma_ss(p0, stage_a(smem, s0, cm), stage_b(smem, s0, cn), 1);
        sm90::wgmma_commit();
        mma_ss(p1, stage_a(smem, s1, cm), stage_b(smem, s1, cn), 1);
        sm90::wgmma_commit();
    }

    // PR 1, two K-tiles per wgmma batch: K-tiles i and i + 1 run into p0 and p1 (two commit groups after one fence);
    // p0 is added to acc while p1's wgmma still run (wait_group 1), then p1 (wait_group 0), so half the adds hide
    // behind the consumer's own wgmma and the rest behind the other consumer's. The adds read only accumulators of
    // the batch just issued: reading those of an earlier batch while a later one runs made ptxas serialize the wgmma
    // (C7514), and a wgmma issued under a branch made it inject fences (C7519). 3 x 64 accumulators a thread compile
    // without spills in both the two-consumer (384 threads) and the one-consumer kernels; the ping-pong kernel (PK 2)
    // spills with them and keeps the one-sum loop.
    // The K-tiles run in chains of PIPE_CHAIN (pipe_chain): 2, the batches of two above, unless the probe macro
    // KILN_PROBE_PIPE_CHAIN (an even count >= 4; tuning/probes/pipe_chain_run.sh) makes longer chains, as
    // mainloop_split_pair runs its column halves: K-tiles alternate between p0 and p1, and each add waits (wait_group
    // 1) only for the group before the one just issued, so a consumer drains its own wgmma queue once a chain. Longer
    // chains measured mixed (one-consumer 64x128 up to 1.12x faster, 128x128 pgr 5 6 % slower at 8192^3;
    // bench/NOTES.md), so the macro stays off.
#ifdef KILN_PROBE_PIPE_CHAIN
    static constexpr int PIPE_CHAIN = KILN_PROBE_PIPE_CHAIN;
    static_assert(PIPE_CHAIN >= 4 && PIPE_CHAIN % 2 == 0, "chains of an even K-tile count, four or more");
#else
    static constexpr int PIPE_CHAIN = 2;  // the shipped loop: one pair a chain
#endif

    // A link of pipe_chain: the next K-tile into `next` (its stage into s_next), then the group before it, whose sum
    // is `done`, retired (wait_group 1), its stage s_done released and the sum added while the new group runs.
    KILN_DEVICE static void chain_link(float (&next)[REP][ACC], int &s_next, float (&done)[REP][ACC], int s_done,
                                       float (&acc)[REP][ACC], uint8_t *smem, uint64_t *full, uint64_t *empty,
                                       int &stage, uint32_t &phase, int cm, int cn, int lane) {
        s_next = stage;
        sm90::mbar_wait(&full[s_next], phase);
        advance(stage, phase);
        issue_group<-1>(next, smem, s_next, cm, cn);
        sm90::wgmma_wait<1>();
        if (lane == 0) release(&empty[s_done]);
        add_part(acc, done);
    }

    // One chain of N K-tiles (N even): groups g0 (p0), g1 (p1), g2 (p0), ... retire in order; after each issue,
    // wait_group 1 retires the group before it, whose sum is added (and its stage released) while the new one runs.
    // N = 2 is one pair, drained.
    template <int N>
    KILN_DEVICE static void pipe_chain(float (&p0)[REP][ACC], float (&p1)[REP][ACC], float (&acc)[REP][ACC],
                                       uint8_t *smem, uint64_t *full, uint64_t *empty, int &stage, uint32_t &phase,
                                       int cm, int cn, int lane) {
        int s0, s1;
        issue_pair(p0, p1, smem, full, stage, phase, cm, cn, s0, s1);
#pragma unroll
        for (int r = 0; r < REP; ++r) {
            sm90::fence_regs(p0[r]);
            sm90::fence_regs(p1[r]);
        }
        sm90::wgmma_wait<1>();  // g0 retired, g1 may still run
        if (lane == 0) release(&empty[s0]);
        add_part(acc, p0);
#pragma unroll
        for (int j = 1; j < N / 2; ++j) {
            chain_link(p0, s0, p1, s1, acc, smem, full, empty, stage, phase, cm, cn, lane);
            chain_link(p1, s1, p0, s0, acc, smem, full, empty, stage, phase, cm, cn, lane);
        }
        sm90::wgmma_wait<0>();
        if (lane == 0) release(&empty[s1]);
        add_part(acc, p1);
    }

    KILN_DEVICE static void mainloop_pipelined(const Tile &T, uint8_t *smem, uint64_t *full, uint64_t *empty,
                                               float (&acc)[REP][ACC], int &stage, uint32_t &phase, int cm, int cn,
                                               int lane) {
        float p0[REP][ACC], p1[REP][ACC];
        zero(acc);
        int i = 0;
        for (; i + (PIPE_CHAIN - 1) < T.iters; i += PIPE_CHAIN)
            pipe_chain<PIPE_CHAIN>(p0, p1, acc, smem, full, empty, stage, phase, cm, cn, lane);
        if constexpr (PIPE_CHAIN > 2) {
            for (; i + 1 < T.iters; i += 2) pipe_chain<2>(p0, p1, acc, smem, full, empty, stage, phase, cm, cn, lane);
        }
        if (i < T.iters) {  // an odd K-tile count: the last one alone
            sm90::mbar_wait(&full[stage], phase);
            issue_group<-1>(p0, smem, stage, cm, cn);
            sm90::wgmma_wait<0>();
            if (lane == 0) release(&empty[stage]);
            add_part(acc, p0);
            advance(stage, phase);
        }
    }

    // PR 1 with more than 64 accumulators a thread (SPLIT): the sums are the two column halves of one K-tile
    // (half-width wgmma, MmaH). Up to 96 accumulators (SPLIT_PAIR) both halves have a sum of their own, p0 and p1
    // (acc and both sums take 2 x ACC registers), and the halves run in a pipeline one half deep: while half 1 of
    // K-tile i runs, half 0 is added and half 0 of K-tile i + 1 issued; while that runs, half 1 is added and half 1
    // of i + 1 issued (mainloop_split_pair). Above that (64x256 or 128x128 consumers, where 2 x 128 would not fit)
    // one sum takes the halves in turn, each its own batch (wgmma, wait, add): 1.5 x ACC, the adds hidden behind the
    // other consumer's wgmma only. (Quarters two at a time were measured too: they read each A tile four times from
    // shared memory and ran 2-31 % slower; bench/NOTES.md.)
    static constexpr bool SPLIT_PAIR = REP * ACC <= 96;
    KILN_DEVICE static void mainloop_split(const Tile &T, uint8_t *smem, uint64_t *full, uint64_t *empty,
                                           float (&acc)[REP][ACC], int &stage, uint32_t &phase, int cm, int cn,
                                           int lane) {
        constexpr int HALF = ACC / 2;
        float p0[REP][HALF];
        zero(acc);
        if constexpr (SPLIT_PAIR) {
            mainloop_split_pair(T, smem, full, empty, acc, p0, stage, phase, cm, cn, lane);
        } else {
            for (int i = 0; i < T.iters; ++i) {
                sm90::mbar_wait(&full[stage], phase);
                const uint32_t sa = stage_a(smem, stage, cm), sb = stage_b(smem, stage, cn);
                half_batch<0>(p0, sa, sb);
                add_part(acc, p0);
                half_batch<1>(p0, sa, sb);
                if (lane == 0) release(&empty[stage]);
                add_part<HALF, HALF>(acc, p0);
                advance(stage, phase);
            }
        }
    }

    // One commit group of the K-tile in `stage` into `part`, with the fences around it: H = 0 or 1 its column half H
    // (mma_ss_half; mainloop_split_pair), -1 the whole K-tile into a fresh sum (mma_ss; pipe_chain).
    template <int H>
    KILN_DEVICE static void issue_group(float (&part)[REP][H < 0 ? ACC : ACC / 2], uint8_t *smem, int stage, int cm,
                                        int cn) {
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
        sm90::wgmma_fence();
        if constexpr (H < 0)
            mma_ss(part, stage_a(smem, stage, cm), stage_b(smem, stage, cn), 1);
        else
            mma_ss_half<H>(part, stage_a(smem, stage, cm), stage_b(smem, stage, cn));
        sm90::wgmma_commit();
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
    }

    // SPLIT_PAIR: PAIR_CHAIN K-tiles in one chain of commit groups h0(0), h1(0), h0(1), h1(1), ... (they retire in
    // order), each add waiting (wait_group 1) only for the group before the one just issued: while h1(j) runs, h0(j)
    // is added and h0(j + 1) issued; while h0(j + 1) runs, h1(j) is added and h1(j + 1) issued. So the consumer's
    // own wgmma queue empties once a chain, not once a K-tile. A chain ends with wait_group 0 inside the loop body:
    // with groups in flight across the back edge ptxas cannot count what wait_group 1 retires and serializes the
    // wgmma (C7514). K-tiles left over (iters % PAIR_CHAIN) run one at a time, each drained. K-tile j's stage goes
    // back once h1(j) has retired, so within a chain a consumer holds two stages: with a ring of three (pgr 2) that
    // starves the producer, and those kernels drain every K-tile (chain 1). Measured on the H100 (bench/NOTES.md,
    // tuning/probes/chain_run.sh): chain 8 against 1, 128x192 pgr 3 1.4-3.8 % faster, pgr 4 within 1 %, the
    // one-consumer 64x192 (nothing else to hide its drains) 1.09-1.28x; pgr 2 loses 3-7 % with any chain.
#ifndef KILN_PROBE_PAIR_CHAIN
    static constexpr int PAIR_CHAIN = STAGES >= 4 ? 8 : 1;
#else
    static constexpr int PAIR_CHAIN = KILN_PROBE_PAIR_CHAIN;  // tuning/probes/chain_run.sh
#endif
    template <int N>
    KILN_DEVICE static void split_chain(float (&acc)[REP][ACC], float (&p0)[REP][ACC / 2], float (&p1)[REP][ACC / 2],
                                        uint8_t *smem, uint64_t *full, uint64_t *empty, int &stage, uint32_t &phase,
                                        int cm, int cn, int lane) {
        constexpr int HALF = ACC / 2;
        sm90::mbar_wait(&full[stage], phase);
        issue_group<0>(p0, smem, stage, cm, cn);
        issue_group<1>(p1, smem, stage, cm, cn);
        sm90::wgmma_wait<1>();  // h0(0) retired
        add_part(acc, p0);
#pragma unroll
        for (int j = 1; j < N; ++j) {
            const int prev = stage;
            advance(stage, phase);
            sm90::mbar_wait(&full[stage], phase);
            issue_group<0>(p0, smem, stage, cm, cn);
            sm90::wgmma_wait<1>();  // h1(j - 1) retired, h0(j) may run
            if (lane == 0) release(&empty[prev]);
            add_part<HALF, HALF>(acc, p1);
            issue_group<1>(p1, smem, stage, cm, cn);
            sm90::wgmma_wait<1>();  // h0(j) retired, h1(j) may run
            add_part(acc, p0);
        }
        sm90::wgmma_wait<0>();
        if (lane == 0) release(&empty[stage]);
        add_part<HALF, HALF>(acc, p1);
        advance(stage, phase);
    }

    KILN_DEVICE static void mainloop_split_pair(const Tile &T, uint8_t *smem, uint64_t *full, uint64_t *empty,
                                                float (&acc)[REP][ACC], float (&p0)[REP][ACC / 2], int &stage,
                                                uint32_t &phase, int cm, int cn, int lane) {
        float p1[REP][ACC / 2];
        int i = 0;
        for (; i + PAIR_CHAIN <= T.iters; i += PAIR_CHAIN)
            split_chain<PAIR_CHAIN>(acc, p0, p1, smem, full, empty, stage, phase, cm, cn, lane);
        for (; i < T.iters; ++i) split_chain<1>(acc, p0, p1, smem, full, empty, stage, phase, cm, cn, lane);
    }

    // One column half of a K-tile into `part` as a batch of its own, waited for (mainloop_split, one sum).
    template <int H>
    KILN_DEVICE static void half_batch(float (&part)[REP][ACC / 2], uint32_t sa, uint32_t sb) {
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
        sm90::wgmma_fence();
        mma_ss_half<H>(part, sa, sb);
        sm90::wgmma_commit();
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
        sm90::wgmma_wait<0>();
    }

    // SWAP: K-tile i's wgmma run while the weights of K-tile i + 1 are read from their stage and widened into the
    // other fragment set (f0 for even K-tiles, f1 for odd: the loop is unrolled by two so that each set keeps its
    // registers). A set is rewritten only after the wgmma that read it are done (wait_group 0 before the next
    // issue), so no register of a wgmma in flight is touched; the widening hides behind the tensor cores instead of
    // running between them.
    KILN_DEVICE static void swap_issue(float (&acc)[REP][ACC], uint32_t (&f)[REP][KSTEPS][4], uint32_t x_base,
                                       int first = 0) {
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int kk = 0; kk < KSTEPS; ++kk)
#pragma unroll
                for (int x = 0; x < 4; ++x) sm90::fence_reg(f[r][kk][x]);
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
        sm90::wgmma_fence();
        mma_rs(acc, f, x_base, first);
        sm90::wgmma_commit();
    }

    // The sums of weights widened times 1 / Up::UNIT (pair_unit), scaled back once a tile.
    KILN_DEVICE static void unit_scale(float (&acc)[REP][ACC]) {
        if constexpr (Up::UNIT != 1.f) {
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int e = 0; e < ACC; ++e) acc[r][e] *= Up::UNIT;
        }
    }

    KILN_DEVICE static void swap_retire(float (&acc)[REP][ACC], uint64_t *empty, int s, int lane) {
        sm90::wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
        if (lane == 0) release(&empty[s]);
    }

    // bf16 widening goes through f32 and needs more temporaries: where its two fragment sets and the accumulators
    // would not leave room for them (the 128x128 tile spills 20 bytes), one set, widened between the K-tiles' wgmma.
    static constexpr bool SWAP_OVERLAP = !(Up::VIA_F32 && REP * ACC + 2 * REP * KSTEPS * 4 > 96);
    // With per-group weight scales (GS) the same rule for every weight type: their registers (2 row indices, 4
    // prefetched scales and 2 packed ones per 64-row block) made the 128-token f16 tiles spill.
    template <bool GS>
    static constexpr bool OVERLAP = SWAP_OVERLAP && !(GS && REP * ACC + 2 * REP * KSTEPS * 4 > 96);

    // FINE (prefill tiles of 128 weight rows a consumer: 128 accumulators, where two K-tiles of widened weights,
    // 2 x REP x KSTEPS x 4 registers, would not fit beside them; generator: wgmma.fine, the same rule): the weights are
    // widened one wgmma batch ahead instead of one K-tile ahead. Batch kk is 16-K group kk of every 64-row block
    // (one ldmatrix.x2 each: rows 0-7 and 8-15 of the group), widened into slot kk & 1 while batch kk - 1 runs,
    // after wait_group 1 has retired batch kk - 2, the slot's previous reader: 2 x REP x 4 registers of weights.
    // (Batches of two groups, one ldmatrix.x4, timed the same at 8192^3 and spilled with per-group scales.)
    static constexpr int FINE_LIMIT = 160;  // wgmma.py MAX_SWAP
    static constexpr bool FINE = RS && !C::SYNC && REP * ACC + 2 * REP * KSTEPS * 4 > FINE_LIMIT;
    static_assert(!FINE || KSTEPS % 2 == 0, "each K-tile's first batch in slot 0");

    // The fragments of group kk of 64-row block r (load_weight_pair's, one group).
    KILN_DEVICE static void load_weight_group(uint32_t (&f)[4], uint32_t w_base, int r, int kk, int warp, int lane) {
        const int j = lane & 7;
        const int row = r * 64 + warp * 16 + ((lane >> 3) & 1) * 8 + j;
        uint32_t w[2];
        sm90::ldmatrix_x2(w, weight_addr(w_base, row, j, kk));
        widen_group(f, w[0], w[1]);
    }

    // ONE: the batch's scales take one multiply a pair (WeightScales::take_one).
    template <bool GS, bool ONE>
    KILN_DEVICE static void load_batch(uint32_t (&f)[REP][4], uint32_t w_base, int kk, int warp, int lane,
                                       const typename PS::Scale (&sc)[REP][2]) {
#pragma unroll
        for (int r = 0; r < REP; ++r) {
            load_weight_group(f[r], w_base, r, kk, warp, lane);
            if constexpr (GS) {
#pragma unroll
                for (int x = 0; x < 4; ++x)
                    f[r][x] = ONE ? PS::mul_one(f[r][x], sc[r][x & 1]) : PS::mul(f[r][x], sc[r][x & 1]);
            }
        }
    }

    // load_batch in the variant `one` names (WeightScales::take_one; false without group scales).
    template <bool GS>
    KILN_DEVICE static void load_batch_as(bool one, uint32_t (&f)[REP][4], uint32_t w_base, int kk, int warp, int lane,
                                          const typename PS::Scale (&sc)[REP][2]) {
        if (GS && one)
            load_batch<GS, true>(f, w_base, kk, warp, lane, sc);
        else
            load_batch<GS, false>(f, w_base, kk, warp, lane, sc);
    }

    KILN_DEVICE static void issue_batch(float (&acc)[REP][ACC], uint32_t (&f)[REP][4], uint32_t x_base, int kk) {
#pragma unroll
        for (int r = 0; r < REP; ++r)
#pragma unroll
            for (int x = 0; x < 4; ++x) sm90::fence_reg(f[r][x]);
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
        sm90::wgmma_fence();
        const uint32_t x = x_base + (kk * 32 / 128) * (C::MT0 * 128) + (kk * 32) % 128;
#pragma unroll
        for (int r = 0; r < REP; ++r) C::Mma::run(acc[r], f[r], sm90::desc_k128(x), 1);
        sm90::wgmma_commit();
    }

    // The state a FINE K-tile hands to the next: the ring position, the stage to give back, the two slots of
    // widened weights, this K-tile's scales (sc) and the next one's (sn, taken during this one), whether each
    // takes one multiply a pair (WeightScales::take_one: the whole warpgroup's choice, f16 at its barrier `bar`).
    template <bool GS> struct Fine {
        uint32_t f[2][REP][4];
        typename PS::Scale sc[REP][2], sn[REP][2];
        bool one = false, one_next = false;
        int stage, prev = -1, bar;
        uint32_t phase;
        WeightScales<GS> ws;
    };

    // One K-tile of the FINE loop; ONE: its scales take one multiply a pair, so its batches are straight-line code
    // either way (a first version that branched in every batch was slower than two multiplies). The next K-tile's
    // scales are taken after this one's second batch is issued, beside the wgmma.
    template <bool GS, bool ONE>
    KILN_DEVICE static void fine_tile(const kiln_gemm_params &p, const Tile &T, uint8_t *smem, uint64_t *full,
                                      uint64_t *empty, float (&acc)[REP][ACC], Fine<GS> &F, int i, int cm, int cn,
                                      int warp, int lane) {
        const int s = F.stage;
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk) {
            issue_batch(acc, F.f[kk & 1], stage_a(smem, s, cm), kk);
            sm90::wgmma_wait<1>();  // batch kk - 1 (the previous K-tile's last for kk 0) is done
#pragma unroll
            for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
            if (kk == 0 && F.prev >= 0 && lane == 0) release(&empty[F.prev]);
            if (kk + 1 < KSTEPS) {
                load_batch<GS, ONE>(F.f[(kk + 1) & 1], stage_b(smem, s, cn), kk + 1, warp, lane, F.sc);
                if constexpr (GS)
                    if (kk == 1 && i + 1 < T.iters) F.one_next = F.ws.take_one(p, F.sn, T, i + 1, F.bar);
            } else if (i + 1 < T.iters) {
                advance(F.stage, F.phase);
                sm90::mbar_wait(&full[F.stage], F.phase);
                load_batch_as<GS>(F.one_next, F.f[0], stage_b(smem, F.stage, cn), 0, warp, lane, F.sn);
            } else {
                advance(F.stage, F.phase);
            }
        }
        F.prev = s;
    }

    // cw: the consumer warpgroup (its named barrier 1 + cw, the epilogue's, takes the per-K-tile scale decision).
    template <bool GS>
    KILN_DEVICE static void mainloop_swap_fine(const kiln_gemm_params &p, const Tile &T, uint8_t *smem,
                                               uint64_t *full, uint64_t *empty, float (&acc)[REP][ACC], int &stage,
                                               uint32_t &phase, int cm, int cn, int cw, int warp, int lane) {
        static_assert(!GS || !SUM_SCALE, "the fine tiles scale the weights, not the K-tiles' sums");
        Fine<GS> F;
        F.stage = stage;
        F.phase = phase;
        F.bar = 1 + cw;
        F.ws.start(p, T, cn, warp, lane);
        zero(acc);
        if (T.iters == 0) return;
        sm90::mbar_wait(&full[F.stage], F.phase);
        if constexpr (GS) F.one = F.ws.take_one(p, F.sc, T, 0, F.bar);
        load_batch_as<GS>(F.one, F.f[0], stage_b(smem, F.stage, cn), 0, warp, lane, F.sc);
        for (int i = 0; i < T.iters; ++i) {
            if constexpr (GS) {
                if (F.one)
                    fine_tile<GS, true>(p, T, smem, full, empty, acc, F, i, cm, cn, warp, lane);
                else
                    fine_tile<GS, false>(p, T, smem, full, empty, acc, F, i, cm, cn, warp, lane);
#pragma unroll
                for (int r = 0; r < REP; ++r)
#pragma unroll
                    for (int j = 0; j < 2; ++j) F.sc[r][j] = F.sn[r][j];
                F.one = F.one_next;
            } else {
                fine_tile<GS, false>(p, T, smem, full, empty, acc, F, i, cm, cn, warp, lane);
            }
        }
        sm90::wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
        if (lane == 0) release(&empty[F.prev]);
        stage = F.stage;
        phase = F.phase;
        unit_scale(acc);
    }

    template <bool GS>
    KILN_DEVICE static void mainloop_swap(const kiln_gemm_params &p, const Tile &T, uint8_t *smem, uint64_t *full,
                                          uint64_t *empty, float (&acc)[REP][ACC], int &stage, uint32_t &phase,
                                          int cm, int cn, int warp, int lane) {
        constexpr bool SUMS = GS && SUM_SCALE, WS = GS && !SUM_SCALE;  // scale the K-tiles' sums / the weights
        uint32_t f0[REP][KSTEPS][4], f1[REP][KSTEPS][4];
        typename PS::Scale sc[REP][2];     // WS: the weights' multipliers of the K-tile being widened
        float sc0[REP][2], sc1[REP][2];    // SUMS: the scales of f0's and f1's K-tiles
        float part[REP][ACC];              // SUMS: one K-tile's sum
        float(&dst)[REP][ACC] = SUMS ? part : acc;
        WeightScales<GS> ws;
        ws.start(p, T, cn, warp, lane);
        zero(acc);
        bool one = false;  // WS: the K-tile being widened takes one multiply a pair
        auto take = [&](float(&f32)[REP][2], int i) {
            if constexpr (SUMS) ws.take(p, f32, T, i);
            else if constexpr (WS) one = ws.take_one(p, sc, T, i);
        };
        // a K-tile's weights widened (and scaled) into frag, straight-line code either way
        auto load = [&](uint32_t(&frag)[REP][KSTEPS][4], int s) {
            if (WS && one)
                load_weights<WS, true>(frag, stage_b(smem, s, cn), warp, lane, sc);
            else
                load_weights<WS>(frag, stage_b(smem, s, cn), warp, lane, sc);
        };
        auto retire = [&](int s, const float(&f32)[REP][2]) {
            swap_retire(dst, empty, s, lane);
            if constexpr (SUMS) add_scaled(acc, part, f32);
        };
        if constexpr (!OVERLAP<GS>) {
            for (int i = 0; i < T.iters; ++i) {
                sm90::mbar_wait(&full[stage], phase);
                take(sc0, i);
                load(f0, stage);
                swap_issue(dst, f0, stage_a(smem, stage, cm), SUMS);
                retire(stage, sc0);
                advance(stage, phase);
            }
            unit_scale(acc);
            return;
        }
        if (T.iters == 0) return;
        sm90::mbar_wait(&full[stage], phase);
        take(sc0, 0);
        load(f0, stage);
        int i = 0;
        for (; i + 1 < T.iters; i += 2) {
            const int s0 = stage;
            swap_issue(dst, f0, stage_a(smem, s0, cm), SUMS);
            advance(stage, phase);
            sm90::mbar_wait(&full[stage], phase);
            take(sc1, i + 1);
            load(f1, stage);
            retire(s0, sc0);
            const int s1 = stage;
            swap_issue(dst, f1, stage_a(smem, s1, cm), SUMS);
            advance(stage, phase);
            if (i + 2 < T.iters) {
                sm90::mbar_wait(&full[stage], phase);
                take(sc0, i + 2);
                load(f0, stage);
            }
            retire(s1, sc1);
        }
        if (i < T.iters) {  // an odd K-tile count: the last one, its weights already in f0
            swap_issue(dst, f0, stage_a(smem, stage, cm), SUMS);
            retire(stage, sc0);
            advance(stage, phase);
        }
        unit_scale(acc);
    }

    // SYNC (prepacked weights, at most 32 activation rows a consumer; generator: wgmma.sync): each warp issues
    // mma.sync m16n8k16 on its 16 weight rows of each 64-row block (A: the same widened fragments as wgmma's, whose
    // register layout per warp is mma.sync's) times 8 activation rows at a time (B: x[row][k] read with ldmatrix.x4,
    // two 16-K groups a call: matrices k 0-7 and 8-15 of group kk, then of kk + 1). The sums of n-block nb go to
    // acc[r][4 nb ..], which is where wgmma m64nN puts those rows and columns, so the epilogue is the same. No
    // async state: a stage is given back as soon as the warp has read it (release_read).
    static constexpr int NB = C::SYNC ? RPC / 8 : 1;  // n-blocks of 8 activation rows per consumer
    static_assert(!C::SYNC || (C::SWAP && RPC % 8 == 0 && RPC <= 32), "mma.sync tiles: prepacked weights, 8..32 rows");
    using SyncMma = Mma<typename MmaTagOf<typename C::T16>::type>;

    template <bool GS>
    KILN_DEVICE static void mainloop_sync(const kiln_gemm_params &p, const Tile &T, uint8_t *smem, uint64_t *full,
                                          uint64_t *empty, float (&acc)[REP][ACC], int &stage, uint32_t &phase,
                                          int cm, int cn, int warp, int lane) {
        constexpr bool SUMS = GS && SUM_SCALE, WS = GS && !SUM_SCALE;  // as in mainloop_swap
        WeightScales<GS> ws;
        ws.start(p, T, cn, warp, lane);
        zero(acc);
        const int mat = lane >> 3, j = lane & 7;
        for (int i = 0; i < T.iters; ++i) {
            sm90::mbar_wait(&full[stage], phase);
            typename PS::Scale sc[REP][2];
            float sf[REP][2], part[REP][ACC];
            float(&dst)[REP][ACC] = SUMS ? part : acc;
            if constexpr (SUMS) {
                ws.take(p, sf, T, i);
                zero(part);
            } else {
                ws.take(p, sc, T, i);
            }
            const uint32_t sa = stage_a(smem, stage, cm), sb = stage_b(smem, stage, cn);
#pragma unroll
            for (int kk = 0; kk < KSTEPS; kk += 2) {
                uint32_t x[NB][4];  // B fragments of groups kk and kk + 1 for each n-block
#pragma unroll
                for (int nb = 0; nb < NB; ++nb) {
                    const int row = nb * 8 + j;  // row & 7 == j
                    const int byte = kk * 32 + (mat >> 1) * 32 + (mat & 1) * 16;  // of the activation row
                    sm90::ldmatrix_x4(x[nb], sa + (byte / 128) * (C::MT0 * 128) + row * 128 +
                                                 ((((byte % 128) >> 4) ^ j) << 4));
                }
#pragma unroll
                for (int r = 0; r < REP; ++r) {
                    uint32_t f[2][4];
                    load_weight_pair(f, sb, r, kk, warp, lane);
                    if constexpr (WS) scale_pair(f, sc[r]);
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                        for (int nb = 0; nb < NB; ++nb) {
                            float d[4] = {dst[r][4 * nb], dst[r][4 * nb + 1], dst[r][4 * nb + 2], dst[r][4 * nb + 3]};
                            const uint32_t b[2] = {x[nb][2 * h], x[nb][2 * h + 1]};
                            SyncMma::run(d, f[h], b);
#pragma unroll
                            for (int e = 0; e < 4; ++e) dst[r][4 * nb + e] = d[e];
                        }
                }
            }
            if constexpr (SUMS) add_scaled(acc, part, sf);
            release_read(&empty[stage], lane);
            advance(stage, phase);
        }
        unit_scale(acc);
    }

    KILN_DEVICE static uint32_t stage_a(uint8_t *smem, int stage, int cm) {
        return smem_addr(smem + stage * A_STAGE) + cm * RPC * 128;
    }
    KILN_DEVICE static uint32_t stage_b(uint8_t *smem, int stage, int cn) {
        return smem_addr(smem + STAGES * A_STAGE + stage * B_STAGE) + cn * CPC * 128;
    }

    // PR >= 2 (and ping-pong): each group of PR K-tiles runs into a fresh `part` (scale-d 0 on its first K-tile;
    // within the group one K-tile stays in flight, as in the unpromoted loop), and once the group's wgmma are done
    // (wait_group 0) `part` is added to acc in FP32 while the other consumer's wgmma keep the tensor cores busy.
    KILN_DEVICE static void mainloop_promoted(const Tile &T, uint8_t *smem, uint64_t *full, uint64_t *empty,
                                              float (&acc)[REP][ACC], int &stage, uint32_t &phase, int cm, int cn,
                                              int lane) {
        zero(acc);
        for (int i0 = 0; i0 < T.iters; i0 += C::PR) {
            float part[REP][ACC];
            int prev = -1;
#pragma unroll 1
            for (int j = 0; j < C::PR && i0 + j < T.iters; ++j) {
                sm90::mbar_wait(&full[stage], phase);
                const uint32_t sa = stage_a(smem, stage, cm), sb = stage_b(smem, stage, cn);
#pragma unroll
                for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
                sm90::wgmma_fence();
                mma_ss(part, sa, sb, j == 0);
                sm90::wgmma_commit();
#pragma unroll
                for (int r = 0; r < REP; ++r) sm90::fence_regs(part[r]);
                sm90::wgmma_wait<1>();  // the group's K-tile before this one is done: its stage goes back
                if (prev >= 0 && lane == 0) release(&empty[prev]);
                prev = stage;
                advance(stage, phase);
            }
            sm90::wgmma_wait<0>();
            if (lane == 0) release(&empty[prev]);
            add_part(acc, part);
        }
    }

    // The largest divisor of n up to 16 (cluster_sum's chunks).
    KILN_DEVICE static constexpr int chunk_of(int n) {
        int c = n < 16 ? n : 16;
        while (n % c) --c;
        return c;
    }

    // CLUSTER_SPLIT, after a tile's mainloop: ranks 1.. put each consumer thread's accumulators in their shared
    // memory; one cluster barrier (every thread of the cluster arrives once: the producers in run()); rank 0 adds
    // rank 1's, 2's, ... (same thread, same registers: the CTAs' accumulator layouts are one) and returns true: it
    // runs the epilogue. The peers wait at run()'s last cluster barrier until rank 0 has read them.
    KILN_DEVICE static bool cluster_sum(float (&acc)[REP][ACC], uint8_t *smem, int cw, int tid) {
        constexpr int Q = ACC / 4;  // float4 per wgmma block
        const uint32_t mine = smem_addr(smem + REDUCE_OFFSET) + (cw * REP * Q * 128 + tid) * 16;
        const int rank = cluster_rank();
        if (rank != 0) {
            // In the ring: every consumer of this CTA has waited for its last wgmma, which read the stages.
            if constexpr (REDUCE_IN_RING) sm90::named_barrier(8, CONSUMERS * 128);
#pragma unroll
            for (int r = 0; r < REP; ++r)
#pragma unroll
                for (int q = 0; q < Q; ++q)
                    sm90::sts_v4_f32(mine + (r * Q + q) * 128 * 16, acc[r][4 * q], acc[r][4 * q + 1],
                                     acc[r][4 * q + 2], acc[r][4 * q + 3]);
        }
        sm90::cluster_arrive();
        sm90::cluster_wait();
        if (rank != 0) return false;
        // A peer's float4 in chunks of up to 16 (64 registers beside the accumulators: 128 + 64 at 64x256), each
        // chunk's loads all issued before its adds.
        constexpr int ALL = REP * Q, CH = chunk_of(ALL);
        static_assert(ALL % CH == 0, "whole chunks");
#pragma unroll 1
        for (int peer = 1; peer < CLUSTER; ++peer) {
            const uint32_t at = sm90::cluster_peer(mine, peer);
#pragma unroll
            for (int c0 = 0; c0 < ALL; c0 += CH) {
                float v[CH][4];
#pragma unroll
                for (int c = 0; c < CH; ++c) sm90::ld_cluster_v4_f32(at + (c0 + c) * 128 * 16, v[c]);
#pragma unroll
                for (int c = 0; c < CH; ++c)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[(c0 + c) / Q][(c0 + c) % Q * 4 + e] += v[c][e];
            }
        }
        return true;
    }

    // GS: the mixed kernels' per-group weight scales (run picks the instance once per launch).
    template <bool GS>
    KILN_DEVICE static void consume(const kiln_tma_params &P, uint8_t *smem, uint64_t *full, uint64_t *empty, int cw) {
        const int tid = thread_x() % 128, warp = tid / 32, lane = tid % 32;
        const int cm = PINGPONG ? 0 : cw % C::WG0, cn = PINGPONG ? 0 : cw / C::WG0;
        uint8_t *region = smem + STAGES * (A_STAGE + B_STAGE) + cw * EPI_REGION;
        int stage = 0;
        uint32_t phase = 0;
        float acc[REP][ACC];
        int turn = 0;  // tiles of this CTA so far
        bool summed = false;  // CLUSTER_SPLIT: this thread took part in its tile's cluster barrier
        Groups c;
        Tile T;
        for (int t = first_tile(); tile(P, t, c, T); t += tile_step(), ++turn) {
            if (PINGPONG && turn % 2 != cw) {  // the other consumer's tile: step over its stages
                for (int i = 0; i < T.iters; ++i) advance(stage, phase);
                continue;
            }
            if (PINGPONG && turn > 0) sm90::named_barrier(3 + cw, 256);  // wait for the other's mainloop to be issued
            if (T.iters == 0) zero(acc);
            Columns early;
            early_columns(P.p, T, cn, tid, early);
            int prev = -1;
            if constexpr (C::BLOCK_SCALES) {
                mainloop_block(P, T, smem, full, empty, acc, stage, phase, cm, cn, warp, lane);
            } else if constexpr (C::SPLIT) {
                mainloop_split(T, smem, full, empty, acc, stage, phase, cm, cn, lane);
            } else if constexpr (PROMOTED && C::PR == 1 && !PINGPONG) {
                mainloop_pipelined(T, smem, full, empty, acc, stage, phase, cm, cn, lane);
            } else if constexpr (PROMOTED) {
                mainloop_promoted(T, smem, full, empty, acc, stage, phase, cm, cn, lane);
            } else if constexpr (C::SYNC) {
                mainloop_sync<GS>(P.p, T, smem, full, empty, acc, stage, phase, cm, cn, warp, lane);
            } else if constexpr (FINE) {
                mainloop_swap_fine<GS>(P.p, T, smem, full, empty, acc, stage, phase, cm, cn, cw, warp, lane);
            } else if constexpr (RS) {
                mainloop_swap<GS>(P.p, T, smem, full, empty, acc, stage, phase, cm, cn, warp, lane);
            } else
            for (int i = 0; i < T.iters; ++i) {
                sm90::mbar_wait(&full[stage], phase);
                const uint32_t sa = stage_a(smem, stage, cm), sb = stage_b(smem, stage, cn);
#pragma unroll
                for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
                sm90::wgmma_fence();
                mma_ss(acc, sa, sb, i == 0);
                sm90::wgmma_commit();
#pragma unroll
                for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
                // The K-tile before this one has finished reading its stage: give it back.
                sm90::wgmma_wait<1>();
                if (prev >= 0 && lane == 0) release(&empty[prev]);
                prev = stage;
                advance(stage, phase);
            }
            if (PINGPONG && more(P, t + tile_step(), c)) sm90::named_arrive(3 + (1 - cw), 256);
            if constexpr (!RS && !PROMOTED) {
                sm90::wgmma_wait<0>();
#pragma unroll
                for (int r = 0; r < REP; ++r) sm90::fence_regs(acc[r]);
                if (prev >= 0 && lane == 0) release(&empty[prev]);
            }
            if constexpr (CLUSTER_SPLIT) {
                summed = true;
                if (!cluster_sum(acc, smem, cw, tid)) continue;  // a peer: rank 0 stores the tile
            }
            epilogue(P, T, acc, region, cw, cm, cn, tid, warp, lane, early);
        }
        if (CLUSTER_SPLIT && !summed) {  // no tile (never with the runtime's grid): still the one arrival
            sm90::cluster_arrive();
            sm90::cluster_wait();
        }
        // The staging boxes live in this CTA's shared memory: the last stores must have read them before it exits
        // (.read: their writes to D complete with the grid, which griddepcontrol.wait and the stream wait for).
        if ((TMA_D || SWAP_TMA) && P.d_tma && tid == 0) sm90::bulk_wait_read<0>();
    }

    KILN_DEVICE static void run(const kiln_tma_params &P, uint8_t *smem_raw) {
        uint8_t *smem = (uint8_t *)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
        uint64_t *full = reinterpret_cast<uint64_t *>(smem + BAR_OFFSET);
        uint64_t *empty = full + STAGES;
        const int wg = thread_x() / 128;
#ifdef KILN_PROBE_WAITS
        if (thread_x() < 12) sm90::probe_waits()[thread_x()] = 0;
        if (thread_x() == 0) {  // the start, kept in shared memory (registers held across the kernel spilled)
            unsigned long long g0;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
            sm90::probe_waits()[12] = g0;
            sm90::probe_waits()[13] = clock64();
        }
#endif
        if (thread_x() == 0) {
            sm90::tma_prefetch(&P.a);
            sm90::tma_prefetch(&P.b);
            if (C::BLOCK_SCALES && P.scale_tma) {
                sm90::tma_prefetch(&P.sa);
                sm90::tma_prefetch(&P.sb);
            }
            for (int s = 0; s < STAGES; ++s) {
                sm90::mbar_init(&full[s], C::BLOCK_SCALES && !P.scale_tma ? 1 + 32 : 1);  // + the scale warp's lanes
                // lane 0 of every consumer warp reading it (with multicast, of both CTAs)
                sm90::mbar_init(&empty[s], 4 * STAGE_READERS * (MULTICAST ? 2 : 1));
            }
            sm90::mbar_init_fence();
        }
        // multicast: the peer's barriers are ready before any arrival on them
        if constexpr (MULTICAST) sm90::cluster_sync();
        else barrier();
        // OVERLAP: the runtime may launch this kernel while the stream's previous one still runs (run.c,
        // launch_overlapped): nothing here has touched global memory yet, and nothing may before that kernel is done.
        // Then the next kernel may launch in turn: its CTAs take SMs this grid leaves free (or frees) and do their
        // set-up. (Not in the split-promotion kernels, which these two instructions slowed: wgmma.py, overlap.)
        if constexpr (C::OVERLAP) {
            sm90::grid_dependency_wait();
            sm90::launch_dependents();
        }
        if (wg == 0) {
            sm90::regs_dealloc<PRODUCER_REGS>();
            if (thread_x() == 0) produce(P, smem, full, empty);
            if constexpr (C::BLOCK_SCALES)
                if (thread_x() / 32 == 1 && !P.scale_tma) produce_scales(P, smem, full, empty, thread_x() % 32);
            if constexpr (CLUSTER_SPLIT) sm90::cluster_sync();  // the consumers' one barrier of cluster_sum
        } else {
            sm90::regs_alloc<CONSUMER_REGS>();
            if constexpr (RS) {  // the mixed kernels: per-group weight scales or not, once per launch
                if (weight_group_scales<C::DU>(P.p))
                    consume<true>(P, smem, full, empty, wg - 1);
                else
                    consume<false>(P, smem, full, empty, wg - 1);
            } else {
                consume<false>(P, smem, full, empty, wg - 1);
            }
        }
        // multicast: neither CTA leaves while the other may still write its stages or arrive on its barriers; split-K
        // in a cluster: no peer leaves while rank 0 may still read its sums
        if constexpr (C::MC != 0) sm90::cluster_sync();
#ifdef KILN_PROBE_WAITS
        // 16 words a CTA at the fixed address KILN_PROBE_WAITS, which tuning/probes/gemm_waits_shim.c maps
        __syncthreads();
        if (thread_x() == 0) {
            unsigned long long g1, *w = sm90::probe_waits();
            unsigned smid;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            const unsigned cta = blockIdx.x + gridDim.x * blockIdx.y;
            unsigned long long *rec = reinterpret_cast<unsigned long long *>((unsigned long long)KILN_PROBE_WAITS) +
                                      16 * cta;
            const unsigned long long v[16] = {1ull + cta, smid, w[12], g1, (unsigned long long)(clock64() -
                                              (long long)w[13]), w[0], w[1], w[4], w[5], w[6], w[7], w[8], w[9],
                                              w[10], w[11], 0};
#pragma unroll
            for (int e = 0; e < 16; ++e) rec[e] = v[e];
        }
#endif
    }
};

// The kernel a config builds: WSGR 1 names the direct-load decode kernels (kiln_gemm_direct.h), the rest are the
// TMA-fed, warp-specialized ones above.
template <bool DIRECT, class C> struct KernelOf {
    using type = WgmmaGemm<C>;
};
template <class C> struct KernelOf<true, C> {
    using type = DirectGemm<C>;
};
template <class C> using WgmmaKernel = typename KernelOf<C::WSGR != 0, C>::type;

template <class C> KILN_DEVICE void gemm_wgmma(const kiln_tma_params &P) {
    extern __shared__ __align__(1024) uint8_t kiln_lds[];
    WgmmaKernel<C>::run(P, kiln_lds);
}

}  // namespace kiln

#endif  // KILN_GEMM_WGMMA_H
