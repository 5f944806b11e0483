#include "sim/version.h"

#include "absl/strings/str_cat.h"

namespace meshsim::sim {

std::string Version() { return absl::StrCat("meshsim ", MESHSIM_VERSION); }

}  // namespace meshsim::sim
