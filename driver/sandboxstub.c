/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sandbox made ahead of its program (see sandboxstub.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fd-util.h"
#include "macro.h"
#include "sandboxstub.h"

/* An order as sent: SandboxExec without its pointers; the strings are path, argv[0..argc),
 * envp[0..envc), exec_step, each NUL-terminated, one after the other. The fds come with
 * it: out_fd, err_fd, then keep[]. */
typedef struct StubOrder {
        SandboxLimits limits;
        uint32_t uid;
        uint32_t gid;
        bool driver;
        uint32_t argc;
        uint32_t envc;
        char strings[SANDBOX_STUB_STRINGS_MAX];
} StubOrder;

#define STUB_ARGS_MAX 32

/* Appends s to o->strings at *used; false when it does not fit. */
static bool order_add(StubOrder *o, size_t *used, const char *s) {
        size_t n = strlen(s) + 1;

        if (n > sizeof(o->strings) - *used)
                return false;
        memcpy(o->strings + *used, s, n);
        *used += n;
        return true;
}

/* The next string of the order at *at, or NULL past its end. */
static char *order_next(StubOrder *o, size_t len, size_t *at) {
        char *s = o->strings + *at;
        char *nul = *at < len ? memchr(s, 0, len - *at) : NULL;

        if (!nul)
                return NULL;
        *at += (size_t) (nul - s) + 1;
        return s;
}

/* In the stub, once setup() returned r: waits for the order, then runs it. No allocations. */
_noreturn_ static void stub_wait(int order_fd, int r, const char *step) {
        StubOrder o;
        char *argv[STUB_ARGS_MAX + 1], *envp[STUB_ARGS_MAX + 1], *path, *exec_step;
        int fds[FDPASS_MAX];
        size_t n_fds = 0, at = 0, len;
        ssize_t n;

        do
                n = fdpass_recv(order_fd, &o, sizeof(o), fds, ELEMENTSOF(fds), &n_fds, 0);
        while (n == -EINTR);
        /* End of file: nobody will give an order. A malformed order (never from our
         * maker): nothing to report it on that can be trusted. */
        if (n <= 0 || (size_t) n < offsetof(StubOrder, strings) || n_fds < 2 ||
            o.argc > STUB_ARGS_MAX || o.envc > STUB_ARGS_MAX)
                _exit(n == 0 ? 0 : 127);
        (void) close(order_fd);
        if (r < 0)
                sandbox_fail(fds[1], r, step);
        len = (size_t) n - offsetof(StubOrder, strings);
        path = order_next(&o, len, &at);
        for (uint32_t i = 0; i < o.argc; i++)
                argv[i] = order_next(&o, len, &at);
        argv[o.argc] = NULL;
        for (uint32_t i = 0; i < o.envc; i++)
                envp[i] = order_next(&o, len, &at);
        envp[o.envc] = NULL;
        exec_step = order_next(&o, len, &at);
        if (!exec_step) /* the last one: when it is there, every one before it is */
                sandbox_fail(fds[1], -EBADMSG, "the order to start");
        sandbox_exec(&(const SandboxExec) {
                .out_fd = fds[0],
                .err_fd = fds[1],
                .keep = fds + 2,
                .n_keep = n_fds - 2,
                .limits = o.limits,
                .uid = (uid_t) o.uid,
                .gid = (gid_t) o.gid,
                .driver = o.driver,
                .path = path,
                .argv = argv,
                .envp = envp,
                .exec_step = exec_step,
        });
}

int sandbox_stub_start(SandboxSetup setup, const void *userdata, SandboxStub *ret) {
        int sv[2], pidfd = -EBADF;
        const char *step = "setup";
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid = sandbox_clone(&pidfd);
        if (pid < 0) {
                int r = -errno;

                safe_close(sv[0]);
                safe_close(sv[1]);
                return r;
        }
        if (pid == 0) {
                /* Every fd of the maker's goes first, its end of the socket above all: the
                 * maker's death must end the wait, and the maker's own socket (a worker's
                 * to the daemon) must end with the maker. */
                int keep = sv[1];

                close_all_fds_except(&keep, 1);
                int r = setup(userdata, &step);
                stub_wait(sv[1], r, step);
        }
        safe_close(sv[1]);
        *ret = (SandboxStub) { .pid = pid, .pidfd = pidfd, .order_fd = sv[0] };
        return 0;
}

bool sandbox_stub_alive(const SandboxStub *s) {
        struct pollfd p = { .fd = s->pidfd, .events = POLLIN };

        return s->pidfd >= 0 && s->order_fd >= 0 && poll(&p, 1, 0) == 0;
}

int sandbox_stub_exec(SandboxStub *s, const SandboxExec *x) {
        StubOrder o = {
                .limits = x->limits,
                .uid = (uint32_t) x->uid,
                .gid = (uint32_t) x->gid,
                .driver = x->driver,
        };
        int fds[FDPASS_MAX] = { x->out_fd, x->err_fd };
        size_t used = 0;
        int r;

        if (x->n_keep > ELEMENTSOF(fds) - 2)
                return -E2BIG;
        memcpy(fds + 2, x->keep, x->n_keep * sizeof(int));
        if (!order_add(&o, &used, x->path))
                return -E2BIG;
        for (; x->argv[o.argc]; o.argc++)
                if (o.argc >= STUB_ARGS_MAX || !order_add(&o, &used, x->argv[o.argc]))
                        return -E2BIG;
        for (; x->envp[o.envc]; o.envc++)
                if (o.envc >= STUB_ARGS_MAX || !order_add(&o, &used, x->envp[o.envc]))
                        return -E2BIG;
        if (!order_add(&o, &used, x->exec_step))
                return -E2BIG;
        r = fdpass_send(s->order_fd, &(const struct iovec) {
                                .iov_base = &o,
                                .iov_len = offsetof(StubOrder, strings) + used },
                        1, fds, 2 + x->n_keep);
        if (r < 0)
                return r;
        s->order_fd = safe_close(s->order_fd);
        return 0;
}

void sandbox_stub_stop(SandboxStub *s) {
        siginfo_t status;

        s->order_fd = safe_close(s->order_fd);
        if (s->pidfd >= 0)
                (void) sandbox_reap(s->pidfd, true, &status);
        s->pidfd = safe_close(s->pidfd);
        *s = SANDBOX_STUB_NULL;
}
