// meshsim: the command-line entry point. Everything lives in sim/cli.h.
#include <iostream>
#include <string>
#include <vector>

#include "sim/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return meshsim::sim::Main(args, std::cout, std::cerr);
}
