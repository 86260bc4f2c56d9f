/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of daemon/owner.c: the accountable owner of a uid through /etc/subuid text
 * (ranges, overlaps, root, lines that delegate nothing), rereading the file when it
 * changes and only then, the bound on what is read, and the set of owners polkit
 * authorized (docs/security.md, class 36).
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "owner.h"

/* Names the tests know, without NSS: "alice" 1000, "bob" 1001, "carol" 999, "root" 0. */
static int resolve_test(const char *name, uid_t *ret) {
        static const struct {
                const char *name;
                uid_t uid;
        } users[] = { { "alice", 1000 }, { "bob", 1001 }, { "carol", 999 }, { "root", 0 } };

        for (size_t i = 0; i < G_N_ELEMENTS(users); i++)
                if (strcmp(name, users[i].name) == 0) {
                        *ret = users[i].uid;
                        return 0;
                }
        /* Numbers as the daemon reads them; no other name reaches NSS here. */
        return g_ascii_isdigit(name[0]) ? owner_resolve_nss(name, ret) : -ENOENT;
}

static void parse(OwnerMap *m, const char *text) {
        g_assert_cmpint(owner_map_parse(m, text, strlen(text), resolve_test), ==, 0);
}

typedef struct LookupCase {
        uid_t uid;
        uid_t owner;
} LookupCase;

static void assert_lookups(const OwnerMap *m, const LookupCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                uid_t got = owner_map_lookup(m, cases[i].uid);

                if (got != cases[i].owner)
                        g_error("uid %u: owner %u, expected %u", (unsigned) cases[i].uid,
                                (unsigned) got, (unsigned) cases[i].owner);
        }
}

static void test_ranges(void) {
        OwnerMap m = {};
        const LookupCase cases[] = {
                { 99999, 99999 },    /* below every range */
                { 100000, 1000 },    /* first of alice's */
                { 165535, 1000 },    /* last of alice's */
                { 165536, 1001 },    /* first of bob's, right after */
                { 231071, 1001 },
                { 231072, 231072 },  /* after bob's */
                { 1000, 1000 },      /* the owners themselves */
                { 1001, 1001 },
                { 500000, 999 },     /* carol's, given by uid */
                { 500009, 999 },
                { 500010, 500010 },
                { 4294967294u, 1000 }, /* a range that ends at the top of the id space */
                { (uid_t) -1, (uid_t) -1 }, /* the invalid uid stays what it is */
        };

        parse(&m, "alice:100000:65536\n"
                  "bob:165536:65536\n"
                  "999:500000:10\n"
                  "alice:4294967290:6");
        g_assert_cmpuint(m.n_ranges, ==, 4);
        assert_lookups(&m, cases, G_N_ELEMENTS(cases));
        owner_map_done(&m);
        g_assert_cmpuint(m.n_ranges, ==, 0);
        g_assert_cmpuint(owner_map_lookup(&m, 100000), ==, 100000);
}

/* Root is never remapped; a uid several users hold counts as the lowest owner. */
static void test_root_and_overlaps(void) {
        OwnerMap m = {};
        const LookupCase cases[] = {
                { 0, 0 },          /* inside alice's range, still root */
                { 1, 1000 },
                { 50, 999 },       /* alice 0-99, bob 40-59, carol 50-149: carol (999) */
                { 45, 1000 },      /* alice and bob: alice */
                { 100, 999 },      /* only carol */
                { 149, 999 },
                { 150, 150 },
                { 2000, 0 },       /* delegated to root: counts as root's (per-user limits
                                    * still apply: root's own exemption is by real uid) */
                { 7000, 1001 },    /* a long range of bob's that starts before others */
                { 6500, 1000 },    /* inside alice's short range within bob's long one */
        };

        parse(&m, "bob:40:20\nalice:0:100\ncarol:50:100\nroot:2000:10\n"
                  "bob:5000:5000\nalice:6000:1000\n");
        assert_lookups(&m, cases, G_N_ELEMENTS(cases));
        owner_map_done(&m);
}

/* Lines idmap_parse_subid() skips, and users that do not exist, delegate nothing. */
static void test_unusable_lines(void) {
        OwnerMap m = {};
        g_autofree char *longline = g_strdup_printf("alice:%0600u:10\n", 300);
        g_autoptr(GString) text = g_string_new(NULL);

        g_string_append(text, "nobody-here:300:10\n"  /* no such user */
                              "alice:-5:10\n"
                              "alice:310:0\n"
                              "alice:320:x\n"
                              "alice:330\n"
                              ":340:10\n"
                              "alice:4294967295:2\n" /* wraps around */
                              "#alice:350:10\n"
                              "\n"
                              "alice:400:10:extra\n"
                              "bob:500:10\r\n"); /* a carriage return is not a count */
        g_string_append(text, longline);
        g_string_append(text, "bob:600:10");       /* no final newline: still a line */
        g_assert_cmpint(owner_map_parse(&m, text->str, text->len, resolve_test), ==, 0);
        g_assert_cmpuint(m.n_ranges, ==, 1);
        for (uid_t u = 290; u < 520; u++)
                g_assert_cmpuint(owner_map_lookup(&m, u), ==, u);
        g_assert_cmpuint(owner_map_lookup(&m, 605), ==, 1001);

        /* A NUL byte makes its line unusable, not the rest of the text. */
        g_assert_cmpint(owner_map_parse(&m, "alice:700:1\0\nbob:800:10\n", 24, resolve_test),
                        ==, 0);
        g_assert_cmpuint(owner_map_lookup(&m, 700), ==, 700);
        g_assert_cmpuint(owner_map_lookup(&m, 805), ==, 1001);
        g_assert_cmpuint(owner_map_lookup(&m, 605), ==, 605); /* replaced, not added */
        owner_map_done(&m);
}

static void test_resolve_nss(void) {
        uid_t u = 12345;

        g_assert_cmpint(owner_resolve_nss("61001", &u), ==, 0);
        g_assert_cmpuint(u, ==, 61001);
        g_assert_cmpint(owner_resolve_nss("0", &u), ==, 0);
        g_assert_cmpuint(u, ==, 0);
        g_assert_cmpint(owner_resolve_nss("root", &u), ==, 0);
        g_assert_cmpuint(u, ==, 0);
        g_assert_cmpint(owner_resolve_nss("4294967295", &u), ==, -ENOENT);
        g_assert_cmpint(owner_resolve_nss("12x", &u), ==, -ENOENT);
        g_assert_cmpint(owner_resolve_nss("no-such-user-for-usermount", &u), ==, -ENOENT);
}

/* ---- Rereading ---------------------------------------------------------------------------- */

static char *tmpdir;

static char *write_subuid(const char *name, const char *contents) {
        char *path = g_build_filename(tmpdir, name, NULL);

        g_assert_true(g_file_set_contents(path, contents, -1, NULL));
        return path;
}

/* Makes path look changed in nothing but its modification time (same size, inode). */
static void rewrite_in_place(const char *path, const char *contents) {
        FILE *f = fopen(path, "r+e");
        struct timespec times[2] = { { 0, UTIME_OMIT }, { 1, 0 } };

        g_assert_nonnull(f);
        g_assert_cmpint(fputs(contents, f), >=, 0);
        g_assert_cmpint(fclose(f), ==, 0);
        g_assert_cmpint(utimensat(AT_FDCWD, path, times, 0), ==, 0);
}

static void test_refresh(void) {
        g_autofree char *path = write_subuid("subuid", "alice:100000:65536\n");
        OwnerMap m = {};

        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 1000);
        /* Unchanged: not read again. */
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 0);

        /* Same size and inode, other contents; the second time also the same
         * modification time: the change time tells. */
        rewrite_in_place(path, "carol:100000:65536\n");
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 999);
        rewrite_in_place(path, "bob:100000:65536\n\n\n");
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 1001);

        /* Replaced (a new inode), as shadow's tools do. */
        {
                g_autofree char *other = write_subuid("subuid.new", "carol:100000:2\n");

                g_assert_cmpint(rename(other, path), ==, 0);
        }
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 999);
        g_assert_cmpuint(owner_map_lookup(&m, 100002), ==, 100002);

        /* Gone: nothing is delegated; noticed once. */
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 100001);
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 0);

        /* Back again. */
        g_free(write_subuid("subuid", "alice:100000:65536\n"));
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 1000);
        owner_map_done(&m);
}

/* Not a regular file: reported once, the previous ranges stay. */
static void test_refresh_not_regular(void) {
        g_autofree char *path = write_subuid("subuid-dir", "alice:100000:65536\n");
        OwnerMap m = {};

        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 1);
        g_assert_cmpint(unlink(path), ==, 0);
        g_assert_cmpint(mkdir(path, 0755), ==, 0);
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, -EBADFD);
        g_assert_cmpuint(owner_map_lookup(&m, 100001), ==, 1000);
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 0);
        g_assert_cmpint(rmdir(path), ==, 0);
        owner_map_done(&m);
}

/* A file larger than OWNER_FILE_MAX: its first whole lines count, the rest not. */
static void test_refresh_bounded(void) {
        g_autoptr(GString) text = g_string_new(NULL);
        g_autofree char *path = NULL;
        OwnerMap m = {};
        size_t n_lines = 0;

        while (text->len < OWNER_FILE_MAX + 4096) {
                g_string_append_printf(text, "bob:%zu:1\n", 10000000 + n_lines);
                n_lines++;
        }
        path = write_subuid("subuid-big", text->str);
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, -EFBIG);
        g_assert_cmpuint(m.n_ranges, >, 0);
        g_assert_cmpuint(m.n_ranges, <, n_lines);
        g_assert_cmpuint(owner_map_lookup(&m, 10000000), ==, 1001);
        g_assert_cmpuint(owner_map_lookup(&m, 10000000 + m.n_ranges - 1), ==, 1001);
        /* The line the bound cut through is not half used. */
        g_assert_cmpuint(owner_map_lookup(&m, 10000000 + m.n_ranges),
                         ==, 10000000 + m.n_ranges);
        g_assert_cmpuint(owner_map_lookup(&m, 10000000 + n_lines - 1), ==,
                         10000000 + n_lines - 1);
        /* Reported once, not with every request. */
        g_assert_cmpint(owner_map_refresh(&m, path, resolve_test), ==, 0);
        g_assert_cmpint(unlink(path), ==, 0);
        owner_map_done(&m);
}

/* ---- Owners polkit authorized --------------------------------------------------------------- */

static void test_known(void) {
        OwnerKnown k = {};

        g_assert_false(owner_known_has(&k, 1000));
        owner_known_add(&k, 1000);
        owner_known_add(&k, 1000);
        g_assert_true(owner_known_has(&k, 1000));
        g_assert_cmpuint(k.n, ==, 1);
        /* Full: the oldest goes first. */
        for (uid_t u = 2000; u < 2000 + OWNER_KNOWN_MAX - 1; u++)
                owner_known_add(&k, u);
        g_assert_cmpuint(k.n, ==, OWNER_KNOWN_MAX);
        g_assert_true(owner_known_has(&k, 1000));
        owner_known_add(&k, 5000);
        g_assert_false(owner_known_has(&k, 1000));
        g_assert_true(owner_known_has(&k, 5000));
        g_assert_true(owner_known_has(&k, 2000));
        owner_known_add(&k, 5001);
        g_assert_false(owner_known_has(&k, 2000));
        g_assert_true(owner_known_has(&k, 2001));
        g_assert_cmpuint(k.n, ==, OWNER_KNOWN_MAX);
}

int main(int argc, char **argv) {
        int r;

        g_test_init(&argc, &argv, NULL);
        tmpdir = g_dir_make_tmp("test-owner-XXXXXX", NULL);
        g_assert_nonnull(tmpdir);

        g_test_add_func("/owner/map/ranges", test_ranges);
        g_test_add_func("/owner/map/root-and-overlaps", test_root_and_overlaps);
        g_test_add_func("/owner/map/unusable-lines", test_unusable_lines);
        g_test_add_func("/owner/map/resolve-nss", test_resolve_nss);
        g_test_add_func("/owner/refresh/changes", test_refresh);
        g_test_add_func("/owner/refresh/not-regular", test_refresh_not_regular);
        g_test_add_func("/owner/refresh/bounded", test_refresh_bounded);
        g_test_add_func("/owner/known", test_known);

        r = g_test_run();
        /* What the tests wrote there (a subuid file the refresh tests keep). */
        {
                g_autoptr(GDir) d = g_dir_open(tmpdir, 0, NULL);
                const char *name;

                while (d && (name = g_dir_read_name(d))) {
                        g_autofree char *p = g_build_filename(tmpdir, name, NULL);

                        (void) g_unlink(p);
                }
        }
        if (g_rmdir(tmpdir) < 0)
                g_printerr("test-owner: could not remove %s\n", tmpdir);
        g_free(tmpdir);
        return r;
}
