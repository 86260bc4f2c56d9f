/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared helpers of the kernel-level tests: real filesystem images made once per test
 * binary, each test run in its own subprocess inside a private mount namespace, workers
 * that build mounts the way usermountd's workers do and hand the fd back over a socket,
 * and the checks that nothing (loop device, staged mount, fd) was left behind.
 */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "policy.h"
#include "um-error.h"

/* The filesystem types the suite makes images of. */
extern const char *const ku_fstypes[];

/* The test user that receivers and unprivileged runs drop to. */
#define KU_TEST_UID 65534
#define KU_TEST_GID 65534

/* Made in the test binary's main, before g_test_run(), and removed after it. */
void ku_images_setup(void);
void ku_images_teardown(void);

/*
 * Path of the image named name ("ext4", "parted", "zeros", ...) inside the test directory,
 * or NULL (with a test skip message printed) if its mkfs tool was missing. Owned by the
 * helper, valid until teardown.
 */
const char *ku_image(const char *name);
/* The test directory, the staging directory handed to mountbuild_locked(). */
const char *ku_dir(void);
const char *ku_stage_dir(void);

/*
 * Registers test path: body(arg) runs in a subprocess (g_test_trap_subprocess) that first
 * enters a private mount namespace and checks that body left its fd count unchanged; the
 * parent then asserts that the subprocess passed and that nothing was left behind (loop
 * devices on the test images, mounts under the test directory, entries in the staging
 * directory, fds in the parent). If image needs (may be NULL) could not be made because
 * its mkfs tool is missing, the test is skipped with the reason.
 */
void ku_add(const char *path, void (*body)(const char *arg), const char *arg, const char *needs);

/* Prints "# <message>" on stderr, which the parent passes through: visible with -v. */
void ku_note(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

/* Open fds of the calling process (counts /proc/self/fd). */
int ku_count_fds(void);

/* Number of loop devices currently bound to a file under the test directory. */
int ku_loops_on_test_images(void);
/* Waits (bounded, polling sysfs) until no loop device is bound to a test image. */
int ku_wait_loops_released(void);
/* Reads /sys/block/loopN/<attr> ("ro", "loop/autoclear", "loop/backing_file") for a /dev path. */
char *ku_loop_attr(const char *dev_path, const char *attr);

/* MountOptions as policy would build them, filled by hand: nodev,nosuid[,noexec][,ro]. */
void ku_options(MountOptions *o, const char *fstype, bool read_only, bool exec);

typedef struct KuBuild {
        int r;
        UmError error;
        uint64_t mount_id;
        int id_r;
        char loop_path[64];
        char loop_ro[8];        /* sysfs "ro" of the loop device, read in the worker */
        int loop_fd_accmode;    /* O_RDONLY/O_RDWR of the fd loop_attach() returned */
        int loop_fd_cloexec;    /* FD_CLOEXEC set on it */
        int mount_fd_cloexec;
        int fds_leaked;         /* fds the worker had after the calls, minus before, minus 1 */
        bool file_unsupported;  /* from_file, -ENOTBLK: MountSpec.file_unsupported */
} KuBuild;

/* What a build worker is asked to do. */
typedef struct KuBuildSpec {
        const char *image;      /* loop_attach() this image, or */
        const char *source;     /* mount this block device path as is */
        bool image_read_only;   /* open the image O_RDONLY (else O_RDWR) */
        bool loop_read_only;    /* loop_attach(..., read_only) */
        const char *fstype;
        const MountOptions *options;
        const char *stage;      /* NULL: ku_stage_dir() */
        bool stage_ns;          /* in a copy of a stage namespace (stagens_make()), as
                                 * usermountd builds; stage is then not used */
        bool from_file;         /* mount image from its file, as job_build() does for erofs:
                                 * source /proc/self/fd/N, no loop device */
} KuBuildSpec;

/*
 * Forks a worker that does what usermountd's job_build() does: opens the image and
 * loop_attach()es it (or takes the source as is), then mountbuild_locked() (or, with
 * stage_ns, mountbuild_locked_in() with a stage namespace of its own). The worker
 * sends back the result and, on success, the mount fd, then exits. Asserts the worker
 * leaked no fd and that a failure came with an error sentence. Returns the mount fd or -1.
 */
int ku_build(const KuBuildSpec *spec, KuBuild *ret);

/* SCM_RIGHTS helpers: one fd (or none, with fd < 0) plus a data blob. */
void ku_send(int sock, const void *data, size_t size, int fd);
int ku_recv(int sock, void *data, size_t size);

/* Forks; the child runs fn(data) and exits 0 when it returns; g_assert failures abort it. */
pid_t ku_fork(void (*fn)(void *data), void *data);
/* Waits for pid and asserts it exited with status 0. */
void ku_wait_ok(pid_t pid);

/* A child that runs as uid (and gid uid) and waits; returned once it does (a claim made
 * before would find the uid free). ku_occupy_end() kills and reaps it. */
pid_t ku_occupy_uid(uid_t uid);
void ku_occupy_end(pid_t pid);

/*
 * In the calling (forked) process: become KU_TEST_UID, then root in a new user + mount
 * namespace that maps only that uid/gid, like an unprivileged container.
 */
void ku_become_userns_root(void);

/* Mount flags of an fd or path as statvfs reports them (ST_NOSUID, ...). */
unsigned long ku_fd_flags(int fd);
/* The per-mount options field of /proc/self/mountinfo for mount point path, or NULL. */
char *ku_mountinfo_options(const char *path);
/* Whether a mount point under dir is in mountinfo (of /proc/<pid>, 0 for self). */
bool ku_mountinfo_has_path_under(pid_t pid, const char *dir);

/*
 * Runs path (relative to dirfd, via execveat) with argv as KU_TEST_UID and returns its
 * stdout; *ret_errno is the execveat() errno (0 if it ran).
 */
char *ku_run_as_test_user(int dirfd, const char *path, const char *const *argv, int *ret_errno);

/*
 * Copies this test binary to <dir>/fake-checker, in a directory of its own under /var/tmp,
 * and returns the copy's path (static; the directory is its dirname). The fscheck sandbox
 * has a private /tmp, where a build tree may be, so a fake checker must live elsewhere.
 * The directory and everything the test puts in it are removed at exit.
 */
const char *ku_self_copy(void);

/* The value of " key=" in a fake checker's report inside msg (owned), or NULL. */
char *ku_probe_value(const char *msg, const char *key);
#define ku_assert_probe(msg, key, value)                                                \
        do {                                                                           \
                g_autofree char *_v = ku_probe_value(msg, key);                        \
                g_assert_cmpstr(_v, ==, value);                                        \
        } while (0)
