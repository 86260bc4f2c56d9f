/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager owns everything the daemon has: the event loop, the bus connection, the
 * requests in flight and the limits. A Request is one method call on its way through
 * the stages of ARCHITECTURE.md: parsed -> caller -> source -> probe (worker) -> policy
 * -> authorize (polkit) -> build (worker) -> reply.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

#include "conf.h"
#include "idmap.h"
#include "label.h"
#include "looptrack.h"
#include "mountbuild.h"
#include "owner.h"
#include "policy.h"
#include "registry.h"
#include "source.h"
#include "subscribers.h"
#include "usercache.h"
#include "um-error.h"
#include "worker.h"

/* How often registered mounts are checked without an event (--watch-interval). */
#define MANAGER_WATCH_INTERVAL_USEC (2ULL * 1000000ULL)

/* Ready workers kept by default (--worker-pool=). */
#define MANAGER_WORKER_POOL_SIZE 2U
#define MANAGER_WORKER_POOL_MAX 64U

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

struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *object_slot;

        Request *requests;
        unsigned n_requests;

        /* The administrator's configuration (limits, media root, policy per type), and
         * where it is read from again on SIGHUP. */
        Conf *conf;
        char *conf_path;
        bool conf_missing_ok;
        sd_event_source *sighup;

        LabelLsm lsm;      /* the labelling LSM, detected once at start (label.h) */
        WorkerPool *workers; /* every worker, and the ready ones (worker.h) */
        unsigned worker_pool_size; /* ready ones kept (--worker-pool=) */
        int stage_ns_fd;   /* the namespace builds stage their mounts in (mountns.h) */
        char *runtime_dir; /* root-only directory for staging mounts and the registry */
        LoopTrack loops;   /* loop devices made for users that still exist, by owner */
        OwnerMap owners;   /* /etc/subuid, read again when it changes (owner.h) */
        OwnerKnown authorized_owners; /* owners polkit said yes to since the start */

        Registry *registry;
        Subscribers subscribers;          /* who receives MountAdded/MountRemoved */
        UserCache users;                  /* callers' passwd entries, remembered a while */
        sd_bus_slot *name_owner_slot;     /* NameOwnerChanged: subscribers that went */
        sd_event_source *mountinfo_watch; /* POLLPRI on /proc/self/mountinfo */
        sd_event_source *reconcile_timer; /* periodic check of every registered mount */
        uint64_t watch_interval_usec;     /* its period; 0: no timer, events only */
        sd_device_monitor *device_monitor; /* block device removals, where udevd runs */
        unsigned n_cleanups;              /* lazy detaches in flight */
        bool warned_no_statmount;         /* said once that unmounts elsewhere go unseen */

        /* Life as a service (service.h). */
        uint64_t idle_timeout_usec;       /* exit after this long idle; 0: never */
        sd_event_source *idle_timer;      /* armed while idle */
        sd_event_source *service_post;    /* status and idle checks after each event */
        bool idle_exiting;                /* the name is released: exit once idle */
        bool stopping_sent;
        bool status_sent;
        unsigned status_requests;         /* what the last STATUS= said */
        size_t status_mounts;
        struct CallerCache *callers;      /* the bus's answers about callers, by name (caller.h) */
};

int manager_new(Manager **ret);

/* Reads the configuration from path (missing_ok: a missing file means the built-in
 * defaults) and makes it current. At start a bad file is fatal (-EINVAL, every problem
 * logged); on reload the previous configuration stays. */
int manager_load_conf(Manager *m, const char *path, bool missing_ok);
Manager *manager_free(Manager *m);

/* Creates the runtime directory (0700, root) if needed and checks that only root can write it. */
int manager_prepare_runtime_dir(Manager *m);

/* Makes the stage namespace and starts the pool of workers (the binary usermount-worker
 * next to this program's own). */
int manager_start_workers(Manager *m);

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured), exports the object, takes the name. */
int manager_connect_bus(Manager *m);

/* Loads the registry from the runtime directory and drops what no longer exists. */
int manager_load_registry(Manager *m);

/* Registers a mount attached for a request, emits MountAdded. Takes rec on success. */
int manager_register_mount(Manager *m, MountRecord *rec);

/* Forgets a registered mount (it was unmounted or vanished), emits MountRemoved, frees rec. */
void manager_forget_mount(Manager *m, MountRecord *rec);

/* Updates rec's mount point to where the kernel says the mount is now (it was renamed or
 * moved); 1 mounted, 0 gone, -errno. */
int manager_follow_mount(Manager *m, MountRecord *rec);

/* Checks every registered mount now: gone ones are forgotten, ones whose device vanished
 * are lazily detached in their namespace, moved ones followed. */
void manager_reconcile(Manager *m);

/* Sends READY=1 and runs the event loop until SIGTERM/SIGINT or the idle exit
 * (service.h); then STOPPING=1 and the registry saved. */
int manager_run(Manager *m);

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
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
