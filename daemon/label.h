/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Security labels of user mounts: which labelling LSM is active (SELinux or Smack), and the
 * mount options that label a user mount with the caller's own label (context= for SELinux,
 * smackfsroot=, smackfsdef=, smackfstransmute= for Smack). With no labelling LSM nothing
 * is added. Callers never choose labels: policy.c refuses every label option they give.
 * Parsing and option computation are pure; only label_lsm_detect() and the default
 * SELinux computation (libselinux) ask the system.
 */
#pragma once

#include <stdbool.h>

#include "policy.h"
#include "um-error.h"

/* Longest label or context we pass to the kernel: fsconfig() copies at most 255 bytes of
 * a string value, and Smack labels are at most 255 bytes (SMK_LONGLABEL - 1). */
#define LABEL_VALUE_MAX 255
/* Longest SELinux type name accepted in SELinuxType=. */
#define LABEL_TYPE_MAX 128

/* The labelling LSM that decides the labels of files, at most one is active. */
typedef enum LabelLsm {
        LABEL_LSM_NONE,
        LABEL_LSM_SELINUX,
        LABEL_LSM_SMACK,
        /* Smack, but the daemon may not set Smack labels on a mount (no CAP_MAC_ADMIN, or
         * its label is not in smackfs's onlycap list): every mount is refused. */
        LABEL_LSM_SMACK_UNPRIVILEGED,
        _LABEL_LSM_MAX,
} LabelLsm;

/* "none", "selinux", "smack", and for LABEL_LSM_SMACK_UNPRIVILEGED a phrase saying that
 * mounts are refused (for the daemon's start message); NULL for an invalid value. */
const char *label_lsm_to_string(LabelLsm lsm);

/*
 * Parses the text of /sys/kernel/security/lsm (a comma-separated list of the active LSMs,
 * in order, optionally ending with a newline) into the labelling LSM: the first of
 * "selinux" (only when selinux_enabled, i.e. a policy is loaded) and "smack" listed, or
 * LABEL_LSM_NONE. Other LSMs (capability, yama, apparmor, landlock, ...) do not label
 * mounts and are skipped. Returns 0, or -EINVAL for text that is not such a list (empty
 * names, characters other than [a-z0-9_], longer than 4096 bytes); *ret untouched then.
 */
int label_lsm_parse(const char *text, bool selinux_enabled, LabelLsm *ret);

/*
 * Detects the labelling LSM of the running system, once at daemon start: reads
 * /sys/kernel/security/lsm and asks libselinux whether SELinux is enabled. When securityfs
 * is not mounted, falls back to libselinux for SELinux and to a mounted smackfs
 * (/sys/fs/smackfs) for Smack. Smack becomes LABEL_LSM_SMACK_UNPRIVILEGED unless the
 * calling process may set Smack labels on mounts (label_smack_privileged(), with its
 * effective capabilities, /sys/fs/smackfs/onlycap and its own Smack label): call it
 * after dropping capabilities, with the capabilities workers will have. Returns 0 or
 * -errno.
 */
int label_lsm_detect(LabelLsm *ret);

/*
 * Whether a process may give a mount Smack labels (smackfsroot=, smackfsdef=,
 * smackfstransmute=): the kernel (smack_set_mnt_opts()) refuses them with EPERM without
 * CAP_MAC_ADMIN, and, when smackfs's onlycap lists labels, unless the process's own label
 * is one of them. onlycap: the text of /sys/fs/smackfs/onlycap, labels separated by white
 * space (NULL or blank: no list); own_label: the process's Smack label (NULL: unknown,
 * which only passes without a list). Pure.
 */
bool label_smack_privileged(bool has_mac_admin, const char *onlycap, const char *own_label);

/*
 * The SELinux context the kernel gives files of a filesystem mounted by caller in a user
 * namespace: security_transition_sid(caller, caller, file) in selinux_set_mnt_opts().
 * *ret_context is malloc()ed. Returns 0 or -errno.
 */
typedef int (*LabelComputeFileContext)(const char *caller, char **ret_context);

/* The default LabelComputeFileContext: libselinux's security_compute_create_raw(). */
int label_selinux_compute_file_context(const char *caller, char **ret_context);

/* Whether s is a valid SELinuxType= (an SELinux identifier: a letter, then letters,
 * digits, '_', '.' or '-', at most LABEL_TYPE_MAX bytes). */
bool label_selinux_type_valid(const char *s);

/* Whether s is a raw SELinux context "user:role:type[:level]" we pass on: printable ASCII
 * without spaces, quotes or backslashes, at most LABEL_VALUE_MAX bytes, no empty part. */
bool label_selinux_context_valid(const char *s);

/* Whether s is a Smack label (Documentation/admin-guide/LSM/Smack.rst): 1 to 255 bytes of
 * printable ASCII without spaces, '/', '\\', '\'' or '"', not starting with '-'. */
bool label_smack_valid(const char *s);

typedef struct LabelInput {
        LabelLsm lsm;                    /* detected at daemon start */
        const char *caller_label;        /* the peer's LSM label from the bus; NULL if none */
        const char *selinux_type;        /* [Labels] SELinuxType=; NULL or "": compute */
        LabelComputeFileContext compute; /* NULL: label_selinux_compute_file_context() */
} LabelInput;

/*
 * Appends the label options for in to *o (after policy_build_options()):
 *   LABEL_LSM_NONE     nothing
 *   LABEL_LSM_SELINUX  context=C, with C the caller's context with SELinuxType= as type and
 *                      object_r as role, or without SELinuxType= what in->compute gives
 *   LABEL_LSM_SMACK    smackfsroot=L, smackfsdef=L, smackfstransmute=L, L the caller's label
 *   LABEL_LSM_SMACK_UNPRIVILEGED
 *                      nothing: refused (UM_ERROR_KIND_FAILED, -EPERM), as the kernel would
 *                      refuse those options, and a mount without them would carry the
 *                      daemon's label and trust the labels on the medium
 * Fails closed, never mounting unlabelled: a caller without a label, or with one (or a
 * computed context) that is not valid, is refused with UM_ERROR_KIND_FAILED and -EACCES; a
 * failed computation with UM_ERROR_KIND_FAILED and its -errno. On failure *o is untouched
 * and error is set.
 */
int label_add_options(const LabelInput *in, MountOptions *o, UmError *error);
