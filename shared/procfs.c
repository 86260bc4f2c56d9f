/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading /proc/PID/status and /proc/PID/stat (procfs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "procfs.h"

/* A status file with PROC_STATUS_GROUPS_MAX groups of ten digits fits; more is cut. */
#define PROC_STATUS_SIZE_MAX 16384

/* The value of "<key>:\t..." at the start of a line of text, or NULL. */
static const char *status_field(const char *text, const char *key) {
        size_t n = strlen(key);

        for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, n) == 0 && p[n] == ':')
                        return p + n + 1;
        return NULL;
}

/* Four ids separated by tabs: "Uid:" and "Gid:". */
static int parse_ids(const char *p, unsigned ret[4]) {
        for (unsigned i = 0; i < 4; i++) {
                char *end;
                unsigned long v;

                if (!p || (*p != '\t' && *p != ' '))
                        return -EBADMSG;
                while (*p == '\t' || *p == ' ')
                        p++;
                errno = 0;
                v = strtoul(p, &end, 10);
                if (end == p || errno != 0 || v > UINT32_MAX || *p == '-')
                        return -EBADMSG;
                ret[i] = (unsigned) v;
                p = end;
        }
        return 0;
}

static void parse_groups(const char *p, ProcStatus *s) {
        while (p && *p && *p != '\n' && s->n_groups < PROC_STATUS_GROUPS_MAX) {
                char *end;
                unsigned long g;

                while (*p == '\t' || *p == ' ')
                        p++;
                if (*p < '0' || *p > '9')
                        break;
                g = strtoul(p, &end, 10);
                if (g > UINT32_MAX)
                        break;
                s->groups[s->n_groups++] = (gid_t) g;
                p = end;
        }
}

int proc_status_parse(const char *text, ProcStatus *ret) {
        unsigned uids[4], gids[4];
        const char *p;
        int r;

        r = parse_ids(status_field(text, "Uid"), uids);
        if (r < 0)
                return r;
        r = parse_ids(status_field(text, "Gid"), gids);
        if (r < 0)
                return r;

        *ret = (ProcStatus) {};
        for (unsigned i = 0; i < 4; i++) {
                ret->uids[i] = (uid_t) uids[i];
                ret->gids[i] = (gid_t) gids[i];
        }
        p = status_field(text, "Umask");
        if (p) {
                char *end;
                unsigned long mask = strtoul(p, &end, 8);

                ret->has_umask = end != p && mask <= 0777;
                ret->umask = ret->has_umask ? (mode_t) mask : 0;
        }
        parse_groups(status_field(text, "Groups"), ret);
        return 0;
}

/*
 * Reads fd from offset 0 into buf (NUL-terminated). What does not fit is cut at the last
 * whole line when cut_lines (a huge "Groups:" line must not yield half a gid), else -EFBIG.
 */
static int read_all(int fd, char *buf, size_t size, bool cut_lines) {
        size_t n = 0;

        for (;;) {
                ssize_t k = pread(fd, buf + n, size - 1 - n, (off_t) n);

                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n < size - 1)
                        continue;
                if (!cut_lines)
                        return -EFBIG;
                buf[n] = 0;
                char *nl = strrchr(buf, '\n');
                n = nl ? (size_t) (nl - buf) + 1 : 0;
                break;
        }
        buf[n] = 0;
        return 0;
}

int proc_status_read_fd(int fd, ProcStatus *ret) {
        _cleanup_free_ char *buf = malloc(PROC_STATUS_SIZE_MAX);
        int r;

        if (!buf)
                return -ENOMEM;
        r = read_all(fd, buf, PROC_STATUS_SIZE_MAX, true);
        if (r < 0)
                return r;
        return proc_status_parse(buf, ret);
}

/* Opens /proc/<pid>/<file>. */
static int open_proc_file(pid_t pid, const char *file) {
        char path[64];
        int fd;

        if (pid <= 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, file);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return fd < 0 ? -errno : fd;
}

int proc_status_read(pid_t pid, ProcStatus *ret) {
        _cleanup_close_ int fd = open_proc_file(pid, "status");

        if (fd < 0)
                return fd;
        return proc_status_read_fd(fd, ret);
}

bool proc_status_has_only_uid(const ProcStatus *s, uid_t uid) {
        for (unsigned i = 0; i < 4; i++)
                if (s->uids[i] != uid)
                        return false;
        return true;
}

int proc_stat_parse_start_time(const char *text, uint64_t *ret) {
        /* "pid (comm) state ppid ...": comm may hold spaces and ')', so the fields are
         * counted from the last ')'. Field 3 (state) is the first after it. */
        const char *p = strrchr(text, ')');
        unsigned long long v;
        char *end;

        if (!p)
                return -EBADMSG;
        p++;
        for (unsigned field = 3; field < 22; field++) {
                if (*p != ' ')
                        return -EBADMSG;
                p = strchr(p + 1, ' ');
                if (!p)
                        return -EBADMSG;
        }
        p++;
        if (*p < '0' || *p > '9')
                return -EBADMSG;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0 || (*end != ' ' && *end != '\n' && *end != 0))
                return -EBADMSG;
        *ret = (uint64_t) v;
        return 0;
}

int proc_start_time(pid_t pid, uint64_t *ret) {
        _cleanup_close_ int fd = open_proc_file(pid, "stat");
        char buf[2048];
        int r;

        if (fd < 0)
                return fd;
        r = read_all(fd, buf, sizeof(buf), false);
        if (r < 0)
                return r;
        return proc_stat_parse_start_time(buf, ret);
}

bool proc_has_filesystem(const char *fstype) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/filesystems", "re");
        char line[128];

        if (!f)
                return true;
        while (fgets(line, sizeof(line), f)) {
                char *name = strrchr(line, '\t');

                name = name ? name + 1 : line;
                name[strcspn(name, "\n")] = 0;
                if (streq(name, fstype))
                        return true;
        }
        return false;
}
