#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ABI of libusermount.so.1: the dynamic symbols the built library defines, with their
# version nodes, are exactly those of lib/libusermount.symbols (an accidental export, a
# removal or a symbol moved to another node fails here), the soname is libusermount.so.1,
# and every exported function is declared in the public header and vice versa. TAP.
# $1: the built library, $2: the source root.
set -u

lib=$1
src=$2
. "$(dirname "$0")/../tap.sh"

built=$(nm -D --defined-only "$lib" | awk '{ print $3 }' | LC_ALL=C sort)
expected=$(grep -v '^#' "$src/lib/libusermount.symbols" | LC_ALL=C sort)
diff=$(diff <(echo "$expected") <(echo "$built"))
result "the exported symbols and versions are those of lib/libusermount.symbols" \
        "$([ -n "$built" ] && [ -z "$diff" ]; echo $?)" "< expected, > built:" "$diff"

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
result "the soname is libusermount.so.1" "$([ "$soname" = libusermount.so.1 ]; echo $?)" \
        "soname: $soname"

functions=$(echo "$built" | sed -n 's/@@LIBUSERMOUNT_[0-9]*$//p' | grep '^usermount_')
# Declarations: names followed by "(" outside comments (a function pointer type is "name)(").
declared=$(grep -v '^ *\(/\*\|\*\)' "$src/lib/usermount.h" | grep -o '\busermount_[a-z_]*(' |
           tr -d '(' | LC_ALL=C sort -u)
diff=$(diff <(echo "$declared") <(echo "$functions"))
result "every exported function is declared in usermount.h, and every declared one exported" \
        "$([ -z "$diff" ]; echo $?)" "< declared, > exported:" "$diff"

undefined_sd=$(nm -D --defined-only "$lib" | grep -c ' sd_\| polkit_\| userns_')
result "no internal symbol (sd_*, polkit_*, userns_*) is exported" \
        "$([ "$undefined_sd" = 0 ]; echo $?)"

tap_finish
