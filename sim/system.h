// A system = a chip model + a network model + the software stack that runs on them, picked by
// preset name (the stack by the system's default or `--stack NAME`) and adjusted by parameter
// overrides (`--set KEY=VALUE`, `KEY = VALUE` in config files). Its parameter list is the union
// of the chip's, the network's and the stack's (stack.*), so `meshsim show system` and `--set`
// see one flat key space.
//
// Example:
//   SystemConfig sys = *SystemPreset("tpuv4");
//   MESHSIM_RETURN_IF_ERROR(core::SetParam(sys.Params(), "hbm.bandwidth", "0.6TB/s"));
#ifndef MESHSIM_SIM_SYSTEM_H_
#define MESHSIM_SIM_SYSTEM_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "accel/chip_config.h"
#include "core/params.h"
#include "network/network_config.h"
#include "stack/stack_config.h"

namespace meshsim::sim {

struct SystemConfig {
  std::string name;
  accel::ChipConfig chip;
  network::NetworkConfig net;
  std::string stack_name;  // The stack preset `stack` started from (stack::Stacks()).
  stack::StackConfig stack;

  // Chip, network, then stack parameters, bound to this object's fields.
  std::vector<core::Param> Params();
  absl::Status Validate();
};

struct SystemInfo {
  std::string name;
  std::string description;
  std::string chip;     // accel::ChipPreset name.
  std::string network;  // network::NetworkPreset name.
  std::string stack;    // stack::StackPreset name: the software the system runs by default.
};

// The built-in systems, in display order.
const std::vector<SystemInfo>& Systems();

// NotFound naming the known systems when `name` is not one of them. The stack is the system's
// default (SystemInfo::stack) unless `stack` names another (NotFound naming the known stacks).
absl::StatusOr<SystemConfig> SystemPreset(const std::string& name, const std::string& stack = "");

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_SYSTEM_H_
