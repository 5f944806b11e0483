// meshsim: the command-line entry point. Everything lives in cli/cli.h.
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return meshsim::sim::cli::Main(args, std::cout, std::cerr);
}
