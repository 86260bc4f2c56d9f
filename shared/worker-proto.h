/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The wire between usermountd and usermount-worker: one SOCK_SEQPACKET socket per worker,
 * one datagram per message, fds alongside (fd-util.h). Three messages:
 *
 *   HELLO  worker -> daemon, once, when the worker is warm:  header + WorkerHello
 *   JOB    daemon -> worker:  header (type: the job type; flags) + the job's input struct,
 *          its fds alongside
 *   REPLY  worker -> daemon:  header (type as in the job) + WorkerStatus + the job's reply
 *          struct, at most one fd alongside
 *
 * Both sides check magic, version and the sizes, and the worker checks the job's type and
 * fd count, so that a worker binary from another build (an upgrade while the daemon runs),
 * or a truncated or garbled message, fails with a clear error rather than being read as
 * something else. The job and reply structs are plain bytes: no pointers cross the wire.
 */
#pragma once

#include <stdint.h>

#include "um-error.h"

#define WORKER_MAGIC UINT32_C(0x4b574d55) /* "UMWK" */
/* Raised with every change of this header or of a job's structs (jobproto.h). The layout
 * hash below catches a forgotten raise when a struct's size or fd count changed (not a
 * reordering of fields of the same size). */
#define WORKER_PROTOCOL_VERSION UINT32_C(2)

typedef enum WorkerMsgKind {
        WORKER_MSG_HELLO = 1,
        WORKER_MSG_JOB = 2,
        WORKER_MSG_REPLY = 3,
} WorkerMsgKind;

/* JOB flags. */
#define WORKER_JOB_LAST UINT32_C(1) /* the worker exits after replying */

typedef struct WorkerHeader {
        uint32_t magic;
        uint32_t version;
        uint32_t kind;  /* WorkerMsgKind */
        uint32_t type;  /* JOB, REPLY: the job type */
        uint32_t flags; /* JOB: WORKER_JOB_* */
        uint32_t size;  /* bytes that follow this header */
} WorkerHeader;

typedef struct WorkerHello {
        uint32_t layout; /* the job table's layout (worker_layout_hash()) */
        int32_t pid;
} WorkerHello;

typedef struct WorkerStatus {
        int32_t r;      /* >= 0 success, else -errno with error set */
        UmError error;
} WorkerStatus;

/* One entry of a job table as both sides see it: the sizes the wire carries. */
typedef struct WorkerJobLayout {
        uint32_t type;
        uint32_t input_size;
        uint32_t reply_size;
        uint32_t max_fds;
} WorkerJobLayout;

/* A hash of a job table's types and sizes (FNV-1a), exchanged in HELLO. */
static inline uint32_t worker_layout_hash(const WorkerJobLayout *l, size_t n) {
        uint32_t h = UINT32_C(2166136261);

        for (size_t i = 0; i < n; i++) {
                const uint32_t v[4] = { l[i].type, l[i].input_size, l[i].reply_size,
                                        l[i].max_fds };
                const uint8_t *p = (const uint8_t *) v;

                for (size_t k = 0; k < sizeof(v); k++)
                        h = (h ^ p[k]) * UINT32_C(16777619);
        }
        return h;
}
