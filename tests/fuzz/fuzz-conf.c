/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the configuration file parser (daemon/conf.c): the input is the whole file,
 * written to a file of the target's own and read with conf_load() as the daemon does.
 * A file it accepts must agree with --check-config, pass the per-type checks again, and
 * never make a plain request fail: whatever an administrator can write that passes the
 * check still mounts.
 */
#include "conf.h"
#include "fuzz.h"
#include "policy.h"

/* Every request without options, read-write or read-only, against every allowed type. */
static void check_requests(const Conf *c) {
        for (size_t i = 0; i < c->n_fstypes; i++) {
                const ConfFsType *t = &c->fstypes[i];

                FUZZ_ASSERT(t->name && conf_fstype(c, t->name) == t);
                FUZZ_ASSERT(policy_check_conf_fstype(t, NULL, NULL) == 0);
                if (!t->allowed)
                        continue;
                for (int ro = 0; ro <= 1; ro++) {
                        PolicyInput in = { .fstype = t->name, .options = "", .read_only = ro,
                                           .uid = 1000, .gid = 1000, .umask = 022,
                                           .fs_conf = t };
                        MountOptions o = {};
                        UmError e = {};
                        int r;

                        r = policy_build_options(&in, &o, &e);
                        if (r < 0)
                                fprintf(stderr, "[%s] read-only=%d: %s\n", t->name, ro,
                                        e.message);
                        FUZZ_ASSERT(r == 0);
                        mount_options_done(&o);
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *path;
        static FILE *devnull;
        Conf *c = NULL;
        int r, check;

        if (size > CONF_FILE_MAX + 1)
                return 0;
        if (!path) {
                path = fuzz_path("usermount.conf");
                devnull = fopen("/dev/null", "we");
                FUZZ_ASSERT(devnull);
        }
        fuzz_write_file(path, data, size);

        r = conf_load(path, false, devnull, &c);
        FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENOMEM);
        FUZZ_ASSERT((r == 0) == (c != NULL));
        check = conf_check(path, devnull);
        FUZZ_ASSERT(check == (r == 0 ? 0 : 1) || r == -ENOMEM);
        if (c) {
                FUZZ_ASSERT(c->n_ref == 1 && c->path && streq(c->path, path));
                FUZZ_ASSERT(c->media_root && c->media_root[0] == '/');
                check_requests(c);
        }
        conf_unref(c);
        return 0;
}
