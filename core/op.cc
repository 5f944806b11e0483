#include "core/op.h"

namespace meshsim::core {

const char* ToString(OpKind kind) {
  switch (kind) {
    case OpKind::kDelay:
      return "delay";
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kCopy:
      return "copy";
    case OpKind::kVector:
      return "vector";
    case OpKind::kTransfer:
      return "transfer";
    case OpKind::kCollective:
      return "collective";
  }
  return "?";
}

const char* ToString(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kNone:
      return "none";
    case CollectiveKind::kAllGather:
      return "allgather";
    case CollectiveKind::kReduceScatter:
      return "reducescatter";
    case CollectiveKind::kAllReduce:
      return "allreduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kSendRecv:
      return "sendrecv";
    case CollectiveKind::kAllToAll:
      return "alltoall";
  }
  return "?";
}

const char* ToString(Pass pass) {
  switch (pass) {
    case Pass::kNone:
      return "none";
    case Pass::kFwd:
      return "fwd";
    case Pass::kBwdData:
      return "bwd-data";
    case Pass::kBwdWeight:
      return "bwd-weight";
  }
  return "?";
}

Op Op::Delay(ChipId chip, Time duration) {
  Op op;
  op.kind = OpKind::kDelay;
  op.chip = chip;
  op.m = duration.ps();
  return op;
}

Op Op::Gemm(ChipId chip, int64_t m, int64_t n, int64_t k) {
  Op op;
  op.kind = OpKind::kGemm;
  op.chip = chip;
  op.m = m;
  op.n = n;
  op.k = k;
  return op;
}

Op Op::Copy(ChipId chip, int64_t bytes) {
  Op op;
  op.kind = OpKind::kCopy;
  op.chip = chip;
  op.bytes = bytes;
  return op;
}

Op Op::Transfer(ChipId from, ChipId to, int64_t bytes) {
  Op op;
  op.kind = OpKind::kTransfer;
  op.chip = from;
  op.peer = to;
  op.bytes = bytes;
  return op;
}

Op Op::Collective(CollectiveKind kind, GroupId group, int64_t bytes) {
  Op op;
  op.kind = OpKind::kCollective;
  op.collective = kind;
  op.group = group;
  op.bytes = bytes;
  return op;
}

}  // namespace meshsim::core
