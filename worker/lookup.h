/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Path lookups that never leave a directory fd: one component at a time with openat(),
 * the way systemd's chase() walks, rather than openat2(RESOLVE_BENEATH). Under systemd,
 * RestrictSUIDSGID= (and any seccomp filter that must see open flags) answers ENOSYS for
 * every openat2(), because a filter cannot look into struct open_how; this walk gives the
 * same guarantees with calls every filter lets through, so the daemon behaves the same on
 * every host. See lookup.c for how each RESOLVE_* rule is kept.
 */
#pragma once

typedef enum LookupFlags {
        /* A symbolic link anywhere on the way, or at the end: -ELOOP
         * (RESOLVE_NO_SYMLINKS). Without it, relative links are followed, by the walk
         * itself, as long as they stay below the start (RESOLVE_BENEATH): an absolute
         * target, or ".." above the start, is -EXDEV; a link on procfs (a magic link) is
         * -ELOOP (RESOLVE_NO_MAGICLINKS); more than 40 links is -ELOOP. */
        LOOKUP_NO_SYMLINKS = 1 << 0,
        /* A component on another mount than the one before it: -EXDEV (RESOLVE_NO_XDEV). */
        LOOKUP_NO_XDEV = 1 << 1,
} LookupFlags;

/*
 * Opens path below dir_fd with open_flags and O_CLOEXEC: O_PATH, or O_DIRECTORY with
 * O_RDONLY and friends (anything else could run a device's open() or wait on a FIFO
 * before the walk checked what it found: -EINVAL, as are O_CREAT, O_TMPFILE and
 * O_NOFOLLOW). An absolute path counts from dir_fd, "" is dir_fd itself; "." components
 * are skipped; ".." goes back one step of the walk, never above dir_fd (-EXDEV). A path
 * of PATH_MAX bytes or more is -ENAMETOOLONG. Errors are those of openat2() for the same
 * rules (-ENOENT, -ENOTDIR, -EACCES, -ELOOP, -EXDEV...); the lookup runs with the calling
 * process's credentials, so permission checks are those of a plain open(). Returns the
 * new fd (owned by the caller), or -errno.
 */
int lookup_beneath(int dir_fd, const char *path, int open_flags, LookupFlags flags);
