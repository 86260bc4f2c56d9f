/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Userspace drivers end to end (issue 14): the real usermountd with the shipped
 * Driver=auto, the real polkitd, and the real fuse2fs, fusefat, exfat-fuse, lowntfs-3g and
 * squashfuse, each on an image made by its real mkfs, for unprivileged callers. Every
 * mount is locked like a kernel one and needs no loop device; a driver killed mid-use
 * takes its registered mount with it (MountRemoved); drivers outlive a daemon restart and
 * still count against the limits; a hostile image crashes at most its driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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

/* The shipped Driver=auto, instead of the harness's default configuration. */
#define HARNESS_CONF_DEFAULT_USERSPACE "[General]\nDriver=auto\n"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

typedef struct FsCase {
        const char *fstype;  /* as the daemon reports it */
        const char *driver;  /* the program that serves it */
        bool writable;
        bool ownerless;      /* files appear as the caller's */
        char *image;
} FsCase;

static FsCase cases[] = {
        { "ext4", "fuse2fs", true, false, NULL },
        { "vfat", "fusefat", true, true, NULL },
        { "exfat", "exfat", true, true, NULL },
        { "ntfs3", "lowntfs-3g", true, true, NULL },
        { "squashfs", "squashfuse", false, false, NULL },
};

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.id == 'org.freedesktop.usermount1.mount-kernel-driver')\n"
        "                return subject.user == 'umtest1' ? polkit.Result.YES : polkit.Result.NO;\n"
        "        if (action.id == 'org.freedesktop.usermount1.unmount-others')\n"
        "                return polkit.Result.NO;\n"
        "        if (subject.user == 'umtest1' || subject.user == 'umtest2')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- The caller side ------------------------------------------------------------------- */

typedef enum CallKind {
        CALL_OPEN_MOUNT,  /* OpenMount, attach at target in the caller's namespace, use it */
        CALL_MOUNT_FD,    /* MountFd in the host's namespace */
        CALL_MOUNT,       /* Mount of a device path in the host's namespace */
        CALL_UNMOUNT,
        CALL_LIST,
        CALL_HOLD,        /* OpenMount, report, hold the mount until released */
} CallKind;

typedef struct Call {
        CallKind kind;
        const char *path;     /* image, or mount point for CALL_UNMOUNT */
        const char *options;
        Param params[4];      /* terminated by key == NULL */
        const char *target;   /* CALL_OPEN_MOUNT: attach here */
        bool write;           /* CALL_OPEN_MOUNT: write "written.txt" */
        bool second;          /* CALL_OPEN_MOUNT: a second OpenMount while the first is held */
        bool same_fd;         /* the second with the first's source fd */
} Call;

static int clear_attr(int fd, uint64_t attr) {
        struct mount_attr a = { .attr_clr = attr };

        return mount_setattr(fd, "", AT_EMPTY_PATH, &a, sizeof(a));
}

static void report_file(const char *dir, const char *name, const char *key) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *contents = NULL;
        struct stat st;

        if (g_file_get_contents(path, &contents, NULL, NULL))
                harness_report("%s=%s", key, g_strchomp(contents));
        else
                harness_report("%s=%s", key, calls_errno_name(-errno));
        if (stat(path, &st) == 0)
                harness_report("%s-uid=%u", key, (unsigned) st.st_uid);
}

/* What a container does with the mount: attach it, read, write, try to unlock it. */
static void use_mount(int fd, const Call *c) {
        struct statvfs sv;
        struct stat st;
        int r;

        r = clear_attr(fd, MOUNT_ATTR_NOSUID);
        harness_report("clear-nosuid=%s", calls_errno_name(r));
        r = clear_attr(fd, MOUNT_ATTR_NODEV);
        harness_report("clear-nodev=%s", calls_errno_name(r));
        r = clear_attr(fd, MOUNT_ATTR_NOEXEC);
        harness_report("clear-noexec=%s", calls_errno_name(r));
        r = move_mount(fd, "", AT_FDCWD, c->target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", calls_errno_name(r));
        if (r < 0)
                return;
        if (statvfs(c->target, &sv) == 0)
                harness_report("flags=%s%s%s%s", sv.f_flag & ST_NOSUID ? "nosuid," : "",
                               sv.f_flag & ST_NODEV ? "nodev," : "",
                               sv.f_flag & ST_NOEXEC ? "noexec," : "",
                               sv.f_flag & ST_RDONLY ? "ro," : "");
        r = mount(NULL, c->target, NULL, MS_REMOUNT | MS_BIND, NULL);
        harness_report("remount-bind=%s", calls_errno_name(r));
        if (stat(c->target, &st) == 0)
                harness_report("root-uid=%u", (unsigned) st.st_uid);
        report_file(c->target, "hello.txt", "hello");
        report_file(c->target, "written.txt", "written");
        if (c->write) {
                g_autofree char *path = g_build_filename(c->target, "written.txt", NULL);

                r = g_file_set_contents(path, "written by umtest1", -1, NULL) ? 0 : -EIO;
                harness_report("write=%s", calls_errno_name(r));
        }
        r = umount2(c->target, MNT_DETACH);
        harness_report("detach=%s", calls_errno_name(r));
}

static int open_mount(sd_bus *bus, const Call *c, int source_fd, int *ret_fd,
                      sd_bus_error *error, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_close_ int own = source_fd >= 0 ? -EBADF : open(c->path, O_RDWR | O_CLOEXEC);
        int source = source_fd >= 0 ? source_fd : own;
        int r, fd;

        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "OpenMount"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", strempty(c->options)), >=, 0);
        g_assert_cmpint(calls_append_params(call, c->params), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, error, ret_reply);
        if (r < 0)
                return r;
        g_assert_cmpint(sd_bus_message_read(*ret_reply, "h", &fd), >, 0);
        *ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        return 0;
}

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF, mount_fd = -EBADF;
        sd_bus *bus = NULL;
        int r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        if (c->kind == CALL_OPEN_MOUNT || c->kind == CALL_HOLD) {
                _cleanup_close_ int shared = c->same_fd ? open(c->path, O_RDWR | O_CLOEXEC)
                                                        : -EBADF;

                r = open_mount(bus, c, shared, &mount_fd, &error, &reply);
                if (calls_report_result(r, &error) >= 0) {
                        calls_report_info(reply, "info-");
                        harness_report("image-loops=%d", calls_count_loops_on(c->path));
                }
                if (r >= 0 && c->second) {
                        _cleanup_(sd_bus_error_free) sd_bus_error e2 = SD_BUS_ERROR_NULL;
                        _cleanup_(sd_bus_message_unrefp) sd_bus_message *r2 = NULL;
                        _cleanup_close_ int fd2 = -EBADF;

                        r = open_mount(bus, c, shared, &fd2, &e2, &r2);
                        harness_report("second=%s", r >= 0 ? "ok" : e2.name);
                        harness_report("second-message=%s", strempty(e2.message));
                }
                sd_bus_flush_close_unref(bus);
                if (mount_fd >= 0 && c->kind == CALL_HOLD) {
                        harness_report("held=yes");
                        harness_await_release();
                } else if (mount_fd >= 0 && c->target)
                        use_mount(mount_fd, c);
                return 0;
        }

        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE,
                                                       c->kind == CALL_MOUNT_FD ? "MountFd" :
                                                       c->kind == CALL_MOUNT ? "Mount" :
                                                       c->kind == CALL_UNMOUNT ? "Unmount" :
                                                                                 "ListMounts"),
                        >=, 0);
        if (c->kind == CALL_MOUNT_FD) {
                fd = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
        } else if (c->kind == CALL_MOUNT)
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
        else if (c->kind == CALL_UNMOUNT)
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
        g_assert_cmpint(calls_append_params(call, c->kind == CALL_MOUNT_FD ||
                                                          c->kind == CALL_MOUNT ? c->params : NULL),
                        >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0) {
                if (c->kind == CALL_MOUNT_FD || c->kind == CALL_MOUNT) {
                        const char *mp;

                        g_assert_cmpint(sd_bus_message_read(reply, "s", &mp), >, 0);
                        harness_report("mount-point=%s", mp);
                        calls_report_info(reply, "info-");
                } else if (c->kind == CALL_LIST)
                        calls_report_mount_list(reply);
        }
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* The CLI as umtest1: argv with "@IMG" and "@DIR" replaced; reports its status and output. */
typedef struct CliCall {
        const char *const *args;
        const char *image;
        const char *dir;
} CliCall;

static int cli_caller(void *userdata) {
        const CliCall *c = userdata;
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        g_autofree char *out = NULL;
        int status = 0;

        g_ptr_array_add(argv, (char *) g_getenv("UM_USERMOUNT"));
        for (const char *const *a = c->args; *a; a++)
                g_ptr_array_add(argv, (char *) (streq(*a, "@IMG") ? c->image :
                                                streq(*a, "@DIR") ? c->dir : *a));
        g_ptr_array_add(argv, NULL);
        if (!g_spawn_sync(NULL, (char **) argv->pdata, NULL, 0,
                          NULL, NULL, &out, NULL, &status, NULL))
                return 1;
        harness_report("status=%d", WIFEXITED(status) ? WEXITSTATUS(status) : 255);
        harness_report("output=%s", g_strstrip(out));
        return 0;
}

static GHashTable *cli(const CliCall *c) {
        g_autofree char *output = NULL;

        g_assert_nonnull(g_getenv("UM_USERMOUNT"));
        g_assert_cmpint(harness_run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, cli_caller,
                                       (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

/* ---- The test side ----------------------------------------------------------------------- */

/* OpenMount callers run in a user + mount namespace of their own (a rootless container:
 * umtest1 is its root); the others in the host's namespaces. */
static GHashTable *call_as(uid_t uid, const Call *c) {
        g_autofree char *output = NULL;
        HarnessRunFlags flags = c->kind == CALL_OPEN_MOUNT ? HARNESS_NEW_USERNS : 0;

        g_assert_cmpint(harness_run_as(uid, uid, flags, caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static GHashTable *call(const Call *c) {
        return call_as(HARNESS_UID_USER1, c);
}

static void assert_clean(void) {
        /* A driver exits when its mount goes, a moment after the caller let go. */
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
}

static char *make_target(const char *name) {
        char *dir = g_build_filename(harness_tmpdir(), "targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return dir;
}

static void restart_daemon(bool kill9) {
        if (kill9)
                g_assert_cmpint(kill(daemon_pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_forget_signals();
}

/* After a restart, once everything is gone: the new daemon's fds are the baseline, the
 * mounts and loop devices are what they were. */
static void assert_clean_after_restart(void) {
        HarnessSnapshot now;

        calls_await_drivers(0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &now), ==, 0);
        g_assert_cmpint(now.mounts, ==, baseline.mounts);
        g_assert_cmpint(now.loop_devices, ==, baseline.loop_devices);
        baseline = now;
        assert_clean();
}

static void write_conf(const char *contents) {
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", contents), ==, 0);
        g_assert_cmpint(kill(daemon_pid, SIGHUP), ==, 0);
        /* The reload is done when the daemon answers the next call after it. */
        g_usleep(200 * 1000);
}

/* ---- Images --------------------------------------------------------------------------- */

static void run(const char *cmd) {
        g_test_message("$ %s", cmd);
        g_assert_cmpint(system(cmd), ==, 0);
}

/* ext4 and squashfs from the harness (hello.txt in them); vfat, exfat and ntfs made empty
 * by their mkfs (the first test writes into them through the driver). */
static void make_images(void) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        const HarnessImageSpec ext4 = { .label = "us-ext4", .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        const HarnessImageSpec squash = { .entries = entries };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                FsCase *f = &cases[i];
                g_autofree char *cmd = NULL;

                if (streq(f->fstype, "ext4"))
                        g_assert_cmpint(harness_make_image("ext4", &ext4, &f->image), ==, 0);
                else if (streq(f->fstype, "squashfs"))
                        g_assert_cmpint(harness_make_image("squashfs", &squash, &f->image), ==, 0);
                else {
                        f->image = g_strdup_printf("%s/images/us-%s.img", harness_tmpdir(),
                                                   f->fstype);
                        cmd = g_strdup_printf("truncate -s 64M %s && %s %s >/dev/null", f->image,
                                              streq(f->fstype, "vfat") ? "mkfs.vfat -n USVFAT" :
                                              streq(f->fstype, "exfat") ? "mkfs.exfat -L usexfat" :
                                                                          "mkntfs -q -F -f -L usntfs",
                                              f->image);
                        run(cmd);
                }
                g_assert_cmpint(chmod(f->image, 0666), ==, 0);
        }
}

static const FsCase *case_of(const char *fstype) {
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++)
                if (streq(cases[i].fstype, fstype))
                        return &cases[i];
        g_assert_not_reached();
}

/* ---- Tests ----------------------------------------------------------------------------- */

/* Each type through its driver: locked, no loop device, readable, writable where the
 * driver writes, and what was written is in the image the next time. */
static void test_type(gconstpointer data) {
        const FsCase *f = data;
        g_autofree char *target = make_target(f->fstype);
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = f->image, .target = target,
                         .write = f->writable };
        g_autoptr(GHashTable) t = call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "info-fstype"), ==, f->fstype);
        g_assert_cmpstr(report_get(t, "image-loops"), ==, "0");
        g_assert_cmpstr(report_get(t, "info-device"), ==, f->image);
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, f->image);
        g_assert_cmpstr(report_get(t, "info-options"), ==, "");
        g_assert_cmpstr(report_get(t, "info-attributes"), ==,
                        f->writable ? "nodev,nosuid,noexec" : "nodev,nosuid,noexec,ro");
        g_assert_cmpstr(report_get(t, "clear-nosuid"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "clear-nodev"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "clear-noexec"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        g_assert_cmpstr(report_get(t, "remount-bind"), ==, "EPERM");
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "flags")), "nosuid,nodev,noexec,"));
        /* umtest1 is root in its namespace: its own uid shows as 0. The ext4 image's root
         * directory is umtest1's, the others' files appear as the caller's. */
        if (f->ownerless || streq(f->fstype, "ext4"))
                g_assert_cmpstr(report_get(t, "root-uid"), ==, "0");
        if (!f->ownerless)
                g_assert_cmpstr(report_get(t, "hello"), ==, "hello");
        if (f->writable)
                g_assert_cmpstr(report_get(t, "write"), ==, "ok");
        g_assert_cmpstr(report_get(t, "detach"), ==, "ok");
        assert_clean();

        if (!f->writable)
                return;
        /* Written through the driver, read back through a new one. */
        const Call again = { .kind = CALL_OPEN_MOUNT, .path = f->image, .target = target };
        g_autoptr(GHashTable) t2 = call(&again);

        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "written"), ==, "written by umtest1");
        g_assert_cmpstr(report_get(t2, "written-uid"), ==, "0");
        assert_clean();
}

/* The kernel's driver on request: its own polkit action, which umtest1 has and umtest2
 * has not; then a loop device, and the kernel's options. */
static void test_driver_kernel(void) {
        g_autofree char *target = make_target("kernel");
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = case_of("ext4")->image,
                         .target = target, .params = { { "driver", "s", "kernel" }, {} } };
        g_autoptr(GHashTable) t = call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "kernel");
        g_assert_cmpstr(report_get(t, "image-loops"), ==, "1");
        g_assert_cmpstr(report_get(t, "info-options"), ==, "errors=remount-ro");
        g_assert_cmpstr(report_get(t, "hello"), ==, "hello");
        assert_clean();

        g_autoptr(GHashTable) t2 = call_as(HARNESS_UID_USER2, &c);
        g_assert_cmpstr(report_get(t2, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        g_assert_nonnull(strstr(strempty(report_get(t2, "message")), "mount-kernel-driver"));
        /* The refusal says what the action is about and what works without it. */
        g_assert_nonnull(strstr(strempty(report_get(t2, "message")),
                                "needs the kernel's own filesystem driver"));
        g_assert_nonnull(strstr(strempty(report_get(t2, "message")),
                                "idmap 'user' can do without it"));
        assert_clean();
}

/* What a userspace driver cannot do is refused by name, and nothing is left. */
static void test_refused(void) {
        static const struct {
                const char *fstype, *options;
                Param params[3];
                const char *error, *message;
        } refused[] = {
                { "ext4", "commit=5", {}, UM_ERROR_OPTION_NOT_ALLOWED,
                  "not available with the userspace driver (fuse2fs)" },
                { "vfat", "shortname=mixed", {}, UM_ERROR_OPTION_NOT_ALLOWED, "(fusefat)" },
                { "ext4", NULL, { { "idmap", "s", "namespace" }, { "driver", "s", "userspace" } },
                  UM_ERROR_INVALID_ARGUMENT,
                  "idmap 'namespace' is not available with the userspace driver (fuse2fs)" },
                { "squashfs", NULL,
                  { { "idmap", "s", "namespace" }, { "driver", "s", "userspace" } },
                  UM_ERROR_INVALID_ARGUMENT, "(squashfuse)" },
                { "ext4", NULL, { { "driver", "s", "fuse" } }, UM_ERROR_INVALID_ARGUMENT,
                  "Parameter 'driver' must be 'kernel' or 'userspace'." },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
                Call c = { .kind = CALL_OPEN_MOUNT, .path = case_of(refused[i].fstype)->image,
                           .options = refused[i].options };
                memcpy(c.params, refused[i].params, sizeof(refused[i].params));
                g_autoptr(GHashTable) t = call(&c);

                g_assert_cmpstr(report_get(t, "result"), ==, refused[i].error);
                if (!strstr(strempty(report_get(t, "message")), refused[i].message))
                        g_error("message '%s' lacks '%s'", report_get(t, "message"),
                                refused[i].message);
                assert_clean();
        }
}

/* Driver=auto: what only the kernel's driver can do (ids of ext4 as in the caller's user
 * namespace) is the kernel's, for a caller with the kernel-driver action (umtest1): it is
 * the kernel against the rule. That umtest2, without it, is refused is tested in
 * test-userspace-attack.c. */
static void test_auto_namespace_is_kernel(void) {
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = case_of("ext4")->image,
                         .params = { { "idmap", "s", "namespace" }, {} } };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "kernel");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "namespace");
        g_assert_cmpstr(report_get(t, "image-loops"), ==, "1");
        assert_clean();
}

/*
 * Driver=auto for a type no userspace driver serves (btrfs): the caller's bytes go to the
 * kernel only where an administrator says so, here through polkit's mount-kernel-driver
 * (issue 22, item 10: they went to the kernel unasked). umtest2, whom the rules refuse it,
 * is refused and nothing is left; umtest1 gets the kernel's driver.
 */
static void test_auto_no_userspace_driver(void) {
        const HarnessImageSpec spec = { .label = "us-btrfs", .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        g_autofree char *image = NULL;
        g_autoptr(GHashTable) refused = NULL, granted = NULL;

        g_assert_cmpint(harness_make_image("btrfs", &spec, &image), ==, 0);
        g_assert_cmpint(chmod(image, 0666), ==, 0);
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = image };
        refused = call_as(HARNESS_UID_USER2, &c);
        g_assert_cmpstr(report_get(refused, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        g_assert_nonnull(strstr(report_get(refused, "message"), UM_ACTION_MOUNT_KERNEL_DRIVER));
        assert_clean();
        granted = call_as(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(granted, "result"), ==, "ok");
        g_assert_cmpstr(report_get(granted, "info-driver"), ==, "kernel");
        assert_clean();
        g_assert_cmpint(unlink(image), ==, 0);
}

/* Two read-only mounts of one image from one fd: each driver reads through a file
 * description of its own (fusefat reads its boot sector at the current offset, which the
 * first one moved otherwise). Read-write, the second is one writer too many (claim.h):
 * every driver keeps the claim it was given while the first mount lives. */
static void test_same_fd_twice(gconstpointer data) {
        const FsCase *f = data;
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = f->image,
                         .second = true, .same_fd = true,
                         .params = { { "read-only", "b", "true" }, {} } };
        const Call rw = { .kind = CALL_OPEN_MOUNT, .path = f->image,
                          .second = true, .same_fd = true };
        g_autoptr(GHashTable) t = call(&c);
        g_autoptr(GHashTable) t2 = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "second"), ==, "ok");
        assert_clean();
        if (!f->writable)
                return;
        t2 = call(&rw);
        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "second"), ==, UM_ERROR_DEVICE_BUSY);
        assert_clean();
}

/* A block device (a zram disk; not removable, so Driver=auto gives it to the kernel) with
 * driver=userspace: the driver reads the device through the daemon's fd; the mount is the
 * caller's, unmounted by the caller, and the driver goes with it. */
static void test_block_device(void) {
        g_autofree char *node = NULL, *cmd = NULL;
        g_autoptr(GHashTable) t = NULL, u = NULL;

        g_assert_cmpint(harness_zram_new("64M", &node), ==, 0);
        cmd = g_strdup_printf("mkfs.exfat -L uszram %s >/dev/null", node);
        run(cmd);
        const Call kernel = { .kind = CALL_MOUNT, .path = node };
        t = call(&kernel);
        /* This kernel has no exfat: auto takes the userspace driver where it must. */
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "info-device"), ==, node);
        const Call un = { .kind = CALL_UNMOUNT, .path = report_get(t, "mount-point") };
        calls_forget_signals();
        u = call(&un);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        calls_await_drivers(0);
        g_assert_cmpint(harness_zram_free(node), ==, 0);
        assert_clean();
}

/* Partition 4 of a GPT image through fuse2fs, which reads a loop device of exactly the
 * partition's bytes (it could write past the partition's end otherwise): the filesystem's
 * own label, the partition in the info. */
static void test_partition(void) {
        g_autofree char *script = g_build_filename(harness_source_root(), "tests",
                                                   "make-partitioned-image.sh", NULL);
        g_autofree char *image = g_strdup_printf("%s/images/us-gpt.img", harness_tmpdir());
        g_autofree char *cmd = g_strdup_printf("/bin/sh '%s' gpt '%s' && chmod 666 '%s'",
                                               script, image, image);
        g_autofree char *target = make_target("partition");

        run(cmd);
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = image, .target = target,
                         .params = { { "partition", "u", "4" }, {} } };
        g_autoptr(GHashTable) t = call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "info-label"), ==, "um-part4");
        g_assert_cmpstr(report_get(t, "info-partition"), ==, "4");
        g_assert_cmpstr(report_get(t, "image-loops"), ==, "1");
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        assert_clean();
        g_assert_cmpint(unlink(image), ==, 0);

        /* fusefat has no offset of its own: it reads the partition's loop device too (this
         * kernel has no vfat). */
        g_free(cmd);
        cmd = g_strdup_printf("truncate -s 16M '%s' && printf 'label: gpt\\nstart=2048, "
                              "size=16384, type=linux\\n' | sfdisk -q '%s' && "
                              "mkfs.vfat --offset 2048 -n USP '%s' 8192 >/dev/null 2>&1 && "
                              "chmod 666 '%s'", image, image, image, image);
        run(cmd);
        const Call fat = { .kind = CALL_OPEN_MOUNT, .path = image,
                           .params = { { "partition", "u", "1" }, {} } };
        g_autoptr(GHashTable) t2 = call(&fat);
        g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t2, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t2, "info-label"), ==, "USP");
        g_assert_cmpstr(report_get(t2, "info-partition"), ==, "1");
        assert_clean();
        g_assert_cmpint(unlink(image), ==, 0);
}

/* The CLI: --driver, what the summary line and the list say, and a bad value. */
static void test_cli(void) {
        g_autofree char *dir = make_target("cli");
        const char *image = case_of("ext4")->image;
        const CliCall mount = { (const char *const[]) { "mount", "--driver=userspace", "@IMG",
                                                        "@DIR", NULL }, image, dir };
        const CliCall list = { (const char *const[]) { "list", NULL }, image, dir };
        const CliCall unmount = { (const char *const[]) { "unmount", "@DIR", NULL }, image, dir };
        const CliCall bad = { (const char *const[]) { "mount", "--driver=fuse", "@IMG", "@DIR",
                                                      NULL }, image, dir };
        g_autoptr(GHashTable) m = cli(&mount);

        g_assert_cmpstr(report_get(m, "status"), ==, "0");
        g_assert_nonnull(strstr(strempty(report_get(m, "output")), "userspace driver"));
        g_autoptr(GHashTable) l = cli(&list);
        g_assert_nonnull(strstr(strempty(report_get(l, "output")), "driver=userspace"));
        g_autoptr(GHashTable) u = cli(&unmount);
        g_assert_cmpstr(report_get(u, "status"), ==, "0");
        g_autoptr(GHashTable) b = cli(&bad);
        g_assert_cmpstr(report_get(b, "status"), ==, "2");
        assert_clean();
}

/* Types the kernel lacks here are listed because a userspace driver serves them. */
static void test_supported_filesystems(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char **list = NULL;
        g_autofree char *joined = NULL;

        g_assert_cmpint(sd_bus_get_property_strv(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                                 UM_MANAGER_INTERFACE, "SupportedFilesystems",
                                                 &error, &list), >=, 0);
        joined = g_strjoinv(" ", list);
        g_test_message("SupportedFilesystems: %s", joined);
        g_assert_true(g_strv_contains((const char *const *) list, "ext4"));
        g_assert_true(g_strv_contains((const char *const *) list, "vfat"));
        g_assert_true(g_strv_contains((const char *const *) list, "exfat"));
        g_assert_true(g_strv_contains((const char *const *) list, "ntfs3"));
        g_strfreev(list);
}

/* A registered mount whose driver is killed: the daemon detaches it and says so. */
static void test_driver_killed(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = case_of("ext4")->image };
        g_autoptr(GHashTable) t = NULL;
        g_autoptr(GArray) pids = NULL;
        const char *mp;

        calls_forget_signals();
        t = call(&c);
        mp = report_get(t, "mount-point");
        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        calls_await_signal("MountAdded", mp);
        pids = calls_running_drivers();
        g_assert_cmpuint(pids->len, ==, 1);
        g_assert_cmpint(kill(g_array_index(pids, pid_t, 0), SIGKILL), ==, 0);
        calls_await_signal("MountRemoved", mp);
        const Call list = { .kind = CALL_LIST };
        g_autoptr(GHashTable) l = call(&list);
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        g_assert_cmpint(access(mp, F_OK), ==, -1);
        assert_clean();
}

/* Drivers outlive the daemon: a registered mount is listed by the next instance, which
 * notices its driver's death; an OpenMount's driver still counts against the limit. */
static void test_restart(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = case_of("exfat")->image };
        const Call list = { .kind = CALL_LIST };
        g_autoptr(GHashTable) t = call(&c);
        const char *mp = report_get(t, "mount-point");

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_await_drivers(1);
        restart_daemon(true);
        g_autoptr(GHashTable) l = call(&list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, mp);
        g_assert_cmpstr(report_get(l, "entry0-driver"), ==, "userspace");
        {
                g_autofree char *hello = g_build_filename(mp, "written.txt", NULL);
                g_autofree char *contents = NULL;

                /* Still served across the restart (root is not the caller: no access). */
                g_assert_false(g_file_get_contents(hello, &contents, NULL, NULL));
        }
        g_autoptr(GArray) pids = calls_running_drivers();
        g_assert_cmpuint(pids->len, ==, 1);
        g_assert_cmpint(kill(g_array_index(pids, pid_t, 0), SIGKILL), ==, 0);
        calls_await_signal("MountRemoved", mp);
        assert_clean_after_restart();
}

/* MaxDriversPerUser=: in one process, and across a restart of the daemon. */
static void test_limits(void) {
        write_conf("[General]\n[Limits]\nMaxDriversPerUser=1\n");
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = case_of("squashfs")->image,
                         .second = true };
        g_autoptr(GHashTable) t = call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "second"), ==, UM_ERROR_LIMIT_EXCEEDED);
        g_assert_nonnull(strstr(strempty(report_get(t, "second-message")),
                                "MaxDriversPerUser="));
        assert_clean();

        /* A held OpenMount, a daemon restarted meanwhile: the new one counts the driver. */
        const Call hold = { .kind = CALL_HOLD, .path = case_of("squashfs")->image };
        g_autoptr(HarnessCaller) holder = NULL;
        g_autofree char *line = NULL;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                             HARNESS_NEW_USERNS, caller, (void *) &hold,
                                             &holder), ==, 0);
        for (;;) {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(holder, 60000, &line), ==, 0);
                if (streq(line, "held=yes"))
                        break;
        }
        restart_daemon(true);
        const Call one = { .kind = CALL_OPEN_MOUNT, .path = case_of("squashfs")->image };
        g_autoptr(GHashTable) t2 = call(&one);
        g_assert_cmpstr(report_get(t2, "result"), ==, UM_ERROR_LIMIT_EXCEEDED);
        g_assert_cmpint(harness_caller_release(holder), ==, 0);
        g_assert_cmpint(harness_caller_wait(holder, 30000, NULL), ==, 0);
        /* Gone with its mount: the limit has room again. */
        calls_await_drivers(0);
        g_autoptr(GHashTable) t3 = call(&one);
        g_assert_cmpstr(report_get(t3, "result"), ==, "ok");
        write_conf(HARNESS_CONF_DEFAULT_USERSPACE);
        assert_clean_after_restart();
}

/* The daemon exits when idle while an OpenMount's driver runs: the driver goes on, and
 * the next instance counts it (MaxDriversPerUser=1 refuses a second mount) until it ends. */
static void test_idle_exit(void) {
        const Call hold = { .kind = CALL_HOLD, .path = case_of("squashfs")->image };
        const Call one = { .kind = CALL_OPEN_MOUNT, .path = case_of("squashfs")->image };
        const char *const idle[] = { "--idle-timeout=1", NULL };
        g_autoptr(HarnessCaller) holder = NULL;
        g_autofree char *line = NULL;
        pid_t idle_pid;

        g_assert_cmpint(harness_write_etc("usermount/usermount.conf",
                                          HARNESS_CONF_DEFAULT_USERSPACE
                                          "[Limits]\nMaxDriversPerUser=1\n"), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), idle, &idle_pid), ==, 0);
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                             HARNESS_NEW_USERNS, caller, (void *) &hold,
                                             &holder), ==, 0);
        for (;;) {
                g_clear_pointer(&line, g_free);
                g_assert_cmpint(harness_caller_read_line(holder, 60000, &line), ==, 0);
                if (streq(line, "held=yes"))
                        break;
        }
        for (int i = 0; i < 500 && !harness_child_exited(idle_pid); i++)
                g_usleep(20 * 1000);
        g_assert_true(harness_child_exited(idle_pid));
        calls_await_drivers(1);
        g_assert_cmpint(harness_stop_daemon(idle_pid, NULL), >=, 0);

        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_autoptr(GHashTable) t = call(&one);
        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_LIMIT_EXCEEDED);
        g_assert_cmpint(harness_caller_release(holder), ==, 0);
        g_assert_cmpint(harness_caller_wait(holder, 30000, NULL), ==, 0);
        calls_await_drivers(0);
        write_conf(HARNESS_CONF_DEFAULT_USERSPACE);
        assert_clean_after_restart();
}

/* idmap=user on ext4: every file appears as the caller's (fuse2fs's uid=, gid=), here
 * on the host, where the caller is itself. */
static void test_idmap_user(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = case_of("ext4")->image,
                         .params = { { "idmap", "s", "user" }, {} } };
        g_autoptr(GHashTable) t = call(&c);
        const char *mp = report_get(t, "mount-point");
        g_autofree char *hello = NULL;
        struct stat st;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "user");
        /* Root may not look into it (no allow_other): the caller's own stat. */
        hello = g_build_filename(mp, "hello.txt", NULL);
        g_assert_cmpint(stat(hello, &st), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
        const Call un = { .kind = CALL_UNMOUNT, .path = mp };
        g_autoptr(GHashTable) u = call(&un);
        g_assert_cmpstr(report_get(u, "result"), ==, "ok");
        assert_clean();

        /* In a container: hello.txt is root's on the image (65534 without idmap, see
         * /userspace/type/ext4) and appears as the caller, its namespace's root. */
        g_autofree char *target = make_target("idmap-user");
        const Call open = { .kind = CALL_OPEN_MOUNT, .path = case_of("ext4")->image,
                            .target = target, .params = { { "idmap", "s", "user" }, {} } };
        g_autoptr(GHashTable) o = call(&open);
        g_assert_cmpstr(report_get(o, "result"), ==, "ok");
        g_assert_cmpstr(report_get(o, "hello-uid"), ==, "0");
        assert_clean();

        /* An image whose files are all root's on disk (what mkfs as root makes): every file
         * appears as the caller's, and the caller may write what it shows as theirs. */
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "us-rootown", .entries = entries };
        g_autofree char *image = NULL, *target2 = make_target("idmap-user-root-owned");

        g_assert_cmpint(harness_make_image("ext4", &spec, &image), ==, 0);
        g_assert_cmpint(chmod(image, 0666), ==, 0);
        const Call write = { .kind = CALL_OPEN_MOUNT, .path = image, .target = target2,
                             .write = true, .params = { { "idmap", "s", "user" }, {} } };
        g_autoptr(GHashTable) w = call(&write);
        g_assert_cmpstr(report_get(w, "result"), ==, "ok");
        g_assert_cmpstr(report_get(w, "info-driver"), ==, "userspace");
        g_assert_cmpstr(report_get(w, "hello-uid"), ==, "0");
        g_assert_cmpstr(report_get(w, "write"), ==, "ok");
        assert_clean();
}

/* A hostile image: garbage over ext4's inode tables. The driver may fail the mount or
 * serve errors; the kernel never parses it, and the daemon goes on. */
static void test_hostile_image(void) {
        g_autofree char *image = g_strdup_printf("%s/images/us-hostile.img", harness_tmpdir());
        g_autofree char *cmd = g_strdup_printf(
                "cp %s %s && dd if=/dev/urandom of=%s bs=4096 seek=2 count=2000 conv=notrunc "
                "status=none && chmod 666 %s", case_of("ext4")->image, image, image, image);
        g_autofree char *target = make_target("hostile");

        run(cmd);
        const Call c = { .kind = CALL_OPEN_MOUNT, .path = image, .target = target };
        g_autoptr(GHashTable) t = call(&c);
        const char *result = report_get(t, "result");

        g_test_message("hostile image: %s %s", result, strempty(report_get(t, "message")));
        g_assert_true(streq(result, "ok") || streq(result, UM_ERROR_FAILED) ||
                      streq(result, UM_ERROR_INVALID_SOURCE));
        assert_clean();
        g_assert_cmpint(unlink(image), ==, 0);
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        make_images();
        /* The shipped default, which the harness's default configuration changes. */
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf",
                                          HARNESS_CONF_DEFAULT_USERSPACE), ==, 0);
        calls_watch_signals();
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_subscribe();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *name = g_strdup_printf("/userspace/type/%s", cases[i].fstype);
                g_test_add_data_func(name, &cases[i], test_type);
        }
        g_test_add_func("/userspace/driver-kernel", test_driver_kernel);
        g_test_add_func("/userspace/refused", test_refused);
        g_test_add_func("/userspace/auto-namespace-is-kernel", test_auto_namespace_is_kernel);
        g_test_add_func("/userspace/auto-no-userspace-driver", test_auto_no_userspace_driver);
        g_test_add_func("/userspace/supported-filesystems", test_supported_filesystems);
        g_test_add_func("/userspace/cli", test_cli);
        g_test_add_func("/userspace/block-device", test_block_device);
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *name = g_strdup_printf("/userspace/same-fd-twice/%s",
                                                        cases[i].fstype);
                g_test_add_data_func(name, &cases[i], test_same_fd_twice);
        }
        g_test_add_func("/userspace/partition", test_partition);
        g_test_add_func("/userspace/driver-killed", test_driver_killed);
        g_test_add_func("/userspace/restart", test_restart);
        g_test_add_func("/userspace/limits", test_limits);
        g_test_add_func("/userspace/hostile-image", test_hostile_image);
        g_test_add_func("/userspace/idle-exit", test_idle_exit);
        g_test_add_func("/userspace/idmap-user", test_idmap_user);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
