/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The job types of stub-worker, the stand-in for usermount-worker that test-workerpool
 * drives: what each does, and their wire layout, known to both sides as the real jobs'
 * are (shared/jobproto.h, shared/jobproto.c).
 *
 *   job        fds (max)  does                                       reply (+ fd)
 *   ECHO       2          copies the text; TEST_JOB_SEND_FD: fds[0]  TestReply (+ fds[0])
 *   FAIL       1          fails: DEVICE_BUSY, EBUSY, "busy here"     (nothing; an fd that
 *                                                                     must not travel)
 *   CRASH      0          raise(SIGKILL)                             -
 *   EXIT       0          _exit(3)                                   -
 *   HANG       0          pause() forever                            -
 *   COUNT_FDS  3          lists the fds >= 3 open in the worker      TestReply
 *   GARBLE     0          writes a message of its own (TestGarble,   -
 *                         in flags) straight to its socket, then
 *                         waits to be killed: the daemon's checks
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "worker-proto.h"

/* Where the test finds the binary (set by tests/daemon/meson.build). */
#define TEST_WORKER_BIN_ENV "UM_TEST_WORKER_BIN"

typedef enum TestJobType {
        TEST_JOB_ECHO = 1,
        TEST_JOB_FAIL,
        TEST_JOB_CRASH,
        TEST_JOB_EXIT,
        TEST_JOB_HANG,
        TEST_JOB_COUNT_FDS,
        TEST_JOB_GARBLE,
} TestJobType;

/* What GARBLE sends in place of the runner's reply. */
typedef enum TestGarble {
        TEST_GARBLE_VERSION = 1,  /* a REPLY of another protocol version */
        TEST_GARBLE_MAGIC,        /* a REPLY with another magic */
        TEST_GARBLE_SHORT,        /* less than a header */
        TEST_GARBLE_SIZE,         /* header.size says one byte more than follows */
        TEST_GARBLE_TYPE,         /* a good reply for another job type */
        TEST_GARBLE_REPLY_SIZE,   /* a good reply, one byte short of the reply struct */
        TEST_GARBLE_KIND,         /* a JOB back */
        TEST_GARBLE_TWO_FDS,      /* a good reply with two fds */
        TEST_GARBLE_NO_STATUS,    /* a REPLY without a whole WorkerStatus */
        TEST_GARBLE_HUGE,         /* a REPLY larger than any reply */
        TEST_GARBLE_FAIL_WITH_FD, /* a failure (DEVICE_BUSY, EIO, "x") carrying an fd */
        TEST_GARBLE_FAIL_BAD_KIND,/* a failure with an error kind that does not exist */
        TEST_GARBLE_FAIL_NO_NUL,  /* a failure whose message has no NUL */
} TestGarble;

#define TEST_JOB_SEND_FD UINT32_C(1) /* ECHO: send fds[0] back */

typedef struct TestJob {
        char text[64];
        uint32_t flags; /* TEST_JOB_* */
} TestJob;

#define TEST_REPLY_FDS_MAX 16

typedef struct TestReply {
        char text[64];
        uint32_t n_fds;                     /* fds that came with the job */
        int32_t fd0;                        /* the number fds[0] has in the worker, or -1 */
        bool fd0_valid;                     /* COUNT_FDS: fcntl(fds[0], F_GETFD) worked */
        uint32_t n_open;                    /* COUNT_FDS: fds >= 3 open (not counting the
                                             * one used to list them) */
        int32_t open[TEST_REPLY_FDS_MAX];   /* the first of them */
} TestReply;

/* The layout both sides use: the worker's table is built from it, and the test hands
 * its hash to worker_pool_new(). */
static const WorkerJobLayout test_job_layouts[] = {
        { TEST_JOB_ECHO, sizeof(TestJob), sizeof(TestReply), 2 },
        { TEST_JOB_FAIL, sizeof(TestJob), 0, 1 },
        { TEST_JOB_CRASH, sizeof(TestJob), sizeof(TestReply), 0 },
        { TEST_JOB_EXIT, sizeof(TestJob), sizeof(TestReply), 0 },
        { TEST_JOB_HANG, sizeof(TestJob), sizeof(TestReply), 0 },
        { TEST_JOB_COUNT_FDS, sizeof(TestJob), sizeof(TestReply), 3 },
        { TEST_JOB_GARBLE, sizeof(TestJob), sizeof(TestReply), 0 },
};

#define TEST_N_JOBS (sizeof(test_job_layouts) / sizeof(test_job_layouts[0]))
