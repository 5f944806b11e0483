#include "algorithms/pipeline/pipeline.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status_macros.h"

namespace meshsim::algorithms::pipeline {

namespace {

namespace rs = reshard;
using workloads::LayerShape;

bool SameShape(const LayerShape& a, const LayerShape& b) {
  return a.batch == b.batch && a.seq == b.seq && a.hidden == b.hidden && a.heads == b.heads &&
         a.ffn_dim() == b.ffn_dim() && a.element_bytes == b.element_bytes;
}

double Flops(const LayerShape& s) { return workloads::LayerFlops(s.batch, s.seq, s.hidden); }

// Layers per stage (banner): L/S for identical layers, else the contiguous split whose largest
// stage has the fewest flops (dynamic programming over prefixes, O(S·L²)).
absl::StatusOr<std::vector<int>> SplitLayers(const workloads::LayerStack& stack, int stages) {
  const int n = static_cast<int>(stack.layers.size());
  if (stages < 1 || stages > n) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--stages: %d is not allowed; it must be between 1 and the model's %d layers", stages, n));
  }
  const bool uniform = stack.skips.empty() && std::all_of(stack.layers.begin(), stack.layers.end(),
                                                          [&](const LayerShape& s) {
                                                            return SameShape(s, stack.layers[0]);
                                                          });
  if (uniform) {
    if (n % stages != 0) {
      std::vector<int> divisors;
      for (int d = 1; d <= n; ++d) {
        if (n % d == 0) divisors.push_back(d);
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "--stages: %d is not allowed; it must divide the model's %d layers (allowed: %s)", stages,
          n, absl::StrJoin(divisors, ", ")));
    }
    return std::vector<int>(stages, n / stages);
  }
  std::vector<double> prefix(n + 1, 0);
  for (int l = 0; l < n; ++l) prefix[l + 1] = prefix[l] + Flops(stack.layers[l]);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[k][j]: the smallest largest stage when the first j layers form k stages.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<int>> cut(stages + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k) {
    for (int j = k; j <= n; ++j) {
      for (int i = k - 1; i < j; ++i) {
        const double v = std::max(best[k - 1][i], prefix[j] - prefix[i]);
        if (v < best[k][j]) {
          best[k][j] = v;
          cut[k][j] = i;
        }
      }
    }
  }
  std::vector<int> layers(stages);
  for (int k = stages, j = n; k >= 1; --k) {
    layers[k - 1] = j - cut[k][j];
    j = cut[k][j];
  }
  return layers;
}

// The activations' spec on the stage's mesh (banner): the plugin's spec on one replica, with
// the batch split over the D replicas of a D × R·C mesh. The R×C operator mesh becomes the
// second dimension (local index r·C + c), so a plugin axis survives only when it splits over
// every chip of the replica (columns of a one-row mesh, rows of a one-column mesh, or both
// axes); an axis of one chip splits nothing. None when an axis splits over a part of the
// replica: the stage then sends one message per replica.
absl::StatusOr<std::optional<std::string>> StageSpec(const std::string& replica_spec,
                                                     const Mesh& op, int dp) {
  if (dp == 1) return replica_spec;
  MESHSIM_ASSIGN_OR_RETURN(rs::ShardingSpec spec, rs::ParseSpec(replica_spec, 3));
  for (rs::DimSharding& d : spec.dims) {
    const int shards = rs::NumShards(d, op);
    if (shards == 1) {
      d = rs::DimSharding::kReplicated;  // An axis of one chip splits nothing.
    } else if (shards == op.chips()) {
      d = rs::DimSharding::kCols;  // Rows of R×1, columns of 1×C, or both: the local index.
    } else {
      return std::nullopt;
    }
  }
  rs::DimSharding& batch = spec.dims[0];
  batch = batch == rs::DimSharding::kReplicated ? rs::DimSharding::kRows : rs::DimSharding::kBoth;
  return spec.ToString();
}

// Bytes one device of `t` holds of a tensor of `bytes`: one shard of every split dimension.
int64_t BytesPerDevice(int64_t bytes, const rs::ShardedTensor& t) {
  int64_t shards = 1;
  for (rs::DimSharding d : t.spec.dims) shards *= rs::NumShards(d, t.mesh);
  return (bytes + shards - 1) / shards;
}

LayerShape ReplicaShape(LayerShape s, int dp) {
  s.batch /= dp;
  return s;
}

// Backward-weight delaying delays "the least to cover all communications" (§4): the fewest of
// the stage's first layers whose weight-gradient GeMMs — 2·T·P flops for P parameters and T
// tokens of a replica, over its R·C chips at `flops_per_s` — last as long as the gradients the
// stage sends back take by the resharding scheduler's estimate (its makespan per message).
// Without a rate, every layer's are delayed.
int DelayedLayers(const PipelineProblem& p, const PipelinePlan& plan, int stage) {
  const StagePlan& st = plan.stages[stage];
  if (p.flops_per_s <= 0) return st.layers;
  double send_s = 0;
  for (const Message& m : plan.messages) {
    // Replicas send at once: one replica's messages stand for them all.
    if (m.to == stage && m.replica <= 0) send_s += m.bwd.schedule.makespan_s;
  }
  if (send_s <= 0) return 0;
  double covered = 0;
  for (int k = 0; k < st.layers; ++k) {
    const LayerShape r = ReplicaShape(p.stack.layers[st.first_layer + k], p.dp);
    covered += 2.0 * r.tokens() * workloads::LayerParameters(r) / p.op_mesh.chips() / p.flops_per_s;
    if (covered >= send_s) return k + 1;
  }
  return st.layers;
}

// The step against --microbatches and --dp.
absl::Status CheckPipelineShape(const PipelineProblem& p) {
  if (p.microbatches < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--microbatches: %d is not allowed; it must be at least 1", p.microbatches));
  }
  if (p.stack.layers.empty()) return absl::InvalidArgumentError("--layers: the model has none");
  const int64_t batch = p.stack.layers[0].batch;
  if (p.dp < 1 || batch % p.dp != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--dp: %d is not allowed; it must divide the microbatch of %d sequences (--batch / "
        "--microbatches)",
        p.dp, batch));
  }
  return absl::OkStatus();
}

// The layer plugin's preconditions, once per distinct layer shape of a replica.
absl::Status CheckLayerShapes(const PipelineProblem& p, const LayerAlgorithm& op,
                              const Mesh& probe) {
  std::vector<LayerShape> checked;
  for (size_t l = 0; l < p.stack.layers.size(); ++l) {
    const LayerShape s = ReplicaShape(p.stack.layers[l], p.dp);
    if (std::any_of(checked.begin(), checked.end(),
                    [&](const LayerShape& c) { return SameShape(c, s); })) {
      continue;
    }
    checked.push_back(s);
    if (absl::Status st = op.Check(LayerProblem{s, p.chunks, LayerPart::kAll}, probe); !st.ok()) {
      return absl::InvalidArgumentError(p.stack.layers.size() > 1
                                            ? absl::StrCat("layer ", l, ": ", st.message())
                                            : std::string(st.message()));
    }
  }
  return absl::OkStatus();
}

// Stage i's chips: its dp replicas of the op mesh, consecutive, and the stage mesh over them.
absl::Status PlaceStage(const PipelineProblem& p, int i, StagePlan& st) {
  const int rc = p.op_mesh.chips();
  const int per_stage = p.dp * rc;
  std::vector<core::ChipId> all;
  for (int d = 0; d < p.dp; ++d) {
    std::vector<core::ChipId> chips;
    for (int k = 0; k < rc; ++k) chips.push_back(core::ChipId(i * per_stage + d * rc + k));
    all.insert(all.end(), chips.begin(), chips.end());
    MESHSIM_ASSIGN_OR_RETURN(Mesh m,
                             Mesh::Placed(p.op_mesh.rows, p.op_mesh.cols, std::move(chips)));
    st.replicas.push_back(std::move(m));
  }
  if (p.dp == 1) {
    st.mesh = st.replicas[0];
  } else {
    MESHSIM_ASSIGN_OR_RETURN(st.mesh, Mesh::Placed(p.dp, rc, all));
  }
  return absl::OkStatus();
}

// A stage's flops per microbatch and HBM per chip: weights with their training state, the
// activations saved for the backward pass (inputs only with recomputation, which then needs the
// largest layer's saved activations as workspace).
void AddStageWork(const PipelineProblem& p, StagePlan& st) {
  const int rc = p.op_mesh.chips();
  int64_t params = 0, saved = 0, workspace = 0;
  for (int l = st.first_layer; l < st.first_layer + st.layers; ++l) {
    const LayerShape& s = p.stack.layers[l];
    const LayerShape r = ReplicaShape(s, p.dp);
    params += workloads::LayerParameters(s);
    saved += p.recompute ? workloads::ActivationBytes(r) : workloads::SavedActivationBytes(r);
    if (p.recompute) workspace = std::max(workspace, workloads::SavedActivationBytes(r));
    st.flops_per_microbatch += Flops(s);
  }
  st.weight_bytes_per_chip = params * workloads::kTrainingBytesPerParameter / rc;
  st.activation_bytes_per_chip = saved / rc;
  st.workspace_bytes_per_chip = workspace / rc;
}

// Messages: each stage boundary, then every skip connection that crosses stages, each with its
// forward and backward resharding plans.
absl::Status PlanMessages(const PipelineProblem& p, const rs::HostModel& hosts,
                          PipelinePlan& plan) {
  const auto stage_of = [&](int layer) {
    int i = 0;
    while (plan.stages[i].first_layer + plan.stages[i].layers <= layer) ++i;
    return i;
  };
  std::vector<std::pair<int, int>> sends;  // (producing layer, consuming layer)
  for (int i = 0; i + 1 < p.stages; ++i) {
    sends.push_back(
        {plan.stages[i].first_layer + plan.stages[i].layers - 1, plan.stages[i + 1].first_layer});
  }
  for (const workloads::Skip& s : p.stack.skips) {
    if (stage_of(s.from) != stage_of(s.to)) sends.push_back({s.from, s.to});
  }
  for (const auto& [layer, consumer] : sends) {
    const int to = stage_of(consumer);
    const int from = stage_of(layer);
    const StagePlan& a = plan.stages[from];
    const StagePlan& b = plan.stages[to];
    // One message over the stage meshes, or one per replica (banner).
    const bool per_replica = !a.replica_spec.empty();
    for (int d = per_replica ? 0 : -1; d < (per_replica ? p.dp : 0); ++d) {
      Message m;
      m.from = from;
      m.to = to;
      m.layer = layer;
      m.consumer = consumer;
      m.replica = d;
      const LayerShape s =
          per_replica ? ReplicaShape(p.stack.layers[layer], p.dp) : p.stack.layers[layer];
      MESHSIM_ASSIGN_OR_RETURN(rs::ShardingSpec sa,
                               rs::ParseSpec(per_replica ? a.replica_spec : a.spec, 3));
      MESHSIM_ASSIGN_OR_RETURN(rs::ShardingSpec sb,
                               rs::ParseSpec(per_replica ? b.replica_spec : b.spec, 3));
      const Mesh& ma = per_replica ? a.replicas[d] : a.mesh;
      const Mesh& mb = per_replica ? b.replicas[d] : b.mesh;
      m.fwd_problem = {{s.batch, s.seq, s.hidden}, s.element_bytes, {ma, sa}, {mb, sb}};
      m.bwd_problem = {{s.batch, s.seq, s.hidden}, s.element_bytes, {mb, sb}, {ma, sa}};
      MESHSIM_RETURN_IF_ERROR(rs::CheckProblem(m.fwd_problem));
      m.fwd = rs::PlanReshard(m.fwd_problem, p.reshard, hosts);
      m.bwd = rs::PlanReshard(m.bwd_problem, p.reshard, hosts);
      // The receiving stage keeps its copy of the activation for the backward pass (every
      // replica alike: counted once).
      if (d <= 0) {
        plan.stages[m.to].activation_bytes_per_chip +=
            BytesPerDevice(workloads::ActivationBytes(s), m.fwd_problem.dst);
      }
      plan.messages.push_back(std::move(m));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PipelinePlan> PlanPipeline(const PipelineProblem& p, const LayerAlgorithm& op,
                                          const rs::HostModel& hosts) {
  PipelinePlan plan;
  plan.problem = p;
  MESHSIM_RETURN_IF_ERROR(CheckPipelineShape(p));
  MESHSIM_ASSIGN_OR_RETURN(const std::vector<int> split, SplitLayers(p.stack, p.stages));
  plan.chips = p.stages * p.dp * p.op_mesh.chips();
  if (hosts.host_of_chip.size() < static_cast<size_t>(plan.chips)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--chips: %d is not allowed; --stages %d x --dp %d x --mesh %s need %d chips",
        static_cast<int>(hosts.host_of_chip.size()), p.stages, p.dp, p.op_mesh.ToString(),
        plan.chips));
  }
  const Mesh probe{p.op_mesh.rows, p.op_mesh.cols};
  MESHSIM_RETURN_IF_ERROR(CheckLayerShapes(p, op, probe));
  MESHSIM_ASSIGN_OR_RETURN(const std::string replica_spec, op.BoundarySpec(probe));

  int first = 0;
  for (int i = 0; i < p.stages; ++i) {
    StagePlan st;
    st.first_layer = first;
    st.layers = split[i];
    first += split[i];
    MESHSIM_RETURN_IF_ERROR(PlaceStage(p, i, st));
    MESHSIM_ASSIGN_OR_RETURN(const std::optional<std::string> spec,
                             StageSpec(replica_spec, p.op_mesh, p.dp));
    if (spec.has_value()) {
      st.spec = *spec;
    } else {
      st.replica_spec = replica_spec;  // Per-replica messages (banner).
    }
    st.order = StageOrder(p.schedule, p.stages, i, p.microbatches);
    st.in_flight = MaxInFlight(st.order);
    AddStageWork(p, st);
    plan.stages.push_back(std::move(st));
  }
  MESHSIM_RETURN_IF_ERROR(PlanMessages(p, hosts, plan));
  if (p.delay_weight_grads) {
    for (int i = 0; i < p.stages; ++i) {
      plan.stages[i].delayed_layers = DelayedLayers(p, plan, i);
    }
  }
  return plan;
}

namespace {

// Lowers one step (the banner's "Step").
class StepLowering {
 public:
  StepLowering(const PipelinePlan& plan, const LayerAlgorithm& op, const rs::HostModel& hosts,
               core::OpGraph& graph)
      : plan_(plan),
        p_(plan.problem),
        op_(op),
        hosts_(hosts),
        graph_(graph),
        rc_(p_.op_mesh.chips()),
        per_stage_(p_.dp * rc_),
        recv_name_(graph.Intern("pipeline.recv")),
        allreduce_name_(graph.Intern("dp.allreduce")) {
    for (const StagePlan& s : plan.stages) {
      for (const Mesh& m : s.replicas) {
        ctx_.push_back(LoweringContext{graph, m, p_.stack.layers[0].element_bytes, 0,
                                       std::vector<core::OpId>(plan.chips)});
      }
    }
    const size_t n = plan.messages.size(), mb = p_.microbatches;
    fwd_.assign(n, std::vector<Transit>(mb));
    bwd_.assign(n, std::vector<Transit>(mb));
    done_.assign(plan.stages.size(), 0);
    pending_.resize(plan.stages.size());
    posts_.resize(plan.stages.size());
    for (size_t i = 0; i < plan.stages.size(); ++i) {
      const std::vector<Task>& order = plan.stages[i].order;
      posts_[i].resize(order.size() + 1);
      posts_[i][0] = Snapshot(static_cast<int>(i));
      for (size_t k = 0; k < order.size(); ++k) {
        index_[{static_cast<int>(i), order[k].forward, order[k].microbatch}] = k;
      }
    }
  }

  absl::Status Run() {
    const int stages = p_.stages;
    std::vector<size_t> next(stages, 0);
    for (;;) {
      bool progress = false, done = true;
      for (int i = 0; i < stages; ++i) {
        const std::vector<Task>& order = plan_.stages[i].order;
        while (next[i] < order.size() && Ready(i, order[next[i]])) {
          MESHSIM_RETURN_IF_ERROR(Lower(i, order[next[i]], next[i] + 1 == order.size()));
          ++next[i];
          done_[i] = next[i];
          posts_[i][next[i]] = Snapshot(i);
          if (p_.paired) LowerMatched();
          progress = true;
        }
        done &= next[i] == order.size();
      }
      if (done) return absl::OkStatus();
      if (!progress) {
        // Orders from schedule.h never get here: a task waits only for messages that earlier
        // tasks of other stages produce.
        std::vector<std::string> stuck;
        for (int i = 0; i < stages; ++i) {
          if (next[i] < plan_.stages[i].order.size()) {
            stuck.push_back(
                absl::StrCat("stage ", i, " at ", plan_.stages[i].order[next[i]].ToString()));
          }
        }
        return absl::InternalError(
            absl::StrCat("pipeline: the schedule deadlocks (", absl::StrJoin(stuck, ", "), ")"));
      }
    }
  }

 private:
  // One message of one microbatch in one direction.
  struct Transit {
    bool produced = false;               // The sending task is lowered; send_after is set.
    bool lowered = false;                // Its transfers are in the graph.
    std::vector<core::OpId> send_after;  // By chip: the sender's frontier after producing it.
    std::vector<std::vector<core::OpId>> received;  // By chip: the ends of its transfers.
  };

  core::OpId& Front(core::ChipId chip) {
    const int c = static_cast<int>(chip.value());
    return ctx_[c / rc_].frontier[c];
  }
  LoweringContext& Ctx(int stage, int replica) { return ctx_[stage * p_.dp + replica]; }

  // Messages a task consumes: forward ones into the stage, or gradients of the ones it sent.
  bool Consumes(int stage, const Task& t, const Message& m) const {
    return t.forward ? m.to == stage : m.from == stage;
  }
  bool Produces(int stage, bool forward, const Message& m) const {
    return forward ? m.from == stage : m.to == stage;
  }
  std::vector<Transit>& Transits(bool forward, size_t m) { return forward ? fwd_[m] : bwd_[m]; }

  // A transit of a message in one direction, for one microbatch.
  struct Key {
    size_t m;
    bool forward;
    int microbatch;
  };

  bool Ready(int stage, const Task& t) {
    for (size_t m = 0; m < plan_.messages.size(); ++m) {
      if (!Consumes(stage, t, plan_.messages[m])) continue;
      const Transit& tr = Transits(t.forward, m)[t.microbatch];
      if (!tr.produced || (p_.paired && !tr.lowered)) return false;
    }
    if (p_.paired) {
      // The stage's previous group: its sends must be matched (lowered) before it goes on.
      for (const Key& k : pending_[stage]) {
        if (!Transits(k.forward, k.m)[k.microbatch].lowered) return false;
      }
    }
    return true;
  }

  // Paired: lowers every produced transit whose receiver has posted its receive, i.e. has
  // finished the task before the one that consumes it (the banner's group order).
  void LowerMatched() {
    for (size_t w = 0; w < waiting_.size();) {
      const Key k = waiting_[w];
      const Message& msg = plan_.messages[k.m];
      const int receiver = k.forward ? msg.to : msg.from;
      const size_t at = index_.at({receiver, k.forward, k.microbatch});
      if (done_[receiver] >= at) {
        LowerTransit(k.m, k.forward, k.microbatch, &posts_[receiver][at]);
        waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(w));
      } else {
        ++w;
      }
    }
  }

  // The stage's frontier by chip (invalid elsewhere).
  std::vector<core::OpId> Snapshot(int stage) {
    std::vector<core::OpId> out(plan_.chips);
    for (int c = stage * per_stage_; c < (stage + 1) * per_stage_; ++c) {
      out[c] = Front(core::ChipId(c));
    }
    return out;
  }

  void LowerTransit(size_t m, bool forward, int microbatch,
                    const std::vector<core::OpId>* posted = nullptr) {
    const Message& msg = plan_.messages[m];
    Transit& t = Transits(forward, m)[microbatch];
    const int sender = forward ? msg.from : msg.to, receiver = forward ? msg.to : msg.from;
    rs::ReshardLink link;
    Queues& q = queues_[{sender, receiver}];
    link.send_last = std::move(q.send_last);
    link.recv_last = std::move(q.recv_last);
    link.send_after = t.send_after;
    if (posted != nullptr) {
      link.recv_after = *posted;
    } else if (!p_.overlap) {
      link.recv_after = Snapshot(receiver);
    }
    link.tags.stage = static_cast<int16_t>(sender);
    link.tags.microbatch = static_cast<int16_t>(microbatch);
    link.name = absl::StrFormat("reshard.%s.l%d", forward ? "fwd" : "bwd", msg.layer);
    rs::LowerReshard(forward ? msg.fwd_problem : msg.bwd_problem, forward ? msg.fwd : msg.bwd,
                     hosts_, graph_, nullptr, &link);
    t.received = std::move(link.received);
    t.lowered = true;
    q.send_last = std::move(link.send_last);
    q.recv_last = std::move(link.recv_last);
  }

  // The layer of `stage` that reads message m in task t: a forward reads the activation at the
  // message's consumer; a backward reads its gradient where the producing layer's backward runs.
  static int ReadingLayer(const Task& t, const Message& m) {
    return t.forward ? m.consumer : m.layer;
  }
  // The layer of `stage` after whose `forward` or backward pass the message is ready to send.
  static int ProducingLayer(bool forward, const Message& m) {
    return forward ? m.layer : m.consumer;
  }

  // Makes every chip of the stage wait for the transfers the task consumes — all of them at the
  // task's start, or (layer-granular transfers) those that layer `layer` reads, before it.
  void Receive(int stage, const Task& t, int layer = -1) {
    std::vector<const Transit*> in;
    for (size_t m = 0; m < plan_.messages.size(); ++m) {
      if (!Consumes(stage, t, plan_.messages[m])) continue;
      if (layer >= 0 && ReadingLayer(t, plan_.messages[m]) != layer) continue;
      Transit& tr = Transits(t.forward, m)[t.microbatch];
      if (!tr.lowered) LowerTransit(m, t.forward, t.microbatch);
      in.push_back(&tr);
    }
    // Paired: the stage also waits for its previous group's sends to complete.
    std::vector<core::OpId> sent;
    for (const Key& k : pending_[stage]) {
      for (const std::vector<core::OpId>& ends : Transits(k.forward, k.m)[k.microbatch].received) {
        sent.insert(sent.end(), ends.begin(), ends.end());
      }
    }
    pending_[stage].clear();
    for (int c = stage * per_stage_; c < (stage + 1) * per_stage_; ++c) {
      std::vector<core::OpId> deps;
      for (const Transit* tr : in) {
        if (static_cast<size_t>(c) < tr->received.size()) {
          deps.insert(deps.end(), tr->received[c].begin(), tr->received[c].end());
        }
      }
      deps.insert(deps.end(), sent.begin(), sent.end());
      if (deps.empty()) continue;
      const core::ChipId chip(c);
      if (Front(chip).valid()) deps.push_back(Front(chip));
      core::Op join = core::Op::Delay(chip, core::Time::Zero());
      join.tags.name = recv_name_;
      Front(chip) = graph_.Add(join, deps);
    }
  }

  // Records the stage's frontier as the send point of every message the task produces (with
  // `layer` ≥ 0: those ready after that layer's pass), and lowers their transfers at once when
  // they overlap.
  void Send(int stage, bool forward, int microbatch, int layer = -1) {
    std::vector<core::OpId> after;
    for (size_t m = 0; m < plan_.messages.size(); ++m) {
      if (!Produces(stage, forward, plan_.messages[m])) continue;
      if (layer >= 0 && ProducingLayer(forward, plan_.messages[m]) != layer) continue;
      if (after.empty()) after = Snapshot(stage);
      Transit& t = Transits(forward, m)[microbatch];
      t.send_after = after;
      t.produced = true;
      if (p_.paired) {
        // A skip to a non-adjacent stage is matched like any transfer but the sender does not
        // wait for it (banner): blocking on it can deadlock against that stage's own sends.
        const Message& msg = plan_.messages[m];
        if (msg.to == msg.from + 1) pending_[stage].push_back({m, forward, microbatch});
        waiting_.push_back({m, forward, microbatch});
      } else if (p_.overlap) {
        LowerTransit(m, forward, microbatch);
      }
    }
  }

  // Lowers `part` of layers [lo, hi) of the stage, in reverse for the backward parts; each layer's
  // gradients are all-reduced over the replicas right after it when `reduce`.
  absl::Status LowerLayers(int stage, const Task& t, int lo, int hi, LayerPart part, bool reduce) {
    const bool reverse = part != LayerPart::kForward;
    for (int k = 0; k < hi - lo; ++k) {
      MESHSIM_RETURN_IF_ERROR(graph_.CheckSize());  // The op budget, once per layer.
      const int l = reverse ? hi - 1 - k : lo + k;
      // Layer-granular transfers: the layer waits for what it reads (not the weight part:
      // its backward data part already did).
      if (LayerGranular() && part != LayerPart::kBackwardWeight) Receive(stage, t, l);
      const LayerShape shape = ReplicaShape(p_.stack.layers[l], p_.dp);
      // Recomputation re-runs the layer's forward before the first part of its backward.
      const bool again =
          p_.recompute && (part == LayerPart::kBackward || part == LayerPart::kBackwardData);
      for (int d = 0; d < p_.dp; ++d) {
        if (again) {
          MESHSIM_RETURN_IF_ERROR(
              op_.Lower(LayerProblem{shape, p_.chunks, LayerPart::kForward}, Ctx(stage, d)));
        }
        MESHSIM_RETURN_IF_ERROR(op_.Lower(LayerProblem{shape, p_.chunks, part}, Ctx(stage, d)));
      }
      // ... and what it produces goes out as soon as the layer's pass (its data part, when
      // delaying) is done.
      if (LayerGranular() && part != LayerPart::kBackwardWeight) {
        Send(stage, t.forward, t.microbatch, l);
      }
      if (reduce) ReduceGradients(stage, shape);
    }
    return absl::OkStatus();
  }

  // One AllReduce per operator-mesh position over the replicas: the layer's gradients.
  void ReduceGradients(int stage, const LayerShape& shape) {
    const int64_t bytes = workloads::LayerParameters(shape) / rc_ * shape.element_bytes;
    for (int k = 0; k < rc_; ++k) {
      std::vector<core::ChipId> members;
      std::vector<core::OpId> deps;
      for (int d = 0; d < p_.dp; ++d) {
        const core::ChipId chip = Ctx(stage, d).mesh.Chip(k);
        members.push_back(chip);
        if (Front(chip).valid()) deps.push_back(Front(chip));
      }
      core::Op ar =
          core::Op::Collective(core::CollectiveKind::kAllReduce, graph_.AddGroup(members), bytes);
      ar.tags.name = allreduce_name_;
      reductions_.push_back(graph_.Add(ar, deps));
    }
  }

  absl::Status Lower(int stage, const Task& t, bool last) {
    const size_t first = graph_.size();
    if (!LayerGranular()) Receive(stage, t);
    const size_t body = graph_.size();
    const bool reduce = last && p_.dp > 1;
    const StagePlan& st = plan_.stages[stage];
    const int lo = st.first_layer, hi = lo + st.layers, delayed = lo + st.delayed_layers;
    if (t.forward) {
      MESHSIM_RETURN_IF_ERROR(LowerLayers(stage, t, lo, hi, LayerPart::kForward, false));
    } else {
      // Backward-weight delaying: the stage's first `delayed_layers` layers (the last ones the
      // backward reaches) compute their input gradients, the gradient goes out, then their
      // weight gradients overlap the send.
      MESHSIM_RETURN_IF_ERROR(LowerLayers(stage, t, delayed, hi, LayerPart::kBackward, reduce));
      MESHSIM_RETURN_IF_ERROR(LowerLayers(stage, t, lo, delayed, LayerPart::kBackwardData, false));
      if (!LayerGranular()) Send(stage, false, t.microbatch);
      MESHSIM_RETURN_IF_ERROR(
          LowerLayers(stage, t, lo, delayed, LayerPart::kBackwardWeight, reduce));
    }
    // Tag what the task lowered: the receive joins and the layers' ops (transfers lowered in
    // Receive or Send carry their own tags).
    for (size_t id = first; id < graph_.size(); ++id) {
      core::OpTags& tags = graph_.mutable_tags(core::OpId(static_cast<uint32_t>(id)));
      if (id >= body || tags.name == recv_name_) {
        if (tags.stage < 0) {
          tags.stage = static_cast<int16_t>(stage);
          tags.microbatch = static_cast<int16_t>(t.microbatch);
          tags.task = t.forward ? 1 : 2;
        }
      }
    }
    for (core::OpId id : reductions_) {
      graph_.mutable_tags(id).microbatch = -1;
      graph_.mutable_tags(id).task = 0;
    }
    reductions_.clear();
    if (t.forward && !LayerGranular()) Send(stage, true, t.microbatch);
    return absl::OkStatus();
  }

  // Transfers at the granularity of layers (the overlapped asynchronous runtime, MLSys'23 §5.3's
  // "Overlap"): a message goes out when the layer that produces it has run, and the layer that
  // reads it waits for it — not the whole task. Otherwise (paired send/recv, or receives posted
  // where the receiving stage reaches the task) at the granularity of tasks.
  bool LayerGranular() const { return !p_.paired && p_.overlap; }

  const PipelinePlan& plan_;
  const PipelineProblem& p_;
  const LayerAlgorithm& op_;
  const rs::HostModel& hosts_;
  core::OpGraph& graph_;
  const int rc_, per_stage_;
  const core::NameId recv_name_, allreduce_name_;
  std::vector<LoweringContext> ctx_;             // By stage · D + replica.
  std::vector<std::vector<Transit>> fwd_, bwd_;  // [message][microbatch]
  std::vector<core::OpId> reductions_;           // The current task's gradient AllReduces.
  // Per (sending stage, receiving stage): per host, the last transfer task it sent / received
  // in, over the whole step (reshard.h's per-host order; one stream per stage pair).
  struct Queues {
    std::map<int, core::OpId> send_last, recv_last;
  };
  std::map<std::pair<int, int>, Queues> queues_;
  // Paired (banner): tasks lowered per stage; per stage and task index, the stage's frontier
  // where that task's receives are posted (the end of the task before); the sends of each
  // stage's last task; the produced transits still waiting for their receive; the index of
  // (stage, forward, microbatch) in the stage's order.
  std::vector<size_t> done_;
  std::vector<std::vector<std::vector<core::OpId>>> posts_;
  std::vector<std::vector<Key>> pending_;
  std::vector<Key> waiting_;
  std::map<std::tuple<int, bool, int>, size_t> index_;
};

}  // namespace

absl::Status LowerPipeline(const PipelinePlan& plan, const LayerAlgorithm& op,
                           const rs::HostModel& hosts, core::OpGraph& graph) {
  return StepLowering(plan, op, hosts, graph).Run();
}

double StepFlops(const PipelineProblem& p) {
  double flops = 0;
  for (const LayerShape& s : p.stack.layers) flops += Flops(s);
  return flops * p.microbatches;
}

}  // namespace meshsim::algorithms::pipeline
