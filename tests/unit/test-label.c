/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of the security-label options of user mounts (daemon/label.c): the parser of
 * /sys/kernel/security/lsm, the SELinux context fed in through the compute hook or built
 * from the admin's SELinuxType=, the Smack options, nothing without a labelling LSM, and
 * the refusals of missing, invalid and over-long labels, which must leave the options as
 * they were.
 */
#include <glib.h>
#include <selinux/selinux.h>
#include <sys/mount.h>

#include "label.h"
#include "policy.h"

/* ---- Helpers ---------------------------------------------------------------------------- */

/* What policy_build_options() gives for ext4 with "commit=5": a caller item, a forced one. */
static MountOptions ext4_options(void) {
        const PolicyInput in = { .fstype = "ext4", .options = "commit=5", .uid = 1000,
                                 .gid = 1000, .umask = 022 };
        MountOptions o = {};
        UmError e = {};

        g_assert_cmpint(policy_build_options(&in, &o, &e), ==, 0);
        return o;
}

#define EXT4_ITEMS "commit=5,errors=remount-ro"

static char *options_string(const MountOptions *o) {
        char *s = mount_options_to_string(o);

        g_assert_nonnull(s);
        return s;
}

/* A string of n copies of c. */
static char *repeat(char c, size_t n) {
        char *s = g_malloc(n + 1);

        memset(s, c, n);
        s[n] = 0;
        return s;
}

/* The fed compute hook: records its argument, answers fed_result or fed_error. */
static const char *fed_result;
static int fed_error;
static char *fed_caller;
static unsigned fed_calls;

static int fed_compute(const char *caller, char **ret_context) {
        fed_calls++;
        g_free(fed_caller);
        fed_caller = g_strdup(caller);
        if (fed_error < 0)
                return fed_error;
        *ret_context = strdup(fed_result);
        return *ret_context ? 0 : -ENOMEM;
}

static void fed_reset(const char *result, int error) {
        fed_result = result;
        fed_error = error;
        fed_calls = 0;
        g_free(fed_caller);
        fed_caller = NULL;
}

/* label_add_options() on the ext4 options; expects success and these items after them. */
static void expect_added(const LabelInput *in, const char *added) {
        MountOptions o = ext4_options();
        const uint64_t attr = o.attr_set;
        g_autofree char *want = g_strconcat(EXT4_ITEMS, *added ? "," : "", added, NULL);
        g_autofree char *got = NULL;
        UmError e = {};

        g_assert_cmpint(label_add_options(in, &o, &e), ==, 0);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_NONE);
        got = options_string(&o);
        g_assert_cmpstr(got, ==, want);
        /* Labels are filesystem parameters only: the mount attributes stay. */
        g_assert_cmpuint(o.attr_set, ==, attr);
        g_assert_false(o.read_only);
        mount_options_done(&o);
}

/* label_add_options() must fail with kind and -err (err 0: any), the message must hold
 * part, and the options must be exactly as before. */
static void expect_refused(const LabelInput *in, UmErrorKind kind, int err, const char *part) {
        MountOptions o = ext4_options();
        MountOption *items = o.items;
        g_autofree char *got = NULL;
        UmError e = {};

        int r = label_add_options(in, &o, &e);

        /* err 0: any errno, as long as it is one. */
        g_assert_cmpint(r, <, 0);
        g_assert_cmpint(r, ==, -e.error);
        if (err != 0)
                g_assert_cmpint(e.error, ==, err);
        g_assert_cmpint(e.kind, ==, kind);
        if (part && !strstr(e.message, part))
                g_error("message \"%s\" lacks \"%s\"", e.message, part);
        g_assert_true(o.items == items);
        g_assert_cmpuint(o.n_items, ==, 2);
        got = options_string(&o);
        g_assert_cmpstr(got, ==, EXT4_ITEMS);
        mount_options_done(&o);
}

/* ---- /sys/kernel/security/lsm ----------------------------------------------------------- */

typedef struct LsmCase {
        const char *text;
        bool selinux_enabled;
        int r;
        LabelLsm lsm;
} LsmCase;

static const LsmCase lsm_cases[] = {
        /* Debian's default list: AppArmor does not label mounts. */
        { "lockdown,capability,landlock,yama,apparmor,tomoyo,bpf", true, 0, LABEL_LSM_NONE },
        { "capability", false, 0, LABEL_LSM_NONE },
        { "capability\n", false, 0, LABEL_LSM_NONE },
        { "lockdown,capability,yama,selinux,bpf,landlock", true, 0, LABEL_LSM_SELINUX },
        { "lockdown,capability,yama,selinux,bpf,landlock\n", true, 0, LABEL_LSM_SELINUX },
        { "selinux", true, 0, LABEL_LSM_SELINUX },
        /* Listed but without a policy (or disabled): it labels nothing. */
        { "capability,selinux", false, 0, LABEL_LSM_NONE },
        { "capability,smack", false, 0, LABEL_LSM_SMACK },
        { "smack", true, 0, LABEL_LSM_SMACK },
        { "smack\n", false, 0, LABEL_LSM_SMACK },
        /* The first labelling one listed. */
        { "capability,smack,selinux", true, 0, LABEL_LSM_SMACK },
        { "selinux,smack", true, 0, LABEL_LSM_SELINUX },
        { "selinux,smack", false, 0, LABEL_LSM_SMACK },
        /* Whole names only. */
        { "selinuxx,smack2,xsmack,se_linux", true, 0, LABEL_LSM_NONE },
        { "capability,selinu", true, 0, LABEL_LSM_NONE },
        /* Not such a list. */
        { "", true, -EINVAL, 0 },
        { "\n", true, -EINVAL, 0 },
        { ",", true, -EINVAL, 0 },
        { "capability,", true, -EINVAL, 0 },
        { ",selinux", true, -EINVAL, 0 },
        { "capability,,selinux", true, -EINVAL, 0 },
        { "capability, selinux", true, -EINVAL, 0 },
        { "SELinux", true, -EINVAL, 0 },
        { "selinux\n\n", true, -EINVAL, 0 },
        { "selinux\nsmack", true, -EINVAL, 0 },
        { "capability;selinux", true, -EINVAL, 0 },
        { "selinux\t", true, -EINVAL, 0 },
        { "capability,s\xc3\xa9linux", true, -EINVAL, 0 },
};

static void test_lsm_parse(const void *data) {
        const LsmCase *c = data;
        LabelLsm lsm = _LABEL_LSM_MAX;

        g_assert_cmpint(label_lsm_parse(c->text, c->selinux_enabled, &lsm), ==, c->r);
        /* Untouched on failure. */
        g_assert_cmpint(lsm, ==, c->r < 0 ? _LABEL_LSM_MAX : c->lsm);
}

static void test_lsm_parse_lengths(void) {
        g_autofree char *longest = repeat('a', 4096), *too_long = repeat('a', 4097);
        LabelLsm lsm = _LABEL_LSM_MAX;

        /* 4096 bytes: the most securityfs ever hands out in one page. */
        longest[4096 - 6] = ',';
        memcpy(longest + 4096 - 5, "smack", 5);
        g_assert_cmpint(label_lsm_parse(longest, true, &lsm), ==, 0);
        g_assert_cmpint(lsm, ==, LABEL_LSM_SMACK);
        too_long[4097 - 6] = ',';
        memcpy(too_long + 4097 - 5, "smack", 5);
        lsm = _LABEL_LSM_MAX;
        g_assert_cmpint(label_lsm_parse(too_long, true, &lsm), ==, -EINVAL);
        g_assert_cmpint(lsm, ==, _LABEL_LSM_MAX);
        g_assert_cmpint(label_lsm_parse(NULL, true, &lsm), ==, -EINVAL);
        g_assert_cmpint(label_lsm_parse("smack", true, NULL), ==, -EINVAL);
}

static void test_lsm_names(void) {
        g_assert_cmpstr(label_lsm_to_string(LABEL_LSM_NONE), ==, "none");
        g_assert_cmpstr(label_lsm_to_string(LABEL_LSM_SELINUX), ==, "selinux");
        g_assert_cmpstr(label_lsm_to_string(LABEL_LSM_SMACK), ==, "smack");
        g_assert_null(label_lsm_to_string(_LABEL_LSM_MAX));
        g_assert_null(label_lsm_to_string((LabelLsm) -1));
}

/* The reader agrees with the parser on this machine's file, or with libselinux without it. */
static void test_lsm_detect(void) {
        g_autofree char *text = NULL;
        bool selinux = is_selinux_enabled() > 0;
        LabelLsm lsm = _LABEL_LSM_MAX, want;

        g_assert_cmpint(label_lsm_detect(&lsm), ==, 0);
        g_assert_nonnull(label_lsm_to_string(lsm));
        if (g_file_get_contents("/sys/kernel/security/lsm", &text, NULL, NULL)) {
                g_assert_cmpint(label_lsm_parse(text, selinux, &want), ==, 0);
                g_assert_cmpint(lsm, ==, want);
        } else if (selinux)
                g_assert_cmpint(lsm, ==, LABEL_LSM_SELINUX);
        g_test_message("labelling LSM here: %s", label_lsm_to_string(lsm));
}

/* ---- Validation ------------------------------------------------------------------------- */

typedef struct ValidCase {
        const char *s;
        bool valid;
} ValidCase;

static const ValidCase context_cases[] = {
        { "system_u:object_r:tmp_t:s0", true },
        { "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023", true },
        { "user_u:user_r:user_t", true },
        { "staff_u:staff_r:staff_t:s0:c1,c5-s0:c1,c5", true },
        { "u:r:t", true },
        { "", false },
        { "user_u:user_r", false },
        { "user_u", false },
        { ":user_r:user_t", false },
        { "user_u::user_t", false },
        { "user_u:user_r:", false },
        { "user_u:user_r:user_t:", false },
        { "user_u:user_r:user_t::s0", false },
        { "user_u:user_r:user_t:s0\n", false },
        { "user_u:user_r:user_t:s0\x7f", false },
        { "user_u:user_r:user_t:s0\x1b[31m", false },
        { "user_u:user_r:user t", false },
        { "user_u:user_r:user_t\t", false },
        { "user_u:user_r:\"user_t\"", false },
        { "user_u:user_r:'user_t'", false },
        { "user_u:user_r:user_t\\", false },
        { "user_u:user_r:us\xc3\xa9r_t", false },
};

static const ValidCase smack_cases[] = {
        { "User", true },
        { "_", true },
        { "*", true },
        { "^", true },
        { "@", true },
        { "System::Shared", true },
        { "a-b.c_d:e", true },
        { "", false },
        { "-", false },
        { "-x", false },
        { "a/b", false },
        { "/", false },
        { "a b", false },
        { "a\tb", false },
        { "a\nb", false },
        { "a\x7f", false },
        { "\"a\"", false },
        { "'a'", false },
        { "a\\b", false },
        { "\xc3\xa9", false },
};

static const ValidCase type_cases[] = {
        { "removable_t", true },
        { "x", true },
        { "usermount.media-t_2", true },
        { "T", true },
        { "", false },
        { "_t", false },
        { "1t", false },
        { ".t", false },
        { "-t", false },
        { "a:b", false },
        { "a b", false },
        { "a,b", false },
        { "a/b", false },
        { "t\xc3\xa9", false },
};

static void test_valid_context(const void *data) {
        const ValidCase *c = data;

        g_assert_cmpint(label_selinux_context_valid(c->s), ==, c->valid);
}

static void test_valid_smack(const void *data) {
        const ValidCase *c = data;

        g_assert_cmpint(label_smack_valid(c->s), ==, c->valid);
}

static void test_valid_type(const void *data) {
        const ValidCase *c = data;

        g_assert_cmpint(label_selinux_type_valid(c->s), ==, c->valid);
}

/* 255 bytes pass (fsconfig() copies at most 255 of a string), 256 do not. */
static void test_valid_lengths(void) {
        g_autofree char *smack255 = repeat('L', 255), *smack256 = repeat('L', 256);
        g_autofree char *con255 = repeat('s', 255), *con256 = repeat('s', 256);
        g_autofree char *type128 = repeat('t', 128), *type129 = repeat('t', 129);

        memcpy(con255, "u:r:t:", 6);
        memcpy(con256, "u:r:t:", 6);
        g_assert_true(label_smack_valid(smack255));
        g_assert_false(label_smack_valid(smack256));
        g_assert_true(label_selinux_context_valid(con255));
        g_assert_false(label_selinux_context_valid(con256));
        g_assert_true(label_selinux_type_valid(type128));
        g_assert_false(label_selinux_type_valid(type129));
        g_assert_false(label_smack_valid(NULL));
        g_assert_false(label_selinux_context_valid(NULL));
        g_assert_false(label_selinux_type_valid(NULL));
}

/* ---- No labelling LSM ------------------------------------------------------------------- */

/* Nothing is added and nothing is checked, whatever the bus said about the caller. */
static void test_none(void) {
        const char *const labels[] = { NULL, "", "user_u:user_r:user_t:s0", "User", "a b\n" };

        fed_reset("system_u:object_r:x_t:s0", 0);
        for (size_t i = 0; i < G_N_ELEMENTS(labels); i++) {
                LabelInput in = { .lsm = LABEL_LSM_NONE, .caller_label = labels[i],
                                  .compute = fed_compute };

                expect_added(&in, "");
                in.selinux_type = "removable_t";
                expect_added(&in, "");
        }
        g_assert_cmpuint(fed_calls, ==, 0);
}

/* An options struct with no items at all (squashfs) stays empty. */
static void test_none_empty(void) {
        const PolicyInput pin = { .fstype = "squashfs" };
        const LabelInput in = { .lsm = LABEL_LSM_NONE, .caller_label = "User" };
        MountOptions o = {};
        UmError e = {};

        g_assert_cmpint(policy_build_options(&pin, &o, &e), ==, 0);
        g_assert_cmpuint(o.n_items, ==, 0);
        g_assert_cmpint(label_add_options(&in, &o, &e), ==, 0);
        g_assert_cmpuint(o.n_items, ==, 0);
        g_assert_null(o.items);
        mount_options_done(&o);
}

/* ---- SELinux ---------------------------------------------------------------------------- */

/* The computed context is passed on as context=, last, and computed from the caller's. */
static void test_selinux_computed(void) {
        const char *const results[] = {
                "user_u:object_r:user_tmp_t:s0",
                "unconfined_u:object_r:unconfined_t:s0-s0:c0.c1023",
                "u:r:t",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(results); i++) {
                const LabelInput in = { .lsm = LABEL_LSM_SELINUX,
                                        .caller_label = "user_u:user_r:user_t:s0",
                                        .compute = fed_compute };
                g_autofree char *added = g_strconcat("context=", results[i], NULL);

                fed_reset(results[i], 0);
                expect_added(&in, added);
                g_assert_cmpuint(fed_calls, ==, 1);
                g_assert_cmpstr(fed_caller, ==, "user_u:user_r:user_t:s0");
        }
        /* An empty SELinuxType= means "compute", like an absent one. */
        const LabelInput in = { .lsm = LABEL_LSM_SELINUX, .caller_label = "u:r:t:s0",
                                .selinux_type = "", .compute = fed_compute };

        fed_reset("u:object_r:t_file:s0", 0);
        expect_added(&in, "context=u:object_r:t_file:s0");
        g_assert_cmpuint(fed_calls, ==, 1);
}

/* The admin's type replaces the caller's, with object_r and the low level of the range. */
static void test_selinux_admin_type(void) {
        static const struct {
                const char *caller;
                const char *context;
        } cases[] = {
                { "user_u:user_r:user_t:s0", "user_u:object_r:removable_t:s0" },
                { "user_u:user_r:user_t", "user_u:object_r:removable_t" },
                { "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023",
                  "unconfined_u:object_r:removable_t:s0" },
                { "staff_u:staff_r:staff_t:s0:c1,c5-s0:c1,c5",
                  "staff_u:object_r:removable_t:s0:c1,c5" },
                { "staff_u:staff_r:staff_t:s1:c2", "staff_u:object_r:removable_t:s1:c2" },
        };

        fed_reset(NULL, -EIO);
        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                const LabelInput in = { .lsm = LABEL_LSM_SELINUX, .caller_label = cases[i].caller,
                                        .selinux_type = "removable_t", .compute = fed_compute };
                g_autofree char *added = g_strconcat("context=", cases[i].context, NULL);

                expect_added(&in, added);
        }
        /* The policy is not asked when the admin decided. */
        g_assert_cmpuint(fed_calls, ==, 0);
}

/* A result over 255 bytes is refused, even one the admin's type made. */
static void test_selinux_admin_type_too_long(void) {
        g_autofree char *user = repeat('u', 200), *type = repeat('t', 128);
        g_autofree char *caller = g_strconcat(user, ":r:t:s0", NULL);
        const LabelInput in = { .lsm = LABEL_LSM_SELINUX, .caller_label = caller,
                                .selinux_type = type };

        g_assert_true(label_selinux_context_valid(caller));
        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "is not one usermount passes");
}

/* Fail closed: no context from the bus, a bad one, or no result means no mount. */
static void test_selinux_caller_refused(void) {
        g_autofree char *long_context = repeat('s', 256);
        const char *const bad[] = {
                "", "user_u:user_r", "user_u::user_t", "user_u:user_r:user_t\n",
                "user_u:user_r:user_t s0", "user_u:user_r:\x1b[31m", long_context,
        };
        LabelInput in = { .lsm = LABEL_LSM_SELINUX, .compute = fed_compute };

        memcpy(long_context, "u:r:t:", 6);
        fed_reset("u:object_r:t:s0", 0);
        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES,
                       "did not tell the caller's SELinux context; SELinux is active, so the "
                       "mount is refused rather than made unlabelled");
        in.selinux_type = "removable_t";
        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "refused rather than made unlabelled");
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                in.caller_label = bad[i];
                in.selinux_type = NULL;
                expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "The caller's SELinux context");
                in.selinux_type = "removable_t";
                expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "The caller's SELinux context");
        }
        /* Refused before the policy is asked. */
        g_assert_cmpuint(fed_calls, ==, 0);
        /* Control characters are escaped in the message. */
        in.caller_label = "u:r:\x1b[31m";
        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "'u:r:\\x1b[31m'");
}

static void test_selinux_compute_refused(void) {
        g_autofree char *long_result = repeat('s', 256);
        const char *const bad[] = { "", "u:r", "u:object_r:t s0", "u:object_r:t\n", long_result };
        const LabelInput in = { .lsm = LABEL_LSM_SELINUX, .caller_label = "u:r:t:s0",
                                .compute = fed_compute };

        memcpy(long_result, "u:r:t:", 6);
        fed_reset(NULL, -EINVAL);
        expect_refused(&in, UM_ERROR_KIND_FAILED, EINVAL,
                       "could not be computed from the caller's context 'u:r:t:s0'");
        fed_reset(NULL, -EACCES);
        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "could not be computed");
        fed_reset(NULL, -ENOMEM);
        expect_refused(&in, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                fed_reset(bad[i], 0);
                expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES,
                               "is not one usermount passes to the kernel");
        }
}

/* libselinux itself, here: without a loaded policy there is nothing to compute, and the
 * request is refused rather than mounted unlabelled. */
static void test_selinux_default_hook(void) {
        const LabelInput in = { .lsm = LABEL_LSM_SELINUX, .caller_label = "u:r:t:s0" };
        char *con = NULL;

        if (is_selinux_enabled() > 0) {
                g_test_skip("SELinux is enabled here");
                return;
        }
        g_assert_cmpint(label_selinux_compute_file_context("u:r:t:s0", &con), <, 0);
        g_assert_null(con);
        expect_refused(&in, UM_ERROR_KIND_FAILED, 0, "could not be computed");
}

/* ---- Smack ------------------------------------------------------------------------------ */

static void test_smack(void) {
        g_autofree char *longest = repeat('L', 255);
        g_autofree char *longest_added = g_strdup_printf(
                "smackfsroot=%s,smackfsdef=%s,smackfstransmute=%s", longest, longest, longest);
        const char *const labels[] = { "User", "_", "System::Shared", "a-b" };

        fed_reset(NULL, -EIO);
        for (size_t i = 0; i < G_N_ELEMENTS(labels); i++) {
                LabelInput in = { .lsm = LABEL_LSM_SMACK, .caller_label = labels[i],
                                  .compute = fed_compute };
                g_autofree char *added = g_strdup_printf(
                        "smackfsroot=%s,smackfsdef=%s,smackfstransmute=%s", labels[i], labels[i],
                        labels[i]);

                expect_added(&in, added);
                /* SELinuxType= is for SELinux only. */
                in.selinux_type = "removable_t";
                expect_added(&in, added);
        }
        expect_added(&(const LabelInput) { .lsm = LABEL_LSM_SMACK, .caller_label = longest },
                     longest_added);
        g_assert_cmpuint(fed_calls, ==, 0);
}

static void test_smack_refused(void) {
        g_autofree char *too_long = repeat('L', 256);
        const char *const bad[] = { "", "-", "-x", "a/b", "a b", "a\nb", "\"a\"", "a\\b",
                                    too_long };
        LabelInput in = { .lsm = LABEL_LSM_SMACK };

        expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES,
                       "did not tell the caller's Smack label; Smack is active");
        for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
                in.caller_label = bad[i];
                expect_refused(&in, UM_ERROR_KIND_FAILED, EACCES, "The caller's Smack label");
        }
}

/* Smack options on a mount with no other item. */
static void test_smack_empty(void) {
        const PolicyInput pin = { .fstype = "squashfs" };
        const LabelInput in = { .lsm = LABEL_LSM_SMACK, .caller_label = "User" };
        g_autofree char *s = NULL;
        MountOptions o = {};
        UmError e = {};

        g_assert_cmpint(policy_build_options(&pin, &o, &e), ==, 0);
        g_assert_cmpint(label_add_options(&in, &o, &e), ==, 0);
        s = options_string(&o);
        g_assert_cmpstr(s, ==, "smackfsroot=User,smackfsdef=User,smackfstransmute=User");
        g_assert_true(o.read_only);
        mount_options_done(&o);
}

/* ---- Internal errors -------------------------------------------------------------------- */

static void test_internal(void) {
        MountOptions o = ext4_options();
        UmError e = {};

        g_assert_cmpint(label_add_options(NULL, &o, &e), ==, -EINVAL);
        g_assert_cmpint(label_add_options(&(const LabelInput) { .lsm = LABEL_LSM_NONE }, NULL, &e),
                        ==, -EINVAL);
        mount_options_done(&o);
        expect_refused(&(const LabelInput) { .lsm = _LABEL_LSM_MAX, .caller_label = "User" },
                       UM_ERROR_KIND_FAILED, EINVAL, "unknown LSM");
        /* conf.c validates SELinuxType=; label.c does not trust that. */
        expect_refused(&(const LabelInput) { .lsm = LABEL_LSM_SELINUX, .caller_label = "u:r:t",
                                             .selinux_type = "t:s0" },
                       UM_ERROR_KIND_FAILED, EINVAL, "invalid SELinuxType=");
}

int main(int argc, char *argv[]) {
        int r;

        g_test_init(&argc, &argv, NULL);
        for (size_t i = 0; i < G_N_ELEMENTS(lsm_cases); i++) {
                g_autofree char *name = g_strdup_printf("/label/lsm/parse/%02zu", i);

                g_test_add_data_func(name, &lsm_cases[i], test_lsm_parse);
        }
        g_test_add_func("/label/lsm/parse-lengths", test_lsm_parse_lengths);
        g_test_add_func("/label/lsm/names", test_lsm_names);
        g_test_add_func("/label/lsm/detect", test_lsm_detect);
        for (size_t i = 0; i < G_N_ELEMENTS(context_cases); i++) {
                g_autofree char *name = g_strdup_printf("/label/valid/context/%02zu", i);

                g_test_add_data_func(name, &context_cases[i], test_valid_context);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(smack_cases); i++) {
                g_autofree char *name = g_strdup_printf("/label/valid/smack/%02zu", i);

                g_test_add_data_func(name, &smack_cases[i], test_valid_smack);
        }
        for (size_t i = 0; i < G_N_ELEMENTS(type_cases); i++) {
                g_autofree char *name = g_strdup_printf("/label/valid/type/%02zu", i);

                g_test_add_data_func(name, &type_cases[i], test_valid_type);
        }
        g_test_add_func("/label/valid/lengths", test_valid_lengths);
        g_test_add_func("/label/none/anything", test_none);
        g_test_add_func("/label/none/empty", test_none_empty);
        g_test_add_func("/label/selinux/computed", test_selinux_computed);
        g_test_add_func("/label/selinux/admin-type", test_selinux_admin_type);
        g_test_add_func("/label/selinux/admin-type-too-long", test_selinux_admin_type_too_long);
        g_test_add_func("/label/selinux/caller-refused", test_selinux_caller_refused);
        g_test_add_func("/label/selinux/compute-refused", test_selinux_compute_refused);
        g_test_add_func("/label/selinux/default-hook", test_selinux_default_hook);
        g_test_add_func("/label/smack/added", test_smack);
        g_test_add_func("/label/smack/refused", test_smack_refused);
        g_test_add_func("/label/smack/empty", test_smack_empty);
        g_test_add_func("/label/internal", test_internal);
        r = g_test_run();
        fed_reset(NULL, 0);
        return r;
}
