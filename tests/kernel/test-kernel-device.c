/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * device_open(), device_check_not_partitioned() and device_check_not_busy() on the real
 * kernel: the path table, character devices and symlinks in /dev, /dev/disk/by-* links
 * (made in a private overlay of /dev) that stay inside /dev or leave it, loop devices and
 * their partitions, a whole disk with partitions, and a device mounted here, mounted in
 * another mount namespace, held by a detached mount, used as swap, claimed by another
 * exclusive opener, or free. Every loop device is autoclear, every mount private, every
 * swap area switched off again before anything is asserted.
 */
#include <blkid/blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/blkpg.h>
#include <linux/loop.h>
#include <linux/major.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "device.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"

#define LOOP_HINT "mount the image file behind it instead: usermount mount IMAGE"

/* ---- helpers ----------------------------------------------------------------------- */

static dev_t rdev_of(const char *path) {
        struct stat st;

        g_assert_cmpint(stat(path, &st), ==, 0);
        g_assert_true(S_ISBLK(st.st_mode));
        return st.st_rdev;
}

/* A refusal: the errno, the error class, a sentence containing want, and outputs untouched. */
static void assert_refused(int r, const UmError *e, int err, UmErrorKind kind, const char *want) {
        g_assert_cmpint(r, ==, -err);
        g_assert_cmpint(e->error, ==, err);
        g_assert_cmpint(e->kind, ==, kind);
        if (!strstr(e->message, want))
                g_error("message \"%s\" does not contain \"%s\"", e->message, want);
}

static void assert_open_refused(const char *path, int err, UmErrorKind kind, const char *want) {
        _cleanup_free_ char *node = NULL;
        UmError e = {};
        int fd = -1234, fds = ku_count_fds();
        char shown[128];

        g_assert_cmpint(device_open(path, true, &fd, &node, &e), ==, -err);
        assert_refused(-err, &e, err, kind, want);
        g_assert_cmpint(fd, ==, -1234);
        g_assert_null(node);
        g_assert_cmpint(ku_count_fds(), ==, fds);
        ku_note("%s -> %s", um_escape(path, shown, sizeof(shown)), e.message);
}

/* An accepted device: a block fd with the right flags for the device at expect_node. */
static void assert_opens(const char *path, bool read_only, const char *expect_node) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *node = NULL;
        UmError e = {};
        struct stat st;
        int flags, r;

        r = device_open(path, read_only, &fd, &node, &e);
        if (r < 0)
                g_error("device_open(%s) failed: %s", path, e.message);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        g_assert_cmpstr(node, ==, expect_node);
        g_assert_cmpint(fstat(fd, &st), ==, 0);
        g_assert_true(S_ISBLK(st.st_mode));
        g_assert_cmpuint(st.st_rdev, ==, rdev_of(expect_node));
        flags = fcntl(fd, F_GETFL);
        g_assert_cmpint(flags & O_ACCMODE, ==, read_only ? O_RDONLY : O_RDWR);
        g_assert_true(flags & O_NONBLOCK);
        g_assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        /* The daemon's open is not exclusive: the device can still be checked and claimed. */
        g_assert_cmpint(device_check_not_busy(st.st_rdev, &e), ==, 0);
}

static void assert_busy(dev_t devnum, const char *want) {
        UmError e = {};
        int r, fds = ku_count_fds();

        r = device_check_not_busy(devnum, &e);
        assert_refused(r, &e, EBUSY, UM_ERROR_KIND_DEVICE_BUSY, want);
        g_assert_cmpint(ku_count_fds(), ==, fds);
        ku_note("%u:%u -> %s", major(devnum), minor(devnum), e.message);
}

/* /dev/<DEVNAME> of a device, from sysfs (there is no /dev/block/M:m without udev). */
static char *node_of(dev_t devnum) {
        g_autofree char *uevent = g_strdup_printf("/sys/dev/block/%u:%u/uevent", major(devnum),
                                                  minor(devnum));
        g_autofree char *text = NULL;
        char *name;

        g_assert_true(g_file_get_contents(uevent, &text, NULL, NULL));
        name = strstr(text, "DEVNAME=");
        g_assert_nonnull(name);
        name[8 + strcspn(name + 8, "\n")] = 0;
        return g_strdup_printf("/dev/%s", name + 8);
}

static void assert_free(dev_t devnum) {
        _cleanup_close_ int fd = -EBADF;
        g_autofree char *node = node_of(devnum);
        UmError e = {};
        int r;

        r = device_check_not_busy(devnum, &e);
        if (r < 0)
                g_error("%s is not free: %s", node, e.message);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        /* The check never keeps its exclusive claim. */
        fd = open(node, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
}

/* A loop device on the named test image, read-only, autoclear: freed when fd closes. */
static int attach_image(const char *image, char **ret_path) {
        _cleanup_close_ int image_fd = open(image, O_RDONLY | O_CLOEXEC);
        UmError e = {};
        int fd = -EBADF;

        g_assert_cmpint(image_fd, >=, 0);
        if (loop_attach(image_fd, true, &fd, ret_path, &e) < 0)
                g_error("loop_attach: %s", e.message);
        return fd;
}

/*
 * The kernel's partitions of a disk image, made the way a partitioned stick shows up: the
 * loop device is configured with LO_FLAGS_PARTSCAN; when the kernel has no parser for the
 * table (this one is built without CONFIG_MSDOS_PARTITION and CONFIG_EFI_PARTITION), the
 * partitions libblkid reads are added with BLKPG_ADD_PARTITION, as partx -a does.
 */
static void add_missing_partitions(int loop_fd, const char *loop_path, const char *image) {
        blkid_probe pr = blkid_new_probe_from_filename(image);
        blkid_partlist parts;
        int n;

        g_assert_nonnull(pr);
        parts = blkid_probe_get_partitions(pr);
        g_assert_nonnull(parts);
        n = blkid_partlist_numof_partitions(parts);
        g_assert_cmpint(n, >, 0);
        for (int i = 0; i < n; i++) {
                blkid_partition p = blkid_partlist_get_partition(parts, i);
                int pno = blkid_partition_get_partno(p);
                g_autofree char *node = g_strdup_printf("%sp%d", loop_path, pno);
                struct blkpg_partition part = {
                        .start = (long long) blkid_partition_get_start(p) * 512,
                        .length = (long long) blkid_partition_get_size(p) * 512,
                        .pno = pno,
                };
                struct blkpg_ioctl_arg arg = {
                        .op = BLKPG_ADD_PARTITION,
                        .datalen = sizeof(part),
                        .data = &part,
                };

                if (access(node, F_OK) == 0)
                        continue; /* the kernel's own scan made it */
                g_assert_cmpint(ioctl(loop_fd, BLKPG, &arg), ==, 0);
                g_assert_cmpint(access(node, F_OK), ==, 0);
        }
        blkid_free_probe(pr);
}

static int attach_partitioned(const char *image, bool read_only, char **ret_path) {
        _cleanup_close_ int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        _cleanup_close_ int image_fd = open(image, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        struct loop_config config = {
                .info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_PARTSCAN |
                                 (read_only ? LO_FLAGS_READ_ONLY : 0),
        };

        g_assert_cmpint(control, >=, 0);
        g_assert_cmpint(image_fd, >=, 0);
        config.fd = (uint32_t) image_fd;
        for (int attempt = 0; attempt < 32; attempt++) {
                int nr = ioctl(control, LOOP_CTL_GET_FREE);
                g_autofree char *path = g_strdup_printf("/dev/loop%d", nr);
                int fd;

                g_assert_cmpint(nr, >=, 0);
                fd = open(path, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                if (ioctl(fd, LOOP_CONFIGURE, &config) < 0) {
                        g_assert_cmpint(errno, ==, EBUSY); /* another process took it */
                        close(fd);
                        continue;
                }
                add_missing_partitions(fd, path, image);
                *ret_path = g_steal_pointer(&path);
                return fd;
        }
        g_error("no free loop device after 32 attempts");
}

/*
 * Closes the last fd of an autoclear loop device and waits (bounded) until the kernel has
 * unbound it from its image and removed its partitions. Other loop devices of the test may
 * still be bound; ku_add() checks that none is left at the end.
 */
static void detach(int fd, const char *loop_path) {
        g_autofree char *base = g_path_get_basename(loop_path);
        g_autofree char *p1 = g_strdup_printf("/sys/class/block/%sp1", base);
        g_autofree char *image = ku_loop_attr(loop_path, "loop/backing_file");
        gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;

        g_assert_nonnull(image);
        close(fd);
        for (;;) {
                g_autofree char *now = ku_loop_attr(loop_path, "loop/backing_file");

                if (!streq_ptr(now, image) && access(p1, F_OK) < 0)
                        break;
                g_assert_cmpint(g_get_monotonic_time(), <, deadline);
                g_usleep(10 * 1000);
        }
}

/* A private copy of a test image (removed by the caller with unlink()). */
static char *copy_image(const char *name, const char *copy_name) {
        g_autofree char *data = NULL;
        char *copy = g_build_filename(ku_dir(), copy_name, NULL);
        gsize len;

        g_assert_true(g_file_get_contents(ku_image(name), &data, &len, NULL));
        g_assert_true(g_file_set_contents(copy, data, (gssize) len, NULL));
        return copy;
}

/* The full path of a tool (PATH, then the sbin directories a test runner may lack), or NULL. */
static char *tool_path(const char *name) {
        static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
        char *p = g_find_program_in_path(name);

        for (size_t i = 0; !p && i < ELEMENTSOF(dirs); i++) {
                g_autofree char *c = g_build_filename(dirs[i], name, NULL);

                if (access(c, X_OK) == 0)
                        p = g_steal_pointer(&c);
        }
        return p;
}

static bool have_tool(const char *name) {
        g_autofree char *p = tool_path(name);

        return p != NULL;
}

/* Runs tool with args (NULL-terminated, at most 7) and asserts it succeeded. */
static void run_tool(const char *tool, const char *const *args) {
        g_autofree char *path = tool_path(tool);
        g_autoptr(GError) err = NULL;
        const char *argv[8] = { path };
        g_autofree char *errout = NULL;
        int status = 0;

        g_assert_nonnull(path);
        for (size_t i = 0; args[i]; i++) {
                g_assert_cmpuint(i + 2, <, ELEMENTSOF(argv));
                argv[i + 1] = args[i];
        }
        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                   NULL, NULL, &errout, &status, &err));
        g_assert_no_error(err);
        if (!g_spawn_check_wait_status(status, &err))
                g_error("%s failed: %s\n%s", tool, err->message, errout);
}

static char *make_mount_dir(void) {
        char *dir = g_build_filename(ku_dir(), "mnt-XXXXXX", NULL);

        g_assert_nonnull(g_mkdtemp(dir));
        return dir;
}

static void remove_mount_dir(char *dir) {
        g_assert_cmpint(rmdir(dir), ==, 0);
        g_free(dir);
}

static bool sysfs_is(const char *name, const char *entry) {
        g_autofree char *p = g_strdup_printf("/sys/class/block/%s/%s", name, entry);

        return access(p, F_OK) == 0;
}

/*
 * A block device that is not a loop, dm or md device, that this process may open and that
 * nobody holds (a brief O_EXCL open succeeds): the subject of the tests that must see a
 * device accepted. Returns "/dev/NAME" or NULL.
 * (On the development VM the root disk vda refuses every open with EPERM, a policy of the
 * sandbox, and zram0 is used.)
 */
static char *find_plain_disk(void) {
        g_autoptr(GDir) d = g_dir_open("/sys/class/block", 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                g_autofree char *node = g_strdup_printf("/dev/%s", name);
                int fd;

                if (g_str_has_prefix(name, "loop") || sysfs_is(name, "dm") ||
                    sysfs_is(name, "md") || sysfs_is(name, "partition"))
                        continue;
                fd = open(node, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0)
                        continue;
                close(fd);
                return g_steal_pointer(&node);
        }
        return NULL;
}

/* ---- paths ------------------------------------------------------------------------- */

typedef struct PathCase {
        const char *path;
        const char *want; /* NULL: the string is acceptable */
} PathCase;

static void test_path_table(const char *arg) {
        g_autofree char *overlong = g_strnfill(4096, 'a');
        g_autofree char *long_path = g_strconcat("/dev/", overlong, NULL);
        g_autofree char *b256 = g_strnfill(256, 'b'), *c255 = g_strnfill(255, 'c');
        g_autofree char *long_name = g_strconcat("/dev/", b256, NULL);
        g_autofree char *max_name = g_strconcat("/dev/disk/by-label/", c255, NULL);
        const PathCase cases[] = {
                { "", "no device path was given" },
                { "dev/sda", "is not absolute" },
                { "sda", "is not absolute" },
                { "./sda", "is not absolute" },
                { "/", "is not in /dev" },
                { "/dev", "is not in /dev" },
                { "/dev/", "ends with \"/\"" },
                { "/devices/sda", "is not in /dev" },
                { "/dev//null", "contains \"//\"" },
                { "//dev/null", "contains \"//\"" },
                { "/dev/null/", "ends with \"/\"" },
                { "/dev/./null", "contains a \".\" component" },
                { "/dev/../etc/passwd", "contains a \"..\" component" },
                { "/dev/disk/../null", "contains a \"..\" component" },
                { "/dev/disk/by-label/..", "contains a \"..\" component" },
                { "/dev/sd\na", "control characters" },
                { "/dev/sda\t", "control characters" },
                { "/dev/\x1b[31msda", "control characters" },
                { "/dev/sda\x7f", "control characters" },
                { "/dev/sda\xc2\x9b", "control characters" },
                { "/proc/self/fd/0", "is not in /dev" },
                { "/etc/passwd", "is not in /dev" },
                { "/sys/dev/block/7:0", "is not in /dev" },
                { "/tmp/disk.img", "usermount mount IMAGE" },
                { "/dev/fd/0", "neither a device node in /dev" },
                { "/dev/shm/x", "neither a device node in /dev" },
                { "/dev/mapper/vg-lv", "neither a device node in /dev" },
                { "/dev/disk/by-label", "neither a device node in /dev" },
                { "/dev/disk/label/x", "neither a device node in /dev" },
                { "/dev/disk/by-/x", "neither a device node in /dev" },
                { "/dev/disk/by-label/x/y", "neither a device node in /dev" },
                { "/dev/disks/by-label/x", "neither a device node in /dev" },
                { long_path, "too long" },
                { long_name, "longer than 255" },
                { "/dev/sdb1", NULL },
                { "/dev/nvme0n1p1", NULL },
                { "/dev/disk/by-label/x", NULL },
                { "/dev/disk/by-id/usb-a..b-0:0-part1", NULL },
                { "/dev/disk/by-label/My\\x20Stick", NULL },
                { "/dev/disk/by-partuuid/0a1b-01", NULL },
                { max_name, NULL },
                { "/dev/..a", NULL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                UmError e = {};
                int r = device_check_path(cases[i].path, &e);

                if (!cases[i].want) {
                        if (r < 0)
                                g_error("\"%s\" was refused: %s", cases[i].path, e.message);
                        continue;
                }
                assert_refused(r, &e, EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT, cases[i].want);
                /* Caller data never reaches the message raw. */
                g_assert_null(strpbrk(e.message, "\n\t\x1b\x7f"));
                g_assert_null(strstr(e.message, "\xc2\x9b"));
                assert_open_refused(cases[i].path, EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT,
                                    cases[i].want);
        }
        {
                UmError e = {};

                assert_refused(device_check_path(NULL, &e), &e, EINVAL,
                               UM_ERROR_KIND_INVALID_ARGUMENT, "no device path");
                g_assert_cmpint(device_check_path("/dev/../x", NULL), ==, -EINVAL);
        }
        assert_open_refused(NULL, EINVAL, UM_ERROR_KIND_INVALID_ARGUMENT, "no device path");
}

static void test_open_not_block(const char *arg) {
        assert_open_refused("/dev/null", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "/dev/null is not a block device (it is a character device)");
        assert_open_refused("/dev/zero", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "is not a block device");
        assert_open_refused("/dev/loop-control", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "is not a block device");
        assert_open_refused("/dev/pts", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "is not a block device (it is a directory)");
        if (access("/dev/tty", F_OK) == 0)
                assert_open_refused("/dev/tty", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                                    "/dev/tty is not a block device");
        if (access("/dev/tty0", F_OK) == 0)
                assert_open_refused("/dev/tty0", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                                    "/dev/tty0 is not a block device");
}

static void test_open_missing(const char *arg) {
        assert_open_refused("/dev/usermount-no-such-device", ENOENT, UM_ERROR_KIND_INVALID_SOURCE,
                            "does not exist");
        assert_open_refused("/dev/disk/by-label/usermount-no-such-label", ENOENT,
                            UM_ERROR_KIND_INVALID_SOURCE, "does not exist");
}

/* Symlinks directly in /dev (/dev/stdin -> /proc/self/fd/0) are never followed. */
static void test_open_dev_symlinks(const char *arg) {
        const char *const links[] = { "/dev/stdin", "/dev/stdout", "/dev/fd", "/dev/core" };
        int n = 0;

        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                struct stat st;

                if (lstat(links[i], &st) < 0 || !S_ISLNK(st.st_mode))
                        continue;
                assert_open_refused(links[i], EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                                    "is a symbolic link");
                n++;
        }
        g_assert_cmpint(n, >, 0); /* main() registers this test only when there is one */
}

static void test_open_loop(const char *arg) {
        _cleanup_free_ char *path = NULL;
        int fd = attach_image(ku_image("ext4"), &path);
        _cleanup_free_ char *node = NULL;
        UmError e = {};
        int out = -1234;

        assert_open_refused(path, EINVAL, UM_ERROR_KIND_INVALID_SOURCE, "is a loop device; " LOOP_HINT);
        /* Read-write makes no difference, and nothing was opened for writing. */
        assert_refused(device_open(path, false, &out, &node, &e), &e, EINVAL,
                       UM_ERROR_KIND_INVALID_SOURCE, "usermount mount IMAGE");
        g_assert_cmpint(out, ==, -1234);
        /* A free loop device is refused as well: it is the caller's choice that is refused. */
        assert_open_refused("/dev/loop0", EINVAL, UM_ERROR_KIND_INVALID_SOURCE, "is a loop device");
        detach(fd, path);
}

static void test_open_disk(const char *arg) {
        g_autofree char *disk = find_plain_disk();

        g_assert_nonnull(disk); /* main() registers this test only when there is one */
        ku_note("accepting %s", disk);
        assert_opens(disk, true, disk);
        assert_opens(disk, false, disk);
}

/* ---- /dev/disk/by-* links ---------------------------------------------------------- */

/*
 * Makes /dev an overlay (private to this test's mount namespace) of the real /dev, with
 * an upper layer on a tmpfs, so /dev/disk/by-* links can be made without udev and without
 * touching the host's /dev. Device nodes opened through the overlay are the real devices.
 */
static bool host_had_dev_disk; /* /dev/disk before the overlay: a host with udevd has one */

static char *overlay_dev(void) {
        char *base = g_build_filename(ku_dir(), "devov", NULL);
        g_autofree char *upper = g_build_filename(base, "upper", NULL);
        g_autofree char *work = g_build_filename(base, "work", NULL);
        g_autofree char *opts = NULL;

        host_had_dev_disk = access("/dev/disk", F_OK) == 0;
        g_assert_cmpint(mkdir(base, 0700), ==, 0);
        g_assert_cmpint(mount("tmpfs", base, "tmpfs", 0, "mode=0700"), ==, 0);
        opts = g_strdup_printf("lowerdir=/dev,upperdir=%s,workdir=%s", upper, work);
        g_assert_cmpint(mkdir(upper, 0755), ==, 0);
        g_assert_cmpint(mkdir(work, 0755), ==, 0);
        g_assert_cmpint(mount("overlay", "/dev", "overlay", 0, opts), ==, 0);
        for (const char *const *d = (const char *const[]) { "by-label", "by-id", "by-uuid",
                                                            "by-path", NULL };
             *d; d++) {
                g_autofree char *p = g_strdup_printf("/dev/disk/%s", *d);

                g_assert_cmpint(g_mkdir_with_parents(p, 0755), ==, 0);
        }
        return base;
}

static void remove_overlay_dev(char *base) {
        g_assert_cmpint(umount("/dev"), ==, 0);
        g_assert_cmpint(umount(base), ==, 0);
        g_assert_cmpint(rmdir(base), ==, 0);
        /* The links went with the overlay: the host's /dev is as it was. */
        g_assert_cmpint(access("/dev/disk", F_OK) == 0, ==, host_had_dev_disk);
        g_free(base);
}

static void link_in_dev(const char *target, const char *link) {
        g_assert_cmpint(symlink(target, link), ==, 0);
}

static void test_open_by_link(const char *arg) {
        _cleanup_free_ char *loop_path = NULL;
        g_autofree char *disk = find_plain_disk();
        g_autofree char *loop_base = NULL, *part_target = NULL, *disk_target = NULL;
        g_autofree char *abs_target = NULL, *abs_want = NULL;
        int loop_fd = attach_partitioned(ku_image("parted"), true, &loop_path);
        char *base;

        /* The partitions exist before the overlay is made: its lower layer shows them. */
        base = overlay_dev();
        loop_base = g_path_get_basename(loop_path);
        part_target = g_strdup_printf("../../%sp1", loop_base);

        link_in_dev("/etc/passwd", "/dev/disk/by-label/abs-out");
        link_in_dev("../../../etc/passwd", "/dev/disk/by-label/rel-out");
        link_in_dev("../../../../../../../../etc/passwd", "/dev/disk/by-label/deep-out");
        link_in_dev("/proc/self/fd/0", "/dev/disk/by-id/proc");
        link_in_dev("../../stdin", "/dev/disk/by-id/via-stdin");
        link_in_dev("../../null", "/dev/disk/by-id/null");
        link_in_dev("../../shm", "/dev/disk/by-id/dir");
        link_in_dev("../../usermount-nothing", "/dev/disk/by-id/dangling");
        link_in_dev("loop", "/dev/disk/by-id/loop");
        link_in_dev(part_target, "/dev/disk/by-uuid/loop-part");
        link_in_dev("../by-uuid/loop-part", "/dev/disk/by-path/chain-to-loop");

        assert_open_refused("/dev/disk/by-label/abs-out", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "leads outside /dev (it points to /etc/passwd)");
        assert_open_refused("/dev/disk/by-label/rel-out", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "leads outside /dev (it points to ../../../etc/passwd)");
        assert_open_refused("/dev/disk/by-label/deep-out", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "leads outside /dev");
        assert_open_refused("/dev/disk/by-id/proc", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "leads outside /dev");
        assert_open_refused("/dev/disk/by-id/via-stdin", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "leads outside /dev");
        assert_open_refused("/dev/disk/by-id/null", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "/dev/disk/by-id/null is not a block device");
        assert_open_refused("/dev/disk/by-id/dir", ENOTBLK, UM_ERROR_KIND_INVALID_SOURCE,
                            "is not a block device (it is a directory)");
        assert_open_refused("/dev/disk/by-id/dangling", ENOENT, UM_ERROR_KIND_INVALID_SOURCE,
                            "does not exist or points to nothing");
        assert_open_refused("/dev/disk/by-id/loop", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "too many symbolic links");
        assert_open_refused("/dev/disk/by-uuid/loop-part", EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "is a partition of a loop device; " LOOP_HINT);
        assert_open_refused("/dev/disk/by-path/chain-to-loop", EINVAL,
                            UM_ERROR_KIND_INVALID_SOURCE, "is a partition of a loop device");

        if (disk) {
                g_autofree char *disk_base = g_path_get_basename(disk);

                disk_target = g_strdup_printf("../../%s", disk_base);
                abs_target = g_strdup_printf("/dev/%s", disk_base);
                link_in_dev(disk_target, "/dev/disk/by-label/disk");
                link_in_dev("../by-label/disk", "/dev/disk/by-path/chain");
                link_in_dev(abs_target, "/dev/disk/by-label/abs-disk");
                /* The node name returned is the kernel's, not the link's. */
                assert_opens("/dev/disk/by-label/disk", true, disk);
                assert_opens("/dev/disk/by-label/disk", false, disk);
                assert_opens("/dev/disk/by-path/chain", true, disk);
                /* Absolute targets are refused even into /dev: udev never writes them. */
                abs_want = g_strdup_printf("is an absolute link (to %s)", abs_target);
                assert_open_refused("/dev/disk/by-label/abs-disk", EINVAL,
                                    UM_ERROR_KIND_INVALID_SOURCE, abs_want);
        } else {
                ku_note("no plain block device: the accepted-link cases were not run");
        }

        remove_overlay_dev(base);
        detach(loop_fd, loop_path);
}

/* ---- partitions -------------------------------------------------------------------- */

static void check_partitioned(int loop_fd, const char *loop_path, const char *plain_path) {
        g_autofree char *base = g_path_get_basename(loop_path);
        g_autofree char *p1 = g_strdup_printf("%sp1", loop_path);
        g_autofree char *p2 = g_strdup_printf("%sp2", loop_path);
        g_autofree char *plural = g_strdup_printf("%s has partitions %sp1, %sp2; mount one of them",
                                                  loop_path, base, base);
        g_autofree char *singular = g_strdup_printf("%s has a partition, %sp1; mount the "
                                                    "partition instead", loop_path, base);
        struct blkpg_partition part = { .pno = 2 };
        struct blkpg_ioctl_arg del = {
                .op = BLKPG_DEL_PARTITION,
                .datalen = sizeof(part),
                .data = &part,
        };
        UmError e = {};

        ku_note("%s: partitions %s (%u:%u), %s (%u:%u)", loop_path, p1, major(rdev_of(p1)),
                minor(rdev_of(p1)), p2, major(rdev_of(p2)), minor(rdev_of(p2)));
        assert_refused(device_check_not_partitioned(rdev_of(loop_path), &e), &e, EINVAL,
                       UM_ERROR_KIND_INVALID_SOURCE, plural);
        ku_note("%s", e.message);
        g_assert_cmpint(device_check_not_partitioned(rdev_of(p1), NULL), ==, 0);
        g_assert_cmpint(device_check_not_partitioned(rdev_of(p2), NULL), ==, 0);
        g_assert_cmpint(device_check_not_partitioned(rdev_of(plain_path), NULL), ==, 0);

        /* Partitions of a loop device are images too, whatever their major. */
        assert_open_refused(p1, EINVAL, UM_ERROR_KIND_INVALID_SOURCE,
                            "is a partition of a loop device; " LOOP_HINT);
        assert_open_refused(loop_path, EINVAL, UM_ERROR_KIND_INVALID_SOURCE, "is a loop device");

        g_assert_cmpint(ioctl(loop_fd, BLKPG, &del), ==, 0);
        e = (UmError) {};
        assert_refused(device_check_not_partitioned(rdev_of(loop_path), &e), &e, EINVAL,
                       UM_ERROR_KIND_INVALID_SOURCE, singular);

        /* A device that is gone. */
        e = (UmError) {};
        assert_refused(device_check_not_partitioned(makedev(LOOP_MAJOR, 1048575), &e), &e, ENODEV,
                       UM_ERROR_KIND_INVALID_SOURCE, "is gone");
}

static void test_partitioned(const char *arg) {
        _cleanup_free_ char *loop_path = NULL, *plain_path = NULL;
        int loop_fd, plain_fd;

        loop_fd = attach_partitioned(ku_image("parted"), true, &loop_path);
        plain_fd = attach_image(ku_image("ext4"), &plain_path);
        check_partitioned(loop_fd, loop_path, plain_path);
        detach(plain_fd, plain_path);
        detach(loop_fd, loop_path);
}

/* ---- busy -------------------------------------------------------------------------- */

static void test_busy_free(const char *arg) {
        _cleanup_free_ char *path = NULL;
        int fd = attach_image(ku_image("ext4"), &path);
        g_autofree char *disk = find_plain_disk();

        assert_free(rdev_of(path));
        assert_free(rdev_of(path)); /* and again: the first check kept nothing */
        if (disk)
                assert_free(rdev_of(disk));
        detach(fd, path);
}

static void test_busy_gone(const char *arg) {
        UmError e = {};

        assert_refused(device_check_not_busy(makedev(LOOP_MAJOR, 1048575), &e), &e,
                       ENODEV, UM_ERROR_KIND_INVALID_SOURCE, "no node");
}

static void test_busy_mounted(const char *arg) {
        const char *fstype = arg;
        _cleanup_free_ char *path = NULL;
        int fd = attach_image(ku_image(fstype), &path);
        char *dir = make_mount_dir();
        g_autofree char *want = g_strdup_printf("%s is mounted at %s", path, dir);

        g_assert_cmpint(mount(path, dir, fstype, MS_RDONLY | MS_NODEV | MS_NOSUID, NULL), ==, 0);
        assert_busy(rdev_of(path), want);
        g_assert_cmpint(umount(dir), ==, 0);
        assert_free(rdev_of(path));
        remove_mount_dir(dir);
        detach(fd, path);
}

typedef struct NsMount {
        const char *source;
        const char *dir;
        int ready;      /* write end: the child says it has mounted */
        int done;       /* read end: the parent says the child may go */
} NsMount;

static void mount_in_other_namespace(void *data) {
        NsMount *m = data;
        char c = 0;

        g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
        g_assert_cmpint(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
        g_assert_cmpint(mount(m->source, m->dir, "ext4", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL),
                        ==, 0);
        g_assert_cmpint(write(m->ready, "m", 1), ==, 1);
        g_assert_cmpint(read(m->done, &c, 1), ==, 1);
}

static void test_busy_other_namespace(const char *arg) {
        _cleanup_free_ char *path = NULL;
        int fd = attach_image(ku_image("ext4"), &path);
        char *dir = make_mount_dir();
        int ready[2], done[2];
        NsMount m = { .source = path, .dir = dir };
        char c;
        pid_t pid;

        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(done, O_CLOEXEC), ==, 0);
        m.ready = ready[1];
        m.done = done[0];
        pid = ku_fork(mount_in_other_namespace, &m);
        close(ready[1]);
        close(done[0]);
        g_assert_cmpint(read(ready[0], &c, 1), ==, 1);

        /* Not in this namespace's table, and still refused: the superblock holds it. */
        g_assert_null(ku_mountinfo_options(dir));
        assert_busy(rdev_of(path), "is mounted or in use (perhaps in another mount namespace)");

        /* A byte, not EOF: the child holds its own copy of the write end. */
        g_assert_cmpint(write(done[1], "x", 1), ==, 1);
        ku_wait_ok(pid);
        close(done[1]);
        close(ready[0]);
        assert_free(rdev_of(path));
        remove_mount_dir(dir);
        detach(fd, path);
}

/* A detached mount (what OpenMount hands out) holds the device with no mount point at all. */
static void test_busy_detached_mount(const char *arg) {
        _cleanup_free_ char *path = NULL;
        int fd = attach_image(ku_image("ext4"), &path);
        _cleanup_close_ int fs_fd = fsopen("ext4", FSOPEN_CLOEXEC);
        int mnt_fd;

        g_assert_cmpint(fs_fd, >=, 0);
        g_assert_cmpint(fsconfig(fs_fd, FSCONFIG_SET_STRING, "source", path, 0), ==, 0);
        g_assert_cmpint(fsconfig(fs_fd, FSCONFIG_SET_FLAG, "ro", NULL, 0), ==, 0);
        g_assert_cmpint(fsconfig(fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        mnt_fd = fsmount(fs_fd, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
        g_assert_cmpint(mnt_fd, >=, 0);
        fs_fd = safe_close(fs_fd);

        assert_busy(rdev_of(path), "is mounted or in use (perhaps in another mount namespace)");
        close(mnt_fd);
        assert_free(rdev_of(path));
        detach(fd, path);
}

typedef struct Holder {
        const char *path;
        int ready;
        int done;
} Holder;

static void hold_exclusively(void *data) {
        Holder *h = data;
        int fd = open(h->path, O_RDONLY | O_EXCL | O_CLOEXEC);
        char c = 0;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(h->ready, "h", 1), ==, 1);
        g_assert_cmpint(read(h->done, &c, 1), ==, 1);
        close(fd);
}

/* Runs check while another process holds hold_path open with O_EXCL. */
static void while_held(const char *hold_path, void (*check)(const char *), const char *arg) {
        int ready[2], done[2];
        Holder h = { .path = hold_path };
        char c;
        pid_t pid;

        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(done, O_CLOEXEC), ==, 0);
        h.ready = ready[1];
        h.done = done[0];
        pid = ku_fork(hold_exclusively, &h);
        close(ready[1]);
        close(done[0]);
        g_assert_cmpint(read(ready[0], &c, 1), ==, 1);
        check(arg);
        g_assert_cmpint(write(done[1], "x", 1), ==, 1);
        ku_wait_ok(pid);
        close(done[1]);
        close(ready[0]);
}

static void check_generic_busy(const char *path) {
        assert_busy(rdev_of(path), "is mounted or in use (perhaps in another mount namespace)");
}

static void test_busy_exclusive(const char *arg) {
        _cleanup_free_ char *path = NULL, *loop_path = NULL;
        g_autofree char *p1 = NULL;
        int fd, part_fd;

        fd = attach_image(ku_image("ext4"), &path);
        part_fd = attach_partitioned(ku_image("parted"), true, &loop_path);
        p1 = g_strdup_printf("%sp1", loop_path);

        while_held(path, check_generic_busy, path);
        assert_free(rdev_of(path));

        /* A claim on a partition blocks its disk, and a claim on the disk its partitions. */
        while_held(p1, check_generic_busy, loop_path);
        while_held(loop_path, check_generic_busy, p1);
        assert_free(rdev_of(loop_path));
        assert_free(rdev_of(p1));

        detach(fd, path);
        detach(part_fd, loop_path);
}

/* A whole disk whose partition is mounted: the message names the partition. */
static void test_busy_partition_mounted(const char *arg) {
        g_autofree char *copy = NULL, *p1 = NULL, *want_disk = NULL, *want_part = NULL;
        _cleanup_free_ char *loop_path = NULL;
        char *dir;
        int fd;

        copy = copy_image("parted", "device-parted-copy.img");
        fd = attach_partitioned(copy, false, &loop_path);
        p1 = g_strdup_printf("%sp1", loop_path);
        dir = make_mount_dir();

        run_tool("mkfs.ext4", (const char *const[]) { "-q", "-F", p1, NULL });
        g_assert_cmpint(mount(p1, dir, "ext4", MS_RDONLY | MS_NODEV | MS_NOSUID, NULL), ==, 0);
        want_part = g_strdup_printf("%s is mounted at %s", p1, dir);
        want_disk = g_strdup_printf("%s is in use: its partition %s is mounted at %s", loop_path,
                                    p1, dir);
        assert_busy(rdev_of(p1), want_part);
        assert_busy(rdev_of(loop_path), want_disk);
        g_assert_cmpint(umount(dir), ==, 0);
        assert_free(rdev_of(loop_path));
        remove_mount_dir(dir);
        detach(fd, loop_path);
        g_assert_cmpint(unlink(copy), ==, 0);
}

/*
 * swapon is global, not per namespace: the area is switched off before any assertion can
 * abort the test, so a failure never leaves swap active on the host.
 */
static void test_busy_swap(const char *arg) {
        g_autofree char *image = g_build_filename(ku_dir(), "device-swap.img", NULL);
        _cleanup_free_ char *path = NULL, *loop_path = NULL;
        _cleanup_close_ int image_fd = -EBADF;
        UmError e_whole = {}, e_disk = {}, e_part = {};
        int fd, part_fd, r_whole, r_disk, r_part, on;
        g_autofree char *copy = NULL, *p1 = NULL, *want_whole = NULL, *want_part = NULL;
        g_autofree char *want_disk = NULL;
        dev_t whole, part, disk;

        image_fd = open(image, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        g_assert_cmpint(image_fd, >=, 0);
        g_assert_cmpint(ftruncate(image_fd, 8 << 20), ==, 0);
        image_fd = safe_close(image_fd);
        run_tool("mkswap", (const char *const[]) { image, NULL });
        {
                _cleanup_close_ int rw = open(image, O_RDWR | O_CLOEXEC);
                UmError e = {};

                g_assert_cmpint(loop_attach(rw, false, &fd, &path, &e), ==, 0);
        }
        copy = copy_image("parted", "device-parted-swap.img");
        part_fd = attach_partitioned(copy, false, &loop_path);
        p1 = g_strdup_printf("%sp1", loop_path);
        run_tool("mkswap", (const char *const[]) { p1, NULL });

        whole = rdev_of(path);
        part = rdev_of(p1);
        disk = rdev_of(loop_path);

        /* Nothing between swapon() and swapoff() can abort. */
        on = swapon(path, 0);
        g_assert_cmpint(on, ==, 0);
        r_whole = device_check_not_busy(whole, &e_whole);
        on = swapoff(path);
        g_assert_cmpint(on, ==, 0);

        on = swapon(p1, 0);
        g_assert_cmpint(on, ==, 0);
        r_part = device_check_not_busy(part, &e_part);
        r_disk = device_check_not_busy(disk, &e_disk);
        on = swapoff(p1);
        g_assert_cmpint(on, ==, 0);

        want_whole = g_strdup_printf("%s is in use as swap", path);
        want_part = g_strdup_printf("%s is in use as swap", p1);
        want_disk = g_strdup_printf("%s is in use: its partition %s is in use as swap", loop_path,
                                    p1);
        assert_refused(r_whole, &e_whole, EBUSY, UM_ERROR_KIND_DEVICE_BUSY, want_whole);
        ku_note("%s", e_whole.message);
        assert_refused(r_part, &e_part, EBUSY, UM_ERROR_KIND_DEVICE_BUSY, want_part);
        assert_refused(r_disk, &e_disk, EBUSY, UM_ERROR_KIND_DEVICE_BUSY, want_disk);
        ku_note("%s", e_disk.message);
        assert_free(whole);
        assert_free(part);

        detach(fd, path);
        detach(part_fd, loop_path);
        g_assert_cmpint(unlink(image), ==, 0);
        g_assert_cmpint(unlink(copy), ==, 0);
}

/* A device with something in its sysfs holders/ (device-mapper, md), or NULL. */
static char *find_held_device(void) {
        g_autoptr(GDir) d = g_dir_open("/sys/class/block", 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                g_autofree char *holders = g_strdup_printf("/sys/class/block/%s/holders", name);
                g_autoptr(GDir) h = g_dir_open(holders, 0, NULL);
                g_autofree char *node = g_strdup_printf("/dev/%s", name);

                if (h && g_dir_read_name(h) && access(node, F_OK) == 0)
                        return g_steal_pointer(&node);
        }
        return NULL;
}

static void test_busy_holders(const char *arg) {
        assert_busy(rdev_of(arg), "is held by ");
}

/* ---- registration ------------------------------------------------------------------ */

static void skip_test(gconstpointer reason) {
        g_test_skip(reason);
}

/*
 * ku_add() runs the body in a subprocess that must pass, so what a test needs from the
 * machine is decided here: a test whose needs are missing is registered as a skip with the
 * reason instead.
 */
static void add(const char *path, void (*body)(const char *), const char *arg,
                const char *needs, const char *missing) {
        if (missing)
                g_test_add_data_func(path, missing, skip_test);
        else
                ku_add(path, body, arg, needs);
}

static bool has_dev_symlink(void) {
        const char *const links[] = { "/dev/stdin", "/dev/stdout", "/dev/fd", "/dev/core" };

        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                struct stat st;

                if (lstat(links[i], &st) == 0 && S_ISLNK(st.st_mode))
                        return true;
        }
        return false;
}

static bool kernel_has_filesystem(const char *name) {
        g_autofree char *text = NULL;
        g_autofree char *want = g_strdup_printf("\t%s\n", name);

        return g_file_get_contents("/proc/filesystems", &text, NULL, NULL) && strstr(text, want);
}

int main(int argc, char **argv) {
        g_autofree char *disk = NULL, *held = NULL;
        const char *no_ext4, *no_swap, *no_overlay;
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        disk = find_plain_disk();
        held = find_held_device();
        no_ext4 = have_tool("mkfs.ext4") ? NULL : "mkfs.ext4 is not installed";
        no_swap = access("/proc/swaps", F_OK) < 0 ? "the kernel has no swap support" :
                  !have_tool("mkswap")            ? "mkswap is not installed" :
                                                    no_ext4;
        no_overlay = kernel_has_filesystem("overlay") ? NULL :
                     "the kernel has no overlayfs, which the by-* links in a private /dev need";

        add("/device/path/table", test_path_table, NULL, NULL, NULL);
        add("/device/open/not-block", test_open_not_block, NULL, NULL, NULL);
        add("/device/open/missing", test_open_missing, NULL, NULL, NULL);
        add("/device/open/dev-symlinks", test_open_dev_symlinks, NULL, NULL,
            has_dev_symlink() ? NULL : "/dev holds none of stdin, stdout, fd, core as symlinks");
        add("/device/open/loop", test_open_loop, NULL, "ext4", NULL);
        add("/device/open/disk", test_open_disk, NULL, NULL,
            disk ? NULL : "no free block device other than loop devices can be opened here");
        add("/device/open/by-link", test_open_by_link, NULL, "parted", no_overlay);
        add("/device/partitioned", test_partitioned, NULL, "parted", no_ext4);
        add("/device/busy/free", test_busy_free, NULL, "ext4", NULL);
        add("/device/busy/gone", test_busy_gone, NULL, NULL, NULL);
        add("/device/busy/mounted/ext4", test_busy_mounted, "ext4", "ext4", NULL);
        add("/device/busy/mounted/btrfs", test_busy_mounted, "btrfs", "btrfs", NULL);
        add("/device/busy/other-namespace", test_busy_other_namespace, NULL, "ext4", NULL);
        add("/device/busy/detached-mount", test_busy_detached_mount, NULL, "ext4", NULL);
        add("/device/busy/exclusive", test_busy_exclusive, NULL, "parted", no_ext4);
        add("/device/busy/partition-mounted", test_busy_partition_mounted, NULL, "parted", no_ext4);
        add("/device/busy/swap", test_busy_swap, NULL, "parted", no_swap);
        add("/device/busy/holders", test_busy_holders, held, NULL,
            held ? NULL : "no block device here has holders: this kernel has neither "
                          "device-mapper nor md, so nothing can hold one");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
