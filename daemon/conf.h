/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The administrator's configuration, /etc/usermount/usermount.conf: which filesystem types
 * may be mounted and with which options, the media root, limits, exec, the read-only
 * image check, and the SELinux type of user mounts. A Config is immutable once loaded and
 * reference-counted: the Manager holds the current one, and every request holds the one it
 * started with, so a reload (SIGHUP) never changes the rules under a request in flight.
 *
 * Built-in defaults make the daemon work without any file. A file can only narrow what the
 * built-in policy tables allow (policy.c) and add forced or default options that those
 * tables accept: it can never allow an option usermount refuses or does not know.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "driverpolicy.h"
#include "fsconf.h"
#include "optlist.h"
#include "um-error.h"

/* Where the daemon and --check-config look by default. */
#define CONF_DEFAULT_PATH "/etc/usermount/usermount.conf"

/* Built-in defaults ([Limits] and [General]). */
#define CONF_DEFAULT_MEDIA_ROOT "/run/media"
#define CONF_DEFAULT_MAX_REQUESTS 64u
#define CONF_DEFAULT_MAX_REQUESTS_PER_USER 8u
#define CONF_DEFAULT_MAX_MOUNTS 1024u
#define CONF_DEFAULT_MAX_MOUNTS_PER_USER 32u
#define CONF_DEFAULT_MAX_LOOP_DEVICES 256u
#define CONF_DEFAULT_MAX_LOOP_DEVICES_PER_USER 16u
#define CONF_DEFAULT_MAX_DRIVERS 256u
#define CONF_DEFAULT_MAX_DRIVERS_PER_USER 16u
#define CONF_DEFAULT_MAX_WORKERS 32u
#define CONF_DEFAULT_MAX_WORKERS_PER_USER 4u
#define CONF_DEFAULT_MAX_UNAUTHORIZED_REQUESTS 8u
#define CONF_DEFAULT_REQUEST_TIMEOUT_USEC (30ULL * 1000000ULL)
#define CONF_DEFAULT_DRIVER_MEMORY_MAX (1ULL << 30)
#define CONF_DEFAULT_DRIVER_TASKS_MAX 64u
#define CONF_DEFAULT_DRIVER_CPU_SEC 0ULL /* infinity: a long-lived mount must not die */
#define CONF_DEFAULT_IMAGE_CHECK_USER "usermount-check"
/* ImageCheckUidRange=1879048192-1879048447: 256 uids at the start of the block that
 * systemd's UIDS-GIDS document (systemd.io/UIDS-GIDS) leaves unused (1879048192-2147352575,
 * above the container ranges and below the foreign range 0x7FFE0000), so that no two checks
 * share a uid. */
#define CONF_DEFAULT_IMAGE_CHECK_UID_FIRST 1879048192u
#define CONF_DEFAULT_IMAGE_CHECK_UID_COUNT 256u
/* ImageCheckUidRange= bounds: at least 2 uids (one is ImageCheckUser='s job), at most as
 * many as the worker's image check takes (FSCHECK_UID_COUNT_MAX of worker/fscheck.h;
 * tests/unit/test-conf.c holds the two equal). */
#define CONF_IMAGE_CHECK_UID_COUNT_MIN 2u
#define CONF_IMAGE_CHECK_UID_COUNT_MAX 65536u
/* DriverUidRange=1879048448-1879049471: the 1024 uids after the image checks' (above). */
#define CONF_DEFAULT_DRIVER_UID_FIRST 1879048448u
#define CONF_DEFAULT_DRIVER_UID_COUNT 1024u
#define CONF_DEFAULT_IMAGE_CHECK_TIMEOUT_USEC (300ULL * 1000000ULL)

typedef struct ConfLimits {
        unsigned max_requests;              /* requests in flight, all users */
        unsigned max_requests_per_user;     /* requests in flight, one user: per-user limits
                                             * count a uid as its owner (owner.h) */
        unsigned max_mounts;                /* registered mounts, all users */
        unsigned max_mounts_per_user;       /* registered mounts, one user */
        unsigned max_loop_devices;          /* loop devices the daemon made that still exist */
        unsigned max_loop_devices_per_user;
        unsigned max_drivers;               /* userspace drivers the daemon started that run */
        unsigned max_drivers_per_user;
        unsigned max_workers;               /* worker processes running, all users */
        unsigned max_workers_per_user;
        unsigned max_unauthorized_requests; /* mount requests polkit has not authorized yet,
                                             * and their workers, all users (owner.h) */
        uint64_t request_timeout_usec;      /* how long one worker may take */
        uint64_t driver_memory_max;         /* a userspace driver's memory, bytes */
        unsigned driver_tasks_max;          /* its threads */
        uint64_t driver_cpu_sec;            /* its CPU time, seconds; 0: no limit */
} ConfLimits;

typedef struct Conf {
        unsigned n_ref;
        char *path;              /* the file it was read from, NULL for built-in defaults */
        char *media_root;        /* [General] MediaRoot= */
        bool allow_exec;         /* [General] AllowExec=: whether exec=true may be granted */
        bool image_check;        /* [General] ImageCheck=: fsck -n images before mounting */
        char *image_check_user;  /* [General] ImageCheckUser= as written; only used (and
                                  * looked up) when image_check_uid_count is 0 */
        uid_t image_check_uid;   /* resolved when image_check is on and there is no range */
        gid_t image_check_gid;
        uid_t image_check_uid_first;     /* [General] ImageCheckUidRange=FIRST-LAST: FIRST */
        unsigned image_check_uid_count;  /* LAST - FIRST + 1, or 0 for "ImageCheckUidRange=":
                                          * every check runs as ImageCheckUser= */
        uint64_t image_check_timeout_usec; /* [General] ImageCheckTimeoutSec= */
        DriverPolicy driver;     /* [General] Driver= (driverpolicy.h); default auto */
        uid_t driver_uid_first;  /* [General] DriverUidRange=FIRST-LAST: each userspace */
        unsigned driver_uid_count; /* driver runs as a uid of its own from it */
        char *selinux_type;      /* [Labels] SELinuxType=: the type of user mounts' files on
                                  * SELinux systems; NULL computes it from the caller's context
                                  * as the kernel does for user-namespace mounts (label.h) */
        ConfLimits limits;       /* [Limits] */
        ConfFsType *fstypes;     /* one per type fstype_names() knows, in that order */
        size_t n_fstypes;
} Conf;

/* A Conf with the built-in defaults (what an absent file means). ret owned (conf_unref). */
int conf_new_default(Conf **ret);

Conf *conf_ref(Conf *c);
/* Accepts NULL; returns NULL. */
Conf *conf_unref(Conf *c);
static inline void conf_unrefp(Conf **c) {
        conf_unref(*c);
}

/* The section of fstype, or NULL when policy.c does not know the type. */
const ConfFsType *conf_fstype(const Conf *c, const char *fstype);

/*
 * Splits t->forced_options (forced) or t->default_options into t->forced or t->defaults,
 * replacing what that held; conf_load() does it for every section before checking it with
 * policy_check_conf_fstype(). -EINVAL with error set when the string is not an option
 * list (optlist.h), and the list is then empty; -ENOMEM.
 */
int conf_fstype_split(ConfFsType *t, bool forced, UmError *error);

/* Whether fstype is known and allowed by the configuration. */
bool conf_fstype_allowed(const Conf *c, const char *fstype);

/*
 * Reads path. A missing file is not an error when missing_ok (built-in defaults, c->path
 * NULL); a dangling symlink is. Every problem is written to diag (may be NULL) as one line
 * "PATH:LINE: message", in line order (LINE is 0 for problems of the whole file: not a
 * regular file, writable by others, larger than CONF_FILE_MAX; at most 100 lines, then a
 * count), and the function returns -EINVAL if there was any, so that a bad file is never
 * half applied. Lines longer than inih's buffer allows (197 bytes in Debian's build), NUL
 * bytes, invalid UTF-8 and control characters are problems of their line. Leading
 * whitespace is indentation: there are no multi-line values. -ENOENT when the file is
 * missing and !missing_ok; other -errno when it cannot be read. On success *ret is a new
 * Conf (owned); on failure *ret is untouched.
 */
int conf_load(const char *path, bool missing_ok, FILE *diag, Conf **ret);

/* Largest file conf_load() reads, in bytes. */
#define CONF_FILE_MAX (64u * 1024u)

/*
 * usermountd --check-config [FILE]: loads path (CONF_DEFAULT_PATH when NULL, which may be
 * missing: "no file; the built-in defaults apply"), writes every problem with its line to
 * out, or a summary of the effective settings when the file is valid. Returns 0 when
 * valid, 1 when invalid, -errno when the file cannot be read (a line saying why is
 * written to out as well).
 */
int conf_check(const char *path, FILE *out);
