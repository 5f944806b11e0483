// hierarchical: hosts (servers) of GPUs — the machines of the ATP paper (§2.2, Figure 2) and of
// the cross-mesh resharding paper (§5: p3.8xlarge nodes on 10 Gb/s Ethernet).
//
// Per host h (chips h·G … h·G + G − 1, G = node.gpus), in node-id order after all chips:
//   - the intra-node fabric, by node.fabric:
//       nvswitch      one NVSwitch node; GPU ↔ NVSwitch at nvlink.bandwidth (class nvswitch) —
//                     the aggregate of a GPU's NVLinks, as on DGX A100/H100;
//       nvlink-pairs  GPU 2i ↔ GPU 2i+1 at nvlink.bandwidth (class nvlink), dual-card bridges;
//       nvlink-mesh   every pair of GPUs directly at nvlink.bandwidth (class nvlink), e.g. the
//                     4 fully NVLinked V100s of a p3.8xlarge;
//       pcie          none: GPUs talk through the PCIe tree only;
//   - the PCIe tree: G / pcie.gpus_per_switch PCIe switches, each GPU ↔ its switch; the switches
//     split evenly over node.sockets CPUs (switch ↔ CPU root complex); CPUs joined pairwise by
//     socket bridges at socket.bandwidth. All PCIe links at pcie.bandwidth (class pcie);
//   - nic.count NICs; NIC i ↔ PCIe switch ⌊i·switches / nics⌋ over PCIe (GPUDirect RDMA path).
// With more than one host, every NIC joins the inter-node fabric at nic.bandwidth (class nic):
//   switch   one switch for all NICs;
//   fattree  the k-ary fat-tree of fattree.cc over the NICs (fattree.k = the switches' radix,
//            raised to the smallest that holds the NICs if too small; oversubscription),
//            attached rail by rail (rail-optimized: NIC r of every host on rail r's own edge
//            switches); its switch-to-switch links are class fabric.
//
// Routing is least-cost ECMP (topology.h): inside a host, NVLink/NVSwitch beats PCIe; between
// hosts traffic leaves by the GPU's rail NIC — a NIC on its PCIe switch, the switch's GPUs spread
// over its NICs in order, as NCCL binds them (DGX A100: GPU i ↔ NIC i) — and enters by the
// destination GPU's; a GPU whose PCIe switch has no NIC reaches the least-cost one, over NVLink
// through a peer GPU when that is cheaper than crossing PCIe switches and sockets (as NCCL's
// PXN does). A ring that crosses hosts is therefore NIC-bound, and groups that share a NIC share
// its bandwidth through the fair-share solver — nothing here divides bandwidths by hand.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "network/topology/families.h"

namespace meshsim::network::internal {
namespace {

absl::Status Bad(const std::string& key, const std::string& value, const std::string& allowed) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: %s is not allowed for --topology hierarchical; %s", key, value, allowed));
}

absl::Status CheckLink(const std::string& key, double bandwidth, double latency) {
  if (!(bandwidth > 0) || !std::isfinite(bandwidth)) {
    return Bad(absl::StrCat(key, ".bandwidth"), absl::StrFormat("%g", bandwidth),
               "must be > 0 and finite (bytes/s per direction)");
  }
  if (!(latency >= 0) || !std::isfinite(latency)) {
    return Bad(absl::StrCat(key, ".latency"), absl::StrFormat("%g", latency),
               "must be ≥ 0 and finite (seconds)");
  }
  return absl::OkStatus();
}

// The hierarchical parameters and --chips, checked against each other.
absl::Status CheckHierarchicalParams(const TopologyParams& p) {
  const HierarchicalParams& h = p.hierarchical;
  const int g = h.gpus_per_node;
  if (g < 1 || g > 256) return Bad("node.gpus", absl::StrCat(g), "must be 1..256");
  if (p.chips % g != 0) {
    return Bad("node.gpus", absl::StrCat(g),
               absl::StrFormat("must divide --chips %d (whole hosts only)", p.chips));
  }
  if (h.intra != "nvswitch" && h.intra != "nvlink-pairs" && h.intra != "nvlink-mesh" &&
      h.intra != "pcie") {
    return Bad("node.fabric", h.intra, "allowed: nvswitch, nvlink-pairs, nvlink-mesh, pcie");
  }
  if (h.intra == "nvlink-pairs" && g % 2 != 0) {
    return Bad("node.gpus", absl::StrCat(g), "must be even with node.fabric = nvlink-pairs");
  }
  if (h.gpus_per_pcie_switch < 1 || g % h.gpus_per_pcie_switch != 0) {
    return Bad("pcie.gpus_per_switch", absl::StrCat(h.gpus_per_pcie_switch),
               absl::StrFormat("must divide node.gpus %d", g));
  }
  const int switches = g / h.gpus_per_pcie_switch;
  if (h.sockets < 1 || switches % h.sockets != 0) {
    return Bad("node.sockets", absl::StrCat(h.sockets),
               absl::StrFormat("must divide the %d PCIe switches per host", switches));
  }
  if (h.nics_per_node < 1 || h.nics_per_node > 64) {
    return Bad("nic.count", absl::StrCat(h.nics_per_node), "must be 1..64");
  }
  if (h.inter != "switch" && h.inter != "fattree") {
    return Bad("inter.fabric", h.inter, "allowed: switch, fattree");
  }
  MESHSIM_RETURN_IF_ERROR(CheckLink("nvlink", h.nvlink_bandwidth_bytes_per_s, h.nvlink_latency_s));
  MESHSIM_RETURN_IF_ERROR(CheckLink("pcie", h.pcie_bandwidth_bytes_per_s, h.pcie_latency_s));
  MESHSIM_RETURN_IF_ERROR(CheckLink("socket", h.socket_bandwidth_bytes_per_s, h.socket_latency_s));
  MESHSIM_RETURN_IF_ERROR(CheckLink("nic", h.nic_bandwidth_bytes_per_s, h.nic_latency_s));
  return absl::OkStatus();
}

// The intra-node fabric of node.fabric among the GPUs first … first + G − 1.
void AddIntraNodeFabric(const HierarchicalParams& h, int first, const std::string& prefix,
                        FamilyGraph& fg) {
  const int g = h.gpus_per_node;
  const double nv_bw = h.nvlink_bandwidth_bytes_per_s, nv_lat = h.nvlink_latency_s;
  if (h.intra == "nvswitch") {
    const int sw = fg.AddNode(NodeKind::kSwitch, prefix + "nvswitch");
    for (int i = 0; i < g; ++i) fg.AddDuplex(first + i, sw, nv_bw, nv_lat, LinkClass::kNvswitch);
  } else if (h.intra == "nvlink-pairs") {
    for (int i = 0; i < g; i += 2) {
      fg.AddDuplex(first + i, first + i + 1, nv_bw, nv_lat, LinkClass::kNvlink);
    }
  } else if (h.intra == "nvlink-mesh") {
    for (int i = 0; i < g; ++i) {
      for (int j = i + 1; j < g; ++j) {
        fg.AddDuplex(first + i, first + j, nv_bw, nv_lat, LinkClass::kNvlink);
      }
    }
  }
}

// One host's intra-node fabric, CPUs, PCIe tree and NICs; appends its NICs' nodes to `nics`.
void AddHost(const HierarchicalParams& h, int host, FamilyGraph& fg, std::vector<int>& nics) {
  const int first = host * h.gpus_per_node;
  const int switches = h.gpus_per_node / h.gpus_per_pcie_switch;
  const double pcie_bw = h.pcie_bandwidth_bytes_per_s, pcie_lat = h.pcie_latency_s;
  const std::string prefix = absl::StrCat("host", host, ".");
  AddIntraNodeFabric(h, first, prefix, fg);
  std::vector<int> cpus;
  for (int s = 0; s < h.sockets; ++s) {
    cpus.push_back(fg.AddNode(NodeKind::kCpu, absl::StrCat(prefix, "cpu", s)));
  }
  for (int a = 0; a < h.sockets; ++a) {
    for (int b = a + 1; b < h.sockets; ++b) {
      fg.AddDuplex(cpus[a], cpus[b], h.socket_bandwidth_bytes_per_s, h.socket_latency_s,
                   LinkClass::kSocket);
    }
  }
  std::vector<int> pcie;
  for (int s = 0; s < switches; ++s) {
    const int sw = fg.AddNode(NodeKind::kPcieSwitch, absl::StrCat(prefix, "pcie", s));
    pcie.push_back(sw);
    fg.AddDuplex(sw, cpus[s / (switches / h.sockets)], pcie_bw, pcie_lat, LinkClass::kPcie);
    for (int i = 0; i < h.gpus_per_pcie_switch; ++i) {
      fg.AddDuplex(first + s * h.gpus_per_pcie_switch + i, sw, pcie_bw, pcie_lat, LinkClass::kPcie);
    }
  }
  std::vector<std::vector<int>> switch_nics(switches);  // Per PCIe switch: its NICs' nodes.
  for (int n = 0; n < h.nics_per_node; ++n) {
    const int nic = fg.AddNode(NodeKind::kNic, absl::StrCat(prefix, "nic", n));
    nics.push_back(nic);
    const int64_t sw = int64_t{n} * switches / h.nics_per_node;
    switch_nics[sw].push_back(nic);
    fg.AddDuplex(nic, pcie[sw], pcie_bw, pcie_lat, LinkClass::kPcie);
  }
  // Each GPU's rail: NCCL binds a GPU to a NIC on its own PCIe switch, the GPUs of a switch
  // spread over its NICs in order (DGX A100: GPU i and NIC i); a GPU whose switch has none takes
  // the least-cost NIC (through a peer GPU's NVLink where that is cheaper: PXN).
  fg.chip_nic.resize(first + h.gpus_per_node, -1);
  for (int s = 0; s < switches; ++s) {
    if (switch_nics[s].empty()) continue;
    for (int i = 0; i < h.gpus_per_pcie_switch; ++i) {
      fg.chip_nic[first + s * h.gpus_per_pcie_switch + i] =
          switch_nics[s][i % switch_nics[s].size()];
    }
  }
}

// The inter-node fabric of inter.fabric over every host's NICs.
absl::Status AddInterNodeFabric(const TopologyParams& p, const std::vector<int>& nics,
                                FamilyGraph& fg) {
  const HierarchicalParams& h = p.hierarchical;
  const double nic_bw = h.nic_bandwidth_bytes_per_s, nic_lat = h.nic_latency_s;
  if (h.inter == "switch") {
    const int sw = fg.AddNode(NodeKind::kSwitch, "fabric.switch");
    for (int nic : nics) fg.AddDuplex(nic, sw, nic_bw, nic_lat, LinkClass::kNic);
    return absl::OkStatus();
  }
  // A fat-tree over the NICs: build it with the NICs on its "chip" ports, then renumber its
  // nodes (its ports are our NICs, its switches are appended after our nodes). The NICs attach
  // rail by rail — NIC r of every host on the edge switches of rail r, each rail starting on a
  // switch of its own — as in a rail-optimized fabric (NVIDIA's DGX SuperPOD reference
  // architectures: each HCA of a DGX on a different leaf switch, the same HCA of every DGX of a
  // scalable unit on the same one), so rail-aligned traffic (GPU i to GPU i of another host,
  // NCCL's rings) stays on a rail's edge switches while the hosts fit them. With one NIC per host
  // the NICs fill the edge switches in host order.
  const int rails = h.nics_per_node, hosts = static_cast<int>(nics.size()) / rails;
  // Ports per rail at radix k: whole edge switches of k/2 ports (one rail: just the hosts).
  const auto rail_ports = [&](int k) {
    return rails == 1 ? hosts : (hosts + k / 2 - 1) / (k / 2) * (k / 2);
  };
  const auto fits = [&](int k) { return int64_t{rails} * rail_ports(k) <= int64_t{k} * k * k / 4; };
  // fattree.k is the switches' radix; a fabric of that radix too small for the NICs takes the
  // smallest radix that holds them (a larger switch, never fewer ports per edge switch); 0 = the
  // smallest that holds them.
  int k = p.fattree_k > 0 ? p.fattree_k : 2;
  while (!fits(k)) k += 2;
  const int ports = rails * rail_ports(k);
  std::vector<int> at(ports, -1);  // Per fat-tree port: the NIC on it, or −1 (left empty).
  for (int host = 0; host < hosts; ++host) {
    for (int r = 0; r < rails; ++r) at[r * rail_ports(k) + host] = nics[host * rails + r];
  }
  TopologyParams tree = p;
  tree.name = "fattree";
  tree.chips = ports;
  tree.fattree_k = k;
  tree.link_bandwidth_bytes_per_s = nic_bw;
  tree.link_latency_s = nic_lat;
  absl::StatusOr<FamilyGraph> built = BuildFatTree(tree);
  if (!built.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("inter.fabric: fattree over ", nics.size(),
                                                   " NICs: ", built.status().message()));
  }
  // Only the pods that hold ports, and the core: the pods past them carry nothing between
  // these NICs (no least-cost path crosses them) and would cost memory and routing time.
  const int half = k / 2, pods = (ports + half * half - 1) / (half * half);
  std::vector<int> node(built->num_nodes, -1);  // Fat-tree node → ours (−1: left out).
  for (int v = 0; v < built->num_nodes; ++v) {
    if (v < tree.chips) {
      node[v] = at[v];
      continue;
    }
    const int sw = v - tree.chips;  // Edge switches (pod-major), aggregation, then core.
    const bool kept = sw >= 2 * k * half || (sw % (k * half)) / half < pods;
    if (kept) node[v] = fg.AddNode(NodeKind::kSwitch, absl::StrCat("fabric.switch", sw));
  }
  const auto renumber = [&](int v) { return node[v]; };
  for (size_t l = 0; l < built->links.size(); l += 2) {
    const Link& up = built->links[l];
    const bool nic_link = up.src < tree.chips || up.dst < tree.chips;
    if (renumber(up.src) < 0 || renumber(up.dst) < 0) continue;  // An empty port, a pod left out.
    fg.AddDuplex(renumber(up.src), renumber(up.dst), up.bandwidth_bytes_per_s, up.latency_s,
                 nic_link ? LinkClass::kNic : LinkClass::kFabric);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FamilyGraph> BuildHierarchical(const TopologyParams& p) {
  MESHSIM_RETURN_IF_ERROR(CheckHierarchicalParams(p));
  const int g = p.hierarchical.gpus_per_node;
  const int hosts = p.chips / g;
  FamilyGraph fg;
  fg.weighted = true;
  for (int c = 0; c < p.chips; ++c) {
    fg.AddNode(NodeKind::kChip, absl::StrCat("host", c / g, ".gpu", c % g));
    fg.host_of.push_back(c / g);
  }
  std::vector<int> nics;
  for (int host = 0; host < hosts; ++host) AddHost(p.hierarchical, host, fg, nics);
  if (hosts > 1) MESHSIM_RETURN_IF_ERROR(AddInterNodeFabric(p, nics, fg));
  return fg;
}

}  // namespace meshsim::network::internal
