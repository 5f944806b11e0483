// Cross-mesh resharding, part 3: strategies — a scheduled set of unit tasks lowered into ops on
// the placed sender and receiver meshes of one machine (MLSys'23 §3.1, Figure 3).
//
// Per unit task i (spec.h) with chosen sender device s (scheduler.h) and receivers M_i on A hosts
// of B_h devices each, with t = |DS_i| / inter-host bandwidth:
//   send-recv        one Transfer of |DS_i| from s to every receiver.          T^sr   = A·B·t
//   local-allgather  (Alpa) per receiver host: |DS_i|/B_h to each of its B_h devices, then an
//                    AllGather of |DS_i|/B_h on them (one host: NVLink).       T^srla = A·t
//                    Alpa cannot split unevenly: when no dimension of the tile divides by B_h the
//                    host falls back to send-recv (the drop at 3 GPUs of Figure 5).
//   global-allgather |DS_i|/N to each of the N = |M_i| receivers, then one ring AllGather of
//                    |DS_i|/N over all of them (hosts contiguous), crossing hosts. T^srga ≈ 2t
//                    (model: t + (N−1)/N·t when A > 1); uneven N falls back to send-recv.
//   broadcast        one pipelined Broadcast (comm.packets packets, the paper's K) on the group
//                    [s, receivers on s's host, then each other host's receivers together], so the
//                    chain crosses each host boundary once.                     T^bc   = t + A·t/K
//                    A task with a single receiver is one Transfer (a two-member broadcast is a
//                    send; the simulator's per-packet stage barriers would only add overhead).
//   signal           1 byte from s to every receiver: keeps the dependencies, drops the data
//                    (§4's "Signal Send/Recv" upper bound).
// Scheduling (§3.2): a task's ops wait for the previous task in the schedule on the same sender
// host and on each of its receiver hosts (per-host execution order), then end in a zero-length
// join; the executor and the network model find the actual times and contention.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(ReshardPlan plan, PlanReshard(problem, options, hosts));
//   MESHSIM_RETURN_IF_ERROR(LowerReshard(problem, plan, hosts, graph, &traffic));
#ifndef MESHSIM_ALGORITHMS_RESHARD_RESHARD_H_
#define MESHSIM_ALGORITHMS_RESHARD_RESHARD_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/reshard/scheduler.h"
#include "algorithms/reshard/spec.h"
#include "core/ids.h"
#include "core/op_graph.h"

namespace meshsim::algorithms::reshard {

enum class Strategy { kSendRecv, kLocalAllGather, kGlobalAllGather, kBroadcast, kSignal };
absl::StatusOr<Strategy> ParseStrategy(const std::string& name);  // InvalidArgument
// "send-recv", "local-allgather", "global-allgather", "broadcast", "signal"
const char* ToString(Strategy s);

// What the scheduler's cost model knows of the machine.
struct HostModel {
  std::vector<int> host_of_chip;           // Per physical chip.
  double inter_host_bytes_per_s = 1.25e9;  // Between hosts (a host's NIC).
  double intra_host_bytes_per_s = 50e9;    // Within a host (NVLink).
  int HostOf(core::ChipId c) const { return host_of_chip[c.value()]; }
};

struct ReshardOptions {
  Strategy strategy = Strategy::kBroadcast;
  SchedulerKind scheduler = SchedulerKind::kEnsemble;
  SchedulerOptions scheduler_options;
};

struct ReshardPlan {
  ReshardOptions options;
  std::vector<UnitTask> tasks;
  std::vector<HostTask> host_tasks;  // Same index as tasks.
  Schedule schedule;
  std::vector<core::ChipId> sender;  // Per task: the sending device.
};

// True when Alpa can split `task`'s tile evenly into b parts (some dimension divides by b).
bool SplitsEvenly(const UnitTask& task, int b);

// Unit tasks, their host-level durations under `options.strategy`, the schedule, and a sender
// device per task (within the chosen host the least-loaded holder; naive: the lowest index).
// Requires CheckProblem(p).ok() and every chip of both meshes in hosts.host_of_chip.
ReshardPlan PlanReshard(const ReshardProblem& p, const ReshardOptions& options,
                        const HostModel& hosts);

// Bytes that cross host boundaries, per host (index = host).
struct HostTraffic {
  std::vector<int64_t> sent, received;
};

// How one resharding fits into a larger program (a pipeline step, algorithms/pipeline/): what
// its ops wait for, how they are tagged, and which ops end it on each receiver.
struct ReshardLink {
  // By physical chip id (a shorter vector or an invalid id = nothing): the op a unit task waits
  // for when that chip sends in it (its copy of the data is ready) or receives in it (the
  // receiving stage has reached the receive).
  std::vector<core::OpId> send_after, recv_after;
  core::OpTags tags;  // Copied onto every op; the name is "<name>.task<i>.<what>".
  std::string name = "reshard";
  // Per host, the end op of the last task that host sent (receive: received) in — the per-host
  // execution order of the banner. Kept across calls, so that reshards lowered one after another
  // also run in that order on each host (one NCCL stream per host), instead of sharing its NIC.
  std::map<int, core::OpId> send_last, recv_last;
  // Filled: by physical chip id, the end ops of the tasks that chip received in.
  std::vector<std::vector<core::OpId>> received;
};

// Appends the plan's ops to `graph` (see the banner). `traffic` (optional) receives the
// inter-host bytes the ops move; `link` (optional) adds dependencies and tags and collects each
// receiver's end ops. Cost O(Σ |receivers|).
void LowerReshard(const ReshardProblem& p, const ReshardPlan& plan, const HostModel& hosts,
                  core::OpGraph& graph, HostTraffic* traffic = nullptr,
                  ReshardLink* link = nullptr);

}  // namespace meshsim::algorithms::reshard

#endif  // MESHSIM_ALGORITHMS_RESHARD_RESHARD_H_
