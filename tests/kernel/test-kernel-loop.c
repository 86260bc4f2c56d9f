/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * loop_attach() on real loop devices: a fresh device per call, bound with autoclear and
 * the right read-only state, an O_CLOEXEC fd with the requested access mode, nothing
 * bound after a refusal, distinct devices under a race, and release on the last close.
 */
#include <fcntl.h>
#include <glib/gstdio.h>
#include <glob.h>
#include <linux/loop.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kernel-util.h"
#include "loop.h"
#include "macro.h"

static int count_bound_loops(void) {
        glob_t g = {};
        int n;

        if (glob("/sys/block/loop*/loop", GLOB_ONLYDIR, NULL, &g) != 0)
                return 0;
        n = (int) g.gl_pathc;
        globfree(&g);
        return n;
}

static void assert_loop_state(const char *path, const char *image, const char *ro) {
        g_autofree char *backing = ku_loop_attr(path, "loop/backing_file");
        g_autofree char *autoclear = ku_loop_attr(path, "loop/autoclear");
        g_autofree char *ro_attr = ku_loop_attr(path, "ro");

        g_assert_true(g_regex_match_simple("^/dev/loop[0-9]+$", path, 0, 0));
        g_assert_cmpstr(backing, ==, image);
        g_assert_cmpstr(autoclear, ==, "1");
        g_assert_cmpstr(ro_attr, ==, ro);
}

static void assert_fd_is(int fd, const char *path, int accmode) {
        struct stat a, b;
        int flags = fcntl(fd, F_GETFL);

        g_assert_cmpint(flags & O_ACCMODE, ==, accmode);
        g_assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        g_assert_cmpint(fstat(fd, &a), ==, 0);
        g_assert_cmpint(stat(path, &b), ==, 0);
        g_assert_true(S_ISBLK(a.st_mode));
        g_assert_cmpuint(a.st_rdev, ==, b.st_rdev);
}

/* The device shows the image's bytes. */
static void assert_same_content(int loop_fd, int image_fd) {
        char a[4096], b[4096];

        g_assert_cmpint(pread(loop_fd, a, sizeof(a), 1024), ==, sizeof(a));
        g_assert_cmpint(pread(image_fd, b, sizeof(b), 1024), ==, sizeof(b));
        g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
}

static void test_attach_read_write(const char *arg) {
        const char *image = ku_image("ext4");
        _cleanup_close_ int image_fd = open(image, O_RDWR | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};
        int ro = -1;

        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, &e), ==, 0);
        assert_loop_state(path, image, "0");
        assert_fd_is(loop_fd, path, O_RDWR);
        g_assert_cmpint(ioctl(loop_fd, BLKROGET, &ro), ==, 0);
        g_assert_cmpint(ro, ==, 0);
        assert_same_content(loop_fd, image_fd);
}

static void test_attach_read_only(const char *arg) {
        const char *image = ku_image("ext4");
        _cleanup_close_ int image_fd = open(image, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF, rw_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char block[4096];
        UmError e = {};
        int ro = -1;

        g_assert_cmpint(loop_attach(image_fd, true, &loop_fd, &path, &e), ==, 0);
        assert_loop_state(path, image, "1");
        assert_fd_is(loop_fd, path, O_RDONLY);
        g_assert_cmpint(ioctl(loop_fd, BLKROGET, &ro), ==, 0);
        g_assert_cmpint(ro, ==, 1);
        assert_same_content(loop_fd, image_fd);
        /* root may open the device for writing (Linux allows it), but not write to it. */
        rw_fd = open(path, O_RDWR | O_CLOEXEC);
        g_assert_cmpint(rw_fd, >=, 0);
        memset(block, 0, sizeof(block));
        g_assert_cmpint(pwrite(rw_fd, block, sizeof(block), 0), <, 0);
        g_assert_cmpint(errno, ==, EPERM);
}

/* An O_RDONLY image fd cannot give a writable device, whatever was asked for. */
static void test_attach_read_only_fd(const char *arg) {
        const char *image = ku_image("ext4");
        _cleanup_close_ int image_fd = open(image, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        UmError e = {};

        g_assert_cmpint(loop_attach(image_fd, false, &loop_fd, &path, &e), ==, 0);
        assert_loop_state(path, image, "1");
}

static void assert_attach_refused(int fd, const char *what) {
        int loop_fd = 4242, before = count_bound_loops();
        char *path = (char *) "untouched";
        UmError e = {};
        int r;

        r = loop_attach(fd, false, &loop_fd, &path, &e);
        ku_note("%s: %s", what, e.message);
        g_assert_cmpint(r, <, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_INVALID_SOURCE);
        g_assert_cmpint(loop_fd, ==, 4242);
        g_assert_cmpstr(path, ==, "untouched");
        g_assert_cmpint(count_bound_loops(), ==, before);
}

static void test_attach_refusals(const char *arg) {
        _cleanup_close_ int dir_fd = open(ku_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);

        assert_attach_refused(dir_fd, "directory");
        assert_attach_refused(null_fd, "/dev/null");
        assert_attach_refused(-1, "no fd");
}

/* Closing the only fd of an unmounted device detaches it: nothing to clean up by hand. */
static void test_autoclear(const char *arg) {
        _cleanup_close_ int image_fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        _cleanup_free_ char *path = NULL;
        g_autofree char *sys = NULL;
        UmError e = {};
        int loop_fd = -EBADF;

        g_assert_cmpint(loop_attach(image_fd, true, &loop_fd, &path, &e), ==, 0);
        g_assert_cmpint(ku_loops_on_test_images(), ==, 1);
        close(loop_fd);
        g_assert_cmpint(ku_wait_loops_released(), ==, 0);
        sys = g_strdup_printf("/sys/block/%s/loop", path + strlen("/dev/"));
        g_assert_false(g_file_test(sys, G_FILE_TEST_EXISTS));
}

#define RACERS 8

typedef struct Racer {
        int image_fd;
        int report;   /* write end: the device path */
        int go;       /* read end: released all at once */
        int hold;     /* read end: keep the device until EOF */
        int go_w, hold_w; /* write ends, which the racers must not hold */
} Racer;

static void racer(void *data) {
        const Racer *a = data;
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        char report[64] = "", c;
        UmError e = {};

        close(a->go_w);
        close(a->hold_w);
        g_assert_cmpint(read(a->go, &c, 1), ==, 0);
        if (loop_attach(a->image_fd, true, &loop_fd, &path, &e) < 0)
                g_error("racer: %s", e.message);
        g_strlcpy(report, path, sizeof(report));
        g_assert_cmpint(write(a->report, report, sizeof(report)), ==, sizeof(report));
        g_assert_cmpint(read(a->hold, &c, 1), ==, 0);
}

/* Concurrent attaches each get their own device (LOOP_CTL_GET_FREE races are retried). */
static void test_attach_race(const char *arg) {
        _cleanup_close_ int image_fd = open(ku_image("ext4"), O_RDONLY | O_CLOEXEC);
        g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        int report[2], go[2], hold[2];
        pid_t pids[RACERS];
        Racer a;

        g_assert_cmpint(pipe2(report, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(go, O_CLOEXEC), ==, 0);
        g_assert_cmpint(pipe2(hold, O_CLOEXEC), ==, 0);
        a = (Racer) {
                .image_fd = image_fd,
                .report = report[1],
                .go = go[0],
                .hold = hold[0],
                .go_w = go[1],
                .hold_w = hold[1],
        };
        for (int i = 0; i < RACERS; i++)
                pids[i] = ku_fork(racer, &a);
        close(go[1]); /* all start */
        for (int i = 0; i < RACERS; i++) {
                char path[64];

                g_assert_cmpint(read(report[0], path, sizeof(path)), ==, sizeof(path));
                g_assert_false(g_hash_table_contains(seen, path));
                g_hash_table_add(seen, g_strdup(path));
        }
        g_assert_cmpint(ku_loops_on_test_images(), ==, RACERS);
        close(hold[1]); /* all finish */
        for (int i = 0; i < RACERS; i++)
                ku_wait_ok(pids[i]);
        close(report[0]);
        close(report[1]);
        close(go[0]);
        close(hold[0]);
        g_assert_cmpint(ku_wait_loops_released(), ==, 0);
}

/* tests/make-partitioned-image.sh "gpt": partitions 2 and 3, adjacent. */
#define P2_OFFSET (10240 * 512)
#define P2_SIZE (16384 * 512)
#define P3_OFFSET (26624 * 512)

/* A partition's loop device: offset and size limit set in the one LOOP_CONFIGURE call, the
 * device exactly the partition's bytes, nothing of the next partition readable. */
static void test_attach_range(const char *arg) {
        _cleanup_close_ int image_fd = open(ku_image("part-gpt"), O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        g_autofree char *offset = NULL, *sizelimit = NULL;
        char a[4096], b[4096];
        uint64_t size = 0;
        UmError e = {};

        g_assert_cmpint(loop_attach_range(image_fd, true, P2_OFFSET, P2_SIZE, NULL, &loop_fd,
                                          &path, &e), ==, 0);
        offset = ku_loop_attr(path, "loop/offset");
        sizelimit = ku_loop_attr(path, "loop/sizelimit");
        g_assert_cmpstr(offset, ==, "5242880");
        g_assert_cmpstr(sizelimit, ==, "8388608");
        assert_loop_state(path, ku_image("part-gpt"), "1");
        g_assert_cmpint(ioctl(loop_fd, BLKGETSIZE64, &size), ==, 0);
        g_assert_cmpuint(size, ==, P2_SIZE);
        /* The first and the last bytes are the partition's. */
        g_assert_cmpint(pread(loop_fd, a, sizeof(a), 0), ==, sizeof(a));
        g_assert_cmpint(pread(image_fd, b, sizeof(b), P2_OFFSET), ==, sizeof(b));
        g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
        g_assert_cmpint(pread(loop_fd, a, sizeof(a), P2_SIZE - sizeof(a)), ==, sizeof(a));
        g_assert_cmpint(pread(image_fd, b, sizeof(b), P3_OFFSET - sizeof(b)), ==, sizeof(b));
        g_assert_cmpmem(a, sizeof(a), b, sizeof(b));
        /* Partition 3 (a swap signature) is past the device's end. */
        g_assert_cmpint(pread(loop_fd, a, sizeof(a), P2_SIZE), ==, 0);
}

/*
 * The filesystem of partition 2 cannot reach partition 3: an ext4 whose superblock claims
 * 12 MiB on the 8 MiB partition (its last 4 MiB would be partition 3) is refused by the
 * kernel on the partition's loop device, and mounts on a loop device of the whole image
 * from the same offset (without the size limit), which is what the limit prevents.
 */
static void test_attach_range_limits_filesystem(const char *arg) {
        g_autofree char *image = g_build_filename(ku_dir(), "overlap.img", NULL);
        g_autofree char *dir = g_build_filename(ku_dir(), "overlap", NULL);
        g_autofree char *cmd = NULL;
        _cleanup_close_ int image_fd = -EBADF, loop_fd = -EBADF, whole_fd = -EBADF;
        _cleanup_free_ char *path = NULL, *whole = NULL;
        UmError e = {};

        cmd = g_strdup_printf("cp --sparse=always '%s' '%s' && mkfs.ext4 -q -F -E offset=%d "
                              "'%s' 12288", ku_image("part-gpt"), image, P2_OFFSET, image);
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(mkdir(dir, 0700), ==, 0);
        image_fd = open(image, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(image_fd, >=, 0);

        g_assert_cmpint(loop_attach_range(image_fd, true, P2_OFFSET, P2_SIZE, NULL, &loop_fd,
                                          &path, &e), ==, 0);
        g_assert_cmpint(mount(path, dir, "ext4", MS_RDONLY | MS_NODEV | MS_NOSUID, "noload"), ==,
                        -1);
        g_assert_cmpint(errno, ==, EINVAL);
        loop_fd = safe_close(loop_fd);

        g_assert_cmpint(loop_attach_range(image_fd, true, P2_OFFSET, 0, NULL, &whole_fd, &whole,
                                          &e), ==, 0);
        g_assert_cmpint(mount(whole, dir, "ext4", MS_RDONLY | MS_NODEV | MS_NOSUID, "noload"),
                        ==, 0);
        g_assert_cmpint(umount(dir), ==, 0);
        whole_fd = safe_close(whole_fd);
        g_assert_cmpint(rmdir(dir), ==, 0);
        g_assert_cmpint(unlink(image), ==, 0);
}

/* Busy is per byte range: a held partition does not make another partition of the same
 * image busy, but does make itself and the whole image busy. */
static void test_find_backing_range(const char *arg) {
        _cleanup_close_ int image_fd = open(ku_image("part-gpt"), O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int loop_fd = -EBADF, excl = -EBADF;
        _cleanup_free_ char *path = NULL, *found = NULL;
        UmError e = {};

        g_assert_cmpint(loop_attach_range(image_fd, true, P2_OFFSET, P2_SIZE, NULL, &loop_fd,
                                          &path, &e), ==, 0);
        /* Held exclusively, as a mounted filesystem holds its device. */
        excl = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
        g_assert_cmpint(excl, >=, 0);
        g_assert_cmpint(loop_find_backing_range(image_fd, P3_OFFSET, 8192 * 512, false, NULL),
                        ==, 0);
        g_assert_cmpint(loop_find_backing_range(image_fd, 2048 * 512, 8192 * 512, false, NULL),
                        ==, 0);
        g_assert_cmpint(loop_find_backing_range(image_fd, P2_OFFSET + 4096, 4096, false,
                                                &found), ==, 1);
        g_assert_cmpstr(found, ==, path);
        g_assert_cmpint(loop_find_backing(image_fd, NULL), ==, 1);
        g_assert_cmpint(loop_find_backing_range(image_fd, P3_OFFSET - 512, 0, false, NULL), ==,
                        1);
}

/* A claim that fails leaves the pending mark of its device: another worker handed the same
 * free device may have made that mark (the same name) and bound the device, and taking the
 * mark away would give a user's image the links of /dev/disk/by-*. */
static void test_failed_claim_keeps_mark(const char *arg) {
        g_autoptr(GError) gerror = NULL;
        g_autofree char *dir = g_dir_make_tmp("um-loopmarks-XXXXXX", &gerror);
        g_autofree char *marks = NULL, *mark = NULL, *rm = NULL;
        _cleanup_close_ int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
        _cleanup_close_ int path_fd = open(ku_image("ext4"), O_PATH | O_CLOEXEC);
        char *loop_path = NULL;
        UmError error = {};
        int nr, fd = -EBADF;

        g_assert_no_error(gerror);
        g_assert_cmpint(control, >=, 0);
        g_assert_cmpint(path_fd, >=, 0);
        nr = ioctl(control, LOOP_CTL_GET_FREE);
        g_assert_cmpint(nr, >=, 0);
        marks = g_build_filename(dir, LOOP_MARK_DIR, NULL);
        g_assert_cmpint(g_mkdir(marks, 0700), ==, 0);
        mark = g_strdup_printf("%s/loop%d", marks, nr);
        g_assert_true(g_file_set_contents(mark, "", 0, NULL)); /* another worker's */

        /* An O_PATH image passes the checks and fails LOOP_CONFIGURE (EBADF). */
        g_assert_cmpint(loop_attach_marked(path_fd, false, dir, &fd, &loop_path, &error), <, 0);
        g_assert_cmpint(fd, <, 0);
        g_assert_true(g_file_test(mark, G_FILE_TEST_EXISTS));
        g_assert_cmpint(count_bound_loops(), >=, 0);

        rm = g_strdup_printf("rm -rf '%s'", dir);
        g_assert_cmpint(system(rm), ==, 0);
        free(loop_path);
}

int main(int argc, char **argv) {
        int r;

        g_test_init(&argc, &argv, NULL);
        if (geteuid() != 0) {
                printf("1..0 # SKIP the kernel tests need root\n");
                return 0;
        }
        if (!g_test_subprocess())
                g_test_set_nonfatal_assertions();
        ku_images_setup();

        ku_add("/loop/attach/read-write", test_attach_read_write, NULL, "ext4");
        ku_add("/loop/attach/read-only", test_attach_read_only, NULL, "ext4");
        ku_add("/loop/attach/read-only-fd", test_attach_read_only_fd, NULL, "ext4");
        ku_add("/loop/attach/refusals", test_attach_refusals, NULL, NULL);
        ku_add("/loop/attach/race", test_attach_race, NULL, "ext4");
        ku_add("/loop/autoclear", test_autoclear, NULL, "ext4");
        ku_add("/loop/attach/range", test_attach_range, NULL, "part-gpt");
        ku_add("/loop/attach/range-limits-filesystem", test_attach_range_limits_filesystem, NULL,
               "part-gpt");
        ku_add("/loop/find-backing/range", test_find_backing_range, NULL, "part-gpt");
        ku_add("/loop/marks/failed-claim-keeps-mark", test_failed_claim_keeps_mark, NULL, "ext4");

        r = g_test_run();
        ku_images_teardown();
        return r;
}
