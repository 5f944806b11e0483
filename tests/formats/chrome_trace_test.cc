#include "formats/chrome_trace.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/ids.h"
#include "core/op.h"
#include "core/time.h"
#include "core/timeline.h"
#include "formats/perfetto_trace.pb.h"
#include "formats/run_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/options.h"
#include "sim/run.h"
#include "tests/test_temp_dir.h"

namespace meshsim::formats {
namespace {

using core::ChipId;
using core::CollectiveKind;
using core::NameId;
using core::OpId;
using core::OpKind;
using core::Phase;
using core::ResourceId;
using core::Time;
using core::TimelineRow;
using core::UnitKind;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// A minimal JSON parser: enough to check the exporter's output structurally. Numbers keep their
// source text so that timestamps can be compared exactly.
// ---------------------------------------------------------------------------------------------
struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = kNull;
  bool boolean = false;
  double number = 0;
  std::string text;               // String value, or a number's source text.
  std::vector<Json> items;        // Array elements, or object values.
  std::vector<std::string> keys;  // Object keys, parallel to items.

  const Json* Get(const std::string& key) const {
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &items[i];
    return nullptr;
  }
  bool Has(const std::string& key) const { return Get(key) != nullptr; }
  const std::string& Str(const std::string& key) const {
    static const std::string kEmpty;
    const Json* v = Get(key);
    return v != nullptr && v->type == kString ? v->text : kEmpty;
  }
  double Num(const std::string& key) const {
    const Json* v = Get(key);
    return v != nullptr && v->type == kNumber ? v->number : -12345;
  }
  const std::string& NumText(const std::string& key) const {
    static const std::string kEmpty;
    const Json* v = Get(key);
    return v != nullptr && v->type == kNumber ? v->text : kEmpty;
  }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}

  // Parses the whole input; false (with error()) on any syntax error or trailing garbage.
  bool Parse(Json* out) {
    if (!Value(out, 0)) return false;
    SkipSpace();
    if (pos_ != s_.size()) return Fail("trailing characters");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  bool Fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at offset " + std::to_string(pos_);
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool Literal(const char* word) {
    const std::string w(word);
    if (s_.compare(pos_, w.size(), w) != 0) return Fail("bad literal");
    pos_ += w.size();
    return true;
  }
  bool Value(Json* out, int depth) {
    if (depth > 64) return Fail("too deep");
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("unexpected end");
    const char c = s_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->type = Json::kString;
      return String(&out->text);
    }
    if (c == 't') {
      out->type = Json::kBool;
      out->boolean = true;
      return Literal("true");
    }
    if (c == 'f') {
      out->type = Json::kBool;
      return Literal("false");
    }
    if (c == 'n') return Literal("null");
    return Number(out);
  }
  bool Object(Json* out, int depth) {
    out->type = Json::kObject;
    ++pos_;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected key");
      std::string key;
      if (!String(&key)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      Json value;
      if (!Value(&value, depth + 1)) return false;
      out->keys.push_back(std::move(key));
      out->items.push_back(std::move(value));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or '}'");
    }
  }
  bool Array(Json* out, int depth) {
    out->type = Json::kArray;
    ++pos_;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      Json value;
      if (!Value(&value, depth + 1)) return false;
      out->items.push_back(std::move(value));
      SkipSpace();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return Fail("expected ',' or ']'");
    }
  }
  static void AppendUtf8(std::string* out, unsigned cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }
  bool String(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20) return Fail("raw control character in string");
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      if (pos_ >= s_.size()) break;
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return Fail("short \\u escape");
          unsigned cp = 0;
          for (int i = 0; i < 4; ++i) {
            const char h = s_[pos_++];
            if (!std::isxdigit(static_cast<unsigned char>(h))) return Fail("bad \\u escape");
            cp = cp * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                ? h - '0'
                                : std::tolower(static_cast<unsigned char>(h)) - 'a' + 10);
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Fail("bad escape");
      }
    }
    return Fail("unterminated string");
  }
  bool Number(Json* out) {
    const size_t begin = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    const size_t int_begin = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == int_begin) return Fail("bad number");
    if (s_[int_begin] == '0' && pos_ - int_begin > 1) return Fail("leading zero");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      const size_t f = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == f) return Fail("bad fraction");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      const size_t x = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == x) return Fail("bad exponent");
    }
    out->type = Json::kNumber;
    out->text = s_.substr(begin, pos_ - begin);
    out->number = std::strtod(out->text.c_str(), nullptr);
    return true;
  }

  const std::string& s_;
  size_t pos_ = 0;
  std::string error_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string TempPath(const std::string& name) { return testing_temp::TestPath(name); }

Time Us(double us) { return Time::Picoseconds(static_cast<int64_t>(us * 1e6 + 0.5)); }

TimelineRow Row(uint32_t op, uint32_t chip, OpKind kind, double start_us, double end_us,
                UnitKind unit, uint16_t unit_index, Phase phase = Phase::kOp) {
  TimelineRow r;
  r.start = Us(start_us);
  r.end = Us(end_us);
  r.op = OpId(op);
  r.chip = chip == ~0u ? ChipId::Invalid() : ChipId(chip);
  r.kind = kind;
  r.phase = phase;
  r.unit_kind = unit;
  r.unit_index = unit_index;
  return r;
}

// Three chips:
//   op 0  gemm "qkv.fwd.gemm" on chip 0 core 0, [0, 1.5] us
//   op 1  allgather on chips 0,1,2 nic 0, [2, 5] us; phases sync [2,3], transfer [3,5]
//   op 2  reducescatter on chips 1,2 nic 0, [4, 7] us (overlaps op 1); phases sync, transfer
//   op 3  gemm on chip 1 core 0 [7, 8] us; edge 2->3 is same-chip (no arrow)
//   op 4  delay with no chip (cluster process), named with characters that need escaping
//   op 5  zero-length vector op on chip 2 vector 0 at 9 us
//   op 6  copy on chip 0 hbm [123.456789, 124] us
// Edges: 0->1 (arrows to chips 1 and 2 only), 1->2 (none), 2->3 (none).
RunRecord MakeRecord() {
  RunRecord run;
  run.name = "unit \"test\"";
  run.chips = 3;
  run.config = {{"mesh", "1x3"}, {"algorithm", "meshslice"}};
  run.metrics = {{"makespan_s", 124e-6}, {"tflops", 1.25}};
  run.names = {"qkv.fwd.gemm", "odd \"name\"\\\n\x01 \xff end"};

  TimelineRow g = Row(0, 0, OpKind::kGemm, 0, 1.5, UnitKind::kCore, 0);
  g.name = NameId(0);
  g.layer = 2;
  g.pass = core::Pass::kFwd;
  g.flops = 1e9;
  run.timeline.push_back(g);

  for (uint32_t chip = 0; chip < 3; ++chip) {
    TimelineRow op = Row(1, chip, OpKind::kCollective, 2, 5, UnitKind::kNic, 0);
    op.collective = CollectiveKind::kAllGather;
    op.bytes = 1 << 20;
    op.slice = 1;
    run.timeline.push_back(op);
    TimelineRow sync = Row(1, chip, OpKind::kCollective, 2, 3, UnitKind::kNic, 0, Phase::kSync);
    sync.collective = CollectiveKind::kAllGather;
    run.timeline.push_back(sync);
    TimelineRow xfer = Row(1, chip, OpKind::kCollective, 3, 5, UnitKind::kNic, 0, Phase::kTransfer);
    xfer.collective = CollectiveKind::kAllGather;
    xfer.bytes = 1 << 20;
    run.timeline.push_back(xfer);
  }
  for (uint32_t chip = 1; chip < 3; ++chip) {
    TimelineRow op = Row(2, chip, OpKind::kCollective, 4, 7, UnitKind::kNic, 0);
    op.collective = CollectiveKind::kReduceScatter;
    run.timeline.push_back(op);
    TimelineRow sync = Row(2, chip, OpKind::kCollective, 4, 4.5, UnitKind::kNic, 0, Phase::kSync);
    sync.collective = CollectiveKind::kReduceScatter;
    run.timeline.push_back(sync);
    TimelineRow xfer =
        Row(2, chip, OpKind::kCollective, 4.5, 7, UnitKind::kNic, 0, Phase::kTransfer);
    xfer.collective = CollectiveKind::kReduceScatter;
    run.timeline.push_back(xfer);
  }
  run.timeline.push_back(Row(3, 1, OpKind::kGemm, 7, 8, UnitKind::kCore, 0));
  TimelineRow d = Row(4, ~0u, OpKind::kDelay, 0, 10, UnitKind::kChip, 0);
  d.name = NameId(1);
  run.timeline.push_back(d);
  run.timeline.push_back(Row(5, 2, OpKind::kVector, 9, 9, UnitKind::kVector, 0));
  TimelineRow copy = Row(6, 0, OpKind::kCopy, 0, 124, UnitKind::kHbm, 0);
  copy.start = Time::Picoseconds(123'456'789);
  run.timeline.push_back(copy);

  run.edges = {{OpId(0), OpId(1)}, {OpId(1), OpId(2)}, {OpId(2), OpId(3)}};

  core::ResourceInfo hbm;
  hbm.name = "chip0.hbm";
  hbm.kind = core::ResourceKind::kHbm;
  hbm.chip = ChipId(0);
  hbm.capacity_bytes_per_s = 100e9;
  core::ResourceInfo link;
  link.name = "link 1->2";
  link.kind = core::ResourceKind::kLink;
  link.chip = ChipId(1);
  link.peer = ChipId(2);
  link.capacity_bytes_per_s = 50e9;
  run.resources = {hbm, link};
  run.counters = {
      {Time::Zero(), ResourceId(0), 50e9}, {Us(2), ResourceId(1), 25e9}, {Us(5), ResourceId(1), 0}};
  return run;
}

struct Trace {
  Json root;
  std::vector<const Json*> events;
  std::string text;

  std::vector<const Json*> Phase(const std::string& ph) const {
    std::vector<const Json*> out;
    for (const Json* e : events)
      if (e->Str("ph") == ph) out.push_back(e);
    return out;
  }
  // The X event of (op, pid, phase).
  const Json* Slice(int op, int pid, const std::string& phase) const {
    for (const Json* e : Phase("X")) {
      const Json* args = e->Get("args");
      if (args != nullptr && args->Num("op") == op && e->Num("pid") == pid &&
          args->Str("phase") == phase)
        return e;
    }
    return nullptr;
  }
  std::string ProcessName(double pid) const {
    for (const Json* e : Phase("M"))
      if (e->Str("name") == "process_name" && e->Num("pid") == pid)
        return e->Get("args")->Str("name");
    return "";
  }
  std::string ThreadName(double pid, double tid) const {
    for (const Json* e : Phase("M"))
      if (e->Str("name") == "thread_name" && e->Num("pid") == pid && e->Num("tid") == tid)
        return e->Get("args")->Str("name");
    return "";
  }
};

// Exports `run` and parses the result; fails the test on any error.
Trace Export(const RunRecord& run, const std::string& name,
             const ChromeTraceOptions& options = {}) {
  Trace t;
  const std::string path = TempPath(name);
  const absl::Status s = WriteChromeTrace(run, path, options);
  EXPECT_TRUE(s.ok()) << s;
  t.text = ReadFile(path);
  JsonParser parser(t.text);
  EXPECT_TRUE(parser.Parse(&t.root)) << parser.error();
  const Json* events = t.root.Get("traceEvents");
  EXPECT_NE(events, nullptr);
  if (events != nullptr)
    for (const Json& e : events->items) t.events.push_back(&e);
  return t;
}

TEST(ChromeTraceTest, PythonAcceptsTheJson) {
  const std::string path = TempPath("chrome_trace_python.json");
  ASSERT_TRUE(WriteChromeTrace(MakeRecord(), path).ok());
  if (!Exists("/usr/bin/python3")) GTEST_SKIP() << "no python3";
  const std::string cmd =
      "/usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))' " +
      path;
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(ChromeTraceTest, TopLevelAndMetadata) {
  const Trace t = Export(MakeRecord(), "chrome_trace_meta.json");
  ASSERT_EQ(t.root.type, Json::kObject);
  EXPECT_EQ(t.root.Str("displayTimeUnit"), "ns");
  const Json* other = t.root.Get("otherData");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->Str("run"), "unit \"test\"");
  EXPECT_EQ(other->Str("chips"), "3");
  EXPECT_EQ(other->Str("makespan_us"), "124");
  EXPECT_EQ(other->Str("config.mesh"), "1x3");
  EXPECT_EQ(other->Str("config.algorithm"), "meshslice");
  EXPECT_EQ(other->Str("metric.tflops"), "1.25");
  EXPECT_EQ(other->Str("flows"), "2");
  EXPECT_EQ(other->Str("flows_capped"), "false");

  EXPECT_EQ(t.ProcessName(1), "chip 0");
  EXPECT_EQ(t.ProcessName(2), "chip 1");
  EXPECT_EQ(t.ProcessName(3), "chip 2");
  EXPECT_EQ(t.ProcessName(4), "cluster");
  int sort_indices = 0;
  for (const Json* e : t.Phase("M"))
    if (e->Str("name") == "process_sort_index") ++sort_indices;
  EXPECT_EQ(sort_indices, 4);
  // Process-level events carry no tid (Perfetto would otherwise invent a thread 0 per process).
  for (const Json* e : t.Phase("M")) {
    if (e->Str("name") == "process_name" || e->Str("name") == "process_sort_index") {
      EXPECT_FALSE(e->Has("tid"));
    }
  }
  for (const Json* e : t.Phase("C")) EXPECT_FALSE(e->Has("tid"));

  // Every thread used by a slice is named and has a sort index.
  std::set<std::pair<double, double>> used, named, sorted;
  for (const Json* e : t.Phase("X")) used.insert({e->Num("pid"), e->Num("tid")});
  for (const Json* e : t.Phase("M")) {
    if (e->Str("name") == "thread_name") named.insert({e->Num("pid"), e->Num("tid")});
    if (e->Str("name") == "thread_sort_index") sorted.insert({e->Num("pid"), e->Num("tid")});
  }
  EXPECT_EQ(used, named);
  EXPECT_EQ(used, sorted);
  // Thread ids never collide with process ids.
  for (const auto& [pid, tid] : used) EXPECT_GT(tid, 4);

  const Json* gemm = t.Slice(0, 1, "op");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(t.ThreadName(1, gemm->Num("tid")), "core 0");
  const Json* copy = t.Slice(6, 1, "op");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(t.ThreadName(1, copy->Num("tid")), "hbm");
  const Json* vec = t.Slice(5, 3, "op");
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(t.ThreadName(3, vec->Num("tid")), "vector 0");
  const Json* delay = t.Slice(4, 4, "op");
  ASSERT_NE(delay, nullptr);
  EXPECT_EQ(t.ThreadName(4, delay->Num("tid")), "chip");
}

TEST(ChromeTraceTest, CompleteEvents) {
  const RunRecord run = MakeRecord();
  const Trace t = Export(run, "chrome_trace_x.json");
  EXPECT_EQ(t.Phase("X").size(), run.timeline.size());

  const Json* gemm = t.Slice(0, 1, "op");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->NumText("ts"), "0");
  EXPECT_EQ(gemm->NumText("dur"), "1.5");
  EXPECT_EQ(gemm->Str("name"), "qkv.fwd.gemm");
  EXPECT_EQ(gemm->Str("cat"), "gemm");
  const Json* args = gemm->Get("args");
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(args->Num("flops"), 1e9);
  EXPECT_EQ(args->Num("bytes"), 0);
  EXPECT_EQ(args->Num("layer"), 2);
  EXPECT_EQ(args->Str("pass"), "fwd");
  EXPECT_FALSE(args->Has("slice"));
  EXPECT_FALSE(args->Has("collective"));

  // Default resolution: both ends rounded to the nearest ns (123456.789 ns -> 123457 ns).
  const Json* copy = t.Slice(6, 1, "op");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->NumText("ts"), "123.457");
  EXPECT_EQ(copy->NumText("dur"), "0.543");
  EXPECT_EQ(copy->Str("name"), "copy");
  EXPECT_FALSE(copy->Get("args")->Has("layer"));
  EXPECT_FALSE(copy->Get("args")->Has("pass"));

  const Json* ag = t.Slice(1, 2, "op");
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->Str("name"), "allgather");
  EXPECT_EQ(ag->Str("cat"), "collective");
  EXPECT_EQ(ag->NumText("ts"), "2");
  EXPECT_EQ(ag->NumText("dur"), "3");
  EXPECT_EQ(ag->Get("args")->Str("collective"), "allgather");
  EXPECT_EQ(ag->Get("args")->Num("slice"), 1);
  EXPECT_EQ(ag->Get("args")->Num("bytes"), 1 << 20);

  const Json* sync = t.Slice(1, 2, "sync");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->Str("name"), "allgather \xc2\xb7 sync");
  EXPECT_EQ(sync->Str("cat"), "collective,sync");
  EXPECT_EQ(sync->NumText("dur"), "1");

  const Json* zero = t.Slice(5, 3, "op");
  ASSERT_NE(zero, nullptr);
  EXPECT_EQ(zero->NumText("ts"), "9");
  EXPECT_EQ(zero->NumText("dur"), "0");

  // Escaping: quotes, backslash, newline, control char; invalid UTF-8 becomes U+FFFD.
  const Json* delay = t.Slice(4, 4, "op");
  ASSERT_NE(delay, nullptr);
  EXPECT_EQ(delay->Str("name"), "odd \"name\"\\\n\x01 \xef\xbf\xbd end");
}

TEST(ChromeTraceTest, PicosecondResolutionIsExact) {
  ChromeTraceOptions options;
  options.resolution = TraceTimeResolution::kPicosecond;
  const Trace t = Export(MakeRecord(), "chrome_trace_ps.json", options);
  const Json* copy = t.Slice(6, 1, "op");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->NumText("ts"), "123.456789");
  EXPECT_EQ(copy->NumText("dur"), "0.543211");
  const Json* gemm = t.Slice(0, 1, "op");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->NumText("dur"), "1.5");
}

// Perfetto converts `ts` and `dur` to ns separately with llround(us * 1000) and drops a slice that
// starts inside the open slice but ends after it. The default resolution must never trigger that.
TEST(ChromeTraceTest, NanosecondResolutionNestsUnderPerfettoRounding) {
  RunRecord run;
  run.chips = 1;
  // Parent [2000.3 ns, 5000.5 ns]; child [4000.6 ns, 5000.5 ns]; next op starts when it ends.
  // Separately rounded: parent 2000 + 3000 = 5000, child 4001 + 1000 = 5001 (misnested).
  const auto ps_row = [](uint32_t op, int64_t start, int64_t end, Phase phase) {
    TimelineRow r = Row(op, 0, OpKind::kTransfer, 0, 0, UnitKind::kNic, 0, phase);
    r.start = Time::Picoseconds(start);
    r.end = Time::Picoseconds(end);
    return r;
  };
  run.timeline = {ps_row(0, 2'000'300, 5'000'500, Phase::kOp),
                  ps_row(0, 4'000'600, 5'000'500, Phase::kTransfer),
                  ps_row(1, 5'000'500, 7'000'000, Phase::kOp)};
  const auto perfetto_ns = [](const Json* e, const char* key) {
    return std::llround(std::strtod(e->NumText(key).c_str(), nullptr) * 1000.0);
  };
  const auto nested = [&](const Trace& t) {
    const Json* parent = t.Slice(0, 1, "op");
    const Json* child = t.Slice(0, 1, "transfer");
    const Json* next = t.Slice(1, 1, "op");
    const int64_t parent_end = perfetto_ns(parent, "ts") + perfetto_ns(parent, "dur");
    const int64_t child_end = perfetto_ns(child, "ts") + perfetto_ns(child, "dur");
    return child_end <= parent_end && parent_end <= perfetto_ns(next, "ts");
  };
  EXPECT_TRUE(nested(Export(run, "chrome_trace_ns_nest.json")));
  ChromeTraceOptions ps;
  ps.resolution = TraceTimeResolution::kPicosecond;
  EXPECT_FALSE(nested(Export(run, "chrome_trace_ps_nest.json", ps)));  // why kNanosecond exists
}

TEST(ChromeTraceTest, OverlappingRowsGetLanesAndPhasesFollowTheirOp) {
  const Trace t = Export(MakeRecord(), "chrome_trace_lanes.json");
  for (int pid : {2, 3}) {
    const Json* ag = t.Slice(1, pid, "op");
    const Json* rs = t.Slice(2, pid, "op");
    ASSERT_NE(ag, nullptr);
    ASSERT_NE(rs, nullptr);
    EXPECT_NE(ag->Num("tid"), rs->Num("tid"));
    EXPECT_EQ(t.ThreadName(pid, ag->Num("tid")), "nic 0");
    EXPECT_EQ(t.ThreadName(pid, rs->Num("tid")), "nic 0 #2");
    for (const char* phase : {"sync", "transfer"}) {
      ASSERT_NE(t.Slice(1, pid, phase), nullptr);
      ASSERT_NE(t.Slice(2, pid, phase), nullptr);
      EXPECT_EQ(t.Slice(1, pid, phase)->Num("tid"), ag->Num("tid")) << phase;
      EXPECT_EQ(t.Slice(2, pid, phase)->Num("tid"), rs->Num("tid")) << phase;
    }
  }
  // Chip 0 only has the allgather on its NIC: one lane.
  const Json* ag0 = t.Slice(1, 1, "op");
  ASSERT_NE(ag0, nullptr);
  EXPECT_EQ(t.ThreadName(1, ag0->Num("tid")), "nic 0");
}

TEST(ChromeTraceTest, GreedyLanesReuseTheFirstFreeLane) {
  RunRecord run;
  run.chips = 1;
  // A [0,10], B [5,15], C [10,20], D [12,14], E [15,30].
  // A->lane0, B->lane1, C->lane0 (A ended at 10), D->lane2, E->lane1 (B ended at 15).
  const double spans[][2] = {{0, 10}, {5, 15}, {10, 20}, {12, 14}, {15, 30}};
  for (uint32_t i = 0; i < 5; ++i)
    run.timeline.push_back(
        Row(i, 0, OpKind::kTransfer, spans[i][0], spans[i][1], UnitKind::kNic, 3));
  const Trace t = Export(run, "chrome_trace_greedy.json");
  std::vector<std::string> lanes;
  for (int op = 0; op < 5; ++op) {
    const Json* e = t.Slice(op, 1, "op");
    ASSERT_NE(e, nullptr);
    lanes.push_back(t.ThreadName(1, e->Num("tid")));
  }
  EXPECT_THAT(lanes, ::testing::ElementsAre("nic 3", "nic 3 #2", "nic 3", "nic 3 #3", "nic 3 #2"));

  // Within each thread, slices never partially overlap.
  std::map<double, std::vector<std::pair<double, double>>> by_tid;
  for (const Json* e : t.Phase("X"))
    by_tid[e->Num("tid")].push_back({e->Num("ts"), e->Num("ts") + e->Num("dur")});
  for (auto& [tid, spans_of_tid] : by_tid) {
    std::sort(spans_of_tid.begin(), spans_of_tid.end());
    for (size_t i = 1; i < spans_of_tid.size(); ++i)
      EXPECT_LE(spans_of_tid[i - 1].second, spans_of_tid[i].first);
  }
}

TEST(ChromeTraceTest, FlowsOnlyForCrossChipEdges) {
  const Trace t = Export(MakeRecord(), "chrome_trace_flows.json");
  const auto starts = t.Phase("s");
  const auto finishes = t.Phase("f");
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(finishes.size(), 2u);
  const Json* gemm = t.Slice(0, 1, "op");
  ASSERT_NE(gemm, nullptr);
  std::set<double> ids, target_pids;
  for (const Json* s : starts) {
    EXPECT_EQ(s->Num("pid"), 1);
    EXPECT_EQ(s->Num("tid"), gemm->Num("tid"));
    EXPECT_EQ(s->NumText("ts"), "1.499");  // 1 ns before the end of the source slice
    EXPECT_EQ(s->Get("args")->Num("from"), 0);
    EXPECT_EQ(s->Get("args")->Num("to"), 1);
    ids.insert(s->Num("id"));
  }
  EXPECT_EQ(ids.size(), 2u);
  for (const Json* f : finishes) {
    EXPECT_EQ(f->Str("bp"), "e");
    EXPECT_EQ(ids.count(f->Num("id")), 1u);
    const double pid = f->Num("pid");
    target_pids.insert(pid);
    const Json* target = t.Slice(1, static_cast<int>(pid), "op");
    ASSERT_NE(target, nullptr);
    EXPECT_EQ(f->Num("tid"), target->Num("tid"));
    EXPECT_EQ(f->NumText("ts"), "2.001");  // 1 ns after the start of the target slice
    EXPECT_EQ(f->Str("name"), "dep");
    EXPECT_EQ(f->Str("cat"), "dep");
  }
  EXPECT_EQ(target_pids, (std::set<double>{2, 3}));
}

TEST(ChromeTraceTest, FlowSourceIsTheLatestEndingRow) {
  RunRecord run;
  run.chips = 3;
  run.timeline.push_back(Row(0, 0, OpKind::kGemm, 0, 3, UnitKind::kCore, 0));
  run.timeline.push_back(Row(0, 1, OpKind::kGemm, 0, 4, UnitKind::kCore, 0));
  run.timeline.push_back(Row(1, 2, OpKind::kGemm, 5, 6, UnitKind::kCore, 0));
  run.edges = {{OpId(0), OpId(1)}};
  const Trace t = Export(run, "chrome_trace_flow_source.json");
  const auto starts = t.Phase("s");
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0]->Num("pid"), 2);
  EXPECT_EQ(starts[0]->NumText("ts"), "3.999");
}

TEST(ChromeTraceTest, FlowCap) {
  ChromeTraceOptions options;
  options.max_flows = 1;
  const Trace t = Export(MakeRecord(), "chrome_trace_cap.json", options);
  EXPECT_EQ(t.Phase("s").size(), 1u);
  EXPECT_EQ(t.Phase("f").size(), 1u);
  const Json* other = t.root.Get("otherData");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->Str("flows"), "1");
  EXPECT_EQ(other->Str("flows_total"), "2");
  EXPECT_THAT(other->Str("flows_capped"), HasSubstr("true"));
}

TEST(ChromeTraceTest, Counters) {
  ChromeTraceOptions options;
  options.counter_rates = true;
  const Trace t = Export(MakeRecord(), "chrome_trace_counters.json", options);
  std::vector<std::tuple<std::string, double, std::string, double>> util, rate;
  for (const Json* c : t.Phase("C")) {
    const Json* args = c->Get("args");
    ASSERT_NE(args, nullptr);
    if (args->Has("util %"))
      util.emplace_back(c->Str("name"), c->Num("pid"), c->NumText("ts"), args->Num("util %"));
    if (args->Has("GB/s"))
      rate.emplace_back(c->Str("name"), c->Num("pid"), c->NumText("ts"), args->Num("GB/s"));
  }
  using T = std::tuple<std::string, double, std::string, double>;
  EXPECT_THAT(util, ::testing::ElementsAre(T{"chip0.hbm", 1, "0", 50}, T{"link 1->2", 2, "2", 50},
                                           T{"link 1->2", 2, "5", 0}));
  EXPECT_THAT(
      rate, ::testing::ElementsAre(T{"chip0.hbm GB/s", 1, "0", 50}, T{"link 1->2 GB/s", 2, "2", 25},
                                   T{"link 1->2 GB/s", 2, "5", 0}));
}

TEST(ChromeTraceTest, CountersOverBudgetAreBucketAverages) {
  // One link of 100 B/s toggling 100 → 0 every microsecond for 8 us, then idle (9 samples, the
  // last at 8 us). With a budget of 4 samples for 1 track the bucket is 8 us · 1 / 4 = 2 us:
  // buckets [0, 2) … [6, 8) average 50% (written once, at 0: equal averages are not repeated)
  // and [8, 10) averages 0%.
  RunRecord run;
  run.name = "buckets";
  run.chips = 1;
  core::ResourceInfo link;
  link.name = "link";
  link.chip = core::ChipId(0);
  link.capacity_bytes_per_s = 100;
  run.resources.push_back(link);
  for (int i = 0; i <= 8; ++i) {
    run.counters.push_back({Us(i), core::ResourceId(0), i % 2 == 0 && i < 8 ? 100.0 : 0.0});
  }
  ChromeTraceOptions options;
  options.max_counter_samples = 4;
  const Trace t = Export(run, "chrome_trace_buckets.json", options);
  const auto counters = t.Phase("C");
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[0]->NumText("ts"), "0");
  EXPECT_DOUBLE_EQ(counters[0]->Get("args")->Num("util %"), 50);
  EXPECT_EQ(counters[1]->NumText("ts"), "8");
  EXPECT_DOUBLE_EQ(counters[1]->Get("args")->Num("util %"), 0);
  EXPECT_EQ(t.root.Get("otherData")->Str("counters"), "averaged over buckets of 2.000 us");
  // Within the budget the same samples are exact.
  options.max_counter_samples = 9;
  EXPECT_EQ(Export(run, "chrome_trace_exact.json", options).Phase("C").size(), 9u);
}

TEST(ChromeTraceTest, PhaseRowsOverBudgetAreLeftOutAndSaidSo) {
  ChromeTraceOptions options;
  options.max_phase_rows = 0;
  const Trace t = Export(MakeRecord(), "chrome_trace_phase_budget.json", options);
  for (const Json* e : t.Phase("X")) EXPECT_EQ(e->Get("args")->Str("phase"), "op");
  EXPECT_THAT(t.root.Get("otherData")->Str("phases"), ::testing::HasSubstr("omitted"));
  options.max_phase_rows = -1;
  const Trace all = Export(MakeRecord(), "chrome_trace_phase_all.json", options);
  int phases = 0;
  for (const Json* e : all.Phase("X")) phases += e->Get("args")->Str("phase") != "op";
  EXPECT_GT(phases, 0);
}

// Chip 0 is a GPU (16 SMs, each with a row of both GeMMs, ending one after the other), chip 1
// has 2 cores like a TPU; op 2 is a collective on chip 0's NIC after the GeMMs.
RunRecord MakeGpuRecord() {
  RunRecord run;
  run.name = "gpu";
  run.chips = 2;
  for (uint32_t op = 0; op < 2; ++op) {
    for (uint16_t sm = 0; sm < 16; ++sm) {
      TimelineRow r =
          Row(op, 0, OpKind::kGemm, 10.0 * op, 10.0 * op + 5 + 0.25 * sm, UnitKind::kCore, sm);
      r.flops = 100;
      r.bytes = 10;
      run.timeline.push_back(r);
    }
    for (uint16_t core = 0; core < 2; ++core)
      run.timeline.push_back(
          Row(op, 1, OpKind::kGemm, 10.0 * op, 10.0 * op + 6, UnitKind::kCore, core));
  }
  run.timeline.push_back(Row(2, 0, OpKind::kCollective, 20, 22, UnitKind::kNic, 0));
  return run;
}

TEST(ChromeTraceTest, GpuChipIsOneComputeTrackWithSmOccupancy) {
  const RunRecord run = MakeGpuRecord();
  const Trace t = Export(run, "chrome_trace_gpu.json");
  std::set<std::string> chip0_threads, chip1_threads;
  for (const Json* e : t.Phase("M")) {
    if (e->Str("name") != "thread_name") continue;
    (e->Num("pid") == 1 ? chip0_threads : chip1_threads).insert(e->Get("args")->Str("name"));
  }
  EXPECT_EQ(chip0_threads, (std::set<std::string>{"compute", "nic 0"}));
  EXPECT_EQ(chip1_threads, (std::set<std::string>{"core 0", "core 1"}));  // 2 cores: as before
  // One slice per GeMM on chip 0: first start to last end, flops and bytes summed.
  for (int op = 0; op < 2; ++op) {
    const Json* gemm = t.Slice(op, 1, "op");
    ASSERT_NE(gemm, nullptr);
    EXPECT_EQ(gemm->Get("ts")->text, op == 0 ? "0" : "10");
    EXPECT_EQ(gemm->Get("dur")->text, "8.75");
    EXPECT_EQ(gemm->Get("args")->Num("flops"), 1600);
    EXPECT_EQ(gemm->Get("args")->Num("bytes"), 160);
  }
  EXPECT_EQ(t.Phase("X").size(), 2u + 4u + 1u);
  // SM occupancy: 16 busy at each GeMM's start, one fewer every 0.25 us from 5 us, 0 at the end.
  std::vector<std::pair<std::string, double>> busy;
  for (const Json* e : t.Phase("C")) {
    if (e->Str("name") == "chip0.sms busy")
      busy.emplace_back(e->Get("ts")->text, e->Get("args")->Num("SMs busy"));
  }
  ASSERT_EQ(busy.size(), 2u * 17u);
  EXPECT_EQ(busy[0], std::make_pair(std::string("0"), 16.0));
  EXPECT_EQ(busy[1], std::make_pair(std::string("5"), 15.0));
  EXPECT_EQ(busy[16], std::make_pair(std::string("8.75"), 0.0));
  EXPECT_EQ(busy[17], std::make_pair(std::string("10"), 16.0));
  EXPECT_THAT(t.root.Get("otherData")->Str("cores"), HasSubstr("1 chips drawn as one compute"));

  // The most detailed level keeps a thread per SM.
  const Trace full =
      Export(run, "chrome_trace_gpu_full.json", *TraceOptionsForDetail("trace-detail", "full"));
  std::set<std::string> full_threads;
  for (const Json* e : full.Phase("M"))
    if (e->Str("name") == "thread_name" && e->Num("pid") == 1)
      full_threads.insert(e->Get("args")->Str("name"));
  EXPECT_EQ(full_threads.size(), 17u);
  EXPECT_TRUE(full_threads.count("core 15"));
  EXPECT_EQ(full.Phase("X").size(), run.timeline.size());
  EXPECT_FALSE(full.root.Get("otherData")->Has("cores"));
}

TEST(ChromeTraceTest, OpSlicesOverBudgetLeaveOutWholeChipsAndSaySo) {
  const RunRecord run = MakeGpuRecord();
  ChromeTraceOptions options;
  options.max_op_slices = 3;  // chip 0: 2 GeMMs + 1 collective; chip 1's 4 rows do not fit
  const Trace t = Export(run, "chrome_trace_slice_budget.json", options);
  EXPECT_EQ(t.Phase("X").size(), 3u);
  for (const Json* e : t.Phase("X")) EXPECT_EQ(e->Num("pid"), 1);
  EXPECT_EQ(t.root.Get("otherData")->Str("slices"),
            "omitted: 4 op rows of 1 chips exceed the budget of 3 "
            "(ChromeTraceOptions::max_op_slices)");
  EXPECT_EQ(t.ProcessName(2), "chip 1");  // the process stays, empty
}

TEST(ChromeTraceTest, OptionsTurnPartsOff) {
  const RunRecord run = MakeRecord();
  ChromeTraceOptions options;
  options.phases = false;
  options.flows = false;
  options.counters = false;
  const Trace t = Export(run, "chrome_trace_off.json", options);
  size_t op_rows = 0;
  for (const TimelineRow& r : run.timeline) op_rows += r.phase == Phase::kOp;
  EXPECT_EQ(t.Phase("X").size(), op_rows);
  EXPECT_TRUE(t.Phase("s").empty());
  EXPECT_TRUE(t.Phase("f").empty());
  EXPECT_TRUE(t.Phase("C").empty());
  EXPECT_FALSE(t.root.Get("otherData")->Has("flows"));
}

TEST(ChromeTraceTest, EmptyRecordIsValid) {
  const Trace t = Export(RunRecord{}, "chrome_trace_empty.json");
  EXPECT_TRUE(t.Phase("X").empty());
  EXPECT_EQ(t.root.Get("otherData")->Str("makespan_us"), "0");
}

TEST(ChromeTraceTest, OrphanPhaseRowGetsItsOwnPlace) {
  RunRecord run;
  run.chips = 1;
  run.timeline.push_back(Row(0, 0, OpKind::kTransfer, 0, 5, UnitKind::kNic, 0));
  // Phase row of an op without an op-level row, overlapping op 0 on the same NIC.
  run.timeline.push_back(Row(1, 0, OpKind::kTransfer, 2, 7, UnitKind::kNic, 0, Phase::kSync));
  const Trace t = Export(run, "chrome_trace_orphan.json");
  ASSERT_EQ(t.Phase("X").size(), 2u);
  EXPECT_NE(t.Slice(0, 1, "op")->Num("tid"), t.Slice(1, 1, "sync")->Num("tid"));
}

TEST(ChromeTraceTest, OverlappingPhasesOfOneOpAreSplit) {
  RunRecord run;
  run.chips = 1;
  run.timeline.push_back(Row(0, 0, OpKind::kCollective, 0, 10, UnitKind::kNic, 0));
  run.timeline.push_back(Row(0, 0, OpKind::kCollective, 0, 1, UnitKind::kNic, 0, Phase::kSync));
  run.timeline.push_back(Row(0, 0, OpKind::kCollective, 1, 8, UnitKind::kNic, 0, Phase::kTransfer));
  // Runs concurrently with the transfer and ends after it: cannot nest next to it.
  run.timeline.push_back(Row(0, 0, OpKind::kCollective, 5, 10, UnitKind::kNic, 0, Phase::kCompute));
  const Trace t = Export(run, "chrome_trace_phase_overlap.json");
  const double op_tid = t.Slice(0, 1, "op")->Num("tid");
  EXPECT_EQ(t.Slice(0, 1, "sync")->Num("tid"), op_tid);
  EXPECT_EQ(t.Slice(0, 1, "transfer")->Num("tid"), op_tid);
  const double compute_tid = t.Slice(0, 1, "compute")->Num("tid");
  EXPECT_NE(compute_tid, op_tid);
  EXPECT_EQ(t.ThreadName(1, compute_tid), "nic 0 #2");
}

TEST(ChromeTraceTest, UnwritablePathFailsCleanly) {
  const std::string path = "/nonexistent-meshsim-dir/t.json";
  const absl::Status s = WriteChromeTrace(MakeRecord(), path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("'" + path + "'"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("No such file or directory"));
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos);

  // Rename onto a directory fails after the temp file was written: the temp must be removed.
  const std::string dir = TempPath("chrome_trace_is_a_dir");
  ::mkdir(dir.c_str(), 0755);
  const absl::Status d = WriteChromeTrace(MakeRecord(), dir);
  EXPECT_EQ(d.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.message()), HasSubstr(dir));
  EXPECT_FALSE(Exists(dir + ".tmp." + std::to_string(::getpid())));
  ::rmdir(dir.c_str());

  EXPECT_EQ(WriteChromeTrace(MakeRecord(), "").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ChromeTraceTest, WriteErrorMidFileRemovesTheTemporary) {
  // A file-size limit makes the streamed writes fail with EFBIG after 64 KiB.
  RunRecord run;
  run.chips = 2;
  for (uint32_t i = 0; i < 5000; ++i)
    run.timeline.push_back(Row(i, i % 2, OpKind::kGemm, i, i + 0.5, UnitKind::kCore, 0));
  const std::string path = TempPath("chrome_trace_efbig.json");
  std::remove(path.c_str());
  struct rlimit old_limit;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  void (*old_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old_limit;
  limit.rlim_cur = 64 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  const absl::Status s = WriteChromeTrace(run, path);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("File too large"));
  EXPECT_FALSE(Exists(path));
  EXPECT_FALSE(Exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(ChromeTraceTest, OverwritesAnExistingFile) {
  const std::string path = TempPath("chrome_trace_overwrite.json");
  { std::ofstream(path) << "garbage"; }
  ASSERT_TRUE(WriteChromeTrace(MakeRecord(), path).ok());
  Json root;
  const std::string text = ReadFile(path);
  JsonParser parser(text);
  EXPECT_TRUE(parser.Parse(&root)) << parser.error();
  EXPECT_FALSE(Exists(path + ".tmp." + std::to_string(::getpid())));
}

TEST(ChromeTraceTest, ManyRowsStream) {
  // Bigger than the writer's 1 MiB buffer, to exercise flushing mid-document.
  RunRecord run;
  run.chips = 4;
  for (uint32_t i = 0; i < 20000; ++i) {
    TimelineRow r = Row(i, i % 4, OpKind::kGemm, i, i + 1.5, UnitKind::kCore, i % 2);
    r.flops = 1.0 / 3.0 * i;
    run.timeline.push_back(r);
    if (i > 0) run.edges.push_back({OpId(i - 1), OpId(i)});
  }
  const Trace t = Export(run, "chrome_trace_many.json");
  EXPECT_GT(t.text.size(), size_t{1} << 21);
  EXPECT_EQ(t.Phase("X").size(), 20000u);
  EXPECT_EQ(t.Phase("s").size(), 19999u);
}

// ---------------------------------------------------------------------------------------------
// Perfetto protobuf traces: the same tracks, slices, arrows, counters and facts as the JSON.
// ---------------------------------------------------------------------------------------------
namespace pb = ::meshsim::perfetto;

// A number as comparable text (JSON numbers and protobuf ints/doubles alike).
std::string NumberText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// A slice as both formats describe it: where, when (ns), what, how deep it nests, its arguments.
struct SliceKey {
  int64_t pid = 0, tid = 0;
  int64_t start_ns = 0, end_ns = 0;
  std::string name, category;
  int depth = 0;
  std::map<std::string, std::string> args;
  auto operator<=>(const SliceKey&) const = default;
};

struct FlowEnd {
  int64_t pid = 0, tid = 0;
  int64_t at_ns = 0;  // JSON: the flow event's ts; protobuf: -1 (bound to its slice)
  int64_t op = -1;
};

// What a trace shows, in either format.
struct Shown {
  std::map<int64_t, std::string> processes;                    // pid -> name
  std::map<std::pair<int64_t, int64_t>, std::string> threads;  // (pid, tid) -> name
  std::vector<SliceKey> slices;                                // sorted
  std::map<std::pair<int64_t, std::string>, std::vector<std::pair<int64_t, double>>> counters;
  std::map<int64_t, std::pair<SliceKey, SliceKey>> flows;      // id -> (source, destination)
  std::map<int64_t, std::pair<FlowEnd, FlowEnd>> flow_points;  // JSON only
  std::map<std::string, std::string> facts;
};

int64_t MicrosTextToNs(const std::string& text) { return std::llround(std::stod(text) * 1000); }

// Nesting depth of each slice by the viewers' rule: per thread, by start ascending and end
// descending, a slice closes when the next one starts at or after its end.
void AssignDepths(std::vector<SliceKey>& slices) {
  std::sort(slices.begin(), slices.end(), [](const SliceKey& a, const SliceKey& b) {
    return std::tie(a.pid, a.tid, a.start_ns, b.end_ns) <
           std::tie(b.pid, b.tid, b.start_ns, a.end_ns);
  });
  std::vector<int64_t> open;
  for (size_t i = 0; i < slices.size(); ++i) {
    if (i == 0 || slices[i].tid != slices[i - 1].tid || slices[i].pid != slices[i - 1].pid) {
      open.clear();
    }
    while (!open.empty() && open.back() <= slices[i].start_ns) open.pop_back();
    slices[i].depth = static_cast<int>(open.size());
    open.push_back(slices[i].end_ns);
  }
}

Shown FromJson(const Trace& t) {
  Shown s;
  std::map<int64_t, FlowEnd> starts, finishes;
  for (const Json* e : t.events) {
    const std::string& ph = e->Str("ph");
    if (ph == "M" && e->Str("name") == "process_name") {
      s.processes[static_cast<int64_t>(e->Num("pid"))] = e->Get("args")->Str("name");
    } else if (ph == "M" && e->Str("name") == "thread_name") {
      s.threads[{static_cast<int64_t>(e->Num("pid")), static_cast<int64_t>(e->Num("tid"))}] =
          e->Get("args")->Str("name");
    } else if (ph == "X") {
      SliceKey k;
      k.pid = static_cast<int64_t>(e->Num("pid"));
      k.tid = static_cast<int64_t>(e->Num("tid"));
      k.start_ns = MicrosTextToNs(e->NumText("ts"));
      k.end_ns = k.start_ns + MicrosTextToNs(e->NumText("dur"));
      k.name = e->Str("name");
      k.category = e->Str("cat");
      const Json* args = e->Get("args");
      for (size_t i = 0; i < args->keys.size(); ++i) {
        const Json& v = args->items[i];
        k.args[args->keys[i]] = v.type == Json::kNumber ? NumberText(v.number) : v.text;
      }
      s.slices.push_back(k);
    } else if (ph == "C") {
      const Json* args = e->Get("args");
      const std::string& key = args->keys.at(0);
      const std::string track = key == "util %" ? e->Str("name") + " util %" : e->Str("name");
      s.counters[{static_cast<int64_t>(e->Num("pid")), track}].emplace_back(
          MicrosTextToNs(e->NumText("ts")), args->items.at(0).number);
    } else if (ph == "s" || ph == "f") {
      FlowEnd end{static_cast<int64_t>(e->Num("pid")), static_cast<int64_t>(e->Num("tid")),
                  MicrosTextToNs(e->NumText("ts"))};
      const int64_t id = static_cast<int64_t>(e->Num("id"));
      if (ph == "s") {
        end.op = static_cast<int64_t>(e->Get("args")->Num("from"));
        starts[id] = end;
      } else {
        finishes[id] = end;
      }
    }
  }
  AssignDepths(s.slices);
  for (const auto& [id, from] : starts) s.flow_points[id] = {from, finishes.at(id)};
  const Json* other = t.root.Get("otherData");
  for (size_t i = 0; i < other->keys.size(); ++i) s.facts[other->keys[i]] = other->items[i].text;
  return s;
}

// Replays a protobuf trace packet by packet, checking the interning and sequence rules on the way.
Shown FromPerfetto(const std::string& bytes) {
  Shown s;
  pb::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(bytes)) << "not a Trace message";
  std::map<uint64_t, std::string> names, categories, arg_names;
  std::map<uint64_t, std::pair<int64_t, int64_t>> thread_of_track;  // uuid -> (pid, tid)
  std::map<uint64_t, std::pair<int64_t, std::string>> counter_of_track;
  std::map<uint64_t, std::vector<std::pair<SliceKey, const pb::TrackEvent*>>> open;
  std::map<int64_t, SliceKey> flow_from, flow_to;
  std::set<uint64_t> uuids;
  bool first = true;
  const auto intern = [](std::map<uint64_t, std::string>& table, uint64_t iid,
                         const std::string& name) {
    EXPECT_GT(iid, 0u);
    EXPECT_TRUE(table.emplace(iid, name).second) << "iid " << iid << " interned twice";
  };
  for (const pb::TracePacket& p : trace.packet()) {
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u);
    if (first) {
      EXPECT_TRUE(p.sequence_flags() & pb::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
      first = false;
    }
    if (p.has_interned_data()) {
      EXPECT_TRUE(p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
      for (const auto& n : p.interned_data().event_names()) intern(names, n.iid(), n.name());
      for (const auto& c : p.interned_data().event_categories()) {
        intern(categories, c.iid(), c.name());
      }
      for (const auto& a : p.interned_data().debug_annotation_names()) {
        intern(arg_names, a.iid(), a.name());
      }
    }
    if (p.has_track_descriptor()) {
      const pb::TrackDescriptor& d = p.track_descriptor();
      EXPECT_TRUE(uuids.insert(d.uuid()).second) << "track " << d.uuid() << " described twice";
      if (d.has_process()) s.processes[d.process().pid()] = d.process().process_name();
      if (d.has_thread()) {
        s.threads[{d.thread().pid(), d.thread().tid()}] = d.thread().thread_name();
        thread_of_track[d.uuid()] = {d.thread().pid(), d.thread().tid()};
        EXPECT_EQ(d.parent_uuid(), static_cast<uint64_t>(d.thread().pid()));
      }
      if (d.has_counter()) counter_of_track[d.uuid()] = {d.parent_uuid(), d.name()};
    }
    if (!p.has_track_event()) continue;
    const pb::TrackEvent& e = p.track_event();
    const int64_t ts = static_cast<int64_t>(p.timestamp());
    switch (e.type()) {
      case pb::TrackEvent::TYPE_SLICE_BEGIN: {
        EXPECT_TRUE(p.sequence_flags() & pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
        EXPECT_TRUE(thread_of_track.count(e.track_uuid())) << "slice on an undescribed track";
        SliceKey k;
        std::tie(k.pid, k.tid) = thread_of_track[e.track_uuid()];
        k.start_ns = ts;
        EXPECT_FALSE(e.has_name()) << "slice names are interned";
        k.name = names.at(e.name_iid());
        for (uint64_t c : e.category_iids()) {
          k.category += (k.category.empty() ? "" : ",") + categories.at(c);
        }
        for (const pb::DebugAnnotation& a : e.debug_annotations()) {
          const std::string& key = arg_names.at(a.name_iid());
          if (a.has_int_value()) {
            k.args[key] = NumberText(static_cast<double>(a.int_value()));
          } else if (a.has_double_value()) {
            k.args[key] = NumberText(a.double_value());
          } else {
            k.args[key] = a.string_value();
          }
        }
        open[e.track_uuid()].emplace_back(k, &e);
        break;
      }
      case pb::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[e.track_uuid()];
        EXPECT_FALSE(stack.empty()) << "end without begin";
        if (stack.empty()) break;
        auto [k, begin] = stack.back();
        stack.pop_back();
        k.end_ns = ts;
        EXPECT_GE(k.end_ns, k.start_ns);
        k.depth = static_cast<int>(stack.size());
        for (uint64_t id : begin->flow_ids()) flow_from[static_cast<int64_t>(id)] = k;
        for (uint64_t id : begin->terminating_flow_ids()) flow_to[static_cast<int64_t>(id)] = k;
        s.slices.push_back(k);
        break;
      }
      case pb::TrackEvent::TYPE_COUNTER: {
        EXPECT_TRUE(counter_of_track.count(e.track_uuid())) << "counter on an undescribed track";
        s.counters[counter_of_track[e.track_uuid()]].emplace_back(ts, e.double_counter_value());
        break;
      }
      case pb::TrackEvent::TYPE_INSTANT:
        EXPECT_EQ(e.name(), "meshsim run");
        for (const pb::DebugAnnotation& a : e.debug_annotations()) {
          s.facts[a.name()] = a.string_value();
        }
        break;
      default:
        ADD_FAILURE() << "unexpected event type " << e.type();
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "unclosed slice";
  std::sort(s.slices.begin(), s.slices.end(), [](const SliceKey& a, const SliceKey& b) {
    return std::tie(a.pid, a.tid, a.start_ns, b.end_ns) <
           std::tie(b.pid, b.tid, b.start_ns, a.end_ns);
  });
  EXPECT_EQ(flow_from.size(), flow_to.size());
  for (const auto& [id, from] : flow_from) s.flows[id] = {from, flow_to[id]};
  return s;
}

std::vector<SliceKey> Sorted(std::vector<SliceKey> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Writes `run` in both formats and checks that they show the same thing; returns what they show.
Shown ExpectSameInBothFormats(const RunRecord& run, const std::string& name,
                              ChromeTraceOptions options = {}) {
  SCOPED_TRACE(name);
  options.format = TraceFormat::kJson;
  const Trace json = Export(run, name + ".json", options);
  options.format = TraceFormat::kPerfetto;
  const std::string path = TempPath(name + ".pftrace");
  EXPECT_TRUE(WriteChromeTrace(run, path, options).ok());
  const Shown a = FromJson(json), b = FromPerfetto(ReadFile(path));

  EXPECT_EQ(a.processes, b.processes);
  EXPECT_EQ(a.threads, b.threads);
  EXPECT_EQ(a.slices.size(), b.slices.size());
  EXPECT_EQ(Sorted(a.slices), Sorted(b.slices));  // times, names, categories, args and depth
  // Slice counts per track.
  std::map<std::pair<int64_t, int64_t>, int> per_track_a, per_track_b;
  for (const SliceKey& k : a.slices) ++per_track_a[{k.pid, k.tid}];
  for (const SliceKey& k : b.slices) ++per_track_b[{k.pid, k.tid}];
  EXPECT_EQ(per_track_a, per_track_b);

  // Counters: JSON keeps 6 significant digits.
  EXPECT_EQ(a.counters.size(), b.counters.size());
  for (const auto& [track, samples] : a.counters) {
    EXPECT_TRUE(b.counters.count(track)) << track.second;
    if (!b.counters.count(track)) continue;
    const auto& other = b.counters.at(track);
    EXPECT_EQ(samples.size(), other.size()) << track.second;
    for (size_t i = 0; i < std::min(samples.size(), other.size()); ++i) {
      EXPECT_EQ(samples[i].first, other[i].first) << track.second;
      EXPECT_NEAR(samples[i].second, other[i].second, 1e-5 * std::abs(other[i].second) + 1e-9);
    }
  }

  // Arrows: the same ids, each from the slice holding the JSON arrow's start to the one holding
  // its end, between the same ops.
  EXPECT_EQ(a.flow_points.size(), b.flows.size());
  for (const auto& [id, points] : a.flow_points) {
    EXPECT_TRUE(b.flows.count(id)) << "flow " << id;
    if (!b.flows.count(id)) continue;
    const auto& [from, to] = b.flows.at(id);
    EXPECT_EQ(std::make_pair(points.first.pid, points.first.tid),
              std::make_pair(from.pid, from.tid));
    EXPECT_EQ(std::make_pair(points.second.pid, points.second.tid), std::make_pair(to.pid, to.tid));
    EXPECT_TRUE(from.start_ns <= points.first.at_ns && points.first.at_ns <= from.end_ns);
    EXPECT_TRUE(to.start_ns <= points.second.at_ns && points.second.at_ns <= to.end_ns);
    EXPECT_EQ(from.args.at("op"), NumberText(static_cast<double>(points.first.op)));
    EXPECT_EQ(from.depth, 0);  // arrows bind to op slices, not phases
    EXPECT_EQ(to.depth, 0);
  }
  EXPECT_EQ(a.facts, b.facts);
  return b;
}

TEST(PerfettoTraceTest, ShowsWhatTheJsonShows) {
  ChromeTraceOptions options;
  const Shown s = ExpectSameInBothFormats(MakeRecord(), "perfetto_same");
  EXPECT_EQ(s.slices.size(), MakeRecord().timeline.size());
  EXPECT_EQ(s.flows.size(), 2u);  // 0->1 to chips 1 and 2
  EXPECT_EQ(s.counters.size(), 2u);
  EXPECT_EQ(s.processes.size(), 4u);  // cluster + 3 chips
  options.counter_rates = true;
  EXPECT_EQ(ExpectSameInBothFormats(MakeRecord(), "perfetto_same_rates", options).counters.size(),
            4u);
}

TEST(PerfettoTraceTest, ShowsWhatTheJsonShowsWithRatesAndBucketedCounters) {
  ChromeTraceOptions options;
  options.counter_rates = true;
  options.max_counter_samples = 2;
  ExpectSameInBothFormats(MakeRecord(), "perfetto_buckets", options);
}

TEST(PerfettoTraceTest, ShowsWhatTheJsonShowsForASimulatedRun) {
  sim::RawOptions raw;
  raw.values = {{"chips", "4"},          {"mesh", "2x2"}, {"workload", "gemm"},
                {"gemm", "512,512,512"}, {"slices", "2"}, {"algorithm", "meshslice"}};
  absl::StatusOr<sim::RunOptions> o = sim::ResolveRunOptions(raw);
  ASSERT_TRUE(o.ok()) << o.status();
  absl::StatusOr<RunRecord> run = sim::Simulate(*o);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_GT(run->timeline.size(), 20u);
  ChromeTraceOptions full;
  full.max_phase_rows = full.max_counter_samples = full.max_flows = -1;
  const Shown s = ExpectSameInBothFormats(*run, "perfetto_run", full);
  EXPECT_EQ(s.slices.size(), run->timeline.size());
  EXPECT_FALSE(s.counters.empty());
  int max_depth = 0;
  for (const SliceKey& k : s.slices) max_depth = std::max(max_depth, k.depth);
  EXPECT_GE(max_depth, 1);  // phases nest in their ops
}

TEST(PerfettoTraceTest, ShowsWhatTheJsonShowsForAGpuChip) {
  const Shown s = ExpectSameInBothFormats(MakeGpuRecord(), "perfetto_gpu");
  EXPECT_EQ(s.slices.size(), 7u);
}

TEST(PerfettoTraceTest, NamesAreInternedOnceAndTheFileIsSmaller) {
  RunRecord run = MakeRecord();
  // Many rows with few distinct names: each name is sent once.
  for (int i = 0; i < 2000; ++i) {
    TimelineRow r = Row(100 + i, 1, OpKind::kGemm, 20 + i, 20.5 + i, UnitKind::kCore, 1);
    r.name = NameId(0);
    run.timeline.push_back(r);
  }
  ChromeTraceOptions options;
  options.format = TraceFormat::kPerfetto;
  const std::string path = TempPath("perfetto_interned.pftrace");
  ASSERT_TRUE(WriteChromeTrace(run, path, options).ok());
  const std::string bytes = ReadFile(path);
  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  std::multiset<std::string> interned;
  for (const pb::TracePacket& p : trace.packet()) {
    for (const auto& n : p.interned_data().event_names()) interned.insert(n.name());
  }
  EXPECT_EQ(interned.count("qkv.fwd.gemm"), 1u);
  EXPECT_EQ(interned.count("allgather \xc2\xb7 sync"), 1u);
  EXPECT_EQ(std::set<std::string>(interned.begin(), interned.end()).size(), interned.size());
  const Trace json = Export(run, "perfetto_interned.json");
  EXPECT_LT(bytes.size() * 2, json.text.size());
}

TEST(PerfettoTraceTest, PicosecondResolutionStillWritesNanoseconds) {
  ChromeTraceOptions options;
  options.resolution = TraceTimeResolution::kPicosecond;
  options.format = TraceFormat::kPerfetto;
  const std::string path = TempPath("perfetto_ps.pftrace");
  ASSERT_TRUE(WriteChromeTrace(MakeRecord(), path, options).ok());
  const Shown s = FromPerfetto(ReadFile(path));
  // The copy on chip 0 starts at 123.456789 us: 123457 ns.
  bool found = false;
  for (const SliceKey& k : s.slices) found |= k.start_ns == 123457 && k.args.at("op") == "6";
  EXPECT_TRUE(found);
}

TEST(PerfettoTraceTest, EmptyRecordIsAValidTrace) {
  ChromeTraceOptions options;
  options.format = TraceFormat::kPerfetto;
  const std::string path = TempPath("perfetto_empty.pftrace");
  ASSERT_TRUE(WriteChromeTrace(RunRecord{}, path, options).ok());
  const Shown s = FromPerfetto(ReadFile(path));
  EXPECT_TRUE(s.slices.empty());
  EXPECT_EQ(s.facts.at("generator"), "meshsim");
}

TEST(PerfettoTraceTest, UnwritablePathFailsCleanly) {
  ChromeTraceOptions options;
  options.format = TraceFormat::kPerfetto;
  const absl::Status s =
      WriteChromeTrace(MakeRecord(), "/nonexistent-meshsim-dir/t.pftrace", options);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("/nonexistent-meshsim-dir/t.pftrace"));
}

TEST(TraceFormatTest, ExtensionChoosesUnlessTheFormatIsGiven) {
  const auto format = [](const std::string& path, const std::string& f) {
    return ResolveTraceFormat("trace", path, "trace-format", f);
  };
  EXPECT_EQ(*format("a.json", ""), TraceFormat::kJson);
  EXPECT_EQ(*format("a.pftrace", ""), TraceFormat::kPerfetto);
  EXPECT_EQ(*format("dir/a.PFTRACE", ""), TraceFormat::kPerfetto);
  EXPECT_EQ(*format("a.perfetto-trace", ""), TraceFormat::kPerfetto);
  EXPECT_EQ(*format("", ""), TraceFormat::kJson);
  EXPECT_EQ(*format("a.trace", "perfetto"), TraceFormat::kPerfetto);
  EXPECT_EQ(*format("a.pftrace", "perfetto"), TraceFormat::kPerfetto);
  EXPECT_EQ(*format("a.trace", "json"), TraceFormat::kJson);

  absl::StatusOr<TraceFormat> bad = format("a.trace", "protobuf");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "--trace-format: 'protobuf' is not allowed; allowed: json, perfetto");
  bad = format("a.json", "perfetto");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("'perfetto' contradicts the file name 'a.json'"));
  bad = format("a.pftrace", "json");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  // A name without a trace extension once meant JSON silently: it needs --trace-format now.
  bad = format("a.trace", "");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "--trace: 'a.trace' has no trace extension; allowed: a name ending in .json (Chrome "
            "JSON), .pftrace or .perfetto-trace (Perfetto), or another name with --trace-format "
            "json|perfetto");
  // An archive's name is never a trace's, whatever the format.
  for (const std::string f : {"", "json", "perfetto"}) {
    bad = format("dir/run.H5", f);
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << f;
    EXPECT_THAT(bad.status().message(),
                HasSubstr("--trace: 'dir/run.H5' is an HDF5 archive name (.h5, .hdf5, .he5)"));
  }
  EXPECT_FALSE(format("a.hdf5", "").ok());
  EXPECT_FALSE(format("a.he5", "").ok());
}

TEST(TraceFormatTest, DetailLevels) {
  EXPECT_EQ(TraceOptionsForDetail("detail", "auto")->max_phase_rows,
            ChromeTraceOptions{}.max_phase_rows);
  const ChromeTraceOptions full = *TraceOptionsForDetail("detail", "full");
  EXPECT_EQ(full.max_phase_rows, -1);
  EXPECT_EQ(full.max_counter_samples, -1);
  EXPECT_EQ(full.max_flows, -1);
  EXPECT_EQ(full.max_core_threads, -1);
  EXPECT_EQ(full.max_op_slices, -1);
  const ChromeTraceOptions minimal = *TraceOptionsForDetail("detail", "minimal");
  EXPECT_FALSE(minimal.phases || minimal.flows || minimal.counters);
  EXPECT_EQ(TraceOptionsForDetail("trace-detail", "most").status().message(),
            "--trace-detail: 'most' is not allowed; allowed: auto, full, minimal");
}

}  // namespace
}  // namespace meshsim::formats
