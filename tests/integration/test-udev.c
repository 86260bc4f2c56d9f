/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermountd with a real systemd-udevd (the harness's, with Debian's persistent-storage
 * rules): Mount by the /dev/disk/by-label and /dev/disk/by-uuid links udevd makes, and a
 * device removal the daemon learns of from udevd's event alone.
 *
 * The daemon runs with --watch-interval=0 here, so nothing but udevd's monitor can tell it
 * that a device went away: no timer, and the test changes no mount table when it "pulls"
 * the disk. Pulling: no block device on this kernel can be removed while mounted (zram
 * refuses, a loop device waits for the unmount), so the disk's sysfs "dev" attribute is a
 * file of the test's from before the mount, which it empties, and the kernel sends a real
 * "remove" uevent for the disk, which udevd handles (it removes the links) and passes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define LABEL "udevdisk"
#define UUID "2f6b9a4e-1d3c-4e8a-9b7f-0c5d6e7f8a91"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

typedef struct Call {
        const char *method; /* "Mount" or "Unmount" */
        const char *path;   /* the device path, or the mount point */
} Call;

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        sd_bus *bus = NULL;
        const char *mp;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, c->method), >=, 0);
        if (streq(c->method, "Mount"))
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
        else
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0 && streq(c->method, "Mount")) {
                g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                harness_report("mount-point=%s", mp);
                calls_report_info(reply, "info-");
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

static GHashTable *call_as_user1(const char *method, const char *path) {
        const Call c = { method, path };
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller,
                                       (void *) &c, &output), ==, 0);
        g_test_message("%s %s:\n%s", method, path, output ?: "");
        return calls_parse_report(output);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- a disk udevd knows ------------------------------------------------------------------ */

typedef struct Disk {
        char *node;     /* /dev/zramN */
        char *name;     /* zramN */
        char *dev_attr; /* /sys/block/zramN/dev, with the test's file over it */
        char *dev_file; /* that file */
} Disk;

/* A zram disk with ext4 labelled LABEL, as udevd sees it once the kernel said it changed. */
static Disk disk_new(void) {
        g_autofree char *real = NULL;
        Disk d = {};

        g_assert_cmpint(harness_zram_new_fs("64M", "mkfs.ext4 -q -L " LABEL " -U " UUID, &d.node),
                        ==, 0);
        d.name = g_path_get_basename(d.node);

        /* What the daemon reads for "is it still there", swapped for a file of ours while it
         * still says the same, so that emptying it later changes no mount table. */
        d.dev_attr = g_strdup_printf("/sys/block/%s/dev", d.name);
        d.dev_file = g_build_filename(harness_tmpdir(), "udev-dev-attr", NULL);
        g_assert_true(g_file_get_contents(d.dev_attr, &real, NULL, NULL));
        g_assert_true(g_file_set_contents(d.dev_file, real, -1, NULL));
        g_assert_cmpint(mount(d.dev_file, d.dev_attr, NULL, MS_BIND, NULL), ==, 0);
        return d;
}

static void disk_free(Disk *d) {
        g_assert_cmpint(umount2(d->dev_attr, 0), ==, 0);
        g_assert_cmpint(unlink(d->dev_file), ==, 0);
        g_assert_cmpint(harness_zram_free(d->node), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_free(d->node);
        g_free(d->name);
        g_free(d->dev_attr);
        g_free(d->dev_file);
}

static char *link_target(const char *link) {
        return g_file_read_link(link, NULL);
}

/* ---- tests --------------------------------------------------------------------------------- */

/* udevd made the links, relative, as the daemon follows them. */
static void test_links(void) {
        Disk d = disk_new();
        g_autofree char *want = g_strdup_printf("../../%s", d.name);
        g_autofree char *by_label = link_target("/dev/disk/by-label/" LABEL);
        g_autofree char *by_uuid = link_target("/dev/disk/by-uuid/" UUID);

        g_assert_cmpstr(by_label, ==, want);
        g_assert_cmpstr(by_uuid, ==, want);
        disk_free(&d);
        /* Gone with the disk. */
        g_assert_cmpint(access("/dev/disk/by-label/" LABEL, F_OK), <, 0);
        assert_clean();
}

static void mount_by_link(const char *link) {
        Disk d = disk_new();
        g_autoptr(GHashTable) t = call_as_user1("Mount", link);
        const char *mp = report_get(t, "mount-point");

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-device"), ==, d.node);
        g_assert_cmpstr(report_get(t, "info-label"), ==, LABEL);
        g_assert_cmpstr(mp, ==, "/run/media/" HARNESS_USER1 "/" LABEL);
        g_autoptr(GHashTable) u = call_as_user1("Unmount", mp);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        disk_free(&d);
        assert_clean();
}

static void test_mount_by_label(void) {
        mount_by_link("/dev/disk/by-label/" LABEL);
}

static void test_mount_by_uuid(void) {
        mount_by_link("/dev/disk/by-uuid/" UUID);
}

/* The disk goes away while mounted: udevd's "remove" event alone makes the daemon detach
 * the mount, forget it and emit MountRemoved. */
static void test_removal(void) {
        Disk d = disk_new();
        g_autoptr(GHashTable) t = call_as_user1("Mount", "/dev/disk/by-label/" LABEL);
        const char *mp = report_get(t, "mount-point");
        struct stat st;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpint(stat(mp, &st), ==, 0);

        /* In place: the bind mount holds this very inode (no new file and rename). */
        calls_forget_signals();
        g_assert_cmpint(truncate(d.dev_file, 0), ==, 0);
        g_assert_cmpint(harness_udev_trigger(d.node, "remove"), ==, 0);
        calls_await_signal("MountRemoved", mp);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        /* udevd handled the event itself: the links are gone. */
        g_assert_cmpint(access("/dev/disk/by-label/" LABEL, F_OK), <, 0);
        g_autoptr(GHashTable) u = call_as_user1("Unmount", mp);
        g_assert_cmpstr(report_get(u, "result"), ==, UM_ERROR_NOT_MOUNTED);

        /* The disk "comes back" for udevd before it is removed for real. */
        g_assert_cmpint(harness_udev_trigger(d.node, "add"), ==, 0);
        disk_free(&d);
        assert_clean();
}

/*
 * The same where statmount() is refused (an older kernel, or a seccomp filter that does
 * not know it, such as systemd 252's nspawn's): the daemon cannot tell whether the mount
 * is still there, but a device that is gone is gone, and it detaches all the same.
 */
static void test_removal_without_statmount(void) {
        const char *deny = g_getenv("UM_DENY_STATMOUNT");
        const char *const args[] = { harness_daemon_path(), "--watch-interval=0", NULL };
        const char *const normal[] = { "--watch-interval=0", NULL };
        Disk d;

        g_assert_nonnull(deny);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(deny, args, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        d = disk_new();
        g_autoptr(GHashTable) t = call_as_user1("Mount", "/dev/disk/by-uuid/" UUID);
        const char *mp = report_get(t, "mount-point");

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_forget_signals();
        g_assert_cmpint(truncate(d.dev_file, 0), ==, 0);
        g_assert_cmpint(harness_udev_trigger(d.node, "remove"), ==, 0);
        calls_await_signal("MountRemoved", mp);
        g_assert_cmpint(harness_udev_trigger(d.node, "add"), ==, 0);
        disk_free(&d);
        assert_clean();

        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), normal, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
}

int main(int argc, char *argv[]) {
        const char *const args[] = { "--watch-interval=0", NULL };

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        if (access("/sys/class/zram-control/hot_add", W_OK) < 0) {
                printf("1..0 # SKIP this kernel has no zram for block-device tests\n");
                return 0;
        }
        calls_watch_signals();
        g_assert_cmpint(harness_set_rules(CALLS_RULES_ALLOW_USER1), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &daemon_pid), ==, 0);
        calls_subscribe();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/udev/links", test_links);
        g_test_add_func("/udev/mount/by-label", test_mount_by_label);
        g_test_add_func("/udev/mount/by-uuid", test_mount_by_uuid);
        g_test_add_func("/udev/removal", test_removal);
        g_test_add_func("/udev/removal/without-statmount", test_removal_without_statmount);
        return g_test_run();
}
