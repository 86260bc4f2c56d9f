/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the option policy (daemon/policy.c): the syntax check of a caller's option string,
 * the load-time check of a per-type configuration section, and the full per-option check
 * that builds what the worker passes to the kernel, and checks what the policy promises
 * about the result (locked attributes, forced options, nothing refused gets through).
 *
 * Input, NUL-separated fields:
 *   FSTYPE   the probed type ("ext4"; anything else is refused)
 *   FLAGS    letters: r read-only, s read-only source, x exec, c use the section below
 *   OPTIONS  the caller's option string
 *   ALLOWED  AllowedOptions= of the type's section, comma-separated ("-": unset)
 *   DEFAULT  DefaultOptions= ("-": unset)
 *   FORCED   ForcedOptions= ("-": unset)
 */
#include <sys/mount.h>

#include "fuzz.h"
#include "conf.h"
#include "policy.h"

#define UID 1000
#define GID 1000

static const char *or_null(const char *s) {
        return streq(s, "-") ? NULL : s;
}

/* "a,b c" as a NULL-terminated list, split like the configuration file's lists. */
static char **split(const char *s) {
        size_t n = 0, max = strlen(s) / 2 + 2;
        char **l = calloc(max, sizeof(char *));

        if (!l)
                return NULL;
        for (const char *p = s; *p;) {
                size_t len = strcspn(p, ", ");

                if (len > 0 && n + 1 < max)
                        l[n++] = strndup(p, len);
                p += len;
                p += strspn(p, ", ");
        }
        return l;
}

static void strv_free(char **l) {
        for (size_t i = 0; l && l[i]; i++)
                free(l[i]);
        free(l);
}

static void report(void *userdata, PolicyConfList list, const char *message) {
        FUZZ_ASSERT(list >= 0 && list < _POLICY_CONF_LIST_MAX);
        FUZZ_ASSERT(policy_conf_list_name(list));
        FUZZ_ASSERT(message && *message);
}

static bool is_owner_type(const char *fstype) {
        return streq(fstype, "vfat") || streq(fstype, "exfat") || streq(fstype, "ntfs3") ||
                streq(fstype, "iso9660") || streq(fstype, "udf");
}

static bool plain_key(const char *k) {
        if (!*k)
                return false;
        for (; *k; k++)
                if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
                      (*k >= '0' && *k <= '9') || *k == '_' || *k == '.' || *k == '-'))
                        return false;
        return true;
}

/* What the policy promises about every successful result. */
static void check_result(const PolicyInput *in, const MountOptions *o) {
        static const char *const refused[] = {
                "suid", "dev", "exec", "context", "fscontext", "defcontext", "rootcontext",
                "seclabel", "loop", "uhelper", "helper",
        };
        unsigned n_errors = 0, n_uid = 0, n_gid = 0;
        char *s;

        FUZZ_ASSERT((o->attr_set & MOUNT_ATTR_NODEV) && (o->attr_set & MOUNT_ATTR_NOSUID));
        if (!in->exec)
                FUZZ_ASSERT(o->attr_set & MOUNT_ATTR_NOEXEC);
        if (in->read_only)
                FUZZ_ASSERT(o->read_only);
        FUZZ_ASSERT(o->read_only == !!(o->attr_set & MOUNT_ATTR_RDONLY));
        FUZZ_ASSERT(o->n_items == 0 || o->items);

        for (size_t i = 0; i < o->n_items; i++) {
                const char *k = o->items[i].key, *v = o->items[i].value;

                FUZZ_ASSERT(k && plain_key(k));
                for (size_t j = 0; j < ELEMENTSOF(refused); j++)
                        FUZZ_ASSERT(!streq(k, refused[j]));
                FUZZ_ASSERT(strncmp(k, "x-", 2) != 0 && strncmp(k, "smackfs", 7) != 0);
                if (v) {
                        FUZZ_ASSERT(*v);
                        for (const char *c = v; *c; c++)
                                FUZZ_ASSERT((unsigned char) *c >= 0x20 && *c != 0x7f &&
                                            *c != ',' && *c != '"' && *c != '\'' && *c != '\\');
                }
                if (streq(k, "errors")) {
                        FUZZ_ASSERT(v && !streq(v, "panic") && !streq(v, "continue"));
                        n_errors++;
                }
                if (streq(k, "uid")) {
                        FUZZ_ASSERT(v && streq(v, "1000"));
                        n_uid++;
                }
                if (streq(k, "gid")) {
                        FUZZ_ASSERT(v && streq(v, "1000"));
                        n_gid++;
                }
                /* Each key once: the kernel takes the last one, which would be the caller's. */
                for (size_t j = 0; j < i; j++)
                        FUZZ_ASSERT(!streq(o->items[j].key, k));
        }
        if (streq(in->fstype, "ext2") || streq(in->fstype, "ext3") || streq(in->fstype, "ext4"))
                FUZZ_ASSERT(n_errors == 1);
        if (is_owner_type(in->fstype))
                FUZZ_ASSERT(n_uid == 1 && n_gid == 1);

        s = mount_options_to_string(o);
        FUZZ_ASSERT(s);
        free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        ConfFsType t = {};
        PolicyInput in = { .uid = UID, .gid = GID, .umask = 022 };
        MountOptions o = {};
        UmError e = {};
        FuzzInput fi;
        const char *flags, *allowed;
        char forced[512];
        int syntax, r;

        if (size > 16384 || !fuzz_input_init(&fi, data, size))
                return 0;
        in.fstype = fuzz_field(&fi);
        flags = fuzz_field(&fi);
        in.options = fuzz_field(&fi);
        allowed = or_null(fuzz_field(&fi));
        t.default_options = (char *) or_null(fuzz_field(&fi));
        t.forced_options = (char *) or_null(fuzz_field(&fi));
        in.source_read_only = strchr(flags, 's');
        in.read_only = strchr(flags, 'r') || in.source_read_only;
        in.exec = strchr(flags, 'x');

        syntax = policy_check_options_syntax(in.options, &e);
        FUZZ_ASSERT(syntax == 0 || syntax == -EINVAL || syntax == -EPERM);
        FUZZ_ASSERT((syntax == 0) == (e.kind == UM_ERROR_KIND_NONE));
        if (syntax < 0)
                FUZZ_ASSERT(e.message[0] && memchr(e.message, 0, sizeof(e.message)));

        policy_describe_forced(in.fstype, forced, sizeof(forced));
        FUZZ_ASSERT(memchr(forced, 0, sizeof(forced)));

        /* A section is only used once it passed the check, as the daemon does. */
        if (strchr(flags, 'c') && fstype_allowed(in.fstype)) {
                t.name = in.fstype;
                t.allowed = true;
                if (allowed) {
                        t.allowed_options = split(allowed);
                        if (!t.allowed_options)
                                goto out;
                }
                /* Split once, as conf_load() does; a list that does not split is a problem. */
                r = conf_fstype_split(&t, false, &e);
                if (r >= 0)
                        r = conf_fstype_split(&t, true, &e);
                FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENOMEM);
                if (r == 0)
                        r = policy_check_conf_fstype(&t, report, NULL);
                FUZZ_ASSERT(r == 0 || r == -EINVAL || r == -ENOMEM);
                if (r == 0)
                        in.fs_conf = &t;
        }

        e = (UmError){};
        r = policy_build_options(&in, &o, &e);
        if (r < 0) {
                FUZZ_ASSERT(e.kind != UM_ERROR_KIND_NONE && e.message[0]);
                FUZZ_ASSERT(!o.items && o.n_items == 0 && o.attr_set == 0);
        } else {
                FUZZ_ASSERT(r == 0 && e.kind == UM_ERROR_KIND_NONE);
                /* The full check is at least as strict as the syntax check at the bus edge. */
                FUZZ_ASSERT(syntax == 0);
                check_result(&in, &o);
        }
        mount_options_done(&o);
out:
        strv_free(t.allowed_options);
        option_list_done(&t.defaults);
        option_list_done(&t.forced);
        fuzz_input_done(&fi);
        return 0;
}
