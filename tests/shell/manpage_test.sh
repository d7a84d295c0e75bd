#!/usr/bin/env bash
# Every checked-in man page renders without a single groff warning.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
failures=0 passed=0
for page in "$root"/man/*.1; do
  warnings=$(groff -ww -man -Tutf8 "$page" 2>&1 >/dev/null)
  if [ -n "$warnings" ]; then
    echo "FAIL: $page: $warnings" >&2
    failures=$((failures + 1))
  else
    passed=$((passed + 1))
  fi
done
echo "manpage: $passed passed, $failures failed"
[ $passed -gt 0 ] && [ $failures -eq 0 ]
