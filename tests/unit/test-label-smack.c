/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Smack labelling when the daemon may not label (daemon/label.c): the kernel accepts
 * smackfsroot=, smackfsdef= and smackfstransmute= only from a process with CAP_MAC_ADMIN
 * whose label, if /sys/fs/smackfs/onlycap lists any, is listed (smack_set_mnt_opts()),
 * and usermountd drops CAP_MAC_ADMIN at start. Without them a mount would carry the
 * daemon's own label and trust the labels on the medium, so such a daemon refuses every
 * mount with a sentence that says why, before any worker runs. This machine has no Smack:
 * what is tested is the decision (label_smack_privileged()) and what label_add_options()
 * does with it.
 */
#include <glib.h>

#include "label.h"
#include "policy.h"

typedef struct PrivilegedCase {
        bool has_mac_admin;
        const char *onlycap;
        const char *own_label;
        bool privileged;
} PrivilegedCase;

static const PrivilegedCase privileged_cases[] = {
        /* No CAP_MAC_ADMIN: never, whatever the list says. */
        { false, NULL, "System", false },
        { false, "", "System", false },
        { false, "System", "System", false },
        /* CAP_MAC_ADMIN and no list (empty, blank, as smackfs shows it). */
        { true, NULL, NULL, true },
        { true, "", "System", true },
        { true, " \n", "System", true },
        /* A list: only a listed label, compared whole. */
        { true, "System", "System", true },
        { true, "System\n", "System\n", true },
        { true, "_ System User", "System", true },
        { true, "_ User", "System", false },
        { true, "Sys", "System", false },
        { true, "SystemX", "System", false },
        { true, "System", NULL, false },
        { true, "System", "", false },
};

static void test_privileged(void) {
        for (size_t i = 0; i < G_N_ELEMENTS(privileged_cases); i++) {
                const PrivilegedCase *c = &privileged_cases[i];

                g_test_message("case %zu: %d '%s' '%s'", i, c->has_mac_admin,
                               c->onlycap ?: "(null)", c->own_label ?: "(null)");
                g_assert_cmpint(label_smack_privileged(c->has_mac_admin, c->onlycap,
                                                       c->own_label), ==, c->privileged);
        }
}

/* Refused with the reason; the options as they were; nothing computed. */
static void test_unprivileged_refused(void) {
        const PolicyInput pin = { .fstype = "squashfs" };
        const LabelInput in = { .lsm = LABEL_LSM_SMACK_UNPRIVILEGED, .caller_label = "User" };
        g_autofree char *before = NULL, *after = NULL;
        MountOptions o = {};
        UmError e = {};

        g_assert_cmpint(policy_build_options(&pin, &o, &e), ==, 0);
        before = mount_options_to_string(&o);
        g_assert_cmpint(label_add_options(&in, &o, &e), ==, -EPERM);
        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_FAILED);
        g_assert_nonnull(strstr(e.message, "Smack is active, but usermountd may not set Smack "
                                           "labels"));
        g_assert_nonnull(strstr(e.message, "CAP_MAC_ADMIN"));
        after = mount_options_to_string(&o);
        g_assert_cmpstr(after, ==, before);
        g_assert_null(strstr(after, "smack"));
        mount_options_done(&o);

        /* Also without a caller label: the daemon's state is the reason, not the caller. */
        e = (UmError) {};
        g_assert_cmpint(label_add_options(&(const LabelInput) {
                                                  .lsm = LABEL_LSM_SMACK_UNPRIVILEGED },
                                          &o, &e), ==, -EPERM);
        mount_options_done(&o);
}

/* The daemon's start message names it. */
static void test_name(void) {
        const char *s = label_lsm_to_string(LABEL_LSM_SMACK_UNPRIVILEGED);

        g_assert_nonnull(s);
        g_assert_true(g_str_has_prefix(s, "smack, but "));
        g_assert_nonnull(strstr(s, "refused"));
        g_assert_null(label_lsm_to_string(_LABEL_LSM_MAX));
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/label-smack/privileged", test_privileged);
        g_test_add_func("/label-smack/unprivileged-refused", test_unprivileged_refused);
        g_test_add_func("/label-smack/name", test_name);
        return g_test_run();
}
