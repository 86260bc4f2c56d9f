/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The benchmarks' test data: files of deterministic random bytes, empty images made by a
 * type's mkfs, and the quiet run of the helper programs that make them.
 */
#pragma once

#include <stdint.h>

/* The next xorshift64 number of the sequence *x (never 0 if *x was not). */
static inline uint64_t bench_xorshift(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* size bytes (a multiple of 64 KiB) of xorshift64 output at path, the same in every run:
 * incompressible, so that squashfs and zram store it as it is and every driver reads as
 * many bytes. -errno. */
int bench_write_random_file(const char *path, uint64_t size);

/* Runs argv (argv[0] looked up in $PATH) with its output thrown away: 0; -ENOENT when the
 * program is not installed; -EIO when it failed (said on stderr, naming what). */
int bench_run_quiet(const char *const *argv, const char *what);

/* <tmpdir>/images/<name>.img, a sparse file of size bytes formatted by mkfs (a command,
 * NULL-terminated; the image's path is appended), in *ret_path (g_free()). -ENOENT when
 * mkfs is not installed (nothing is left behind), else as bench_run_quiet(). */
int bench_make_empty_image(const char *name, const char *const *mkfs, uint64_t size,
                           char **ret_path);
