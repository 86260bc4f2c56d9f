/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * SCM_RIGHTS in one place (fd-util.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"

int fdpass_send(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds) {
        union {
                struct cmsghdr cmsghdr;
                uint8_t buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
        } control = {};
        struct msghdr mh = {
                .msg_iov = (struct iovec *) iov,
                .msg_iovlen = n_iov,
        };
        size_t total = 0;
        ssize_t n;

        if (n_fds > FDPASS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n_iov; i++)
                total += iov[i].iov_len;
        if (n_fds > 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
        }
        do
                n = sendmsg(sock, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return (size_t) n == total ? 0 : -EMSGSIZE;
}

ssize_t fdpass_recv(int sock, void *buf, size_t size, int *fds, size_t max_fds,
                    size_t *ret_n_fds, int flags) {
        union {
                struct cmsghdr cmsghdr;
                uint8_t buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
        } control;
        struct iovec iov = { .iov_base = buf, .iov_len = size };
        struct msghdr mh = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = &control,
                .msg_controllen = sizeof(control),
        };
        size_t n_fds = 0;
        bool overflow = false;
        ssize_t n;

        *ret_n_fds = 0;
        do
                n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
                size_t k;

                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < k; i++) {
                        int fd;

                        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                        if (n_fds < max_fds)
                                fds[n_fds++] = fd;
                        else {
                                safe_close(fd);
                                overflow = true;
                        }
                }
        }
        if (overflow || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                close_many(fds, n_fds);
                return -EMSGSIZE;
        }
        *ret_n_fds = n_fds;
        return n;
}

void close_many(int *fds, size_t n) {
        for (size_t i = 0; i < n; i++)
                fds[i] = safe_close(fds[i]);
}

static int cmp_int(const void *a, const void *b) {
        return *(const int *) a - *(const int *) b;
}

void close_all_fds_except(int *keep, size_t n_keep) {
        unsigned next = 3;

        qsort(keep, n_keep, sizeof(int), cmp_int);
        for (size_t i = 0; i < n_keep; i++) {
                if (keep[i] < (int) next)
                        continue;
                if ((unsigned) keep[i] > next)
                        (void) close_range(next, (unsigned) keep[i] - 1, 0);
                next = (unsigned) keep[i] + 1;
        }
        (void) close_range(next, ~0U, 0);
}

/* ---- atomic files ---------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Writes text to a new temporary file next to path and fsyncs it; *ret_tmp is its name. */
static int write_temporary(const char *path, const char *text, char **ret_tmp) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
        if (fd < 0)
                return -errno;
        r = write_all(fd, text, strlen(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret_tmp = TAKE_PTR(tmp);
        return 0;
}

static int fsync_directory_of(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -EBADF;

        if (!copy)
                return -ENOMEM;
        fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fsync(fd) < 0)
                return -errno;
        return 0;
}

int file_write_atomic(const char *path, const char *text) {
        _cleanup_free_ char *tmp = NULL;
        int r;

        r = write_temporary(path, text, &tmp);
        if (r < 0)
                return r;
        if (rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }
        return fsync_directory_of(path);
}
