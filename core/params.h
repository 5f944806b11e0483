// Self-describing parameters: a config struct lists its fields once — key, unit, description,
// pointer — and the CLI uses that list to print them (`meshsim show system`), override them
// (`--set KEY=VALUE`, config files) and validate values, with no second table to keep in sync.
//
// Values are SI: bytes, seconds, bytes/s, Hz, flop/s. Parsing accepts plain numbers ("50e9"),
// byte sizes with binary or decimal suffixes ("64MiB", "1.5GB"), times with units ("6us",
// "100 ns"), rates ("50GB/s", "1.2TB/s") and frequencies ("1.05GHz").
//
// Example:
//   struct Link { double bandwidth = 50e9; };
//   Link link;
//   std::vector<Param> params = {
//       {"link.bandwidth", Unit::kBytesPerSecond, "per direction", &link.bandwidth}};
//   MESHSIM_RETURN_IF_ERROR(SetParam(params, "link.bandwidth", "45GB/s"));
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

}  // namespace meshsim::core

#endif  // MESHSIM_CORE_PARAMS_H_
