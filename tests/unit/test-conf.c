/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the configuration file (daemon/conf.c): hostile files (long lines, large files,
 * NUL bytes, invalid UTF-8, garbage, FIFOs, devices, symlinks), every syntax and value
 * problem with the exact line it is reported on, that a bad file never yields a Conf,
 * positive cases for every key, the shipped example (conf/usermount.conf) and
 * --check-config (conf_check()).
 *
 * Files are written to a private temporary directory that the test removes.
 */
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "fscheck.h"
#include "policy.h"

/* The daemon bounds ImageCheckUidRange= by what the worker's image check takes. */
_Static_assert(CONF_IMAGE_CHECK_UID_COUNT_MAX == FSCHECK_UID_COUNT_MAX,
               "ImageCheckUidRange= and the image check disagree on the most uids");

static char *tmpdir;

/* A Conf pointer that a failing conf_load() must leave as it is. */
static Conf sentinel_conf;

/* Writes len bytes (the contents may hold NUL bytes) to a new file; returns its path. */
static char *write_file(const char *contents, size_t len) {
        static unsigned n;
        char *path = g_strdup_printf("%s/conf-%u.conf", tmpdir, n++);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(write(fd, contents, len), ==, (ssize_t) len);
        g_assert_cmpint(fchmod(fd, 0644), ==, 0);
        close(fd);
        return path;
}

static char *write_string(const char *contents) {
        return write_file(contents, strlen(contents));
}

typedef struct Loaded {
        int r;
        Conf *conf;
        char *diag;
        char **lines; /* diag split into lines, without the empty last one */
        char *path;
} Loaded;

static void loaded_done(Loaded *l) {
        conf_unref(l->conf);
        g_free(l->diag);
        g_strfreev(l->lines);
        g_free(l->path);
}

static Loaded load_path(const char *path, bool missing_ok) {
        Loaded l = { .path = g_strdup(path) };
        size_t size = 0;
        FILE *diag = open_memstream(&l.diag, &size);
        Conf *c = &sentinel_conf;

        g_assert_nonnull(diag);
        l.r = conf_load(path, missing_ok, diag, &c);
        fclose(diag);
        if (l.r >= 0) {
                g_assert_true(c != &sentinel_conf);
                g_assert_nonnull(c);
                l.conf = c;
        } else
                /* Never a half-applied Conf: the output is untouched. */
                g_assert_true(c == &sentinel_conf);
        /* Every problem is one line that ends with "\n". */
        g_assert_true(*l.diag == 0 || g_str_has_suffix(l.diag, "\n"));
        l.lines = g_strsplit(l.diag, "\n", -1);
        if (*l.diag) {
                guint n = g_strv_length(l.lines);

                g_assert_cmpstr(l.lines[n - 1], ==, "");
                g_free(l.lines[n - 1]);
                l.lines[n - 1] = NULL;
        }
        return l;
}

static Loaded load_bytes(const char *contents, size_t len) {
        char *path = write_file(contents, len);
        Loaded l = load_path(path, false);

        g_unlink(path);
        g_free(path);
        return l;
}

static Loaded load(const char *contents) {
        return load_bytes(contents, strlen(contents));
}

/* Loads, expecting success without any diagnostics; the Conf is returned (owned). */
static Conf *load_ok(const char *contents) {
        Loaded l = load(contents);
        Conf *c;

        if (l.r < 0)
                g_error("refused (%d):\n%s\n--- file:\n%s", l.r, l.diag, contents);
        g_assert_cmpstr(l.diag, ==, "");
        c = TAKE_PTR(l.conf);
        loaded_done(&l);
        return c;
}

/*
 * Asserts that l failed with -EINVAL and wrote exactly these problems, in this order:
 * "LINE:text" means a line "PATH:LINE: ..." that contains text.
 */
static void assert_problems(const Loaded *l, const char *const *expected) {
        guint n = g_strv_length((char **) expected);

        if (l->r != -EINVAL || g_strv_length(l->lines) != n) {
                g_printerr("got %d with:\n%s", l->r, l->diag);
                g_assert_cmpint(l->r, ==, -EINVAL);
                g_assert_cmpuint(g_strv_length(l->lines), ==, n);
        }
        for (guint i = 0; i < n; i++) {
                const char *colon = strchr(expected[i], ':');
                char *prefix = g_strdup_printf("%s:%.*s: ", l->path, (int) (colon - expected[i]),
                                               expected[i]);

                if (!g_str_has_prefix(l->lines[i], prefix) || !strstr(l->lines[i], colon + 1))
                        g_error("problem %u is \"%s\", expected \"%s\"", i, l->lines[i],
                                expected[i]);
                /* What reaches a terminal or a log is printable UTF-8. */
                g_assert_true(g_utf8_validate(l->lines[i], -1, NULL));
                for (const char *c = l->lines[i]; *c; c++)
                        g_assert_true((unsigned char) *c >= 0x20 && *c != 0x7f);
                g_free(prefix);
        }
}

static void expect_problems_bytes(const char *contents, size_t len, const char *const *expected) {
        Loaded l = load_bytes(contents, len);

        assert_problems(&l, expected);
        loaded_done(&l);
}

static void expect_problems(const char *contents, const char *const *expected) {
        expect_problems_bytes(contents, strlen(contents), expected);
}

#define PROBLEMS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Field by field: two Confs say the same (paths aside). */
static void assert_conf_equal(const Conf *a, const Conf *b) {
        g_assert_cmpstr(a->media_root, ==, b->media_root);
        g_assert_cmpint(a->allow_exec, ==, b->allow_exec);
        g_assert_cmpint(a->image_check, ==, b->image_check);
        g_assert_cmpstr(a->image_check_user, ==, b->image_check_user);
        g_assert_cmpuint(a->image_check_uid, ==, b->image_check_uid);
        g_assert_cmpuint(a->image_check_gid, ==, b->image_check_gid);
        g_assert_cmpuint(a->image_check_uid_first, ==, b->image_check_uid_first);
        g_assert_cmpuint(a->image_check_uid_count, ==, b->image_check_uid_count);
        g_assert_cmpuint(a->image_check_timeout_usec, ==, b->image_check_timeout_usec);
        g_assert_cmpstr(a->selinux_type, ==, b->selinux_type);
        g_assert_cmpmem(&a->driver, sizeof(a->driver), &b->driver, sizeof(b->driver));
        g_assert_cmpuint(a->driver_uid_first, ==, b->driver_uid_first);
        g_assert_cmpuint(a->driver_uid_count, ==, b->driver_uid_count);
        g_assert_cmpmem(&a->limits, sizeof(a->limits), &b->limits, sizeof(b->limits));
        g_assert_cmpuint(a->n_fstypes, ==, b->n_fstypes);
        for (size_t i = 0; i < a->n_fstypes; i++) {
                const ConfFsType *x = &a->fstypes[i], *y = &b->fstypes[i];

                g_assert_cmpstr(x->name, ==, y->name);
                g_assert_cmpint(x->allowed, ==, y->allowed);
                g_assert_true(!x->allowed_options == !y->allowed_options);
                if (x->allowed_options)
                        g_assert_true(g_strv_equal((const char *const *) x->allowed_options,
                                                   (const char *const *) y->allowed_options));
                g_assert_cmpstr(x->default_options, ==, y->default_options);
                g_assert_cmpstr(x->forced_options, ==, y->forced_options);
                g_assert_cmpmem(&x->driver, sizeof(x->driver), &y->driver, sizeof(y->driver));
        }
}

static Conf *defaults(void) {
        Conf *c = NULL;

        g_assert_cmpint(conf_new_default(&c), ==, 0);
        return c;
}

static void assert_defaults(const Conf *c) {
        Conf *d = defaults();

        assert_conf_equal(c, d);
        conf_unref(d);
}

/* ---- Lines ---------------------------------------------------------------------------------- */

/* inih's buffer is 200 bytes in Debian's build: a line may have 197 (room for "\r\n\0"). */
#define LINE_MAX_BYTES 197

static char *comment_of(size_t len) {
        char *s = g_malloc(len + 1);

        memset(s, 'x', len);
        s[0] = '#';
        s[len] = 0;
        return s;
}

static void test_line_longest(void) {
        char *line = comment_of(LINE_MAX_BYTES);
        char *contents = g_strdup_printf("%s\n[General]\n%s\r\nAllowExec=no\n", line, line);
        Conf *c = load_ok(contents);

        g_assert_false(c->allow_exec);
        conf_unref(c);
        g_free(contents);
        g_free(line);
}

/* One byte too many, in a comment, a value and the last line without a newline. */
static void test_line_too_long(void) {
        char *line = comment_of(LINE_MAX_BYTES + 1);
        char *value = g_strnfill(300, 'a');
        char *contents = g_strdup_printf("[General]\n%s\nMediaRoot=/%s\nAllowExec=maybe\n%s",
                                         line, value, line);

        expect_problems(contents, PROBLEMS("2:line is longer than 197 bytes",
                                           "3:line is longer than 197 bytes",
                                           "4:AllowExec= needs yes or no",
                                           "5:line is longer than 197 bytes"));
        g_free(contents);
        g_free(value);
        g_free(line);
}

/*
 * A line twice as long as inih's buffer, whose second half would be a valid setting if it
 * were split: it must be one problem, and the setting must not apply.
 */
static void test_line_never_split(void) {
        GString *s = g_string_new("[General]\n#");

        while (s->len < 10 + 200 - 3)
                g_string_append_c(s, 'x');
        g_string_append(s, "AllowExec=no\n[Limits]\nMaxRequests=0\n");
        expect_problems(s->str, PROBLEMS("2:line is longer than 197 bytes",
                                         "4:MaxRequests= needs a whole number"));
        g_string_free(s, true);
}

static void test_file_largest(void) {
        GString *s = g_string_new("[General]\nAllowExec=no\n");
        Conf *c;

        while (s->len + 100 < CONF_FILE_MAX)
                g_string_append(s, "# padding padding padding padding padding padding padding "
                                "padding padding padding padding padd\n");
        while (s->len < CONF_FILE_MAX - 1)
                g_string_append_c(s, '#');
        g_string_append_c(s, '\n');
        g_assert_cmpuint(s->len, ==, CONF_FILE_MAX);
        c = load_ok(s->str);
        g_assert_false(c->allow_exec);
        conf_unref(c);

        g_string_append_c(s, '\n');
        expect_problems(s->str, PROBLEMS("0:is larger than 65536 bytes"));
        g_string_free(s, true);
}

static void test_file_one_mib(void) {
        size_t size = 1024 * 1024;
        char *contents = g_malloc(size);

        for (size_t i = 0; i < size; i++)
                contents[i] = i % 64 == 63 ? '\n' : '#';
        expect_problems_bytes(contents, size, PROBLEMS("0:is larger than 65536 bytes"));
        g_free(contents);
}

static void test_nul_bytes(void) {
        static const char contents[] = "[General]\nAllowExec=y\0es\n# a comment \0 with NUL\n"
                                       "ImageCheck=no\n\0\n";

        expect_problems_bytes(contents, sizeof(contents) - 1,
                              PROBLEMS("2:the line contains a NUL byte (at byte 12)",
                                       "3:the line contains a NUL byte (at byte 13)",
                                       "5:the line contains a NUL byte (at byte 1)"));
}

static void test_invalid_utf8(void) {
        expect_problems("# caf\xe9\n[General]\nMediaRoot=/run/m\xc3\x28\n"
                        "# overlong \xc0\xaf\n# surrogate \xed\xa0\x80\n# cut \xe2\x82",
                        PROBLEMS("1:not valid UTF-8 (at byte 6)", "3:not valid UTF-8",
                                 "4:not valid UTF-8", "5:not valid UTF-8",
                                 "6:not valid UTF-8"));
}

static void test_control_characters(void) {
        expect_problems("[General]\nMediaRoot=/run/\x1b[31mmedia\n# bell \x07\n"
                        "# C1 \xc2\x9b\nAllowExec=no\rImageCheck=no\n",
                        PROBLEMS("2:control character (U+001B at byte 16)",
                                 "3:control character (U+0007",
                                 "4:control character (U+009B",
                                 "5:control character (U+000D"));
}

/* What an ELF header and random bytes look like: problems on their lines, nothing else. */
static void test_binary_garbage(void) {
        static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0\x01\0\0\0"
                                  "\n\xff\xfe\xfd\n[General]\nAllowExec=no\n";

        expect_problems_bytes(elf, sizeof(elf) - 1,
                              PROBLEMS("1:control character (U+007F at byte 1)",
                                       "2:not valid UTF-8 (at byte 1)"));
}

/* Random files: never a crash, never a Conf unless the file is valid, clean messages. */
static void test_random_garbage(void) {
        GRand *rand = g_rand_new_with_seed(4);

        for (unsigned round = 0; round < 200; round++) {
                size_t len = g_rand_int_range(rand, 1, 4096);
                char *contents = g_malloc(len);
                Loaded l;

                for (size_t i = 0; i < len; i++)
                        contents[i] = (char) g_rand_int_range(rand, 0, 256);
                l = load_bytes(contents, len);
                g_assert_cmpint(l.r, ==, -EINVAL);
                g_assert_null(l.conf);
                g_assert_cmpuint(g_strv_length(l.lines), >=, 1);
                g_assert_cmpuint(g_strv_length(l.lines), <=, 101);
                for (char **line = l.lines; *line; line++) {
                        g_assert_true(g_str_has_prefix(*line, l.path));
                        g_assert_true(g_utf8_validate(*line, -1, NULL));
                }
                loaded_done(&l);
                g_free(contents);
        }
        g_rand_free(rand);
}

/* Thousands of bad lines are all counted; the first hundred are shown. */
static void test_many_problems(void) {
        GString *s = g_string_new(NULL);
        Loaded l;

        for (unsigned i = 0; i < 1000; i++)
                g_string_append(s, "garbage\n");
        l = load(s->str);
        g_assert_cmpint(l.r, ==, -EINVAL);
        g_assert_cmpuint(g_strv_length(l.lines), ==, 101);
        g_assert_true(g_str_has_prefix(l.lines[0], l.path));
        g_assert_nonnull(strstr(l.lines[0], ":1: expected 'Key=value'"));
        g_assert_nonnull(strstr(l.lines[99], ":100: expected 'Key=value'"));
        g_assert_nonnull(strstr(l.lines[100], ":0: 900 more problems not shown"));
        loaded_done(&l);
        g_string_free(s, true);
}

/* ---- Syntax --------------------------------------------------------------------------------- */

typedef struct ProblemCase {
        const char *name;
        const char *contents;
        const char *const *problems;
} ProblemCase;

static const ProblemCase syntax_cases[] = {
        { "no-equals", "[General]\nAllowExec\n", PROBLEMS("2:expected 'Key=value'") },
        { "colon", "[General]\nAllowExec: no\n", PROBLEMS("2:expected 'Key=value'") },
        { "colon-in-key", "[General]\nAllow:Exec=no\n", PROBLEMS("2:':' in a key") },
        { "no-key", "[General]\n=no\n  = no\n", PROBLEMS("2:'=' without a key",
                                                           "3:'=' without a key") },
        { "section-unclosed", "[General\nAllowExec=no\n",
          PROBLEMS("1:section header without ']'") },
        { "section-trailing", "[General] AllowExec=no\n",
          PROBLEMS("1:text after the section header's ']'") },
        { "section-empty", "[]\n", PROBLEMS("1:unknown section []") },
        { "section-spaces", "[ General ]\n", PROBLEMS("1:unknown section [ General ]") },
        { "section-case", "[general]\n[EXT4]\n", PROBLEMS("1:unknown section [general]",
                                                          "2:unknown section [EXT4]") },
        { "section-labels-case", "[labels]\n", PROBLEMS("1:unknown section [labels]; known "
                                                        "sections are [General], [Limits], "
                                                        "[Labels] and one per filesystem") },
        { "section-labels-twice", "[Labels]\n[Labels]\n",
          PROBLEMS("2:section [Labels] appears a second time (first on line 1)") },
        { "section-unknown-type", "[vfat]\n[fuse]\nX=1\n[ext5]\n",
          PROBLEMS("2:unknown section [fuse]", "4:unknown section [ext5]") },
        { "section-twice", "[General]\nAllowExec=no\n[Limits]\n[General]\nImageCheck=no\n",
          PROBLEMS("4:section [General] appears a second time (first on line 1)") },
        { "type-twice", "[ext4]\n\n[xfs]\n[ext4]\n[xfs]\n",
          PROBLEMS("4:section [ext4] appears a second time (first on line 1)",
                   "5:section [xfs] appears a second time (first on line 3)") },
        { "key-before-section", "AllowExec=no\n[General]\n",
          PROBLEMS("1:'AllowExec' is outside of any section") },
        { "key-twice", "[General]\nAllowExec=no\nImageCheck=no\nAllowExec=no\n",
          PROBLEMS("4:AllowExec= is set twice in [General] (first on line 2)") },
        { "key-twice-limits", "[Limits]\nMaxMounts=5\n\n\nMaxMounts=6\n",
          PROBLEMS("5:MaxMounts= is set twice in [Limits] (first on line 2)") },
        { "key-twice-type", "[ext4]\nForcedOptions=\nForcedOptions=noatime\n",
          PROBLEMS("3:ForcedOptions= is set twice in [ext4] (first on line 2)") },
        { "key-unknown", "[General]\nMediaroot=/x\n[Limits]\nMaxFoo=1\n[ext4]\nAllowed=1\n",
          PROBLEMS("2:unknown key 'Mediaroot' in [General]; [General] knows MediaRoot, "
                   "AllowedFilesystems, AllowExec, ImageCheck, ImageCheckUser, "
                   "ImageCheckUidRange, ImageCheckTimeoutSec, Driver, DriverUidRange",
                   "4:unknown key 'MaxFoo' in [Limits]; [Limits] knows MaxRequests, "
                   "MaxRequestsPerUser, MaxMounts, MaxMountsPerUser, MaxLoopDevices, "
                   "MaxLoopDevicesPerUser, MaxDrivers, MaxDriversPerUser, MaxWorkers, "
                   "MaxWorkersPerUser, "
                   "MaxUnauthorizedRequests, RequestTimeoutSec, DriverMemoryMax, "
                   "DriverTasksMax, DriverCPUSec",
                   "6:unknown key 'Allowed' in [ext4]; [ext4] knows AllowedOptions, "
                   "DefaultOptions, ForcedOptions") },
        { "key-unknown-labels", "[Labels]\nSELinuxContext=a_t\nSmackLabel=x\n",
          PROBLEMS("2:unknown key 'SELinuxContext' in [Labels]; [Labels] knows SELinuxType",
                   "3:unknown key 'SmackLabel' in [Labels]") },
        { "key-twice-labels", "[Labels]\nSELinuxType=\nSELinuxType=a_t\n",
          PROBLEMS("3:SELinuxType= is set twice in [Labels] (first on line 2)") },
        { "key-wrong-section-labels", "[General]\nSELinuxType=a_t\n",
          PROBLEMS("2:unknown key 'SELinuxType' in [General]") },
        { "key-wrong-section", "[Limits]\nAllowExec=no\n[General]\nMaxMounts=3\n",
          PROBLEMS("2:unknown key 'AllowExec' in [Limits]", "4:unknown key 'MaxMounts'") },
        { "key-case", "[General]\nallowexec=no\n", PROBLEMS("2:unknown key 'allowexec'") },
        /* Keys of a refused section are not reported again. */
        { "keys-in-unknown-section", "[Foo]\nA=1\nB=2\n", PROBLEMS("1:unknown section [Foo]") },
        /* No multi-line values: an indented line is a line of its own. */
        { "continuation", "[General]\nAllowedFilesystems=ext4\n  xfs\n\tbtrfs\n",
          PROBLEMS("3:expected 'Key=value'", "4:expected 'Key=value'") },
        { "continuation-of-bad-value", "[General]\nAllowExec=n\n o\n",
          PROBLEMS("2:AllowExec= needs yes or no", "3:expected 'Key=value'") },
        { "continuation-key", "[General]\nAllowExec=no\n  AllowExec=no\n",
          PROBLEMS("3:AllowExec= is set twice in [General] (first on line 2)") },
        /* '#' starts a comment only at the start of a line. */
        { "hash-inline", "[General]\nAllowExec=no # really\n",
          PROBLEMS("2:AllowExec= needs yes or no (true/false, on/off, 1/0), not "
                   "'no # really'") },
        { "bom-later", "[General]\n\xef\xbb\xbf[Limits]\n",
          PROBLEMS("2:expected 'Key=value'") },
        { "bom-twice", "\xef\xbb\xbf\xef\xbb\xbf[General]\n",
          PROBLEMS("1:expected 'Key=value'") },
};

static void test_problem_case(const void *data) {
        const ProblemCase *c = data;

        expect_problems(c->contents, c->problems);
}

/* ---- Accepted syntax ------------------------------------------------------------------------ */

static void test_empty_file(void) {
        Conf *c = load_ok("");

        assert_defaults(c);
        g_assert_nonnull(c->path);
        conf_unref(c);
        c = load_ok("\n\n# only comments\n; and these\n   \n\t\n");
        assert_defaults(c);
        conf_unref(c);
        /* Empty sections are fine. */
        c = load_ok("[General]\n[Limits]\n[ext4]\n[udf]\n");
        assert_defaults(c);
        conf_unref(c);
}

static void test_comments_ok(void) {
        Conf *c = load_ok("# hash\n; semicolon\n[General] ; after a header\n"
                          "AllowExec=no ; inline, after whitespace\n"
                          "[Limits] # also after a header\n  # indented\n\t; indented\n"
                          "MaxMounts=7\n");

        g_assert_false(c->allow_exec);
        g_assert_cmpuint(c->limits.max_mounts, ==, 7);
        conf_unref(c);
}

static void test_bom(void) {
        Conf *c = load_ok("\xef\xbb\xbf[General]\nAllowExec=off\n");

        g_assert_false(c->allow_exec);
        conf_unref(c);
}

static void test_crlf(void) {
        Conf *c = load_ok("[General]\r\nMediaRoot=/srv/media\r\nAllowExec=no\r\n\r\n"
                          "[Limits]\r\nMaxMounts=9\r\n[ext4]\r\nDefaultOptions=noatime\r\n");

        g_assert_cmpstr(c->media_root, ==, "/srv/media");
        g_assert_false(c->allow_exec);
        g_assert_cmpuint(c->limits.max_mounts, ==, 9);
        g_assert_cmpstr(conf_fstype(c, "ext4")->default_options, ==, "noatime");
        conf_unref(c);
        /* The line numbers of a CRLF file are its lines. */
        expect_problems("[General]\r\nAllowExec=no\r\n\r\nImageCheck=maybe\r\n",
                        PROBLEMS("4:ImageCheck= needs yes or no"));
}

static void test_indentation_and_spaces(void) {
        Conf *c = load_ok("  [General]\n\tAllowExec = no\n  MediaRoot   =   /mnt/x  \n"
                          "[Limits]\n    MaxWorkers=3\n");

        g_assert_false(c->allow_exec);
        g_assert_cmpstr(c->media_root, ==, "/mnt/x");
        g_assert_cmpuint(c->limits.max_workers, ==, 3);
        conf_unref(c);
}

/* Keys after the sections they belong to, sections in any order, types before General. */
static void test_section_order(void) {
        Conf *c = load_ok("[ext4]\nDefaultOptions=noatime\n[Limits]\nMaxWorkers=2\n"
                          "[General]\nAllowExec=no\n[xfs]\nForcedOptions=ro\n");

        g_assert_cmpuint(c->limits.max_workers, ==, 2);
        g_assert_false(c->allow_exec);
        g_assert_cmpstr(conf_fstype(c, "ext4")->default_options, ==, "noatime");
        g_assert_cmpstr(conf_fstype(c, "xfs")->forced_options, ==, "ro");
        conf_unref(c);
}

/* ---- The file itself ------------------------------------------------------------------------ */

static void test_missing(void) {
        char *path = g_strdup_printf("%s/does-not-exist.conf", tmpdir);
        Loaded l = load_path(path, true);

        g_assert_cmpint(l.r, ==, 0);
        g_assert_null(l.conf->path);
        assert_defaults(l.conf);
        g_assert_cmpstr(l.diag, ==, "");
        loaded_done(&l);

        l = load_path(path, false);
        g_assert_cmpint(l.r, ==, -ENOENT);
        loaded_done(&l);
        g_free(path);
}

static void test_directory(void) {
        Loaded l = load_path(tmpdir, true);

        assert_problems(&l, PROBLEMS("0:is a directory; the configuration must be a regular "
                                     "file"));
        loaded_done(&l);
}

/* Opening a FIFO must not wait for a writer: this test would hang. */
static void test_fifo(void) {
        char *path = g_strdup_printf("%s/fifo.conf", tmpdir);
        Loaded l;

        g_assert_cmpint(mkfifo(path, 0600), ==, 0);
        l = load_path(path, true);
        assert_problems(&l, PROBLEMS("0:is a FIFO"));
        loaded_done(&l);
        g_unlink(path);
        g_free(path);
}

static void test_symlink_to_device(void) {
        char *path = g_strdup_printf("%s/zero.conf", tmpdir);
        Loaded l;

        g_assert_cmpint(symlink("/dev/zero", path), ==, 0);
        l = load_path(path, true);
        assert_problems(&l, PROBLEMS("0:is a device"));
        loaded_done(&l);
        g_unlink(path);
        g_free(path);
}

/* A dangling symlink is not a missing file: the admin meant something. */
static void test_symlink_dangling(void) {
        char *path = g_strdup_printf("%s/dangling.conf", tmpdir);
        Loaded l;

        g_assert_cmpint(symlink("/nonexistent/usermount.conf", path), ==, 0);
        l = load_path(path, true);
        assert_problems(&l, PROBLEMS("0:is a symbolic link to a file that does not exist"));
        loaded_done(&l);
        g_unlink(path);
        g_free(path);
}

static void test_symlink_to_file(void) {
        char *target = write_string("[General]\nAllowExec=no\n");
        char *path = g_strdup_printf("%s/link.conf", tmpdir);
        Loaded l;

        g_assert_cmpint(symlink(target, path), ==, 0);
        l = load_path(path, false);
        g_assert_cmpint(l.r, ==, 0);
        g_assert_false(l.conf->allow_exec);
        g_assert_cmpstr(l.conf->path, ==, path);
        loaded_done(&l);
        g_unlink(path);
        g_unlink(target);
        g_free(path);
        g_free(target);
}

static void test_world_writable(void) {
        char *path = write_string("[General]\n");
        Loaded l;

        g_assert_cmpint(chmod(path, 0666), ==, 0);
        l = load_path(path, false);
        assert_problems(&l, PROBLEMS("0:is writable by every user"));
        loaded_done(&l);
        /* Group-writable is the admin's business. */
        g_assert_cmpint(chmod(path, 0664), ==, 0);
        l = load_path(path, false);
        g_assert_cmpint(l.r, ==, 0);
        loaded_done(&l);
        g_unlink(path);
        g_free(path);
}

static void test_no_diag(void) {
        char *path = write_string("garbage\n");
        Conf *c = &sentinel_conf;

        g_assert_cmpint(conf_load(path, false, NULL, &c), ==, -EINVAL);
        g_assert_true(c == &sentinel_conf);
        g_unlink(path);
        g_free(path);
}

/* ---- Values --------------------------------------------------------------------------------- */

typedef struct ValueCase {
        const char *section;
        const char *key;
        const char *value;
        const char *problem; /* NULL: accepted */
} ValueCase;

#define NUMBER_RANGE "needs a whole number from 1 to 1000000, not"
#define UID_RANGE_SYNTAX \
        "ImageCheckUidRange= needs FIRST-LAST, two uids from 1 to 4294967294 (or nothing, " \
        "for no range), not"
/* 128 bytes, LABEL_TYPE_MAX. */
#define LONGEST_TYPE "t234567890123456789012345678901234567890123456789012345678901234" \
        "5678901234567890123456789012345678901234567890123456789012345678"

static const ValueCase value_cases[] = {
        { "General", "MediaRoot", "/run/media", NULL },
        { "General", "MediaRoot", "/media", NULL },
        { "General", "MediaRoot", "/srv/user-media/x.y", NULL },
        { "General", "MediaRoot", "", "MediaRoot= needs a value" },
        { "General", "MediaRoot", "/", "must not be the root directory" },
        { "General", "MediaRoot", "run/media", "must be an absolute path" },
        { "General", "MediaRoot", "/run//media", "no '//'" },
        { "General", "MediaRoot", "/run/media/", "no trailing '/'" },
        { "General", "MediaRoot", "//run", "no '//'" },
        { "General", "MediaRoot", "/run/./media", "no '.' or '..'" },
        { "General", "MediaRoot", "/run/../etc", "no '.' or '..'" },
        { "General", "MediaRoot", "/run/..", "no '.' or '..'" },
        { "General", "MediaRoot", "/run/.", "no '.' or '..'" },
        { "General", "MediaRoot", "/run/my media", "must not contain whitespace" },
        { "General", "MediaRoot", "~/media", "must be an absolute path" },
        { "General", "AllowedFilesystems", "ext4", NULL },
        { "General", "AllowedFilesystems", "ext4 xfs", NULL },
        { "General", "AllowedFilesystems", "ext4,xfs", NULL },
        { "General", "AllowedFilesystems", "ext4, xfs ,,btrfs", NULL },
        { "General", "AllowedFilesystems", "", NULL },
        { "General", "AllowedFilesystems", "ext4 fuse", "'fuse' is not a filesystem type" },
        { "General", "AllowedFilesystems", "EXT4", "'EXT4' is not a filesystem type" },
        { "General", "AllowedFilesystems", "tmpfs", "'tmpfs' is not a filesystem type" },
        { "General", "AllowedFilesystems", "ext4 ext4", "'ext4' is listed twice" },
        { "General", "AllowExec", "yes", NULL },
        { "General", "AllowExec", "no", NULL },
        { "General", "AllowExec", "true", NULL },
        { "General", "AllowExec", "false", NULL },
        { "General", "AllowExec", "on", NULL },
        { "General", "AllowExec", "off", NULL },
        { "General", "AllowExec", "1", NULL },
        { "General", "AllowExec", "0", NULL },
        { "General", "AllowExec", "", "AllowExec= needs a value" },
        { "General", "AllowExec", "2", "needs yes or no" },
        { "General", "AllowExec", "yess", "needs yes or no" },
        { "General", "AllowExec", "-1", "needs yes or no" },
        { "General", "ImageCheck", "maybe", "needs yes or no" },
        { "General", "ImageCheck", "no", NULL },
        { "General", "ImageCheckUser", "someone", NULL },
        { "General", "ImageCheckUser", "12345", NULL },
        { "General", "ImageCheckUser", "", "ImageCheckUser= needs a value" },
        { "General", "ImageCheckUser", "two words", "is neither a user name nor a numeric uid" },
        { "General", "ImageCheckUser", "a/b", "is neither a user name nor a numeric uid" },
        { "General", "ImageCheckUser", "-rf", "is neither a user name nor a numeric uid" },
        { "General", "ImageCheckUidRange", "1000-2000", NULL },
        { "General", "ImageCheckUidRange", "", NULL },
        { "General", "ImageCheckUidRange", "1-2", NULL },
        { "General", "ImageCheckUidRange", "1-65536", NULL },
        { "General", "ImageCheckUidRange", "4294901759-4294967294", NULL },
        { "General", "ImageCheckUidRange", "1879048192-1879048447", NULL },
        { "General", "ImageCheckUidRange", "0-10", UID_RANGE_SYNTAX " '0-10'" },
        { "General", "ImageCheckUidRange", "10-0", UID_RANGE_SYNTAX " '10-0'" },
        { "General", "ImageCheckUidRange", "10-5", "ImageCheckUidRange=10-5: the first uid is "
                                                   "greater than the last" },
        { "General", "ImageCheckUidRange", "5-5", "ImageCheckUidRange=5-5 is a single uid; a "
                                                  "range needs at least 2" },
        { "General", "ImageCheckUidRange", "1-65537", "ImageCheckUidRange=1-65537 has 65537 "
                                                      "uids; at most 65536 are allowed" },
        { "General", "ImageCheckUidRange", "1-70000", "has 70000 uids; at most 65536" },
        { "General", "ImageCheckUidRange", "1-4294967294", "has 4294967294 uids" },
        { "General", "ImageCheckUidRange", "1-4294967295", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "4294967294-4294967295", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "1-99999999999999999999", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "x-y", UID_RANGE_SYNTAX " 'x-y'" },
        { "General", "ImageCheckUidRange", "1000", UID_RANGE_SYNTAX " '1000'" },
        { "General", "ImageCheckUidRange", "1000-", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "-1000", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "-", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "1-2-3", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "1000 - 2000", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "+1000-2000", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "1000:2000", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "0x100-0x200", UID_RANGE_SYNTAX },
        { "General", "ImageCheckUidRange", "12345678901234567-12345678901234568",
          UID_RANGE_SYNTAX },
        { "General", "Driver", "auto", NULL },
        { "General", "Driver", "image:userspace system:kernel", NULL },
        { "General", "Driver", "fuse", "Driver=: 'fuse' is not auto, kernel, userspace" },
        { "General", "Driver", "image:kernel image:auto", "Driver=: 'image' is named twice" },
        { "General", "Driver", "", "Driver= needs a value" },
        { "ext4", "Driver", "removable:kernel", NULL },
        { "vfat", "Driver", "disk:kernel", "Driver=: 'disk:kernel' is not KIND:VALUE" },
        { "General", "DriverUidRange", "1879048448-1879049471", NULL },
        { "General", "DriverUidRange", "5000-5001", NULL },
        { "General", "DriverUidRange", "5000-5000", "DriverUidRange=5000-5000 is a single uid" },
        { "General", "DriverUidRange", "0-10", "DriverUidRange= needs FIRST-LAST, two uids "
          "from 1 to 4294967294, not '0-10'" },
        { "General", "DriverUidRange", "", "DriverUidRange= needs a value" },
        { "General", "DriverUidRange", "1879048192-1879048200",
          "DriverUidRange=1879048192-1879048200 overlaps ImageCheckUidRange=1879048192-1879048447" },
        { "General", "ImageCheckTimeoutSec", "1", NULL },
        { "General", "ImageCheckTimeoutSec", "86400", NULL },
        { "General", "ImageCheckTimeoutSec", "0", "needs a whole number from 1 to 86400" },
        { "General", "ImageCheckTimeoutSec", "86401", "needs a whole number from 1 to 86400" },
        { "General", "ImageCheckTimeoutSec", "5m", "needs a whole number from 1 to 86400" },
        { "General", "ImageCheckTimeoutSec", "", "ImageCheckTimeoutSec= needs a value" },
        { "Limits", "MaxRequests", "1", NULL },
        { "Limits", "MaxRequests", "1000000", NULL },
        { "Limits", "MaxRequests", "0", NUMBER_RANGE " '0'" },
        { "Limits", "MaxRequests", "1000001", NUMBER_RANGE " '1000001'" },
        { "Limits", "MaxRequests", "-1", NUMBER_RANGE " '-1'" },
        { "Limits", "MaxRequests", "+5", NUMBER_RANGE " '+5'" },
        { "Limits", "MaxRequests", "4294967297", NUMBER_RANGE " '4294967297'" },
        { "Limits", "MaxRequests", "99999999999999999999999999", NUMBER_RANGE },
        { "Limits", "MaxRequests", "ten", NUMBER_RANGE " 'ten'" },
        { "Limits", "MaxRequests", "0x10", NUMBER_RANGE " '0x10'" },
        { "Limits", "MaxRequests", "1e3", NUMBER_RANGE " '1e3'" },
        { "Limits", "MaxRequests", "5 6", NUMBER_RANGE " '5 6'" },
        { "Limits", "MaxRequests", "5.0", NUMBER_RANGE " '5.0'" },
        { "Limits", "MaxRequests", "", "MaxRequests= needs a value" },
        { "Limits", "MaxRequestsPerUser", "0", NUMBER_RANGE },
        { "Limits", "MaxMounts", "abc", NUMBER_RANGE },
        { "Limits", "MaxMountsPerUser", "-3", NUMBER_RANGE },
        { "Limits", "MaxLoopDevices", "2000000", NUMBER_RANGE },
        { "Limits", "MaxLoopDevicesPerUser", "0", NUMBER_RANGE },
        { "Limits", "MaxWorkers", "many", NUMBER_RANGE },
        { "Limits", "MaxWorkersPerUser", "0", NUMBER_RANGE },
        { "Limits", "MaxUnauthorizedRequests", "1", NULL },
        { "Limits", "MaxUnauthorizedRequests", "1000000", NULL },
        { "Limits", "MaxUnauthorizedRequests", "0", NUMBER_RANGE " '0'" },
        { "Limits", "MaxUnauthorizedRequests", "1000001", NUMBER_RANGE " '1000001'" },
        { "Limits", "MaxUnauthorizedRequests", "half", NUMBER_RANGE " 'half'" },
        { "Limits", "MaxUnauthorizedRequests", "", "MaxUnauthorizedRequests= needs a value" },
        { "Limits", "RequestTimeoutSec", "1", NULL },
        { "Limits", "RequestTimeoutSec", "3600", NULL },
        { "Limits", "RequestTimeoutSec", "3601", "needs a whole number from 1 to 3600" },
        { "Limits", "RequestTimeoutSec", "0", "needs a whole number from 1 to 3600" },
        { "Limits", "RequestTimeoutSec", "30s", "needs a whole number from 1 to 3600" },
        { "Limits", "DriverMemoryMax", "64M", NULL },
        { "Limits", "DriverMemoryMax", "67108864", NULL },
        { "Limits", "DriverMemoryMax", "64G", NULL },
        { "Limits", "DriverMemoryMax", "1G", NULL },
        { "Limits", "DriverMemoryMax", "63M", "needs a size from 64M to 64G" },
        { "Limits", "DriverMemoryMax", "65G", "needs a size from 64M to 64G" },
        { "Limits", "DriverMemoryMax", "1T", "needs a size from 64M to 64G" },
        { "Limits", "DriverMemoryMax", "M", "needs a size from 64M to 64G" },
        { "Limits", "DriverMemoryMax", "-1G", "needs a size from 64M to 64G" },
        { "Limits", "DriverMemoryMax", "17179869184G", "needs a size from 64M to 64G" },
        { "Limits", "DriverTasksMax", "8", NULL },
        { "Limits", "DriverTasksMax", "4096", NULL },
        { "Limits", "DriverTasksMax", "7", "needs a whole number from 8 to 4096" },
        { "Limits", "DriverTasksMax", "4097", "needs a whole number from 8 to 4096" },
        { "Limits", "DriverCPUSec", "1", NULL },
        { "Limits", "DriverCPUSec", "infinity", NULL },
        { "Limits", "DriverCPUSec", "31622400", NULL },
        { "Limits", "DriverCPUSec", "0", "needs seconds from 1 to 31622400, or infinity" },
        { "Limits", "DriverCPUSec", "31622401", "needs seconds from 1 to 31622400" },
        { "Limits", "DriverCPUSec", "1h", "needs seconds from 1 to 31622400" },
        { "Labels", "SELinuxType", "", NULL },
        { "Labels", "SELinuxType", "removable_t", NULL },
        { "Labels", "SELinuxType", "usermount.media-t_2", NULL },
        { "Labels", "SELinuxType", "x", NULL },
        { "Labels", "SELinuxType", LONGEST_TYPE, NULL },
        { "Labels", "SELinuxType", LONGEST_TYPE "x", "is not an SELinux type name" },
        { "Labels", "SELinuxType", "_t", "'_t' is not an SELinux type name" },
        { "Labels", "SELinuxType", "1t", "is not an SELinux type name" },
        { "Labels", "SELinuxType", "user_u:object_r:tmp_t", "is not an SELinux type name" },
        { "Labels", "SELinuxType", "tmp_t s0", "is not an SELinux type name" },
        { "Labels", "SELinuxType", "tmp_t,s0", "is not an SELinux type name" },
        { "Labels", "SELinuxType", "t\xc3\xa9", "is not an SELinux type name" },
};

static void test_value(const void *data) {
        const ValueCase *c = data;
        char *contents = g_strdup_printf("# line 1\n[%s]\n%s=%s\n", c->section, c->key, c->value);

        if (c->problem) {
                char *problem = g_strdup_printf("3:%s", c->problem);

                expect_problems(contents, PROBLEMS(problem));
                g_free(problem);
        } else
                conf_unref(load_ok(contents));
        g_free(contents);
}

/* What each accepted key does to the Conf. */
static void test_general_values(void) {
        Conf *c = load_ok("[General]\nMediaRoot=/srv/media\nAllowedFilesystems=ext4, vfat\n"
                          "AllowExec=false\nImageCheck=no\nImageCheckUser=someone\n"
                          "ImageCheckTimeoutSec=60\n");

        g_assert_cmpstr(c->media_root, ==, "/srv/media");
        for (size_t i = 0; i < c->n_fstypes; i++)
                g_assert_cmpint(c->fstypes[i].allowed, ==,
                                streq(c->fstypes[i].name, "ext4") ||
                                streq(c->fstypes[i].name, "vfat"));
        g_assert_true(conf_fstype_allowed(c, "vfat"));
        g_assert_false(conf_fstype_allowed(c, "xfs"));
        g_assert_false(c->allow_exec);
        g_assert_false(c->image_check);
        g_assert_cmpstr(c->image_check_user, ==, "someone");
        /* Not looked up while the check is off. */
        g_assert_cmpuint(c->image_check_uid, ==, (uid_t) -1);
        g_assert_cmpuint(c->image_check_timeout_usec, ==, 60 * 1000000ULL);
        /* By default, checks take uids of their own from 256 in systemd's unused block. */
        g_assert_cmpuint(c->image_check_uid_first, ==, 1879048192u);
        g_assert_cmpuint(c->image_check_uid_count, ==, 256);
        conf_unref(c);

        c = load_ok("[General]\nImageCheckUidRange=1000-2000\n");
        g_assert_cmpuint(c->image_check_uid_first, ==, 1000);
        g_assert_cmpuint(c->image_check_uid_count, ==, 1001);
        conf_unref(c);
        c = load_ok("[General]\nImageCheckUidRange=4294901759-4294967294\n");
        g_assert_cmpuint(c->image_check_uid_first, ==, 4294901759u);
        g_assert_cmpuint(c->image_check_uid_count, ==, 65536);
        conf_unref(c);
        c = load_ok("[General]\nImageCheckUidRange=\n");
        g_assert_cmpuint(c->image_check_uid_count, ==, 0);
        conf_unref(c);

        c = load_ok("[General]\nAllowedFilesystems=\n");
        for (size_t i = 0; i < c->n_fstypes; i++)
                g_assert_false(c->fstypes[i].allowed);
        conf_unref(c);
}

static void test_limits_values(void) {
        Conf *c = load_ok("[Limits]\nMaxRequests=1\nMaxRequestsPerUser=2\nMaxMounts=3\n"
                          "MaxMountsPerUser=4\nMaxLoopDevices=5\nMaxLoopDevicesPerUser=6\n"
                          "MaxWorkers=7\nMaxWorkersPerUser=8\nRequestTimeoutSec=9\n"
                          "MaxUnauthorizedRequests=10\nDriverMemoryMax=128M\n"
                          "DriverTasksMax=11\nDriverCPUSec=12\n");

        g_assert_cmpuint(c->limits.max_requests, ==, 1);
        g_assert_cmpuint(c->limits.max_requests_per_user, ==, 2);
        g_assert_cmpuint(c->limits.max_mounts, ==, 3);
        g_assert_cmpuint(c->limits.max_mounts_per_user, ==, 4);
        g_assert_cmpuint(c->limits.max_loop_devices, ==, 5);
        g_assert_cmpuint(c->limits.max_loop_devices_per_user, ==, 6);
        g_assert_cmpuint(c->limits.max_workers, ==, 7);
        g_assert_cmpuint(c->limits.max_workers_per_user, ==, 8);
        g_assert_cmpuint(c->limits.request_timeout_usec, ==, 9 * 1000000ULL);
        g_assert_cmpuint(c->limits.max_unauthorized_requests, ==, 10);
        g_assert_cmpuint(c->limits.driver_memory_max, ==, 128ULL << 20);
        g_assert_cmpuint(c->limits.driver_tasks_max, ==, 11);
        g_assert_cmpuint(c->limits.driver_cpu_sec, ==, 12);
        conf_unref(c);
        c = load_ok("[Limits]\nDriverCPUSec=infinity\nDriverMemoryMax=2G\n");
        g_assert_cmpuint(c->limits.driver_cpu_sec, ==, 0);
        g_assert_cmpuint(c->limits.driver_memory_max, ==, 2ULL << 30);
        conf_unref(c);
        /* Well below the defaults of MaxWorkers= and MaxRequests= (usermount.conf(5)). */
        c = defaults();
        g_assert_cmpuint(c->limits.max_unauthorized_requests, ==, 8);
        g_assert_cmpuint(c->limits.max_unauthorized_requests, <=, c->limits.max_workers / 4);
        g_assert_cmpuint(c->limits.max_unauthorized_requests, <=, c->limits.max_requests / 4);
        conf_unref(c);
}

static void test_labels_values(void) {
        Conf *c = load_ok("[Labels]\nSELinuxType=removable_t\n");

        g_assert_cmpstr(c->selinux_type, ==, "removable_t");
        conf_unref(c);
        /* Empty is the default: computed from the caller's context. */
        c = load_ok("[Labels]\nSELinuxType=\n");
        g_assert_null(c->selinux_type);
        assert_defaults(c);
        conf_unref(c);
}

static void test_image_check_user(void) {
        Conf *c = load_ok("[General]\nImageCheck=yes\nImageCheckUser=nobody\n"
                          "ImageCheckUidRange=\n");

        g_assert_true(c->image_check);
        g_assert_cmpuint(c->image_check_uid, ==, 65534);
        g_assert_cmpuint(c->image_check_gid, ==, 65534);
        conf_unref(c);
        c = load_ok("[General]\nImageCheckUser=65534\nImageCheck=on\nImageCheckUidRange=\n");
        g_assert_cmpuint(c->image_check_uid, ==, 65534);
        conf_unref(c);

        expect_problems("[General]\nImageCheck=yes\nImageCheckUser=root\nImageCheckUidRange=\n",
                        PROBLEMS("3:ImageCheckUser: 'root' has uid or gid 0"));
        expect_problems("[General]\nImageCheckUser=0\n\nImageCheck=yes\nImageCheckUidRange=\n",
                        PROBLEMS("2:ImageCheckUser: '0' has uid or gid 0"));
        expect_problems("[General]\nImageCheckUidRange=\nImageCheck=yes\n"
                        "ImageCheckUser=no-such-user-here\n",
                        PROBLEMS("4:ImageCheckUser: user 'no-such-user-here' does not exist"));
        /* A numeric uid without an account is used as uid and gid. */
        c = load_ok("[General]\nImageCheck=yes\nImageCheckUser=4000000000\n"
                    "ImageCheckUidRange=\n");
        g_assert_cmpuint(c->image_check_uid, ==, 4000000000u);
        g_assert_cmpuint(c->image_check_gid, ==, 4000000000u);
        conf_unref(c);
        /* Without ImageCheckUser=, the default user must exist; the problem is ImageCheck='s. */
        if (getpwnam(CONF_DEFAULT_IMAGE_CHECK_USER))
                return;
        expect_problems("[General]\n\nImageCheck=yes\nImageCheckUidRange=\n",
                        PROBLEMS("3:ImageCheckUser: user 'usermount-check' does not exist"));
}

/* With a uid range (the default), ImageCheckUser= is not looked up at all. */
static void test_image_check_uid_range(void) {
        Conf *c = load_ok("[General]\nImageCheck=yes\nImageCheckUser=doesnotexist\n"
                          "ImageCheckUidRange=1000-2000\n");

        g_assert_true(c->image_check);
        g_assert_cmpuint(c->image_check_uid_first, ==, 1000);
        g_assert_cmpuint(c->image_check_uid_count, ==, 1001);
        g_assert_cmpuint(c->image_check_uid, ==, (uid_t) -1);
        conf_unref(c);
        /* The same with the default range; even root is not looked at. */
        c = load_ok("[General]\nImageCheck=yes\nImageCheckUser=doesnotexist\n");
        g_assert_cmpuint(c->image_check_uid_first, ==, CONF_DEFAULT_IMAGE_CHECK_UID_FIRST);
        g_assert_cmpuint(c->image_check_uid_count, ==, CONF_DEFAULT_IMAGE_CHECK_UID_COUNT);
        g_assert_cmpuint(c->image_check_uid, ==, (uid_t) -1);
        conf_unref(c);
        c = load_ok("[General]\nImageCheck=yes\nImageCheckUser=root\n");
        conf_unref(c);
        /* The default user need not exist either. */
        c = load_ok("[General]\nImageCheck=yes\n");
        g_assert_cmpuint(c->image_check_uid, ==, (uid_t) -1);
        conf_unref(c);
        /* An empty range is what makes ImageCheckUser= count again. */
        expect_problems("[General]\nImageCheck=yes\nImageCheckUser=doesnotexist\n"
                        "ImageCheckUidRange=\n",
                        PROBLEMS("3:ImageCheckUser: user 'doesnotexist' does not exist"));
}

/* ---- Per-type sections ---------------------------------------------------------------------- */

static const ProblemCase fstype_cases[] = {
        { "allowed-refused", "[ext4]\nAllowedOptions=acl,suid,dev,exec,x-gvfs-show,context\n",
          PROBLEMS("2:[ext4] AllowedOptions=: 'suid' can never be allowed: setuid and setgid "
                   "bits",
                   "2:'dev' can never be allowed: device nodes",
                   "2:'exec' can never be allowed: running programs",
                   "2:'x-gvfs-show' can never be allowed: x-* options",
                   "2:'context' can never be allowed: security labels") },
        { "allowed-unknown", "[xfs]\nAllowedOptions=acl, data\n",
          PROBLEMS("2:[xfs] AllowedOptions=: 'acl' is not an option usermount knows for xfs",
                   "2:'data' is not an option usermount knows for xfs") },
        { "allowed-forced", "[ext4]\nAllowedOptions=errors\n[vfat]\nAllowedOptions=uid umask\n",
          PROBLEMS("2:'errors' can never be allowed on ext4: it is set by usermount",
                   "4:'uid' can never be allowed on vfat: it is set by usermount",
                   "4:'umask' can never be allowed on vfat") },
        { "allowed-type-refused", "[btrfs]\nAllowedOptions=device\n",
          PROBLEMS("2:'device' can never be allowed on btrfs: it would make the filesystem "
                   "open further devices") },
        { "allowed-values", "[ext4]\nAllowedOptions=data=ordered\n",
          PROBLEMS("2:'data=ordered': AllowedOptions= lists option names only") },
        { "allowed-twice", "[ext4]\nAllowedOptions=acl,noatime,acl\n",
          PROBLEMS("2:'acl' is listed twice") },
        { "allowed-bad-name", "[ext4]\nAllowedOptions=a;b\n",
          PROBLEMS("2:option name 'a;b' is not valid") },
        { "forced-bad-value", "[ext4]\n\nForcedOptions=commit=abc\n",
          PROBLEMS("3:[ext4] ForcedOptions=: ext4 option 'commit' needs a whole number from 0 "
                   "to 86400, not 'abc'") },
        { "forced-owner", "[vfat]\nForcedOptions=uid=0\n[exfat]\nForcedOptions=gid=0\n"
          "[udf]\nForcedOptions=umask=0\n",
          PROBLEMS("2:'uid' cannot be configured on vfat: usermount always sets it",
                   "4:'gid' cannot be configured on exfat",
                   "6:'umask' cannot be configured on udf") },
        { "forced-errors", "[ext3]\nForcedOptions=errors=remount-ro\n",
          PROBLEMS("2:'errors' cannot be configured on ext3") },
        { "forced-refused", "[ext4]\nForcedOptions=noatime,suid\nDefaultOptions=errors=panic\n",
          PROBLEMS("2:option 'suid' is not allowed: setuid",
                   "3:option 'errors=panic' is not allowed: a damaged filesystem") },
        { "forced-rw", "[xfs]\nForcedOptions=rw\n", PROBLEMS("2:'rw' cannot be forced") },
        { "forced-contradiction", "[ext4]\nForcedOptions=acl,noacl\n",
          PROBLEMS("2:'acl' and 'noacl' contradict each other") },
        { "forced-atime-twice", "[xfs]\nForcedOptions=noatime,relatime\n",
          PROBLEMS("2:'noatime' and 'relatime' contradict each other") },
        { "forced-key-twice", "[ext4]\nForcedOptions=commit=5,commit=6\n",
          PROBLEMS("2:'commit' is given twice") },
        { "forced-read-only-only", "[ext4]\nForcedOptions=noload\n",
          PROBLEMS("2:'noload' can only be forced together with 'ro'") },
        { "default-read-only-only", "[xfs]\nDefaultOptions=norecovery\n",
          PROBLEMS("2:'norecovery' cannot be a default") },
        { "default-ro-rw", "[ext4]\nDefaultOptions=ro,rw\n",
          PROBLEMS("2:'ro' and 'rw' contradict each other") },
        { "default-unknown", "[squashfs]\nDefaultOptions=acl\n",
          PROBLEMS("2:'acl' is not an option usermount knows for squashfs") },
        { "default-flag-value", "[ext4]\nDefaultOptions=acl=1,noatime=yes\n",
          PROBLEMS("2:ext4 option 'acl' takes no value", "2:option 'noatime' takes no value") },
        { "default-vs-forced", "[ext4]\nDefaultOptions=noatime,acl\nForcedOptions=relatime,"
          "noacl\n", PROBLEMS("2:'noatime' contradicts 'relatime' of ForcedOptions=",
                              "2:'acl' contradicts 'noacl' of ForcedOptions=") },
        { "options-syntax", "[ext4]\nDefaultOptions=acl,,noatime\nForcedOptions=,ro\n",
          PROBLEMS("2:the option string has an empty item",
                   "3:the option string has an empty item") },
        { "options-spaces", "[ext4]\nDefaultOptions=acl, noatime\n",
          PROBLEMS("2:option name ' noatime' is not valid") },
        { "options-quotes", "[ext4]\nDefaultOptions=data=\"ordered\"\n",
          PROBLEMS("2:quotes and backslashes are not accepted") },
        { "options-vfat-value", "[vfat]\nDefaultOptions=codepage=0\nForcedOptions=shortname=x\n",
          PROBLEMS("2:vfat option 'codepage' needs a whole number from 1 to 9999",
                   "3:vfat option 'shortname' must be one of") },
};

/* The example from the brief and its relatives are accepted as they are written. */
static void test_fstype_values(void) {
        Conf *c = load_ok("[ext4]\nAllowedOptions=noatime,acl\nDefaultOptions=noatime\n"
                          "ForcedOptions=data=ordered\n[xfs]\nForcedOptions=ro,norecovery\n"
                          "[vfat]\nAllowedOptions=\nDefaultOptions=\nForcedOptions=\n"
                          "[btrfs]\nAllowedOptions=compress noatime\n"
                          "DefaultOptions=compress=zstd:3,noatime\n[ext2]\n"
                          "DefaultOptions=nosuid,noexec\n");
        const ConfFsType *t = conf_fstype(c, "ext4");

        g_assert_true(g_strv_equal((const char *const *) t->allowed_options,
                                   (const char *const[]){ "noatime", "acl", NULL }));
        g_assert_cmpstr(t->default_options, ==, "noatime");
        g_assert_cmpstr(t->forced_options, ==, "data=ordered");
        g_assert_cmpstr(t->path, ==, c->path);
        g_assert_cmpstr(conf_fstype(c, "xfs")->forced_options, ==, "ro,norecovery");
        t = conf_fstype(c, "vfat");
        g_assert_nonnull(t->allowed_options);
        g_assert_null(t->allowed_options[0]);
        g_assert_null(t->default_options);
        g_assert_null(t->forced_options);
        g_assert_true(g_strv_equal((const char *const *) conf_fstype(c, "btrfs")->allowed_options,
                                   (const char *const[]){ "compress", "noatime", NULL }));
        g_assert_null(conf_fstype(c, "udf")->allowed_options);
        conf_unref(c);
}

/* ---- The shipped example -------------------------------------------------------------------- */

static char *example_contents(void) {
        char *contents = NULL;

        g_assert_true(g_file_get_contents(EXAMPLE_CONF, &contents, NULL, NULL));
        return contents;
}

static void test_example_is_defaults(void) {
        Loaded l = load_path(EXAMPLE_CONF, false);

        g_assert_cmpint(l.r, ==, 0);
        g_assert_cmpstr(l.diag, ==, "");
        assert_defaults(l.conf);
        loaded_done(&l);
}

/* "#Key=value": a '#', a capital, letters, '='. */
static bool is_commented_setting(const char *line) {
        size_t n;

        if (line[0] != '#' || !g_ascii_isupper(line[1]))
                return false;
        for (n = 1; g_ascii_isalpha(line[n]); n++)
                ;
        return line[n] == '=';
}

static bool is_commented_header(const char *line) {
        return line[0] == '#' && line[1] == '[';
}

/*
 * Uncomments each documented setting in turn (with its section header, if that is
 * commented out too): each must be valid, and every setting outside the per-type example
 * must leave the built-in defaults as they are, since it documents them.
 */
static void test_example_each_setting(void) {
        char *contents = example_contents();
        char **lines = g_strsplit(contents, "\n", -1);
        unsigned n_settings = 0;
        int header = -1;

        for (int i = 0; lines[i]; i++) {
                char *saved_header = NULL, *saved, *joined;
                Conf *c;

                if (is_commented_header(lines[i]))
                        header = i;
                else if (lines[i][0] == '[')
                        header = -1;
                if (!is_commented_setting(lines[i]))
                        continue;
                saved = lines[i];
                lines[i] = saved + 1;
                if (header >= 0) {
                        saved_header = lines[header];
                        lines[header] = saved_header + 1;
                }
                joined = g_strjoinv("\n", lines);
                c = load_ok(joined);
                if (header < 0)
                        assert_defaults(c);
                conf_unref(c);
                g_free(joined);
                lines[i] = saved;
                if (saved_header)
                        lines[header] = saved_header;
                n_settings++;
        }
        /* 9 in [General], 15 in [Limits], 1 in [Labels], 3 in the per-type example. */
        g_assert_cmpuint(n_settings, ==, 28);
        g_strfreev(lines);
        g_free(contents);
}

/* All of it at once, too. */
static void test_example_all_settings(void) {
        char *contents = example_contents();
        char **lines = g_strsplit(contents, "\n", -1);
        char *joined;
        Conf *c;

        for (char **line = lines; *line; line++)
                if (is_commented_setting(*line) || is_commented_header(*line))
                        memmove(*line, *line + 1, strlen(*line));
        joined = g_strjoinv("\n", lines);
        c = load_ok(joined);
        g_assert_cmpstr(conf_fstype(c, "ext4")->forced_options, ==, "data=ordered");
        g_assert_cmpuint(c->limits.max_requests, ==, CONF_DEFAULT_MAX_REQUESTS);
        conf_unref(c);
        g_free(joined);
        g_strfreev(lines);
        g_free(contents);
}

/* ---- --check-config ------------------------------------------------------------------------- */

static int check(const char *path, char **ret_out) {
        size_t size = 0;
        FILE *out = open_memstream(ret_out, &size);
        int r;

        g_assert_nonnull(out);
        r = conf_check(path, out);
        fclose(out);
        return r;
}

/* The summary --check-config printed for the file at path loads to the same settings. */
static void assert_summary_reads_back(const char *path, const char *out) {
        char *again_path = write_file(out, strlen(out));
        Loaded first = load_path(path, false), again = load_path(again_path, false);

        g_assert_cmpint(again.r, ==, 0);
        assert_conf_equal(first.conf, again.conf);
        loaded_done(&first);
        loaded_done(&again);
        g_unlink(again_path);
        g_free(again_path);
}

/* The summary is itself a valid file that yields the same settings. */
static void test_check_valid(void) {
        char *path = write_string("[General]\nAllowedFilesystems=ext4 vfat\nAllowExec=no\n"
                                "ImageCheck=yes\nImageCheckUser=nobody\nImageCheckUidRange=\n"
                                "[Limits]\nMaxWorkers=3\n"
                                "[Labels]\nSELinuxType=removable_t\n"
                                "[ext4]\nAllowedOptions=acl,noatime\nDefaultOptions=noatime\n"
                                "ForcedOptions=data=ordered\n");
        char *out = NULL;

        g_assert_cmpint(check(path, &out), ==, 0);
        g_assert_true(g_str_has_prefix(out, "# "));
        g_assert_nonnull(strstr(out, " is valid; the effective settings:\n"));
        g_assert_nonnull(strstr(out, "\nAllowedFilesystems=ext4 vfat\n"));
        g_assert_nonnull(strstr(out, "\nMaxWorkers=3\n"));
        g_assert_nonnull(strstr(out, "\nMaxRequests=64\n"));
        g_assert_nonnull(strstr(out, "\nMaxWorkersPerUser=4\nMaxUnauthorizedRequests=8\n"));
        g_assert_nonnull(strstr(out, "\n\n[Labels]\nSELinuxType=removable_t\n\n[ext2]\n"));
        g_assert_nonnull(strstr(out, "\nImageCheck=yes\n# the image check runs as uid 65534, "
                                     "gid 65534\nImageCheckUser=nobody\nImageCheckUidRange=\n"
                                     "ImageCheckTimeoutSec=300\n"));
        g_assert_nonnull(strstr(out, "\n[ext4]\n# always forced by usermount: "
                                     "errors=remount-ro\nAllowedOptions=acl,noatime\n"
                                     "DefaultOptions=noatime\nForcedOptions=data=ordered\n"));
        g_assert_nonnull(strstr(out, "\n[xfs]\n# not allowed by AllowedFilesystems=\n"));
        g_assert_nonnull(strstr(out, "# always forced by usermount: umask=<caller's umask>,"
                                     "uid=<caller's uid>,gid=<caller's gid>\n"));

        assert_summary_reads_back(path, out);
        g_unlink(path);
        g_free(path);
        g_free(out);
}

/* A uid range, set or the default, in the summary: which uids, and that it reads back. */
static void test_check_uid_range(void) {
        static const struct {
                const char *file, *expected;
        } cases[] = {
                { "[General]\nImageCheck=yes\nImageCheckUser=doesnotexist\n"
                  "ImageCheckUidRange=1000-2000\n",
                  "\nImageCheck=yes\n# the image check runs as uid 1000 to 2000, a uid of its own "
                  "for each check (its gid the same); ImageCheckUser= is not used\n"
                  "ImageCheckUser=doesnotexist\nImageCheckUidRange=1000-2000\n"
                  "ImageCheckTimeoutSec=300\n" },
                { "[General]\nImageCheck=yes\n",
                  "\nImageCheck=yes\n# the image check runs as uid 1879048192 to 1879048447, a "
                  "uid of its own for each check (its gid the same); ImageCheckUser= is not "
                  "used\nImageCheckUser=usermount-check\n"
                  "ImageCheckUidRange=1879048192-1879048447\nImageCheckTimeoutSec=300\n" },
                { "[General]\n",
                  "\nImageCheck=no\nImageCheckUser=usermount-check\n"
                  "ImageCheckUidRange=1879048192-1879048447\nImageCheckTimeoutSec=300\n" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                char *path = write_string(cases[i].file), *out = NULL;

                g_assert_cmpint(check(path, &out), ==, 0);
                g_assert_nonnull(strstr(out, cases[i].expected));
                assert_summary_reads_back(path, out);
                g_unlink(path);
                g_free(path);
                g_free(out);
        }
}

static void test_check_invalid(void) {
        char *path = write_string("[General]\nAllowExec=perhaps\n[Limits]\nMaxMounts=0\n");
        char *out = NULL, *expected;

        g_assert_cmpint(check(path, &out), ==, 1);
        expected = g_strdup_printf("%s:2: AllowExec= needs yes or no (true/false, on/off, 1/0), "
                                   "not 'perhaps'\n%s:4: MaxMounts= needs a whole number from 1 "
                                   "to 1000000, not '0'\n%s: not valid\n", path, path, path);
        g_assert_cmpstr(out, ==, expected);
        g_unlink(path);
        g_free(expected);
        g_free(path);
        g_free(out);
}

static void test_check_unreadable(void) {
        char *path = g_strdup_printf("%s/missing.conf", tmpdir);
        char *out = NULL;

        /* A file named on the command line must exist. */
        g_assert_cmpint(check(path, &out), ==, -ENOENT);
        g_assert_true(g_str_has_prefix(out, path));
        g_assert_nonnull(strstr(out, ": cannot be read: "));
        g_free(out);
        out = NULL;
        g_assert_cmpint(check(tmpdir, &out), ==, 1);
        g_assert_nonnull(strstr(out, "is a directory"));
        g_free(path);
        g_free(out);
}

static void test_check_default_path(void) {
        char *out = NULL;

        if (access(CONF_DEFAULT_PATH, F_OK) == 0 || errno != ENOENT) {
                g_test_skip(CONF_DEFAULT_PATH " exists on this machine");
                return;
        }
        g_assert_cmpint(check(NULL, &out), ==, 0);
        g_assert_true(g_str_has_prefix(out, "# " CONF_DEFAULT_PATH ": no file; the built-in "
                                            "defaults apply:\n[General]\nMediaRoot=/run/media\n"));
        g_free(out);
}

/* ---- Reference counting --------------------------------------------------------------------- */

static void test_ref(void) {
        Conf *c = defaults();

        g_assert_true(conf_ref(c) == c);
        g_assert_cmpuint(c->n_ref, ==, 2);
        g_assert_null(conf_unref(c));
        g_assert_cmpuint(c->n_ref, ==, 1);
        g_assert_null(conf_unref(c));
        g_assert_null(conf_unref(NULL));
        g_assert_null(conf_ref(NULL));
        g_assert_null(conf_fstype(NULL, "ext4"));
        g_assert_false(conf_fstype_allowed(NULL, "ext4"));
}

static void add_cases(const char *prefix, const ProblemCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                char *path = g_strdup_printf("%s/%s", prefix, cases[i].name);

                g_test_add_data_func(path, &cases[i], test_problem_case);
                g_free(path);
        }
}

static void add_value_cases(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(value_cases); i++) {
                const ValueCase *c = &value_cases[i];
                char *path = g_strdup_printf("/conf/value/%s/%03zu-%s", c->key, i,
                                             c->problem ? "refused" : "accepted");

                g_test_add_data_func(path, c, test_value);
                g_free(path);
        }
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        tmpdir = g_dir_make_tmp("test-conf-XXXXXX", NULL);
        g_assert_nonnull(tmpdir);

        g_test_add_func("/conf/line/longest", test_line_longest);
        g_test_add_func("/conf/line/too-long", test_line_too_long);
        g_test_add_func("/conf/line/never-split", test_line_never_split);
        g_test_add_func("/conf/line/nul-bytes", test_nul_bytes);
        g_test_add_func("/conf/line/invalid-utf8", test_invalid_utf8);
        g_test_add_func("/conf/line/control-characters", test_control_characters);
        g_test_add_func("/conf/file/largest", test_file_largest);
        g_test_add_func("/conf/file/one-mib", test_file_one_mib);
        g_test_add_func("/conf/file/binary-garbage", test_binary_garbage);
        g_test_add_func("/conf/file/random-garbage", test_random_garbage);
        g_test_add_func("/conf/file/many-problems", test_many_problems);
        g_test_add_func("/conf/file/missing", test_missing);
        g_test_add_func("/conf/file/directory", test_directory);
        g_test_add_func("/conf/file/fifo", test_fifo);
        g_test_add_func("/conf/file/symlink-to-device", test_symlink_to_device);
        g_test_add_func("/conf/file/symlink-dangling", test_symlink_dangling);
        g_test_add_func("/conf/file/symlink-to-file", test_symlink_to_file);
        g_test_add_func("/conf/file/world-writable", test_world_writable);
        g_test_add_func("/conf/file/no-diag", test_no_diag);
        add_cases("/conf/syntax", syntax_cases, G_N_ELEMENTS(syntax_cases));
        g_test_add_func("/conf/accepted/empty", test_empty_file);
        g_test_add_func("/conf/accepted/comments", test_comments_ok);
        g_test_add_func("/conf/accepted/bom", test_bom);
        g_test_add_func("/conf/accepted/crlf", test_crlf);
        g_test_add_func("/conf/accepted/indentation", test_indentation_and_spaces);
        g_test_add_func("/conf/accepted/section-order", test_section_order);
        add_value_cases();
        g_test_add_func("/conf/keys/general", test_general_values);
        g_test_add_func("/conf/keys/limits", test_limits_values);
        g_test_add_func("/conf/keys/labels", test_labels_values);
        g_test_add_func("/conf/keys/image-check-user", test_image_check_user);
        g_test_add_func("/conf/keys/image-check-uid-range", test_image_check_uid_range);
        g_test_add_func("/conf/keys/fstype", test_fstype_values);
        add_cases("/conf/fstype", fstype_cases, G_N_ELEMENTS(fstype_cases));
        g_test_add_func("/conf/example/is-defaults", test_example_is_defaults);
        g_test_add_func("/conf/example/each-setting", test_example_each_setting);
        g_test_add_func("/conf/example/all-settings", test_example_all_settings);
        g_test_add_func("/conf/check/valid", test_check_valid);
        g_test_add_func("/conf/check/uid-range", test_check_uid_range);
        g_test_add_func("/conf/check/invalid", test_check_invalid);
        g_test_add_func("/conf/check/unreadable", test_check_unreadable);
        g_test_add_func("/conf/check/default-path", test_check_default_path);
        g_test_add_func("/conf/ref", test_ref);

        r = g_test_run();
        g_assert_cmpint(g_rmdir(tmpdir), ==, 0);
        g_free(tmpdir);
        return r;
}
