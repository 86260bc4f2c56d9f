/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A request's limits counted (limitcount.h): what is in flight and registered, per owner and
 * overall, handed to admission.h's checks against the configured limits.
 */
#include "busfds.h"
#include "limitcount.h"
#include "manager.h"
#include "request.h"

static unsigned count_requests(Manager *m, uid_t owner) {
        unsigned n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if (r->owner == owner)
                        n++;
        return n;
}

/* Requests of owner in flight (all with (uid_t) -1) that will attach a loop device. */
static unsigned count_pending_loops(Manager *m, uid_t owner) {
        unsigned n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if (r->wants_loop && (owner == (uid_t) -1 || r->owner == owner))
                        n++;
        return n;
}

/* Requests of owner in flight (all with (uid_t) -1) that will start a userspace driver. */
static size_t count_pending_drivers(Manager *m, uid_t owner) {
        size_t n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if (r->wants_driver && (owner == (uid_t) -1 || r->owner == owner))
                        n++;
        return n;
}

/* Mount and MountFd requests of owner in flight (all with (uid_t) -1): mounts to come. */
static size_t count_pending_mounts(Manager *m, uid_t owner) {
        size_t n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if ((r->call.method == METHOD_MOUNT || r->call.method == METHOD_MOUNT_FD) &&
                    (owner == (uid_t) -1 || r->owner == owner))
                        n++;
        return n;
}

/* Registered mounts of owner: records keep the caller's own uid, mapped as they are counted. */
static size_t count_mounts_of(Manager *m, uid_t owner) {
        size_t n = 0;

        for (size_t i = 0; m->registry && i < m->registry->n_records; i++)
                if (owner_map_lookup(&m->owners, m->registry->records[i]->owner_uid) == owner)
                        n++;
        return n;
}

/* Whether req is charged to MaxUnauthorizedRequests= from its start: a mount request (they
 * probe before polkit is asked) of anybody but root whose owner polkit has not said yes to
 * since the daemon started. Unmount, ListMounts, Subscribe, LoopSetup, Eject and PowerOff
 * start no worker before polkit answers. */
bool limitcount_charges_unauthorized(const Request *req) {
        const Manager *m = req->manager;

        return req->call.caller.uid != 0 && req->call.method != METHOD_UNMOUNT &&
               req->call.method != METHOD_LIST_MOUNTS && req->call.method != METHOD_SUBSCRIBE &&
               req->call.method != METHOD_LOOP_SETUP && req->call.method != METHOD_DRIVE_EJECT &&
               !owner_known_has(&m->authorized_owners, req->owner);
}

static unsigned count_unauthorized(Manager *m) {
        unsigned n = 0;

        for (Request *r = m->requests; r; r = r->next)
                if (r->unauthorized)
                        n++;
        return n;
}

static LimitSubject limit_subject(const Request *req) {
        return (LimitSubject) {
                .uid = req->call.caller.uid,
                .owner = req->owner,
                .mounts = req->call.method == METHOD_MOUNT || req->call.method == METHOD_MOUNT_FD,
                .charges_unauthorized = limitcount_charges_unauthorized(req),
        };
}

int limitcount_check_request(Request *req, UmError *error) {
        Manager *m = req->manager;
        const LimitSubject s = limit_subject(req);
        const LimitCounts c = {
                .requests = m->n_requests,
                /* A close of the owner's files that waits on a FUSE server is a request
                 * of theirs that has not ended (busfds.h). */
                .owner_requests = count_requests(m, req->owner) +
                                  (unsigned) (busfds_pending(m->busfds, req->owner) +
                                             busfds_pending(m->udisks_busfds, req->owner)),
                .registered_mounts = m->registry->n_records,
                .mounts = m->registry->n_records + count_pending_mounts(m, (uid_t) -1),
                .owner_mounts = count_mounts_of(m, req->owner) +
                                count_pending_mounts(m, req->owner),
                .unauthorized = count_unauthorized(m),
        };

        return admission_check_request(&m->conf->limits, &s, &c, error);
}

/* LimitExceeded when one more loop device for req (an image) would pass the loop device
 * limits. Called once the probe worker has found that the source is an image. */
int limitcount_check_loops(Request *req, UmError *error) {
        Manager *m = req->manager;
        const LimitSubject s = limit_subject(req);
        int r;

        /* Counted in memory; only a refusal looks at sysfs, for the devices released since
         * the last reconcile (a detached mount's loop device goes when its caller closes it,
         * and nobody tells the daemon). */
        for (int pruned = 0;; pruned = 1) {
                r = admission_check_loops(&m->conf->limits, &s,
                                       looptrack_count(&m->loops, req->owner) +
                                               count_pending_loops(m, req->owner),
                                       looptrack_count(&m->loops, (uid_t) -1) +
                                               count_pending_loops(m, (uid_t) -1),
                                       error);
                if (r >= 0 || pruned || looptrack_prune(&m->loops) == 0)
                        return r;
                *error = (UmError) {};
        }
}

/* LimitExceeded when one more userspace driver for req would pass the driver limits. The
 * drivers' exit watches keep the table current; a refusal looks again at the pidfds, for
 * drivers whose mount went a moment ago and whose watch has not run yet. */
int limitcount_check_drivers(Request *req, UmError *error) {
        Manager *m = req->manager;
        const LimitSubject s = limit_subject(req);
        int r;

        for (int pruned = 0;; pruned = 1) {
                r = admission_check_drivers(&m->conf->limits, &s,
                                            drivertrack_count(&m->drivers, req->owner) +
                                                    count_pending_drivers(m, req->owner),
                                            drivertrack_count(&m->drivers, (uid_t) -1) +
                                                    count_pending_drivers(m, (uid_t) -1),
                                            error);
                if (r >= 0 || pruned || drivertrack_prune(&m->drivers) == 0)
                        return r;
                *error = (UmError) {};
        }
}

/* LimitExceeded when giving req's worker one more job would pass a worker limit. Workers
 * that were given up on (timed out) count until they really exit: one stuck on a hung
 * device is still a process. */
int limitcount_check_workers(Request *req, UmError *error) {
        Manager *m = req->manager;
        const LimitSubject s = limit_subject(req);

        return admission_check_workers(&m->conf->limits, &s, req->unauthorized,
                                    worker_pool_count_busy(m->workers, (uid_t) -1),
                                    worker_pool_count_busy(m->workers, req->owner),
                                    worker_pool_count_busy_unauthorized(m->workers), error);
}
