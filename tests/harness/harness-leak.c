/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * "Nothing left behind": counting the loop devices backed by files on the harness's
 * private /run, the mounts below the directories the daemon works in, and a process's
 * open fds; and the last-resort cleanup of loop devices and mounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <glib.h>

#include "macro.h"

#include "harness-private.h"

/* Calls fn for every bound loop device whose backing file is on the private /run. The
 * backing file's device identifies it, whatever path the file has in whichever mount
 * namespace attached it. Returns the number of such devices. */
static int for_each_harness_loop(void (*fn)(const char *device, dev_t rdev, int fd)) {
        g_autoptr(GDir) dir = g_dir_open("/sys/block", 0, NULL);
        const char *name;
        int n = 0;

        if (!dir)
                return -errno;
        while ((name = g_dir_read_name(dir))) {
                g_autofree char *bound = NULL, *device = NULL;
                struct loop_info64 info = {};
                _cleanup_close_ int fd = -EBADF;
                struct stat st;

                if (!g_str_has_prefix(name, "loop"))
                        continue;
                bound = g_strdup_printf("/sys/block/%s/loop/backing_file", name);
                if (access(bound, F_OK) < 0)
                        continue;
                device = g_strdup_printf("/dev/%s", name);
                fd = open(device, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || fstat(fd, &st) < 0 || ioctl(fd, LOOP_GET_STATUS64, &info) < 0)
                        continue;
                if ((dev_t) info.lo_device != harness.run_dev)
                        continue;
                n++;
                if (fn)
                        fn(device, st.st_rdev, fd);
        }
        return n;
}

int harness_count_loop_devices(void) {
        return for_each_harness_loop(NULL);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape_mountinfo(const char *s) {
        GString *out = g_string_new(NULL);

        while (*s) {
                if (s[0] == '\\' && g_ascii_isdigit(s[1]) && g_ascii_isdigit(s[2]) &&
                        g_ascii_isdigit(s[3])) {
                        g_string_append_c(out, (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 +
                                                       (s[3] - '0')));
                        s += 4;
                } else
                        g_string_append_c(out, *s++);
        }
        return g_string_free(out, FALSE);
}

typedef struct MountEntry {
        char *mountpoint;
        char *source;
        dev_t dev;
} MountEntry;

static void mount_entry_free(MountEntry *m) {
        g_free(m->mountpoint);
        g_free(m->source);
        g_free(m);
}

/* The mounts of pid's (0: own) mount namespace, in mountinfo order (parents first). */
static GPtrArray *read_mounts(pid_t pid) {
        g_autofree char *path = pid > 0 ? g_strdup_printf("/proc/%d/mountinfo", (int) pid)
                                        : g_strdup("/proc/self/mountinfo");
        g_autofree char *contents = NULL;
        g_auto(GStrv) lines = NULL;
        GPtrArray *mounts;

        if (!g_file_get_contents(path, &contents, NULL, NULL))
                return NULL;
        mounts = g_ptr_array_new_with_free_func((GDestroyNotify) mount_entry_free);
        lines = g_strsplit(contents, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                char where[4096], source[4096] = "";
                const char *separator = strstr(lines[i], " - ");
                unsigned major, minor;
                MountEntry *m;

                if (sscanf(lines[i], "%*d %*d %u:%u %*s %4095s", &major, &minor, where) != 3)
                        continue;
                /* "... - fstype source options": btrfs reports an anonymous device, so
                 * the source names the block device. */
                if (separator)
                        sscanf(separator + 3, "%*s %4095s", source);
                m = g_new0(MountEntry, 1);
                m->mountpoint = unescape_mountinfo(where);
                m->source = unescape_mountinfo(source);
                m->dev = makedev(major, minor);
                g_ptr_array_add(mounts, m);
        }
        return mounts;
}

static bool path_below(const char *path, const char *dir, bool or_equal) {
        size_t n = strlen(dir);

        if (strncmp(path, dir, n) != 0)
                return false;
        return path[n] == '/' || (or_equal && path[n] == 0);
}

int harness_count_mounts(pid_t pid) {
        g_autoptr(GPtrArray) mounts = read_mounts(pid);
        int n = 0;

        if (!mounts)
                return -ESRCH;
        for (guint i = 0; i < mounts->len; i++) {
                const char *where = ((MountEntry *) mounts->pdata[i])->mountpoint;

                if (path_below(where, harness.tmpdir, false) ||
                        path_below(where, "/run/media", true) ||
                        path_below(where, "/run/usermount", true))
                        n++;
        }
        return n;
}

GArray *harness_children(pid_t parent, const char *only_name, const char *except_name) {
        GArray *pids = g_array_new(false, false, sizeof(pid_t));
        g_autoptr(GDir) proc = g_dir_open("/proc", 0, NULL);
        const char *d;

        g_assert_nonnull(proc);
        while ((d = g_dir_read_name(proc))) {
                g_autofree char *path = g_strdup_printf("/proc/%s/stat", d);
                g_autofree char *stat = NULL;
                char *open_paren, *close_paren;
                int ppid;

                if (!g_ascii_isdigit(d[0]) || !g_file_get_contents(path, &stat, NULL, NULL))
                        continue;
                open_paren = strchr(stat, '(');
                close_paren = strrchr(stat, ')');
                if (!open_paren || !close_paren || close_paren < open_paren ||
                    sscanf(close_paren + 1, " %*c %d", &ppid) != 1 || ppid != parent)
                        continue;
                *close_paren = 0; /* the comm, between the parentheses */
                if ((only_name && !g_str_equal(open_paren + 1, only_name)) ||
                    (except_name && g_str_equal(open_paren + 1, except_name)))
                        continue;
                pid_t pid = (pid_t) atoi(d);
                g_array_append_val(pids, pid);
        }
        return pids;
}

int harness_count_fds(pid_t pid) {
        g_autofree char *path = pid > 0 ? g_strdup_printf("/proc/%d/fd", (int) pid)
                                        : g_strdup("/proc/self/fd");
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        int n = 0;

        if (!dir)
                return -ESRCH;
        while (g_dir_read_name(dir))
                n++;
        /* Our own count includes the fd reading the directory. */
        return pid > 0 ? n : n - 1;
}

/* What a daemon's fds are, for the log of a failed check. */
static char *describe_fds(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/fd", (int) pid);
        g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
        GString *s = g_string_new(NULL);
        const char *name;

        while (dir && (name = g_dir_read_name(dir))) {
                g_autofree char *link = g_build_filename(path, name, NULL);
                g_autofree char *target = g_file_read_link(link, NULL);

                g_string_append_printf(s, " %s=%s", name, target ?: "?");
        }
        return g_string_free(s, FALSE);
}

/* The daemon's fds at the last snapshot, to compare with when a later check fails. */
static char *snapshot_fds;
static pid_t snapshot_fds_pid;

static void log_fds(pid_t pid) {
        g_autofree char *now = describe_fds(pid);

        if (snapshot_fds && snapshot_fds_pid == pid)
                harness_log("daemon fds at the snapshot:%s", snapshot_fds);
        harness_log("daemon fds now:%s", now);
}

static int snapshot_take(pid_t daemon_pid, bool record, HarnessSnapshot *ret) {
        HarnessSnapshot s = { .daemon_fds = -1 };

        s.loop_devices = harness_count_loop_devices();
        if (s.loop_devices < 0)
                return s.loop_devices;
        s.mounts = harness_count_mounts(0);
        if (s.mounts < 0)
                return s.mounts;
        if (daemon_pid > 0) {
                s.daemon_fds = harness_count_fds(daemon_pid);
                if (s.daemon_fds < 0)
                        return s.daemon_fds;
                if (record) {
                        g_free(snapshot_fds);
                        snapshot_fds = describe_fds(daemon_pid);
                        snapshot_fds_pid = daemon_pid;
                }
        }
        *ret = s;
        return 0;
}

static bool snapshot_equal(const HarnessSnapshot *a, const HarnessSnapshot *b) {
        return a->loop_devices == b->loop_devices && a->mounts == b->mounts &&
               a->daemon_fds == b->daemon_fds;
}

/* A baseline is taken once the counts have settled: a daemon replaces the worker a call
 * took from its pool, and lets go of a caller's pidfd, just after the reply. */
#define SNAPSHOT_SETTLED_SAMPLES 5
#define SNAPSHOT_SETTLE_INTERVAL_MS 25
#define SNAPSHOT_SETTLE_TIMEOUT_MS 5000

int harness_snapshot(pid_t daemon_pid, HarnessSnapshot *ret) {
        int64_t deadline = harness_now_ms() + SNAPSHOT_SETTLE_TIMEOUT_MS;
        HarnessSnapshot last;
        int r, same = 0;

        r = snapshot_take(daemon_pid, true, &last);
        while (r >= 0 && same + 1 < SNAPSHOT_SETTLED_SAMPLES && harness_now_ms() < deadline) {
                HarnessSnapshot now;

                g_usleep(SNAPSHOT_SETTLE_INTERVAL_MS * 1000);
                r = snapshot_take(daemon_pid, true, &now);
                same = r >= 0 && snapshot_equal(&now, &last) ? same + 1 : 0;
                last = now;
        }
        if (r >= 0)
                *ret = last;
        return r;
}

int harness_wait_snapshot(pid_t daemon_pid, const HarnessSnapshot *expected, int timeout_ms) {
        int64_t deadline = harness_now_ms() + timeout_ms;
        unsigned interval_ms = 5;

        for (;;) {
                HarnessSnapshot now;
                int r = snapshot_take(daemon_pid, false, &now);

                if (r < 0)
                        return r;
                if (now.loop_devices == expected->loop_devices &&
                        now.mounts == expected->mounts &&
                        (daemon_pid <= 0 || now.daemon_fds == expected->daemon_fds))
                        return 0;
                /* No event tells when the kernel let go of a loop device or the daemon
                 * closed an fd: poll, backing off, within the deadline. */
                if (harness_now_ms() >= deadline) {
                        harness_log("still %d loop device(s), %d mount(s), %d daemon fd(s); "
                                    "expected %d, %d, %d",
                                now.loop_devices, now.mounts, now.daemon_fds,
                                expected->loop_devices, expected->mounts, expected->daemon_fds);
                        if (daemon_pid > 0)
                                log_fds(daemon_pid);
                        return -ETIMEDOUT;
                }
                g_usleep(interval_ms * 1000);
                interval_ms = MIN(interval_ms * 2, 100u);
        }
}

int harness_umount_below(const char *dir) {
        g_autoptr(GPtrArray) mounts = read_mounts(0);
        int n = 0;

        if (!mounts || !dir)
                return 0;
        /* Children come after their parents in mountinfo: undo in reverse. */
        for (guint i = mounts->len; i > 0; i--) {
                const char *where = ((MountEntry *) mounts->pdata[i - 1])->mountpoint;

                if (path_below(where, dir, false) && umount2(where, MNT_DETACH) == 0)
                        n++;
        }
        return n;
}

static void detach_loop(const char *device, dev_t rdev, int fd) {
        g_autoptr(GPtrArray) mounts = read_mounts(0);

        for (guint i = mounts ? mounts->len : 0; i > 0; i--) {
                MountEntry *m = mounts->pdata[i - 1];

                if (m->dev == rdev || streq(m->source, device))
                        umount2(m->mountpoint, MNT_DETACH);
        }
        /* Deferred by the kernel until the last user lets go; fd is closed by the caller. */
        ioctl(fd, LOOP_CLR_FD);
}

int harness_detach_leftover_loops(void) {
        if (!harness.tmpdir)
                return 0;
        return for_each_harness_loop(detach_loop);
}
