// Self-describing parameters: a config struct lists its fields once — key, unit, description,
// pointer — and the CLI uses that list to print them (`meshsim show system`), override them
// (`--set KEY=VALUE`, config files) and validate values, with no second table to keep in sync.
//
// Values are SI: bytes, seconds, bytes/s, Hz, flop/s. Parsing accepts plain numbers ("50e9"),
// byte sizes with binary or decimal suffixes ("64MiB", "1.5GB"), times with units ("6us",
// "100 ns"), rates ("50GB/s", "1.2TB/s") and frequencies ("1.05GHz").
//
// Plugins declare typed parameters of their own the same way, without a struct to point into: a
// ParamSpec per parameter (name, type, unit, range or values, default, description) and a
// ParamValues holding one value per spec, set through SetParam's parsing and range checks.
//
// Example:
//   struct Link { double bandwidth = 50e9; };
//   Link link;
//   std::vector<Param> params = {
//       {"link.bandwidth", Unit::kBytesPerSecond, "per direction", &link.bandwidth}};
//   MESHSIM_RETURN_IF_ERROR(SetParam(params, "link.bandwidth", "45GB/s"));
//
//   ParamValues v({{.key = "chunks", .type = ParamType::kInt, .description = "batch chunks",
//                   .default_value = "1", .min = 1, .max = 4, .choices = {"1", "2", "4"}}});
//   MESHSIM_RETURN_IF_ERROR(v.Set("chunks", "2", "--chunks"));
//   v.Int("chunks");  // 2
#ifndef MESHSIM_CORE_PARAMS_H_
#define MESHSIM_CORE_PARAMS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"

namespace meshsim::core {

enum class Unit { kCount, kBytes, kSeconds, kBytesPerSecond, kHertz, kFlopsPerSecond };

// The unit's symbol for humans: "", "B", "s", "B/s", "Hz", "flop/s".
const char* UnitSymbol(Unit unit);

// A numeric parameter (int, int64 or double field, unit, range) or a choice (a string field
// that must be one of `choices`; unit kCount, range unused).
struct Param {
  std::string key;  // Dotted name, e.g. "link.bandwidth".
  Unit unit;
  std::string description;  // One line, for `show system` and `--help`.
  std::variant<int*, int64_t*, double*, std::string*> field;
  double min = 0;  // Allowed range, inclusive; checked by SetParam.
  double max = 1e300;
  std::vector<std::string> choices;  // The allowed values of a string field.
};

// Parses `text` as a quantity of `unit` (see the banner for the accepted forms).
// InvalidArgument names `key` and the allowed forms.
absl::StatusOr<double> ParseQuantity(const std::string& key, const std::string& text, Unit unit);

// Parses a whole number >= `min` (suffixes allowed for kBytes, e.g. "64MiB").
absl::StatusOr<int64_t> ParseInteger(const std::string& key, const std::string& text, Unit unit,
                                     int64_t min);

// Sets parameter `key` of `params` from `text`. NotFound for an unknown key (message lists the
// known ones); InvalidArgument for a malformed or out-of-range value.
absl::Status SetParam(const std::vector<Param>& params, const std::string& key,
                      const std::string& text);

// InvalidArgument naming the first parameter whose current value is outside [min, max].
absl::Status CheckRanges(const std::vector<Param>& params);

// Current value of a parameter as text that SetParam reads back exactly ("5e+10", "2").
std::string FormatParam(const Param& param);

// Shortest text that parses back to exactly `v` ("1e-06", "50000000000", "0.1").
std::string FormatDouble(double v);

// The value with a human unit, e.g. "50 GB/s", "64 MiB", "6 us".
std::string FormatHuman(const Param& param);

// The type of a declared parameter (ParamSpec).
enum class ParamType { kInt, kDouble, kBool, kEnum };

// "int", "double", "bool", "enum".
const char* ToString(ParamType type);

// A typed parameter a plugin declares: what `meshsim list` prints and what ParamValues checks.
struct ParamSpec {
  std::string key;  // Its name, e.g. "chunks" (--param chunks=VALUE).
  ParamType type = ParamType::kInt;
  Unit unit = Unit::kCount;  // kInt, kDouble: the unit values may carry ("64MiB" for kBytes).
  std::string description;   // One line: what it changes.
  // The value before any is given, as text Set reads ("1", "0.5", "0", "os"); "auto" for a value
  // the run derives (the description says how), read back as 0 (kInt, kDouble, kBool) or "auto".
  std::string default_value;
  double min = 0;  // kInt, kDouble: the allowed range, inclusive.
  double max = 1e300;
  // kEnum: the allowed values. kInt: when not empty, the only values allowed (e.g. 1, 2, 4).
  std::vector<std::string> choices;
};

// What a spec allows, for messages and docs: "1, 2, 4", "1 to 4096", "0 to 1 s", "0 or 1
// (true, false)", "os, ls, rs"; with "auto" first when the default is auto.
std::string DescribeAllowed(const ParamSpec& spec);

// One line documenting a spec: "chunks (int: 1, 2, 4; default 1): the batch split into chunks".
std::string DescribeSpec(const ParamSpec& spec);

// One value per declared spec, starting at its default. Set parses and checks a value with
// SetParam's rules (units, whole numbers, ranges, choices) plus a kInt spec's choices and a
// kBool's words (true, false, 0, 1). The typed getters check the spec's type (a programming
// error otherwise: a plugin reads only what it declared).
class ParamValues {
 public:
  ParamValues() = default;
  // InvalidArgument when a spec is malformed: an empty or repeated key, a default that is not
  // one of its allowed values, kEnum without choices.
  static absl::StatusOr<ParamValues> Defaults(std::vector<ParamSpec> specs);

  // Sets parameter `key` from `text`; `name` is how the user wrote the key ("--chunks", "--param
  // chunks"), for the one-line InvalidArgument naming it, the value and what is allowed. NotFound
  // for a key without a spec.
  absl::Status Set(const std::string& key, const std::string& text, const std::string& name);

  const std::vector<ParamSpec>& specs() const { return specs_; }
  const ParamSpec* Find(const std::string& key) const;
  int64_t Int(const std::string& key) const;
  double Double(const std::string& key) const;
  bool Bool(const std::string& key) const;
  const std::string& Enum(const std::string& key) const;
  // The value as text that Set reads back ("2", "0.5", "1", "os"; "auto" while it is).
  std::string Text(const std::string& key) const;

 private:
  size_t Index(const std::string& key, ParamType type) const;

  std::vector<ParamSpec> specs_;
  std::vector<std::string> texts_;  // Per spec: the value as given (normalized), or the default.
  std::vector<int64_t> ints_;       // kInt, kBool.
  std::vector<double> doubles_;     // kDouble.
};

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_PARAMS_H_
