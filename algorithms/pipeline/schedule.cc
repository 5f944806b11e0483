#include "algorithms/pipeline/schedule.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace meshsim::algorithms::pipeline {

absl::StatusOr<ScheduleKind> ParseSchedule(const std::string& name) {
  for (ScheduleKind k : {ScheduleKind::kGpipe, ScheduleKind::k1F1B, ScheduleKind::kEager1F1B}) {
    if (name == ToString(k)) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("--schedule: '%s' is not allowed; allowed: gpipe, 1f1b, eager-1f1b", name));
}

const char* ToString(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kGpipe:
      return "gpipe";
    case ScheduleKind::k1F1B:
      return "1f1b";
    case ScheduleKind::kEager1F1B:
      return "eager-1f1b";
  }
  return "?";
}

std::string Task::ToString() const { return absl::StrCat(forward ? "F" : "B", microbatch); }

int WarmupForwards(ScheduleKind kind, int stages, int stage, int microbatches) {
  switch (kind) {
    case ScheduleKind::kGpipe:
      return microbatches;
    case ScheduleKind::k1F1B:
      return std::min(stages - stage, microbatches);
    case ScheduleKind::kEager1F1B:
      return std::min(2 * (stages - stage) - 1, microbatches);
  }
  return microbatches;
}

std::vector<Task> StageOrder(ScheduleKind kind, int stages, int stage, int microbatches) {
  std::vector<Task> order;
  order.reserve(2 * microbatches);
  int f = 0, b = 0;
  for (const int warm = WarmupForwards(kind, stages, stage, microbatches); f < warm; ++f) {
    order.push_back({true, f});
  }
  while (b < microbatches) {
    order.push_back({false, b++});
    if (f < microbatches) order.push_back({true, f++});
  }
  return order;
}

int MaxInFlight(const std::vector<Task>& order) {
  int now = 0, most = 0;
  for (const Task& t : order) {
    now += t.forward ? 1 : -1;
    most = std::max(most, now);
  }
  return most;
}

}  // namespace meshsim::algorithms::pipeline
