/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Kernel-level tests of fusedriver.c: each of the five userspace drivers, on an image made
 * by its real mkfs, started by fusedriver_mount() on a FUSE mount this process made, in
 * the sandbox: the data, writes that reach the image, the mount's locked-down attributes,
 * the driver's namespaces, ids and capabilities, its end when the mount goes or when it is
 * killed, a corrupted image, a driver that never answers, and a read-only source. Mounts
 * are attached only in the private mount namespace each test runs in.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fusedriver.h"
#include "kernel-compat.h"
#include "kernel-util.h"
#include "macro.h"
#include "time-util.h"

#define DRIVER_UID 61999
#define TIMEOUT_USEC (20 * G_USEC_PER_SEC)
#define CONTENT "hello from the image\n"

static char shim_path[4096];

typedef struct FuseImage {
        const char *fstype;
        const char *tool;    /* mkfs program */
        bool writable;
} FuseImage;

static const FuseImage fuse_images[] = {
        { "ext4", "mkfs.ext4", true },   { "vfat", "mkfs.vfat", true },
        { "exfat", "mkfs.exfat", true }, { "ntfs", "mkntfs", true },
        { "squashfs", "mksquashfs", false },
};

static char *image_path(const char *fstype) {
        return g_strdup_printf("%s/fuse-%s.img", ku_dir(), fstype);
}

static char *find_tool(const char *name) {
        const char *dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                char *p = g_strdup_printf("%s/%s", dirs[i], name);

                if (access(p, X_OK) == 0)
                        return p;
                g_free(p);
        }
        return NULL;
}

static void run(const char *const *argv) {
        g_autoptr(GError) err = NULL;
        g_autofree char *out = NULL;
        int status = 0;

        g_assert_true(g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                                   NULL, &out, NULL, &status, &err));
        g_assert_no_error(err);
        g_assert_cmpint(status, ==, 0);
}

/* ext4 holds the 64 MiB file of the throughput test; ntfs-3g takes 128 KiB writes only on
 * a volume of 4 GiB or more (the settings test); sparse. */
static uint64_t image_size(const char *fstype) {
        if (streq(fstype, "ext4"))
                return (uint64_t) 128 << 20;
        if (streq(fstype, "ntfs"))
                return (uint64_t) 5 << 30;
        return (uint64_t) 64 << 20;
}

/* Every image holds "file" with CONTENT; squashfs and ext4 from a tree, the others are
 * written by the driver itself in test_basic first. */
static void make_fuse_images(void) {
        g_autofree char *tree = g_strdup_printf("%s/fuse-tree", ku_dir());
        g_autofree char *file = g_strdup_printf("%s/file", tree);

        g_autofree char *pub = g_strdup_printf("%s/pub", tree);

        g_assert_cmpint(mkdir(tree, 0755), ==, 0);
        g_assert_true(g_file_set_contents(file, CONTENT, -1, NULL));
        /* A directory everyone may create in, as /tmp: who owns what a user creates. */
        g_assert_cmpint(mkdir(pub, 0755), ==, 0);
        g_assert_cmpint(chmod(pub, 01777), ==, 0);
        for (size_t i = 0; i < ELEMENTSOF(fuse_images); i++) {
                const FuseImage *f = &fuse_images[i];
                g_autofree char *path = image_path(f->fstype);
                g_autofree char *tool = find_tool(f->tool);
                int fd;

                if (!tool)
                        continue;
                if (!streq(f->fstype, "squashfs")) {
                        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
                        g_assert_cmpint(fd, >=, 0);
                        g_assert_cmpint(ftruncate(fd, (off_t) image_size(f->fstype)), ==, 0);
                        close(fd);
                }
                if (streq(f->fstype, "ext4"))
                        run((const char *const[]) { tool, "-q", "-F", "-d", tree, path, NULL });
                else if (streq(f->fstype, "squashfs"))
                        run((const char *const[]) { tool, tree, path, "-quiet", "-noappend",
                                                    "-no-progress", NULL });
                else if (streq(f->fstype, "ntfs"))
                        run((const char *const[]) { tool, "-q", "-F", "-f", path, NULL });
                else
                        run((const char *const[]) { tool, path, NULL });
        }
        g_assert_cmpint(unlink(file), ==, 0);
        g_assert_cmpint(rmdir(pub), ==, 0);
        g_assert_cmpint(rmdir(tree), ==, 0);
}

/* The driver of fstype and its image, or NULL with the test skipped and the reason. */
static const FuseDriver *driver_or_skip(const char *fstype, char **ret_image) {
        const FuseDriver *d = fusedriver_find(fstype);
        g_autofree char *path = image_path(fstype);

        if (!d) {
                g_test_skip_printf("no FUSE driver for %s is installed", fstype);
                return NULL;
        }
        if (access(path, F_OK) < 0) {
                g_test_skip_printf("no mkfs for %s is installed", fstype);
                return NULL;
        }
        *ret_image = g_steal_pointer(&path);
        return d;
}

typedef struct Mounted {
        int mount_fd;
        pid_t pid;
        int pidfd;
        uint64_t start_time;
        uint64_t usec;      /* fusedriver_mount()'s wall time */
} Mounted;

static FuseDriverSpec spec_for(const FuseDriver *d, const char *fstype, int source_fd,
                               bool read_only) {
        return (FuseDriverSpec) {
                .driver = d,
                .fstype = fstype,
                .source_fd = source_fd,
                .claim_fd = -EBADF,
                .uid_lock_fd = -EBADF,
                .read_only = read_only,
                .attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC |
                            (read_only ? MOUNT_ATTR_RDONLY : 0),
                .caller_uid = 0,
                .caller_gid = 0,
                .driver_uid = DRIVER_UID,
                .timeout_usec = TIMEOUT_USEC,
                .shim_path = shim_path,
        };
}

static int do_mount(const FuseDriverSpec *spec, Mounted *m, UmError *e) {
        uint64_t t = now_usec(CLOCK_MONOTONIC);
        int r = fusedriver_mount(spec, &m->mount_fd, &m->pid, &m->pidfd, &m->start_time, NULL,
                                 e);

        m->usec = now_usec(CLOCK_MONOTONIC) - t;
        return r;
}

static void mount_ok(const FuseDriverSpec *spec, Mounted *m) {
        UmError e = {};
        int r = do_mount(spec, m, &e);

        if (r < 0)
                g_error("fusedriver_mount(%s): %s", spec->fstype, e.message);
        ku_note("%s: fusedriver_mount() took %.1f ms", spec->fstype, m->usec / 1000.0);
}

/* Waits until the driver exited by itself (bounded) and reaps it. */
static void await_driver_exit(Mounted *m, int timeout_ms) {
        struct pollfd p = { .fd = m->pidfd, .events = POLLIN };
        siginfo_t si = {};

        g_assert_cmpint(poll(&p, 1, timeout_ms), ==, 1);
        g_assert_cmpint(waitid((idtype_t) P_PIDFD, (id_t) m->pidfd, &si, WEXITED), ==, 0);
        close(m->pidfd);
        m->pidfd = -1;
}

/* Closes the mount (the superblock goes with the last reference): the driver exits by
 * itself, with a status, not killed by SIGPIPE for what it writes to the output pipe
 * fusedriver_mount() closed. */
static void unmount_and_await(Mounted *m) {
        struct pollfd p = { .fd = m->pidfd, .events = POLLIN };
        siginfo_t si = {};

        close(m->mount_fd);
        g_assert_cmpint(poll(&p, 1, 10000), ==, 1);
        g_assert_cmpint(waitid((idtype_t) P_PIDFD, (id_t) m->pidfd, &si, WEXITED), ==, 0);
        g_assert_cmpint(si.si_code, ==, CLD_EXITED);
        close(m->pidfd);
        m->pidfd = -1;
}

static char *read_at(int dir_fd, const char *name) {
        int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        char buf[256];
        ssize_t n;

        if (fd < 0)
                return NULL;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        return n < 0 ? NULL : g_strndup(buf, (gsize) n);
}

static void write_at(int dir_fd, const char *name, const char *text) {
        int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t) strlen(text));
        g_assert_cmpint(fsync(fd), ==, 0);
        g_assert_cmpint(close(fd), ==, 0);
}

static bool has_opt(const char *opts, const char *opt) {
        g_auto(GStrv) l = g_strsplit(opts, ",", -1);

        return g_strv_contains((const char *const *) l, opt);
}

/* Attaches m at a fresh directory of this (private) namespace and checks its options. */
static void check_attributes(const Mounted *m, bool read_only) {
        g_autofree char *dir = g_dir_make_tmp("fusedriver-XXXXXX", NULL);
        g_autofree char *opts = NULL;

        g_assert_nonnull(dir);
        g_assert_cmpint(move_mount(m->mount_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH), ==,
                        0);
        opts = ku_mountinfo_options(dir);
        g_assert_nonnull(opts);
        g_assert_true(has_opt(opts, "nodev"));
        g_assert_true(has_opt(opts, "nosuid"));
        g_assert_true(has_opt(opts, "noexec"));
        g_assert_true(has_opt(opts, read_only ? "ro" : "rw"));
        g_assert_cmpint(umount2(dir, MNT_DETACH), ==, 0);
        g_assert_cmpint(rmdir(dir), ==, 0);
}

static char *proc_status_field(pid_t pid, const char *field) {
        g_autofree char *path = g_strdup_printf("/proc/%d/status", (int) pid);
        g_autofree char *text = NULL;
        g_autofree char *key = g_strdup_printf("\n%s:", field);
        const char *p, *end;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        p = strstr(text, key);
        g_assert_nonnull(p);
        p += strlen(key);
        end = strchr(p, '\n');
        return g_strstrip(g_strndup(p, (gsize) (end - p)));
}

static void assert_other_ns(pid_t pid, const char *ns) {
        g_autofree char *mine = g_strdup_printf("/proc/self/ns/%s", ns);
        g_autofree char *its = g_strdup_printf("/proc/%d/ns/%s", (int) pid, ns);
        struct stat a, b;

        g_assert_cmpint(stat(mine, &a), ==, 0);
        g_assert_cmpint(stat(its, &b), ==, 0);
        g_assert_true(a.st_ino != b.st_ino);
}

/* The driver runs unprivileged, alone in its namespaces. */
static void check_driver_process(const Mounted *m) {
        g_autofree char *uid = proc_status_field(m->pid, "Uid");
        g_autofree char *gid = proc_status_field(m->pid, "Gid");
        g_autofree char *groups = proc_status_field(m->pid, "Groups");
        g_autofree char *peak = proc_status_field(m->pid, "VmPeak");
        g_autofree char *expect = g_strdup_printf("%u\t%u\t%u\t%u", DRIVER_UID, DRIVER_UID,
                                                  DRIVER_UID, DRIVER_UID);
        const char *caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };

        g_assert_cmpstr(uid, ==, expect);
        g_assert_cmpstr(gid, ==, expect);
        g_assert_cmpstr(groups, ==, "");
        for (size_t i = 0; i < ELEMENTSOF(caps); i++) {
                g_autofree char *c = proc_status_field(m->pid, caps[i]);

                g_assert_cmpstr(c, ==, "0000000000000000");
        }
        g_autofree char *nnp = proc_status_field(m->pid, "NoNewPrivs");
        g_autofree char *sec = proc_status_field(m->pid, "Seccomp");
        g_assert_cmpstr(nnp, ==, "1");
        g_assert_cmpstr(sec, ==, "2");
        assert_other_ns(m->pid, "pid");
        assert_other_ns(m->pid, "mnt");
        assert_other_ns(m->pid, "net");
        assert_other_ns(m->pid, "ipc");
        ku_note("driver VmPeak %s", peak);
}

/* The fds the driver holds: stdio, the connection and the source, nothing else. */
static void check_driver_fds(const Mounted *m) {
        g_autofree char *dir = g_strdup_printf("/proc/%d/fd", (int) m->pid);
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        g_autofree char *conn = g_strdup_printf("/proc/%d/fd/4", (int) m->pid);
        g_autofree char *target = NULL;
        const char *name;
        bool seen[6] = {};

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d))) {
                int n = atoi(name);

                if (n >= 0 && n < 6) {
                        seen[n] = true;
                        continue;
                }
                /* A driver may hold more dups of them (the shim's answers to its opens). */
                g_autofree char *p = g_strdup_printf("%s/%s", dir, name);
                g_autofree char *t = g_file_read_link(p, NULL);
                g_assert_nonnull(t);
                g_assert_true(streq(t, "/dev/fuse") || g_str_has_suffix(t, ".img") ||
                              streq(t, "/dev/null"));
        }
        for (int i = 0; i < 6; i++)
                if (i != 3)
                        g_assert_true(seen[i]);
        target = g_file_read_link(conn, NULL);
        g_assert_cmpstr(target, ==, "/dev/fuse");
}

static Mounted mount_image(const FuseDriver *d, const char *fstype, const char *image,
                           bool read_only) {
        int fd = open(image, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        FuseDriverSpec spec = spec_for(d, fstype, fd, read_only);
        Mounted m = {};

        g_assert_cmpint(fd, >=, 0);
        mount_ok(&spec, &m);
        close(fd);
        return m;
}

/* Data, writes, attributes, process; the mount going ends the driver. */
static void test_basic(const char *fstype) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip(fstype, &image);
        bool writable;
        Mounted m;

        if (!d)
                return;
        writable = d->writable;
        if (writable) {
                m = mount_image(d, fstype, image, false);
                check_driver_process(&m);
                check_driver_fds(&m);
                if (!streq(fstype, "ext4"))
                        write_at(m.mount_fd, "file", CONTENT);
                write_at(m.mount_fd, "written", "written through " CONTENT);
                unmount_and_await(&m);
        }
        m = mount_image(d, fstype, image, true);
        if (!writable) {
                check_driver_process(&m);
                check_driver_fds(&m);
        }
        g_autofree char *content = read_at(m.mount_fd, "file");
        g_assert_cmpstr(content, ==, CONTENT);
        if (writable) {
                g_autofree char *w = read_at(m.mount_fd, "written");
                g_assert_cmpstr(w, ==, "written through " CONTENT);
        }
        /* Read-only all the way: the mount and the driver refuse writes. */
        g_assert_cmpint(openat(m.mount_fd, "new", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), ==, -1);
        g_assert_cmpint(errno, ==, EROFS);
        check_attributes(&m, true);
        /* check_attributes() attached and detached it: the superblock goes with the fd. */
        unmount_and_await(&m);
}

/* A read-write mount shows rw,nodev,nosuid,noexec. */
static void test_rw_attributes(const char *fstype) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip(fstype, &image);
        Mounted m;

        if (!d)
                return;
        m = mount_image(d, fstype, image, false);
        check_attributes(&m, false);
        unmount_and_await(&m);
}

typedef struct IdsCheck {
        int mount_fd;
        bool ownerless;
        bool writable;
} IdsCheck;

/* As the caller (KU_TEST_UID): what ids the files show, and who owns a created file. */
static void ids_as_caller(void *data) {
        const IdsCheck *c = data;
        struct stat st;
        int fd;

        g_assert_cmpint(setgroups(0, NULL), ==, 0);
        g_assert_cmpint(setresgid(KU_TEST_GID, KU_TEST_GID, KU_TEST_GID), ==, 0);
        g_assert_cmpint(setresuid(KU_TEST_UID, KU_TEST_UID, KU_TEST_UID), ==, 0);
        g_assert_cmpint(fstat(c->mount_fd, &st), ==, 0); /* the root directory */
        fd = openat(c->mount_fd, "mine", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (c->ownerless) {
                /* uid=/gid=: everything is the caller's, what it creates too. */
                g_assert_cmpuint(st.st_uid, ==, KU_TEST_UID);
                g_assert_cmpuint(st.st_gid, ==, KU_TEST_GID);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(fstat(fd, &st), ==, 0);
                g_assert_cmpuint(st.st_uid, ==, KU_TEST_UID);
                close(fd);
                g_assert_cmpint(unlinkat(c->mount_fd, "mine", 0), ==, 0);
        } else {
                /* The ids on disk; the root directory is root's, 0755: no entry. */
                g_assert_cmpuint(st.st_uid, ==, 0);
                g_assert_cmpint(fd, ==, -1);
                g_assert_true(errno == EACCES || errno == EROFS);
                if (!c->writable)
                        return;
                /* Where the modes let it: a file of the creating process's ids. */
                fd = openat(c->mount_fd, "pub/mine", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                            0644);
                g_assert_cmpint(fd, >=, 0);
                g_assert_cmpint(fstat(fd, &st), ==, 0);
                g_assert_cmpuint(st.st_uid, ==, KU_TEST_UID);
                g_assert_cmpuint(st.st_gid, ==, KU_TEST_GID);
                close(fd);
                g_assert_cmpint(unlinkat(c->mount_fd, "pub/mine", 0), ==, 0);
        }
}

/* The mount belongs to the caller alone (no allow_other); ids as the table says. */
static void test_ids(const char *fstype) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip(fstype, &image);
        struct stat st;
        IdsCheck c;
        Mounted m = {};
        int fd;

        if (!d)
                return;
        fd = open(image, (d->writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, fstype, fd, !d->writable);
        spec.caller_uid = KU_TEST_UID;
        spec.caller_gid = KU_TEST_GID;
        spec.attr_set &= ~(uint64_t) (d->writable ? MOUNT_ATTR_RDONLY : 0);
        mount_ok(&spec, &m);
        close(fd);
        /* Not even root gets in. */
        g_assert_cmpint(fstatat(m.mount_fd, "", &st, AT_EMPTY_PATH | AT_STATX_FORCE_SYNC), ==, -1);
        g_assert_cmpint(errno, ==, EACCES);
        c = (IdsCheck) { .mount_fd = m.mount_fd, .ownerless = d->ownerless, .writable = d->writable };
        ku_wait_ok(ku_fork(ids_as_caller, &c));
        unmount_and_await(&m);
}

typedef struct WorkerArgs {
        const char *image;
        int sock;
} WorkerArgs;

/* A stand-in for the daemon's worker: starts the driver, hands over the mount and its
 * pid, exits. */
static void start_in_worker(void *data) {
        const WorkerArgs *a = data;
        const FuseDriver *d = fusedriver_find("ext4");
        int fd = open(a->image, O_RDONLY | O_CLOEXEC);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, true);
        Mounted m = {};

        g_assert_cmpint(fd, >=, 0);
        mount_ok(&spec, &m);
        ku_send(a->sock, &m.pid, sizeof(m.pid), m.mount_fd);
        /* Exits with the driver still its child: it is reparented, not killed. */
}

/* The driver outlives the worker that started it and still ends with its mount. */
static void test_outlives_worker(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        g_autofree char *content = NULL;
        struct pollfd p;
        int sv[2], mount_fd, pidfd;
        pid_t pid = 0;

        if (!d)
                return;
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
        WorkerArgs a = { .image = image, .sock = sv[1] };
        ku_wait_ok(ku_fork(start_in_worker, &a));
        close(sv[1]);
        mount_fd = ku_recv(sv[0], &pid, sizeof(pid));
        close(sv[0]);
        g_assert_cmpint(mount_fd, >=, 0);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        g_assert_cmpint(pidfd, >=, 0);
        content = read_at(mount_fd, "file");
        g_assert_cmpstr(content, ==, CONTENT);
        close(mount_fd);
        p = (struct pollfd) { .fd = pidfd, .events = POLLIN };
        g_assert_cmpint(poll(&p, 1, 10000), ==, 1);
        close(pidfd);
        /* Reaped by the init it was reparented to: until then its uid is not free for
         * the next test's driver (the kernel counts a zombie as a task of its uid). */
        for (int i = 0; i < 5000 && kill(pid, 0) == 0; i++)
                g_usleep(1000);
        g_assert_cmpint(kill(pid, 0), ==, -1);
}

/* SIGKILL of the driver: the mount answers ENOTCONN, and nothing is left. */
static void test_killed(const char *fstype) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip(fstype, &image);
        struct stat st;
        Mounted m;

        if (!d)
                return;
        m = mount_image(d, fstype, image, true);
        g_assert_cmpint(syscall(SYS_pidfd_send_signal, m.pidfd, SIGKILL, NULL, 0), ==, 0);
        await_driver_exit(&m, 10000);
        g_assert_cmpint(fstatat(m.mount_fd, "file", &st, 0), ==, -1);
        g_assert_cmpint(errno, ==, ENOTCONN);
        close(m.mount_fd);
}

/* How many fds above 2 the process holds. */
static unsigned fds_above_stdio(pid_t pid) {
        g_autofree char *dir = g_strdup_printf("/proc/%d/fd", (int) pid);
        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
        const char *name;
        unsigned n = 0;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d)))
                n += atoi(name) > 2;
        return n;
}

/* The soft and hard "Max processes" of /proc/PID/limits. */
static void nproc_limits(pid_t pid, char **ret_soft, char **ret_hard) {
        g_autofree char *path = g_strdup_printf("/proc/%d/limits", (int) pid);
        g_autofree char *text = NULL;
        g_auto(GStrv) fields = NULL;
        const char *line;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        line = strstr(text, "Max processes");
        g_assert_nonnull(line);
        fields = g_strsplit_set(line + strlen("Max processes"), " \n", -1);
        *ret_soft = *ret_hard = NULL;
        for (char **f = fields; *f; f++) {
                if (!**f)
                        continue;
                if (!*ret_soft)
                        *ret_soft = g_strdup(*f);
                else if (!*ret_hard) {
                        *ret_hard = g_strdup(*f);
                        break;
                }
        }
}

/*
 * A sandbox made ahead (fusedriver_stub_start()) becomes the driver: the same pid, the
 * same sandbox as one made at the start, and its threads' limit raised again by the shim.
 * A stub that died before the start is replaced by a sandbox made then; one never used
 * exits at the end of its socket.
 */
static void test_stub(const char *arg) {
        g_autofree char *image = NULL;
        g_autofree char *soft = NULL, *hard = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        SandboxStub stub = SANDBOX_STUB_NULL;
        struct pollfd p;
        siginfo_t si = {};
        pid_t stub_pid;
        Mounted m = {};
        int fd;

        if (!d)
                return;
        fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, true);

        g_assert_cmpint(fusedriver_stub_start(DRIVER_UID, &stub), ==, 0);
        stub_pid = stub.pid;
        g_assert_true(sandbox_stub_alive(&stub));
        /* It holds none of its maker's fds (fd is one), only its end of the socket. */
        for (int i = 0; i < 2000 && fds_above_stdio(stub_pid) != 1; i++)
                g_usleep(1000);
        g_assert_cmpuint(fds_above_stdio(stub_pid), ==, 1);
        spec.stub = &stub;
        mount_ok(&spec, &m);
        g_assert_cmpint(m.pid, ==, stub_pid);
        g_assert_cmpint(stub.pidfd, <, 0);
        g_assert_cmpint(stub.order_fd, <, 0);
        check_driver_process(&m);
        check_driver_fds(&m);
        nproc_limits(m.pid, &soft, &hard);
        g_assert_cmpstr(soft, ==, hard);
        g_autofree char *content = read_at(m.mount_fd, "file");
        g_assert_cmpstr(content, ==, CONTENT);
        unmount_and_await(&m);

        /* Killed before the start: a sandbox of the start's making, the stub reaped. */
        g_assert_cmpint(fusedriver_stub_start(DRIVER_UID, &stub), ==, 0);
        stub_pid = stub.pid;
        g_assert_cmpint(syscall(SYS_pidfd_send_signal, stub.pidfd, SIGKILL, NULL, 0), ==, 0);
        p = (struct pollfd) { .fd = stub.pidfd, .events = POLLIN };
        g_assert_cmpint(poll(&p, 1, 10000), ==, 1);
        g_assert_false(sandbox_stub_alive(&stub));
        mount_ok(&spec, &m);
        g_assert_cmpint(m.pid, !=, stub_pid);
        g_assert_cmpint(stub.pidfd, <, 0);
        g_assert_cmpint(kill(stub_pid, 0), ==, -1);
        unmount_and_await(&m);

        /* Never used: the end of its socket ends it, with status 0. */
        g_assert_cmpint(fusedriver_stub_start(DRIVER_UID, &stub), ==, 0);
        stub.order_fd = safe_close(stub.order_fd);
        g_assert_cmpint(waitid((idtype_t) P_PIDFD, (id_t) stub.pidfd, &si, WEXITED), ==, 0);
        g_assert_cmpint(si.si_code, ==, CLD_EXITED);
        g_assert_cmpint(si.si_status, ==, 0);
        stub.pidfd = safe_close(stub.pidfd);
        close(fd);
}

/*
 * A uid another process runs as: the kernel refuses the driver's exec (nproc_exclusive),
 * -EUSERS with a sentence, nothing left; with a stub too. Free again, it starts.
 */
static void test_uid_in_use(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        SandboxStub stub = SANDBOX_STUB_NULL;
        Mounted m = {};
        UmError e = {};
        pid_t holder;
        int fd;

        if (!d)
                return;
        fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, true);

        holder = ku_occupy_uid(DRIVER_UID);

        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EUSERS);
        g_assert_nonnull(strstr(e.message, "is in use by another process"));
        e = (UmError) {};
        g_assert_cmpint(fusedriver_stub_start(DRIVER_UID, &stub), ==, 0);
        spec.stub = &stub;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EUSERS);
        g_assert_cmpint(stub.pidfd, <, 0);
        spec.stub = NULL;

        ku_occupy_end(holder);
        mount_ok(&spec, &m);
        unmount_and_await(&m);
        close(fd);
}

/* A read-only source fd cannot be mounted read-write; the sentence says why. */
static void test_read_only_source(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        int fd;

        if (!d)
                return;
        fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, false);
        Mounted m = {};
        UmError e = {};

        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EROFS);
        g_assert_nonnull(strstr(e.message, "read-only"));
        close(fd);
}

/* Random bytes over the superblock and the inode tables: the driver fails, we do not. */
static void test_corrupted(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        g_autofree char *copy = g_strdup_printf("%s/fuse-corrupt.img", ku_dir());
        g_autofree char *data = NULL;
        gsize len;
        UmError e = {};
        Mounted m = {};
        int fd, r;

        if (!d)
                return;
        g_assert_true(g_file_get_contents(image, &data, &len, NULL));
        /* Superblock (1024), group descriptors and the first inode tables: 1 KiB .. 1 MiB. */
        for (gsize i = 1024; i < MIN(len, (gsize) 1 << 20); i++)
                data[i] = (char) g_random_int();
        g_assert_true(g_file_set_contents(copy, data, (gssize) len, NULL));
        fd = open(copy, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, true);
        r = do_mount(&spec, &m, &e);
        close(fd);
        g_assert_cmpint(unlink(copy), ==, 0);
        g_assert_cmpint(r, ==, -EIO);
        ku_note("corrupted ext4: %s", e.message);
        g_assert_nonnull(strstr(e.message, "exited while starting (exit status 2): /dev/fd/5: "
                                           "Bad magic number in super-block."));
}

/* Random bytes over the bitmaps and inode tables behind an intact superblock: the driver
 * starts, then fails or serves errors; reading never hangs and nothing else is hurt. */
static void test_corrupted_inodes(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        g_autofree char *copy = g_strdup_printf("%s/fuse-corrupt.img", ku_dir());
        g_autofree char *data = NULL, *content = NULL;
        gsize len;
        UmError e = {};
        Mounted m = {};
        struct pollfd p;
        int fd, r;

        if (!d)
                return;
        g_assert_true(g_file_get_contents(image, &data, &len, NULL));
        for (gsize i = 64 << 10; i < MIN(len, (gsize) 2 << 20); i++)
                data[i] = (char) g_random_int();
        g_assert_true(g_file_set_contents(copy, data, (gssize) len, NULL));
        fd = open(copy, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(d, "ext4", fd, true);
        r = do_mount(&spec, &m, &e);
        close(fd);
        g_assert_cmpint(unlink(copy), ==, 0);
        if (r < 0) {
                ku_note("corrupted inode tables, at start: %s", e.message);
                g_assert_cmpint(r, ==, -EIO);
                return;
        }
        content = read_at(m.mount_fd, "file");
        ku_note("corrupted inode tables: read %s (%s)", content ? "returned data" : "failed",
                content ? "" : g_strerror(errno));
        p = (struct pollfd) { .fd = m.pidfd, .events = POLLIN };
        if (poll(&p, 1, 0) == 1)
                ku_note("the driver died serving the corrupted image");
        unmount_and_await(&m);
}

/* What no driver gets: uid 0 or the caller's, no timeout, an offset it cannot take, a
 * read-write mount by a read-only driver, a type it does not serve. */
static void test_refusals(const char *arg) {
        const FuseDriver *ext = fusedriver_find("ext4"), *sq = fusedriver_find("squashfs");
        const FuseDriver *fat = fusedriver_find("vfat");
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        UmError e = {};
        Mounted m = {};
        FuseDriverSpec spec;

        if (!ext || !sq || !fat) {
                g_test_skip("fuse2fs, squashfuse or fusefat is not installed");
                close(fd);
                return;
        }
        spec = spec_for(ext, "ext4", fd, false);
        spec.driver_uid = 0;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EINVAL);
        spec = spec_for(ext, "ext4", fd, false);
        spec.driver_uid = spec.caller_uid = 4242;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EINVAL);
        spec = spec_for(ext, "ext4", fd, false);
        spec.timeout_usec = 0;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EINVAL);
        spec = spec_for(ext, "vfat", fd, false);
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EINVAL);
        spec = spec_for(fat, "vfat", fd, true);
        spec.offset = 1 << 20;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EOPNOTSUPP);
        spec = spec_for(sq, "squashfs", fd, false);
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EROFS);
        g_assert_null(fusedriver_find("xfs"));
        g_assert_null(fusedriver_find(NULL));
        close(fd);
}

/* Run as a fake driver in the sandbox: reports what the seccomp filter refuses that an
 * unprivileged process could otherwise do, and exits 3 so that fusedriver_mount() puts
 * the report into its error. */
static int fake_driver(void) {
        int t = (int) syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLOEXEC);
        int t_errno = t < 0 ? errno : 0;
        int u = unshare(CLONE_NEWUSER);
        int u_errno = u < 0 ? errno : 0;

        printf("open_tree=%s unshare=%s\n", t_errno ? strerrorname_np(t_errno) : "ok",
               u_errno ? strerrorname_np(u_errno) : "ok");
        fflush(stdout);
        return 3;
}

/* The mount calls are refused by seccomp, not only by the missing capabilities:
 * open_tree() without OPEN_TREE_CLONE needs none. New user namespaces are refused too. */
static void _unused_ test_seccomp(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *real = driver_or_skip("ext4", &image);
        FuseDriver fake;
        UmError e = {};
        Mounted m = {};
        int fd;

        if (!real)
                return;
        fake = *real;
        fake.path = ku_self_copy();
        fake.argv = (const char *const[]) { "fake-driver", "--fake-driver", NULL };
        fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(&fake, "ext4", fd, true);
        /* No shim: this binary needs none, and in a sanitizer build a library preloaded
         * before the sanitizer's runtime makes it abort. */
        spec.shim_path = "";
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -EIO);
        close(fd);
        ku_note("fake driver: %s", e.message);
        g_assert_nonnull(strstr(e.message, "(exit status 3): open_tree=EPERM unshare=EPERM"));
}

/* A "driver" that never answers FUSE_INIT is killed at the timeout. /usr/bin/sleep with
 * the arguments of fusefat: it reads nothing from the connection. */
static void test_timeout(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *real = driver_or_skip("ext4", &image);
        FuseDriver sleeper;
        UmError e = {};
        Mounted m = {};
        int fd;

        if (!real)
                return;
        sleeper = *real;
        sleeper.path = "/usr/bin/sleep";
        sleeper.argv = (const char *const[]) { "sleep", "1000", NULL };
        fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        FuseDriverSpec spec = spec_for(&sleeper, "ext4", fd, true);
        spec.timeout_usec = 500 * 1000;
        g_assert_cmpint(do_mount(&spec, &m, &e), ==, -ETIMEDOUT);
        g_assert_nonnull(strstr(e.message, "did not answer"));
        g_assert_cmpuint(m.usec, >=, 500 * 1000);
        g_assert_cmpuint(m.usec, <, 5 * G_USEC_PER_SEC);
        close(fd);
}

/* The read() calls of the driver so far (/proc/PID/io, all its threads): one per FUSE
 * request it takes, plus its own reads of the source. */
static uint64_t driver_reads(pid_t pid) {
        g_autofree char *path = g_strdup_printf("/proc/%d/io", (int) pid);
        g_autofree char *text = NULL;
        const char *p;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        p = strstr(text, "syscr: ");
        g_assert_nonnull(p);
        return g_ascii_strtoull(p + strlen("syscr: "), NULL, 10);
}

/* The FUSE settings of the driver table (drivertable.c, CACHING) as the kernel sees them:
 * 200 stat()s of a file whose attributes the kernel has cached cost the driver no request
 * (with attr_timeout=0, as fuse2fs and ntfs-3g default to, each is at least one GETATTR),
 * and a 1 MiB write() reaches it in 128 KiB requests (without big_writes, 256 of 4 KiB). */
static void test_settings(const char *fstype) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip(fstype, &image);
        const char *name = d && d->writable ? "settings" : "file";
        static char buf[1 << 20];
        struct stat st;
        uint64_t before;
        Mounted m;
        int fd;

        if (!d)
                return;
        m = mount_image(d, fstype, image, !d->writable);
        if (d->writable) {
                fd = openat(m.mount_fd, "settings", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                            0644);
                g_assert_cmpint(fd, >=, 0);
                memset(buf, 's', sizeof(buf));
                before = driver_reads(m.pid);
                g_assert_cmpint(write(fd, buf, sizeof(buf)), ==, (ssize_t) sizeof(buf));
                ku_note("%s: a 1 MiB write() cost the driver %" PRIu64 " reads", fstype,
                        driver_reads(m.pid) - before);
                g_assert_cmpuint(driver_reads(m.pid) - before, <, 64);
                close(fd);
        }
        g_assert_cmpint(fstatat(m.mount_fd, name, &st, 0), ==, 0);
        before = driver_reads(m.pid);
        for (int i = 0; i < 200; i++)
                g_assert_cmpint(fstatat(m.mount_fd, name, &st, 0), ==, 0);
        ku_note("%s: 200 stat()s cost the driver %" PRIu64 " reads", fstype,
                driver_reads(m.pid) - before);
        g_assert_cmpuint(driver_reads(m.pid) - before, <, 20);
        unmount_and_await(&m);
}

/* Sequential read of a 64 MiB file through fuse2fs: for the report, not a threshold. */
static void test_throughput(const char *arg) {
        g_autofree char *image = NULL;
        const FuseDriver *d = driver_or_skip("ext4", &image);
        static char buf[1 << 20];
        uint64_t t;
        size_t total = 0;
        Mounted m;
        int fd;

        if (!d)
                return;
        m = mount_image(d, "ext4", image, false);
        fd = openat(m.mount_fd, "big", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        g_assert_cmpint(fd, >=, 0);
        memset(buf, 'x', sizeof(buf));
        for (int i = 0; i < 64; i++)
                g_assert_cmpint(write(fd, buf, sizeof(buf)), ==, (ssize_t) sizeof(buf));
        close(fd);
        unmount_and_await(&m);
        m = mount_image(d, "ext4", image, true);
        fd = openat(m.mount_fd, "big", O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        t = now_usec(CLOCK_MONOTONIC);
        for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;)
                total += (size_t) n;
        t = now_usec(CLOCK_MONOTONIC) - t;
        close(fd);
        g_assert_cmpuint(total, ==, 64u << 20);
        ku_note("fuse2fs sequential read: %zu MiB in %.1f ms = %.0f MiB/s", total >> 20,
                t / 1000.0, (double) total / (1 << 20) / (t / 1e6));
        unmount_and_await(&m);
}

static void _unused_ skip_under_asan(void) {
        g_test_skip("an AddressSanitizer build cannot run within a driver's RLIMIT_AS");
}

int main(int argc, char **argv) {
        g_autofree char *self = NULL;
        int r;

        if (argc >= 2 && streq(argv[1], "--fake-driver"))
                return fake_driver();
        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        /* The shim is built beside this test's directory: <build>/daemon. */
        self = g_file_read_link("/proc/self/exe", NULL);
        g_assert_nonnull(self);
        g_autofree char *bin_dir = g_path_get_dirname(self);
        snprintf(shim_path, sizeof(shim_path), "%s/../../driver/usermount-fuse-shim.so",
                 bin_dir);
        g_assert_cmpint(access(shim_path, R_OK), ==, 0);
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();
        if (!g_test_subprocess())
                make_fuse_images();

        for (size_t i = 0; i < ELEMENTSOF(fuse_images); i++) {
                const char *t = fuse_images[i].fstype;
                g_autofree char *p1 = g_strdup_printf("/fusedriver/%s/basic", t);
                g_autofree char *p2 = g_strdup_printf("/fusedriver/%s/killed", t);

                ku_add(p1, test_basic, t, NULL);
                ku_add(p2, test_killed, t, NULL);
                g_autofree char *p4 = g_strdup_printf("/fusedriver/%s/ids", t);
                ku_add(p4, test_ids, t, NULL);
                g_autofree char *p5 = g_strdup_printf("/fusedriver/%s/settings", t);
                ku_add(p5, test_settings, t, NULL);
                if (fuse_images[i].writable) {
                        g_autofree char *p3 = g_strdup_printf("/fusedriver/%s/rw-attributes", t);
                        ku_add(p3, test_rw_attributes, t, NULL);
                }
        }
        ku_add("/fusedriver/read-only-source", test_read_only_source, NULL, NULL);
        ku_add("/fusedriver/corrupted", test_corrupted, NULL, NULL);
        ku_add("/fusedriver/corrupted-inodes", test_corrupted_inodes, NULL, NULL);
        ku_add("/fusedriver/refusals", test_refusals, NULL, NULL);
        ku_add("/fusedriver/timeout", test_timeout, NULL, NULL);
        ku_add("/fusedriver/outlives-worker", test_outlives_worker, NULL, NULL);
        ku_add("/fusedriver/stub", test_stub, NULL, NULL);
        ku_add("/fusedriver/uid-in-use", test_uid_in_use, NULL, NULL);
#if defined(__SANITIZE_ADDRESS__)
        /* AddressSanitizer reserves terabytes of address space at start, far above a
         * driver's RLIMIT_AS: this instrumented binary cannot be the fake driver. */
        g_test_add_func("/fusedriver/seccomp", skip_under_asan);
#else
        ku_add("/fusedriver/seccomp", test_seccomp, NULL, NULL);
#endif
        ku_add("/fusedriver/throughput", test_throughput, NULL, NULL);

        r = g_test_run();
        ku_images_teardown();
        return r;
}
