// The workloads `meshsim run --workload` simulates, each declared once: its name, what it
// simulates, and the run options it reads besides those every run reads. The declarations are
// what refuses an option a run's workload does not read (NotReadBy in options.h: "--bytes: '1MiB'
// does not apply to --workload gemm; it is read by --workload collective") and what `meshsim list
// workloads` prints, so a new workload's options are refused elsewhere and documented by the one
// entry that declares them. Each entry also names the workload's plugin (sim/workload.h): a new
// workload is its file in sim/workloads/ and its line here (docs/plugins.md).
//
// Example:
//   for (const WorkloadInfo& w : WorkloadRegistry()) std::cout << w.name << ": " << w.summary;
//   WorkloadsReading("bytes");  // {"collective"}
//   WorkloadsReading("chips");  // {}: every workload reads it
#ifndef MESHSIM_SIM_WORKLOAD_REGISTRY_H_
#define MESHSIM_SIM_WORKLOAD_REGISTRY_H_

#include <string>
#include <vector>

#include "core/params.h"

namespace meshsim::sim {

class Workload;  // sim/workload.h

struct WorkloadInfo {
  std::string name;                // --workload NAME
  std::string summary;             // One line: what one run of it simulates.
  std::vector<std::string> reads;  // Options it reads that not every workload reads.
  const Workload& (*plugin)();     // The plugin (sim/workloads/NAME.cc).
  // The options of `reads` that are values of this workload's own, typed (type, unit, range or
  // values, default): what `list workloads` prints, the ranges and values ResolveRunOptions
  // checks them against (WorkloadParam), and keys --param takes (`--param stages=4` is `--stages
  // 4`). Options a workload requires (--bytes, --collective, --gemm) have no default and are
  // declared by `reads` only.
  std::vector<core::ParamSpec> params = {};
};

// Every workload, in the order `list workloads` and messages name them.
const std::vector<WorkloadInfo>& WorkloadRegistry();

// The workload called `name`, or null.
const WorkloadInfo* FindWorkload(const std::string& name);

// The metrics workload `name`'s plugin reports beyond every run's (Workload::ReportedMetrics);
// empty for an unknown name (an archive of another meshsim).
std::vector<std::string> ReportedMetricsOf(const std::string& name);

// The names of the workloads whose plugin answers true to `rule` (a Workload member such as
// PerFcLayerLists), in registry order: what messages name as the workloads that allow something.
std::vector<std::string> WorkloadsWhere(bool (Workload::*rule)() const);

// The typed declaration of workload option `key` (WorkloadInfo::params of the first workload
// declaring it), or null.
const core::ParamSpec* WorkloadParam(const std::string& key);

// The names of the workloads that declare `key`, in registry order; empty when no workload
// declares it, i.e. every workload reads it (--chips, --system, --out, ...).
std::vector<std::string> WorkloadsReading(const std::string& key);

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_WORKLOAD_REGISTRY_H_
