/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Byte-level checks of absolute paths (see pathcheck.h). */
#include <limits.h>
#include <string.h>

#include "pathcheck.h"

static PathProblem component_problem(const char *c, size_t len, bool last) {
        if (len == 0)
                return last ? PATH_TRAILING_SLASH : PATH_DOUBLE_SLASH;
        if (len == 1 && c[0] == '.')
                return PATH_DOT;
        if (len == 2 && c[0] == '.' && c[1] == '.')
                return PATH_DOT_DOT;
        if (len > NAME_MAX)
                return PATH_LONG_NAME;
        return PATH_OK;
}

PathProblem path_check_canonical(const char *path, size_t max) {
        if (!path || path[0] != '/')
                return PATH_NOT_ABSOLUTE;
        if (strnlen(path, max) >= max)
                return PATH_TOO_LONG;
        if (!path[1])
                return PATH_OK;
        for (const char *c = path + 1;;) {
                size_t len = strcspn(c, "/");
                PathProblem p = component_problem(c, len, !c[len]);

                if (p != PATH_OK)
                        return p;
                if (!c[len])
                        return PATH_OK;
                c += len + 1;
        }
}

bool path_has_control_characters(const char *path) {
        for (const char *p = path; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return true;
        return false;
}
