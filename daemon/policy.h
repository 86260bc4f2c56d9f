/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Mount policy as data: which filesystem types may be mounted, which options each type
 * accepts, which are refused and why, and which are forced. Pure functions, no syscalls,
 * no logging: the unit tests cover them exhaustively.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fsconf.h"
#include "fstypes.h"
#include "mountopts.h"
#include "optlist.h"
#include "um-error.h"

/* Upper bound of a caller's option string, in bytes (docs/security.md, class 10). */
#define POLICY_OPTIONS_MAX OPTION_STRING_MAX
/* Upper bound of one option value, in bytes. */
#define POLICY_VALUE_MAX 255
/* Upper bound of one option name, in bytes (no filesystem has a longer one). */
#define POLICY_KEY_MAX 64

/* The caller's side of a request, as far as option policy needs it. */
typedef struct PolicyInput {
        const char *fstype;     /* probed filesystem type, e.g. "ext4" */
        const char *options;    /* caller's option string, may be NULL or "" */
        bool read_only;         /* read-only requested or forced by an O_RDONLY source */
        bool source_read_only;  /* the source itself is read-only ("rw" is refused) */
        bool exec;              /* exec was requested (authorization is decided elsewhere) */
        uid_t uid;              /* caller, for forced uid=/gid= on filesystems without owners */
        gid_t gid;
        mode_t umask;           /* caller's umask, forced as umask= where such a type has one */
        const ConfFsType *fs_conf; /* the configuration's section for fstype (conf_fstype()),
                                    * borrowed; NULL means the built-in policy alone */
} PolicyInput;

/*
 * Syntax check of a caller's option string that needs no knowledge of the filesystem:
 * length, UTF-8, control characters, quotes, backslashes, empty items, '=' in keys.
 * Runs before any syscall (docs/security.md, class 8). Returns 0 or -EINVAL with
 * UM_ERROR_KIND_INVALID_ARGUMENT, or -EPERM with UM_ERROR_KIND_OPTION_NOT_ALLOWED for
 * options refused on every filesystem (suid, dev, x-*, context=, ...).
 */
int policy_check_options_syntax(const char *options, UmError *error);

/* The three option lists of a per-type section of the configuration ("[ext4]"). */
typedef enum PolicyConfList {
        POLICY_CONF_ALLOWED_OPTIONS,
        POLICY_CONF_DEFAULT_OPTIONS,
        POLICY_CONF_FORCED_OPTIONS,
        _POLICY_CONF_LIST_MAX,
} PolicyConfList;

/* The key of a list in the file: "AllowedOptions", "DefaultOptions", "ForcedOptions". */
const char *policy_conf_list_name(PolicyConfList list);

/* Receives one problem of a per-type section: which list it is in, and a sentence. */
typedef void (*PolicyConfReport)(void *userdata, PolicyConfList list, const char *message);

/*
 * Load-time check of a per-type section t (t->name must be a known type), its lists already
 * split (conf_fstype_split()), so that the configuration can only narrow the built-in
 * policy:
 *   AllowedOptions  keys the built-in tables accept for the type (its own rules and the
 *                   generic options); refused, forced or unknown keys, values and
 *                   repeated keys are problems
 *   DefaultOptions  items checked like a caller's options (syntax, refusals, value
 *   ForcedOptions   checkers); no built-in forced key; no two items of one list that
 *                   contradict each other (same key, acl/noacl twins, atime modes, ro/rw);
 *                   no default that contradicts a forced item; no "rw" forced; options
 *                   only allowed read-only (noload, norecovery) only forced, with ro
 * Calls report (may be NULL) once per problem and returns -EINVAL if there was any, 0 if
 * the section is valid, -ENOMEM.
 */
int policy_check_conf_fstype(const ConfFsType *t, PolicyConfReport report, void *userdata);

/*
 * The options usermount itself forces on fstype, as "key=value,..." with placeholders for
 * the caller's values ("uid=<caller's uid>"), into buf (always NUL-terminated; "" when
 * none or when fstype is unknown). For --check-config.
 */
void policy_describe_forced(const char *fstype, char *buf, size_t size);

/*
 * Full check of in->options for in->fstype, one key at a time through libmount's option
 * parser, against the per-type allow-list; adds forced options (errors=remount-ro on
 * ext2/3/4, uid=/gid= on filesystems without Unix ownership, umask= where such a type has
 * one; on read-only mounts the option that skips journal or log replay: noload on ext3/4,
 * norecovery on xfs, rescue=nologreplay on btrfs) and computes the mount attributes.
 *
 * With in->fs_conf: a type the configuration does not allow is refused; when AllowedOptions=
 * is set, caller options not listed are refused (ro, nosuid, nodev and noexec always pass);
 * a caller option that is or contradicts a ForcedOptions= item is refused; DefaultOptions=
 * items are added unless the caller gave the same key, its no-twin, or another option of
 * its group (atime modes, ro/rw); ForcedOptions= items are added. Order of the items:
 * umask= (the base that the caller's dmask=/fmask= refine), the caller's, the defaults,
 * the configured forced ones, the replay skip of a read-only mount, the built-in forced ones.
 * On success fills *ret (owned by the caller) and returns 0; on failure
 * returns -EINVAL/-EPERM with error set, and *ret is untouched.
 */
int policy_build_options(const PolicyInput *in, MountOptions *ret, UmError *error);

/*
 * A userspace driver (driverpolicy.h) takes none of the kernel driver's options: a caller's
 * option string may then only hold generic options that become mount attributes (ro, rw,
 * the atime modes, nodiratime, nosuid, nodev, noexec). Anything else is -EPERM with
 * UM_ERROR_KIND_OPTION_NOT_ALLOWED naming the option and driver_name. The configuration's
 * DefaultOptions= and ForcedOptions= for the type are the kernel driver's; of them only
 * what policy_build_options() made attributes or read_only of applies.
 */
int policy_check_userspace_options(const char *options, const char *driver_name,
                                   UmError *error);
