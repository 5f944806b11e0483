// The chip model: runs kGemm, kCopy and kVector ops on simulated cores whose HBM traffic shares
// one fair-share HBM resource per chip with the NIC (DESIGN.md §4, MeshSlice §5.1, Figure 8).
//
// A GeMM C[m×n] += A[m×k]·B[k×n] is tiled (see PlanGemm): output tiles are spread over the
// chip's cores; for each output tile a core loops over k, prefetching the next A_t and B_t from
// HBM (a flow on the HBM resource) while its systolic arrays compute the current pair, then
// writes C_t back (another HBM flow). The arrays' time follows the systolic dataflow
// (SystolicTime), so small or skinny GeMMs are less efficient than large square ones.
//
// Per-core pipeline. The output tiles (row-major, n fastest) are dealt round-robin to the
// u = min(cores, tiles) working cores (core c gets tiles c, c + u, c + 2u, ...), which spreads
// the ragged edge tiles over the cores; the other cores idle. A core flattens its tiles' k-loops
// into steps s = 0..S−1 (S = its tiles × tiles_k):
//   • prefetch(0) starts with the GeMM; prefetch(s+1) starts when compute(s) starts (the buffer
//     it fills was freed by compute(s−1)). It is one HBM flow of (a_m·a_k + a_k·a_n)·e bytes,
//     actual (unpadded) edge sizes. So the first pair of the next tile is fetched while the
//     last k-step of the current tile computes — the software pipeline does not stop at tile
//     boundaries.
//   • compute(s) starts when prefetch(s) and compute(s−1) are done and an output accumulator is
//     free; it lasts OrientedSystolicTime(a_m, a_n, a_k) (the faster stationary operand).
//   • after the last k-step of a tile, C_t (a_m·a_n·e bytes) is written back as an HBM flow. It
//     overlaps the next tile's first prefetch; with core.output_buffers = 2 (tpuv4) it also
//     overlaps the next tile's k-loop, which accumulates into the other buffer, and only a
//     write-back that finds both buffers busy (or the core's last) is waited for. With 1 buffer
//     the next tile's first compute waits for the write-back.
//   • the core is done when its last write-back lands; the GeMM when every core is done.
// Bytes for one GeMM: each core's prefetches plus write-backs — A is read tiles_n times, B
// tiles_m times, C written once. Nothing here is a closed-form GeMM time: contention with the
// NIC and the other core comes from the fair-share solver.
//
// Two-level pipeline (chips with an L2, ChipConfig::HasL2: the GPU presets). The per-core
// pipeline above would move every tile through HBM and cost O(Σ steps) ≈ 10^5–10^6 events for a
// large GeMM on 100+ SMs. Instead (plan: PlanL2Gemm, equations in tiling.h) the cores run in
// waves of P = wave_tiles output tiles, one per core, in lockstep — all cores of a wave do the
// same steps, so their flows are merged into one flow per step (max-min gives equal flows equal
// shares, so this loses nothing when they are symmetric). Per chip there is one L2 resource
// ("chipN.l2", kind kOther, capacity l2.bandwidth) beside the HBM. Panels are numbered
// g = wave·S + step over the whole GeMM (S = steps per wave):
//   • panel(g): one HBM flow {hbm} of (rows_w + cols_w)·bk_s·e bytes (bk_s = k elements of step
//     s) bringing the wave's A and B panels into L2. panel(0) starts with the GeMM, panel(g+1)
//     when step g begins (the L2 double-buffers panels), also across waves.
//   • step g begins when panel(g) has landed, step g−1 is done and, for a wave's first step, the
//     previous wave's write-back has landed. A wave's first step starts with the fill: one L2
//     flow {l2} of the first k-tile of every core's A_t and B_t, Σ(a_m + a_n)·a_k·e, exposed
//     (the cores cannot compute before their first tiles arrive). Then, concurrently, an L2 flow
//     {l2} of the step's remaining core traffic, Σ(a_m + a_n)·bk_s·e minus the fill, and the
//     compute: Σ over the step's k-tiles of SystolicTime(a_m, a_n, a_k) of the wave's largest
//     tile (the slowest core sets the lockstep pace). The step ends when both are done:
//     step time = max(compute, L2 stream at the wave's fair share).
//   • after a wave's last step, C: one flow {l2, hbm} of Σ a_m·a_n·e bytes (the accumulators
//     drain through L2 to HBM), exposed like the one-level write-back.
//   Timeline rows as below: one per core of a full wave (core q runs raster tiles q, q + P, …),
//   from the GeMM's start to the end of that core's last wave; flops exact; bytes = its equal
//   share of its waves' HBM bytes (panels + C), so the rows sum to PlanL2Gemm's hbm_bytes.
// Persistent kernels (gemm.persistent = 1, the h100 preset: Hopper's cuBLAS). The library
// launches one CTA per core for the idle chip (the plan's full wave, G = wave_tiles) whether or
// not other kernels hold cores; tiles are taken in raster order by the CTAs that are running, and
// each CTA owns its first tile. With F free cores at launch (cores − held − StrandedCores(held):
// clusters of gemm.cluster_ctas CTAs need free cores in one GPC), D = G − F CTAs are displaced:
// the others run the other T − D tiles in waves of F, and the displaced CTAs start when those
// drain, running their own first tiles (raster tiles F..G−1, moved to the end of the order:
// TileOrder) in waves of min(D, F) (the `tail`). Cores given back earlier
// let the displaced CTAs start at the next wave: their tiles rejoin the rest. A wave model of the
// free cores alone loses nothing when T/F rounds up to the same count; measured on an H200
// (docs/measurements/gemm_beside_comm.md), mid-size GeMMs beside a kernel of 1–4 CTAs slow by
// 1.2–1.9×, which the tail reproduces in part. Its CTAs keep their cores while they have tiles:
// at each wave's start the GeMM tells the ledger it occupies that wave's tiles' cores
// (CoreLedger::SetOccupied; 0 when it ends), so a communication kernel launched meanwhile waits
// until a wave leaves it enough (CoreLedger::WhenFree), as on an H200.
// Dispatch order (stack.comm.high_priority = 0, the GPU stacks' presets). The block scheduler
// dispatches the CTAs of grids of one priority in launch order, so a GeMM of one CTA per tile
// takes every core that frees until its last wave is dispatched: it occupies all cores until
// then and its last wave's cores after (an element-wise kernel, whose blocks outnumber the SMs
// many times, all cores until its end), and a communication kernel launched meanwhile waits as
// beside a persistent GeMM. With high_priority = 1 the kernel's CTAs go first: it holds its cores
// at launch and the GeMM's next waves narrow.
// HBM bytes per GeMM are PlanL2Gemm's hbm_bytes; NIC flows contend with the panel and C flows on
// `hbm(chip)`, and only GeMM traffic uses `l2(chip)`. Cost: O(waves · S) ≈ 6 events per step,
// plus O(tiles) at the start (per-core flops; PlanL2Gemm once per distinct shape); a100 8192³
// costs 2.8·10^3 events (28 waves × 16 steps) where the per-core pipeline needed 5.3·10^5.
//
// Queueing. A chip runs one core-occupying op at a time: kGemm and kVector ops (the vector
// units are part of the cores and run in their instruction stream) wait in one FIFO per chip and
// start, in arrival order, the moment the previous one finishes. kCopy ops run at once on the
// chip's DMA engines, concurrently with GeMMs; they interact only through HBM bandwidth.
//   • kCopy: one HBM flow of 2·bytes (read + write), uncapped.
//   • kVector: one HBM flow of 2·bytes (read + write) capped at the vector units' rate, assuming
//     one flop per element: max_rate = cores · vector_flops_per_s · element_bytes · 2 bytes/s.
//
// Timeline rows (all Phase::kOp; bytes = HBM traffic of the row, read + write):
//   • GeMM: one row per participating core (UnitKind::kCore, index = core), from the GeMM's start
//     on the chip (the first prefetch) to that core's last write-back; flops = 2·a_m·a_n·k over
//     its tiles, so the rows sum to exactly 2·m·n·k.
//   • kVector: one row on (UnitKind::kVector, 0), flops 0 (element-wise work is not counted as
//     GeMM flops by the utilization metric); kCopy: one row on (UnitKind::kHbm, 0), flops 0.
//
// Cost (one-level): O(cores + Σ steps) events and flows per GeMM, no allocation per step
// (callbacks capture `this` and a core index).
//
// Example:
//   core::FairShare fs(sim);
//   ChipModel chips(fs, *ChipPreset("tpuv4"), /*num_chips=*/4);
//   exec.SetRunner(core::OpKind::kGemm, &chips);   // also kCopy and kVector
//   // chips.hbm(c) is the HBM resource the NIC's flows of chip c must include.
#ifndef MESHSIM_ACCEL_CHIP_MODEL_H_
#define MESHSIM_ACCEL_CHIP_MODEL_H_

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "accel/chip_config.h"
#include "accel/tiling.h"
#include "core/core_ledger.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/ids.h"
#include "core/mode_arbiter.h"
#include "core/time.h"
#include "stack/stack_config.h"

namespace meshsim::accel {

class ChipModel : public core::OpRunner {
 public:
  // Creates one HBM resource per chip in `fs` ("chipN.hbm", kind kHbm, capacity
  // hbm_bandwidth_bytes_per_s) and, if config.HasL2(), then one L2 resource per chip ("chipN.l2",
  // kind kOther, capacity l2_bandwidth_bytes_per_s). `config` must be valid; num_chips ≥ 1.
  ChipModel(core::FairShare& fs, const ChipConfig& config, int num_chips);

  // The HBM resource of `chip`: include it in every flow that reads or writes its memory.
  core::ResourceId hbm(core::ChipId chip) const { return hbm_[chip.value()]; }
  // The L2 resource of `chip`; precondition (fatal): config().HasL2().
  core::ResourceId l2(core::ChipId chip) const;
  const ChipConfig& config() const { return config_; }
  int num_chips() const { return static_cast<int>(chips_.size()); }

  // Runs a kGemm, kCopy or kVector op on op.chip (fatal for other kinds or an unknown chip).
  // All ops started on one ChipModel must come from the same executor.
  // With an arbiter, GeMMs and vector ops run in ModeArbiter::kCompute mode: never beside a
  // blocking collective on the same chip (hardware without that overlap). Not owned; may be null.
  void set_arbiter(core::ModeArbiter* arbiter) { arbiter_ = arbiter; }

  // The software stack's part that runs on the chip (stack/stack_config.h): every GeMM and vector
  // kernel pays stack.kernel.launch before it starts (a kLaunch row on (kChip, 0)); vector ops
  // run at most at stack.kernel.pointwise_efficiency (reduction_efficiency for unit
  // core::kVectorReduction) of hbm.bandwidth; and with a ledger, a GeMM's waves take only the
  // cores communication kernels do not hold (two-level pipeline: each wave's width is the free
  // SMs when its first panel is issued; stretches of narrowed waves are kInterference rows on
  // (kChip, 0)). Not owned; may be null. Without a call, or with the ideal stack, nothing changes.
  void set_stack(const stack::StackConfig& stack, core::CoreLedger* ledger);

  void Start(core::OpId id, const core::Op& op, core::Executor& exec) override;
  std::string DescribeWait(core::OpId id) const override;

 private:
  // One core's progress through its share of the chip's current GeMM.
  struct CoreRun {
    int64_t first_tile = 0;  // Its tiles: first_tile + i·stride for i < tiles.
    int64_t stride = 1;
    int64_t tiles = 0;
    int64_t num_steps = 0;  // tiles × tiles_k.
    int64_t next_step = 0;  // The next step to compute.
    int64_t fetched = 0;    // Steps whose prefetch has landed.
    int64_t bytes = 0;      // HBM bytes moved so far.
    double flops = 0;       // 2·a_m·a_n·k over its tiles.
    bool computing = false;
    bool writing = false;      // Waiting for a write-back (no free output buffer, or the end).
    int writes_in_flight = 0;  // Output-tile write-backs not yet in HBM.
  };
  // A chip: its FIFO of core-occupying ops and the geometry of the running GeMM.
  struct Chip {
    bool busy = false;
    core::OpId current;
    core::Time current_start;
    std::deque<core::OpId> queue;
    GemmTiling plan;
    int cores_running = 0;
    // Per step, indexed by EdgeIndex(last m-tile, last n-tile, last k-tile).
    std::array<core::Time, 8> step_time;
    std::array<int64_t, 8> step_bytes;
    std::array<int64_t, 4> writeback_bytes;  // Indexed by EdgeIndex(m, n, false) / 2.
    // Two-level pipeline (HasL2) state of the running GeMM.
    const L2GemmPlan* l2plan = nullptr;  // Owned by l2_plans_.
    int64_t k = 0;                       // The GeMM's k.
    int64_t wave = 0;                    // Current wave and step.
    int64_t step = 0;
    int64_t panels_issued = 0;  // Panels whose HBM flow has started (global index).
    int64_t panels_landed = 0;
    int pending = 0;  // Parts of the current step still running (L2 stream, compute).
    bool filling = false, filled = false, wave_writing = false;
    int64_t m = 0, n = 0;  // The GeMM's m and n.
    bool recut = false;    // Its waves were re-cut for the free SMs: recut_waves.
    std::vector<Wave> recut_waves;
    const std::vector<Wave>& waves() const { return recut ? recut_waves : l2plan->waves; }
    int64_t wave_tiles = 0;  // Width of the waves from the last re-cut on.
    // Persistent kernels (gemm.persistent): raster tiles [tail_first, tiles) belong to CTAs that
    // found no free core at launch; they run after the others, in waves of their own.
    int64_t tail_first = 0;  // An index in `order`.
    TileOrder order;         // The displaced CTAs' first tiles moved last (identity otherwise).
    std::vector<int64_t> core_flops;  // Per core: 2·a_m·a_n·k over its tiles since its last row.
    std::vector<int64_t> core_bytes;  // Per core: its share of its waves' HBM bytes, likewise.
    std::vector<core::Time> core_start;  // Per core: start of its next row.
    core::Time narrowed_since;           // Start of the current stretch of narrowed waves.
  };

  static int EdgeIndex(bool m_edge, bool n_edge, bool k_edge) {
    return (m_edge ? 4 : 0) | (n_edge ? 2 : 0) | (k_edge ? 1 : 0);
  }

  void Launch(uint32_t chip);  // Starts the chip's next queued op, if any.
  void StartGemm(uint32_t chip, const core::Op& op);
  void StartVector(uint32_t chip, const core::Op& op);
  void StartCopy(core::OpId id, const core::Op& op);
  void FinishCurrent(uint32_t chip);

  // Core events; `slot` = chip · cores + core.
  int StepEdges(uint32_t slot, int64_t step) const;
  void Prefetch(uint32_t slot, int64_t step);
  void TryCompute(uint32_t slot);
  void OnPrefetched(uint32_t slot);
  void OnComputed(uint32_t slot);
  void OnWritten(uint32_t slot);

  // Two-level pipeline events (HasL2).
  void StartL2Gemm(uint32_t chip, const core::Op& op);
  void IssuePanel(uint32_t chip);
  void TryWaveStep(uint32_t chip);
  void StartStepBody(uint32_t chip);
  void OnStepPart(uint32_t chip);
  void OnWaveWritten(uint32_t chip);
  int64_t StepK(const Chip& c, int64_t step) const;  // k elements of L2 step `step`.
  int64_t WaveWidth(uint32_t chip) const;  // Tiles the next wave may take: free SMs, ≤ the plan's.
  // CTAs of a persistent GeMM's grid (the plan's full wave) that find no core when waves are
  // `width` wide; 0 for other kernels.
  int64_t Displaced(const Chip& c, int64_t width) const;
  // Re-cuts the waves of the running GeMM from wave `next` (raster tile `first`) on: the tiles
  // before tail_first in waves of `width`, then the displaced CTAs' tiles.
  void Recut(Chip& c, size_t next, int64_t first, int64_t width);
  // Whether wave `wave` of the running GeMM is narrowed by communication kernels (an
  // interference stretch).
  bool Narrowed(const Chip& c, int64_t wave) const;

  core::ModeArbiter* arbiter_ = nullptr;
  core::CoreLedger* ledger_ = nullptr;
  core::Time kernel_launch_;
  bool fifo_dispatch_ = false;  // !stack.comm.high_priority: GeMMs occupy cores (CoreLedger).
  double pointwise_efficiency_ = 1.0, reduction_efficiency_ = 1.0;
  core::FairShare& fs_;
  ChipConfig config_;
  std::vector<core::ResourceId> hbm_;
  std::vector<core::ResourceId> l2_;                       // Empty without an L2.
  std::map<std::array<int64_t, 3>, L2GemmPlan> l2_plans_;  // By (m, n, k).
  std::vector<Chip> chips_;
  std::vector<CoreRun> cores_;  // Chip-major: chips_.size() × config_.cores.
  core::Executor* exec_ = nullptr;
};

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_CHIP_MODEL_H_
