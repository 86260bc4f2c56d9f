/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Id-mapped mounts end to end (params "idmap" and "userns"): the real usermountd on the
 * private bus with the real polkitd, real images of every type on real loop devices,
 * unprivileged callers in their own user namespaces. Covers idmap "namespace" with a
 * single-id map and with a subuid range, idmap "user", the refusals of docs/security.md
 * item 23, a receiver's attempts to change or clear the id-mapping (item 3), ListMounts
 * and the polkit detail. Every test proves that nothing was left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "kernel-compat.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

#define OVERFLOW_ID "65534"

static pid_t daemon_pid;
static HarnessSnapshot baseline;

static const char *const fstypes[] = { "ext4", "xfs", "btrfs", "squashfs", "erofs" };
static char *images[G_N_ELEMENTS(fstypes)];

static const char rules[] = CALLS_RULES_ALLOW_USER1;

/* ---------------------------------------------------------------------------------- */
/* The caller side                                                                     */

typedef enum UsernsKind {
        USERNS_NONE,
        USERNS_SELF,   /* /proc/self/ns/user */
        USERNS_NET,    /* /proc/self/ns/net */
        USERNS_FILE,   /* the image file itself */
        USERNS_PATH,   /* userns_path */
} UsernsKind;

typedef struct Req {
        const char *method;      /* "OpenMount" (default) or "MountFd" */
        const char *image;
        bool read_only;          /* open the image O_RDONLY */
        const char *idmap;       /* params["idmap"], NULL: not given */
        UsernsKind userns;
        const char *userns_path;
        const char *target;      /* MountFd: params["target"]; item 3: where to attach */
        bool unshare_and_wait;   /* unshare a user namespace, wait for the test to map it */
        bool probe;              /* report owners, try to modify the unmapped files */
        const char *create;      /* create this file (and chown it to 1:1 if chown_to_one) */
        bool chown_to_one;
        bool break_idmap;        /* item 3 */
        bool list_and_unmount;   /* MountFd: ListMounts, then Unmount */
} Req;

static void write_file(const char *path, const char *text) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t) strlen(text));
}

static int open_userns(const Req *q) {
        switch (q->userns) {
        case USERNS_SELF:
                return open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        case USERNS_NET:
                return open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        case USERNS_FILE:
                return open(q->image, O_RDONLY | O_CLOEXEC);
        case USERNS_PATH:
                return open(q->userns_path, O_RDONLY | O_CLOEXEC);
        case USERNS_NONE:
        default:
                return -EBADF;
        }
}

static void append_params(sd_bus_message *m, const Req *q, int userns_fd) {
        g_assert_cmpint(sd_bus_message_open_container(m, 'a', "{sv}"), >=, 0);
        if (q->idmap)
                g_assert_cmpint(sd_bus_message_append(m, "{sv}", "idmap", "s", q->idmap), >=, 0);
        if (userns_fd >= 0)
                g_assert_cmpint(sd_bus_message_append(m, "{sv}", "userns", "h", userns_fd), >=, 0);
        if (q->target && streq(q->method, "MountFd"))
                g_assert_cmpint(sd_bus_message_append(m, "{sv}", "target", "s", q->target), >=, 0);
        g_assert_cmpint(sd_bus_message_close_container(m), >=, 0);
}

static void report_owner(int dirfd, const char *name, const char *key) {
        struct stat st;

        if (fstatat(dirfd, name, &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0)
                harness_report("own-%s=%s", key, calls_errno_name(-errno));
        else
                harness_report("own-%s=%u:%u", key, (unsigned) st.st_uid, (unsigned) st.st_gid);
}

static const char *err(int r) {
        return calls_errno_name(r < 0 ? -errno : r);
}

static void probe(int dirfd, const Req *q) {
        int fd;

        report_owner(dirfd, "", "root");
        report_owner(dirfd, "root.txt", "root.txt");
        report_owner(dirfd, "one.txt", "one.txt");
        report_owner(dirfd, "far.txt", "far.txt");

        fd = openat(dirfd, "far.txt", O_WRONLY | O_CLOEXEC);
        harness_report("write-far=%s", err(fd));
        safe_close(fd);
        harness_report("chown-far=%s", err(fchownat(dirfd, "far.txt", 0, 0, 0)));
        harness_report("chmod-far=%s", err(fchmodat(dirfd, "far.txt", 0666, 0)));

        if (!q->create)
                return;
        fd = openat(dirfd, q->create, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        harness_report("create=%s", err(fd));
        safe_close(fd);
        if (q->chown_to_one)
                harness_report("chown-new=%s", err(fchownat(dirfd, q->create, 1, 1, 0)));
        report_owner(dirfd, q->create, "new");
}

static int setattr(int fd, const char *path, unsigned flags, uint64_t set, uint64_t clr,
                   int userns) {
        struct mount_attr a = { .attr_set = set, .attr_clr = clr, .userns_fd = (uint64_t) userns };

        return mount_setattr(fd, path, flags, &a, sizeof(a));
}

/* open_tree_attr(OPEN_TREE_CLONE) with the id-mapping changed: must fail. */
static void try_open_tree_attr(int dfd, const char *path, const char *key, uint64_t set,
                               uint64_t clr, int userns) {
        struct mount_attr a = { .attr_set = set, .attr_clr = clr, .userns_fd = (uint64_t) userns };
        int fd;

        fd = (int) syscall(SYS_open_tree_attr, dfd, path,
                           OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (path[0] ? 0 : AT_EMPTY_PATH), &a,
                           sizeof(a));
        harness_report("%s=%s", key, err(fd));
        if (fd >= 0) {
                g_autofree char *k = g_strconcat(key, "-root", NULL);

                report_owner(fd, "root.txt", k);
                close(fd);
        }
}

/*
 * The same calls on a tmpfs the receiver mounted itself, id-mapped with a namespace of
 * its own: they work there, so their failure on the daemon's mount is the lock, not a
 * malformed call.
 */
static void control_own_mount(void) {
        _cleanup_close_ int fsfd = -EBADF, mfd = -EBADF, mapns = -EBADF;
        pid_t pid;
        int sv[2];
        char c = 0, path[64];

        /* A user namespace to map with: a child's, with the receiver's own map. */
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                close(sv[0]);
                if (unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                (void) !write(sv[1], &c, 1);
                (void) !read(sv[1], &c, 1);
                _exit(0);
        }
        close(sv[1]);
        g_assert_cmpint(read(sv[0], &c, 1), ==, 1);
        snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
        write_file(path, "0 0 1\n");
        snprintf(path, sizeof(path), "/proc/%d/setgroups", (int) pid);
        write_file(path, "deny");
        snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
        write_file(path, "0 0 1\n");
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
        mapns = open(path, O_RDONLY | O_CLOEXEC);
        close(sv[0]);
        (void) waitpid(pid, NULL, 0);
        g_assert_cmpint(mapns, >=, 0);

        fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
        g_assert_cmpint(fsfd, >=, 0);
        g_assert_cmpint(fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, 0);
        g_assert_cmpint(mfd, >=, 0);
        harness_report("control-set=%s",
                       err(setattr(mfd, "", AT_EMPTY_PATH, MOUNT_ATTR_IDMAP, 0, mapns)));
        try_open_tree_attr(mfd, "", "control-ota-plain", 0, 0, -1);
        try_open_tree_attr(mfd, "", "control-ota-clr", 0, MOUNT_ATTR_IDMAP, -1);
        try_open_tree_attr(mfd, "", "control-ota-replace", MOUNT_ATTR_IDMAP, MOUNT_ATTR_IDMAP,
                           mapns);
}

/* Item 3: everything a receiver that is root in its own namespaces could try. */
static void break_idmap(int fd, const char *target) {
        _cleanup_close_ int own = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
        int r;

        control_own_mount();
        try_open_tree_attr(fd, "", "ota-plain-fd", 0, 0, -1);

        harness_report("clr-fd=%s", err(setattr(fd, "", AT_EMPTY_PATH, 0, MOUNT_ATTR_IDMAP, -1)));
        harness_report("set-fd=%s",
                       err(setattr(fd, "", AT_EMPTY_PATH, MOUNT_ATTR_IDMAP, 0, own)));
        try_open_tree_attr(fd, "", "ota-clr-fd", 0, MOUNT_ATTR_IDMAP, -1);
        try_open_tree_attr(fd, "", "ota-set-fd", MOUNT_ATTR_IDMAP, 0, own);
        try_open_tree_attr(fd, "", "ota-replace-fd", MOUNT_ATTR_IDMAP, MOUNT_ATTR_IDMAP, own);

        r = move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
        harness_report("attach=%s", err(r));
        if (r < 0)
                return;
        harness_report("clr-attached=%s", err(setattr(AT_FDCWD, target, 0, 0, MOUNT_ATTR_IDMAP, -1)));
        harness_report("set-attached=%s",
                       err(setattr(AT_FDCWD, target, 0, MOUNT_ATTR_IDMAP, 0, own)));
        harness_report("clr-fd-after=%s",
                       err(setattr(fd, "", AT_EMPTY_PATH, 0, MOUNT_ATTR_IDMAP, -1)));
        try_open_tree_attr(AT_FDCWD, target, "ota-plain-attached", 0, 0, -1);
        try_open_tree_attr(AT_FDCWD, target, "ota-clr-attached", 0, MOUNT_ATTR_IDMAP, -1);
        try_open_tree_attr(AT_FDCWD, target, "ota-set-attached", MOUNT_ATTR_IDMAP, 0, own);
        try_open_tree_attr(fd, "", "ota-clr-fd-after", 0, MOUNT_ATTR_IDMAP, -1);
        report_owner(AT_FDCWD, target, "after-root");
        {
                _cleanup_close_ int dir = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                report_owner(dir, "root.txt", "after-root.txt");
        }
        harness_report("detach=%s", err(umount2(target, MNT_DETACH)));
}

static void list_and_unmount(sd_bus *bus, const char *mount_point) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r, n = 0;

        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE,
                               "ListMounts", &error, &reply, "a{sv}", 0);
        harness_report("list=%s", r < 0 ? error.name : "ok");
        if (r >= 0) {
                g_assert_cmpint(sd_bus_message_enter_container(reply, 'a', "a{sv}"), >, 0);
                while (sd_bus_message_at_end(reply, false) == 0) {
                        calls_report_info(reply, "list-");
                        n++;
                }
                harness_report("list-count=%d", n);
        }
        sd_bus_error_free(&error);
        r = sd_bus_call_method(bus, UM_BUS_NAME, UM_OBJECT_PATH, UM_MANAGER_INTERFACE, "Unmount",
                               &error, NULL, "sa{sv}", mount_point, 0);
        harness_report("unmount=%s", r < 0 ? error.name : "ok");
}

static int caller_idmap(void *userdata) {
        const Req *q = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, userns = -EBADF, mount_fd = -EBADF;
        const char *method = q->method ?: "OpenMount", *mount_point = NULL;
        g_autofree char *point = NULL;
        sd_bus *bus = NULL;
        int fd, r;

        /* Connected first: the bus knows the caller by the ids it had when it connected. */
        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        if (q->unshare_and_wait) {
                g_assert_cmpint(unshare(CLONE_NEWUSER), ==, 0);
                harness_report("ready=1");
                g_assert_cmpint(harness_await_release(), ==, 0);
        }
        source = open(q->image, (q->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        g_assert_cmpint(source, >=, 0);
        userns = open_userns(q);
        if (q->userns != USERNS_NONE)
                g_assert_cmpint(userns, >=, 0);

        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, method), >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        append_params(call, &(Req) { .method = method, .idmap = q->idmap, .target = q->target },
                      userns);
        r = sd_bus_call(bus, call, 60 * G_USEC_PER_SEC, &error, &reply);
        calls_report_result(r, &error);
        if (r < 0) {
                sd_bus_flush_close_unref(bus);
                return 0;
        }
        if (streq(method, "OpenMount")) {
                g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
                mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        } else {
                g_assert_cmpint(sd_bus_message_read(reply, "s", &mount_point), >, 0);
                point = g_strdup(mount_point);
                harness_report("mount-point=%s", point);
                mount_fd = open(point, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        }
        g_assert_cmpint(mount_fd, >=, 0);
        calls_report_info(reply, "info-");

        if (q->probe)
                probe(mount_fd, q);
        if (q->break_idmap)
                break_idmap(mount_fd, q->target);
        mount_fd = safe_close(mount_fd);
        if (q->list_and_unmount)
                list_and_unmount(bus, point);
        sd_bus_flush_close_unref(bus);
        return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The test side                                                                      */

static const char *image_of(const char *fstype) {
        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++)
                if (streq(fstypes[i], fstype))
                        return images[i];
        g_assert_not_reached();
}

static bool read_only_type(const char *fstype) {
        return streq(fstype, "squashfs") || streq(fstype, "erofs");
}

static void assert_clean(void) {
        calls_assert_clean(daemon_pid, &baseline);
}

static void assert_contains(const char *s, const char *part) {
        if (!strstr(strempty(s), part))
                g_error("'%s' lacks '%s'", strempty(s), part);
}

static GHashTable *run_as(uid_t uid, gid_t gid, HarnessRunFlags flags, const Req *q) {
        g_autofree char *output = NULL;
        int status;

        status = harness_run_as(uid, gid, flags, caller_idmap, (void *) q, &output);
        g_test_message("caller output:\n%s", output ?: "");
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static GHashTable *run(HarnessRunFlags flags, const Req *q) {
        return run_as(HARNESS_UID_USER1, HARNESS_GID_USER1, flags, q);
}

/*
 * Runs q in a caller that unshares its own user namespace; the test (root) writes its
 * maps (NULL: none) and lets it go on.
 */
static GHashTable *run_mapped(const Req *q, const char *uid_map, const char *gid_map) {
        g_autoptr(HarnessCaller) caller = NULL;
        g_autofree char *line = NULL, *output = NULL, *u = NULL, *g = NULL;
        Req r = *q;
        int status;

        r.unshare_and_wait = true;
        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1, 0, caller_idmap,
                                             &r, &caller), ==, 0);
        g_assert_cmpint(harness_caller_read_line(caller, HARNESS_TIMEOUT_MS, &line), ==, 0);
        g_assert_cmpstr(line, ==, "ready=1");
        if (uid_map) {
                u = g_strdup_printf("/proc/%d/uid_map", (int) harness_caller_pid(caller));
                g = g_strdup_printf("/proc/%d/gid_map", (int) harness_caller_pid(caller));
                write_file(u, uid_map);
                write_file(g, gid_map);
        }
        g_assert_cmpint(harness_caller_release(caller), ==, 0);
        status = harness_caller_wait(caller, HARNESS_CALLER_TIMEOUT_MS, &output);
        g_test_message("caller output:\n%s", output ?: "");
        g_assert_cmpint(status, ==, 0);
        return calls_parse_report(output);
}

static void assert_refused(GHashTable *t, const char *error_name, const char *message_part) {
        g_assert_cmpstr(report_get(t, "result"), ==, error_name);
        assert_contains(report_get(t, "message"), message_part);
        assert_clean();
}

/* The owner of a file as root sees it on the image, mounted after the caller is done. */
static char *disk_owner(const char *fstype, const char *name) {
        g_autofree char *mnt = NULL, *path = NULL;
        struct stat st;
        char *s;

        g_assert_cmpint(harness_mount_image(image_of(fstype), fstype,
                                            MS_NODEV | MS_NOSUID | MS_NOEXEC | MS_RDONLY, &mnt),
                        ==, 0);
        path = g_build_filename(mnt, name, NULL);
        s = lstat(path, &st) == 0 ? g_strdup_printf("%u:%u", (unsigned) st.st_uid,
                                                     (unsigned) st.st_gid) :
                                    g_strdup(g_strerror(errno));
        g_assert_cmpint(harness_umount(mnt), ==, 0);
        return s;
}

static void assert_unmapped_refused(GHashTable *t) {
        const char *w = report_get(t, "write-far"), *c = report_get(t, "chown-far");
        const char *m = report_get(t, "chmod-far");

        g_assert_true(streq(w, "EACCES") || streq(w, "EPERM") || streq(w, "EOVERFLOW") ||
                      streq(w, "EROFS"));
        g_assert_true(streq(c, "EPERM") || streq(c, "EOVERFLOW") || streq(c, "EROFS"));
        g_assert_true(streq(m, "EPERM") || streq(m, "EOVERFLOW") || streq(m, "EROFS"));
}

static void assert_info(GHashTable *t, const char *mode, const char *uid_map,
                        const char *gid_map) {
        g_autofree char *attrs = g_strdup(report_get(t, "info-attributes"));
        g_auto(GStrv) v = g_strsplit(strempty(attrs), ",", -1);

        g_assert_cmpstr(report_get(t, "info-idmap"), ==, mode);
        g_assert_true(g_strv_contains((const char *const *) v, "idmap"));
        g_assert_cmpstr(report_get(t, "info-idmap-uid-map"), ==, uid_map);
        g_assert_cmpstr(report_get(t, "info-idmap-gid-map"), ==, gid_map);
}

/* namespace, single map (0 -> the caller): root's files are the caller's root's. */
static void test_namespace_single(gconstpointer data) {
        const char *fstype = data;
        bool ro = read_only_type(fstype);
        g_autofree char *name = g_strdup_printf("single-%s.txt", fstype);
        const Req q = { .image = image_of(fstype), .read_only = ro, .idmap = "namespace",
                        .probe = true, .create = ro ? NULL : name };
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, &q);
        g_autofree char *owner = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        assert_info(t, "namespace", "0:61001:1", "0:61001:1");
        g_assert_cmpstr(report_get(t, "own-root"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "own-root.txt"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "own-one.txt"), ==, OVERFLOW_ID ":" OVERFLOW_ID);
        g_assert_cmpstr(report_get(t, "own-far.txt"), ==, OVERFLOW_ID ":" OVERFLOW_ID);
        assert_unmapped_refused(t);
        assert_clean();
        if (ro)
                return;
        g_assert_cmpstr(report_get(t, "create"), ==, "ok");
        g_assert_cmpstr(report_get(t, "own-new"), ==, "0:0");
        owner = disk_owner(fstype, name);
        g_assert_cmpstr(owner, ==, "0:0");
        assert_clean();
}

static const char range_map[] = "0 61001 1\n1 2000000000 65536\n";

/* namespace, with the subuid range: 1:1 maps too, and lands on disk as 1:1. */
static void test_namespace_range(gconstpointer data) {
        const char *fstype = data;
        bool ro = read_only_type(fstype);
        g_autofree char *name = g_strdup_printf("range-%s.txt", fstype);
        const Req q = { .image = image_of(fstype), .read_only = ro, .idmap = "namespace",
                        .probe = true, .create = ro ? NULL : name, .chown_to_one = true };
        g_autoptr(GHashTable) t = run_mapped(&q, range_map, range_map);
        g_autofree char *owner = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        assert_info(t, "namespace", "0:61001:1,1:2000000000:65536", "0:61001:1,1:2000000000:65536");
        g_assert_cmpstr(report_get(t, "own-root.txt"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "own-one.txt"), ==, "1:1");
        g_assert_cmpstr(report_get(t, "own-far.txt"), ==, OVERFLOW_ID ":" OVERFLOW_ID);
        assert_unmapped_refused(t);
        assert_clean();
        if (ro)
                return;
        g_assert_cmpstr(report_get(t, "create"), ==, "ok");
        g_assert_cmpstr(report_get(t, "chown-new"), ==, "ok");
        g_assert_cmpstr(report_get(t, "own-new"), ==, "1:1");
        owner = disk_owner(fstype, name);
        g_assert_cmpstr(owner, ==, "1:1");
        assert_clean();
}

/* user mode on ext4, caller in the initial namespace: root's tree is the caller's. */
static void test_user_mode(void) {
        const Req q = { .image = image_of("ext4"), .idmap = "user", .probe = true,
                        .create = "user-mode.txt" };
        g_autoptr(GHashTable) t = run(0, &q);
        g_autofree char *owner = NULL;

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        assert_info(t, "user", "0:61001:1", "0:61001:1");
        g_assert_cmpstr(report_get(t, "own-root"), ==, "61001:61001");
        g_assert_cmpstr(report_get(t, "own-root.txt"), ==, "61001:61001");
        g_assert_cmpstr(report_get(t, "own-one.txt"), ==, OVERFLOW_ID ":" OVERFLOW_ID);
        g_assert_cmpstr(report_get(t, "own-far.txt"), ==, OVERFLOW_ID ":" OVERFLOW_ID);
        assert_unmapped_refused(t);
        g_assert_cmpstr(report_get(t, "create"), ==, "ok");
        g_assert_cmpstr(report_get(t, "own-new"), ==, "61001:61001");
        assert_clean();
        owner = disk_owner("ext4", "user-mode.txt");
        g_assert_cmpstr(owner, ==, "0:0");
        assert_clean();
}

/* ---- refusals (item 23) ---------------------------------------------------------------- */

static void test_refused_initial(void) {
        const Req none = { .image = image_of("ext4"), .idmap = "namespace" };
        const Req self = { .image = image_of("ext4"), .idmap = "namespace", .userns = USERNS_SELF };
        g_autoptr(GHashTable) t1 = run(0, &none);
        g_autoptr(GHashTable) t2 = run(0, &self);

        assert_refused(t1, UM_ERROR_INVALID_ARGUMENT, "runs in the initial one");
        assert_refused(t2, UM_ERROR_INVALID_ARGUMENT, "initial user namespace");
}

static void test_refused_not_userns(void) {
        const Req net = { .image = image_of("ext4"), .idmap = "namespace", .userns = USERNS_NET };
        const Req file = { .image = image_of("ext4"), .idmap = "namespace", .userns = USERNS_FILE };
        g_autoptr(GHashTable) t1 = run(HARNESS_NEW_USERNS, &net);
        g_autoptr(GHashTable) t2 = run(HARNESS_NEW_USERNS, &file);

        assert_refused(t1, UM_ERROR_INVALID_ARGUMENT, "not a user namespace");
        assert_refused(t2, UM_ERROR_INVALID_ARGUMENT, "not a namespace at all");
}

static void test_refused_userns_without_namespace(void) {
        const Req none = { .image = image_of("ext4"), .idmap = "none", .userns = USERNS_SELF };
        const Req absent = { .image = image_of("ext4"), .userns = USERNS_SELF };
        g_autoptr(GHashTable) t1 = run(HARNESS_NEW_USERNS, &none);
        g_autoptr(GHashTable) t2 = run(HARNESS_NEW_USERNS, &absent);

        assert_refused(t1, UM_ERROR_INVALID_ARGUMENT, "only meaningful with idmap 'namespace'");
        assert_refused(t2, UM_ERROR_INVALID_ARGUMENT, "only meaningful with idmap 'namespace'");
}

/* A user namespace of umtest2's, offered by umtest1 through a file it can open. */
static void test_refused_other_owner(void) {
        g_autofree char *file = g_build_filename(harness_tmpdir(), "umtest2-userns", NULL);
        g_autofree char *ns = NULL, *u = NULL, *g = NULL;
        int sv[2];
        char c = 0;
        pid_t pid;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                close(sv[0]);
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                if (setgroups(0, NULL) < 0 ||
                    setresgid(HARNESS_GID_USER2, HARNESS_GID_USER2, HARNESS_GID_USER2) < 0 ||
                    setresuid(HARNESS_UID_USER2, HARNESS_UID_USER2, HARNESS_UID_USER2) < 0 ||
                    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 || unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                (void) !write(sv[1], &c, 1);
                (void) !read(sv[1], &c, 1);
                _exit(0);
        }
        close(sv[1]);
        g_assert_cmpint(read(sv[0], &c, 1), ==, 1);
        u = g_strdup_printf("/proc/%d/uid_map", (int) pid);
        g = g_strdup_printf("/proc/%d/gid_map", (int) pid);
        write_file(u, "0 61002 1\n");
        write_file(g, "0 61002 1\n");
        ns = g_strdup_printf("/proc/%d/ns/user", (int) pid);
        g_assert_true(g_file_set_contents(file, "", 0, NULL));
        g_assert_cmpint(chmod(file, 0644), ==, 0);
        g_assert_cmpint(mount(ns, file, NULL, MS_BIND, NULL), ==, 0);

        {
                const Req q = { .image = image_of("ext4"), .idmap = "namespace",
                                .userns = USERNS_PATH, .userns_path = file };
                g_autoptr(GHashTable) t1 = run(0, &q);
                g_autoptr(GHashTable) t2 = run(HARNESS_NEW_USERNS, &q);

                g_assert_cmpint(umount2(file, MNT_DETACH), ==, 0);
                g_assert_cmpint(unlink(file), ==, 0);
                close(sv[0]);
                g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
                assert_refused(t1, UM_ERROR_NOT_AUTHORIZED, "owned by uid 61002");
                assert_refused(t2, UM_ERROR_NOT_AUTHORIZED, "owned by uid 61002");
        }
}

static void test_refused_maps(void) {
        const Req q = { .image = image_of("ext4"), .idmap = "namespace" };
        static const char own[] = "0 61001 1\n";
        /* umtest2's range */
        g_autoptr(GHashTable) t1 = run_mapped(&q, "0 61001 1\n1 2000065536 10\n", own);
        /* a host uid never delegated */
        g_autoptr(GHashTable) t2 = run_mapped(&q, "0 61001 1\n1 3000000000 1\n", own);
        /* host root */
        g_autoptr(GHashTable) t3 = run_mapped(&q, "0 0 1\n", own);
        /* a group that is not the caller's primary group */
        g_autoptr(GHashTable) t4 = run_mapped(&q, own, "0 61100 1\n");
        /* maps never written */
        g_autoptr(GHashTable) t5 = run_mapped(&q, NULL, NULL);

        assert_refused(t1, UM_ERROR_NOT_AUTHORIZED, "host uid 2000065536 ");
        assert_contains(report_get(t1, "message"), "/etc/subuid");
        assert_refused(t2, UM_ERROR_NOT_AUTHORIZED, "host uid 3000000000 ");
        assert_refused(t3, UM_ERROR_NOT_AUTHORIZED, "host uid 0 ");
        assert_refused(t4, UM_ERROR_NOT_AUTHORIZED, "host gid 61100 ");
        assert_contains(report_get(t4, "message"), "/etc/subgid");
        assert_refused(t5, UM_ERROR_INVALID_ARGUMENT, "no uid or gid map");
}

/* /etc/subuid is read for each request: without umtest1's line the range is refused. */
static void test_refused_subuid_removed(void) {
        g_autofree char *saved = NULL;
        g_autoptr(GString) without = g_string_new(NULL);
        g_auto(GStrv) lines = NULL;
        const Req q = { .image = image_of("ext4"), .idmap = "namespace" };

        g_assert_true(g_file_get_contents("/etc/subuid", &saved, NULL, NULL));
        assert_contains(saved, "umtest1:2000000000:65536");
        lines = g_strsplit(saved, "\n", -1);
        for (size_t i = 0; lines[i]; i++)
                if (lines[i][0] && !g_str_has_prefix(lines[i], HARNESS_USER1 ":"))
                        g_string_append_printf(without, "%s\n", lines[i]);
        g_assert_cmpint(harness_write_etc("subuid", without->str), ==, 0);
        {
                g_autoptr(GHashTable) t = run_mapped(&q, range_map, range_map);

                g_assert_cmpint(harness_write_etc("subuid", saved), ==, 0);
                assert_refused(t, UM_ERROR_NOT_AUTHORIZED, "host uid 2000000000 ");
        }
        {
                /* Restored: the same request goes through again. */
                g_autoptr(GHashTable) t = run_mapped(&q, range_map, range_map);

                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                assert_clean();
        }
}

/* ---- item 3 ---------------------------------------------------------------------------- */

static char *make_target(const char *name) {
        char *dir = g_build_filename(harness_tmpdir(), "targets", name, NULL);

        g_assert_cmpint(g_mkdir_with_parents(dir, 0755), ==, 0);
        g_assert_cmpint(chown(dir, HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
        return dir;
}

static void test_receiver_cannot_change(void) {
        /* Before attaching, open_tree_attr() of the fd fails even without a change (the
         * detached mount belongs to another mount namespace: EINVAL): those three prove
         * little, the attached ones prove the lock. */
        static const char *const refused[] = {
                "clr-fd", "set-fd", "ota-clr-fd", "ota-set-fd", "ota-replace-fd",
                "clr-attached", "set-attached", "clr-fd-after", "ota-clr-attached",
                "ota-set-attached", "ota-clr-fd-after",
        };
        g_autofree char *target = make_target("item3");
        const Req q = { .image = image_of("ext4"), .idmap = "namespace", .break_idmap = true,
                        .target = target };
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, &q);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        /* The calls are well-formed: on the receiver's own id-mapped tmpfs they work. */
        g_assert_cmpstr(report_get(t, "control-set"), ==, "ok");
        g_assert_cmpstr(report_get(t, "control-ota-plain"), ==, "ok");
        g_assert_cmpstr(report_get(t, "control-ota-clr"), ==, "ok");
        g_assert_cmpstr(report_get(t, "control-ota-replace"), ==, "ok");
        g_assert_cmpstr(report_get(t, "attach"), ==, "ok");
        /* Cloning the attached mount as it is works; only changing its id-mapping fails. */
        g_assert_cmpstr(report_get(t, "ota-plain-attached"), ==, "ok");
        g_assert_cmpstr(report_get(t, "own-ota-plain-attached-root"), ==, "0:0");
        for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
                const char *r = report_get(t, refused[i]);

                g_test_message("%s: %s", refused[i], strempty(r));
                g_assert_nonnull(r);
                g_assert_cmpstr(r, !=, "ok");
        }
        g_assert_cmpstr(report_get(t, "own-after-root"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "own-after-root.txt"), ==, "0:0");
        g_assert_cmpstr(report_get(t, "detach"), ==, "ok");
        assert_clean();
}

/* ---- ListMounts and polkit ------------------------------------------------------------- */

static void test_list_mounts(void) {
        g_autofree char *target = make_target("list");
        const Req q = { .method = "MountFd", .image = image_of("ext4"), .idmap = "user",
                        .target = target, .probe = true, .list_and_unmount = true };
        g_autoptr(GHashTable) t = run(0, &q);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        g_assert_cmpstr(report_get(t, "mount-point"), ==, target);
        assert_info(t, "user", "0:61001:1", "0:61001:1");
        g_assert_cmpstr(report_get(t, "own-root.txt"), ==, "61001:61001");
        g_assert_cmpstr(report_get(t, "list"), ==, "ok");
        g_assert_cmpstr(report_get(t, "list-count"), ==, "1");
        g_assert_cmpstr(report_get(t, "list-mount-point"), ==, target);
        g_assert_cmpstr(report_get(t, "list-idmap"), ==, "user");
        g_assert_cmpstr(report_get(t, "list-idmap-uid-map"), ==, "0:61001:1");
        g_assert_cmpstr(report_get(t, "list-idmap-gid-map"), ==, "0:61001:1");
        assert_contains(report_get(t, "list-attributes"), "idmap");
        g_assert_cmpstr(report_get(t, "unmount"), ==, "ok");
        assert_clean();
}

static void test_list_mounts_namespace(void) {
        g_autofree char *target = make_target("list-ns");
        const Req q = { .method = "MountFd", .image = image_of("ext4"), .idmap = "namespace",
                        .target = target, .list_and_unmount = true };
        g_autoptr(GHashTable) t = run(HARNESS_NEW_USERNS, &q);

        g_assert_cmpstr(report_get(t, "result"), ==, "ok");
        assert_info(t, "namespace", "0:61001:1", "0:61001:1");
        g_assert_cmpstr(report_get(t, "list-idmap"), ==, "namespace");
        g_assert_cmpstr(report_get(t, "list-idmap-uid-map"), ==, "0:61001:1");
        g_assert_cmpstr(report_get(t, "unmount"), ==, "ok");
        assert_clean();
}

/* polkit sees the mode as the detail "idmap": a rule refuses "user" only. */
static void test_polkit_detail(void) {
        g_autofree char *refuse_user = g_strconcat(
                "polkit.addRule(function(action, subject) {\n"
                "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
                "            action.lookup('idmap') == 'user')\n"
                "                return polkit.Result.NO;\n"
                "});\n", rules, NULL);
        const Req user = { .image = image_of("ext4"), .idmap = "user" };
        const Req none = { .image = image_of("ext4"), .idmap = "none" };
        const Req ns = { .image = image_of("ext4"), .idmap = "namespace" };

        g_assert_cmpint(harness_set_rules(refuse_user), ==, 0);
        {
                g_autoptr(GHashTable) t1 = run(0, &user);
                g_autoptr(GHashTable) t2 = run(0, &none);
                g_autoptr(GHashTable) t3 = run(HARNESS_NEW_USERNS, &ns);

                g_assert_cmpint(harness_set_rules(rules), ==, 0);
                g_assert_cmpstr(report_get(t1, "result"), ==, UM_ERROR_NOT_AUTHORIZED);
                g_assert_cmpstr(report_get(t2, "result"), ==, "ok");
                g_assert_cmpstr(report_get(t2, "info-idmap"), ==, "none");
                g_assert_cmpstr(report_get(t3, "result"), ==, "ok");
                assert_clean();
        }
}

/* ---------------------------------------------------------------------------------- */

static void make_images(void) {
        const HarnessEntry entries[] = {
                { HARNESS_ENTRY_FILE, "root.txt", "root\n", 0644, 0, 0 },
                { HARNESS_ENTRY_FILE, "one.txt", "one\n", 0644, 1, 1 },
                { HARNESS_ENTRY_FILE, "far.txt", "far\n", 0644, 70000, 70000 },
                { 0 },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++) {
                g_autofree char *label = g_strdup_printf("idmap-%s", fstypes[i]);
                const HarnessImageSpec spec = {
                        .label = streq(fstypes[i], "squashfs") ? NULL : label,
                        .root_uid = 0,
                        .root_gid = 0,
                        .root_mode = 0755,
                        .entries = entries,
                };

                g_assert_cmpint(harness_make_image(fstypes[i], &spec, &images[i]), ==, 0);
                /* Opened read-write by the caller: its own file. */
                g_assert_cmpint(chown(images[i], HARNESS_UID_USER1, HARNESS_GID_USER1), ==, 0);
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
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);

        for (size_t i = 0; i < G_N_ELEMENTS(fstypes); i++) {
                g_autofree char *single = g_strdup_printf("/idmap/namespace/single/%s", fstypes[i]);
                g_autofree char *range = g_strdup_printf("/idmap/namespace/range/%s", fstypes[i]);

                g_test_add_data_func(single, fstypes[i], test_namespace_single);
                g_test_add_data_func(range, fstypes[i], test_namespace_range);
        }
        g_test_add_func("/idmap/user/ext4", test_user_mode);
        g_test_add_func("/idmap/refused/initial-userns", test_refused_initial);
        g_test_add_func("/idmap/refused/not-a-userns", test_refused_not_userns);
        g_test_add_func("/idmap/refused/userns-without-namespace",
                        test_refused_userns_without_namespace);
        g_test_add_func("/idmap/refused/other-owner", test_refused_other_owner);
        g_test_add_func("/idmap/refused/maps", test_refused_maps);
        g_test_add_func("/idmap/refused/subuid-removed", test_refused_subuid_removed);
        g_test_add_func("/idmap/receiver-cannot-change", test_receiver_cannot_change);
        g_test_add_func("/idmap/list-mounts/user", test_list_mounts);
        g_test_add_func("/idmap/list-mounts/namespace", test_list_mounts_namespace);
        g_test_add_func("/idmap/polkit-detail", test_polkit_detail);

        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
