#!/usr/bin/env bash
# scripts/check-headers reads a Makefile build's depfiles: a unit test that includes CLI11 fails
# it, one of the files allowed to passes, and so does a batch holding an allowed file.
set -euo pipefail
check="$(dirname "$0")/../../scripts/check-headers"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
objects="$dir/CMakeFiles/unit_tests.dir"
mkdir -p "$objects/tests/unit" "$objects/unity/unit_tests" "$dir/unity/unit_tests"
printf '%s\n' 'x.o: a.cpp \' ' /usr/include/catch2/catch.hpp' >"$objects/tests/unit/plain_test.cpp.o.d"
"$check" "$dir"
printf '%s\n' 'x.o: a.cpp \' ' /usr/include/CLI/CLI.hpp' >"$objects/tests/unit/usage_truth_test.cpp.o.d"
"$check" "$dir"
printf '#include "../../../tests/unit/kubectl_conventions_test.cpp"\n' >"$dir/unity/unit_tests/batch_0.cpp"
printf '%s\n' 'x.o: a.cpp \' ' /usr/include/CLI/App.hpp' >"$objects/unity/unit_tests/batch_0.cpp.o.d"
"$check" "$dir"
printf '%s\n' 'x.o: a.cpp \' ' /usr/include/CLI/CLI.hpp' >"$objects/tests/unit/plain_test.cpp.o.d"
if "$check" "$dir" 2>"$dir/err"; then
    echo "FAIL: a plain test including CLI11 passed the check" >&2
    exit 1
fi
grep -q 'plain_test.cpp.o includes /usr/include/CLI/CLI.hpp' "$dir/err"
echo "check-headers: 4 cases pass"
