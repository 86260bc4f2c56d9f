/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hostile-image corpus (docs/security.md class 50): the corrupted and unusual images
 * that the filesystems' own projects keep as regression tests (tests/corpus/fetch-corpus
 * takes them from Debian's source packages at test time) and damaged copies of small
 * images of each type a userspace driver serves (tests/corpus/mutate-corpus), each sent
 * twice through OpenMount (read-only, then read-write) with the daemon's shipped defaults,
 * by an unprivileged caller in a user namespace of its own. For every image:
 *
 *   - it is mounted and its tree can be walked (every entry looked at, the start of every
 *     file read), or it is refused with a clear error (a D-Bus error of the contract and
 *     a sentence); a walk that does not end within WALK_MS is ended by killing the driver
 *     (the caller's reads then fail) and counted;
 *   - nothing is left: no mount, loop device, driver, uid claim, worker or daemon fd;
 *   - the daemon stays up, and every few images serves another user at once;
 *   - the kernel log shows no warning, oops or BUG from the whole run.
 *
 * UM_CORPUS_DIR names the corpus (tools/test makes it); without it the test is skipped
 * and says how to make one. The figures (images, outcomes by error, time) are printed at
 * the end.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "macro.h"
#include "calls.h"
#include "usermount-names.h"

/* How long the walk of one mounted image may take before its driver is killed. */
#define WALK_MS 20000
/* How many entries and bytes a walk looks at, at most. */
#define WALK_ENTRIES 4000
#define WALK_DEPTH 16
/* Another user is served after every this many images. */
#define OTHERS_EVERY 25

static pid_t daemon_pid;
static HarnessSnapshot baseline;
static char *good_image;
static GHashTable *outcomes;  /* outcome -> count */
static gint64 slowest_us;
static char *slowest;

static const char rules[] =
        "polkit.addRule(function(action, subject) {\n"
        "        if (action.id.indexOf('org.freedesktop.usermount1.') == 0 &&\n"
        "            action.id != 'org.freedesktop.usermount1.mount-kernel-driver' &&\n"
        "            (subject.user == 'umtest1' || subject.user == 'umtest2'))\n"
        "                return polkit.Result.YES;\n"
        "        return polkit.Result.NOT_HANDLED;\n"
        "});\n";

typedef struct CorpusImage {
        char *path;   /* in the corpus */
        char *fstype; /* as blkid found it */
} CorpusImage;

static void corpus_image_free(gpointer p) {
        CorpusImage *img = p;

        g_free(img->path);
        g_free(img->fstype);
        g_free(img);
}

/* ---- the caller ------------------------------------------------------------------------- */

typedef struct Walk {
        unsigned entries, files, errors;
        unsigned long long bytes;
} Walk;

static void walk(int dir_fd, unsigned depth, Walk *w) {
        DIR *d = fdopendir(dir_fd);
        struct dirent *de;

        if (!d) {
                w->errors++;
                close(dir_fd);
                return;
        }
        while (w->entries < WALK_ENTRIES && (de = readdir(d))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                w->entries++;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        w->errors++;
                        continue;
                }
                if (S_ISDIR(st.st_mode) && depth < WALK_DEPTH) {
                        int fd = openat(dirfd(d), de->d_name,
                                        O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (fd < 0)
                                w->errors++;
                        else
                                walk(fd, depth + 1, w);
                } else if (S_ISREG(st.st_mode)) {
                        char buf[4096];
                        int fd = openat(dirfd(d), de->d_name,
                                        O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
                        ssize_t n;

                        w->files++;
                        if (fd < 0) {
                                w->errors++;
                                continue;
                        }
                        n = read(fd, buf, sizeof(buf));
                        if (n < 0)
                                w->errors++;
                        else
                                w->bytes += (unsigned long long) n;
                        close(fd);
                }
        }
        closedir(d);
}

typedef struct CorpusCall {
        const char *path;
        bool read_only;
        const char *target;
} CorpusCall;

/* OpenMount, then (mounted) attach it in the caller's namespace and walk it. */
static int corpus_caller(void *userdata) {
        const CorpusCall *c = userdata;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_close_ int source = -EBADF, mount_fd = -EBADF;
        sd_bus *bus = NULL;
        Walk w = {};
        int fd, r;

        g_assert_cmpint(harness_sd_bus_connect(&bus), >=, 0);
        g_assert_cmpint(sd_bus_message_new_method_call(bus, &call, UM_BUS_NAME, UM_OBJECT_PATH,
                                                       UM_MANAGER_INTERFACE, "OpenMount"), >=, 0);
        source = open(c->path, (c->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
        g_assert_cmpint(source, >=, 0);
        g_assert_cmpint(sd_bus_message_append(call, "hss", source, "", ""), >=, 0);
        g_assert_cmpint(calls_append_params(call, NULL), >=, 0);
        r = sd_bus_call(bus, call, 120 * G_USEC_PER_SEC, &error, &reply);
        if (calls_report_result(r, &error) < 0) {
                sd_bus_flush_close_unref(bus);
                return 0;
        }
        g_assert_cmpint(sd_bus_message_read(reply, "h", &fd), >, 0);
        mount_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        calls_report_info(reply, "info-");
        reply = sd_bus_message_unref(reply);
        sd_bus_flush_close_unref(bus);
        harness_report("walking=yes");
        if (move_mount(mount_fd, "", AT_FDCWD, c->target, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                harness_report("attach=%s", calls_errno_name(-errno));
                return 0;
        }
        fd = open(c->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0)
                walk(fd, 0, &w);
        else
                w.errors++;
        harness_report("walk=%u entries, %u files, %llu bytes, %u errors", w.entries, w.files,
                       w.bytes, w.errors);
        (void) umount2(c->target, MNT_DETACH);
        return 0;
}

/* ---- the test ------------------------------------------------------------------------------ */

static void count(const char *outcome) {
        gpointer n = g_hash_table_lookup(outcomes, outcome);

        g_hash_table_replace(outcomes, g_strdup(outcome), GUINT_TO_POINTER(GPOINTER_TO_UINT(n) + 1));
}

/* The drivers still running are killed: a walk stuck in a hostile driver ends then. */
static void kill_drivers(void) {
        g_autoptr(GArray) pids = calls_running_drivers();

        for (guint i = 0; i < pids->len; i++)
                (void) kill(g_array_index(pids, pid_t, i), SIGKILL);
}

/* The caller's report, line by line until it exits; a caller whose walk does not end in
 * time has its driver killed (its stuck reads then fail, and it goes on). */
static char *caller_report(HarnessCaller *h) {
        g_autoptr(GString) all = g_string_new(NULL);
        gint64 deadline = g_get_monotonic_time() + (130000 + WALK_MS) * 1000LL;
        bool killed = false;

        for (;;) {
                g_autofree char *line = NULL;
                gint64 left = (deadline - g_get_monotonic_time()) / 1000;
                int r = harness_caller_read_line(h, (int) MAX(left, 1), &line);

                if (r == -EPIPE)
                        break;
                if (r == -ETIMEDOUT && !killed) {
                        kill_drivers();
                        killed = true;
                        deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;
                        count("walk ended by killing the driver");
                        continue;
                }
                g_assert_cmpint(r, ==, 0);
                g_string_append_printf(all, "%s\n", line);
        }
        return g_string_free(g_steal_pointer(&all), FALSE);
}

static void send_one(const CorpusImage *img, const char *copy, bool read_only) {
        const CorpusCall c = { copy, read_only, "/tmp" };
        g_autofree char *output = NULL, *outcome = NULL;
        g_autoptr(GHashTable) t = NULL;
        HarnessCaller *h = NULL;
        const char *result;
        gint64 t0 = g_get_monotonic_time(), took;

        g_assert_cmpint(harness_caller_spawn(HARNESS_UID_USER1, HARNESS_GID_USER1,
                                             HARNESS_NEW_USERNS, corpus_caller, (void *) &c,
                                             &h), ==, 0);
        output = caller_report(h);
        g_assert_cmpint(harness_caller_wait(h, 30000, NULL), ==, 0);
        harness_caller_free(h);
        took = g_get_monotonic_time() - t0;
        t = calls_parse_report(output);
        result = report_get(t, "result");
        g_assert_nonnull(result);
        if (streq(result, "ok")) {
                outcome = g_strdup_printf("mounted and walked (%s driver)%s",
                                          strempty(report_get(t, "info-driver")),
                                          report_get(t, "walk") ? "" : ", walk cut short");
        } else {
                /* A clear error: one of the contract's names, and a sentence. */
                g_assert_true(g_str_has_prefix(result, UM_ERROR_PREFIX));
                g_assert_cmpuint(strlen(strempty(report_get(t, "message"))), >, 10);
                outcome = g_strdup_printf("refused: %s", result + strlen(UM_ERROR_PREFIX));
        }
        g_test_message("%s (%s, %s): %s %s%s%s, %.1f ms", img->path, img->fstype,
                       read_only ? "read-only" : "read-write", result,
                       strempty(report_get(t, "message")),
                       report_get(t, "walk") ? " walk: " : "", strempty(report_get(t, "walk")),
                       took / 1000.0);
        count(outcome);
        if (took > slowest_us) {
                slowest_us = took;
                g_free(slowest);
                slowest = g_strdup(img->path);
        }
}

static void test_image(gconstpointer data) {
        const CorpusImage *img = data;
        static unsigned n;
        g_autofree char *copy = g_build_filename(harness_tmpdir(), "corpus.img", NULL);
        g_autofree char *cmd = g_strdup_printf("cp --sparse=always '%s' '%s'", img->path, copy);

        /* A copy: a read-write mount may change it, and the corpus serves the next run. */
        g_assert_cmpint(system(cmd), ==, 0);
        g_assert_cmpint(chmod(copy, 0666), ==, 0);
        send_one(img, copy, true);
        send_one(img, copy, false);
        calls_await_drivers(0);
        calls_assert_clean(daemon_pid, &baseline);
        calls_assert_no_uid_claims("/run/usermount");
        g_assert_cmpint(unlink(copy), ==, 0);
        if (++n % OTHERS_EVERY == 0) {
                const CorpusCall other = { good_image, true, "/tmp" };
                g_autofree char *output = NULL;
                g_autoptr(GHashTable) t = NULL;
                gint64 t0 = g_get_monotonic_time();

                g_assert_cmpint(harness_run_as(HARNESS_UID_USER2, HARNESS_GID_USER2,
                                               HARNESS_NEW_USERNS, corpus_caller,
                                               (void *) &other, &output), ==, 0);
                t = calls_parse_report(output);
                g_assert_cmpstr(report_get(t, "result"), ==, "ok");
                g_assert_cmpint(g_get_monotonic_time() - t0, <, 10 * G_USEC_PER_SEC);
        }
}

/* Warnings, oopses and BUGs the kernel logged since fd was opened (positioned at the end
 * of the log): none may come from the run. */
static void test_kernel_log(gconstpointer data) {
        int fd = GPOINTER_TO_INT(data);
        static const char *const bad[] = { "WARNING:", "BUG:", "Oops", "general protection",
                                           "Call Trace", "UBSAN:", "KASAN:", "kernel BUG" };
        char record[8192];
        unsigned found = 0;
        ssize_t n;

        while ((n = read(fd, record, sizeof(record) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
                if (n <= 0)
                        continue; /* overwritten records: go on */
                record[n] = 0;
                for (size_t i = 0; i < G_N_ELEMENTS(bad); i++)
                        if (strstr(record, bad[i])) {
                                g_test_message("kernel: %s", record);
                                found++;
                                break;
                        }
        }
        g_assert_cmpuint(found, ==, 0);
}

static void test_figures(gconstpointer data) {
        const gint64 *start = data;
        GHashTableIter i;
        gpointer k, v;
        unsigned total = 0;

        g_hash_table_iter_init(&i, outcomes);
        while (g_hash_table_iter_next(&i, &k, &v)) {
                printf("# corpus: %5u %s\n", GPOINTER_TO_UINT(v), (const char *) k);
                total += GPOINTER_TO_UINT(v);
        }
        printf("# corpus: %u sends of %u images in %.0f s; slowest %s (%.1f s)\n", total,
               total / 2, (g_get_monotonic_time() - *start) / 1e6, strempty(slowest),
               slowest_us / 1e6);
        fflush(stdout);
        g_assert_cmpuint(total, >, 0);
}

static GPtrArray *read_manifest(const char *dir) {
        g_autofree char *path = g_build_filename(dir, "MANIFEST.tsv", NULL);
        g_autofree char *text = NULL;
        g_auto(GStrv) lines = NULL;
        GPtrArray *images = g_ptr_array_new_with_free_func(corpus_image_free);

        g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
        lines = g_strsplit(text, "\n", -1);
        for (size_t i = 0; lines[i]; i++) {
                g_auto(GStrv) f = g_strsplit(lines[i], "\t", -1);
                CorpusImage *img;

                if (lines[i][0] == '#' || g_strv_length(f) < 2)
                        continue;
                img = g_new0(CorpusImage, 1);
                img->path = g_build_filename(dir, f[0], NULL);
                img->fstype = g_strdup(f[1]);
                g_ptr_array_add(images, img);
        }
        return images;
}

int main(int argc, char *argv[]) {
        const HarnessEntry entries[] = { { HARNESS_ENTRY_FILE, "f", "x\n", 0644 }, {} };
        const HarnessImageSpec spec = { .label = "good", .entries = entries };
        const char *dir = g_getenv("UM_CORPUS_DIR");
        g_autoptr(GPtrArray) images = NULL;
        static gint64 start;
        int kmsg, r;

        g_test_init(&argc, &argv, NULL);
        if (!dir) {
                printf("1..0 # SKIP no corpus: tools/test makes one, or set UM_CORPUS_DIR to a "
                       "directory made by tests/corpus/fetch-corpus and mutate-corpus\n");
                return 0;
        }
        harness_init_or_exit(NULL);
        if (!harness_daemon_path()) {
                printf("1..0 # SKIP usermountd was not built\n");
                return 0;
        }
        images = read_manifest(dir);
        outcomes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        g_assert_cmpint(harness_make_image("ext4", &spec, &good_image), ==, 0);
        g_assert_cmpint(chmod(good_image, 0644), ==, 0);
        /* The shipped configuration: none (Driver=auto and the built-in limits). */
        g_assert_cmpint(harness_write_etc("usermount/usermount.conf", ""), ==, 0);
        g_assert_cmpint(harness_set_rules(rules), ==, 0);
        kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        g_assert_cmpint(kmsg, >=, 0);
        g_assert_cmpint(lseek(kmsg, 0, SEEK_END), >=, 0);
        g_assert_cmpint(harness_start_daemon(harness_daemon_path(), NULL, &daemon_pid), ==, 0);
        g_assert_cmpint(harness_snapshot(daemon_pid, &baseline), ==, 0);
        start = g_get_monotonic_time();

        for (guint i = 0; i < images->len; i++) {
                const CorpusImage *img = images->pdata[i];
                g_autofree char *name = g_strdup_printf("/corpus/images/%s", img->path +
                                                        strlen(dir) + 1);

                g_test_add_data_func(name, img, test_image);
        }
        g_test_add_data_func("/corpus/end/kernel-log", GINT_TO_POINTER(kmsg), test_kernel_log);
        g_test_add_data_func("/corpus/end/figures", &start, test_figures);
        r = g_test_run();
        harness_stop_daemon(daemon_pid, NULL);
        return r;
}
