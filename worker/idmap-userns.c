/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id maps in the kernel, in the worker (idmap-userns.h): the caller's delegation read and
 * checked, the maps of a user namespace read, a user namespace made, and a detached mount
 * id-mapped with it.
 *
 * Two helpers run a short-lived child process, each for a reason the kernel gives:
 *   - a user namespace's maps can only be read from /proc/PID/{uid,gid}_map of a process
 *     inside it, and only a reader in the initial user namespace sees the host ids, so a
 *     child joins the namespace and its parent (the worker) reads its maps;
 *   - a user namespace is made by a process (unshare), and its maps are written from the
 *     parent namespace, so a child unshares and the worker writes its maps.
 * Both children are made undumpable before anything else: the one that joins a caller's
 * namespace would otherwise be traceable by the caller, who is privileged there, while it
 * still runs as root on the host. They close every fd but their socket (and the namespace
 * to join) first, and die with the worker.
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

#include "fd-util.h"
#include "idmap-userns.h"
#include "kernel-compat.h"
#include "macro.h"
#include "nsenter.h"
#include "nsholder.h"

int idmap_read_subid(const char *path, const char *user, uid_t uid, IdRange **ret,
                     size_t *ret_n) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        ssize_t n;

        f = fopen(path, "re");
        if (!f) {
                if (errno != ENOENT)
                        return -errno;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        /* The whole file: getdelim with NUL reads to the end. */
        n = getdelim(&text, &size, 0, f);
        if (n < 0) {
                if (ferror(f))
                        return -EIO;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        return idmap_parse_subid(text, user, uid, ret, ret_n);
}

/* The delegated range (or own id) that holds id, as [first, end); false if none. */
static bool delegated(uint64_t id, uint32_t own_id, const IdRange *ranges, size_t n,
                      uint64_t *ret_end) {
        if (id == own_id) {
                *ret_end = (uint64_t) own_id + 1;
                return true;
        }
        for (size_t i = 0; i < n; i++)
                if (id >= ranges[i].first && id < (uint64_t) ranges[i].first + ranges[i].count) {
                        *ret_end = (uint64_t) ranges[i].first + ranges[i].count;
                        return true;
                }
        return false;
}

int idmap_check_delegation(const IdMap *map, uint32_t own_id, const IdRange *ranges,
                           size_t n_ranges, const char *what, const char *file, UmError *error) {
        for (uint32_t i = 0; i < map->n_extents; i++) {
                const IdExtent *e = &map->extents[i];
                uint64_t id = e->lower, end = (uint64_t) e->lower + e->count;

                while (id < end) {
                        uint64_t range_end;

                        if (!delegated(id, own_id, ranges, n_ranges, &range_end))
                                return um_error_set(
                                        error, UM_ERROR_KIND_NOT_AUTHORIZED, EPERM,
                                        "The user namespace maps host %s %" PRIu64 " (in the "
                                        "range %" PRIu32 "-%" PRIu64 "), which is neither the "
                                        "caller's own %s %" PRIu32 " nor delegated to it in %s.",
                                        what, id, e->lower, end - 1, what, own_id, file);
                        id = range_end;
                }
        }
        return 0;
}

int idmap_check_userns_fd(int fd, uid_t uid, UmError *error) {
        uid_t owner;
        int type, r;

        type = ioctl(fd, NS_GET_NSTYPE);
        if (type < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'userns' must be a user namespace file "
                                    "descriptor (such as /proc/PID/ns/user opened read-only), "
                                    "and this is not a namespace at all.");
        if (type != CLONE_NEWUSER)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "Parameter 'userns' is a namespace, but not a user "
                                    "namespace.");
        r = idmap_refuse_own_userns(fd, "Parameter 'userns' is the initial user namespace, whose ids "
                              "are the host's: there is nothing to map.", error);
        if (r < 0)
                return r;
        if (ioctl(fd, NS_GET_OWNER_UID, &owner) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not learn who owns the user namespace.");
        if (owner != uid)
                return um_error_set(error, UM_ERROR_KIND_NOT_AUTHORIZED, EPERM,
                                    "Parameter 'userns' is a user namespace owned by uid %u, "
                                    "not by the caller (uid %u).", (unsigned) owner,
                                    (unsigned) uid);
        return 0;
}

static int setup_join(void *userdata) {
        int userns_fd = *(int *) userdata;
        UmError error = {};
        int r = ns_enter(userns_fd, CLONE_NEWUSER, "the caller's user namespace", &error);

        /* Only the socket stays open in the caller's namespace. */
        safe_close(userns_fd);
        return r;
}

static int setup_unshare(void *unused) {
        return unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
}

static int read_proc_map(pid_t pid, const char *name, IdMap *ret) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], text[IDMAP_MAX_EXTENTS * 36 + 1];
        size_t o = 0;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while ((n = read(fd, text + o, sizeof(text) - 1 - o)) > 0)
                o += n;
        if (n < 0)
                return -errno;
        text[o] = 0;
        return idmap_parse(text, ret);
}

int idmap_read_userns(int userns_fd, IdMap *ret_uid_map, IdMap *ret_gid_map, UmError *error) {
        NsHolder c = NS_HOLDER_NULL;
        int r;

        r = nsholder_start(setup_join, &userns_fd, userns_fd, &c);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not enter the user namespace to read its maps: %s.",
                                    strerror(-r));
        r = read_proc_map(c.pid, "uid_map", ret_uid_map);
        if (r >= 0)
                r = read_proc_map(c.pid, "gid_map", ret_gid_map);
        nsholder_stop(&c);
        if (r == -EINVAL)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The user namespace has no uid or gid map yet: write its "
                                    "maps (newuidmap, newgidmap) before asking for idmap "
                                    "'namespace'.");
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not read the user namespace's maps: %s.",
                                    strerror(-r));
        return 0;
}

static int write_proc_map(pid_t pid, const char *name, const IdMap *map) {
        _cleanup_close_ int fd = -EBADF;
        char path[64], text[IDMAP_MAX_EXTENTS * 36 + 1];
        size_t len;
        int r;

        r = idmap_to_proc_text(map, text, sizeof(text));
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* The kernel takes a map in one write() only. */
        len = strlen(text);
        if (write(fd, text, len) != (ssize_t) len)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

int idmap_make_userns(const IdMap *uid_map, const IdMap *gid_map, int *ret_fd, UmError *error) {
        NsHolder c = NS_HOLDER_NULL;
        char path[64];
        int r, fd;

        r = nsholder_start(setup_unshare, NULL, -EBADF, &c);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not create a user namespace for the id-mapping: %s.",
                                    strerror(-r));
        r = write_proc_map(c.pid, "uid_map", uid_map);
        if (r >= 0)
                r = write_proc_map(c.pid, "gid_map", gid_map);
        if (r >= 0) {
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) c.pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = -errno;
        }
        nsholder_stop(&c);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not write the id-mapping's maps: %s.", strerror(-r));
        *ret_fd = fd;
        return 0;
}

int idmap_apply(int mount_fd, int userns_fd, const char *fstype, IdmapMode mode, UmError *error) {
        struct mount_attr attr = {
                .attr_set = MOUNT_ATTR_IDMAP,
                .userns_fd = (uint64_t) userns_fd,
        };
        char type[64];

        if (mount_setattr(mount_fd, "", AT_EMPTY_PATH, &attr, sizeof(attr)) >= 0)
                return 0;
        um_escape(fstype, type, sizeof(type));
        if (errno == EINVAL)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "The %s filesystem does not support id-mapped mounts on "
                                    "this kernel; mount it with idmap 'none' instead of '%s'.",
                                    type, idmap_mode_to_string(mode));
        return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                            "Could not apply the id-mapping (%s) to the %s filesystem: %s.",
                            idmap_mode_to_string(mode), type, strerror(errno));
}

static bool ranges_overlap(uint32_t a, uint32_t an, uint32_t b, uint32_t bn) {
        return (uint64_t) a < (uint64_t) b + bn && (uint64_t) b < (uint64_t) a + an;
}

int idmap_parse(const char *text, IdMap *ret) {
        const char *p = text;

        ret->n_extents = 0;
        while (p && *p) {
                unsigned long long first, lower, count;
                char *end;
                IdExtent *e;

                while (*p == ' ' || *p == '\t' || *p == '\n')
                        p++;
                if (!*p)
                        break;
                if (ret->n_extents >= IDMAP_MAX_EXTENTS)
                        return -E2BIG;
                errno = 0;
                first = strtoull(p, &end, 10);
                if (end == p || (*end != ' ' && *end != '\t'))
                        return -EINVAL;
                p = end;
                lower = strtoull(p, &end, 10);
                if (end == p || (*end != ' ' && *end != '\t'))
                        return -EINVAL;
                p = end;
                count = strtoull(p, &end, 10);
                if (end == p || (*end && *end != '\n' && *end != ' ' && *end != '\t') || errno)
                        return -EINVAL;
                p = end;
                /* strtoull() takes "-1" as ULLONG_MAX, and first + count would wrap around
                 * to a small sum: bound every field before adding. */
                if (first > UINT32_MAX || lower > UINT32_MAX || count > UINT32_MAX)
                        return -EINVAL;
                if (count == 0 || first + count > (1ULL << 32) || lower + count > (1ULL << 32))
                        return -EINVAL;
                e = &ret->extents[ret->n_extents];
                *e = (IdExtent) { (uint32_t) first, (uint32_t) lower, (uint32_t) count };
                for (uint32_t i = 0; i < ret->n_extents; i++) {
                        const IdExtent *o = &ret->extents[i];

                        if (ranges_overlap(o->first, o->count, e->first, e->count) ||
                            ranges_overlap(o->lower, o->count, e->lower, e->count))
                                return -EINVAL;
                }
                ret->n_extents++;
        }
        return ret->n_extents > 0 ? 0 : -EINVAL;
}

int idmap_to_proc_text(const IdMap *map, char *buf, size_t size) {
        int r;

        r = idmap_format(map, true, buf, size);
        if (r < 0)
                return r;
        if (strlen(buf) + 2 > size)
                return -ENOBUFS;
        strcat(buf, "\n");
        return 0;
}

void idmap_single(uint32_t root_id, uint32_t caller_id, IdMap *ret) {
        ret->n_extents = 1;
        ret->extents[0] = (IdExtent) { .first = root_id, .lower = caller_id, .count = 1 };
}
