/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the benchmark reads about the daemon from /proc (see bench-proc.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-proc.h"
#include "macro.h"

int proc_status_kib(pid_t pid, const char *key, uint64_t *ret_kib) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[64], line[256];
        size_t len = strlen(key);

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                uint64_t v;

                if (strncmp(line, key, len) != 0 || line[len] != ':')
                        continue;
                if (sscanf(line + len + 1, "%" SCNu64, &v) != 1)
                        return -EINVAL;
                *ret_kib = v;
                return 0;
        }
        return -ENOENT;
}

int proc_count_children(pid_t pid, unsigned *ret_n) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[96];
        unsigned n = 0;
        int child;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) pid, (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fscanf(f, "%d", &child) == 1)
                n++;
        *ret_n = n;
        return 0;
}

/* The fields of /proc/<pid>/stat after the command name, which may hold spaces and
 * parentheses: everything after the last ')'. */
static int read_stat_tail(pid_t pid, char *buf, size_t n, const char **ret_tail) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], *p;
        ssize_t k;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        k = read(fd, buf, n - 1);
        if (k < 0)
                return -errno;
        buf[k] = 0;
        p = strrchr(buf, ')');
        if (!p)
                return -EINVAL;
        *ret_tail = p + 1;
        return 0;
}

int proc_cpu_ms(pid_t pid, double *ret_self_ms, double *ret_children_ms) {
        unsigned long long utime, stime, cutime, cstime;
        double tick = 1000.0 / (double) sysconf(_SC_CLK_TCK);
        const char *tail = NULL;
        char buf[1024];
        int r;

        r = read_stat_tail(pid, buf, sizeof(buf), &tail);
        if (r < 0)
                return r;
        /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime ... */
        if (sscanf(tail, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                   &utime, &stime, &cutime, &cstime) != 4)
                return -EINVAL;
        *ret_self_ms = (double) (utime + stime) * tick;
        *ret_children_ms = (double) (cutime + cstime) * tick;
        return 0;
}

int proc_machine_busy_ms(double *ret_ms) {
        unsigned long long user, nice, system, idle, iowait, irq, softirq, steal;
        _cleanup_(fclosep) FILE *f = NULL;

        f = fopen("/proc/stat", "re");
        if (!f)
                return -errno;
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system,
                   &idle, &iowait, &irq, &softirq, &steal) != 8)
                return -EINVAL;
        *ret_ms = (double) (user + nice + system + irq + softirq) * 1000.0 /
                  (double) sysconf(_SC_CLK_TCK);
        return 0;
}

int proc_find_child(pid_t parent, const char *comm, pid_t *ret_pid) {
        unsigned n = 0;
        _cleanup_(fclosep) FILE *f = NULL;
        char path[96];
        int child;

        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) parent, (int) parent);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fscanf(f, "%d", &child) == 1) {
                char name[64] = {}, cpath[64];
                _cleanup_(fclosep) FILE *c = NULL;

                n++;
                snprintf(cpath, sizeof(cpath), "/proc/%d/comm", child);
                c = fopen(cpath, "re");
                if (!c || !fgets(name, sizeof(name), c))
                        continue;
                name[strcspn(name, "\n")] = 0;
                if (streq(name, comm)) {
                        *ret_pid = child;
                        return 0;
                }
        }
        return -ESRCH;
}

int proc_count_mounts(pid_t pid) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[64];
        int n = 0, c;

        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        return n;
}

int proc_same_mount_ns(pid_t pid) {
        struct stat ours, theirs;
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
        if (stat("/proc/self/ns/mnt", &ours) < 0 || stat(path, &theirs) < 0)
                return -errno;
        return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

/* The State letter and the real uid from /proc/<pid>/status. */
static int read_state_uid(pid_t pid, char *ret_state, uid_t *ret_uid) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], buf[2048];
        const char *state, *uid;
        unsigned u;
        ssize_t k;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        k = read(fd, buf, sizeof(buf) - 1);
        if (k < 0)
                return -errno;
        buf[k] = 0;
        state = strstr(buf, "\nState:");
        uid = strstr(buf, "\nUid:");
        if (!state || !uid || sscanf(state, "\nState: %c", ret_state) != 1 ||
            sscanf(uid, "\nUid: %u", &u) != 1)
                return -EINVAL;
        *ret_uid = (uid_t) u;
        return 0;
}

static void scan_one(pid_t pid, uid_t first, unsigned count, ProcUidScan *s) {
        char state;
        uid_t uid;

        /* A process that exits in the meantime is simply not counted. */
        if (pid <= 0 || read_state_uid(pid, &state, &uid) < 0)
                return;
        if (uid < first || uid - first >= count || state == 'Z' || state == 'X')
                return;
        s->alive++;
        if (pid > s->alive_pid)
                s->alive_pid = pid;
}

static int scan_cgroup(const char *cgroup, uid_t first, unsigned count, ProcUidScan *s) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[PATH_MAX];
        int pid;

        snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        while (fscanf(f, "%d", &pid) == 1)
                scan_one(pid, first, count, s);
        return 0;
}

static int scan_machine(uid_t first, unsigned count, ProcUidScan *s) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        d = opendir("/proc");
        if (!d)
                return -errno;
        while ((de = readdir(d)))
                scan_one((pid_t) atoi(de->d_name), first, count, s);
        return 0;
}

int proc_scan_uids(const char *cgroup, uid_t first, unsigned count, ProcUidScan *ret) {
        ProcUidScan s = {};
        int r;

        r = cgroup ? scan_cgroup(cgroup, first, count, &s) : scan_machine(first, count, &s);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}
