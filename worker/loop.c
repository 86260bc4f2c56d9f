/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loop devices for image files. A device is always taken fresh from /dev/loop-control and
 * configured in one LOOP_CONFIGURE call (backing file, autoclear, read-only), so there is
 * no window in which it is bound but not yet set up, and nothing outlives the last user.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

/* Attempts when another process takes the free device between GET_FREE and CONFIGURE. */
#define LOOP_ATTACH_ATTEMPTS 32

/* Takes the number of a free loop device and opens it; -EAGAIN if it vanished meanwhile. */
static int loop_open_free(int control_fd, bool read_only, int *ret_fd, int *ret_nr) {
        _cleanup_close_ int fd = -EBADF;
        char path[32];
        int nr;

        nr = ioctl(control_fd, LOOP_CTL_GET_FREE);
        if (nr < 0)
                return -errno;
        snprintf(path, sizeof(path), "/dev/loop%d", nr);
        fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT || errno == ENXIO ? -EAGAIN : -errno;
        *ret_fd = TAKE_FD(fd);
        *ret_nr = nr;
        return 0;
}

/* Binds backing_fd (from offset, size bytes or to its end) to the loop device in one call;
 * -EAGAIN if someone else bound it first. */
static int loop_configure(int loop_fd, int backing_fd, bool read_only, uint64_t offset,
                          uint64_t size) {
        struct loop_config config = {
                .fd = (uint32_t) backing_fd,
                .info.lo_flags = LO_FLAGS_AUTOCLEAR | (read_only ? LO_FLAGS_READ_ONLY : 0),
                .info.lo_offset = offset,
                .info.lo_sizelimit = size,
        };

        if (ioctl(loop_fd, LOOP_CONFIGURE, &config) < 0)
                return errno == EBUSY ? -EAGAIN : -errno;
        return 0;
}

static int check_backing_fd(int backing_fd, UmError *error) {
        struct stat st;

        if (fstat(backing_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the image descriptor cannot be inspected");
        if (!S_ISREG(st.st_mode))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "only a regular image file can back a loop device");
        return 0;
}

/* ---- marks for udev ------------------------------------------------------------------ */

/* The pending mark "loopN": the binding's uevent may come before its sequence number is
 * known to us. */
static int loop_mark(const char *dir, int nr) {
        _cleanup_close_ int fd = -EBADF;
        char path[PATH_MAX], name[32];
        int r;

        r = loop_mark_path(dir, "", path, sizeof(path));
        if (r < 0)
                return r;
        if (mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;
        snprintf(name, sizeof(name), "loop%d", nr);
        r = loop_mark_path(dir, name, path, sizeof(path));
        if (r < 0)
                return r;
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        return 0;
}

/* Bound: the mark becomes "loopN-SEQ", which matches this binding's events only. */
static void loop_mark_bound(const char *dir, int nr, int loop_fd) {
        char from[PATH_MAX], to[PATH_MAX], name[64];
        uint64_t seq = 0;

        snprintf(name, sizeof(name), "loop%d", nr);
        if (loop_mark_path(dir, name, from, sizeof(from)) < 0)
                return;
        if (ioctl(loop_fd, BLKGETDISKSEQ, &seq) < 0) {
                /* No sequence numbers (before Linux 5.15): the pending mark stays. */
                return;
        }
        snprintf(name, sizeof(name), "loop%d-%" PRIu64, nr, seq);
        if (loop_mark_path(dir, name, to, sizeof(to)) >= 0)
                (void) rename(from, to);
}

/* One attempt: a free device, opened and bound; -EAGAIN if another process won the race. */
static int loop_claim(int control_fd, int backing_fd, bool read_only, uint64_t offset,
                      uint64_t size, const char *mark_dir, int *ret_fd, int *ret_nr) {
        _cleanup_close_ int fd = -EBADF;
        int nr = -1, r;

        r = loop_open_free(control_fd, read_only, &fd, &nr);
        if (r < 0)
                return r;
        if (mark_dir) {
                r = loop_mark(mark_dir, nr);
                if (r < 0)
                        return r;
        }
        r = loop_configure(fd, backing_fd, read_only, offset, size);
        /* The pending mark stays on failure: another worker that was handed the same free
         * device may have marked it too (the same name) and bound it; removing "our" mark
         * would take its mark, and give a user's image the links of /dev/disk/by-*. A mark
         * of a device nobody of ours bound is swept once stale (loop_sweep_marks()). */
        if (r < 0)
                return r;
        if (mark_dir)
                loop_mark_bound(mark_dir, nr, fd);
        *ret_fd = TAKE_FD(fd);
        *ret_nr = nr;
        return 0;
}

int loop_attach(int backing_fd, bool read_only, int *ret_fd, char **ret_path, UmError *error) {
        return loop_attach_marked(backing_fd, read_only, NULL, ret_fd, ret_path, error);
}

int loop_attach_marked(int backing_fd, bool read_only, const char *mark_dir, int *ret_fd,
                       char **ret_path, UmError *error) {
        return loop_attach_range(backing_fd, read_only, 0, 0, mark_dir, ret_fd, ret_path, error);
}

int loop_attach_range(int backing_fd, bool read_only, uint64_t offset, uint64_t size,
                      const char *mark_dir, int *ret_fd, char **ret_path, UmError *error) {
        _cleanup_close_ int control_fd = -EBADF, loop_fd = -EBADF;
        char path[32];
        int r, nr = -1;
        char *p;

        r = check_backing_fd(backing_fd, error);
        if (r < 0)
                return r;
        control_fd = open("/dev/loop-control", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (control_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "loop devices are not available (/dev/loop-control)");

        for (int attempt = 0; attempt < LOOP_ATTACH_ATTEMPTS; attempt++) {
                r = loop_claim(control_fd, backing_fd, read_only, offset, size, mark_dir,
                               &loop_fd, &nr);
                if (r != -EAGAIN)
                        break;
        }
        if (r == -EAGAIN)
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                                    "no free loop device could be claimed after %d attempts",
                                    LOOP_ATTACH_ATTEMPTS);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "the image could not be attached to a loop device: %s",
                                    strerror(-r));

        /* From here on, closing loop_fd on failure detaches the device (autoclear). */
        snprintf(path, sizeof(path), "/dev/loop%d", nr);
        p = strdup(path);
        if (!p)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        *ret_fd = TAKE_FD(loop_fd);
        *ret_path = p;
        return 0;
}

int loop_find_backing(int backing_fd, char **ret_path) {
        return loop_find_backing_range(backing_fd, 0, 0, false, ret_path);
}

/* The end of [start, start + size); size 0 (to the end of the file) and an end past 2^64
 * are past every start. */
static uint64_t range_end(uint64_t start, uint64_t size) {
        return size == 0 || start > UINT64_MAX - size ? UINT64_MAX : start + size;
}

static bool ranges_overlap(uint64_t a, uint64_t as, uint64_t b, uint64_t bs) {
        return a < range_end(b, bs) && b < range_end(a, as);
}

int loop_find_backing_range(int backing_fd, uint64_t offset, uint64_t size, bool read_only,
                            char **ret_path) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        struct stat st;

        if (fstat(backing_fd, &st) < 0)
                return -errno;
        d = opendir("/sys/block");
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                struct loop_info64 info = {};
                _cleanup_close_ int fd = -EBADF;
                char path[300];

                if (strncmp(de->d_name, "loop", 4) != 0)
                        continue;
                snprintf(path, sizeof(path), "/dev/%s", de->d_name);
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
                /* Unbound devices answer ENXIO. */
                if (fd < 0 || ioctl(fd, LOOP_GET_STATUS64, &info) < 0)
                        continue;
                /* A read-only mount beside another read-only one is fine (claim.h). */
                if (read_only && (info.lo_flags & LO_FLAGS_READ_ONLY))
                        continue;
                if (info.lo_device == st.st_dev && info.lo_inode == st.st_ino &&
                    ranges_overlap(info.lo_offset, info.lo_sizelimit, offset, size)) {
                        _cleanup_close_ int excl = -EBADF;

                        /* Only a device something holds counts (a mounted filesystem claims
                         * it exclusively); an autoclear device whose last user just went is
                         * merely waiting for the kernel to tear it down. */
                        excl = open(path, O_RDONLY | O_EXCL | O_CLOEXEC | O_NONBLOCK);
                        if (excl >= 0 || errno != EBUSY)
                                continue;
                        if (ret_path)
                                *ret_path = strdup(path);
                        return 1;
                }
        }
        return 0;
}
