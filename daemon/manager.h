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
#include <systemd/sd-event.h>

#include "policy.h"
#include "source.h"
#include "um-error.h"
#include "worker.h"

typedef struct Manager Manager;
typedef struct Request Request;

typedef enum IdmapMode {
        IDMAP_NONE,
        IDMAP_USER,
        IDMAP_NAMESPACE,
} IdmapMode;

/* The a{sv} params of a mount call, validated (DBUS-API.md, "params keys"). */
typedef struct MountParams {
        char *target;     /* NULL if not given */
        bool read_only;
        bool exec;
        bool interactive;
        IdmapMode idmap;
        int userns_fd;    /* -EBADF if not given; owned */
} MountParams;

typedef enum RequestStage {
        REQUEST_PROBING,
        REQUEST_AUTHORIZING,
        REQUEST_BUILDING,
} RequestStage;

struct Request {
        Manager *manager;
        Request *next, *prev;
        RequestStage stage;

        sd_bus_message *message; /* the method call; the reply goes to it */

        /* Who asks, from the bus (never from the message's arguments). */
        uid_t uid;
        gid_t gid;
        pid_t pid;

        /* What is asked. */
        int source_fd;        /* dup of the caller's fd, owned */
        SourceInfo source;
        char *source_path;    /* what the fd refers to, for logs and polkit details */
        char *fstype;         /* requested type, "" if none */
        char *options;        /* caller's option string */
        MountParams params;

        /* What was found and decided. */
        SourceProbe probe;
        MountOptions mount_options;
        const char *actions[2]; /* polkit actions still to check, in order */
        unsigned n_actions_done;

        Worker *worker;
        sd_bus_slot *polkit_slot;
};

struct Manager {
        sd_event *event;
        sd_bus *bus;
        sd_bus_slot *object_slot;

        Request *requests;
        unsigned n_requests;

        /* Limits on what users can make the daemon allocate (ARCHITECTURE.md). */
        unsigned max_requests;         /* in flight, all users */
        unsigned max_requests_per_uid; /* in flight, one uid */
        uint64_t worker_timeout_usec;

        char *runtime_dir; /* root-only directory for staging mounts */
};

int manager_new(Manager **ret);
Manager *manager_free(Manager *m);

/* Creates the runtime directory (0700, root) if needed and checks that only root can write it. */
int manager_prepare_runtime_dir(Manager *m);

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS honoured), exports the object, takes the name. */
int manager_connect_bus(Manager *m);

/* Runs the event loop until SIGTERM/SIGINT. */
int manager_run(Manager *m);

/*
 * Takes ownership of a parsed request, checks limits and starts it. On failure the
 * request is answered with the error and freed; returns nothing useful to the bus edge.
 */
void manager_start_request(Manager *m, Request *req);

/* Number of requests in flight for uid. */
unsigned manager_count_requests(Manager *m, uid_t uid);

Request *request_new(Manager *m, sd_bus_message *message);
Request *request_free(Request *req);

/* Answers req's method call with error and frees req (removing it from its manager). */
void request_fail(Request *req, const UmError *error);

DEFINE_TRIVIAL_CLEANUP_FUNC(Request *, request_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);
