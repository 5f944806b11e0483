// The meshsim version string, as `meshsim --version` prints it and archives record it.
#ifndef MESHSIM_SIM_VERSION_H_
#define MESHSIM_SIM_VERSION_H_

#include <string>

namespace meshsim::sim {

// E.g. "meshsim 0.1.0" (the project version of CMakeLists.txt).
std::string Version();

}  // namespace meshsim::sim

#endif  // MESHSIM_SIM_VERSION_H_
