/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stage namespace (stagens.h): made once, by a short-lived child.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "stagens.h"

/* In the child of stagens_make(): 0 or -errno. */
static int stage_setup(const char *dir) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("usermount-stage", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0700,size=64k,nr_inodes=16") < 0 ||
            chdir(dir) < 0 || mkdir(STAGENS_DIR, 0700) < 0 ||
            syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
            chdir("/") < 0)
                return -errno;
        return 0;
}

int stagens_make(const char *dir, int *ret_fd) {
        char path[64];
        int p[2], r = 0, fd;
        ssize_t n;
        pid_t pid;

        /* A socketpair: the child sees the parent's end close however the parent goes on. */
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
                char c;

                safe_close(p[0]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                /* Nothing of the daemon's goes into the namespace's first moments. */
                close_all_fds_except(&p[1], 1);
                r = stage_setup(dir);
                (void) !write(p[1], &r, sizeof(r));
                while (read(p[1], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        safe_close(p[1]);
        do
                n = read(p[0], &r, sizeof(r));
        while (n < 0 && errno == EINTR);
        if (n != sizeof(r))
                r = -EIO;
        fd = -EBADF;
        if (r >= 0) {
                snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = -errno;
        }
        safe_close(p[0]);
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        if (r < 0)
                return r;
        *ret_fd = fd;
        return 0;
}
