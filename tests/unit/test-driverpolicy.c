/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Driver= and the choice between the kernel's and a userspace driver (driverpolicy.h):
 * parsing, and every combination of setting, source kind, availability and the caller's
 * wish, table-driven.
 */
#include <glib.h>
#include <string.h>

#include "driverpolicy.h"

static void test_parse(void) {
        static const struct {
                const char *value;
                DriverSetting image, removable, system; /* UNSET for a refused value */
        } cases[] = {
                { "auto", DRIVER_SETTING_AUTO, DRIVER_SETTING_AUTO, DRIVER_SETTING_AUTO },
                { "kernel", DRIVER_SETTING_KERNEL, DRIVER_SETTING_KERNEL, DRIVER_SETTING_KERNEL },
                { " userspace ", DRIVER_SETTING_USERSPACE, DRIVER_SETTING_USERSPACE,
                  DRIVER_SETTING_USERSPACE },
                { "image:userspace", DRIVER_SETTING_USERSPACE, DRIVER_SETTING_UNSET,
                  DRIVER_SETTING_UNSET },
                { "image:userspace,system:kernel removable:auto", DRIVER_SETTING_USERSPACE,
                  DRIVER_SETTING_AUTO, DRIVER_SETTING_KERNEL },
                /* refused */
                { "", 0, 0, 0 },
                { " , ", 0, 0, 0 },
                { "Kernel", 0, 0, 0 },
                { "fuse", 0, 0, 0 },
                { "kernel userspace", 0, 0, 0 },
                { "image:", 0, 0, 0 },
                { ":kernel", 0, 0, 0 },
                { "disk:kernel", 0, 0, 0 },
                { "image:kernel image:userspace", 0, 0, 0 },
                { "image:kernel:x", 0, 0, 0 },
                { "image:userspace kernel", 0, 0, 0 },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                DriverPolicy p = { { 99, 99, 99 } };
                char why[160] = "";
                int r = driver_policy_parse(cases[i].value, &p, why, sizeof(why));

                g_test_message("'%s': %d %s", cases[i].value, r, why);
                if (cases[i].image == DRIVER_SETTING_UNSET &&
                    cases[i].removable == DRIVER_SETTING_UNSET) {
                        g_assert_cmpint(r, ==, -EINVAL);
                        g_assert_cmpstr(why, !=, "");
                        g_assert_cmpint(p.kinds[0], ==, 99); /* untouched */
                        continue;
                }
                g_assert_cmpint(r, ==, 0);
                g_assert_cmpint(p.kinds[SOURCE_KIND_IMAGE], ==, cases[i].image);
                g_assert_cmpint(p.kinds[SOURCE_KIND_REMOVABLE], ==, cases[i].removable);
                g_assert_cmpint(p.kinds[SOURCE_KIND_SYSTEM], ==, cases[i].system);
        }
}

static void test_format(void) {
        DriverPolicy p;
        char why[160], buf[96];

        g_assert_cmpint(driver_policy_parse("system:kernel image:userspace", &p, why,
                                            sizeof(why)), ==, 0);
        driver_policy_format(&p, buf, sizeof(buf));
        g_assert_cmpstr(buf, ==, "image:userspace system:kernel");
        p = (DriverPolicy) {};
        driver_policy_format(&p, buf, sizeof(buf));
        g_assert_cmpstr(buf, ==, "");
}

static void test_names(void) {
        g_assert_cmpstr(driver_kind_name(DRIVER_KERNEL), ==, "kernel");
        g_assert_cmpstr(driver_kind_name(DRIVER_USERSPACE), ==, "userspace");
        g_assert_null(driver_kind_name(_DRIVER_KIND_MAX));
        g_assert_cmpint(driver_kind_from_name("kernel"), ==, DRIVER_KERNEL);
        g_assert_cmpint(driver_kind_from_name("userspace"), ==, DRIVER_USERSPACE);
        g_assert_cmpint(driver_kind_from_name("fuse"), ==, -EINVAL);
        g_assert_cmpint(driver_kind_from_name(""), ==, -EINVAL);
        g_assert_cmpint(driver_kind_from_name(NULL), ==, -EINVAL);
        g_assert_cmpstr(source_kind_name(SOURCE_KIND_SYSTEM), ==, "system");
}

#define A DRIVER_SETTING_AUTO
#define K DRIVER_SETTING_KERNEL
#define U DRIVER_SETTING_USERSPACE
#define IMG SOURCE_KIND_IMAGE
#define REM SOURCE_KIND_REMOVABLE
#define SYS SOURCE_KIND_SYSTEM
#define NONE (-1)
#define REFUSED (-2)

static void test_decide(void) {
        static const struct {
                DriverSetting general, type; /* type 0: the section says nothing */
                SourceKind kind;
                bool kernel, userspace;
                int requested;
                int expect;                  /* DriverKind, or REFUSED */
                bool override;
        } cases[] = {
                /* auto: userspace for images and removable media where installed */
                { A, 0, IMG, true, true, NONE, DRIVER_USERSPACE, false },
                { A, 0, REM, true, true, NONE, DRIVER_USERSPACE, false },
                { A, 0, SYS, true, true, NONE, DRIVER_KERNEL, false },
                /* ... and where none is installed, the kernel only with mount-kernel-driver
                 * for images and removable media (untrusted bytes), freely for the system's
                 * own disks */
                { A, 0, IMG, true, false, NONE, DRIVER_KERNEL, true },
                { A, 0, REM, true, false, NONE, DRIVER_KERNEL, true },
                { A, 0, SYS, true, false, NONE, DRIVER_KERNEL, false },
                /* ... and userspace wherever the kernel has no driver */
                { A, 0, SYS, false, true, NONE, DRIVER_USERSPACE, false },
                { A, 0, IMG, false, false, NONE, REFUSED, false },
                /* kernel, userspace */
                { K, 0, IMG, true, true, NONE, DRIVER_KERNEL, false },
                { K, 0, IMG, false, true, NONE, REFUSED, false },
                { U, 0, SYS, true, true, NONE, DRIVER_USERSPACE, false },
                { U, 0, SYS, true, false, NONE, REFUSED, false },
                /* a type's section wins over [General] */
                { A, K, IMG, true, true, NONE, DRIVER_KERNEL, false },
                { K, U, SYS, true, true, NONE, DRIVER_USERSPACE, false },
                /* the caller's wish: userspace is always allowed where installed */
                { K, 0, IMG, true, true, DRIVER_USERSPACE, DRIVER_USERSPACE, false },
                { A, 0, SYS, true, true, DRIVER_USERSPACE, DRIVER_USERSPACE, false },
                { K, 0, IMG, true, false, DRIVER_USERSPACE, REFUSED, false },
                /* kernel where policy says userspace: the override action */
                { A, 0, IMG, true, true, DRIVER_KERNEL, DRIVER_KERNEL, true },
                { U, 0, SYS, true, true, DRIVER_KERNEL, DRIVER_KERNEL, true },
                { A, 0, SYS, true, true, DRIVER_KERNEL, DRIVER_KERNEL, false },
                { A, 0, IMG, true, false, DRIVER_KERNEL, DRIVER_KERNEL, true },
                /* the administrator's Driver=kernel needs no question */
                { K, 0, REM, true, false, NONE, DRIVER_KERNEL, false },
                { A, K, IMG, true, false, NONE, DRIVER_KERNEL, false },
                { A, 0, IMG, false, true, DRIVER_KERNEL, REFUSED, false },
        };

        for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
                DriverPolicy general = { { cases[i].general, cases[i].general,
                                           cases[i].general } };
                DriverPolicy type = {};
                const DriverInput in = {
                        .fstype = "ext4",
                        .kind = cases[i].kind,
                        .general = &general,
                        .type = &type,
                        .kernel_available = cases[i].kernel,
                        .userspace_available = cases[i].userspace,
                        .userspace_name = "fuse2fs",
                        .requested = cases[i].requested,
                };
                DriverDecision d = { .driver = 99 };
                UmError e = {};
                int r;

                type.kinds[cases[i].kind] = cases[i].type;
                r = driver_decide(&in, &d, &e);
                g_test_message("case %zu: %d %d %s", i, r, d.driver, e.message);
                if (cases[i].expect == REFUSED) {
                        g_assert_cmpint(r, <, 0);
                        g_assert_cmpint(e.kind, ==, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED);
                        g_assert_nonnull(strstr(e.message, "ext4"));
                        g_assert_cmpint(d.driver, ==, 99);
                        continue;
                }
                g_assert_cmpint(r, ==, 0);
                g_assert_cmpint(d.driver, ==, cases[i].expect);
                g_assert_cmpint(d.kernel_override, ==, cases[i].override);
        }
}

int main(int argc, char **argv) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/driverpolicy/parse", test_parse);
        g_test_add_func("/driverpolicy/format", test_format);
        g_test_add_func("/driverpolicy/names", test_names);
        g_test_add_func("/driverpolicy/decide", test_decide);
        return g_test_run();
}
