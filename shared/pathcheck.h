/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Whether a path is absolute and canonical, judged on its bytes alone: the one definition
 * that the bus edge (targets, devices), the device and target checks and the
 * configuration (MediaRoot=) share. Nothing here touches the filesystem; a canonical path
 * is still resolved with openat2() before it is trusted.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* What is wrong with a path, the first problem found: absolute and length first, then the
 * components from left to right. Each caller words its own message from this. */
typedef enum PathProblem {
        PATH_OK = 0,
        PATH_NOT_ABSOLUTE,      /* empty, or does not start with '/' */
        PATH_TOO_LONG,          /* max bytes or more */
        PATH_DOUBLE_SLASH,      /* an empty component: "//" */
        PATH_TRAILING_SLASH,    /* ends with '/' and is not "/" */
        PATH_DOT,               /* a "." component */
        PATH_DOT_DOT,           /* a ".." component */
        PATH_LONG_NAME,         /* a component longer than NAME_MAX bytes */
} PathProblem;

/*
 * Checks that path is absolute, shorter than max bytes, and canonical: no empty, "." or
 * ".." component, no trailing '/', no component longer than NAME_MAX. "/" is canonical.
 * Control characters are not judged here (see path_has_control_characters()).
 */
PathProblem path_check_canonical(const char *path, size_t max);

/* Whether path has a byte below 0x20 or DEL. */
bool path_has_control_characters(const char *path);
