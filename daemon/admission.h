/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Admission of a request, as pure functions: the configured limits (usermount.conf
 * [Limits]) against counts the caller took of what exists and is in flight, and the
 * polkit actions a mount needs. Root is limited only in the number of requests, which
 * guards the daemon. Each returns 0, or -errno with error set to LimitExceeded and a
 * sentence naming the setting.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "conf.h"
#include "source.h"
#include "um-error.h"

/* Whose request it is. */
typedef struct LimitSubject {
        uid_t uid;                  /* the caller */
        uid_t owner;                /* whom the per-user limits charge (owner.h) */
        bool mounts;                /* Mount or MountFd: makes a registered mount */
        bool charges_unauthorized;  /* counted against MaxUnauthorizedRequests= */
} LimitSubject;

/* What exists and is in flight, not counting the request being checked. */
typedef struct LimitCounts {
        unsigned requests;          /* requests in flight */
        unsigned owner_requests;    /* of those, the owner's */
        size_t registered_mounts;   /* mounts in the registry */
        size_t mounts;              /* registered plus to come (Mount, MountFd in flight) */
        size_t owner_mounts;        /* of those, the owner's */
        unsigned unauthorized;      /* requests in flight charged to MaxUnauthorizedRequests= */
} LimitCounts;

/* MaxRequests=, MaxRequestsPerUser=, MaxMountsPerUser=, MaxMounts=,
 * MaxUnauthorizedRequests=, when the request starts. */
int admission_check_request(const ConfLimits *l, const LimitSubject *s, const LimitCounts *c,
                         UmError *error);

/* MaxLoopDevicesPerUser=, MaxLoopDevices=, once the source is known to be an image:
 * loops and owner_loops are the loop devices held and to come. */
int admission_check_loops(const ConfLimits *l, const LimitSubject *s, size_t owner_loops,
                       size_t loops, UmError *error);

/* MaxDriversPerUser=, MaxDrivers=, once a request is to be served by a userspace driver:
 * drivers and owner_drivers are the drivers running and to come. */
int admission_check_drivers(const ConfLimits *l, const LimitSubject *s, size_t owner_drivers,
                            size_t drivers, UmError *error);

/* MaxWorkers=, MaxWorkersPerUser=, and for a request polkit has not authorized yet
 * (unauthorized) MaxUnauthorizedRequests=, before a worker is given a job: the counts are
 * the workers working (workerpool.h). */
int admission_check_workers(const ConfLimits *l, const LimitSubject *s, bool unauthorized,
                         unsigned workers, unsigned owner_workers,
                         unsigned unauthorized_workers, UmError *error);

/* The polkit actions a mount of such a source needs, in order: mount-image,
 * mount-removable or mount-system, then mount-kernel-driver if the caller asked for the
 * kernel's driver where policy says userspace (kernel_override), then mount-exec if exec
 * was asked for; NULL after the last. */
#define ADMISSION_ACTIONS_MAX 3
void admission_mount_actions(SourceType type, bool removable, bool kernel_override, bool exec,
                             const char *ret[ADMISSION_ACTIONS_MAX]);
