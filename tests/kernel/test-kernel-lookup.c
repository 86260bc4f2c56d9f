/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lookup_beneath() against the kernel's own openat2() on the same tree: for every case
 * (symlinks relative, absolute, upward, in a loop, in the middle and at the end; magic
 * links of procfs; ".." inside and above the start; a mount on the way; non-directories
 * walked through; missing names; permissions of an unprivileged process) the walk must
 * give what openat2() with the matching RESOLVE_* flags gives: the same inode on the same
 * mount, or the same errno. Then the cases where the walk is stricter on purpose (links
 * on procfs, fs.protected_symlinks always, opens that could run a driver before the
 * check), and a run under a seccomp filter that answers ENOSYS for openat2(), as systemd's
 * RestrictSUIDSGID= does. The tree lives on a tmpfs mounted over /tmp in a private mount
 * namespace: nothing of it can outlive the test.
 */
#include <fcntl.h>
#include <glib.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kernel-util.h"
#include "lookup.h"
#include "macro.h"

static const char *const test_dir = "/tmp/usermount-lookup"; /* on a private tmpfs */
static int root_fd = -EBADF; /* the start of every lookup: <test_dir>/root */

typedef struct Case {
        const char *path;
        int open_flags;
        LookupFlags flags;
} Case;

static const Case cases[] = {
        { "a/b/c", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/b/c", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
        { "/a/b", O_PATH, LOOKUP_NO_SYMLINKS }, /* absolute counts from the start */
        { "a//b/./c/", O_PATH, LOOKUP_NO_SYMLINKS },
        { "", O_PATH, LOOKUP_NO_SYMLINKS },
        { ".", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
        { "a/..", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/b/../file", O_PATH, LOOKUP_NO_SYMLINKS },
        { "..", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/../..", O_PATH, 0 },
        { "a/file", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/file", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
        { "a/file", O_PATH | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
        { "a/file/", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/file/x", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/fifo", O_PATH, LOOKUP_NO_SYMLINKS },
        { "missing", O_PATH, LOOKUP_NO_SYMLINKS },
        { "a/missing/c", O_PATH, LOOKUP_NO_SYMLINKS },
        /* links, refused */
        { "rel", O_PATH, LOOKUP_NO_SYMLINKS },
        { "rel/c", O_PATH | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
        { "abs", O_PATH, LOOKUP_NO_SYMLINKS },
        /* links, followed below the start */
        { "rel", O_PATH, 0 },
        { "rel/c", O_RDONLY | O_DIRECTORY, 0 },
        { "a/b/dotdot", O_PATH, 0 },
        { "chain", O_PATH, 0 },
        { "abs", O_PATH, 0 },
        { "abs-inside", O_PATH, 0 },
        { "up", O_PATH, 0 },
        { "a/b/up2", O_PATH, 0 },
        { "loop1", O_PATH, 0 },
        { "dangling", O_PATH, 0 },
        { "rel-file/x", O_PATH, 0 },
        /* a mount on the way */
        { "mnt/d", O_PATH, LOOKUP_NO_SYMLINKS },
        { "mnt/d", O_PATH, LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV },
        { "mnt", O_RDONLY | O_DIRECTORY, LOOKUP_NO_XDEV },
        { "a/b", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS | LOOKUP_NO_XDEV },
        /* procfs: magic links */
        { "proc/self/cwd", O_PATH, LOOKUP_NO_SYMLINKS },
        { "proc/thread-self/fd/0", O_PATH, 0 },
        /* refusals the walk reaches first, with the same errno */
        { "secret/inner", O_PATH, LOOKUP_NO_SYMLINKS },
        { "secret", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
};

static int kernel_openat2(int dir_fd, const Case *c) {
        struct open_how how = {
                .flags = (uint64_t) (c->open_flags | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
                           ((c->flags & LOOKUP_NO_SYMLINKS) ? RESOLVE_NO_SYMLINKS : 0) |
                           ((c->flags & LOOKUP_NO_XDEV) ? RESOLVE_NO_XDEV : 0),
        };
        const char *path = c->path;
        int fd;

        while (*path == '/') /* RESOLVE_BENEATH refuses absolute paths; the walk counts them
                              * from the start */
                path++;
        fd = (int) syscall(SYS_openat2, dir_fd, *path ? path : ".", &how, sizeof(how));
        return fd < 0 ? -errno : fd;
}

static void assert_same_object(int a, int b) {
        struct statx sa = {}, sb = {};

        g_assert_cmpint(statx(a, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sa), ==, 0);
        g_assert_cmpint(statx(b, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &sb), ==, 0);
        g_assert_cmpuint(sa.stx_ino, ==, sb.stx_ino);
        g_assert_cmpuint(sa.stx_dev_major, ==, sb.stx_dev_major);
        g_assert_cmpuint(sa.stx_dev_minor, ==, sb.stx_dev_minor);
        g_assert_cmpuint(sa.stx_mnt_id, ==, sb.stx_mnt_id);
        /* Opened the same way: O_PATH or the same access mode, and close-on-exec. */
        g_assert_cmpint(fcntl(a, F_GETFL) & (O_PATH | O_ACCMODE), ==,
                        fcntl(b, F_GETFL) & (O_PATH | O_ACCMODE));
        g_assert_cmpint(fcntl(a, F_GETFD), ==, FD_CLOEXEC);
}

/* Both give the same inode, or both the same errno. Returns the shared result (>= 0: ok). */
static int compare(int dir_fd, const Case *c) {
        int want = kernel_openat2(dir_fd, c);
        int have = lookup_beneath(dir_fd, c->path, c->open_flags, c->flags);
        int r = have >= 0 ? 0 : have;

        if ((want >= 0) != (have >= 0) || (want < 0 && want != have))
                g_error("\"%s\" flags %#x lookup %#x: openat2() gives %s, the walk %s", c->path,
                        c->open_flags, c->flags, want >= 0 ? "an fd" : g_strerror(-want),
                        have >= 0 ? "an fd" : g_strerror(-have));
        if (want >= 0) {
                assert_same_object(want, have);
                close(want);
                close(have);
        }
        return r;
}

static void test_case(gconstpointer data) {
        const Case *c = data;
        int r = compare(root_fd, c);

        g_test_message("\"%s\": %s", c->path, r >= 0 ? "opened" : g_strerror(-r));
}

/* A magic link reached without any other link on the way: ELOOP from both. */
static void test_procfs_magic_links(void) {
        g_autofree char *root = g_strdup_printf("proc/%d/root", (int) getpid());
        g_autofree char *cwd = g_strdup_printf("proc/%d/cwd/a", (int) getpid());
        g_autofree char *fd = g_strdup_printf("proc/%d/fd/%d", (int) getpid(), root_fd);
        const Case magic[] = {
                { root, O_PATH, 0 },
                { cwd, O_PATH | O_DIRECTORY, 0 },
                { fd, O_PATH | O_DIRECTORY, 0 },
                { fd, O_PATH, LOOKUP_NO_SYMLINKS },
        };

        for (size_t i = 0; i < ELEMENTSOF(magic); i++)
                g_assert_cmpint(compare(root_fd, &magic[i]), ==, -ELOOP);
}

/* The walk refuses every link on procfs, also those openat2() would follow (/proc/self). */
static void test_procfs_links_refused(void) {
        g_assert_cmpint(lookup_beneath(root_fd, "proc/self", O_PATH, 0), ==, -ELOOP);
        g_assert_cmpint(lookup_beneath(root_fd, "proc/self/status", O_PATH, 0), ==, -ELOOP);
}

/* Opens that could run a driver's open() or wait on a FIFO before the walk checked what it
 * found, and flags it does not do, are refused; so are paths the kernel would not take. */
static void test_bad_flags(void) {
        g_autofree char *long_path = g_strnfill(PATH_MAX, 'a');

        g_assert_cmpint(lookup_beneath(root_fd, "a/new", O_RDWR | O_CREAT, 0), ==, -EINVAL);
        g_assert_cmpint(lookup_beneath(root_fd, "a", O_RDWR | O_TMPFILE, 0), ==, -EINVAL);
        g_assert_cmpint(lookup_beneath(root_fd, "a/file", O_RDONLY, 0), ==, -EINVAL);
        g_assert_cmpint(lookup_beneath(root_fd, "a/fifo", O_RDONLY | O_NONBLOCK, 0), ==, -EINVAL);
        g_assert_cmpint(lookup_beneath(root_fd, "a", O_PATH | O_NOFOLLOW, 0), ==, -EINVAL);
        g_assert_cmpint(lookup_beneath(root_fd, long_path, O_PATH, 0), ==, -ENAMETOOLONG);
}

/* A link someone else owns in a sticky directory others can write to is not followed
 * (fs.protected_symlinks, whatever the sysctl says); one the directory's owner made is. */
static void test_protected_symlinks(void) {
        g_autofree char *theirs = g_build_filename(test_dir, "root/sticky/theirs", NULL);
        int fd;

        g_assert_cmpint(lchown(theirs, 65534, 65534), ==, 0);
        g_assert_cmpint(lookup_beneath(root_fd, "sticky/theirs", O_PATH, 0), ==, -EACCES);
        fd = lookup_beneath(root_fd, "sticky/owners", O_PATH | O_DIRECTORY, 0);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
}

/* More than 40 links in one walk (each step a different link) is ELOOP, as in the kernel. */
static void test_link_limit(void) {
        Case ok = { "hop30", O_PATH, 0 }, too_many = { "hop45", O_PATH, 0 };

        g_assert_cmpint(compare(root_fd, &ok), ==, 0);
        g_assert_cmpint(compare(root_fd, &too_many), ==, -ELOOP);
}

/* As an unprivileged process: search permission is checked as open() checks it. */
static void unprivileged_child(void *data) {
        static const Case denied[] = {
                { "secret/inner", O_PATH, LOOKUP_NO_SYMLINKS },
                { "secret", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
                { "a/b/c", O_RDONLY | O_DIRECTORY, LOOKUP_NO_SYMLINKS },
                { "a/private-file", O_PATH, LOOKUP_NO_SYMLINKS },
                /* "." and ".." need search permission too */
                { "secret/.", O_PATH, LOOKUP_NO_SYMLINKS },
                { "secret/..", O_PATH, 0 },
                { "secret/../a", O_PATH | O_DIRECTORY, 0 },
        };

        g_assert_cmpint(setresgid(65534, 65534, 65534), ==, 0);
        g_assert_cmpint(setresuid(65534, 65534, 65534), ==, 0);
        for (size_t i = 0; i < ELEMENTSOF(denied); i++)
                compare(root_fd, &denied[i]);
        g_assert_cmpint(lookup_beneath(root_fd, "secret/inner", O_PATH, 0), ==, -EACCES);
}

static void test_unprivileged(void) {
        ku_wait_ok(ku_fork(unprivileged_child, NULL));
}

/* Under a seccomp filter that answers ENOSYS for openat2(), as systemd's RestrictSUIDSGID=
 * does, the walk still resolves and refuses as above. */
static void seccomp_child(void *data) {
        struct sock_filter filter[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = ELEMENTSOF(filter), .filter = filter };
        struct open_how how = { .flags = O_PATH };
        int fd;

        g_assert_cmpint(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), ==, 0);
        g_assert_cmpint(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), ==, 0);
        g_assert_cmpint(syscall(SYS_openat2, root_fd, "a", &how, sizeof(how)), <, 0);
        g_assert_cmpint(errno, ==, ENOSYS);
        fd = lookup_beneath(root_fd, "rel/c", O_RDONLY | O_DIRECTORY, 0);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
        g_assert_cmpint(lookup_beneath(root_fd, "rel/c", O_PATH, LOOKUP_NO_SYMLINKS), ==, -ELOOP);
        g_assert_cmpint(lookup_beneath(root_fd, "abs", O_PATH, 0), ==, -EXDEV);
        g_assert_cmpint(lookup_beneath(root_fd, "mnt/d", O_PATH, LOOKUP_NO_XDEV), ==, -EXDEV);
}

static void test_under_seccomp(void) {
        ku_wait_ok(ku_fork(seccomp_child, NULL));
}

static void make_tree(void) {
        static const char *const dirs[] = { "root", "root/a", "root/a/b", "root/a/b/c",
                "root/mnt", "root/proc", "root/secret", "root/secret/inner", "root/sticky" };
        static const struct {
                const char *target, *link;
        } links[] = {
                { "a/b", "root/rel" },        { "/etc", "root/abs" },
                { "/a/b", "root/abs-inside" }, { "..", "root/up" },
                { "../../..", "root/a/b/up2" }, { "../../a/b", "root/a/b/dotdot" },
                { "chain2", "root/chain" },   { "a/b/../file", "root/chain2" },
                { "loop2", "root/loop1" },    { "loop1", "root/loop2" },
                { "nothing", "root/dangling" }, { "a/file", "root/rel-file" },
                { "../a", "root/sticky/theirs" }, { "../a", "root/sticky/owners" },
        };
        g_autofree char *file = g_build_filename(test_dir, "root/a/file", NULL);
        g_autofree char *private = g_build_filename(test_dir, "root/a/private-file", NULL);
        g_autofree char *fifo = g_build_filename(test_dir, "root/a/fifo", NULL);
        g_autofree char *mnt = g_build_filename(test_dir, "root/mnt", NULL);
        g_autofree char *proc = g_build_filename(test_dir, "root/proc", NULL);
        g_autofree char *secret = g_build_filename(test_dir, "root/secret", NULL);
        g_autofree char *mnt_d = NULL, *root = NULL;

        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                g_autofree char *p = g_build_filename(test_dir, dirs[i], NULL);

                g_assert_cmpint(mkdir(p, 0755), ==, 0);
        }
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                g_autofree char *p = g_build_filename(test_dir, links[i].link, NULL);

                g_assert_cmpint(symlink(links[i].target, p), ==, 0);
        }
        /* hopN -> hop(N-1) -> ... -> hop0 -> a: N + 1 links in one walk. */
        for (int i = 0; i <= 45; i++) {
                g_autofree char *p = g_strdup_printf("%s/root/hop%d", test_dir, i);
                g_autofree char *t = i == 0 ? g_strdup("a") : g_strdup_printf("hop%d", i - 1);

                g_assert_cmpint(symlink(t, p), ==, 0);
        }
        g_assert_true(g_file_set_contents(file, "x", -1, NULL));
        g_assert_true(g_file_set_contents(private, "x", -1, NULL));
        g_assert_cmpint(chmod(private, 0600), ==, 0);
        g_assert_cmpint(mkfifo(fifo, 0644), ==, 0);
        g_assert_cmpint(chmod(secret, 0700), ==, 0);
        {
                g_autofree char *sticky = g_build_filename(test_dir, "root/sticky", NULL);

                g_assert_cmpint(chmod(sticky, 01777), ==, 0);
        }
        g_assert_cmpint(mount("tmpfs", mnt, "tmpfs", 0, "mode=0755"), ==, 0);
        mnt_d = g_build_filename(mnt, "d", NULL);
        g_assert_cmpint(mkdir(mnt_d, 0755), ==, 0);
        g_assert_cmpint(mount("/proc", proc, NULL, MS_BIND | MS_REC, NULL), ==, 0);

        root = g_build_filename(test_dir, "root", NULL);
        root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        g_assert_cmpint(root_fd, >=, 0);
}

int main(int argc, char **argv) {
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        /* Everything below lives on a tmpfs in this process's own mount namespace. */
        g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
        g_assert_cmpint(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
        g_assert_cmpint(mount("tmpfs", "/tmp", "tmpfs", 0, "mode=01777"), ==, 0);
        g_assert_cmpint(mkdir(test_dir, 0755), ==, 0);
        make_tree();

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                g_autofree char *name = g_strdup_printf("/lookup/as-openat2/%zu", i);

                g_test_add_data_func(name, &cases[i], test_case);
        }
        g_test_add_func("/lookup/procfs-magic-links", test_procfs_magic_links);
        g_test_add_func("/lookup/procfs-links-refused", test_procfs_links_refused);
        g_test_add_func("/lookup/bad-flags", test_bad_flags);
        g_test_add_func("/lookup/protected-symlinks", test_protected_symlinks);
        g_test_add_func("/lookup/link-limit", test_link_limit);
        g_test_add_func("/lookup/unprivileged", test_unprivileged);
        g_test_add_func("/lookup/under-seccomp", test_under_seccomp);
        r = g_test_run();

        root_fd = safe_close(root_fd);
        return r;
}
