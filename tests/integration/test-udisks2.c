/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front (usermountd --udisks2, docs/udisks2.md) with the real clients others
 * wrote: udisksctl 2.9.4, gio with gvfs's UDisks2 volume monitor, KDE's solid-hardware5,
 * udiskie; and the
 * contract they rely on, read with sd-bus: every property typed as udisks' XML, byte
 * strings with their NUL, "/" for no object, the children of block_devices/ listed by
 * Introspect (Solid), NotSupported for what usermount does not do. Real zram disks stand
 * in for sticks (the harness's udev rules give them a stick's hints); every mount goes
 * through usermount's pipeline: locked flags, id-mapped to the caller, the userspace
 * driver with the device node as its source. udisks2's own daemon never runs: the
 * private bus has no standard service directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness-fuse.h"
#include "harness.h"
#include "macro.h"
#include "calls.h"

#define LABEL "STICK"
#define MOUNT_POINT "/run/media/" HARNESS_USER1 "/" LABEL
#define UDISKS_BUS "org.freedesktop.UDisks2"
#define BLOCK_IFACE "org.freedesktop.UDisks2.Block"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *outdir; /* the callers' output files, the users' runtime directories */

/* ---- running a client as a user ------------------------------------------------------- */

typedef struct Tool {
        const char *script; /* sh -c; its stdout and stderr go to out */
        char *out;
} Tool;

static int caller_tool(void *userdata) {
        Tool *t = userdata;
        g_autofree char *cmd = g_strdup_printf("exec >%s 2>&1; %s", t->out, t->script);
        g_autofree char *runtime = g_strdup_printf("XDG_RUNTIME_DIR=%s/run-%u", outdir,
                                                   (unsigned) getuid());
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s",
                                               harness_bus_address());
        char *argv[] = { (char *) "/bin/sh", (char *) "-c", cmd, NULL };
        char *envp[] = { bus, runtime, (char *) "HOME=/tmp", (char *) "LANG=C.UTF-8",
                         (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                         (char *) "GIO_USE_VFS=local", NULL };
        g_autoptr(GError) error = NULL;
        int status;

        if (!g_spawn_sync("/", argv, envp, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                          &error)) {
                fprintf(stderr, "spawn: %s\n", error->message);
                return 125;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Runs script as uid (its primary group) with the private system bus; returns its exit
 * status, *ret_out what it printed. */
static int run_as(uid_t uid, const char *script, char **ret_out) {
        Tool t = { script, g_strdup_printf("%s/out-%u", outdir, (unsigned) uid) };
        g_autofree char *out = NULL;
        int status;

        status = harness_run_as(uid, uid, 0, caller_tool, &t, NULL);
        g_assert_true(g_file_get_contents(t.out, &out, NULL, NULL));
        g_test_message("as uid %u: %s\n%s(exit %d)", (unsigned) uid, script, out, status);
        g_free(t.out);
        *ret_out = TAKE_PTR(out);
        return status;
}

static int run_user1(const char *script, char **ret_out) {
        return run_as(HARNESS_UID_USER1, script, ret_out);
}

/* The line of /proc/self/mountinfo for mount_point, or NULL. */
static char *mountinfo_line(const char *mount_point) {
        g_autofree char *all = NULL;
        g_auto(GStrv) lines = NULL;
        g_autofree char *needle = g_strdup_printf(" %s ", mount_point);

        g_assert_true(g_file_get_contents("/proc/self/mountinfo", &all, NULL, NULL));
        lines = g_strsplit(all, "\n", -1);
        for (size_t i = 0; lines[i]; i++)
                if (strstr(lines[i], needle))
                        return g_strdup(lines[i]);
        return NULL;
}

/* ---- a stick ---------------------------------------------------------------------------- */

/* A zram disk with a filesystem labelled LABEL, as udevd (and so the front) sees it. */
static char *stick_new(const char *mkfs) {
        char *node = NULL;

        g_assert_cmpint(harness_zram_new_fs("64M", mkfs, &node), ==, 0);
        return node;
}

static void stick_free(char *node) {
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_free(node);
}

static char *block_path(const char *node) {
        return g_strdup_printf("/org/freedesktop/UDisks2/block_devices/%s", node + strlen("/dev/"));
}

/* ---- the contract, read with sd-bus ------------------------------------------------------ */

/* Every property of Block, Filesystem and Drive with its type in udisks 2.9.4's XML. */
static const struct {
        const char *interface, *name, *signature;
} xml_properties[] = {
        { BLOCK_IFACE, "Device", "ay" }, { BLOCK_IFACE, "PreferredDevice", "ay" },
        { BLOCK_IFACE, "Symlinks", "aay" }, { BLOCK_IFACE, "DeviceNumber", "t" },
        { BLOCK_IFACE, "Id", "s" }, { BLOCK_IFACE, "Size", "t" },
        { BLOCK_IFACE, "ReadOnly", "b" }, { BLOCK_IFACE, "Drive", "o" },
        { BLOCK_IFACE, "MDRaid", "o" }, { BLOCK_IFACE, "MDRaidMember", "o" },
        { BLOCK_IFACE, "IdUsage", "s" }, { BLOCK_IFACE, "IdType", "s" },
        { BLOCK_IFACE, "IdVersion", "s" }, { BLOCK_IFACE, "IdLabel", "s" },
        { BLOCK_IFACE, "IdUUID", "s" }, { BLOCK_IFACE, "Configuration", "a(sa{sv})" },
        { BLOCK_IFACE, "CryptoBackingDevice", "o" }, { BLOCK_IFACE, "HintPartitionable", "b" },
        { BLOCK_IFACE, "HintSystem", "b" }, { BLOCK_IFACE, "HintIgnore", "b" },
        { BLOCK_IFACE, "HintAuto", "b" }, { BLOCK_IFACE, "HintName", "s" },
        { BLOCK_IFACE, "HintIconName", "s" }, { BLOCK_IFACE, "HintSymbolicIconName", "s" },
        { BLOCK_IFACE, "UserspaceMountOptions", "as" },
        { "org.freedesktop.UDisks2.Filesystem", "MountPoints", "aay" },
        { "org.freedesktop.UDisks2.Filesystem", "Size", "t" },
};

static void test_contract(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *path = block_path(node);
        g_autofree char *xml_child = NULL;
        sd_bus *bus = harness_bus();
        const char *xml, *s;
        const void *bytes;
        size_t n;

        /* Each property of the XML, with its type. */
        for (size_t i = 0; i < ELEMENTSOF(xml_properties); i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *v = NULL;
                _cleanup_free_ char *sig = NULL;
                const char *contents = NULL;
                char type;

                /* The value as sent, positioned inside its variant: its own type. */
                g_assert_cmpint(sd_bus_get_property(bus, UDISKS_BUS, path,
                                                    xml_properties[i].interface,
                                                    xml_properties[i].name, &error, &v,
                                                    xml_properties[i].signature), >=, 0);
                g_assert_cmpint(sd_bus_message_peek_type(v, &type, &contents), >, 0);
                sig = type == 'a' ? g_strconcat("a", contents, NULL) : g_strdup_printf("%c", type);
                g_assert_cmpstr(sig, ==, xml_properties[i].signature);
        }
        /* Byte strings end in NUL (g_variant_get_bytestring() reads "" otherwise). */
        g_assert_cmpint(sd_bus_get_property(bus, UDISKS_BUS, path, BLOCK_IFACE, "Device",
                                            &error, &reply, "ay"), >=, 0);
        g_assert_cmpint(sd_bus_message_read_array(reply, 'y', &bytes, &n), >=, 0);
        g_assert_cmpuint(n, ==, strlen(node) + 1);
        g_assert_cmpmem(bytes, n, node, strlen(node) + 1);
        /* "/" for no object; no Drive for zram, as udisks2. */
        g_assert_cmpint(sd_bus_get_property_string(bus, UDISKS_BUS, path, BLOCK_IFACE,
                                                   "IdLabel", &error, (char **) &s), >=, 0);
        g_assert_cmpstr(s, ==, LABEL);
        free((char *) s);
        sd_bus_message_unref(reply);
        reply = NULL;
        g_assert_cmpint(sd_bus_get_property(bus, UDISKS_BUS, path, BLOCK_IFACE,
                                            "CryptoBackingDevice", &error, &reply, "o"), >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "o", &s), >, 0);
        g_assert_cmpstr(s, ==, "/");
        /* Solid lists block devices with Introspect. */
        sd_bus_message_unref(reply);
        reply = NULL;
        g_assert_cmpint(sd_bus_call_method(bus, UDISKS_BUS,
                                           "/org/freedesktop/UDisks2/block_devices",
                                           "org.freedesktop.DBus.Introspectable", "Introspect",
                                           &error, &reply, ""), >=, 0);
        g_assert_cmpint(sd_bus_message_read(reply, "s", &xml), >, 0);
        xml_child = g_strdup_printf("<node name=\"%s\"", node + strlen("/dev/"));
        g_assert_nonnull(strstr(xml, xml_child));
        /* What usermount does not do: NotSupported, naming it. */
        sd_bus_message_unref(reply);
        reply = NULL;
        g_assert_cmpint(sd_bus_call_method(bus, UDISKS_BUS, path, BLOCK_IFACE, "Format", &error,
                                           &reply, "sa{sv}", "vfat", 0), <, 0);
        g_assert_cmpstr(error.name, ==, "org.freedesktop.UDisks2.Error.NotSupported");
        g_assert_nonnull(strstr(error.message, "usermount"));
        /* The front's signals come from a connection of its own: not the one that sends
         * org.freedesktop.UserMount1's (udiskie fails on signals of unknown objects). */
        sd_bus_error_free(&error);
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *front = NULL, *native = NULL;
        const char *front_name, *native_name;
        g_assert_cmpint(sd_bus_get_name_creds(bus, UDISKS_BUS, SD_BUS_CREDS_UNIQUE_NAME, &front),
                        >=, 0);
        g_assert_cmpint(sd_bus_get_name_creds(bus, "org.freedesktop.UserMount1",
                                              SD_BUS_CREDS_UNIQUE_NAME, &native), >=, 0);
        g_assert_cmpint(sd_bus_creds_get_unique_name(front, &front_name), >=, 0);
        g_assert_cmpint(sd_bus_creds_get_unique_name(native, &native_name), >=, 0);
        g_assert_cmpstr(front_name, !=, native_name);
        stick_free(TAKE_PTR(node));
}

/* ---- udisksctl --------------------------------------------------------------------------- */

static void test_udisksctl(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *line = NULL, *script = NULL, *expect = NULL;

        /* info, dump, status */
        script = g_strdup_printf("udisksctl info -b %s && udisksctl dump && udisksctl status",
                                 node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "IdLabel:                    " LABEL));
        g_assert_nonnull(strstr(out, "HintSystem:                 false"));
        g_assert_nonnull(strstr(out, "Version:                    2.9.4"));
        g_assert_nonnull(strstr(out, "MODEL"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* mount: at udisks2's place, with usermount's locked flags, id-mapped to the user */
        script = g_strdup_printf("udisksctl mount -b %s && touch " MOUNT_POINT "/mine && "
                                 "stat -c %%u " MOUNT_POINT "/mine && "
                                 "udisksctl info -b %s | grep -A1 MountPoints", node, node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        expect = g_strdup_printf("Mounted %s at " MOUNT_POINT, node);
        g_assert_nonnull(strstr(out, expect));
        g_assert_nonnull(strstr(out, G_STRINGIFY(HARNESS_UID_USER1)));
        g_assert_nonnull(strstr(out, "MountPoints:        " MOUNT_POINT));
        line = mountinfo_line(MOUNT_POINT);
        g_assert_nonnull(line);
        g_assert_nonnull(strstr(line, "nosuid"));
        g_assert_nonnull(strstr(line, "nodev"));
        g_assert_nonnull(strstr(line, "noexec"));
        g_assert_nonnull(strstr(line, "idmapped"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* again: AlreadyMounted, naming where */
        script = g_strdup_printf("udisksctl mount -b %s", node);
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.AlreadyMounted"));
        g_assert_nonnull(strstr(out, MOUNT_POINT));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* another user may not unmount it without polkit's yes */
        script = g_strdup_printf("udisksctl unmount --no-user-interaction -b %s", node);
        g_assert_cmpint(run_as(HARNESS_UID_USER2, script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.NotAuthorized"));
        g_clear_pointer(&line, g_free);
        line = mountinfo_line(MOUNT_POINT);
        g_assert_nonnull(line);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* unmount, and again: NotMounted */
        script = g_strdup_printf("udisksctl unmount -b %s && udisksctl unmount -b %s", node,
                                 node);
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_clear_pointer(&expect, g_free);
        expect = g_strdup_printf("Unmounted %s.", node);
        g_assert_nonnull(strstr(out, expect));
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.NotMounted"));
        g_clear_pointer(&line, g_free);
        line = mountinfo_line(MOUNT_POINT);
        g_assert_null(line);
        g_assert_false(g_file_test(MOUNT_POINT, G_FILE_TEST_EXISTS));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* -t ext4 -o ro, then a forced (lazy) unmount */
        script = g_strdup_printf("udisksctl mount -b %s -t ext4 -o ro && "
                                 "udisksctl unmount -f -b %s", node, node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "Mounted"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* an option usermount's policy refuses: OptionNotPermitted, nothing mounted */
        script = g_strdup_printf("udisksctl mount -b %s -o suid", node);
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.OptionNotPermitted"));
        g_assert_null(mountinfo_line(MOUNT_POINT));

        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/*
 * A mount a user made through org.freedesktop.UserMount1 in a mount namespace of their own
 * (a user namespace of theirs, as a container's): MountPoints does not show its path,
 * which is nobody else's business (attack class 37); the device is still in use for the
 * front, which refuses to mount it again without naming where it is.
 */
static void test_private_namespace_hidden(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *path = block_path(node);
        g_autofree char *target = g_build_filename(harness_tmpdir(), "private-target", NULL);
        g_autofree char *out = NULL, *script = NULL, *where = NULL;

        /* The user's own directory, in a directory nobody else may write to. */
        g_assert_cmpint(mkdir(target, 0700), ==, 0);
        g_assert_cmpint(chown(target, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        script = g_strdup_printf(
                "unshare --user --map-root-user --mount sh -c '"
                "busctl --system call org.freedesktop.UserMount1 /org/freedesktop/UserMount1 "
                "org.freedesktop.UserMount1.Manager Mount sssa{sv} %s \"\" \"\" 1 target s "
                "%s && "
                "echo shown: $(busctl --system get-property " UDISKS_BUS " %s "
                "org.freedesktop.UDisks2.Filesystem MountPoints) && "
                "{ udisksctl mount -b %s; true; } && "
                "busctl --system call org.freedesktop.UserMount1 /org/freedesktop/UserMount1 "
                "org.freedesktop.UserMount1.Manager Unmount sa{sv} %s 0'",
                node, target, path, node, target);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_cmpint(rmdir(target), ==, 0);
        g_assert_nonnull(strstr(out, "shown: aay 0"));
        g_assert_nonnull(strstr(out, "AlreadyMounted"));
        g_assert_nonnull(strstr(out, "in a mount namespace of a user's own"));
        where = g_strdup_printf("at `%s", target);
        g_assert_null(strstr(out, where));
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* A caller polkit says no to: NotAuthorized*, nothing mounted. Without a terminal,
 * udisksctl cannot start its own agent and reports the error. */
static void test_refused(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL;

        script = g_strdup_printf("udisksctl mount --no-user-interaction -b %s; "
                                 "udisksctl mount -b %s </dev/null", node, node);
        g_assert_cmpint(run_as(HARNESS_UID_USER2, script, &out), ==, 1);
        g_assert_cmpuint(harness_count_substrings(out, "org.freedesktop.UDisks2.Error.NotAuthorized"),
                         ==, 2);
        g_assert_null(mountinfo_line("/run/media/" HARNESS_USER2 "/" LABEL));
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* polkit/50-usermount-from-udisks2.rules: an admin's udisks2 rule (a group may mount
 * internal disks, filesystem-mount-system) answers usermount's mount-system. */
static void test_polkit_from_udisks2(void) {
        g_autofree char *rule = calls_example_rule("50-usermount-from-udisks2.rules", "GROUP",
                                                   "\"" HARNESS_GROUP "\"");
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL;

        g_assert_cmpint(harness_set_rules(rule), ==, 0);
        script = g_strdup_printf("udisksctl mount --no-user-interaction -b %s && "
                                 "udisksctl unmount -b %s", node, node);
        /* umtestadm is in the group; umtest2 is not */
        g_assert_cmpint(run_as(HARNESS_UID_ADMIN, script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "Mounted "));
        g_clear_pointer(&out, g_free);
        g_assert_cmpint(run_as(HARNESS_UID_USER2, script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "Error mounting"));
        g_assert_cmpint(harness_set_rules(CALLS_RULES_ALLOW_USER1), ==, 0);
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- gio and gvfs ------------------------------------------------------------------------ */

static void test_gio(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL, *unix_device = NULL;

        /* One session: the volume monitor keeps running from one gio to the next. */
        script = g_strdup_printf("dbus-run-session -- sh -c '"
                                 "gio mount -li; echo ===; "
                                 "gio mount -d %s && echo mounted; echo ===; "
                                 "gio mount -li; echo ===; "
                                 "gio mount -u " MOUNT_POINT " && echo unmounted; echo ==='",
                                 node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_auto(GStrv) parts = g_strsplit(out, "===", -1);
        g_assert_cmpuint(g_strv_length(parts), >=, 4);
        unix_device = g_strdup_printf("unix-device: '%s'", node);
        g_assert_null(strstr(out, "Error creating proxy"));
        g_assert_nonnull(strstr(parts[0], "Volume(0): " LABEL));
        g_assert_nonnull(strstr(parts[0], unix_device));
        g_assert_nonnull(strstr(parts[1], "mounted"));
        /* The mount is bound to its volume (by the device number of its source). */
        g_assert_nonnull(strstr(parts[2], "Mount(0): " LABEL " -> file://" MOUNT_POINT));
        g_assert_nonnull(strstr(parts[3], "unmounted"));
        g_assert_null(mountinfo_line(MOUNT_POINT));
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* The userspace driver: its FUSE mount has the device node as its source, so that gvfs
 * (and Solid) put it on the right volume, and usermount's own unmount is used. */
static void test_gio_userspace(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL, *line = NULL, *source = NULL;

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf",
                                          "[General]\nDriver=userspace\n"),
                        ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        script = g_strdup_printf("dbus-run-session -- sh -c '"
                                 "gio mount -d %s && echo mounted; echo ===; "
                                 "gio mount -li; echo ===; "
                                 "gio mount -u " MOUNT_POINT " && echo unmounted'", node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "Mount(0): " LABEL " -> file://" MOUNT_POINT));
        g_assert_nonnull(strstr(out, "unmounted"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        script = g_strdup_printf("udisksctl mount -b %s", node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        line = mountinfo_line(MOUNT_POINT);
        g_assert_nonnull(line);
        source = g_strdup_printf(" - fuse.fuse2fs %s ", node);
        g_assert_nonnull(strstr(line, source));
        g_assert_nonnull(strstr(line, "nosuid"));
        g_assert_nonnull(strstr(line, "noexec"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl unmount -b %s", node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", HARNESS_CONF_DEFAULT), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        calls_await_drivers(0);
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- KDE's Solid ------------------------------------------------------------------------- */

/* solid-hardware5, as Dolphin's device panel: lists by Introspect, reads with GetAll, mounts
 * and unmounts (then asks the drive to power off, which this disk cannot: fire and forget).
 * Solid tells its own processes that a mount is done over the session bus, hence one. */
static void test_solid(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *path = block_path(node), *out = NULL, *script = NULL;

        if (access("/usr/bin/solid-hardware5", X_OK) < 0) {
                g_test_skip("solid-hardware5 is not installed (libkf5solid-bin)");
                stick_free(TAKE_PTR(node));
                return;
        }
        script = g_strdup_printf("export QT_QPA_PLATFORM=offscreen; dbus-run-session -- sh -c '"
                                 "solid-hardware5 list; echo ===; "
                                 "solid-hardware5 details %s; echo ===; "
                                 "solid-hardware5 mount %s; grep \" %s \" /proc/self/mountinfo; "
                                 "solid-hardware5 details %s; echo ===; "
                                 "solid-hardware5 unmount %s; "
                                 "grep -c \" %s \" /proc/self/mountinfo'",
                                 path, path, MOUNT_POINT, path, path, MOUNT_POINT);
        /* (solid-hardware5's exit status says nothing here: what it did is checked) */
        (void) run_user1(script, &out);
        g_auto(GStrv) parts = g_strsplit(out, "===", -1);
        g_assert_cmpuint(g_strv_length(parts), ==, 4);
        g_assert_nonnull(strstr(parts[0], path));
        g_assert_nonnull(strstr(parts[0], "/org/freedesktop/UDisks2/drives/usermount_Test_Stick"));
        g_assert_nonnull(strstr(parts[1], "StorageVolume.label = '" LABEL "'"));
        g_assert_nonnull(strstr(parts[1], "StorageVolume.fsType = 'ext4'"));
        g_assert_nonnull(strstr(parts[1], "StorageAccess.accessible = false"));
        /* mounted where gvfs would put it, found accessible there (by MountPoints) */
        g_assert_nonnull(strstr(parts[2], " - ext4 "));
        g_assert_nonnull(strstr(parts[2], "StorageAccess.accessible = true"));
        g_assert_nonnull(strstr(parts[2], "StorageAccess.filePath = '" MOUNT_POINT "'"));
        g_assert_cmpint(atoi(g_strstrip(parts[3])), ==, 0);
        g_assert_null(mountinfo_line(MOUNT_POINT));
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- udiskie ----------------------------------------------------------------------------- */

static int caller_udiskie(void *userdata) {
        const char *events = userdata;
        g_autofree char *cmd = g_strdup_printf("/bin/sh -c 'echo \"$0 $1 $2\" >>%s' {event} "
                                               "{device_file} {mount_path}", events);
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s",
                                               harness_bus_address());
        char *argv[] = { (char *) "udiskie", (char *) "-C", (char *) "-N", (char *) "-T",
                         (char *) "-F", (char *) "-P", (char *) "-a", (char *) "--notify-command",
                         cmd, NULL };
        char *envp[] = { bus, (char *) "HOME=/tmp", (char *) "LANG=C.UTF-8",
                         (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

        execvpe(argv[0], argv, envp);
        return 127;
}

/* Waits until file contains text; whether it did. */
static bool await_text(const char *file, const char *text) {
        for (int i = 0; i < HARNESS_TIMEOUT_MS / 100; i++) {
                g_autofree char *s = NULL;

                if (g_file_get_contents(file, &s, NULL, NULL) && strstr(s, text))
                        return true;
                g_usleep(100 * 1000);
        }
        return false;
}

static void test_udiskie(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL, *events = NULL, *expect = NULL;
        g_autofree char *line = NULL;
        g_autoptr(HarnessCaller) daemon = NULL;
        char *second;

        /* udiskie-mount and udiskie-umount */
        script = g_strdup_printf("udiskie-mount -C %s && udiskie-info -C -a && "
                                 "udiskie-umount -C %s", node, node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "mounted /org/freedesktop/UDisks2/block_devices/"));
        g_assert_nonnull(strstr(out, "on " MOUNT_POINT));
        g_assert_nonnull(strstr(out, "unmounted"));
        g_assert_null(mountinfo_line(MOUNT_POINT));

        /* The automounter: what is there at its start, and a stick plugged in later. */
        events = g_strdup_printf("%s/udiskie-events", outdir);
        g_assert_true(g_file_set_contents(events, "", 0, NULL));
        g_assert_cmpint(chown(events, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0,
                                             caller_udiskie, events, &daemon), ==, 0);
        expect = g_strdup_printf("device_mounted %s " MOUNT_POINT, node);
        g_assert_true(await_text(events, expect));
        line = mountinfo_line(MOUNT_POINT);
        g_assert_nonnull(line);

        second = stick_new("mkfs.ext4 -q -L SECOND");
        g_clear_pointer(&expect, g_free);
        expect = g_strdup_printf("device_mounted %s /run/media/" HARNESS_USER1 "/SECOND",
                                 second);
        g_assert_true(await_text(events, expect));

        /* Unmounted elsewhere (udisksctl), then removed: udiskie hears both. */
        g_clear_pointer(&script, g_free);
        g_clear_pointer(&out, g_free);
        script = g_strdup_printf("udisksctl unmount -b %s", second);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_clear_pointer(&expect, g_free);
        expect = g_strdup_printf("device_unmounted %s", second);
        g_assert_true(await_text(events, expect));
        g_clear_pointer(&expect, g_free);
        expect = g_strdup_printf("device_removed %s", second);
        stick_free(second);
        g_assert_true(await_text(events, expect));

        daemon = harness_caller_free(g_steal_pointer(&daemon));
        g_clear_pointer(&script, g_free);
        g_clear_pointer(&out, g_free);
        script = g_strdup_printf("udisksctl unmount -b %s", node);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- drives: status, Eject, PowerOff --------------------------------------------------------- */

/* The harness's zram sticks have a drive (udev gives them a USB stick's identity): listed,
 * automounted by gvfs's rule, and Eject and PowerOff do what udisks2 does: refused while
 * mounted, refused to another user by polkit, then a flush and the SCSI eject, or the
 * USB port's power, which a zram disk has not (Failed, saying so: there is no USB stick
 * on this machine to take away for real). */
static void test_drive(void) {
        g_autofree char *node = stick_new("mkfs.ext4 -q -L " LABEL);
        g_autofree char *out = NULL, *script = NULL, *expect = NULL;

        script = g_strdup_printf("udisksctl status; udisksctl info -d usermount_Test_Stick_%s",
                                 node + strlen("/dev/"));
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        expect = g_strdup_printf("Test Stick                1.0      %s %s",
                                 node + strlen("/dev/"), node + strlen("/dev/"));
        g_assert_nonnull(strstr(out, "Test Stick"));
        g_assert_nonnull(strstr(out, "ConnectionBus:              usb"));
        g_assert_nonnull(strstr(out, "Vendor:                     usermount"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* gvfs lists the drive with its volume, to be mounted automatically */
        g_assert_cmpint(run_user1("dbus-run-session -- gio mount -li", &out), ==, 0);
        g_assert_nonnull(strstr(out, "Drive(0): usermount Test Stick"));
        g_assert_nonnull(strstr(out, "Volume(0): " LABEL));
        g_assert_nonnull(strstr(out, "should_automount=1"));
        g_clear_pointer(&out, g_free);

        /* busy while mounted: nothing flushed, nothing ejected */
        script = g_strdup_printf("udisksctl mount -b %s && udisksctl power-off -b %s; "
                                 "gdbus call --system --dest org.freedesktop.UDisks2 "
                                 "--object-path /org/freedesktop/UDisks2/drives/"
                                 "usermount_Test_Stick_%s --method "
                                 "org.freedesktop.UDisks2.Drive.Eject {}",
                                 node, node, node + strlen("/dev/"));
        g_assert_cmpint(run_user1(script, &out), !=, 0);
        /* udisksctl prints the error by its code in the UDisks2 domain (14, DeviceBusy) */
        g_assert_nonnull(strstr(out, "(udisks-error-quark, 14)"));
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.DeviceBusy"));
        g_assert_cmpuint(harness_count_substrings(out, "drive in use: Device"), ==, 2);
        g_assert_nonnull(strstr(out, "is mounted at " MOUNT_POINT));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* gio mount -e: gvfs unmounts, then asks for Eject, which this disk cannot do (gio
         * says nothing of it, and exits 0); the same Eject, asked directly, says why */
        script = g_strdup_printf("dbus-run-session -- gio mount -e " MOUNT_POINT "; "
                                 "gdbus call --system --dest org.freedesktop.UDisks2 "
                                 "--object-path /org/freedesktop/UDisks2/drives/"
                                 "usermount_Test_Stick_%s --method "
                                 "org.freedesktop.UDisks2.Drive.Eject {}",
                                 node + strlen("/dev/"));
        g_assert_cmpint(run_user1(script, &out), !=, 0);
        g_assert_null(mountinfo_line(MOUNT_POINT));
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.Failed: Error ejecting"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* another user: polkit's no (mount-system: usermount finds no removable disk) */
        script = g_strdup_printf("udisksctl power-off --no-user-interaction -b %s", node);
        g_assert_cmpint(run_as(HARNESS_UID_USER2, script, &out), ==, 1);
        /* 4: NotAuthorizedCanObtain, in the UDisks2 error domain */
        g_assert_nonnull(strstr(out, "(udisks-error-quark, 4)"));
        g_assert_nonnull(strstr(out, "usermount1.mount-system"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* the owner: flushed, then the port that is not there */
        script = g_strdup_printf("udisksctl power-off -b %s", node);
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "not on a USB port"));
        stick_free(TAKE_PTR(node));
        calls_assert_clean(daemon_pid, &baseline);
}

/* ---- loop devices ------------------------------------------------------------------------ */

/* An ext4 image labelled LABEL that user1 owns. */
static char *user_image(void) {
        char *image = NULL;

        g_assert_cmpint(harness_make_image("ext4", &(HarnessImageSpec) { .label = LABEL },
                                           &image), ==, 0);
        g_assert_cmpint(chown(image, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return image;
}

/* The /dev/loopN in udisksctl's "Mapped file IMG as /dev/loopN." */
static char *mapped_device(const char *out) {
        const char *p = strstr(out, " as /dev/loop");
        size_t n;

        g_assert_nonnull(p);
        p += strlen(" as ");
        n = strcspn(p, ".\n");
        return g_strndup(p, n);
}

static void test_loop(void) {
        g_autofree char *image = user_image();
        g_autofree char *out = NULL, *script = NULL, *device = NULL, *line = NULL;
        g_autoptr(HarnessFuse) fuse = NULL;

        /* A loop device of LoopSetup is read by a userspace driver only (the kernel's would
         * skip the image path's checks): with Driver=kernel, refused. */
        script = g_strdup_printf("udisksctl loop-setup -f %s", image);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        device = mapped_device(out);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl mount -b %s", device);
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "userspace driver only"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl loop-delete -b %s", device);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        g_clear_pointer(&device, g_free);
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf",
                                          "[General]\nDriver=userspace\n"), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);

        /* loop-setup: the object is there when udisksctl looks (it reads Block.Device of the
         * reply's path at once), set up by the caller, with the image's filesystem */
        script = g_strdup_printf("udisksctl loop-setup -f %s", image);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        device = mapped_device(out);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl info -b %s", device);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "SetupByUID:         " G_STRINGIFY(HARNESS_UID_USER1)));
        g_assert_nonnull(strstr(out, "IdLabel:                    " LABEL));
        g_assert_nonnull(strstr(out, "Autoclear:          false"));
        g_assert_nonnull(strstr(out, image));
        /* usermount's mark: no /dev/disk links for a user's image */
        g_assert_null(strstr(out, "/dev/disk/by-label/" LABEL));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* another user can neither delete it nor change it */
        script = g_strdup_printf("udisksctl loop-delete -b %s", device);
        g_assert_cmpint(run_as(HARNESS_UID_USER2, script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.NotAuthorized"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* mounted as the user's image (mount-image), busy while mounted, gone after */
        script = g_strdup_printf("udisksctl mount -b %s && udisksctl loop-delete -b %s; "
                                 "udisksctl unmount -b %s && udisksctl loop-delete -b %s",
                                 device, device, device, device);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "Mounted " ));
        g_assert_nonnull(strstr(out, "org.freedesktop.UDisks2.Error.DeviceBusy"));
        g_assert_nonnull(strstr(out, "Unmounted "));
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_assert_cmpint(calls_count_loops_on(image), ==, 0);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* read-only, and Autoclear (as gvfs sets it after a mount): the device goes with
         * its mount */
        script = g_strdup_printf("udisksctl loop-setup -r -f %s", image);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_clear_pointer(&device, g_free);
        device = mapped_device(out);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl mount -b %s && gdbus call --system "
                                 "--dest org.freedesktop.UDisks2 --object-path "
                                 "/org/freedesktop/UDisks2/block_devices/%s --method "
                                 "org.freedesktop.UDisks2.Loop.SetAutoclear true {} && "
                                 "udisksctl info -b %s | grep Autoclear",
                                 device, device + strlen("/dev/"), device);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_nonnull(strstr(out, "Autoclear:          true"));
        line = mountinfo_line(MOUNT_POINT);
        g_assert_nonnull(line);
        g_assert_nonnull(strstr(line, " ro"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("udisksctl unmount -b %s", device);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        for (int i = 0; calls_count_loops_on(image) > 0; i++) {
                g_assert_cmpint(i, <, HARNESS_TIMEOUT_MS / 10);
                g_usleep(10 * 1000);
        }
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);

        /* One writer per filesystem: the device holds the image's claim, so a writable
         * mount of the image beside it is refused, and so is the device beside a writable
         * mount of the image. */
        script = g_strdup_printf("udisksctl loop-setup -f %s", image);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_clear_pointer(&device, g_free);
        device = mapped_device(out);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        script = g_strdup_printf("%s mount %s; udisksctl loop-delete -b %s && "
                                 "%s mount %s && udisksctl loop-setup -f %s; "
                                 "%s unmount %s",
                                 g_getenv("UM_USERMOUNT"), image, device,
                                 g_getenv("UM_USERMOUNT"), image, image,
                                 g_getenv("UM_USERMOUNT"), image);
        g_assert_cmpint(run_user1(script, &out), ==, 0);
        g_assert_cmpuint(harness_count_substrings(out, "in use"), ==, 2);
        g_assert_nonnull(strstr(out, "Error setting up loop device"));
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        g_clear_pointer(&device, g_free);
        for (int i = 0; calls_count_loops_on(image) > 0; i++) {
                g_assert_cmpint(i, <, HARNESS_TIMEOUT_MS / 10);
                g_usleep(10 * 1000);
        }

        /* An image on FUSE (its server may change what the kernel reads at any time):
         * refused, nothing made. */
        g_assert_cmpint(harness_fuse_new(image, &fuse), ==, 0);
        script = g_strdup_printf("udisksctl loop-setup -f %s", harness_fuse_image_path(fuse));
        g_assert_cmpint(run_user1(script, &out), ==, 1);
        g_assert_nonnull(strstr(out, "FUSE filesystem"));
        g_assert_cmpint(calls_count_loops_on(harness_fuse_image_path(fuse)), ==, 0);
        g_clear_pointer(&out, g_free);
        g_clear_pointer(&script, g_free);
        fuse = harness_fuse_free(g_steal_pointer(&fuse));

        /* not a regular file: refused, nothing made */
        g_assert_cmpint(run_user1("udisksctl loop-setup -f /dev/null", &out), ==, 1);
        g_assert_nonnull(strstr(out, "regular file"));
        g_assert_cmpint(harness_udev_settle(), ==, 0);
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", HARNESS_CONF_DEFAULT), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
}

int main(int argc, char *argv[]) {
        const char *const args[] = { "--udisks2", NULL };
        const uid_t users[] = { HARNESS_UID_USER1, HARNESS_UID_USER2, HARNESS_UID_ADMIN };

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
        outdir = g_build_filename(harness_tmpdir(), "udisks2", NULL);
        g_assert_cmpint(g_mkdir_with_parents(outdir, 0755), ==, 0);
        for (size_t i = 0; i < ELEMENTSOF(users); i++) {
                g_autofree char *run = g_strdup_printf("%s/run-%u", outdir, (unsigned) users[i]);

                g_assert_cmpint(g_mkdir_with_parents(run, 0700), ==, 0);
                g_assert_cmpint(chown(run, users[i], users[i]), ==, 0);
        }
        g_assert_cmpint(chmod(outdir, 01777), ==, 0);
        g_assert_cmpint(harness_set_rules(CALLS_RULES_ALLOW_USER1), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), args, &daemon_pid), ==, 0);
        /* The front asks for its name once the native one is granted. */
        for (int i = 0; sd_bus_get_name_creds(harness_bus(), UDISKS_BUS, 0, NULL) < 0; i++) {
                g_assert_cmpint(i, <, HARNESS_TIMEOUT_MS / 10);
                g_usleep(10 * 1000);
        }
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/udisks2/contract", test_contract);
        g_test_add_func("/udisks2/udisksctl", test_udisksctl);
        g_test_add_func("/udisks2/private-namespace-hidden", test_private_namespace_hidden);
        g_test_add_func("/udisks2/refused", test_refused);
        g_test_add_func("/udisks2/polkit-from-udisks2", test_polkit_from_udisks2);
        g_test_add_func("/udisks2/gio", test_gio);
        g_test_add_func("/udisks2/gio-userspace", test_gio_userspace);
        g_test_add_func("/udisks2/solid", test_solid);
        g_test_add_func("/udisks2/udiskie", test_udiskie);
        g_test_add_func("/udisks2/loop", test_loop);
        g_test_add_func("/udisks2/drive", test_drive);
        return g_test_run();
}
