/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Absolute paths for usermountd (see path.h).
 */
#include "macro.h"
#include "path.h"

/* Appends the component [s, s + len) to the path being built at buf, *n bytes so far. */
static void append_component(char *buf, size_t *n, const char *s, size_t len) {
        if (len == 0 || (len == 1 && s[0] == '.'))
                return;
        if (*n == 0 || buf[*n - 1] != '/')
                buf[(*n)++] = '/';
        memcpy(buf + *n, s, len);
        *n += len;
}

/* Appends every component of p, split at slashes. */
static void append_components(char *buf, size_t *n, const char *p) {
        while (*p) {
                size_t len = strcspn(p, "/");

                append_component(buf, n, p, len);
                p += len;
                p += strspn(p, "/");
        }
}

int path_make_absolute(const char *path, const char *cwd, char **ret) {
        bool relative;
        size_t n = 0;
        char *buf;

        if (isempty(path))
                return -EINVAL;
        relative = path[0] != '/';
        if (relative && (isempty(cwd) || cwd[0] != '/'))
                return -EINVAL;

        /* The result is never longer than "/" + cwd + "/" + path. */
        buf = malloc((relative ? strlen(cwd) : 0) + strlen(path) + 3);
        if (!buf)
                return -ENOMEM;
        if (relative)
                append_components(buf, &n, cwd);
        append_components(buf, &n, path);
        if (n == 0)
                buf[n++] = '/';
        buf[n] = 0;

        *ret = buf;
        return 0;
}

int path_make_absolute_cwd(const char *path, char **ret) {
        _cleanup_free_ char *cwd = NULL;

        if (isempty(path))
                return -EINVAL;
        if (path[0] == '/')
                return path_make_absolute(path, NULL, ret);

        /* glibc allocates as much as the path needs; ENOENT if the directory was removed. */
        cwd = getcwd(NULL, 0);
        if (!cwd)
                return negative_errno();
        return path_make_absolute(path, cwd, ret);
}
