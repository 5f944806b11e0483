#!/usr/bin/env bash
# Builds meshsim and its tests with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ (or $MESHSIM_ASAN_BUILD_DIR), runs the test suite there, then fuzzes the CLI of the
# instrumented binary (scripts/cli_fuzz.py). Not part of the default test run: the instrumented
# build takes several times as long to compile and run.
# Usage: scripts/sanitize.sh [--no-tests] [--no-fuzz] [--fuzz-cases N]
#
# What it skips: tests labelled `slow` (the 256-chip paper-ordering runs, minutes each without
# instrumentation and far longer with it; they exercise no code the rest of the suite does not)
# and the Google Benchmark binaries (not tests).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${MESHSIM_ASAN_BUILD_DIR:-$root/build-asan}"
run_tests=1
run_fuzz=1
fuzz_cases=300
while [ $# -gt 0 ]; do
  case "$1" in
    --no-tests) run_tests=0 ;;
    --no-fuzz) run_fuzz=0 ;;
    --fuzz-cases) fuzz_cases="$2"; shift ;;
    *) echo "sanitize.sh: unknown argument '$1' (allowed: --no-tests, --no-fuzz, --fuzz-cases N)" >&2
       exit 2 ;;
  esac
  shift
done

"$root/scripts/install-deps.sh"
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# -O1 keeps the instrumented suite reasonably fast while leaving stack traces readable; every
# UBSan finding is fatal so that ctest and the fuzzer see it as a failure, not a log line.
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS="-O1 $sanitize" -DCMAKE_C_FLAGS="-O1 $sanitize" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize" -DMESHSIM_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$build" -j "${MESHSIM_JOBS:-2}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# Leaks inside libhdf5 on damaged archives are the library's (see the file); ours still count.
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/scripts/lsan.supp:print_suppressions=0}"

if [ "$run_tests" = 1 ]; then
  # Tests labelled `slow` are skipped (see the header).
  ctest --test-dir "$build" -j "${MESHSIM_JOBS:-2}" -LE slow --output-on-failure --timeout 1800
fi
if [ "$run_fuzz" = 1 ]; then
  python3 "$root/scripts/cli_fuzz.py" --binary "$build/sim/meshsim" --cases "$fuzz_cases"
fi
