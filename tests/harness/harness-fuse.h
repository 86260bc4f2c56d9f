/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A controllable slow or hung "device" for fault tests: a tiny FUSE filesystem, served by
 * a process of its own (forked by the test process, so that the test process itself stays
 * single-threaded and safe to fork callers from) and mounted in the harness's private mount namespace under
 * harness_tmpdir(), that serves one file, a copy of a real image. A caller opens that file
 * and passes the fd to the daemon; the daemon's probe reads it directly and its loop
 * device reads it through FUSE, so a closed gate makes the probe or the mount hang for
 * real (FUSE requests are served with direct I/O: nothing is answered from the page
 * cache).
 *
 * The gate decides which reads wait until it opens again:
 *   - HARNESS_FUSE_GATE_ALL: every read (the probe worker hangs in its first read);
 *   - HARNESS_FUSE_GATE_DEVICE: only reads issued by kernel threads, i.e. a loop device's
 *     I/O, so probing succeeds and the mount (the build worker) hangs.
 *
 * A read already sent to the server cannot be interrupted, not even by SIGKILL: a process
 * blocked in one stays in D state until the read is answered or the connection is
 * aborted. harness_fuse_abort() ends every such read with an error, and
 * harness_fuse_free() always aborts and unmounts. If the test process dies, the server
 * dies with it (PR_SET_PDEATHSIG) and the kernel aborts the connection when its /dev/fuse
 * fd closes (it is O_CLOEXEC, so no spawned process holds it), so nothing stays stuck.
 *
 * Must be used after harness_init(), from the test's main thread. Functions returning int return
 * >= 0 on success and -errno on failure, logging the cause to stderr.
 */
#pragma once

#include <stdbool.h>

#include <glib.h>

typedef enum HarnessFuseGate {
        HARNESS_FUSE_GATE_OPEN,   /* every read is answered at once */
        HARNESS_FUSE_GATE_ALL,    /* every read waits */
        HARNESS_FUSE_GATE_DEVICE, /* reads by kernel threads (loop devices) wait */
        HARNESS_FUSE_GATE_METADATA, /* getattr and statfs of the image wait (fstat, fstatfs) */
} HarnessFuseGate;

typedef struct HarnessFuse HarnessFuse;

/* Copies image into memory and mounts a new FUSE filesystem (allow_other, so that
 * unprivileged callers can open the file) on a new directory under <tmpdir>/fuse, serving
 * it as one file, mode 0666, owned by root. ret owned by the caller (harness_fuse_free()). */
int harness_fuse_new(const char *image, HarnessFuse **ret);

/* The path of the served image (owned by f). */
const char *harness_fuse_image_path(HarnessFuse *f);

/* Sets the gate; opening it (HARNESS_FUSE_GATE_OPEN) releases every waiting read. */
void harness_fuse_set_gate(HarnessFuse *f, HarnessFuseGate gate);

/* Flushes (the request every close() of the file sends) from the process tgid, and with
 * children from its children too (a daemon's workers), wait until this is called again:
 * tgid 0 holds
 * everybody's (dbus-daemon's too, which closes what it forwards), -1 nobody's (the
 * default). A process that closes the file then waits in close(), uninterruptibly, as for
 * a FUSE server that never answers; harness_fuse_abort() and harness_fuse_free() end the
 * wait too. */
void harness_fuse_hold_flush(HarnessFuse *f, pid_t tgid, bool children);

/* Flushes waiting now; waits until at least n do: 0, or -ETIMEDOUT after timeout_ms. */
unsigned harness_fuse_n_flush_waiting(HarnessFuse *f);
int harness_fuse_wait_flush_waiting(HarnessFuse *f, unsigned n, int timeout_ms);

/* Reads waiting at the gate now, and reads answered so far. */
unsigned harness_fuse_n_waiting(HarnessFuse *f);
unsigned harness_fuse_n_served(HarnessFuse *f);

/* Waits until at least n reads wait at the gate: 0, or -ETIMEDOUT after timeout_ms. */
int harness_fuse_wait_waiting(HarnessFuse *f, unsigned n, int timeout_ms);

/* Loop devices (system-wide) whose backing file is the served image: the harness's
 * harness_count_loop_devices() only sees files on the private /run. */
int harness_fuse_count_loop_devices(HarnessFuse *f);

/* Aborts the connection (/sys/fs/fuse/connections/N/abort): every pending and future
 * request fails (ENOTCONN), so no process stays blocked on the file. Idempotent. */
int harness_fuse_abort(HarnessFuse *f);

/* Aborts, waits for the server process to end, unmounts (lazily: a loop device may still hold the
 * file) and removes the directory. Accepts NULL; returns NULL. */
HarnessFuse *harness_fuse_free(HarnessFuse *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(HarnessFuse, harness_fuse_free)
