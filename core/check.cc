#include "core/check.h"

#include <cstdlib>
#include <iostream>

namespace meshsim::core::internal {

CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ":" << line << ": MESHSIM_CHECK failed: " << condition << " ";
}

CheckFailure::~CheckFailure() {
  std::cerr << stream_.str() << std::endl;
  std::abort();
}

}  // namespace meshsim::core::internal
