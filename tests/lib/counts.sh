# SPDX-License-Identifier: MIT
#
# tests/lib/counts.sh - pass/fail counting for the test scripts that print
# one line per check and a last line "PREFIX: N passed, N failed" (sourced).
#
# Set COUNTS_PREFIX (the last line's prefix) and COUNTS_TAG (put before
# PASS:/FAIL:, e.g. "VM-") before using check and finish.

passed=0 failed=0

check() { # name, command...: one check that passes when the command does
	local name=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		echo "${COUNTS_TAG:-}PASS: $name"
	else
		failed=$((failed + 1))
		echo "${COUNTS_TAG:-}FAIL: $name"
	fi
}

finish() { # prints the counts and exits, 0 when nothing failed
	echo "${COUNTS_PREFIX:?}: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}
