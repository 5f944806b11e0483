#include "algorithms/registry.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/check.h"
#include "core/did_you_mean.h"

namespace meshsim::algorithms {

absl::StatusOr<std::vector<AlgorithmInfo>> CheckedRegistry(std::vector<AlgorithmInfo> list) {
  for (size_t i = 0; i < list.size(); ++i) {
    AlgorithmInfo& info = list[i];
    for (size_t j = 0; j < i; ++j) {
      if (list[j].name == info.name) {
        return absl::InvalidArgumentError(
            absl::StrFormat("algorithm '%s' is registered twice", info.name));
      }
    }
    if (static_cast<bool>(info.make) == info.is_layer()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "algorithm '%s': exactly one of make and make_layer must be set", info.name));
    }
    absl::StatusOr<core::ParamValues> defaults = core::ParamValues::Defaults(info.params);
    if (!defaults.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("algorithm '%s': %s", info.name, defaults.status().message()));
    }
    info.make.set_defaults(*defaults);
    info.make_layer.set_defaults(*defaults);
  }
  return list;
}

const std::vector<AlgorithmInfo>& Algorithms() {
  static const auto* list = [] {
    absl::StatusOr<std::vector<AlgorithmInfo>> checked = CheckedRegistry(BuiltinAlgorithms());
    MESHSIM_CHECK(checked.ok()) << checked.status().message();
    return new std::vector<AlgorithmInfo>(std::move(*checked));
  }();
  return *list;
}

absl::StatusOr<const AlgorithmInfo*> FindAlgorithm(const std::string& name) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : Algorithms()) {
    if (info.name == name) return &info;
    names.push_back(info.name);
  }
  return absl::NotFoundError(absl::StrFormat("--algorithm: '%s' is not allowed; allowed: %s%s",
                                             name, absl::StrJoin(names, ", "),
                                             core::DidYouMean(name, names)));
}

std::vector<std::string> AlgorithmsDeclaring(const std::string& key) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : Algorithms()) {
    if (info.Declares(key)) names.push_back(info.name);
  }
  return names;
}

absl::StatusOr<core::ParamValues> ResolveParams(const AlgorithmInfo& info,
                                                const std::vector<ParamGiven>& given) {
  absl::StatusOr<core::ParamValues> values = core::ParamValues::Defaults(info.params);
  if (!values.ok()) return values.status();
  for (const ParamGiven& g : given) {
    if (!info.Declares(g.key)) {
      std::vector<std::string> keys;
      for (const core::ParamSpec& p : info.params) keys.push_back(p.key);
      const std::string own =
          absl::StrCat("its parameters: ", keys.empty() ? "none" : "", absl::StrJoin(keys, ", "));
      const std::vector<std::string> readers = AlgorithmsDeclaring(g.key);
      if (!readers.empty()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: '%s' does not apply to --algorithm %s (%s); it is read by --algorithm %s", g.name,
            g.text, info.name, own, absl::StrJoin(readers, ", ")));
      }
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: '%s' is not allowed; '%s' is not a parameter of --algorithm %s (%s)%s", g.name,
          g.text, g.key, info.name, own, core::DidYouMean(g.key, keys)));
    }
    absl::Status st = values->Set(g.key, g.text, g.name);
    if (!st.ok()) return absl::InvalidArgumentError(st.message());
  }
  return values;
}

}  // namespace meshsim::algorithms
