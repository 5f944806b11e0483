// The vocabulary of network topologies: link classes, node kinds, the parameters a topology is
// built from and the directed `Link`. Shared by Topology (network/topology.h), the per-family
// builders (network/topology/families.h) and the routers (network/routing/), which include this
// header rather than topology.h, so the dependencies among them point one way.
#ifndef MESHSIM_NETWORK_TOPOLOGY_TYPES_H_
#define MESHSIM_NETWORK_TOPOLOGY_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshsim::network {

// How a link is built, for link-class-aware reports, DOT output and presets. The class does not
// change how a link is simulated: every directed link is one fair-share resource with its own
// bandwidth and latency.
enum class LinkClass {
  kGeneric,   // A plain network link (grids, ring, switch, fat-tree chip links).
  kIci,       // Accelerator-to-accelerator link of a torus (TPU ICI).
  kNvlink,    // Direct GPU-to-GPU NVLink (dual-card pairs).
  kNvswitch,  // GPU to an NVSwitch (its aggregate NVLink bandwidth).
  kPcie,      // PCIe: GPU or NIC to a PCIe switch, PCIe switch to its CPU root complex.
  kSocket,    // CPU-to-CPU socket bridge (QPI/UPI, AMD GMI/xGMI).
  kNic,       // A host NIC's port into the inter-node fabric (InfiniBand, Ethernet).
  kFabric,    // Switch-to-switch link inside a switched fabric (fat-tree levels).
};
// "link", "ici", "nvlink", "nvswitch", "pcie", "socket", "nic", "fabric".
const char* ToString(LinkClass c);
// The class named `name` (as ToString prints it); nullopt for another name.
std::optional<LinkClass> LinkClassFromString(const std::string& name);
// Every class name, for messages: "link, ici, nvlink, …".
std::string LinkClassNames();

// Which way round a ring a transfer goes: kForward to the successor, kBackward to the
// predecessor (Topology::Route).
enum class RingDir { kForward, kBackward };

// What a node of the graph is. Chips are nodes 0..chips−1; the others only forward traffic.
enum class NodeKind { kChip, kSwitch, kPcieSwitch, kCpu, kNic };
const char* ToString(NodeKind k);  // "chip", "switch", "pcie-switch", "cpu", "nic"

// Parameters of the `hierarchical` family: nodes (hosts) of GPUs joined inside by NVSwitch,
// NVLink pairs, an NVLink mesh or a PCIe tree, and across by NICs into a switch or a fat-tree. See
// network/topology/hierarchical.cc for the graph it builds.
struct HierarchicalParams {
  int gpus_per_node = 8;           // GPUs per node (host), 1..256; chips must be a multiple.
  std::string intra = "nvswitch";  // nvswitch | nvlink-pairs | nvlink-mesh | pcie.
  double nvlink_bandwidth_bytes_per_s = 300e9;  // nvswitch: per GPU to the switch (aggregate of
                                                // its NVLinks); nvlink-pairs/-mesh: per link.
  double nvlink_latency_s = 0.7e-6;
  int gpus_per_pcie_switch = 2;              // GPUs under one PCIe switch (divides gpus/node).
  double pcie_bandwidth_bytes_per_s = 25e9;  // Per PCIe link, per direction.
  double pcie_latency_s = 1e-6;
  int sockets = 2;                             // CPU sockets per node; PCIe switches are split
                                               // evenly over them (divides the switch count).
  double socket_bandwidth_bytes_per_s = 40e9;  // Socket-to-socket bridge, per direction.
  // The most one flow (one stream of a transport) moves across a socket bridge, whatever the
  // bridge has free; 0 = no per-stream limit. Read by the network model, not the builder.
  double socket_stream_bytes_per_s = 0;
  double socket_latency_s = 1e-6;
  int nics_per_node = 1;                    // Host NICs; NIC i hangs off PCIe switch
                                            // i·switches/nics (divides the switch count).
  double nic_bandwidth_bytes_per_s = 25e9;  // Per NIC port, per direction.
  double nic_latency_s = 2e-6;
  std::string inter = "switch";  // switch | fattree (over the NICs).
};

// Every family reads name, chips and the link fields; dims is read by the grids only (and is an
// error elsewhere); fattree_k and oversubscription are read by fattree (and by hierarchical with
// inter = fattree); `hierarchical` by hierarchical; graphviz_path by graphviz.
struct TopologyParams {
  std::string name;       // ring, torus2d, torus3d, mesh2d, fattree, switch, hierarchical,
                          // graphviz
  int chips = 0;          // 1 ≤ chips ≤ 2^20.
  std::vector<int> dims;  // Extents for torus2d (2), torus3d (3), mesh2d (2); their
                          // product must be `chips`. Empty = most-square factoring:
                          // ascending extents with the smallest largest extent, then
                          // the smallest middle one (16 → 4x4; 12 → 3x4 in 2-D,
                          // 2x2x3 in 3-D).
  double link_bandwidth_bytes_per_s = 50e9;  // Per direction, every link (> 0); fat-tree
                                             // switch-to-switch links get it / o.
  // torus2d, torus3d, mesh2d: entry d, when present and > 0, replaces link_bandwidth for the
  // links along dimension d (per direction); 0 or missing = link_bandwidth. Every entry ≥ 0 and
  // finite. Other families, and entries beyond the grid's rank, ignore them (like fattree_k).
  std::vector<double> axis_bandwidth_bytes_per_s;
  double link_latency_s = 1e-6;  // Per hop, every link (≥ 0).
  // ring, torus2d, torus3d: full-duplex links between the two chips of a wrapping dimension of
  // extent 2 (a ring of 2 chips), 1 or 2. 1: the pair is joined once. 2: chips with a + and a
  // − port per dimension have both ports wired to the one neighbour (chip 0's + to chip 1's −,
  // chip 1's + to chip 0's −), so the pair is joined twice. Other extents and families ignore it.
  int length2_links = 2;
  int fattree_k = 0;              // Fat-tree radix, even, 2..128; 0 = smallest even k with
                                  // k³/4 ≥ chips.
  double oversubscription = 1.0;  // Fat-tree: edge-switch down:up bandwidth ratio o ≥ 1.
                                  // Every switch-to-switch link (edge–aggregation and
                                  // aggregation–core, both directions) gets bandwidth
                                  // link_bandwidth / o; chip links keep link_bandwidth.
  HierarchicalParams hierarchical;
  std::string graphviz_path;  // graphviz: the DOT file to read.
};

struct Link {
  int src = 0;  // Node ids.
  int dst = 0;
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  LinkClass cls = LinkClass::kGeneric;
};

}  // namespace meshsim::network

#endif  // MESHSIM_NETWORK_TOPOLOGY_TYPES_H_
