/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lookup_beneath(): a path walk below a directory fd with openat() only (see lookup.h for
 * why not openat2()). How it keeps the rules openat2() would enforce:
 *   - Every component is opened with O_PATH | O_NOFOLLOW relative to the fd of the
 *     component before it: the kernel resolves one name at a time and never follows a
 *     symbolic link, so the walk sees every link as a link and never stands anywhere but
 *     on the fds it holds. ".." is never handed to the kernel: the walk steps back to the
 *     fd it came from, and there is none above the start (-EXDEV).
 *   - A link is followed, where allowed, by the walk: its text is read from the directory
 *     that holds it and walked from there, under the same rules.
 *   - The object returned is the one the walk inspected: an O_PATH result is that very
 *     fd; any other open is made by name from the parent with O_NOFOLLOW and must find
 *     the same inode on the same mount, or the walk starts again (a rename raced it).
 *   - Where the kernel's walk checks permissions, so does this one: search permission on
 *     every directory ("." and ".." included), and for a link it follows, the rule of
 *     fs.protected_symlinks (always, whatever the sysctl says): not a link someone else
 *     owns in a sticky directory others can write to.
 *   - Directories it walks through are opened with O_DIRECTORY, which lets the kernel
 *     trigger an automount there (an NFS home directory) as a plain path walk would.
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "lookup.h"
#include "macro.h"

#define LOOKUP_MAX_LINKS 40   /* the kernel's MAXSYMLINKS */
#define LOOKUP_ATTEMPTS 8     /* walks started again after a rename raced the final open */

/* The fds of the directories walked so far, the start (not ours) below the first. */
typedef struct Walk {
        int start_fd;
        int *fds;
        size_t n, allocated;
} Walk;

static void walk_done(Walk *w) {
        for (size_t i = 0; i < w->n; i++)
                safe_close(w->fds[i]);
        w->fds = mfree(w->fds);
        w->n = w->allocated = 0;
}

static int walk_top(const Walk *w) {
        return w->n > 0 ? w->fds[w->n - 1] : w->start_fd;
}

/* Takes fd, also on failure. */
static int walk_push(Walk *w, int fd) {
        if (w->n == w->allocated) {
                size_t allocated = w->allocated ? w->allocated * 2 : 16;
                int *fds = realloc(w->fds, allocated * sizeof(int));

                if (!fds) {
                        safe_close(fd);
                        return -ENOMEM;
                }
                w->fds = fds;
                w->allocated = allocated;
        }
        w->fds[w->n++] = fd;
        return 0;
}

/* Search permission on dir_fd, as the kernel checks it before it looks up "." or "..". */
static int may_search(int dir_fd, const char *dot) {
        int fd = openat(dir_fd, dot, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        safe_close(fd);
        return 0;
}

static int walk_pop(Walk *w) {
        int r;

        if (w->n == 0)
                return -EXDEV; /* ".." above the start */
        r = may_search(walk_top(w), "..");
        if (r < 0)
                return r;
        w->n--;
        safe_close(w->fds[w->n]);
        return 0;
}

/*
 * The root of a FUSE mount that lets only its owner in (a userspace driver's, made with
 * user_id= and without allow_other) answers us nothing but a statx that asks for nothing:
 * its mount id and that it is a mount's root. It is taken as a directory owned by nobody
 * we know ((uid_t) -1, mode 0: nothing below it can be reached, no check of ownership
 * passes), which is enough to name it as the last component (Unmount) and never enough
 * to walk through it.
 */
static int fd_statx_fuse_root(int fd, struct statx *ret) {
        struct statfs sfs;

        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, 0, ret) < 0)
                return -errno;
        if (!(ret->stx_mask & STATX_MNT_ID) || !(ret->stx_attributes & STATX_ATTR_MOUNT_ROOT) ||
            fstatfs(fd, &sfs) < 0 || sfs.f_type != FUSE_SUPER_MAGIC)
                return -EACCES;
        ret->stx_mode = S_IFDIR;
        ret->stx_uid = (uint32_t) -1;
        ret->stx_gid = (uint32_t) -1;
        return 0;
}

static int fd_statx(int fd, struct statx *ret) {
        if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
                  STATX_TYPE | STATX_MODE | STATX_UID | STATX_INO | STATX_MNT_ID, ret) < 0)
                return errno == EACCES ? fd_statx_fuse_root(fd, ret) : -errno;
        if (!(ret->stx_mask & STATX_MNT_ID))
                return -EOPNOTSUPP;
        return 0;
}

static bool same_object(const struct statx *a, const struct statx *b) {
        return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor &&
               a->stx_ino == b->stx_ino && a->stx_mnt_id == b->stx_mnt_id;
}

/*
 * fs.protected_symlinks: a link in a sticky directory others can write to (/tmp) is only
 * followed when its owner is the one who follows it or the directory's owner.
 */
static int may_follow(const struct statx *link, const struct statx *dir) {
        uid_t fsuid = (uid_t) setfsuid((uid_t) -1); /* an invalid id only reads it */

        if (link->stx_uid == fsuid || link->stx_uid == dir->stx_uid)
                return 0;
        if ((dir->stx_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH))
                return -EACCES;
        return 0;
}

/*
 * The text of the link behind link_fd (an O_PATH fd of the link itself), followed by
 * rest: the path still to walk. Links on procfs are magic links (they are not resolved
 * by their text): -ELOOP. An absolute target would leave the start: -EXDEV.
 */
static int link_expand(int link_fd, const char *rest, char **ret_todo) {
        char target[PATH_MAX];
        struct statfs sfs;
        ssize_t len;
        char *todo = NULL;

        if (fstatfs(link_fd, &sfs) < 0)
                return -errno;
        if (sfs.f_type == PROC_SUPER_MAGIC)
                return -ELOOP;
        len = readlinkat(link_fd, "", target, sizeof(target));
        if (len < 0)
                return -errno;
        if (len == 0)
                return -ENOENT;
        if ((size_t) len >= sizeof(target))
                return -ENAMETOOLONG;
        target[len] = 0;
        if (target[0] == '/')
                return -EXDEV;
        if (asprintf(&todo, "%s%s", target, rest) < 0) /* rest is "" or starts with "/" */
                return -ENOMEM;
        *ret_todo = todo;
        return 0;
}

/* The next component of *p (slashes skipped) into name; *p moves past it. 0 at the end. */
static int next_component(const char **p, char name[static NAME_MAX + 1]) {
        size_t len;

        *p += strspn(*p, "/");
        len = strcspn(*p, "/");
        if (len == 0)
                return 0;
        if (len > NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(name, *p, len);
        name[len] = 0;
        *p += len;
        return 1;
}

/* The final open, with the caller's flags, of name in parent: it must be what was walked. */
static int reopen_final(int parent_fd, const char *name, int path_fd, int open_flags) {
        _cleanup_close_ int fd = -EBADF;
        struct statx want, have;
        int r;

        if (!name) /* the walk ended on "." or "..": the directory itself */
                fd = openat(path_fd, ".", open_flags | O_CLOEXEC);
        else
                fd = openat(parent_fd, name, open_flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) /* swapped for a link or a non-directory meanwhile: walk again */
                return errno == ELOOP || errno == ENOTDIR ? -EAGAIN : -errno;
        r = fd_statx(path_fd, &want);
        if (r >= 0)
                r = fd_statx(fd, &have);
        if (r < 0)
                return r;
        if (!same_object(&want, &have))
                return -EAGAIN;
        return TAKE_FD(fd);
}

/*
 * Opens name in dir_fd without following it: with O_DIRECTORY when it must be a directory
 * (the kernel then mounts an automount point there, as in any path walk), else, and when
 * that finds no directory (a link, or not a directory after all), without.
 */
static int open_component(int dir_fd, const char *name, bool want_dir) {
        int fd;

        if (want_dir) {
                fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0 || errno != ENOTDIR)
                        return fd < 0 ? -errno : fd;
        }
        fd = openat(dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

static int walk(int dir_fd, const char *path, int open_flags, LookupFlags flags) {
        _cleanup_(walk_done) Walk w = { .start_fd = dir_fd };
        _cleanup_free_ char *todo = strdup(path);
        char name[NAME_MAX + 1], last[NAME_MAX + 1];
        bool last_is_name = false;
        unsigned links = 0;
        const char *p = NULL;
        int r;

        if (!todo)
                return -ENOMEM;
        for (p = todo;;) {
                _cleanup_close_ int fd = -EBADF;
                struct statx stx, parent_stx;
                bool walk_through;

                r = next_component(&p, name);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
                if (streq(name, ".")) {
                        r = may_search(walk_top(&w), ".");
                        if (r < 0)
                                return r;
                        last_is_name = false;
                        continue;
                }
                if (streq(name, "..")) {
                        r = walk_pop(&w);
                        if (r < 0)
                                return r;
                        last_is_name = false;
                        continue;
                }

                /* "a/b" walks through a, "a/" wants a directory, and so does O_DIRECTORY
                 * of the last name (p is then at the end). */
                walk_through = p[0] == '/' || (open_flags & O_DIRECTORY);
                fd = open_component(walk_top(&w), name, walk_through);
                if (fd < 0)
                        return fd;
                r = fd_statx(fd, &stx);
                if (r >= 0)
                        r = fd_statx(walk_top(&w), &parent_stx);
                if (r < 0)
                        return r;
                if ((flags & LOOKUP_NO_XDEV) && parent_stx.stx_mnt_id != stx.stx_mnt_id)
                        return -EXDEV;
                if (S_ISLNK(stx.stx_mode)) {
                        char *expanded = NULL;

                        if ((flags & LOOKUP_NO_SYMLINKS) || ++links > LOOKUP_MAX_LINKS)
                                return -ELOOP;
                        r = may_follow(&stx, &parent_stx);
                        if (r >= 0)
                                r = link_expand(fd, p, &expanded);
                        if (r < 0)
                                return r;
                        free(todo);
                        p = todo = expanded;
                        continue;
                }
                /* Anything walked through, and "a/b/", must be a directory. */
                if (!S_ISDIR(stx.stx_mode) && p[0] == '/')
                        return -ENOTDIR;
                r = walk_push(&w, TAKE_FD(fd));
                if (r < 0)
                        return r;
                memcpy(last, name, sizeof(last));
                last_is_name = true;
        }

        if (w.n == 0) { /* nothing walked, or back at the start */
                int fd = openat(dir_fd, ".", open_flags | O_CLOEXEC);

                return fd < 0 ? -errno : fd;
        }
        if (open_flags & O_DIRECTORY) {
                struct statx stx;

                r = fd_statx(walk_top(&w), &stx);
                if (r < 0)
                        return r;
                if (!S_ISDIR(stx.stx_mode))
                        return -ENOTDIR;
        }
        if (open_flags & O_PATH)
                return w.fds[--w.n];
        return reopen_final(w.n > 1 ? w.fds[w.n - 2] : dir_fd, last_is_name ? last : NULL,
                            walk_top(&w), open_flags);
}

int lookup_beneath(int dir_fd, const char *path, int open_flags, LookupFlags flags) {
        int r = -EAGAIN;

        /* Only what cannot run a driver's open() or a FIFO's wait before the check. */
        if (!(open_flags & (O_PATH | O_DIRECTORY)) ||
            (open_flags & (O_CREAT | O_NOFOLLOW)) || (open_flags & O_TMPFILE) == O_TMPFILE)
                return -EINVAL;
        if (strnlen(path, PATH_MAX) >= PATH_MAX)
                return -ENAMETOOLONG;
        for (int i = 0; i < LOOKUP_ATTEMPTS && r == -EAGAIN; i++)
                r = walk(dir_fd, path, open_flags, flags);
        return r;
}
