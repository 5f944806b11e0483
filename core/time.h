// Simulated time: a strong int64 count of picoseconds.
//
// Every timestamp and duration in meshsim is a `Time`. Integer picoseconds make event ordering
// exact and runs bit-for-bit reproducible; int64 ps covers ±106 days, far beyond any training
// step. A simulation stops at `Time::Horizon()` (10⁶ s, about 11.6 days): the simulator refuses
// events beyond it and the executor reports it, so that no sum of two times can overflow. The
// only float→integer conversions are `TransferTime` and `ComputeTime`, which round up so that a
// non-empty transfer or computation never takes zero time, and saturate just past the horizon.
//
// Example:
//   Time t = Time::Microseconds(6) + TransferTime(1 << 20, 50e9);
//   std::cout << t;  // "27.0 us"
#ifndef MESHSIM_CORE_TIME_H_
#define MESHSIM_CORE_TIME_H_

#include <compare>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

namespace meshsim::core {

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time Picoseconds(int64_t ps) { return Time(ps); }
  static constexpr Time Nanoseconds(int64_t ns) { return Time(ns * 1'000); }
  static constexpr Time Microseconds(int64_t us) { return Time(us * 1'000'000); }
  static constexpr Time Milliseconds(int64_t ms) { return Time(ms * 1'000'000'000); }
  // Rounds to the nearest picosecond. Precondition: |s| < 1e7 (about 115 days).
  static Time Seconds(double s);
  static constexpr Time Zero() { return Time(0); }
  static constexpr Time Max() { return Time(std::numeric_limits<int64_t>::max()); }
  // The latest simulated time: 10⁶ s. Horizon() + Horizon() + Horizon() still fits in int64.
  static constexpr Time Horizon() { return Time(1'000'000'000'000'000'000); }

  constexpr int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }
  constexpr double microseconds() const { return static_cast<double>(ps_) / 1e6; }

  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  friend constexpr Time operator+(Time a, Time b) { return Time(a.ps_ + b.ps_); }
  friend constexpr Time operator-(Time a, Time b) { return Time(a.ps_ - b.ps_); }
  friend constexpr Time operator*(Time a, int64_t k) { return Time(a.ps_ * k); }
  friend constexpr Time operator*(int64_t k, Time a) { return Time(a.ps_ * k); }
  friend constexpr auto operator<=>(Time, Time) = default;

  // Human form with a unit chosen by magnitude, e.g. "512 ps", "27.0 us", "1.234 ms", "2.50 s".
  std::string ToString() const;

 private:
  constexpr explicit Time(int64_t ps) : ps_(ps) {}
  int64_t ps_ = 0;
};

std::ostream& operator<<(std::ostream& os, Time t);

// Time to move `bytes` at `bytes_per_s`, rounded up to a whole picosecond; at most
// Horizon() + 1 ps (a duration that long cannot be simulated anyway).
// Precondition: bytes >= 0, bytes_per_s > 0.
Time TransferTime(double bytes, double bytes_per_s);

// Time to execute `flops` at `flops_per_s`, rounded up to a whole picosecond; at most
// Horizon() + 1 ps.
// Precondition: flops >= 0, flops_per_s > 0.
Time ComputeTime(double flops, double flops_per_s);

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_TIME_H_
