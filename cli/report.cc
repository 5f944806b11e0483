#include "cli/report.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/params.h"
#include "core/time.h"
#include "sim/metrics.h"
#include "sim/workload_registry.h"

namespace meshsim::sim::cli {

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// A config value in JSON: a number when it is one, else a string.
std::string JsonConfigValue(const std::string& v) {
  return formats::TypeOfConfigValue(v) == formats::ConfigValueType::kText ? JsonString(v) : v;
}

std::string JsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  return core::FormatDouble(v);
}

namespace {

// Human quantities: seconds, bytes, flops with a unit prefix.
// Any double (archives are read back, so NaN, infinities and huge values must print too).
std::string Seconds(double s) {
  if (std::isnan(s)) return "n/a";
  if (!std::isfinite(s) || std::abs(s) >= 1e6) return absl::StrFormat("%.4g s", s);
  return core::Time::Seconds(s).ToString();
}
std::string Bytes(double b) {
  if (b >= 1073741824.0) return absl::StrFormat("%.3f GiB", b / 1073741824.0);
  if (b >= 1048576.0) return absl::StrFormat("%.3f MiB", b / 1048576.0);
  if (b >= 1024.0) return absl::StrFormat("%.3f KiB", b / 1024.0);
  return absl::StrFormat("%.0f B", b);
}
std::string Count(double v, const char* unit) {
  if (v >= 1e15) return absl::StrFormat("%.3f P%s", v / 1e15, unit);
  if (v >= 1e12) return absl::StrFormat("%.3f T%s", v / 1e12, unit);
  if (v >= 1e9) return absl::StrFormat("%.3f G%s", v / 1e9, unit);
  if (v >= 1e6) return absl::StrFormat("%.3f M%s", v / 1e6, unit);
  if (v >= 1e3) return absl::StrFormat("%.3f k%s", v / 1e3, unit);
  return absl::StrFormat("%.0f %s", v, unit);
}

std::string ConfigValue(const formats::RunRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.config)
    if (k == key) return v;
  return "";
}

// A swept key's value as the experiment asked for it (RunRecord::requested), else the config's.
std::string KeyValue(const formats::RunRecord& r, const std::string& key) {
  for (const auto& [k, v] : r.requested)
    if (k == key) return v;
  return ConfigValue(r, key);
}

// The record's GeMM spans: kept by Simulate, else derived from a stored timeline.
std::vector<formats::GemmSpan> Spans(const formats::RunRecord& r) {
  return r.gemms.empty() ? GemmSpans(r.timeline, r.names) : r.gemms;
}

// A pipeline runs every GeMM once per microbatch on one stage's chips: the spans cover the step
// and the shares interleave, so the table sums each GeMM's busy time instead.
void PrintPipelineGemms(const formats::RunRecord& r, std::vector<formats::GemmSpan> spans,
                        std::ostream& os) {
  if (!r.timeline.empty() && std::any_of(spans.begin(), spans.end(),
                                         [](const formats::GemmSpan& g) { return g.chips == 0; })) {
    spans = GemmSpans(r.timeline, r.names);  // An archive's spans have no busy times.
  }
  const double peak = r.Metric("chip_peak_flops_per_s", r.Metric("chip_peak_flops"));
  const double makespan = r.Metric("makespan_s");
  size_t width = 22;  // The label column fits the longest label.
  for (const formats::GemmSpan& g : spans) width = std::max(width, g.label.size());
  os << absl::StrFormat("  %-*s %6s %12s %10s %10s\n", width, "GeMM", "chips", "busy", "FLOP util",
                        "of step");
  for (const formats::GemmSpan& g : spans) {
    const double busy = g.busy.seconds();
    if (g.chips == 0 || busy <= 0) {
      os << absl::StrFormat("  %-*s %6s %12s %10s %10s\n", width, g.label, "-", "-", "-", "-");
      continue;
    }
    const double chip_busy = g.chip_busy.seconds();
    const double util = peak > 0 && chip_busy > 0 ? 100 * g.flops / (peak * chip_busy) : 0.0;
    const double of_step = makespan > 0 ? 100 * busy / makespan : 0.0;
    os << absl::StrFormat("  %-*s %6d %12s %9.1f%% %9.1f%%\n", width, g.label, g.chips,
                          g.busy.ToString(), util, of_step);
  }
  os << "  (per GeMM over all microbatches: busy = time some chip computed it, of step = busy / "
        "makespan, FLOP util = flops / (peak x the time each chip computed it, summed))\n";
}

void PrintGemms(const formats::RunRecord& r, std::ostream& os) {
  const std::vector<formats::GemmSpan> spans = Spans(r);
  if (spans.size() < 2) return;
  if (ConfigValue(r, "workload") == "pipeline") return PrintPipelineGemms(r, spans, os);
  // Archives of schema version 3 and older name the peak chip_peak_flops.
  const double peak = r.Metric("chip_peak_flops_per_s", r.Metric("chip_peak_flops")) * r.chips;
  os << absl::StrFormat("  %-22s %12s %12s %10s %12s %10s\n", "GeMM", "start", "time", "FLOP util",
                        "share", "share util");
  for (const formats::GemmSpan& g : spans) {
    const auto percent = [&](core::Time t) {
      return t > core::Time::Zero() && peak > 0 ? 100 * g.flops / (peak * t.seconds()) : 0.0;
    };
    os << absl::StrFormat("  %-22s %12s %12s %9.1f%% %12s %9.1f%%\n", g.label, g.start.ToString(),
                          (g.end - g.start).ToString(), percent(g.end - g.start),
                          g.share.ToString(), percent(g.share));
  }
  os << "  (time: first op to last op of the GeMM; share: from the previous GeMM's end to its "
        "own, the shares add up to the last end)\n";
}

void PrintTable(const formats::RunRecord& r, std::ostream& os) {
  const double makespan = r.Metric("makespan_s");
  const double wall = r.Metric("wall_s");
  const double events = r.Metric("events");
  os << absl::StrFormat("run '%s': workload %s on %d chips of %s (mesh %s, topology %s)\n", r.name,
                        ConfigValue(r, "workload"), r.chips, ConfigValue(r, "system"),
                        ConfigValue(r, "mesh"), ConfigValue(r, "topology"));
  const auto line = [&](const std::string& what, const std::string& value) {
    os << absl::StrFormat("  %-26s %s\n", what, value);
  };
  line("makespan", Seconds(makespan));
  line("useful work", Count(r.Metric("flops"), "flop"));
  line("FLOP utilization", absl::StrFormat("%.2f %%", 100 * r.Metric("flop_utilization")));
  line("comm launch (per chip)", Seconds(r.Metric("comm.launch_s")));
  line("comm sync (per chip)", Seconds(r.Metric("comm.sync_s")));
  line("comm transfer (per chip)", Seconds(r.Metric("comm.transfer_s")));
  line("comm exposed (per chip)", Seconds(r.Metric("comm.exposed_s")));
  if (r.Metric("comm.calls_simple", -1) >= 0) {
    line("comm calls by protocol",
         absl::StrFormat("LL %.0f, LL128 %.0f, Simple %.0f", r.Metric("comm.calls_ll"),
                         r.Metric("comm.calls_ll128"), r.Metric("comm.calls_simple")));
  }
  line("bytes sent per chip", Bytes(r.Metric("bytes_sent_per_chip")));
  if (const double tf = r.Metric("tflops", -1); tf >= 0) {
    // --workload pipeline: one training step of the whole model.
    line("step TFLOPS", absl::StrFormat("%.2f over all chips, %.2f per chip (Megatron flops %.4g, "
                                        "1 TFLOPS = 1e12/s)",
                                        tf, r.Metric("tflops_per_gpu"), r.Metric("step_flops")));
    for (int i = 0; r.Metric(absl::StrCat("stage", i, "_layers"), -1) >= 0; ++i) {
      const std::string s = absl::StrCat("stage", i, "_");
      line(absl::StrCat("stage ", i),
           absl::StrFormat("%.0f layers, %.0f microbatches in flight, HBM per chip %s (weights "
                           "and optimizer %s + activations %s per microbatch)",
                           r.Metric(s + "layers"), r.Metric(s + "in_flight"),
                           Bytes(r.Metric(s + "peak_bytes")), Bytes(r.Metric(s + "weight_bytes")),
                           Bytes(r.Metric(s + "activation_bytes"))));
    }
  } else if (const double tf = r.Metric("tflops_per_gpu", -1); tf >= 0) {
    line("TFLOPS per GPU", absl::StrFormat("%.2f (Megatron layer flops %.4g, 1 TFLOPS = 1e12/s)",
                                           tf, r.Metric("layer_flops")));
  }
  if (const double layers = r.Metric("model_layers", 1); layers > 1 && r.Metric("tflops", -1) < 0) {
    // --workload layer simulates a whole layer, llm only a block's FC layers.
    const bool whole = r.Metric("tflops_per_gpu", -1) >= 0;
    line(whole ? "model time" : "model FC time",
         absl::StrFormat("%s (one %s × %.0f layers)", Seconds(r.Metric("model_fc_time_s")),
                         whole ? "layer" : "block", layers));
  }
  for (const std::string& key : ReportedMetricsOf(KeyValue(r, "workload"))) {
    line(key, absl::StrFormat("%.6g", r.Metric(key)));
  }
  line("ops", absl::StrFormat("%.0f", r.Metric("ops")));
  line("events", absl::StrFormat("%.0f (%s in %.3f s wall)", events,
                                 Count(wall > 0 ? events / wall : 0, "events/s"), wall));
  if (const double simulated = r.Metric("simulated_chips", -1);
      simulated >= 0 && simulated < r.chips) {
    line("chips simulated", absl::StrFormat("%.0f of %d (folded: the others run in step with "
                                            "these, by the torus's symmetry)",
                                            simulated, r.chips));
  }
  PrintGemms(r, os);
}

void PrintJson(const formats::RunRecord& r, std::ostream& os,
               const std::vector<std::string>& top_keys) {
  os << "{\"run\": " << JsonString(r.name);
  for (const std::string& k : top_keys) {
    // null: the run does not read the key (a swept key of other runs).
    const std::string v = KeyValue(r, k);
    os << ", " << JsonString(k) << ": " << (v.empty() ? "null" : JsonConfigValue(v));
  }
  if (!r.error.empty()) {  // A failed run (sweep --keep-going): its error, no results.
    os << ", \"chips\": " << r.chips << ", \"error\": " << JsonString(r.error) << "}";
    return;
  }
  for (const char* key : {"makespan_s", "flops", "flop_utilization"}) {
    os << ", " << JsonString(key) << ": " << JsonNumber(r.Metric(key));
  }
  os << ", \"chips\": " << r.chips;
  os << ", \"comm\": {";
  const char* sep = "";
  for (const char* key : {"launch_s", "sync_s", "transfer_s", "exposed_s"}) {
    os << sep << JsonString(key) << ": " << JsonNumber(r.Metric(absl::StrCat("comm.", key)));
    sep = ", ";
  }
  if (r.Metric("comm.calls_simple", -1) >= 0) {  // A stack whose protocols cost something.
    os << ", \"calls\": {";
    sep = "";
    for (const char* p : {"ll", "ll128", "simple"}) {
      os << sep << JsonString(p) << ": " << JsonNumber(r.Metric(absl::StrCat("comm.calls_", p)));
      sep = ", ";
    }
    os << "}";
  }
  os << "}";
  for (const char* key : {"compute_s", "bytes_sent_per_chip", "ops", "events", "wall_s",
                          "model_layers", "model_fc_time_s"}) {
    os << ", " << JsonString(key) << ": " << JsonNumber(r.Metric(key));
  }
  for (const char* key : {"simulated_chips", "layer_flops", "tflops_per_gpu", "step_time_s",
                          "step_flops", "tflops", "pipeline_messages"}) {
    if (const double v = r.Metric(key, -1); v >= 0) {
      os << ", " << JsonString(key) << ": " << JsonNumber(v);
    }
  }
  for (const std::string& key : ReportedMetricsOf(KeyValue(r, "workload"))) {
    os << ", " << JsonString(key) << ": " << JsonNumber(r.Metric(key));
  }
  // --workload pipeline: per stage, its layers, microbatches in flight and HBM per chip.
  for (const auto& [key, value] : r.metrics) {
    if (key.rfind("stage", 0) == 0 && key.find('_') != std::string::npos) {
      os << ", " << JsonString(key) << ": " << JsonNumber(value);
    }
  }
  if (!r.warnings.empty()) {
    os << ", \"warnings\": [";
    for (size_t i = 0; i < r.warnings.size(); ++i)
      os << (i ? ", " : "") << JsonString(r.warnings[i]);
    os << "]";
  }
  os << ", \"gemms\": [";
  sep = "";
  for (const formats::GemmSpan& g : Spans(r)) {
    os << sep << "{\"name\": " << JsonString(g.label)
       << ", \"start_s\": " << JsonNumber(g.start.seconds())
       << ", \"time_s\": " << JsonNumber((g.end - g.start).seconds())
       << ", \"share_s\": " << JsonNumber(g.share.seconds())
       << ", \"flops\": " << JsonNumber(g.flops) << "}";
    sep = ", ";
  }
  os << "]";
  os << ", \"config\": {";
  sep = "";
  for (const auto& [k, v] : r.config) {
    // Numbers as numbers (CLI.md: the resolved values, typed).
    os << sep << JsonString(k) << ": " << JsonConfigValue(v);
    sep = ", ";
  }
  os << "}}";
}

}  // namespace

void PrintSummary(const std::vector<const formats::RunRecord*>& runs,
                  const std::vector<std::string>& keys, std::ostream& os) {
  double baseline = 0;
  for (const formats::RunRecord* r : runs) {
    if (r->name == "collective") baseline = r->Metric("makespan_s");
  }
  std::vector<size_t> width;
  for (const std::string& k : keys) {
    size_t w = k.size();
    for (const formats::RunRecord* r : runs) w = std::max(w, KeyValue(*r, k).size());
    width.push_back(w);
  }
  size_t name_width = 9;
  for (const formats::RunRecord* r : runs) name_width = std::max(name_width, r->name.size());
  const auto row = [&](const std::string& name, const std::vector<std::string>& values,
                       const std::string& a, const std::string& b, const std::string& c,
                       const std::string& d) {
    os << "  " << absl::StrFormat("%-*s", name_width, name);
    for (size_t i = 0; i < values.size(); ++i)
      os << "  " << absl::StrFormat("%-*s", width[i], values[i]);
    os << absl::StrFormat("  %12s %10s %13s", a, b, c);
    if (baseline > 0) os << absl::StrFormat(" %13s", d);
    os << "\n";
  };
  row("run", keys, "makespan", "FLOP util", "comm exposed", "vs collective");
  for (const formats::RunRecord* r : runs) {
    std::vector<std::string> values;
    for (const std::string& k : keys) values.push_back(KeyValue(*r, k));
    if (!r->error.empty()) {  // Stored by sweep --keep-going.
      row(r->name, values, "failed", "-", "-", "-");
      continue;
    }
    const double t = r->Metric("makespan_s");
    row(r->name, values, Seconds(t), absl::StrFormat("%.1f%%", 100 * r->Metric("flop_utilization")),
        Seconds(r->Metric("comm.exposed_s")),
        baseline > 0 && t > 0 ? absl::StrFormat("%.2fx", baseline / t) : "-");
  }
}

void PrintComparison(const std::vector<const formats::RunRecord*>& runs, std::ostream& os) {
  if (runs.empty()) return;
  const formats::RunRecord& first = *runs.front();
  const std::string what = ConfigValue(first, "workload") == "llm" ? ConfigValue(first, "model")
                                                                   : ConfigValue(first, "workload");
  os << absl::StrFormat("%s on %d chips of %s (batch %s, seq %s, pass %s)\n", what, first.chips,
                        ConfigValue(first, "system"), ConfigValue(first, "batch"),
                        ConfigValue(first, "seq"), ConfigValue(first, "pass"));
  PrintSummary(runs, {"topology", "mesh", "slices"}, os);
}

void PrintRuns(const std::vector<const formats::RunRecord*>& runs, const std::string& format,
               std::ostream& os, const std::vector<std::string>& top_keys) {
  if (format == "json") {
    if (runs.size() == 1) {
      PrintJson(*runs[0], os, top_keys);
    } else {
      os << "[";
      for (size_t i = 0; i < runs.size(); ++i) {
        if (i) os << ",\n ";
        PrintJson(*runs[i], os, top_keys);
      }
      os << "]";
    }
    os << "\n";
  } else if (format == "csv") {
    if (runs.empty()) return;
    // Columns: run, the metrics (of the first run that has them: a failed run has none), then
    // the config keys that are not also metric names, then `error` when a run failed.
    const formats::RunRecord* model = runs[0];
    for (const formats::RunRecord* r : runs) {
      if (!r->metrics.empty()) {
        model = r;
        break;
      }
    }
    const bool errors = std::any_of(runs.begin(), runs.end(),
                                    [](const formats::RunRecord* r) { return !r->error.empty(); });
    std::vector<std::string> header = {"run"}, config_keys;
    for (const auto& [k, v] : model->metrics) header.push_back(k);
    for (const auto& [k, v] : runs[0]->config) {
      if (std::isnan(model->Metric(k, NAN))) config_keys.push_back(k);
    }
    header.insert(header.end(), config_keys.begin(), config_keys.end());
    if (errors) header.push_back("error");
    os << absl::StrJoin(header, ",") << "\n";
    const auto csv = [](const std::string& s) {
      if (s.find_first_of(",\"\n") == std::string::npos) return s;
      std::string q = "\"";
      for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    };
    for (const formats::RunRecord* r : runs) {
      std::vector<std::string> row = {csv(r->name)};
      for (const auto& [k, v] : model->metrics) row.push_back(JsonNumber(r->Metric(k, NAN)));
      for (const std::string& k : config_keys) row.push_back(csv(ConfigValue(*r, k)));
      if (errors) row.push_back(csv(r->error));
      os << absl::StrJoin(row, ",") << "\n";
    }
  } else {
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i) os << "\n";
      PrintTable(*runs[i], os);
    }
  }
}

}  // namespace meshsim::sim::cli
