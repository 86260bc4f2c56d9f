/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mountbuild_locked() on real images and loop devices (docs/security.md, classes 1, 2, 4,
 * 15, 17): every filesystem type mounts with nodev/nosuid/noexec; a receiver that is root
 * in its own user + mount namespace cannot clear any of them (before or after attaching,
 * through remounts, clones or bind mounts); device nodes and setuid/file-capability
 * binaries on the image give nothing; read-only fds give read-only mounts; a device that
 * is already mounted is refused as busy; failures carry the filesystem's own words.
 */
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include "kernel-util.h"
#include "loop.h"
#include "macro.h"
#include "mountbuild.h"
#include "stagens.h"
#include "source.h"

#define HELLO "hello from usermount\n"

static bool populated(const char *fstype) {
        return !streq(fstype, "xfs"); /* mkfs.xfs cannot fill an image from a directory */
}

static bool read_only_filesystem(const char *fstype) {
        return streq(fstype, "squashfs") || streq(fstype, "erofs");
}

/* Builds in a copy of a stage namespace (as usermountd does) when this is set. */
static bool build_in_stage_ns;
/* Mounts the image from its file (erofs, as job_build() does), no loop device. */
static bool build_from_file;

static int build(const char *fstype, bool read_only, bool exec, KuBuild *b) {
        MountOptions o;
        KuBuildSpec spec = {
                .image = ku_image(fstype),
                .image_read_only = read_only,
                .loop_read_only = read_only,
                .fstype = fstype,
                .options = &o,
                .stage_ns = build_in_stage_ns,
                .from_file = build_from_file,
        };
        int fd;

        ku_options(&o, fstype, read_only, exec);
        fd = ku_build(&spec, b);
        if (fd < 0)
                g_error("building a %s mount: %s", fstype, b->error.message);
        return fd;
}

static void assert_flags(int fd, bool read_only) {
        unsigned long want = ST_NOSUID | ST_NODEV | ST_NOEXEC | (read_only ? ST_RDONLY : 0);

        g_assert_cmphex(ku_fd_flags(fd) & want, ==, want);
}

static void assert_hello(int dirfd, const char *path) {
        _cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
        char buf[64] = "";

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(read(fd, buf, sizeof(buf) - 1), ==, strlen(HELLO));
        g_assert_cmpstr(buf, ==, HELLO);
}

/* The per-mount flags; a read-only superblock (squashfs) shows in statvfs, not here. */
static void assert_mountinfo_flags(const char *path, bool read_only) {
        g_autofree char *opts = ku_mountinfo_options(path);
        g_auto(GStrv) v = NULL;

        g_assert_nonnull(opts);
        ku_note("%s: %s", path, opts);
        v = g_strsplit(opts, ",", -1);
        g_assert_true(g_strv_contains((const char *const *) v, "nosuid"));
        g_assert_true(g_strv_contains((const char *const *) v, "nodev"));
        g_assert_true(g_strv_contains((const char *const *) v, "noexec"));
        g_assert_true(g_strv_contains((const char *const *) v, read_only ? "ro" : "rw"));
}

/* A new directory under the test directory, to attach mounts on in this private namespace. */
static char *make_target(const char *name) {
        char *p = g_strdup_printf("%s/%s-XXXXXX", ku_dir(), name);

        g_assert_nonnull(g_mkdtemp_full(p, 0755));
        return p;
}

static void remove_target(const char *p) {
        g_assert_cmpint(umount2(p, MNT_DETACH), ==, 0);
        g_assert_cmpint(rmdir(p), ==, 0);
}

/* (1) Every type: a locked mount with nodev,nosuid,noexec and a mount id. */
static void test_types(const char *fstype) {
        _cleanup_close_ int fd = -EBADF, image_fd = -EBADF;
        g_autofree char *target = NULL;
        g_autofree char *autoclear = NULL;
        SourceProbe probe;
        uint64_t id = 0;
        UmError e = {};
        KuBuild b;

        /* What the daemon does first: probe the caller's fd. */
        image_fd = open(ku_image(fstype), O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(source_probe(image_fd, &probe, &e), ==, 0);
        g_assert_cmpstr(probe.fstype, ==, fstype);

        fd = build(fstype, false, false, &b);
        ku_note("%s: %s, mount id %" G_GUINT64_FORMAT, fstype, b.loop_path, b.mount_id);
        g_assert_true(b.loop_fd_cloexec);
        g_assert_cmpint(b.loop_fd_accmode, ==, O_RDWR);
        g_assert_cmpstr(b.loop_ro, ==, "0");
        assert_flags(fd, read_only_filesystem(fstype));

        g_assert_cmpint(b.id_r, ==, 0);
        g_assert_cmpuint(b.mount_id, !=, 0);
        g_assert_cmpint(mountbuild_mount_id(fd, &id), ==, 0);
        g_assert_cmpuint(id, ==, b.mount_id);

        /* The superblock holds the loop device; autoclear frees it with the mount. */
        g_assert_cmpint(ku_loops_on_test_images(), ==, 1);
        autoclear = ku_loop_attr(b.loop_path, "loop/autoclear");
        g_assert_cmpstr(autoclear, ==, "1");

        /* The staged mount never reached this namespace, nor the host's. */
        g_assert_false(ku_mountinfo_has_path_under(0, ku_dir()));
        g_assert_false(ku_mountinfo_has_path_under(1, ku_dir()));

        if (populated(fstype))
                assert_hello(fd, "hello.txt");
        else {
                struct stat st;

                g_assert_cmpint(fstatat(fd, "", &st, AT_EMPTY_PATH), ==, 0);
                g_assert_true(S_ISDIR(st.st_mode));
        }

        /* An attached copy shows the flags in mountinfo. */
        target = make_target("mnt");
        g_assert_cmpint(move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
        assert_mountinfo_flags(target, false);
        remove_target(target);
}

/* Two mounts (of the same image, on two loop devices) have distinct ids. */
static void test_mount_id(const char *arg) {
        _cleanup_close_ int a = build("ext4", true, false, &(KuBuild) {});
        _cleanup_close_ int b = build("ext4", true, false, &(KuBuild) {});
        uint64_t ia = 0, ib = 0;

        g_assert_cmpint(mountbuild_mount_id(a, &ia), ==, 0);
        g_assert_cmpint(mountbuild_mount_id(b, &ib), ==, 0);
        g_assert_cmpuint(ia, !=, 0);
        g_assert_cmpuint(ib, !=, 0);
        g_assert_cmpuint(ia, !=, ib);
        g_assert_cmpint(mountbuild_mount_id(-1, &ia), ==, -EBADF);
}

/* Options that forgot nodev and nosuid still get them: they are not the policy's to drop. */
static void test_forced_nodev_nosuid(const char *arg) {
        MountOptions o;
        KuBuildSpec spec = { .image = ku_image("ext4"), .fstype = "ext4", .options = &o };
        _cleanup_close_ int fd = -EBADF;
        KuBuild b;

        ku_options(&o, "ext4", false, true);
        o.attr_set = 0;
        fd = ku_build(&spec, &b);
        g_assert_cmpint(fd, >=, 0);
        g_assert_cmphex(ku_fd_flags(fd) & (ST_NOSUID | ST_NODEV | ST_NOEXEC), ==,
                        ST_NOSUID | ST_NODEV);
}

/* ---- (2) the receiver ------------------------------------------------------------- */

typedef struct Receiver {
        int sock;
        const char *fstype;
        bool read_only;
} Receiver;

static const struct {
        uint64_t attr;
        unsigned long ms;
        const char *name;
} lockable[] = {
        { MOUNT_ATTR_NOSUID, MS_NOSUID, "nosuid" },
        { MOUNT_ATTR_NODEV, MS_NODEV, "nodev" },
        { MOUNT_ATTR_NOEXEC, MS_NOEXEC, "noexec" },
        { MOUNT_ATTR_RDONLY, MS_RDONLY, "ro" },
};

static int setattr(int dfd, const char *path, unsigned flags, uint64_t set, uint64_t clr) {
        struct mount_attr a = { .attr_set = set, .attr_clr = clr };

        return mount_setattr(dfd, path, flags, &a, sizeof(a)) < 0 ? -errno : 0;
}

/* Clearing any locked flag, alone or all at once, is EPERM. */
static void assert_cannot_clear(int dfd, const char *path, unsigned flags, bool read_only,
                                const char *what) {
        uint64_t all = 0;

        for (size_t i = 0; i < ELEMENTSOF(lockable); i++) {
                if (lockable[i].attr == MOUNT_ATTR_RDONLY && !read_only)
                        continue;
                g_assert_cmpint(setattr(dfd, path, flags, 0, lockable[i].attr), ==, -EPERM);
                all |= lockable[i].attr;
        }
        g_assert_cmpint(setattr(dfd, path, flags, 0, all), ==, -EPERM);
        ku_note("%s: clearing %s: EPERM", what, read_only ? "nosuid/nodev/noexec/ro" :
                                                           "nosuid/nodev/noexec");
}

/* Flags of a remount that keeps everything but the flag at skip (or all, skip < 0). */
static unsigned long remount_flags(bool read_only, int skip) {
        unsigned long f = MS_REMOUNT | MS_BIND;

        for (int i = 0; i < (int) ELEMENTSOF(lockable); i++)
                if (i != skip && (lockable[i].ms != MS_RDONLY || read_only))
                        f |= lockable[i].ms;
        return f;
}

static void assert_cannot_remount(const char *path, bool read_only) {
        /* The control: a remount that keeps every flag is allowed, so EPERM is the lock. */
        g_assert_cmpint(mount(NULL, path, NULL, remount_flags(read_only, -1), NULL), ==, 0);
        g_assert_cmpint(mount(NULL, path, NULL, MS_REMOUNT | MS_BIND, NULL), ==, -1);
        g_assert_cmpint(errno, ==, EPERM);
        for (int i = 0; i < (int) ELEMENTSOF(lockable); i++) {
                if (lockable[i].ms == MS_RDONLY && !read_only)
                        continue;
                g_assert_cmpint(mount(NULL, path, NULL, remount_flags(read_only, i), NULL), ==, -1);
                g_assert_cmpint(errno, ==, EPERM);
        }
}

/* Setting and clearing an unlocked attribute works: the receiver is privileged enough. */
static void assert_can_change_unlocked(int dfd, const char *path, unsigned flags) {
        g_assert_cmpint(setattr(dfd, path, flags, MOUNT_ATTR_NOSYMFOLLOW, 0), ==, 0);
        g_assert_cmpint(setattr(dfd, path, flags, 0, MOUNT_ATTR_NOSYMFOLLOW), ==, 0);
}

/* (3) nodev and noexec, seen by a process that is root in its namespace. */
static void assert_no_device_no_exec(int dirfd, const char *what) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        g_assert_cmpint(fstatat(dirfd, "mem", &st, 0), ==, 0);
        g_assert_true(S_ISCHR(st.st_mode));
        g_assert_cmpuint(st.st_mode & 0777, ==, 0666);
        fd = openat(dirfd, "mem", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, ==, -1);
        g_assert_cmpint(errno, ==, EACCES);

        g_assert_cmpint(fstatat(dirfd, "suid-grep", &st, 0), ==, 0);
        g_assert_true(st.st_mode & S_ISUID);
        g_assert_cmpint(execveat(dirfd, "suid-grep", (char *const[]) { "grep", NULL },
                                 (char *const[]) { NULL }, 0),
                        ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
        ku_note("%s: open(mem) and exec(suid-grep): EACCES", what);
}

static void receiver(void *data) {
        const Receiver *a = data;
        _cleanup_close_ int fd = -EBADF, clone = -EBADF;
        bool ro = a->read_only;
        KuBuild dummy;

        ku_become_userns_root();
        /* Our own tmpfs to attach on: nothing of the parent's tree is writable to us. */
        g_assert_cmpint(mount("tmpfs", "/tmp", "tmpfs", 0, "mode=0755"), ==, 0);
        fd = ku_recv(a->sock, &dummy, sizeof(dummy));
        g_assert_cmpint(fd, >=, 0);

        /* Before attaching. */
        assert_flags(fd, ro);
        assert_cannot_clear(fd, "", AT_EMPTY_PATH, ro, "detached fd");
        assert_can_change_unlocked(fd, "", AT_EMPTY_PATH);

        /* After attaching, through the path and through the fd. */
        g_assert_cmpint(mkdir("/tmp/t", 0755), ==, 0);
        g_assert_cmpint(move_mount(fd, "", AT_FDCWD, "/tmp/t", MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
        assert_mountinfo_flags("/tmp/t", ro);
        assert_cannot_clear(AT_FDCWD, "/tmp/t", 0, ro, "attached path");
        assert_cannot_clear(fd, "", AT_EMPTY_PATH, ro, "attached fd");
        assert_cannot_clear(AT_FDCWD, "/tmp", AT_RECURSIVE, ro, "recursive from /tmp");
        assert_can_change_unlocked(AT_FDCWD, "/tmp/t", 0);
        assert_cannot_remount("/tmp/t", ro);
        assert_mountinfo_flags("/tmp/t", ro);

        /* A clone keeps every lock, detached and attached. */
        clone = open_tree(AT_FDCWD, "/tmp/t", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        g_assert_cmpint(clone, >=, 0);
        assert_flags(clone, ro);
        assert_cannot_clear(clone, "", AT_EMPTY_PATH, ro, "clone");
        g_assert_cmpint(mkdir("/tmp/c", 0755), ==, 0);
        g_assert_cmpint(move_mount(clone, "", AT_FDCWD, "/tmp/c", MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
        assert_mountinfo_flags("/tmp/c", ro);
        assert_cannot_clear(AT_FDCWD, "/tmp/c", 0, ro, "attached clone");
        assert_cannot_remount("/tmp/c", ro);

        /* So does a bind mount, recursive or not. */
        g_assert_cmpint(mkdir("/tmp/b", 0755), ==, 0);
        g_assert_cmpint(mount("/tmp/t", "/tmp/b", NULL, MS_BIND, NULL), ==, 0);
        assert_mountinfo_flags("/tmp/b", ro);
        assert_cannot_clear(AT_FDCWD, "/tmp/b", 0, ro, "bind mount");
        assert_cannot_remount("/tmp/b", ro);
        g_assert_cmpint(mkdir("/tmp/r", 0755), ==, 0);
        g_assert_cmpint(mount("/tmp/t", "/tmp/r", NULL, MS_BIND | MS_REC, NULL), ==, 0);
        assert_cannot_clear(AT_FDCWD, "/tmp/r", AT_RECURSIVE, ro, "recursive bind mount");

        if (populated(a->fstype)) {
                _cleanup_close_ int dirfd = open("/tmp/b", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                assert_hello(AT_FDCWD, "/tmp/t/hello.txt");
                assert_no_device_no_exec(dirfd, "receiver, bind mount");
        }
        if (ro || read_only_filesystem(a->fstype)) {
                g_assert_cmpint(mkdir("/tmp/t/new", 0755), ==, -1);
                g_assert_cmpint(errno, ==, EROFS);
        }
}

static void run_receiver(const char *fstype, bool read_only) {
        _cleanup_close_ int fd = -EBADF;
        Receiver a = { .fstype = fstype, .read_only = read_only };
        KuBuild b;
        int sv[2];
        pid_t pid;

        fd = build(fstype, read_only, false, &b);
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
        a.sock = sv[1];
        pid = ku_fork(receiver, &a);
        close(sv[1]);
        ku_send(sv[0], &b, sizeof(b), fd);
        close(sv[0]);
        ku_wait_ok(pid);
}

static void test_locked(const char *fstype) {
        run_receiver(fstype, false);
}

/* The same locks when the mount was staged in a copy of the stage namespace. */
static void test_locked_stage_ns(const char *fstype) {
        build_in_stage_ns = true;
        run_receiver(fstype, false);
        run_receiver(fstype, true);
        build_in_stage_ns = false;
}

/* The stage namespace holds its tmpfs and nothing of the host: a process that enters it
 * finds only the stage directory, and no path of the host resolves there. */
static void stage_ns_view(void *data) {
        int ns_fd = *(int *) data;
        g_autoptr(GDir) root = NULL;
        struct stat st;

        g_assert_cmpint(setns(ns_fd, CLONE_NEWNS), ==, 0);
        root = g_dir_open("/", 0, NULL);
        g_assert_nonnull(root);
        g_assert_cmpstr(g_dir_read_name(root), ==, JOB_STAGE_DIR);
        g_assert_null(g_dir_read_name(root));
        g_assert_cmpint(stat("/proc/self", &st), ==, -1);
        g_assert_cmpint(stat("/dev/null", &st), ==, -1);
        g_assert_cmpint(stat("/" JOB_STAGE_DIR, &st), ==, 0);
        g_assert_cmpuint(st.st_mode & 07777, ==, 0700);
}

static void test_stage_ns_empty(const char *arg) {
        _cleanup_close_ int ns_fd = -EBADF;

        g_assert_cmpint(stagens_make(ku_stage_dir(), &ns_fd), ==, 0);
        ku_wait_ok(ku_fork(stage_ns_view, &ns_fd));
}

static void test_locked_read_only(const char *fstype) {
        run_receiver(fstype, true);
}

/* ---- (3) device nodes, setuid and file capabilities --------------------------------- */

static char *run(int dirfd, const char *name, const char *pattern, int *ret_errno) {
        const char *const argv[] = { name, pattern, "/proc/self/status", NULL };

        return ku_run_as_test_user(dirfd, name, argv, ret_errno);
}

/*
 * The same binaries run from the test's own tree (a normal mount) do gain privilege:
 * without this, the checks below could pass for a wrong reason.
 */
static void assert_binaries_work_elsewhere(void) {
        g_autofree char *tree = g_build_filename(ku_dir(), "tree", NULL);
        _cleanup_close_ int dirfd = open(tree, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_autofree char *uid = NULL, *caps = NULL;
        int err = -1;

        g_assert_cmpint(dirfd, >=, 0);
        uid = run(dirfd, "suid-grep", "^Uid:", &err);
        g_assert_cmpint(err, ==, 0);
        g_assert_cmpstr(uid, ==, "Uid:\t65534\t0\t0\t0\n");
        caps = run(dirfd, "caps-grep", "^CapEff:", &err);
        g_assert_cmpint(err, ==, 0);
        g_assert_cmpstr(caps, ==, "CapEff:\t0000000000000002\n");
}

static void test_devices_setuid(const char *fstype) {
        _cleanup_close_ int fd = -EBADF, caps_fd = -EBADF;
        g_autofree char *uid = NULL, *caps = NULL;
        KuBuild b;
        int err = -1;

        assert_binaries_work_elsewhere();

        /* noexec (the default): nothing runs, not even for root; no device opens. */
        fd = build(fstype, false, false, &b);
        assert_no_device_no_exec(fd, "root, detached mount");
        g_free(run(fd, "suid-grep", "^Uid:", &err));
        g_assert_cmpint(err, ==, EACCES);
        fd = safe_close(fd);
        g_assert_cmpint(ku_wait_loops_released(), ==, 0);

        /* exec allowed: binaries run, but setuid and file capabilities give nothing. */
        fd = build(fstype, false, true, &b);
        g_assert_cmphex(ku_fd_flags(fd) & (ST_NOSUID | ST_NODEV | ST_NOEXEC), ==,
                        ST_NOSUID | ST_NODEV);
        g_assert_cmpint(openat(fd, "mem", O_RDONLY | O_CLOEXEC), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);

        uid = run(fd, "suid-grep", "^Uid:", &err);
        g_assert_cmpint(err, ==, 0);
        g_assert_cmpstr(uid, ==, "Uid:\t65534\t65534\t65534\t65534\n");

        caps_fd = openat(fd, "caps-grep", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(caps_fd, >=, 0);
        if (fgetxattr(caps_fd, "security.capability", NULL, 0) <= 0) {
                /* Then there is nothing to prove on this type; say so. */
                ku_note("%s: the image kept no file capability; skipping that check", fstype);
                g_assert_false(streq(fstype, "ext4") || streq(fstype, "squashfs"));
        } else {
                caps = run(fd, "caps-grep", "^CapEff:", &err);
                g_assert_cmpint(err, ==, 0);
                g_assert_cmpstr(caps, ==, "CapEff:\t0000000000000000\n");
        }
        ku_note("%s: setuid-root and cap_dac_override binaries ran unprivileged", fstype);
}

/* ---- (4) read-only ------------------------------------------------------------------- */

static void test_read_only(const char *fstype) {
        _cleanup_close_ int fd = -EBADF;
        g_autofree char *target = NULL;
        KuBuild b;

        fd = build(fstype, true, false, &b);
        g_assert_cmpstr(b.loop_ro, ==, "1");
        g_assert_cmpint(b.loop_fd_accmode, ==, O_RDONLY);
        assert_flags(fd, true);
        g_assert_cmpint(mkdirat(fd, "new", 0755), ==, -1);
        g_assert_cmpint(errno, ==, EROFS);
        target = make_target("mnt");
        g_assert_cmpint(move_mount(fd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
        assert_mountinfo_flags(target, true);
        remove_target(target);
}

/* A read-only fd with a read-write request: the loop device is read-only anyway. */
static void test_read_only_fd_rw_request(const char *fstype) {
        MountOptions o;
        KuBuildSpec spec = {
                .image = ku_image(fstype),
                .image_read_only = true,
                .fstype = fstype,
                .options = &o,
        };
        KuBuild b;
        int fd;

        ku_options(&o, fstype, false, false);
        fd = ku_build(&spec, &b);
        g_assert_cmpstr(b.loop_ro, ==, "1");
        if (fd >= 0) {
                /* The filesystem fell back to read-only by itself: still never writable. */
                ku_note("%s: rw request on a read-only device mounted read-only", fstype);
                g_assert_true(ku_fd_flags(fd) & ST_RDONLY);
                close(fd);
                return;
        }
        ku_note("%s: rw request on a read-only device: %s", fstype, b.error.message);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(b.error.message, "read-only"));
}

/* ---- (6) busy devices ------------------------------------------------------------------ */

static void test_busy(const char *fstype) {
        _cleanup_close_ int image_fd = -EBADF, loop_fd = -EBADF, first = -EBADF, holder = -EBADF;
        _cleanup_free_ char *path = NULL;
        g_autofree char *target = NULL;
        MountOptions o;
        KuBuildSpec spec = { .fstype = fstype, .options = &o };
        UmError e = {};
        KuBuild b;

        image_fd = open(ku_image(fstype), O_RDWR | O_CLOEXEC);
        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, &e), ==, 0);
        ku_options(&o, fstype, false, false);
        spec.source = path;

        /* Mounted by another user's request: the superblock is never shared. */
        first = ku_build(&spec, &b);
        g_assert_cmpint(first, >=, 0);
        g_assert_cmpint(ku_build(&spec, &b), ==, -1);
        ku_note("%s: second mount: %s", fstype, b.error.message);
        g_assert_cmpint(b.r, ==, -EBUSY);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_DEVICE_BUSY);
        g_assert_nonnull(strstr(b.error.message, "already mounted or in use"));
        first = safe_close(first);

        /* Mounted by the host (here: this namespace, the classic way). */
        target = make_target("busy");
        g_assert_cmpint(mount(path, target, fstype, MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL), ==, 0);
        g_assert_cmpint(ku_build(&spec, &b), ==, -1);
        g_assert_cmpint(b.r, ==, -EBUSY);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_DEVICE_BUSY);
        remove_target(target);

        /* Held open exclusively (as dm, md or swap hold their devices). */
        holder = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
        g_assert_cmpint(holder, >=, 0);
        g_assert_cmpint(ku_build(&spec, &b), ==, -1);
        ku_note("%s: held device: %s", fstype, b.error.message);
        g_assert_cmpint(b.r, ==, -EBUSY);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_DEVICE_BUSY);
}

/* ---- failures ------------------------------------------------------------------------- */

static KuBuild build_failure(const char *image, const char *source, const char *fstype,
                             MountOptions *o, const char *stage) {
        KuBuildSpec spec = {
                .image = image,
                .source = source,
                .fstype = fstype,
                .options = o,
                .stage = stage,
        };
        KuBuild b;

        g_assert_cmpint(ku_build(&spec, &b), ==, -1);
        ku_note("%s: %s", fstype, b.error.message);
        g_assert_null(strchr(b.error.message, '\033'));
        return b;
}

static void test_error_wrong_type(const char *arg) {
        MountOptions o;
        KuBuild b;

        ku_options(&o, "xfs", false, false);
        b = build_failure(ku_image("ext4"), NULL, "xfs", &o, NULL);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(b.error.message, "xfs"));
}

static void test_error_unknown_type(const char *arg) {
        MountOptions o;
        KuBuild b;

        ku_options(&o, "nosuchfs", false, false);
        b = build_failure(ku_image("ext4"), NULL, "usermountnosuchfs", &o, NULL);
        g_assert_cmpint(b.r, ==, -ENODEV);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(b.error.message, "does not support the usermountnosuchfs"));
}

static void test_error_bad_option(const char *arg) {
        MountOption items[] = { { .key = "nosuchoption" } };
        MountOption hostile[] = { { .key = "bad\033[31mkey", .value = "x" } };
        MountOptions o = {
                .items = items,
                .n_items = 1,
                .attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
        };
        KuBuild b;

        b = build_failure(ku_image("ext4"), NULL, "ext4", &o, NULL);
        g_assert_cmpint(b.r, ==, -EINVAL);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
        g_assert_nonnull(strstr(b.error.message, "\"nosuchoption\""));
        /* The filesystem's own words, from the fs context log. */
        g_assert_nonnull(strstr(b.error.message, "Unknown parameter"));

        o.items = hostile;
        b = build_failure(ku_image("ext4"), NULL, "ext4", &o, NULL);
        g_assert_nonnull(strstr(b.error.message, "bad\\x1b[31mkey"));
}

static void test_error_not_block_device(const char *arg) {
        MountOptions o;
        KuBuild b;

        ku_options(&o, "ext4", false, false);
        b = build_failure(NULL, ku_image("ext4"), "ext4", &o, NULL);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_FAILED);
}

static void test_error_no_stage(const char *arg) {
        g_autofree char *missing = g_build_filename(ku_dir(), "missing", NULL);
        MountOptions o;
        KuBuild b;

        ku_options(&o, "ext4", false, false);
        b = build_failure(ku_image("ext4"), NULL, "ext4", &o, missing);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(b.error.message, "stage"));
        g_assert_false(g_file_test(missing, G_FILE_TEST_EXISTS));
}

static void test_error_bad_attributes(const char *arg) {
        MountOptions o;
        KuBuild b;

        ku_options(&o, "ext4", false, false);
        o.attr_set |= MOUNT_ATTR_IDMAP;
        b = build_failure(ku_image("ext4"), NULL, "ext4", &o, NULL);
        g_assert_cmpint(b.r, ==, -EINVAL);
        g_assert_cmpint(b.error.kind, ==, UM_ERROR_KIND_INVALID_ARGUMENT);
}

/* ---- erofs from its file --------------------------------------------------------- */

/* Loop devices bound to anything, from sysfs: a build from a file must add none. */
static int count_bound_loops(void) {
        g_autoptr(GDir) d = g_dir_open("/sys/block", 0, NULL);
        const char *n;
        int k = 0;

        while (d && (n = g_dir_read_name(d))) {
                g_autofree char *p = g_strdup_printf("/sys/block/%s/loop/backing_file", n);

                if (g_str_has_prefix(n, "loop") && g_file_test(p, G_FILE_TEST_EXISTS))
                        k++;
        }
        return k;
}

/*
 * An erofs image mounts from its file (source /proc/self/fd/N of the image fd), with no
 * loop device at any point, and its flags are locked as usual (the receiver's checks).
 * The mount outlives the image fd: the kernel opened the file itself.
 */
static void test_from_file(const char *fstype) {
        _cleanup_close_ int fd = -EBADF;
        int loops = count_bound_loops(), test_loops = ku_loops_on_test_images();
        KuBuild b;

        build_from_file = true;
        fd = build(fstype, true, false, &b);
        g_assert_cmpint(count_bound_loops(), ==, loops);
        g_assert_cmpint(ku_loops_on_test_images(), ==, test_loops);
        g_assert_cmpstr(b.loop_path, ==, "");
        assert_flags(fd, true);
        assert_hello(fd, "hello.txt");
        run_receiver(fstype, true);
        build_in_stage_ns = true;
        run_receiver(fstype, true);
        build_in_stage_ns = false;
        build_from_file = false;
        g_assert_cmpint(count_bound_loops(), ==, loops);
}

static KuBuild build_from_file_failure(const char *image, const char *fstype) {
        MountOptions o;
        KuBuild b;
        KuBuildSpec spec = { .image = image, .image_read_only = true, .fstype = fstype,
                             .options = &o, .from_file = true };

        ku_options(&o, fstype, true, false);
        g_assert_cmpint(ku_build(&spec, &b), <, 0);
        ku_note("%s: %d %s", image, b.r, b.error.message);
        return b;
}

/*
 * Where the kernel cannot mount a file, -ENOTBLK says which case it is (and jobs.c falls
 * back to a loop device): a driver that looks the path up as a block device and says so
 * (ext4 here; erofs without CONFIG_EROFS_FS_BACKED_BY_FILE does the same) means the
 * kernel cannot at all; erofs on a tmpfs file, which it cannot read page by page, means
 * not from this file.
 */
static void test_from_file_refused(const char *arg) {
        g_autofree char *shm = g_strdup_printf("/dev/shm/um-kernel-test-%d.erofs", getpid());
        g_autofree char *contents = NULL;
        gsize size = 0;
        KuBuild b;

        b = build_from_file_failure(ku_image("ext4"), "ext4");
        g_assert_cmpint(b.r, ==, -ENOTBLK);
        g_assert_true(b.file_unsupported);
        g_assert_nonnull(strstr(b.error.message, "does not mount ext4 images from files"));

        g_assert_true(g_file_get_contents(ku_image("erofs"), &contents, &size, NULL));
        g_assert_true(g_file_set_contents(shm, contents, (gssize) size, NULL));
        b = build_from_file_failure(shm, "erofs");
        g_assert_cmpint(unlink(shm), ==, 0);
        g_assert_cmpint(b.r, ==, -ENOTBLK);
        g_assert_false(b.file_unsupported);
        g_assert_nonnull(strstr(b.error.message, "cannot be read from this file"));
}

static void add_per_type(const char *prefix, void (*body)(const char *), const char *const *types) {
        for (const char *const *t = types; *t; t++) {
                g_autofree char *path = g_strdup_printf("%s/%s", prefix, *t);

                ku_add(path, body, *t, *t);
        }
}

int main(int argc, char **argv) {
        static const char *const populated_types[] = { "ext4", "btrfs", "squashfs", "erofs", NULL };
        static const char *const writable_types[] = { "ext4", "xfs", "btrfs", NULL };
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        add_per_type("/mountbuild/types", test_types, ku_fstypes);
        ku_add("/mountbuild/mount-id", test_mount_id, NULL, "ext4");
        ku_add("/mountbuild/stage-ns/locked", test_locked_stage_ns, "ext4", "ext4");
        ku_add("/mountbuild/stage-ns/empty", test_stage_ns_empty, NULL, NULL);
        ku_add("/mountbuild/forced-nodev-nosuid", test_forced_nodev_nosuid, NULL, "ext4");
        add_per_type("/mountbuild/locked", test_locked, ku_fstypes);
        add_per_type("/mountbuild/locked-read-only", test_locked_read_only, writable_types);
        add_per_type("/mountbuild/devices-setuid", test_devices_setuid, populated_types);
        add_per_type("/mountbuild/read-only", test_read_only, writable_types);
        add_per_type("/mountbuild/read-only-fd-rw-request", test_read_only_fd_rw_request,
                     writable_types);
        add_per_type("/mountbuild/busy", test_busy, writable_types);
        ku_add("/mountbuild/error/wrong-type", test_error_wrong_type, NULL, "ext4");
        ku_add("/mountbuild/error/unknown-type", test_error_unknown_type, NULL, "ext4");
        ku_add("/mountbuild/error/bad-option", test_error_bad_option, NULL, "ext4");
        ku_add("/mountbuild/error/not-block-device", test_error_not_block_device, NULL, "ext4");
        ku_add("/mountbuild/error/no-stage", test_error_no_stage, NULL, "ext4");
        ku_add("/mountbuild/error/bad-attributes", test_error_bad_attributes, NULL, "ext4");
        ku_add("/mountbuild/from-file/erofs", test_from_file, "erofs", "erofs");
        ku_add("/mountbuild/from-file/refused", test_from_file_refused, NULL, "erofs");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
