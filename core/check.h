// Fatal invariant checks for the event path (time never goes backwards, dependency counts never
// go negative, ...). A failed check prints file:line, the condition and any streamed context to
// stderr, then aborts. Checks are for bugs, never for user input: user input gets absl::Status.
//
// Example:
//   MESHSIM_CHECK(when >= now_) << "event scheduled in the past: " << when;
#ifndef MESHSIM_CORE_CHECK_H_
#define MESHSIM_CORE_CHECK_H_

#include <sstream>

namespace meshsim::core::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

// Lets `MESHSIM_CHECK(c) << x` compile as a void expression.
struct Voidify {
  void operator&(std::ostream&) {}
};

}  // namespace meshsim::core::internal

#define MESHSIM_CHECK(condition)               \
  (condition)                                  \
      ? (void)0                                \
      : ::meshsim::core::internal::Voidify() & \
            ::meshsim::core::internal::CheckFailure(__FILE__, __LINE__, #condition).stream()

#define MESHSIM_CHECK_EQ(a, b) \
  MESHSIM_CHECK((a) == (b)) << #a " = " << (a) << ", " #b " = " << (b) << ". "
#define MESHSIM_CHECK_LE(a, b) \
  MESHSIM_CHECK((a) <= (b)) << #a " = " << (a) << ", " #b " = " << (b) << ". "
#define MESHSIM_CHECK_LT(a, b) \
  MESHSIM_CHECK((a) < (b)) << #a " = " << (a) << ", " #b " = " << (b) << ". "
#define MESHSIM_CHECK_GE(a, b) \
  MESHSIM_CHECK((a) >= (b)) << #a " = " << (a) << ", " #b " = " << (b) << ". "

#endif  // MESHSIM_CORE_CHECK_H_
