#include "core/did_you_mean.h"

#include <algorithm>
#include <cctype>

namespace meshsim::core {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows of the dynamic programme: i-2, i-1 and i.
  std::vector<int> before(m + 1), previous(m + 1), current(m + 1);
  for (size_t j = 0; j <= m; ++j) previous[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    current[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string lower = Lower(word);
  const int length = static_cast<int>(word.size());
  // At most a third of the word (at least 1, at most 3) and less than half of it: one typo in a
  // short word, a few in a long one, never a different short word.
  const int limit = std::min(3, std::max(1, length / 3));
  const std::string* best = nullptr;
  int best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == word) continue;
    const int d = EditDistance(lower, Lower(candidate));
    if (d < best_distance && 2 * d < length) {
      best = &candidate;
      best_distance = d;
    }
  }
  return best != nullptr ? *best : "";
}

std::string DidYouMean(std::string_view word, const std::vector<std::string>& candidates,
                       std::string_view prefix) {
  const std::string match = ClosestMatch(word, candidates);
  if (match.empty()) return "";
  return std::string("; did you mean ").append(prefix).append(match).append("?");
}

}  // namespace meshsim::core
