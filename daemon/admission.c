/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The limits and the polkit actions of a request (admission.h).
 */
#include <stdio.h>

#include "idmap.h"
#include "admission.h"
#include "usermount-names.h"

/* " (together with uid N, ...)" for a caller the per-user limits charge to the user
 * /etc/subuid delegates its uid to, else "": a limit message then says whose it is. */
static const char *owner_note(const LimitSubject *s, char *buf, size_t size) {
        if (s->owner == s->uid)
                return "";
        snprintf(buf, size, " (together with uid %u, to whom %s delegates your uid)",
                 (unsigned) s->owner, IDMAP_SUBUID_PATH);
        return buf;
}

int admission_check_request(const ConfLimits *l, const LimitSubject *s, const LimitCounts *c,
                         UmError *error) {
        char note[128];

        if (c->requests >= l->max_requests)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "usermountd is handling %u requests already, the most it "
                                    "may (MaxRequests=); try again later.", c->requests);
        if (s->uid == 0)
                return 0;
        if (c->owner_requests >= l->max_requests_per_user)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "You have %u requests in flight already%s, the most one "
                                    "user may have (MaxRequestsPerUser=); wait for them to "
                                    "finish.", l->max_requests_per_user,
                                    owner_note(s, note, sizeof(note)));
        if (s->mounts && c->owner_mounts >= l->max_mounts_per_user)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EMFILE,
                                    "You have %u mounts from usermount already%s, the most one "
                                    "user may have (MaxMountsPerUser=); unmount one first.",
                                    l->max_mounts_per_user, owner_note(s, note, sizeof(note)));
        if (s->mounts && c->mounts >= l->max_mounts)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, ENFILE,
                                    "usermountd has %zu mounts registered already, the most it "
                                    "may (MaxMounts=); try again after some are unmounted.",
                                    c->registered_mounts);
        if (s->charges_unauthorized && c->unauthorized >= l->max_unauthorized_requests)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EBUSY,
                                    "usermountd is working on %u requests that polkit has not "
                                    "authorized yet, the most it may (MaxUnauthorizedRequests=); "
                                    "try again later.", c->unauthorized);
        return 0;
}

int admission_check_loops(const ConfLimits *l, const LimitSubject *s, size_t owner_loops,
                       size_t loops, UmError *error) {
        char note[128];

        if (s->uid == 0)
                return 0;
        if (owner_loops >= l->max_loop_devices_per_user)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EMFILE,
                                    "You hold %zu loop devices from usermount already%s, the "
                                    "most one user may (MaxLoopDevicesPerUser=); unmount an "
                                    "image or close a mount you opened first.", owner_loops,
                                    owner_note(s, note, sizeof(note)));
        if (loops >= l->max_loop_devices)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, ENFILE,
                                    "usermount holds %zu loop devices already, the most it may "
                                    "(MaxLoopDevices=); try again after some are released.",
                                    loops);
        return 0;
}

int admission_check_drivers(const ConfLimits *l, const LimitSubject *s, size_t owner_drivers,
                            size_t drivers, UmError *error) {
        char note[128];

        if (s->uid == 0)
                return 0;
        if (owner_drivers >= l->max_drivers_per_user)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EMFILE,
                                    "You hold %zu mounts served by userspace drivers already%s, "
                                    "the most one user may (MaxDriversPerUser=); unmount one or "
                                    "close a mount you opened first.", owner_drivers,
                                    owner_note(s, note, sizeof(note)));
        if (drivers >= l->max_drivers)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, ENFILE,
                                    "usermount runs %zu userspace drivers already, the most it "
                                    "may (MaxDrivers=); try again after some mounts are gone.",
                                    drivers);
        return 0;
}

int admission_check_workers(const ConfLimits *l, const LimitSubject *s, bool unauthorized,
                         unsigned workers, unsigned owner_workers,
                         unsigned unauthorized_workers, UmError *error) {
        char note[128];

        if (s->uid == 0)
                return 0;
        if (workers >= l->max_workers)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EAGAIN,
                                    "usermountd is running %u workers already, the most it "
                                    "may (MaxWorkers=); try again later.", workers);
        if (owner_workers >= l->max_workers_per_user)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EAGAIN,
                                    "usermountd is running %u workers for you%s already, the "
                                    "most one user may have (MaxWorkersPerUser=); wait for your "
                                    "other requests to finish.", owner_workers,
                                    owner_note(s, note, sizeof(note)));
        if (unauthorized && unauthorized_workers >= l->max_unauthorized_requests)
                return um_error_set(error, UM_ERROR_KIND_LIMIT_EXCEEDED, EAGAIN,
                                    "usermountd is running %u workers for requests that polkit "
                                    "has not authorized yet, the most it may "
                                    "(MaxUnauthorizedRequests=); try again later.",
                                    unauthorized_workers);
        return 0;
}

void admission_mount_actions(SourceType type, bool removable, bool kernel_override, bool exec,
                             const char *ret[ADMISSION_ACTIONS_MAX]) {
        size_t n = 0;

        if (type == SOURCE_IMAGE)
                ret[n++] = UM_ACTION_MOUNT_IMAGE;
        else if (removable)
                ret[n++] = UM_ACTION_MOUNT_REMOVABLE;
        else
                ret[n++] = UM_ACTION_MOUNT_SYSTEM;
        if (kernel_override)
                ret[n++] = UM_ACTION_MOUNT_KERNEL_DRIVER;
        if (exec)
                ret[n++] = UM_ACTION_MOUNT_EXEC;
        while (n < ADMISSION_ACTIONS_MAX)
                ret[n++] = NULL;
}
