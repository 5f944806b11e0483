// The registry of algorithm plugins: one explicit list (builtin.cc: one line per plugin, naming
// the function in the plugin's own file that returns its AlgorithmInfo; no static
// self-registration), so that what `meshsim list algorithms` prints is exactly what exists. The
// registry checks every entry's typed parameters once (ParamValues::Defaults) and resolves the
// values a run gives them.
//
// Example:
//   MESHSIM_ASSIGN_OR_RETURN(const AlgorithmInfo* info, FindAlgorithm("atp"));
//   MESHSIM_ASSIGN_OR_RETURN(core::ParamValues params,
//                            ResolveParams(*info, {{"chunks", "2", "--param chunks"}}));
//   std::unique_ptr<LayerAlgorithm> atp = info->make_layer(params);
#ifndef MESHSIM_ALGORITHMS_REGISTRY_H_
#define MESHSIM_ALGORITHMS_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "algorithms/algorithm.h"
#include "core/params.h"

namespace meshsim::algorithms {

// Every built-in algorithm, in display order.
const std::vector<AlgorithmInfo>& Algorithms();

// NotFound naming the known algorithms when `name` is not one of them.
absl::StatusOr<const AlgorithmInfo*> FindAlgorithm(const std::string& name);

// The names of the algorithms that declare parameter `key`, in display order.
std::vector<std::string> AlgorithmsDeclaring(const std::string& key);

// A value given for a plugin parameter: its key, its text, and how the user named it
// ("--chunks", "--param chunks"), for messages.
struct ParamGiven {
  std::string key;
  std::string text;
  std::string name;
};

// The plugin's parameters at their defaults with `given` applied in order. InvalidArgument, one
// line naming the key, the value and what is allowed, for a value its spec refuses or a key the
// plugin does not declare ("--param chunks: '2' does not apply to --algorithm meshslice; it is
// read by --algorithm atp, megatron"; an unknown key lists the plugin's parameters).
absl::StatusOr<core::ParamValues> ResolveParams(const AlgorithmInfo& info,
                                                const std::vector<ParamGiven>& given);

// The entries of `list` with their parameters checked (ParamValues::Defaults) and their
// factories' defaults set; InvalidArgument naming the plugin and the parameter otherwise, or a
// repeated name. Algorithms() is this over builtin.cc's list, and fails hard on an error.
absl::StatusOr<std::vector<AlgorithmInfo>> CheckedRegistry(std::vector<AlgorithmInfo> list);

// builtin.cc: the built-in plugins' entries, unchecked.
std::vector<AlgorithmInfo> BuiltinAlgorithms();

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_REGISTRY_H_
