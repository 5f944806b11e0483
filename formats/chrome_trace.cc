#include "formats/chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/did_you_mean.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/perfetto_trace.h"
#include "formats/temp_files.h"
#include "formats/trace_encoder.h"

namespace meshsim::formats {
namespace {

using core::ChipId;
using core::CollectiveKind;
using core::OpKind;
using core::Phase;
using core::TimelineRow;
using core::UnitKind;

constexpr uint32_t kNone = ~uint32_t{0};
// Room guaranteed before writing one number or one escaped character.
constexpr size_t kNumberRoom = 64;

// Writes `ps` picoseconds as exact decimal microseconds at `p` (room for 32 chars) and returns
// the end: 123456789 -> "123.456789", 1500000 -> "1.5", 0 -> "0", -1 -> "-0.000001".
char* FormatMicros(char* p, int64_t ps) {
  uint64_t a = static_cast<uint64_t>(ps);
  if (ps < 0) {
    *p++ = '-';
    a = uint64_t{0} - a;
  }
  const uint64_t whole = a / 1'000'000;
  uint64_t frac = a % 1'000'000;
  p = std::to_chars(p, p + 24, whole).ptr;
  if (frac != 0) {
    char digits[6];
    for (int i = 5; i >= 0; --i) {
      digits[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    int n = 6;
    while (digits[n - 1] == '0') --n;
    *p++ = '.';
    std::memcpy(p, digits, n);
    p += n;
  }
  return p;
}

// Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 if invalid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) -> unsigned {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u;
  };
  const auto cont = [](unsigned b) { return b >= 0x80 && b <= 0xbf; };
  const unsigned c = byte(0);
  if (c >= 0xc2 && c <= 0xdf) return cont(byte(1)) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned b1 = byte(1);
    const bool ok1 = c == 0xe0   ? (b1 >= 0xa0 && b1 <= 0xbf)
                     : c == 0xed ? (b1 >= 0x80 && b1 <= 0x9f)
                                 : cont(b1);
    return ok1 && cont(byte(2)) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned b1 = byte(1);
    const bool ok1 = c == 0xf0   ? (b1 >= 0x90 && b1 <= 0xbf)
                     : c == 0xf4 ? (b1 >= 0x80 && b1 <= 0x8f)
                                 : cont(b1);
    return ok1 && cont(byte(2)) && cont(byte(3)) ? 4 : 0;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// JsonWriter: formats JSON pieces into a fixed buffer and hands full buffers to a FILE*.
// After the first I/O error it stops writing and remembers errno; callers check ok() at the end.
// ---------------------------------------------------------------------------------------------
class JsonWriter : public BufferedFile {
 public:
  explicit JsonWriter(FILE* file) : BufferedFile(file) {}

  // Appends `s` verbatim (it must already be valid JSON text).
  void Raw(std::string_view s) { Append(s.data(), s.size()); }

  void Char(char c) {
    Ensure(1);
    buf_[len_++] = c;
  }

  void Int(int64_t v) {
    Ensure(kNumberRoom);
    char* p = buf_.get() + len_;
    len_ = std::to_chars(p, p + kNumberRoom, v).ptr - buf_.get();
  }

  // Picoseconds as exact decimal microseconds (see FormatMicros).
  void Micros(int64_t ps) {
    Ensure(kNumberRoom);
    len_ = FormatMicros(buf_.get() + len_, ps) - buf_.get();
  }

  // Shortest round-trip form (precision < 0) or %g-like with `precision` significant digits.
  // Non-finite values become null (JSON has no NaN/Infinity).
  void Double(double v, int precision = -1) {
    if (!std::isfinite(v)) {
      Raw("null");
      return;
    }
    Ensure(kNumberRoom);
    char* p = buf_.get() + len_;
    std::to_chars_result r =
        precision < 0 ? std::to_chars(p, p + kNumberRoom, v)
                      : std::to_chars(p, p + kNumberRoom, v, std::chars_format::general, precision);
    len_ = r.ptr - buf_.get();
  }

  // The body of a JSON string (no quotes): escapes quotes, backslashes and control characters and
  // replaces bytes that are not valid UTF-8 by U+FFFD.
  void StringBody(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
      Ensure(16);
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        buf_[len_++] = static_cast<char>(c);
        ++i;
        continue;
      }
      if (c < 0x80) {
        EscapeAscii(c);
        ++i;
        continue;
      }
      const size_t n = Utf8Length(s, i);
      if (n == 0) {
        std::memcpy(buf_.get() + len_, "\\ufffd", 6);
        len_ += 6;
        ++i;
      } else {
        std::memcpy(buf_.get() + len_, s.data() + i, n);
        len_ += n;
        i += n;
      }
    }
  }

  // A quoted, escaped JSON string.
  void String(std::string_view s) {
    Char('"');
    StringBody(s);
    Char('"');
  }

  // Starts the next element of the traceEvents array (",\n" before all but the first).
  void NextEvent() {
    if (events_ > 0) Raw(",\n");
    ++events_;
  }

 private:
  void EscapeAscii(unsigned char c) {
    char* p = buf_.get() + len_;
    p[0] = '\\';
    switch (c) {
      case '"':
        p[1] = '"';
        len_ += 2;
        return;
      case '\\':
        p[1] = '\\';
        len_ += 2;
        return;
      case '\n':
        p[1] = 'n';
        len_ += 2;
        return;
      case '\r':
        p[1] = 'r';
        len_ += 2;
        return;
      case '\t':
        p[1] = 't';
        len_ += 2;
        return;
      case '\b':
        p[1] = 'b';
        len_ += 2;
        return;
      case '\f':
        p[1] = 'f';
        len_ += 2;
        return;
      default:
        break;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    p[1] = 'u';
    p[2] = '0';
    p[3] = '0';
    p[4] = kHex[c >> 4];
    p[5] = kHex[c & 0xf];
    len_ += 6;
  }

  int64_t events_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Layout: which Chrome thread (chip, unit, lane) every row goes to.
// ---------------------------------------------------------------------------------------------
struct Thread {
  uint32_t chip;  // ChipId value; kInvalidValue = the "cluster" process.
  UnitKind unit_kind;
  uint16_t unit_index;
  uint32_t lane;
};

struct Layout {
  // Index into `threads` for every row, kNone for rows that are not written.
  std::vector<uint32_t> thread_of_row;
  // Sorted by (chip, unit kind, unit index, lane); the index is the thread's sort order.
  std::vector<Thread> threads;
  // Op-level rows sorted by (op, chip, row index): the lookup for phase rows and flows.
  std::vector<uint32_t> op_rows;
  // Rows to write, sorted by (thread, start, end descending, op-level first, row index), so that
  // each thread's slices come in an order that nests.
  std::vector<uint32_t> order;
};

int64_t EndPs(const TimelineRow& r) { return std::max(r.start.ps(), r.end.ps()); }

// `ps` rounded to the nearest whole nanosecond (halves up), monotone over all of int64.
int64_t RoundToNs(int64_t ps) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (ps > kMax - 500) return ps / 1000 * 1000;
  const int64_t q = ps + 500;
  const int64_t floor_div = q >= 0 ? q / 1000 : -((-(q + 1)) / 1000) - 1;
  return floor_div * 1000;
}

constexpr int64_t kOneNs = 1000;

// The unit index of the "compute" thread of a chip drawn as one compute track.
constexpr uint16_t kComputeUnit = 0xFFFF;

// Busy cores of one chip drawn as one compute track, piecewise constant: (time, busy cores).
struct Occupancy {
  uint32_t chip;
  int64_t cores;
  std::vector<std::pair<int64_t, int64_t>> samples;
};

// What the exporter draws instead of RunRecord::timeline when chips are merged or left out.
struct TraceRows {
  bool replaced = false;             // `rows` replaces the timeline.
  std::vector<TimelineRow> rows;     // Unmerged rows in timeline order, then the merged ones.
  std::vector<Occupancy> occupancy;  // Per merged chip.
  int64_t merged_chips = 0;          // Chips drawn with one compute thread.
  int64_t omitted_rows = 0;          // Op rows left out by max_op_slices.
  int64_t omitted_chips = 0;         // ... of this many chips (the highest-numbered).
};

// The chips drawn as one compute track (max_core_threads): those with more distinct cores with
// op rows than the option allows.
struct CoreMerge {
  std::vector<bool> merge;     // Per chip.
  std::vector<int64_t> cores;  // Per chip: distinct cores with op rows (0 without the option).
  int64_t merged_chips = 0;

  // Whether `r` is a core op row of a merged chip.
  bool Merged(const TimelineRow& r) const {
    return r.phase == Phase::kOp && r.unit_kind == UnitKind::kCore && r.chip.valid() &&
           merge[r.chip.value()];
  }
};

CoreMerge ChipsToMerge(std::span<const TimelineRow> timeline, size_t num_chips,
                       int64_t max_core_threads) {
  CoreMerge m{std::vector<bool>(num_chips, false), std::vector<int64_t>(num_chips, 0), 0};
  if (max_core_threads < 0) return m;
  // Distinct cores with op rows per chip (a bitmap of 65536 core indices per chip is too much;
  // count first appearances with a sorted unique list per chip instead).
  std::vector<std::vector<uint16_t>> seen(num_chips);
  for (const TimelineRow& r : timeline) {
    if (r.phase != Phase::kOp || r.unit_kind != UnitKind::kCore || !r.chip.valid()) continue;
    seen[r.chip.value()].push_back(r.unit_index);
  }
  for (size_t c = 0; c < num_chips; ++c) {
    auto& v = seen[c];
    std::sort(v.begin(), v.end());
    m.cores[c] = std::unique(v.begin(), v.end()) - v.begin();
    m.merge[c] = m.cores[c] > max_core_threads;
    m.merged_chips += m.merge[c];
    v = {};
  }
  return m;
}

// Op slices per chip after the merge: one per (op, chip) of a merged chip.
std::vector<int64_t> OpSlicesPerChip(std::span<const TimelineRow> timeline, size_t num_chips,
                                     const CoreMerge& m) {
  std::vector<int64_t> op_slices(num_chips, 0);
  std::vector<std::pair<core::OpId, ChipId>> merged_keys;
  for (const TimelineRow& r : timeline) {
    if (r.phase != Phase::kOp || !r.chip.valid()) continue;
    if (m.Merged(r))
      merged_keys.emplace_back(r.op, r.chip);
    else
      ++op_slices[r.chip.value()];
  }
  std::sort(merged_keys.begin(), merged_keys.end());
  merged_keys.erase(std::unique(merged_keys.begin(), merged_keys.end()), merged_keys.end());
  for (const auto& [op, chip] : merged_keys) ++op_slices[chip.value()];
  return op_slices;
}

// The chips kept under max_op_slices: the longest prefix within budget (the cluster's op rows
// count first).
size_t KeptChips(std::span<const TimelineRow> timeline, const std::vector<int64_t>& op_slices,
                 int64_t max_op_slices) {
  if (max_op_slices < 0) return op_slices.size();
  int64_t total = 0;
  for (const TimelineRow& r : timeline) total += r.phase == Phase::kOp && !r.chip.valid();
  for (size_t c = 0; c < op_slices.size(); ++c) {
    if (total + op_slices[c] > max_op_slices) return c;
    total += op_slices[c];
  }
  return op_slices.size();
}

// One row per (op, chip) of the `core_rows` (sorted by chip, op, index): first start, last end,
// sums, on the compute thread.
void AppendMergedRows(std::span<const TimelineRow> timeline, const std::vector<uint32_t>& core_rows,
                      std::vector<TimelineRow>& rows) {
  for (size_t g = 0; g < core_rows.size();) {
    TimelineRow row = timeline[core_rows[g]];
    row.unit_index = kComputeUnit;
    int64_t end = EndPs(row);
    size_t e = g + 1;
    for (; e < core_rows.size(); ++e) {
      const TimelineRow& r = timeline[core_rows[e]];
      if (r.chip != row.chip || r.op != row.op) break;
      row.start = std::min(row.start, r.start);
      end = std::max(end, EndPs(r));
      row.flops += r.flops;
      row.bytes += r.bytes;
    }
    row.end = core::Time::Picoseconds(end);
    rows.push_back(row);
    g = e;
  }
}

// Busy cores of each merged chip over time: +1 at each core row's start, -1 at its end, one
// sample per distinct time at which the count changes.
std::vector<Occupancy> MergedOccupancy(std::span<const TimelineRow> timeline,
                                       const std::vector<uint32_t>& core_rows,
                                       const std::vector<int64_t>& cores) {
  std::vector<Occupancy> occupancy;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> steps(cores.size());
  for (const uint32_t i : core_rows) {
    const TimelineRow& r = timeline[i];
    steps[r.chip.value()].emplace_back(r.start.ps(), 1);
    steps[r.chip.value()].emplace_back(EndPs(r), -1);
  }
  for (size_t c = 0; c < cores.size(); ++c) {
    auto& v = steps[c];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    Occupancy occ{static_cast<uint32_t>(c), cores[c], {}};
    int64_t busy = 0;
    for (size_t k = 0; k < v.size();) {
      const int64_t t = v[k].first;
      for (; k < v.size() && v[k].first == t; ++k) busy += v[k].second;
      if (!occ.samples.empty() && occ.samples.back().second == busy) continue;
      occ.samples.emplace_back(t, busy);
    }
    occupancy.push_back(std::move(occ));
    v = {};
  }
  return occupancy;
}

// Applies max_core_threads (merges the core rows of many-core chips per op and records their
// occupancy) and max_op_slices (leaves out the op rows of the highest-numbered chips).
TraceRows SelectRows(std::span<const TimelineRow> timeline, int64_t chips,
                     const ChromeTraceOptions& options) {
  TraceRows out;
  int64_t max_chip = chips - 1;
  for (const TimelineRow& r : timeline)
    if (r.chip.valid()) max_chip = std::max<int64_t>(max_chip, r.chip.value());
  const size_t num_chips = static_cast<size_t>(max_chip + 1);

  const CoreMerge m = ChipsToMerge(timeline, num_chips, options.max_core_threads);
  out.merged_chips = m.merged_chips;
  const std::vector<int64_t> op_slices = OpSlicesPerChip(timeline, num_chips, m);
  const size_t kept_chips = KeptChips(timeline, op_slices, options.max_op_slices);
  const auto kept = [&](const TimelineRow& r) {
    return !r.chip.valid() || r.chip.value() < kept_chips;
  };
  for (size_t c = kept_chips; c < num_chips; ++c) {
    out.omitted_rows += op_slices[c];
    out.omitted_chips += op_slices[c] > 0;
  }
  if (out.merged_chips == 0 && kept_chips == num_chips) return out;

  out.replaced = true;
  for (const TimelineRow& r : timeline)
    if (kept(r) && !m.Merged(r)) out.rows.push_back(r);
  std::vector<uint32_t> core_rows;
  for (uint32_t i = 0; i < timeline.size(); ++i)
    if (m.Merged(timeline[i]) && kept(timeline[i])) core_rows.push_back(i);
  std::sort(core_rows.begin(), core_rows.end(), [&](uint32_t a, uint32_t b) {
    const TimelineRow &x = timeline[a], &y = timeline[b];
    if (x.chip != y.chip) return x.chip < y.chip;
    if (x.op != y.op) return x.op < y.op;
    return a < b;
  });
  AppendMergedRows(timeline, core_rows, out.rows);
  out.occupancy = MergedOccupancy(timeline, core_rows, m.cores);
  return out;
}

class Exporter {
 public:
  Exporter(const RunRecord& run, const TraceRows& selected, const ChromeTraceOptions& options)
      : run_(run),
        rows_(selected.replaced ? std::span<const TimelineRow>(selected.rows)
                                : std::span<const TimelineRow>(run.timeline)),
        selected_(selected),
        options_(options) {}

  // Computes the layout and hands the whole trace to `enc`. I/O errors are left in `enc`.
  void Write(TraceEncoder& enc) {
    int64_t phase_rows = 0;
    for (const TimelineRow& r : rows_) phase_rows += r.phase != Phase::kOp;
    phases_ =
        options_.phases && (options_.max_phase_rows < 0 || phase_rows <= options_.max_phase_rows);
    phases_omitted_ = options_.phases && !phases_ ? phase_rows : 0;
    ComputeLayout();
    ComputePids();
    ComputeTaskSpans();
    if (options_.flows) ComputeFlows();
    counter_base_ = tid_base_ + static_cast<int64_t>(layout_.threads.size());
    occupancy_base_ = counter_base_ + 2 * static_cast<int64_t>(run_.resources.size());
    stage_base_ = occupancy_base_ + static_cast<int64_t>(selected_.occupancy.size());
    WriteMetadata(enc);
    if (options_.counters) WriteCounterTracks(enc);
    if (options_.counters) {
      for (size_t k = 0; k < selected_.occupancy.size(); ++k) {
        enc.CounterTrack(occupancy_base_ + static_cast<int64_t>(k),
                         Pid(ChipId(selected_.occupancy[k].chip)), OccupancyName(k), " busy");
      }
    }
    WriteSlices(enc);
    WriteTaskSpans(enc);
    if (options_.flows) WriteFlows(enc);
    if (options_.counters) WriteCounters(enc);
    if (options_.counters) WriteOccupancy(enc);
    enc.Finish(Facts(), stage_base_ + static_cast<int64_t>(stage_lanes_.size()));
  }

 private:
  // A time as written to the file (see TraceTimeResolution).
  int64_t Out(int64_t ps) const {
    return options_.resolution == TraceTimeResolution::kNanosecond ? RoundToNs(ps) : ps;
  }
  int64_t OutStart(const TimelineRow& r) const { return Out(r.start.ps()); }
  int64_t OutEnd(const TimelineRow& r) const { return Out(EndPs(r)); }

  // Op-level row of `op` on `chip`, or kNone.
  uint32_t FindOpRow(core::OpId op, ChipId chip) const {
    const auto it =
        std::lower_bound(layout_.op_rows.begin(), layout_.op_rows.end(), std::make_pair(op, chip),
                         [&](uint32_t i, const std::pair<core::OpId, ChipId>& key) {
                           return std::make_pair(rows_[i].op, rows_[i].chip) < key;
                         });
    if (it == layout_.op_rows.end() || rows_[*it].op != op || rows_[*it].chip != chip) return kNone;
    return *it;
  }

  // Sub-range [first, last) of layout_.op_rows for `op`.
  std::pair<size_t, size_t> OpRange(core::OpId op) const {
    const auto& v = layout_.op_rows;
    const auto lo = std::lower_bound(v.begin(), v.end(), op,
                                     [&](uint32_t i, core::OpId o) { return rows_[i].op < o; });
    const auto hi = std::upper_bound(lo, v.end(), op,
                                     [&](core::OpId o, uint32_t i) { return o < rows_[i].op; });
    return {static_cast<size_t>(lo - v.begin()), static_cast<size_t>(hi - v.begin())};
  }

  void ComputeLayout() {
    const uint32_t n = static_cast<uint32_t>(rows_.size());
    Layout& L = layout_;
    L.thread_of_row.assign(n, kNone);
    SortOpRows();
    std::vector<uint32_t> host = HostRows();
    std::vector<uint32_t> anchors;
    for (uint32_t i = 0; i < n; ++i)
      if (host[i] == i) anchors.push_back(i);
    AssignLanes(anchors);
    anchors = {};
    for (uint32_t i = 0; i < n; ++i)
      if (host[i] != kNone && host[i] != i) L.thread_of_row[i] = L.thread_of_row[host[i]];
    host = {};
    SortWriteOrder();
  }

  // layout_.op_rows: the op-level rows sorted by (op, chip, row index).
  void SortOpRows() {
    Layout& L = layout_;
    for (uint32_t i = 0; i < rows_.size(); ++i)
      if (rows_[i].phase == Phase::kOp) L.op_rows.push_back(i);
    std::sort(L.op_rows.begin(), L.op_rows.end(), [&](uint32_t a, uint32_t b) {
      const TimelineRow &x = rows_[a], &y = rows_[b];
      if (x.op != y.op) return x.op < y.op;
      if (x.chip != y.chip) return x.chip < y.chip;
      return a < b;
    });
  }

  // host[i]: the row whose thread row i shares (itself for an op row; kNone for a phase row not
  // written). A phase row goes with the op-level row of its op on its chip when that row exists
  // and contains it; otherwise it is placed on its own.
  std::vector<uint32_t> HostRows() const {
    const uint32_t n = static_cast<uint32_t>(rows_.size());
    std::vector<uint32_t> host(n, kNone);
    std::vector<uint32_t> nested;  // phase rows with a host
    for (uint32_t i = 0; i < n; ++i) {
      const TimelineRow& r = rows_[i];
      if (r.phase == Phase::kOp) {
        host[i] = i;
      } else if (phases_) {
        const uint32_t h = FindOpRow(r.op, r.chip);
        const bool inside = h != kNone && rows_[h].start <= r.start && EndPs(r) <= EndPs(rows_[h]);
        host[i] = inside ? h : i;
        if (inside) nested.push_back(i);
      }
    }
    UnnestOverlappingPhases(host, nested);
    return host;
  }

  // Greedy lanes per (chip, unit): rows by start; each takes the lowest-numbered lane whose
  // last row ended at or before its start. Heaps keep this O(n log n) with many lanes. Sets
  // layout_.thread_of_row of the `anchors` (rows placed on their own) and adds their threads.
  void AssignLanes(std::vector<uint32_t>& anchors) {
    Layout& L = layout_;
    std::sort(anchors.begin(), anchors.end(), [&](uint32_t a, uint32_t b) {
      const TimelineRow &x = rows_[a], &y = rows_[b];
      if (x.chip != y.chip) return x.chip < y.chip;
      if (x.unit_kind != y.unit_kind) return x.unit_kind < y.unit_kind;
      if (x.unit_index != y.unit_index) return x.unit_index < y.unit_index;
      if (x.start != y.start) return x.start < y.start;
      if (EndPs(x) != EndPs(y)) return EndPs(x) > EndPs(y);
      return a < b;
    });
    std::vector<std::pair<int64_t, uint32_t>> busy;  // min-heap of (end, lane)
    std::vector<uint32_t> free_lanes;                // min-heap of lane numbers
    const auto busy_cmp = std::greater<std::pair<int64_t, uint32_t>>();
    const auto free_cmp = std::greater<uint32_t>();
    size_t g = 0;
    while (g < anchors.size()) {
      const TimelineRow& first = rows_[anchors[g]];
      size_t e = g;
      busy.clear();
      free_lanes.clear();
      uint32_t lanes = 0;
      for (; e < anchors.size(); ++e) {
        const TimelineRow& r = rows_[anchors[e]];
        if (r.chip != first.chip || r.unit_kind != first.unit_kind ||
            r.unit_index != first.unit_index) {
          break;
        }
        while (!busy.empty() && busy.front().first <= r.start.ps()) {
          free_lanes.push_back(busy.front().second);
          std::push_heap(free_lanes.begin(), free_lanes.end(), free_cmp);
          std::pop_heap(busy.begin(), busy.end(), busy_cmp);
          busy.pop_back();
        }
        uint32_t lane;
        if (free_lanes.empty()) {
          lane = lanes++;
        } else {
          std::pop_heap(free_lanes.begin(), free_lanes.end(), free_cmp);
          lane = free_lanes.back();
          free_lanes.pop_back();
        }
        busy.emplace_back(EndPs(r), lane);
        std::push_heap(busy.begin(), busy.end(), busy_cmp);
        L.thread_of_row[anchors[e]] = lane;
      }
      const uint32_t base = static_cast<uint32_t>(L.threads.size());
      for (uint32_t lane = 0; lane < lanes; ++lane)
        L.threads.push_back({first.chip.value(), first.unit_kind, first.unit_index, lane});
      for (size_t k = g; k < e; ++k) L.thread_of_row[anchors[k]] += base;
      g = e;
    }
  }

  // layout_.order: the rows written, sorted by (thread, start, end descending, op-level first,
  // row index), so that each thread's slices come in an order that nests.
  void SortWriteOrder() {
    Layout& L = layout_;
    const uint32_t n = static_cast<uint32_t>(rows_.size());
    L.order.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
      if (L.thread_of_row[i] != kNone) L.order.push_back(i);
    std::sort(L.order.begin(), L.order.end(), [&](uint32_t a, uint32_t b) {
      const uint32_t ta = L.thread_of_row[a], tb = L.thread_of_row[b];
      if (ta != tb) return ta < tb;
      const TimelineRow &x = rows_[a], &y = rows_[b];
      const int64_t xs = OutStart(x), ys = OutStart(y);
      if (xs != ys) return xs < ys;
      const int64_t xe = OutEnd(x), ye = OutEnd(y);
      if (xe != ye) return xe > ye;
      const bool px = x.phase != Phase::kOp, py = y.phase != Phase::kOp;
      if (px != py) return py;
      return a < b;
    });
  }

  // Phase rows of one op that partially overlap each other (say, a transfer and a compute phase
  // running concurrently) cannot share a thread. Walks each op's phase rows in file order with
  // a stack of open ends (in written times) and gives any row that would cross the end of an
  // enclosing one its own place, like an op row.
  void UnnestOverlappingPhases(std::vector<uint32_t>& host, std::vector<uint32_t>& nested) const {
    std::sort(nested.begin(), nested.end(), [&](uint32_t a, uint32_t b) {
      if (host[a] != host[b]) return host[a] < host[b];
      const int64_t as = OutStart(rows_[a]), bs = OutStart(rows_[b]);
      if (as != bs) return as < bs;
      const int64_t ae = OutEnd(rows_[a]), be = OutEnd(rows_[b]);
      if (ae != be) return ae > be;
      return a < b;
    });
    std::vector<int64_t> open_ends;
    for (size_t k = 0; k < nested.size(); ++k) {
      const uint32_t i = nested[k];
      if (k == 0 || host[nested[k - 1]] != host[i]) {
        open_ends.assign(1, OutEnd(rows_[host[i]]));
      }
      const int64_t start = OutStart(rows_[i]), end = OutEnd(rows_[i]);
      while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
      if (!open_ends.empty() && end > open_ends.back()) {
        host[i] = i;
      } else {
        open_ends.push_back(end);
      }
    }
  }

  void ComputePids() {
    int64_t max_chip = -1;
    for (const TimelineRow& r : rows_) {
      if (r.chip.valid())
        max_chip = std::max<int64_t>(max_chip, r.chip.value());
      else
        uses_cluster_ = true;
    }
    for (const core::ResourceInfo& res : run_.resources) {
      if (res.chip.valid()) max_chip = std::max<int64_t>(max_chip, res.chip.value());
    }
    if (options_.counters) {
      for (const core::CounterSample& s : run_.counters) {
        if (s.resource.valid() && s.resource.value() < run_.resources.size() &&
            !run_.resources[s.resource.value()].chip.valid()) {
          uses_cluster_ = true;
        }
      }
    }
    chip_processes_ = std::max<int64_t>(run_.chips, max_chip + 1);
    cluster_pid_ = chip_processes_ + 1;
    tid_base_ = cluster_pid_ + 1;
    if (std::any_of(rows_.begin(), rows_.end(), [](const TimelineRow& r) { return r.task != 0; })) {
      pipeline_pid_ = cluster_pid_ + 1;
      tid_base_ = pipeline_pid_ + 1;
    }
  }

  // The chips of one DP replica of a pipeline stage (the run's operator mesh, config "mesh" =
  // RxC) and the DP degree (config "dp"); 0 when the config does not say.
  std::pair<int64_t, int64_t> ReplicaGeometry() const {
    int64_t rows = 0, cols = 0, dp = 0;
    for (const auto& [key, value] : run_.config) {
      if (key == "mesh") {
        const size_t x = value.find('x');
        if (x != std::string::npos) {
          std::from_chars(value.data(), value.data() + x, rows);
          std::from_chars(value.data() + x + 1, value.data() + value.size(), cols);
        }
      }
      if (key == "dp") std::from_chars(value.data(), value.data() + value.size(), dp);
    }
    return {rows > 0 && cols > 0 ? rows * cols : 0, dp};
  }

  // --workload pipeline: one slice per task of each stage ("F3", "B3") from the first start to
  // the last end of the task's ops on the first chip of the replica (its chips do the same work
  // slightly out of step, so spans over all of them would overlap), on a "pipeline" process
  // with a track per stage (per stage and DP replica when there are several) — the view of
  // MLSys'23 Figure 4. Tasks of one track that still overlap go to extra lanes ("stage 1 #2").
  void ComputeTaskSpans() {
    if (pipeline_pid_ < 0) return;
    const auto [replica_chips, dp] = ReplicaGeometry();
    replicas_ = dp > 1 && replica_chips > 0 ? static_cast<int>(dp) : 1;
    struct Key {
      int stage, replica, microbatch, task;
      bool operator<(const Key& o) const {
        return std::tie(stage, replica, microbatch, task) <
               std::tie(o.stage, o.replica, o.microbatch, o.task);
      }
    };
    std::map<Key, std::pair<int64_t, int64_t>> spans;
    for (const TimelineRow& r : rows_) {
      if (r.task == 0 || r.phase != Phase::kOp || r.stage < 0 || r.microbatch < 0) continue;
      if (replica_chips > 0 && (!r.chip.valid() || r.chip.value() % replica_chips != 0)) continue;
      const int replica = replicas_ > 1 && r.chip.valid()
                              ? static_cast<int>((r.chip.value() / replica_chips) % replicas_)
                              : 0;
      auto [it, fresh] = spans.try_emplace(Key{r.stage, replica, r.microbatch, r.task},
                                           std::make_pair(OutStart(r), OutEnd(r)));
      if (!fresh) {
        it->second.first = std::min(it->second.first, OutStart(r));
        it->second.second = std::max(it->second.second, OutEnd(r));
      }
    }
    std::vector<std::pair<Key, std::pair<int64_t, int64_t>>> sorted(spans.begin(), spans.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      if (a.first.stage != b.first.stage) return a.first.stage < b.first.stage;
      if (a.first.replica != b.first.replica) return a.first.replica < b.first.replica;
      if (a.second.first != b.second.first) return a.second.first < b.second.first;
      return a.second.second > b.second.second;
    });
    std::vector<int64_t> lane_end;  // Of the current track's lanes.
    int track = -1;
    for (const auto& [key, span] : sorted) {
      const int stage = key.stage * replicas_ + key.replica;  // The track before lanes.
      if (stage != track) {
        track = stage;
        lane_end.clear();
      }
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > span.first) ++lane;
      if (lane == lane_end.size()) {
        lane_end.push_back(0);
        stage_lanes_.push_back({stage, static_cast<int>(lane)});
      }
      lane_end[lane] = span.second;
      TimelineRow row;
      row.start = core::Time::Picoseconds(span.first);
      row.end = core::Time::Picoseconds(span.second);
      row.stage = static_cast<int16_t>(key.stage);
      row.microbatch = static_cast<int16_t>(key.microbatch);
      row.task = static_cast<uint8_t>(key.task);
      task_rows_.push_back(row);
      task_labels_.push_back(absl::StrCat(key.task == 1 ? "F" : "B", key.microbatch));
      const auto track = std::find(stage_lanes_.begin(), stage_lanes_.end(),
                                   std::make_pair(stage, static_cast<int>(lane)));
      task_track_.push_back(track - stage_lanes_.begin());
    }
    // Slices must come by track, then by start.
    std::vector<size_t> order(task_rows_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return task_track_[a] < task_track_[b]; });
    task_order_ = std::move(order);
  }

  void WriteTaskSpans(TraceEncoder& enc) {
    for (size_t i : task_order_) {
      if (!enc.ok()) return;
      const TimelineRow& r = task_rows_[i];
      enc.Slice({.row = &r,
                 .pid = pipeline_pid_,
                 .tid = stage_base_ + task_track_[i],
                 .start_ps = r.start.ps(),
                 .end_ps = r.end.ps(),
                 .label = task_labels_[i],
                 .flows = {}});
    }
  }

  int64_t Pid(ChipId chip) const { return chip.valid() ? int64_t{chip.value()} + 1 : cluster_pid_; }
  int64_t Tid(uint32_t thread) const { return tid_base_ + thread; }

  static std::string ThreadName(const Thread& t) {
    if (t.unit_kind == UnitKind::kCore && t.unit_index == kComputeUnit)
      return t.lane > 0 ? absl::StrCat("compute #", t.lane + 1) : std::string("compute");
    std::string name = core::ToString(t.unit_kind);
    const bool bare =
        (t.unit_kind == UnitKind::kHbm || t.unit_kind == UnitKind::kChip) && t.unit_index == 0;
    if (!bare) absl::StrAppend(&name, " ", t.unit_index);
    if (t.lane > 0) absl::StrAppend(&name, " #", t.lane + 1);
    return name;
  }

  void WriteMetadata(TraceEncoder& enc) {
    if (uses_cluster_) enc.Process(cluster_pid_, "cluster", -1);
    if (pipeline_pid_ >= 0) enc.Process(pipeline_pid_, "pipeline", -2);
    for (int64_t c = 0; c < chip_processes_; ++c) enc.Process(c + 1, absl::StrCat("chip ", c), c);
    const auto& threads = layout_.threads;
    for (uint32_t t = 0; t < threads.size(); ++t) {
      enc.Thread(Pid(ChipId(threads[t].chip)), Tid(t), ThreadName(threads[t]), t);
    }
    for (size_t k = 0; k < stage_lanes_.size(); ++k) {
      const auto [track, lane] = stage_lanes_[k];
      std::string name = absl::StrCat("stage ", track / replicas_);
      if (replicas_ > 1) absl::StrAppend(&name, " replica ", track % replicas_);
      if (lane > 0) absl::StrAppend(&name, " #", lane + 1);
      enc.Thread(pipeline_pid_, stage_base_ + static_cast<int64_t>(k), name,
                 static_cast<int64_t>(threads.size() + k));
    }
  }

  // The row's label: its interned name, else the collective kind, else the op kind.
  std::string_view Label(const TimelineRow& r) const {
    if (r.name.valid() && r.name.value() < run_.names.size()) return run_.names[r.name.value()];
    if (r.kind == OpKind::kCollective && r.collective != CollectiveKind::kNone)
      return core::ToString(r.collective);
    return core::ToString(r.kind);
  }

  void WriteSlices(TraceEncoder& enc) {
    // Arrow ends by row, for encoders that attach arrows to slices.
    std::vector<std::pair<uint32_t, SliceFlow>> ends;
    ends.reserve(2 * flows_.size());
    for (size_t k = 0; k < flows_.size(); ++k) {
      const int64_t id = static_cast<int64_t>(k) + 1;
      ends.push_back({flows_[k].first, {id, true}});
      ends.push_back({flows_[k].second, {id, false}});
    }
    std::stable_sort(ends.begin(), ends.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<SliceFlow> attached;
    for (const uint32_t i : layout_.order) {
      if (!enc.ok()) return;
      const TimelineRow& r = rows_[i];
      attached.clear();
      auto it = std::lower_bound(ends.begin(), ends.end(), i,
                                 [](const auto& e, uint32_t row) { return e.first < row; });
      for (; it != ends.end() && it->first == i; ++it) attached.push_back(it->second);
      enc.Slice({.row = &r,
                 .pid = Pid(r.chip),
                 .tid = Tid(layout_.thread_of_row[i]),
                 .start_ps = OutStart(r),
                 .end_ps = OutEnd(r),
                 .label = Label(r),
                 .flows = attached});
    }
  }

  // One arrow per (edge, op-level row of `to` on a chip where `from` has no op-level row), from
  // the latest-ending op-level row of `from` (ties: lowest chip) to the start of that row.
  void ComputeFlows() {
    const auto& ops = layout_.op_rows;
    for (const DepEdge& edge : run_.edges) {
      const auto [fb, fe] = OpRange(edge.from);
      if (fb == fe) continue;
      const auto [tb, te] = OpRange(edge.to);
      if (tb == te) continue;
      uint32_t src = ops[fb];
      for (size_t k = fb + 1; k < fe; ++k)
        if (EndPs(rows_[ops[k]]) > EndPs(rows_[src])) src = ops[k];
      for (size_t k = tb; k < te; ++k) {
        const uint32_t dst = ops[k];
        const ChipId chip = rows_[dst].chip;
        const bool same_chip =
            std::binary_search(ops.begin() + fb, ops.begin() + fe, chip,
                               [&](const auto& a, const auto& b) { return ChipOf(a) < ChipOf(b); });
        if (same_chip) continue;
        ++flows_total_;
        if (options_.max_flows >= 0 && static_cast<int64_t>(flows_.size()) >= options_.max_flows)
          continue;
        flows_.emplace_back(src, dst);
      }
    }
  }

  ChipId ChipOf(uint32_t row) const { return rows_[row].chip; }
  static ChipId ChipOf(ChipId chip) { return chip; }

  void WriteFlows(TraceEncoder& enc) {
    for (size_t k = 0; k < flows_.size() && enc.ok(); ++k) {
      const auto [src, dst] = flows_[k];
      const TimelineRow &s = rows_[src], &d = rows_[dst];
      // Both ends sit 1 ns inside their slices (less for shorter slices): a slice's end is
      // exclusive, and a point strictly inside binds to the right slice in both viewers whatever
      // order they process events with equal timestamps in.
      const int64_t s_start = OutStart(s), s_end = OutEnd(s);
      const int64_t d_start = OutStart(d), d_end = OutEnd(d);
      enc.Flow({.id = static_cast<int64_t>(k) + 1,
                .from_pid = Pid(s.chip),
                .from_tid = Tid(layout_.thread_of_row[src]),
                .from_ps = s_end - std::min(kOneNs, s_end - s_start),
                .to_pid = Pid(d.chip),
                .to_tid = Tid(layout_.thread_of_row[dst]),
                .to_ps = d_start + std::min(kOneNs, d_end - d_start),
                .from_op = s.op.value(),
                .to_op = d.op.value()});
    }
  }

  // Counter tracks of resource r: utilization counter_base_ + 2r, rate counter_base_ + 2r + 1.
  bool HasUtilTrack(const core::ResourceInfo& res) const { return res.capacity_bytes_per_s > 0; }
  bool HasRateTrack(const core::ResourceInfo& res) const {
    return options_.counter_rates || res.capacity_bytes_per_s <= 0;
  }
  int64_t UtilTrack(size_t r) const { return counter_base_ + 2 * static_cast<int64_t>(r); }
  int64_t RateTrack(size_t r) const { return UtilTrack(r) + 1; }

  void WriteCounterTracks(TraceEncoder& enc) {
    std::vector<bool> sampled(run_.resources.size(), false);
    for (const core::CounterSample& s : run_.counters) {
      if (s.resource.valid() && s.resource.value() < run_.resources.size())
        sampled[s.resource.value()] = true;
    }
    for (size_t r = 0; r < run_.resources.size(); ++r) {
      if (!sampled[r]) continue;
      const core::ResourceInfo& res = run_.resources[r];
      if (HasUtilTrack(res)) enc.CounterTrack(UtilTrack(r), Pid(res.chip), res.name, "");
      if (HasRateTrack(res)) enc.CounterTrack(RateTrack(r), Pid(res.chip), res.name, " GB/s");
    }
  }

  // Writes the utilization and/or rate of resource `r` at `ps` (rate in bytes/s).
  void WriteSample(TraceEncoder& enc, size_t r, int64_t ps, double rate) {
    const core::ResourceInfo& res = run_.resources[r];
    const int64_t pid = Pid(res.chip);
    if (HasUtilTrack(res)) {
      enc.Counter(UtilTrack(r), pid, res.name, "", "util %", Out(ps),
                  100.0 * rate / res.capacity_bytes_per_s);
    }
    if (HasRateTrack(res))
      enc.Counter(RateTrack(r), pid, res.name, " GB/s", "GB/s", Out(ps), rate * 1e-9);
  }

  // Exact samples when they fit the budget; otherwise per-resource averages over buckets of
  // `counter_bucket_ps_`, written only where the average changes (by ≥ 0.1% of capacity).
  void WriteCounters(TraceEncoder& enc) {
    const int64_t budget = options_.max_counter_samples;
    if (budget < 0 || static_cast<int64_t>(run_.counters.size()) <= budget) {
      for (const core::CounterSample& s : run_.counters) {
        if (!enc.ok()) return;
        if (!s.resource.valid() || s.resource.value() >= run_.resources.size()) continue;
        WriteSample(enc, s.resource.value(), s.time.ps(), s.rate_bytes_per_s);
      }
      return;
    }
    int64_t makespan = 0;
    for (const TimelineRow& r : rows_) makespan = std::max(makespan, EndPs(r));
    std::vector<std::vector<const core::CounterSample*>> by_resource(run_.resources.size());
    for (const core::CounterSample& s : run_.counters) {
      if (s.resource.valid() && s.resource.value() < run_.resources.size()) {
        by_resource[s.resource.value()].push_back(&s);
        makespan = std::max(makespan, s.time.ps());
      }
    }
    int64_t tracks = 0;
    for (const auto& samples : by_resource) tracks += samples.empty() ? 0 : 1;
    counter_bucket_ps_ = std::max<int64_t>(1, (makespan * tracks + budget - 1) / budget);
    for (size_t r = 0; r < by_resource.size() && enc.ok(); ++r) {
      const auto& samples = by_resource[r];
      if (samples.empty()) continue;
      const core::ResourceInfo& res = run_.resources[r];
      const double capacity = res.capacity_bytes_per_s > 0 ? res.capacity_bytes_per_s : 1.0;
      // The rate is piecewise constant: samples[i] holds from its time to the next sample.
      size_t i = 0;
      double rate = 0, last_written = -1;
      for (int64_t start = 0; start <= makespan; start += counter_bucket_ps_) {
        const int64_t end = start + counter_bucket_ps_;
        double area = 0;
        int64_t t = start;
        while (true) {
          const int64_t next = i < samples.size() ? samples[i]->time.ps() : INT64_MAX;
          const int64_t until = std::min(next, end);
          area += rate * static_cast<double>(until - t);
          t = until;
          if (next >= end) break;
          rate = samples[i++]->rate_bytes_per_s;
        }
        const double average = area / static_cast<double>(counter_bucket_ps_);
        if (last_written >= 0 && std::abs(average - last_written) < 1e-3 * capacity) continue;
        last_written = average;
        WriteSample(enc, r, start, average);
      }
    }
  }

  std::string OccupancyName(size_t k) const {
    return absl::StrCat("chip", selected_.occupancy[k].chip, ".sms");
  }

  // Busy cores of the chips drawn as one compute track: exact when all their samples fit
  // max_counter_samples, else averages over equal buckets sized to fit (written where they
  // change by at least 0.1 core).
  void WriteOccupancy(TraceEncoder& enc) {
    const auto& occupancy = selected_.occupancy;
    if (occupancy.empty()) return;
    int64_t samples = 0, makespan = 0;
    for (const Occupancy& o : occupancy) {
      samples += static_cast<int64_t>(o.samples.size());
      makespan = std::max(makespan, o.samples.back().first);
    }
    const int64_t budget = options_.max_counter_samples;
    const bool exact = budget < 0 || samples <= budget;
    if (!exact) {
      occupancy_bucket_ps_ = std::max<int64_t>(
          1, (makespan * static_cast<int64_t>(occupancy.size()) + budget - 1) / budget);
    }
    for (size_t k = 0; k < occupancy.size() && enc.ok(); ++k) {
      const Occupancy& o = occupancy[k];
      const int64_t track = occupancy_base_ + static_cast<int64_t>(k);
      const int64_t pid = Pid(ChipId(o.chip));
      const std::string name = OccupancyName(k);
      if (exact) {
        for (const auto& [t, busy] : o.samples)
          enc.Counter(track, pid, name, " busy", "SMs busy", Out(t), static_cast<double>(busy));
        continue;
      }
      size_t i = 0;
      double busy = 0, last_written = -1;
      for (int64_t start = 0; start <= makespan; start += occupancy_bucket_ps_) {
        const int64_t end = start + occupancy_bucket_ps_;
        double area = 0;
        int64_t t = start;
        while (true) {
          const int64_t next = i < o.samples.size() ? o.samples[i].first : INT64_MAX;
          const int64_t until = std::min(next, end);
          area += busy * static_cast<double>(until - t);
          t = until;
          if (next >= end) break;
          busy = static_cast<double>(o.samples[i++].second);
        }
        const double average = area / static_cast<double>(occupancy_bucket_ps_);
        if (last_written >= 0 && std::abs(average - last_written) < 0.1) continue;
        last_written = average;
        enc.Counter(track, pid, name, " busy", "SMs busy", Out(start), average);
      }
    }
  }

  static std::string ExactMicros(int64_t ps) {
    char buf[32];
    return std::string(buf, FormatMicros(buf, ps));
  }

  // Run-level facts, all values strings (JSON: otherData).
  std::vector<std::pair<std::string, std::string>> Facts() const {
    std::vector<std::pair<std::string, std::string>> f;
    int64_t makespan = 0;
    for (const TimelineRow& r : rows_) makespan = std::max(makespan, EndPs(r));
    f.emplace_back("generator", "meshsim");
    f.emplace_back("run", run_.name);
    f.emplace_back("chips", absl::StrCat(run_.chips));
    f.emplace_back("rows", absl::StrCat(run_.timeline.size()));
    f.emplace_back("makespan", core::Time::Picoseconds(makespan).ToString());
    f.emplace_back("makespan_us", ExactMicros(makespan));
    if (phases_omitted_ > 0) {
      f.emplace_back(
          "phases", absl::StrCat("omitted: ", phases_omitted_, " phase rows exceed the budget of ",
                                 options_.max_phase_rows, " (ChromeTraceOptions::max_phase_rows)"));
    }
    if (options_.counters) {
      f.emplace_back("counters",
                     counter_bucket_ps_ > 0
                         ? absl::StrCat("averaged over buckets of ",
                                        core::Time::Picoseconds(counter_bucket_ps_).ToString())
                         : "exact");
    }
    if (selected_.merged_chips > 0) {
      f.emplace_back("cores", absl::StrCat(selected_.merged_chips,
                                           " chips drawn as one compute track with SM occupancy "
                                           "(ChromeTraceOptions::max_core_threads = ",
                                           options_.max_core_threads, ")"));
      if (options_.counters) {
        f.emplace_back("occupancy",
                       occupancy_bucket_ps_ > 0
                           ? absl::StrCat("averaged over buckets of ",
                                          core::Time::Picoseconds(occupancy_bucket_ps_).ToString())
                           : "exact");
      }
    }
    if (selected_.omitted_rows > 0) {
      f.emplace_back("slices",
                     absl::StrCat("omitted: ", selected_.omitted_rows, " op rows of ",
                                  selected_.omitted_chips, " chips exceed the budget of ",
                                  options_.max_op_slices, " (ChromeTraceOptions::max_op_slices)"));
    }
    if (options_.flows) {
      const int64_t written = static_cast<int64_t>(flows_.size());
      f.emplace_back("flows", absl::StrCat(written));
      f.emplace_back("flows_total", absl::StrCat(flows_total_));
      f.emplace_back("flows_capped", written < flows_total_
                                         ? absl::StrCat("true: max_flows = ", options_.max_flows)
                                         : std::string("false"));
    }
    char num[64];
    for (const auto& [key, value] : run_.metrics) {
      const std::to_chars_result r = std::to_chars(num, num + sizeof(num), value);
      f.emplace_back("metric." + key, std::string(num, r.ptr));
    }
    for (const auto& [key, value] : run_.config) f.emplace_back("config." + key, value);
    return f;
  }

  const RunRecord& run_;
  std::span<const TimelineRow> rows_;
  const TraceRows& selected_;
  const ChromeTraceOptions& options_;
  Layout layout_;
  bool uses_cluster_ = false;
  int64_t chip_processes_ = 0;
  int64_t cluster_pid_ = 1;
  int64_t pipeline_pid_ = -1;  // The pipeline process, when rows carry pipeline tasks.
  int64_t tid_base_ = 2;
  int64_t counter_base_ = 2;
  int64_t stage_base_ = 2;                        // The stage tracks' first tid.
  int replicas_ = 1;                              // DP replicas per stage with own tracks.
  std::vector<std::pair<int, int>> stage_lanes_;  // Per track: (stage·replicas_ + replica, lane).
  std::vector<TimelineRow> task_rows_;            // One per task span.
  std::vector<std::string> task_labels_;
  std::vector<int64_t> task_track_;  // Index into stage_lanes_.
  std::vector<size_t> task_order_;
  std::vector<std::pair<uint32_t, uint32_t>>
      flows_;  // (source row, destination row); id = index + 1
  int64_t flows_total_ = 0;
  int64_t counter_bucket_ps_ = 0;    // 0 = exact counter samples.
  int64_t occupancy_base_ = 2;       // The SM occupancy tracks' first id.
  int64_t occupancy_bucket_ps_ = 0;  // 0 = exact occupancy samples.
  bool phases_ = true;               // Phase rows written (options and budget).
  int64_t phases_omitted_ = 0;
};

// ---------------------------------------------------------------------------------------------
// JsonEncoder: the Trace Event Format (JSON object form).
// ---------------------------------------------------------------------------------------------
class JsonEncoder final : public TraceEncoder {
 public:
  explicit JsonEncoder(FILE* file) : w_(file) { w_.Raw("{\"traceEvents\":[\n"); }

  void Process(int64_t pid, const std::string& name, int64_t sort_index) override {
    w_.NextEvent();
    w_.Raw("{\"ph\":\"M\",\"pid\":");
    w_.Int(pid);
    w_.Raw(",\"name\":\"process_name\",\"args\":{\"name\":");
    w_.String(name);
    w_.Raw("}}");
    w_.NextEvent();
    w_.Raw("{\"ph\":\"M\",\"pid\":");
    w_.Int(pid);
    w_.Raw(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
    w_.Int(sort_index);
    w_.Raw("}}");
  }

  void Thread(int64_t pid, int64_t tid, const std::string& name, int64_t sort_index) override {
    w_.NextEvent();
    w_.Raw("{\"ph\":\"M\",\"pid\":");
    w_.Int(pid);
    w_.Raw(",\"tid\":");
    w_.Int(tid);
    w_.Raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
    w_.String(name);
    w_.Raw("}}");
    w_.NextEvent();
    w_.Raw("{\"ph\":\"M\",\"pid\":");
    w_.Int(pid);
    w_.Raw(",\"tid\":");
    w_.Int(tid);
    w_.Raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
    w_.Int(sort_index);
    w_.Raw("}}");
  }

  // Counter events name their track themselves.
  void CounterTrack(int64_t, int64_t, const std::string&, const char*) override {}

  void Slice(const TraceSlice& s) override {
    const TimelineRow& r = *s.row;
    const bool is_phase = r.phase != Phase::kOp;
    w_.NextEvent();
    w_.Raw("{\"ph\":\"X\",\"pid\":");
    w_.Int(s.pid);
    w_.Raw(",\"tid\":");
    w_.Int(s.tid);
    w_.Raw(",\"ts\":");
    w_.Micros(s.start_ps);
    w_.Raw(",\"dur\":");
    w_.Micros(s.end_ps - s.start_ps);
    w_.Raw(",\"name\":\"");
    w_.StringBody(s.label);
    if (is_phase) {
      w_.Raw(" \xc2\xb7 ");  // " · "
      w_.Raw(core::ToString(r.phase));
    }
    w_.Raw("\",\"cat\":\"");
    w_.Raw(core::ToString(r.kind));
    if (is_phase) {
      w_.Char(',');
      w_.Raw(core::ToString(r.phase));
    }
    w_.Raw("\",\"args\":{");
    if (r.op.valid()) {
      w_.Raw("\"op\":");
      w_.Int(r.op.value());
      w_.Char(',');
    }
    w_.Raw("\"bytes\":");
    w_.Int(r.bytes);
    w_.Raw(",\"flops\":");
    w_.Double(r.flops);
    if (r.layer != -1) {
      w_.Raw(",\"layer\":");
      w_.Int(r.layer);
    }
    if (r.pass != core::Pass::kNone) {
      w_.Raw(",\"pass\":\"");
      w_.Raw(core::ToString(r.pass));
      w_.Char('"');
    }
    if (r.slice != -1) {
      w_.Raw(",\"slice\":");
      w_.Int(r.slice);
    }
    if (r.collective != CollectiveKind::kNone) {
      w_.Raw(",\"collective\":\"");
      w_.Raw(core::ToString(r.collective));
      w_.Char('"');
    }
    w_.Raw(",\"phase\":\"");
    w_.Raw(core::ToString(r.phase));
    w_.Char('"');
    if (r.stage != -1) {
      w_.Raw(",\"stage\":");
      w_.Int(r.stage);
    }
    if (r.microbatch != -1) {
      w_.Raw(",\"microbatch\":");
      w_.Int(r.microbatch);
    }
    w_.Raw("}}");
  }

  void Flow(const TraceFlow& f) override {
    w_.NextEvent();
    w_.Raw("{\"ph\":\"s\",\"id\":");
    w_.Int(f.id);
    w_.Raw(",\"pid\":");
    w_.Int(f.from_pid);
    w_.Raw(",\"tid\":");
    w_.Int(f.from_tid);
    w_.Raw(",\"ts\":");
    w_.Micros(f.from_ps);
    w_.Raw(",\"name\":\"dep\",\"cat\":\"dep\",\"args\":{\"from\":");
    w_.Int(f.from_op);
    w_.Raw(",\"to\":");
    w_.Int(f.to_op);
    w_.Raw("}}");
    w_.NextEvent();
    w_.Raw("{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    w_.Int(f.id);
    w_.Raw(",\"pid\":");
    w_.Int(f.to_pid);
    w_.Raw(",\"tid\":");
    w_.Int(f.to_tid);
    w_.Raw(",\"ts\":");
    w_.Micros(f.to_ps);
    w_.Raw(",\"name\":\"dep\",\"cat\":\"dep\"}");
  }

  void Counter(int64_t, int64_t pid, const std::string& name, const char* suffix, const char* key,
               int64_t ps, double value) override {
    w_.NextEvent();
    w_.Raw("{\"ph\":\"C\",\"pid\":");
    w_.Int(pid);
    w_.Raw(",\"ts\":");
    w_.Micros(ps);
    w_.Raw(",\"name\":\"");
    w_.StringBody(name);
    w_.Raw(suffix);
    w_.Raw("\",\"args\":{\"");
    w_.Raw(key);
    w_.Raw("\":");
    w_.Double(value, 6);
    w_.Raw("}}");
  }

  void Finish(const std::vector<std::pair<std::string, std::string>>& facts, int64_t) override {
    w_.Raw("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
    for (size_t i = 0; i < facts.size(); ++i) {
      if (i > 0) w_.Raw(",\n");
      w_.String(facts[i].first);
      w_.Char(':');
      w_.String(facts[i].second);
    }
    w_.Raw("}}\n");
  }

  bool Flush() override { return w_.Flush(); }
  bool ok() const override { return w_.ok(); }
  int error() const override { return w_.error(); }

 private:
  JsonWriter w_;
};

absl::Status WriteError(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': ", why));
}

}  // namespace

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : Utf8Length(s, i);
    if (n == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

const char* ToString(TraceFormat format) {
  return format == TraceFormat::kPerfetto ? "perfetto" : "json";
}

absl::StatusOr<ChromeTraceOptions> TraceOptionsForDetail(const std::string& key,
                                                         const std::string& detail) {
  ChromeTraceOptions options;
  if (detail == "full") {
    options.max_phase_rows = -1;
    options.max_counter_samples = -1;
    options.max_flows = -1;
    options.max_core_threads = -1;
    options.max_op_slices = -1;
  } else if (detail == "minimal") {
    options.phases = options.counters = options.flows = false;
  } else if (detail != "auto") {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key, ": '", detail, "' is not allowed; allowed: auto, full, minimal",
                     core::DidYouMean(detail, {"auto", "full", "minimal"})));
  }
  return options;
}

const char* TraceKind(const ChromeTraceOptions& options) {
  return options.format == TraceFormat::kPerfetto ? "Perfetto trace" : "Chrome trace";
}

absl::StatusOr<TraceFormat> ResolveTraceFormat(const std::string& path_key, const std::string& path,
                                               const std::string& format_key,
                                               const std::string& format) {
  const auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() &&
           std::equal(suffix.rbegin(), suffix.rend(), path.rbegin(), [](char a, char b) {
             return a == std::tolower(static_cast<unsigned char>(b));
           });
  };
  const bool perfetto_name = ends_with(".pftrace") || ends_with(".perfetto-trace");
  const bool json_name = ends_with(".json");
  if (!path.empty() && (ends_with(".h5") || ends_with(".hdf5") || ends_with(".he5"))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", path_key, ": '", path,
        "' is an HDF5 archive name (.h5, .hdf5, .he5), not a trace; allowed: a name ending in "
        ".json (Chrome JSON), .pftrace or .perfetto-trace (Perfetto)"));
  }
  if (!path.empty() && !perfetto_name && !json_name && format.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--", path_key, ": '", path,
        "' has no trace extension; allowed: a name ending in .json (Chrome JSON), .pftrace or "
        ".perfetto-trace (Perfetto), or another name with --",
        format_key, " json|perfetto"));
  }
  if (format.empty()) return perfetto_name ? TraceFormat::kPerfetto : TraceFormat::kJson;
  TraceFormat f;
  if (format == "json") {
    f = TraceFormat::kJson;
  } else if (format == "perfetto") {
    f = TraceFormat::kPerfetto;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--", format_key, ": '", format,
                                                   "' is not allowed; allowed: json, perfetto",
                                                   core::DidYouMean(format, {"json", "perfetto"})));
  }
  if ((f == TraceFormat::kJson && perfetto_name) || (f == TraceFormat::kPerfetto && json_name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", format_key, ": '", format, "' contradicts the file name '", path,
                     "' of --", path_key, "; allowed: ", perfetto_name ? "perfetto" : "json",
                     " for that name, or drop --", format_key, " (the extension chooses)"));
  }
  return f;
}

absl::Status WriteChromeTrace(const RunRecord& run, const std::string& path,
                              const ChromeTraceOptions& options) {
  if (path.empty()) return WriteError(path, "empty path");
  const std::string tmp = absl::StrCat(path, ".tmp.", static_cast<int64_t>(::getpid()));
  const TempFile registration(tmp);  // Removed on SIGINT/SIGTERM/SIGHUP.
  FILE* file = std::fopen(tmp.c_str(), "wb");
  if (file == nullptr) return WriteError(path, std::strerror(errno));

  int error = 0;
  {
    ChromeTraceOptions effective = options;
    std::unique_ptr<TraceEncoder> encoder;
    if (options.format == TraceFormat::kPerfetto) {
      effective.resolution = TraceTimeResolution::kNanosecond;  // Perfetto stores nanoseconds.
      encoder = MakePerfettoEncoder(file);
    } else {
      encoder = std::make_unique<JsonEncoder>(file);
    }
    const TraceRows selected = SelectRows(run.timeline, run.chips, effective);
    Exporter(run, selected, effective).Write(*encoder);
    if (!encoder->Flush()) error = encoder->error();
  }
  if (std::fclose(file) != 0 && error == 0) error = errno != 0 ? errno : EIO;
  if (error == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) error = errno != 0 ? errno : EIO;
  if (error != 0) {
    std::remove(tmp.c_str());
    return WriteError(path, std::strerror(error));
  }
  return absl::OkStatus();
}

}  // namespace meshsim::formats
