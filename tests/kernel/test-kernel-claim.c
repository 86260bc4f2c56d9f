/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * claim.h with real lock files: read-write claims of one range exclude each other and
 * read-only ones, read-only ones share, disjoint ranges do not meet; a lock file is a
 * FIFO, so the fd a driver inherits cannot grow a file (a write fills the pipe buffer and
 * then fails); a regular lock file of an older version is honoured while held and
 * replaced once not. Needs root (the loop devices are looked at).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "claim.h"
#include "macro.h"

typedef struct Env {
        char *dir;   /* the runtime directory */
        char *image; /* a file standing for an image */
        int image_fd;
} Env;

static void env_setup(Env *e) {
        e->dir = g_dir_make_tmp("test-claim-XXXXXX", NULL);
        g_assert_nonnull(e->dir);
        e->image = g_build_filename(e->dir, "image", NULL);
        g_assert_true(g_file_set_contents(e->image, "not a filesystem", -1, NULL));
        e->image_fd = open(e->image, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(e->image_fd, >=, 0);
}

static void env_done(Env *e) {
        g_autofree char *claims = g_build_filename(e->dir, CLAIM_DIR, NULL);
        g_autoptr(GDir) d = g_dir_open(claims, 0, NULL);
        const char *name;

        while (d && (name = g_dir_read_name(d))) {
                g_autofree char *p = g_build_filename(claims, name, NULL);

                g_assert_cmpint(unlink(p), ==, 0);
        }
        (void) rmdir(claims);
        close(e->image_fd);
        g_assert_cmpint(unlink(e->image), ==, 0);
        g_assert_cmpint(rmdir(e->dir), ==, 0);
        g_free(e->image);
        g_free(e->dir);
}

static int take(Env *e, uint64_t offset, uint64_t size, bool read_only, int *ret_fd) {
        UmError error = {};
        int r = claim_image(e->image_fd, offset, size, read_only, e->dir, ret_fd, &error);

        if (r == -EBUSY)
                g_assert_nonnull(strstr(error.message, "is in use"));
        return r;
}

static void test_ranges(void) {
        Env e = {};
        int a = -EBADF, b = -EBADF, c = -EBADF;

        env_setup(&e);
        g_assert_cmpint(take(&e, 0, 0, false, &a), ==, 0);
        g_assert_cmpint(take(&e, 0, 0, false, &b), ==, -EBUSY);
        g_assert_cmpint(take(&e, 0, 0, true, &b), ==, -EBUSY);
        a = safe_close(a);
        g_assert_cmpint(take(&e, 0, 0, true, &a), ==, 0);
        g_assert_cmpint(take(&e, 0, 0, true, &b), ==, 0);
        g_assert_cmpint(take(&e, 0, 0, false, &c), ==, -EBUSY);
        a = safe_close(a);
        b = safe_close(b);
        /* Two partitions: disjoint ranges, each read-write. */
        g_assert_cmpint(take(&e, 0, 4096, false, &a), ==, 0);
        g_assert_cmpint(take(&e, 4096, 4096, false, &b), ==, 0);
        g_assert_cmpint(take(&e, 2048, 4096, true, &c), ==, -EBUSY);
        safe_close(a);
        safe_close(b);
        env_done(&e);
}

/* The fd a driver inherits: on a FIFO, non-blocking; writes stop at the pipe's buffer. */
static void test_lock_file_cannot_grow(void) {
        g_autofree char *buf = g_malloc0(1 << 16);
        Env e = {};
        struct stat st;
        int fd = -EBADF;
        ssize_t n;
        size_t total = 0;

        env_setup(&e);
        g_assert_cmpint(take(&e, 0, 0, false, &fd), ==, 0);
        g_assert_cmpint(fstat(fd, &st), ==, 0);
        g_assert_true(S_ISFIFO(st.st_mode));
        g_assert_cmpint(st.st_mode & 07777, ==, 0600);
        g_assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
        while ((n = write(fd, buf, 1 << 16)) > 0 && total < (64u << 20))
                total += (size_t) n;
        g_assert_cmpint(n, ==, -1);
        g_assert_cmpint(errno, ==, EAGAIN);
        g_assert_cmpuint(total, <=, 1u << 20);
        safe_close(fd);
        env_done(&e);
}

/* A regular lock file of an older version: held, it is honoured; unheld, replaced. */
static void test_old_lock_file(void) {
        g_autofree char *claims = NULL, *path = NULL;
        Env e = {};
        struct stat st, img;
        int old, fd = -EBADF;
        struct flock all = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

        env_setup(&e);
        claims = g_build_filename(e.dir, CLAIM_DIR, NULL);
        g_assert_cmpint(mkdir(claims, 0700), ==, 0);
        g_assert_cmpint(fstat(e.image_fd, &img), ==, 0);
        path = g_strdup_printf("%s/image-%u.%u-%" G_GUINT64_FORMAT, claims,
                               major(img.st_dev), minor(img.st_dev), (guint64) img.st_ino);
        old = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        g_assert_cmpint(old, >=, 0);
        g_assert_cmpint(fcntl(old, F_OFD_SETLK, &all), ==, 0);
        g_assert_cmpint(take(&e, 0, 0, true, &fd), ==, -EBUSY);
        close(old);
        g_assert_cmpint(take(&e, 0, 0, false, &fd), ==, 0);
        g_assert_cmpint(lstat(path, &st), ==, 0);
        g_assert_true(S_ISFIFO(st.st_mode));
        safe_close(fd);
        env_done(&e);
}

/* Claimers of different images at once: each sweeps the others' unheld lock files, also
 * one made a moment ago and not opened yet; every claim still succeeds. */
static void test_concurrent_sweeps(void) {
        g_autofree char *dir = g_dir_make_tmp("test-claim-XXXXXX", NULL);
        pid_t pids[8];
        int status;

        g_assert_nonnull(dir);
        for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
                pids[i] = fork();
                g_assert_cmpint(pids[i], >=, 0);
                if (pids[i] == 0) {
                        g_autofree char *image = g_strdup_printf("%s/image-%zu", dir, i);
                        int image_fd;

                        if (!g_file_set_contents(image, "x", -1, NULL))
                                _exit(2);
                        image_fd = open(image, O_RDWR | O_CLOEXEC);
                        for (int k = 0; image_fd >= 0 && k < 300; k++) {
                                UmError error = {};
                                int fd = -EBADF;

                                if (claim_image(image_fd, 0, 0, false, dir, &fd, &error) < 0) {
                                        fprintf(stderr, "claim %d: %s\n", k, error.message);
                                        _exit(1);
                                }
                                close(fd);
                        }
                        _exit(image_fd >= 0 ? 0 : 3);
                }
        }
        for (size_t i = 0; i < G_N_ELEMENTS(pids); i++) {
                g_assert_cmpint(waitpid(pids[i], &status, 0), ==, pids[i]);
                g_assert_true(WIFEXITED(status));
                g_assert_cmpint(WEXITSTATUS(status), ==, 0);
        }
        {
                g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);

                g_assert_cmpint(system(rm), ==, 0);
        }
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP needs root\n");
                return 0;
        }
        g_test_add_func("/claim/ranges", test_ranges);
        g_test_add_func("/claim/lock-file-cannot-grow", test_lock_file_cannot_grow);
        g_test_add_func("/claim/old-lock-file", test_old_lock_file);
        g_test_add_func("/claim/concurrent-sweeps", test_concurrent_sweeps);
        return g_test_run();
}
