/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Running pkttyagent for one request (see polkit-agent.h). The agent is our child, shares
 * our terminal and process group (so ^C reaches it as well), and is registered with
 * polkitd for our process: polkitd sends it the authentication requests that usermountd
 * makes about our bus connection.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>

#include "userns.h"
#include "polkit-agent.h"

/* The notify fd as the agent sees it. */
#define AGENT_NOTIFY_FD 3

/* The agent's exit status when it could not be set up or executed. */
#define AGENT_EXEC_FAILED 127

extern char **environ;

PolkitAgentUse polkit_agent_use(void) {
        int in_userns = userns_detect();

        if (in_userns > 0)
                return POLKIT_AGENT_IN_USERNS;
        if (!isatty(STDIN_FILENO))
                return POLKIT_AGENT_NO_TERMINAL;
        /* Root where /proc cannot tell is root in some namespace: let polkit decide. */
        if (geteuid() == 0 && in_userns == 0)
                return POLKIT_AGENT_ROOT;
        return POLKIT_AGENT_USEFUL;
}

/* Gives fd the number target without FD_CLOEXEC, so that it survives execve(). */
static int move_fd_for_exec(int fd, int target) {
        if (fd == target)
                return fcntl(fd, F_SETFD, 0) < 0 ? -errno : 0;
        return dup2(fd, target) < 0 ? -errno : 0;
}

/*
 * The agent writes to the terminal; a redirected stdout or stderr is not one. Without a
 * controlling terminal they stay as they are: the agent can still do its work.
 */
static int agent_reopen_tty_outputs(void) {
        _cleanup_close_ int tty = -EBADF;

        if (isatty(STDOUT_FILENO) && isatty(STDERR_FILENO))
                return 0;
        tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (tty < 0)
                return 0;
        if (!isatty(STDOUT_FILENO) && dup2(tty, STDOUT_FILENO) < 0)
                return -errno;
        if (!isatty(STDERR_FILENO) && dup2(tty, STDERR_FILENO) < 0)
                return -errno;
        return 0;
}

/* In the child: prepares the process and executes the agent; reports errno on the pipe. */
static _noreturn_ void agent_exec(const char *path, pid_t parent, int notify_fd) {
        char pid_arg[32], fd_arg[16];
        int report_fd = notify_fd, r;
        sigset_t all;

        /* Killed with us however we end, even by SIGKILL. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(AGENT_EXEC_FAILED);
        /* A blocked SIGTERM would keep polkit_agent_stop() waiting forever. */
        sigfillset(&all);
        sigprocmask(SIG_UNBLOCK, &all, NULL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);

        r = move_fd_for_exec(notify_fd, AGENT_NOTIFY_FD);
        if (r >= 0) {
                report_fd = AGENT_NOTIFY_FD;
                r = agent_reopen_tty_outputs();
        }
        /* Nothing of ours but the terminal and the notify fd reaches the agent. */
        if (r >= 0 && close_range(AGENT_NOTIFY_FD + 1, ~0U, 0) < 0)
                r = -errno;
        if (r >= 0) {
                snprintf(pid_arg, sizeof(pid_arg), "%d", (int) parent);
                snprintf(fd_arg, sizeof(fd_arg), "%d", AGENT_NOTIFY_FD);
                char *const argv[] = { (char *) path, (char *) "--notify-fd", fd_arg,
                                       (char *) "--fallback", (char *) "--process", pid_arg,
                                       NULL };

                execve(path, argv, environ);
                r = -errno;
        }

        /* Tell the parent why; a short write is as good as none. */
        (void) !write(report_fd, &r, sizeof(r));
        _exit(AGENT_EXEC_FAILED);
}

static int64_t now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Waits for the agent's end of the pipe to close: returns 0 then, the agent's negative
 * errno if it sent one (it could not be executed), -ETIMEDOUT.
 */
static int agent_wait_notify(int fd, int timeout_ms) {
        int64_t deadline = now_ms() + timeout_ms;
        int error = 0;
        ssize_t n;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int64_t left = deadline - now_ms();
                int r;

                if (left <= 0)
                        return -ETIMEDOUT;
                r = poll(&p, 1, (int) left);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;

                n = read(fd, &error, sizeof(error));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return 0;
                if (n == sizeof(error))
                        return error < 0 ? error : -EIO;
                return -EIO;
        }
}

int polkit_agent_start(const char *path, int timeout_ms, pid_t *ret_pid) {
        _cleanup_close_ int notify_read = -EBADF, notify_write = -EBADF;
        pid_t parent = getpid(), pid;
        int pipe_fds[2], status, r;

        if (pipe2(pipe_fds, O_CLOEXEC) < 0)
                return -errno;
        notify_read = pipe_fds[0];
        /* Above the standard fds, so that moving it to fd 3 in the child cannot clobber them. */
        notify_write = fcntl(pipe_fds[1], F_DUPFD_CLOEXEC, AGENT_NOTIFY_FD + 1);
        safe_close(pipe_fds[1]);
        if (notify_write < 0)
                return -errno;

        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                agent_exec(path, parent, notify_write);

        notify_write = safe_close(notify_write);
        r = agent_wait_notify(notify_read, timeout_ms);
        /* Closing the fd also happens when the agent exits: it must still be running. */
        if (r >= 0 && waitpid(pid, &status, WNOHANG) == pid)
                return -EPROTO;
        if (r < 0) {
                polkit_agent_stop(pid);
                return r;
        }

        *ret_pid = pid;
        return 0;
}

pid_t polkit_agent_stop(pid_t pid) {
        if (pid <= 0)
                return 0;
        (void) kill(pid, SIGTERM);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return 0;
}
