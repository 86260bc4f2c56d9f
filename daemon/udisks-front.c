/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front's connection, name and objects, kept current from udev
 * (udisks-front.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fd-util.h"
#include "caller.h"
#include "log.h"
#include "time-util.h"
#include "udisks-front.h"

#define UDISKS_BUS_NAME "org.freedesktop.UDisks2"
#define UDISKS_BLOCK_IFACE "org.freedesktop.UDisks2.Block"
#define UDISKS_FS_IFACE "org.freedesktop.UDisks2.Filesystem"

static UDisksFront *current;

UDisksFront *udisks_front_current(void) {
        return current;
}

UDisksBlock *udisks_front_block_by_path(UDisksFront *f, const char *path) {
        for (size_t i = 0; f && i < f->n_blocks; i++)
                if (streq(f->blocks[i]->path, path))
                        return f->blocks[i];
        return NULL;
}

UDisksBlock *udisks_front_block_by_devnum(UDisksFront *f, dev_t devnum) {
        for (size_t i = 0; f && i < f->n_blocks; i++)
                if (f->blocks[i]->devnum == devnum)
                        return f->blocks[i];
        return NULL;
}

UDisksDrive *udisks_front_drive_by_path(UDisksFront *f, const char *path) {
        for (size_t i = 0; f && i < f->n_drives; i++)
                if (streq(f->drives[i]->path, path))
                        return f->drives[i];
        return NULL;
}

static UDisksDrive *drive_by_disk(UDisksFront *f, const char *disk) {
        for (size_t i = 0; i < f->n_drives; i++)
                if (streq(f->drives[i]->disk, disk))
                        return f->drives[i];
        return NULL;
}

const char **udisks_front_mount_points(UDisksFront *f, const UDisksBlock *b, bool all) {
        const Registry *reg = f->manager->registry;
        const char **list = calloc(reg->n_records + 1, sizeof(char *));
        size_t n = 0;

        if (!list)
                return NULL;
        for (size_t i = 0; i < reg->n_records; i++) {
                const MountRecord *rec = reg->records[i];

                if (!rec->file_backed && rec->devnum == (uint64_t) b->devnum &&
                    rec->mount_point && !rec->detaching && (all || !rec->private_ns))
                        list[n++] = rec->mount_point;
        }
        return list;
}

const char *udisks_front_mounted_where(UDisksFront *f, const UDisksBlock *b) {
        _cleanup_free_ const char **shown = udisks_front_mount_points(f, b, false);

        /* The strings are the registry's: they outlive the list. */
        return shown && shown[0] ? shown[0] : "(in a mount namespace of a user's own)";
}

void udisks_front_mounts_changed(UDisksFront *f, uint64_t devnum) {
        UDisksBlock *b = udisks_front_block_by_devnum(f, (dev_t) devnum);

        if (b && b->has_filesystem)
                (void) sd_bus_emit_properties_changed(f->bus, b->path, UDISKS_FS_IFACE,
                                                      "MountPoints", NULL);
        udisks_loops_mounts_changed(f, (dev_t) devnum);
}

static void manager_mounts_changed(void *userdata, uint64_t devnum) {
        udisks_front_mounts_changed(userdata, devnum);
}

/* ---- objects -------------------------------------------------------------------------- */

static int array_add(void ***array, size_t *n, void *item) {
        void **a = realloc(*array, (*n + 1) * sizeof(void *));

        if (!a)
                return -ENOMEM;
        a[(*n)++] = item;
        *array = a;
        return 0;
}

static void array_remove(void **array, size_t *n, void *item) {
        for (size_t i = 0; i < *n; i++)
                if (array[i] == item) {
                        memmove(array + i, array + i + 1, (*n - i - 1) * sizeof(void *));
                        (*n)--;
                        return;
                }
}

/* The interfaces a block has beyond Block, as udisks gives them. */
static void block_interfaces(const UDisksBlock *b, const char **list) {
        size_t n = 0;

        if (b->has_filesystem)
                list[n++] = UDISKS_FS_IFACE;
        if (b->is_partition)
                list[n++] = "org.freedesktop.UDisks2.Partition";
        if (b->is_table)
                list[n++] = "org.freedesktop.UDisks2.PartitionTable";
        if (b->is_loop)
                list[n++] = "org.freedesktop.UDisks2.Loop";
        list[n] = NULL;
}

static bool strv_has(const char *const *l, const char *s) {
        for (; *l; l++)
                if (streq(*l, s))
                        return true;
        return false;
}

static void drive_remove(UDisksFront *f, UDisksDrive *d) {
        /* Announced while the object can still be found: sd-bus lists its interfaces. */
        (void) sd_bus_emit_object_removed(f->bus, d->path);
        array_remove((void **) f->drives, &f->n_drives, d);
        udisks_drive_free(d);
}

static void block_remove(UDisksFront *f, UDisksBlock *b) {
        _cleanup_free_ char *disk = strdup(b->disk);
        bool whole = streq(b->name, b->disk);

        (void) sd_bus_emit_object_removed(f->bus, b->path);
        array_remove((void **) f->blocks, &f->n_blocks, b);
        udisks_block_free(b);
        /* The drive goes after its disk's block, as udisks orders it. */
        UDisksDrive *d = whole && disk ? drive_by_disk(f, disk) : NULL;
        if (d)
                drive_remove(f, d);
}

/* Whether the front's loop device devnum is still the binding it made (sysfs now, not the
 * event's view: an event of the device's previous binding may come after it was made). */
static bool loop_still_bound(UDisksFront *f, dev_t devnum) {
        const UDisksLoop *l = udisks_loops_find(f, devnum);
        char path[96];
        uint64_t seq = 0;

        snprintf(path, sizeof(path), "dev/block/%u:%u/loop/backing_file", major(devnum),
                 minor(devnum));
        if (!l || faccessat(f->sysfs_fd, path, F_OK, 0) < 0)
                return false;
        return looptrack_diskseq(devnum, &seq) < 0 || l->diskseq == 0 || seq == l->diskseq;
}

/* A new drive, under a name no other drive has (udisks appends _1, _2, ...: identical
 * sticks have the same vendor, model and serial), announced. */
static void drive_add(UDisksFront *f, UDisksDrive *d) {
        _cleanup_(udisks_drive_freep) UDisksDrive *owned = d;

        for (unsigned i = 1; udisks_front_drive_by_path(f, d->path); i++) {
                free(d->path);
                d->path = NULL;
                if (asprintf(&d->path, "%s/%s_%u", UDISKS_DRIVE_PREFIX, d->name, i) < 0) {
                        d->path = NULL;
                        return;
                }
        }
        if (!f->coldplugged) {
                free(d->sort_key);
                d->sort_key = NULL;
                if (asprintf(&d->sort_key, "00coldplug/%s/%s",
                             d->media_removable ? "10removable" : "00fixed", d->disk) < 0) {
                        d->sort_key = NULL;
                        return;
                }
        }
        if (array_add((void ***) &f->drives, &f->n_drives, d) < 0)
                return;
        TAKE_PTR(owned);
        (void) sd_bus_emit_object_added(f->bus, d->path);
}

/* A change of a drive's disk: its properties anew (media inserted or removed, size), under
 * its path, with the times it was detected, and the time of its media when they came. */
static void drive_replace(UDisksFront *f, UDisksDrive *old, UDisksDrive *d) {
        free(d->path);
        d->path = strdup(old->path);
        if (!d->path) {
                udisks_drive_free(d);
                return;
        }
        d->time_detected = old->time_detected;
        if (old->media_available && d->media_available)
                d->time_media_detected = old->time_media_detected;
        free(d->sort_key);
        d->sort_key = strdup(old->sort_key);
        for (size_t i = 0; i < f->n_drives; i++)
                if (f->drives[i] == old)
                        f->drives[i] = d;
        udisks_drive_free(old);
        (void) sd_bus_emit_properties_changed_strv(f->bus, d->path,
                                                   "org.freedesktop.UDisks2.Drive", NULL);
}

/* A uevent's or the enumeration's device: made, replaced or dropped, and announced. */
static void front_device_update(UDisksFront *f, sd_device *dev, bool removed) {
        _cleanup_(udisks_block_freep) UDisksBlock *nb = NULL;
        _cleanup_(udisks_drive_freep) UDisksDrive *nd = NULL;
        const char *name = NULL;
        UDisksBlock *old = NULL;
        dev_t devnum;
        int r;

        if (sd_device_get_sysname(dev, &name) < 0 || sd_device_get_devnum(dev, &devnum) < 0)
                return;
        for (size_t i = 0; i < f->n_blocks; i++)
                if (streq(f->blocks[i]->name, name))
                        old = f->blocks[i];
        if (removed || !udisks_device_wanted(dev)) {
                if (old)
                        block_remove(f, old);
                /* One of the front's loop devices, let go of (or never bound): forgotten. */
                if (udisks_loops_find(f, devnum) && !loop_still_bound(f, devnum))
                        udisks_loops_forget(f, devnum);
                return;
        }
        r = udisks_block_new(dev, f->sysfs_fd, &nb);
        /* The binding now (sysfs), not the event's: an event of the device's previous
         * binding may arrive after the front made the new one. */
        uint64_t seq = 0;
        if (r >= 0)
                r = udisks_loops_apply(f, nb, looptrack_diskseq(devnum, &seq) >= 0 ? seq : 0);
        if (r < 0) {
                log_debug("UDisks2 front: ignoring block device %s: %s", name, strerror(-r));
                return;
        }
        /* The drive first, as udisks orders it: a whole disk with a product identity. */
        if (streq(nb->name, nb->disk) &&
            udisks_drive_new(dev, f->sysfs_fd, now_usec(CLOCK_REALTIME), &nd) >= 0) {
                UDisksDrive *had = drive_by_disk(f, nb->disk);

                if (had)
                        drive_replace(f, had, TAKE_PTR(nd));
                else
                        drive_add(f, TAKE_PTR(nd));
        }
        UDisksDrive *drive = drive_by_disk(f, nb->disk);
        if (drive) {
                free(nb->drive_path);
                nb->drive_path = strdup(drive->path);
                if (!nb->drive_path)
                        return;
                /* Removable media are not the system's (udisks' update_hints()), unless
                 * udev says otherwise. */
                if (drive->media_removable || streq(drive->connection_bus, "usb")) {
                        if (sd_device_get_property_value(dev, "UDISKS_SYSTEM", NULL) < 0)
                                nb->hint_system = false;
                        if (sd_device_get_property_value(dev, "UDISKS_AUTO", NULL) < 0)
                                nb->hint_auto = true;
                }
        }
        if (!old) {
                if (array_add((void ***) &f->blocks, &f->n_blocks, nb) < 0)
                        return;
                UDisksBlock *b = TAKE_PTR(nb);
                (void) sd_bus_emit_object_added(f->bus, b->path);
                return;
        }

        /* A change: the interfaces gained or lost, then every property again (values, never
         * invalidations: GLib clients would drop them). */
        const char *was[8], *now[8];
        block_interfaces(old, was);
        block_interfaces(nb, now);
        for (size_t i = 0; was[i]; i++)
                if (!strv_has(now, was[i]))
                        (void) sd_bus_emit_interfaces_removed(f->bus, old->path, was[i], NULL);
        for (size_t i = 0; i < f->n_blocks; i++)
                if (f->blocks[i] == old)
                        f->blocks[i] = nb;
        udisks_block_free(old);
        UDisksBlock *b = TAKE_PTR(nb);
        for (size_t i = 0; now[i]; i++)
                if (!strv_has(was, now[i]))
                        (void) sd_bus_emit_interfaces_added(f->bus, b->path, now[i], NULL);
        (void) sd_bus_emit_properties_changed_strv(f->bus, b->path, UDISKS_BLOCK_IFACE, NULL);
        for (size_t i = 0; now[i]; i++)
                if (strv_has(was, now[i]))
                        (void) sd_bus_emit_properties_changed_strv(f->bus, b->path, now[i], NULL);
}

int udisks_front_refresh(UDisksFront *f, dev_t devnum) {
        _cleanup_(sd_device_unrefp) sd_device *dev = NULL;
        int r;

        r = sd_device_new_from_devnum(&dev, 'b', devnum);
        if (r < 0)
                return r;
        front_device_update(f, dev, false);
        return 0;
}

static int on_uevent(sd_device_monitor *mon, sd_device *dev, void *userdata) {
        sd_device_action_t action = _SD_DEVICE_ACTION_INVALID;
        const char *name = NULL;

        (void) sd_device_get_action(dev, &action);
        (void) sd_device_get_sysname(dev, &name);
        log_debug("UDisks2 front: uevent %d for %s.", (int) action, strempty(name));
        front_device_update(userdata, dev, action == SD_DEVICE_REMOVE);
        return 0;
}

static int front_enumerate(UDisksFront *f) {
        _cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
        int r;

        r = sd_device_enumerator_new(&e);
        if (r < 0)
                return r;
        r = sd_device_enumerator_add_match_subsystem(e, "block", true);
        if (r < 0)
                return r;
        /* Disks come before their partitions in sysfs order (a partition's parent). */
        for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
             d = sd_device_enumerator_get_device_next(e))
                front_device_update(f, d, false);
        f->coldplugged = true;
        return 0;
}

static int front_watch(UDisksFront *f) {
        int r;

        r = sd_device_monitor_new(&f->monitor);
        if (r < 0)
                return r;
        r = sd_device_monitor_filter_add_match_subsystem_devtype(f->monitor, "block", NULL);
        if (r < 0)
                return r;
        r = sd_device_monitor_attach_event(f->monitor, f->manager->event);
        if (r < 0)
                return r;
        return sd_device_monitor_start(f->monitor, on_uevent, f);
}

/* ---- the connection --------------------------------------------------------------------- */

static void on_front_disconnect(void *userdata) {
        UDisksFront *f = userdata;

        log_error("Lost the system bus connection of the UDisks2 front; exiting.");
        (void) sd_event_exit(f->manager->event, EXIT_FAILURE);
}

static int on_front_name(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        UDisksFront *f = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        uint32_t result = 0;

        if (!e && sd_bus_message_read(reply, "u", &result) >= 0 && (result == 1 || result == 4)) {
                log_info("The UDisks2 front is ready on the system bus as %s (%zu block "
                         "devices, %zu drives).", UDISKS_BUS_NAME, f->n_blocks, f->n_drives);
                return 0;
        }
        log_error("Failed to acquire %s on the system bus: %s. Is udisks2's udisksd running? "
                  "Stop and mask udisks2.service to use usermount's UDisks2 service.",
                  UDISKS_BUS_NAME, e ? (e->message ?: e->name) : "another process owns it");
        (void) sd_event_exit(f->manager->event, EXIT_FAILURE);
        return 0;
}

UDisksFront *udisks_front_free(UDisksFront *f) {
        if (!f)
                return NULL;
        if (current == f)
                current = NULL;
        if (f->manager && f->manager->udisks == f) {
                f->manager->udisks = NULL;
                f->manager->on_mounts_changed = NULL;
                f->manager->udisks_busfds = NULL;
                f->manager->udisks_bus = NULL;
        }
        udisks_loops_free(f);
        sd_device_monitor_unref(f->monitor);
        busfds_free(f->busfds);
        sd_bus_flush_close_unref(f->bus);
        for (size_t i = 0; i < f->n_blocks; i++)
                udisks_block_free(f->blocks[i]);
        free(f->blocks);
        for (size_t i = 0; i < f->n_drives; i++)
                udisks_drive_free(f->drives[i]);
        free(f->drives);
        safe_close(f->sysfs_fd);
        free(f);
        return NULL;
}

static uid_t front_owner_of_sender(const char *sender, void *userdata) {
        Manager *m = userdata;
        const CallerCreds *creds = m->callers ? caller_cache_get(m->callers, sender) : NULL;

        return creds ? owner_map_lookup(&m->owners, creds->uid) : (uid_t) -1;
}

int udisks_front_start(Manager *m, UDisksFront **ret) {
        _cleanup_(udisks_front_freep) UDisksFront *f = calloc(1, sizeof(UDisksFront));
        int r;

        if (!f)
                return log_error_errno(-ENOMEM, "UDisks2 front: %m");
        f->manager = m;
        f->sysfs_fd = open("/sys", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (f->sysfs_fd < 0)
                return log_error_errno(-errno, "UDisks2 front: cannot open /sys: %m");
        r = sd_bus_open_system(&f->bus);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot connect to the system bus: %m");
        r = udisks_vtables_add(f);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot export its objects: %m");
        r = busfds_new(f->bus, m->event, SD_EVENT_PRIORITY_NORMAL, on_front_disconnect, f,
                       &f->busfds);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot attach the bus: %m");
        busfds_set_owner_lookup(f->busfds, front_owner_of_sender, m);
        current = f;
        /* Watching first: a device that comes while the others are listed is not missed
         * (its event updates what the listing made, or makes it). */
        r = front_watch(f);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot watch udev: %m");
        r = front_enumerate(f);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot list block devices: %m");
        m->udisks = f;
        m->udisks_bus = f->bus;
        m->udisks_busfds = f->busfds;
        m->on_mounts_changed = manager_mounts_changed;
        r = sd_bus_request_name_async(f->bus, NULL, UDISKS_BUS_NAME, 0, on_front_name, f);
        if (r < 0)
                return log_error_errno(r, "UDisks2 front: cannot ask for %s: %m", UDISKS_BUS_NAME);
        *ret = TAKE_PTR(f);
        return 0;
}
