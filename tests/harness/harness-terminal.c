/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pseudo-terminals for tests that play the person at a terminal: a program runs with the
 * slave as its controlling terminal, the test reads what it shows from the master and
 * types into it (see harness.h, "Terminals").
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"

int harness_terminal_open(HarnessTerminal *t, uid_t owner, gid_t group) {
        *t = (HarnessTerminal) { .master = -EBADF, .slave_fd = -EBADF };
        t->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (t->master < 0)
                return -errno;
        if (grantpt(t->master) < 0 || unlockpt(t->master) < 0 || !ptsname(t->master))
                goto fail;
        t->slave = g_strdup(ptsname(t->master));
        if (chown(t->slave, owner, group) < 0 || fcntl(t->master, F_SETFL, O_NONBLOCK) < 0)
                goto fail;
        t->slave_fd = open(t->slave, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (t->slave_fd < 0)
                goto fail;
        t->output = g_string_new(NULL);
        return 0;
fail: {
        int r = -errno;

        harness_terminal_close(t);
        return r;
}
}

void harness_terminal_close(HarnessTerminal *t) {
        t->master = safe_close(t->master);
        t->slave_fd = safe_close(t->slave_fd);
        g_clear_pointer(&t->slave, g_free);
        if (t->output)
                g_string_free(t->output, TRUE);
        t->output = NULL;
}

bool harness_terminal_read(HarnessTerminal *t, int timeout_ms) {
        struct pollfd p = { .fd = t->master, .events = POLLIN };
        char buf[4096];
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
                return true;
        n = read(t->master, buf, sizeof(buf));
        if (n < 0)
                return errno == EAGAIN || errno == EINTR;
        if (n == 0)
                return false;
        g_string_append_len(t->output, buf, n);
        return true;
}

bool harness_child_exited(pid_t pid) {
        siginfo_t si = {};

        return waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

bool harness_terminal_wait_for(HarnessTerminal *t, pid_t pid, size_t from, const char *text,
                               int timeout_ms) {
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;

        while (g_get_monotonic_time() < deadline) {
                if (t->output->len > from && strstr(t->output->str + from, text))
                        return true;
                if (!harness_terminal_read(t, 100) || (pid > 0 && harness_child_exited(pid)))
                        break;
        }
        harness_terminal_read(t, 10);
        return t->output->len > from && strstr(t->output->str + from, text);
}

int harness_terminal_type(HarnessTerminal *t, const char *text) {
        size_t len = strlen(text);

        for (size_t done = 0; done < len;) {
                ssize_t n = write(t->master, text + done, len - done);

                if (n < 0 && errno == EAGAIN) {
                        struct pollfd p = { .fd = t->master, .events = POLLOUT };

                        (void) poll(&p, 1, 100);
                        /* A full input queue drains only while we read what it echoes. */
                        harness_terminal_read(t, 0);
                        continue;
                }
                if (n < 0)
                        return -errno;
                done += (size_t) n;
        }
        return 0;
}

int harness_terminal_type_password(HarnessTerminal *t, const char *password, int timeout_ms) {
        g_autofree char *s = g_strconcat(password, "\n", NULL);
        gint64 deadline = g_get_monotonic_time() + (gint64) timeout_ms * 1000;
        struct termios ts;

        for (;;) {
                if (tcgetattr(t->master, &ts) < 0)
                        return -errno;
                if (!(ts.c_lflag & ECHO))
                        break;
                if (g_get_monotonic_time() >= deadline)
                        return -ETIMEDOUT;
                harness_terminal_read(t, 10);
        }
        return harness_terminal_type(t, s);
}

unsigned harness_count_substrings(const char *haystack, const char *needle) {
        unsigned n = 0;

        for (const char *p = haystack; *needle && (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}
