/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount, MountFd, Unmount, ListMounts and the MountAdded/MountRemoved signals end to end:
 * the real daemon on the private bus with the real polkitd, real images on loop devices,
 * real zram block devices for Mount by path, and unprivileged callers in the suite's
 * mount namespace (the "host" of these tests). Covers docs/security.md, classes 14-16,
 * 18-20, 22, 24, 28 and 29; every test checks that nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *image_stick;       /* ext4 labelled "stick" */
static char *image_stick_twin;  /* another ext4 labelled "stick" */
static char *image_hostile;     /* ext4 with a hostile label */
static char *image_nolabel;     /* xfs without a label */

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') != 0)\n"
        "                return polkit.Result.NOT_HANDLED;\n"
        "        if (action.id == 'org.freedesktop.usermount1.unmount-others')\n"
        "                return subject.user == 'umtestadm' ? polkit.Result.YES : polkit.Result.NO;\n"
        "        if (subject.user == 'umtest1' || subject.user == 'umtest2')\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

/* ---- Callers ------------------------------------------------------------------------- */

typedef enum CallKind {
        CALL_MOUNT_FD,
        CALL_MOUNT,
        CALL_UNMOUNT,
        CALL_LIST,
        CALL_MOUNT_FD_AND_EXIT, /* send MountFd and exit at once (item 22) */
        CALL_HOLD_CWD,          /* keep a directory busy until released */
        CALL_ORPHANED_MOUNT_FD, /* connect, exit, and let a child call MountFd on that connection */
} CallKind;

typedef struct Call {
        CallKind kind;
        const char *path;   /* image, device, mount point, or directory to hold */
        const char *target; /* params["target"], NULL: none */
        bool force;
} Call;

static int orphaned_mount_fd(const Call *c) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        union {
                struct cmsghdr h;
                uint8_t buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        char byte = 0;
        struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof(control) };
        sd_bus *bus = NULL;
        int pair[2], sock = -1, fd, r;
        pid_t child;

        g_assert_true(address && g_str_has_prefix(address, "unix:path="));
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair), ==, 0);
        child = fork();
        if (child == 0) {
                /* The process the bus will record as the connection's owner. */
                struct sockaddr_un sa = { .sun_family = AF_UNIX };
                int s2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

                g_strlcpy(sa.sun_path, address + strlen("unix:path="), sizeof(sa.sun_path));
                if (s2 < 0 || connect(s2, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                        _exit(1);
                struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
                if (!h)
                        _exit(1);
                h->cmsg_level = SOL_SOCKET;
                h->cmsg_type = SCM_RIGHTS;
                h->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(h), &s2, sizeof(int));
                _exit(sendmsg(pair[1], &mh, 0) < 0 ? 1 : 0);
        }
        g_assert_cmpint(recvmsg(pair[0], &mh, MSG_CMSG_CLOEXEC), ==, 1);
        struct cmsghdr *got = CMSG_FIRSTHDR(&mh);
        if (!got)
                g_error("no fd arrived from the connecting child");
        memcpy(&sock, CMSG_DATA(got), sizeof(int));
        g_assert_cmpint(waitpid(child, NULL, 0), ==, child); /* gone, and reaped */

        /* This process speaks D-Bus over the socket the dead child connected. */
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(bus, sock, sock), >=, 0);
        g_assert_cmpint(sd_bus_set_bus_client(bus, true), >=, 0);
        g_assert_cmpint(sd_bus_negotiate_fds(bus, true), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        fd = open(c->path, O_RDWR | O_CLOEXEC);
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "MountFd",
                               &error, &reply, "hssa{sv}", fd, "", "", 0);
        calls_report_result(r, &error);
        sd_bus_flush_close_unref(bus);
        return 0;
}

static int caller(void *userdata) {
        const Call *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        const Param target[] = { { "target", "s", c->target }, {} };
        const Param force[] = { { "force", "b", "true" }, {} };
        const char *method;
        sd_bus *bus = NULL;
        int r;

        if (c->kind == CALL_ORPHANED_MOUNT_FD)
                return orphaned_mount_fd(c);
        if (c->kind == CALL_HOLD_CWD) {
                r = chdir(c->path);
                harness_report("held=%s", calls_errno_name(r));
                harness_await_release();
                return 0;
        }

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        method = c->kind == CALL_MOUNT ? "Mount" :
                 c->kind == CALL_UNMOUNT ? "Unmount" :
                 c->kind == CALL_LIST ? "ListMounts" : "MountFd";
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, method), >=, 0);
        switch (c->kind) {
        case CALL_MOUNT_FD:
        case CALL_MOUNT_FD_AND_EXIT:
                fd = open(c->path, O_RDWR | O_CLOEXEC);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(sd_bus_message_append(call, "hss", fd, "", ""), >=, 0);
                g_assert_cmpint(calls_append_params(call, c->target ? target : NULL), >=, 0);
                break;
        case CALL_MOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "sss", c->path, "", ""), >=, 0);
                g_assert_cmpint(calls_append_params(call, c->target ? target : NULL), >=, 0);
                break;
        case CALL_UNMOUNT:
                g_assert_cmpint(sd_bus_message_append(call, "s", c->path), >=, 0);
                g_assert_cmpint(calls_append_params(call, c->force ? force : NULL), >=, 0);
                break;
        case CALL_LIST:
                g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
                break;
        case CALL_HOLD_CWD:
        case CALL_ORPHANED_MOUNT_FD:
                g_assert_not_reached();
        }

        if (c->kind == CALL_MOUNT_FD_AND_EXIT) {
                g_assert_cmpint(sd_bus_send(bus, call, NULL), >=, 0);
                g_assert_cmpint(sd_bus_flush(bus), >=, 0);
                _exit(0);
        }

        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) >= 0) {
                if (c->kind == CALL_MOUNT || c->kind == CALL_MOUNT_FD) {
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

static GHashTable *call_as(uid_t uid, const Call *c) {
        g_autofree char *output = NULL;

        g_assert_cmpint(harness_run_as(uid, uid, 0, caller, (void *) c, &output), ==, 0);
        g_test_message("caller output:\n%s", output ?: "");
        return calls_parse_report(output);
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}


/* ---- Helpers --------------------------------------------------------------------------- */

static char *make_image(const char *fstype, const char *label) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "hello.txt", "hello\n", 0644 }, {} };
        /* umtest1's images: their root directory is umtest1's (see test-security.c for
         * what becomes of a root-owned one). */
        const HarnessImageSpec spec = { .label = label, .entries = entries,
                                        .root_uid = HARNESS_UID_USER1,
                                        .root_gid = HARNESS_GID_USER1 };
        char *path = NULL;

        g_assert_cmpint(harness_make_image(fstype, &spec, &path), ==, 0);
        g_assert_cmpint(chmod(path, 0666), ==, 0);
        return path;
}

static char *make_dir(const char *name, uid_t owner) {
        char *dir = g_build_filename(harness_tmpdir(), "targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, owner, owner), ==, 0);
        return dir;
}

static bool is_mount_point(const char *path) {
        g_autofree char *info = NULL;
        g_autofree char *needle = g_strdup_printf(" %s ", path);

        g_assert_true(g_file_get_contents("/proc/self/mountinfo", &info, NULL, NULL));
        return strstr(info, needle) != NULL;
}

static void unmount_as(uid_t uid, const char *mount_point) {
        const Call u = { .kind = CALL_UNMOUNT, .path = mount_point };
        g_autoptr(GHashTable) t = NULL;

        calls_forget_signals();
        t = call_as(uid, &u);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_false(is_mount_point(mount_point));
        calls_await_signal("MountRemoved", mount_point);
}

/* A real block device that is not a loop device: a zram disk with ext4. */
typedef struct Zram {
        int id;
        char *node;
} Zram;

static Zram zram_new(const char *label) {
        g_autofree char *cmd = NULL;
        Zram z = {};

        g_assert_cmpint(harness_zram_new("64M", &z.node), ==, 0);
        g_assert_cmpint(sscanf(z.node, "/dev/zram%d", &z.id), ==, 1);
        cmd = g_strdup_printf("mkfs.ext4 -q -L %s %s", label, z.node);
        g_assert_cmpint(system(cmd), ==, 0);
        return z;
}

static void zram_free(Zram *z) {
        g_assert_cmpint(harness_zram_free(z->node), ==, 0);
        g_clear_pointer(&z->node, g_free);
}

/* ---- Tests ----------------------------------------------------------------------------- */

/* The desktop flow: default mount point from the label, listed, signalled, unmounted. */
static void test_mount_fd_default_target(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");
        struct stat st, parent;
        g_autofree char *user_dir = NULL, *file = NULL, *hello = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(mp, ==, "/run/media/umtest1/stick");
        g_assert_cmpstr(report_get(t, "info-mount-point"), ==, mp);
        g_assert_cmpstr(report_get(t, "info-attributes"), ==, "nodev,nosuid,noexec");
        g_assert_true(is_mount_point(mp));
        file = g_build_filename(mp, "hello.txt", NULL);
        g_assert_true(g_file_get_contents(file, &hello, NULL, NULL));
        g_assert_cmpstr(hello, ==, "hello\n");
        user_dir = g_path_get_dirname(mp);
        g_assert_cmpint(stat(user_dir, &parent), ==, 0);
        g_assert_cmpuint(parent.st_uid, ==, 0);
        g_assert_cmpuint(parent.st_mode & 07777, ==, 0750);
        g_assert_cmpint(stat(mp, &st), ==, 0);
        calls_await_signal("MountAdded", mp);

        const Call list = { .kind = CALL_LIST };
        g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, mp);
        g_assert_cmpstr(report_get(l, "entry0-owner-uid"), ==, "61001");
        g_assert_nonnull(report_get(l, "entry0-created-usec"));
        g_assert_cmpstr(report_get(l, "entry0-mount-id"), ==, report_get(t, "info-mount-id"));

        unmount_as(HARNESS_UID_USER1, mp);
        /* The directory the daemon made is gone again. */
        g_assert_cmpint(access(mp, F_OK), ==, -1);
        g_autoptr(GHashTable) l2 = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l2, "count"), ==, "0");
        assert_clean();
}

static void test_mount_fd_target(void) {
        g_autofree char *dir = make_dir("mine", HARNESS_UID_USER1);
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick, .target = dir };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, dir);
        g_assert_true(is_mount_point(dir));
        unmount_as(HARNESS_UID_USER1, dir);
        /* Not made by the daemon: stays. */
        g_assert_cmpint(access(dir, F_OK), ==, 0);
        assert_clean();
}

/* Item 18: targets that must be refused, leaving the place unchanged. */
static void test_mount_fd_target_refused(void) {
        g_autofree char *other = make_dir("others", HARNESS_UID_USER2);
        g_autofree char *full = make_dir("full", HARNESS_UID_USER1);
        g_autofree char *file = g_build_filename(full, "occupied", NULL);
        g_autofree char *real = make_dir("real", HARNESS_UID_USER1);
        g_autofree char *link = g_build_filename(harness_tmpdir(), "targets", "link", NULL);
        g_autofree char *sticky = make_dir("sticky", 0);
        g_autofree char *in_sticky = g_build_filename(sticky, ".X11-unix", NULL);
        g_autofree char *private = make_dir("private", 0);
        g_autofree char *unreachable = g_build_filename(private, "mine", NULL);
        const struct {
                const char *target;
                const char *error;
        } cases[] = {
                { other, UM_ERROR_INVALID_TARGET },
                { full, UM_ERROR_INVALID_TARGET },
                { in_sticky, UM_ERROR_INVALID_TARGET },
                { unreachable, UM_ERROR_INVALID_TARGET },
                { link, UM_ERROR_INVALID_TARGET },
                { "/proc/self", UM_ERROR_INVALID_TARGET },
                { "/", UM_ERROR_INVALID_TARGET },
                { "/etc", UM_ERROR_INVALID_TARGET },
                { "/usr", UM_ERROR_INVALID_TARGET },
                { "/does/not/exist", UM_ERROR_INVALID_TARGET },
                { "relative/dir", UM_ERROR_INVALID_ARGUMENT },
                { "/tmp/../etc", UM_ERROR_INVALID_ARGUMENT },
        };

        g_assert_true(g_file_set_contents(file, "x", -1, NULL));
        g_assert_cmpint(symlink(real, link), ==, 0);
        /* A directory of the caller's inside a sticky, world-writable one (like /tmp). */
        g_assert_cmpint(chmod(sticky, 01777), ==, 0);
        g_assert_cmpint(mkdir(in_sticky, 0755), ==, 0);
        g_assert_cmpint(chown(in_sticky, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        /* The caller's own directory, inside one only root may enter: looked up as the
         * caller, it cannot be reached. */
        g_assert_cmpint(chmod(private, 0700), ==, 0);
        g_assert_cmpint(mkdir(unreachable, 0755), ==, 0);
        g_assert_cmpint(chown(unreachable, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick,
                                 .target = cases[i].target };
                g_autoptr(GHashTable) t = NULL;
                g_autofree char *before = NULL, *after = NULL;

                g_test_message("target %s", cases[i].target);
                g_assert_true(g_file_get_contents("/proc/self/mountinfo", &before, NULL, NULL));
                t = call_as(HARNESS_UID_USER1, &c);
                g_assert_cmpstr(report_get(t, "result"), ==, cases[i].error);
                /* The mount table is exactly as it was. */
                g_assert_true(g_file_get_contents("/proc/self/mountinfo", &after, NULL, NULL));
                g_assert_cmpstr(before, ==, after);
        }
        g_assert_false(is_mount_point(real));
        assert_clean();
}

/* Item 19: the same label twice gets two mount points; item 20: hostile labels are tamed. */
static void test_same_label_and_hostile_label(void) {
        const Call a = { .kind = CALL_MOUNT_FD, .path = image_stick };
        const Call b = { .kind = CALL_MOUNT_FD, .path = image_stick_twin };
        const Call h = { .kind = CALL_MOUNT_FD, .path = image_hostile };
        const Call n = { .kind = CALL_MOUNT_FD, .path = image_nolabel };
        g_autoptr(GHashTable) ta = call_as(HARNESS_UID_USER1, &a);
        g_autoptr(GHashTable) tb = call_as(HARNESS_UID_USER1, &b);
        g_autoptr(GHashTable) th = call_as(HARNESS_UID_USER1, &h);
        g_autoptr(GHashTable) tn = call_as(HARNESS_UID_USER1, &n);
        const char *hostile = report_get(th, "mount-point");
        g_autofree char *base = NULL;

        g_assert_cmpstr(report_get(ta, "mount-point"), ==, "/run/media/umtest1/stick");
        g_assert_cmpstr(report_get(tb, "mount-point"), ==, "/run/media/umtest1/stick-2");
        g_assert_nonnull(hostile);
        g_assert_true(g_str_has_prefix(hostile, "/run/media/umtest1/"));
        base = g_path_get_basename(hostile);
        g_assert_null(strpbrk(base, "/\n\x1b"));
        g_assert_false(g_str_has_prefix(base, "."));
        g_test_message("hostile label became '%s'", base);
        /* No label: the UUID names it. */
        g_assert_true(g_str_has_prefix(strempty(report_get(tn, "mount-point")), "/run/media/umtest1/"));
        g_assert_cmpstr(strrchr(report_get(tn, "mount-point"), '/') + 1, ==,
                        report_get(tn, "info-uuid"));

        unmount_as(HARNESS_UID_USER1, report_get(ta, "mount-point"));
        unmount_as(HARNESS_UID_USER1, report_get(tb, "mount-point"));
        unmount_as(HARNESS_UID_USER1, hostile);
        unmount_as(HARNESS_UID_USER1, report_get(tn, "mount-point"));
        assert_clean();
}

/* One image is never attached twice: two filesystem instances would corrupt it. */
static void test_image_twice(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) first = call_as(HARNESS_UID_USER1, &c);
        g_autoptr(GHashTable) second = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(first, "result"), ==, "ok");
        g_assert_cmpstr(report_get(second, "result"), ==, UM_ERROR_DEVICE_BUSY);
        unmount_as(HARNESS_UID_USER1, report_get(first, "mount-point"));
        assert_clean();
}

/* Item 24: another user can neither see nor unmount it; an admin with unmount-others can. */
static void test_other_users_mount(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");
        const Call list = { .kind = CALL_LIST };
        const Call u = { .kind = CALL_UNMOUNT, .path = mp };

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_autoptr(GHashTable) l2 = call_as(HARNESS_UID_USER2, &list);
        g_assert_cmpstr(report_get(l2, "count"), ==, "0");
        g_autoptr(GHashTable) u2 = call_as(HARNESS_UID_USER2, &u);
        g_assert_cmpstr(report_get(u2, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
        g_assert_true(is_mount_point(mp));

        g_autoptr(GHashTable) la = call_as(HARNESS_UID_ADMIN, &list);
        g_assert_cmpstr(report_get(la, "count"), ==, "1");
        unmount_as(HARNESS_UID_ADMIN, mp);
        assert_clean();
}

static void test_unmount_not_mounted(void) {
        g_autofree char *dir = make_dir("plain", HARNESS_UID_USER1);
        const Call u = { .kind = CALL_UNMOUNT, .path = dir };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &u);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_NOT_MOUNTED);
        assert_clean();
}

/* A busy mount is refused unless forced; forced, it is lazily detached. */
static void test_unmount_busy(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");
        const Call hold = { .kind = CALL_HOLD_CWD, .path = mp };
        const Call u = { .kind = CALL_UNMOUNT, .path = mp };
        const Call uf = { .kind = CALL_UNMOUNT, .path = mp, .force = true };
        g_autoptr(HarnessCaller) holder = NULL;
        g_autofree char *line = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller,
                                             (void *) &hold, &holder), ==, 0);
        g_assert_cmpint(harness_caller_read_line(holder, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "held=ok");

        calls_forget_signals();
        g_autoptr(GHashTable) busy = call_as(HARNESS_UID_USER1, &u);
        g_assert_cmpstr(report_get(busy, "result"), ==, UM_ERROR_DEVICE_BUSY);
        g_assert_true(is_mount_point(mp));
        g_autoptr(GHashTable) forced = call_as(HARNESS_UID_USER1, &uf);
        g_assert_cmpstr(report_get(forced, "result"), ==, "ok");
        g_assert_false(is_mount_point(mp));
        calls_await_signal("MountRemoved", mp);

        g_assert_cmpint(harness_caller_release(holder), ==, 0);
        g_assert_cmpint(harness_caller_wait(holder, HARNESS_TIMEOUT_MS, NULL), ==, 0);
        assert_clean();
}

/* Item 22: the caller is gone before the mount is ready: nothing is attached anywhere. */
static void test_caller_exits(void) {
        /*
         * The caller exits right after sending; on a loaded machine the daemon could still
         * finish first (the mount would then be the caller's, rightly). So that the test
         * proves what happens when the caller is gone, polkit holds the authorization of
         * umtest1's mounts until the calling process has left /proc (polkit.spawn, bounded
         * by polkitd's own 10 s timeout; a failed spawn changes nothing).
         */
        static const char hold_until_gone[] =
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id.indexOf('org.freedesktop.usermount1.mount') == 0 &&\n"
                "            subject.user == 'umtest1') {\n"
                "                try {\n"
                "                        polkit.spawn(['/bin/sh', '-c', 'while [ -d /proc/' +\n"
                "                                      subject.pid + ' ]; do sleep 0.05; done']);\n"
                "                } catch (e) {\n"
                "                }\n"
                "        }\n"
                "        return polkit.Result.NOT_HANDLED;\n"
                "});\n";
        g_autofree char *held_rules = g_strconcat(hold_until_gone, rules, NULL);
        const Call c = { .kind = CALL_MOUNT_FD_AND_EXIT, .path = image_stick };
        const Call list = { .kind = CALL_LIST };

        g_assert_cmpint(harness_set_rules(held_rules), ==, 0);

        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        /* Give the daemon time to finish the request it got (bounded wait on its outcome). */
        g_assert_cmpint(harness_wait_snapshot(daemon_pid, &baseline, 20000), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        g_assert_false(is_mount_point("/run/media/umtest1/stick"));
        assert_clean();
}

/*
 * The bus records the pid of the process that connected the socket. Here that process is
 * gone and another one uses the connection: the recorded pid could belong to anyone by
 * now, so the daemon refuses to act in "its" mount namespace.
 */
static void test_connection_outlives_caller(void) {
        const Call c = { .kind = CALL_ORPHANED_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, UM_ERROR_FAILED);
        g_assert_false(is_mount_point("/run/media/umtest1/stick"));
        assert_clean();
}

/* Mount by device path: a real block device, mount-system, listed, unmounted. */
static void test_mount_device(void) {
        Zram z = zram_new("zdisk");
        const Call c = { .kind = CALL_MOUNT, .path = z.node };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, "/run/media/umtest1/zdisk");
        g_assert_cmpstr(report_get(t, "info-device"), ==, z.node);
        g_assert_true(is_mount_point("/run/media/umtest1/zdisk"));
        unmount_as(HARNESS_UID_USER1, "/run/media/umtest1/zdisk");
        assert_clean();
        zram_free(&z);
}

/* Items 14 and 15: device paths that must be refused; busy devices. */
static void test_mount_device_refused(void) {
        Zram z = zram_new("zbusy");
        g_autofree char *loop = NULL, *mnt = make_dir("root-mount", 0);
        const struct {
                const char *path;
                const char *error;
        } paths[] = {
                { "/dev/null", UM_ERROR_INVALID_SOURCE },
                { "/dev/../etc/passwd", UM_ERROR_INVALID_ARGUMENT },
                { "dev/zram0", UM_ERROR_INVALID_ARGUMENT },
                { "/etc/passwd", UM_ERROR_INVALID_ARGUMENT },
                { "/dev/does-not-exist", UM_ERROR_INVALID_SOURCE },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
                const Call c = { .kind = CALL_MOUNT, .path = paths[i].path };
                g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);

                g_test_message("device %s", paths[i].path);
                g_assert_cmpstr(report_get(t, "result"), ==, paths[i].error);
        }

        /* A loop device, even one that holds a filesystem: images go through MountFd. */
        g_assert_cmpint(harness_loop_attach(image_stick, true, &loop), ==, 0);
        const Call cl = { .kind = CALL_MOUNT, .path = loop };
        g_autoptr(GHashTable) tl = call_as(HARNESS_UID_USER1, &cl);
        g_assert_cmpstr(report_get(tl, "result"), ==, UM_ERROR_INVALID_SOURCE);
        g_assert_cmpint(harness_loop_detach(loop), ==, 0);

        /* Mounted by root (here, the host of the test): busy, no second superblock reference. */
        g_assert_cmpint(mount(z.node, mnt, "ext4", MS_NOSUID | MS_NODEV, NULL), ==, 0);
        const Call c = { .kind = CALL_MOUNT, .path = z.node };
        g_autoptr(GHashTable) tb = call_as(HARNESS_UID_USER1, &c);
        g_assert_cmpstr(report_get(tb, "result"), ==, UM_ERROR_DEVICE_BUSY);
        g_assert_cmpint(umount2(mnt, 0), ==, 0);

        /* In use as swap. */
        g_autofree char *mkswap = g_strdup_printf("mkswap -q %s", z.node);
        g_assert_cmpint(system(mkswap), ==, 0);
        if (swapon(z.node, 0) == 0) {
                g_autoptr(GHashTable) ts = call_as(HARNESS_UID_USER1, &c);
                g_assert_cmpstr(report_get(ts, "result"), ==, UM_ERROR_DEVICE_BUSY);
                g_assert_cmpint(swapoff(z.node), ==, 0);
        } else
                g_test_message("swapon not possible here (%s): swap case not run",
                               g_strerror(errno));
        assert_clean();
        zram_free(&z);
}

/* Item 28: kill -9 and restart lose nothing and duplicate nothing. */
static void test_restart_keeps_registry(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");
        const Call list = { .kind = CALL_LIST };

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpint(kill(daemon_pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);

        g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "1");
        g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, mp);
        g_assert_cmpstr(report_get(l, "entry0-mount-id"), ==, report_get(t, "info-mount-id"));
        g_assert_true(is_mount_point(mp));
        unmount_as(HARNESS_UID_USER1, mp);
        g_autoptr(GHashTable) l2 = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l2, "count"), ==, "0");
        /* A new daemon has a new fd baseline. */
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        assert_clean();
}

/*
 * An erofs image on a disk is mounted from its file: no loop device while it is mounted,
 * "device" and "backing-file" are its path, listed alike; the daemon's checks for devices
 * that went away leave it alone (it has none), a restart keeps it, Unmount takes it down.
 */
static void test_erofs_from_file(void) {
        g_autofree char *image = make_image("erofs", "erofs-file");
        g_autofree char *copy = calls_disk_copy(image, HARNESS_UID_USER1);
        const Call c = { .kind = CALL_MOUNT_FD, .path = copy };
        const Call list = { .kind = CALL_LIST };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "info-device"), ==, copy);
        g_assert_cmpstr(report_get(t, "info-backing-file"), ==, copy);
        g_assert_cmpint(calls_count_loops_on(copy), ==, 0);
        g_assert_cmpint(harness_count_loop_devices(), ==, baseline.loop_devices);
        g_assert_true(is_mount_point(mp));

        g_assert_cmpint(kill(daemon_pid, SIGKILL), ==, 0);
        g_assert_cmpint(harness_stop_daemon(daemon_pid, NULL), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        {
                g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);

                g_assert_cmpstr(report_get(l, "count"), ==, "1");
                g_assert_cmpstr(report_get(l, "entry0-mount-point"), ==, mp);
                g_assert_cmpstr(report_get(l, "entry0-device"), ==, copy);
                g_assert_cmpstr(report_get(l, "entry0-mount-id"), ==,
                                report_get(t, "info-mount-id"));
        }
        g_assert_true(is_mount_point(mp));
        unmount_as(HARNESS_UID_USER1, mp);
        g_assert_cmpint(calls_count_loops_on(copy), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        assert_clean();
}

/* A mount unmounted behind the daemon's back is forgotten, with MountRemoved. */
static void test_external_unmount(void) {
        const Call c = { .kind = CALL_MOUNT_FD, .path = image_stick };
        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");
        const Call list = { .kind = CALL_LIST };

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_forget_signals();
        g_assert_cmpint(umount2(mp, 0), ==, 0);
        calls_await_signal("MountRemoved", mp);
        g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        g_assert_cmpint(rmdir(mp), ==, 0);
        assert_clean();
}

/*
 * Item 29: the device goes away while mounted, and nothing tells the daemon: its periodic
 * check (--watch-interval, 2 s by default) must find out. No block device here can be
 * hot-removed while mounted (zram refuses, and the kernel defers a loop detach until
 * unmount), so the daemon's view of the disk's sysfs "dev" attribute is a file of the
 * test's from before the mount, which the test empties in place: the daemon then reads
 * what it reads when a USB stick is pulled, with no mount table change and no uevent
 * (tests/integration/test-udev.c has the same with udevd's event), and must lazily
 * detach and forget the mount.
 */
static void test_device_vanishes(void) {
        Zram z = zram_new("zgone");
        const Call c = { .kind = CALL_MOUNT, .path = z.node };
        g_autofree char *attr = g_strdup_printf("/sys/block/zram%d/dev", z.id);
        g_autofree char *file = g_build_filename(harness_tmpdir(), "zram-dev-attr", NULL);
        g_autofree char *real = NULL;

        g_assert_true(g_file_get_contents(attr, &real, NULL, NULL));
        g_assert_true(g_file_set_contents(file, real, -1, NULL));
        g_assert_cmpint(mount(file, attr, NULL, MS_BIND, NULL), ==, 0);

        g_autoptr(GHashTable) t = call_as(HARNESS_UID_USER1, &c);
        const char *mp = report_get(t, "mount-point");

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        calls_forget_signals();
        g_assert_cmpint(truncate(file, 0), ==, 0);
        calls_await_signal("MountRemoved", mp);
        g_assert_false(is_mount_point(mp));
        g_assert_cmpint(umount2(attr, 0), ==, 0);
        g_assert_cmpint(unlink(file), ==, 0);
        const Call list = { .kind = CALL_LIST };
        g_autoptr(GHashTable) l = call_as(HARNESS_UID_USER1, &list);
        g_assert_cmpstr(report_get(l, "count"), ==, "0");
        assert_clean();
        zram_free(&z);
}

int main(int argc, char *argv[]) {
        int r;

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
        image_stick = make_image("ext4", "stick");
        image_stick_twin = make_image("ext4", "stick");
        image_hostile = make_image("ext4", "../a\n%n\x1b[31m");
        image_nolabel = make_image("xfs", NULL);
        calls_watch_signals();
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        calls_subscribe();
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        g_test_add_func("/mount/fd/default-target", test_mount_fd_default_target);
        g_test_add_func("/mount/fd/target", test_mount_fd_target);
        g_test_add_func("/mount/fd/target-refused", test_mount_fd_target_refused);
        g_test_add_func("/mount/labels", test_same_label_and_hostile_label);
        g_test_add_func("/mount/other-user", test_other_users_mount);
        g_test_add_func("/mount/image-twice", test_image_twice);
        g_test_add_func("/mount/unmount/not-mounted", test_unmount_not_mounted);
        g_test_add_func("/mount/unmount/busy", test_unmount_busy);
        g_test_add_func("/mount/caller-exits", test_caller_exits);
        g_test_add_func("/mount/connection-outlives-caller", test_connection_outlives_caller);
        g_test_add_func("/mount/device", test_mount_device);
        g_test_add_func("/mount/device/refused", test_mount_device_refused);
        g_test_add_func("/mount/registry/restart", test_restart_keeps_registry);
        g_test_add_func("/mount/registry/external-unmount", test_external_unmount);
        g_test_add_func("/mount/erofs-from-file", test_erofs_from_file);
        g_test_add_func("/mount/device/vanishes", test_device_vanishes);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
