#include "core/params.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/check.h"
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

// " B/s" after a range, "" for a count.
std::string UnitSuffix(Unit unit) {
  return unit == Unit::kCount ? "" : absl::StrCat(" ", UnitSymbol(unit));
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
        absl::StrFormat("%s: '%s' is out of range; allowed %g to %g%s", key, text, p->min, p->max,
                        UnitSuffix(p->unit)));
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
          absl::StrFormat("%s: %s is out of range; allowed %g to %g%s", p.key, FormatParam(p),
                          p.min, p.max, UnitSuffix(p.unit)));
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

const char* ToString(ParamType type) {
  switch (type) {
    case ParamType::kInt:
      return "int";
    case ParamType::kDouble:
      return "double";
    case ParamType::kBool:
      return "bool";
    case ParamType::kEnum:
      return "enum";
  }
  return "";
}

std::string DescribeAllowed(const ParamSpec& spec) {
  std::string allowed;
  switch (spec.type) {
    case ParamType::kBool:
      allowed = "0 or 1 (false, true)";
      break;
    case ParamType::kEnum:
      allowed = absl::StrJoin(spec.choices, ", ");
      break;
    case ParamType::kInt:
    case ParamType::kDouble:
      if (!spec.choices.empty()) {
        allowed = absl::StrJoin(spec.choices, ", ");
      } else {
        // Whole numbers in full (1 to 16777216), others shortest.
        const auto number = [&](double v) {
          return spec.type == ParamType::kInt ? absl::StrFormat("%.0f", v) : FormatDouble(v);
        };
        allowed = spec.max >= 1e300 ? absl::StrCat("at least ", number(spec.min))
                                    : absl::StrCat(number(spec.min), " to ", number(spec.max));
      }
      if (spec.unit != Unit::kCount) absl::StrAppend(&allowed, " ", UnitSymbol(spec.unit));
      break;
  }
  return spec.default_value == "auto" ? absl::StrCat("auto, ", allowed) : allowed;
}

std::string DescribeSpec(const ParamSpec& spec) {
  return absl::StrFormat("%s (%s: %s; default %s): %s", spec.key, ToString(spec.type),
                         DescribeAllowed(spec), spec.default_value, spec.description);
}

absl::StatusOr<ParamValues> ParamValues::Defaults(std::vector<ParamSpec> specs) {
  ParamValues v;
  v.specs_ = std::move(specs);
  v.texts_.resize(v.specs_.size());
  v.ints_.resize(v.specs_.size());
  v.doubles_.resize(v.specs_.size());
  for (size_t i = 0; i < v.specs_.size(); ++i) {
    const ParamSpec& s = v.specs_[i];
    const auto bad = [&](const std::string& why) {
      return absl::InvalidArgumentError(absl::StrFormat("parameter '%s': %s", s.key, why));
    };
    if (s.key.empty()) return bad("the key is empty");
    for (size_t j = 0; j < i; ++j) {
      if (v.specs_[j].key == s.key) return bad("declared twice");
    }
    if (s.type == ParamType::kEnum && s.choices.empty()) return bad("an enum without values");
    if (s.default_value == "auto") {
      v.texts_[i] = "auto";
      continue;
    }
    if (absl::Status st = v.Set(s.key, s.default_value, s.key); !st.ok()) {
      return bad(absl::StrCat("default: ", st.message()));
    }
  }
  return v;
}

const ParamSpec* ParamValues::Find(const std::string& key) const {
  for (const ParamSpec& s : specs_) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

absl::Status ParamValues::Set(const std::string& key, const std::string& text,
                              const std::string& name) {
  const ParamSpec* spec = Find(key);
  if (spec == nullptr) {
    std::vector<std::string> keys;
    for (const ParamSpec& s : specs_) keys.push_back(s.key);
    return absl::NotFoundError(
        absl::StrFormat("%s: unknown parameter '%s'; allowed: %s%s", name, key,
                        keys.empty() ? "none" : absl::StrJoin(keys, ", "), DidYouMean(key, keys)));
  }
  const size_t i = static_cast<size_t>(spec - specs_.data());
  if (text == "auto" && spec->default_value == "auto") {
    texts_[i] = "auto";
    ints_[i] = 0;
    doubles_[i] = 0;
    return absl::OkStatus();
  }
  const auto not_allowed = [&] {
    return absl::InvalidArgumentError(absl::StrFormat("%s: '%s' is not allowed; allowed: %s", name,
                                                      text, DescribeAllowed(*spec)));
  };
  // One Param over this slot, so that parsing, units and ranges are SetParam's.
  Param param{name, spec->unit, spec->description, &ints_[i], spec->min, spec->max, {}};
  std::string value = text;
  std::string chosen;
  switch (spec->type) {
    case ParamType::kBool:
      if (value == "true") value = "1";
      if (value == "false") value = "0";
      if (value != "0" && value != "1") return not_allowed();
      param.min = 0;
      param.max = 1;
      break;
    case ParamType::kEnum:
      param.field = &chosen;
      param.choices = spec->choices;
      if (spec->default_value == "auto") param.choices.insert(param.choices.begin(), "auto");
      break;
    case ParamType::kDouble:
      param.field = &doubles_[i];
      break;
    case ParamType::kInt:
      if (!spec->choices.empty()) {
        param.min = -1e300;
        param.max = 1e300;
      }
      break;
  }
  // Parse into a copy, so that a refused value leaves the slot as it was.
  const int64_t old_int = ints_[i];
  const double old_double = doubles_[i];
  if (absl::Status st = SetParam({param}, name, value); !st.ok()) {
    ints_[i] = old_int;
    doubles_[i] = old_double;
    if (spec->type == ParamType::kInt && !spec->choices.empty() &&
        !absl::StrContains(st.message(), "not a valid value")) {
      return not_allowed();
    }
    return st;
  }
  std::string formatted = FormatParam(param);
  if (spec->type == ParamType::kInt && !spec->choices.empty() &&
      std::find(spec->choices.begin(), spec->choices.end(), formatted) == spec->choices.end()) {
    ints_[i] = old_int;
    return not_allowed();
  }
  texts_[i] = std::move(formatted);
  return absl::OkStatus();
}

size_t ParamValues::Index(const std::string& key, ParamType type) const {
  const ParamSpec* spec = Find(key);
  MESHSIM_CHECK(spec != nullptr) << "parameter '" << key << "' is not declared";
  MESHSIM_CHECK(spec->type == type) << "parameter '" << key << "' is a " << ToString(spec->type)
                                    << ", read as a " << ToString(type);
  return static_cast<size_t>(spec - specs_.data());
}

int64_t ParamValues::Int(const std::string& key) const {
  return ints_[Index(key, ParamType::kInt)];
}
double ParamValues::Double(const std::string& key) const {
  return doubles_[Index(key, ParamType::kDouble)];
}
bool ParamValues::Bool(const std::string& key) const {
  return ints_[Index(key, ParamType::kBool)] != 0;
}
const std::string& ParamValues::Enum(const std::string& key) const {
  return texts_[Index(key, ParamType::kEnum)];
}

std::string ParamValues::Text(const std::string& key) const {
  const ParamSpec* spec = Find(key);
  MESHSIM_CHECK(spec != nullptr) << "parameter '" << key << "' is not declared";
  return texts_[static_cast<size_t>(spec - specs_.data())];
}

}  // namespace meshsim::core
