/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stub-jobs: a usermount-worker with the real job types and wire layouts (jobproto.h) whose
 * jobs do nothing privileged and answer what the test wrote into the source file, so that
 * test-pipeline can drive the daemon's request pipeline without root and without mounts.
 * The source file is "key=value" lines:
 *
 *   fstype=ext4         PROBE: the type found (else none: "not a filesystem")
 *   label=..., uuid=... PROBE: the label and uuid
 *   probe-fail=...      PROBE fails with InvalidSource and this message
 *   build-fail=...      BUILD fails with Failed and this message
 *
 * BUILD answers with an fd of the source's directory as the "mount"; ATTACH with the mount
 * point /stub/<label> (a mount id no mount has, in the stub's own namespace); DETACH
 * succeeds. OPEN_DEVICE is refused, START_DRIVER too, saying whether PREPARE_DRIVER came
 * before it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "jobproto.h"
#include "mountns.h"
#include "runner.h"

#define STUB_MOUNT_ID UINT64_C(0x7ffffffffff0)

/* The value of key in the source's text, into buf (""): whether it is there. */
static bool source_value(int fd, const char *key, char *buf, size_t n) {
        char text[4096], *line, *save = NULL;
        ssize_t l = pread(fd, text, sizeof(text) - 1, 0);
        size_t klen = strlen(key);

        buf[0] = 0;
        if (l <= 0)
                return false;
        text[l] = 0;
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                if (strncmp(line, key, klen) == 0 && line[klen] == '=') {
                        snprintf(buf, n, "%s", line + klen + 1);
                        return true;
                }
        return false;
}

static int run_probe(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                     int *ret_fd) {
        ProbeReply *rep = reply;
        char fail[256];
        int r;

        r = source_inspect_fd(fds[0], &rep->source, error);
        if (r < 0)
                return r;
        if (source_value(fds[0], "probe-fail", fail, sizeof(fail)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL, "%s", fail);
        if (!source_value(fds[0], "fstype", rep->probe.fstype, sizeof(rep->probe.fstype)))
                return um_error_set(error, UM_ERROR_KIND_INVALID_SOURCE, EINVAL,
                                    "the source holds no filesystem");
        (void) source_value(fds[0], "label", rep->probe.label, sizeof(rep->probe.label));
        (void) source_value(fds[0], "uuid", rep->probe.uuid, sizeof(rep->probe.uuid));
        return 0;
}

static int run_build(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                     int *ret_fd) {
        const BuildJob *job = input;
        BuildReply *rep = reply;
        char fail[256], path[64], dir[4096];
        ssize_t l;
        char *slash;

        if (source_value(fds[0], "build-fail", fail, sizeof(fail)))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EIO, "%s", fail);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[0]);
        l = readlink(path, dir, sizeof(dir) - 1);
        if (l <= 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "readlink");
        dir[l] = 0;
        snprintf(rep->backing_file, sizeof(rep->backing_file), "%s", dir);
        slash = strrchr(dir, '/');
        if (slash)
                *slash = 0;
        *ret_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (*ret_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno, "open");
        rep->mount_id = STUB_MOUNT_ID;
        rep->idmap_mode = job->idmap.mode;
        rep->file_backed = true;
        return 0;
}

static int run_attach(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                      int *ret_fd) {
        const AttachJob *job = input;
        AttachResult *rep = reply;

        snprintf(rep->mount_point, sizeof(rep->mount_point), "/stub/%s",
                 job->label[0] ? job->label : "disk");
        /* A mount id no mount has, in a namespace that exists: a reconcile finds it gone. */
        rep->mount_id = STUB_MOUNT_ID;
        if (mountns_id_of_process(-EBADF, getpid(), &rep->mntns_id) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EIO, "no mount namespace");
        return 0;
}

static int run_detach(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                      int *ret_fd) {
        return 0;
}

static int run_refuse(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                      int *ret_fd) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, EOPNOTSUPP, "stub-jobs cannot");
}

/* PREPARE_DRIVER: nothing is prepared here, but START_DRIVER's refusal says whether it
 * came first (in this worker). */
static bool prepared;

static int run_prepare(const void *input, int *fds, size_t n_fds, void *reply,
                       UmError *error, int *ret_fd) {
        prepared = true;
        return 0;
}

static int run_start_driver(const void *input, int *fds, size_t n_fds, void *reply,
                            UmError *error, int *ret_fd) {
        return um_error_set(error, UM_ERROR_KIND_FAILED, EOPNOTSUPP,
                            "stub-jobs cannot start a driver (prepared: %s)",
                            prepared ? "yes" : "no");
}

static const struct {
        JobType type;
        const char *name;
        int (*run)(const void *input, int *fds, size_t n_fds, void *reply, UmError *error,
                   int *ret_fd);
} stub_jobs[] = {
        { JOB_PROBE, "PROBE", run_probe },
        { JOB_OPEN_DEVICE, "OPEN_DEVICE", run_refuse },
        { JOB_BUILD, "BUILD", run_build },
        { JOB_ATTACH, "ATTACH", run_attach },
        { JOB_DETACH, "DETACH", run_detach },
        { JOB_START_DRIVER, "START_DRIVER", run_start_driver },
        { JOB_LOOP_SETUP, "LOOP_SETUP", run_refuse },
        { JOB_DRIVE_EJECT, "DRIVE_EJECT", run_refuse },
        { JOB_LOOP_CLAIM, "LOOP_CLAIM", run_refuse },
        { JOB_PREPARE_DRIVER, "PREPARE_DRIVER", run_prepare },
};

int main(int argc, char *argv[]) {
        WorkerJobType types[ELEMENTSOF(stub_jobs)];
        int r;

        r = worker_runner_start(argc, argv, "stub-jobs is started by test-pipeline.");
        if (r != 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(stub_jobs); i++)
                types[i] = (WorkerJobType) {
                        .layout = *job_layout(stub_jobs[i].type),
                        .name = stub_jobs[i].name,
                        .run = stub_jobs[i].run,
                };
        worker_runner_run(WORKER_SOCKET_FD, types, ELEMENTSOF(types));
}
