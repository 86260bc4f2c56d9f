/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * attach_mount() and attach_detach() in real mount namespaces (docs/security.md, classes
 * 18, 19, 20, 22 and 24, at the kernel level). "Callers" are forked children in their own
 * mount namespace (some also in a user namespace, like containers; one chrooted), waiting
 * on a pipe; "workers" are forked children that call attach_mount()/attach_detach() as
 * usermountd's workers do (they setns() for good) and report back over a pipe. What a
 * caller sees is checked from outside through /proc/<pid>/{mountinfo,root}.
 *
 * Each test runs in a subprocess with a private mount namespace and a fresh tmpfs over the
 * test directory. It must leave nothing: the subprocess checks that its children are all
 * reaped, its fds are back to what they were, and the tmpfs holds no directory and no
 * mount; the parent (a child subreaper) checks that no process outlived the subprocess,
 * that the on-disk test directory is empty and that its own mount table is unchanged.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <linux/nsfs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "attach.h"
#include "kernel-compat.h"
#include "kernel-util.h"
#include "macro.h"
#include "mountbuild.h"

#define ENV_BASE "UM_ATTACH_TEST_DIR"
#define UID ((uid_t) KU_TEST_UID)
#define GID ((gid_t) KU_TEST_GID)
#define OTHER_UID ((uid_t) 65533)
#define USER_NAME "tester"

static char *base_dir; /* on disk; a tmpfs covers it inside each test's namespace */

/* base_dir/rel; g_free(). */
static char *P(const char *rel) {
        return g_strdup_printf("%s/%s", base_dir, rel);
}

/* ---- small helpers ------------------------------------------------------------------- */

static void write_all(int fd, const void *p, size_t n) {
        const char *c = p;

        while (n > 0) {
                ssize_t k = write(fd, c, n);

                g_assert_cmpint(k, >, 0);
                c += k;
                n -= (size_t) k;
        }
}

static void read_all(int fd, void *p, size_t n) {
        char *c = p;

        while (n > 0) {
                ssize_t k = read(fd, c, n);

                g_assert_cmpint(k, >, 0);
                c += k;
                n -= (size_t) k;
        }
}

/* Open fds, counted without /proc (a worker's /proc may be another namespace's). */
static int count_fds_anywhere(void) {
        int n = 0;

        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

static void make_dir(const char *rel, uid_t uid, mode_t mode) {
        g_autofree char *p = P(rel);

        g_assert_cmpint(mkdir(p, mode), ==, 0);
        g_assert_cmpint(chmod(p, mode), ==, 0);
        g_assert_cmpint(chown(p, uid, uid == 0 ? 0 : GID), ==, 0);
}

static void remove_dir(const char *rel) {
        g_autofree char *p = P(rel);

        g_assert_cmpint(rmdir(p), ==, 0);
}

static void remove_file(const char *rel) {
        g_autofree char *p = P(rel);

        g_assert_cmpint(unlink(p), ==, 0);
}

static bool exists(const char *rel) {
        g_autofree char *p = P(rel);
        struct stat st;

        return lstat(p, &st) == 0;
}

/* A detached tmpfs mount (nodev,nosuid,noexec) holding a file "marker" with text. */
static int new_mount(const char *text) {
        _cleanup_close_ int fs = -EBADF, f = -EBADF;
        int m;

        fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        g_assert_cmpint(fs, >=, 0);
        g_assert_cmpint(fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0), ==, 0);
        m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        g_assert_cmpint(m, >=, 0);
        f = openat(m, "marker", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        g_assert_cmpint(f, >=, 0);
        write_all(f, text, strlen(text));
        return m;
}

static uint64_t fd_mount_id(int fd) {
        uint64_t id = 0;

        g_assert_cmpint(mountbuild_mount_id(fd, &id), ==, 0);
        return id;
}

/* Unique id of the mount whose root is path (seen by pid, 0: ourselves), or 0. */
static uint64_t mount_id_at(pid_t pid, const char *path) {
        g_autofree char *p = pid > 0 ? g_strdup_printf("/proc/%d/root%s", (int) pid, path)
                                     : g_strdup(path);
        struct statx stx = {};

        if (statx(AT_FDCWD, p, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &stx) < 0)
                return 0;
        if (!(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
                return 0;
        return stx.stx_mnt_id;
}

/* The marker file's text at path as pid sees it (0: ourselves), or NULL. */
static char *marker_at(pid_t pid, const char *path) {
        g_autofree char *p = pid > 0 ? g_strdup_printf("/proc/%d/root%s/marker", (int) pid, path)
                                     : g_strdup_printf("%s/marker", path);
        char *text = NULL;

        if (!g_file_get_contents(p, &text, NULL, NULL))
                return NULL;
        return text;
}

/* Undoes mountinfo's octal escapes (\040 for a space, ...). */
static char *mountinfo_unescape(const char *s) {
        GString *o = g_string_new(NULL);

        for (; *s; s++)
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        g_string_append_c(o, (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 +
                                                     (s[3] - '0')));
                        s += 3;
                } else
                        g_string_append_c(o, *s);
        return g_string_free(o, FALSE);
}

/* Whether pid has exited (a zombie has no mount namespace any more). */
static bool process_gone(pid_t pid) {
        g_autofree char *file = g_strdup_printf("/proc/%d/stat", (int) pid);
        g_autofree char *text = NULL;
        const char *end;

        if (!g_file_get_contents(file, &text, NULL, NULL))
                return true;
        end = strrchr(text, ')');
        return end && (end[2] == 'Z' || end[2] == 'X');
}

/*
 * How many mounts pid (0: ourselves) has at exactly path, or strictly beneath it when
 * under. A process that is gone has none.
 */
static int count_mounts(pid_t pid, const char *path, bool under) {
        g_autofree char *file = pid > 0 ? g_strdup_printf("/proc/%d/mountinfo", (int) pid)
                                        : g_strdup("/proc/self/mountinfo");
        g_autofree char *text = NULL, *prefix = g_strdup_printf("%s/", path);
        g_auto(GStrv) lines = NULL;
        int n = 0;

        if (!g_file_get_contents(file, &text, NULL, NULL)) {
                g_assert_true(pid > 0 && process_gone(pid));
                return 0;
        }
        lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = g_strsplit(*l, " ", 7);
                g_autofree char *mp = NULL;

                if (g_strv_length(f) < 6)
                        continue;
                mp = mountinfo_unescape(f[4]);
                if (under ? g_str_has_prefix(mp, prefix) : streq(mp, path))
                        n++;
        }
        return n;
}

static int mounts_at(pid_t pid, const char *path) {
        return count_mounts(pid, path, false);
}

static int mounts_under(pid_t pid, const char *dir) {
        return count_mounts(pid, dir, true);
}

static uint64_t mntns_id_of(pid_t pid) {
        g_autofree char *p = g_strdup_printf("/proc/%d/ns/mnt", (int) pid);
        _cleanup_close_ int fd = open(p, O_RDONLY | O_CLOEXEC);
        uint64_t id = 0;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ioctl(fd, NS_GET_MNTNS_ID, &id), ==, 0);
        return id;
}

/* Whether uid (with gid) may list and enter path: the answer of access() in a child. */
static bool accessible_as(uid_t uid, gid_t gid, const char *path) {
        int status = 0;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
                    setresuid(uid, uid, uid) < 0)
                        _exit(2);
                _exit(access(path, R_OK | X_OK) == 0 ? 0 : 1);
        }
        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), !=, 2);
        return WEXITSTATUS(status) == 0;
}

/* ---- callers --------------------------------------------------------------------------- */

typedef enum CallerKind {
        CALLER_MOUNTNS,     /* root in its own mount namespace */
        CALLER_USERNS,      /* the test uid as root of its own user + mount namespace */
        CALLER_CHROOT,      /* own mount namespace, chrooted into arg */
        CALLER_SYSTEM_DIRS, /* own mount namespace, empty tmpfs of the test uid over /etc... */
        CALLER_SWAPPER,     /* own mount namespace, exchanging arg/t and arg/s until asked */
        CALLER_MOVER,       /* own mount namespace, moving arg/t to shared/t and back */
        CALLER_EXITING,     /* own mount namespace, exits right after it is ready */
} CallerKind;

typedef struct Caller {
        pid_t pid;
        int pidfd;
        int ctl;   /* to the caller: a byte asks (the swapper to stop), EOF lets it exit */
        int reply; /* from the caller */
} Caller;

static const char *const system_dirs[] = {
        "/etc", "/usr", "/home", "/var", "/boot", "/root", "/opt", "/srv", "/mnt", "/media",
        "/run", "/tmp", "/lib", "/lib64", "/bin", "/sbin", "/usr/lib", "/var/tmp",
};

static void cover_system_dirs(void) {
        for (size_t i = 0; i < ELEMENTSOF(system_dirs); i++) {
                struct stat st;

                if (lstat(system_dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
                        continue; /* e.g. /lib on a merged-/usr system: a symlink */
                g_assert_cmpint(mount("tmpfs", system_dirs[i], "tmpfs", 0,
                                      "uid=65534,gid=65534,mode=0755"),
                                ==, 0);
        }
}

/* Exchanges dir/t and dir/s (a directory and a symlink) until a byte arrives on ctl. */
static void swap_until_asked(const char *dir, int ctl, int reply) {
        g_autofree char *t = g_strdup_printf("%s/t", dir), *s = g_strdup_printf("%s/s", dir);
        struct pollfd p = { .fd = ctl, .events = POLLIN };
        unsigned swaps = 0;
        char c;

        while (poll(&p, 1, 0) == 0)
                if (renameat2(AT_FDCWD, t, AT_FDCWD, s, RENAME_EXCHANGE) == 0)
                        swaps++;
                else
                        g_assert_cmpint(errno, ==, EBUSY); /* t is mounted on right now */
        g_assert_cmpint(read(ctl, &c, 1), ==, 1);
        /* Put the directory back at t, so that the test can clean up by name. */
        {
                struct stat st;

                g_assert_cmpint(lstat(t, &st), ==, 0);
                if (!S_ISDIR(st.st_mode))
                        g_assert_cmpint(renameat2(AT_FDCWD, t, AT_FDCWD, s, RENAME_EXCHANGE),
                                        ==, 0);
        }
        write_all(reply, &swaps, sizeof(swaps));
}

/* Moves dir/t into the world-writable shared directory and back until a byte arrives on
 * ctl: as a user would, to have a checked target mounted on in a directory others trust. */
static void move_until_asked(const char *dir, int ctl, int reply) {
        g_autofree char *t = g_strdup_printf("%s/t", dir), *moved = P("shared/t");
        struct pollfd p = { .fd = ctl, .events = POLLIN };
        unsigned moves = 0;
        bool away = false;
        char c;

        while (poll(&p, 1, 0) == 0) {
                if (rename(away ? moved : t, away ? t : moved) == 0) {
                        away = !away;
                        moves++;
                } else
                        g_assert_cmpint(errno, ==, EBUSY); /* mounted on right now */
        }
        g_assert_cmpint(read(ctl, &c, 1), ==, 1);
        /* Back at t, so that the test can clean up by name. */
        while (away && rename(moved, t) < 0) {
                g_assert_cmpint(errno, ==, EBUSY);
                g_usleep(1000);
        }
        write_all(reply, &moves, sizeof(moves));
}

static _noreturn_ void caller_main(CallerKind kind, const char *arg, int ctl, int reply) {
        char c = 'r';

        if (kind == CALLER_USERNS)
                ku_become_userns_root();
        else
                g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
        if (kind == CALLER_CHROOT) {
                g_assert_cmpint(chroot(arg), ==, 0);
                g_assert_cmpint(chdir("/"), ==, 0);
        }
        if (kind == CALLER_SYSTEM_DIRS)
                cover_system_dirs();
        write_all(reply, &c, 1);
        if (kind == CALLER_EXITING) {
                g_usleep(g_random_int_range(0, 400));
                _exit(0);
        }
        if (kind == CALLER_SWAPPER)
                swap_until_asked(arg, ctl, reply);
        if (kind == CALLER_MOVER)
                move_until_asked(arg, ctl, reply);
        while (read(ctl, &c, 1) > 0)
                ;
        _exit(0);
}

static void caller_start(Caller *c, CallerKind kind, const char *arg) {
        int ctl[2], reply[2];
        char byte = 0;

        g_assert_cmpint(pipe2(ctl, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(reply, O_CLOEXEC), ==, 0);
        fflush(NULL);
        c->pid = fork();
        g_assert_cmpint(c->pid, >=, 0);
        if (c->pid == 0) {
                close(ctl[1]);
                close(reply[0]);
                caller_main(kind, arg, ctl[0], reply[1]);
        }
        close(ctl[0]);
        close(reply[1]);
        c->ctl = ctl[1];
        c->reply = reply[0];
        g_assert_cmpint(read(c->reply, &byte, 1), ==, 1);
        c->pidfd = pidfd_open(c->pid, 0);
        g_assert_cmpint(c->pidfd, >=, 0);
}

/* mount_id_at() of path in c's mount namespace, looked up from that namespace's root. */
static uint64_t ns_mount_id_at(const Caller *c, const char *path) {
        uint64_t id = 0;
        int p[2];
        pid_t pid;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                g_assert_cmpint(setns(c->pidfd, CLONE_NEWNS), ==, 0);
                id = mount_id_at(0, path);
                write_all(p[1], &id, sizeof(id));
                _exit(0);
        }
        close(p[1]);
        read_all(p[0], &id, sizeof(id));
        close(p[0]);
        ku_wait_ok(pid);
        return id;
}

/* Lets the caller exit and reaps it; its mount namespace (and all mounts in it) go. */
static void caller_stop(Caller *c) {
        c->ctl = safe_close(c->ctl);
        ku_wait_ok(c->pid);
        c->reply = safe_close(c->reply);
        c->pidfd = safe_close(c->pidfd);
}

/* ---- workers --------------------------------------------------------------------------- */

typedef struct Outcome {
        int r;
        UmError error;
        AttachResult res;
        bool res_untouched; /* ret was left alone on failure */
        int fds_leaked;
        char landed;        /* symlink race: 't' or 's' (the directory), 'o' (outside) or '?' */
} Outcome;

typedef void (*WorkerFunc)(const void *data, Outcome *o);

/* Forks a worker that runs fn and sends the Outcome back; checks the generic promises. */
static void run_worker(WorkerFunc fn, const void *data, Outcome *o) {
        int p[2];
        pid_t pid;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                Outcome out = {};

                close(p[0]);
                fn(data, &out);
                write_all(p[1], &out, sizeof(out));
                _exit(0);
        }
        close(p[1]);
        read_all(p[0], o, sizeof(*o));
        close(p[0]);
        ku_wait_ok(pid);
        g_assert_cmpint(o->fds_leaked, ==, 0);
        if (o->r < 0) {
                g_assert_cmpint(o->error.kind, !=, UM_ERROR_KIND_NONE);
                g_assert_cmpint(o->error.error, ==, -o->r);
                g_assert_cmpstr(o->error.message, !=, "");
                g_assert_true(o->res_untouched);
        }
}

typedef struct AttachCall {
        int mount_fd;
        AttachRequest req;
        const char *race_dir; /* symlink race: find out where the mount landed, and detach it */
        int barrier;          /* concurrent attaches: wait for EOF here first (or -1) */
} AttachCall;

/* In the worker, now in the caller's namespace: which name the attached mount is under. */
static char race_landing(const char *dir, uint64_t id) {
        g_autofree char *t = g_strdup_printf("%s/t", dir), *s = g_strdup_printf("%s/s", dir);
        g_autofree char *outside = P("outside"), *shared = P("shared/t");

        if (mount_id_at(0, outside) != 0 || mount_id_at(0, shared) != 0)
                return 'o';
        if (mount_id_at(0, t) == id)
                return 't';
        if (mount_id_at(0, s) == id)
                return 's';
        return '?';
}

static void attach_job(const void *data, Outcome *o) {
        const AttachCall *j = data;
        AttachResult res, pattern;
        int before;
        char c;

        if (j->barrier >= 0)
                while (read(j->barrier, &c, 1) > 0)
                        ;
        memset(&res, 0xa5, sizeof(res));
        pattern = res;
        before = count_fds_anywhere();
        o->r = attach_mount(j->mount_fd, &j->req, &res, &o->error);
        o->fds_leaked = count_fds_anywhere() - before;
        if (o->r < 0) {
                o->res_untouched = memcmp(&res, &pattern, sizeof(res)) == 0;
                return;
        }
        o->res = res;
        if (j->race_dir) {
                char fdpath[64];

                o->landed = race_landing(j->race_dir, res.mount_id);
                snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", j->mount_fd);
                g_assert_cmpint(umount2(fdpath, MNT_DETACH), ==, 0);
        }
}

static char *media_root; /* set by tests that use the default place */

static AttachRequest request(const Caller *c, const char *target) {
        return (AttachRequest) {
                .pidfd = c->pidfd,
                .uid = UID,
                .gid = GID,
                .target = target,
                .media_root = media_root,
                .user_name = USER_NAME,
                .label = "",
                .uuid = "",
        };
}

static void do_attach(int mount_fd, const AttachRequest *req, Outcome *o) {
        AttachCall j = { .mount_fd = mount_fd, .req = *req, .barrier = -1 };

        run_worker(attach_job, &j, o);
}

/* Attaches a new mount for c at target (NULL: the default place) and expects success. */
static uint64_t attach_ok(const Caller *c, const char *target, const char *label, Outcome *o) {
        _cleanup_close_ int m = new_mount(label ? label : "x");
        AttachRequest req = request(c, target);
        uint64_t id = fd_mount_id(m);

        req.label = label ? label : "";
        do_attach(m, &req, o);
        if (o->r < 0)
                g_error("attach failed: %s", o->error.message);
        g_assert_cmpuint(o->res.mount_id, ==, id);
        return id;
}

typedef struct DetachCall {
        int pidfd;
        const char *mount_point;
        uint64_t mount_id;
        bool force;
        bool remove_dir;
} DetachCall;

static void detach_job(const void *data, Outcome *o) {
        const DetachCall *j = data;
        int before = count_fds_anywhere();

        o->r = attach_detach(j->pidfd, j->mount_point, j->mount_id, j->force, j->remove_dir,
                             &o->error);
        o->fds_leaked = count_fds_anywhere() - before;
        o->res_untouched = true; /* no result to leave alone */
}

static int do_detach(const Caller *c, const char *mount_point, uint64_t id, bool force,
                     bool remove, Outcome *o) {
        DetachCall j = { c->pidfd, mount_point, id, force, remove };

        run_worker(detach_job, &j, o);
        return o->r;
}

static void detach_ok(const Caller *c, const char *mount_point, uint64_t id, bool remove) {
        Outcome o;

        if (do_detach(c, mount_point, id, false, remove, &o) < 0)
                g_error("detach failed: %s", o.error.message);
        g_assert_cmpuint(mount_id_at(c->pid, mount_point), !=, id);
}

/* The attached mount is where the caller looks, with its marker, and nowhere else. */
static void assert_attached(const Caller *c, const char *path, uint64_t id, const char *marker) {
        g_autofree char *seen = marker_at(c->pid, path), *here = marker_at(0, path);

        g_assert_cmpuint(mount_id_at(c->pid, path), ==, id);
        g_assert_cmpint(mounts_at(c->pid, path), ==, 1);
        g_assert_cmpstr(seen, ==, marker);
        /* This namespace (the host, for the caller) does not see it. */
        g_assert_cmpint(mounts_at(0, path) + mounts_under(0, path), ==, 0);
        g_assert_cmpuint(mount_id_at(0, path), ==, 0);
        g_assert_null(here);
}

static void assert_refused(const Outcome *o, UmErrorKind kind, int err, const char *words) {
        g_assert_cmpint(o->r, <, 0);
        if (o->error.kind != kind || (err && o->r != -err) ||
            (words && !strstr(o->error.message, words)))
                g_error("expected kind %d, %s, \"%s\"; got kind %d, %s: %s", kind,
                        err ? strerror(err) : "any errno", strempty(words), o->error.kind,
                        strerror(-o->r), o->error.message);
}

/* ---- the test runner ------------------------------------------------------------------- */

static void assert_tmpfs_clean(void) {
        g_autoptr(GDir) d = g_dir_open(base_dir, 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d)))
                g_test_fail_printf("left behind in the test directory: %s", name);
        g_assert_cmpint(mounts_under(0, base_dir), ==, 0);
}

/* In the parent, a child subreaper: no process of the test may have outlived it. */
static void assert_no_orphans(void) {
        glob_t g = {};

        if (glob("/proc/self/task/*/children", 0, NULL, &g) != 0)
                return;
        for (size_t i = 0; i < g.gl_pathc; i++) {
                g_autofree char *text = NULL;
                g_auto(GStrv) pids = NULL;

                if (!g_file_get_contents(g.gl_pathv[i], &text, NULL, NULL))
                        continue;
                pids = g_strsplit(g_strstrip(text), " ", -1);
                for (char **p = pids; *p && **p; p++) {
                        pid_t pid = (pid_t) atoi(*p);

                        g_test_fail_printf("process %d outlived its test", (int) pid);
                        kill(pid, SIGKILL);
                        waitpid(pid, NULL, 0);
                }
        }
        globfree(&g);
}

static void run_isolated(gconstpointer data) {
        void (*body)(void) = (void (*)(void)) data;
        int fds, status;

        if (g_test_subprocess()) {
                g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
                g_assert_cmpint(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
                g_assert_cmpint(mount("attach-test", base_dir, "tmpfs", MS_NOSUID | MS_NODEV,
                                      "mode=0755"),
                                ==, 0);
                media_root = P("media");
                fds = ku_count_fds();
                body();
                g_assert_cmpint(waitpid(-1, &status, WNOHANG), ==, -1);
                g_assert_cmpint(errno, ==, ECHILD);
                g_assert_cmpint(ku_count_fds(), ==, fds);
                assert_tmpfs_clean();
                return;
        }
        fds = ku_count_fds();
        g_test_trap_subprocess(NULL, 240 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
        assert_no_orphans();
        g_assert_false(ku_mountinfo_has_path_under(0, base_dir));
        {
                g_autoptr(GDir) d = g_dir_open(base_dir, 0, NULL);

                g_assert_nonnull(d);
                g_assert_null(g_dir_read_name(d));
        }
        g_assert_cmpint(ku_count_fds(), ==, fds);
}

static void add(const char *path, void (*body)(void)) {
        g_test_add_data_func(path, (gconstpointer) body, run_isolated);
}

/* ---- mountname_sanitize() and attach_check_target(): pure ---------------------------- */

static const struct {
        const char *label;
        const char *name; /* NULL: nothing usable */
} sanitize_cases[] = {
        { "USB", "USB" },
        { "My Disk", "My Disk" },
        { "a/b", "a_b" },
        { "a///b", "a_b" },
        { "../../etc", "etc" },
        { "..", NULL },
        { ".", NULL },
        { "....", NULL },
        { "", NULL },
        { "/", NULL },
        { "///", NULL },
        { ".hidden", "hidden" },
        { "-rf", "rf" },
        { "  padded  ", "padded" },
        { "line\nbreak", "line_break" },
        { "tab\there", "tab_here" },
        { "\n", NULL },
        { "tail\n", "tail" },
        { "%n%s%x", "%n%s%x" },
        { "\x1b[31mred\x1b[0m", "[31mred_[0m" },
        { "\xc2\x9b" "31m", "31m" },
        { "a\xc2\x9b" "b", "a_b" },
        { "a\xc2\x85" "b", "a_b" },
        { "a\x7f" "b", "a_b" },
        { "\xff\xfe", NULL },
        { "a\xff" "b", "a_b" },
        { "a\xc0\xaf" "b", "a_b" },
        { "a\xed\xa0\x80" "b", "a_b" },
        { "a\xf4\x90\x80\x80" "b", "a_b" },
        { "a\xe2\x82", "a" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },
        { "\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac" },
        { "\xe2\x80\xae" "gpj.exe", "gpj.exe" },
        { "a\xe2\x80\x8b" "b", "a_b" },
        { "a\xe2\x80\xa8" "b", "a_b" },
        { "\xef\xbb\xbf" "LABEL", "LABEL" },
        { "___", NULL },
        { "_x", "_x" },
        { "a\\b", "a\\b" },
        { "x.", "x." },
};

static void test_sanitize_table(void) {
        for (size_t i = 0; i < ELEMENTSOF(sanitize_cases); i++) {
                char buf[128] = "unchanged", esc[256];
                bool ok = mountname_sanitize(sanitize_cases[i].label, buf, sizeof(buf));

                if (ok != !!sanitize_cases[i].name ||
                    (ok && !streq(buf, sanitize_cases[i].name)) || (!ok && buf[0]))
                        g_error("label \"%s\": got %s \"%s\"",
                                um_escape(sanitize_cases[i].label, esc, sizeof(esc)),
                                ok ? "true" : "false", buf);
        }
        {
                char buf[8] = "x";

                g_assert_false(mountname_sanitize(NULL, buf, sizeof(buf)));
                g_assert_cmpstr(buf, ==, "");
        }
}

static void test_sanitize_lengths(void) {
        char buf[256], label[512];

        memset(label, 'A', 300);
        label[300] = 0;
        g_assert_true(mountname_sanitize(label, buf, sizeof(buf)));
        g_assert_cmpuint(strlen(buf), ==, 64);
        g_assert_cmpint(strspn(buf, "A"), ==, 64);

        /* A character that does not fit whole is left out, never cut. */
        memset(label, 'a', 63);
        strcpy(label + 63, "\xc3\xa9");
        g_assert_true(mountname_sanitize(label, buf, sizeof(buf)));
        g_assert_cmpuint(strlen(buf), ==, 63);
        memset(label, 'a', 62);
        strcpy(label + 62, "\xc3\xa9z");
        g_assert_true(mountname_sanitize(label, buf, sizeof(buf)));
        g_assert_cmpuint(strlen(buf), ==, 64);
        g_assert_true(g_str_has_suffix(buf, "\xc3\xa9"));

        /* Small buffers. */
        g_assert_true(mountname_sanitize("abcdef", buf, 4));
        g_assert_cmpstr(buf, ==, "abc");
        g_assert_false(mountname_sanitize("abcdef", buf, 1));
        g_assert_cmpstr(buf, ==, "");
        g_assert_false(mountname_sanitize("abcdef", buf, 0));
}

/* Random bytes: the result is either nothing or a name that is safe by every rule. */
static void test_sanitize_random(void) {
        for (int i = 0; i < 20000; i++) {
                char label[96], buf[128];
                int len = g_test_rand_int_range(0, sizeof(label));

                for (int k = 0; k < len; k++) {
                        /* Mostly the interesting bytes: '.', '/', controls, UTF-8 lead bytes. */
                        static const char pick[] = "./ -_aZ\n\x1b\x7f\x80\x9b\xc2\xe2\xf0\xff";

                        if (g_test_rand_bit())
                                label[k] = pick[g_test_rand_int_range(0, sizeof(pick) - 1)];
                        else
                                label[k] = (char) g_test_rand_int_range(1, 256);
                }
                label[len] = 0;
                if (!mountname_sanitize(label, buf, sizeof(buf))) {
                        g_assert_cmpstr(buf, ==, "");
                        continue;
                }
                g_assert_true(g_utf8_validate(buf, -1, NULL));
                g_assert_cmpuint(strlen(buf), <=, 64);
                g_assert_cmpuint(strlen(buf), >, 0);
                g_assert_null(strchr(buf, '/'));
                g_assert_true(buf[0] != '.' && buf[0] != '-' && buf[0] != ' ');
                for (const char *c = buf; *c; c = g_utf8_next_char(c)) {
                        gunichar u = g_utf8_get_char(c);

                        g_assert_false(u < 0x20 || (u >= 0x7f && u <= 0x9f));
                }
        }
}

static void test_check_target(void) {
        static const char *const ok[] = {
                "/home/user/mnt", "/media/usb", "/run/media/tester/x", "/mnt/x", "/var/lib/x",
                "/libfoo/x", "/usr/libexec/x", "/tmp/x", "/a b/c",
        };
        static const char *const malformed[] = {
                "", "relative", "./x", "/a/../b", "/a/./b", "/a//b", "/a/", "//", "/..", "/.",
                "/a\nb", "/a\x7f", "/a\tb",
        };
        static const char *const system[] = {
                "/", "/etc", "/usr", "/lib", "/lib64", "/libx32", "/usr/lib", "/usr/lib64",
                "/usr/libexec", "/boot", "/dev", "/proc", "/sys", "/run", "/var", "/root",
                "/home", "/tmp", "/bin", "/sbin", "/run/media", "/run/user", "/var/tmp",
        };
        g_autofree char *longpath = g_strnfill(5000, 'a');
        UmError e = {};

        for (size_t i = 0; i < ELEMENTSOF(ok); i++)
                g_assert_cmpint(attach_check_target(ok[i], &e), ==, 0);
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
                e = (UmError) {};
                g_assert_cmpint(attach_check_target(malformed[i], &e), ==, -EINVAL);
                g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_TARGET);
                g_assert_null(strchr(e.message, '\n'));
        }
        for (size_t i = 0; i < ELEMENTSOF(system); i++) {
                e = (UmError) {};
                g_assert_cmpint(attach_check_target(system[i], &e), ==, -EPERM);
                g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_TARGET);
                g_assert_nonnull(strstr(e.message, "system directory"));
        }
        longpath[0] = '/';
        g_assert_cmpint(attach_check_target(longpath, &e), ==, -EINVAL);
        g_assert_cmpint(attach_check_target(NULL, &e), ==, -EINVAL);
}

/* ---- targets --------------------------------------------------------------------------- */

/* (18) A good target: attached there, in the caller's namespace only; then detached. */
static void test_target_ok(void) {
        g_autofree char *t = P("t");
        Caller c;
        Outcome o;
        uint64_t id;

        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        id = attach_ok(&c, t, "ok", &o);
        g_assert_cmpstr(o.res.mount_point, ==, t);
        g_assert_false(o.res.created_dir);
        g_assert_cmpuint(o.res.mntns_id, ==, mntns_id_of(c.pid));
        g_assert_cmpuint(o.res.mntns_id, !=, mntns_id_of(getpid()));
        assert_attached(&c, t, id, "ok");

        detach_ok(&c, t, id, false);
        g_assert_cmpint(mounts_under(c.pid, t) + mounts_at(c.pid, t), ==, 0);
        g_assert_true(exists("t")); /* not ours to remove */
        caller_stop(&c);
        remove_dir("t");
}

/* A container: root of its own user + mount namespace, the target owned by its uid. */
static void test_target_userns(void) {
        g_autofree char *t = P("t");
        Caller c;
        Outcome o;
        uint64_t id;

        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_USERNS, NULL);
        id = attach_ok(&c, t, "container", &o);
        g_assert_cmpuint(o.res.mntns_id, ==, mntns_id_of(c.pid));
        assert_attached(&c, t, id, "container");
        detach_ok(&c, t, id, false);
        caller_stop(&c);
        remove_dir("t");
}

/*
 * A chrooted caller: "/t" is its /t (base/jail/t), never base/t, which is just as good a
 * target. The default place is refused: the daemon creates nothing in a chroot.
 */
static void test_target_chroot(void) {
        g_autofree char *jail = P("jail"), *decoy = P("t"), *inner = P("jail/t");
        Caller c;
        Outcome o;
        uint64_t id;
        int m;

        make_dir("jail", 0, 0755);
        make_dir("jail/t", UID, 0755);
        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_CHROOT, jail);
        id = attach_ok(&c, "/t", "jailed", &o);
        g_assert_cmpstr(o.res.mount_point, ==, "/t");
        g_assert_cmpuint(mount_id_at(c.pid, "/t"), ==, id); /* /proc/<pid>/root is the jail */
        g_assert_cmpint(mounts_at(c.pid, "/t"), ==, 1);
        /* Seen from the root of the caller's namespace: jail/t, not the decoy t. */
        g_assert_cmpuint(ns_mount_id_at(&c, inner), ==, id);
        g_assert_cmpuint(ns_mount_id_at(&c, decoy), ==, 0);
        g_assert_cmpint(mounts_at(0, inner), ==, 0);
        g_assert_cmpint(mounts_at(0, decoy), ==, 0);

        m = new_mount("no");
        {
                AttachRequest req = request(&c, NULL);

                do_attach(m, &req, &o);
        }
        close(m);
        assert_refused(&o, UM_ERROR_KIND_INVALID_TARGET, EPERM, "chroot");
        g_assert_false(exists("jail/media"));
        g_assert_false(exists("media"));

        detach_ok(&c, "/t", id, false);
        caller_stop(&c);
        remove_dir("jail/t");
        remove_dir("jail");
        remove_dir("t");
}

/* Checks that attaching at target fails with kind/err/words and attaches nothing. */
static void assert_target_refused(const Caller *c, const char *target, UmErrorKind kind, int err,
                                  const char *words) {
        _cleanup_close_ int m = new_mount("refused");
        AttachRequest req = request(c, target);
        int before = mounts_under(c->pid, base_dir) + mounts_under(c->pid, "");
        Outcome o;

        do_attach(m, &req, &o);
        assert_refused(&o, kind, err, words);
        ku_note("refused: %s", o.error.message);
        /* Nothing new in the caller's namespace, and the mount is still detached. */
        g_assert_cmpint(mounts_under(c->pid, base_dir) + mounts_under(c->pid, ""), ==, before);
        {
                g_autofree char *probe = P("probe");

                g_assert_cmpint(mkdir(probe, 0700), ==, 0);
                g_assert_cmpint(move_mount(m, "", AT_FDCWD, probe, MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
                m = safe_close(m);
                g_assert_cmpint(umount2(probe, 0), ==, 0);
                g_assert_cmpint(rmdir(probe), ==, 0);
        }
}

static void test_target_not_owned(void) {
        g_autofree char *t = P("t"), *r = P("r");
        Caller c;

        make_dir("t", OTHER_UID, 0777);
        make_dir("r", 0, 0777);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_target_refused(&c, t, UM_ERROR_KIND_INVALID_TARGET, EPERM, "not owned by you");
        assert_target_refused(&c, r, UM_ERROR_KIND_INVALID_TARGET, EPERM, "not owned by you");
        caller_stop(&c);
        remove_dir("t");
        remove_dir("r");
}

static void test_target_not_empty(void) {
        g_autofree char *t = P("t"), *f = P("t/file"), *d = P("t2"), *sub = P("t2/.hidden");
        Caller c;

        make_dir("t", UID, 0755);
        g_assert_true(g_file_set_contents(f, "x", 1, NULL));
        make_dir("t2", UID, 0755);
        g_assert_cmpint(mkdir(sub, 0755), ==, 0);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_target_refused(&c, t, UM_ERROR_KIND_INVALID_TARGET, ENOTEMPTY, "not empty");
        assert_target_refused(&c, d, UM_ERROR_KIND_INVALID_TARGET, ENOTEMPTY, "not empty");
        caller_stop(&c);
        remove_file("t/file");
        remove_dir("t2/.hidden");
        remove_dir("t");
        remove_dir("t2");
}

static void test_target_not_directory(void) {
        g_autofree char *f = P("file"), *missing = P("missing"), *through = P("file/x");
        Caller c;

        g_assert_true(g_file_set_contents(f, "", 0, NULL));
        g_assert_cmpint(chown(f, UID, GID), ==, 0);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_target_refused(&c, f, UM_ERROR_KIND_INVALID_TARGET, ENOTDIR, "not a directory");
        assert_target_refused(&c, through, UM_ERROR_KIND_INVALID_TARGET, ENOTDIR,
                              "not a directory");
        assert_target_refused(&c, missing, UM_ERROR_KIND_INVALID_TARGET, ENOENT, "does not exist");
        caller_stop(&c);
        remove_file("file");
}

/* The target itself is a symlink to a good target: refused, the real one is untouched. */
static void test_target_symlink(void) {
        g_autofree char *real = P("real"), *link = P("link"), *rel = P("rel");
        Caller c;

        make_dir("real", UID, 0755);
        g_assert_cmpint(symlink(real, link), ==, 0);
        g_assert_cmpint(symlink("real", rel), ==, 0);
        g_assert_cmpint(lchown(link, UID, GID), ==, 0);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_target_refused(&c, link, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        assert_target_refused(&c, rel, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        g_assert_cmpint(mounts_under(c.pid, real) + mounts_at(c.pid, real), ==, 0);
        caller_stop(&c);
        remove_file("link");
        remove_file("rel");
        remove_dir("real");
}

/* A parent of the target is a symlink; also /proc's magic links. */
static void test_target_symlink_parent(void) {
        g_autofree char *through = P("linkp/t"), *real = P("realp/t"), *linkp = P("linkp");
        g_autofree char *magic = NULL;
        Caller c;

        make_dir("realp", UID, 0755);
        make_dir("realp/t", UID, 0755);
        g_assert_cmpint(symlink("realp", linkp), ==, 0);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_target_refused(&c, through, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        /* /proc/<pid>/root is a magic link into the caller's own root. */
        magic = g_strdup_printf("/proc/%d/root%s", (int) c.pid, real);
        assert_target_refused(&c, magic, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        g_assert_cmpint(mounts_under(c.pid, real) + mounts_at(c.pid, real), ==, 0);
        caller_stop(&c);
        remove_file("linkp");
        remove_dir("realp/t");
        remove_dir("realp");
}

/* Pseudo filesystems: nothing is ever mounted on them, whoever owns the directory. */
static void test_target_pseudo_filesystems(void) {
        static const char *const types[] = {
                /* The first two are made owned by the test uid where the kernel allows. */
                "hugetlbfs", "bpf",     "proc",      "sysfs",    "devtmpfs", "devpts",
                "mqueue",    "cgroup2", "tracefs",   "debugfs",  "securityfs", "configfs",
                "pstore",    "fusectl", "efivarfs",  "binfmt_misc",
        };
        bool mounted[ELEMENTSOF(types)] = {};
        g_autofree char *procdir = NULL;
        unsigned n = 0, owned_and_empty = 0;
        Caller c;

        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                _cleanup_close_ int fs = -EBADF, m = -EBADF;
                g_autofree char *dir = P(types[i]);
                bool own = i < 2;

                fs = fsopen(types[i], FSOPEN_CLOEXEC);
                /* Fresh instances whose root the test uid owns: only the type stops them. */
                if (fs >= 0 && own &&
                    (fsconfig(fs, FSCONFIG_SET_STRING, "uid", "65534", 0) < 0 ||
                     fsconfig(fs, FSCONFIG_SET_STRING, "gid", "65534", 0) < 0 ||
                     fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0))
                        ku_note("%s: cannot be given to the test uid (%s)", types[i],
                                strerror(errno));
                if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
                    (m = fsmount(fs, FSMOUNT_CLOEXEC, 0)) < 0) {
                        ku_note("%s: not available here (%s)", types[i], strerror(errno));
                        continue;
                }
                make_dir(types[i], 0, 0755);
                g_assert_cmpint(move_mount(m, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
                mounted[i] = true;
                n++;
                {
                        struct stat st;
                        g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);

                        g_assert_cmpint(stat(dir, &st), ==, 0);
                        if (st.st_uid == UID && d && !g_dir_read_name(d))
                                owned_and_empty++;
                }
        }
        g_assert_true(mounted[2] && mounted[3] && mounted[4]); /* proc, sysfs, devtmpfs */
        g_assert_cmpuint(owned_and_empty, >, 0);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                g_autofree char *dir = P(types[i]);
                g_autofree char *words = g_strdup_printf("on a %s filesystem", types[i]);

                if (mounted[i])
                        assert_target_refused(&c, dir, UM_ERROR_KIND_INVALID_TARGET, EPERM, words);
        }
        /* The caller's own /proc/<pid> directory, through the real /proc. */
        procdir = g_strdup_printf("/proc/%d", (int) c.pid);
        assert_target_refused(&c, procdir, UM_ERROR_KIND_INVALID_TARGET, EPERM,
                              "on a proc filesystem");
        caller_stop(&c);
        ku_note("%u pseudo filesystems refused, %u of them empty and owned by the test uid", n,
                owned_and_empty);
        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                g_autofree char *dir = P(types[i]);

                if (!mounted[i])
                        continue;
                g_assert_cmpint(umount2(dir, MNT_DETACH), ==, 0);
                remove_dir(types[i]);
        }
}

/*
 * "/", "/etc", "/usr" ... are refused even when they are empty directories owned by the
 * caller's uid (as in a rootless container): the caller has empty tmpfs owned by the test
 * uid over them, and still nothing more is mounted there.
 */
static void test_target_system_dirs(void) {
        Caller c;

        caller_start(&c, CALLER_SYSTEM_DIRS, NULL);
        for (size_t i = 0; i < ELEMENTSOF(system_dirs); i++) {
                int before = mounts_at(c.pid, system_dirs[i]);

                assert_target_refused(&c, system_dirs[i], UM_ERROR_KIND_INVALID_TARGET, EPERM,
                                      "system directory");
                g_assert_cmpint(mounts_at(c.pid, system_dirs[i]), ==, before);
        }
        assert_target_refused(&c, "/", UM_ERROR_KIND_INVALID_TARGET, EPERM, "system directory");
        caller_stop(&c);
}

/* Relative, "..", ".", "//", trailing "/", control characters: refused before any lookup. */
static void test_target_malformed(void) {
        g_autofree char *t = P("t");
        const char *const rel[] = { "a/../t", "./t", "t/.", "t/", "/t", "t\n" };
        Caller c;

        make_dir("t", UID, 0755);
        make_dir("a", UID, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        for (size_t i = 0; i < ELEMENTSOF(rel); i++) {
                /* base/a/../t, base/./t, base/t/., base/t/, base//t, "base/t\n" */
                g_autofree char *bad = g_strdup_printf("%s/%s", base_dir, rel[i]);

                assert_target_refused(&c, bad, UM_ERROR_KIND_INVALID_TARGET, EINVAL,
                                      "absolute path");
        }
        assert_target_refused(&c, "t", UM_ERROR_KIND_INVALID_TARGET, EINVAL, "absolute path");
        assert_target_refused(&c, t + 1, UM_ERROR_KIND_INVALID_TARGET, EINVAL, "absolute path");
        g_assert_cmpint(mounts_under(c.pid, t) + mounts_at(c.pid, t), ==, 0);
        caller_stop(&c);
        remove_dir("t");
        remove_dir("a");
}

/*
 * Attaches for the racing caller c at race/t hundreds of times while c changes what is
 * there: every attach either lands on the directory it checked, in the directory it
 * checked (at 't', or at 's' where same_dir_name allows: the kernel does not serialize a
 * rename within one directory with mounting, so an exchange that raced the mount can
 * rename it there), or is refused, because c's change was seen (errno err, message words)
 * or came between the checks and the move (the mount was detached again); nothing ever
 * stays mounted at watched. what names c's changes in the note.
 */
static void race_attaches(Caller *c, const char *watched, int err, const char *words,
                          bool same_dir_name, const char *what) {
        g_autofree char *race = P("race"), *t = P("race/t");
        unsigned ok = 0, refused = 0, changes = 0, i;
        char stop = 's';

        for (i = 0; i < 3000 && (i < 300 || ok < 20 || refused < 20); i++) {
                _cleanup_close_ int m = new_mount("race");
                AttachCall j = { .mount_fd = m, .req = request(c, t), .race_dir = race,
                                .barrier = -1 };
                Outcome o;

                run_worker(attach_job, &j, &o);
                if (o.r == 0) {
                        if (o.landed != 't' && !(same_dir_name && o.landed == 's'))
                                g_error("attempt %u: the mount landed at '%c'", i, o.landed);
                        ok++;
                } else {
                        if (o.error.error == ESTALE)
                                assert_refused(&o, UM_ERROR_KIND_INVALID_TARGET, ESTALE,
                                               "was moved while it was being mounted on");
                        else
                                assert_refused(&o, UM_ERROR_KIND_INVALID_TARGET, err, words);
                        refused++;
                }
                g_assert_cmpint(mounts_at(c->pid, watched), ==, 0);
        }
        write_all(c->ctl, &stop, 1);
        read_all(c->reply, &changes, sizeof(changes));
        ku_note("%u attempts: %u attached to the checked directory, %u refused, %u %s", i, ok,
                refused, changes, what);
        g_assert_cmpuint(ok, >, 0);
        g_assert_cmpuint(refused, >, 0);
        g_assert_cmpint(mounts_under(c->pid, base_dir), ==, 0);
}

/* (18) The target is swapped with a symlink (to another empty directory of the user's). */
static void test_target_symlink_race(void) {
        g_autofree char *outside = P("outside"), *s = P("race/s"), *race = P("race");
        Caller c;

        make_dir("race", 0, 0755);
        make_dir("race/t", UID, 0755);
        make_dir("outside", UID, 0755);
        g_assert_cmpint(symlink(outside, s), ==, 0);
        caller_start(&c, CALLER_SWAPPER, race);
        race_attaches(&c, outside, ELOOP, "symbolic link", true, "swaps");
        caller_stop(&c);
        remove_file("race/s");
        remove_dir("race/t");
        remove_dir("race");
        remove_dir("outside");
}

/* (18) The target is moved into a directory others can write to, and back. */
static void test_target_moved_race(void) {
        g_autofree char *shared_t = P("shared/t"), *race = P("race");
        Caller c;

        make_dir("race", 0, 0755);
        make_dir("race/t", UID, 0755);
        make_dir("shared", 0, 01777);
        caller_start(&c, CALLER_MOVER, race);
        race_attaches(&c, shared_t, ENOENT, "does not exist", false, "moves");
        caller_stop(&c);
        remove_dir("race/t");
        remove_dir("race");
        remove_dir("shared");
}

/* ---- the caller is gone (22) ----------------------------------------------------------- */

static void exited_case(bool reap) {
        g_autofree char *t = P("t");
        Caller c;

        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_EXITING, NULL);
        if (reap)
                ku_wait_ok(c.pid);
        else {
                siginfo_t si = {};

                /* Exited, not reaped: a zombie whose pid still exists. */
                g_assert_cmpint(waitid(P_PID, c.pid, &si, WEXITED | WNOWAIT), ==, 0);
        }
        assert_target_refused(&c, t, UM_ERROR_KIND_FAILED, ESRCH,
                              "the caller exited before the mount could be attached");
        if (!reap)
                ku_wait_ok(c.pid);
        close(c.ctl);
        close(c.reply);
        close(c.pidfd);
        remove_dir("t");
}

static void test_caller_exited(void) {
        exited_case(false);
        exited_case(true);
}

/* The caller exits while the worker is attaching: attached into a dying namespace or refused. */
static void test_caller_exit_race(void) {
        g_autofree char *t = P("t");
        unsigned attached = 0, refused = 0;

        make_dir("t", UID, 0755);
        for (int i = 0; i < 60; i++) {
                _cleanup_close_ int m = new_mount("late");
                Caller c;
                AttachRequest req;
                Outcome o;

                caller_start(&c, CALLER_EXITING, NULL);
                req = request(&c, t);
                do_attach(m, &req, &o);
                if (o.r == 0)
                        attached++;
                else {
                        assert_refused(&o, UM_ERROR_KIND_FAILED, ESRCH, "caller exited");
                        refused++;
                }
                ku_wait_ok(c.pid);
                close(c.ctl);
                close(c.reply);
                close(c.pidfd);
                g_assert_cmpint(mounts_under(0, base_dir), ==, 0);
        }
        ku_note("caller exiting meanwhile: %u attached into its namespace, %u refused", attached,
                refused);
        remove_dir("t");
}

/* ---- the default place: <media_root>/<user>/<name> (19, 20) ------------------------------ */

/* user:<uid>:r-x in the access ACL, or (without ACL support) the user's group. */
static void assert_user_dir(const char *path) {
        uint8_t buf[256];
        struct stat st;
        ssize_t n;

        g_assert_cmpint(lstat(path, &st), ==, 0);
        g_assert_true(S_ISDIR(st.st_mode));
        g_assert_cmpuint(st.st_uid, ==, 0);
        g_assert_cmphex(st.st_mode & 07777, ==, 0750);
        n = getxattr(path, "system.posix_acl_access", buf, sizeof(buf));
        if (n < 0) {
                g_assert_true(errno == ENODATA || errno == EOPNOTSUPP);
                g_assert_cmpuint(st.st_gid, ==, GID);
                ku_note("%s: no ACL support, group %u", path, (unsigned) st.st_gid);
        } else {
                size_t o = sizeof(struct posix_acl_xattr_header);
                bool user_entry = false;

                g_assert_cmpuint(st.st_gid, ==, 0);
                for (; o + 8 <= (size_t) n; o += 8) {
                        struct posix_acl_xattr_entry e;

                        memcpy(&e, buf + o, sizeof(e));
                        if (le16toh(e.e_tag) == ACL_USER) {
                                g_assert_cmpuint(le32toh(e.e_id), ==, UID);
                                g_assert_cmpuint(le16toh(e.e_perm), ==, ACL_READ | ACL_EXECUTE);
                                user_entry = true;
                        }
                        if (le16toh(e.e_tag) == ACL_OTHER || le16toh(e.e_tag) == ACL_GROUP_OBJ)
                                g_assert_cmpuint(le16toh(e.e_perm), ==, 0);
                }
                g_assert_true(user_entry);
        }
        g_assert_true(accessible_as(UID, GID, path));
        g_assert_false(accessible_as(OTHER_UID, OTHER_UID, path));
}

static void assert_media_dirs(const char *root) {
        g_autofree char *user = g_strdup_printf("%s/%s", root, USER_NAME);
        struct stat st;

        g_assert_cmpint(lstat(root, &st), ==, 0);
        g_assert_true(S_ISDIR(st.st_mode));
        g_assert_cmpuint(st.st_uid, ==, 0);
        g_assert_cmphex(st.st_mode & 07777, ==, 0755);
        assert_user_dir(user);
}

static void remove_media(const char *root) {
        g_autofree char *user = g_strdup_printf("%s/%s", root, USER_NAME);

        g_assert_cmpint(rmdir(user), ==, 0);
        g_assert_cmpint(rmdir(root), ==, 0);
}

static void assert_mount_dir(const char *path) {
        struct stat st;

        g_assert_cmpint(lstat(path, &st), ==, 0); /* seen from here: the directory, unmounted */
        g_assert_true(S_ISDIR(st.st_mode));
        g_assert_cmpuint(st.st_uid, ==, UID);
        g_assert_cmpuint(st.st_gid, ==, GID);
}

/* (19) Label, then collisions: "L", "L-2", "L-3"; detach removes each directory. */
static void test_media_label(void) {
        g_autofree char *want = g_strdup_printf("%s/%s/USB STICK", media_root, USER_NAME);
        uint64_t ids[3];
        char names[3][4096];
        Caller c;
        Outcome o;

        caller_start(&c, CALLER_MOUNTNS, NULL);
        for (int i = 0; i < 3; i++) {
                ids[i] = attach_ok(&c, NULL, "USB STICK", &o);
                g_assert_true(o.res.created_dir);
                snprintf(names[i], sizeof(names[i]), "%s", o.res.mount_point);
                assert_attached(&c, names[i], ids[i], "USB STICK");
                assert_mount_dir(names[i]);
        }
        g_assert_cmpstr(names[0], ==, want);
        g_assert_true(g_str_has_suffix(names[1], "/USB STICK-2"));
        g_assert_true(g_str_has_suffix(names[2], "/USB STICK-3"));
        assert_media_dirs(media_root);

        for (int i = 0; i < 3; i++) {
                detach_ok(&c, names[i], ids[i], true);
                g_assert_false(g_file_test(names[i], G_FILE_TEST_EXISTS));
        }
        caller_stop(&c);
        remove_media(media_root);
}

/* No usable label: the uuid; neither: "disk"; no user name: the uid. */
static void test_media_fallback_names(void) {
        static const struct {
                const char *label, *uuid, *user, *dir;
        } cases[] = {
                { "", "2C4A-11F3", USER_NAME, USER_NAME "/2C4A-11F3" },
                { "\n\x1b", "1b2c3d4e-aaaa-bbbb-cccc-0123456789ab", USER_NAME,
                  USER_NAME "/1b2c3d4e-aaaa-bbbb-cccc-0123456789ab" },
                { "", "", USER_NAME, USER_NAME "/disk" },
                { "...", "../..", USER_NAME, USER_NAME "/disk" },
                { "L", "", NULL, "65534/L" },
                { "L", "", "", "65534/L" },
                { "L", "", "../evil", "65534/L" },
        };
        Caller c;

        caller_start(&c, CALLER_MOUNTNS, NULL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_close_ int m = new_mount("fallback");
                g_autofree char *want = g_strdup_printf("%s/%s", media_root, cases[i].dir);
                g_autofree char *userdir = g_path_get_dirname(want);
                AttachRequest req = request(&c, NULL);
                uint64_t id = fd_mount_id(m);
                Outcome o;

                req.label = cases[i].label;
                req.uuid = cases[i].uuid;
                req.user_name = cases[i].user;
                do_attach(m, &req, &o);
                m = safe_close(m); /* like the worker: an open mount fd makes it busy */
                g_assert_cmpint(o.r, ==, 0);
                g_assert_cmpstr(o.res.mount_point, ==, want);
                assert_attached(&c, want, id, "fallback");
                detach_ok(&c, want, id, true);
                g_assert_false(g_file_test(want, G_FILE_TEST_EXISTS));
                g_assert_cmpint(rmdir(userdir), ==, 0);
        }
        caller_stop(&c);
        g_assert_cmpint(rmdir(media_root), ==, 0);
}

/* (19) Concurrent attaches of media with the same label get distinct directories. */
static void test_media_concurrent(void) {
        enum { N = 8 };
        int mounts[N], barrier[2], result[N][2];
        pid_t pids[N];
        uint64_t ids[N];
        Outcome out[N];
        GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
        Caller c;

        caller_start(&c, CALLER_MOUNTNS, NULL);
        g_assert_cmpint(pipe2(barrier, O_CLOEXEC), ==, 0);
        for (int i = 0; i < N; i++) {
                AttachCall j = { .req = request(&c, NULL), .barrier = barrier[0] };

                mounts[i] = new_mount("same");
                ids[i] = fd_mount_id(mounts[i]);
                j.mount_fd = mounts[i];
                j.req.label = "SAME";
                g_assert_cmpint(pipe2(result[i], O_CLOEXEC), ==, 0);
                fflush(NULL);
                pids[i] = fork();
                g_assert_cmpint(pids[i], >=, 0);
                if (pids[i] == 0) {
                        Outcome o = {};

                        close(barrier[1]);
                        attach_job(&j, &o);
                        write_all(result[i][1], &o, sizeof(o));
                        _exit(0);
                }
                close(result[i][1]);
        }
        close(barrier[0]);
        close(barrier[1]); /* all workers start at once */
        for (int i = 0; i < N; i++)
                close(mounts[i]); /* an open mount fd would make the mount busy */
        for (int i = 0; i < N; i++) {
                read_all(result[i][0], &out[i], sizeof(out[i]));
                close(result[i][0]);
                ku_wait_ok(pids[i]);
                if (out[i].r < 0)
                        g_error("concurrent attach %d: %s", i, out[i].error.message);
                g_assert_cmpuint(out[i].res.mount_id, ==, ids[i]);
                g_assert_false(g_hash_table_contains(seen, out[i].res.mount_point));
                g_hash_table_add(seen, out[i].res.mount_point);
                assert_attached(&c, out[i].res.mount_point, ids[i], "same");
        }
        for (int i = 1; i <= N; i++) {
                g_autofree char *name = NULL;

                if (i == 1)
                        name = g_strdup_printf("%s/%s/SAME", media_root, USER_NAME);
                else
                        name = g_strdup_printf("%s/%s/SAME-%d", media_root, USER_NAME, i);

                g_assert_true(g_hash_table_contains(seen, name));
        }
        g_hash_table_unref(seen);
        for (int i = 0; i < N; i++)
                detach_ok(&c, out[i].res.mount_point, ids[i], true);
        caller_stop(&c);
        remove_media(media_root);
}

/* (20) Hostile labels become safe names right under the user's directory. */
static void test_media_hostile_labels(void) {
        static const char *const labels[] = {
                "../../etc", "a/b", "/", "line\nbreak", "%n%s%x", "\x1b[31mred\x1b[0m",
                "\xc2\x9b" "2J", "\xff\xfe\xfd", "....", "..", "", "\xe2\x80\xae" "fdp.exe",
                "-rf --no-preserve-root", "\t\r\v",
        };
        g_autofree char *userdir = g_strdup_printf("%s/%s", media_root, USER_NAME);
        g_autofree char *long_label = g_strnfill(300, 'L');
        Caller c;

        caller_start(&c, CALLER_MOUNTNS, NULL);
        for (size_t i = 0; i <= ELEMENTSOF(labels); i++) {
                const char *label = i < ELEMENTSOF(labels) ? labels[i] : long_label;
                _cleanup_close_ int m = new_mount("hostile");
                AttachRequest req = request(&c, NULL);
                g_autofree char *dir = NULL, *base = NULL;
                char want[128];
                uint64_t id = fd_mount_id(m);
                Outcome o;

                req.label = label;
                do_attach(m, &req, &o);
                m = safe_close(m);
                g_assert_cmpint(o.r, ==, 0);
                if (!mountname_sanitize(label, want, sizeof(want)))
                        snprintf(want, sizeof(want), "disk");
                dir = g_path_get_dirname(o.res.mount_point);
                base = g_path_get_basename(o.res.mount_point);
                g_assert_cmpstr(dir, ==, userdir);
                g_assert_cmpstr(base, ==, want);
                g_assert_true(g_utf8_validate(base, -1, NULL));
                g_assert_cmpuint(strlen(base), <=, 64);
                assert_mount_dir(o.res.mount_point);
                assert_attached(&c, o.res.mount_point, id, "hostile");
                detach_ok(&c, o.res.mount_point, id, true);
                g_assert_false(g_file_test(o.res.mount_point, G_FILE_TEST_EXISTS));
        }
        g_assert_false(exists("etc"));
        caller_stop(&c);
        remove_media(media_root);
}

/* Without ACL support (ramfs) the user's directory belongs to the user's group instead. */
static void test_media_no_acl(void) {
        g_autofree char *ram = P("ram"), *root = P("ram/media");
        g_autofree char *saved = g_steal_pointer(&media_root);
        Caller c;
        Outcome o;
        uint64_t id;

        make_dir("ram", 0, 0755);
        g_assert_cmpint(mount("ramfs", ram, "ramfs", 0, "mode=0755"), ==, 0);
        media_root = g_strdup(root);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        id = attach_ok(&c, NULL, "RAM", &o);
        assert_media_dirs(root);
        g_assert_cmpint(getxattr(root, "system.posix_acl_access", NULL, 0), <, 0);
        detach_ok(&c, o.res.mount_point, id, true);
        caller_stop(&c);
        remove_media(root);
        g_assert_cmpint(umount2(ram, 0), ==, 0);
        remove_dir("ram");
        g_free(media_root);
        media_root = g_steal_pointer(&saved);
}

/* Media directories that are not root's, or are symlinks, are never used or changed. */
static void test_media_unsafe_dirs(void) {
        g_autofree char *user = g_strdup_printf("%s/%s", media_root, USER_NAME);
        g_autofree char *elsewhere = P("elsewhere"), *inside = P("elsewhere/x");
        Caller c;

        make_dir("elsewhere", 0, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);

        /* <media>/<user> a symlink to a root-owned directory. */
        make_dir("media", 0, 0755);
        g_assert_cmpint(symlink(elsewhere, user), ==, 0);
        assert_target_refused(&c, NULL, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        g_assert_cmpint(unlink(user), ==, 0);

        /* <media>/<user> owned by the user: they could have put anything in it. */
        g_assert_cmpint(mkdir(user, 0755), ==, 0);
        g_assert_cmpint(chown(user, UID, GID), ==, 0);
        assert_target_refused(&c, NULL, UM_ERROR_KIND_INVALID_TARGET, EPERM, "owned by root");
        g_assert_cmpint(rmdir(user), ==, 0);

        /* <media> writable by others. */
        g_assert_cmpint(chmod(media_root, 01777), ==, 0);
        assert_target_refused(&c, NULL, UM_ERROR_KIND_INVALID_TARGET, EPERM, "writable by other");
        g_assert_cmpint(chmod(media_root, 0755), ==, 0);
        g_assert_false(exists("media/" USER_NAME));
        remove_dir("media");

        /* <media> itself a symlink. */
        g_assert_cmpint(symlink(elsewhere, media_root), ==, 0);
        assert_target_refused(&c, NULL, UM_ERROR_KIND_INVALID_TARGET, ELOOP, "symbolic link");
        remove_file("media");

        g_assert_false(g_file_test(inside, G_FILE_TEST_EXISTS));
        {
                struct stat st;

                g_assert_cmpint(stat(elsewhere, &st), ==, 0);
                g_assert_cmphex(st.st_mode & 07777, ==, 0755);
                g_assert_cmpint(getxattr(elsewhere, "system.posix_acl_access", NULL, 0), <, 0);
        }
        caller_stop(&c);
        remove_dir("elsewhere");
}

/* A caller in a user namespace gets no directories made for it: a target is needed. */
static void test_media_userns_refused(void) {
        Caller c;

        caller_start(&c, CALLER_USERNS, NULL);
        assert_target_refused(&c, NULL, UM_ERROR_KIND_INVALID_TARGET, EPERM, "user namespace");
        g_assert_false(exists("media"));
        caller_stop(&c);
}

/* ---- detaching (24) ------------------------------------------------------------------- */

/* A process in the caller's namespace keeps its working directory inside the mount. */
typedef struct Holder {
        pid_t pid;
        int ctl;
} Holder;

static void holder_start(Holder *h, const Caller *c, const char *path) {
        int ctl[2], ready[2];
        char byte;

        g_assert_cmpint(pipe2(ctl, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(ready, O_CLOEXEC), ==, 0);
        fflush(NULL);
        h->pid = fork();
        g_assert_cmpint(h->pid, >=, 0);
        if (h->pid == 0) {
                close(ctl[1]);
                g_assert_cmpint(setns(c->pidfd, CLONE_NEWNS), ==, 0);
                g_assert_cmpint(chdir(path), ==, 0);
                write_all(ready[1], "h", 1);
                while (read(ctl[0], &byte, 1) > 0)
                        ;
                _exit(0);
        }
        close(ctl[0]);
        close(ready[1]);
        g_assert_cmpint(read(ready[0], &byte, 1), ==, 1);
        close(ready[0]);
        h->ctl = ctl[1];
}

static void holder_stop(Holder *h) {
        close(h->ctl);
        ku_wait_ok(h->pid);
}

/* Busy: DeviceBusy without force and nothing changes; with force it goes (lazily). */
static void test_detach_busy(void) {
        Caller c;
        Holder h;
        Outcome o;
        uint64_t id;
        char mp[4096];

        caller_start(&c, CALLER_MOUNTNS, NULL);
        id = attach_ok(&c, NULL, "BUSY", &o);
        snprintf(mp, sizeof(mp), "%s", o.res.mount_point);
        holder_start(&h, &c, mp);

        do_detach(&c, mp, id, false, true, &o);
        assert_refused(&o, UM_ERROR_KIND_DEVICE_BUSY, EBUSY, "--force");
        g_assert_cmpuint(mount_id_at(c.pid, mp), ==, id);
        g_assert_true(g_file_test(mp, G_FILE_TEST_IS_DIR));

        g_assert_cmpint(do_detach(&c, mp, id, true, true, &o), ==, 0);
        g_assert_cmpint(mounts_at(c.pid, mp), ==, 0);
        g_assert_false(g_file_test(mp, G_FILE_TEST_EXISTS));
        {
                /* The holder is still inside the detached mount. */
                g_autofree char *cwd = g_strdup_printf("/proc/%d/cwd/marker", (int) h.pid);
                g_autofree char *text = NULL;

                g_assert_true(g_file_get_contents(cwd, &text, NULL, NULL));
                g_assert_cmpstr(text, ==, "BUSY");
        }
        holder_stop(&h);
        caller_stop(&c);
        remove_media(media_root);
}

/* In the caller's namespace, puts a new tmpfs on top of whatever is at path. */
static uint64_t stack_mount(const Caller *c, const char *path) {
        _cleanup_close_ int m = new_mount("on top");
        uint64_t id = fd_mount_id(m);
        pid_t pid;

        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                g_assert_cmpint(setns(c->pidfd, CLONE_NEWNS), ==, 0);
                g_assert_cmpint(move_mount(m, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH), ==, 0);
                _exit(0);
        }
        ku_wait_ok(pid);
        return id;
}

static void assert_detach_not_mounted(const Caller *c, const char *path, uint64_t id) {
        Outcome o;

        for (int force = 0; force <= 1; force++) {
                do_detach(c, path, id, force, true, &o);
                assert_refused(&o, UM_ERROR_KIND_NOT_MOUNTED, ENOENT, "nothing was unmounted");
        }
}

/*
 * (24) The registered mount is no longer what the path leads to: another mount is there,
 * one is stacked on top, the path became a symlink, or nothing is mounted: NotMounted, and
 * whatever is there is untouched.
 */
static void test_detach_wrong_mount(void) {
        g_autofree char *t = P("t"), *moved = P("t.moved");
        uint64_t first, second, top;
        Caller c;
        Outcome o;

        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        assert_detach_not_mounted(&c, t, 12345);

        first = attach_ok(&c, t, "first", &o);
        detach_ok(&c, t, first, false);
        second = attach_ok(&c, t, "second", &o);
        assert_detach_not_mounted(&c, t, first);
        assert_attached(&c, t, second, "second");

        top = stack_mount(&c, t);
        assert_detach_not_mounted(&c, t, second);
        g_assert_cmpuint(mount_id_at(c.pid, t), ==, top);
        g_assert_cmpint(mounts_at(c.pid, t), ==, 2);
        detach_ok(&c, t, top, false);
        assert_attached(&c, t, second, "second");

        /* Renamed in a namespace where it is no mount point; a symlink in its place. */
        g_assert_cmpint(rename(t, moved), ==, 0);
        g_assert_cmpint(symlink("t.moved", t), ==, 0);
        assert_detach_not_mounted(&c, t, second);
        g_assert_cmpuint(mount_id_at(c.pid, moved), ==, second);
        detach_ok(&c, moved, second, false);

        caller_stop(&c);
        remove_file("t");
        remove_dir("t.moved");
}

/* remove_dir never removes a directory the user chose (its parent is not root's alone). */
static void test_detach_keeps_user_dirs(void) {
        g_autofree char *home = P("home"), *t = P("home/t");
        Caller c;
        Outcome o;
        uint64_t id;

        make_dir("home", UID, 0755);
        make_dir("home/t", UID, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        id = attach_ok(&c, t, "mine", &o);
        detach_ok(&c, t, id, true);
        g_assert_true(exists("home/t"));
        caller_stop(&c);
        remove_dir("home/t");
        remove_dir("home");
}

static void test_detach_caller_gone(void) {
        g_autofree char *t = P("t");
        Caller c, gone;
        Outcome o;
        uint64_t id;

        make_dir("t", UID, 0755);
        caller_start(&c, CALLER_MOUNTNS, NULL);
        id = attach_ok(&c, t, "stays", &o);
        caller_start(&gone, CALLER_EXITING, NULL);
        ku_wait_ok(gone.pid);
        do_detach(&gone, t, id, false, false, &o);
        assert_refused(&o, UM_ERROR_KIND_FAILED, ESRCH, "nothing was unmounted");
        g_assert_cmpuint(mount_id_at(c.pid, t), ==, id);
        close(gone.ctl);
        close(gone.reply);
        close(gone.pidfd);
        detach_ok(&c, t, id, false);
        caller_stop(&c);
        remove_dir("t");
}

/* ---- a real locked mount, in a container ------------------------------------------------ */

static void build_locked(void *data) {
        int sock = *(int *) data;
        MountOptions opts = {
                .attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC,
        };
        MountSpec spec = { .fstype = "tmpfs", .source = "tmpfs", .options = &opts };
        g_autofree char *stage = P("stage");
        UmError e = {};
        int fd = -EBADF, r;

        r = mountbuild_locked(&spec, stage, &fd, &e);
        if (r < 0)
                g_error("mountbuild_locked: %s", e.message);
        ku_send(sock, &r, sizeof(r), fd);
}

/* The recipe's locked mount attaches into a user namespace, stays locked, and detaches. */
static void test_locked_mount_userns(void) {
        g_autofree char *t = P("t");
        _cleanup_close_ int m = -EBADF;
        g_autofree char *opts = NULL;
        int sv[2], r = -1;
        AttachRequest req;
        Caller c;
        Outcome o;
        uint64_t id;
        pid_t pid;

        make_dir("stage", 0, 0700);
        make_dir("t", UID, 0755);
        /* First: a caller forked later would inherit the mount fd and keep the mount busy. */
        caller_start(&c, CALLER_USERNS, NULL);
        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
        pid = ku_fork(build_locked, &sv[1]);
        close(sv[1]);
        m = ku_recv(sv[0], &r, sizeof(r));
        close(sv[0]);
        ku_wait_ok(pid);
        g_assert_cmpint(m, >=, 0);
        id = fd_mount_id(m);
        req = request(&c, t);
        do_attach(m, &req, &o);
        m = safe_close(m);
        g_assert_cmpint(o.r, ==, 0);
        g_assert_cmpuint(mount_id_at(c.pid, t), ==, id);
        g_assert_cmpint(mounts_at(0, t), ==, 0);
        {
                /* Per-mount options as the container sees them. */
                g_autofree char *file = g_strdup_printf("/proc/%d/mountinfo", (int) c.pid);
                g_autofree char *text = NULL;
                g_auto(GStrv) lines = NULL;

                g_assert_true(g_file_get_contents(file, &text, NULL, NULL));
                lines = g_strsplit(text, "\n", -1);
                for (char **l = lines; *l; l++) {
                        g_auto(GStrv) f = g_strsplit(*l, " ", 7);

                        if (g_strv_length(f) >= 6 && streq(f[4], t))
                                opts = g_strdup(f[5]);
                }
        }
        g_assert_nonnull(opts);
        g_assert_nonnull(strstr(opts, "nosuid"));
        g_assert_nonnull(strstr(opts, "nodev"));
        g_assert_nonnull(strstr(opts, "noexec"));
        detach_ok(&c, t, id, false);
        caller_stop(&c);
        remove_dir("t");
        remove_dir("stage");
}

int main(int argc, char **argv) {
        g_autoptr(GError) err = NULL;
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (g_test_subprocess())
                base_dir = g_strdup(g_getenv(ENV_BASE));
        else {
                base_dir = g_dir_make_tmp("usermount-attach-XXXXXX", &err);
                g_assert_no_error(err);
                g_setenv(ENV_BASE, base_dir, TRUE);
                /* Orphans of a test's processes come here, where they can be found. */
                g_assert_cmpint(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), ==, 0);
        }
        g_assert_nonnull(base_dir);

        g_test_add_func("/attach/sanitize/table", test_sanitize_table);
        g_test_add_func("/attach/sanitize/lengths", test_sanitize_lengths);
        g_test_add_func("/attach/sanitize/random", test_sanitize_random);
        g_test_add_func("/attach/check-target", test_check_target);

        add("/attach/target/ok", test_target_ok);
        add("/attach/target/userns-caller", test_target_userns);
        add("/attach/target/chroot-caller", test_target_chroot);
        add("/attach/target/not-owned", test_target_not_owned);
        add("/attach/target/not-empty", test_target_not_empty);
        add("/attach/target/not-directory", test_target_not_directory);
        add("/attach/target/symlink", test_target_symlink);
        add("/attach/target/symlink-parent", test_target_symlink_parent);
        add("/attach/target/pseudo-filesystems", test_target_pseudo_filesystems);
        add("/attach/target/system-directories", test_target_system_dirs);
        add("/attach/target/malformed", test_target_malformed);
        add("/attach/target/symlink-swap-race", test_target_symlink_race);
        add("/attach/target/moved-race", test_target_moved_race);
        add("/attach/caller/exited", test_caller_exited);
        add("/attach/caller/exit-race", test_caller_exit_race);
        add("/attach/media/label-and-collisions", test_media_label);
        add("/attach/media/fallback-names", test_media_fallback_names);
        add("/attach/media/concurrent-same-label", test_media_concurrent);
        add("/attach/media/hostile-labels", test_media_hostile_labels);
        add("/attach/media/no-acl-support", test_media_no_acl);
        add("/attach/media/unsafe-directories", test_media_unsafe_dirs);
        add("/attach/media/userns-caller-refused", test_media_userns_refused);
        add("/attach/detach/busy-and-force", test_detach_busy);
        add("/attach/detach/wrong-mount", test_detach_wrong_mount);
        add("/attach/detach/keeps-user-directories", test_detach_keeps_user_dirs);
        add("/attach/detach/caller-gone", test_detach_caller_gone);
        add("/attach/locked-mount-in-userns", test_locked_mount_userns);

        r = g_test_run();
        if (!g_test_subprocess())
                g_assert_cmpint(rmdir(base_dir), ==, 0);
        g_free(base_dir);
        return r;
}
