#!/usr/bin/env bash
# Runs the test suite with TMPDIR (and TEST_TMPDIR) pointing to a fresh empty directory and fails
# when anything is left in it afterwards: every test writes into its own temporary directory
# (tests/test_temp_dir.h) and removes it. Extra arguments go to ctest (e.g. -LE slow, -R Cli).
#
#   ./scripts/check_test_temp.sh            # the whole suite
#   ./scripts/check_test_temp.sh -LE slow   # without the slow tests
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d "${TMPDIR:-/tmp}/meshsim_check_temp.XXXXXX")
trap 'rm -rf "$dir"' EXIT
status=0
TMPDIR="$dir" TEST_TMPDIR="$dir" ctest --test-dir build -j2 --output-on-failure "$@" || status=$?
left=$(find "$dir" -mindepth 1 | head -20)
if [[ -n "$left" ]]; then
  echo "check_test_temp: the tests left files in \$TMPDIR:" >&2
  echo "$left" >&2
  exit 1
fi
echo "check_test_temp: \$TMPDIR is empty after the tests"
exit "$status"
