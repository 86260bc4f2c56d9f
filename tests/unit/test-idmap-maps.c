/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the pure parts of id-mapped mounts (worker/idmap-userns.c): parsing a user
 * namespace's map as the kernel prints it, formatting it back (for /proc and for info),
 * reading /etc/subuid text, and the check that a map uses only the caller's own id and
 * the ranges delegated to it (docs/security.md, class 23).
 */
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "idmap-userns.h"

/* ---- idmap_parse ------------------------------------------------------------------------ */

static void assert_extent(const IdMap *m, uint32_t i, uint32_t first, uint32_t lower,
                          uint32_t count) {
        g_assert_cmpuint(i, <, m->n_extents);
        g_assert_cmpuint(m->extents[i].first, ==, first);
        g_assert_cmpuint(m->extents[i].lower, ==, lower);
        g_assert_cmpuint(m->extents[i].count, ==, count);
}

static void test_parse_valid(void) {
        IdMap m;

        g_assert_cmpint(idmap_parse("0 61001 1\n", &m), ==, 0);
        g_assert_cmpuint(m.n_extents, ==, 1);
        assert_extent(&m, 0, 0, 61001, 1);

        /* As the kernel prints it: right-aligned columns. */
        g_assert_cmpint(idmap_parse("         0      61001          1\n"
                                    "         1 2000000000      65536\n", &m), ==, 0);
        g_assert_cmpuint(m.n_extents, ==, 2);
        assert_extent(&m, 0, 0, 61001, 1);
        assert_extent(&m, 1, 1, 2000000000, 65536);

        /* The initial namespace's map: the whole id space, ending exactly at 2^32. */
        g_assert_cmpint(idmap_parse("         0          0 4294967295\n", &m), ==, 0);
        assert_extent(&m, 0, 0, 0, 4294967295u);
        g_assert_cmpint(idmap_parse("4294967295 4294967295 1", &m), ==, 0);
        assert_extent(&m, 0, 4294967295u, 4294967295u, 1);

        /* Tabs, no final newline, blank lines; adjacent extents do not overlap. */
        g_assert_cmpint(idmap_parse("0\t1000\t10\n\n10 1010 10", &m), ==, 0);
        g_assert_cmpuint(m.n_extents, ==, 2);
        assert_extent(&m, 1, 10, 1010, 10);
}

static char *extents_text(unsigned n) {
        GString *s = g_string_new(NULL);

        for (unsigned i = 0; i < n; i++)
                g_string_append_printf(s, "%u %u 1\n", i * 2, 100000 + i * 2);
        return g_string_free(s, FALSE);
}

static void test_parse_extent_limit(void) {
        g_autofree char *max = extents_text(IDMAP_MAX_EXTENTS);
        g_autofree char *over = extents_text(IDMAP_MAX_EXTENTS + 1);
        IdMap m;

        g_assert_cmpint(IDMAP_MAX_EXTENTS, ==, 340);
        g_assert_cmpint(idmap_parse(max, &m), ==, 0);
        g_assert_cmpuint(m.n_extents, ==, 340);
        assert_extent(&m, 339, 678, 100678, 1);
        g_assert_cmpint(idmap_parse(over, &m), ==, -E2BIG);
}

static void test_parse_refused(void) {
        static const char *const cases[] = {
                /* empty */
                "", " ", "\n\n",
                /* zero count */
                "0 1000 0", "0 1000 1\n5 2000 0",
                /* wrap-around past 2^32 - 1, inside and outside */
                "4294967295 0 2", "0 4294967295 2", "4294967296 0 1", "0 4294967296 1",
                "1 1 4294967296",
                /* overlapping inside (on-disk) ranges */
                "0 1000 10\n5 2000 10", "0 1000 10\n9 2000 1", "5 1000 1\n0 2000 10",
                /* overlapping outside (host) ranges */
                "0 1000 10\n100 1005 10", "0 1000 10\n100 1009 1", "100 1005 1\n0 1000 10",
                "0 1000 1\n0 1000 1",
                /* garbage */
                "abc", "0 1000", "0", "0 1000 1 2", "0 1000 1x", "0x0 1000 1", "0 1000 1\nfoo",
                "0,1000,1", "0:1000:1", "-1 0 1", "0 -1 1", "0 0 -1",
                "18446744073709551615 0 1", "99999999999999999999 0 1", "0 0 99999999999999999999",
        };
        IdMap m;

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_test_message("map '%s'", cases[i]);
                g_assert_cmpint(idmap_parse(cases[i], &m), ==, -EINVAL);
        }
        g_assert_cmpint(idmap_parse(NULL, &m), ==, -EINVAL);
}

/* ---- formatting ------------------------------------------------------------------------- */

static void test_format_round_trip(void) {
        g_autofree char *max = extents_text(IDMAP_MAX_EXTENTS);
        char proc[IDMAP_MAX_EXTENTS * 36 + 1], str[IDMAP_MAX_EXTENTS * 36 + 1];
        IdMap m, back;

        g_assert_cmpint(idmap_parse("0 61001 1\n1 2000000000 65536\n", &m), ==, 0);
        g_assert_cmpint(idmap_to_proc_text(&m, proc, sizeof(proc)), ==, 0);
        g_assert_cmpstr(proc, ==, "0 61001 1\n1 2000000000 65536\n");
        g_assert_cmpint(idmap_to_string(&m, str, sizeof(str)), ==, 0);
        g_assert_cmpstr(str, ==, "0:61001:1,1:2000000000:65536");
        g_assert_cmpint(idmap_parse(proc, &back), ==, 0);
        g_assert_cmpmem(&back, sizeof(back.n_extents) + back.n_extents * sizeof(IdExtent), &m,
                        sizeof(m.n_extents) + m.n_extents * sizeof(IdExtent));

        /* The largest map, with the largest numbers, fits the buffer the daemon uses. */
        g_assert_cmpint(idmap_parse(max, &m), ==, 0);
        for (uint32_t i = 0; i < m.n_extents; i++)
                m.extents[i] = (IdExtent) { 4294967295u - i, 4294967295u - i, 1 };
        g_assert_cmpint(idmap_to_proc_text(&m, proc, sizeof(proc)), ==, 0);
        g_assert_cmpint(idmap_parse(proc, &back), ==, 0);
        g_assert_cmpuint(back.n_extents, ==, IDMAP_MAX_EXTENTS);
        assert_extent(&back, 339, 4294967295u - 339, 4294967295u - 339, 1);
        g_assert_cmpint(idmap_to_string(&m, str, sizeof(str)), ==, 0);
        g_assert_true(g_str_has_prefix(str, "4294967295:4294967295:1,4294967294:"));

        idmap_single(0, 61001, &m);
        g_assert_cmpint(idmap_to_string(&m, str, sizeof(str)), ==, 0);
        g_assert_cmpstr(str, ==, "0:61001:1");
}

static void test_format_nobufs(void) {
        char buf[16];
        IdMap m;

        idmap_single(0, 1, &m);
        /* "0:1:1" is 5 bytes plus the NUL; "0 1 1\n" 6 plus the NUL. */
        g_assert_cmpint(idmap_to_string(&m, buf, 6), ==, 0);
        g_assert_cmpstr(buf, ==, "0:1:1");
        g_assert_cmpint(idmap_to_string(&m, buf, 5), ==, -ENOBUFS);
        g_assert_cmpint(idmap_to_string(&m, buf, 0), ==, -ENOBUFS);
        g_assert_cmpint(idmap_to_proc_text(&m, buf, 7), ==, 0);
        g_assert_cmpstr(buf, ==, "0 1 1\n");
        g_assert_cmpint(idmap_to_proc_text(&m, buf, 6), ==, -ENOBUFS);
        g_assert_cmpint(idmap_to_proc_text(&m, buf, 5), ==, -ENOBUFS);
        g_assert_cmpint(idmap_to_proc_text(&m, buf, 0), ==, -ENOBUFS);

        g_assert_cmpint(idmap_parse("0 1 1\n1 2 1", &m), ==, 0);
        g_assert_cmpint(idmap_to_string(&m, buf, 12), ==, 0);
        g_assert_cmpstr(buf, ==, "0:1:1,1:2:1");
        g_assert_cmpint(idmap_to_string(&m, buf, 11), ==, -ENOBUFS);
        g_assert_cmpint(idmap_to_string(&m, buf, 7), ==, -ENOBUFS);
}

static void test_mode_names(void) {
        g_assert_cmpstr(idmap_mode_to_string(IDMAP_NONE), ==, "none");
        g_assert_cmpstr(idmap_mode_to_string(IDMAP_USER), ==, "user");
        g_assert_cmpstr(idmap_mode_to_string(IDMAP_NAMESPACE), ==, "namespace");
}

/* ---- idmap_parse_subid ------------------------------------------------------------------ */

static const char subid_text[] =
        "umtest1:2000000000:65536\n"
        "umtest2:2000065536:65536\n"
        "61001:100000:10\n"
        "not a line at all\n"
        "umtest1:x:5\n"
        "umtest1:5\n"
        "umtest1::5\n"
        "umtest1:5:\n"
        "umtest1:-1:5\n"
        "umtest1:7:-1\n"
        "umtest1:7:0\n"
        "umtest1:4294967295:2\n"
        "umtest1:18446744073709551615:1\n"
        "umtest1:1:18446744073709551615\n"
        "umtest1:4294967296:1\n"
        "umtest1:7:5:extra\n"
        "umtest10:1:1\n"
        "umtest:1:1\n"
        "\n"
        "umtest1:300000:65536";

static void assert_range(const IdRange *r, uint32_t first, uint32_t count) {
        g_assert_cmpuint(r->first, ==, first);
        g_assert_cmpuint(r->count, ==, count);
}

static void test_subid(void) {
        g_autofree IdRange *by_name = NULL, *by_uid = NULL, *other = NULL, *none = NULL;
        g_autofree IdRange *empty = NULL;
        size_t n = 99;

        /* By name and by uid, in file order; malformed lines and other users skipped. */
        g_assert_cmpint(idmap_parse_subid(subid_text, "umtest1", 61001, &by_name, &n), ==, 0);
        g_assert_cmpuint(n, ==, 3);
        assert_range(&by_name[0], 2000000000u, 65536);
        assert_range(&by_name[1], 100000, 10);
        assert_range(&by_name[2], 300000, 65536);

        g_assert_cmpint(idmap_parse_subid(subid_text, NULL, 61001, &by_uid, &n), ==, 0);
        g_assert_cmpuint(n, ==, 1);
        assert_range(&by_uid[0], 100000, 10);

        g_assert_cmpint(idmap_parse_subid(subid_text, "umtest2", 61002, &other, &n), ==, 0);
        g_assert_cmpuint(n, ==, 1);
        assert_range(&other[0], 2000065536u, 65536);

        g_assert_cmpint(idmap_parse_subid(subid_text, "umtestadm", 61003, &none, &n), ==, 0);
        g_assert_cmpuint(n, ==, 0);
        g_assert_null(none);

        g_assert_cmpint(idmap_parse_subid("", "umtest1", 61001, &empty, &n), ==, 0);
        g_assert_cmpuint(n, ==, 0);
        g_assert_null(empty);
}

static void test_read_subid_missing(void) {
        g_autofree IdRange *r = NULL;
        size_t n = 99;

        g_assert_cmpint(idmap_read_subid("/nonexistent/subuid", "umtest1", 61001, &r, &n), ==, 0);
        g_assert_cmpuint(n, ==, 0);
        g_assert_null(r);
}

static void test_read_subid_file(void) {
        g_autofree char *dir = g_dir_make_tmp("test-idmap-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "subuid", NULL);
        g_autofree IdRange *r = NULL;
        size_t n = 0;

        g_assert_true(g_file_set_contents(path, subid_text, -1, NULL));
        g_assert_cmpint(idmap_read_subid(path, "umtest1", 61001, &r, &n), ==, 0);
        g_assert_cmpuint(n, ==, 3);
        assert_range(&r[2], 300000, 65536);
        g_assert_cmpint(g_remove(path), ==, 0);
        g_assert_cmpint(g_rmdir(dir), ==, 0);
}

/* ---- idmap_check_delegation ------------------------------------------------------------- */

static const IdRange two_ranges[] = { { 2000000000u, 65536 }, { 2000065536u, 65536 } };

static int check(const char *map_text, uint32_t own, const IdRange *ranges, size_t n,
                 UmError *e) {
        IdMap m;

        g_assert_cmpint(idmap_parse(map_text, &m), ==, 0);
        *e = (UmError) {};
        return idmap_check_delegation(&m, own, ranges, n, "uid", "/etc/subuid", e);
}

static void test_delegation_allowed(void) {
        static const IdRange adjacent_to_own[] = { { 61002, 10 } };
        static const IdRange overlapping[] = { { 100, 50 }, { 120, 100 } };
        UmError e;

        /* Own id only. */
        g_assert_cmpint(check("0 61001 1", 61001, NULL, 0, &e), ==, 0);
        /* A range, whole and in pieces. */
        g_assert_cmpint(check("0 2000000000 65536", 61001, two_ranges, 1, &e), ==, 0);
        g_assert_cmpint(check("0 61001 1\n1 2000000000 65536", 61001, two_ranges, 1, &e), ==, 0);
        g_assert_cmpint(check("5 2000000100 7\n0 2000065535 1", 61001, two_ranges, 1, &e), ==, 0);
        /* One extent spanning two adjacent ranges. */
        g_assert_cmpint(check("0 2000000000 131072", 61001, two_ranges, 2, &e), ==, 0);
        /* One extent spanning the own id and the range right after it. */
        g_assert_cmpint(check("0 61001 11", 61001, adjacent_to_own, 1, &e), ==, 0);
        /* Overlapping delegations are fine too. */
        g_assert_cmpint(check("0 100 120", 61001, overlapping, 2, &e), ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
}

static void assert_refused(int r, const UmError *e, const char *id) {
        g_assert_cmpint(r, ==, -EPERM);
        g_assert_cmpint(e->kind, ==, UM_ERROR_KIND_NOT_AUTHORIZED);
        g_assert_cmpint(e->error, ==, EPERM);
        g_test_message("%s", e->message);
        if (!strstr(e->message, id))
                g_error("message '%s' does not name %s", e->message, id);
        g_assert_nonnull(strstr(e->message, "/etc/subuid"));
}

static void test_delegation_refused(void) {
        static const IdRange adjacent_to_own[] = { { 61002, 10 } };
        UmError e;
        int r;

        /* One id past the range. */
        r = check("0 2000000000 65537", 61001, two_ranges, 1, &e);
        assert_refused(r, &e, "host uid 2000065536 ");
        /* One id past two adjacent ranges. */
        r = check("0 2000000000 131073", 61001, two_ranges, 2, &e);
        assert_refused(r, &e, "host uid 2000131072 ");
        /* One id before the range. */
        r = check("0 1999999999 2", 61001, two_ranges, 2, &e);
        assert_refused(r, &e, "host uid 1999999999 ");
        /* Host root, never delegated. */
        r = check("0 61001 1\n1 0 1", 61001, two_ranges, 2, &e);
        assert_refused(r, &e, "host uid 0 ");
        /* Own id plus the next one, with nothing delegated. */
        r = check("0 61001 2", 61001, NULL, 0, &e);
        assert_refused(r, &e, "host uid 61002 ");
        /* Another user's id, and one past own id + the adjacent range. */
        r = check("0 61002 1", 61001, NULL, 0, &e);
        assert_refused(r, &e, "host uid 61002 ");
        r = check("0 61001 12", 61001, adjacent_to_own, 1, &e);
        assert_refused(r, &e, "host uid 61012 ");
        /* The last id of the space: no overflow in the range arithmetic. */
        r = check("0 4294967295 1", 61001, two_ranges, 2, &e);
        assert_refused(r, &e, "host uid 4294967295 ");

        /* what and file are the caller's words. */
        IdMap m;
        g_assert_cmpint(idmap_parse("0 7 1", &m), ==, 0);
        e = (UmError) {};
        r = idmap_check_delegation(&m, 61001, NULL, 0, "gid", "/etc/subgid", &e);
        g_assert_cmpint(r, ==, -EPERM);
        g_assert_nonnull(strstr(e.message, "host gid 7 "));
        g_assert_nonnull(strstr(e.message, "/etc/subgid"));
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);

        g_test_add_func("/idmap/parse/valid", test_parse_valid);
        g_test_add_func("/idmap/parse/extent-limit", test_parse_extent_limit);
        g_test_add_func("/idmap/parse/refused", test_parse_refused);
        g_test_add_func("/idmap/format/round-trip", test_format_round_trip);
        g_test_add_func("/idmap/format/nobufs", test_format_nobufs);
        g_test_add_func("/idmap/format/mode-names", test_mode_names);
        g_test_add_func("/idmap/subid/parse", test_subid);
        g_test_add_func("/idmap/subid/missing-file", test_read_subid_missing);
        g_test_add_func("/idmap/subid/file", test_read_subid_file);
        g_test_add_func("/idmap/delegation/allowed", test_delegation_allowed);
        g_test_add_func("/idmap/delegation/refused", test_delegation_refused);
        return g_test_run();
}
