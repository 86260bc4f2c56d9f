/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Partitioned images end to end (params "partition"): the real usermountd on the private
 * bus with the real polkitd, GPT and MBR images made by sfdisk with filesystems on the
 * partitions' byte ranges (tests/make-partitioned-image.sh), real loop devices, and
 * unprivileged callers, in a user + mount namespace of their own (OpenMount) or on the
 * host (MountFd, the CLI). Every refusal leaves nothing behind (no loop device, no mount),
 * polkit rules see the "partition" detail, and usermount probe and --partition=label:
 * work as the user.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

/* tests/make-partitioned-image.sh kinds, and a plain ext4 image without a table. */
static char *img_gpt, *img_gpt_one, *img_mbr, *img_many, *img_plain;

/* umtest1 may do anything; umtest2 may mount partition 2 of an image, and nothing else. */
static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        if (subject.user == 'umtest2')\n"
        "                return action.lookup('partition') == '2' ? polkit.Result.YES :\n"
        "                                                           polkit.Result.NO;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

typedef enum CallKind {
        CALL_OPEN_MOUNT,   /* in a namespace of its own; attach at target, try to unlock */
        CALL_MOUNT_FD,     /* on the host; attached by the daemon at target */
        CALL_MOUNT,        /* Mount of a device path */
        CALL_LIST,
        CALL_UNMOUNT,
        CALL_CLI,          /* usermount with args */
} CallKind;

typedef struct Call {
        CallKind kind;
        const char *path;       /* the image (or device, mount point) */
        const char *partition;  /* params["partition"] (u) as text; NULL: none */
        const char *target;
        const char *partition2; /* CALL_OPEN_MOUNT: a second OpenMount of this partition of
                                 * the same image while the first mount is held */
        const char *const *args; /* CALL_CLI: after "usermount" */
} Call;

static void report_flags(const char *key, const char *path) {
        struct statvfs sv;

        if (statvfs(path, &sv) < 0)
                return;
        harness_report("%s=%s%s%s%s", key, sv.f_flag & ST_NOSUID ? "nosuid," : "",
                       sv.f_flag & ST_NODEV ? "nodev," : "", sv.f_flag & ST_NOEXEC ? "noexec," : "",
                       sv.f_flag & ST_RDONLY ? "ro," : "");
        /* What the filesystem has: partition 2's ext4 is 8 MiB, not the image's 24. */
        harness_report("%s-bytes=%llu", key,
                       (unsigned long long) sv.f_blocks * (unsigned long long) sv.f_frsize);
}

/* The receiver, root in its own namespaces, tries to clear every lock. */
static void try_to_unlock(int fd, const char *target) {
        static const struct {
                const char *name;
                uint64_t attr;
        } attrs[] = {
                { "nosuid", MOUNT_ATTR_NOSUID },
                { "nodev", MOUNT_ATTR_NODEV },
                { "noexec", MOUNT_ATTR_NOEXEC },
        };
        int r;

        for (size_t i = 0; i < G_N_ELEMENTS(attrs); i++) {
                struct mount_attr a = { .attr_clr = attrs[i].attr };

                r = mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a));
                harness_report("clear-detached-%s=%s", attrs[i].name, calls_errno_name(r));
        }
        r = move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", calls_errno_name(r));
        if (r < 0)
                return;
        report_flags("flags", target);
        for (size_t i = 0; i < G_N_ELEMENTS(attrs); i++) {
                struct mount_attr a = { .attr_clr = attrs[i].attr };

                r = mount_setattr(AT_FDCWD, target, 0, &a, sizeof(a));
                harness_report("clear-attached-%s=%s", attrs[i].name, calls_errno_name(r));
        }
        r = mount(NULL, target, NULL, MS_REMOUNT | MS_BIND, NULL);
        harness_report("remount-bind=%s", calls_errno_name(r));
        r = umount2(target, MNT_DETACH);
        harness_report("detach=%s", calls_errno_name(r));
}

/* OpenMount of partition (NULL: none) of path; the mount fd, or -1 after reporting. */
static int open_mount(sd_bus *bus, const char *path, const char *partition, const char *prefix) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = open(path, O_RDWR | O_CLOEXEC);
        const Param params[] = { { "partition", "u", partition }, {} };
        int fd, r;

        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "OpenMount"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        g_assert_cmpint(calls_append_params(call, partition ? params : NULL), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (r < 0) {
                harness_report("%sresult=%s", prefix, error.name ?: "none");
                harness_report("%smessage=%s", prefix, error.message ?: "");
                return -1;
        }
        harness_report("%sresult=ok", prefix);
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        calls_report_info(reply, strcmp(prefix, "") == 0 ? "info-" : "second-info-");
        return fd;
}

static int run_cli(const char *const *args, char **ret_out, int *ret_status) {
        g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func(g_free);
        g_autofree char *out = NULL, *err = NULL;
        g_autofree char *bus = g_strdup_printf("DBUS_SYSTEM_BUS_ADDRESS=%s", harness_bus_address());
        char *envp[] = { bus, (char *) "HOME=/", (char *) "USER=" HARNESS_USER1,
                         (char *) "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                         (char *) "ASAN_OPTIONS=verify_asan_link_order=0", NULL };
        g_autoptr(GError) error = NULL;

        g_ptr_array_add(argv, g_strdup(g_getenv("UM_USERMOUNT")));
        for (size_t i = 0; args[i]; i++)
                g_ptr_array_add(argv, g_strdup(args[i]));
        g_ptr_array_add(argv, NULL);
        if (!g_spawn_sync(NULL, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out,
                          &err, ret_status, &error)) {
                fprintf(stderr, "spawn: %s\n", error->message);
                return -EIO;
        }
        *ret_out = g_strconcat(strempty(out), "\n--stderr--\n", strempty(err), NULL);
        return 0;
}

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF, second = -EBADF;
        const Param with_target[] = { { "partition", "u", c->partition },
                                      { "target", "s", c->target }, {} };
        const Param *params = c->partition ? with_target : with_target + 1;
        sd_bus *bus = NULL;
        int r;

        if (c->kind == CALL_CLI) {
                g_autofree char *out = NULL;
                int status;

                if (run_cli(c->args, &out, &status) < 0)
                        return 1;
                harness_report("status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : 255);
                /* One report line: the output's lines joined by '|'. */
                g_strdelimit(out, "\n", '|');
                harness_report("output=%s", out);
                return 0;
        }

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        if (c->kind == CALL_OPEN_MOUNT) {
                mount_fd = open_mount(bus, c->path, c->partition, "");
                if (mount_fd >= 0 && c->partition2)
                        second = open_mount(bus, c->path, c->partition2, "second-");
                if (mount_fd >= 0 && c->target)
                        try_to_unlock(mount_fd, c->target);
                sd_bus_flush_close_unref(bus);
                return 0;
        }

        g_assert_cmpint(sd_bus_message_new_method_call(
                                bus, &call, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                                c->kind == CALL_MOUNT ? "Mount" :
                                c->kind == CALL_LIST ? "ListMounts" :
                                c->kind == CALL_UNMOUNT ? "Unmount" : "MountFd"), >=, 0);
        switch (c->kind) {
        case CALL_MOUNT_FD:
                source = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(source, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
                g_assert_cmpint(calls_append_params(call, params), >=, 0);
                break;
        case CALL_MOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
                g_assert_cmpint(calls_append_params(call, params), >=, 0);
                break;
        case CALL_UNMOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
                g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
                break;
        case CALL_LIST:
                g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
                break;
        default:
                g_assert_not_reached();
        }
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0) {
                if (c->kind == CALL_MOUNT_FD) {
                        const char *mp;

                        g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                        harness_report("mount-point=%s", mp);
                        calls_report_info(reply, "info-");
                        report_flags("flags", mp);
                } else if (c->kind == CALL_LIST)
                        calls_report_mount_list(reply);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

static GHashTable *call_as(uid_t uid, HarnessRunFlags flags, const Call *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, flags, caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static GHashTable *open_mount_as(uid_t uid, const Call *c) {
        return call_as(uid, HARNESS_NEW_USERNS, c);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

static void assert_contains(const char *s, const char *part) {
        if (!strstr(strempty(s), part))
                g_test_fail_printf("'%s' does not contain '%s'", strempty(s), part);
}

/* OpenMount is refused with error and a message that contains part; nothing is left. */
static void assert_open_mount_refused(const char *image, const char *partition,
                                      const char *error, const char *part) {
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = image, .partition = partition };
        g_autoptr(GHashTable) t = open_mount_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, error);
        assert_contains(report_get(t, "message"), part);
        assert_clean();
}

/* A directory of umtest1's (the target of attached mounts). */
static char *make_target(const char *name) {
        char *dir = g_build_filename(harness_tmpdir(), "part-targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return dir;
}

static char *make_partitioned(const char *kind) {
        g_autofree char *script = g_build_filename(harness_source_root(), "tests",
                                                   "make-partitioned-image.sh", NULL);
        g_autofree char *dir = g_build_filename(harness_tmpdir(), "part-images", NULL);
        char *path = g_strdup_printf("%s/%s.img", dir, kind);
        g_autofree char *cmd = g_strdup_printf("/bin/sh '%s' '%s' '%s'", script, kind, path);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

/* ---- Tests ----------------------------------------------------------------------------- */

/* Partition 2 of a GPT image: mounted, 8 MiB not the image's 24, locked against a receiver
 * that is root in its own namespaces, and the info says which partition. */
static void test_open_mount_partition(void) {
        g_autofree char *target = make_target("p2");
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = img_gpt, .partition = "2",
                         .target = target };
        g_autoptr(GHashTable) t = open_mount_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "2");
        g_assert_cmpstr(report_get(t, "info-fstype"), ==, "ext4");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "um-part2");
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, img_gpt);
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "info-device")), "/dev/loop"));
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,noexec");
        for (const char *const *f = (const char *const[]) { "nosuid", "nodev", "noexec", NULL };
             *f; f++) {
                g_autofree char *k1 = g_strdup_printf("clear-detached-%s", *f);
                g_autofree char *k2 = g_strdup_printf("clear-attached-%s", *f);

                g_assert_cmpstr(report_get(t, k1), ==, "EPERM");
                g_assert_cmpstr(report_get(t, k2), ==, "EPERM");
        }
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,noexec,");
        g_assert_cmpuint(g_ascii_strtoull(strempty(report_get(t, "flags-bytes")), NULL, 10), <=,
                         8 << 20);
        g_assert_cmpuint(g_ascii_strtoull(strempty(report_get(t, "flags-bytes")), NULL, 10), >,
                         4 << 20);
        g_assert_cmpstr(report_get(t, "remount-bind"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "detach"), ==, "ok");
        assert_clean();
}

/* Two partitions of one image at once; the same partition twice is busy. */
static void test_open_mount_two_partitions(void) {
        const Call both = { .kind = CALL_OPEN_MOUNT, .path = img_gpt, .partition = "2",
                            .partition2 = "4" };
        const Call twice = { .kind = CALL_OPEN_MOUNT, .path = img_gpt, .partition = "4",
                             .partition2 = "4" };
        g_autoptr(GHashTable) t = open_mount_as(HARNESS_UID_USER1, &both);
        g_autoptr(GHashTable) t2 = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "second-result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "second-info-partition"), ==, "4");
        g_assert_cmpstr(report_get(t, "second-info-label"), ==, "um-part4");
        assert_clean();

        t2 = open_mount_as(HARNESS_UID_USER1, &twice);
        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "second-result"), ==, UM_ERROR_DEVICE_BUSY);
        assert_contains(report_get(t2, "second-message"), "The partition is in use");
        assert_clean();
}

static void test_open_mount_ambiguous(void) {
        assert_open_mount_refused(img_gpt, NULL, UM_ERROR_INVALID_SOURCE,
                                  "The image has a GPT partition table with 2 partitions "
                                  "usermount can mount: 2 (linux-generic, ext4 \"um-part2\"), 4 "
                                  "(root-x86-64, ext4 \"um-part4\"); choose one with the "
                                  "'partition' parameter");
        /* 0 is "the only mountable one", as absent. */
        assert_open_mount_refused(img_gpt, "0", UM_ERROR_INVALID_SOURCE,
                                  "2 partitions usermount can mount");
}

/* One mountable partition (next to a swap partition): chosen without being named. */
static void test_open_mount_only_one(void) {
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = img_gpt_one };
        g_autoptr(GHashTable) t = open_mount_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "1");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "um-only");
        assert_clean();
}

/* Every refusal a user can meet, each leaving no loop device and no mount behind. */
static void test_open_mount_refusals(void) {
        assert_open_mount_refused(img_gpt, "9", UM_ERROR_INVALID_ARGUMENT,
                                  "The image's GPT partition table has no partition 9; its "
                                  "partitions: 1 (esp, no filesystem), 2 (linux-generic, ext4 "
                                  "\"um-part2\"), 3 (swap, swap), 4 (root-x86-64, ext4 "
                                  "\"um-part4\").");
        assert_open_mount_refused(img_gpt, "4294967295", UM_ERROR_INVALID_ARGUMENT,
                                  "has no partition 4294967295");
        assert_open_mount_refused(img_gpt, "3", UM_ERROR_INVALID_SOURCE,
                                  "Partition 3 of the image holds no filesystem but something "
                                  "else");
        assert_open_mount_refused(img_gpt, "1", UM_ERROR_INVALID_SOURCE,
                                  "Partition 1 of the image holds no filesystem that usermount "
                                  "recognises");
        assert_open_mount_refused(img_mbr, "2", UM_ERROR_INVALID_SOURCE,
                                  "Partition 2 of the image is an extended partition");
        assert_open_mount_refused(img_plain, "1", UM_ERROR_INVALID_ARGUMENT,
                                  "Parameter 'partition' was given, but the image has no "
                                  "partition table");
        /* The limit: more partitions than usermount reads. */
        assert_open_mount_refused(img_many, "1", UM_ERROR_INVALID_SOURCE,
                                  "more than 128 partitions");
        assert_open_mount_refused(img_many, NULL, UM_ERROR_INVALID_SOURCE,
                                  "more than 128 partitions");
}

static void test_open_mount_mbr(void) {
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = img_mbr, .partition = "5" };
        g_autoptr(GHashTable) t = open_mount_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "5");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "um-mbr5");
        assert_clean();
        assert_open_mount_refused(img_mbr, NULL, UM_ERROR_INVALID_SOURCE,
                                  "has an MBR partition table with 2 partitions usermount can "
                                  "mount: 1 (0x83, ext4 \"um-mbr1\"), 5 (0x83, ext4 "
                                  "\"um-mbr5\")");
}

/* MountFd: attached and registered; ListMounts and MountAdded carry the partition. */
static void test_mount_fd_partition(void) {
        g_autofree char *target = make_target("mountfd-p4");
        const Call c = { .kind = CALL_MOUNT_FD, .path = img_gpt, .partition = "4",
                         .target = target };
        const Call list = { .kind = CALL_LIST };
        const Call unmount = { .kind = CALL_UNMOUNT, .path = target };
        g_autoptr(GHashTable) t = NULL, l = NULL, u = NULL;

        calls_forget_signals();
        t = call_as(HARNESS_UID_USER1, 0, &c);
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, target);
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "4");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "um-part4");
        g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,noexec,");
        calls_await_signal("MountAdded", target);
        l = call_as(HARNESS_UID_USER1, 0, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-partition"), ==, "4");
        u = call_as(HARNESS_UID_USER1, 0, &unmount);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        calls_await_signal("MountRemoved", target);
        assert_clean();
}

/* Mount takes the partition's own device: 'partition' is refused there, even 0. */
static void test_mount_refuses_partition(void) {
        const Call c = { .kind = CALL_MOUNT, .path = "/dev/sda", .partition = "2" };
        const Call zero = { .kind = CALL_MOUNT, .path = "/dev/sda", .partition = "0" };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, 0, &c);
        g_autoptr(GHashTable) t0 = call_as(HARNESS_UID_USER1, 0, &zero);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_INVALID_ARGUMENT);
        assert_contains(report_get(t, "message"), "Mount takes the partition's own device");
        g_assert_cmpstr(report_get(t0, "result"), ==, UM_ERROR_INVALID_ARGUMENT);
        assert_clean();
}

/*
 * A block device whose content is a partitioned disk (a zram disk with a GPT and ext4 in
 * partition 1; this kernel makes no partition devices for it): refused with 'partition', and
 * without it as any whole disk with partitions is. Its partitions would have to be
 * devices of their own to be claimed, checked and tracked one by one.
 */
static void test_block_device_refused(void) {
        g_autofree char *node = NULL, *cmd = NULL;
        g_autoptr(GHashTable) t = NULL, t2 = NULL;

        g_assert_cmpint(harness_zram_new("32M", &node), ==, 0);
        /* sfdisk on the device itself: zram's sectors are 4096 bytes, the images' 512. */
        cmd = g_strdup_printf("printf 'label: gpt\\nsize=8M\\nsize=8M\\n' | sfdisk -q '%s' && "
                              "mkfs.ext4 -q -F -E offset=1048576 '%s' 8192", node, node);
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(chmod(node, 0666), ==, 0);
        {
                const Call c = { .kind = CALL_OPEN_MOUNT, .path = node, .partition = "2" };
                const Call whole = { .kind = CALL_OPEN_MOUNT, .path = node };

                t = open_mount_as(HARNESS_UID_USER1, &c);
                t2 = open_mount_as(HARNESS_UID_USER1, &whole);
        }
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_INVALID_ARGUMENT);
        assert_contains(report_get(t, "message"), "Parameter 'partition' is for image files");
        g_assert_cmpstr(report_get(t2, "result"), ==, UM_ERROR_INVALID_SOURCE);
        assert_contains(report_get(t2, "message"), "partition table (partitions 1, 2)");
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        assert_clean();
}

/* polkit rules see the partition: umtest2 may mount partition 2 only. */
static void test_polkit_detail(void) {
        const Call two = { .kind = CALL_OPEN_MOUNT, .path = img_gpt, .partition = "2" };
        const Call four = { .kind = CALL_OPEN_MOUNT, .path = img_gpt, .partition = "4" };
        const Call chosen = { .kind = CALL_OPEN_MOUNT, .path = img_gpt_one };
        const Call plain = { .kind = CALL_OPEN_MOUNT, .path = img_plain };
        g_autoptr(GHashTable) t2 = open_mount_as(HARNESS_UID_USER2, &two);
        g_autoptr(GHashTable) t4 = open_mount_as(HARNESS_UID_USER2, &four);
        g_autoptr(GHashTable) tc = open_mount_as(HARNESS_UID_USER2, &chosen);
        g_autoptr(GHashTable) tp = open_mount_as(HARNESS_UID_USER2, &plain);

        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t4, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        /* The partition the daemon chose is the one polkit is asked about: 1. */
        g_assert_cmpstr(report_get(tc, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        /* No partition: the detail is empty. */
        g_assert_cmpstr(report_get(tp, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        assert_clean();
}

static GHashTable *cli(const char *const *args) {
        const Call c = { .kind = CALL_CLI, .args = args };

        return call_as(HARNESS_UID_USER1, 0, &c);
}

/* usermount probe, as the user, on the user's image: no daemon involved. */
static void test_cli_probe(void) {
        g_autoptr(GHashTable) h = cli((const char *const[]) { "probe", img_gpt, NULL });
        g_autoptr(GHashTable) j = cli((const char *const[]) { "probe", "--json", img_gpt, NULL });
        g_autoptr(GHashTable) m = cli((const char *const[]) { "probe", img_mbr, NULL });
        g_autoptr(GHashTable) n = cli((const char *const[]) { "probe", img_many, NULL });
        g_autoptr(GHashTable) p = cli((const char *const[]) { "probe", img_plain, NULL });
        g_autofree char *first = g_strdup_printf("%s: GPT partition table, 24.0M, 4 partitions|",
                                                 img_gpt);
        const char *out = report_get(h, "output");

        g_assert_cmpstr(report_get(h, "status"), ==, "0");
        g_assert_true(g_str_has_prefix(strempty(out), first));
        assert_contains(out, "|#  TYPE           NAME        UUID ");
        assert_contains(out, "  FSTYPE  LABEL     SIZE|");
        g_assert_true(g_regex_match_simple("\\|1  esp            EFI System  [0-9a-f-]{36}  -  "
                                           "     -         4\\.0M\\|", out, 0, 0));
        g_assert_true(g_regex_match_simple("\\|2  linux-generic  data        [0-9a-f-]{36}  ext4"
                                           "    um-part2  8\\.0M\\|", out, 0, 0));
        g_assert_true(g_regex_match_simple("\\|3  swap           swap        [0-9a-f-]{36}  swap"
                                           "    -         4\\.0M\\|", out, 0, 0));
        g_assert_true(g_regex_match_simple("\\|4  root-x86-64    root        [0-9a-f-]{36}  ext4"
                                           "    um-part4  4\\.0M\\|", out, 0, 0));

        g_assert_cmpstr(report_get(j, "status"), ==, "0");
        out = report_get(j, "output");
        assert_contains(out, "\"table\": \"gpt\",|  \"size\": 25165824,|  \"partitions\": [|");
        assert_contains(out, "\"number\": 2,|      \"start\": 5242880,|      \"size\": 8388608,|"
                             "      \"type\": \"0fc63daf-8483-4772-8e79-3d69d8477de4\",|"
                             "      \"type-name\": \"linux-generic\",|      \"name\": \"data\",");
        assert_contains(out, "\"fstype\": \"ext4\",|      \"usage\": \"filesystem\",|"
                             "      \"label\": \"um-part2\",");
        assert_contains(out, "\"type-name\": \"root-x86-64\"");

        assert_contains(report_get(m, "output"), "MBR partition table, 24.0M, 3 partitions|");
        assert_contains(report_get(m, "output"), "|2  extended  -     ");
        g_assert_cmpstr(report_get(n, "status"), ==, "4");
        assert_contains(report_get(n, "output"), "has more than 128 partitions");
        g_assert_cmpstr(report_get(p, "status"), ==, "0");
        assert_contains(report_get(p, "output"), "has no partition table.");
        assert_clean();
}

/* usermount mount --partition=label:NAME: resolved here, mounted, listed, unmounted. */
static void test_cli_mount_label(void) {
        g_autofree char *target = make_target("cli-label");
        g_autoptr(GHashTable) m = NULL, l = NULL, u = NULL, a = NULL, bad = NULL, none = NULL;

        m = cli((const char *const[]) { "mount", "--partition=label:root", img_gpt, target,
                                        NULL });
        g_assert_cmpstr(report_get(m, "status"), ==, "0");
        assert_contains(report_get(m, "output"), "(ext4, label 'um-part4', partition 4 of image ");
        l = cli((const char *const[]) { "list", "--json", NULL });
        assert_contains(report_get(l, "output"), "\"partition\":4,");
        u = cli((const char *const[]) { "unmount", target, NULL });
        g_assert_cmpstr(report_get(u, "status"), ==, "0");

        /* Without --partition: refused with the list (exit 4, refused). */
        a = cli((const char *const[]) { "mount", img_gpt, target, NULL });
        g_assert_cmpstr(report_get(a, "status"), ==, "4");
        assert_contains(report_get(a, "output"), "2 partitions usermount can mount: 2 "
                                                 "(linux-generic, ext4 \"um-part2\"), 4 "
                                                 "(root-x86-64, ext4 \"um-part4\")");
        bad = cli((const char *const[]) { "mount", "--partition=label:nope", img_gpt, target,
                                          NULL });
        g_assert_cmpstr(report_get(bad, "status"), ==, "4");
        assert_contains(report_get(bad, "output"), "No partition of ");
        none = cli((const char *const[]) { "mount", "--partition=0", img_gpt, target, NULL });
        g_assert_cmpstr(report_get(none, "status"), ==, "2");
        assert_clean();
}

int main(int argc, char *argv[]) {
        const HarnessImageSpec plain = { .label = "um-plain" };
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path() || !g_getenv("UM_USERMOUNT")) {
                printf("1..0 # SKIP usermountd or usermount was not built\n");
                return 0;
        }
        if (access("/usr/sbin/sfdisk", X_OK) < 0 && access("/sbin/sfdisk", X_OK) < 0) {
                printf("1..0 # SKIP sfdisk (fdisk) is not installed\n");
                return 0;
        }
        img_gpt = make_partitioned("gpt");
        img_gpt_one = make_partitioned("gpt-one");
        img_mbr = make_partitioned("mbr");
        img_many = make_partitioned("many");
        g_assert_cmpint(harness_make_image("ext4", &plain, &img_plain), ==, 0);
        g_assert_cmpint(chmod(img_plain, 0666), ==, 0);
        calls_watch_signals();
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_subscribe();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/partition/open-mount/partition", test_open_mount_partition);
        g_test_add_func("/partition/open-mount/two-partitions", test_open_mount_two_partitions);
        g_test_add_func("/partition/open-mount/ambiguous", test_open_mount_ambiguous);
        g_test_add_func("/partition/open-mount/only-one", test_open_mount_only_one);
        g_test_add_func("/partition/open-mount/refusals", test_open_mount_refusals);
        g_test_add_func("/partition/open-mount/mbr", test_open_mount_mbr);
        g_test_add_func("/partition/mount-fd", test_mount_fd_partition);
        g_test_add_func("/partition/mount/refused", test_mount_refuses_partition);
        g_test_add_func("/partition/block-device/refused", test_block_device_refused);
        g_test_add_func("/partition/polkit-detail", test_polkit_detail);
        g_test_add_func("/partition/cli/probe", test_cli_probe);
        g_test_add_func("/partition/cli/mount-label", test_cli_mount_label);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
