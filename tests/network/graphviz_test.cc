// graphviz:FILE topologies (network/topology/graphviz.cc) and Topology::ToDot
// (network/topology/dot.cc): parsing, least-cost routing, the ToDot round trip, and one test per
// class of bad file.
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "network/topology.h"
#include "tests/test_temp_dir.h"

namespace meshsim::network {
namespace {

using ::meshsim::core::ChipId;
using ::meshsim::core::LinkId;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = meshsim::testing_temp::TestPath("graphviz_test_" + name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  EXPECT_TRUE(out.good()) << path;
  return path;
}

TopologyParams GraphvizParams(const std::string& path, int chips) {
  TopologyParams p;
  p.name = "graphviz";
  p.chips = chips;
  p.graphviz_path = path;
  return p;
}

Topology MustBuild(const TopologyParams& p) {
  absl::StatusOr<Topology> t = Topology::Build(p);
  EXPECT_TRUE(t.ok()) << t.status();
  return std::move(t).value();
}

// Builds `text` as a graphviz topology of `chips` chips and returns the error message, checking
// that it is one InvalidArgument line naming the option and the file.
std::string ErrorOf(const std::string& name, const std::string& text, int chips) {
  const std::string path = WriteFile(name, text);
  absl::StatusOr<Topology> t = Topology::Build(GraphvizParams(path, chips));
  EXPECT_FALSE(t.ok()) << name;
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
  const std::string message(t.status().message());
  EXPECT_THAT(message, HasSubstr(absl::StrCat("--topology graphviz:", path)));
  EXPECT_THAT(message, Not(HasSubstr("\n")));
  return message;
}

std::vector<int> Nodes(const Topology& t, int src, const std::vector<LinkId>& path) {
  std::vector<int> nodes = {src};
  for (LinkId l : path) nodes.push_back(t.links()[l.value()].dst);
  return nodes;
}

// Two hosts of two GPUs: NVLink inside each host, every GPU's NIC into one switch. The switch is
// named first, yet takes id 4 after the chips.
constexpr char kTwoHosts[] = R"(// 2 hosts x 2 GPUs
strict graph "two hosts" {
  rankdir=LR
  sw [kind=switch, shape=ellipse]
  node [shape=box]
  g0 [host=0]; g1 [host=0]; "g2" [host="1"]; g3 [host=1]
  /* NVLink pairs */
  g0 -- g1 [bandwidth="300GB/s", latency="0.7us", class=nvlink, label="fast"]
  g2 -- g3 [bandwidth="300e9" latency="7e-7"; class="nvlink"]
  edge [bandwidth="25GB/s", latency="2us", class=nic]
  g0 -- sw -- g2
  g1 -- sw; g3 -- sw
}
)";

TEST(GraphvizTest, ParsesNodesLinksClassesAndHosts) {
  const Topology t = MustBuild(GraphvizParams(WriteFile("two_hosts.dot", kTwoHosts), 4));
  EXPECT_EQ(t.num_chips(), 4);
  EXPECT_EQ(t.num_nodes(), 5);
  EXPECT_EQ(t.num_hosts(), 2);
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(t.node_kind(c), NodeKind::kChip);
    EXPECT_EQ(t.node_name(c), absl::StrCat("g", c));
    EXPECT_EQ(t.HostOf(ChipId(c)), c / 2);
  }
  EXPECT_EQ(t.node_kind(4), NodeKind::kSwitch);
  EXPECT_EQ(t.node_name(4), "sw");

  struct Want {
    int src, dst;
    double bw, latency;
    LinkClass cls;
  };
  const std::vector<Want> want = {
      {0, 1, 300e9, 0.7e-6, LinkClass::kNvlink}, {2, 3, 300e9, 0.7e-6, LinkClass::kNvlink},
      {0, 4, 25e9, 2e-6, LinkClass::kNic},       {4, 2, 25e9, 2e-6, LinkClass::kNic},
      {1, 4, 25e9, 2e-6, LinkClass::kNic},       {3, 4, 25e9, 2e-6, LinkClass::kNic},
  };
  ASSERT_EQ(t.links().size(), 2 * want.size());
  for (size_t j = 0; j < want.size(); ++j) {
    for (int dir = 0; dir < 2; ++dir) {
      const Link& l = t.links()[2 * j + dir];
      EXPECT_EQ(l.src, dir == 0 ? want[j].src : want[j].dst) << "link " << 2 * j + dir;
      EXPECT_EQ(l.dst, dir == 0 ? want[j].dst : want[j].src) << "link " << 2 * j + dir;
      EXPECT_DOUBLE_EQ(l.bandwidth_bytes_per_s, want[j].bw) << "link " << 2 * j + dir;
      EXPECT_DOUBLE_EQ(l.latency_s, want[j].latency) << "link " << 2 * j + dir;
      EXPECT_EQ(l.cls, want[j].cls) << "link " << 2 * j + dir;
    }
  }
  // Inside a host: the NVLink; across: NIC, switch, NIC.
  EXPECT_THAT(Nodes(t, 0, t.Route(ChipId(0), ChipId(1))), ElementsAre(0, 1));
  EXPECT_THAT(Nodes(t, 1, t.Route(ChipId(1), ChipId(3))), ElementsAre(1, 4, 3));
}

TEST(GraphvizTest, DefaultsKindChipOneHostPerChipAndParamsLink) {
  TopologyParams p = GraphvizParams(WriteFile("defaults.dot", "graph { a -- b -- c }"), 3);
  p.link_bandwidth_bytes_per_s = 7e9;
  p.link_latency_s = 3e-6;
  const Topology t = MustBuild(p);
  EXPECT_EQ(t.num_nodes(), 3);
  EXPECT_EQ(t.num_hosts(), 3);
  EXPECT_EQ(t.HostOf(ChipId(2)), 2);
  ASSERT_EQ(t.links().size(), 4u);
  for (const Link& l : t.links()) {
    EXPECT_EQ(l.bandwidth_bytes_per_s, 7e9);
    EXPECT_EQ(l.latency_s, 3e-6);
    EXPECT_EQ(l.cls, LinkClass::kGeneric);
  }
  EXPECT_EQ(t.Hops(ChipId(0), ChipId(2)), 2);
}

TEST(GraphvizTest, RoutingPrefersTheCheaperPathOverFewerHops) {
  // a -- b directly at 1 GB/s costs 1 us + 2^20 B / 1e9 B/s ≈ 1050 us for the 1 MiB reference
  // message; a -- s -- b at 100 GB/s costs 2·(1 us + 10.5 us) ≈ 23 us, so the route takes two
  // hops through the switch.
  const std::string slow_direct = R"(graph {
    a; b; s [kind=switch]
    a -- b [bandwidth="1GB/s", latency="1us"]
    a -- s -- b [bandwidth="100GB/s", latency="1us"]
  })";
  const Topology t = MustBuild(GraphvizParams(WriteFile("slow_direct.dot", slow_direct), 2));
  EXPECT_THAT(Nodes(t, 0, t.Route(ChipId(0), ChipId(1))), ElementsAre(0, 2, 1));
  EXPECT_EQ(t.Hops(ChipId(0), ChipId(1)), 2);

  // The same graph with a fast direct link: one hop.
  const std::string fast_direct = R"(graph {
    a; b; s [kind=switch]
    a -- b [bandwidth="100GB/s", latency="1us"]
    a -- s -- b [bandwidth="100GB/s", latency="1us"]
  })";
  const Topology u = MustBuild(GraphvizParams(WriteFile("fast_direct.dot", fast_direct), 2));
  EXPECT_THAT(Nodes(u, 0, u.Route(ChipId(0), ChipId(1))), ElementsAre(0, 1));
}

TEST(GraphvizTest, LexesQuotedIdsCommentsAndKeywordsCaseInsensitively) {
  const std::string text =
      "# preprocessor-style line\n"
      "GRAPH g {\n"
      "  \"chip \\\"zero\\\"\" -- \"chip\" + \" one\" // trailing\n"
      "  Node [kind=chip]\n"
      "  \"chip one\" -- \"multi\\\nline\"\n"
      "}\n";
  const Topology t = MustBuild(GraphvizParams(WriteFile("lexing.dot", text), 3));
  EXPECT_EQ(t.node_name(0), "chip \"zero\"");
  EXPECT_EQ(t.node_name(1), "chip one");
  EXPECT_EQ(t.node_name(2), "multiline");
}

std::vector<std::tuple<int, int, double, double, LinkClass>> LinkList(const Topology& t) {
  std::vector<std::tuple<int, int, double, double, LinkClass>> out;
  for (const Link& l : t.links()) {
    out.emplace_back(l.src, l.dst, l.bandwidth_bytes_per_s, l.latency_s, l.cls);
  }
  return out;
}

// ToDot of `t`, read back as graphviz:FILE.
Topology ReadBack(const Topology& t, const std::string& file) {
  return MustBuild(GraphvizParams(WriteFile(file, t.ToDot()), t.num_chips()));
}

void ExpectSameGraph(const Topology& a, const Topology& b) {
  ASSERT_EQ(a.num_chips(), b.num_chips());
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  EXPECT_EQ(a.num_hosts(), b.num_hosts());
  for (int v = 0; v < a.num_nodes(); ++v) {
    EXPECT_EQ(a.node_kind(v), b.node_kind(v)) << v;
    EXPECT_EQ(a.node_name(v), b.node_name(v)) << v;
  }
  for (int c = 0; c < a.num_chips(); ++c) EXPECT_EQ(a.HostOf(ChipId(c)), b.HostOf(ChipId(c)));
  EXPECT_EQ(LinkList(a), LinkList(b));  // Exact: bandwidths and latencies read back bit for bit.
}

void ExpectSameRoutes(const Topology& a, const Topology& b) {
  for (int s = 0; s < a.num_chips(); ++s) {
    for (int d = 0; d < a.num_chips(); ++d) {
      for (uint64_t hash : {0u, 1u, 7u}) {
        ASSERT_EQ(a.Route(ChipId(s), ChipId(d), hash), b.Route(ChipId(s), ChipId(d), hash))
            << a.name() << " " << s << "->" << d << " hash " << hash;
      }
    }
  }
}

TEST(GraphvizTest, RoundTripsSwitch) {
  TopologyParams p;
  p.name = "switch";
  p.chips = 8;
  p.link_bandwidth_bytes_per_s = 123.456e9;
  p.link_latency_s = 0.3e-6;
  const Topology t = MustBuild(p);
  const Topology back = ReadBack(t, "switch.dot");
  ExpectSameGraph(t, back);
  ExpectSameRoutes(t, back);
}

TEST(GraphvizTest, RoundTripsFatTreeWithOversubscription) {
  TopologyParams p;
  p.name = "fattree";
  p.chips = 16;
  p.fattree_k = 4;
  p.oversubscription = 3;  // Switch links at bw/3: not a round number.
  const Topology t = MustBuild(p);
  const Topology back = ReadBack(t, "fattree.dot");
  ExpectSameGraph(t, back);
  // Every minimum-hop chip-to-chip path of a fat-tree has the same mix of chip and switch
  // links, so least cost = fewest hops and ECMP picks among the same candidates.
  ExpectSameRoutes(t, back);
}

TEST(GraphvizTest, RoundTripsTorus2d) {
  TopologyParams p;
  p.name = "torus2d";
  p.chips = 16;
  p.dims = {4, 4};
  const Topology t = MustBuild(p);
  const Topology back = ReadBack(t, "torus.dot");
  ExpectSameGraph(t, back);
  // The torus routes dimension-order, the read-back graph by least cost (ECMP over minimal
  // paths): the same lengths, and the read-back route is a minimal path of the same graph.
  for (int s = 0; s < 16; ++s) {
    for (int d = 0; d < 16; ++d) {
      ASSERT_EQ(t.Hops(ChipId(s), ChipId(d)), back.Hops(ChipId(s), ChipId(d))) << s << "->" << d;
      const std::vector<LinkId> path = back.Route(ChipId(s), ChipId(d));
      ASSERT_EQ(static_cast<int>(path.size()), t.Hops(ChipId(s), ChipId(d)));
      int at = s;
      for (LinkId l : path) {
        ASSERT_EQ(back.links()[l.value()].src, at);
        at = back.links()[l.value()].dst;
      }
      EXPECT_EQ(at, d);
    }
  }
  // A second round trip is a fixed point: same text, same routes.
  const Topology again = ReadBack(back, "torus_again.dot");
  EXPECT_EQ(back.ToDot(), again.ToDot());
  ExpectSameRoutes(back, again);
}

TEST(GraphvizTest, RoundTripsHostsAndNodeKinds) {
  const Topology t = MustBuild(GraphvizParams(WriteFile("two_hosts_rt.dot", kTwoHosts), 4));
  const Topology back = ReadBack(t, "two_hosts_back.dot");
  ExpectSameGraph(t, back);
  ExpectSameRoutes(t, back);
}

TEST(GraphvizTest, RoundTripsNamesWithQuotesBackslashesAndNewlines) {
  // Names: q"uote (escaped quote), back\ (trailing backslash, then a continuation), two<LF>lines.
  const std::string text = "graph { \"q\\\"uote\" -- \"back\\\\\n\" -- \"two\nlines\" }";
  const Topology t = MustBuild(GraphvizParams(WriteFile("names.dot", text), 3));
  EXPECT_EQ(t.node_name(0), "q\"uote");
  EXPECT_EQ(t.node_name(1), "back\\");
  EXPECT_EQ(t.node_name(2), "two\nlines");
  ExpectSameGraph(t, ReadBack(t, "names_back.dot"));
}

TEST(GraphvizTest, ToDotIsDeterministicAndLabelled) {
  TopologyParams p;
  p.name = "switch";
  p.chips = 2;
  p.link_bandwidth_bytes_per_s = 300e9;
  p.link_latency_s = 1e-6;
  const Topology t = MustBuild(p);
  EXPECT_EQ(t.ToDot(), MustBuild(p).ToDot());
  const std::string dot = t.ToDot();
  EXPECT_THAT(dot, HasSubstr("graph \"switch\" {"));
  EXPECT_THAT(dot, HasSubstr("\"chip0\" [kind=\"chip\", host=\"0\", shape=box];"));
  const std::string sw = absl::StrCat("\"", t.node_name(2), "\"");
  EXPECT_THAT(dot, HasSubstr(absl::StrCat(sw, " [kind=\"switch\", shape=ellipse];")));
  EXPECT_THAT(dot, HasSubstr(absl::StrCat("\"chip1\" -- ", sw,
                                          " [bandwidth=\"300000000000\", "
                                          "latency=\"9.9999999999999995e-07\", class=\"link\", "
                                          "label=\"link 300 GB/s, 1 us\"];")));
}

// ---- One test per class of bad input. ----

TEST(GraphvizErrorTest, MissingFile) {
  const std::string path = meshsim::testing_temp::TestPath("graphviz_test_no_such_file.dot");
  absl::StatusOr<Topology> t = Topology::Build(GraphvizParams(path, 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr(absl::StrCat("--topology graphviz:", path)));
  EXPECT_THAT(t.status().message(), HasSubstr("cannot read"));
}

TEST(GraphvizErrorTest, EmptyPath) {
  absl::StatusOr<Topology> t = Topology::Build(GraphvizParams("", 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("--topology graphviz:"));
  EXPECT_THAT(t.status().message(), HasSubstr("no file given"));
}

TEST(GraphvizErrorTest, Directory) {
  absl::StatusOr<Topology> t = Topology::Build(GraphvizParams(testing::TempDir(), 1));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(t.status().message(), HasSubstr("is a directory"));
}

TEST(GraphvizErrorTest, EmptyFile) {
  EXPECT_THAT(ErrorOf("empty.dot", "  // nothing\n", 1), HasSubstr("the file is empty"));
}

TEST(GraphvizErrorTest, SyntaxErrorsNameTheLine) {
  EXPECT_THAT(ErrorOf("dangling.dot", "graph {\n  a --\n}\n", 1),
              HasSubstr("line 3: expected a node id after '--', found '}'"));
  EXPECT_THAT(ErrorOf("unclosed.dot", "graph {\n  a -- b\n", 2),
              HasSubstr("line 3: unexpected end of file"));
  EXPECT_THAT(ErrorOf("no_graph.dot", "a -- b\n", 2), HasSubstr("line 1: expected `graph`"));
  EXPECT_THAT(ErrorOf("bad_char.dot", "graph {\n\n a -- b @\n}", 2),
              HasSubstr("line 3: unexpected character '@'"));
  EXPECT_THAT(ErrorOf("string.dot", "graph {\n a -- \"b\n}\n", 2),
              HasSubstr("line 2: unterminated quoted string"));
  EXPECT_THAT(ErrorOf("comment.dot", "graph {\n /* a -- b\n}\n", 2),
              HasSubstr("line 2: unterminated /* comment"));
  EXPECT_THAT(ErrorOf("trailing.dot", "graph { a }\ngraph { b }\n", 1),
              HasSubstr("line 2: unexpected id 'graph' after the graph's closing '}'"));
  EXPECT_THAT(ErrorOf("attr.dot", "graph {\n a [kind=]\n}\n", 1),
              HasSubstr("line 2: expected a value after 'kind =', found ']'"));
}

TEST(GraphvizErrorTest, UnsupportedDot) {
  EXPECT_THAT(ErrorOf("digraph.dot", "digraph { a -> b }", 2),
              HasSubstr("`digraph` is not supported; allowed: `graph`"));
  EXPECT_THAT(ErrorOf("arrow.dot", "graph { a -> b }", 2), HasSubstr("'->' is a directed edge"));
  EXPECT_THAT(ErrorOf("subgraph.dot", "graph { subgraph h0 { a -- b } }", 2),
              HasSubstr("subgraphs are not supported"));
  EXPECT_THAT(ErrorOf("port.dot", "graph { a:p0 -- b }", 2), HasSubstr("ports"));
  EXPECT_THAT(ErrorOf("html.dot", "graph { <b> -- c }", 2), HasSubstr("HTML ids"));
}

TEST(GraphvizErrorTest, UnquotedUnit) {
  EXPECT_THAT(ErrorOf("unit.dot", "graph { a -- b [bandwidth=50GB/s] }", 2),
              HasSubstr("'50GB/s' must be quoted: \"50GB/s\""));
}

TEST(GraphvizErrorTest, UnknownAttributeValues) {
  EXPECT_THAT(ErrorOf("kind.dot", "graph {\n a -- s\n s [kind=router]\n}", 1),
              HasSubstr("line 3: node 's': kind 'router' is not allowed; allowed: chip, switch, "
                        "pcie-switch, cpu, nic"));
  EXPECT_THAT(ErrorOf("class.dot", "graph { a -- b [class=ethernet] }", 2),
              HasSubstr("edge 'a' -- 'b': class 'ethernet' is not allowed; allowed: link, ici, "
                        "nvlink"));
}

TEST(GraphvizErrorTest, UnknownOrMisplacedAttributes) {
  EXPECT_THAT(ErrorOf("typo.dot", "graph {\n a -- b [bandwith=\"1GB/s\"]\n}", 2),
              HasSubstr("line 2: unknown edge attribute 'bandwith'; allowed: bandwidth, latency, "
                        "class"));
  EXPECT_THAT(ErrorOf("node_typo.dot", "graph { a [hots=1] }", 1),
              HasSubstr("unknown node attribute 'hots'; allowed: kind, host"));
  EXPECT_THAT(ErrorOf("bw_on_node.dot", "graph { node [bandwidth=1] a }", 1),
              HasSubstr("'bandwidth' is an edge attribute"));
  EXPECT_THAT(ErrorOf("host_on_edge.dot", "graph { a -- b [host=0] }", 2),
              HasSubstr("'host' is a node attribute"));
}

TEST(GraphvizErrorTest, BadBandwidth) {
  EXPECT_THAT(ErrorOf("bw_text.dot", "graph {\n a -- b [bandwidth=fast]\n}", 2),
              HasSubstr("line 2: edge 'a' -- 'b': bandwidth: 'fast' is not a valid value; "
                        "expected a number"));
  EXPECT_THAT(ErrorOf("bw_zero.dot", "graph { a -- b [bandwidth=0] }", 2),
              HasSubstr("bandwidth '0' is not allowed; must be > 0 and finite"));
  EXPECT_THAT(ErrorOf("bw_negative.dot", "graph { a -- b [bandwidth=\"-5GB/s\"] }", 2),
              HasSubstr("bandwidth '-5GB/s' is not allowed; must be > 0"));
  EXPECT_THAT(ErrorOf("bw_inf.dot", "graph { a -- b [bandwidth=\"inf\"] }", 2),
              HasSubstr("bandwidth: 'inf' is not a valid value"));
  EXPECT_THAT(ErrorOf("bw_unit.dot", "graph { a -- b [bandwidth=\"50Gbps\"] }", 2),
              HasSubstr("bandwidth: '50Gbps' is not a valid value; expected a number, optionally "
                        "with a unit"));
}

TEST(GraphvizErrorTest, BadLatency) {
  EXPECT_THAT(ErrorOf("lat_negative.dot", "graph { a -- b [latency=\"-1us\"] }", 2),
              HasSubstr("latency '-1us' is not allowed; must be ≥ 0 and finite"));
  EXPECT_THAT(ErrorOf("lat_unit.dot", "graph { a -- b [latency=\"1 fortnight\"] }", 2),
              HasSubstr("latency: '1 fortnight' is not a valid value"));
}

TEST(GraphvizErrorTest, SelfLoop) {
  EXPECT_THAT(ErrorOf("loop.dot", "graph {\n a -- b\n b -- b\n}", 2),
              HasSubstr("line 3: self-loop 'b' -- 'b'"));
}

TEST(GraphvizErrorTest, DuplicateLink) {
  EXPECT_THAT(ErrorOf("dup.dot", "graph {\n a -- b\n b -- a [bandwidth=1]\n}", 2),
              HasSubstr("line 3: duplicate link 'b' -- 'a' (first at line 2); allowed: one edge "
                        "per node pair"));
}

TEST(GraphvizErrorTest, NoChips) {
  EXPECT_THAT(ErrorOf("no_chips.dot", "graph { node [kind=switch] s0 -- s1 }", 1),
              HasSubstr("the graph has no chips"));
  EXPECT_THAT(ErrorOf("no_nodes.dot", "graph { }", 1), HasSubstr("the graph has no chips"));
}

TEST(GraphvizErrorTest, ChipCountDiffersFromChips) {
  EXPECT_THAT(ErrorOf("count.dot", "graph { a -- b -- c }", 4),
              HasSubstr("the file has 3 chips but --chips is 4"));
}

TEST(GraphvizErrorTest, Disconnected) {
  EXPECT_THAT(ErrorOf("islands.dot", "graph { a -- b; c -- d; s [kind=switch] }", 4),
              HasSubstr("the graph is disconnected: chip 'c' cannot reach chip 'a'"));
}

TEST(GraphvizErrorTest, BadHosts) {
  EXPECT_THAT(ErrorOf("host_switch.dot", "graph { a -- s\n s [kind=switch, host=0] }", 1),
              HasSubstr("line 2: node 's': host= is not allowed on a switch"));
  EXPECT_THAT(ErrorOf("host_partial.dot", "graph { a [host=0]\n b\n a -- b }", 2),
              HasSubstr("line 2: chip 'b' has no host= but 1 other chips do"));
  EXPECT_THAT(ErrorOf("host_gap.dot", "graph { a [host=0] b [host=2] c [host=2] a -- b -- c }", 3),
              HasSubstr("host 1 has no chip but host 2 does; allowed: host ids 0..H-1"));
  EXPECT_THAT(ErrorOf("host_text.dot", "graph { a [host=\"-1\"] b [host=0] a -- b }", 2),
              HasSubstr("chip 'a': host '-1' is not allowed; allowed: a whole number 0..1"));
}

TEST(GraphvizErrorTest, FileTooLarge) {
  std::string text = "graph { a }\n";
  text.append((64 << 20) + 1 - text.size() + 1, ' ');
  EXPECT_THAT(ErrorOf("huge.dot", text, 1), HasSubstr("larger than 67108864 bytes"));
}

TEST(GraphvizErrorTest, TooManyNodes) {
  std::string text = "graph { a ";
  for (int i = 0; i < (1 << 20); ++i) absl::StrAppend(&text, "s", i, ";");
  text += "}";
  EXPECT_THAT(ErrorOf("many.dot", text, 1), HasSubstr("more than 1048576 nodes"));
}

}  // namespace
}  // namespace meshsim::network
