/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Request is one method call on its way through the stages of ARCHITECTURE.md: parsed
 * (bus.c) -> caller (caller.c) -> limits -> probe (worker) -> policy -> authorize (polkit)
 * -> build (worker) -> attach (worker) -> reply. request.c has the stages top-down.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "conf.h"
#include "idmap.h"
#include "mountbuild.h"
#include "policy.h"
#include "registry.h"
#include "source.h"
#include "um-error.h"
#include "worker.h"

typedef struct Manager Manager;
typedef struct Request Request;

/* The a{sv} params of a mount call, validated (DBUS-API.md, "params keys"). */
typedef struct MountParams {
        char *target;     /* NULL if not given */
        bool read_only;
        bool exec;
        bool interactive;
        IdmapMode idmap;
        bool idmap_given; /* idmap was in params (not the default) */
        int userns_fd;    /* idmap namespace: the caller's (or given) user namespace, -EBADF
                           * otherwise; owned; closed once its maps are read */
        bool userns_given; /* userns_fd is params["userns"]: anything the caller passed, which
                            * only a worker may look at (idmap_check_userns_fd()) */
} MountParams;

typedef enum RequestMethod {
        METHOD_OPEN_MOUNT,  /* detached locked mount fd for the caller */
        METHOD_MOUNT_FD,    /* caller's fd, attached for it and registered */
        METHOD_MOUNT,       /* device path opened by the daemon, attached and registered */
        METHOD_UNMOUNT,
        METHOD_LIST_MOUNTS,
        METHOD_SUBSCRIBE,   /* ListMounts' authorization, then a subscription */
} RequestMethod;

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

struct Request {
        Manager *manager;
        Conf *conf;             /* the configuration it started with (a reload never changes it) */
        Request *next, *prev;
        RequestMethod method;
        RequestStage stage;
        uint64_t started_usec;   /* CLOCK_MONOTONIC at request_new() */
        uint64_t stage_usec;     /* when the current stage began */

        sd_bus_message *message; /* the method call; the reply goes to it */

        /* Who asks, from the bus (never from the message's arguments). */
        uid_t uid;
        uid_t owner;          /* whom the per-user limits charge: uid, or the user /etc/subuid
                               * delegates it to, as it was when the request started (owner.h) */
        bool unauthorized;    /* charged to MaxUnauthorizedRequests= until polkit says yes */
        gid_t gid;
        bool gid_known;       /* gid is the primary group from the passwd entry, not a stand-in */
        pid_t pid;
        int caller_pidfd;     /* the process that sent the call (caller.h) */
        uint64_t caller_start_time; /* its start time, clock ticks after boot (caller.h) */
        mode_t caller_umask;  /* for umask= on filesystems without Unix owners */
        char *user_name;      /* for the default mount point */
        char *caller_label;   /* the peer's LSM label from the bus (SELinux context or Smack
                               * label); NULL when it has none (label.h) */

        /* What is asked. */
        char *device_path;    /* Mount: the device path as given */
        int source_fd;        /* dup of the caller's fd (or the device the daemon opened), owned */
        SourceInfo source;
        char *source_path;    /* what the fd refers to, for logs and polkit details */
        char *fstype;         /* requested type, "" if none */
        char *options;        /* caller's option string */
        MountParams params;

        /* What was found and decided. */
        SourceProbe probe;
        MountOptions mount_options;
        MountIdmap idmap;       /* namespace: the maps read and checked by the probe worker */
        const char *actions[2]; /* polkit actions still to check, in order */
        unsigned n_actions_done;
        int mount_fd;           /* the locked mount, between build and attach */
        MountRecord *record;    /* what was mounted (owned until registered) */

        /* Unmount: the registered mount it is about, by id (records may go meanwhile). */
        uint64_t unmount_id;
        char *unmount_point;
        bool unmount_remove_dir;
        bool force;
        /* ListMounts: whether the caller may see every user's mounts. */
        bool list_all;
        /* An image request that will attach a loop device not yet in Manager.loops. */
        bool wants_loop;

        Worker *worker;
        sd_bus_slot *polkit_slot;
};

/*
 * Takes ownership of a parsed request, checks limits and starts it. On failure the
 * request is answered with the error and freed; returns nothing useful to the bus edge.
 */
void manager_start_request(Manager *m, Request *req);

/* Number of requests in flight charged to owner (Request.owner). */
unsigned manager_count_requests(Manager *m, uid_t owner);

Request *request_new(Manager *m, sd_bus_message *message);

/* Moves req to stage, logging the transition and the time the last stage took (debug). */
void request_set_state(Request *req, RequestStage stage);
Request *request_free(Request *req);

/* Answers req's method call with error and frees req (removing it from its manager). */
void request_fail(Request *req, const UmError *error);

DEFINE_TRIVIAL_CLEANUP_FUNC(Request *, request_free);
