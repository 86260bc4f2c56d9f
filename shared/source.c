/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source of a mount. source_inspect_fd() decides from fcntl(), fstat(), fstatfs() and
 * sysfs alone whether a caller's fd may be mounted at all: a block device or a regular
 * image file, opened for reading. (Reading its content is probe.c's, in the workers.)
 */
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#include "pseudofs.h"
#include "removable.h"
#include "source.h"

/*
 * What an fd on a kernel pseudo filesystem is, for the refusal: no "regular file" there
 * is an image (namespace files, pidfds, anonymous inodes, procfs, ...); a loop device
 * over one is at best meaningless and at worst reads kernel state.
 */
static const struct {
        const char *name;
        const char *what;
} pseudo_phrases[] = {
        { "anon_inodefs", "an anonymous inode" },
        { "pidfs", "a pidfd" },
        { "nsfs", "a namespace file (nsfs)" },
        { "devpts", "a pseudo-terminal" },
        { "sockfs", "a socket" },
        { "pipefs", "a pipe" },
        { "proc", "a file on procfs" },
        { "bpf", "a file on bpffs" },
        { "cgroup", "a file on cgroupfs" },
        { "cgroup2", "a file on cgroupfs" },
};

#define NOT_A_SOURCE_HINT "; pass a block device or a filesystem image opened for reading"

/* "a pidfd", "a file on proc", ... for an fd on a pseudo filesystem; NULL otherwise. */
static const char *pseudo_filesystem_name(int fd, char *buf, size_t n) {
        struct statfs sfs;
        const char *name;

        if (fstatfs(fd, &sfs) < 0)
                return NULL;
        name = pseudofs_name((uint64_t) sfs.f_type);
        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(pseudo_phrases); i++)
                if (streq(name, pseudo_phrases[i].name))
                        return pseudo_phrases[i].what;
        snprintf(buf, n, "a file on %s", name);
        return buf;
}

/* What the kernel calls the fd ("anon_inode:[eventfd]", "/memfd:x (deleted)"), or "". */
static void fd_link_name(int fd, char *buf, size_t n) {
        char path[64];
        ssize_t l;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        l = readlink(path, buf, n - 1);
        buf[l < 0 ? 0 : l] = 0;
}

static int refuse_anonymous(int fd, UmError *error) {
        char link[256], escaped[256], buf[64];
        const char *kind, *pseudo;

        fd_link_name(fd, link, sizeof(link));
        if (strncmp(link, "anon_inode:", 11) != 0) {
                pseudo = pseudo_filesystem_name(fd, buf, sizeof(buf));
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the descriptor refers to %s" NOT_A_SOURCE_HINT,
                                    pseudo ? pseudo : "a special kernel object");
        }
        kind = link + 11;
        kind += strspn(kind, "[");
        um_escape(kind, escaped, sizeof(escaped));
        escaped[strcspn(escaped, "]")] = 0;
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "the descriptor refers to an anonymous inode (%s)" NOT_A_SOURCE_HINT,
                            escaped);
}

static int refuse_type(mode_t mode, int fd, UmError *error) {
        const char *what;

        switch (mode & S_IFMT) {
        case S_IFDIR:
                what = "a directory (or a mount)";
                break;
        case S_IFCHR:
                what = "a character device";
                break;
        case S_IFIFO:
                what = "a pipe or FIFO";
                break;
        case S_IFSOCK:
                what = "a socket";
                break;
        case S_IFLNK:
                what = "a symbolic link";
                break;
        default:
                return refuse_anonymous(fd, error);
        }
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "the descriptor refers to %s" NOT_A_SOURCE_HINT, what);
}

static int check_image(int fd, const struct stat *st, UmError *error) {
        const char *pseudo;
        char link[256], buf[64];

        pseudo = pseudo_filesystem_name(fd, buf, sizeof(buf));
        if (pseudo)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the descriptor refers to %s" NOT_A_SOURCE_HINT, pseudo);
        if (st->st_size <= 0) {
                fd_link_name(fd, link, sizeof(link));
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the %s is empty: it holds no filesystem",
                                    strncmp(link, "/memfd:", 7) == 0 ? "memfd" : "file");
        }
        return 0;
}

/*
 * Whether the block device is removable media, by the rules of removable.h (the media
 * flag, an SD card but never eMMC, a parent the kernel marks removable). A device sysfs
 * cannot tell about is not removable: mount-system, the action that asks more.
 */
static bool block_device_removable(dev_t rdev) {
        _cleanup_close_ int sysfs_fd = open("/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);

        return sysfs_fd >= 0 && removable_check(sysfs_fd, rdev, NULL) > 0;
}

int source_check_access(int fd, SourceInfo *ret, UmError *error) {
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the source is not an open file descriptor");
        if (flags & O_PATH)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "an O_PATH descriptor does not prove read access; "
                                    "open the file for reading");
        if ((flags & O_ACCMODE) != O_RDONLY && (flags & O_ACCMODE) != O_RDWR)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the descriptor is not open for reading; open the device "
                                    "or image with O_RDONLY or O_RDWR");
        *ret = (SourceInfo) { .type = SOURCE_UNKNOWN,
                              .read_only = (flags & O_ACCMODE) == O_RDONLY };
        return 0;
}

int source_inspect_fd(int fd, SourceInfo *ret, UmError *error) {
        SourceInfo access;
        struct stat st;
        int r;

        r = source_check_access(fd, &access, error);
        if (r < 0)
                return r;
        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the descriptor cannot be inspected");

        if (S_ISBLK(st.st_mode)) {
                *ret = (SourceInfo) {
                        .type = SOURCE_BLOCK_DEVICE,
                        .read_only = access.read_only,
                        .rdev = st.st_rdev,
                        .removable = block_device_removable(st.st_rdev),
                };
                return 0;
        }
        if (!S_ISREG(st.st_mode))
                return refuse_type(st.st_mode, fd, error);

        r = check_image(fd, &st, error);
        if (r < 0)
                return r;
        *ret = (SourceInfo) { .type = SOURCE_IMAGE, .read_only = access.read_only };
        return 0;
}
