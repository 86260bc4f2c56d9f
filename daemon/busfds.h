/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file descriptors that come with bus messages, kept so that the main loop never
 * closes one (docs/style.md, "never blocks on anything a caller controls").
 *
 * Every close() of a file calls its filesystem's flush, and on FUSE that is a request to
 * the file's server, which a caller may run and never answer (the kernel then waits
 * uninterruptibly: request_wait_answer < fuse_flush < filp_flush < close). sd-bus closes a
 * message's fds itself when the message is freed, and a caller may attach fds to any call,
 * named by its arguments or not (dbus-daemon forwards up to 16). So:
 *
 *  1. BusFds runs the connection in the event loop itself (instead of
 *     sd_bus_attach_event()), and notes the fds that are open right before each
 *     sd_bus_process();
 *  2. its filter, the first code to see a message, finds the fds the message brought (the
 *     ones open now that were not before: sd-bus reads one message per call and opens
 *     nothing else), and holds the message (a reference) if one of them is of a kind whose
 *     close can wait on someone: a file, directory or device (on whatever filesystem), or
 *     a socket other than AF_UNIX and AF_NETLINK (a TCP socket lingers on close). Pipes,
 *     Unix sockets, anonymous inodes (eventfd, pidfd, ...), namespace files and O_PATH fds
 *     are closed by sd-bus as usual;
 *  3. a request that uses the message's fds (the source of a mount) borrows them from the
 *     message, never duplicates or closes them, and says when it is done
 *     (busfds_claim(), busfds_release()); a message no request claimed is done once it was
 *     dispatched;
 *  4. then, for each such fd, a thread of its own puts a marker (the read end of a new
 *     pipe) into the fd's slot with dup3(), which swaps the slot at once and then closes
 *     the caller's file, in that thread; once every slot holds its marker, the message is
 *     let go, and sd-bus closes the pipes.
 *
 * A close that waits on a server that never answers keeps its thread until the server
 * dies or aborts; such closes are counted per owner (whose request claimed the message,
 * else the sender's uid as far as the daemon knows it), and count as that owner's
 * requests in flight (MaxRequestsPerUser=), so they cost their owner alone. At most
 * BUSFDS_MAX_THREADS threads wait at once, BUSFDS_MAX_THREADS_PER_OWNER of one owner;
 * past that, a message keeps its fds (held by the message, in the daemon's fd table,
 * whose limit the daemon raises at start) until one of that owner's returns.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "macro.h"

/* The most threads that close callers' files at once, in all and per owner: one owner's
 * closes that hang (a FUSE server of theirs) leave threads for everybody else's. */
#define BUSFDS_MAX_THREADS 256
#define BUSFDS_MAX_THREADS_PER_OWNER 32

typedef struct BusFds BusFds;

/*
 * Runs bus in event at priority (replaces sd_bus_attach_event()) and installs the filter.
 * The first filter of the connection must be this one: add it before any other. When the
 * connection fails, on_disconnect(userdata) is called once. -errno. Nothing else may read
 * the connection: no sd_bus_process(), and no synchronous call (sd_bus_call(),
 * sd_bus_request_name()), which reads whatever arrives before its answer past the filter;
 * the daemon's own calls are asynchronous.
 */
int busfds_new(sd_bus *bus, sd_event *event, int64_t priority, void (*on_disconnect)(void *),
               void *userdata, BusFds **ret);

/* Lets go of the connection's event sources. Messages still held are let go as they are
 * (their fds then close in the caller: only at exit). Accepts NULL. */
BusFds *busfds_free(BusFds *b);

/* A request uses m's fds until busfds_release(): they stay open, in m, and closes that
 * hang later are charged to owner. Does nothing for a message that brought no fd of a
 * kind it holds. */
void busfds_claim(BusFds *b, sd_bus_message *m, uid_t owner);

/* The request is done with m's fds: they are let go off the main loop (see above). */
void busfds_release(BusFds *b, sd_bus_message *m);

/* Closes of owner's fds (all with (uid_t) -1) that have not finished: normally 0, unless a
 * FUSE server (or a network filesystem) does not answer them. These two accept NULL. */
size_t busfds_pending(const BusFds *b, uid_t owner);

/* How a message no request claimed finds its owner: owner_of(sender) returns the uid of
 * the bus name sender if known, or (uid_t) -1 (senders of unknown uid share one count). */
void busfds_set_owner_lookup(BusFds *b, uid_t (*owner_of)(const char *sender, void *userdata),
                             void *userdata);

/* Messages held now (for tests and the status). */
size_t busfds_held(const BusFds *b);

DEFINE_TRIVIAL_CLEANUP_FUNC(BusFds *, busfds_free);
