#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# libusermount as its users get it: the example program of libusermount(3) is the text of
# lib/examples/usermount-example.c, and it compiles and links with nothing but what
# `meson install` puts in place (usermount.h in the include directory, usermount.pc, the
# library) through pkg-config, with -Wall -Wextra -Werror; the header also compiles as
# C++ where a C++ compiler is installed. TAP.
# $1: the source root, $2: the built library, $3: the generated usermount.pc, $4: cc.
set -u

src=$1
lib=$2
pc=$3
cc=$4
. "$(dirname "$0")/../tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The EXAMPLE's program: the lines between .EX and the first .EE after "The example
# mounts", with troff's escapes undone.
sed -n '/^The example mounts/,/^\.EE/p' "$src/man/libusermount.3" | sed -n '/^\.EX/,/^\.EE/p' |
        sed -e '1d' -e '$d' -e 's/\\-/-/g' -e 's/\\e/\\/g' -e "s/\\\\(aq/'/g" >"$tmp/man.c"
out=$(diff "$src/lib/examples/usermount-example.c" "$tmp/man.c")
result "the EXAMPLE of libusermount.3 is lib/examples/usermount-example.c" \
        "$([ -s "$tmp/man.c" ] && [ -z "$out" ]; echo $?)" "$out"

# An installed tree: the prefix of the .pc file moved under $tmp.
prefix=$(sed -n 's/^prefix=//p' "$pc")
mkdir -p "$tmp/root$prefix/include" "$tmp/pkgconfig"
includedir=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --variable=includedir usermount)
libdir=$(PKG_CONFIG_PATH="$(dirname "$pc")" pkg-config --variable=libdir usermount)
mkdir -p "$tmp/root$includedir" "$tmp/root$libdir"
cp "$src/lib/usermount.h" "$tmp/root$includedir/"
cp "$lib" "$tmp/root$libdir/libusermount.so.1"
ln -s libusermount.so.1 "$tmp/root$libdir/libusermount.so"
cp "$pc" "$tmp/pkgconfig/"
flags=$(PKG_CONFIG_PATH="$tmp/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$tmp/root" \
        pkg-config --cflags --libs usermount)
out=$($cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/example" \
        "$src/lib/examples/usermount-example.c" $flags 2>&1)
result "the example compiles and links through pkg-config usermount ($flags)" \
        "$([ -x "$tmp/example" ]; echo $?)" "$out"

# In a sanitizer build the library brings ASan's runtime, which the example lacks.
out=$(ASAN_OPTIONS=verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} \
      LD_LIBRARY_PATH="$tmp/root$libdir" "$tmp/example" 2>&1)
result "the example runs and says how to use it without arguments" \
        "$(echo "$out" | grep -q '^Usage: .* IMAGE DIRECTORY$'; echo $?)" "$out"

if command -v c++ >/dev/null; then
        out=$(echo '#include <usermount.h>' |
              c++ -x c++ -fsyntax-only -Wall -Wextra -Werror -I"$tmp/root$includedir" - 2>&1)
        result "usermount.h compiles as C++" "$([ -z "$out" ]; echo $?)" "$out"
else
        echo "ok $((n += 1)) - usermount.h compiles as C++ # SKIP no C++ compiler"
fi

tap_finish
