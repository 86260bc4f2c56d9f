/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of shared/jobproto.c, what the daemon and usermount-worker both know of the typed
 * jobs: mount options packed into a job and back (and bytes that are not what packing
 * makes), the checks of a worker's reply before the daemon reads it, fixed-size strings,
 * and the layout table. Pure: no worker is started (tests/daemon does that).
 */
#include <glib.h>
#include <string.h>

#include "jobproto.h"

static void test_options_round_trip(void) {
        MountOption items[] = {
                { (char *) "errors", (char *) "remount-ro" },
                { (char *) "noload", NULL },
                { (char *) "context", (char *) "system_u:object_r:x:s0,c1=2" },
        };
        const MountOptions o = { .items = items, .n_items = 3, .attr_set = 0x7,
                                 .read_only = true };
        MountOptions back = {};
        JobOptions j;

        g_assert_cmpint(job_options_pack(&o, &j), ==, 0);
        g_assert_cmpint(job_options_unpack(&j, &back), ==, 0);
        g_assert_cmpuint(back.n_items, ==, 3);
        g_assert_cmpuint(back.attr_set, ==, 0x7);
        g_assert_true(back.read_only);
        for (size_t i = 0; i < 3; i++) {
                g_assert_cmpstr(back.items[i].key, ==, items[i].key);
                g_assert_cmpstr(back.items[i].value, ==, items[i].value);
        }
        mount_options_done(&back);
}

static void test_options_too_many(void) {
        g_autofree MountOption *items = g_new0(MountOption, 2000);
        g_autofree char *value = g_strnfill(100, 'v');
        MountOptions o = { .items = items, .n_items = 2000 };
        JobOptions j;

        for (size_t i = 0; i < o.n_items; i++)
                items[i] = (MountOption) { (char *) "key", value };
        g_assert_cmpint(job_options_pack(&o, &j), ==, -E2BIG);
}

/* Whatever bytes arrive, unpacking refuses what packing cannot make, and leaks nothing. */
static void test_options_malformed(void) {
        static const struct {
                const char *bytes;
                size_t used;
                uint32_t n_items;
        } bad[] = {
                { "key", 3, 1 },                   /* no NUL */
                { "key\0", 4, 1 },                 /* no kind byte */
                { "key\0x", 5, 1 },                /* unknown kind */
                { "key\0=val", 8, 1 },             /* value without NUL */
                { "\0-", 2, 1 },                   /* empty key */
                { "key\0-extra", 10, 1 },          /* bytes left over */
                { "key\0-", 5, 2 },                /* fewer items than said */
                { "", 0, 5 },                      /* more items than bytes */
        };

        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                JobOptions j = { .used = (uint32_t) bad[i].used, .n_items = bad[i].n_items };
                MountOptions o = {};

                memcpy(j.items, bad[i].bytes, bad[i].used);
                g_assert_cmpint(job_options_unpack(&j, &o), ==, -EBADMSG);
        }
        JobOptions big = { .used = sizeof(big.items) + 1, .n_items = 1 };
        MountOptions o = {};

        g_assert_cmpint(job_options_unpack(&big, &o), ==, -EBADMSG);
}

static void test_reply_checks(void) {
        ProbeReply p = {};
        BuildReply b = {};

        g_assert_cmpint(probe_reply_check(&p), ==, 0);
        memset(p.probe.label, 'x', sizeof(p.probe.label));
        g_assert_cmpint(probe_reply_check(&p), ==, -EBADMSG);
        p = (ProbeReply) { .uid_map.n_extents = IDMAP_MAX_EXTENTS + 1 };
        g_assert_cmpint(probe_reply_check(&p), ==, -EBADMSG);
        p = (ProbeReply) { .source.type = (SourceType) 99 };
        g_assert_cmpint(probe_reply_check(&p), ==, -EBADMSG);

        g_assert_cmpint(build_reply_check(&b), ==, 0);
        memset(b.backing_file, 'x', sizeof(b.backing_file));
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
        b = (BuildReply) { .idmap_mode = 7 };
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
        b = (BuildReply) { .gid_map.n_extents = UINT32_MAX };
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
        /* A driver: a pid that fits, a uid that is not root's nor (uid_t) -1. */
        b = (BuildReply) { .driver_pid = 4242, .driver_uid = 1879048448 };
        g_assert_cmpint(build_reply_check(&b), ==, 0);
        b = (BuildReply) { .driver_pid = (uint64_t) INT32_MAX + 1, .driver_uid = 5000 };
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
        b = (BuildReply) { .driver_pid = 4242, .driver_uid = 0 };
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
        b = (BuildReply) { .driver_pid = 4242, .driver_uid = UINT32_MAX };
        g_assert_cmpint(build_reply_check(&b), ==, -EBADMSG);
}

static void test_strings(void) {
        char field[8];

        g_assert_cmpint(JOB_SET_STRING(field, "1234567"), ==, 0);
        g_assert_cmpstr(field, ==, "1234567");
        g_assert_cmpint(JOB_SET_STRING(field, "12345678"), ==, -ENAMETOOLONG);
        g_assert_cmpint(JOB_SET_STRING(field, NULL), ==, 0);
        g_assert_cmpstr(field, ==, "");
}

/* Every job type once, and the hash changes with a size (another build's worker). */
static void test_layouts(void) {
        WorkerJobLayout l[16];

        g_assert_cmpuint(job_n_layouts, <=, G_N_ELEMENTS(l));
        for (size_t i = 0; i < job_n_layouts; i++) {
                g_assert_true(job_layout((JobType) job_layouts[i].type) == &job_layouts[i]);
                l[i] = job_layouts[i];
        }
        g_assert_null(job_layout((JobType) 0));
        g_assert_cmpuint(worker_layout_hash(l, job_n_layouts), ==, job_layouts_hash());
        l[0].input_size++;
        g_assert_cmpuint(worker_layout_hash(l, job_n_layouts), !=, job_layouts_hash());
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/jobs/options/round-trip", test_options_round_trip);
        g_test_add_func("/jobs/options/too-many", test_options_too_many);
        g_test_add_func("/jobs/options/malformed", test_options_malformed);
        g_test_add_func("/jobs/reply-checks", test_reply_checks);
        g_test_add_func("/jobs/strings", test_strings);
        g_test_add_func("/jobs/layouts", test_layouts);
        return g_test_run();
}
