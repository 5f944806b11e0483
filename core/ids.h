// Distinct id types so that a chip index can never be passed where an op index is expected.
//
// Example:
//   ChipId c{3};
//   OpId o{c.value()};        // explicit, visible conversion only
//   std::vector<int> per_chip(n);  per_chip[c.value()]++;
#ifndef MESHSIM_CORE_IDS_H_
#define MESHSIM_CORE_IDS_H_

#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>

namespace meshsim::core {

template <typename Tag, typename Int = uint32_t>
class StrongId {
 public:
  using value_type = Int;
  static constexpr Int kInvalidValue = std::numeric_limits<Int>::max();

  constexpr StrongId() = default;
  constexpr explicit StrongId(Int v) : v_(v) {}
  static constexpr StrongId Invalid() { return StrongId(); }

  constexpr Int value() const { return v_; }
  constexpr bool valid() const { return v_ != kInvalidValue; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;

  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.v_);
  }
  friend std::ostream& operator<<(std::ostream& os, StrongId id) {
    return id.valid() ? (os << id.v_) : (os << "invalid");
  }

 private:
  Int v_ = kInvalidValue;
};

using ChipId = StrongId<struct ChipTag>;
using GroupId = StrongId<struct GroupTag>;
using OpId = StrongId<struct OpTag>;
using ResourceId = StrongId<struct ResourceTag>;
using FlowId = StrongId<struct FlowTag>;
using LinkId = StrongId<struct LinkTag>;
using NameId = StrongId<struct NameTag>;

}  // namespace meshsim::core

template <typename Tag, typename Int>
struct std::hash<meshsim::core::StrongId<Tag, Int>> {
  size_t operator()(meshsim::core::StrongId<Tag, Int> id) const noexcept {
    return std::hash<Int>()(id.value());
  }
};

#endif  // MESHSIM_CORE_IDS_H_
