#include "core/params.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/did_you_mean.h"

namespace meshsim::core {

const char* UnitSymbol(Unit unit) {
  switch (unit) {
    case Unit::kCount:
      return "";
    case Unit::kBytes:
      return "B";
    case Unit::kSeconds:
      return "s";
    case Unit::kBytesPerSecond:
      return "B/s";
    case Unit::kHertz:
      return "Hz";
    case Unit::kFlopsPerSecond:
      return "flop/s";
  }
  return "";
}

namespace {

struct Suffix {
  const char* text;
  double scale;
};

// Suffixes per unit, longest first within each prefix family so "MiB" wins over "M".
std::vector<Suffix> SuffixesFor(Unit unit) {
  switch (unit) {
    case Unit::kCount:
      return {{"Ki", 1024.0}, {"Mi", 1048576.0}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}};
    case Unit::kBytes:
      return {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
              {"kB", 1e3},     {"KB", 1e3},        {"MB", 1e6},           {"GB", 1e9},
              {"TB", 1e12},    {"B", 1.0}};
    case Unit::kSeconds:
      return {{"ps", 1e-12}, {"ns", 1e-9}, {"us", 1e-6}, {"µs", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
    case Unit::kBytesPerSecond:
      return {{"KB/s", 1e3}, {"kB/s", 1e3},  {"MB/s", 1e6},
              {"GB/s", 1e9}, {"TB/s", 1e12}, {"B/s", 1.0}};
    case Unit::kHertz:
      return {{"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}, {"Hz", 1.0}};
    case Unit::kFlopsPerSecond:
      return {{"GFLOPS", 1e9}, {"TFLOPS", 1e12}, {"PFLOPS", 1e15}, {"flop/s", 1.0}};
  }
  return {};
}

std::string AllowedForms(Unit unit) {
  std::vector<std::string> names;
  for (const Suffix& s : SuffixesFor(unit)) names.push_back(s.text);
  if (names.empty()) return "a number";
  return absl::StrCat("a number, optionally with a unit (", absl::StrJoin(names, ", "), ")");
}

}  // namespace

absl::StatusOr<double> ParseQuantity(const std::string& key, const std::string& text, Unit unit) {
  const std::string t(absl::StripAsciiWhitespace(text));
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat("%s: '%s' is not a valid value; expected %s",
                                                      key, text, AllowedForms(unit)));
  };
  if (t.empty()) return bad();
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || errno == ERANGE || !std::isfinite(v)) return bad();
  std::string rest(absl::StripAsciiWhitespace(std::string(end)));
  if (rest.empty()) return v;
  for (const Suffix& s : SuffixesFor(unit)) {
    if (rest == s.text) return v * s.scale;
  }
  return bad();
}

absl::StatusOr<int64_t> ParseInteger(const std::string& key, const std::string& text, Unit unit,
                                     int64_t min) {
  absl::StatusOr<double> v = ParseQuantity(key, text, unit);
  if (!v.ok()) return v.status();
  if (*v != std::floor(*v) || std::abs(*v) > 9e18) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: '%s' is not a whole number", key, text));
  }
  if (*v < static_cast<double>(min)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: '%s' is not allowed; must be at least %d", key, text, min));
  }
  return static_cast<int64_t>(*v);
}

namespace {

// The value of a numeric parameter as a double (0 for a choice).
double NumericValue(const Param& p) {
  return std::visit(
      [](auto* f) -> double {
        if constexpr (std::is_arithmetic_v<std::remove_reference_t<decltype(*f)>>) {
          return static_cast<double>(*f);
        } else {
          return 0;
        }
      },
      p.field);
}

}  // namespace

absl::Status SetParam(const std::vector<Param>& params, const std::string& key,
                      const std::string& text) {
  const Param* p = nullptr;
  for (const Param& candidate : params) {
    if (candidate.key == key) p = &candidate;
  }
  if (p == nullptr) {
    std::vector<std::string> keys;
    for (const Param& candidate : params) keys.push_back(candidate.key);
    return absl::NotFoundError(absl::StrFormat("--set: unknown system parameter '%s'%s (known: %s)",
                                               key, DidYouMean(key, keys),
                                               absl::StrJoin(keys, ", ")));
  }
  if (auto* str = std::get_if<std::string*>(&p->field)) {
    if (std::find(p->choices.begin(), p->choices.end(), text) == p->choices.end()) {
      return absl::InvalidArgumentError(absl::StrFormat("%s: '%s' is not allowed; allowed: %s%s",
                                                        key, text, absl::StrJoin(p->choices, ", "),
                                                        DidYouMean(text, p->choices)));
    }
    **str = text;
    return absl::OkStatus();
  }
  absl::StatusOr<double> v = ParseQuantity(key, text, p->unit);
  if (!v.ok()) return v.status();
  const bool integral = !std::holds_alternative<double*>(p->field);
  if (integral && *v != std::floor(*v)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: '%s' is not allowed; must be a whole number", key, text));
  }
  if (*v < p->min || *v > p->max) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: '%s' is out of range; allowed %g to %g %s", key, text, p->min, p->max,
                        UnitSymbol(p->unit)));
  }
  std::visit(
      [&](auto* field) {
        using T = std::remove_reference_t<decltype(*field)>;
        if constexpr (std::is_arithmetic_v<T>) *field = static_cast<T>(*v);
      },
      p->field);
  return absl::OkStatus();
}

std::string FormatDouble(double v) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, result.ptr);
}

absl::Status CheckRanges(const std::vector<Param>& params) {
  for (const Param& p : params) {
    if (auto* str = std::get_if<std::string*>(&p.field)) {
      if (std::find(p.choices.begin(), p.choices.end(), **str) == p.choices.end()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: '%s' is not allowed; allowed: %s", p.key, **str, absl::StrJoin(p.choices, ", ")));
      }
      continue;
    }
    const double v = NumericValue(p);
    if (v < p.min || v > p.max) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: %s is out of range; allowed %g to %g %s", p.key, FormatParam(p),
                          p.min, p.max, UnitSymbol(p.unit)));
    }
  }
  return absl::OkStatus();
}

std::string FormatParam(const Param& param) {
  return std::visit(
      [](auto* field) -> std::string {
        if constexpr (std::is_same_v<decltype(field), double*>) {
          return FormatDouble(*field);
        } else if constexpr (std::is_same_v<decltype(field), std::string*>) {
          return *field;
        } else {
          return absl::StrCat(*field);
        }
      },
      param.field);
}

std::string FormatHuman(const Param& param) {
  if (std::holds_alternative<std::string*>(param.field)) return FormatParam(param);
  const double v = NumericValue(param);
  const auto scaled = [&](std::initializer_list<std::pair<double, const char*>> steps) {
    for (const auto& [scale, name] : steps) {
      if (std::abs(v) >= scale) return absl::StrFormat("%.6g %s", v / scale, name);
    }
    return absl::StrFormat("%.6g %s", v, UnitSymbol(param.unit));
  };
  switch (param.unit) {
    case Unit::kCount:
      return FormatParam(param);
    case Unit::kBytes:
      return scaled({{1099511627776.0, "TiB"},
                     {1073741824.0, "GiB"},
                     {1048576.0, "MiB"},
                     {1024.0, "KiB"},
                     {1, "B"}});
    case Unit::kSeconds:
      if (v == 0) return "0 s";
      return scaled({{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}, {1e-12, "ps"}});
    case Unit::kBytesPerSecond:
      return scaled({{1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}});
    case Unit::kHertz:
      return scaled({{1e9, "GHz"}, {1e6, "MHz"}});
    case Unit::kFlopsPerSecond:
      return scaled({{1e12, "TFLOPS"}, {1e9, "GFLOPS"}});
  }
  return FormatParam(param);
}

}  // namespace meshsim::core
