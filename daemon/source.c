/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source of a mount. source_inspect_fd() decides from fcntl(), fstat(), fstatfs() and
 * sysfs alone whether a caller's fd may be mounted at all: a block device or a regular
 * image file, opened for reading. source_probe() reads the content with libblkid from a
 * private reopening of the fd, so the caller's file offset is never touched.
 */
#include <blkid/blkid.h>
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
        struct stat st;
        int flags, r;

        flags = fcntl(fd, F_GETFL);
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
        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the descriptor cannot be inspected");

        if (S_ISBLK(st.st_mode)) {
                *ret = (SourceInfo) {
                        .type = SOURCE_BLOCK_DEVICE,
                        .read_only = (flags & O_ACCMODE) == O_RDONLY,
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
        *ret = (SourceInfo) {
                .type = SOURCE_IMAGE,
                .read_only = (flags & O_ACCMODE) == O_RDONLY,
        };
        return 0;
}

/*
 * A private file description for the same file, so that libblkid's lseek()+read() never
 * moves the caller's offset. Reopening through /proc grants nothing: the fd must already
 * be open for reading, and the new one is read-only.
 */
static int reopen_for_probe(int fd, UmError *error) {
        _cleanup_close_ int probe_fd = -EBADF;
        struct stat a, b;
        char path[64];
        int flags;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_PATH) ||
            ((flags & O_ACCMODE) != O_RDONLY && (flags & O_ACCMODE) != O_RDWR))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source is not open for reading");
        if (fstat(fd, &a) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, errno,
                                    "the source cannot be inspected");

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        probe_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (probe_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "the source could not be opened for probing");
        if (fstat(probe_fd, &b) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "the source could not be inspected for probing");
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino || a.st_rdev != b.st_rdev)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source changed while it was being probed");
        return TAKE_FD(probe_fd);
}

static void blkid_free_probep(blkid_probe *pr) {
        if (*pr)
                blkid_free_probe(*pr);
}

/* Copies a probed value (raw bytes, may hold anything but NUL) into buf; false if too long. */
static bool lookup_value(blkid_probe pr, const char *name, char *buf, size_t n) {
        const char *data = NULL;
        size_t len = 0;

        buf[0] = 0;
        if (blkid_probe_lookup_value(pr, name, &data, &len) < 0 || !data)
                return true;
        len = strnlen(data, len);
        if (len >= n)
                return false;
        memcpy(buf, data, len);
        buf[len] = 0;
        return true;
}

/* "the disk has a partition table (partitions 1, 2); mount a partition instead" */
static int refuse_partition_table(blkid_probe pr, UmError *error) {
        blkid_partlist parts = blkid_probe_get_partitions(pr);
        char list[256] = "", pttype[32];
        int n = parts ? blkid_partlist_numof_partitions(parts) : 0;
        size_t o = 0;

        if (!lookup_value(pr, "PTTYPE", pttype, sizeof(pttype)))
                pttype[0] = 0;
        for (int i = 0; i < n && o + 16 < sizeof(list); i++) {
                blkid_partition p = blkid_partlist_get_partition(parts, i);

                if (p)
                        o += snprintf(list + o, sizeof(list) - o, "%s%d", o ? ", " : "",
                                      blkid_partition_get_partno(p));
        }
        if (n <= 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the disk has a %s partition table with no partitions; "
                                    "there is no filesystem to mount",
                                    isempty(pttype) ? "" : pttype);
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "the disk has a partition table (partition%s %s); "
                            "mount a partition instead",
                            n == 1 ? "" : "s", list);
}

/*
 * Hybrid ISO images carry a DOS partition table for booting from USB next to the
 * iso9660/udf filesystem of the whole device; the whole device is what users mean.
 */
static bool whole_device_filesystem_wins(const char *fstype) {
        return streq(fstype, "iso9660") || streq(fstype, "udf");
}

static int probe_results(blkid_probe pr, SourceProbe *ret, UmError *error) {
        SourceProbe p = {};
        char usage[32], escaped[128];
        bool has_pt;

        has_pt = blkid_probe_has_value(pr, "PTTYPE");
        if (!lookup_value(pr, "TYPE", p.fstype, sizeof(p.fstype)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem type name is too long");
        if (has_pt && !(p.fstype[0] && whole_device_filesystem_wins(p.fstype)))
                return refuse_partition_table(pr, error);
        if (!p.fstype[0])
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        if (lookup_value(pr, "USAGE", usage, sizeof(usage)) && usage[0] &&
            !streq(usage, "filesystem"))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source holds %s (%s), which is not a mountable filesystem",
                                    um_escape(p.fstype, escaped, sizeof(escaped)), usage);
        if (!lookup_value(pr, "LABEL", p.label, sizeof(p.label)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem label is too long");
        if (!lookup_value(pr, "UUID", p.uuid, sizeof(p.uuid)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the filesystem UUID is too long");
        *ret = p;
        return 0;
}

/* fstype NULL: every superblock type and the partition tables; else that type only. */
static int probe(int fd, const char *fstype, SourceProbe *ret, UmError *error) {
        _cleanup_(blkid_free_probep) blkid_probe pr = NULL;
        _cleanup_close_ int probe_fd = -EBADF;
        int r;

        probe_fd = reopen_for_probe(fd, error);
        if (probe_fd < 0)
                return probe_fd;

        pr = blkid_new_probe();
        if (!pr)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM,
                                    "the filesystem probe could not be set up");
        if (blkid_probe_set_device(pr, probe_fd, 0, 0) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno > 0 ? errno : EIO,
                                    "the source could not be read for probing");
        blkid_probe_enable_superblocks(pr, 1);
        blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID |
                                                      BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
        if (fstype) {
                char *only[] = { (char *) fstype, NULL };

                if (blkid_probe_filter_superblocks_type(pr, BLKID_FLTR_ONLYIN, only) < 0)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM,
                                            "the filesystem probe could not be set up");
        } else {
                blkid_probe_enable_partitions(pr, 1);
                blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
        }

        r = blkid_do_safeprobe(pr);
        if (r == -2)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "more than one filesystem signature was found; the source "
                                    "is ambiguous and will not be mounted");
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno > 0 ? errno : EIO,
                                    "the source could not be read while probing it");
        if (r == 1)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        return probe_results(pr, ret, error);
}

int source_probe(int fd, SourceProbe *ret, UmError *error) {
        return probe(fd, NULL, ret, error);
}

int source_probe_as(int fd, const char *fstype, SourceProbe *ret, UmError *error) {
        if (isempty(fstype))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "no filesystem was recognised");
        return probe(fd, fstype, ret, error);
}
