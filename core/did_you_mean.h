// "Did you mean": the known word nearest to a misspelt one, so that an error about an unknown
// option, key, command or value can name the likely intended one in the same line.
//
// Near means a small edit distance relative to the word's length (EditDistance; at most a third
// of the word, at most 3, and less than half of it), so "chip" suggests "chips" and "meshslise"
// "meshslice", while "xs" suggests nothing among "os", "ls", "rs" and "video" nothing among the
// workloads. Case is ignored ("--Chips" suggests "--chips").
//
// Example:
//   DidYouMean("chip", {"chips", "mesh"}, "--")   // "; did you mean --chips?"
//   DidYouMean("banana", {"chips", "mesh"}, "--") // ""
#ifndef MESHSIM_CORE_DID_YOU_MEAN_H_
#define MESHSIM_CORE_DID_YOU_MEAN_H_

#include <string>
#include <string_view>
#include <vector>

namespace meshsim::core {

// Optimal-string-alignment distance: the fewest insertions, deletions, substitutions and swaps
// of two adjacent characters that turn `a` into `b` (bytes, case-sensitive). O(|a|·|b|).
int EditDistance(std::string_view a, std::string_view b);

// The candidate nearest to `word` (ignoring case) when it is near (above), else "". On a tie
// the first such candidate wins; a candidate equal to `word` is never suggested.
// O(Σ |word|·|candidate|).
std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean <prefix><match>?" for ClosestMatch, or "" when nothing is near: to append to
// a one-line error message.
std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view prefix = "");

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_DID_YOU_MEAN_H_
