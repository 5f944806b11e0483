#include "core/time.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "core/check.h"

namespace meshsim::core {

Time Time::Seconds(double s) {
  MESHSIM_CHECK(std::isfinite(s) && std::abs(s) < 1e7) << "Time::Seconds out of range: " << s;
  return Time(static_cast<int64_t>(std::llround(s * 1e12)));
}

std::string Time::ToString() const {
  const int64_t a = ps_ < 0 ? -ps_ : ps_;
  const double v = static_cast<double>(ps_);
  if (a < 1'000) return absl::StrFormat("%d ps", ps_);
  if (a < 1'000'000) return absl::StrFormat("%.3f ns", v * 1e-3);
  if (a < 1'000'000'000) return absl::StrFormat("%.3f us", v * 1e-6);
  if (a < 1'000'000'000'000) return absl::StrFormat("%.3f ms", v * 1e-9);
  return absl::StrFormat("%.4f s", v * 1e-12);
}

std::ostream& operator<<(std::ostream& os, Time t) { return os << t.ToString(); }

namespace {
[[noreturn, gnu::noinline, gnu::cold]] void BadRateConversion(double amount, double per_s) {
  MESHSIM_CHECK(false) << "bad rate conversion " << amount << "/" << per_s;
  std::abort();
}

// ⌈amount / per_s⌉ in picoseconds, saturated at the horizon. The fair-share solver calls this for
// every flow whose rate changes, so the failure path stays out of line and the ceiling is taken
// on the integer (x86-64's baseline has no rounding instruction; libm's ceil cost 5% of a run):
// for 0 ≤ x < 2^63, trunc(x) + (trunc(x) < x) is ⌈x⌉.
Time CeilPicoseconds(double amount, double per_s) {
  if (!(amount >= 0 && per_s > 0)) BadRateConversion(amount, per_s);
  const double ps = amount / per_s * 1e12;
  const int64_t beyond = Time::Horizon().ps() + 1;
  // Saturate: the simulator refuses events past the horizon and the run reports it.
  if (!(ps < static_cast<double>(beyond))) return Time::Picoseconds(beyond);
  const int64_t whole = static_cast<int64_t>(ps);
  return Time::Picoseconds(whole + (static_cast<double>(whole) < ps));
}
}  // namespace

Time TransferTime(double bytes, double bytes_per_s) { return CeilPicoseconds(bytes, bytes_per_s); }
Time ComputeTime(double flops, double flops_per_s) { return CeilPicoseconds(flops, flops_per_s); }

}  // namespace meshsim::core
