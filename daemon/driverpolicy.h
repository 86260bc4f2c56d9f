/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which driver parses a filesystem: the kernel's, or a sandboxed userspace (FUSE) driver
 * (driver/fusedriver.h). Pure functions over the configuration's Driver= settings, what is
 * available, and what the caller asked for; the unit tests cover them exhaustively.
 *
 * Driver= ([General], and per filesystem type in its own section) is one of
 *   auto        userspace for images and removable media where a userspace driver for the
 *               type is installed, kernel otherwise (and userspace where the kernel has no
 *               driver for the type at all); but an image or removable medium goes to the
 *               kernel only with polkit's mount-kernel-driver (kernel_override): untrusted
 *               bytes are not parsed by the kernel unless an administrator says so
 *   kernel      the kernel's driver
 *   userspace   the userspace driver; a type without one installed is refused
 * or a list of KIND:VALUE items, KIND one of image, removable, system (kinds not named keep
 * auto, or in a type's section the [General] setting): "image:userspace system:kernel".
 * A type's section overrides [General] for the kinds it names.
 */
#pragma once

#include <stdbool.h>

#include "drivertable.h"
#include "um-error.h"

typedef enum DriverSetting {
        DRIVER_SETTING_UNSET, /* a type's section says nothing for the kind: [General] decides */
        DRIVER_SETTING_AUTO,
        DRIVER_SETTING_KERNEL,
        DRIVER_SETTING_USERSPACE,
} DriverSetting;

/* What the source is, as Driver= names it. */
typedef enum SourceKind {
        SOURCE_KIND_IMAGE,
        SOURCE_KIND_REMOVABLE,
        SOURCE_KIND_SYSTEM,
        _SOURCE_KIND_MAX,
} SourceKind;

/* One Driver= value: a setting per source kind. */
typedef struct DriverPolicy {
        DriverSetting kinds[_SOURCE_KIND_MAX];
} DriverPolicy;

/* "kernel", "userspace" (info["driver"], params["driver"]); NULL out of range. */
const char *driver_kind_name(DriverKind k);
/* The inverse; -EINVAL for anything else. */
int driver_kind_from_name(const char *s);
/* "image", "removable", "system". */
const char *source_kind_name(SourceKind k);

/*
 * Parses a Driver= value into *ret: one setting for every kind, or KIND:VALUE items
 * separated by spaces or commas (each kind at most once). On failure -EINVAL with a
 * sentence in problem (for the configuration's diagnostics), *ret untouched.
 */
int driver_policy_parse(const char *value, DriverPolicy *ret, char *problem, size_t size);

/* The value as it would be written back, e.g. "image:userspace removable:auto system:kernel". */
void driver_policy_format(const DriverPolicy *p, char *buf, size_t size);

typedef struct DriverInput {
        const char *fstype;          /* for messages */
        SourceKind kind;
        const DriverPolicy *general; /* [General] Driver= */
        const DriverPolicy *type;    /* the type's Driver=, or NULL */
        bool kernel_available;       /* the running kernel has the type */
        bool userspace_available;    /* a userspace driver for the type is installed */
        const char *userspace_name;  /* its name, e.g. "fuse2fs", for messages (or NULL) */
        int requested;               /* params["driver"]: a DriverKind, or -1 for none */
} DriverInput;

typedef struct DriverDecision {
        DriverKind driver;
        DriverSetting policy;        /* the setting that applied (AUTO, KERNEL or USERSPACE) */
        bool kernel_override;        /* the kernel driver where no administrator chose it
                                      * (see driver_decide()): needs the mount-kernel-driver
                                      * action */
} DriverDecision;

/* The setting that applies to in's kind: the type's if it names the kind, else [General]'s. */
DriverSetting driver_policy_setting(const DriverInput *in);

/*
 * Decides which driver serves the mount. Refused (-EPERM/-ENOENT with error set,
 * UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED): the userspace driver where none is installed
 * (asked for, or policy says userspace), the kernel driver where the kernel has none and
 * userspace is not possible. The kernel driver for an image or removable medium under
 * auto (asked for where policy says userspace, or because no userspace driver serves the
 * type), or asked for where Driver=userspace, comes with kernel_override set (the request
 * then needs polkit's mount-kernel-driver action); asking for userspace where policy says
 * kernel is allowed (the driver is the safer parser).
 */
int driver_decide(const DriverInput *in, DriverDecision *ret, UmError *error);
