#!/usr/bin/env bash
# The slowest tests of a build folder's last ctest run, slowest first, from ctest's own record
# of each test's time (Testing/Temporary/CTestCostData.txt), after their count and total.
#   tools/slowest-tests.sh [build-dir (build)] [how many (15)]
set -euo pipefail
costs=${1:-build}/Testing/Temporary/CTestCostData.txt
[[ -f $costs ]] || { echo "no ctest timings in $costs" >&2; exit 1; }
times=$(awk '/^---/ { exit } { printf "%9.1f s  %s\n", $3, $1 }' "$costs" | sort -rn)
awk '{ total += $1 } END { printf "%d tests, %.0f s of test time; the slowest:\n", NR, total }' \
  <<< "$times"
head -n "${2:-15}" <<< "$times"
