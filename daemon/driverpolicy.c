/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which driver parses a filesystem (see driverpolicy.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "driverpolicy.h"

static const char *const driver_kind_names[_DRIVER_KIND_MAX] = {
        [DRIVER_KERNEL] = "kernel",
        [DRIVER_USERSPACE] = "userspace",
};

static const char *const source_kind_names[_SOURCE_KIND_MAX] = {
        [SOURCE_KIND_IMAGE] = "image",
        [SOURCE_KIND_REMOVABLE] = "removable",
        [SOURCE_KIND_SYSTEM] = "system",
};

static const char *const setting_names[] = {
        [DRIVER_SETTING_UNSET] = "",
        [DRIVER_SETTING_AUTO] = "auto",
        [DRIVER_SETTING_KERNEL] = "kernel",
        [DRIVER_SETTING_USERSPACE] = "userspace",
};

const char *driver_kind_name(DriverKind k) {
        return k >= 0 && k < _DRIVER_KIND_MAX ? driver_kind_names[k] : NULL;
}

int driver_kind_from_name(const char *s) {
        for (int k = 0; k < _DRIVER_KIND_MAX; k++)
                if (s && streq(s, driver_kind_names[k]))
                        return k;
        return -EINVAL;
}

const char *source_kind_name(SourceKind k) {
        return k >= 0 && k < _SOURCE_KIND_MAX ? source_kind_names[k] : NULL;
}

static DriverSetting setting_from_name(const char *s, size_t n) {
        for (int i = DRIVER_SETTING_AUTO; i < (int) ELEMENTSOF(setting_names); i++)
                if (strlen(setting_names[i]) == n && strncmp(s, setting_names[i], n) == 0)
                        return (DriverSetting) i;
        return DRIVER_SETTING_UNSET;
}

static int kind_from_name(const char *s, size_t n) {
        for (int k = 0; k < _SOURCE_KIND_MAX; k++)
                if (strlen(source_kind_names[k]) == n && strncmp(s, source_kind_names[k], n) == 0)
                        return k;
        return -EINVAL;
}

/* One KIND:VALUE item (or a bare VALUE when it is the whole value) into p. */
static int parse_item(const char *item, size_t n, bool whole, DriverPolicy *p, char *problem,
                      size_t size) {
        const char *colon = memchr(item, ':', n);
        DriverSetting s;
        int k;

        if (!colon) {
                s = setting_from_name(item, n);
                if (!whole || s == DRIVER_SETTING_UNSET) {
                        snprintf(problem, size, "'%.*s' is not auto, kernel, userspace or a "
                                 "list of KIND:VALUE items (KIND image, removable or system)",
                                 (int) (n > 32 ? 32 : n), item);
                        return -EINVAL;
                }
                for (k = 0; k < _SOURCE_KIND_MAX; k++)
                        p->kinds[k] = s;
                return 0;
        }
        k = kind_from_name(item, (size_t) (colon - item));
        s = setting_from_name(colon + 1, n - (size_t) (colon - item) - 1);
        if (k < 0 || s == DRIVER_SETTING_UNSET) {
                snprintf(problem, size, "'%.*s' is not KIND:VALUE with KIND image, removable or "
                         "system and VALUE auto, kernel or userspace",
                         (int) (n > 32 ? 32 : n), item);
                return -EINVAL;
        }
        if (p->kinds[k] != DRIVER_SETTING_UNSET) {
                snprintf(problem, size, "'%s' is named twice", source_kind_names[k]);
                return -EINVAL;
        }
        p->kinds[k] = s;
        return 0;
}

int driver_policy_parse(const char *value, DriverPolicy *ret, char *problem, size_t size) {
        static const char seps[] = " \t,";
        DriverPolicy p = {};
        size_t n_items = 0;
        int r;

        for (const char *s = value; *s; n_items++) {
                s += strspn(s, seps);
                if (!*s)
                        break;
                s += strcspn(s, seps);
        }
        if (n_items == 0) {
                snprintf(problem, size, "an empty value: write auto, kernel, userspace or "
                         "KIND:VALUE items");
                return -EINVAL;
        }
        for (const char *s = value; *s;) {
                s += strspn(s, seps);
                if (!*s)
                        break;
                size_t n = strcspn(s, seps);

                r = parse_item(s, n, n_items == 1, &p, problem, size);
                if (r < 0)
                        return r;
                s += n;
        }
        *ret = p;
        return 0;
}

void driver_policy_format(const DriverPolicy *p, char *buf, size_t size) {
        size_t o = 0;

        buf[0] = 0;
        for (int k = 0; k < _SOURCE_KIND_MAX && o < size; k++) {
                if (p->kinds[k] == DRIVER_SETTING_UNSET)
                        continue;
                o += (size_t) snprintf(buf + o, size - o, "%s%s:%s", o > 0 ? " " : "",
                                       source_kind_names[k], setting_names[p->kinds[k]]);
        }
}

DriverSetting driver_policy_setting(const DriverInput *in) {
        DriverSetting s = DRIVER_SETTING_UNSET;

        if (in->type)
                s = in->type->kinds[in->kind];
        if (s == DRIVER_SETTING_UNSET && in->general)
                s = in->general->kinds[in->kind];
        return s == DRIVER_SETTING_UNSET ? DRIVER_SETTING_AUTO : s;
}

/* What the setting alone chooses, before the caller's wish. */
static DriverKind policy_choice(const DriverInput *in, DriverSetting s) {
        switch (s) {
        case DRIVER_SETTING_KERNEL:
                return DRIVER_KERNEL;
        case DRIVER_SETTING_USERSPACE:
                return DRIVER_USERSPACE;
        default:
                if (!in->userspace_available)
                        return DRIVER_KERNEL;
                /* Where the kernel has no driver, the userspace one is the only one. */
                if (in->kind != SOURCE_KIND_SYSTEM || !in->kernel_available)
                        return DRIVER_USERSPACE;
                return DRIVER_KERNEL;
        }
}

static int no_userspace(const DriverInput *in, const char *why, UmError *error) {
        return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, ENOENT,
                            "%s needs a userspace driver for '%s', and none is installed "
                            "(fuse2fs, exfat-fuse, fusefat, lowntfs-3g or squashfuse, by type).",
                            why, in->fstype);
}

int driver_decide(const DriverInput *in, DriverDecision *ret, UmError *error) {
        DriverSetting s = driver_policy_setting(in);
        DriverKind choice = policy_choice(in, s);
        DriverDecision d = { .driver = choice, .policy = s };

        if (in->requested == DRIVER_USERSPACE) {
                if (!in->userspace_available)
                        return no_userspace(in, "The request (driver=userspace)", error);
                d.driver = DRIVER_USERSPACE;
        } else if (in->requested == DRIVER_KERNEL) {
                d.driver = DRIVER_KERNEL;
                d.kernel_override = choice == DRIVER_USERSPACE;
        }
        /* Untrusted bytes (an image, a removable medium) are parsed by the kernel only where
         * an administrator says so: by Driver=kernel, or through polkit's
         * mount-kernel-driver, also where auto finds no userspace driver for the type. */
        if (d.driver == DRIVER_KERNEL && s == DRIVER_SETTING_AUTO && in->kind != SOURCE_KIND_SYSTEM)
                d.kernel_override = true;

        if (d.driver == DRIVER_USERSPACE && !in->userspace_available)
                return no_userspace(in, "The administrator's Driver=userspace", error);
        if (d.driver == DRIVER_KERNEL && !in->kernel_available) {
                if (in->requested == DRIVER_KERNEL || s == DRIVER_SETTING_KERNEL)
                        return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, ENODEV,
                                            "The running kernel has no '%s' driver%s.",
                                            in->fstype,
                                            in->userspace_available ?
                                                    "; the userspace driver can mount it "
                                                    "(driver=userspace)" : "");
                return um_error_set(error, UM_ERROR_KIND_FILESYSTEM_NOT_ALLOWED, ENODEV,
                                    "Neither the running kernel nor an installed userspace "
                                    "driver can mount '%s'.", in->fstype);
        }
        *ret = d;
        return 0;
}
