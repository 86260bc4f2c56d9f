/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of daemon/admission.c: every configured limit at its bound and one below, root's
 * exemptions, the owner note for callers /etc/subuid delegates, and the polkit actions a
 * mount needs. Pure functions: no daemon, no bus.
 */
#include <glib.h>
#include <string.h>

#include "admission.h"
#include "usermount-names.h"

static const ConfLimits limits = {
        .max_requests = 10,
        .max_requests_per_user = 3,
        .max_mounts = 20,
        .max_mounts_per_user = 4,
        .max_loop_devices = 8,
        .max_loop_devices_per_user = 2,
        .max_drivers = 9,
        .max_drivers_per_user = 3,
        .max_workers = 6,
        .max_workers_per_user = 2,
        .max_unauthorized_requests = 5,
};

static const LimitSubject user = { .uid = 1000, .owner = 1000, .mounts = true,
                                   .charges_unauthorized = true };
static const LimitSubject root = { .uid = 0, .owner = 0, .mounts = true,
                                   .charges_unauthorized = false };
static const LimitSubject delegated = { .uid = 100000, .owner = 1000, .mounts = true };

/* Asserts r is a LimitExceeded naming setting, or 0 when setting is NULL. */
static void assert_refused(int r, const UmError *e, const char *setting) {
        if (!setting) {
                g_assert_cmpint(r, ==, 0);
                return;
        }
        g_assert_cmpint(r, <, 0);
        g_assert_cmpint(e->kind, ==, UM_ERROR_KIND_LIMIT_EXCEEDED);
        g_assert_nonnull(strstr(e->message, setting));
}

static void test_requests(void) {
        const struct {
                const LimitSubject *s;
                LimitCounts c;
                const char *refused;
        } cases[] = {
                { &user, { 0 }, NULL },
                { &user, { .requests = 9 }, NULL },
                { &user, { .requests = 10 }, "MaxRequests=" },
                { &root, { .requests = 10 }, "MaxRequests=" },
                { &user, { .owner_requests = 2 }, NULL },
                { &user, { .owner_requests = 3 }, "MaxRequestsPerUser=" },
                { &root, { .owner_requests = 3, .owner_mounts = 99, .mounts = 99,
                           .unauthorized = 99 }, NULL },
                { &user, { .owner_mounts = 3 }, NULL },
                { &user, { .owner_mounts = 4 }, "MaxMountsPerUser=" },
                { &user, { .mounts = 19 }, NULL },
                { &user, { .mounts = 20, .registered_mounts = 18 }, "MaxMounts=" },
                { &user, { .unauthorized = 4 }, NULL },
                { &user, { .unauthorized = 5 }, "MaxUnauthorizedRequests=" },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                UmError e = {};

                assert_refused(admission_check_request(&limits, cases[i].s, &cases[i].c, &e), &e,
                               cases[i].refused);
        }
}

/* Mount limits apply to Mount and MountFd only, the unauthorized budget to what it charges. */
static void test_requests_what_counts(void) {
        const LimitSubject open_mount = { .uid = 1000, .owner = 1000 };
        const LimitCounts c = { .owner_mounts = 99, .mounts = 99, .unauthorized = 99 };
        UmError e = {};

        g_assert_cmpint(admission_check_request(&limits, &open_mount, &c, &e), ==, 0);
}

static void test_owner_note(void) {
        const LimitCounts c = { .owner_requests = 3 };
        UmError e = {};

        assert_refused(admission_check_request(&limits, &delegated, &c, &e), &e,
                       "MaxRequestsPerUser=");
        g_assert_nonnull(strstr(e.message, "together with uid 1000"));
        e = (UmError) {};
        assert_refused(admission_check_request(&limits, &user, &c, &e), &e, "MaxRequestsPerUser=");
        g_assert_null(strstr(e.message, "together with"));
}

static void test_loops(void) {
        UmError e = {};

        assert_refused(admission_check_loops(&limits, &user, 1, 7, &e), &e, NULL);
        assert_refused(admission_check_loops(&limits, &user, 2, 2, &e), &e,
                       "MaxLoopDevicesPerUser=");
        e = (UmError) {};
        assert_refused(admission_check_loops(&limits, &user, 0, 8, &e), &e, "MaxLoopDevices=");
        assert_refused(admission_check_loops(&limits, &root, 99, 99, &e), &e, NULL);
}

static void test_drivers(void) {
        UmError e = {};

        assert_refused(admission_check_drivers(&limits, &user, 2, 8, &e), &e, NULL);
        assert_refused(admission_check_drivers(&limits, &user, 3, 3, &e), &e,
                       "MaxDriversPerUser=");
        e = (UmError) {};
        assert_refused(admission_check_drivers(&limits, &user, 0, 9, &e), &e, "MaxDrivers=");
        assert_refused(admission_check_drivers(&limits, &root, 99, 99, &e), &e, NULL);
}

static void test_workers(void) {
        UmError e = {};

        assert_refused(admission_check_workers(&limits, &user, true, 5, 1, 4, &e), &e, NULL);
        assert_refused(admission_check_workers(&limits, &user, false, 6, 0, 0, &e), &e,
                       "MaxWorkers=");
        e = (UmError) {};
        assert_refused(admission_check_workers(&limits, &user, false, 2, 2, 0, &e), &e,
                       "MaxWorkersPerUser=");
        e = (UmError) {};
        assert_refused(admission_check_workers(&limits, &user, true, 1, 1, 5, &e), &e,
                       "MaxUnauthorizedRequests=");
        /* An authorized request is not charged for the others' unauthorized workers. */
        assert_refused(admission_check_workers(&limits, &user, false, 1, 1, 5, &e), &e, NULL);
        assert_refused(admission_check_workers(&limits, &root, true, 99, 99, 99, &e), &e, NULL);
}

static void test_actions(void) {
        const char *a[ADMISSION_ACTIONS_MAX];

        admission_mount_actions(SOURCE_IMAGE, true, false, false, a);
        g_assert_cmpstr(a[0], ==, UM_ACTION_MOUNT_IMAGE);
        g_assert_null(a[1]);
        admission_mount_actions(SOURCE_BLOCK_DEVICE, true, false, false, a);
        g_assert_cmpstr(a[0], ==, UM_ACTION_MOUNT_REMOVABLE);
        admission_mount_actions(SOURCE_BLOCK_DEVICE, false, false, true, a);
        g_assert_cmpstr(a[0], ==, UM_ACTION_MOUNT_SYSTEM);
        g_assert_cmpstr(a[1], ==, UM_ACTION_MOUNT_EXEC);
        g_assert_null(a[2]);
        /* The kernel's driver where policy says userspace: its own action, before exec. */
        admission_mount_actions(SOURCE_IMAGE, false, true, true, a);
        g_assert_cmpstr(a[0], ==, UM_ACTION_MOUNT_IMAGE);
        g_assert_cmpstr(a[1], ==, UM_ACTION_MOUNT_KERNEL_DRIVER);
        g_assert_cmpstr(a[2], ==, UM_ACTION_MOUNT_EXEC);
        admission_mount_actions(SOURCE_BLOCK_DEVICE, true, true, false, a);
        g_assert_cmpstr(a[1], ==, UM_ACTION_MOUNT_KERNEL_DRIVER);
        g_assert_null(a[2]);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/limits/requests", test_requests);
        g_test_add_func("/limits/requests-what-counts", test_requests_what_counts);
        g_test_add_func("/limits/owner-note", test_owner_note);
        g_test_add_func("/limits/loops", test_loops);
        g_test_add_func("/limits/drivers", test_drivers);
        g_test_add_func("/limits/workers", test_workers);
        g_test_add_func("/limits/actions", test_actions);
        return g_test_run();
}
