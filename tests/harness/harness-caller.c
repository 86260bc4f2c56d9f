/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unprivileged callers: forked children of the test process that drop to a test user
 * (optionally becoming root in a new user namespace), run a test function and talk back
 * over a pair of pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>

#include "macro.h"

#include "harness-private.h"

#define CALLER_SETUP_FAILED 125

struct HarnessCaller {
        pid_t pid;
        int pidfd;
        int report_fd;  /* read end of the caller's report pipe */
        int release_fd; /* write end of the caller's release pipe */
        GString *pending;
        bool eof;
        bool reaped;
        int wait_status;
};

/* In a caller: its ends of the pipes. */
static int caller_report_fd = -EBADF;
static int caller_release_fd = -EBADF;

static _noreturn_ void caller_fail(const char *what) {
        fprintf(stderr, "harness: caller setup failed: %s: %m\n", what);
        fflush(stderr);
        _exit(CALLER_SETUP_FAILED);
}

static int write_proc_file(const char *path, const char *contents) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, contents, strlen(contents));
        safe_close(fd);
        return n == (ssize_t) strlen(contents) ? 0 : -errno;
}

static void caller_enter_userns(uid_t uid, gid_t gid) {
        char map[64];

        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                caller_fail("unshare(CLONE_NEWUSER|CLONE_NEWNS)");
        if (write_proc_file("/proc/self/setgroups", "deny") < 0)
                caller_fail("/proc/self/setgroups");
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) uid);
        if (write_proc_file("/proc/self/uid_map", map) < 0)
                caller_fail("/proc/self/uid_map");
        snprintf(map, sizeof(map), "0 %u 1\n", (unsigned) gid);
        if (write_proc_file("/proc/self/gid_map", map) < 0)
                caller_fail("/proc/self/gid_map");
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                caller_fail("making / private");
}

static _noreturn_ void caller_main(pid_t parent, int report_fd, int release_fd, uid_t uid,
        gid_t gid, const gid_t *groups, int n_groups, const char *user, HarnessRunFlags flags,
        HarnessCallerFunc func, void *userdata) {
        uid_t ru, eu, su;
        gid_t rg, eg, sg;
        int r;

        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(CALLER_SETUP_FAILED);
        if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
                caller_fail("dup2");

        /* Inherit no fd of the test process (its bus connection, loop devices, images
         * opened as root): what a caller can use, it must open itself. */
        report_fd = fcntl(report_fd, F_DUPFD_CLOEXEC, 10);
        release_fd = fcntl(release_fd, F_DUPFD_CLOEXEC, 10);
        if (report_fd < 0 || release_fd < 0 || dup3(report_fd, 3, O_CLOEXEC) < 0 ||
                dup3(release_fd, 4, O_CLOEXEC) < 0)
                caller_fail("moving the pipes to fds 3 and 4");
        if (close_range(5, ~0U, 0) < 0)
                caller_fail("close_range");
        caller_report_fd = 3;
        caller_release_fd = 4;

        if (setgroups((size_t) n_groups, groups) < 0)
                caller_fail("setgroups");
        if (setresgid(gid, gid, gid) < 0)
                caller_fail("setresgid");
        if (setresuid(uid, uid, uid) < 0)
                caller_fail("setresuid");
        if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != uid ||
                eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
                caller_fail("verifying ids");
        /* Changing uids made the process non-dumpable, which leaves /proc/self owned by
         * root: the caller could not write its own uid_map. */
        if (prctl(PR_SET_DUMPABLE, 1) < 0)
                caller_fail("PR_SET_DUMPABLE");
        if (flags & HARNESS_NEW_USERNS)
                caller_enter_userns(uid, gid);

        if (chdir("/") < 0)
                caller_fail("chdir");
        g_setenv("HOME", "/", TRUE);
        if (user) {
                g_setenv("USER", user, TRUE);
                g_setenv("LOGNAME", user, TRUE);
        }

        r = func(userdata);
        fflush(stdout);
        fflush(stderr);
        _exit(r & 0xff);
}

int harness_caller_spawn(uid_t uid, gid_t gid, HarnessRunFlags flags, HarnessCallerFunc func,
        void *userdata, HarnessCaller **ret_caller) {
        g_autofree char *user = NULL;
        gid_t groups[256];
        int n_groups = 0, report[2], release[2];
        struct passwd *pw;
        pid_t parent = getpid(), pid;
        HarnessCaller *c;

        if (!func || !ret_caller)
                return -EINVAL;
        /* Resolve names before forking: NSS is not something to run in a forked child. */
        pw = getpwuid(uid);
        if (pw) {
                user = g_strdup(pw->pw_name);
                n_groups = (int) ELEMENTSOF(groups);
                if (!(flags & HARNESS_NO_SUPPLEMENTARY_GROUPS) &&
                        getgrouplist(pw->pw_name, gid, groups, &n_groups) < 0)
                        return -E2BIG;
                if (flags & HARNESS_NO_SUPPLEMENTARY_GROUPS)
                        n_groups = 0;
        }

        if (pipe2(report, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(release, O_CLOEXEC) < 0) {
                int r = -errno;

                close(report[0]);
                close(report[1]);
                return r;
        }

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                close(report[0]);
                close(report[1]);
                close(release[0]);
                close(release[1]);
                return r;
        }
        if (pid == 0)
                caller_main(parent, report[1], release[0], uid, gid, groups, n_groups, user, flags,
                        func, userdata);

        close(report[1]);
        close(release[0]);
        c = g_new0(HarnessCaller, 1);
        c->pid = pid;
        c->report_fd = report[0];
        c->release_fd = release[1];
        c->pending = g_string_new(NULL);
        c->pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (c->pidfd < 0) {
                int r = -errno;

                harness_caller_free(c);
                return r;
        }
        *ret_caller = c;
        return 0;
}

pid_t harness_caller_pid(HarnessCaller *caller) {
        return caller->pid;
}

/* Reads what is available from the report pipe into pending (blocking at most once). */
static int caller_read_some(HarnessCaller *c) {
        char buf[4096];
        ssize_t n;

        n = read(c->report_fd, buf, sizeof(buf));
        if (n < 0)
                return errno == EINTR || errno == EAGAIN ? 0 : -errno;
        if (n == 0)
                c->eof = true;
        else
                g_string_append_len(c->pending, buf, n);
        return 0;
}

int harness_caller_read_line(HarnessCaller *c, int timeout_ms, char **ret_line) {
        int64_t deadline = harness_now_ms() + timeout_ms;

        for (;;) {
                char *nl = memchr(c->pending->str, '\n', c->pending->len);
                struct pollfd p = { .fd = c->report_fd, .events = POLLIN };
                int64_t left;
                int r;

                if (nl) {
                        size_t len = (size_t) (nl - c->pending->str);

                        *ret_line = g_strndup(c->pending->str, len);
                        g_string_erase(c->pending, 0, (gssize) len + 1);
                        return 0;
                }
                if (c->eof)
                        return -EPIPE;
                left = deadline - harness_now_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) left);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (r > 0 && (r = caller_read_some(c)) < 0)
                        return r;
        }
}

int harness_caller_release(HarnessCaller *c) {
        ssize_t n = write(c->release_fd, "1", 1);

        return n == 1 ? 0 : -errno;
}

static int caller_exit_code(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return 255;
}

int harness_caller_wait(HarnessCaller *c, int timeout_ms, char **ret_output) {
        int64_t deadline = harness_now_ms() + timeout_ms;
        bool timed_out = false;

        while (!c->reaped) {
                struct pollfd p[2] = { { .fd = c->pidfd, .events = POLLIN },
                        { .fd = c->report_fd, .events = POLLIN } };
                int64_t left = deadline - harness_now_ms();
                int r;

                if (left <= 0) {
                        harness_log("caller %d did not exit within %d ms, killing it",
                                (int) c->pid, timeout_ms);
                        kill(c->pid, SIGKILL);
                        timed_out = true;
                        left = -1;
                }
                /* Keep draining the report pipe so a chatty caller cannot block on it. */
                r = poll(p, c->eof ? 1 : 2, (int) left);
                if (r < 0 && errno != EINTR)
                        return -errno;
                if (!c->eof && (p[1].revents & (POLLIN | POLLHUP)) &&
                        (r = caller_read_some(c)) < 0)
                        return r;
                if (p[0].revents & POLLIN) {
                        while (waitpid(c->pid, &c->wait_status, 0) < 0)
                                if (errno != EINTR)
                                        return -errno;
                        c->reaped = true;
                }
        }

        /* Whatever is still in the pipe (a process the caller forked may hold it open:
         * do not wait for EOF). */
        if (fcntl(c->report_fd, F_SETFL, O_NONBLOCK) == 0)
                while (!c->eof && caller_read_some(c) == 0 && !c->eof) {
                        struct pollfd p = { .fd = c->report_fd, .events = POLLIN };

                        if (poll(&p, 1, 0) <= 0)
                                break;
                }
        if (ret_output)
                *ret_output = g_strndup(c->pending->str, c->pending->len);
        return timed_out ? -ETIMEDOUT : caller_exit_code(c->wait_status);
}

HarnessCaller *harness_caller_free(HarnessCaller *c) {
        if (!c)
                return NULL;
        if (!c->reaped && c->pid > 0) {
                kill(c->pid, SIGKILL);
                while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        safe_close(c->pidfd);
        safe_close(c->report_fd);
        safe_close(c->release_fd);
        g_string_free(c->pending, TRUE);
        g_free(c);
        return NULL;
}

int harness_run_as(uid_t uid, gid_t gid, HarnessRunFlags flags, HarnessCallerFunc func,
        void *userdata, char **ret_output) {
        g_autoptr(HarnessCaller) c = NULL;
        int r;

        r = harness_caller_spawn(uid, gid, flags, func, userdata, &c);
        if (r < 0)
                return r;
        return harness_caller_wait(c, HARNESS_CALLER_TIMEOUT_MS, ret_output);
}

void harness_report(const char *format, ...) {
        g_autofree char *line = NULL;
        va_list ap;
        size_t len, done = 0;

        va_start(ap, format);
        line = g_strdup_vprintf(format, ap);
        va_end(ap);
        g_strdelimit(line, "\n", ' ');
        if (caller_report_fd < 0) {
                fprintf(stderr, "harness: report outside a caller: %s\n", line);
                return;
        }
        len = strlen(line);
        line[len] = '\n'; /* the NUL goes; write exactly len + 1 bytes */
        while (done < len + 1) {
                ssize_t n = write(caller_report_fd, line + done, len + 1 - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                done += (size_t) n;
        }
        line[len] = 0;
}

int harness_await_release(void) {
        char c;
        ssize_t n;

        if (caller_release_fd < 0)
                return -EBADF;
        do
                n = read(caller_release_fd, &c, 1);
        while (n < 0 && errno == EINTR);
        return n == 1 ? 0 : -EPIPE;
}
