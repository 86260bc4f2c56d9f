/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "caller" stage of a request (docs/architecture.md, "Request flow"): who sent the call.
 *
 *   bus      the bus daemon's record of the sender's connection: uid, pid and LSM label as
 *            it took them from the socket when the connection was made (never from /proc,
 *            never from the message). Asked with an asynchronous
 *            org.freedesktop.DBus.GetConnectionCredentials, so the main loop never waits
 *            for the bus, and remembered per unique name: what the bus says about a name
 *            never changes while the name exists. A name is forgotten when its connection
 *            closes (NameOwnerChanged, manager-dbus.c) or when CALLER_CACHE_MAX others were used
 *            more recently.
 *   process  a pidfd of that pid (the bus's ProcessFD where it sends one; dbus-daemon 1.14
 *            does not, so pidfd_open()), then the process is checked: every uid of it
 *            (real, effective, saved, file system) is the connection's uid, and it is still
 *            alive after that was read, so what was read was about this very process and
 *            not about one that reused its pid. Its start time (polkit's unix-process
 *            subject checks it) and umask are read in between.
 *   user     the uid's passwd entry (usercache.h).
 *
 * Every method (OpenMount, MountFd, Mount, Unmount, ListMounts, Subscribe) goes through
 * all of it: a call from a process that has exited, or from a connection that outlived
 * the process that made it, is refused.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "call.h"
#include "um-error.h"
#include "usercache.h"

#define CALLER_CACHE_MAX 256   /* connections remembered */
#define CALLER_LOOKUPS_MAX 256 /* connections asked about at once */
#define CALLER_WAITERS_MAX 16  /* calls of one connection waiting for its answer */
#define CALLER_WAITING_MAX 256 /* calls waiting for an answer, of all connections */

/* What the bus says about one connection. */
typedef struct CallerCreds {
        uid_t uid;
        pid_t pid;
        char *label; /* LSM label (SELinux context or Smack label); NULL: none */
        uint64_t start_time; /* of the process pid was when first checked; 0: not yet. A
                              * later call whose pid names a process with another start time
                              * (the connecting process exited, its pid was reused) is
                              * refused */
} CallerCreds;

typedef struct CallerCache CallerCache;

/*
 * Continues the call's request (userdata) once its caller is known. r = 0: every field of
 * call->caller (call.h) is set. r < 0: error says why the caller cannot be known or is
 * refused (Failed, or LimitExceeded); call->caller.pid > 0 if the bus answered, and then
 * its uid is set too. r = -ECANCELED with no error: the cache is being freed (the daemon
 * is stopping) before the bus answered.
 */
typedef void (*CallerDone)(void *userdata, int r, const UmError *error);

/* An empty cache that asks bus (NULL: a cache that never asks, for tests), takes the time
 * from event and the callers' passwd entries from users (both borrowed, outliving the
 * cache); -ENOMEM. */
int caller_cache_new(sd_bus *bus, sd_event *event, UserCache *users, CallerCache **ret);

/* Frees c and everything in it. Calls still waiting for the bus get their done with
 * -ECANCELED and no error (the daemon is exiting; the bus tells their senders). NULL is
 * fine; returns NULL. */
CallerCache *caller_cache_free(CallerCache *c);

/*
 * Learns who sent call->message (a call on the cache's bus), fills call->caller and
 * continues with done(userdata, ...). On a cache hit done runs before this returns;
 * otherwise once the bus answered. done runs exactly once: a failure, even to send the
 * question, is reported through it. call must live until then.
 */
void caller_identify(CallerCache *c, MountCall *call, CallerDone done, void *userdata);

/* Records the start time of the process the connection name's pid was when it was first
 * checked (CallerCreds.start_time), unless one is recorded already. */
void caller_cache_note_start_time(CallerCache *c, const char *name, uint64_t start_time);

/* Forgets the unique name of a connection that closed. Whether it was cached. */
bool caller_cache_forget(CallerCache *c, const char *name);

/* The cached record of name, or NULL; counts as a use (the least recently used entry is
 * the one a full cache drops). The pointer is valid until the next change of c. */
const CallerCreds *caller_cache_get(CallerCache *c, const char *name);

/* Remembers creds (copied) for name, replacing what was there; when full, the least
 * recently used entry goes. 0 or -ENOMEM. */
int caller_cache_put(CallerCache *c, const char *name, const CallerCreds *creds);

/* Entries cached, and connections whose credentials were asked for and not yet answered
 * (requests wait for them: the daemon is not idle). Both 0 for NULL. */
size_t caller_cache_size(const CallerCache *c);
size_t caller_cache_pending(const CallerCache *c);

/*
 * Checks process pid as the sender of a call of uid: opens a pidfd of it (a dup of pidfd if
 * that is >= 0, else pidfd_open()), reads its ids, umask and start time, and checks that
 * every uid is uid and that the process is still alive afterwards. Returns 0 with the pidfd
 * in *ret_pidfd (owned by the caller), the start time in clock ticks after boot and the
 * umask (0077 if the kernel does not say); -ESRCH if the process is gone, -EPERM if it runs
 * with another uid, other -errno.
 */
int caller_check_process(pid_t pid, uid_t uid, int pidfd, int *ret_pidfd,
                         uint64_t *ret_start_time, mode_t *ret_umask);

