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
//   • compute(s) starts when prefetch(s) and compute(s−1) are done and no write-back is in
//     flight; it lasts SystolicTime(a_m, a_n, a_k).
//   • after the last k-step of a tile, C_t (a_m·a_n·e bytes) is written back as an HBM flow. It
//     overlaps the next tile's first prefetch but not its first compute: the scratchpad budget
//     holds one fp32 accumulator, which must be drained before it is reused.
//   • the core is done when its last write-back lands; the GeMM when every core is done.
// Bytes for one GeMM: each core's prefetches plus write-backs — A is read tiles_n times, B
// tiles_m times, C written once. Nothing here is a closed-form GeMM time: contention with the
// NIC and the other core comes from the fair-share solver.
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
// Cost: O(cores + Σ steps) events and flows per GeMM, no allocation per step (callbacks capture
// `this` and a core index).
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
#include <string>
#include <vector>

#include "accel/chip_config.h"
#include "accel/tiling.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/ids.h"
#include "core/mode_arbiter.h"
#include "core/time.h"

namespace meshsim::accel {

class ChipModel : public core::OpRunner {
 public:
  // Creates one HBM resource per chip in `fs` ("chipN.hbm", kind kHbm, capacity
  // hbm_bandwidth_bytes_per_s). `config` must be valid; num_chips ≥ 1.
  ChipModel(core::FairShare& fs, const ChipConfig& config, int num_chips);

  // The HBM resource of `chip`: include it in every flow that reads or writes its memory.
  core::ResourceId hbm(core::ChipId chip) const { return hbm_[chip.value()]; }
  const ChipConfig& config() const { return config_; }
  int num_chips() const { return static_cast<int>(chips_.size()); }

  // Runs a kGemm, kCopy or kVector op on op.chip (fatal for other kinds or an unknown chip).
  // All ops started on one ChipModel must come from the same executor.
  // With an arbiter, GeMMs and vector ops run in ModeArbiter::kCompute mode: never beside a
  // blocking collective on the same chip (hardware without that overlap). Not owned; may be null.
  void set_arbiter(core::ModeArbiter* arbiter) { arbiter_ = arbiter; }

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
    bool writing = false;  // A write-back is in flight.
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

  core::ModeArbiter* arbiter_ = nullptr;
  core::FairShare& fs_;
  ChipConfig config_;
  std::vector<core::ResourceId> hbm_;
  std::vector<Chip> chips_;
  std::vector<CoreRun> cores_;  // Chip-major: chips_.size() × config_.cores.
  core::Executor* exec_ = nullptr;
};

}  // namespace meshsim::accel

#endif  // MESHSIM_ACCEL_CHIP_MODEL_H_
