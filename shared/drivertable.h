/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table of userspace filesystem drivers (fuse2fs, exfat-fuse, fusefat, ntfs-3g,
 * squashfuse): which programs serve which types, how each takes its connection, source and
 * options. The daemon asks it which driver a request gets (driverpolicy.h); the worker
 * starts the driver it names (fusedriver.h).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* Which driver parses a filesystem: the kernel's, or a userspace one of this table. */
typedef enum DriverKind {
        DRIVER_KERNEL,
        DRIVER_USERSPACE,
        _DRIVER_KIND_MAX,
} DriverKind;

/* How a driver gets the connection: the FUSE library it is built on. */
typedef enum FuseGeneration {
        FUSE_GENERATION_LIBFUSE2, /* opens /dev/fuse and mounts: both answered by the shim */
        FUSE_GENERATION_FUSELITE, /* ntfs-3g's integrated fuse-lite: the same as libfuse 2 */
        FUSE_GENERATION_LIBFUSE3, /* mount point "/dev/fd/N": uses fd N, mounts nothing */
} FuseGeneration;

typedef struct FuseDriver {
        const char *name;              /* the mount's subtype ("fuse.<name>") */
        const char *const *fstypes;    /* the types it serves, NULL-terminated */
        const char *const *paths;      /* candidate absolute paths, first installed wins */
        FuseGeneration generation;
        /* argv[0] first, NULL-terminated; "{source}", "{mountpoint}" and "{options}" are
         * replaced by the source path, the mount point argument and the -o options. */
        const char *const *argv;
        bool ownerless;                /* no ids on disk: uid=/gid= make files the caller's */
        bool writable;                 /* can write; else read_only is required */
        const char *rw_option;         /* option for read-write ("rw", "rw+") */
        const char *extra_options;     /* always given, or NULL */
        /* Options of the driver's FUSE library (libfuse 2 or 3), or NULL: the shim appends
         * them as the last "-o" of what the driver passes to fuse_main_real(), so that they
         * win over the driver's own defaults (the library keeps an option's last value),
         * whatever the driver's command line can carry. See CACHING in drivertable.c. */
        const char *fuse_options;
        /* Given when every file appears as the caller's (files_as_caller), or NULL: a
         * driver that checks permissions itself against the ids on disk would refuse the
         * caller what the modes it shows allow (the kernel checks those: default_permissions). */
        const char *as_caller_options;
        bool has_offset;               /* takes offset=<bytes> */
        /* Output lines starting with one of these (after leading blanks) are banners and
         * chatter, left out of the error sentence; NULL-terminated, or NULL. */
        const char *const *quiet_prefixes;
        const char *path;              /* filled by fusedriver_find() */
} FuseDriver;

/* The limits of a driver whose spec names none (usermount.conf's defaults, conf.h). */
#define FUSEDRIVER_MEMORY_DEFAULT ((uint64_t) 1 << 30)
#define FUSEDRIVER_TASKS_DEFAULT 64u

/*
 * The installed driver for fstype, from a static table of absolute paths (never $PATH): a
 * pointer into that table (static, never freed), or NULL if no driver serves fstype or
 * none of its programs is installed.
 */
const FuseDriver *fusedriver_find(const char *fstype);

/* Whether this system can serve FUSE mounts at all: /dev/fuse exists (a container may
 * have none). Without it no userspace driver is offered. */
bool fusedriver_fuse_present(void);

