#include "network/topology/types.h"

#include <optional>
#include <string>

#include "absl/strings/str_join.h"

namespace meshsim::network {

const char* ToString(LinkClass c) {
  switch (c) {
    case LinkClass::kGeneric:
      return "link";
    case LinkClass::kIci:
      return "ici";
    case LinkClass::kNvlink:
      return "nvlink";
    case LinkClass::kNvswitch:
      return "nvswitch";
    case LinkClass::kPcie:
      return "pcie";
    case LinkClass::kSocket:
      return "socket";
    case LinkClass::kNic:
      return "nic";
    case LinkClass::kFabric:
      return "fabric";
  }
  return "?";
}

constexpr LinkClass kAllLinkClasses[] = {
    LinkClass::kGeneric, LinkClass::kIci,    LinkClass::kNvlink, LinkClass::kNvswitch,
    LinkClass::kPcie,    LinkClass::kSocket, LinkClass::kNic,    LinkClass::kFabric};

std::optional<LinkClass> LinkClassFromString(const std::string& name) {
  for (LinkClass c : kAllLinkClasses) {
    if (name == ToString(c)) return c;
  }
  return std::nullopt;
}

std::string LinkClassNames() {
  return absl::StrJoin(kAllLinkClasses, ", ",
                       [](std::string* out, LinkClass c) { out->append(ToString(c)); });
}

const char* ToString(NodeKind k) {
  switch (k) {
    case NodeKind::kChip:
      return "chip";
    case NodeKind::kSwitch:
      return "switch";
    case NodeKind::kPcieSwitch:
      return "pcie-switch";
    case NodeKind::kCpu:
      return "cpu";
    case NodeKind::kNic:
      return "nic";
  }
  return "?";
}

}  // namespace meshsim::network
