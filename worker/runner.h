/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The worker's side of the protocol (worker-proto.h), knowing nothing of what the jobs
 * do: it says HELLO, then reads one job at a time, checks it against the table it was
 * given, runs it and sends the reply, until the daemon closes the socket or a job marked
 * last has been answered. Between jobs the worker holds no fd but its socket, and what a
 * job's after_reply() prepared for the next (a driver's uid claim and sandbox).
 */
#pragma once

#include <stddef.h>

#include "usermount-names.h"
#include "worker-proto.h"

typedef struct WorkerJobType {
        WorkerJobLayout layout;
        const char *name;
        /*
         * Runs one job. input: layout.input_size bytes as sent (strings in it are the job's
         * to check); fds: the n_fds fds that came with it (n_fds <= layout.max_fds), owned
         * by the runner, which closes them afterwards (a job keeps one by setting it to
         * -EBADF); reply: layout.reply_size zeroed bytes to fill; *ret_fd: an fd to send
         * back, or -EBADF. Returns >= 0, or -errno with error set.
         */
        int (*run)(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                   int *ret_fd);
        /* Or NULL: runs after the reply of a job that succeeded was sent, before the next
         * job is read: work the daemon does not wait for (a prepared driver start). */
        void (*after_reply)(void);
} WorkerJobType;

/* The worker's socket: the daemon passes it as this fd. */
#define WORKER_SOCKET_FD 3

/*
 * The start of a worker's main(): checks that it was started the way the daemon starts
 * workers (argv: the daemon's pid; fd 3 a socket) and then dies with the daemon, keeps
 * no core dump and holds no fd but its socket. Returns 0; 2 (after printing what the
 * program is, with what) when run another way; 1 when the daemon is gone already.
 */
int worker_runner_start(int argc, char *argv[], const char *what);

/* The layout hash of a table (HELLO). */
uint32_t worker_runner_layout(const WorkerJobType *types, size_t n_types);

/* Serves the daemon on sock until it is done; never returns (exit status 0 after an
 * orderly end, 1 after a protocol error, which the daemon also hears as a REPLY). */
_noreturn_ void worker_runner_run(int sock, const WorkerJobType *types, size_t n_types);
