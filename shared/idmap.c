/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id maps as data (idmap.h): their text forms, /etc/subuid ranges, and the caller's user
 * namespace opened and told apart from the daemon's own.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

#include "idmap.h"
#include "kernel-compat.h"
#include "macro.h"
#include "fd-util.h"
#include "fs-util.h"

const char *idmap_mode_to_string(IdmapMode mode) {
        switch (mode) {
        case IDMAP_USER:
                return "user";
        case IDMAP_NAMESPACE:
                return "namespace";
        case IDMAP_NONE:
        default:
                return "none";
        }
}

/* proc: "first lower count" lines, else "first:lower:count" joined with ",". */
int idmap_format(const IdMap *map, bool proc, char *buf, size_t size) {
        size_t o = 0;

        if (size == 0)
                return -ENOBUFS;
        buf[0] = 0;
        for (uint32_t i = 0; i < map->n_extents; i++) {
                const IdExtent *e = &map->extents[i];
                int n;

                n = snprintf(buf + o, size - o, "%s", i == 0 ? "" : proc ? "\n" : ",");
                if (n < 0 || (size_t) n >= size - o)
                        return -ENOBUFS;
                o += n;
                if (proc)
                        n = snprintf(buf + o, size - o, "%" PRIu32 " %" PRIu32 " %" PRIu32,
                                     e->first, e->lower, e->count);
                else
                        n = snprintf(buf + o, size - o, "%" PRIu32 ":%" PRIu32 ":%" PRIu32,
                                     e->first, e->lower, e->count);
                if (n < 0 || (size_t) n >= size - o)
                        return -ENOBUFS;
                o += n;
        }
        return 0;
}

int idmap_to_string(const IdMap *map, char *buf, size_t size) {
        return idmap_format(map, false, buf, size);
}

/* One "name:first:count" line; 0 and no range if it does not parse or is not for us. */
static bool subid_line(const char *line, size_t len, const char *user, uid_t uid, IdRange *ret) {
        char buf[512], *name, *first, *count, *end;
        unsigned long long f, c;
        char uidbuf[16];

        if (len == 0 || len >= sizeof(buf))
                return false;
        memcpy(buf, line, len);
        buf[len] = 0;
        name = buf;
        first = strchr(name, ':');
        if (!first)
                return false;
        *first++ = 0;
        count = strchr(first, ':');
        if (!count)
                return false;
        *count++ = 0;
        snprintf(uidbuf, sizeof(uidbuf), "%u", (unsigned) uid);
        if (!(user && streq(name, user)) && !streq(name, uidbuf))
                return false;
        if (!*first || !*count || *first == '-' || *count == '-')
                return false;
        errno = 0;
        f = strtoull(first, &end, 10);
        if (*end || errno)
                return false;
        c = strtoull(count, &end, 10);
        /* Bounded before adding: a sum near ULLONG_MAX would wrap around to a small one. */
        if (*end || errno || f > UINT32_MAX || c == 0 || c > UINT32_MAX ||
            f + c > (1ULL << 32))
                return false;
        *ret = (IdRange) { .first = (uint32_t) f, .count = (uint32_t) c };
        return true;
}

int idmap_parse_subid(const char *text, const char *user, uid_t uid, IdRange **ret,
                      size_t *ret_n) {
        _cleanup_free_ IdRange *ranges = NULL;
        size_t n = 0;

        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t) (nl - p) : strlen(p);
                IdRange range;

                if (subid_line(p, len, user, uid, &range)) {
                        IdRange *t = realloc(ranges, (n + 1) * sizeof(IdRange));

                        if (!t)
                                return -ENOMEM;
                        ranges = t;
                        ranges[n++] = range;
                }
                p = nl ? nl + 1 : p + len;
        }
        *ret = TAKE_PTR(ranges);
        *ret_n = n;
        return 0;
}

int idmap_refuse_own_userns(int fd, const char *refusal, UmError *error) {
        int r = fd_path_same_inode(fd, "/proc/self/ns/user");

        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not compare the user namespace with the daemon's.");
        if (r > 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL, "%s", refusal);
        return 0;
}

int idmap_open_userns_of(int pidfd, pid_t pid, int *ret_fd, UmError *error) {
        _cleanup_close_ int fd = -EBADF;
        int r;

        fd = ioctl(pidfd, PIDFD_GET_USER_NAMESPACE, 0);
        if (fd < 0 && errno != ENOTTY && errno != EINVAL && errno != EOPNOTSUPP)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not learn the caller's user namespace: %s.",
                                    strerror(errno));
        if (fd < 0) {
                char path[64];

                /* An older kernel: by pid, then the pidfd proves it was still that process. */
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, ESRCH,
                                            "The calling process exited before its request "
                                            "was handled.");
        }
        r = idmap_refuse_own_userns(fd, "idmap 'namespace' maps the ids of the caller's user "
                              "namespace, but the caller runs in the initial one; call from "
                              "inside a user namespace, pass one as 'userns', or use idmap "
                              "'user'.", error);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}
