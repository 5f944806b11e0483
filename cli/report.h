// Reports of runs for people (a table with units), spreadsheets (CSV) and scripts (JSON, the
// object of CLI.md "Machine-readable output").
//
// Example:
//   PrintRuns({&record}, "json", std::cout);
#ifndef MESHSIM_CLI_REPORT_H_
#define MESHSIM_CLI_REPORT_H_

#include <ostream>
#include <string>
#include <vector>

#include "formats/run_record.h"

namespace meshsim::sim::cli {

// `format` is "table", "json" or "csv". JSON: one object for one run, an array for several.
// `top_keys` (config keys, e.g. a sweep's swept keys) are repeated as top-level JSON fields.
void PrintRuns(const std::vector<const formats::RunRecord*>& runs, const std::string& format,
               std::ostream& os, const std::vector<std::string>& top_keys = {});

// A table with one line per run: its name, the config values of `keys`, makespan, FLOP
// utilization, exposed communication, and the speed-up over the run named "collective" when
// there is one.
void PrintSummary(const std::vector<const formats::RunRecord*>& runs,
                  const std::vector<std::string>& keys, std::ostream& os);

// One line per run: mesh, slices, makespan, FLOP utilization, exposed communication and the
// speed-up over the run named "collective" (when present), for `meshsim compare`.
void PrintComparison(const std::vector<const formats::RunRecord*>& runs, std::ostream& os);

// JSON string literal with escapes, e.g. "a\"b".
std::string JsonString(const std::string& s);
// A JSON number: shortest round-trip form; NaN and infinities become null.
std::string JsonNumber(double v);
// A resolved config value in JSON: a number when its text is one (TypeOfConfigValue), else a
// string.
std::string JsonConfigValue(const std::string& v);

}  // namespace meshsim::sim::cli

#endif  // MESHSIM_CLI_REPORT_H_
