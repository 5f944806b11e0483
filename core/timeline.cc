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

}  // namespace meshsim::core
