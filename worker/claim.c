/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One writer per filesystem: the claims on image files (see claim.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "claim.h"
#include "loop.h"
#include "macro.h"

/* A claim found held is tried again for up to CLAIM_ATTEMPTS * CLAIM_RETRY_USEC (a
 * second): a sweeper holds a whole lock file for a moment, and the driver of a mount that
 * was just unmounted holds its claim until it has exited ("unmount, mount again" must not
 * find the image busy). */
#define CLAIM_ATTEMPTS 20
#define CLAIM_RETRY_USEC (50U * 1000U)
/* Who holds a claim, for the error: a driver serving a mount, or a worker making one. */
#define CLAIM_HOLDER "mounted, or being mounted"

/* How often a lock file is made again that a sweeper removed before it could be opened. */
#define CLAIM_MAKE_ATTEMPTS 100

/* Unheld lock files removed per claim, at most. */
#define CLAIM_SWEEP_MAX 16

static void lock_name(const struct stat *st, char *buf, size_t n) {
        snprintf(buf, n, "image-%u.%u-%" PRIu64, major(st->st_dev), minor(st->st_dev),
                 (uint64_t) st->st_ino);
}

static int dir_open(const char *dir, bool create) {
        _cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int sub;

        if (fd < 0)
                return -errno;
        if (create && mkdirat(fd, CLAIM_DIR, 0700) < 0 && errno != EEXIST)
                return -errno;
        sub = openat(fd, CLAIM_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return sub < 0 ? -errno : sub;
}

static struct flock range_lock(short type, uint64_t offset, uint64_t size) {
        /* An OFD lock's length 0 reaches to the end, as a claim's size 0 does. */
        return (struct flock) { .l_type = type, .l_whence = SEEK_SET,
                                .l_start = (off_t) offset, .l_len = (off_t) size };
}

/* Whether fd is still the file dir/name (a sweeper may have removed it since we opened
 * it: a lock on a removed file claims nothing). */
static bool still_named(int dir_fd, const char *name, int fd) {
        struct stat a, b;

        return fstat(fd, &a) >= 0 && fstatat(dir_fd, name, &b, AT_SYMLINK_NOFOLLOW) >= 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Removes lock files nobody holds: a whole-file lock is taken for a moment, the file
 * unlinked while it is held. */
static void sweep(int dir_fd, const char *keep) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        unsigned n = 0;
        int fd;

        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d)) && n < CLAIM_SWEEP_MAX) {
                _cleanup_close_ int lock = -EBADF;
                struct flock all = range_lock(F_WRLCK, 0, 0);

                if (strncmp(de->d_name, "image-", 6) != 0 || streq(de->d_name, keep))
                        continue;
                lock = openat(dir_fd, de->d_name,
                              O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                if (lock < 0 || fcntl(lock, F_OFD_SETLK, &all) < 0)
                        continue;
                if (still_named(dir_fd, de->d_name, lock))
                        (void) unlinkat(dir_fd, de->d_name, 0);
                n++;
        }
}

/* A regular lock file of an older version that nobody holds: removed (true), for a FIFO
 * to take its place. One somebody holds is honoured as it is (false). */
static bool replace_regular(int dir_fd, const char *name, int fd) {
        struct flock all = range_lock(F_WRLCK, 0, 0);
        struct stat st;

        if (fstat(fd, &st) < 0 || S_ISFIFO(st.st_mode))
                return false;
        if (fcntl(fd, F_OFD_SETLK, &all) < 0)
                return false;
        if (still_named(dir_fd, name, fd))
                (void) unlinkat(dir_fd, name, 0);
        return true;
}

static int busy(UmError *error, uint64_t offset, const char *holder) {
        return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                            "The %s is in use (%s); a second mount of a filesystem that one "
                            "of them writes would corrupt it.",
                            offset > 0 ? "partition" : "image", holder);
}

/* The loop devices that hold part of the range, by the same rule. */
static int check_loops(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                       UmError *error) {
        _cleanup_free_ char *loop = NULL;
        char what[128];
        int r;

        /* A mount released a moment ago lets go of its loop device asynchronously: give it
         * up to two seconds before calling the image busy. */
        for (int i = 0; i < 40; i++) {
                loop = mfree(loop);
                r = loop_find_backing_range(image_fd, offset, size, read_only, &loop);
                if (r <= 0)
                        break;
                usleep(50 * 1000);
        }
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not look at the loop devices: %s.", strerror(-r));
        if (r == 0)
                return 0;
        snprintf(what, sizeof(what), "attached to %s and mounted", strempty(loop));
        return busy(error, offset, what);
}

static int claim(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                 const char *dir, bool take, int *ret_fd, UmError *error) {
        _cleanup_close_ int dir_fd = -EBADF;
        struct stat st;
        char name[96];
        int r;

        if (fstat(image_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the image descriptor cannot be inspected");
        lock_name(&st, name, sizeof(name));
        dir_fd = dir_open(dir, take);
        if (dir_fd == -ENOENT && !take)
                return check_loops(image_fd, offset, size, read_only, error);
        if (dir_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -dir_fd,
                                    "Could not open the claims directory in %s: %s.", dir,
                                    strerror(-dir_fd));
        if (take)
                sweep(dir_fd, name);
        for (int attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                struct flock l = range_lock(read_only ? F_RDLCK : F_WRLCK, offset, size);

                /* A check makes nothing: a missing lock file is an unclaimed image. A
                 * FIFO is made, then opened: another image's claimer may sweep it away
                 * in between (it is not held yet), and then it is made again. */
                for (int k = 0;; k++) {
                        if (take && mkfifoat(dir_fd, name, 0600) < 0 && errno != EEXIST)
                                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                                    "Could not make the claim of the image: "
                                                    "%s.", strerror(errno));
                        fd = openat(dir_fd, name,
                                    O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
                        if (fd >= 0 || errno != ENOENT || !take || k >= CLAIM_MAKE_ATTEMPTS)
                                break;
                }
                if (fd < 0 && !take && errno == ENOENT)
                        return check_loops(image_fd, offset, size, read_only, error);
                if (fd < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                            "Could not open the claim of the image: %s.",
                                            strerror(errno));
                if (!take) {
                        /* Who would conflict, without taking anything. */
                        if (fcntl(fd, F_OFD_GETLK, &l) < 0)
                                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                                    "Could not look at the claim of the image: "
                                                    "%s.", strerror(errno));
                        if (l.l_type != F_UNLCK) {
                                usleep(CLAIM_RETRY_USEC);
                                continue;
                        }
                        return check_loops(image_fd, offset, size, read_only, error);
                }
                if (take && replace_regular(dir_fd, name, fd))
                        continue;
                if (fcntl(fd, F_OFD_SETLK, &l) < 0) {
                        if (errno != EAGAIN && errno != EACCES)
                                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                                    "Could not claim the image: %s.",
                                                    strerror(errno));
                        usleep(CLAIM_RETRY_USEC);
                        continue;
                }
                if (!still_named(dir_fd, name, fd))
                        continue;
                r = check_loops(image_fd, offset, size, read_only, error);
                if (r < 0)
                        return r;
                *ret_fd = TAKE_FD(fd);
                return 0;
        }
        return busy(error, offset, CLAIM_HOLDER);
}

int claim_image(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                const char *dir, int *ret_fd, UmError *error) {
        return claim(image_fd, offset, size, read_only, dir, true, ret_fd, error);
}

int claim_image_check(int image_fd, uint64_t offset, uint64_t size, bool read_only,
                      const char *dir, UmError *error) {
        int unused = -EBADF;

        return claim(image_fd, offset, size, read_only, dir, false, &unused, error);
}
