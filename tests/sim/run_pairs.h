// Helpers of the tests that run one scenario two ways and require the same run (flow groups on
// and off, folded and whole, the goldens): scenario arguments as the options parser leaves them,
// and a record's rows and counter samples as sorted sets (one instant's rows and samples may
// come in another order; the order is not a result).
#ifndef MESHSIM_TESTS_SIM_RUN_PAIRS_H_
#define MESHSIM_TESTS_SIM_RUN_PAIRS_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/str_split.h"
#include "formats/run_record.h"
#include "gtest/gtest.h"
#include "sim/options.h"

namespace meshsim::sim {

// "key=value key=value set=K=V" (run options; "set=K=V" for --set) as ParseRunArgs leaves them.
inline RawOptions ScenarioOptions(const std::string& args) {
  RawOptions raw;
  for (const std::string& kv :
       std::vector<std::string>(absl::StrSplit(args, ' ', absl::SkipEmpty()))) {
    const size_t eq = kv.find('=');
    EXPECT_NE(eq, std::string::npos) << kv;
    if (kv.substr(0, eq) == "set") {
      raw.sets.push_back(kv.substr(eq + 1));
    } else {
      raw.values.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
    }
  }
  return raw;
}

inline auto RowKey(const core::TimelineRow& r) {
  return std::make_tuple(r.start.ps(), r.end.ps(), r.bytes, r.flops, r.op.value(), r.chip.value(),
                         static_cast<int>(r.phase), static_cast<int>(r.unit_kind), r.unit_index,
                         r.name.value(), static_cast<int>(r.kind));
}

// The record's rows (RowKey) and counter samples, each sorted.
inline std::vector<decltype(RowKey(core::TimelineRow{}))> SortedRows(const formats::RunRecord& r) {
  std::vector<decltype(RowKey(core::TimelineRow{}))> keys;
  for (const core::TimelineRow& row : r.timeline) keys.push_back(RowKey(row));
  std::sort(keys.begin(), keys.end());
  return keys;
}
inline std::vector<std::tuple<int64_t, uint32_t, double>> SortedSamples(
    const formats::RunRecord& r) {
  std::vector<std::tuple<int64_t, uint32_t, double>> keys;
  for (const core::CounterSample& c : r.counters) {
    keys.emplace_back(c.time.ps(), c.resource.value(), c.rate_bytes_per_s);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Every metric of `b` as in `a`, key by key in the same order: equal, or within `rel` of `a`'s
// value (sums over more chips may round differently), except the keys in `skip` (what the
// engine did rather than the machine).
inline void ExpectSameMetrics(const formats::RunRecord& a, const formats::RunRecord& b,
                              std::initializer_list<std::string_view> skip, double rel = 0) {
  ASSERT_EQ(b.metrics.size(), a.metrics.size());
  for (size_t i = 0; i < a.metrics.size(); ++i) {
    const auto& [key, value] = a.metrics[i];
    EXPECT_EQ(b.metrics[i].first, key);
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    if (rel == 0) {
      EXPECT_EQ(b.metrics[i].second, value) << key;
    } else {
      EXPECT_NEAR(b.metrics[i].second, value, rel * std::abs(value)) << key;
    }
  }
}

// Every resource of `b` as in `a`: name, bytes carried and busy time.
inline void ExpectSameResources(const formats::RunRecord& a, const formats::RunRecord& b) {
  ASSERT_EQ(b.resources.size(), a.resources.size());
  for (size_t i = 0; i < a.resources.size(); ++i) {
    EXPECT_EQ(b.resources[i].name, a.resources[i].name) << i;
    EXPECT_EQ(b.resources[i].bytes, a.resources[i].bytes) << a.resources[i].name;
    EXPECT_EQ(b.resources[i].busy, a.resources[i].busy) << a.resources[i].name;
  }
}

}  // namespace meshsim::sim

#endif  // MESHSIM_TESTS_SIM_RUN_PAIRS_H_
