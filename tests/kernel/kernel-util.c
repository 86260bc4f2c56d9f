/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers of the kernel-level tests (see kernel-util.h): images, isolated subprocesses,
 * mount-building workers, fd passing, user-namespace callers and leftover checks.
 */
#include <dirent.h>
#include <stdarg.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fd-util.h"
#include "kernel-util.h"
#include "loop.h"
#include "macro.h"
#include "mountbuild.h"
#include "stagens.h"

#define KU_ENV_DIR "UM_KERNEL_TEST_DIR"

const char *const ku_fstypes[] = { "ext4", "xfs", "btrfs", "squashfs", "erofs", NULL };

static char *test_dir;
static char *stage_dir;
static GHashTable *images;       /* name -> path, for images that were made */
static GHashTable *skip_reasons; /* name -> why it was not made */

const char *ku_dir(void) {
        return test_dir;
}

const char *ku_stage_dir(void) {
        return stage_dir;
}

/* ---- images ---------------------------------------------------------------------- */

static char *find_tool(const char *name) {
        static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
        char *p = g_find_program_in_path(name);

        for (size_t i = 0; !p && i < ELEMENTSOF(dirs); i++) {
                char *c = g_build_filename(dirs[i], name, NULL);

                if (access(c, X_OK) == 0)
                        p = c;
                else
                        g_free(c);
        }
        return p;
}

static void run_or_die(const char *const *argv) {
        g_autoptr(GError) err = NULL;
        g_autofree char *out = NULL, *errout = NULL;
        int status = 0;

        if (!g_spawn_sync(NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &errout,
                          &status, &err))
                g_error("could not run %s: %s", argv[0], err->message);
        if (!g_spawn_check_wait_status(status, &err))
                g_error("%s failed: %s\n%s%s", argv[0], err->message, out, errout);
}

static void make_sparse(const char *path, off_t size) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(ftruncate(fd, size), ==, 0);
        close(fd);
}

/* Sets a v2 security.capability xattr (cap_dac_override+ep) without needing setcap. */
static void set_file_cap(const char *path) {
        struct vfs_cap_data cap = {
                .magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
                .data[0].permitted = 1u << CAP_DAC_OVERRIDE,
        };

        g_assert_cmpint(setxattr(path, "security.capability", &cap, XATTR_CAPS_SZ_2, 0), ==, 0);
}

/* The tree every populated image holds. */
static char *make_tree(void) {
        char *tree = g_build_filename(test_dir, "tree", NULL);
        g_autofree char *hello = g_build_filename(tree, "hello.txt", NULL);
        g_autofree char *mem = g_build_filename(tree, "mem", NULL);
        g_autofree char *suid = g_build_filename(tree, "suid-grep", NULL);
        g_autofree char *caps = g_build_filename(tree, "caps-grep", NULL);
        g_autofree char *grep = find_tool("grep");
        g_autofree char *data = NULL;
        gsize len;

        g_assert_nonnull(grep);
        g_assert_cmpint(mkdir(tree, 0755), ==, 0);
        g_assert_cmpint(chmod(tree, 0755), ==, 0);
        g_assert_true(g_file_set_contents(hello, "hello from usermount\n", -1, NULL));
        g_assert_cmpint(chmod(hello, 0644), ==, 0);
        /* Char 1:1 is /dev/mem: root-only on the host, world-readable in the image. */
        g_assert_cmpint(mknod(mem, S_IFCHR | 0666, makedev(1, 1)), ==, 0);
        g_assert_cmpint(chmod(mem, 0666), ==, 0);
        g_assert_true(g_file_get_contents(grep, &data, &len, NULL));
        g_assert_true(g_file_set_contents(suid, data, (gssize) len, NULL));
        g_assert_true(g_file_set_contents(caps, data, (gssize) len, NULL));
        g_assert_cmpint(chown(suid, 0, 0), ==, 0);
        g_assert_cmpint(chmod(suid, 04755), ==, 0);
        g_assert_cmpint(chmod(caps, 0755), ==, 0);
        set_file_cap(caps);
        return tree;
}

static void add_image(const char *name, const char *path) {
        g_hash_table_insert(images, g_strdup(name), g_strdup(path));
}

static void skip_image(const char *name, const char *tool) {
        g_hash_table_insert(skip_reasons, g_strdup(name),
                            g_strdup_printf("%s is not installed; no %s image", tool, name));
        g_printerr("# skipping %s images: %s not found\n", name, tool);
}

static void make_mkfs_image(const char *name, const char *tree, off_t size) {
        g_autofree char *path = g_strdup_printf("%s/%s.img", test_dir, name);
        g_autofree char *label = g_strdup_printf("um-%s", name);
        const char *tool_name = streq(name, "squashfs") ? "mksquashfs" : NULL;
        g_autofree char *mkfs = g_strdup_printf("mkfs.%s", name);
        g_autofree char *tool = find_tool(tool_name ? tool_name : mkfs);

        if (!tool) {
                skip_image(name, tool_name ? tool_name : mkfs);
                return;
        }
        if (size > 0)
                make_sparse(path, size);
        if (streq(name, "ext4"))
                run_or_die((const char *const[]) { tool, "-q", "-F", "-L", label, "-d", tree, path,
                                                   NULL });
        else if (streq(name, "xfs"))
                run_or_die((const char *const[]) { tool, "-q", "-L", label, path, NULL });
        else if (streq(name, "btrfs"))
                run_or_die((const char *const[]) { tool, "-q", "-L", label, "--rootdir", tree,
                                                   path, NULL });
        else if (streq(name, "squashfs"))
                run_or_die((const char *const[]) { tool, tree, path, "-quiet", "-noappend",
                                                   "-no-progress", NULL });
        else
                run_or_die((const char *const[]) { tool, "--quiet", path, tree, NULL });
        add_image(name, path);
}

/* A 16 MiB disk image with a GPT and two partitions, made by sfdisk. */
static void make_parted_image(void) {
        g_autofree char *path = g_strdup_printf("%s/parted.img", test_dir);
        g_autofree char *sfdisk = find_tool("sfdisk");

        if (!sfdisk) {
                skip_image("parted", "sfdisk");
                return;
        }
        make_sparse(path, 16 << 20);
        run_or_die((const char *const[]) { "/bin/sh", "-c",
                                           "printf 'label: gpt\\n,4M\\n,4M\\n' | \"$0\" -q \"$1\"",
                                           sfdisk, path, NULL });
        add_image("parted", path);
}

/* The partitioned images of tests/make-partitioned-image.sh, as "part-KIND". */
static const char *const part_kinds[] = { "gpt", "gpt-one", "mbr", "beyond", "empty", "many" };

static void make_partitioned_images(void) {
        g_autofree char *sfdisk = find_tool("sfdisk");

        for (size_t i = 0; i < ELEMENTSOF(part_kinds); i++) {
                g_autofree char *name = g_strdup_printf("part-%s", part_kinds[i]);
                g_autofree char *path = g_strdup_printf("%s/%s.img", test_dir, name);

                if (!sfdisk) {
                        skip_image(name, "sfdisk");
                        continue;
                }
                run_or_die((const char *const[]) { "/bin/sh", PART_IMAGE_SCRIPT, part_kinds[i],
                                                   path, NULL });
                add_image(name, path);
        }
}

/* ext4 with the first sector of the xfs image over it: two valid signatures. */
static void make_ambiguous_image(void) {
        g_autofree char *path = g_strdup_printf("%s/ambiguous.img", test_dir);
        const char *ext4 = g_hash_table_lookup(images, "ext4");
        const char *xfs = g_hash_table_lookup(images, "xfs");
        g_autofree char *data = NULL, *sector = NULL;
        gsize len, slen;

        if (!ext4 || !xfs) {
                skip_image("ambiguous", "mkfs.ext4 or mkfs.xfs");
                return;
        }
        g_assert_true(g_file_get_contents(ext4, &data, &len, NULL));
        g_assert_true(g_file_get_contents(xfs, &sector, &slen, NULL));
        memcpy(data, sector, 512);
        g_assert_true(g_file_set_contents(path, data, (gssize) len, NULL));
        add_image("ambiguous", path);
}

static void make_images(void) {
        g_autofree char *tree = make_tree();
        g_autofree char *zeros = g_strdup_printf("%s/zeros.img", test_dir);
        g_autofree char *empty = g_strdup_printf("%s/empty.img", test_dir);

        make_mkfs_image("ext4", tree, 32 << 20);
        make_mkfs_image("xfs", tree, 320 << 20); /* mkfs.xfs refuses less than 300 MiB */
        make_mkfs_image("btrfs", tree, 128 << 20);
        make_mkfs_image("squashfs", tree, 0);
        make_mkfs_image("erofs", tree, 0);
        make_parted_image();
        make_partitioned_images();
        make_ambiguous_image();
        make_sparse(zeros, 1 << 20);
        add_image("zeros", zeros);
        make_sparse(empty, 0);
        add_image("empty", empty);
}

/*
 * What a kernel test makes outside its mount namespace ("/tmp/usermount-kernel-PID-XXXXXX"
 * and "/var/tmp/um-kernel-test-PID-XXXXXX") carries the pid of the test that made it. A
 * test killed with SIGKILL, or one whose assertion failed in the middle of making images,
 * cannot remove its own; the next test removes those whose process is gone.
 */
static void sweep_dead_owners(const char *parent, const char *prefix) {
        _cleanup_(closedirp) DIR *d = opendir(parent);
        struct dirent *de;
        size_t n = strlen(prefix);

        while (d && (de = readdir(d))) {
                char *end = NULL;
                long pid;

                if (strncmp(de->d_name, prefix, n) != 0)
                        continue;
                errno = 0;
                pid = strtol(de->d_name + n, &end, 10);
                if (errno != 0 || pid <= 0 || !end || *end != '-')
                        continue;
                if (kill((pid_t) pid, 0) == 0 || errno != ESRCH)
                        continue;

                g_autofree char *path = g_build_filename(parent, de->d_name, NULL);
                const char *const argv[] = { "/bin/rm", "-rf", "--one-file-system", path, NULL };

                run_or_die(argv);
        }
}

void ku_images_setup(void) {
        g_autoptr(GError) err = NULL;

        images = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
        skip_reasons = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);

        if (g_test_subprocess()) {
                /* The parent made everything; the images that exist are the ones made. */
                static const char *const names[] = { "ext4", "xfs", "btrfs", "squashfs",
                                                     "erofs", "parted", "ambiguous", "zeros",
                                                     "empty", "part-gpt", "part-gpt-one",
                                                     "part-mbr", "part-beyond", "part-empty",
                                                     "part-many" };

                test_dir = g_strdup(g_getenv(KU_ENV_DIR));
                g_assert_nonnull(test_dir);
                for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                        g_autofree char *p = g_strdup_printf("%s/%s.img", test_dir, names[i]);

                        if (access(p, F_OK) == 0)
                                add_image(names[i], p);
                }
        } else {
                g_autofree char *template = g_strdup_printf("usermount-kernel-%d-XXXXXX",
                                                            (int) getpid());

                sweep_dead_owners(g_get_tmp_dir(), "usermount-kernel-");
                sweep_dead_owners("/var/tmp", "um-kernel-test-");
                test_dir = g_dir_make_tmp(template, &err);
                g_assert_no_error(err);
                g_setenv(KU_ENV_DIR, test_dir, TRUE);
        }
        stage_dir = g_build_filename(test_dir, "stage", NULL);
        if (!g_test_subprocess()) {
                g_assert_cmpint(mkdir(stage_dir, 0700), ==, 0);
                make_images();
        }
}

void ku_images_teardown(void) {
        if (!g_test_subprocess() && test_dir) {
                const char *const argv[] = { "/bin/rm", "-rf", "--one-file-system", test_dir,
                                             NULL };

                g_assert_cmpint(ku_wait_loops_released(), ==, 0);
                run_or_die(argv);
        }
        g_clear_pointer(&images, g_hash_table_unref);
        g_clear_pointer(&skip_reasons, g_hash_table_unref);
        g_clear_pointer(&test_dir, g_free);
        g_clear_pointer(&stage_dir, g_free);
}

const char *ku_image(const char *name) {
        const char *p = g_hash_table_lookup(images, name);

        if (!p) {
                const char *why = g_hash_table_lookup(skip_reasons, name);

                g_test_skip(why ? why : "image not available");
        }
        return p;
}

/* ---- isolated tests ---------------------------------------------------------------- */

typedef struct KuTest {
        void (*body)(const char *arg);
        const char *arg;
        const char *needs;
} KuTest;

static void enter_private_mount_namespace(void) {
        g_assert_cmpint(unshare(CLONE_NEWNS), ==, 0);
        g_assert_cmpint(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), ==, 0);
}

static bool dir_is_empty(const char *path) {
        g_autoptr(GDir) d = g_dir_open(path, 0, NULL);

        g_assert_nonnull(d);
        return g_dir_read_name(d) == NULL;
}

/* The test directory holds what setup made and nothing else (targets, staging dirs). */
static void assert_test_dir_clean(void) {
        g_autoptr(GDir) d = g_dir_open(test_dir, 0, NULL);
        const char *name;

        g_assert_nonnull(d);
        while ((name = g_dir_read_name(d)))
                if (!streq(name, "stage") && !streq(name, "tree") &&
                    !g_str_has_suffix(name, ".img"))
                        g_test_fail_printf("left behind in the test directory: %s", name);
}

static void run_test(gconstpointer data) {
        const KuTest *t = data;
        int fds;

        if (g_test_subprocess()) {
                enter_private_mount_namespace();
                fds = ku_count_fds();
                t->body(t->arg);
                g_assert_cmpint(ku_count_fds(), ==, fds);
                return;
        }
        if (t->needs && !ku_image(t->needs))
                return;
        fds = ku_count_fds();
        g_test_trap_subprocess(NULL, 240 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
        /* Nothing left behind, seen from the host's mount namespace. */
        g_assert_cmpint(ku_wait_loops_released(), ==, 0);
        g_assert_false(ku_mountinfo_has_path_under(0, test_dir));
        g_assert_true(dir_is_empty(stage_dir));
        assert_test_dir_clean();
        g_assert_cmpint(ku_count_fds(), ==, fds);
}

void ku_add(const char *path, void (*body)(const char *arg), const char *arg, const char *needs) {
        KuTest *t = g_new0(KuTest, 1); /* lives as long as the test program */

        *t = (KuTest) { .body = body, .arg = arg, .needs = needs };
        g_test_add_data_func(path, t, run_test);
}

/* ---- fds, loops, mounts ------------------------------------------------------------ */

void ku_note(const char *fmt, ...) {
        g_autofree char *m = NULL;
        va_list ap;

        va_start(ap, fmt);
        m = g_strdup_vprintf(fmt, ap);
        va_end(ap);
        g_printerr("# %s\n", m);
}

int ku_count_fds(void) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        int n = 0;

        /* In a namespace without /proc (a build in the stage namespace): ask each number. */
        if (!d && errno == ENOENT) {
                for (int fd = 0; fd < 4096; fd++)
                        if (fcntl(fd, F_GETFD) >= 0)
                                n++;
                return n;
        }
        g_assert_nonnull(d);
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n - 1; /* the directory's own fd */
}

static char *read_trimmed(const char *path) {
        char *s = NULL;

        if (!g_file_get_contents(path, &s, NULL, NULL))
                return NULL;
        g_strchomp(s);
        return s;
}

int ku_loops_on_test_images(void) {
        glob_t g = {};
        int n = 0;

        if (glob("/sys/block/loop*/loop/backing_file", 0, NULL, &g) != 0)
                return 0;
        for (size_t i = 0; i < g.gl_pathc; i++) {
                g_autofree char *b = read_trimmed(g.gl_pathv[i]);

                if (b && g_str_has_prefix(b, test_dir))
                        n++;
        }
        globfree(&g);
        return n;
}

int ku_wait_loops_released(void) {
        /* Autoclear runs when the last opener closes, possibly from a work queue. */
        gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
        int n;

        while ((n = ku_loops_on_test_images()) > 0 && g_get_monotonic_time() < deadline)
                g_usleep(10 * 1000);
        return n;
}

char *ku_loop_attr(const char *dev_path, const char *attr) {
        g_autofree char *base = g_path_get_basename(dev_path);
        g_autofree char *p = g_strdup_printf("/sys/block/%s/%s", base, attr);

        return read_trimmed(p);
}

unsigned long ku_fd_flags(int fd) {
        struct statvfs sv;

        g_assert_cmpint(fstatvfs(fd, &sv), ==, 0);
        return sv.f_flag;
}

/* Calls fn(mount point, per-mount options) for each line of /proc/self/mountinfo. */
static void mountinfo_foreach(pid_t pid, void (*fn)(const char *mp, const char *opts, void *u),
                              void *u) {
        g_autofree char *path = pid > 0 ? g_strdup_printf("/proc/%d/mountinfo", (int) pid) :
                                          g_strdup("/proc/self/mountinfo");
        g_autofree char *text = NULL;
        g_auto(GStrv) lines = NULL;

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        lines = g_strsplit(text, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_auto(GStrv) f = g_strsplit(*l, " ", 7);

                if (g_strv_length(f) >= 6)
                        fn(f[4], f[5], u);
        }
}

typedef struct {
        const char *path;
        char *opts;
        bool under;
} MountinfoQuery;

static void match_path(const char *mp, const char *opts, void *u) {
        MountinfoQuery *q = u;

        if (streq(mp, q->path)) {
                g_free(q->opts);
                q->opts = g_strdup(opts); /* the last one is the top of the stack */
        }
        if (g_str_has_prefix(mp, q->path))
                q->under = true;
}

char *ku_mountinfo_options(const char *path) {
        MountinfoQuery q = { .path = path };

        mountinfo_foreach(0, match_path, &q);
        return q.opts;
}

bool ku_mountinfo_has_path_under(pid_t pid, const char *dir) {
        MountinfoQuery q = { .path = dir };

        mountinfo_foreach(pid, match_path, &q);
        g_free(q.opts);
        return q.under;
}

void ku_options(MountOptions *o, const char *fstype, bool read_only, bool exec) {
        static MountOption ext4_items[] = { { .key = "errors", .value = "remount-ro" } };

        *o = (MountOptions) {
                .attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | (exec ? 0 : MOUNT_ATTR_NOEXEC) |
                            (read_only ? MOUNT_ATTR_RDONLY : 0),
                .read_only = read_only,
        };
        if (streq(fstype, "ext4")) {
                o->items = ext4_items;
                o->n_items = ELEMENTSOF(ext4_items);
        }
}

/* ---- processes and fd passing ------------------------------------------------------ */

void ku_send(int sock, const void *data, size_t size, int fd) {
        const struct iovec iov = { .iov_base = (void *) data, .iov_len = size };

        g_assert_cmpint(fdpass_send(sock, &iov, 1, &fd, fd >= 0 ? 1 : 0), ==, 0);
}

int ku_recv(int sock, void *data, size_t size) {
        int fd = -1;
        size_t n_fds;

        g_assert_cmpint(fdpass_recv(sock, data, size, &fd, 1, &n_fds, 0), ==, (ssize_t) size);
        return n_fds > 0 ? fd : -1;
}

pid_t ku_fork(void (*fn)(void *data), void *data) {
        pid_t pid;

        fflush(NULL);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                fn(data);
                _exit(0);
        }
        return pid;
}

void ku_wait_ok(pid_t pid) {
        int status = 0;

        g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
        if (WIFSIGNALED(status))
                g_error("child %d was killed by signal %d", (int) pid, WTERMSIG(status));
        g_assert_true(WIFEXITED(status));
        g_assert_cmpint(WEXITSTATUS(status), ==, 0);
}

pid_t ku_occupy_uid(uid_t uid) {
        int sync_pipe[2];
        pid_t pid;
        char b;

        g_assert_cmpint(pipe2(sync_pipe, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
                        _exit(1);
                (void) !write(sync_pipe[1], "x", 1);
                pause();
                _exit(0);
        }
        close(sync_pipe[1]);
        g_assert_cmpint(read(sync_pipe[0], &b, 1), ==, 1);
        close(sync_pipe[0]);
        return pid;
}

void ku_occupy_end(pid_t pid) {
        g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
        g_assert_cmpint(waitpid(pid, NULL, 0), ==, pid);
}

static void write_file(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t) strlen(text));
        close(fd);
}

void ku_become_userns_root(void) {
        char map[64];

        g_assert_cmpint(setgroups(0, NULL), ==, 0);
        g_assert_cmpint(setresgid(KU_TEST_GID, KU_TEST_GID, KU_TEST_GID), ==, 0);
        g_assert_cmpint(setresuid(KU_TEST_UID, KU_TEST_UID, KU_TEST_UID), ==, 0);
        /* Dropping root made us non-dumpable, which would leave the id map files owned by root. */
        g_assert_cmpint(prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), ==, 0);
        g_assert_cmpint(unshare(CLONE_NEWUSER | CLONE_NEWNS), ==, 0);
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof(map), "0 %d 1", KU_TEST_UID);
        write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof(map), "0 %d 1", KU_TEST_GID);
        write_file("/proc/self/gid_map", map);
        g_assert_cmpint(geteuid(), ==, 0);
}

char *ku_run_as_test_user(int dirfd, const char *path, const char *const *argv, int *ret_errno) {
        int out[2], report[2], child_errno = 0;
        GString *s = g_string_new(NULL);
        char buf[512];
        ssize_t n;
        pid_t pid;

        g_assert_cmpint(pipe2(out, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(report, O_CLOEXEC), ==, 0);
        pid = fork();
        g_assert_cmpint(pid, >=, 0);
        if (pid == 0) {
                char *const envp[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", NULL };
                int e;

                if (dup2(out[1], STDOUT_FILENO) < 0 || setgroups(0, NULL) < 0 ||
                    setresgid(KU_TEST_GID, KU_TEST_GID, KU_TEST_GID) < 0 ||
                    setresuid(KU_TEST_UID, KU_TEST_UID, KU_TEST_UID) < 0)
                        _exit(126);
                execveat(dirfd, path, (char *const *) argv, envp, 0);
                e = errno;
                if (write(report[1], &e, sizeof(e)) < 0)
                        _exit(125);
                _exit(127);
        }
        close(out[1]);
        close(report[1]);
        while ((n = read(out[0], buf, sizeof(buf))) > 0)
                g_string_append_len(s, buf, n);
        if (read(report[0], &child_errno, sizeof(child_errno)) != sizeof(child_errno))
                child_errno = 0;
        close(out[0]);
        close(report[0]);
        waitpid(pid, NULL, 0);
        *ret_errno = child_errno;
        return g_string_free(s, FALSE);
}

/* ---- the mount-building worker ----------------------------------------------------- */

typedef struct BuildArgs {
        const KuBuildSpec *spec;
        int sock;
} BuildArgs;

static void build_worker(void *data) {
        const BuildArgs *a = data;
        const KuBuildSpec *s = a->spec;
        _cleanup_close_ int image_fd = -EBADF, loop_fd = -EBADF, mount_fd = -EBADF;
        _cleanup_free_ char *loop_path = NULL;
        KuBuild res = {};
        int before = ku_count_fds();

        if (s->image) {
                image_fd = open(s->image, (s->image_read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
                g_assert_cmpint(image_fd, >=, 0);
                if (s->from_file)
                        loop_path = g_strdup_printf("/proc/self/fd/%d", image_fd);
                else
                        res.r = loop_attach(image_fd, s->loop_read_only, &loop_fd, &loop_path,
                                            &res.error);
                if (res.r >= 0 && !s->from_file) {
                        g_autofree char *ro = ku_loop_attr(loop_path, "ro");

                        g_strlcpy(res.loop_path, loop_path, sizeof(res.loop_path));
                        g_strlcpy(res.loop_ro, ro ? ro : "?", sizeof(res.loop_ro));
                        res.loop_fd_accmode = fcntl(loop_fd, F_GETFL) & O_ACCMODE;
                        res.loop_fd_cloexec = !!(fcntl(loop_fd, F_GETFD) & FD_CLOEXEC);
                }
        }
        if (res.r >= 0) {
                MountSpec spec = {
                        .fstype = s->fstype,
                        .source = s->source ? s->source : loop_path,
                        .options = s->options,
                        .file_unsupported = s->from_file ? &res.file_unsupported : NULL,
                };

                _cleanup_close_ int ns_fd = -EBADF;

                /* As usermountd does: a stage namespace made once, the build in a copy. */
                if (s->stage_ns)
                        res.r = stagens_make(stage_dir, &ns_fd);
                if (res.r < 0)
                        um_error_set(&res.error, UM_ERROR_KIND_FAILED, -res.r,
                                     "could not make the stage namespace");
                else if (s->stage_ns)
                        res.r = mountbuild_locked_in(&spec, ns_fd, "/" JOB_STAGE_DIR, &mount_fd,
                                                     &res.error);
                else
                        res.r = mountbuild_locked(&spec, s->stage ? s->stage : stage_dir,
                                                  &mount_fd, &res.error);
                if (res.r >= 0) {
                        res.id_r = mountbuild_mount_id(mount_fd, &res.mount_id);
                        res.mount_fd_cloexec = !!(fcntl(mount_fd, F_GETFD) & FD_CLOEXEC);
                }
        }
        loop_fd = safe_close(loop_fd);
        image_fd = safe_close(image_fd);
        res.fds_leaked = ku_count_fds() - before - (mount_fd >= 0 ? 1 : 0);
        ku_send(a->sock, &res, sizeof(res), mount_fd);
}

int ku_build(const KuBuildSpec *spec, KuBuild *ret) {
        BuildArgs a = { .spec = spec };
        int sv[2], fd;
        pid_t pid;

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), ==, 0);
        a.sock = sv[1];
        pid = ku_fork(build_worker, &a);
        close(sv[1]);
        fd = ku_recv(sv[0], ret, sizeof(*ret));
        close(sv[0]);
        ku_wait_ok(pid);
        g_assert_cmpint(ret->fds_leaked, ==, 0);
        if (ret->r >= 0) {
                g_assert_cmpint(fd, >=, 0);
                g_assert_true(ret->mount_fd_cloexec);
        } else {
                g_assert_cmpint(fd, <, 0);
                g_assert_cmpint(ret->error.kind, !=, UM_ERROR_KIND_NONE);
                g_assert_cmpint(ret->error.error, ==, -ret->r);
                g_assert_cmpstr(ret->error.message, !=, "");
        }
        return fd;
}

static char self_copy_dir[64];

static void self_copy_remove(void) {
        _cleanup_(closedirp) DIR *d = opendir(self_copy_dir);
        struct dirent *de;

        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void) unlinkat(dirfd(d), de->d_name, 0);
        (void) rmdir(self_copy_dir);
}

static char self_copy_exe[128];
static pid_t self_copy_owner;

/*
 * A failed assertion aborts and the test runner's timeout sends SIGTERM: neither runs
 * atexit(), so the copy is removed here too (unlink and rmdir are async-signal-safe; the
 * directory holds only the copy), and the signal then does what it would have done. Only
 * in the process that made it: a forked child that aborts or is killed leaves it.
 */
static void self_copy_remove_on_signal(int sig) {
        if (getpid() == self_copy_owner) {
                (void) unlink(self_copy_exe);
                (void) rmdir(self_copy_dir);
        }
        signal(sig, SIG_DFL);
        raise(sig);
}

const char *ku_self_copy(void) {
        char *exe = self_copy_exe;
        g_autofree char *contents = NULL;
        gsize size = 0;

        if (exe[0])
                return exe;
        g_assert_true(g_file_get_contents("/proc/self/exe", &contents, &size, NULL));
        snprintf(self_copy_dir, sizeof(self_copy_dir), "/var/tmp/um-kernel-test-%d-XXXXXX",
                 (int) getpid());
        g_assert_nonnull(mkdtemp(self_copy_dir));
        g_assert_cmpint(chmod(self_copy_dir, 0755), ==, 0);
        atexit(self_copy_remove);
        snprintf(exe, sizeof(self_copy_exe), "%s/fake-checker", self_copy_dir);
        self_copy_owner = getpid();
        signal(SIGABRT, self_copy_remove_on_signal);
        signal(SIGTERM, self_copy_remove_on_signal);
        g_assert_true(g_file_set_contents(exe, contents, (gssize) size, NULL));
        g_assert_cmpint(chmod(exe, 0755), ==, 0);
        return exe;
}

char *ku_probe_value(const char *msg, const char *key) {
        g_autofree char *k = g_strdup_printf(" %s=", key);
        const char *p = strstr(msg, k);

        if (!p)
                return NULL;
        p += strlen(k);
        return g_strndup(p, strcspn(p, " "));
}
