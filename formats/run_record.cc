#include "formats/run_record.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/params.h"

namespace meshsim::formats {

ConfigValueType TypeOfConfigValue(const std::string& text) {
  int64_t i = 0;
  if (absl::SimpleAtoi(text, &i) && absl::StrCat(i) == text) return ConfigValueType::kInteger;
  // JSON's number grammar, then the exact round trip through meshsim's formatting.
  size_t p = 0;
  const auto digits = [&] {
    const size_t start = p;
    while (p < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[p]))) ++p;
    return p > start;
  };
  if (p < text.size() && text[p] == '-') ++p;
  if (!digits()) return ConfigValueType::kText;
  if (p < text.size() && text[p] == '.') {
    ++p;
    if (!digits()) return ConfigValueType::kText;
  }
  if (p < text.size() && (text[p] == 'e' || text[p] == 'E')) {
    ++p;
    if (p < text.size() && (text[p] == '+' || text[p] == '-')) ++p;
    if (!digits()) return ConfigValueType::kText;
  }
  double d = 0;
  if (p != text.size() || !absl::SimpleAtod(text, &d) || !std::isfinite(d) ||
      core::FormatDouble(d) != text) {
    return ConfigValueType::kText;
  }
  return ConfigValueType::kReal;
}

}  // namespace meshsim::formats
