// Topology::ToDot — the topology as a Graphviz DOT `graph` in the form graphviz:FILE reads
// (docs/topologies.md), so that reading it back gives the same node ids and links.
//
// Nodes are written in id order (chips first, so they keep ids 0..chips−1) with `kind`, `host`
// on chips, and a shape by kind; edges in link order, one per full-duplex link 2j as
// `src -- dst` of link 2j. Every value is quoted and numbers are printed with 17 significant
// digits, so bandwidths and latencies read back bit for bit.
#include <cmath>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "network/topology.h"

namespace meshsim::network {
namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') {
      out += "\\\"";
    } else {
      out.push_back(c);
    }
  }
  // A trailing backslash would escape the closing quote; a backslash-newline continuation after
  // it (removed by readers) keeps the name exact.
  if (!s.empty() && s.back() == '\\') out += "\\\n";
  out.push_back('"');
  return out;
}

std::string Exact(double v) { return absl::StrFormat("%.17g", v); }

const char* Shape(NodeKind k) {
  switch (k) {
    case NodeKind::kChip:
      return "box";
    case NodeKind::kSwitch:
      return "ellipse";
    case NodeKind::kPcieSwitch:
      return "diamond";
    case NodeKind::kCpu:
      return "hexagon";
    case NodeKind::kNic:
      return "circle";
  }
  return "ellipse";
}

// "300 GB/s", "25 GB/s", "1.5 TB/s", "800 MB/s".
std::string HumanBandwidth(double bytes_per_s) {
  if (bytes_per_s >= 1e12) return absl::StrFormat("%.4g TB/s", bytes_per_s / 1e12);
  if (bytes_per_s >= 1e9) return absl::StrFormat("%.4g GB/s", bytes_per_s / 1e9);
  if (bytes_per_s >= 1e6) return absl::StrFormat("%.4g MB/s", bytes_per_s / 1e6);
  return absl::StrFormat("%.4g B/s", bytes_per_s);
}

std::string HumanLatency(double s) {
  if (s == 0) return "0 s";
  if (s < 1e-6) return absl::StrFormat("%.4g ns", s * 1e9);
  if (s < 1e-3) return absl::StrFormat("%.4g us", s * 1e6);
  if (s < 1) return absl::StrFormat("%.4g ms", s * 1e3);
  return absl::StrFormat("%.4g s", s);
}

}  // namespace

std::string Topology::ToDot() const {
  std::string out;
  absl::StrAppend(&out, "// meshsim topology ", name(), ": ", num_chips(), " chips, ", num_hosts(),
                  " hosts, ", num_nodes(), " nodes, ", links().size() / 2,
                  " full-duplex links. Read back with --topology graphviz:FILE.\n");
  absl::StrAppend(&out, "graph ", Quote(name()), " {\n");
  for (int v = 0; v < num_nodes(); ++v) {
    const NodeKind k = node_kind(v);
    absl::StrAppend(&out, "  ", Quote(node_name(v)), " [kind=", Quote(ToString(k)));
    if (v < num_chips()) {
      absl::StrAppend(&out, ", host=", Quote(absl::StrCat(HostOf(core::ChipId(v)))));
    }
    absl::StrAppend(&out, ", shape=", Shape(k), "];\n");
  }
  for (size_t l = 0; l < links().size(); l += 2) {
    const Link& link = links()[l];
    absl::StrAppend(
        &out, "  ", Quote(node_name(link.src)), " -- ", Quote(node_name(link.dst)),
        " [bandwidth=", Quote(Exact(link.bandwidth_bytes_per_s)),
        ", latency=", Quote(Exact(link.latency_s)), ", class=", Quote(ToString(link.cls)),
        ", label=",
        Quote(absl::StrCat(ToString(link.cls), " ", HumanBandwidth(link.bandwidth_bytes_per_s),
                           ", ", HumanLatency(link.latency_s))),
        "];\n");
  }
  out += "}\n";
  return out;
}

}  // namespace meshsim::network
