/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Security labels of user mounts (label.h). The stages of label_add_options():
 *   lsm        the labelling LSM detected at start (label_lsm_detect()); none: done
 *   caller     the caller's label from the bus must exist and be valid, or the request fails
 *   value      SELinux: the admin's type in the caller's context, or the context the kernel
 *              would compute (security_transition_sid(caller, caller, file)); Smack: the
 *              caller's label as it is
 *   append     the options, after everything policy_build_options() added
 * Only the detection and the default SELinux computation touch the system.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <dlfcn.h>
#include <linux/magic.h>
#include <selinux/selinux.h> /* types only: the library is loaded when needed */
#include <sys/vfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "label.h"
#include "kernel-compat.h"
#include "macro.h"

#define LSM_FILE "/sys/kernel/security/lsm"
#define LSM_TEXT_MAX 4096
#define SMACKFS_DIR "/sys/fs/smackfs"
#define SMACK_ONLYCAP_FILE SMACKFS_DIR "/onlycap"
#define SMACK_TEXT_MAX 8192

/* ---- Which LSM -------------------------------------------------------------------------- */

static const char *const lsm_names[_LABEL_LSM_MAX] = {
        [LABEL_LSM_NONE] = "none",
        [LABEL_LSM_SELINUX] = "selinux",
        [LABEL_LSM_SMACK] = "smack",
        [LABEL_LSM_SMACK_UNPRIVILEGED] =
                ("smack, but usermountd may not set Smack labels (CAP_MAC_ADMIN, smackfs "
                 "onlycap): every mount is refused"),
};

const char *label_lsm_to_string(LabelLsm lsm) {
        return lsm >= 0 && lsm < _LABEL_LSM_MAX ? lsm_names[lsm] : NULL;
}

static bool is_lsm_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

int label_lsm_parse(const char *text, bool selinux_enabled, LabelLsm *ret) {
        LabelLsm found = LABEL_LSM_NONE;
        size_t len;

        if (!text || !ret)
                return -EINVAL;
        len = strnlen(text, LSM_TEXT_MAX + 1);
        if (len > LSM_TEXT_MAX)
                return -EINVAL;
        /* securityfs ends the list with a newline only in some versions. */
        if (len > 0 && text[len - 1] == '\n')
                len--;
        if (len == 0)
                return -EINVAL;

        for (size_t i = 0; i <= len;) {
                size_t n = 0;

                while (i + n < len && is_lsm_name_char(text[i + n]))
                        n++;
                if (n == 0 || (i + n < len && text[i + n] != ','))
                        return -EINVAL;
                /* The first labelling LSM listed wins; the kernel never stacks two of them. */
                if (found == LABEL_LSM_NONE) {
                        if (n == 7 && memcmp(text + i, "selinux", 7) == 0 && selinux_enabled)
                                found = LABEL_LSM_SELINUX;
                        else if (n == 5 && memcmp(text + i, "smack", 5) == 0)
                                found = LABEL_LSM_SMACK;
                }
                i += n + 1;
        }
        *ret = found;
        return 0;
}

/* Reads path into buf; -ENOENT when it does not exist (securityfs is not mounted...). */
static int small_file_read(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        if (n < 0)
                return -errno;
        buf[n] = 0;
        return 0;
}

static bool smackfs_mounted(void) {
        struct statfs sfs;

        return statfs(SMACKFS_DIR, &sfs) == 0 && (unsigned long) sfs.f_type == SMACK_MAGIC;
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\n';
}

bool label_smack_privileged(bool has_mac_admin, const char *onlycap, const char *own_label) {
        size_t own_len = own_label ? strcspn(own_label, "\n") : 0;
        bool listed = false, any = false;

        if (!has_mac_admin)
                return false;
        for (const char *p = onlycap ?: ""; *p;) {
                size_t n;

                while (is_space(*p))
                        p++;
                for (n = 0; p[n] && !is_space(p[n]); n++)
                        ;
                if (n == 0)
                        break;
                any = true;
                listed = listed || (own_len == n && memcmp(p, own_label, n) == 0);
                p += n;
        }
        return !any || listed;
}

static bool has_effective_capability(cap_value_t cap) {
        cap_flag_value_t v = CAP_CLEAR;
        cap_t caps = cap_get_proc();

        if (!caps)
                return false;
        if (cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) < 0)
                v = CAP_CLEAR;
        cap_free(caps);
        return v == CAP_SET;
}

/* What smack_set_mnt_opts() will say to this process's (and its workers') label options. */
static bool smack_privileged_here(void) {
        char onlycap[SMACK_TEXT_MAX], own[LABEL_VALUE_MAX + 2] = "";
        int r;

        r = small_file_read(SMACK_ONLYCAP_FILE, onlycap, sizeof(onlycap));
        if (r == -ENOENT)
                onlycap[0] = 0;
        else if (r < 0)
                return false; /* cannot tell: fail closed */
        if (small_file_read("/proc/self/attr/smack/current", own, sizeof(own)) < 0 &&
            small_file_read("/proc/self/attr/current", own, sizeof(own)) < 0)
                own[0] = 0;
        return label_smack_privileged(has_effective_capability(CAP_MAC_ADMIN), onlycap,
                                      own[0] ? own : NULL);
}

/*
 * libselinux, loaded on first use, and only where selinuxfs is mounted: the daemon's main
 * process links none of the libraries its workers use, and a machine without SELinux
 * never loads it. The four functions usermount calls, or false when it cannot be loaded.
 */
static struct {
        bool tried, loaded;
        int (*is_selinux_enabled)(void);
        security_class_t (*string_to_security_class)(const char *name);
        int (*security_compute_create_raw)(const char *scon, const char *tcon,
                                           security_class_t tclass, char **newcon);
        void (*freecon)(char *con);
} selinux_lib;

static bool selinux_load(void) {
        struct statfs sfs;
        void *dl;

        if (selinux_lib.tried)
                return selinux_lib.loaded;
        selinux_lib.tried = true;
        if (statfs("/sys/fs/selinux", &sfs) < 0 || sfs.f_type != SELINUX_MAGIC)
                return false;
        dl = dlopen("libselinux.so.1", RTLD_NOW | RTLD_NODELETE);
        if (!dl)
                return false;
        selinux_lib.is_selinux_enabled = (int (*)(void)) dlsym(dl, "is_selinux_enabled");
        selinux_lib.string_to_security_class =
                (security_class_t (*)(const char *)) dlsym(dl, "string_to_security_class");
        selinux_lib.security_compute_create_raw =
                (int (*)(const char *, const char *, security_class_t, char **))
                        dlsym(dl, "security_compute_create_raw");
        selinux_lib.freecon = (void (*)(char *)) dlsym(dl, "freecon");
        selinux_lib.loaded = selinux_lib.is_selinux_enabled &&
                             selinux_lib.string_to_security_class &&
                             selinux_lib.security_compute_create_raw && selinux_lib.freecon;
        return selinux_lib.loaded;
}

int label_lsm_detect(LabelLsm *ret) {
        char buf[LSM_TEXT_MAX + 1];
        bool selinux = selinux_load() && selinux_lib.is_selinux_enabled() > 0;
        LabelLsm lsm;
        int r;

        if (!ret)
                return -EINVAL;
        r = small_file_read(LSM_FILE, buf, sizeof(buf));
        if (r == -ENOENT)
                /* No securityfs: what the LSMs' own filesystems say. */
                lsm = selinux ? LABEL_LSM_SELINUX :
                        smackfs_mounted() ? LABEL_LSM_SMACK : LABEL_LSM_NONE;
        else if (r < 0)
                return r;
        else {
                r = label_lsm_parse(buf, selinux, &lsm);
                if (r < 0)
                        return r;
        }
        if (lsm == LABEL_LSM_SMACK && !smack_privileged_here())
                lsm = LABEL_LSM_SMACK_UNPRIVILEGED;
        *ret = lsm;
        return 0;
}

/* ---- Validation ------------------------------------------------------------------------- */

/* Printable ASCII without space, quotes and backslash: nothing a log, a mountinfo line or
 * an option string would have to escape. */
static bool is_plain_char(char c) {
        return c > ' ' && c < 0x7f && c != '"' && c != '\'' && c != '\\';
}

bool label_selinux_type_valid(const char *s) {
        size_t n;

        if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
                return false;
        n = strlen(s);
        if (n > LABEL_TYPE_MAX)
                return false;
        for (size_t i = 1; i < n; i++)
                if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
                      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.' ||
                      s[i] == '-'))
                        return false;
        return true;
}

bool label_selinux_context_valid(const char *s) {
        size_t n, parts = 1;

        if (!s)
                return false;
        n = strnlen(s, LABEL_VALUE_MAX + 1);
        if (n == 0 || n > LABEL_VALUE_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (!is_plain_char(s[i]))
                        return false;
                if (s[i] != ':')
                        continue;
                /* No empty user, role, type or level part. */
                if (i == 0 || i == n - 1 || s[i + 1] == ':')
                        return false;
                parts++;
        }
        return parts >= 3;
}

bool label_smack_valid(const char *s) {
        size_t n;

        if (!s)
                return false;
        n = strnlen(s, LABEL_VALUE_MAX + 1);
        /* A leading '-' is reserved for the kernel's special options. */
        if (n == 0 || n > LABEL_VALUE_MAX || s[0] == '-')
                return false;
        for (size_t i = 0; i < n; i++)
                if (!is_plain_char(s[i]) || s[i] == '/')
                        return false;
        return true;
}

/* ---- SELinux ---------------------------------------------------------------------------- */

int label_selinux_compute_file_context(const char *caller, char **ret_context) {
        security_class_t file_class;
        char *con = NULL, *copy;

        if (!caller || !ret_context)
                return -EINVAL;
        if (!selinux_load())
                return -EOPNOTSUPP;
        file_class = selinux_lib.string_to_security_class("file");
        if (file_class == 0)
                return negative_errno();
        /* Raw contexts on both sides: the bus gives raw ones and the kernel wants them. */
        if (selinux_lib.security_compute_create_raw(caller, caller, file_class, &con) < 0)
                return negative_errno();
        copy = strdup(con);
        selinux_lib.freecon(con);
        if (!copy)
                return -ENOMEM;
        *ret_context = copy;
        return 0;
}

/*
 * "user:object_r:type[:level]" from the caller's "user:role:type[:range]": a file has no
 * range, so its level is the low level of the caller's range (what the kernel's
 * transition gives files by default).
 */
static int context_with_type(const char *caller, const char *type, char **ret) {
        const char *user_end = strchr(caller, ':');
        const char *role_end = user_end ? strchr(user_end + 1, ':') : NULL;
        const char *type_end = role_end ? strchr(role_end + 1, ':') : NULL;
        size_t level_len = type_end ? strcspn(type_end + 1, "-") : 0;
        char *s;

        if (!role_end)
                return -EINVAL;
        if (asprintf(&s, "%.*s:object_r:%s%s%.*s", (int) (user_end - caller), caller, type,
                     type_end ? ":" : "", (int) level_len, type_end ? type_end + 1 : "") < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static int selinux_context(const LabelInput *in, char **ret, UmError *error) {
        LabelComputeFileContext compute = in->compute ?: label_selinux_compute_file_context;
        _cleanup_free_ char *con = NULL;
        char esc[96];
        int r;

        if (!isempty(in->selinux_type))
                r = context_with_type(in->caller_label, in->selinux_type, &con);
        else
                r = compute(in->caller_label, &con);
        if (r == -ENOMEM)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r, "The SELinux context for "
                                    "files of the mount could not be computed from the caller's "
                                    "context '%s': %s.", um_escape(in->caller_label, esc,
                                                                   sizeof(esc)), strerror(-r));
        if (!label_selinux_context_valid(con))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EACCES, "The SELinux context "
                                    "computed for files of the mount, '%s', is not one "
                                    "usermount passes to the kernel.",
                                    um_escape(con, esc, sizeof(esc)));
        *ret = TAKE_PTR(con);
        return 0;
}

/* ---- Options ---------------------------------------------------------------------------- */

static void mount_option_done(MountOption *m) {
        free(m->key);
        free(m->value);
}

/*
 * Appends key=value for each of keys to *o. Everything is allocated before *o is changed,
 * so that on -ENOMEM its items are as they were.
 */
static int options_append(MountOptions *o, const char *const *keys, const char *value) {
        MountOption add[3] = {};
        MountOption *items;
        size_t n = 0;

        for (; keys[n] && n < ELEMENTSOF(add); n++) {
                add[n] = (MountOption) { strdup(keys[n]), strdup(value) };
                if (!add[n].key || !add[n].value)
                        goto oom;
        }
        items = realloc(o->items, (o->n_items + n) * sizeof(MountOption));
        if (!items)
                goto oom;
        o->items = items;
        memcpy(o->items + o->n_items, add, n * sizeof(MountOption));
        o->n_items += n;
        return 0;

oom:
        for (size_t i = 0; i <= n && i < ELEMENTSOF(add); i++)
                mount_option_done(&add[i]);
        return -ENOMEM;
}

static const char *lsm_title(LabelLsm lsm) {
        return lsm == LABEL_LSM_SELINUX ? "SELinux" : "Smack";
}

/* The caller's label must exist and be valid for in->lsm (fail closed). */
static int caller_label_check(const LabelInput *in, UmError *error) {
        const char *what = in->lsm == LABEL_LSM_SELINUX ? "SELinux context" : "Smack label";
        bool valid = in->lsm == LABEL_LSM_SELINUX ? label_selinux_context_valid(in->caller_label) :
                label_smack_valid(in->caller_label);
        char esc[96];

        if (!in->caller_label)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EACCES, "The bus did not tell "
                                    "the caller's %s; %s is active, so the mount is refused "
                                    "rather than made unlabelled.", what, lsm_title(in->lsm));
        if (!valid)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EACCES, "The caller's %s '%s' "
                                    "is not one usermount passes to the kernel; the mount is "
                                    "refused rather than made unlabelled.", what,
                                    um_escape(in->caller_label, esc, sizeof(esc)));
        return 0;
}

int label_add_options(const LabelInput *in, MountOptions *o, UmError *error) {
        static const char *const selinux_keys[] = { "context", NULL };
        static const char *const smack_keys[] = {
                "smackfsroot", "smackfsdef", "smackfstransmute", NULL,
        };
        _cleanup_free_ char *context = NULL;
        int r;

        if (!in || !o)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "internal error: no label input");
        if (in->lsm == LABEL_LSM_NONE)
                return 0;
        if (in->lsm == LABEL_LSM_SMACK_UNPRIVILEGED)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EPERM,
                                    "Smack is active, but usermountd may not set Smack labels: "
                                    "the kernel allows smackfsroot=, smackfsdef= and "
                                    "smackfstransmute= only with CAP_MAC_ADMIN (and, if "
                                    "/sys/fs/smackfs/onlycap lists labels, for those), and "
                                    "without them the mount would carry the daemon's label and "
                                    "trust the labels on the medium. The mount is refused; an "
                                    "administrator has to let usermountd keep CAP_MAC_ADMIN.");
        if (in->lsm != LABEL_LSM_SELINUX && in->lsm != LABEL_LSM_SMACK)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "internal error: unknown LSM");
        if (!isempty(in->selinux_type) && !label_selinux_type_valid(in->selinux_type))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "internal error: invalid SELinuxType=");
        r = caller_label_check(in, error);
        if (r < 0)
                return r;

        if (in->lsm == LABEL_LSM_SMACK)
                r = options_append(o, smack_keys, in->caller_label);
        else {
                r = selinux_context(in, &context, error);
                if (r < 0)
                        return r;
                r = options_append(o, selinux_keys, context);
        }
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        return 0;
}
