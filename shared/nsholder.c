/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The namespace-holding child (nsholder.h).
 */
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "nsholder.h"

void nsholder_stop(NsHolder *h) {
        h->fd = safe_close(h->fd);
        if (h->pid > 0) {
                (void) kill(h->pid, SIGKILL);
                while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                h->pid = 0;
        }
}

int nsholder_start(int (*setup)(void *userdata), void *userdata, int keep_fd, NsHolder *ret) {
        int p[2], r = 0;
        ssize_t n;
        pid_t pid;

        /* A socketpair, so the child sees the parent's end close (EOF) however it exits. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) < 0)
                return -errno;
        pid = fork();
        if (pid < 0) {
                r = -errno;
                safe_close(p[0]);
                safe_close(p[1]);
                return r;
        }
        if (pid == 0) {
                int keep[2] = { p[1], keep_fd };
                char c;

                /* Before anything else: nobody may trace or read this process. */
                if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
                    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                        _exit(1);
                close_all_fds_except(keep, 2);
                r = setup(userdata);
                (void) !write(p[1], &r, sizeof(r));
                while (read(p[1], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        safe_close(p[1]);
        *ret = (NsHolder) { .pid = pid, .fd = p[0] };
        do
                n = read(ret->fd, &r, sizeof(r));
        while (n < 0 && errno == EINTR);
        if (n != sizeof(r))
                r = -ECHILD;
        if (r < 0)
                nsholder_stop(ret);
        return r;
}
