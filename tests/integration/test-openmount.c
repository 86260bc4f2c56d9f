/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenMount end to end: the real usermountd on the private bus with the real polkitd,
 * real images of every filesystem type on real loop devices, and unprivileged callers
 * that are root in their own user + mount namespace (a rootless container). Covers the
 * functional path and docs/security.md, classes 1-13, 17 and 21; every test also proves
 * that nothing was left behind (no mount, no loop device, no daemon fd) and that the
 * daemon still serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

/* The images every test can use, by type; made once in main(). */
static const char *const fstypes[] = { "ext4", "xfs", "btrfs", "squashfs", "erofs" };
static char *images[G_N_ELEMENTS(fstypes)];

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (subject.user == 'umtest1')\n"
        "                return polkit.Result.YES;\n"
        "        if (subject.user == 'umtest2')\n"
        "                return polkit.Result.NO;\n"
        "        if (subject.user == 'umtestadm')\n"
        "                return polkit.Result.AUTH_ADMIN;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---------------------------------------------------------------------------------- */
/* The caller side: runs in a forked, unprivileged process                             */

typedef enum SourceKind {
        SOURCE_IMAGE_RW,
        SOURCE_IMAGE_RO,
        SOURCE_O_PATH,
        SOURCE_DIRECTORY,
        SOURCE_SOCKET,
        SOURCE_PIPE,
        SOURCE_CHAR_DEVICE,
        SOURCE_EVENTFD,
        SOURCE_NSFS,
        SOURCE_PIDFD,
        SOURCE_MEMFD,
        SOURCE_MOUNT_FD,
} SourceKind;

typedef struct Call {
        SourceKind kind;
        const char *path;    /* the image, or the file for SOURCE_O_PATH */
        const char *fstype;  /* requested, "" for any */
        const char *options;
        Param params[4];     /* terminated by key == NULL */
        const char *target;  /* attach here and try to break the locks; NULL: don't */
} Call;

static int open_source(const Call *c) {
        int fds[2];

        switch (c->kind) {
        case SOURCE_IMAGE_RW:
                return open(c->path, O_RDWR | O_CLOEXEC);
        case SOURCE_IMAGE_RO:
                return open(c->path, O_RDONLY | O_CLOEXEC);
        case SOURCE_O_PATH:
                return open(c->path, O_PATH | O_CLOEXEC);
        case SOURCE_DIRECTORY:
                return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        case SOURCE_SOCKET:
                return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        case SOURCE_PIPE:
                if (pipe2(fds, O_CLOEXEC) < 0)
                        return -1;
                return fds[0];
        case SOURCE_CHAR_DEVICE:
                return open("/dev/null", O_RDWR | O_CLOEXEC);
        case SOURCE_EVENTFD:
                return eventfd(0, EFD_CLOEXEC);
        case SOURCE_NSFS:
                return open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
        case SOURCE_PIDFD:
                return (int) syscall(SYS_pidfd_open, getpid(), 0);
        case SOURCE_MEMFD:
                return memfd_create("empty", MFD_CLOEXEC);
        case SOURCE_MOUNT_FD:
                return open_tree(AT_FDCWD, "/tmp", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        }
        return -1;
}

static const char *flag_names(unsigned long f, char *buf, size_t n) {
        g_snprintf(buf, n, "%s%s%s%s", f & ST_NOSUID ? "nosuid," : "", f & ST_NODEV ? "nodev," : "",
                   f & ST_NOEXEC ? "noexec," : "", f & ST_RDONLY ? "ro," : "");
        return buf;
}

static int clear_attr(int dfd, const char *path, unsigned flags, uint64_t attr) {
        struct mount_attr a = { .attr_clr = attr };

        return mount_setattr(dfd, path, flags, &a, sizeof(a));
}

/* Everything a receiver who is root in its own namespaces could try (items 1, 2, 4). */
static void try_to_break(int fd, const char *target) {
        static const struct {
                const char *name;
                uint64_t attr;
        } attrs[] = {
                { "nosuid", MOUNT_ATTR_NOSUID },
                { "nodev", MOUNT_ATTR_NODEV },
                { "noexec", MOUNT_ATTR_NOEXEC },
                { "ro", MOUNT_ATTR_RDONLY },
        };
        g_autofree char *hello = NULL, *path = NULL, *bind = NULL;
        struct statvfs sv;
        char buf[64];
        int r;

        for (size_t i = 0; i < G_N_ELEMENTS(attrs); i++) {
                r = clear_attr(fd, "", AT_EMPTY_PATH, attrs[i].attr);
                harness_report("clear-detached-%s=%s", attrs[i].name, calls_errno_name(r));
        }

        r = move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", calls_errno_name(r));
        if (r < 0)
                return;

        path = g_build_filename(target, "hello.txt", NULL);
        if (g_file_get_contents(path, &hello, NULL, NULL))
                harness_report("hello=%s", g_strchomp(hello));
        if (statvfs(target, &sv) == 0)
                harness_report("flags=%s", flag_names(sv.f_flag, buf, sizeof(buf)));

        for (size_t i = 0; i < G_N_ELEMENTS(attrs); i++) {
                r = clear_attr(AT_FDCWD, target, 0, attrs[i].attr);
                harness_report("clear-attached-%s=%s", attrs[i].name, calls_errno_name(r));
                r = clear_attr(fd, "", AT_EMPTY_PATH, attrs[i].attr);
                harness_report("clear-fd-after-attach-%s=%s", attrs[i].name, calls_errno_name(r));
        }
        r = mount(NULL, target, NULL, MS_REMOUNT | MS_BIND, NULL);
        harness_report("remount-bind=%s", calls_errno_name(r));

        _cleanup_close_ int clone = open_tree(AT_FDCWD, target, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        harness_report("clone=%s", calls_errno_name(clone));
        if (clone >= 0) {
                if (fstatvfs(clone, &sv) == 0)
                        harness_report("clone-flags=%s", flag_names(sv.f_flag, buf, sizeof(buf)));
                r = clear_attr(clone, "", AT_EMPTY_PATH, MOUNT_ATTR_NOSUID);
                harness_report("clone-clear-nosuid=%s", calls_errno_name(r));
        }

        bind = g_strconcat(target, "-bind", NULL);
        r = mount(target, bind, NULL, MS_BIND, NULL);
        harness_report("bind=%s", calls_errno_name(r));
        if (r == 0) {
                if (statvfs(bind, &sv) == 0)
                        harness_report("bind-flags=%s", flag_names(sv.f_flag, buf, sizeof(buf)));
                r = clear_attr(AT_FDCWD, bind, 0, MOUNT_ATTR_NOSUID);
                harness_report("bind-clear-nosuid=%s", calls_errno_name(r));
                (void) umount2(bind, MNT_DETACH);
        }

        g_free(path);
        path = g_build_filename(target, "mem", NULL);
        r = open(path, O_RDONLY | O_CLOEXEC);
        harness_report("devnode=%s", calls_errno_name(r));
        safe_close(r);

        g_free(path);
        path = g_build_filename(target, "suid-true", NULL);
        pid_t pid = fork();
        if (pid == 0) {
                execl(path, path, NULL);
                _exit(errno == EACCES ? 13 : 99);
        }
        int status = 0;
        (void) waitpid(pid, &status, 0);
        harness_report("exec-suid=%s", WIFEXITED(status) && WEXITSTATUS(status) == 13 ? "EACCES" :
                                               "ran");

        g_free(path);
        path = g_build_filename(target, "new-file", NULL);
        r = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        harness_report("write=%s", calls_errno_name(r));
        safe_close(r);

        r = umount2(target, MNT_DETACH);
        harness_report("detach=%s", calls_errno_name(r));
}

static int caller_open_mount(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        sd_bus *bus = NULL;
        int fd, r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        source = open_source(c);
        harness_report("source=%s", calls_errno_name(source));
        if (source < 0)
                return 1;

        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "OpenMount"), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, strempty(c->fstype),
                                              strempty(c->options)), >=, 0);
        g_assert_cmpint(calls_append_params(call, c->params), >=, 0);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (r < 0) {
                harness_report("result=%s", error.name ?: "none");
                harness_report("message=%s", error.message ?: "");
                sd_bus_flush_close_unref(bus);
                return 0;
        }
        harness_report("result=ok");
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        calls_report_info(reply, "info-");
        /* While the mount is held: the loop devices on the image, if any. */
        if (c->path)
                harness_report("image-loops=%d", calls_count_loops_on(c->path));
        sd_bus_flush_close_unref(bus);
        reply = sd_bus_message_unref(reply);

        if (c->target)
                try_to_break(mount_fd, c->target);
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The test side                                                                      */

/* Runs c as uid/gid in a new user + mount namespace; returns the report. */
static GHashTable *run_call_as(uid_t uid, gid_t gid, const Call *c) {
        g_autofree char *output = NULL;
        int status;

        status = harness_run_as(uid, gid, HARNESS_NEW_USERNS, caller_open_mount, (void *) c, &output);
        g_test_message("caller output:\n%s", output ?: "");
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static GHashTable *run_call(const Call *c) {
        return run_call_as(HARNESS_UID_USER1, HARNESS_GID_USER1, c);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

static void assert_refused(const Call *c, const char *error_name, const char *message_part) {
        g_autoptr(GHashTable) t = run_call(c);

        g_assert_cmpstr(report_get(t, "result"), ==, error_name);
        if (message_part && !strstr(strempty(report_get(t, "message")), message_part))
                g_error("message '%s' lacks '%s'", report_get(t, "message"), message_part);
        assert_clean();
}

/* An empty directory owned by umtest1, and its sibling "<dir>-bind" for bind copies. */
static char *make_target(const char *name) {
        char *dir = g_build_filename(harness_tmpdir(), "targets", name, NULL);
        g_autofree char *bind = g_strconcat(dir, "-bind", NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(g_mkdir_with_parents(bind, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        g_assert_cmpint(chown(bind, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return dir;
}

static const char *image_of(const char *fstype) {
        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++)
                if (streq(fstypes[i], fstype))
                        return images[i];
        g_assert_not_reached();
}

/* Mounts the image at path as a container would, reads it, and fails to break any lock. An
 * erofs image on a disk (from_file) is mounted from its file, with no loop device; every
 * other image, erofs on the harness's tmpfs included, on a loop device. */
static void assert_open_mount(const char *fstype, const char *path, const char *target_name,
                              bool from_file) {
        g_autofree char *target = make_target(target_name);
        g_autofree char *label = g_strdup_printf("um-%s", fstype);
        g_autofree char *hello = g_strdup_printf("hello %s", fstype);
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = path, .fstype = fstype,
                         .target = target };
        bool always_ro = streq(fstype, "squashfs") || streq(fstype, "erofs");
        g_autoptr(GHashTable) t = run_call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-fstype"), ==, fstype);
        if (!streq(fstype, "squashfs"))
                g_assert_cmpstr(report_get(t, "info-label"), ==, label);
        if (from_file) {
                g_assert_cmpstr(report_get(t, "info-device"), ==, c.path);
                g_assert_cmpstr(report_get(t, "image-loops"), ==, "0");
        } else {
                g_assert_true(g_str_has_prefix(strempty(report_get(t, "info-device")),
                                               "/dev/loop"));
                g_assert_cmpstr(report_get(t, "image-loops"), ==, "1");
        }
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, c.path);
        g_assert_cmpstr(report_get(t, "info-attributes"), ==,
                        always_ro ? "nodev,nosuid,noexec,ro" : "nodev,nosuid,noexec");
        g_assert_cmpstr(report_get(t, "info-idmap"), ==, "none");
        g_assert_nonnull(report_get(t, "info-mount-id"));
        g_assert_cmpuint(g_ascii_strtoull(report_get(t, "info-mount-id"), NULL, 10), >, 0);
        if (g_str_has_prefix(fstype, "ext"))
                g_assert_cmpstr(report_get(t, "info-options"), ==, "errors=remount-ro");

        /* Item 1: no flag can be cleared, on the fd or the mount, before or after attaching. */
        for (const char *const *f = (const char *const[]) { "nosuid", "nodev", "noexec", NULL }; *f;
             f++) {
                g_autofree char *k1 = g_strdup_printf("clear-detached-%s", *f);
                g_autofree char *k2 = g_strdup_printf("clear-attached-%s", *f);
                g_autofree char *k3 = g_strdup_printf("clear-fd-after-attach-%s", *f);
                g_assert_cmpstr(report_get(t, k1), ==, "EPERM");
                g_assert_cmpstr(report_get(t, k2), ==, "EPERM");
                g_assert_cmpstr(report_get(t, k3), ==, "EPERM");
        }
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        g_assert_cmpstr(report_get(t, "hello"), ==, hello);
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "flags")), "nosuid,nodev,noexec,"));
        if (always_ro)
                g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,noexec,ro,");
        /* Item 2: remount without the flags fails; clones and binds keep every lock. */
        g_assert_cmpstr(report_get(t, "remount-bind"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "clone"), ==, "ok");
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "clone-flags")), "nosuid,nodev,noexec,"));
        g_assert_cmpstr(report_get(t, "clone-clear-nosuid"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "bind"), ==, "ok");
        g_assert_true(g_str_has_prefix(strempty(report_get(t, "bind-flags")), "nosuid,nodev,noexec,"));
        g_assert_cmpstr(report_get(t, "bind-clear-nosuid"), ==, "EPERM");
        /* Item 4: a world-readable node of a root-only device and a setuid-root binary are
         * inert. */
        g_assert_cmpstr(report_get(t, "devnode"), ==, "EACCES");
        g_assert_cmpstr(report_get(t, "exec-suid"), ==, "EACCES");
        g_assert_cmpstr(report_get(t, "write"), !=, "ok-but-unexpected");
        g_assert_cmpstr(report_get(t, "detach"), ==, "ok");
        assert_clean();
}

static void test_mount_type(gconstpointer data) {
        assert_open_mount(data, image_of(data), data, false);
}

/* An erofs image on a disk: mounted from its file, no loop device while it is held. */
static void test_erofs_from_file(void) {
        g_autofree char *copy = calls_disk_copy(image_of("erofs"), HARNESS_UID_USER1);

        assert_open_mount("erofs", copy, "erofs-from-file", true);
        g_assert_cmpint(calls_count_loops_on(copy), ==, 0);
}

/* Item 17: a read-only fd gives a read-only mount, on a read-only loop device. */
static void test_read_only_fd(void) {
        g_autofree char *target = make_target("ro");
        const Call c = { .kind = SOURCE_IMAGE_RO, .path = image_of("ext4"), .target = target };
        g_autoptr(GHashTable) t = run_call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,noexec,ro");
        g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,noexec,ro,");
        g_assert_cmpstr(report_get(t, "clear-attached-ro"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "clear-detached-ro"), ==, "EPERM");
        g_assert_cmpstr(report_get(t, "write"), ==, "EROFS");
        assert_clean();
}

/* Item 17 also holds when read-only is asked for with a writable fd. */
static void test_read_only_param(void) {
        g_autofree char *target = make_target("ro-param");
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("xfs"), .target = target,
                         .params = { { "read-only", "b", "true" } } };
        g_autoptr(GHashTable) t = run_call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,noexec,ro,");
        g_assert_cmpstr(report_get(t, "write"), ==, "EROFS");
        assert_clean();
}

/* "rw" on a read-only source is refused (item 5). */
static void test_rw_on_read_only_source(void) {
        const Call c = { .kind = SOURCE_IMAGE_RO, .path = image_of("ext4"), .options = "rw" };

        assert_refused(&c, UM_ERROR_OPTION_NOT_ALLOWED, NULL);
}

/* Options the caller may give reach the kernel. */
static void test_allowed_options(void) {
        g_autofree char *target = make_target("options");
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"), .target = target,
                         .options = "noatime,commit=30" };
        g_autoptr(GHashTable) t = run_call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_nonnull(strstr(strempty(report_get(t, "info-options")), "commit=30"));
        g_assert_nonnull(strstr(strempty(report_get(t, "info-options")), "errors=remount-ro"));
        g_assert_cmpstr(report_get(t, "write"), ==, "EACCES"); /* root dir owned by root */
        assert_clean();
}

/* Items 5-10 through the bus: refused before anything happens, nothing left behind. */
static void test_refused_options(void) {
        static const struct {
                const char *options;
                const char *error;
        } cases[] = {
                { "suid", UM_ERROR_OPTION_NOT_ALLOWED },
                { "dev", UM_ERROR_OPTION_NOT_ALLOWED },
                { "exec", UM_ERROR_OPTION_NOT_ALLOWED },
                { "defaults", UM_ERROR_OPTION_NOT_ALLOWED },
                { "user", UM_ERROR_OPTION_NOT_ALLOWED },
                { "users", UM_ERROR_OPTION_NOT_ALLOWED },
                { "owner", UM_ERROR_OPTION_NOT_ALLOWED },
                { "remount", UM_ERROR_OPTION_NOT_ALLOWED },
                { "bind", UM_ERROR_OPTION_NOT_ALLOWED },
                { "move", UM_ERROR_OPTION_NOT_ALLOWED },
                { "x-gvfs-show", UM_ERROR_OPTION_NOT_ALLOWED },
                { "X-mount.mkdir", UM_ERROR_OPTION_NOT_ALLOWED },
                { "uhelper=udisks2", UM_ERROR_OPTION_NOT_ALLOWED },
                { "helper=foo", UM_ERROR_OPTION_NOT_ALLOWED },
                { "loop=/dev/loop0", UM_ERROR_OPTION_NOT_ALLOWED },
                { "offset=1024", UM_ERROR_OPTION_NOT_ALLOWED },
                { "sizelimit=1024", UM_ERROR_OPTION_NOT_ALLOWED },
                { "context=system_u:object_r:tmp_t:s0", UM_ERROR_OPTION_NOT_ALLOWED },
                { "fscontext=system_u:object_r:tmp_t:s0", UM_ERROR_OPTION_NOT_ALLOWED },
                { "defcontext=system_u:object_r:tmp_t:s0", UM_ERROR_OPTION_NOT_ALLOWED },
                { "rootcontext=system_u:object_r:tmp_t:s0", UM_ERROR_OPTION_NOT_ALLOWED },
                { "smackfsroot=_", UM_ERROR_OPTION_NOT_ALLOWED },
                { "errors=panic", UM_ERROR_OPTION_NOT_ALLOWED },
                { "errors=continue", UM_ERROR_OPTION_NOT_ALLOWED },
                { "errors=remount-ro", UM_ERROR_OPTION_NOT_ALLOWED },
                { "noatime,\\,suid", UM_ERROR_INVALID_ARGUMENT },
                { "commit=\"30\"", UM_ERROR_INVALID_ARGUMENT },
                { "a=b=c", UM_ERROR_INVALID_ARGUMENT },
                { "noatime,,commit=5", UM_ERROR_INVALID_ARGUMENT },
                { "commit=5\n", UM_ERROR_INVALID_ARGUMENT },
                { "commit=5\tsuid", UM_ERROR_INVALID_ARGUMENT },
                { "nobarrier,made-up-option", UM_ERROR_OPTION_NOT_ALLOWED },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"),
                                 .options = cases[i].options };

                g_test_message("options '%s'", cases[i].options);
                assert_refused(&c, cases[i].error, NULL);
        }
}

/* Item 10: a 64 KiB option string is a clean InvalidArgument. */
static void test_overlong_options(void) {
        g_autoptr(GString) s = g_string_new("commit=5");
        const Call *c;

        while (s->len < 65 * 1024)
                g_string_append(s, ",noatime");
        c = &(const Call) { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"), .options = s->str };
        assert_refused(c, UM_ERROR_INVALID_ARGUMENT, NULL);
}

/* Item 11: types outside the allow-list, and a type that is not what the image holds. */
static void test_refused_types(void) {
        static const char *const types[] = { "proc", "sysfs", "debugfs", "bpf", "configfs",
                                             "overlay", "fuse", "nfs", "cifs", "tmpfs",
                                             "made-up-module" };

        for (size_t i = 0; i < G_N_ELEMENTS(types); i++) {
                const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"),
                                 .fstype = types[i] };

                g_test_message("type '%s'", types[i]);
                assert_refused(&c, UM_ERROR_FILESYSTEM_NOT_ALLOWED, types[i]);
        }

        const Call mismatch = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"), .fstype = "xfs" };
        assert_refused(&mismatch, UM_ERROR_FILESYSTEM_NOT_ALLOWED, "xfs");
}

/* Items 12 and 13: sources that are not a readable block device or image file. */
static void test_refused_sources(void) {
        static const struct {
                SourceKind kind;
                const char *name;
        } kinds[] = {
                { SOURCE_O_PATH, "O_PATH of a root-only file" },
                { SOURCE_DIRECTORY, "directory" },
                { SOURCE_SOCKET, "socket" },
                { SOURCE_PIPE, "pipe" },
                { SOURCE_CHAR_DEVICE, "char device" },
                { SOURCE_EVENTFD, "eventfd" },
                { SOURCE_NSFS, "nsfs" },
                { SOURCE_PIDFD, "pidfd" },
                { SOURCE_MEMFD, "empty memfd" },
                { SOURCE_MOUNT_FD, "mount fd" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(kinds); i++) {
                const Call c = { .kind = kinds[i].kind, .path = "/etc/shadow" };

                g_test_message("source: %s", kinds[i].name);
                assert_refused(&c, UM_ERROR_INVALID_SOURCE, NULL);
        }
}

/* Malformed params are InvalidArgument, never ignored (org.freedesktop.UserMount1(5)). */
static void test_refused_params(void) {
        static const Param cases[][2] = {
                { { "no-such-key", "b", "true" } },
                { { "read-only", "s", "true" } },
                { { "target", "s", "/tmp" } },
                { { "idmap", "s", "sideways" } },
                { { "interactive", "u", "1" } },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4") };

                c.params[0] = cases[i][0];
                g_test_message("param %s (%s)", c.params[0].key, c.params[0].type);
                assert_refused(&c, UM_ERROR_INVALID_ARGUMENT, NULL);
        }
}

/* Item 21: polkit says no, or wants a password that may not be asked for. */
static void test_not_authorized(void) {
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4") };
        g_autoptr(GHashTable) no = run_call_as(HARNESS_UID_USER2, HARNESS_GID_USER2, &c);
        g_autoptr(GHashTable) auth = run_call_as(HARNESS_UID_ADMIN, HARNESS_GID_ADMIN, &c);

        g_assert_cmpstr(report_get(no, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        g_assert_cmpstr(report_get(auth, "result"), ==, UM_ERROR_NOT_AUTHORIZED_CAN_OBTAIN);
        assert_clean();
}

/* exec=true needs mount-exec as well; umtest1 has it here, and the mount is then exec. */
static void test_exec_authorized(void) {
        g_autofree char *target = make_target("exec");
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"), .target = target,
                         .params = { { "exec", "b", "true" } } };
        g_autoptr(GHashTable) t = run_call(&c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid");
        g_assert_cmpstr(report_get(t, "flags"), ==, "nosuid,nodev,");
        /* The setuid binary runs, but without privilege: nosuid stays locked. */
        g_assert_cmpstr(report_get(t, "exec-suid"), ==, "ran");
        g_assert_cmpstr(report_get(t, "clear-attached-nosuid"), ==, "EPERM");
        assert_clean();
}

static void test_exec_not_authorized(void) {
        g_autofree char *rules_exec_denied = g_strconcat(
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id == 'org.freedesktop.usermount1.mount-exec')\n"
                "                return polkit.Result.NO;\n"
                "});\n", rules, NULL);
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = image_of("ext4"),
                         .params = { { "exec", "b", "true" } } };

        g_assert_cmpint(harness_set_rules(rules_exec_denied), ==, 0);
        assert_refused(&c, UM_ERROR_NOT_AUTHORIZED, "mount-exec");
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
}

static void test_not_a_filesystem(void) {
        g_autofree char *path = g_build_filename(harness_tmpdir(), "images", "zeros.img", NULL);
        g_autofree char *zeros = g_malloc0(1 << 20);

        g_assert_true(g_file_set_contents(path, zeros, 1 << 20, NULL));
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        const Call c = { .kind = SOURCE_IMAGE_RW, .path = path };
        assert_refused(&c, UM_ERROR_INVALID_SOURCE, NULL);
}

static void test_properties(void) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        g_autoptr(GPtrArray) types = g_ptr_array_new_with_free_func(g_free);
        const char *s;

        g_assert_cmpint(sd_bus_get_property(harness_bus(), UM_BUS_NAME, UM_OBJECT_PATH,
                                            UM_MANAGER_INTERFACE, "SupportedFilesystems", &error,
                                            &reply, "as"), >=, 0);
        g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "s"), >, 0);
        while (sd_bus_message_read(reply, "s", &s) > 0)
                g_ptr_array_add(types, g_strdup(s));
        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++)
                g_assert_true(g_ptr_array_find_with_equal_func(types, fstypes[i], g_str_equal, NULL));
        /* What neither this kernel nor an installed userspace driver serves is not listed:
         * the property says what can really be mounted. (vfat is, through fusefat.) */
        g_assert_false(g_ptr_array_find_with_equal_func(types, "udf", g_str_equal, NULL));
        g_assert_false(g_ptr_array_find_with_equal_func(types, "iso9660", g_str_equal, NULL));
}

static void make_images(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++) {
                g_autofree char *label = g_strdup_printf("um-%s", fstypes[i]);
                g_autofree char *hello = g_strdup_printf("hello %s\n", fstypes[i]);
                const HarnessEntry entries[] = {
                        { HARNESS_ENTRY_FILE, "hello.txt", hello, 0644, 0, 0 },
                        { HARNESS_ENTRY_CHAR_DEVICE, "mem", NULL, 0666, 0, 0, 1, 1 },
                        { HARNESS_ENTRY_COPY, "suid-true", "/bin/true", 04755, 0, 0 },
                        { 0 },
                };
                const HarnessImageSpec spec = {
                        .label = streq(fstypes[i], "squashfs") ? NULL : label,
                        .entries = entries,
                };

                g_assert_cmpint(harness_make_image(fstypes[i], &spec, &images[i]), ==, 0);
                g_assert_cmpint(chown(images[i], HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
                g_assert_cmpint(chmod(images[i], 0666), ==, 0);
        }
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
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        r = harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid);
        g_assert_cmpint(r, ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++) {
                g_autofree char *name = g_strdup_printf("/openmount/type/%s", fstypes[i]);
                g_test_add_data_func(name, fstypes[i], test_mount_type);
        }
        g_test_add_func("/openmount/erofs/from-file", test_erofs_from_file);
        g_test_add_func("/openmount/read-only/fd", test_read_only_fd);
        g_test_add_func("/openmount/read-only/param", test_read_only_param);
        g_test_add_func("/openmount/read-only/rw-refused", test_rw_on_read_only_source);
        g_test_add_func("/openmount/options/allowed", test_allowed_options);
        g_test_add_func("/openmount/options/refused", test_refused_options);
        g_test_add_func("/openmount/options/overlong", test_overlong_options);
        g_test_add_func("/openmount/types/refused", test_refused_types);
        g_test_add_func("/openmount/sources/refused", test_refused_sources);
        g_test_add_func("/openmount/sources/not-a-filesystem", test_not_a_filesystem);
        g_test_add_func("/openmount/params/refused", test_refused_params);
        g_test_add_func("/openmount/polkit/not-authorized", test_not_authorized);
        g_test_add_func("/openmount/polkit/exec-authorized", test_exec_authorized);
        g_test_add_func("/openmount/polkit/exec-not-authorized", test_exec_not_authorized);
        g_test_add_func("/openmount/properties", test_properties);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
