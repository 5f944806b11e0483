// LargeVector: contents survive growth through malloc'ed and mapped storage (mremap), copies are
// deep, moves and swaps exchange storage.
#include "core/large_vector.h"

#include <cstdint>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

struct Row {
  int64_t a;
  int32_t b;
};

bool SameRows(const LargeVector<Row>& v, const std::vector<Row>& w) {
  if (v.size() != w.size()) return false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (v[i].a != w[i].a || v[i].b != w[i].b) return false;
  }
  return true;
}

TEST(LargeVectorTest, GrowsThroughHeapAndMappedStorageKeepingEveryElement) {
  // 3 M rows of 16 bytes: 48 MB, past the 1 MiB from which tables are mapped and regrown by
  // mremap; a mistake in moving the old bytes shows as a wrong element.
  LargeVector<Row> v;
  std::vector<Row> w;
  size_t capacity_changes = 0;
  for (int64_t i = 0; i < 3'000'000; ++i) {
    const size_t before = v.capacity();
    v.push_back({i * 7, static_cast<int32_t>(i % 1000)});
    w.push_back({i * 7, static_cast<int32_t>(i % 1000)});
    capacity_changes += v.capacity() != before;
    ASSERT_GE(v.capacity(), v.size());
  }
  EXPECT_TRUE(SameRows(v, w));
  // Doubling: about log2(3e6) ≈ 22 regrowths, not one per element.
  EXPECT_LE(capacity_changes, 30u);
  EXPECT_EQ(v.back().a, 2'999'999 * 7);
  const std::span<const Row> view = v;
  EXPECT_EQ(view.size(), v.size());
  EXPECT_EQ(view.data(), v.data());
}

TEST(LargeVectorTest, CopiesAreDeepMovesAndSwapsExchangeStorage) {
  LargeVector<Row> big;
  for (int64_t i = 0; i < 200'000; ++i) big.push_back({i, 1});  // 3.2 MB: mapped.
  LargeVector<Row> small = {{1, 2}, {3, 4}};                    // Heap.

  LargeVector<Row> copy = big;
  copy[0].a = -1;
  EXPECT_EQ(big[0].a, 0);
  EXPECT_NE(copy.data(), big.data());
  EXPECT_TRUE(copy.size() == big.size());

  const Row* storage = big.data();
  LargeVector<Row> moved = std::move(big);
  EXPECT_EQ(moved.data(), storage);
  EXPECT_EQ(moved.size(), 200'000u);

  moved.swap(small);
  EXPECT_EQ(small.data(), storage);
  EXPECT_TRUE(SameRows(moved, {{1, 2}, {3, 4}}));

  // Assigning heap storage over mapped storage, and growing a heap table into a mapping.
  small = moved;
  EXPECT_TRUE(SameRows(small, {{1, 2}, {3, 4}}));
  small.assign(100'000, Row{5, 6});
  EXPECT_EQ(small.size(), 100'000u);
  EXPECT_EQ(small[99'999].a, 5);
  small.clear();
  EXPECT_TRUE(small.empty());
  EXPECT_GE(small.capacity(), 100'000u);  // clear() keeps the storage, as std::vector's does.
}

}  // namespace
}  // namespace meshsim::core
