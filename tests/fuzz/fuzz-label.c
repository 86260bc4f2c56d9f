/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the security-label code (daemon/label.c): the parsers of /sys/kernel/security/lsm
 * and of /sys/fs/smackfs/onlycap (label_smack_privileged(), against an independent reading
 * of the list), the validity checks of SELinux types, contexts and Smack labels, and
 * label_add_options()
 * with a caller label from the bus, a SELinuxType= and a context the (fed) SELinux
 * computation returns. Whatever it adds must be valid for its LSM, and a refusal must leave
 * the options as they were: a mount is never made unlabelled or with a forged label.
 *
 * Input, NUL-separated fields:
 *   FLAGS     the first byte picks the LSM (n none, s SELinux, m Smack, u Smack without
 *             the right to set labels, anything else an invalid value); then letters: N the
 *             bus gave no label, E the computation fails, e SELinux is enabled (for the LSM
 *             list), c the daemon has CAP_MAC_ADMIN, O its own Smack label is unknown
 *   CALLER    the caller's label from the bus
 *   TYPE      [Labels] SELinuxType=
 *   COMPUTED  what the SELinux computation returns
 *   LSMS      the text of /sys/kernel/security/lsm
 *   ONLYCAP   the text of /sys/fs/smackfs/onlycap
 *   OWN       the daemon's own Smack label (/proc/self/attr/smack/current)
 */
#include "fuzz.h"
#include "label.h"

static const char *computed;
static bool compute_fails;

static int fed_compute(const char *caller, char **ret_context) {
        FUZZ_ASSERT(caller);
        if (compute_fails)
                return -EIO;
        *ret_context = strdup(computed);
        return *ret_context ? 0 : -ENOMEM;
}

static LabelLsm pick_lsm(char c) {
        switch (c) {
        case 'n':
                return LABEL_LSM_NONE;
        case 's':
                return LABEL_LSM_SELINUX;
        case 'm':
                return LABEL_LSM_SMACK;
        case 'u':
                return LABEL_LSM_SMACK_UNPRIVILEGED;
        default:
                return (LabelLsm) (unsigned char) c;
        }
}

/*
 * label_smack_privileged() read independently: without CAP_MAC_ADMIN never; else when the
 * list (labels separated by spaces, tabs or newlines) is empty or names own (up to its
 * first newline).
 */
static bool smack_privileged(bool mac_admin, const char *onlycap, const char *own) {
        _cleanup_free_ char *list = strdup(onlycap), *me = own ? strndup(own, strcspn(own, "\n")) :
                NULL;
        bool any = false, listed = false;
        char *save = NULL;

        FUZZ_ASSERT(list && (!own || me));
        if (!mac_admin)
                return false;
        for (char *t = strtok_r(list, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
                any = true;
                listed = listed || (me && streq(t, me));
        }
        return !any || listed;
}

/* One option "commit=5", as policy_build_options() would have left it. */
static bool options_init(MountOptions *o) {
        *o = (MountOptions){ .items = calloc(1, sizeof(MountOption)), .n_items = 1 };
        if (!o->items)
                return false;
        o->items[0] = (MountOption){ strdup("commit"), strdup("5") };
        return o->items[0].key && o->items[0].value;
}

static void check_added(const LabelInput *in, const MountOptions *o) {
        switch (in->lsm) {
        case LABEL_LSM_NONE:
                FUZZ_ASSERT(o->n_items == 1);
                break;
        case LABEL_LSM_SELINUX:
                FUZZ_ASSERT(o->n_items == 2 && streq(o->items[1].key, "context"));
                FUZZ_ASSERT(label_selinux_context_valid(o->items[1].value));
                FUZZ_ASSERT(label_selinux_context_valid(in->caller_label));
                break;
        case LABEL_LSM_SMACK:
                FUZZ_ASSERT(o->n_items == 4);
                FUZZ_ASSERT(label_smack_valid(in->caller_label));
                for (size_t i = 1; i < 4; i++)
                        FUZZ_ASSERT(streq(o->items[i].value, in->caller_label));
                break;
        default:
                FUZZ_ASSERT(!"an invalid LSM, or Smack without the right to set labels, was accepted");
        }
        FUZZ_ASSERT(streq(o->items[0].key, "commit") && streq(o->items[0].value, "5"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        LabelInput in = { .compute = fed_compute };
        MountOptions o = {};
        const char *flags, *caller, *lsms, *onlycap, *own;
        LabelLsm parsed = _LABEL_LSM_MAX;
        UmError e = {};
        FuzzInput fi;
        char *s;
        int r;

        if (size > 16384 || !fuzz_input_init(&fi, data, size))
                return 0;
        flags = fuzz_field(&fi);
        caller = fuzz_field(&fi);
        in.selinux_type = fuzz_field(&fi);
        computed = fuzz_field(&fi);
        lsms = fuzz_field(&fi);
        onlycap = fuzz_field(&fi);
        own = strchr(flags, 'O') ? NULL : fuzz_field(&fi);
        in.lsm = pick_lsm(flags[0]);
        in.caller_label = strchr(flags, 'N') ? NULL : caller;
        compute_fails = strchr(flags, 'E');

        r = label_lsm_parse(lsms, strchr(flags, 'e'), &parsed);
        FUZZ_ASSERT(r == 0 || r == -EINVAL);
        if (r == 0)
                FUZZ_ASSERT(label_lsm_to_string(parsed));
        else
                FUZZ_ASSERT(parsed == _LABEL_LSM_MAX);

        FUZZ_ASSERT(label_smack_privileged(strchr(flags, 'c'), onlycap, own) ==
                    smack_privileged(strchr(flags, 'c'), onlycap, own));

        /* The checks must not read past the string, whatever it holds. */
        (void) label_selinux_type_valid(caller);
        (void) label_selinux_context_valid(computed);
        (void) label_smack_valid(in.selinux_type);

        if (!options_init(&o))
                goto out;
        r = label_add_options(&in, &o, &e);
        if (r < 0) {
                FUZZ_ASSERT(e.kind == UM_ERROR_KIND_FAILED && e.message[0]);
                FUZZ_ASSERT(o.n_items == 1);
                FUZZ_ASSERT(streq(o.items[0].key, "commit") && streq(o.items[0].value, "5"));
        } else {
                FUZZ_ASSERT(r == 0 && e.kind == UM_ERROR_KIND_NONE);
                check_added(&in, &o);
        }
        s = mount_options_to_string(&o);
        FUZZ_ASSERT(s);
        free(s);
out:
        mount_options_done(&o);
        fuzz_input_done(&fi);
        return 0;
}
