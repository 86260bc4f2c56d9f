/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Starting processes from a file descriptor table that holds none of the callers' files.
 *
 * A process starts with a copy of its parent's fd table, and the copy is closed before (or
 * during) exec: a close of every fd in it. While requests are in flight the daemon's table
 * holds callers' files (the fds of their messages, busfds.h), and the close of a copy of
 * one on a FUSE mount waits on the caller's FUSE server; posix_spawn() waits for the child
 * until it has exec'd, so a caller could stall the main loop through any worker start.
 *
 * So workers are started by a thread of the daemon's own whose fd table is private
 * (unshare(CLONE_FILES), the thread's, not a namespace) and holds nothing but stdio and
 * its socket to the main thread: the child's copy is of that table. The main thread asks
 * over a socket pair and gets the child's pid and its end of the child's socket back; the
 * child is the daemon's child (the thread's process), reaped by the event loop as before.
 */
#pragma once

#include <sys/types.h>

#include "macro.h"

typedef struct Spawner Spawner;

/* Starts the thread. Before any caller's fd can be in the table: at start. -errno. */
int spawner_new(Spawner **ret);

/* Ends the thread. Accepts NULL. */
Spawner *spawner_free(Spawner *s);

/*
 * Starts path with argv (argv[0] first, NULL-terminated; at most SPAWNER_ARGS_MAX
 * arguments of SPAWNER_ARG_MAX bytes) and the environment of the daemon, its signal mask
 * empty and every signal at its default, stdio the daemon's, and at fd 3 one end of a new
 * SOCK_SEQPACKET pair, whose other end is *ret_fd (O_CLOEXEC). *ret_pid: the child. -errno
 * (what posix_spawn() said, or the socket's error).
 */
#define SPAWNER_ARGS_MAX 8
#define SPAWNER_ARG_MAX 512
int spawner_spawn(Spawner *s, const char *path, char *const argv[], pid_t *ret_pid,
                  int *ret_fd);

DEFINE_TRIVIAL_CLEANUP_FUNC(Spawner *, spawner_free);
