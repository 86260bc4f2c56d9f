/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Request is one method call on its way through the stages of docs/architecture.md
 * ("Request flow"): parsed (request-dbus.c) -> caller (caller.c) -> limits (limitcount.c) ->
 * probe (worker) -> policy -> authorize (polkit) -> build (worker) -> attach (worker) ->
 * reply. The first two build its MountCall (call.h), which stays as they built it; the
 * Request holds the rest, the state in flight. pipeline.c has the stages top-down; this
 * is the object and its own life (request.c).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "admission.h"
#include "call.h"
#include "conf.h"
#include "driverpolicy.h"
#include "driverscope.h"
#include "drivertable.h"
#include "idmap.h"
#include "jobproto.h"
#include "mountopts.h"
#include "registry.h"
#include "source.h"
#include "um-error.h"
#include "workerpool.h"

typedef struct Manager Manager;
typedef struct Request Request;

typedef enum RequestStage {
        REQUEST_NEW,          /* parsed, caller known, limits next */
        REQUEST_PROBING,
        REQUEST_AUTHORIZING,
        REQUEST_BUILDING,
        REQUEST_ATTACHING,
        REQUEST_DETACHING,
        REQUEST_DONE,         /* answered */
        _REQUEST_STAGE_MAX,
} RequestStage;

/* Who answers a request that did not come through org.freedesktop.UserMount1: the
 * UDisks2 front (udisks-methods.c) replies in its own words. Each function answers the
 * call only; the pipeline frees the request after. */
typedef struct RequestFront {
        void (*mounted)(Request *req, const MountRecord *rec); /* attached and registered */
        void (*done)(Request *req); /* Unmount, Eject, PowerOff: done */
        void (*failed)(Request *req, const UmError *error);
        /* LoopSetup: the device made, its fd and the fd of the image's claim, which the
         * front takes (it keeps the device: auto-clearing, it goes when the fd and every
         * mount of it are gone; and the claim as long). */
        void (*loop_set_up)(Request *req, const LoopSetupReply *reply, int loop_fd,
                            int claim_fd);
} RequestFront;

struct Request {
        Manager *manager;
        Conf *conf;             /* the configuration it started with (a reload never changes it) */
        Request *next, *prev;
        RequestStage stage;
        uint64_t started_usec;   /* CLOCK_MONOTONIC at request_new() */
        uint64_t stage_usec;     /* when the current stage began */

        /* Who asks and what (call.h): built by the bus edge and the caller stage, read but
         * never changed by the stages below. */
        MountCall call;

        /* Whom it is charged to. */
        uid_t owner;          /* whom the per-user limits charge: the caller's uid, or the user
                               * /etc/subuid delegates it to, as it was when the request started
                               * (owner.h) */
        bool unauthorized;    /* charged to MaxUnauthorizedRequests= until polkit says yes */
        bool subscribed;      /* Subscribe: this call added the sender's subscription, which
                               * goes again if the call is refused (request_fail()) */

        /* What was found and decided. */
        int userns_fd;          /* idmap namespace: call.params.userns_fd, handed over by the bus
                                 * edge when the request starts; let go of once the probe has
                                 * read its maps (request_drop_userns()) */
        int device_fd;          /* Mount: the device the probe worker opened, owned; the source
                                 * from then on (request_source_fd()) */
        SourceInfo source;      /* what the source is, as the probe worker found it */
        char *source_path;      /* Mount: the device node the path led to; unmount-others: the
                                 * registered mount's device; NULL: call.source_path */
        bool read_only;         /* call.params.read_only, or the source is read-only */
        SourceProbe probe;
        SourcePartition partition; /* of an image: the partition chosen by the probe, if any */
        MountOptions mount_options;
        MountIdmap idmap;       /* namespace: the maps read and checked by the probe worker */
        const char *actions[ADMISSION_ACTIONS_MAX]; /* polkit actions still to check, in order */
        DriverDecision driver;  /* which driver parses the filesystem (driverpolicy.h) */
        const FuseDriver *fuse_driver; /* userspace: the one installed for the type (static) */
        bool files_as_caller;   /* userspace: every file appears as the caller's */
        unsigned n_actions_done;
        int mount_fd;           /* the locked mount, between build and attach */
        MountRecord *record;    /* what was mounted (owned until registered) */

        /* Unmount: the registered mount it is about, by id (records may go meanwhile). */
        uint64_t unmount_id;
        bool unmount_remove_dir;
        uint64_t unmount_devnum; /* the UDisks2 front's: the mount must be of this device (0:
                                  * any) */
        /* ListMounts: whether the caller may see every user's mounts. */
        bool list_all;
        /* An image request that will attach a loop device not yet in Manager.loops. */
        bool wants_loop;
        /* A request served by a userspace driver not yet in Manager.drivers. */
        bool wants_driver;
        /* The driver started for it, in Manager.drivers, until it serves the mount built
         * (then 0): killed if the request ends without it. */
        pid_t driver_pid;
        uint64_t driver_start;
        DriverScope *scope;   /* the driver's scope being made (driverscope.h) */
        BuildJob *build_job;  /* userspace: the job of START_DRIVER, sent again as BUILD */

        Worker *worker;
        sd_bus_slot *polkit_slot;
        /* Mount of a loop device the UDisks2 front set up (LoopSetup) for this uid, from
         * an image it passed: judged as that image (policy, driver, polkit), not as a
         * disk of the system's; (uid_t) -1 otherwise. */
        uid_t loop_setup_by;
        uint64_t loop_diskseq;  /* and its binding, the one the worker may open */
        /* Eject, PowerOff (the UDisks2 front): the drive's devices, owned. */
        DriveEjectJob *eject_job;
        /* LoopSetup: the device made, between its job and the claim's (owned); its fd is
         * mount_fd meanwhile. */
        LoopSetupReply *loop_reply;
        /* NULL: the answers are org.freedesktop.UserMount1's (request-dbus.h). */
        const RequestFront *front;
        void *front_data;     /* the front's, for its answers; never freed here */
};

/* A new request for a call of method to message (call_init()); NULL if out of memory. */
Request *request_new(Manager *m, CallMethod method, sd_bus_message *message);

/* The source's fd: the device the probe worker opened (Mount), else the caller's. */
int request_source_fd(const Request *req);
/* Lets go of req->userns_fd: closed when the daemon opened it, forgotten when the caller
 * passed it (it is the message's). */
void request_drop_userns(Request *req);
/* What the source is: the device node the probe found (Mount), else what the caller's fd
 * referred to; NULL before Mount's probe. */
const char *request_source_path(const Request *req);
/* What a request is about, for logs: the device path, the unmount point, or the source. */
const char *request_what(const Request *req);

/* Moves req to stage, logging the transition and the time the last stage took (debug). */
void request_set_state(Request *req, RequestStage stage);

/* Takes req into m's list of requests in flight (what the limits and idleness count). */
void request_link(Request *req);

/* Frees req and what it holds (removing it from its manager's list); a driver started for
 * it that does not serve a registered mount is ended. NULL is fine; returns NULL. */
Request *request_free(Request *req);

/* Frees every request in flight of m: at exit, before manager_free(). */
void request_free_all(Manager *m);

/* Answers req's method call with error and frees req (removing it from its manager). */
void request_fail(Request *req, const UmError *error);

/* The same with a Failed error "Could not <what>: <strerror(-r)>.". */
void request_fail_errno(Request *req, int r, const char *what);

DEFINE_TRIVIAL_CLEANUP_FUNC(Request *, request_free);
