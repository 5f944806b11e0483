// --workload stream: every chip copies --bytes HBM → HBM at once — a memory-bandwidth
// microbenchmark, and the example of docs/plugins.md's "Adding a workload". Its metric is the
// bandwidth each chip's copy reached, counting the read and the write (as a device-to-device copy
// is measured: docs/measurements/gpu_stack_probe.md).
#include "core/op.h"
#include "core/status_macros.h"
#include "sim/workload.h"

namespace meshsim::sim {
namespace {

class Stream : public Workload {
 public:
  RingMeshes Rings(const RunOptions& o, const RunPlan& plan) const override {
    return {};
  }  // No communication.

  absl::Status Validate(const RunOptions& o) const override {
    if (o.bytes > 0) return absl::OkStatus();
    return absl::InvalidArgumentError("--bytes: required by --workload stream (e.g. --bytes 1GiB)");
  }

  absl::Status Lower(const RunOptions& o, const RunPlan& plan,
                     core::OpGraph& graph) const override {
    const core::NameId name = graph.Intern("stream");
    for (const core::ChipId chip : plan.mesh.All()) {
      core::Op copy = core::Op::Copy(chip, o.bytes);
      copy.tags.name = name;
      graph.Add(copy);
    }
    return absl::OkStatus();
  }

  absl::Status AddMetrics(const RunOptions& o, const RunPlan& plan, double makespan_s,
                          formats::RunRecord& rec) const override {
    rec.metrics.emplace_back("copy_bytes_per_s_per_chip",
                             makespan_s > 0 ? 2.0 * double(o.bytes) / makespan_s : 0.0);
    return Workload::AddMetrics(o, plan, makespan_s, rec);  // model_layers, model_fc_time_s
  }

  std::vector<std::string> ReportedMetrics() const override {
    return {"copy_bytes_per_s_per_chip"};
  }
};

}  // namespace

const Workload& StreamWorkload() {
  static const Stream w;
  return w;
}

}  // namespace meshsim::sim
