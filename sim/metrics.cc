#include "sim/metrics.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace meshsim::sim {

namespace {

using Interval = std::pair<int64_t, int64_t>;

// Sorts and merges overlapping intervals in place.
void Merge(std::vector<Interval>& v) {
  std::sort(v.begin(), v.end());
  size_t out = 0;
  for (const Interval& iv : v) {
    if (out > 0 && iv.first <= v[out - 1].second) {
      v[out - 1].second = std::max(v[out - 1].second, iv.second);
    } else {
      v[out++] = iv;
    }
  }
  v.resize(out);
}

// Length of a \ b for merged interval lists (a double: sums over many chips of durations up to
// Time::Horizon() overflow int64; below 2^53 ps it is exact).
double Difference(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  double total = 0;
  size_t j = 0;
  for (const auto& [start, end] : a) {
    int64_t cursor = start;
    while (j < b.size() && b[j].second <= cursor) ++j;
    for (size_t k = j; k < b.size() && b[k].first < end; ++k) {
      if (b[k].first > cursor) total += static_cast<double>(b[k].first - cursor);
      cursor = std::max(cursor, b[k].second);
      if (cursor >= end) break;
    }
    if (cursor < end) total += static_cast<double>(end - cursor);
  }
  return total;
}

bool IsComm(core::OpKind k) {
  return k == core::OpKind::kTransfer || k == core::OpKind::kCollective;
}
bool IsCompute(core::OpKind k) { return k == core::OpKind::kGemm || k == core::OpKind::kVector; }

}  // namespace

std::vector<std::pair<std::string, double>> RunMetrics::Pairs() const {
  return {{"makespan_s", makespan_s},
          {"flops", flops},
          {"flop_utilization", flop_utilization},
          {"chips", static_cast<double>(chips)},
          {"comm.launch_s", comm_launch_s},
          {"comm.sync_s", comm_sync_s},
          {"comm.transfer_s", comm_transfer_s},
          {"comm.exposed_s", comm_exposed_s},
          {"compute_s", compute_s},
          {"bytes_sent_per_chip", bytes_sent_per_chip},
          {"ops", ops},
          {"events", events},
          {"wall_s", wall_s}};
}

RunMetrics ComputeMetrics(const std::vector<core::TimelineRow>& timeline, int chips,
                          double peak_flops, core::Time makespan) {
  RunMetrics m;
  m.chips = chips;
  m.makespan_s = makespan.seconds();
  std::vector<std::vector<Interval>> comm(chips), compute(chips);
  double launch = 0, sync = 0, transfer = 0;  // ps; doubles: see Difference.
  double bytes = 0;
  for (const core::TimelineRow& r : timeline) {
    const double d = static_cast<double>((r.end - r.start).ps());
    if (r.phase == core::Phase::kOp) m.flops += r.flops;  // Phase rows repeat their op's flops.
    if (!IsComm(r.kind)) {
      if (IsCompute(r.kind) && r.phase == core::Phase::kOp && r.chip.valid() &&
          static_cast<int>(r.chip.value()) < chips) {
        compute[r.chip.value()].push_back({r.start.ps(), r.end.ps()});
      }
      continue;
    }
    switch (r.phase) {
      case core::Phase::kLaunch:
        launch += d;
        break;
      case core::Phase::kSync:
        sync += d;
        break;
      case core::Phase::kTransfer:
        transfer += d;
        break;
      case core::Phase::kOp:
        bytes += static_cast<double>(r.bytes);
        if (r.chip.valid() && static_cast<int>(r.chip.value()) < chips) {
          comm[r.chip.value()].push_back({r.start.ps(), r.end.ps()});
        }
        break;
      case core::Phase::kCompute:
        break;
    }
  }
  double exposed = 0, computing = 0;
  for (int c = 0; c < chips; ++c) {
    Merge(comm[c]);
    Merge(compute[c]);
    exposed += Difference(comm[c], compute[c]);
    for (const auto& [start, end] : compute[c]) computing += static_cast<double>(end - start);
  }
  m.compute_s = computing / 1e12 / std::max(chips, 1);
  const double n = std::max(chips, 1);
  m.comm_launch_s = launch / 1e12 / n;
  m.comm_sync_s = sync / 1e12 / n;
  m.comm_transfer_s = transfer / 1e12 / n;
  m.comm_exposed_s = exposed / 1e12 / n;
  m.bytes_sent_per_chip = bytes / n;
  if (makespan > core::Time::Zero() && peak_flops > 0) {
    m.flop_utilization = m.flops / (n * peak_flops * m.makespan_s);
  }
  return m;
}

std::vector<GemmSpan> GemmSpans(const std::vector<core::TimelineRow>& timeline,
                                const std::vector<std::string>& names) {
  std::vector<GemmSpan> spans;
  std::map<std::string, size_t> index;
  for (const core::TimelineRow& r : timeline) {
    if (r.phase != core::Phase::kOp || !r.name.valid() || r.name.value() >= names.size()) continue;
    const std::string& name = names[r.name.value()];
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0) continue;
    const std::string label = name.substr(0, dot);
    const std::string key = absl::StrCat(r.layer, "/", static_cast<int>(r.pass), "/", label);
    auto [it, inserted] = index.try_emplace(key, spans.size());
    if (inserted) spans.push_back({label, r.layer, r.pass, r.start, r.end, 0});
    GemmSpan& g = spans[it->second];
    g.start = std::min(g.start, r.start);
    g.end = std::max(g.end, r.end);
    g.flops += r.flops;
  }
  // Joins and other bookkeeping rows carry names too; keep groups that computed something.
  std::erase_if(spans, [](const GemmSpan& g) { return g.flops == 0; });
  std::sort(spans.begin(), spans.end(),
            [](const GemmSpan& a, const GemmSpan& b) { return a.start < b.start; });
  return spans;
}

}  // namespace meshsim::sim
