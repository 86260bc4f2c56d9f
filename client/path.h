/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Making the paths the user names absolute before they go to usermountd, which accepts
 * absolute paths only (org.freedesktop.UserMount1(5)) and resolves them in the caller's mount
 * namespace.
 */
#pragma once

/*
 * Joins path to cwd if it is relative, and tidies the result lexically: repeated slashes
 * and "." components go, so does a trailing slash (but "/" stays). Symlinks are not
 * resolved and ".." is kept as it is, because usermountd looks the path up itself,
 * refusing symlinks, and ".." after a symlink means something else than ".." removed by
 * hand. cwd must be absolute when path is relative (else -EINVAL); an empty path is
 * -EINVAL. Returns 0 or -errno; *ret is the caller's to free.
 */
int path_make_absolute(const char *path, const char *cwd, char **ret);

/* Like path_make_absolute() with the working directory of this process (getcwd()). */
int path_make_absolute_cwd(const char *path, char **ret);
