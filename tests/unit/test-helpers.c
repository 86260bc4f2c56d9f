/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the small helpers every program shares (shared/fs-util.c, include/time-util.h,
 * include/utf8.h, include/macro.h, shared/fstypes.c): each written once, tested here.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs-util.h"
#include "fstypes.h"
#include "macro.h"
#include "time-util.h"
#include "utf8.h"

static char *make_tmpdir(void) {
        g_autoptr(GError) error = NULL;
        char *dir = g_dir_make_tmp("um-helpers-XXXXXX", &error);

        g_assert_no_error(error);
        return dir;
}

static void test_same_inode(void) {
        g_autofree char *dir = make_tmpdir();
        g_autofree char *a = g_build_filename(dir, "a", NULL);
        g_autofree char *b = g_build_filename(dir, "b", NULL);
        struct stat sa, sb;
        int fa, fa2, fb;

        g_assert_true(g_file_set_contents(a, "x", 1, NULL));
        g_assert_true(g_file_set_contents(b, "y", 1, NULL));
        fa = open(a, O_RDONLY | O_CLOEXEC);
        fa2 = open(a, O_RDONLY | O_CLOEXEC);
        fb = open(b, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fa, >=, 0);
        g_assert_cmpint(fa2, >=, 0);
        g_assert_cmpint(fb, >=, 0);

        g_assert_cmpint(fd_same_inode(fa, fa2), ==, 1);
        g_assert_cmpint(fd_same_inode(fa, fb), ==, 0);
        g_assert_cmpint(fd_path_same_inode(fa, a), ==, 1);
        g_assert_cmpint(fd_path_same_inode(fa, b), ==, 0);
        g_assert_cmpint(fd_path_same_inode(fa, "/nonexistent/x"), ==, -ENOENT);
        g_assert_cmpint(fd_same_inode(fa, -1), ==, -EBADF);

        g_assert_cmpint(fstat(fa, &sa), ==, 0);
        g_assert_cmpint(fstat(fb, &sb), ==, 0);
        g_assert_true(stat_same_inode(&sa, &sa));
        g_assert_false(stat_same_inode(&sa, &sb));

        close(fa);
        close(fa2);
        close(fb);
        g_assert_cmpint(g_unlink(a), ==, 0);
        g_assert_cmpint(g_unlink(b), ==, 0);
        g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void test_dir_empty(void) {
        g_autofree char *dir = make_tmpdir();
        g_autofree char *f = g_build_filename(dir, "f", NULL);
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), file;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(dir_fd_is_empty(fd), ==, 1);
        g_assert_true(g_file_set_contents(f, "", 0, NULL));
        g_assert_cmpint(dir_fd_is_empty(fd), ==, 0);
        /* Asked again: the fd's own position is untouched. */
        g_assert_cmpint(dir_fd_is_empty(fd), ==, 0);
        file = open(f, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(dir_fd_is_empty(file), ==, -ENOTDIR);
        close(file);
        g_assert_cmpint(g_unlink(f), ==, 0);
        g_assert_cmpint(dir_fd_is_empty(fd), ==, 1);
        close(fd);
        g_assert_cmpint(g_rmdir(dir), ==, 0);
}

static void test_poll_until(void) {
        int p[2];
        struct pollfd pfd;
        uint64_t start;

        g_assert_cmpint(pipe2(p, O_CLOEXEC), ==, 0);
        pfd = (struct pollfd) { .fd = p[0], .events = POLLIN };

        /* Nothing ready: 0 once the deadline passed, not before. */
        start = now_usec(CLOCK_MONOTONIC);
        g_assert_cmpint(poll_until(&pfd, 1, start + 20000), ==, 0);
        g_assert_cmpuint(now_usec(CLOCK_MONOTONIC), >=, start + 20000);
        /* A deadline in the past: 0 at once. */
        g_assert_cmpint(poll_until(&pfd, 1, 0), ==, 0);
        /* Ready: the count (a failing poll() is -errno; not provoked here: a sanitizer's
         * poll() reads every entry it is told of). */
        g_assert_cmpint(write(p[1], "x", 1), ==, 1);
        g_assert_cmpint(poll_until(&pfd, 1, now_usec(CLOCK_MONOTONIC) + 1000000), ==, 1);
        g_assert_true(pfd.revents & POLLIN);
        close(p[0]);
        close(p[1]);
}

static void test_strings(void) {
        const char *const l[] = { "a", "bc", NULL };

        g_assert_true(strv_contains(l, "bc"));
        g_assert_false(strv_contains(l, "b"));
        g_assert_false(strv_contains(NULL, "a"));

        g_assert_true(utf8_char_control(0));
        g_assert_true(utf8_char_control(0x1b));
        g_assert_true(utf8_char_control(0x7f));
        g_assert_true(utf8_char_control(0x9b)); /* the 8-bit CSI */
        g_assert_false(utf8_char_control(' '));
        g_assert_false(utf8_char_control(0xa0));
        g_assert_false(utf8_char_control(0x202e)); /* a format character: utf8_char_unsafe()'s */
        /* Every control is unsafe too. */
        for (uint32_t cp = 0; cp < 0x110000; cp++)
                if (utf8_char_control(cp))
                        g_assert_true(utf8_char_unsafe(cp));
}

static void test_fstypes(void) {
        size_t n = 0;

        for (const char *const *t = fstype_names(); *t; t++, n++)
                g_assert_true(fstype_allowed(*t));
        g_assert_cmpuint(n, ==, 12);
        g_assert_false(fstype_allowed("tmpfs"));
        g_assert_false(fstype_allowed(NULL));
        g_assert_true(fstype_read_only("squashfs"));
        g_assert_true(fstype_read_only("erofs"));
        g_assert_true(fstype_read_only("iso9660"));
        g_assert_false(fstype_read_only("ext4"));
        g_assert_false(fstype_read_only("udf"));
        g_assert_false(fstype_read_only(NULL));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/helpers/same-inode", test_same_inode);
        g_test_add_func("/helpers/dir-empty", test_dir_empty);
        g_test_add_func("/helpers/poll-until", test_poll_until);
        g_test_add_func("/helpers/strings", test_strings);
        g_test_add_func("/helpers/fstypes", test_fstypes);
        return g_test_run();
}
