#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manual pages render without a warning (groff -ww, and man --warnings where man-db
# is installed), and name every option and setting the code has: the long options of the
# client's and the daemon's getopt tables, and the keys of the configuration parser. TAP.
# $1: the source root.
set -u

src=$1
. "$(dirname "$0")/../tap.sh"

for page in usermount.1 usermount-automount.1 usermountd.8 usermount.conf.5 org.freedesktop.UserMount1.5 \
           libusermount.3 usermount_client_new.3 usermount_open_mount.3 usermount_unmount.3 \
           usermount_list.3 usermount_monitor_new.3; do
        out=$(groff -man -ww -z "$src/man/$page" 2>&1)
        result "$page renders with groff -ww without warnings" "$([ -z "$out" ]; echo $?)" "$out"
        if command -v man >/dev/null; then
                out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$src/man/$page" 2>&1 >/dev/null)
                result "$page renders with man --warnings without warnings" \
                        "$([ -z "$out" ]; echo $?)" "$out"
        fi
done

# missing PAGE NAME...: the names that PAGE does not mention (as troff writes them).
missing() {
        local page=$1 name
        shift
        for name in "$@"; do
                grep -qF -- "${name//-/\\-}" "$src/man/$page" || printf '%s ' "$name"
        done
}

long_options() { # the long options of a getopt table in the given files
        sed -n 's/^ *{ "\([a-z-]*\)", \(no\|required\|optional\)_argument.*/--\1/p' "$@" | sort -u
}

keys=$(sed -n -e 's/^ *{ "\([A-Za-z]*\)", parse_.*/\1=/p' -e 's/^ *LIMIT("\([A-Za-z]*\)".*/\1=/p' \
        "$src/daemon/conf.c")
# The extraction itself must find something, or the checks below would pass on nothing.
client_options=$(long_options "$src"/client/*.c | wc -l)
daemon_options=$(long_options "$src/daemon/main.c" | wc -l)
result "the option tables and keys are found" \
        "$([ "$client_options" -ge 10 ] && [ "$daemon_options" -ge 6 ] &&
           [ "$(echo "$keys" | wc -w)" -ge 15 ]; echo $?)" \
        "client options: $client_options, daemon options: $daemon_options, keys: $(echo $keys)"

# usermount automount's options and settings have a page of their own.
automount_keys=$(sed -n 's/.*streq(key, "\([A-Za-z]*\)").*/\1=/p' "$src/client/automount-config.c")
result "the automount options and keys are found" \
        "$([ "$(long_options "$src/client/cmd-automount.c" | wc -l)" -ge 8 ] &&
           [ "$(echo "$automount_keys" | wc -w)" -ge 6 ]; echo $?)" \
        "keys: $(echo $automount_keys)"
# shellcheck disable=SC2046
m=$(missing usermount.1 $(long_options $(ls "$src"/client/*.c | grep -v /cmd-automount.c) \
        ) mount unmount list monitor probe automount usermount-automount)
result "usermount.1 names every option and command of client/*.c" "$([ -z "$m" ]; echo $?)" \
        "missing: $m"
# shellcheck disable=SC2046
# shellcheck disable=SC2086
m=$(missing usermount-automount.1 $(long_options "$src/client/cmd-automount.c") \
        $automount_keys SIGTERM usermount-automount.service automount.conf)
result "usermount-automount.1 names every option of cmd-automount.c and every key of automount-config.c" \
        "$([ -z "$m" ]; echo $?)" "missing: $m"
# shellcheck disable=SC2046
m=$(missing usermountd.8 $(long_options "$src/daemon/main.c") SIGHUP SIGTERM)
result "usermountd.8 names every option of daemon/main.c" "$([ -z "$m" ]; echo $?)" \
        "missing: $m"
# shellcheck disable=SC2046
# shellcheck disable=SC2086
m=$(missing usermount.conf.5 $keys)
result "usermount.conf.5 names every key of daemon/conf.c" "$([ -z "$m" ]; echo $?)" \
        "missing: $m"

# Every function of libusermount's header has a page that names it in NAME and SYNOPSIS.
functions=$(grep -v '^ *\(/\*\|\*\)' "$src/lib/usermount.h" | grep -o '\busermount_[a-z_]*(' |
            tr -d '(' | sort -u)
m=""
for f in $functions; do
        grep -lqF -- "$f," "$src"/man/*.3 2>/dev/null ||
                grep -qF -- "$f \\-" "$src"/man/*.3 || m="$m $f"
        grep -qF -- "\"$f(" "$src"/man/*.3 || grep -qF -- " *$f(" "$src"/man/*.3 ||
                grep -qF -- " $f(" "$src"/man/*.3 || m="$m $f(synopsis)"
done
result "every function of lib/usermount.h is in a section 3 page's NAME and SYNOPSIS" \
        "$([ -n "$functions" ] && [ -z "$m" ]; echo $?)" "missing:$m"

# ...and "man FUNCTION" finds it: a page of its name, or a link in man/meson.build to a
# page whose NAME has it.
m=""
for f in $functions; do
        [ -f "$src/man/$f.3" ] && continue
        page=$(sed -n "s/^ *\['$f', '\(.*\.3\)'\],\$/\1/p" "$src/man/meson.build")
        if [ -z "$page" ] || ! sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$src/man/$page" |
                grep -qE -- "(^|[ ,])$f(,| \\\\-|$)"; then
                m="$m $f"
        fi
done
result "every function of lib/usermount.h has a page or a man/meson.build link to its page" \
        "$([ -n "$functions" ] && [ -z "$m" ]; echo $?)" "missing:$m"

tap_finish
