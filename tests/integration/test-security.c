/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Security round 2 (docs/security.md, "One level out"): what the rest of the system does
 * with the devices and superblocks usermount makes, and devices the kernel would pull in
 * on its own. Each test runs the real daemon with the harness's real udevd and polkitd,
 * with unprivileged callers, and ends with nothing left behind.
 *
 *   31 loop devices get no /dev/disk links; names that collide with fstab, crypttab or
 *      another device are refused
 *   32 superblocks that name other devices are refused before any mount
 *   33 a read-only mount changes no byte of its device (no journal replay)
 *   34 a refused request never opened the device for writing nor claimed it
 *   35 a mount point renamed from another namespace is followed, and its root directory
 *      shows as the caller's
 *   37 MountAdded and MountRemoved reach only subscribers that may see the mount
 *   40 a caller's fd of a loop device is refused like its path
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness-fuse.h"
#include "harness.h"
#include "kernel-compat.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define LABEL "secimage"
#define UUID "7d2c1e9a-5b3f-4a6d-8e1c-2f4b6a8d0c13"
#define UUID_OTHER "0b9f8e7d-6c5b-4a39-8271-605f4e3d2c1b"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

static const char rules[] = CALLS_RULES_ALLOW_USER1;

/* ---- callers ------------------------------------------------------------------------------ */

typedef struct Call {
        const char *method; /* "MountFd", "Mount", "Unmount" or "ListMounts" */
        const char *path;   /* the source (opened by the caller for MountFd), or mount point */
        int open_flags;     /* MountFd: O_RDONLY or O_RDWR */
        bool read_only;
        const char *target; /* params */
        const char *idmap;
} Call;

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        Param params[4] = {};
        size_t n = 0;
        sd_bus *bus = NULL;
        const char *mp;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "MountFd")) {
                fd = open(c->path, c->open_flags | O_CLOEXEC);
                if (fd < 0) {
                        harness_report("result=open-failed");
                        return 0;
                }
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
        } else if (streq(c->method, "Mount"))
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
        else if (streq(c->method, "Unmount"))
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        if (c->read_only)
                params[n++] = (Param) { "read-only", "b", "true" };
        if (c->target)
                params[n++] = (Param) { "target", "s", c->target };
        if (c->idmap)
                params[n++] = (Param) { "idmap", "s", c->idmap };
        g_assert_cmpint(calls_append_params(call, params), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && streq(c->method, "ListMounts"))
                calls_report_mount_list(reply);
        else if (r >= 0 && !streq(c->method, "Unmount")) {
                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                calls_report_info(reply, "info-");
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

static GHashTable *call_as(uid_t uid, gid_t gid, const Call *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, gid, 0, caller, (void *) c, &output), ==, 0);
        g_test_message("%s %s as %u:\n%s", c->method, c->path, (unsigned) uid, output ?: "");
        return calls_parse_report(output);
}

static GHashTable *call_as_user1(const Call *c) {
        return call_as(HARNESS_UID_USER1, HARNESS_GID_USER1, c);
}

static void unmount_user1(const char *mount_point) {
        const Call c = { .method = "Unmount", .path = mount_point };
        g_autoptr(GHashTable) t = call_as_user1(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
}

static void assert_refused(GHashTable *t, const char *error, const char *message_part) {
        g_assert_cmpstr(report_get(t, "result"), ==, error);
        if (!strstr(report_get(t, "message") ?: "", message_part))
                g_error("message \"%s\" does not contain \"%s\"", report_get(t, "message"),
                        message_part);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- images and disks -------------------------------------------------------------------- */

/* An ext4 image of user1's (mode 0600) with LABEL and uuid. */
static char *user_image(const char *uuid) {
        const HarnessImageSpec spec = { .label = LABEL, .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        g_autofree char *cmd = NULL;
        char *image = NULL;

        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        cmd = g_strdup_printf("tune2fs -U %s %s >&2", uuid, image);
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chmod(image, 0600), ==, 0);
        return image;
}

static void run(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
static void run(const char *fmt, ...) {
        g_autofree char *cmd = NULL;
        va_list ap;

        va_start(ap, fmt);
        cmd = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        if (system(cmd) != 0)
                g_error("failed: %s", cmd);
}

static char *sha256(const char *path) {
        g_autofree char *data = NULL;
        gsize n = 0;

        g_assert_true(g_file_get_contents(path, &data, &n, NULL));
        return g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *) data, n);
}

/* The /etc file bind_etc() had to make (none of this machine's), removed again. */
static char *made_etc;

/* A file bound over an /etc file in the test's (and the daemon's) mount namespace. */
static char *bind_etc(const char *name, const char *contents) {
        g_autofree char *file = g_build_filename(harness_tmpdir(), name, NULL);
        char *target = g_build_filename("/etc", name, NULL);

        g_assert_true(g_file_set_contents(file, contents, -1, NULL));
        if (access(target, F_OK) < 0) {
                g_assert_null(made_etc);
                g_assert_true(g_file_set_contents(target, "", -1, NULL));
                made_etc = g_strdup(target);
                g_test_message("made an empty %s", target);
        }
        g_assert_cmpint(mount(file, target, NULL, MS_BIND, NULL), ==, 0);
        return target;
}

static void unbind_etc(char *target) {
        g_assert_cmpint(umount2(target, 0), ==, 0);
        if (made_etc && streq(made_etc, target)) {
                g_assert_cmpint(unlink(target), ==, 0);
                made_etc = mfree(made_etc);
        }
        g_free(target);
}

/* ---- 31: names ----------------------------------------------------------------------------- */

/* The daemon's loop device: udevd saw it (the change event of its binding) and made no
 * /dev/disk link and no ID_FS_* property for it; root's by-uuid lookup finds nothing. */
static void test_loop_no_links(void) {
        g_autofree char *image = user_image(UUID);
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_autofree char *db = NULL, *db_path = NULL, *name = NULL;
        const char *device = report_get(t, "info-device");
        struct stat st;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(device);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_assert_cmpint(access("/dev/disk/by-label/" LABEL, F_OK), <, 0);
        g_assert_cmpint(access("/dev/disk/by-uuid/" UUID, F_OK), <, 0);
        /* udevd did handle the device: its database entry says it was ours. */
        g_assert_cmpint(stat(device, &st), ==, 0);
        db_path = g_strdup_printf("/run/udev/data/b%u:%u", major(st.st_rdev), minor(st.st_rdev));
        g_assert_true(g_file_get_contents(db_path, &db, NULL, NULL));
        g_assert_nonnull(strstr(db, "E:USERMOUNT_IMAGE=1"));
        g_assert_null(strstr(db, "ID_FS_UUID"));

        unmount_user1(report_get(t, "mount-point"));
        assert_clean();
}

/* For comparison, the same image on a loop device of root's gets its links: the rule
 * keys on the daemon's mark, not on loop devices as such. */
static void test_root_loop_has_links(void) {
        g_autofree char *image = user_image(UUID);
        g_autofree char *device = NULL;

        g_assert_cmpint(harness_loop_attach(image, true, &device), ==, 0);
        g_assert_cmpint(harness_udev_trigger(device, "change"), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_assert_cmpint(access("/dev/disk/by-uuid/" UUID, F_OK), ==, 0);
        g_assert_cmpint(harness_loop_detach(device), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
}

static void test_collision_fstab(void) {
        g_autofree char *image = user_image(UUID);
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR };
        char *fstab = bind_etc("fstab", "# the backup disk, mounted by systemd when present\n"
                                        "UUID=" UUID " /backup ext4 nofail 0 2\n");
        g_autoptr(GHashTable) t = call_as_user1(&c);

        assert_refused(t, UM_ERROR_INVALID_SOURCE, "UUID '" UUID "' is also named in /etc/fstab");
        unbind_etc(fstab);

        /* Quoted, as libmount and systemd accept it. */
        fstab = bind_etc("fstab", "UUID=\"" UUID "\" /backup ext4 nofail 0 2\n");
        g_autoptr(GHashTable) quoted = call_as_user1(&c);
        assert_refused(quoted, UM_ERROR_INVALID_SOURCE, "is also named in /etc/fstab");
        unbind_etc(fstab);

        fstab = bind_etc("fstab", "LABEL=" LABEL " /backup ext4 nofail 0 2\n");
        g_autoptr(GHashTable) t2 = call_as_user1(&c);
        assert_refused(t2, UM_ERROR_INVALID_SOURCE, "label '" LABEL "' is also named in /etc/fstab");
        unbind_etc(fstab);

        char *crypttab = bind_etc("crypttab", "backup /dev/disk/by-uuid/" UUID " none luks\n");
        g_autoptr(GHashTable) t3 = call_as_user1(&c);
        assert_refused(t3, UM_ERROR_INVALID_SOURCE, "is also named in /etc/crypttab");
        unbind_etc(crypttab);

        /* Nothing named: mounted. */
        g_autoptr(GHashTable) ok = call_as_user1(&c);
        g_assert_cmpstr(report_get(ok, "result"), ==, "ok");
        unmount_user1(report_get(ok, "mount-point"));
        assert_clean();
}

/* A disk of the system's (a zram disk udevd linked) with the UUID, then the label. */
static void test_collision_device(void) {
        g_autofree char *image = user_image(UUID);
        g_autofree char *node = NULL;
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR };

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        run("mkfs.ext4 -q -U %s -L otherlabel %s", UUID, node);
        g_assert_cmpint(harness_udev_trigger(node, "change"), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_autoptr(GHashTable) t = call_as_user1(&c);
        assert_refused(t, UM_ERROR_INVALID_SOURCE, "UUID '" UUID "' is also the UUID of the device");

        run("tune2fs -U %s -L %s %s >&2", UUID_OTHER, LABEL, node);
        g_assert_cmpint(harness_udev_trigger(node, "change"), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_autoptr(GHashTable) t2 = call_as_user1(&c);
        assert_refused(t2, UM_ERROR_INVALID_SOURCE, "label '" LABEL "' is also the label of the device");

        g_assert_cmpint(harness_zram_free(node), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        assert_clean();
}

/* ---- 32: superblocks naming other devices -------------------------------------------------- */

static void write_at(const char *path, off_t offset, const void *data, size_t n) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(pwrite(fd, data, n, offset), ==, (ssize_t) n);
}

static void assert_image_refused(const char *image, const char *message_part) {
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR };

        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_autoptr(GHashTable) t = call_as_user1(&c);
        assert_refused(t, UM_ERROR_INVALID_SOURCE, message_part);
        assert_clean();
}

/* ext4 whose superblock names a journal device (debugfs ssv journal_dev), as found. */
static void test_ext4_external_journal(void) {
        const HarnessImageSpec spec = { .root_uid = HARNESS_UID_USER1 };
        g_autofree char *image = NULL;

        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        run("debugfs -w -R 'ssv journal_dev 0x0701' %s >&2", image);
        assert_image_refused(image, "has its journal on another device");
}

static void test_xfs_external_log(void) {
        const HarnessImageSpec spec = { .root_uid = HARNESS_UID_USER1 };
        g_autofree char *image = NULL;
        const uint8_t zero[8] = {};

        g_assert_cmpint(harness_make_image("xfs", &spec, &image), ==, 0);
        /* sb_logstart = 0: the log lives on a logdev. */
        write_at(image, 48, zero, sizeof(zero));
        assert_image_refused(image, "has its log on another device");
}

static void test_btrfs_two_devices(void) {
        const HarnessImageSpec spec = { .root_uid = HARNESS_UID_USER1 };
        g_autofree char *image = NULL;
        const uint8_t two[8] = { 2 };

        g_assert_cmpint(harness_make_image("btrfs", &spec, &image), ==, 0);
        write_at(image, 65536 + 136, two, sizeof(two));
        assert_image_refused(image, "spans 2 devices");
}

/* An image on FUSE: its server could serve the kernel another superblock than the one the
 * daemon checked. ext4 read-write (a journal device could be named) is refused, read-only
 * (noload: no journal) is mounted. */
static void test_fuse_image(void) {
        g_autofree char *image = user_image(UUID);
        g_autoptr(HarnessFuse) f = NULL;

        g_assert_cmpint(harness_fuse_new(image, &f), ==, 0);
        harness_fuse_set_gate(f, HARNESS_FUSE_GATE_OPEN);
        const Call rw = { .method = "MountFd", .path = harness_fuse_image_path(f),
                          .open_flags = O_RDWR };
        g_autoptr(GHashTable) t = call_as_user1(&rw);
        assert_refused(t, UM_ERROR_INVALID_SOURCE, "on a FUSE filesystem");
        const Call ro = { .method = "MountFd", .path = harness_fuse_image_path(f),
                          .open_flags = O_RDONLY };
        g_autoptr(GHashTable) t2 = call_as_user1(&ro);
        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        unmount_user1(report_get(t2, "mount-point"));
        g_clear_pointer(&f, harness_fuse_free);
        assert_clean();
}

/* A seed device is joined with the registered devices of its FSID: refused. */
static void test_btrfs_seed(void) {
        const HarnessImageSpec spec = { .root_uid = HARNESS_UID_USER1 };
        g_autofree char *image = NULL;
        const uint8_t seeding[8] = { 0, 0, 0, 0, 1 }; /* flags, bit 32 */

        g_assert_cmpint(harness_make_image("btrfs", &spec, &image), ==, 0);
        write_at(image, 65536 + 56 + 0, seeding, sizeof(seeding));
        assert_image_refused(image, "seed device");
}

/* ---- 33: read-only means read-only ------------------------------------------------------- */

/* A zram disk with ext4 whose journal holds committed, unreplayed transactions. */
static char *dirty_journal_disk(void) {
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "dirty", NULL);
        g_autofree char *file = g_build_filename(dir, "victim", NULL);
        __u32 flags = EXT4_GOING_FLAGS_LOGFLUSH;
        char *node = NULL;
        int fd;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        run("mkfs.ext4 -q -U %s %s", UUID_OTHER, node);
        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(mount(node, dir, "ext4", MS_NOSUID | MS_NODEV, "commit=600"), ==, 0);
        g_assert_true(g_file_set_contents(file, "before", -1, NULL));
        fd = open(file, O_WRONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, "after!", 6), ==, 6);
        g_assert_cmpint(fsync(fd), ==, 0);
        close(fd);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(ioctl(fd, EXT4_IOC_SHUTDOWN, &flags), ==, 0);
        close(fd);
        g_assert_cmpint(umount2(dir, 0), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
        /* The user may read the disk, not write it. */
        g_assert_cmpint(chmod(node, 0604), ==, 0);
        return node;
}

static void test_read_only_device_unchanged(void) {
        g_autofree char *node = dirty_journal_disk();
        g_autofree char *before = sha256(node);
        const Call c = { .method = "MountFd", .path = node, .open_flags = O_RDONLY };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_autofree char *after = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(strstr(report_get(t, "info-options"), "noload"));
        g_assert_nonnull(strstr(report_get(t, "info-attributes"), "ro"));
        unmount_user1(report_get(t, "mount-point"));
        after = sha256(node);
        g_assert_cmpstr(after, ==, before);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        assert_clean();
}

/* Orphaned inodes are cleaned up by ext4 even on a read-only mount: a writable device with
 * some, mounted read-only, is refused, and not one byte changes. */
static void test_read_only_orphans_refused(void) {
        g_autofree char *node = NULL, *before = NULL, *after = NULL;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        run("mkfs.ext4 -q %s && debugfs -w -R 'ssv last_orphan 12' %s >&2", node, node);
        g_assert_cmpint(chmod(node, 0604), ==, 0);
        before = sha256(node);
        const Call c = { .method = "MountFd", .path = node, .open_flags = O_RDONLY };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        assert_refused(t, UM_ERROR_INVALID_SOURCE, "orphaned files");
        after = sha256(node);
        g_assert_cmpstr(after, ==, before);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        assert_clean();
}

/* The read-only parameter, on an image the caller could write: the same. */
static void test_read_only_param_unchanged(void) {
        g_autofree char *image = user_image(UUID);
        g_autofree char *before = sha256(image);
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR,
                         .read_only = true };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_autofree char *after = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(strstr(report_get(t, "info-options"), "noload"));
        unmount_user1(report_get(t, "mount-point"));
        after = sha256(image);
        g_assert_cmpstr(after, ==, before);
        assert_clean();
}

/* ---- 34: nothing before authorization ---------------------------------------------------- */

/*
 * umtest2 (no rule) asks to mount a disk. The test holds an exclusive claim on it: a
 * daemon that claimed the device before asking polkit would answer DeviceBusy; and it
 * watches the node: a write open before the refusal shows as IN_CLOSE_WRITE.
 */
static void test_refused_never_opened_for_writing(void) {
        g_autofree char *node = NULL;
        const Call c = { .method = "Mount", .path = NULL };
        _cleanup_close_ int excl = -EBADF, in = -EBADF;
        char events[4096];
        ssize_t n;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        run("mkfs.ext4 -q %s", node);
        Call call = c;
        call.path = node;
        excl = open(node, O_RDONLY | O_EXCL | O_CLOEXEC);
        g_assert_cmpint(excl, >=, 0);
        in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        g_assert_cmpint(inotify_add_watch(in, node, IN_CLOSE_WRITE | IN_OPEN), >=, 0);

        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER2, HARNESS_GID_USER2, &call);
        g_assert_true(g_str_has_prefix(report_get(t, "result"), UM_ERROR_NOT_AUTHORIZED));
        while ((n = read(in, events, sizeof(events))) > 0)
                for (char *p = events; p < events + n;) {
                        const struct inotify_event *e = (const struct inotify_event *) p;

                        g_assert_false(e->mask & IN_CLOSE_WRITE);
                        p += sizeof(*e) + e->len;
                }

        /* Authorized, the same claim is found (after polkit) and refused as busy. */
        g_autoptr(GHashTable) t2 = call_as_user1(&call);
        g_assert_cmpstr(report_get(t2, "result"), ==, UM_ERROR_DEVICE_BUSY);
        excl = safe_close(excl);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        assert_clean();
}

/* ---- 40: loop devices by fd -------------------------------------------------------------- */

static void test_loop_fd_refused(void) {
        g_autofree char *image = user_image(UUID);
        g_autofree char *device = NULL;

        g_assert_cmpint(harness_loop_attach(image, false, &device), ==, 0);
        g_assert_cmpint(chmod(device, 0666), ==, 0);
        const Call c = { .method = "MountFd", .path = device, .open_flags = O_RDWR };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        assert_refused(t, UM_ERROR_INVALID_SOURCE, "is a loop device");
        g_assert_cmpint(chmod(device, 0660), ==, 0);
        g_assert_cmpint(harness_loop_detach(device), ==, 0);
        assert_clean();
}

/* ---- 35: mount points that move -------------------------------------------------------- */

static const char *mover_from, *mover_to;

/* In a user and mount namespace of its own, made before the mount (where the mount point
 * is an ordinary directory): renames the mount point away when the test says so. */
static int caller_mover(void *userdata) {
        harness_report("ready=1");
        if (harness_await_release() < 0)
                return 1;
        harness_report("renamed=%s", rename(mover_from, mover_to) < 0 ? g_strerror(errno) : "ok");
        return 0;
}

/*
 * As found: umtest1 mounts a root-owned image (mode 1777, a link to /etc/shadow in it) at
 * a directory of its own, then renames that directory, from a namespace made before, into
 * a sticky directory others use. The mount follows its directory. The daemon follows it
 * too: listed at its new path, unmountable there, never forgotten while mounted; and its
 * root directory shows as umtest1's, not root's (idmap "user", the default here).
 */
static void test_moved_mount_point(void) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_SYMLINK, ".X0-lock", "/etc/shadow" }, {} };
        const HarnessImageSpec spec = { .root_uid = 0, .root_gid = 0, .root_mode = 01777,
                                        .entries = entries };
        g_autofree char *image = NULL, *home = NULL, *target = NULL, *sticky = NULL,
                        *moved = NULL, *line = NULL;
        g_autoptr(HarnessCaller) mover = NULL;
        struct stat st;

        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        home = g_build_filename(harness_tmpdir(), "home-moved", NULL);
        target = g_build_filename(home, "m", NULL);
        sticky = g_build_filename(harness_tmpdir(), "sticky", NULL);
        moved = g_build_filename(sticky, ".X11-unix", NULL);
        g_assert_cmpint(g_mkdir_with_parents(target, 0755), ==, 0);
        g_assert_cmpint(chown(home, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chown(target, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(mkdir(sticky, 0755), ==, 0);
        g_assert_cmpint(chmod(sticky, 01777), ==, 0);
        mover_from = target;
        mover_to = moved;
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                             HARNESS_NEW_USERNS, caller_mover, NULL, &mover), ==, 0);
        g_assert_cmpint(harness_caller_read_line(mover, 10000, &line), ==, 0);
        g_assert_cmpstr(line, ==, "ready=1");

        /* An explicit idmap "none" is refused here; the default maps the root directory. */
        const Call none = { .method = "MountFd", .path = image, .open_flags = O_RDWR,
                            .target = target, .idmap = "none" };
        g_autoptr(GHashTable) refused = call_as_user1(&none);
        assert_refused(refused, UM_ERROR_INVALID_ARGUMENT, "belongs to uid 0");
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR,
                         .target = target };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "user");
        g_assert_cmpint(stat(target, &st), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, HARNESS_UID_USER1);

        g_clear_pointer(&line, g_free);
        g_assert_cmpint(harness_caller_release(mover), ==, 0);
        g_assert_cmpint(harness_caller_read_line(mover, 10000, &line), ==, 0);
        g_assert_cmpstr(line, ==, "renamed=ok");
        g_assert_cmpint(harness_caller_wait(mover, 10000, NULL), ==, 0);
        /* The mount went with its directory, into the sticky one: umtest1's, not root's. */
        g_assert_cmpint(stat(moved, &st), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, HARNESS_UID_USER1);
        g_assert_cmpint(lstat(target, &st), <, 0);

        const Call list = { .method = "ListMounts" };
        g_autoptr(GHashTable) l = call_as_user1(&list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, moved);
        const Call old = { .method = "Unmount", .path = target };
        g_autoptr(GHashTable) u1 = call_as_user1(&old);
        g_assert_cmpstr(report_get(u1, "result"), ==, UM_ERROR_NOT_MOUNTED);
        g_autoptr(GHashTable) l2 = call_as_user1(&list);
        g_assert_cmpstr(report_get(l2, "count"), ==, "1");
        const Call now = { .method = "Unmount", .path = moved };
        g_autoptr(GHashTable) u2 = call_as_user1(&now);
        g_assert_cmpstr(report_get(u2, "result"), ==, "ok");
        /* The directory moved away from the daemon: it is the user's to remove. */
        g_assert_cmpint(rmdir(moved), ==, 0);
        g_assert_cmpint(rmdir(home) == 0 || errno == ENOTEMPTY, ==, 1);
        assert_clean();
}

/* A move to a path the registry cannot keep (a newline in it): the mount stays tracked
 * under the path it had, ListMounts still answers, and once moved back it unmounts. */
static void test_moved_to_unkeepable_path(void) {
        g_autofree char *image = user_image(UUID);
        g_autofree char *home = g_build_filename(harness_tmpdir(), "home-odd", NULL);
        g_autofree char *odd = g_build_filename(harness_tmpdir(), "home\nodd", NULL);
        g_autofree char *target = g_build_filename(home, "m", NULL);

        g_assert_cmpint(g_mkdir_with_parents(target, 0755), ==, 0);
        g_assert_cmpint(chown(home, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chown(target, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR,
                         .target = target };
        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");

        g_assert_cmpint(rename(home, odd), ==, 0);
        const Call list = { .method = "ListMounts" };
        g_autoptr(GHashTable) l = call_as_user1(&list);
        g_assert_cmpstr(report_get(l, "result"), ==, "ok");
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, target);

        g_assert_cmpint(rename(odd, home), ==, 0);
        unmount_user1(target);
        g_assert_cmpint(rmdir(target), ==, 0);
        g_assert_cmpint(rmdir(home), ==, 0);
        assert_clean();
}

/* ---- 37: signals ---------------------------------------------------------------------- */

static int on_mount_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *mp = NULL;

        (void) sd_bus_message_read(m, "s", &mp);
        harness_report("signal=%s %s", sd_bus_message_get_member(m), strempty(mp));
        return 0;
}

/* Subscribes, says so, and reports every signal that reaches it for SUBSCRIBER_SEC. */
#define SUBSCRIBER_SEC 4
static int caller_subscriber(void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        gint64 end = g_get_monotonic_time() + SUBSCRIBER_SEC * G_USEC_PER_SEC;
        sd_bus *bus = NULL;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        /* The old way too: a match for any sender of the interface's signals. */
        g_assert_cmpint(sd_bus_match_signal(bus, NULL, NULL, UM_OBJECT_PATH,
                                            UM_MANAGER_INTERFACE, NULL, on_mount_signal, NULL),
                        >=, 0);
        g_assert_cmpint(sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH,
                                           UM_MANAGER_INTERFACE, "Subscribe", &error, NULL, ""),
                        >=, 0);
        harness_report("subscribed=1");
        while (g_get_monotonic_time() < end) {
                if (sd_bus_process(bus, NULL) > 0)
                        continue;
                (void) sd_bus_wait(bus, 100 * 1000);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

static HarnessCaller *subscriber_new(uid_t uid, gid_t gid) {
        HarnessCaller *c = NULL;
        g_autofree char *line = NULL;

        g_assert_cmpint(harness_caller_spawn(uid, gid, 0, caller_subscriber, NULL, &c), ==, 0);
        g_assert_cmpint(harness_caller_read_line(c, 10000, &line), ==, 0);
        g_assert_cmpstr(line, ==, "subscribed=1");
        return c;
}

/* Subscriptions per uid are limited (one per connection): the 65th is refused by name,
 * and closing the connections lets them go. */
static int caller_many_subscribers(void *userdata) {
        sd_bus *buses[UM_SUBSCRIPTIONS_MAX_PER_UID + 1] = {};

        for (unsigned i = 0; i <= UM_SUBSCRIPTIONS_MAX_PER_UID; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                int r;

                g_assert_cmpint(harness_sd_bus_connect(&buses[i]), >=, 0);
                r = sd_bus_call_method(buses[i], UM_BUS_NAME, UM_OBJECT_PATH,
                                       UM_MANAGER_INTERFACE, "Subscribe", &error, NULL, "");
                if (r < 0) {
                        harness_report("refused-at=%u", i);
                        calls_report_result(r, &error);
                        break;
                }
        }
        for (unsigned i = 0; i <= UM_SUBSCRIPTIONS_MAX_PER_UID; i++)
                if (buses[i])
                        sd_bus_flush_close_unref(buses[i]);
        return 0;
}

static void test_subscription_limit(void) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER2, HARNESS_GID_USER2, 0,
                                       caller_many_subscribers, NULL, &output), ==, 0);
        g_autoptr(GHashTable) t = calls_parse_report(output);
        g_assert_cmpstr(report_get(t, "refused-at"), ==, G_STRINGIFY(UM_SUBSCRIPTIONS_MAX_PER_UID));
        assert_refused(t, UM_ERROR_LIMIT_EXCEEDED, "subscriptions already");
        /* Gone with their connections: the next one is taken. */
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER2, HARNESS_GID_USER2, 0,
                                       caller_subscriber, NULL, NULL), ==, 0);
        assert_clean();
}

/* umtest1 mounts in its own directory: umtest1 hears of it, umtest2 does not, even with a
 * match rule for every sender of the interface's signals. */
static void test_signals_private(void) {
        g_autofree char *image = user_image(UUID);
        const Call c = { .method = "MountFd", .path = image, .open_flags = O_RDWR };
        g_autoptr(HarnessCaller) own = subscriber_new(HARNESS_UID_USER1, HARNESS_GID_USER1);
        g_autoptr(HarnessCaller) other = subscriber_new(HARNESS_UID_USER2, HARNESS_GID_USER2);
        g_autofree char *own_out = NULL, *other_out = NULL, *added = NULL, *removed = NULL;

        g_autoptr(GHashTable) t = call_as_user1(&c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        added = g_strdup_printf("signal=MountAdded %s", report_get(t, "mount-point"));
        removed = g_strdup_printf("signal=MountRemoved %s", report_get(t, "mount-point"));
        unmount_user1(report_get(t, "mount-point"));

        g_assert_cmpint(harness_caller_wait(own, 20000, &own_out), ==, 0);
        g_assert_cmpint(harness_caller_wait(other, 20000, &other_out), ==, 0);
        g_test_message("umtest1 heard:\n%s\numtest2 heard:\n%s", own_out ?: "", other_out ?: "");
        g_assert_nonnull(strstr(own_out ?: "", added));
        g_assert_nonnull(strstr(own_out ?: "", removed));
        g_assert_null(strstr(other_out ?: "", "signal="));
        assert_clean();
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/security/names/loop-no-links", test_loop_no_links);
        g_test_add_func("/security/names/root-loop-has-links", test_root_loop_has_links);
        g_test_add_func("/security/names/fstab-crypttab", test_collision_fstab);
        g_test_add_func("/security/names/device", test_collision_device);
        g_test_add_func("/security/other-devices/ext4-journal", test_ext4_external_journal);
        g_test_add_func("/security/other-devices/xfs-log", test_xfs_external_log);
        g_test_add_func("/security/other-devices/btrfs", test_btrfs_two_devices);
        g_test_add_func("/security/other-devices/btrfs-seed", test_btrfs_seed);
        g_test_add_func("/security/other-devices/fuse-image", test_fuse_image);
        g_test_add_func("/security/read-only/device", test_read_only_device_unchanged);
        g_test_add_func("/security/read-only/param", test_read_only_param_unchanged);
        g_test_add_func("/security/read-only/orphans", test_read_only_orphans_refused);
        g_test_add_func("/security/refused/no-write-open", test_refused_never_opened_for_writing);
        g_test_add_func("/security/loop-fd", test_loop_fd_refused);
        g_test_add_func("/security/signals/private", test_signals_private);
        g_test_add_func("/security/signals/limit", test_subscription_limit);
        g_test_add_func("/security/moved-mount-point", test_moved_mount_point);
        g_test_add_func("/security/moved-to-unkeepable-path", test_moved_to_unkeepable_path);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
