/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount policy as data: the filesystem types a user may mount, the options each type
 * accepts, the options refused everywhere (with the reason a user is told), and the
 * options usermount forces. The stages of policy_build_options():
 *   bytes      length, UTF-8, control characters, quotes, backslashes, empty items
 *   split      libmount's option iterator cuts the string into key[=value] items
 *   items      key charset, value length, options refused on every filesystem
 *   per type   forced keys, duplicates, generic options (ro, atime, sync, ...), then the
 *              type's own allow-list with a checked value for each key
 *   finish     read-only-only options, ro/rw, forced items appended, mount attributes
 * Everything here is pure: no syscalls, no logging, no state.
 */
#include <libmount/libmount.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <strings.h>
#include <sys/mount.h>

#include "policy.h"
#include "utf8.h"

/* Longest character set name (iocharset=) we pass to the kernel's nls loader. */
#define CHARSET_NAME_MAX 32
/* Room for an escaped key or value inside a message. */
#define ESCAPED_MAX 96

/* ---- Tables ------------------------------------------------------------------------------- */

/* How the value of one filesystem option is checked. */
typedef enum ValueKind {
        VALUE_FLAG,     /* no value */
        VALUE_NUMBER,   /* decimal, optionally signed, within [min, max] */
        VALUE_OCTAL,    /* octal mode or mask within [0, max] */
        VALUE_SIZE,     /* decimal with an optional k/m/g suffix, in bytes within [min, max] */
        VALUE_ENUM,     /* one of choices */
        VALUE_CHARSET,  /* a character set name: [A-Za-z0-9_-], at most CHARSET_NAME_MAX */
        VALUE_COMPRESS, /* btrfs: zlib[:1-9], lzo, zstd[:1-15] */
        VALUE_SUBVOL,   /* btrfs: a path inside the filesystem without ".." components */
} ValueKind;

typedef struct OptionRule {
        const char *key;
        ValueKind kind;
        int64_t min, max;           /* VALUE_NUMBER, VALUE_OCTAL, VALUE_SIZE */
        const char *const *choices; /* VALUE_ENUM, NULL-terminated */
        bool value_optional;        /* the key may also be given as a flag */
        bool read_only_only;        /* only on read-only mounts (skips journal replay) */
        bool needs_journal;         /* ext3/4: refused by the driver without the journal,
                                     * which read-only mounts never load (noload) */
} OptionRule;

#define FLAG(k) { .key = (k), .kind = VALUE_FLAG }
#define NUMBER(k, lo, hi) { .key = (k), .kind = VALUE_NUMBER, .min = (lo), .max = (hi) }
#define OCTAL(k) { .key = (k), .kind = VALUE_OCTAL, .min = 0, .max = 0777 }
#define SIZE(k, lo, hi) { .key = (k), .kind = VALUE_SIZE, .min = (lo), .max = (hi) }
#define ENUM(k, c) { .key = (k), .kind = VALUE_ENUM, .choices = (c) }
#define CHARSET(k) { .key = (k), .kind = VALUE_CHARSET }
#define RULES_END { .key = NULL }

static const char *const ext_data_modes[] = { "ordered", "journal", "writeback", NULL };
static const char *const btrfs_space_cache[] = { "v2", NULL };
static const char *const btrfs_discard_modes[] = { "sync", "async", NULL };
static const char *const erofs_cache_strategies[] = { "disabled", "readahead", "readaround", NULL };
static const char *const vfat_shortnames[] = { "lower", "win95", "winnt", "mixed", NULL };
static const char *const vfat_timezones[] = { "UTC", NULL };
static const char *const iso9660_checks[] = { "relaxed", "strict", NULL };
static const char *const iso9660_maps[] = { "off", "normal", "acorn", NULL };

/* The ext2 driver knows no journal; these are what both ext2 and ext4 drivers accept. */
static const OptionRule ext2_rules[] = {
        FLAG("acl"),
        FLAG("noacl"),
        FLAG("user_xattr"),
        RULES_END,
};

/* ext3 is mounted by the ext4 driver on every kernel usermount supports. */
static const OptionRule ext4_rules[] = {
        { .key = "commit", .kind = VALUE_NUMBER, .min = 0, .max = 86400, .needs_journal = true },
        { .key = "data", .kind = VALUE_ENUM, .choices = ext_data_modes, .needs_journal = true },
        FLAG("barrier"),
        FLAG("nobarrier"),
        FLAG("discard"),
        FLAG("nodiscard"),
        { .key = "journal_checksum", .kind = VALUE_FLAG, .needs_journal = true },
        FLAG("nodelalloc"),
        FLAG("noauto_da_alloc"),
        FLAG("dioread_nolock"),
        FLAG("acl"),
        FLAG("noacl"),
        FLAG("user_xattr"),
        { .key = "noload", .kind = VALUE_FLAG, .read_only_only = true },
        RULES_END,
};

static const OptionRule xfs_rules[] = {
        FLAG("discard"),
        FLAG("nodiscard"),
        FLAG("inode32"),
        FLAG("inode64"),
        { .key = "norecovery", .kind = VALUE_FLAG, .read_only_only = true },
        NUMBER("logbufs", 2, 8),
        SIZE("logbsize", 16384, 262144),
        SIZE("allocsize", 4096, 1073741824),
        FLAG("largeio"),
        FLAG("nolargeio"),
        FLAG("wsync"),
        RULES_END,
};

static const OptionRule btrfs_rules[] = {
        { .key = "compress", .kind = VALUE_COMPRESS, .value_optional = true },
        { .key = "compress-force", .kind = VALUE_COMPRESS, .value_optional = true },
        { .key = "subvol", .kind = VALUE_SUBVOL },
        NUMBER("subvolid", 0, INT64_MAX),
        ENUM("space_cache", btrfs_space_cache),
        FLAG("nospace_cache"),
        FLAG("ssd"),
        FLAG("nossd"),
        { .key = "discard", .kind = VALUE_ENUM, .choices = btrfs_discard_modes,
          .value_optional = true },
        FLAG("nodiscard"),
        FLAG("autodefrag"),
        FLAG("noautodefrag"),
        NUMBER("commit", 0, 86400),
        FLAG("flushoncommit"),
        FLAG("noflushoncommit"),
        RULES_END,
};

/* squashfs takes nothing beyond the generic options. */
static const OptionRule squashfs_rules[] = {
        RULES_END,
};

static const OptionRule erofs_rules[] = {
        FLAG("user_xattr"),
        FLAG("nouser_xattr"),
        FLAG("acl"),
        FLAG("noacl"),
        ENUM("cache_strategy", erofs_cache_strategies),
        RULES_END,
};

/* umask= is forced to the caller's umask on vfat, exfat, ntfs3 and udf (owner_umask_forced). */
static const OptionRule vfat_rules[] = {
        OCTAL("dmask"),
        OCTAL("fmask"),
        NUMBER("codepage", 1, 9999),
        CHARSET("iocharset"),
        ENUM("shortname", vfat_shortnames),
        FLAG("utf8"),
        FLAG("flush"),
        ENUM("tz", vfat_timezones),
        NUMBER("time_offset", -1440, 1440),
        FLAG("showexec"),
        FLAG("quiet"),
        RULES_END,
};

static const OptionRule exfat_rules[] = {
        OCTAL("dmask"),
        OCTAL("fmask"),
        CHARSET("iocharset"),
        FLAG("discard"),
        NUMBER("time_offset", -1440, 1440),
        RULES_END,
};

static const OptionRule ntfs3_rules[] = {
        OCTAL("dmask"),
        OCTAL("fmask"),
        CHARSET("iocharset"),
        FLAG("discard"),
        FLAG("hide_dot_files"),
        FLAG("windows_names"),
        FLAG("prealloc"),
        FLAG("sparse"),
        FLAG("showmeta"),
        FLAG("acl"),
        RULES_END,
};

static const OptionRule iso9660_rules[] = {
        OCTAL("mode"),
        OCTAL("dmode"),
        FLAG("norock"),
        FLAG("nojoliet"),
        ENUM("check", iso9660_checks),
        CHARSET("iocharset"),
        ENUM("map", iso9660_maps),
        FLAG("utf8"),
        FLAG("unhide"),
        FLAG("hide"),
        NUMBER("session", 0, 99),
        NUMBER("sbsector", 0, UINT32_MAX),
        RULES_END,
};

static const OptionRule udf_rules[] = {
        OCTAL("mode"),
        OCTAL("dmode"),
        CHARSET("iocharset"),
        FLAG("utf8"),
        FLAG("novrs"),
        NUMBER("session", 0, UINT32_MAX),
        NUMBER("anchor", 0, UINT32_MAX),
        NUMBER("lastblock", 0, UINT32_MAX),
        FLAG("unhide"),
        FLAG("undelete"),
        RULES_END,
};

/* Where the value of a forced option comes from. */
typedef enum ForcedSource {
        FORCED_FIXED,
        FORCED_CALLER_UID,
        FORCED_CALLER_GID,
        FORCED_CALLER_UMASK,
} ForcedSource;

typedef struct ForcedOption {
        const char *key;
        ForcedSource source;
        const char *value; /* FORCED_FIXED */
        const char *why;
        bool first;        /* passed before the caller's items, which may refine it */
} ForcedOption;

static const char why_errors[] =
        "ext2, ext3 and ext4 are always mounted with errors=remount-ro, so that a damaged "
        "filesystem stops being written to";
static const char why_owner[] =
        "the filesystem has no Unix owners, so every file belongs to the user who mounts it";

static const ForcedOption ext_forced[] = {
        { "errors", FORCED_FIXED, "remount-ro", why_errors },
        { NULL },
};

static const char why_umask[] =
        "the filesystem has no Unix permissions, so the user's umask decides them (dmask= "
        "and fmask= may still refine it)";

/* iso9660 has no umask= (its mode= and dmode= stay the caller's). */
static const ForcedOption owner_forced[] = {
        { "uid", FORCED_CALLER_UID, NULL, why_owner },
        { "gid", FORCED_CALLER_GID, NULL, why_owner },
        { NULL },
};

/*
 * umask= goes first: the drivers apply parameters in order, and umask= sets both the file
 * and the directory mask, so the caller's own dmask= or fmask= after it still count.
 */
static const ForcedOption owner_umask_forced[] = {
        { "umask", FORCED_CALLER_UMASK, NULL, why_umask, .first = true },
        { "uid", FORCED_CALLER_UID, NULL, why_owner },
        { "gid", FORCED_CALLER_GID, NULL, why_owner },
        { NULL },
};

/* How a refused key is recognised. Keys are compared without regard to case. */
typedef enum MatchKind {
        MATCH_KEY,       /* the key, whatever the value */
        MATCH_PREFIX,    /* any key starting with this */
        MATCH_KEY_VALUE, /* this key with this value */
} MatchKind;

typedef struct Refusal {
        const char *key;
        MatchKind match;
        const char *value; /* MATCH_KEY_VALUE */
        const char *why;
} Refusal;

static const char why_suid[] =
        "setuid and setgid bits and file capabilities are never honoured on user mounts";
static const char why_dev[] = "device nodes are never honoured on user mounts";
static const char why_exec[] =
        "running programs from a mount is requested with the 'exec' parameter of the request, "
        "which needs its own authorization";
static const char why_defaults[] =
        "it stands for suid, dev and exec, which user mounts never get implicitly";
static const char why_fstab[] =
        "it is an /etc/fstab permission for mount(8); usermount asks polkit who may mount what";
static const char why_boot[] =
        "it only steers 'mount -a' and the boot sequence, and means nothing to usermount";
static const char why_remount[] =
        "a user mount cannot be changed once made; unmount it and mount it again";
static const char why_bind[] =
        "usermount mounts filesystems from devices and images; it never binds or moves "
        "existing mounts";
static const char why_propagation[] =
        "mount propagation is decided by usermount and the mount namespace it attaches to";
static const char why_helper_option[] =
        "x-* options are meant for user-space helpers, and usermount passes nothing to them";
static const char why_helper[] = "it would run a helper program as root";
static const char why_loop[] =
        "usermount sets up loop devices itself from the image fd it is given, never from "
        "options";
static const char why_label[] = "security labels on user mounts are set by usermount only";
static const char why_panic[] = "a damaged filesystem would crash the whole system";
static const char why_continue[] =
        "the filesystem would keep writing after it found damage; usermount forces "
        "errors=remount-ro where the filesystem supports it";

/* Options refused on every filesystem (docs/security.md, classes 5-7 and 9). */
static const Refusal refused_everywhere[] = {
        { "suid", MATCH_KEY, NULL, why_suid },
        { "dev", MATCH_KEY, NULL, why_dev },
        { "exec", MATCH_KEY, NULL, why_exec },
        { "defaults", MATCH_KEY, NULL, why_defaults },
        { "user", MATCH_KEY, NULL, why_fstab },
        { "users", MATCH_KEY, NULL, why_fstab },
        { "owner", MATCH_KEY, NULL, why_fstab },
        { "group", MATCH_KEY, NULL, why_fstab },
        { "nouser", MATCH_KEY, NULL, why_fstab },
        { "auto", MATCH_KEY, NULL, why_boot },
        { "noauto", MATCH_KEY, NULL, why_boot },
        { "_netdev", MATCH_KEY, NULL, why_boot },
        { "nofail", MATCH_KEY, NULL, why_boot },
        { "remount", MATCH_KEY, NULL, why_remount },
        { "bind", MATCH_KEY, NULL, why_bind },
        { "rbind", MATCH_KEY, NULL, why_bind },
        { "move", MATCH_KEY, NULL, why_bind },
        { "make-", MATCH_PREFIX, NULL, why_propagation },
        { "shared", MATCH_KEY, NULL, why_propagation },
        { "rshared", MATCH_KEY, NULL, why_propagation },
        { "private", MATCH_KEY, NULL, why_propagation },
        { "rprivate", MATCH_KEY, NULL, why_propagation },
        { "slave", MATCH_KEY, NULL, why_propagation },
        { "rslave", MATCH_KEY, NULL, why_propagation },
        { "unbindable", MATCH_KEY, NULL, why_propagation },
        { "runbindable", MATCH_KEY, NULL, why_propagation },
        { "x-", MATCH_PREFIX, NULL, why_helper_option },
        { "uhelper", MATCH_KEY, NULL, why_helper },
        { "helper", MATCH_KEY, NULL, why_helper },
        { "loop", MATCH_KEY, NULL, why_loop },
        { "offset", MATCH_KEY, NULL, why_loop },
        { "sizelimit", MATCH_KEY, NULL, why_loop },
        { "encryption", MATCH_KEY, NULL, why_loop },
        { "context", MATCH_KEY, NULL, why_label },
        { "fscontext", MATCH_KEY, NULL, why_label },
        { "defcontext", MATCH_KEY, NULL, why_label },
        { "rootcontext", MATCH_KEY, NULL, why_label },
        { "seclabel", MATCH_KEY, NULL, why_label },
        { "smackfs", MATCH_PREFIX, NULL, why_label },
        { "errors", MATCH_KEY_VALUE, "panic", why_panic },
        { "errors", MATCH_KEY_VALUE, "continue", why_continue },
        { NULL },
};

static const char why_extra_devices[] =
        "it would make the filesystem open further devices, which the caller was never "
        "checked for";

/* Options a type knows that reach beyond the one source the caller was checked for. */
static const Refusal btrfs_refused[] = {
        { "device", MATCH_KEY, NULL, why_extra_devices },
        { NULL },
};

static const Refusal erofs_refused[] = {
        { "device", MATCH_KEY, NULL, why_extra_devices },
        { "fsid", MATCH_KEY, NULL, why_extra_devices },
        { "domain_id", MATCH_KEY, NULL, why_extra_devices },
        { NULL },
};

typedef struct FsPolicy {
        const char *name;
        const OptionRule *rules;     /* terminated by RULES_END */
        const ForcedOption *forced;  /* NULL, or terminated by a NULL key */
        const Refusal *refused;      /* NULL, or terminated by a NULL key */
        const char *read_only_key;   /* added to every read-only mount: skip log replay */
        const char *read_only_value;
} FsPolicy;

/*
 * A read-only mount must not write one byte to the device. A block device that the caller
 * could only read may still be writable to the kernel, and ext3/4, xfs and btrfs replay a
 * dirty journal or log on mount, read-only or not ("write access will be enabled during
 * recovery"): their read-only mounts always skip the replay.
 */

/* A section for each type of the allow-list (fstypes.c), in its order. */
static const FsPolicy fs_policies[] = {
        { "ext2", ext2_rules, ext_forced, NULL },
        { "ext3", ext4_rules, ext_forced, NULL, .read_only_key = "noload" },
        { "ext4", ext4_rules, ext_forced, NULL, .read_only_key = "noload" },
        { "xfs", xfs_rules, NULL, NULL, .read_only_key = "norecovery" },
        { "btrfs", btrfs_rules, NULL, btrfs_refused, .read_only_key = "rescue",
          .read_only_value = "nologreplay" },
        { "squashfs", squashfs_rules, NULL, NULL },
        { "erofs", erofs_rules, NULL, erofs_refused },
        { "vfat", vfat_rules, owner_umask_forced, NULL },
        { "exfat", exfat_rules, owner_umask_forced, NULL },
        { "ntfs3", ntfs3_rules, owner_umask_forced, NULL },
        { "iso9660", iso9660_rules, owner_forced, NULL },
        { "udf", udf_rules, owner_umask_forced, NULL },
};

/* What a generic option (accepted on every type) does. */
typedef enum GenericKind {
        GENERIC_READ_ONLY,  /* ro: a read-only mount */
        GENERIC_READ_WRITE, /* rw: the default, refused when the mount must be read-only */
        GENERIC_ATIME,      /* one atime mode, a MOUNT_ATTR_* value */
        GENERIC_ATTR,       /* a MOUNT_ATTR_* bit */
        GENERIC_SB_FLAG,    /* a superblock flag, passed to fsconfig() as a flag */
        GENERIC_LOCKED,     /* nosuid, nodev, noexec: set and locked anyway */
} GenericKind;

typedef struct GenericOption {
        const char *key;
        GenericKind kind;
        uint64_t attr;
} GenericOption;

static const GenericOption generic_options[] = {
        { "ro", GENERIC_READ_ONLY, 0 },
        { "rw", GENERIC_READ_WRITE, 0 },
        { "noatime", GENERIC_ATIME, MOUNT_ATTR_NOATIME },
        { "relatime", GENERIC_ATIME, MOUNT_ATTR_RELATIME },
        { "strictatime", GENERIC_ATIME, MOUNT_ATTR_STRICTATIME },
        { "nodiratime", GENERIC_ATTR, MOUNT_ATTR_NODIRATIME },
        { "sync", GENERIC_SB_FLAG, 0 },
        { "dirsync", GENERIC_SB_FLAG, 0 },
        { "lazytime", GENERIC_SB_FLAG, 0 },
        { "nosuid", GENERIC_LOCKED, 0 },
        { "nodev", GENERIC_LOCKED, 0 },
        { "noexec", GENERIC_LOCKED, 0 },
};

/* ---- Lookups -------------------------------------------------------------------------------- */

static const FsPolicy *fs_policy_find(const char *fstype) {
        if (!fstype)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(fs_policies); i++)
                if (streq(fs_policies[i].name, fstype))
                        return &fs_policies[i];
        return NULL;
}

static const OptionRule *rule_find(const FsPolicy *fs, const char *key) {
        for (const OptionRule *r = fs->rules; r->key; r++)
                if (streq(r->key, key))
                        return r;
        return NULL;
}

static const ForcedOption *forced_find(const FsPolicy *fs, const char *key) {
        for (const ForcedOption *f = fs->forced; f && f->key; f++)
                if (streq(f->key, key))
                        return f;
        return NULL;
}

static const GenericOption *generic_find(const char *key) {
        for (size_t i = 0; i < ELEMENTSOF(generic_options); i++)
                if (streq(generic_options[i].key, key))
                        return &generic_options[i];
        return NULL;
}

static bool refusal_matches(const Refusal *r, const char *key, const char *value) {
        switch (r->match) {
        case MATCH_KEY:
                return strcasecmp(r->key, key) == 0;
        case MATCH_PREFIX:
                return strncasecmp(r->key, key, strlen(r->key)) == 0;
        case MATCH_KEY_VALUE:
                return strcasecmp(r->key, key) == 0 && value && strcasecmp(r->value, value) == 0;
        }
        return false;
}

static const Refusal *refusal_find(const Refusal *table, const char *key, const char *value) {
        for (const Refusal *r = table; r && r->key; r++)
                if (refusal_matches(r, key, value))
                        return r;
        return NULL;
}

/* ---- Classifying one option ----------------------------------------------------------------- */

/* What the built-in tables make of one key[=value] on one filesystem type. */
typedef enum OptionKind {
        OPTION_REFUSED_EVERYWHERE, /* refused on every type: suid, x-*, context=, ... */
        OPTION_SET_BY_USERMOUNT,   /* one of the type's built-in forced options */
        OPTION_GENERIC,            /* a mount attribute or superblock flag: ro, noatime, ... */
        OPTION_REFUSED,            /* refused on this type */
        OPTION_PARAMETER,          /* a parameter of the type, passed to the filesystem */
        OPTION_UNKNOWN,            /* in none of the type's tables */
} OptionKind;

typedef struct OptionClass {
        OptionKind kind;
        const Refusal *refusal;       /* OPTION_REFUSED_EVERYWHERE, OPTION_REFUSED: why */
        const ForcedOption *forced;   /* OPTION_SET_BY_USERMOUNT */
        const GenericOption *generic; /* OPTION_GENERIC */
        const OptionRule *rule;       /* OPTION_PARAMETER: the value it takes, whether it is
                                       * only allowed read-only or needs the journal */
} OptionClass;

/*
 * The one classification of an option, for a caller's items on every request and for the
 * configuration's AllowedOptions=, DefaultOptions= and ForcedOptions= when it is loaded:
 * the first table that knows the key decides. value may be NULL (a flag, or a key of
 * AllowedOptions=); refusals of one key with one value then do not match. The value of a
 * parameter is not judged here (rule_check_value()). No type refuses a generic key, so
 * asking the generic options before the type's refusals decides nothing.
 */
static OptionClass option_classify(const FsPolicy *fs, const char *key, const char *value) {
        OptionClass c = {};

        if ((c.refusal = refusal_find(refused_everywhere, key, value)))
                c.kind = OPTION_REFUSED_EVERYWHERE;
        else if ((c.forced = forced_find(fs, key)))
                c.kind = OPTION_SET_BY_USERMOUNT;
        else if ((c.generic = generic_find(key)))
                c.kind = OPTION_GENERIC;
        else if ((c.refusal = refusal_find(fs->refused, key, value)))
                c.kind = OPTION_REFUSED;
        else if ((c.rule = rule_find(fs, key)))
                c.kind = OPTION_PARAMETER;
        else
                c.kind = OPTION_UNKNOWN;
        return c;
}

/* ---- The option string ------------------------------------------------------------------- */

static int oom(UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
}

static bool is_key_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
}

static int check_key(const char *key, UmError *error) {
        char esc[ESCAPED_MAX];

        if (strlen(key) > POLICY_KEY_MAX)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "an option name is longer than %d bytes", POLICY_KEY_MAX);
        for (const char *c = key; *c; c++)
                if (!is_key_char(*c))
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "option name '%s' is not valid: names consist of "
                                            "letters, digits, '_', '.' and '-'",
                                            um_escape(key, esc, sizeof(esc)));
        return 0;
}

static int check_value(const char *key, const char *value, UmError *error) {
        if (!value)
                return 0;
        if (!*value)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "option '%s' has an empty value", key);
        if (strchr(value, '='))
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the value of option '%s' contains '=', which is not "
                                    "accepted", key);
        if (strlen(value) > POLICY_VALUE_MAX)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "the value of option '%s' is longer than %d bytes", key,
                                    POLICY_VALUE_MAX);
        return 0;
}

static int refused_everywhere_error(const Refusal *refusal, const OptionItem *it,
                                    UmError *error) {
        char esc[ESCAPED_MAX];

        if (refusal->match == MATCH_KEY_VALUE)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "option '%s=%s' is not allowed: %s", it->key,
                                    um_escape(it->value, esc, sizeof(esc)), refusal->why);
        return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                            "option '%s' is not allowed: %s", it->key, refusal->why);
}

/* Checks of one item that need no filesystem: syntax, then the options refused everywhere. */
static int check_item(const OptionItem *it, UmError *error) {
        const Refusal *refusal;
        int r;

        r = check_key(it->key, error);
        if (r < 0)
                return r;
        /* The key is known to be plain ASCII from here on. */
        r = check_value(it->key, it->value, error);
        if (r < 0)
                return r;

        refusal = refusal_find(refused_everywhere, it->key, it->value);
        return refusal ? refused_everywhere_error(refusal, it, error) : 0;
}

static int check_duplicate(const OptionList *l, size_t i, UmError *error) {
        for (size_t j = 0; j < i; j++)
                if (streq(l->items[j].key, l->items[i].key))
                        return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                            "option '%s' is given more than once: each option "
                                            "may appear only once", l->items[i].key);
        return 0;
}

/* The checks of check_item() on every item of l. */
static int check_items(const OptionList *l, UmError *error) {
        for (size_t i = 0; i < l->n_items; i++) {
                int r = check_item(&l->items[i], error);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* Bytes, split and per-item checks; duplicates are left to the caller. */
static int option_list_check(const char *options, OptionList *ret, UmError *error) {
        _cleanup_(option_list_done) OptionList l = {};
        int r;

        r = option_list_split(options, &l, error);
        if (r < 0)
                return r;
        r = check_items(&l, error);
        if (r < 0)
                return r;
        *ret = l;
        l = (OptionList){};
        return 0;
}

int policy_check_options_syntax(const char *options, UmError *error) {
        _cleanup_(option_list_done) OptionList l = {};
        int r;

        r = option_list_check(strempty(options), &l, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l.n_items; i++) {
                r = check_duplicate(&l, i, error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- Values --------------------------------------------------------------------------------- */

/* Parses [-]digits without overflow: at most 18 digits, which int64_t always holds. */
static bool parse_integer(const char *s, bool allow_sign, unsigned base, int64_t *ret) {
        bool negative = false;
        int64_t v = 0;
        size_t n = 0;

        if (allow_sign && *s == '-') {
                negative = true;
                s++;
        }
        for (; *s; s++, n++) {
                unsigned d = (unsigned) (*s - '0');

                if (d >= base || n >= 18)
                        return false;
                v = v * base + d;
        }
        if (n == 0)
                return false;
        *ret = negative ? -v : v;
        return true;
}

/* A size in bytes: digits with an optional k, m or g suffix (either case). */
static bool parse_size(const char *s, int64_t *ret) {
        char digits[16];
        size_t len = strlen(s);
        int64_t v, mult = 1;

        if (len == 0 || len >= sizeof(digits))
                return false;
        memcpy(digits, s, len + 1);
        switch (digits[len - 1]) {
        case 'k':
        case 'K':
                mult = INT64_C(1) << 10;
                break;
        case 'm':
        case 'M':
                mult = INT64_C(1) << 20;
                break;
        case 'g':
        case 'G':
                mult = INT64_C(1) << 30;
                break;
        default:
                break;
        }
        if (mult > 1)
                digits[len - 1] = 0;
        if (!parse_integer(digits, false, 10, &v) || v > INT64_MAX / mult)
                return false;
        *ret = v * mult;
        return true;
}

static bool choice_valid(const char *const *choices, const char *value) {
        for (const char *const *c = choices; *c; c++)
                if (streq(*c, value))
                        return true;
        return false;
}

static bool charset_name_valid(const char *value) {
        size_t n = 0;

        for (const char *c = value; *c; c++, n++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
                        return false;
        return n > 0 && n <= CHARSET_NAME_MAX;
}

static bool compress_valid(const char *value) {
        const char *colon = strchr(value, ':');
        size_t name_len = colon ? (size_t) (colon - value) : strlen(value);
        int64_t level;

        if (name_len == 3 && strncmp(value, "lzo", 3) == 0)
                return !colon;
        if (name_len != 4 || (strncmp(value, "zlib", 4) != 0 && strncmp(value, "zstd", 4) != 0))
                return false;
        if (!colon)
                return true;
        if (!parse_integer(colon + 1, false, 10, &level))
                return false;
        return level >= 1 && level <= (value[1] == 'l' ? 9 : 15);
}

/* A btrfs subvolume path: relative or absolute inside the filesystem, never "..". */
static bool subvol_valid(const char *value) {
        for (const char *c = value; *c;) {
                size_t n = strcspn(c, "/");

                if (n == 2 && c[0] == '.' && c[1] == '.')
                        return false;
                c += n;
                if (*c == '/')
                        c++;
        }
        return true;
}

static void choices_join(const char *const *choices, char *buf, size_t size) {
        size_t o = 0;

        buf[0] = 0;
        for (const char *const *c = choices; *c && o < size; c++)
                o += snprintf(buf + o, size - o, "%s%s", c == choices ? "" : ", ", *c);
}

/* Checks a value against its rule; fills the error with what the key accepts. */
static int rule_check_value(const FsPolicy *fs, const OptionRule *rule, const char *value,
                            UmError *error) {
        char esc[ESCAPED_MAX], list[128];
        int64_t v;

        if (rule->kind == VALUE_FLAG)
                return value ? um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "%s option '%s' takes no value", fs->name,
                                            rule->key) : 0;
        if (!value)
                return rule->value_optional ? 0 :
                        um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                     "%s option '%s' needs a value", fs->name, rule->key);

        um_escape(value, esc, sizeof(esc));
        switch (rule->kind) {
        case VALUE_NUMBER:
                if (parse_integer(value, rule->min < 0, 10, &v) && v >= rule->min && v <= rule->max)
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' needs a whole number from %lld to %lld, not "
                                    "'%s'", fs->name, rule->key, (long long) rule->min,
                                    (long long) rule->max, esc);
        case VALUE_OCTAL:
                if (parse_integer(value, false, 8, &v) && v <= rule->max)
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' needs an octal mode from 0 to %llo, not '%s'",
                                    fs->name, rule->key, (unsigned long long) rule->max, esc);
        case VALUE_SIZE:
                if (parse_size(value, &v) && v >= rule->min && v <= rule->max)
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' needs a size from %lld to %lld bytes, with "
                                    "an optional k, m or g suffix, not '%s'", fs->name, rule->key,
                                    (long long) rule->min, (long long) rule->max, esc);
        case VALUE_ENUM:
                if (choice_valid(rule->choices, value))
                        return 0;
                choices_join(rule->choices, list, sizeof(list));
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' must be one of %s, not '%s'", fs->name,
                                    rule->key, list, esc);
        case VALUE_CHARSET:
                if (charset_name_valid(value))
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' needs a character set name of at most %d "
                                    "letters, digits, '_' and '-', not '%s'", fs->name, rule->key,
                                    CHARSET_NAME_MAX, esc);
        case VALUE_COMPRESS:
                if (compress_valid(value))
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "%s option '%s' must be zlib, lzo or zstd, optionally with a "
                                    "level (zlib:1-9, zstd:1-15), not '%s'", fs->name, rule->key,
                                    esc);
        case VALUE_SUBVOL:
                if (subvol_valid(value))
                        return 0;
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' must name a subvolume inside the "
                                    "filesystem: '..' components are not allowed", fs->name,
                                    rule->key);
        case VALUE_FLAG:
                break;
        }
        return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL, "internal error: bad option rule");
}

/* ---- Conflicts ------------------------------------------------------------------------------ */

/* Options of which a mount takes at most one, beyond a key and its no-twin. */
static const char *const option_groups[][4] = {
        { "ro", "rw", NULL },
        { "noatime", "relatime", "strictatime", NULL },
        { "inode32", "inode64", NULL },
        { "hide", "unhide", NULL },
        { "compress", "compress-force", NULL },
};

static bool group_has(const char *const *group, const char *key) {
        for (; *group; group++)
                if (streq(*group, key))
                        return true;
        return false;
}

/* "noacl" turns off what "acl" turns on. */
static bool is_no_twin(const char *a, const char *b) {
        return strncmp(a, "no", 2) == 0 && streq(a + 2, b);
}

/* Whether two keys decide the same thing, so that one mount takes only one of them. */
static bool options_conflict(const char *a, const char *b) {
        if (streq(a, b) || is_no_twin(a, b) || is_no_twin(b, a))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(option_groups); i++)
                if (group_has(option_groups[i], a) && group_has(option_groups[i], b))
                        return true;
        return false;
}

/* These never weaken a mount, so no configuration refuses them to a caller. */
static bool option_always_allowed(const char *key) {
        return streq(key, "ro") || streq(key, "nosuid") || streq(key, "nodev") ||
                streq(key, "noexec");
}

/* ---- Building ------------------------------------------------------------------------------- */

/* Where an item of a mount comes from. */
typedef enum ItemOrigin {
        ORIGIN_CALLER,
        ORIGIN_DEFAULT, /* DefaultOptions= of the configuration */
        ORIGIN_FORCED,  /* ForcedOptions= of the configuration */
        _ORIGIN_MAX,
} ItemOrigin;

typedef struct Build {
        const FsPolicy *fs;
        const PolicyInput *in;
        const ConfFsType *conf;        /* NULL: the built-in policy alone */
        OptionList caller;             /* the caller's items, split for this request */
        const OptionList *lists[_ORIGIN_MAX]; /* the caller's, the defaults, the configured
                                              * forced (the Conf's, split when it was loaded) */
        bool *to_fs[_ORIGIN_MAX];      /* per item of lists[]: passed to the filesystem as an
                                        * fsconfig() item */
        uint64_t attr_set;             /* atime and nodiratime bits asked for */
        const char *atime;             /* the atime mode given, if any */
        const char *needs_ro;          /* the first option that is allowed only read-only */
        const char *needs_journal;     /* the first option that needs the journal loaded */
        bool ro, rw;
} Build;

static void build_done(Build *b) {
        option_list_done(&b->caller);
        for (size_t i = 0; i < _ORIGIN_MAX; i++)
                free(b->to_fs[i]);
}

static const char *build_conf_path(const Build *b) {
        return b->conf && b->conf->path ? b->conf->path : "the configuration";
}

static int build_locked(Build *b, const GenericOption *g, ItemOrigin origin, UmError *error) {
        if (!streq(g->key, "noexec") || !b->in->exec)
                return 0;
        switch (origin) {
        case ORIGIN_CALLER:
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "option 'noexec' contradicts the exec parameter of the "
                                    "request");
        case ORIGIN_FORCED:
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "exec is not allowed on %s: the administrator forces noexec "
                                    "(ForcedOptions= for %s in %s)", b->fs->name, b->fs->name,
                                    build_conf_path(b));
        default:
                /* A default only applies where the request says nothing else. */
                return 0;
        }
}

static int build_generic(Build *b, const GenericOption *g, const OptionItem *it, bool *to_fs,
                         ItemOrigin origin, UmError *error) {
        if (it->value)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "option '%s' takes no value", it->key);

        switch (g->kind) {
        case GENERIC_READ_ONLY:
                b->ro = true;
                return 0;
        case GENERIC_READ_WRITE:
                if (b->in->source_read_only)
                        return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                            "option 'rw' is not allowed: the source is read-only "
                                            "(a write-protected device or an fd opened "
                                            "read-only)");
                if (b->in->read_only)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "option 'rw' contradicts the read-only mount that "
                                            "was requested");
                b->rw = true;
                return 0;
        case GENERIC_ATIME:
                if (b->atime)
                        return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                            "options '%s' and '%s' contradict each other: give "
                                            "at most one of noatime, relatime and strictatime",
                                            b->atime, it->key);
                b->atime = it->key;
                b->attr_set |= g->attr;
                return 0;
        case GENERIC_ATTR:
                b->attr_set |= g->attr;
                return 0;
        case GENERIC_SB_FLAG:
                *to_fs = true;
                return 0;
        case GENERIC_LOCKED:
                return build_locked(b, g, origin, error);
        }
        return 0;
}

/* A caller's option that is, or contradicts, an option the administrator forces. */
static int build_check_conf_forced(const Build *b, const char *key, UmError *error) {
        const OptionList *forced = b->lists[ORIGIN_FORCED];

        for (size_t i = 0; i < forced->n_items; i++) {
                const OptionItem *f = &forced->items[i];

                if (!options_conflict(key, f->key))
                        continue;
                if (streq(key, f->key) && option_always_allowed(key))
                        continue;
                if (streq(key, f->key))
                        return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                            "%s option '%s' is forced to %s%s%s by the "
                                            "administrator (ForcedOptions= for %s in %s)",
                                            b->fs->name, key, f->key, f->value ? "=" : "",
                                            strempty(f->value), b->fs->name,
                                            build_conf_path(b));
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' contradicts '%s', which the administrator "
                                    "forces (ForcedOptions= for %s in %s)", b->fs->name, key,
                                    f->key, b->fs->name, build_conf_path(b));
        }
        return 0;
}

/* A caller's option the administrator's AllowedOptions= does not list. */
static int build_check_conf_allowed(const Build *b, const char *key, UmError *error) {
        if (!b->conf || !b->conf->allowed_options || option_always_allowed(key))
                return 0;
        for (char **k = b->conf->allowed_options; *k; k++)
                if (streq(*k, key))
                        return 0;
        return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                            "%s option '%s' is not allowed by the administrator "
                            "(AllowedOptions= for %s in %s)", b->fs->name, key, b->fs->name,
                            build_conf_path(b));
}

/* The per-type steps for one item that passed check_item(). */
static int build_item(Build *b, ItemOrigin origin, size_t i, UmError *error) {
        const OptionList *l = b->lists[origin];
        const OptionItem *it = &l->items[i];
        bool caller = origin == ORIGIN_CALLER;
        OptionClass c;
        int r;

        if (caller) {
                r = build_check_conf_forced(b, it->key, error);
                if (r < 0)
                        return r;
        }
        c = option_classify(b->fs, it->key, it->value);
        if (c.kind == OPTION_REFUSED_EVERYWHERE) /* check_item() refused it already */
                return refused_everywhere_error(c.refusal, it, error);
        if (c.kind == OPTION_SET_BY_USERMOUNT)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' is set by usermount and cannot be given: %s",
                                    b->fs->name, it->key, c.forced->why);
        r = check_duplicate(l, i, error);
        if (r < 0)
                return r;

        switch (c.kind) {
        case OPTION_GENERIC:
                r = caller ? build_check_conf_allowed(b, it->key, error) : 0;
                if (r < 0)
                        return r;
                return build_generic(b, c.generic, it, &b->to_fs[origin][i], origin, error);
        case OPTION_REFUSED:
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' is not allowed: %s", b->fs->name, it->key,
                                    c.refusal->why);
        case OPTION_UNKNOWN:
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' is not supported by usermount", b->fs->name,
                                    it->key);
        default:
                break;
        }
        r = caller ? build_check_conf_allowed(b, it->key, error) : 0;
        if (r < 0)
                return r;
        r = rule_check_value(b->fs, c.rule, it->value, error);
        if (r < 0)
                return r;
        if (c.rule->read_only_only && !b->needs_ro)
                b->needs_ro = c.rule->key;
        if (c.rule->needs_journal && !b->needs_journal)
                b->needs_journal = c.rule->key;
        b->to_fs[origin][i] = true;
        return 0;
}

/*
 * A default yields to anything the caller said about the same thing, and "rw" yields to a
 * mount that is read-only anyway.
 */
static bool build_default_applies(const Build *b, const OptionItem *d) {
        const OptionList *caller = b->lists[ORIGIN_CALLER];

        for (size_t i = 0; i < caller->n_items; i++)
                if (options_conflict(caller->items[i].key, d->key))
                        return false;
        if (streq(d->key, "rw"))
                return !(b->in->read_only || b->in->source_read_only ||
                         fstype_read_only(b->fs->name));
        if (b->in->read_only || b->in->source_read_only || b->ro) {
                const OptionRule *rule = rule_find(b->fs, d->key);

                /* A default for the journal yields to a read-only mount, which loads none. */
                if (rule && rule->needs_journal && b->fs->read_only_key)
                        return false;
        }
        return true;
}

/*
 * The checks of a caller's items again on one list of the configuration, which were made
 * when it was loaded: a Conf that skipped them still never reaches the kernel.
 */
static int build_check_conf_list(const Build *b, ItemOrigin origin, UmError *error) {
        UmError e = {};
        int r;

        r = check_items(b->lists[origin], &e);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "the configured %s for %s are not valid: %s",
                                    origin == ORIGIN_DEFAULT ? "DefaultOptions=" :
                                    "ForcedOptions=", b->fs->name, e.message);
        return 0;
}

static int build_conf(Build *b, UmError *error) {
        char esc[ESCAPED_MAX];
        int r;

        if (!b->conf)
                return 0;
        if (!streq_ptr(b->conf->name, b->fs->name))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "internal error: configuration of '%s' used for '%s'",
                                    um_escape(strempty(b->conf->name), esc, sizeof(esc)),
                                    b->fs->name);
        if (!b->conf->allowed)
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "filesystem type '%s' is not allowed by the administrator "
                                    "(AllowedFilesystems= in %s)", b->fs->name,
                                    build_conf_path(b));
        b->lists[ORIGIN_DEFAULT] = &b->conf->defaults;
        b->lists[ORIGIN_FORCED] = &b->conf->forced;
        r = build_check_conf_list(b, ORIGIN_DEFAULT, error);
        if (r < 0)
                return r;
        return build_check_conf_list(b, ORIGIN_FORCED, error);
}

/* The caller's items, then the defaults that apply, then the configured forced ones. */
static int build_all_items(Build *b, UmError *error) {
        for (ItemOrigin origin = 0; origin < _ORIGIN_MAX; origin++) {
                const OptionList *l = b->lists[origin];

                for (size_t i = 0; i < l->n_items; i++) {
                        int r;

                        if (origin == ORIGIN_DEFAULT && !build_default_applies(b, &l->items[i]))
                                continue;
                        r = build_item(b, origin, i, error);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/*
 * A default or forced option for the journal yields to a read-only mount, which loads
 * none, whichever list made the mount read-only; only a caller's is refused (below).
 */
static void build_read_only_yield(Build *b, bool read_only) {
        if (!read_only || !b->fs->read_only_key)
                return;
        b->needs_journal = NULL;
        for (ItemOrigin origin = 0; origin < _ORIGIN_MAX; origin++)
                for (size_t i = 0; i < b->lists[origin]->n_items; i++) {
                        const OptionItem *it = &b->lists[origin]->items[i];
                        const OptionRule *rule = b->to_fs[origin][i] ?
                                rule_find(b->fs, it->key) : NULL;

                        if (!rule || !rule->needs_journal)
                                continue;
                        if (origin != ORIGIN_CALLER)
                                b->to_fs[origin][i] = false;
                        else if (!b->needs_journal)
                                b->needs_journal = rule->key;
                }
}

/* Decisions that depend on the whole option string, not on one item. */
static int build_check_combined(const Build *b, bool read_only, UmError *error) {
        if (b->rw && b->ro)
                return um_error_set(error, UM_ERROR_KIND_INVALID_ARGUMENT, EINVAL,
                                    "options 'ro' and 'rw' contradict each other");
        if (b->needs_ro && !read_only)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' is only allowed on read-only mounts: it "
                                    "skips replaying the journal, which leaves a writable "
                                    "filesystem inconsistent", b->fs->name, b->needs_ro);
        if (b->needs_journal && read_only && b->fs->read_only_key)
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "%s option '%s' needs the journal, and a read-only mount "
                                    "never loads it (it is mounted with %s, so that not one "
                                    "byte of the device is written)", b->fs->name,
                                    b->needs_journal, b->fs->read_only_key);
        return 0;
}

static int item_set(MountOption *o, const char *key, const char *value) {
        o->key = strdup(key);
        o->value = value ? strdup(value) : NULL;
        if (!o->key || (value && !o->value))
                return -ENOMEM;
        return 0;
}

static void forced_value(const ForcedOption *f, const PolicyInput *in, char *buf, size_t size) {
        switch (f->source) {
        case FORCED_FIXED:
                snprintf(buf, size, "%s", f->value);
                break;
        case FORCED_CALLER_UID:
                snprintf(buf, size, "%u", (unsigned) in->uid);
                break;
        case FORCED_CALLER_GID:
                snprintf(buf, size, "%u", (unsigned) in->gid);
                break;
        case FORCED_CALLER_UMASK:
                snprintf(buf, size, "%04o", (unsigned) (in->umask & 0777));
                break;
        }
}

static int build_add_forced(const Build *b, bool first, MountOptions *o) {
        for (const ForcedOption *f = b->fs->forced; f && f->key; f++) {
                char value[32];
                int r;

                if (f->first != first)
                        continue;
                forced_value(f, b->in, value, sizeof(value));
                r = item_set(&o->items[o->n_items++], f->key, value);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The key that skips log replay, unless the caller's items already have it. */
static const char *build_read_only_key(const Build *b, bool read_only) {
        if (!read_only || !b->fs->read_only_key)
                return NULL;
        for (size_t l = 0; l < _ORIGIN_MAX; l++)
                for (size_t i = 0; i < b->lists[l]->n_items; i++)
                        if (b->to_fs[l][i] &&
                            streq(b->lists[l]->items[i].key, b->fs->read_only_key))
                                return NULL;
        return b->fs->read_only_key;
}

/* The filesystem parameters, in the order documented at policy_build_options(). */
static int build_items(const Build *b, MountOptions *o) {
        const char *read_only_key = build_read_only_key(b, o->read_only);
        size_t n = !!read_only_key;
        int r;

        for (const ForcedOption *f = b->fs->forced; f && f->key; f++)
                n++;
        for (size_t l = 0; l < _ORIGIN_MAX; l++)
                for (size_t i = 0; i < b->lists[l]->n_items; i++)
                        n += b->to_fs[l][i];
        if (n == 0)
                return 0;

        o->items = calloc(n, sizeof(MountOption));
        if (!o->items)
                return -ENOMEM;
        r = build_add_forced(b, true, o);
        if (r < 0)
                return r;
        for (size_t l = 0; l < _ORIGIN_MAX; l++)
                for (size_t i = 0; i < b->lists[l]->n_items; i++) {
                        const OptionItem *it = &b->lists[l]->items[i];

                        if (!b->to_fs[l][i])
                                continue;
                        r = item_set(&o->items[o->n_items++], it->key, it->value);
                        if (r < 0)
                                return r;
                }
        if (read_only_key) {
                r = item_set(&o->items[o->n_items++], read_only_key, b->fs->read_only_value);
                if (r < 0)
                        return r;
        }
        return build_add_forced(b, false, o);
}

/* Every list of b, and room for its to_fs flags; lists not set are empty. */
static int build_lists(Build *b) {
        static const OptionList empty = {};

        b->lists[ORIGIN_CALLER] = &b->caller;
        for (size_t l = 0; l < _ORIGIN_MAX; l++) {
                if (!b->lists[l])
                        b->lists[l] = &empty;
                /* One more than needed, so that an empty list has an array too. */
                b->to_fs[l] = calloc(b->lists[l]->n_items + 1, sizeof(bool));
                if (!b->to_fs[l])
                        return -ENOMEM;
        }
        return 0;
}

int policy_build_options(const PolicyInput *in, MountOptions *ret, UmError *error) {
        _cleanup_(build_done) Build b = { .in = in };
        _cleanup_(mount_options_done) MountOptions o = {};
        char esc[ESCAPED_MAX];
        int r;

        if (!in || !ret)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "internal error: no policy input");
        b.fs = fs_policy_find(in->fstype);
        if (!b.fs)
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, EPERM,
                                    "filesystem type '%s' is not allowed for user mounts",
                                    um_escape(in->fstype, esc, sizeof(esc)));
        b.conf = in->fs_conf;
        r = build_conf(&b, error);
        if (r < 0)
                return r;

        r = option_list_check(strempty(in->options), &b.caller, error);
        if (r < 0)
                return r;
        r = build_lists(&b);
        if (r < 0)
                return oom(error);
        r = build_all_items(&b, error);
        if (r < 0)
                return r;
        /* A read-only source never yields a writable mount, whatever the edge passed. */
        o.read_only = in->read_only || in->source_read_only || b.ro || fstype_read_only(b.fs->name);
        build_read_only_yield(&b, o.read_only);
        r = build_check_combined(&b, o.read_only, error);
        if (r < 0)
                return r;

        r = build_items(&b, &o);
        if (r < 0)
                return oom(error);
        o.attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID | b.attr_set;
        if (!in->exec)
                o.attr_set |= MOUNT_ATTR_NOEXEC;
        if (o.read_only)
                o.attr_set |= MOUNT_ATTR_RDONLY;

        *ret = o;
        o = (MountOptions){};
        return 0;
}

/* ---- Configuration -------------------------------------------------------------------------- */

static const char *const conf_list_names[_POLICY_CONF_LIST_MAX] = {
        [POLICY_CONF_ALLOWED_OPTIONS] = "AllowedOptions",
        [POLICY_CONF_DEFAULT_OPTIONS] = "DefaultOptions",
        [POLICY_CONF_FORCED_OPTIONS] = "ForcedOptions",
};

const char *policy_conf_list_name(PolicyConfList list) {
        return list >= 0 && list < _POLICY_CONF_LIST_MAX ? conf_list_names[list] : NULL;
}

typedef struct ConfCheck {
        const FsPolicy *fs;
        PolicyConfReport report;
        void *userdata;
        unsigned n_problems;
} ConfCheck;

/* Records one problem; returns -EINVAL for "return conf_problem(...)". */
static int conf_problem(ConfCheck *c, PolicyConfList list, const char *fmt, ...) _printf_(3, 4);
static int conf_problem(ConfCheck *c, PolicyConfList list, const char *fmt, ...) {
        char message[sizeof(((UmError *) NULL)->message)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        c->n_problems++;
        if (c->report)
                c->report(c->userdata, list, message);
        return -EINVAL;
}

/* One key of AllowedOptions=: the built-in tables must accept it for the type. */
static int conf_check_allowed_key(ConfCheck *c, char **keys, size_t i) {
        const PolicyConfList list = POLICY_CONF_ALLOWED_OPTIONS;
        const char *key = keys[i];
        char esc[ESCAPED_MAX];
        UmError e = {};
        OptionClass class;

        if (strchr(key, '='))
                return conf_problem(c, list, "'%s': AllowedOptions= lists option names only, "
                                    "without values", um_escape(key, esc, sizeof(esc)));
        if (check_key(key, &e) < 0)
                return conf_problem(c, list, "%s", e.message);
        class = option_classify(c->fs, key, NULL);
        switch (class.kind) {
        case OPTION_REFUSED_EVERYWHERE:
                return conf_problem(c, list, "'%s' can never be allowed: %s", key,
                                    class.refusal->why);
        case OPTION_SET_BY_USERMOUNT:
                return conf_problem(c, list, "'%s' can never be allowed on %s: it is set by "
                                    "usermount, because %s", key, c->fs->name,
                                    class.forced->why);
        case OPTION_REFUSED:
                return conf_problem(c, list, "'%s' can never be allowed on %s: %s", key,
                                    c->fs->name, class.refusal->why);
        case OPTION_UNKNOWN:
                return conf_problem(c, list, "'%s' is not an option usermount knows for %s", key,
                                    c->fs->name);
        case OPTION_GENERIC:
        case OPTION_PARAMETER:
                break;
        }
        for (size_t j = 0; j < i; j++)
                if (streq(keys[j], key))
                        return conf_problem(c, list, "'%s' is listed twice", key);
        return 0;
}

/* One item of DefaultOptions= or ForcedOptions=, checked like a caller's option. */
static int conf_check_item(ConfCheck *c, PolicyConfList list, const OptionList *l, size_t i) {
        const OptionItem *it = &l->items[i];
        OptionClass class;
        UmError e = {};

        if (check_item(it, &e) < 0)
                return conf_problem(c, list, "%s", e.message);
        class = option_classify(c->fs, it->key, it->value);
        if (class.kind == OPTION_SET_BY_USERMOUNT)
                return conf_problem(c, list, "'%s' cannot be configured on %s: usermount always "
                                    "sets it, because %s", it->key, c->fs->name,
                                    class.forced->why);
        for (size_t j = 0; j < i; j++) {
                if (streq(l->items[j].key, it->key))
                        return conf_problem(c, list, "'%s' is given twice", it->key);
                if (options_conflict(l->items[j].key, it->key))
                        return conf_problem(c, list, "'%s' and '%s' contradict each other",
                                            l->items[j].key, it->key);
        }

        switch (class.kind) {
        case OPTION_GENERIC:
                if (it->value)
                        return conf_problem(c, list, "option '%s' takes no value", it->key);
                if (list == POLICY_CONF_FORCED_OPTIONS &&
                    class.generic->kind == GENERIC_READ_WRITE)
                        return conf_problem(c, list, "'rw' cannot be forced: it would contradict "
                                            "every read-only request and read-only source");
                return 0;
        case OPTION_REFUSED:
                return conf_problem(c, list, "%s option '%s' is not allowed: %s", c->fs->name,
                                    it->key, class.refusal->why);
        case OPTION_UNKNOWN:
                return conf_problem(c, list, "'%s' is not an option usermount knows for %s",
                                    it->key, c->fs->name);
        case OPTION_PARAMETER:
                break;
        case OPTION_REFUSED_EVERYWHERE: /* check_item() refused it */
        case OPTION_SET_BY_USERMOUNT:
                return -EINVAL;
        }
        if (rule_check_value(c->fs, class.rule, it->value, &e) < 0)
                return conf_problem(c, list, "%s", e.message);
        if (class.rule->read_only_only && list == POLICY_CONF_DEFAULT_OPTIONS)
                return conf_problem(c, list, "'%s' cannot be a default: it is only allowed on "
                                    "read-only mounts", it->key);
        return 0;
}

static void conf_check_list(ConfCheck *c, PolicyConfList list, const OptionList *l) {
        for (size_t i = 0; i < l->n_items; i++)
                conf_check_item(c, list, l, i);
}

/* Options only allowed read-only may be forced, but only together with "ro". */
static void conf_check_forced_read_only(ConfCheck *c, const OptionList *forced) {
        for (size_t i = 0; i < forced->n_items; i++) {
                const OptionRule *rule = rule_find(c->fs, forced->items[i].key);

                if (rule && rule->read_only_only && !fstype_read_only(c->fs->name) &&
                    !option_list_has(forced, "ro"))
                        conf_problem(c, POLICY_CONF_FORCED_OPTIONS, "'%s' can only be forced "
                                     "together with 'ro': it is only allowed on read-only "
                                     "mounts", rule->key);
        }
}

/* A default that a forced item decides already could never apply. */
static void conf_check_defaults_vs_forced(ConfCheck *c, const OptionList *defaults,
                                          const OptionList *forced) {
        for (size_t i = 0; i < defaults->n_items; i++)
                for (size_t j = 0; j < forced->n_items; j++)
                        if (options_conflict(defaults->items[i].key, forced->items[j].key)) {
                                conf_problem(c, POLICY_CONF_DEFAULT_OPTIONS, "'%s' contradicts "
                                             "'%s' of ForcedOptions=",
                                             defaults->items[i].key, forced->items[j].key);
                                break;
                        }
}

int policy_check_userspace_options(const char *options, const char *driver_name,
                                   UmError *error) {
        _cleanup_(option_list_done) OptionList l = {};
        char esc[POLICY_KEY_MAX * 4 + 1];
        int r;

        r = option_list_split(strempty(options), &l, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l.n_items; i++) {
                const GenericOption *g = generic_find(l.items[i].key);

                if (g && !l.items[i].value && g->kind != GENERIC_SB_FLAG)
                        continue;
                return um_error_set(error, UM_ERROR_KIND_OPTION_NOT_ALLOWED, EPERM,
                                    "Option '%s' is not available with the userspace driver "
                                    "(%s), which takes only ro, rw, the atime options, "
                                    "nosuid, nodev and noexec; the kernel's driver "
                                    "(driver=kernel) takes it.",
                                    um_escape(l.items[i].key, esc, sizeof(esc)),
                                    strempty(driver_name));
        }
        return 0;
}

void policy_describe_forced(const char *fstype, char *buf, size_t size) {
        static const char *const placeholders[] = {
                [FORCED_CALLER_UID] = "<caller's uid>",
                [FORCED_CALLER_GID] = "<caller's gid>",
                [FORCED_CALLER_UMASK] = "<caller's umask>",
        };
        const FsPolicy *fs = fs_policy_find(fstype);
        size_t o = 0;

        if (size == 0)
                return;
        buf[0] = 0;
        for (const ForcedOption *f = fs ? fs->forced : NULL; f && f->key && o < size; f++)
                o += snprintf(buf + o, size - o, "%s%s=%s", o > 0 ? "," : "", f->key,
                              f->source == FORCED_FIXED ? f->value : placeholders[f->source]);
}

int policy_check_conf_fstype(const ConfFsType *t, PolicyConfReport report, void *userdata) {
        ConfCheck c = { .report = report, .userdata = userdata };

        c.fs = t ? fs_policy_find(t->name) : NULL;
        if (!c.fs)
                return -EINVAL;
        for (size_t i = 0; t->allowed_options && t->allowed_options[i]; i++)
                conf_check_allowed_key(&c, t->allowed_options, i);
        conf_check_list(&c, POLICY_CONF_DEFAULT_OPTIONS, &t->defaults);
        conf_check_list(&c, POLICY_CONF_FORCED_OPTIONS, &t->forced);
        conf_check_forced_read_only(&c, &t->forced);
        conf_check_defaults_vs_forced(&c, &t->defaults, &t->forced);
        return c.n_problems > 0 ? -EINVAL : 0;
}
