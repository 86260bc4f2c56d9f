/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager owns the daemon's objects: the event loop, the bus connection, the
 * configuration, the workers, the registry, the trackers of loop devices and drivers, the
 * caches of callers and users, and the list of requests in flight. It makes them, loads
 * them at start and frees them; it includes none of the stages that use them (the bus
 * edge manager-dbus.h, the pipeline pipeline.h, reconcile.h, service.h), which reach it
 * through its fields.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>
#include <systemd/sd-event.h>

#include "busfds.h"
#include "conf.h"
#include "drivertrack.h"
#include "idmap.h"
#include "label.h"
#include "looptrack.h"
#include "owner.h"
#include "policy.h"
#include "registry.h"
#include "source.h"
#include "subscribers.h"
#include "usercache.h"
#include "um-error.h"
#include "workerpool.h"

typedef struct Request Request; /* request.h */

/* How often registered mounts are checked without an event (--watch-interval). */
#define MANAGER_WATCH_INTERVAL_USEC (2ULL * 1000000ULL)

/* Ready workers kept by default (--worker-pool=). */
#define MANAGER_WORKER_POOL_SIZE 2U
#define MANAGER_WORKER_POOL_MAX 64U

typedef struct Manager Manager;

struct Manager {
        sd_event *event;
        sd_bus *bus;
        BusFds *busfds;   /* the bus in the event loop, and the fds that messages bring */
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
        WorkerPool *workers; /* every worker, and the ready ones (workerpool.h) */
        unsigned worker_pool_size; /* ready ones kept (--worker-pool=) */
        int stage_ns_fd;   /* the namespace builds stage their mounts in (mountns.h) */
        char *runtime_dir; /* root-only directory for staging mounts and the registry */
        LoopTrack loops;   /* loop devices made for users that still exist, by owner */
        DriverTrack drivers; /* userspace drivers started for users that still run */
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
        bool erofs_file_unsupported;      /* a build found that this kernel cannot mount erofs
                                           * images from files: they get loop devices */

        /* Life as a service (service.h). */
        uint64_t idle_timeout_usec;       /* exit after this long idle; 0: never */
        sd_event_source *idle_timer;      /* armed while idle */
        sd_event_source *service_post;    /* status and idle checks after each event */
        bool idle_exiting;                /* the name is being released: exit once idle */
        bool name_releasing;              /* ReleaseName sent, not answered yet */
        bool stopping_sent;
        bool status_sent;
        unsigned status_requests;         /* what the last STATUS= said */
        size_t status_mounts;
        struct CallerCache *callers;      /* the bus's answers about callers, by name (caller.h) */

        /* The UDisks2 front (udisks-front.h), when it runs: its own connection and the fds
         * its messages bring, and what it hears of the registry (a device's mounts
         * changed: called after the change, before the reply). */
        struct UDisksFront *udisks;
        sd_bus *udisks_bus;
        BusFds *udisks_busfds;
        void (*on_mounts_changed)(void *udisks, uint64_t devnum);
};

int manager_new(Manager **ret);

/* Frees m; the requests in flight must be gone (request_free_all()). */
Manager *manager_free(Manager *m);

/* Reads the configuration from path (missing_ok: a missing file means the built-in
 * defaults) and makes it current. At start a bad file is fatal (-EINVAL, every problem
 * logged); on reload the previous configuration stays. */
int manager_load_conf(Manager *m, const char *path, bool missing_ok);

/* Creates the runtime directory (0700, root) if needed and checks that only root can write it. */
int manager_prepare_runtime_dir(Manager *m);

/* Makes the stage namespace and starts the pool of workers (the binary usermount-worker
 * next to this program's own). */
int manager_start_workers(Manager *m);

/* Loads the registry from the runtime directory and drops what no longer exists; counts
 * the loop devices and adopts the drivers of the mounts left (reconcile_watch() then
 * watches them). */
int manager_load_registry(Manager *m);

/* Registers a mount attached for a request, emits MountAdded. Takes rec on success. */
int manager_register_mount(Manager *m, MountRecord *rec);

/* Forgets a registered mount (it was unmounted or vanished), emits MountRemoved, frees rec. */
void manager_forget_mount(Manager *m, MountRecord *rec);

/* The BusFds of the connection message came on: the front's, or the main one. */
BusFds *manager_busfds_of(Manager *m, sd_bus_message *message);

/* Reads /etc/subuid again if it changed since it was last read (owner.h): one stat() per
 * request. */
void manager_refresh_owners(Manager *m);

/* SIGHUP: reads the configuration again (requests in flight keep theirs; a file with
 * errors changes nothing) and tells subscribers the SupportedFilesystems may differ. */
void manager_reload(Manager *m);

DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
