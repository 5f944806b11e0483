// Topology::Build validates the parameters every family shares, hands the rest to the family's
// builder (network/topology/*.cc), wraps the result in a Boost.Graph graph and attaches the
// family's router (network/routing/*).
#include "network/topology.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/check.h"
#include "core/status_macros.h"
#include "network/routing/dimension_order.h"
#include "network/routing/ecmp.h"
#include "network/topology/families.h"
#include "network/topology/graph.h"

namespace meshsim::network {
namespace {

constexpr int kMaxChips = 1 << 20;

struct Family {
  TopologyInfo info;
  bool reads_dims;
  absl::StatusOr<internal::FamilyGraph> (*build)(const TopologyParams&);
};

// The one list of families: CLI names, descriptions and builders, in the order `list` prints.
const std::vector<Family>& Families() {
  static const std::vector<Family>* const kFamilies = new std::vector<Family>{
      {{"ring",
        "chips 0→1→…→chips−1→0 in a cycle (2 chips: torus.length2_links links); reads chips, "
        "link.bandwidth, link.latency; shortest-direction routing",
        {"torus.length2_links"}},
       false,
       internal::BuildRing},
      {{"torus2d",
        "R×C torus, wraparound per dimension (extent 2: torus.length2_links links); reads chips, "
        "dims RxC "
        "(default most-square, R ≤ C), link.bandwidth (per dimension d: link.bandwidth_axisd), "
        "link.latency, comm.torus_algorithm; dimension-order routing",
        {"link.bandwidth_axis0", "link.bandwidth_axis1", "comm.torus_algorithm",
         "torus.length2_links"}},
       true,
       [](const TopologyParams& p) { return internal::BuildGrid(p, 2, /*wraps=*/true); }},
      {{"torus3d",
        "X×Y×Z torus, wraparound per dimension (extent 2: torus.length2_links links); reads "
        "chips, dims XxYxZ "
        "(default most-square), link.bandwidth (per dimension d: link.bandwidth_axisd), "
        "link.latency, comm.torus_algorithm; dimension-order routing",
        {"link.bandwidth_axis0", "link.bandwidth_axis1", "link.bandwidth_axis2",
         "comm.torus_algorithm", "torus.length2_links"}},
       true,
       [](const TopologyParams& p) { return internal::BuildGrid(p, 3, /*wraps=*/true); }},
      {{"mesh2d",
        "R×C mesh without wraparound; reads chips, dims RxC (default most-square, R ≤ C), "
        "link.bandwidth (per dimension d: link.bandwidth_axisd), link.latency; dimension-order "
        "routing",
        {"link.bandwidth_axis0", "link.bandwidth_axis1"}},
       true,
       [](const TopologyParams& p) { return internal::BuildGrid(p, 2, /*wraps=*/false); }},
      {{"fattree",
        "k-ary 3-level fat-tree (Al-Fares), k/2 chips per edge switch, ≤ k³/4 chips; reads "
        "chips, fattree k (even, default smallest that fits), oversubscription o (switch links "
        "at link.bandwidth/o), link.bandwidth, link.latency; ECMP shortest paths",
        {"fattree."}},
       false,
       internal::BuildFatTree},
      {{"switch",
        "every chip on one switch, 2 hops between any two chips; reads chips, link.bandwidth, "
        "link.latency",
        {}},
       false,
       internal::BuildSwitch},
      {{"hierarchical",
        "GPU hosts: node.gpus GPUs per host joined by node.fabric (nvswitch: one NVSwitch at "
        "nvlink.bandwidth per GPU; nvlink-pairs: NVLink between GPUs 2i and 2i+1; nvlink-mesh: "
        "NVLink between every pair; pcie: none) "
        "over a PCIe tree (pcie.gpus_per_switch GPUs per PCIe switch at pcie.bandwidth, "
        "switches under node.sockets CPUs joined at socket.bandwidth), nic.count NICs per host "
        "at nic.bandwidth into inter.fabric (switch, or fattree with fattree.k and "
        "fattree.oversubscription); least-cost ECMP routing",
        {"node.", "nvlink.", "pcie.", "socket.", "nic.", "inter.", "fattree."}},
       false,
       internal::BuildHierarchical},
      {{"graphviz:FILE",
        "a user graph from a Graphviz DOT file: nodes are chips (kind=chip, in file order) or "
        "switches, edges full-duplex links with bandwidth= (B/s, or with a unit: 50GB/s) and "
        "latency= (s, or 1us) and optional class=; least-cost ECMP routing (docs/topologies.md)",
        {}},
       false,
       internal::BuildGraphviz},
  };
  return *kFamilies;
}

std::string FamilyNames() {
  return absl::StrJoin(Families(), ", ",
                       [](std::string* out, const Family& f) { out->append(f.info.name); });
}

}  // namespace

struct Topology::Impl {
  std::string name;
  int chips = 0;
  internal::FamilyGraph family;
  internal::Graph graph;
  int num_hosts = 0;
  // Exactly one is set. The ECMP router points into `graph`, so Impl never moves (it lives
  // behind Topology's unique_ptr).
  std::optional<internal::DimensionOrderRouter> grid_router;
  std::optional<internal::EcmpRouter> ecmp_router;
};

absl::StatusOr<Topology> Topology::Build(const TopologyParams& params) {
  const Family* family = nullptr;
  for (const Family& f : Families()) {
    if (f.info.name == params.name || (f.info.name == "graphviz:FILE" && params.name == "graphviz"))
      family = &f;
  }
  if (family == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--topology: '%s' is not allowed; allowed: %s", params.name, FamilyNames()));
  }
  if (params.chips < 1 || params.chips > kMaxChips) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--chips: %d is not allowed; must be ≥ 1 and ≤ %d", params.chips, kMaxChips));
  }
  const double bw = params.link_bandwidth_bytes_per_s;
  if (!(bw > 0) || !std::isfinite(bw)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "link.bandwidth: %g is not allowed; must be > 0 and finite (bytes/s per direction)", bw));
  }
  for (size_t d = 0; d < params.axis_bandwidth_bytes_per_s.size(); ++d) {
    const double axis_bw = params.axis_bandwidth_bytes_per_s[d];
    if (!(axis_bw >= 0) || !std::isfinite(axis_bw)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "link.bandwidth_axis%d: %g is not allowed; must be ≥ 0 and finite (bytes/s per "
          "direction; 0 = link.bandwidth)",
          d, axis_bw));
    }
  }
  const double latency = params.link_latency_s;
  if (!(latency >= 0) || !std::isfinite(latency)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "link.latency: %g is not allowed; must be ≥ 0 and finite (seconds per hop)", latency));
  }
  if (params.length2_links != 1 && params.length2_links != 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "torus.length2_links: %d is not allowed; allowed: 1 or 2 (full-duplex links between the "
        "two chips of a torus dimension of length 2)",
        params.length2_links));
  }
  if (!family->reads_dims && !params.dims.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "dims: %s is not allowed for %s; only torus2d, torus3d and mesh2d take dims",
        internal::FormatDims(params.dims), params.name));
  }

  auto impl = std::make_unique<Impl>();
  impl->name = params.name;
  impl->chips = params.chips;
  MESHSIM_ASSIGN_OR_RETURN(impl->family, family->build(params));
  internal::FamilyGraph& fg = impl->family;
  // Families that do not name their nodes get chips then switches, "chipN" / "swN".
  if (fg.node_kinds.empty()) {
    for (int v = 0; v < fg.num_nodes; ++v) {
      const bool chip = v < params.chips;
      fg.node_kinds.push_back(chip ? NodeKind::kChip : NodeKind::kSwitch);
      fg.node_names.push_back(chip ? absl::StrCat("chip", v)
                                   : absl::StrCat("sw", v - params.chips));
    }
  }
  MESHSIM_CHECK(static_cast<int>(fg.node_kinds.size()) == fg.num_nodes &&
                static_cast<int>(fg.node_names.size()) == fg.num_nodes)
      << params.name << ": node table of " << fg.node_kinds.size() << " for " << fg.num_nodes;
  if (fg.host_of.empty()) {
    for (int c = 0; c < params.chips; ++c) fg.host_of.push_back(c);
  }
  impl->num_hosts = 0;
  for (int h : fg.host_of) impl->num_hosts = std::max(impl->num_hosts, h + 1);
  MESHSIM_ASSIGN_OR_RETURN(impl->graph,
                           internal::MakeGraph(impl->family.num_nodes, impl->family.links));
  if (!impl->family.grid_dims.empty()) {
    impl->grid_router.emplace(impl->family.grid_dims, impl->family.grid_wraps, impl->family.links);
  } else {
    std::vector<int64_t> cost;
    if (fg.weighted) {
      cost.reserve(fg.links.size());
      for (const Link& l : fg.links) cost.push_back(internal::RoutingCost(l));
    }
    impl->ecmp_router.emplace(&impl->graph, impl->chips, std::move(cost));
  }
  return Topology(std::move(impl));
}

Topology::Topology(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

const std::string& Topology::name() const { return impl_->name; }
int Topology::num_chips() const { return impl_->chips; }
int Topology::num_nodes() const { return impl_->family.num_nodes; }
const std::vector<int>& Topology::dims() const { return impl_->family.dims; }

bool Topology::RoutesIgnoreHash() const { return impl_->grid_router.has_value(); }
const std::vector<Link>& Topology::links() const { return impl_->family.links; }

NodeKind Topology::node_kind(int node) const {
  MESHSIM_CHECK(node >= 0 && node < num_nodes()) << "node " << node << " of " << num_nodes();
  return impl_->family.node_kinds[node];
}

const std::string& Topology::node_name(int node) const {
  MESHSIM_CHECK(node >= 0 && node < num_nodes()) << "node " << node << " of " << num_nodes();
  return impl_->family.node_names[node];
}

int Topology::HostOf(core::ChipId chip) const {
  MESHSIM_CHECK(chip.valid() && static_cast<int>(chip.value()) < impl_->chips)
      << "HostOf(" << chip << ") on " << impl_->chips << " chips";
  return impl_->family.host_of[chip.value()];
}

int Topology::num_hosts() const { return impl_->num_hosts; }

std::vector<core::LinkId> Topology::Route(core::ChipId src, core::ChipId dst, uint64_t hash,
                                          RingDir dir) const {
  const int s = static_cast<int>(src.value()), d = static_cast<int>(dst.value());
  MESHSIM_CHECK(src.valid() && dst.valid() && s < impl_->chips && d < impl_->chips)
      << "Route(" << src << ", " << dst << ") on " << impl_->chips << " chips";
  std::vector<core::LinkId> path;
  if (s == d) return path;
  if (impl_->grid_router) {
    path.reserve(impl_->grid_router->Hops(s, d));
    impl_->grid_router->Route(s, d, dir == RingDir::kBackward, path);
  } else if (const std::vector<int>& nic = impl_->family.chip_nic;
             !nic.empty() && impl_->family.host_of[s] != impl_->family.host_of[d] && nic[s] >= 0 &&
             nic[d] >= 0) {
    // Across hosts, out by the source's rail NIC and in by the destination's.
    impl_->ecmp_router->RouteToNode(s, nic[s], hash, path);
    impl_->ecmp_router->RouteToNode(nic[s], nic[d], hash, path);
    impl_->ecmp_router->Route(nic[d], d, hash, path);
  } else {
    impl_->ecmp_router->Route(s, d, hash, path);
  }
  return path;
}

int Topology::Hops(core::ChipId src, core::ChipId dst) const {
  const int s = static_cast<int>(src.value()), d = static_cast<int>(dst.value());
  MESHSIM_CHECK(src.valid() && dst.valid() && s < impl_->chips && d < impl_->chips)
      << "Hops(" << src << ", " << dst << ") on " << impl_->chips << " chips";
  if (s == d) return 0;
  if (!impl_->family.chip_nic.empty()) return static_cast<int>(Route(src, dst).size());
  return impl_->grid_router ? impl_->grid_router->Hops(s, d) : impl_->ecmp_router->Hops(s, d);
}

std::vector<core::LinkId> Topology::OutLinks(int node) const {
  MESHSIM_CHECK(node >= 0 && node < num_nodes()) << "node " << node << " of " << num_nodes();
  std::vector<core::LinkId> out;
  const auto [begin, end] = boost::out_edges(node, impl_->graph);
  for (auto it = begin; it != end; ++it) out.push_back(core::LinkId(impl_->graph[*it].link));
  return out;
}

void Topology::PrecomputeRoutes() const {
  if (impl_->ecmp_router) impl_->ecmp_router->Precompute();
}

const std::vector<TopologyInfo>& TopologyFamilies() {
  static const std::vector<TopologyInfo>* const kInfos = [] {
    auto* infos = new std::vector<TopologyInfo>;
    for (const Family& f : Families()) infos->push_back(f.info);
    return infos;
  }();
  return *kInfos;
}

std::string TopologyParamReaders(const std::string& name, const std::string& key) {
  const auto reads = [&key](const TopologyInfo& t) {
    return std::any_of(t.params.begin(), t.params.end(), [&key](const std::string& p) {
      return p.back() == '.' ? key.rfind(p, 0) == 0 : key == p;
    });
  };
  const std::string family = name.rfind("graphviz:", 0) == 0 ? "graphviz:FILE" : name;
  std::vector<std::string> readers;
  bool this_one = false;
  for (const TopologyInfo& t : TopologyFamilies()) {
    if (!reads(t)) continue;
    readers.push_back(t.name);
    this_one = this_one || t.name == family;
  }
  if (readers.empty() || this_one) return "";
  return absl::StrJoin(readers, ", ");
}

}  // namespace meshsim::network
