/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Block devices named by path (Mount). device_open() turns a caller's string into an fd
 * without ever leaving /dev: the string is checked first, then resolved with
 * lookup_beneath() below an O_PATH fd of /dev, inspected with fstat() and sysfs while it is
 * still an O_PATH fd (so no driver's open() runs for a device that is refused), and only
 * then reopened for I/O. device_check_not_partitioned() and device_check_not_busy() decide
 * from sysfs, an exclusive open and the swap and mount tables whether the device may be
 * mounted at all.
 */
#include <dirent.h>
#include <fcntl.h>
#include <libmount/libmount.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/major.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "device.h"
#include "lookup.h"
#include "pathcheck.h"

/* Longer than any /dev/disk/by-* name udev makes (components are at most NAME_MAX). */
#define DEVICE_PATH_MAX 1024

/* How many partition names a message lists before it says "and N more". */
#define PARTITION_LIST_MAX 200

#define LOOP_HINT "mount the image file behind it instead: usermount mount IMAGE"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_table *, mnt_unref_table);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct libmnt_iter *, mnt_free_iter);

/* The caller's path (or any other string) made safe for a message. */
#ifndef BLKGETDISKSEQ
#define BLKGETDISKSEQ _IOR(0x12, 128, uint64_t)
#endif

static const char *esc(const char *s, char *buf, size_t n) {
        return um_escape(s, buf, n);
}

/* ---- the path string --------------------------------------------------------------- */

static bool has_control_characters(const char *path) {
        for (const unsigned char *p = (const unsigned char *) path; *p; p++) {
                if (*p < 0x20 || *p == 0x7f)
                        return true;
                /* C1 controls (U+0080..U+009F) in UTF-8: terminals treat some as escapes. */
                if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0)
                        return true;
        }
        return false;
}

static int path_too_long(UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                            "the device path is too long (%d bytes or more)", DEVICE_PATH_MAX);
}

/* Refuses a path that is not absolute and canonical (pathcheck.h), saying what is wrong. */
static int check_canonical(const char *path, const char *shown, UmError *error) {
        PathProblem problem = path_check_canonical(path, DEVICE_PATH_MAX);

        switch (problem) {
        case PATH_OK:
                return 0;
        case PATH_NOT_ABSOLUTE:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path \"%s\" is not absolute; name a block device "
                                    "such as /dev/sdb1", shown);
        case PATH_TOO_LONG:
                return path_too_long(error);
        case PATH_DOUBLE_SLASH:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path \"%s\" contains \"//\"; name the device by "
                                    "its canonical path", shown);
        case PATH_TRAILING_SLASH:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path \"%s\" ends with \"/\"; name a device, not a "
                                    "directory", shown);
        case PATH_DOT:
        case PATH_DOT_DOT:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path \"%s\" contains a \"%s\" "
                                    "component; name the device by its canonical path",
                                    shown, problem == PATH_DOT ? "." : "..");
        case PATH_LONG_NAME:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path has a component longer than %d "
                                    "bytes", NAME_MAX);
        }
        return -EINVAL;
}

/* The part of the path below /dev: "sdb1" or "disk/by-label/x", the only two shapes allowed. */
static bool is_allowed_shape(const char *rel) {
        const char *s1 = strchr(rel, '/'), *s2;

        if (!s1)
                return true; /* a node directly in /dev */
        if ((size_t) (s1 - rel) != 4 || strncmp(rel, "disk/", 5) != 0)
                return false;
        s2 = strchr(s1 + 1, '/');
        if (!s2 || strncmp(s1 + 1, "by-", 3) != 0 || s2 - s1 - 1 <= 3)
                return false;
        return !strchr(s2 + 1, '/');
}

int device_check_path(const char *path, UmError *error) {
        char shown[256];
        int r;

        if (isempty(path))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "no device path was given; name a block device such as "
                                    "/dev/sdb1");
        if (strnlen(path, DEVICE_PATH_MAX) >= DEVICE_PATH_MAX)
                return path_too_long(error);
        esc(path, shown, sizeof(shown));
        if (has_control_characters(path))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the device path \"%s\" contains control characters", shown);
        r = check_canonical(path, shown, error);
        if (r < 0)
                return r;
        if (strncmp(path, "/dev/", 5) != 0 || !path[5])
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "\"%s\" is not in /dev; name a block device such as /dev/sdb1, "
                                    "or mount an image with: usermount mount IMAGE", shown);
        if (!is_allowed_shape(path + 5))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "\"%s\" is neither a device node in /dev nor a "
                                    "/dev/disk/by-*/ link", shown);
        return 0;
}

/* ---- sysfs ------------------------------------------------------------------------- */

/* Reads the first line of a small sysfs or proc file into buf; false if it cannot be read. */
static bool read_first_line(const char *path, char *buf, size_t n) {
        _cleanup_(fclosep) FILE *f = NULL;

        f = fopen(path, "re");
        if (!f || !fgets(buf, (int) n, f))
                return false;
        buf[strcspn(buf, "\n")] = 0;
        return true;
}

static bool parse_devnum(const char *s, dev_t *ret) {
        unsigned maj, min;
        char end;

        if (sscanf(s, "%u:%u%c", &maj, &min, &end) != 2)
                return false;
        *ret = makedev(maj, min);
        return true;
}

/* The device's directory in sysfs (/sys/devices/...), resolved; owned by the caller. */
static int sysfs_device_dir(dev_t devnum, char **ret) {
        char path[64];
        char *dir;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(devnum), minor(devnum));
        dir = realpath(path, NULL);
        if (!dir)
                return errno == ENOENT ? -ENODEV : -errno;
        *ret = dir;
        return 0;
}

static bool sysfs_has(const char *dir, const char *entry) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, entry);
        return access(path, F_OK) == 0;
}

/* The whole disk a partition belongs to (its parent in sysfs), or devnum itself. */
static int sysfs_whole_disk(dev_t devnum, dev_t *ret) {
        _cleanup_free_ char *dir = NULL;
        char path[PATH_MAX], line[32];
        int r;

        r = sysfs_device_dir(devnum, &dir);
        if (r < 0)
                return r;
        if (!sysfs_has(dir, "partition")) {
                *ret = devnum;
                return 0;
        }
        snprintf(path, sizeof(path), "%s/../dev", dir);
        if (!read_first_line(path, line, sizeof(line)) || !parse_devnum(line, ret))
                return -ENODEV;
        return 0;
}

/* DEVNAME from the device's uevent: what devtmpfs calls the node below /dev. */
static int sysfs_devname(dev_t devnum, char **ret) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[64], line[NAME_MAX + 16];

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(devnum), minor(devnum));
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? -ENODEV : -errno;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                if (strncmp(line, "DEVNAME=", 8) != 0)
                        continue;
                _cleanup_free_ char *node = NULL;

                /* Kernel data, but it becomes a path: hold it to the caller's rules. */
                if (asprintf(&node, "/dev/%s", line + 8) < 0)
                        return -ENOMEM;
                if (device_check_path(node, NULL) < 0)
                        return -EINVAL;
                *ret = TAKE_PTR(node);
                return 0;
        }
        return -ENODEV;
}

/* The block major a driver registered under name (/proc/devices), or -ENOENT. */
static int block_major_by_name(const char *name) {
        _cleanup_(fclosep) FILE *f = NULL;
        char line[128], driver[64];
        bool block = false;
        unsigned maj;

        f = fopen("/proc/devices", "re");
        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f)) {
                if (strncmp(line, "Block devices:", 14) == 0)
                        block = true;
                else if (block && sscanf(line, "%u %63s", &maj, driver) == 2 &&
                         streq(driver, name))
                        return (int) maj;
        }
        return -ENOENT;
}

static bool major_is(dev_t devnum, const char *driver) {
        int maj = block_major_by_name(driver);

        return maj >= 0 && major(devnum) == (unsigned) maj;
}

/* ---- opening ----------------------------------------------------------------------- */

static int open_dev_dir(UmError *error) {
        int fd;

        fd = open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "/dev could not be opened");
        return fd;
}

/*
 * Opens an O_PATH fd for real I/O through its /proc/self/fd magic link: the same inode
 * in the same mount, no second path walk that could land elsewhere. O_NONBLOCK lets a
 * drive without a medium open; O_NOCTTY is belt and braces (only block devices get here).
 */
static int reopen_path_fd(int path_fd, int flags) {
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", path_fd);
        fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fd;
}

/* "points to /etc/passwd": the link's text for a message, or "" if it cannot be read. */
static void link_target(int dev_fd, const char *rel, char *buf, size_t n) {
        _cleanup_close_ int parent_fd = -EBADF;
        _cleanup_free_ char *dir = strdup(rel);
        char target[PATH_MAX], *slash;
        ssize_t l;

        buf[0] = 0;
        slash = dir ? strrchr(dir, '/') : NULL;
        if (!slash)
                return;
        *slash = 0;
        /* Only the directory holding the link is resolved, and that stays below /dev. */
        parent_fd = lookup_beneath(dev_fd, dir, O_PATH, 0);
        if (parent_fd < 0)
                return;
        l = readlinkat(parent_fd, slash + 1, target, sizeof(target) - 1);
        if (l <= 0)
                return;
        target[l] = 0;
        esc(target, buf, n);
}

/*
 * Resolves the caller's path below /dev. A node directly in /dev is looked up with
 * LOOKUP_NO_SYMLINKS (/dev/stdin, /dev/fd and friends are links into /proc). A
 * /dev/disk/by-* link is followed by lookup_beneath() itself, which fails with EXDEV the
 * moment any step (an absolute target, a ".." above /dev) would leave the /dev directory
 * fd, so "resolves inside /dev" is decided by the same walk that opens the file, with no
 * window between check and use.
 * udev writes these links as relative paths ("../../sdb1"); absolute targets are refused
 * even when they name something in /dev.
 */
static int resolve_in_dev(int dev_fd, const char *path, UmError *error) {
        const char *rel = path + 5;
        bool by_link = strchr(rel, '/') != NULL;
        char shown[256], target[256];
        int fd;

        fd = lookup_beneath(dev_fd, rel, O_PATH, by_link ? 0 : LOOKUP_NO_SYMLINKS);
        if (fd >= 0)
                return fd;

        esc(path, shown, sizeof(shown));
        switch (-fd) {
        case ENOENT:
        case ENOTDIR:
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENOENT,
                                    by_link ? "%s does not exist or points to nothing; is the "
                                              "device plugged in?" :
                                              "%s does not exist; is the device plugged in?",
                                    shown);
        case EXDEV:
                link_target(dev_fd, rel, target, sizeof(target));
                if (strncmp(target, "/dev/", 5) == 0)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                            "%s is an absolute link (to %s); only relative links "
                                            "that stay inside /dev, as udev makes them, are "
                                            "followed", shown, target);
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "%s leads outside /dev%s%s%s; only relative links that stay "
                                    "inside /dev, as udev makes them, are followed",
                                    shown, target[0] ? " (it points to " : "", target,
                                    target[0] ? ")" : "");
        case ELOOP:
                if (!by_link)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                            "%s is a symbolic link; name the device node it "
                                            "points to, or a /dev/disk/by-*/ link", shown);
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "%s could not be resolved: too many symbolic links, or a "
                                    "link into /proc", shown);
        default:
                return um_error_set(error, UM_ERROR_KIND_FAILED, -fd,
                                    "%s could not be looked up: %s", shown, strerror(-fd));
        }
}

static const char *file_type_name(mode_t mode) {
        switch (mode & S_IFMT) {
        case S_IFCHR:
                return " (it is a character device)";
        case S_IFDIR:
                return " (it is a directory)";
        case S_IFREG:
                return " (it is a regular file; mount images with: usermount mount IMAGE)";
        case S_IFIFO:
                return " (it is a FIFO)";
        case S_IFSOCK:
                return " (it is a socket)";
        default:
                return "";
        }
}

/*
 * Refuses loop devices and their partitions (images the caller could have made: they go
 * through MountFd, where the caller proves access with its own fd), and device-mapper and
 * md devices (stacked on other disks; what they expose is decided elsewhere). Loop
 * partitions have major 259 (blkext) when the loop driver has no max_part, so the whole
 * disk is what is checked; sysfs "loop/", "dm/" and "md/" cover renumbered majors.
 */
static int refuse_device_kind(dev_t devnum, const char *shown, UmError *error) {
        _cleanup_free_ char *dir = NULL, *whole_dir = NULL;
        dev_t whole;
        int r;

        r = sysfs_whole_disk(devnum, &whole);
        if (r >= 0)
                r = sysfs_device_dir(devnum, &dir);
        if (r >= 0)
                r = sysfs_device_dir(whole, &whole_dir);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENODEV,
                                    "%s is not a block device the kernel knows (it has no "
                                    "entry in /sys); is the device still plugged in?", shown);

        if (major(whole) == LOOP_MAJOR || sysfs_has(whole_dir, "loop"))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    whole == devnum ? "%s is a loop device; " LOOP_HINT :
                                                      "%s is a partition of a loop device; "
                                                      LOOP_HINT,
                                    shown);
        if (major_is(devnum, "device-mapper") || major_is(whole, "device-mapper") ||
            sysfs_has(dir, "dm") || sysfs_has(whole_dir, "dm"))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "%s is a device-mapper device; usermount mounts disks and "
                                    "their partitions only", shown);
        if (major(whole) == MD_MAJOR || major_is(whole, "md") || major_is(whole, "mdp") ||
            sysfs_has(dir, "md") || sysfs_has(whole_dir, "md"))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "%s is an md RAID device; usermount mounts disks and their "
                                    "partitions only", shown);
        return 0;
}

/*
 * The devtmpfs node of devnum: an O_PATH fd of /dev/<DEVNAME>, checked to be that very
 * block device, and its name (owned by the caller).
 */
static int open_canonical_node(int dev_fd, dev_t devnum, int *ret_fd, char **ret_node) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        struct stat st;
        int r;

        r = sysfs_devname(devnum, &node);
        if (r < 0)
                return r;
        fd = lookup_beneath(dev_fd, node + 5, O_PATH, LOOKUP_NO_SYMLINKS);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISBLK(st.st_mode) || st.st_rdev != devnum)
                return -ENXIO;
        *ret_fd = TAKE_FD(fd);
        *ret_node = TAKE_PTR(node);
        return 0;
}

static int open_for_io(int path_fd, bool read_only, const char *shown, UmError *error) {
        int fd;

        fd = reopen_path_fd(path_fd, read_only ? O_RDONLY : O_RDWR);
        if (fd >= 0)
                return fd;
        switch (-fd) {
        case EROFS:
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EROFS,
                                    "%s is read-only (write-protected?); mount it read-only",
                                    shown);
        case ENOMEDIUM:
        case ENXIO:
        case ENODEV:
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -fd,
                                    "%s has no medium or is gone; insert the medium and try again",
                                    shown);
        default:
                return um_error_set(error, UM_ERROR_KIND_FAILED, -fd, "%s could not be opened: %s",
                                    shown, strerror(-fd));
        }
}

int device_open(const char *path, bool read_only, int *ret_fd, char **ret_node, UmError *error) {
        return device_open_loop(path, read_only, 0, ret_fd, ret_node, error);
}

int device_open_loop(const char *path, bool read_only, uint64_t loop_diskseq, int *ret_fd,
                     char **ret_node, UmError *error) {
        _cleanup_close_ int dev_fd = -EBADF, path_fd = -EBADF, node_fd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        char shown[256];
        struct stat st, io;
        int r;

        r = device_check_path(path, error);
        if (r < 0)
                return r;
        esc(path, shown, sizeof(shown));

        dev_fd = open_dev_dir(error);
        if (dev_fd < 0)
                return dev_fd;
        path_fd = resolve_in_dev(dev_fd, path, error);
        if (path_fd < 0)
                return path_fd;
        if (fstat(path_fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "%s could not be inspected",
                                    shown);
        if (!S_ISBLK(st.st_mode))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENOTBLK,
                                    "%s is not a block device%s", shown, file_type_name(st.st_mode));
        /* The one loop device allowed: the binding the daemon names (checked once open). */
        if (loop_diskseq == 0 || major(st.st_rdev) != LOOP_MAJOR) {
                r = refuse_device_kind(st.st_rdev, shown, error);
                if (r < 0)
                        return r;
        }

        r = open_canonical_node(dev_fd, st.st_rdev, &node_fd, &node);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -r,
                                    "%s (device %u:%u) has no node of its kernel name in /dev; "
                                    "is the device still plugged in?",
                                    shown, major(st.st_rdev), minor(st.st_rdev));

        /* Only now, for a block device that passed every check, does a driver see an open. */
        fd = open_for_io(node_fd, read_only, shown, error);
        if (fd < 0)
                return fd;
        if (fstat(fd, &io) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "%s could not be inspected",
                                    shown);
        if (!S_ISBLK(io.st_mode) || io.st_rdev != st.st_rdev)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EBUSY,
                                    "%s changed while it was being opened; try again", shown);
        if (loop_diskseq != 0 && major(st.st_rdev) == LOOP_MAJOR) {
                uint64_t seq = 0;

                if (ioctl(fd, BLKGETDISKSEQ, &seq) < 0 || seq != loop_diskseq)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ESTALE,
                                            "%s is no longer the loop device that was set up "
                                            "for you; it was let go of and bound again", shown);
        }

        *ret_fd = TAKE_FD(fd);
        *ret_node = TAKE_PTR(node);
        return 0;
}

/* ---- partitions -------------------------------------------------------------------- */

static int compare_names(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

static void free_names(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/*
 * The partitions the kernel made of the whole disk at sysfs directory dir: its
 * subdirectories with a "partition" file ("sdb1", "loop0p1"), in natural order.
 */
static int sysfs_partitions(const char *dir, char ***ret, size_t *ret_n) {
        _cleanup_(closedirp) DIR *d = NULL;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;

        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char sub[NAME_MAX + 16];
                char **grown;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(sub, sizeof(sub), "%s/partition", de->d_name);
                if (faccessat(dirfd(d), sub, F_OK, 0) < 0)
                        continue;
                grown = realloc(names, (n + 1) * sizeof(char *));
                if (!grown) {
                        free_names(names, n);
                        return -ENOMEM;
                }
                names = grown;
                names[n] = strdup(de->d_name);
                if (!names[n]) {
                        free_names(names, n);
                        return -ENOMEM;
                }
                n++;
        }
        if (n > 1)
                qsort(names, n, sizeof(char *), compare_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

/* "sdb1, sdb2" (escaped), shortened to "sdb1, sdb2 and 30 more" when it would not fit. */
static void join_names(char *const *names, size_t n, char *buf, size_t size) {
        size_t o = 0, i;

        buf[0] = 0;
        for (i = 0; i < n; i++) {
                char e[64];

                esc(names[i], e, sizeof(e));
                if (o + strlen(e) + 2 >= PARTITION_LIST_MAX)
                        break;
                o += snprintf(buf + o, size - o, "%s%s", i ? ", " : "", e);
        }
        if (i < n)
                snprintf(buf + o, size - o, " and %zu more", n - i);
}

/*
 * Only partitions the kernel knows are seen here. A whole disk whose content is a partition
 * table the kernel did not split (a kernel without that table's parser, a loop device
 * without LO_FLAGS_PARTSCAN, a table written after the last rescan) passes this check and
 * is refused by source_probe(), which finds the table with libblkid.
 */
int device_check_not_partitioned(dev_t devnum, UmError *error) {
        _cleanup_free_ char *dir = NULL, *node = NULL;
        char **names = NULL;
        char list[PARTITION_LIST_MAX + 32], shown[128];
        size_t n = 0;
        int r;

        r = sysfs_device_dir(devnum, &dir);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -r,
                                    "the device %u:%u is gone; is it still plugged in?",
                                    major(devnum), minor(devnum));
        if (sysfs_has(dir, "partition"))
                return 0;
        r = sysfs_partitions(dir, &names, &n);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "the partitions of device %u:%u could not be listed",
                                    major(devnum), minor(devnum));
        if (n == 0) {
                free(names);
                return 0;
        }

        join_names(names, n, list, sizeof(list));
        free_names(names, n);
        if (sysfs_devname(devnum, &node) < 0)
                snprintf(shown, sizeof(shown), "the disk %u:%u", major(devnum), minor(devnum));
        else
                esc(node, shown, sizeof(shown));
        if (n == 1)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "%s has a partition, %s; mount the partition instead", shown,
                                    list);
        return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                            "%s has partitions %s; mount one of them", shown, list);
}

/* ---- busy -------------------------------------------------------------------------- */

/* Whether /proc/swaps lists devnum (by its node name, or a block node with that number). */
static bool used_as_swap(dev_t devnum, const char *node) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        _cleanup_(mnt_free_iterp) struct libmnt_iter *it = NULL;
        struct libmnt_fs *fs;

        tb = mnt_new_table();
        it = mnt_new_iter(MNT_ITER_FORWARD);
        if (!tb || !it || mnt_table_parse_swaps(tb, NULL) < 0)
                return false;
        while (mnt_table_next_fs(tb, it, &fs) == 0) {
                const char *src = mnt_fs_get_source(fs);
                struct stat st;

                if (streq_ptr(src, node))
                        return true;
                /* stat(), not open(): a swap file's path never reaches a driver. */
                if (src && streq_ptr(mnt_fs_get_swaptype(fs), "partition") && stat(src, &st) == 0 &&
                    S_ISBLK(st.st_mode) && st.st_rdev == devnum)
                        return true;
        }
        return false;
}

/* What kind of device a holder is, from its sysfs directory. */
static const char *holder_kind(const char *name) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "/sys/class/block/%s/dm", name);
        if (access(path, F_OK) == 0)
                return "device-mapper";
        snprintf(path, sizeof(path), "/sys/class/block/%s/md", name);
        if (access(path, F_OK) == 0)
                return "md RAID";
        snprintf(path, sizeof(path), "/sys/class/block/%s/bcache", name);
        if (access(path, F_OK) == 0)
                return "bcache";
        return NULL;
}

/* "dm-0 (device-mapper), md0 (md RAID)" from sysfs holders/; false if there are none. */
static bool held_by(dev_t devnum, char *buf, size_t size) {
        _cleanup_(closedirp) DIR *d = NULL;
        char path[64];
        struct dirent *de;
        size_t o = 0;

        buf[0] = 0;
        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/holders", major(devnum), minor(devnum));
        d = opendir(path);
        if (!d)
                return false;
        while ((de = readdir(d)) && o + 1 < size) {
                const char *kind;
                char e[64];
                int l;

                if (de->d_name[0] == '.')
                        continue;
                kind = holder_kind(de->d_name);
                esc(de->d_name, e, sizeof(e));
                l = snprintf(buf + o, size - o, "%s%s%s%s%s", o ? ", " : "", e,
                             kind ? " (" : "", strempty(kind), kind ? ")" : "");
                o = l < 0 ? size : o + (size_t) l; /* a cut-off list ends the loop */
        }
        return o > 0;
}

/*
 * Where devnum is mounted in this mount namespace, or false. mountinfo's major:minor is
 * the superblock's s_dev, which btrfs replaces with an anonymous number, so the source
 * path is matched as well.
 */
bool device_mountinfo_find(FILE *mountinfo, dev_t devnum, const char *node, char *buf,
                           size_t size) {
        _cleanup_(mnt_unref_tablep) struct libmnt_table *tb = NULL;
        struct libmnt_fs *fs;

        /* The name makes libmount read a procfs stream whole first, as from a file name. */
        tb = mnt_new_table();
        if (!tb || mnt_table_parse_stream(tb, mountinfo, "/proc/self/mountinfo") != 0)
                return false;
        fs = mnt_table_find_devno(tb, devnum, MNT_ITER_FORWARD);
        if (!fs)
                fs = mnt_table_find_srcpath(tb, node, MNT_ITER_FORWARD);
        if (!fs || !mnt_fs_get_target(fs))
                return false;
        esc(mnt_fs_get_target(fs), buf, size);
        return true;
}

static bool mounted_at(dev_t devnum, const char *node, char *buf, size_t size) {
        _cleanup_(fclosep) FILE *f = fopen("/proc/self/mountinfo", "re");

        return f && device_mountinfo_find(f, devnum, node, buf, size);
}

/* Why devnum (called node) is busy: "is in use as swap", "is held by ...", "is mounted at". */
static bool busy_reason(dev_t devnum, const char *node, char *buf, size_t size) {
        char what[256];

        if (used_as_swap(devnum, node)) {
                snprintf(buf, size, "is in use as swap");
                return true;
        }
        if (held_by(devnum, what, sizeof(what))) {
                snprintf(buf, size, "is held by %s", what);
                return true;
        }
        if (mounted_at(devnum, node, what, sizeof(what))) {
                snprintf(buf, size, "is mounted at %s", what);
                return true;
        }
        return false;
}

/*
 * An exclusive claim on a partition also blocks the whole disk and the other way round, so
 * the reason may sit one level up or down: "its partition /dev/sdb1 is mounted at /x".
 */
static bool related_busy_reason(dev_t devnum, char *buf, size_t size) {
        _cleanup_free_ char *dir = NULL;
        char **names = NULL;
        char reason[384], e[128];
        size_t n = 0;
        bool found = false;
        dev_t whole;

        if (sysfs_whole_disk(devnum, &whole) < 0 || sysfs_device_dir(devnum, &dir) < 0)
                return false;
        if (whole != devnum) {
                _cleanup_free_ char *node = NULL;

                if (sysfs_devname(whole, &node) < 0 || !busy_reason(whole, node, reason,
                                                                     sizeof(reason)))
                        return false;
                snprintf(buf, size, "its disk %s %s", esc(node, e, sizeof(e)), reason);
                return true;
        }
        if (sysfs_partitions(dir, &names, &n) < 0)
                return false;
        for (size_t i = 0; i < n && !found; i++) {
                _cleanup_free_ char *node = NULL;
                char path[PATH_MAX], line[32];
                dev_t part;

                snprintf(path, sizeof(path), "%s/%s/dev", dir, names[i]);
                if (!read_first_line(path, line, sizeof(line)) || !parse_devnum(line, &part) ||
                    sysfs_devname(part, &node) < 0 || !busy_reason(part, node, reason,
                                                                    sizeof(reason)))
                        continue;
                snprintf(buf, size, "its partition %s %s", esc(node, e, sizeof(e)), reason);
                found = true;
        }
        free_names(names, n);
        return found;
}

static int refuse_busy(dev_t devnum, const char *node, UmError *error) {
        char reason[400], shown[128];

        esc(node, shown, sizeof(shown));
        if (busy_reason(devnum, node, reason, sizeof(reason)))
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "%s %s", shown,
                                    reason);
        if (related_busy_reason(devnum, reason, sizeof(reason)))
                return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "%s is in use: %s",
                                    shown, reason);
        return um_error_set(error, UM_ERROR_KIND_DEVICE_BUSY, EBUSY,
                            "%s is mounted or in use (perhaps in another mount namespace)", shown);
}

/*
 * A mount (in any mount namespace, attached or not: the superblock holds the device),
 * swapon, device-mapper, md and other exclusive openers all claim the block device; an
 * O_EXCL open of it then fails with EBUSY. The probe takes the claim for the length of one
 * open() and close() and never keeps it. The tables only explain a refusal afterwards.
 */
int device_check_not_busy(dev_t devnum, UmError *error) {
        _cleanup_close_ int dev_fd = -EBADF, path_fd = -EBADF, excl_fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        int r;

        dev_fd = open_dev_dir(error);
        if (dev_fd < 0)
                return dev_fd;
        r = open_canonical_node(dev_fd, devnum, &path_fd, &node);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, -r,
                                    "the device %u:%u has no node of its kernel name in /dev; is "
                                    "it still plugged in?", major(devnum), minor(devnum));
        excl_fd = reopen_path_fd(path_fd, O_RDONLY | O_EXCL);
        if (excl_fd >= 0)
                return 0;
        if (excl_fd != -EBUSY) {
                char shown[128];

                return um_error_set(error, UM_ERROR_KIND_FAILED, -excl_fd,
                                    "%s could not be opened to check whether it is in use: %s",
                                    esc(node, shown, sizeof(shown)), strerror(-excl_fd));
        }
        return refuse_busy(devnum, node, error);
}

/* ---- checks of a device the caller passed as an fd ------------------------------------ */

int device_check_kind(dev_t devnum, UmError *error) {
        _cleanup_free_ char *node = NULL;
        char shown[128];

        if (sysfs_devname(devnum, &node) < 0)
                snprintf(shown, sizeof(shown), "the device %u:%u", major(devnum), minor(devnum));
        else
                esc(node, shown, sizeof(shown));
        return refuse_device_kind(devnum, shown, error);
}

int device_check_not_listed_busy(dev_t devnum, UmError *error) {
        _cleanup_free_ char *node = NULL;
        char reason[400];

        if (sysfs_devname(devnum, &node) < 0)
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, ENODEV,
                                    "the device %u:%u has no entry in /sys; is it still "
                                    "plugged in?", major(devnum), minor(devnum));
        if (busy_reason(devnum, node, reason, sizeof(reason)) ||
            related_busy_reason(devnum, reason, sizeof(reason)))
                return refuse_busy(devnum, node, error);
        return 0;
}

bool device_is_read_only(int fd) {
        int ro = 0;

        return ioctl(fd, BLKROGET, &ro) >= 0 && ro;
}
