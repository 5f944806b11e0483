#include "core/timeline.h"

namespace meshsim::core {

const char* ToString(UnitKind unit) {
  switch (unit) {
    case UnitKind::kChip:
      return "chip";
    case UnitKind::kCore:
      return "core";
    case UnitKind::kNic:
      return "nic";
    case UnitKind::kHbm:
      return "hbm";
    case UnitKind::kVector:
      return "vector";
    case UnitKind::kHost:
      return "host";
  }
  return "?";
}

const char* ToString(Phase phase) {
  switch (phase) {
    case Phase::kOp:
      return "op";
    case Phase::kLaunch:
      return "launch";
    case Phase::kSync:
      return "sync";
    case Phase::kTransfer:
      return "transfer";
    case Phase::kCompute:
      return "compute";
    case Phase::kHost:
      return "host";
    case Phase::kInterference:
      return "interference";
    case Phase::kQueue:
      return "queue";
  }
  return "?";
}

const char* ToString(ResourceKind kind) {
  switch (kind) {
    case ResourceKind::kHbm:
      return "hbm";
    case ResourceKind::kLink:
      return "link";
    case ResourceKind::kDma:
      return "dma";
    case ResourceKind::kOther:
      return "other";
  }
  return "?";
}

size_t TimelineBudget::NewCapacity(size_t capacity, size_t element_bytes) {
  if (exhausted_) return 0;
  // Doubling, as std::vector would: growing by less would not lower the peak of the copy (the
  // old elements twice) and would copy more often.
  const size_t grow = capacity == 0 ? 1024 : capacity;
  if (max_bytes_ - committed_bytes_ < static_cast<int64_t>(grow * element_bytes)) {
    exhausted_ = true;
    return 0;
  }
  return capacity + grow;
}

}  // namespace meshsim::core
