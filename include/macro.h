/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers shared by the daemon, the client and the tests: cleanup attributes,
 * ownership transfer and array sizes. Defined once here, used everywhere.
 */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

/* Takes ownership of a pointer or fd out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                  \
        ({                                           \
                __typeof__(p) _take_ptr_ = (p);      \
                (p) = NULL;                          \
                _take_ptr_;                          \
        })
#define TAKE_FD(fd)                                  \
        ({                                           \
                int _take_fd_ = (fd);                \
                (fd) = -EBADF;                       \
                _take_fd_;                           \
        })

/* Closes fd if valid, keeps errno, and returns -EBADF for "fd = safe_close(fd)". */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void freep(void *p) {
        free(*(void **) p);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Defines fooptr_freep() for a destructor foo_free() that accepts NULL. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)       \
        static inline void func##p(type *p) {         \
                if (*p)                               \
                        func(*p);                     \
        }

/* errno of a failed call as a negative value, never 0 (defensive against libraries). */
static inline int negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

static inline const char *strempty(const char *s) {
        return s ? s : "";
}

#define streq(a, b) (strcmp((a), (b)) == 0)

static inline int streq_ptr(const char *a, const char *b) {
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

static inline bool isempty(const char *s) {
        return !s || !*s;
}

/* Whether the NULL-terminated list l (or NULL) holds s. */
static inline bool strv_contains(const char *const *l, const char *s) {
        for (; l && *l; l++)
                if (streq(*l, s))
                        return true;
        return false;
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* Frees p and returns NULL, for "p = mfree(p)". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}
