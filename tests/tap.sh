# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP for the suite's shell tests: source it, call result for each check, tap_finish last.

n=0
failed=0

result() { # result NAME OK [DIAGNOSTIC...]: OK 0 passes; diagnostics go to "# " lines
        n=$((n + 1))
        if [ "$2" = 0 ]; then
                echo "ok $n - $1"
        else
                echo "not ok $n - $1"
                shift 2
                printf '# %s\n' "$@"
                failed=1
        fi
}

tap_finish() { # the plan, and the exit status: 1 if any check failed
        echo "1..$n"
        exit $failed
}
