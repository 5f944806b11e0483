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

RunMetrics ComputeMetrics(std::span<const core::TimelineRow> timeline, int chips, double peak_flops,
                          core::Time makespan) {
  MetricsAccumulator acc(chips, nullptr);
  for (const core::TimelineRow& r : timeline) acc.Add(r);
  return acc.Metrics(peak_flops, makespan);
}

namespace {

// Adds [iv.first, iv.second) to `set`, disjoint intervals sorted by start. Rows come about in
// order of their ends, so the merge is usually at the back.
void AddInterval(std::vector<std::pair<int64_t, int64_t>>& set, std::pair<int64_t, int64_t> iv) {
  if (iv.second <= iv.first) return;
  // First interval ending at or after iv's start: everything before it is untouched.
  auto lo = std::lower_bound(set.begin(), set.end(), iv.first,
                             [](const auto& a, int64_t start) { return a.second < start; });
  auto hi = lo;
  while (hi != set.end() && hi->first <= iv.second) {
    iv.first = std::min(iv.first, hi->first);
    iv.second = std::max(iv.second, hi->second);
    ++hi;
  }
  if (lo == hi) {
    set.insert(lo, iv);
  } else {
    *lo = iv;
    set.erase(lo + 1, hi);
  }
}

}  // namespace

void SetGemmShares(std::vector<formats::GemmSpan>& spans) {
  std::vector<formats::GemmSpan*> by_end;
  by_end.reserve(spans.size());
  for (formats::GemmSpan& g : spans) by_end.push_back(&g);
  // Stable: GeMMs ending together keep their order; the first of them takes the interval.
  std::stable_sort(
      by_end.begin(), by_end.end(),
      [](const formats::GemmSpan* a, const formats::GemmSpan* b) { return a->end < b->end; });
  core::Time previous = core::Time::Zero();
  for (formats::GemmSpan* g : by_end) {  // Ends ascend: each share is ≥ 0.
    g->share = g->end - previous;
    previous = g->end;
  }
}

std::vector<formats::GemmSpan> GemmSpans(std::span<const core::TimelineRow> timeline,
                                         const std::vector<std::string>& names) {
  MetricsAccumulator acc(0, &names);
  for (const core::TimelineRow& r : timeline) acc.Add(r);
  return acc.Gemms();
}

MetricsAccumulator::MetricsAccumulator(int chips, const std::vector<std::string>* names,
                                       bool gemm_busy)
    : chips_(chips),
      names_(names),
      gemm_busy_(gemm_busy),
      comm_(std::max(chips, 0)),
      compute_(std::max(chips, 0)) {}

int32_t MetricsAccumulator::LabelOf(uint32_t id) {
  if (id >= label_of_name_.size()) label_of_name_.resize(id + 1, -2);
  int32_t& label = label_of_name_[id];
  if (label == -2) {
    const std::string& name = (*names_)[id];
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos || dot == 0) {
      label = -1;
    } else {
      // Names differing after the last '.' share a label ("qkv.fwd.gemm", "qkv.fwd.ag_a").
      auto [it, inserted] = label_index_.try_emplace(name.substr(0, dot), labels_.size());
      if (inserted) labels_.push_back(it->first);
      label = static_cast<int32_t>(it->second);
    }
  }
  return label;
}

void MetricsAccumulator::Add(const core::TimelineRow& r) {
  // GeMM spans: op rows grouped by (layer, pass, label), in order of first appearance.
  if (names_ != nullptr && r.phase == core::Phase::kOp && r.name.valid() &&
      r.name.value() < names_->size()) {
    const int32_t label = LabelOf(r.name.value());
    if (label >= 0) {
      auto [it, inserted] = span_index_.try_emplace(
          std::make_tuple(r.layer, static_cast<int>(r.pass), label), spans_.size());
      if (inserted) spans_.push_back({labels_[label], r.layer, r.pass, r.start, r.end, 0});
      formats::GemmSpan& g = spans_[it->second];
      g.start = std::min(g.start, r.start);
      g.end = std::max(g.end, r.end);
      g.flops += r.flops;
      if (gemm_busy_ && r.flops > 0) {
        if (busy_.size() < spans_.size()) busy_.resize(spans_.size());
        AddInterval(busy_[it->second], {r.start.ps(), r.end.ps()});
        if (r.chip.valid()) {
          AddInterval(span_chip_busy_[{it->second, r.chip.value()}], {r.start.ps(), r.end.ps()});
        }
      }
    }
  }
  const double d = static_cast<double>((r.end - r.start).ps());
  if (r.phase == core::Phase::kOp) flops_ += r.flops;  // Phase rows repeat their op's flops.
  if (!IsComm(r.kind)) {
    if (IsCompute(r.kind) && r.phase == core::Phase::kOp && r.chip.valid() &&
        static_cast<int>(r.chip.value()) < chips_) {
      compute_[r.chip.value()].push_back({r.start.ps(), r.end.ps()});
    }
    return;
  }
  switch (r.phase) {
    case core::Phase::kLaunch:
      launch_ += d;
      break;
    case core::Phase::kSync:
      sync_ += d;
      break;
    case core::Phase::kTransfer:
      transfer_ += d;
      break;
    case core::Phase::kOp:
      bytes_ += static_cast<double>(r.bytes);
      if (r.chip.valid() && static_cast<int>(r.chip.value()) < chips_) {
        comm_[r.chip.value()].push_back({r.start.ps(), r.end.ps()});
      }
      break;
    case core::Phase::kCompute:
    case core::Phase::kHost:
    case core::Phase::kInterference:
    case core::Phase::kQueue:
      break;
  }
}

RunMetrics MetricsAccumulator::Metrics(double peak_flops, core::Time makespan) {
  RunMetrics m;
  m.chips = chips_;
  m.makespan_s = makespan.seconds();
  m.flops = flops_;
  double exposed = 0, computing = 0;
  for (int c = 0; c < chips_; ++c) {
    Merge(comm_[c]);
    Merge(compute_[c]);
    exposed += Difference(comm_[c], compute_[c]);
    for (const auto& [start, end] : compute_[c]) computing += static_cast<double>(end - start);
  }
  m.compute_s = computing / 1e12 / std::max(chips_, 1);
  const double n = std::max(chips_, 1);
  m.comm_launch_s = launch_ / 1e12 / n;
  m.comm_sync_s = sync_ / 1e12 / n;
  m.comm_transfer_s = transfer_ / 1e12 / n;
  m.comm_exposed_s = exposed / 1e12 / n;
  m.bytes_sent_per_chip = bytes_ / n;
  if (makespan > core::Time::Zero() && peak_flops > 0) {
    m.flop_utilization = m.flops / (n * peak_flops * m.makespan_s);
  }
  return m;
}

std::vector<formats::GemmSpan> MetricsAccumulator::Gemms() const {
  std::vector<formats::GemmSpan> spans = spans_;
  for (size_t i = 0; i < spans.size(); ++i) {
    int64_t busy = 0;
    if (i < busy_.size())
      for (const auto& [start, end] : busy_[i]) busy += end - start;
    spans[i].busy = core::Time::Picoseconds(busy);
  }
  for (const auto& [key, intervals] : span_chip_busy_) {
    formats::GemmSpan& g = spans[key.first];
    ++g.chips;
    for (const auto& [start, end] : intervals) g.chip_busy += core::Time::Picoseconds(end - start);
  }
  // Joins and other bookkeeping rows carry names too; keep groups that computed something.
  std::erase_if(spans, [](const formats::GemmSpan& g) { return g.flops == 0; });
  SetGemmShares(spans);
  std::sort(spans.begin(), spans.end(), [](const formats::GemmSpan& a, const formats::GemmSpan& b) {
    return a.start < b.start;
  });
  return spans;
}

}  // namespace meshsim::sim
