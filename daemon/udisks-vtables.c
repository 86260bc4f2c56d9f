/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The UDisks2 front's objects on the bus (udisks-front.h): every interface of udisks
 * 2.9.4's data/org.freedesktop.UDisks2.xml that the front serves, each property typed as
 * that file says (GLib clients drop a value of another type, and some crash on a missing
 * one), byte strings with their trailing NUL, "/" for no object, every property sent with
 * its value when it changes. Methods that change nothing usermount does answer
 * NotSupported.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "manager-dbus.h"
#include "udisks-front.h"

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
#define CONST SD_BUS_VTABLE_PROPERTY_CONST
#define UNPRIV SD_BUS_VTABLE_UNPRIVILEGED

/* ---- getters ------------------------------------------------------------------------ */

static int get_bool(sd_bus *bus, const char *path, const char *interface, const char *property,
                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "b", (int) *(const bool *) userdata);
}

/* ay: the string and its NUL (g_variant_get_bytestring() reads "" without it). */
static int append_bytestring(sd_bus_message *reply, const char *s) {
        return sd_bus_message_append_array(reply, 'y', s ?: "", strlen(s ?: "") + 1);
}

static int get_bytestring(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error) {
        return append_bytestring(reply, *(char *const *) userdata);
}

static int append_bytestrings(sd_bus_message *reply, const char *const *list) {
        int r = sd_bus_message_open_container(reply, 'a', "ay");

        for (; r >= 0 && list && *list; list++)
                r = append_bytestring(reply, *list);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int get_symlinks(sd_bus *bus, const char *path, const char *interface,
                        const char *property, sd_bus_message *reply, void *userdata,
                        sd_bus_error *error) {
        const UDisksBlock *b = userdata;

        return append_bytestrings(reply, (const char *const *) b->symlinks);
}

static int get_mount_points(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        _cleanup_free_ const char **list = udisks_front_mount_points(udisks_front_current(),
                                                                    userdata, false);

        if (!list)
                return -ENOMEM;
        return append_bytestrings(reply, list);
}

static int get_devnum(sd_bus *bus, const char *path, const char *interface,
                      const char *property, sd_bus_message *reply, void *userdata,
                      sd_bus_error *error) {
        const UDisksBlock *b = userdata;

        return sd_bus_message_append(reply, "t", (uint64_t) b->devnum);
}

static int get_no_object(sd_bus *bus, const char *path, const char *interface,
                         const char *property, sd_bus_message *reply, void *userdata,
                         sd_bus_error *error) {
        return sd_bus_message_append(reply, "o", "/");
}

/* The empty values: no fstab or crypttab items, no options, no media compatibility list. */
static int append_empty(sd_bus_message *reply, const char *element) {
        int r = sd_bus_message_open_container(reply, 'a', element);

        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int get_empty_items(sd_bus *bus, const char *path, const char *interface,
                           const char *property, sd_bus_message *reply, void *userdata,
                           sd_bus_error *error) {
        return append_empty(reply, "(sa{sv})");
}

static int get_empty_dict(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error) {
        return append_empty(reply, "{sv}");
}

static int get_empty_strings(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error) {
        return append_empty(reply, "s");
}

static int get_false(sd_bus *bus, const char *path, const char *interface,
                     const char *property, sd_bus_message *reply, void *userdata,
                     sd_bus_error *error) {
        return sd_bus_message_append(reply, "b", 0);
}

static int get_zero_u(sd_bus *bus, const char *path, const char *interface,
                      const char *property, sd_bus_message *reply, void *userdata,
                      sd_bus_error *error) {
        return sd_bus_message_append(reply, "u", 0);
}

static int get_zero_i(sd_bus *bus, const char *path, const char *interface,
                      const char *property, sd_bus_message *reply, void *userdata,
                      sd_bus_error *error) {
        return sd_bus_message_append(reply, "i", 0);
}

static int get_fs_size(sd_bus *bus, const char *path, const char *interface,
                       const char *property, sd_bus_message *reply, void *userdata,
                       sd_bus_error *error) {
        const UDisksBlock *b = userdata;

        /* udisks reports the filesystem's own size only for the types it reads it of;
         * the block's size is what Solid's flat property cache would find anyway. */
        return sd_bus_message_append(reply, "t", b->size);
}

static int get_partitions(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error) {
        const UDisksBlock *table = userdata;
        UDisksFront *f = udisks_front_current();
        int r = sd_bus_message_open_container(reply, 'a', "o");

        for (size_t i = 0; r >= 0 && f && i < f->n_blocks; i++)
                if (f->blocks[i]->is_partition && streq(f->blocks[i]->part_table, table->path))
                        r = sd_bus_message_append(reply, "o", f->blocks[i]->path);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* ---- methods that change nothing usermount does ----------------------------------------- */

static int method_not_supported(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        return udisks_reply_not_supported(m, sd_bus_message_get_member(m));
}

#define NOT_SUPPORTED(name, in, out) SD_BUS_METHOD(name, in, out, method_not_supported, UNPRIV)

/* ---- Block, Filesystem, Partition, PartitionTable, Loop --------------------------------- */

#define B(field) offsetof(UDisksBlock, field)

static const sd_bus_vtable block_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Device", "ay", get_bytestring, B(device), EC),
        SD_BUS_PROPERTY("PreferredDevice", "ay", get_bytestring, B(device), EC),
        SD_BUS_PROPERTY("Symlinks", "aay", get_symlinks, 0, EC),
        SD_BUS_PROPERTY("DeviceNumber", "t", get_devnum, 0, EC),
        SD_BUS_PROPERTY("Id", "s", NULL, B(id), EC),
        SD_BUS_PROPERTY("Size", "t", NULL, B(size), EC),
        SD_BUS_PROPERTY("ReadOnly", "b", get_bool, B(read_only), EC),
        SD_BUS_PROPERTY("Drive", "o", NULL, B(drive_path), EC),
        SD_BUS_PROPERTY("MDRaid", "o", get_no_object, 0, EC),
        SD_BUS_PROPERTY("MDRaidMember", "o", get_no_object, 0, EC),
        SD_BUS_PROPERTY("IdUsage", "s", NULL, B(id_usage), EC),
        SD_BUS_PROPERTY("IdType", "s", NULL, B(id_type), EC),
        SD_BUS_PROPERTY("IdVersion", "s", NULL, B(id_version), EC),
        SD_BUS_PROPERTY("IdLabel", "s", NULL, B(id_label), EC),
        SD_BUS_PROPERTY("IdUUID", "s", NULL, B(id_uuid), EC),
        SD_BUS_PROPERTY("Configuration", "a(sa{sv})", get_empty_items, 0, EC),
        SD_BUS_PROPERTY("CryptoBackingDevice", "o", get_no_object, 0, EC),
        SD_BUS_PROPERTY("HintPartitionable", "b", get_bool, B(hint_partitionable), EC),
        SD_BUS_PROPERTY("HintSystem", "b", get_bool, B(hint_system), EC),
        SD_BUS_PROPERTY("HintIgnore", "b", get_bool, B(hint_ignore), EC),
        SD_BUS_PROPERTY("HintAuto", "b", get_bool, B(hint_auto), EC),
        SD_BUS_PROPERTY("HintName", "s", NULL, B(hint_name), EC),
        SD_BUS_PROPERTY("HintIconName", "s", NULL, B(hint_icon_name), EC),
        SD_BUS_PROPERTY("HintSymbolicIconName", "s", NULL, B(hint_symbolic_icon_name), EC),
        SD_BUS_PROPERTY("UserspaceMountOptions", "as", get_empty_strings, 0, EC),
        NOT_SUPPORTED("AddConfigurationItem", "(sa{sv})a{sv}", ""),
        NOT_SUPPORTED("RemoveConfigurationItem", "(sa{sv})a{sv}", ""),
        NOT_SUPPORTED("UpdateConfigurationItem", "(sa{sv})(sa{sv})a{sv}", ""),
        NOT_SUPPORTED("GetSecretConfiguration", "a{sv}", "a(sa{sv})"),
        NOT_SUPPORTED("Format", "sa{sv}", ""),
        NOT_SUPPORTED("OpenForBackup", "a{sv}", "h"),
        NOT_SUPPORTED("OpenForRestore", "a{sv}", "h"),
        NOT_SUPPORTED("OpenForBenchmark", "a{sv}", "h"),
        NOT_SUPPORTED("OpenDevice", "sa{sv}", "h"),
        NOT_SUPPORTED("Rescan", "a{sv}", ""),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable filesystem_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("MountPoints", "aay", get_mount_points, 0, EC),
        SD_BUS_PROPERTY("Size", "t", get_fs_size, 0, EC),
        SD_BUS_METHOD("Mount", "a{sv}", "s", udisks_method_mount, UNPRIV),
        SD_BUS_METHOD("Unmount", "a{sv}", "", udisks_method_unmount, UNPRIV),
        NOT_SUPPORTED("SetLabel", "sa{sv}", ""),
        NOT_SUPPORTED("Resize", "ta{sv}", ""),
        NOT_SUPPORTED("Check", "a{sv}", "b"),
        NOT_SUPPORTED("Repair", "a{sv}", "b"),
        NOT_SUPPORTED("TakeOwnership", "a{sv}", ""),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable partition_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Number", "u", NULL, B(part_number), EC),
        SD_BUS_PROPERTY("Type", "s", NULL, B(part_type), EC),
        SD_BUS_PROPERTY("Flags", "t", NULL, B(part_flags), EC),
        SD_BUS_PROPERTY("Offset", "t", NULL, B(part_offset), EC),
        SD_BUS_PROPERTY("Size", "t", NULL, B(part_size), EC),
        SD_BUS_PROPERTY("Name", "s", NULL, B(part_name), EC),
        SD_BUS_PROPERTY("UUID", "s", NULL, B(part_uuid), EC),
        SD_BUS_PROPERTY("Table", "o", NULL, B(part_table), EC),
        SD_BUS_PROPERTY("IsContainer", "b", get_false, 0, EC),
        SD_BUS_PROPERTY("IsContained", "b", get_false, 0, EC),
        NOT_SUPPORTED("SetType", "sa{sv}", ""),
        NOT_SUPPORTED("SetName", "sa{sv}", ""),
        NOT_SUPPORTED("SetFlags", "ta{sv}", ""),
        NOT_SUPPORTED("Resize", "ta{sv}", ""),
        NOT_SUPPORTED("Delete", "a{sv}", ""),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable partition_table_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Partitions", "ao", get_partitions, 0, EC),
        SD_BUS_PROPERTY("Type", "s", NULL, B(table_type), EC),
        NOT_SUPPORTED("CreatePartition", "ttssa{sv}", "o"),
        NOT_SUPPORTED("CreatePartitionAndFormat", "ttssa{sv}sa{sv}", "o"),
        SD_BUS_VTABLE_END,
};

static const sd_bus_vtable loop_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("BackingFile", "ay", get_bytestring, B(backing_file), EC),
        SD_BUS_PROPERTY("Autoclear", "b", get_bool, B(autoclear), EC),
        SD_BUS_PROPERTY("SetupByUID", "u", NULL, B(setup_by_uid), EC),
        SD_BUS_METHOD("Delete", "a{sv}", "", udisks_method_loop_delete, UNPRIV),
        SD_BUS_METHOD("SetAutoclear", "ba{sv}", "", udisks_method_loop_set_autoclear, UNPRIV),
        SD_BUS_VTABLE_END,
};

/* ---- Drive --------------------------------------------------------------------------- */

#define D(field) offsetof(UDisksDrive, field)

static const sd_bus_vtable drive_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Vendor", "s", NULL, D(vendor), EC),
        SD_BUS_PROPERTY("Model", "s", NULL, D(model), EC),
        SD_BUS_PROPERTY("Revision", "s", NULL, D(revision), EC),
        SD_BUS_PROPERTY("Serial", "s", NULL, D(serial), EC),
        SD_BUS_PROPERTY("WWN", "s", NULL, D(wwn), EC),
        SD_BUS_PROPERTY("Id", "s", NULL, D(id), EC),
        SD_BUS_PROPERTY("Configuration", "a{sv}", get_empty_dict, 0, EC),
        SD_BUS_PROPERTY("Media", "s", NULL, D(media), EC),
        SD_BUS_PROPERTY("MediaCompatibility", "as", get_empty_strings, 0, EC),
        SD_BUS_PROPERTY("MediaRemovable", "b", get_bool, D(media_removable), EC),
        SD_BUS_PROPERTY("MediaAvailable", "b", get_bool, D(media_available), EC),
        SD_BUS_PROPERTY("MediaChangeDetected", "b", get_bool, D(media_available), EC),
        SD_BUS_PROPERTY("Size", "t", NULL, D(size), EC),
        SD_BUS_PROPERTY("TimeDetected", "t", NULL, D(time_detected), EC),
        SD_BUS_PROPERTY("TimeMediaDetected", "t", NULL, D(time_media_detected), EC),
        SD_BUS_PROPERTY("Optical", "b", get_false, 0, EC),
        SD_BUS_PROPERTY("OpticalBlank", "b", get_false, 0, EC),
        SD_BUS_PROPERTY("OpticalNumTracks", "u", get_zero_u, 0, EC),
        SD_BUS_PROPERTY("OpticalNumAudioTracks", "u", get_zero_u, 0, EC),
        SD_BUS_PROPERTY("OpticalNumDataTracks", "u", get_zero_u, 0, EC),
        SD_BUS_PROPERTY("OpticalNumSessions", "u", get_zero_u, 0, EC),
        SD_BUS_PROPERTY("RotationRate", "i", get_zero_i, 0, EC),
        SD_BUS_PROPERTY("ConnectionBus", "s", NULL, D(connection_bus), EC),
        SD_BUS_PROPERTY("Seat", "s", NULL, D(seat), EC),
        SD_BUS_PROPERTY("Removable", "b", get_bool, D(removable), EC),
        SD_BUS_PROPERTY("Ejectable", "b", get_bool, D(ejectable), EC),
        SD_BUS_PROPERTY("SortKey", "s", NULL, D(sort_key), EC),
        SD_BUS_PROPERTY("CanPowerOff", "b", get_bool, D(can_power_off), EC),
        SD_BUS_PROPERTY("SiblingId", "s", NULL, D(sibling_id), EC),
        SD_BUS_METHOD("Eject", "a{sv}", "", udisks_method_eject, UNPRIV),
        SD_BUS_METHOD("PowerOff", "a{sv}", "", udisks_method_power_off, UNPRIV),
        NOT_SUPPORTED("SetConfiguration", "a{sv}a{sv}", ""),
        SD_BUS_VTABLE_END,
};

/* ---- Manager ------------------------------------------------------------------------- */

static int get_version(sd_bus *bus, const char *path, const char *interface,
                       const char *property, sd_bus_message *reply, void *userdata,
                       sd_bus_error *error) {
        /* The udisks API level served, in udisks' form: clients compare it as dotted
         * integers (udiskie fails on anything else). */
        return sd_bus_message_append(reply, "s", "2.9.4");
}

static int get_supported_filesystems(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply,
                                     void *userdata, sd_bus_error *error) {
        UDisksFront *f = userdata;

        return bus_append_supported_filesystems(reply, f->manager);
}

static int get_empty_string(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", "");
}

/* Can*(s) -> (b s): no, and why. */
static int method_can(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        const char *member = sd_bus_message_get_member(m);
        const char *why = "usermount's UDisks2 service mounts filesystems; it does not "
                          "format, resize, check or repair them";

        if (streq(member, "CanResize"))
                return sd_bus_reply_method_return(m, "(bts)", 0, (uint64_t) 0, why);
        return sd_bus_reply_method_return(m, "(bs)", 0, why);
}

static int method_get_block_devices(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        UDisksFront *f = userdata;
        int r;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "o");
        for (size_t i = 0; r >= 0 && i < f->n_blocks; i++)
                r = sd_bus_message_append(reply, "o", f->blocks[i]->path);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", get_version, 0, CONST),
        SD_BUS_PROPERTY("SupportedFilesystems", "as", get_supported_filesystems, 0, EC),
        SD_BUS_PROPERTY("SupportedEncryptionTypes", "as", get_empty_strings, 0, CONST),
        SD_BUS_PROPERTY("DefaultEncryptionType", "s", get_empty_string, 0, CONST),
        SD_BUS_METHOD("LoopSetup", "ha{sv}", "o", udisks_method_loop_setup, UNPRIV),
        SD_BUS_METHOD("GetBlockDevices", "a{sv}", "ao", method_get_block_devices, UNPRIV),
        SD_BUS_METHOD("CanFormat", "s", "(bs)", method_can, UNPRIV),
        SD_BUS_METHOD("CanResize", "s", "(bts)", method_can, UNPRIV),
        SD_BUS_METHOD("CanCheck", "s", "(bs)", method_can, UNPRIV),
        SD_BUS_METHOD("CanRepair", "s", "(bs)", method_can, UNPRIV),
        NOT_SUPPORTED("MDRaidCreate", "aossta{sv}", "o"),
        NOT_SUPPORTED("EnableModules", "b", ""),
        NOT_SUPPORTED("EnableModule", "sb", ""),
        NOT_SUPPORTED("ResolveDevice", "a{sv}a{sv}", "ao"),
        SD_BUS_VTABLE_END,
};

/* ---- finding objects ----------------------------------------------------------------- */

typedef enum BlockKind {
        KIND_BLOCK,
        KIND_FILESYSTEM,
        KIND_PARTITION,
        KIND_TABLE,
        KIND_LOOP,
} BlockKind;

static int find_block_kind(const char *path, void *userdata, void **found, BlockKind kind) {
        UDisksBlock *b = udisks_front_block_by_path(userdata, path);

        if (!b)
                return 0;
        switch (kind) {
        case KIND_BLOCK:
                break;
        case KIND_FILESYSTEM:
                if (!b->has_filesystem)
                        return 0;
                break;
        case KIND_PARTITION:
                if (!b->is_partition)
                        return 0;
                break;
        case KIND_TABLE:
                if (!b->is_table)
                        return 0;
                break;
        case KIND_LOOP:
                if (!b->is_loop)
                        return 0;
                break;
        }
        *found = b;
        return 1;
}

#define FIND(fn, kind)                                                                      \
        static int fn(sd_bus *bus, const char *path, const char *interface, void *userdata, \
                      void **found, sd_bus_error *error) {                                  \
                return find_block_kind(path, userdata, found, kind);                        \
        }
FIND(find_block, KIND_BLOCK)
FIND(find_filesystem, KIND_FILESYSTEM)
FIND(find_partition, KIND_PARTITION)
FIND(find_table, KIND_TABLE)
FIND(find_loop, KIND_LOOP)

static int find_drive(sd_bus *bus, const char *path, const char *interface, void *userdata,
                      void **found, sd_bus_error *error) {
        UDisksDrive *d = udisks_front_drive_by_path(userdata, path);

        if (!d)
                return 0;
        *found = d;
        return 1;
}

/* The children of block_devices/ or drives/. sd-bus asks with the prefix of whatever it
 * lists (the object manager's path for GetManagedObjects), so each kind has its own. */
static int enumerate_paths(UDisksFront *f, bool blocks, char ***nodes) {
        size_t n = blocks ? f->n_blocks : f->n_drives;
        char **list = calloc(n + 1, sizeof(char *));

        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                list[i] = strdup(blocks ? f->blocks[i]->path : f->drives[i]->path);
                if (!list[i]) {
                        for (size_t j = 0; j < i; j++)
                                free(list[j]);
                        free(list);
                        return -ENOMEM;
                }
        }
        *nodes = list;
        return 0;
}

static int enumerate_blocks(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
                            sd_bus_error *error) {
        return enumerate_paths(userdata, true, nodes);
}

static int enumerate_drives(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
                            sd_bus_error *error) {
        return enumerate_paths(userdata, false, nodes);
}

int udisks_vtables_add(UDisksFront *f) {
        static const struct {
                const char *interface;
                const sd_bus_vtable *vtable;
                sd_bus_object_find_t find;
        } blocks[] = {
                { "org.freedesktop.UDisks2.Block", block_vtable, find_block },
                { "org.freedesktop.UDisks2.Filesystem", filesystem_vtable, find_filesystem },
                { "org.freedesktop.UDisks2.Partition", partition_vtable, find_partition },
                { "org.freedesktop.UDisks2.PartitionTable", partition_table_vtable, find_table },
                { "org.freedesktop.UDisks2.Loop", loop_vtable, find_loop },
        };
        int r;

        r = sd_bus_add_object_manager(f->bus, NULL, UDISKS_PATH);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(f->bus, NULL, UDISKS_PATH "/Manager",
                                     "org.freedesktop.UDisks2.Manager", manager_vtable, f);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(blocks); i++) {
                r = sd_bus_add_fallback_vtable(f->bus, NULL, UDISKS_BLOCK_PREFIX,
                                               blocks[i].interface, blocks[i].vtable,
                                               blocks[i].find, f);
                if (r < 0)
                        return r;
        }
        r = sd_bus_add_fallback_vtable(f->bus, NULL, UDISKS_DRIVE_PREFIX,
                                       "org.freedesktop.UDisks2.Drive", drive_vtable, find_drive,
                                       f);
        if (r < 0)
                return r;
        r = sd_bus_add_node_enumerator(f->bus, NULL, UDISKS_BLOCK_PREFIX, enumerate_blocks, f);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(f->bus, NULL, UDISKS_DRIVE_PREFIX, enumerate_drives,
                                          f);
}
