/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the libFuzzer targets: the fuzz input read as NUL-separated text fields
 * and single bytes, files of the target's own for parsers that take a path, and an
 * assertion that libFuzzer reports as a crash (with the input that made it fail).
 *
 * Most targets take their input as fields separated by NUL bytes: a C string cannot hold
 * a NUL, and neither can the D-Bus strings and file lines the daemon receives, so the
 * separator costs no coverage and the seeds stay readable (cat -v).
 */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

/* Aborts (a crash for libFuzzer, which saves the input) when a property does not hold. */
#define FUZZ_ASSERT(cond)                                                                  \
        do {                                                                               \
                if (!(cond)) {                                                             \
                        fprintf(stderr, "%s:%d: property does not hold: %s\n", __FILE__,   \
                                __LINE__, #cond);                                          \
                        abort();                                                           \
                }                                                                          \
        } while (0)

/* The input as fields: a private copy with a NUL after the last byte. */
typedef struct FuzzInput {
        char *buf;
        size_t size;
        size_t pos;
} FuzzInput;

/* Copies data; false when out of memory (the target then skips the input). */
static inline bool fuzz_input_init(FuzzInput *in, const uint8_t *data, size_t size) {
        *in = (FuzzInput){ .buf = malloc(size + 1), .size = size };
        if (!in->buf)
                return false;
        if (size > 0)
                memcpy(in->buf, data, size);
        in->buf[size] = 0;
        return true;
}

static inline void fuzz_input_done(FuzzInput *in) {
        in->buf = mfree(in->buf);
}

/* The next field: the bytes up to the next NUL (or the end); "" once the input is used up. */
static inline const char *fuzz_field(FuzzInput *in) {
        const char *s = in->buf + in->pos;

        if (in->pos >= in->size)
                return in->buf + in->size;
        in->pos += strlen(s) + 1;
        return s;
}

/* What is left of the input, NULs included. */
static inline const char *fuzz_rest(FuzzInput *in, size_t *ret_size) {
        size_t pos = in->pos < in->size ? in->pos : in->size;

        *ret_size = in->size - pos;
        in->pos = in->size;
        return in->buf + pos;
}

/* The next byte; 0 once the input is used up. */
static inline uint8_t fuzz_byte(FuzzInput *in) {
        return in->pos < in->size ? (uint8_t) in->buf[in->pos++] : 0;
}

/* The next n bytes (at most 8) as a little-endian number. */
static inline uint64_t fuzz_number(FuzzInput *in, unsigned n) {
        uint64_t v = 0;

        for (unsigned i = 0; i < n && i < 8; i++)
                v |= (uint64_t) fuzz_byte(in) << (8 * i);
        return v;
}

static char *fuzz_dir_path;

/* At exit: the files of fuzz_dir() (it has no subdirectories) and the directory. */
static inline void fuzz_dir_remove(void) {
        DIR *d = fuzz_dir_path ? opendir(fuzz_dir_path) : NULL;
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        closedir(d);
        (void) rmdir(fuzz_dir_path);
}

/*
 * A directory of the target's own, made at the first call under $TMPDIR and removed when
 * the target exits normally (after a crash, tools/fuzz removes the $TMPDIR it set).
 */
static inline const char *fuzz_dir(void) {
        char *dir = fuzz_dir_path;

        if (!dir) {
                const char *tmp = getenv("TMPDIR");
                char *t = NULL;

                if (asprintf(&t, "%s/usermount-fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0)
                        abort();
                if (!mkdtemp(t)) {
                        perror("mkdtemp");
                        abort();
                }
                dir = fuzz_dir_path = t;
                atexit(fuzz_dir_remove);
        }
        return dir;
}

/* The path of name in fuzz_dir(); the returned string lives as long as the process. */
static inline const char *fuzz_path(const char *name) {
        char *p = NULL;

        if (asprintf(&p, "%s/%s", fuzz_dir(), name) < 0)
                abort();
        return p;
}

/* Replaces the file at path with data (mode 0600). */
static inline void fuzz_write_file(const char *path, const void *data, size_t size) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        const char *p = data;

        if (fd < 0) {
                perror(path);
                abort();
        }
        while (size > 0) {
                ssize_t n = write(fd, p, size);

                if (n <= 0) {
                        perror(path);
                        abort();
                }
                p += n;
                size -= (size_t) n;
        }
        close(fd);
}
