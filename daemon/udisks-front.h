/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front (usermountd --udisks2; docs/udisks2.md): org.freedesktop.UDisks2 on a
 * connection of its own, so that desktops (gvfs, Solid, udiskie, udisksctl) reach
 * usermount unchanged and the native org.freedesktop.UserMount1 signals never reach them.
 * This file owns the connection, the name and the objects (the block devices and drives
 * of udisks-model.h, kept current from udev's events); udisks-vtables.c describes them
 * on the bus, udisks-methods.c turns their methods into requests of the pipeline.
 */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-device.h>

#include "busfds.h"
#include "manager.h"
#include "request.h"
#include "source.h"
#include "udisks-model.h"

/* A loop device the front set up (Manager.LoopSetup, udisks-loops.c): it lasts while the
 * front holds fd (the kernel's autoclear) or a mount uses it. */
typedef struct UDisksLoop {
        dev_t devnum;
        uint64_t diskseq;       /* of this binding: a later one of the same device is not it */
        uid_t uid;              /* who set it up (SetupByUID) */
        int fd;
        int claim_fd;           /* the image's claim (claim.h), held as long */
        bool autoclear;         /* Loop.Autoclear: let go of it when its last mount goes */
        SourceProbe probe;      /* what it holds (udev does not probe a marked device) */
} UDisksLoop;

typedef struct UDisksFront {
        Manager *manager;
        sd_bus *bus;
        BusFds *busfds;
        sd_device_monitor *monitor;
        int sysfs_fd;
        UDisksBlock **blocks;
        size_t n_blocks;
        UDisksDrive **drives;
        size_t n_drives;
        bool coldplugged;       /* the first enumeration is done: later devices are hotplug */
        UDisksLoop *loops;
        size_t n_loops;
} UDisksFront;

/* Connects to the system bus, exports the objects of every block device there is now,
 * watches udev for more, and asks for org.freedesktop.UDisks2 (asynchronously: a name
 * owned by another, udisksd, makes usermountd exit with failure). -errno, logged. */
int udisks_front_start(Manager *m, UDisksFront **ret);
UDisksFront *udisks_front_free(UDisksFront *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(UDisksFront *, udisks_front_free);

/* Lookups: by object path, by device number, by the drive of a block. NULL if none. */
UDisksBlock *udisks_front_block_by_path(UDisksFront *f, const char *path);
UDisksBlock *udisks_front_block_by_devnum(UDisksFront *f, dev_t devnum);
UDisksDrive *udisks_front_drive_by_path(UDisksFront *f, const char *path);

/* The mount points of the registered mounts of b, as a NULL-terminated list of borrowed
 * strings (free() the list only); NULL if out of memory. all: every one, in any
 * namespace (is the device in use?); else those that may be shown to anybody (not in a
 * mount namespace a user owns, MountRecord.private_ns). */
const char **udisks_front_mount_points(UDisksFront *f, const UDisksBlock *b, bool all);

/* Where b is mounted, for a message: the first mount point that may be shown, or a
 * phrase that names none. points: udisks_front_mount_points(f, b, true), not empty. */
const char *udisks_front_mounted_where(UDisksFront *f, const UDisksBlock *b);

/* The registry changed for the device devnum: Filesystem.MountPoints of its object is
 * sent again (before the reply of the Mount or Unmount that changed it). */
void udisks_front_mounts_changed(UDisksFront *f, uint64_t devnum);

/* Makes or updates the object of the block device devnum now, from udev and sysfs (and
 * announces it), rather than when udev's event comes: for LoopSetup, whose reply must
 * follow the object's InterfacesAdded. -errno if there is no such device. */
int udisks_front_refresh(UDisksFront *f, dev_t devnum);

/* udisks-loops.c: the front's loop devices. Lookup by device (and binding), NULL if not
 * one; what a block of such a device shows (SetupByUID, Autoclear, the contents it
 * probed); the registry changed for it (a device with Autoclear whose last mount went is
 * let go of); it went away or was bound anew (forgotten); all of them let go of. */
UDisksLoop *udisks_loops_find(UDisksFront *f, dev_t devnum);
int udisks_loops_apply(UDisksFront *f, UDisksBlock *b, uint64_t diskseq);
void udisks_loops_mounts_changed(UDisksFront *f, dev_t devnum);
void udisks_loops_forget(UDisksFront *f, dev_t devnum);
void udisks_loops_free(UDisksFront *f);
/* The front's answer to a LoopSetup request (RequestFront.loop_set_up). */
void udisks_loops_set_up(Request *req, const LoopSetupReply *reply, int loop_fd,
                         int claim_fd);

/* The a{sv} every method takes: the keys clients send, typed as udisks reads them; other
 * keys are ignored, as udisks does. -errno with error set (InvalidArgument) for a known key
 * of another type; sd-bus's -errno otherwise. */
typedef struct UDisksOptions {
        const char *fstype;     /* "fstype" (s) */
        const char *options;    /* "options" (s) */
        bool no_interaction;    /* "auth.no_user_interaction" (b) */
        bool force;             /* "force" (b) */
        bool read_only;         /* "read-only" (b) */
        uint64_t offset;        /* "offset" (t) */
        uint64_t size;          /* "size" (t) */
} UDisksOptions;
int udisks_read_options(sd_bus_message *m, UDisksOptions *o, UmError *error);

/*
 * udisks' mount options (in, comma-separated; NULL: none) into usermount's: "ro" and
 * "exec" set the params of the same name; "rw", and the flags usermount sets and locks
 * anyway (nodev, nosuid, noexec), go; "flush" goes too (the vfat kernel driver's
 * write-back hint, which Solid sends for every vfat volume); the rest are the
 * filesystem's options, in *ret (never longer than in), checked by the policy as any
 * caller's. -ENOMEM.
 */
int udisks_translate_options(const char *in, MountParams *params, char **ret);

/* Hands req, a request of a front method, to the caller stage and the pipeline, which
 * answer it in udisks' words (udisks-methods.c). */
int udisks_start_request(UDisksFront *f, Request *req);

/* udisks-vtables.c: the interfaces of blocks, drives and the Manager object. */
int udisks_vtables_add(UDisksFront *f);

/* udisks-methods.c: the errors as udisks names them, and NotSupported. */
int udisks_reply_error(sd_bus_message *m, const UmError *error);
int udisks_reply_not_supported(sd_bus_message *m, const char *what);

/* The methods that do something (udisks-methods.c), as vtable handlers; userdata is the
 * object (UDisksBlock or UDisksDrive), f is found through sd_bus_get_current_userdata()
 * of the slot. */
int udisks_method_mount(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_unmount(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_loop_setup(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_loop_delete(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_loop_set_autoclear(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_eject(sd_bus_message *m, void *userdata, sd_bus_error *error);
int udisks_method_power_off(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* The front serving now (one per daemon), for the handlers. */
UDisksFront *udisks_front_current(void);
