#include "core/did_you_mean.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("", ""), 0);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("chip", "chips"), 1);      // Insertion.
  EXPECT_EQ(EditDistance("chipss", "chips"), 1);    // Deletion.
  EXPECT_EQ(EditDistance("tpuv9", "tpuv4"), 1);     // Substitution.
  EXPECT_EQ(EditDistance("mesh2d", "mseh2d"), 1);   // Swap of two adjacent characters.
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);  // k->s, e->i, +g.
  EXPECT_EQ(EditDistance("ca", "abc"), 3);          // OSA: no edit of a swapped pair.
  EXPECT_EQ(EditDistance("Chips", "chips"), 1);     // Case-sensitive.
}

TEST(DidYouMeanTest, SuggestsOnlyWhatIsNearForTheWordsLength) {
  const std::vector<std::string> options = {"chips", "mesh", "trace-format", "trace-detail"};
  EXPECT_EQ(DidYouMean("chip", options, "--"), "; did you mean --chips?");
  EXPECT_EQ(DidYouMean("CHIPS", options, "--"), "; did you mean --chips?");  // Case ignored.
  EXPECT_EQ(DidYouMean("trace-fmt", options, "--"), "; did you mean --trace-format?");
  EXPECT_EQ(DidYouMean("trace-detial", options), "; did you mean trace-detail?");
  EXPECT_EQ(DidYouMean("banana", options), "");
  EXPECT_EQ(DidYouMean("", options), "");
  EXPECT_EQ(DidYouMean("chips", options), "");  // Known: nothing to suggest.
  EXPECT_EQ(DidYouMean("chip", {}), "");
  // Two letters: one edit is half the word, so "xs" is no typo of "os".
  EXPECT_EQ(ClosestMatch("xs", {"os", "ls", "rs"}), "");
  EXPECT_EQ(ClosestMatch("video", {"llm", "gemm", "collective", "chain", "layer"}), "");
  // A third of the word: 2 edits in 6 letters, not 3.
  EXPECT_EQ(ClosestMatch("fatree", {"fattree"}), "fattree");
  EXPECT_EQ(ClosestMatch("torusd", {"torus2d", "torus3d"}), "torus2d");  // A tie: the first.
  EXPECT_EQ(ClosestMatch("torus", {"torus2d", "torus3d"}), "");          // 2 edits in 5 letters.
  EXPECT_EQ(ClosestMatch("tarxs2", {"torus2d"}), "");
  // The nearest wins over an earlier, farther one.
  EXPECT_EQ(ClosestMatch("meshslise", {"wang", "meshslice2x", "meshslice"}), "meshslice");
}

}  // namespace
}  // namespace meshsim::core
