/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount namespace ids and mount existence, asked of the kernel without entering any
 * namespace: PIDFD_GET_MNT_NAMESPACE (6.11) on a pidfd, NS_GET_MNTNS_ID (6.11) on the
 * namespace fd, and statmount() (6.8) with a mount namespace id (MNT_ID_REQ_SIZE_VER1,
 * 6.11). Debian 12's headers predate all of them; kernel-compat.h defines them.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/ioctl.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#include "fs-util.h"
#include "mountns.h"
#include "macro.h"
#include "kernel-compat.h"

/* The kernel needs PATH_MAX for the mount point; room for more before giving up. */
#define STATMOUNT_BUFFER_MIN (sizeof(struct um_statmount) + PATH_MAX)
#define STATMOUNT_BUFFER_MAX (sizeof(struct um_statmount) + 16 * PATH_MAX)

/* The id of the mount namespace behind nsfd, after checking that it is one. */
static int mntns_fd_id(int nsfd, uint64_t *ret_id) {
        uint64_t id = 0;
        int type;

        type = ioctl(nsfd, NS_GET_NSTYPE);
        if (type < 0)
                return -errno;
        if (type != CLONE_NEWNS)
                return -EINVAL;
        if (ioctl(nsfd, NS_GET_MNTNS_ID, &id) < 0)
                return -errno;
        if (id == 0)
                return -EIO;
        *ret_id = id;
        return 0;
}

/*
 * The mount namespace of the process behind pidfd, as an fd. The kernel resolves the
 * pidfd and the namespace in one call, so there is no window for pid reuse; a process
 * that has exited (a zombie too) is -ESRCH.
 */
static int pidfd_open_mntns(int pidfd) {
        struct statfs sfs;
        int fd;

        /* Only a pidfd may see this ioctl number: on another fd it could mean anything. */
        if (fstatfs(pidfd, &sfs) < 0)
                return -errno;
        if (sfs.f_type != PID_FS_MAGIC)
                return -EBADF;
        fd = ioctl(pidfd, PIDFD_GET_MNT_NAMESPACE, 0);
        if (fd < 0)
                return -errno;
        return fd;
}

int mountns_id_of_process(int pidfd, pid_t pid, uint64_t *ret_id) {
        _cleanup_close_ int nsfd = -EBADF;
        char path[64];

        if (pidfd >= 0) {
                nsfd = pidfd_open_mntns(pidfd);
                if (nsfd < 0)
                        return nsfd;
        } else {
                if (pid <= 0)
                        return -EINVAL;
                snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
                nsfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (nsfd < 0)
                        return errno == ENOENT ? -ESRCH : -errno;
        }
        return mntns_fd_id(nsfd, ret_id);
}

int mountns_shared_with_host(int pidfd, pid_t pid) {
        _cleanup_close_ int nsfd = -EBADF, owner_fd = -EBADF;
        char path[64];

        if (pidfd >= 0)
                nsfd = pidfd_open_mntns(pidfd);
        else {
                snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int) pid);
                nsfd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
                if (nsfd < 0)
                        nsfd = errno == ENOENT ? -ESRCH : -errno;
        }
        if (nsfd < 0)
                return nsfd;
        owner_fd = ioctl(nsfd, NS_GET_USERNS);
        if (owner_fd < 0)
                /* EPERM: owned by an ancestor of the daemon's, which no caller owns. */
                return errno == EPERM ? 1 : -errno;
        return fd_path_same_inode(owner_fd, "/proc/self/ns/user");
}

int mountns_statmount(uint64_t mntns_id, uint64_t mount_id, uint64_t mask,
                           struct um_statmount **ret, size_t *ret_size) {
        struct um_mnt_id_req req = {
                .size = UM_MNT_ID_REQ_SIZE_VER1,
                .mnt_id = mount_id,
                .param = mask,
                .mnt_ns_id = mntns_id,
        };

        for (size_t size = STATMOUNT_BUFFER_MIN; size <= STATMOUNT_BUFFER_MAX; size *= 2) {
                _cleanup_free_ struct um_statmount *sm = calloc(1, size);

                if (!sm)
                        return -ENOMEM;
                if (syscall(SYS_statmount, &req, sm, size, 0) == 0) {
                        *ret = TAKE_PTR(sm);
                        *ret_size = size;
                        return 0;
                }
                if (errno != EOVERFLOW)
                        return -errno;
        }
        return -EOVERFLOW;
}

/* The string field at offset field of sm (size bytes), if the kernel set bit; NULL if not. */
static int statmount_string(const struct um_statmount *sm, size_t size, uint64_t bit,
                            uint32_t field, char **ret) {
        size_t used = sm->size < size ? sm->size : size;
        size_t off = sizeof(*sm) + field;
        const char *s;

        *ret = NULL;
        if (!(sm->mask & bit))
                return 0;
        if (off >= used || !memchr((const char *) sm + off, 0, used - off))
                return -EBADMSG;
        s = sm->str + field;
        if (!*s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int statmount_mount_point(const struct um_statmount *sm, size_t size, char **ret) {
        return statmount_string(sm, size, UM_STATMOUNT_MNT_POINT, sm->mnt_point, ret);
}

int mountns_statmount_parse(const void *buf, size_t size, char **ret_mount_point,
                            char **ret_fstype) {
        const struct um_statmount *sm = buf;
        _cleanup_free_ char *mp = NULL, *type = NULL;
        int r;

        if (!buf || size < sizeof(*sm))
                return -EBADMSG;
        r = statmount_mount_point(sm, size, &mp);
        if (r < 0)
                return r;
        r = statmount_string(sm, size, UM_STATMOUNT_FS_TYPE, sm->fs_type, &type);
        if (r < 0)
                return r;
        *ret_mount_point = TAKE_PTR(mp);
        *ret_fstype = TAKE_PTR(type);
        return 0;
}

int mountns_mount_exists(uint64_t mntns_id, uint64_t mount_id, char **ret_mount_point) {
        _cleanup_free_ struct um_statmount *sm = NULL;
        _cleanup_free_ char *mp = NULL, *type = NULL;
        size_t size = 0;
        int r;

        /* 0 would ask about the daemon's own namespace: never what a record means. */
        if (mntns_id == 0 || mount_id == 0)
                return -EINVAL;
        r = mountns_statmount(mntns_id, mount_id, ret_mount_point ? UM_STATMOUNT_MNT_POINT : 0,
                              &sm, &size);
        /* ENOENT: no such mount in that namespace, or no such namespace (any more). */
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (ret_mount_point) {
                r = mountns_statmount_parse(sm, size, &mp, &type);
                if (r < 0)
                        return r;
                *ret_mount_point = TAKE_PTR(mp);
        }
        return 1;
}

/* Whether the string is a positive decimal pid, as /proc names processes. */
static bool parse_pid(const char *s, pid_t *ret) {
        long v = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                v = v * 10 + (*s - '0');
                if (v > INT_MAX)
                        return false;
        }
        if (v <= 0)
                return false;
        *ret = (pid_t) v;
        return true;
}

/*
 * A pidfd of pid if it lives in mntns_id: 1 and *ret_pidfd, 0 if it does not (or is
 * gone or not ours to inspect). The namespace is read through the pidfd, after it was
 * opened, so the answer is about the process the pidfd refers to.
 */
static int process_in_mntns(pid_t pid, uint64_t mntns_id, int *ret_pidfd) {
        _cleanup_close_ int pidfd = -EBADF;
        uint64_t id = 0;
        int r;

        pidfd = pidfd_open(pid, 0); /* always O_CLOEXEC */
        if (pidfd < 0)
                return errno == ESRCH ? 0 : -errno;
        r = mountns_id_of_process(pidfd, pid, &id);
        if (r == -ESRCH || r == -EACCES || r == -EPERM)
                return 0;
        if (r < 0)
                return r;
        if (id != mntns_id)
                return 0;
        *ret_pidfd = TAKE_FD(pidfd);
        return 1;
}

int mountns_find_process(uint64_t mntns_id, int *ret_pidfd) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd;

        if (mntns_id == 0)
                return -EINVAL;
        fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }
        while ((errno = 0, de = readdir(d))) {
                pid_t pid;
                int r;

                if (!parse_pid(de->d_name, &pid))
                        continue;
                r = process_in_mntns(pid, mntns_id, ret_pidfd);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        if (errno != 0)
                return -errno;
        return -ESRCH;
}
