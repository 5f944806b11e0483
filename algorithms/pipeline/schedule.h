// Pipeline schedules: the order in which each stage runs the forward and backward passes of the
// microbatches of one training step (MLSys'23 §4, Figure 4). An order only; the times come from
// the dependencies when the step is simulated (pipeline.h).
//
// Stages are 0-indexed here: stage i of S (the paper's stage i + 1). With m microbatches:
//   gpipe       F0 … F(m−1), then B0 … B(m−1) (Huang et al. 2019).
//   1f1b        w = min(S − i, m) forwards, then alternately a backward and a forward while
//               forwards remain, then the remaining backwards (Narayanan et al. 2021; the paper's
//               "#stages − i + 1" forwards for its 1-indexed i).
//   eager-1f1b  the same with w = min(2·(S − i) − 1, m) warm-up forwards: the paper's
//               2·(#stages − i) + 1 for its 1-indexed i. The last stage still runs one forward,
//               then alternates; earlier stages run forwards further ahead, so a microbatch's
//               transfer to the next stage overlaps that stage's other work.
// Microbatches run in ascending order in both directions. At most w microbatches are in flight
// on stage i (forward done, backward not): gpipe m, 1f1b S − i, eager-1f1b 2(S − i) − 1.
//
// Example:
//   std::vector<Task> order = StageOrder(ScheduleKind::kEager1F1B, /*stages=*/4, /*stage=*/0, 8);
//   // F0 F1 F2 F3 F4 F5 F6 B0 F7 B1 B2 B3 B4 B5 B6 B7
#ifndef MESHSIM_ALGORITHMS_PIPELINE_SCHEDULE_H_
#define MESHSIM_ALGORITHMS_PIPELINE_SCHEDULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meshsim::algorithms::pipeline {

enum class ScheduleKind { kGpipe, k1F1B, kEager1F1B };
// "gpipe", "1f1b", "eager-1f1b"; InvalidArgument naming --schedule otherwise.
absl::StatusOr<ScheduleKind> ParseSchedule(const std::string& name);
const char* ToString(ScheduleKind kind);

// One pass of one microbatch on one stage.
struct Task {
  bool forward = true;
  int microbatch = 0;
  bool operator==(const Task&) const = default;
  std::string ToString() const;  // "F3", "B0"
};

// Forwards stage `stage` runs before its first backward.
int WarmupForwards(ScheduleKind kind, int stages, int stage, int microbatches);

// Stage `stage`'s tasks in order: every microbatch's forward once, then its backward.
std::vector<Task> StageOrder(ScheduleKind kind, int stages, int stage, int microbatches);

// The largest number of microbatches in flight (forward done, backward not) along `order`.
int MaxInFlight(const std::vector<Task>& order);

}  // namespace meshsim::algorithms::pipeline

#endif  // MESHSIM_ALGORITHMS_PIPELINE_SCHEDULE_H_
