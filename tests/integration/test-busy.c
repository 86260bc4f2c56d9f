/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One writer per filesystem and partitions kept to their bytes (docs/security.md classes
 * 43 and 44), through the real daemon with the shipped Driver=auto (fuse2fs serves ext4
 * images, the kernel what a caller asks it for with the mount-kernel-driver action):
 *
 *   - an image mounted read-write through a userspace driver cannot be mounted again,
 *     read-write or read-only, through either driver, and the image stays consistent
 *     (e2fsck -fn); the finding mounted it three times and corrupted it;
 *   - an image root mounted itself (mount -o loop), and one mounted through the kernel's
 *     driver, cannot be mounted through a userspace driver;
 *   - read-only mounts of one image may be many, but not beside a read-write one;
 *   - a block device a userspace driver serves is held exclusively: neither usermount nor
 *     root mounts it again;
 *   - a partition whose filesystem says it is larger than the partition is refused before
 *     anything is mounted; a partition a userspace driver serves is written to the full,
 *     and not one byte of the image outside the partition changes (hash);
 *   - two partitions of one image at once, one partition twice read-write not.
 *
 * Each test checks that nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define WAIT_MS 60000
/* The partitions of tests/make-partitioned-image.sh gpt and oversize, in bytes. */
#define GPT_P2_OFFSET (10240ULL * 512)
#define GPT_P2_SIZE (16384ULL * 512)

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image, *img_gpt, *img_oversize;

/* umtest1 may do everything, the kernel's driver included; umtest2 all but that. */
static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-kernel-driver')\n"
        "                return subject.user == 'umtest1' ? polkit.Result.YES : polkit.Result.NO;\n"
        "        if (subject.user == 'umtest1' || subject.user == 'umtest2')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- callers ------------------------------------------------------------------------------ */

typedef struct BusyCall {
        const char *method;    /* "OpenMount", "MountFd", "Mount" (path a device) or "Unmount" */
        const char *path;
        bool read_only;        /* open the image O_RDONLY (OpenMount, MountFd) */
        const char *driver;    /* params["driver"], or NULL */
        const char *partition; /* params["partition"], or NULL */
        bool hold;             /* OpenMount: hold the mount until released */
        bool fill;             /* MountFd: write a file into the mount until it is full */
} BusyCall;

static void fill(const char *mp) {
        g_autofree char *path = g_build_filename(mp, "fill", NULL);
        static char block[64 << 10];
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        size_t total = 0;
        ssize_t n = 0;

        memset(block, 0x5a, sizeof(block));
        while (fd >= 0 && (n = write(fd, block, sizeof(block))) > 0)
                total += (size_t) n;
        harness_report("filled=%zu", total);
        harness_report("fill-end=%s", calls_errno_name(fd < 0 || n < 0 ? -errno : 0));
        if (fd >= 0)
                (void) fsync(fd);
}

static int busy_caller(void *userdata) {
        const BusyCall *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        Param params[3] = {};
        size_t n = 0;
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "Unmount"))
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        else if (streq(c->method, "Mount"))
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
        else {
                source = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
                g_assert_cmpint(source, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        }
        if (c->driver)
                params[n++] = (Param) { "driver", "s", c->driver };
        if (c->partition)
                params[n++] = (Param) { "partition", "u", c->partition };
        g_assert_cmpint(calls_append_params(call, streq(c->method, "Unmount") ? NULL : params),
                        >=, 0);
        r = sd_bus_call(bus, call, 90 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && streq(c->method, "OpenMount")) {
                int fd;

                g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
                calls_report_info(reply, "info-");
        } else if (r >= 0 && !streq(c->method, "Unmount")) {
                const char *mp;

                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                calls_report_info(reply, "info-");
                if (c->fill)
                        fill(mp);
        }
        reply = sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        if (mount_fd >= 0 && c->hold) {
                harness_report("held=yes");
                harness_await_release();
        }
        return 0;
}

static GHashTable *call_as(uid_t uid, const BusyCall *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, streq(c->method, "OpenMount") ?
                                                         HARNESS_NEW_USERNS : 0,
                                       busy_caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

/* An OpenMount caller that holds its mount until hold_release(). */
static HarnessCaller *hold(uid_t uid, const BusyCall *c) {
        g_autofree char *line = NULL;
        HarnessCaller *h = NULL;

        g_assert_true(c->hold);
        g_assert_cmpint(harness_caller_spawn(uid, uid, HARNESS_NEW_USERNS, busy_caller,
                                             (void *) c, &h), ==, 0);
        do {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(h, WAIT_MS, &line), ==, 0);
                if (g_str_has_prefix(line, "result=") && !streq(line, "result=ok"))
                        g_error("the holder was refused: %s", line);
        } while (!streq(line, "held=yes"));
        return h;
}

static void hold_release(HarnessCaller *h) {
        g_assert_cmpint(harness_caller_release(h), ==, 0);
        g_assert_cmpint(harness_caller_wait(h, WAIT_MS, NULL), ==, 0);
        harness_caller_free(h);
}

static void assert_busy(GHashTable *t) {
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_DEVICE_BUSY);
        g_assert_nonnull(strstr(report_get(t, "message"), "in use"));
}

/* The verdict of a read-only check of the ext4 at [offset, offset + size) of path (size
 * 0: all of it), on a copy of those bytes (e2fsck has no offset option): 0 is clean. */
static int e2fsck(const char *path, uint64_t offset, uint64_t size) {
        g_autofree char *copy = g_strdup_printf("%s.fsck", path);
        g_autofree char *cmd = NULL, *out = NULL;
        int status;

        cmd = size ? g_strdup_printf("dd if=%s of=%s bs=512 skip=%llu count=%llu status=none",
                                     path, copy, (unsigned long long) (offset / 512),
                                     (unsigned long long) (size / 512))
                   : g_strdup_printf("cp %s %s", path, copy);
        g_assert_cmpint(system(cmd), ==, 0);
        g_free(cmd);
        cmd = g_strdup_printf("e2fsck -fn %s", copy);
        g_assert_true(g_spawn_command_line_sync(cmd, &out, NULL, &status, NULL));
        g_test_message("%s:\n%s", cmd, out);
        g_assert_cmpint(unlink(copy), ==, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A hash of the bytes of path outside [offset, offset + size). */
static char *hash_outside(const char *path, uint64_t offset, uint64_t size) {
        g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
        g_autofree char *data = NULL;
        gsize len = 0;

        g_assert_true(g_file_get_contents(path, &data, &len, NULL));
        g_assert_cmpuint(len, >=, offset + size);
        g_checksum_update(sum, (const guchar *) data, (gssize) offset);
        g_checksum_update(sum, (const guchar *) data + offset + size,
                          (gssize) (len - offset - size));
        return g_strdup(g_checksum_get_string(sum));
}

/* ---- the daemon ----------------------------------------------------------------------------- */

static void start_daemon(void) {
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", "[General]\nDriver=auto\n"),
                        ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

static void assert_clean(void) {
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
}

static void unmount_as(uid_t uid, const char *mp) {
        const BusyCall u = { "Unmount", mp };
        g_autoptr(GHashTable) t = call_as(uid, &u);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
}

/* ---- tests -------------------------------------------------------------------------------- */

/* The finding: MountFd read-write through fuse2fs, then OpenMount read-write, then a
 * read-only mount through the kernel, all of one image; now the second and third are
 * DeviceBusy, whichever driver, and the image is clean afterwards. */
static void test_image_one_writer(void) {
        const BusyCall first = { "MountFd", image, .fill = false };
        const BusyCall again_rw = { "OpenMount", image };
        const BusyCall again_ro = { "OpenMount", image, .read_only = true };
        const BusyCall kernel_ro = { "OpenMount", image, .read_only = true, .driver = "kernel" };
        const BusyCall kernel_rw = { "OpenMount", image, .driver = "kernel" };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &first);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        for (int i = 0; i < 2; i++) {
                const uid_t who = i ? HARNESS_UID_USER2 : HARNESS_UID_USER1;
                g_autoptr(GHashTable) a = call_as(who, &again_rw);
                g_autoptr(GHashTable) b = call_as(who, &again_ro);

                assert_busy(a);
                assert_busy(b);
        }
        {
                g_autoptr(GHashTable) k1 = call_as(HARNESS_UID_USER1, &kernel_ro);
                g_autoptr(GHashTable) k2 = call_as(HARNESS_UID_USER1, &kernel_rw);

                assert_busy(k1);
                assert_busy(k2);
        }
        unmount_as(HARNESS_UID_USER1, report_get(t, "mount-point"));
        assert_clean();
        g_assert_cmpint(e2fsck(image, 0, 0), ==, 0);
}

/* Mount again at once, read-write, after the last fd of a mount was closed (OpenMount's,
 * or a mount unmounted): the driver of the mount just gone holds its claim until it has
 * exited, which the new request waits for (a moment), rather than call the image busy. */
static void test_remount_at_once(void) {
        const BusyCall rw = { "OpenMount", image };
        const BusyCall ro = { "OpenMount", image, .read_only = true };
        const BusyCall attached = { "MountFd", image };

        for (int i = 0; i < 6; i++) {
                g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, i % 2 ? &rw : &ro);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        }
        for (int i = 0; i < 3; i++) {
                g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &attached);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                unmount_as(HARNESS_UID_USER1, report_get(t, "mount-point"));
        }
        assert_clean();
        g_assert_cmpint(e2fsck(image, 0, 0), ==, 0);
}

/* Mounts the daemon did not make through a userspace driver hold the image too: root's own
 * loop mount, and a mount through the kernel's driver. */
static void test_image_loop_holders(void) {
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "busy-root", NULL);
        g_autofree char *cmd = g_strdup_printf("mount -o loop,ro %s %s", image, dir);
        const BusyCall driver = { "OpenMount", image, .read_only = true };
        const BusyCall driver_rw = { "OpenMount", image };
        const BusyCall kernel = { "OpenMount", image, .driver = "kernel", .hold = true };
        HarnessCaller *h;

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(system(cmd), ==, 0);
        {
                /* Root's read-only mount: read-only beside it does not meet its claim (it
                 * may meet the check of its UUID, which root's loop device has too, class
                 * 31), read-write does. */
                g_autoptr(GHashTable) ro = call_as(HARNESS_UID_USER1, &driver);
                g_autoptr(GHashTable) rw = call_as(HARNESS_UID_USER1, &driver_rw);

                g_assert_cmpstr(report_get(ro, "result"), !=, UM_ERROR_DEVICE_BUSY);
                assert_busy(rw);
        }
        g_assert_cmpint(umount2(dir, 0), ==, 0);
        assert_clean();

        h = hold(HARNESS_UID_USER1, &kernel);
        {
                g_autoptr(GHashTable) ro = call_as(HARNESS_UID_USER2, &driver);
                g_autoptr(GHashTable) rw = call_as(HARNESS_UID_USER2, &driver_rw);

                assert_busy(ro);
                assert_busy(rw);
        }
        hold_release(h);
        assert_clean();
        g_assert_cmpint(rmdir(dir), ==, 0);
}

/* Read-only mounts of one image may be many; a read-write one beside them may not. */
static void test_image_readers(void) {
        const BusyCall ro = { "OpenMount", image, .read_only = true, .hold = true };
        const BusyCall rw = { "OpenMount", image };
        HarnessCaller *h1 = hold(HARNESS_UID_USER1, &ro);
        HarnessCaller *h2 = hold(HARNESS_UID_USER2, &ro);
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &rw);

        assert_busy(t);
        hold_release(h1);
        hold_release(h2);
        assert_clean();
        g_hash_table_unref(call_as(HARNESS_UID_USER1, &rw));
        assert_clean();
}

/* A block device served by a userspace driver is the driver's alone, as a mounted one is
 * the kernel's: a second mount by usermount, or root's, finds it busy. */
static void test_block_device(void) {
        g_autofree char *node = NULL, *cmd = NULL, *dir = NULL;
        g_autoptr(GHashTable) t = NULL, again = NULL, kernel = NULL;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        cmd = g_strdup_printf("mkfs.ext4 -q -L busyblk %s", node);
        g_assert_cmpint(system(cmd), ==, 0);
        const BusyCall c = { "Mount", node, .driver = "userspace" };
        const BusyCall k = { "Mount", node, .driver = "kernel" };
        t = call_as(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        again = call_as(HARNESS_UID_USER1, &c);
        kernel = call_as(HARNESS_UID_USER1, &k);
        g_assert_cmpstr(report_get(again, "result"), ==, UM_ERROR_DEVICE_BUSY);
        g_assert_cmpstr(report_get(kernel, "result"), ==, UM_ERROR_DEVICE_BUSY);
        dir = g_build_filename(harness_tmpdir(), "busy-blk", NULL);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(mount(node, dir, "ext4", MS_RDONLY, NULL), ==, -1);
        g_assert_cmpint(errno, ==, EBUSY);
        unmount_as(HARNESS_UID_USER1, report_get(t, "mount-point"));
        assert_clean();
        g_assert_cmpint(rmdir(dir), ==, 0);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
}

/* Partition 1 holds an ext4 that says it is twice the partition: refused, by either
 * driver, before anything is mounted; partition 2 is untouched. */
static void test_partition_oversize(void) {
        g_autofree char *before = hash_outside(img_oversize, 0, 0);
        static const char *const drivers[] = { "userspace", "kernel" };

        for (size_t i = 0; i < G_N_ELEMENTS(drivers); i++) {
                const BusyCall c = { "MountFd", img_oversize, .driver = drivers[i],
                                     .partition = "1", .fill = true };
                g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

                g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_INVALID_SOURCE);
                g_assert_nonnull(strstr(report_get(t, "message"),
                                        "more than the 8388608 bytes of its partition"));
                assert_clean();
        }
        g_autofree char *after = hash_outside(img_oversize, 0, 0);
        g_assert_cmpstr(after, ==, before);
}

/* A userspace driver serving a partition writes it to the full and nothing else: the
 * bytes outside the partition keep their hash, and its filesystem is clean. */
static void test_partition_bounds(void) {
        g_autofree char *before = hash_outside(img_gpt, GPT_P2_OFFSET, GPT_P2_SIZE);
        const BusyCall c = { "MountFd", img_gpt, .partition = "2", .fill = true };
        const BusyCall twice = { "OpenMount", img_gpt, .partition = "2" };
        /* Read-only: a read-write mount would write partition 4's superblock. */
        const BusyCall other = { "OpenMount", img_gpt, .partition = "4", .read_only = true };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        g_autoptr(GHashTable) t2 = NULL, t4 = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "fill-end"), ==, "ENOSPC");
        g_assert_cmpuint(g_ascii_strtoull(report_get(t, "filled"), NULL, 10), >, 4U << 20);
        t2 = call_as(HARNESS_UID_USER1, &twice);
        t4 = call_as(HARNESS_UID_USER1, &other);
        assert_busy(t2);
        g_assert_cmpstr(report_get(t4, "result"), ==, "ok");
        unmount_as(HARNESS_UID_USER1, report_get(t, "mount-point"));
        assert_clean();
        g_autofree char *after = hash_outside(img_gpt, GPT_P2_OFFSET, GPT_P2_SIZE);
        g_assert_cmpstr(after, ==, before);
        g_assert_cmpint(e2fsck(img_gpt, GPT_P2_OFFSET, GPT_P2_SIZE), ==, 0);
}

static char *make_partitioned(const char *kind) {
        g_autofree char *script = g_build_filename(harness_source_root(), "tests",
                                                   "make-partitioned-image.sh", NULL);
        char *path = g_strdup_printf("%s/images/busy-%s.img", harness_tmpdir(), kind);
        g_autofree char *cmd = g_strdup_printf("/bin/sh '%s' '%s' '%s'", script, kind, path);

        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "f", "x\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "busy", .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        if (access("/usr/bin/fuse2fs", X_OK) < 0) {
                printf("1..0 # SKIP fuse2fs is not installed\n");
                return 0;
        }
        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chmod(image, 0666), ==, 0);
        img_gpt = make_partitioned("gpt");
        img_oversize = make_partitioned("oversize");
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        start_daemon();

        g_test_add_func("/busy/image-one-writer", test_image_one_writer);
        g_test_add_func("/busy/remount-at-once", test_remount_at_once);
        g_test_add_func("/busy/image-loop-holders", test_image_loop_holders);
        g_test_add_func("/busy/image-readers", test_image_readers);
        g_test_add_func("/busy/block-device", test_block_device);
        g_test_add_func("/busy/partition-oversize", test_partition_oversize);
        g_test_add_func("/busy/partition-bounds", test_partition_bounds);
        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
