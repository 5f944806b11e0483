// One training step of a model split into pipeline stages on disjoint placed meshes, with data
// (DP), operator (OP) and pipeline (PP) parallelism and cross-mesh resharding between stages
// (MLSys'23 §4–§5: "parallel config (DP, OP, PP)", Table 3).
//
// Placement. With S stages, DP degree D and an R×C operator mesh, stage i owns the n = D·R·C
// chips i·n … (i+1)·n − 1: replica d of the stage is the R×C mesh on chips i·n + d·R·C + k
// (row-major), and runs the stage's layers with the layer plugin (layer_algorithm.h) on
// microbatch/D sequences. On a hierarchical machine consecutive chips share a host, so a stage
// of one host's GPUs talks to the next stage over the NICs, as in the paper's 2-node setup.
//
// Stages. Layers are split into S consecutive groups: L/S each for a stack of identical layers
// (S must divide L), otherwise (the U-Transformer) the contiguous split with the smallest
// largest stage in Megatron flops (the paper "balances pipeline stages with respect to FLOPs").
//
// Messages. A microbatch's activation [b, s, h] leaving the last layer of stage i is resharded
// onto stage i + 1, and the output of layer a feeds layer c of another stage for every skip
// connection (a, c) (workloads/stack.h); in the backward pass each message's gradient goes the
// other way. A message's sharding on a stage is the plugin's BoundarySpec on the replica's mesh,
// with the batch split over replicas: on the D × R·C mesh of the stage's chips (dimension 0 =
// replica) "RRS1" on a 1×C operator mesh becomes "S0RS1"; with D = 1 the stage's mesh is the
// operator mesh itself. When the replica's spec is no spec of that D × R·C mesh (an R×C mesh
// with R, C > 1 splits an axis over a part of the replica: MeshSlice's "S0RS1"), the message
// is D messages instead, one per replica, each from replica d of one stage to replica d of the
// other on their R×C meshes with the replica's spec and microbatch/D sequences: replica d of
// both stages holds the same sequences, so no data crosses replicas either way, and each
// replica's chips wait only for their own transfers. Each message is planned once (reshard.h:
// strategy and scheduler) and lowered once per microbatch.
//
// Step. Each stage runs its schedule's task order (schedule.h). A forward task lowers, per
// replica, every layer's forward (LayerPart::kForward) after the stage's previous task; a
// backward task every layer's backward in reverse order (kBackward). Backward-weight delaying
// (§4) "delays the least to cover all communications": the stage's first k layers — the last
// the backward reaches — run their data part (kBackwardData), the gradient is sent, and then
// their weight part (kBackwardWeight) overlaps the send; k is the fewest layers whose dW GeMMs
// (2·T·P flops at the chip's peak rate) last as long as the resharding scheduler's estimate of
// the stage's gradient sends. Splitting a layer costs the plugin's own overlap of dW with dX's
// communication (ATP §4.2), which is why delaying every layer is not free.
//   • overlap on (the paper's "Overlap"): layer-granular transfers — a message leaves as soon
//     as the layer that produces it has run (a skip's source layer in the forward; in the
//     backward, the data part of the layer that read it), the receive being posted ahead, and
//     only the layer that reads it waits for it (the skip's target layer; in the backward, the
//     producing layer's backward), so a skip moves while both stages compute;
//   • overlap off: task-granular — a message's transfers start when the sending stage finished
//     the task that produced it (its backward data part, when delaying), and not before the
//     receiving stage has finished the task before the one that consumes it (the receive is an
//     instruction in its stream); the task starts after the messages it consumes arrived.
// Senders never wait for their sends (buffered, as NCCL's asynchronous sends), so no order
// deadlocks ("async", the idealized runtime; `overlap` applies to it only).
//
// Paired (stack p2p = "paired"; `paired`): NCCL send/recv as Megatron's p2p_communication and
// Alpa's runtime issue them. A transfer is a matched pair: it starts only when the sender has
// reached its send and the receiver its receive, each in its own program order, and neither
// stream continues before it completes. Order (Megatron's 1F1B, send_forward_recv_backward /
// send_backward_recv_forward): when a task ends, the stage posts in one group the sends of
// what it produced and the receives of what its next task consumes; the group's transfers
// start as their peers post theirs, and the stage's next task starts when the whole group is
// done. In op-graph terms a transfer depends on the sender's op before the send and the
// receiver's op before its receive, and the next op of each stream depends on the transfer.
// With backward-weight delaying the gradient's send starts after the data part and the group's
// wait is at the task's end (the dW kernels are already in the stream). Posting a task's
// receives with the previous task's sends keeps GPipe, 1F1B and eager-1F1B deadlock-free
// between adjacent stages. A skip to a non-adjacent stage (U-Transformer) is matched the same
// way (it starts when both have posted, and its receiver waits for it) but its sender does not
// wait for it: blocking there deadlocks eager-1F1B and 1F1B from 3 stages (stage 0 blocked on a
// skip to stage 2's F_j while stage 2 is blocked on its gradient to stage 0's B_0). `overlap`
// has no effect under paired: the receive is where the receiver's program posts it. The lowering
// reports a deadlock (InternalError) if an order ever blocks. The transfers from one stage to
// another run one at a time per host in the order they are issued (a communication stream per stage
// pair: reshard.h's per-host order kept across the step), so a transfer needed now does not share
// the NIC with the same pair's transfers needed later; transfers of different pairs (activations
// in, gradients back) run concurrently and share the links. With D > 1, once a stage's last
// backward has produced a layer's weight gradients, one AllReduce per operator-mesh position over
// the D replicas (the layer's parameters / (R·C), element bytes each) starts and overlaps the rest
// of the backward (gradient accumulation over the microbatches, one reduction per step).
//
// Tags: every op of stage i's task for microbatch j carries stage = i, microbatch = j; the
// transfers of a message carry the sending stage and j (names "reshard.fwd.l<a>.task<k>.…" and
// "reshard.bwd.l<a>…" for the output of layer a); the gradient AllReduces stage = i,
// microbatch = −1 ("dp.allreduce").
//
// Memory per chip of stage i (reported; sim/ fails a run above HBM capacity): the stage's
// parameters / (R·C) × 16 bytes (workloads/stack.h) plus, for each of the w_i microbatches in
// flight (schedule.h), the saved activations of its layers / (R·C) and the messages it received
// (one copy each). The operator split of activations is the ideal one (no replicated tensors).
// With recomputation a layer saves only its input [b, s, h], and the backward holds one layer's
// saved activations at a time (workspace); the backward task lowers each layer's forward again
// (LayerPart::kForward) right before that layer's backward.
//
// Example:
//   PipelineProblem p{.stack = stack, .stages = 2, .dp = 2, .microbatches = 8,
//                     .op_mesh = Mesh{2, 1}, .schedule = ScheduleKind::kEager1F1B};
//   MESHSIM_ASSIGN_OR_RETURN(PipelinePlan plan, PlanPipeline(p, *megatron, hosts));
//   MESHSIM_RETURN_IF_ERROR(LowerPipeline(plan, *megatron, hosts, graph));
#ifndef MESHSIM_ALGORITHMS_PIPELINE_PIPELINE_H_
#define MESHSIM_ALGORITHMS_PIPELINE_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "algorithms/layer_algorithm.h"
#include "algorithms/mesh.h"
#include "algorithms/pipeline/schedule.h"
#include "algorithms/reshard/reshard.h"
#include "core/op_graph.h"
#include "workloads/stack.h"

namespace meshsim::algorithms::pipeline {

struct PipelineProblem {
  workloads::LayerStack stack;  // Shapes of one microbatch (every replica's sequences).
  int stages = 1;
  int dp = 1;
  int microbatches = 1;
  Mesh op_mesh;  // One replica's operator mesh, unplaced.
  ScheduleKind schedule = ScheduleKind::k1F1B;
  bool overlap = true;
  // Point-to-point semantics (banner, "Paired"): false = async (sends never block), true = NCCL
  // send/recv, matched and blocking on both sides. From the stack's `p2p`.
  bool paired = false;
  bool delay_weight_grads = false;
  // A chip's FLOP rate for the delaying cost model (0: delay every layer's weight gradients).
  double flops_per_s = 0;
  // Activation recomputation (rematerialization): a stage keeps only each layer's input per
  // microbatch and re-runs the layer's forward just before its backward.
  bool recompute = false;
  // Passed to the layer plugin (ATP's chunk-based overlap); 0 = the plugin's own (its `chunks`
  // parameter, as `meshsim run` makes it).
  int chunks = 0;
  reshard::ReshardOptions reshard;
};

struct StagePlan {
  int first_layer = 0;
  int layers = 0;
  std::vector<Mesh> replicas;  // Placed operator meshes, one per DP replica.
  Mesh mesh;                   // Every chip of the stage, as the mesh messages are sharded on.
  std::string spec;            // The activations' spec on `mesh`, e.g. "S0RR".
  // The activations' spec on each replica's mesh when `spec` cannot say it (per-replica
  // messages, the banner's "Messages"); empty otherwise.
  std::string replica_spec;
  std::vector<Task> order;
  int in_flight = 0;       // MaxInFlight(order).
  int delayed_layers = 0;  // Backward-weight delaying: the first layers whose dW wait (banner).
  int64_t weight_bytes_per_chip = 0;      // Parameters × 16 / (R·C).
  int64_t activation_bytes_per_chip = 0;  // Per microbatch in flight (saved + received).
  int64_t workspace_bytes_per_chip = 0;   // Recomputation: one layer's activations at a time.
  double flops_per_microbatch = 0;        // Megatron flops of the stage's layers.
  int64_t peak_bytes_per_chip() const {
    return weight_bytes_per_chip + in_flight * activation_bytes_per_chip + workspace_bytes_per_chip;
  }
};

// A tensor that crosses stages every microbatch: the output of layer `layer` of stage `from`,
// consumed by stage `to` (> from). `fwd` and `bwd` are planned reshards of the activation and of
// its gradient.
struct Message {
  // From stage `from`'s layer `layer` (its output) to stage `to`'s layer `consumer` (the layer
  // that reads it: the next stage's first layer, or a skip connection's target).
  int from = 0, to = 0, layer = 0, consumer = 0;
  int replica = -1;  // The DP replica of both stages it joins; −1: the whole stage meshes.
  reshard::ReshardProblem fwd_problem, bwd_problem;
  reshard::ReshardPlan fwd, bwd;
};

struct PipelinePlan {
  PipelineProblem problem;
  std::vector<StagePlan> stages;
  std::vector<Message> messages;
  int chips = 0;  // Chips the step uses: S·D·R·C.
};

// Checks the problem (stage split, DP split of the microbatch, the plugin on every layer and
// replica mesh, expressible message specs) and plans stages and messages. InvalidArgument with
// one line naming the option, the value and what is allowed.
absl::StatusOr<PipelinePlan> PlanPipeline(const PipelineProblem& p, const LayerAlgorithm& op,
                                          const reshard::HostModel& hosts);

// Appends the step's ops to `graph` (banner). Requires a plan from PlanPipeline with the same
// plugin and hosts. ResourceExhausted (OpGraph::CheckSize) once the graph passes its op
// budget, checked before each layer.
absl::Status LowerPipeline(const PipelinePlan& plan, const LayerAlgorithm& op,
                           const reshard::HostModel& hosts, core::OpGraph& graph);

// Megatron flops of one step: Σ over layers of LayerFlops(b, s, h) (workloads/layer.h) for the
// microbatch's shapes, times the microbatches.
double StepFlops(const PipelineProblem& p);

}  // namespace meshsim::algorithms::pipeline

#endif  // MESHSIM_ALGORITHMS_PIPELINE_PIPELINE_H_
