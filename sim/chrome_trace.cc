#include "sim/chrome_trace.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"
#include "sim/temp_files.h"

namespace meshsim::sim {
namespace {

using core::ChipId;
using core::CollectiveKind;
using core::OpKind;
using core::Phase;
using core::TimelineRow;
using core::UnitKind;

constexpr uint32_t kNone = ~uint32_t{0};
constexpr size_t kBufferSize = size_t{1} << 20;
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

// ---------------------------------------------------------------------------------------------
// JsonWriter: formats JSON pieces into a fixed buffer and hands full buffers to a FILE*.
// After the first I/O error it stops writing and remembers errno; callers check ok() at the end.
// ---------------------------------------------------------------------------------------------
class JsonWriter {
 public:
  explicit JsonWriter(FILE* file) : file_(file), buf_(new char[kBufferSize]) {}

  // Appends `s` verbatim (it must already be valid JSON text).
  void Raw(std::string_view s) {
    if (s.size() > kBufferSize - len_) {
      Flush();
      if (s.size() > kBufferSize) {
        WriteOut(s.data(), s.size());
        return;
      }
    }
    std::memcpy(buf_.get() + len_, s.data(), s.size());
    len_ += s.size();
  }

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

  // Writes the buffer out. Returns false after any I/O error.
  bool Flush() {
    if (len_ > 0) WriteOut(buf_.get(), len_);
    len_ = 0;
    return ok();
  }

  bool ok() const { return error_ == 0; }
  int error() const { return error_; }

 private:
  void Ensure(size_t n) {
    if (kBufferSize - len_ < n) Flush();
  }

  void WriteOut(const char* data, size_t n) {
    if (error_ != 0) return;
    if (std::fwrite(data, 1, n, file_) != n) error_ = errno != 0 ? errno : EIO;
  }

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

  // Length of the valid UTF-8 sequence starting at s[i] (a byte >= 0x80), or 0 if invalid.
  static size_t Utf8Length(std::string_view s, size_t i) {
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

  FILE* file_;
  std::unique_ptr<char[]> buf_;
  size_t len_ = 0;
  int error_ = 0;
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

class Exporter {
 public:
  Exporter(const RunRecord& run, const ChromeTraceOptions& options)
      : run_(run), rows_(run.timeline), options_(options) {}

  // Writes the whole document. I/O errors are left in `w`.
  void Write(JsonWriter& w) {
    int64_t phase_rows = 0;
    for (const TimelineRow& r : rows_) phase_rows += r.phase != Phase::kOp;
    phases_ =
        options_.phases && (options_.max_phase_rows < 0 || phase_rows <= options_.max_phase_rows);
    phases_omitted_ = options_.phases && !phases_ ? phase_rows : 0;
    ComputeLayout();
    ComputePids();
    w.Raw("{\"traceEvents\":[\n");
    WriteMetadata(w);
    WriteSlices(w);
    if (options_.flows) WriteFlows(w);
    if (options_.counters) WriteCounters(w);
    w.Raw("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{");
    WriteOtherData(w);
    w.Raw("}}\n");
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

    for (uint32_t i = 0; i < n; ++i)
      if (rows_[i].phase == Phase::kOp) L.op_rows.push_back(i);
    std::sort(L.op_rows.begin(), L.op_rows.end(), [&](uint32_t a, uint32_t b) {
      const TimelineRow &x = rows_[a], &y = rows_[b];
      if (x.op != y.op) return x.op < y.op;
      if (x.chip != y.chip) return x.chip < y.chip;
      return a < b;
    });

    // host[i]: the row whose thread row i shares. A phase row goes with the op-level row of its
    // op on its chip when that row exists and contains it; otherwise it is placed on its own.
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
    nested = {};
    std::vector<uint32_t> anchors;
    for (uint32_t i = 0; i < n; ++i)
      if (host[i] == i) anchors.push_back(i);

    // Greedy lanes per (chip, unit): rows by start; each takes the lowest-numbered lane whose
    // last row ended at or before its start. Heaps keep this O(n log n) with many lanes.
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
    anchors = {};

    for (uint32_t i = 0; i < n; ++i)
      if (host[i] != kNone && host[i] != i) L.thread_of_row[i] = L.thread_of_row[host[i]];
    host = {};

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
  }

  int64_t Pid(ChipId chip) const { return chip.valid() ? int64_t{chip.value()} + 1 : cluster_pid_; }
  int64_t Tid(uint32_t thread) const { return tid_base_ + thread; }

  static std::string ThreadName(const Thread& t) {
    std::string name = core::ToString(t.unit_kind);
    const bool bare =
        (t.unit_kind == UnitKind::kHbm || t.unit_kind == UnitKind::kChip) && t.unit_index == 0;
    if (!bare) absl::StrAppend(&name, " ", t.unit_index);
    if (t.lane > 0) absl::StrAppend(&name, " #", t.lane + 1);
    return name;
  }

  void WriteProcess(JsonWriter& w, int64_t pid, const std::string& name, int64_t sort_index) {
    w.NextEvent();
    w.Raw("{\"ph\":\"M\",\"pid\":");
    w.Int(pid);
    w.Raw(",\"name\":\"process_name\",\"args\":{\"name\":");
    w.String(name);
    w.Raw("}}");
    w.NextEvent();
    w.Raw("{\"ph\":\"M\",\"pid\":");
    w.Int(pid);
    w.Raw(",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":");
    w.Int(sort_index);
    w.Raw("}}");
  }

  void WriteMetadata(JsonWriter& w) {
    if (uses_cluster_) WriteProcess(w, cluster_pid_, "cluster", -1);
    for (int64_t c = 0; c < chip_processes_; ++c)
      WriteProcess(w, c + 1, absl::StrCat("chip ", c), c);
    const auto& threads = layout_.threads;
    for (uint32_t t = 0; t < threads.size(); ++t) {
      const int64_t pid = Pid(ChipId(threads[t].chip));
      w.NextEvent();
      w.Raw("{\"ph\":\"M\",\"pid\":");
      w.Int(pid);
      w.Raw(",\"tid\":");
      w.Int(Tid(t));
      w.Raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
      w.String(ThreadName(threads[t]));
      w.Raw("}}");
      w.NextEvent();
      w.Raw("{\"ph\":\"M\",\"pid\":");
      w.Int(pid);
      w.Raw(",\"tid\":");
      w.Int(Tid(t));
      w.Raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
      w.Int(t);
      w.Raw("}}");
    }
  }

  // The row's label: its interned name, else the collective kind, else the op kind.
  std::string_view Label(const TimelineRow& r) const {
    if (r.name.valid() && r.name.value() < run_.names.size()) return run_.names[r.name.value()];
    if (r.kind == OpKind::kCollective && r.collective != CollectiveKind::kNone)
      return core::ToString(r.collective);
    return core::ToString(r.kind);
  }

  void WriteSlices(JsonWriter& w) {
    for (const uint32_t i : layout_.order) {
      if (!w.ok()) return;
      const TimelineRow& r = rows_[i];
      const bool is_phase = r.phase != Phase::kOp;
      w.NextEvent();
      w.Raw("{\"ph\":\"X\",\"pid\":");
      w.Int(Pid(r.chip));
      w.Raw(",\"tid\":");
      w.Int(Tid(layout_.thread_of_row[i]));
      w.Raw(",\"ts\":");
      const int64_t start = OutStart(r);
      w.Micros(start);
      w.Raw(",\"dur\":");
      w.Micros(OutEnd(r) - start);
      w.Raw(",\"name\":\"");
      w.StringBody(Label(r));
      if (is_phase) {
        w.Raw(" \xc2\xb7 ");  // " · "
        w.Raw(core::ToString(r.phase));
      }
      w.Raw("\",\"cat\":\"");
      w.Raw(core::ToString(r.kind));
      if (is_phase) {
        w.Char(',');
        w.Raw(core::ToString(r.phase));
      }
      w.Raw("\",\"args\":{");
      if (r.op.valid()) {
        w.Raw("\"op\":");
        w.Int(r.op.value());
        w.Char(',');
      }
      w.Raw("\"bytes\":");
      w.Int(r.bytes);
      w.Raw(",\"flops\":");
      w.Double(r.flops);
      if (r.layer != -1) {
        w.Raw(",\"layer\":");
        w.Int(r.layer);
      }
      if (r.pass != core::Pass::kNone) {
        w.Raw(",\"pass\":\"");
        w.Raw(core::ToString(r.pass));
        w.Char('"');
      }
      if (r.slice != -1) {
        w.Raw(",\"slice\":");
        w.Int(r.slice);
      }
      if (r.collective != CollectiveKind::kNone) {
        w.Raw(",\"collective\":\"");
        w.Raw(core::ToString(r.collective));
        w.Char('"');
      }
      w.Raw(",\"phase\":\"");
      w.Raw(core::ToString(r.phase));
      w.Raw("\"}}");
    }
  }

  // One arrow per (edge, op-level row of `to` on a chip where `from` has no op-level row), from
  // the latest-ending op-level row of `from` (ties: lowest chip) to the start of that row.
  void WriteFlows(JsonWriter& w) {
    const auto& ops = layout_.op_rows;
    for (const DepEdge& edge : run_.edges) {
      if (!w.ok()) return;
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
        if (options_.max_flows >= 0 && flows_written_ >= options_.max_flows) continue;
        ++flows_written_;
        WriteFlow(w, src, dst, flows_written_);
      }
    }
  }

  ChipId ChipOf(uint32_t row) const { return rows_[row].chip; }
  static ChipId ChipOf(ChipId chip) { return chip; }

  void WriteFlow(JsonWriter& w, uint32_t src, uint32_t dst, int64_t id) {
    const TimelineRow &s = rows_[src], &d = rows_[dst];
    // Both ends sit 1 ns inside their slices (less for shorter slices): a slice's end is exclusive,
    // and a point strictly inside binds to the right slice in both viewers whatever order they
    // process events with equal timestamps in.
    const int64_t s_start = OutStart(s), s_end = OutEnd(s);
    const int64_t d_start = OutStart(d), d_end = OutEnd(d);
    const int64_t s_ts = s_end - std::min(kOneNs, s_end - s_start);
    const int64_t d_ts = d_start + std::min(kOneNs, d_end - d_start);
    w.NextEvent();
    w.Raw("{\"ph\":\"s\",\"id\":");
    w.Int(id);
    w.Raw(",\"pid\":");
    w.Int(Pid(s.chip));
    w.Raw(",\"tid\":");
    w.Int(Tid(layout_.thread_of_row[src]));
    w.Raw(",\"ts\":");
    w.Micros(s_ts);
    w.Raw(",\"name\":\"dep\",\"cat\":\"dep\",\"args\":{\"from\":");
    w.Int(s.op.value());
    w.Raw(",\"to\":");
    w.Int(d.op.value());
    w.Raw("}}");
    w.NextEvent();
    w.Raw("{\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    w.Int(id);
    w.Raw(",\"pid\":");
    w.Int(Pid(d.chip));
    w.Raw(",\"tid\":");
    w.Int(Tid(layout_.thread_of_row[dst]));
    w.Raw(",\"ts\":");
    w.Micros(d_ts);
    w.Raw(",\"name\":\"dep\",\"cat\":\"dep\"}");
  }

  void WriteCounter(JsonWriter& w, int64_t pid, const std::string& name, const char* suffix,
                    const char* key, int64_t ts, double value) {
    w.NextEvent();
    w.Raw("{\"ph\":\"C\",\"pid\":");
    w.Int(pid);
    w.Raw(",\"ts\":");
    w.Micros(Out(ts));
    w.Raw(",\"name\":\"");
    w.StringBody(name);
    w.Raw(suffix);
    w.Raw("\",\"args\":{\"");
    w.Raw(key);
    w.Raw("\":");
    w.Double(value, 6);
    w.Raw("}}");
  }

  // Exact samples when they fit the budget; otherwise per-resource averages over buckets of
  // `counter_bucket_ps_`, written only where the average changes (by ≥ 0.1% of capacity).
  void WriteCounters(JsonWriter& w) {
    const int64_t budget = options_.max_counter_samples;
    if (budget < 0 || static_cast<int64_t>(run_.counters.size()) <= budget) {
      WriteExactCounters(w);
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
    for (size_t r = 0; r < by_resource.size() && w.ok(); ++r) {
      const auto& samples = by_resource[r];
      if (samples.empty()) continue;
      const core::ResourceInfo& res = run_.resources[r];
      const double capacity = res.capacity_bytes_per_s > 0 ? res.capacity_bytes_per_s : 1.0;
      const int64_t pid = Pid(res.chip);
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
        if (res.capacity_bytes_per_s > 0) {
          WriteCounter(w, pid, res.name, "", "util %", start, 100.0 * average / capacity);
        }
        if (options_.counter_rates || res.capacity_bytes_per_s <= 0) {
          WriteCounter(w, pid, res.name, " GB/s", "GB/s", start, average * 1e-9);
        }
      }
    }
  }

  void WriteExactCounters(JsonWriter& w) {
    for (const core::CounterSample& s : run_.counters) {
      if (!w.ok()) return;
      if (!s.resource.valid() || s.resource.value() >= run_.resources.size()) continue;
      const core::ResourceInfo& res = run_.resources[s.resource.value()];
      const int64_t pid = Pid(res.chip);
      const bool has_capacity = res.capacity_bytes_per_s > 0;
      if (has_capacity) {
        WriteCounter(w, pid, res.name, "", "util %", s.time.ps(),
                     100.0 * s.rate_bytes_per_s / res.capacity_bytes_per_s);
      }
      if (options_.counter_rates || !has_capacity) {
        WriteCounter(w, pid, res.name, " GB/s", "GB/s", s.time.ps(), s.rate_bytes_per_s * 1e-9);
      }
    }
  }

  void OtherString(JsonWriter& w, const std::string& key, const std::string& value) {
    if (other_fields_++ > 0) w.Raw(",\n");
    w.String(key);
    w.Char(':');
    w.String(value);
  }

  static std::string ExactMicros(int64_t ps) {
    char buf[32];
    return std::string(buf, FormatMicros(buf, ps));
  }

  void WriteOtherData(JsonWriter& w) {
    int64_t makespan = 0;
    for (const TimelineRow& r : rows_) makespan = std::max(makespan, EndPs(r));
    OtherString(w, "generator", "meshsim");
    OtherString(w, "run", run_.name);
    OtherString(w, "chips", absl::StrCat(run_.chips));
    OtherString(w, "rows", absl::StrCat(rows_.size()));
    OtherString(w, "makespan", core::Time::Picoseconds(makespan).ToString());
    OtherString(w, "makespan_us", ExactMicros(makespan));
    if (phases_omitted_ > 0) {
      OtherString(w, "phases",
                  absl::StrCat("omitted: ", phases_omitted_, " phase rows exceed the budget of ",
                               options_.max_phase_rows, " (ChromeTraceOptions::max_phase_rows)"));
    }
    if (options_.counters) {
      OtherString(w, "counters",
                  counter_bucket_ps_ > 0
                      ? absl::StrCat("averaged over buckets of ",
                                     core::Time::Picoseconds(counter_bucket_ps_).ToString())
                      : "exact");
    }
    if (options_.flows) {
      OtherString(w, "flows", absl::StrCat(flows_written_));
      OtherString(w, "flows_total", absl::StrCat(flows_total_));
      OtherString(w, "flows_capped",
                  flows_written_ < flows_total_
                      ? absl::StrCat("true: max_flows = ", options_.max_flows)
                      : std::string("false"));
    }
    char num[64];
    for (const auto& [key, value] : run_.metrics) {
      const std::to_chars_result r = std::to_chars(num, num + sizeof(num), value);
      OtherString(w, "metric." + key, std::string(num, r.ptr));
    }
    for (const auto& [key, value] : run_.config) OtherString(w, "config." + key, value);
  }

  const RunRecord& run_;
  const std::vector<TimelineRow>& rows_;
  const ChromeTraceOptions& options_;
  Layout layout_;
  bool uses_cluster_ = false;
  int64_t chip_processes_ = 0;
  int64_t cluster_pid_ = 1;
  int64_t tid_base_ = 2;
  int64_t flows_total_ = 0;
  int64_t counter_bucket_ps_ = 0;  // 0 = exact counter samples.
  bool phases_ = true;             // Phase rows written (options and budget).
  int64_t phases_omitted_ = 0;
  int64_t flows_written_ = 0;
  int other_fields_ = 0;
};

absl::Status WriteError(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "': ", why));
}

}  // namespace

absl::Status WriteChromeTrace(const RunRecord& run, const std::string& path,
                              const ChromeTraceOptions& options) {
  if (path.empty()) return WriteError(path, "empty path");
  const std::string tmp = absl::StrCat(path, ".tmp.", static_cast<int64_t>(::getpid()));
  const TempFile registration(tmp);  // Removed on SIGINT/SIGTERM.
  FILE* file = std::fopen(tmp.c_str(), "wb");
  if (file == nullptr) return WriteError(path, std::strerror(errno));

  int error = 0;
  {
    JsonWriter w(file);
    Exporter(run, options).Write(w);
    if (!w.Flush()) error = w.error();
  }
  if (std::fclose(file) != 0 && error == 0) error = errno != 0 ? errno : EIO;
  if (error == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) error = errno != 0 ? errno : EIO;
  if (error != 0) {
    std::remove(tmp.c_str());
    return WriteError(path, std::strerror(error));
  }
  return absl::OkStatus();
}

}  // namespace meshsim::sim
