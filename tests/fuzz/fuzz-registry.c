/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the registry's state file reader (daemon/registry.c): the input is the whole file,
 * read with registry_load(). Every record it keeps must have the required fields (see
 * registry.h), be found by the lookups, and survive the round trip: saved with
 * registry_save() and loaded again, the registry is the same, with nothing dropped.
 */
#include <limits.h>

#include "fuzz.h"
#include "registry.h"
#include "utf8.h"

static void check_string(const char *s, bool required, bool path) {
        if (!s) {
                FUZZ_ASSERT(!required);
                return;
        }
        FUZZ_ASSERT(utf8_is_valid(s));
        if (path)
                FUZZ_ASSERT(s[0] == '/' && strlen(s) < PATH_MAX);
}

static void check_record(const Registry *reg, const MountRecord *r) {
        FUZZ_ASSERT(r->mount_id != 0 && r->mntns_id != 0);
        FUZZ_ASSERT(r->owner_uid != (uid_t) -1);
        FUZZ_ASSERT(!r->detaching);
        check_string(r->mount_point, true, true);
        check_string(r->device, true, true);
        check_string(r->backing_file, false, false);
        check_string(r->fstype, false, false);
        check_string(r->label, false, false);
        check_string(r->uuid, false, false);
        check_string(r->options, false, false);
        check_string(r->idmap, false, false);
        check_string(r->idmap_uid_map, false, false);
        check_string(r->idmap_gid_map, false, false);
        FUZZ_ASSERT(registry_find_mount_id(reg, r->mount_id) == r);
        FUZZ_ASSERT(registry_find_mount_point(reg, r->mntns_id, r->mount_point));
        FUZZ_ASSERT(registry_find_device(reg, r->mntns_id, r->device));
        FUZZ_ASSERT(registry_count_owner(reg, r->owner_uid) > 0);
}

static void check_same(const MountRecord *a, const MountRecord *b) {
        FUZZ_ASSERT(a->mount_id == b->mount_id && a->mntns_id == b->mntns_id);
        FUZZ_ASSERT(a->devnum == b->devnum && a->owner_uid == b->owner_uid);
        FUZZ_ASSERT(a->attr_set == b->attr_set && a->created_dir == b->created_dir);
        FUZZ_ASSERT(a->private_ns == b->private_ns);
        FUZZ_ASSERT(a->created_usec == b->created_usec);
        FUZZ_ASSERT(streq_ptr(a->mount_point, b->mount_point));
        FUZZ_ASSERT(streq_ptr(a->device, b->device));
        FUZZ_ASSERT(streq_ptr(a->backing_file, b->backing_file));
        FUZZ_ASSERT(streq_ptr(a->fstype, b->fstype));
        FUZZ_ASSERT(streq_ptr(a->label, b->label));
        FUZZ_ASSERT(streq_ptr(a->uuid, b->uuid));
        FUZZ_ASSERT(streq_ptr(a->options, b->options));
        FUZZ_ASSERT(streq_ptr(a->idmap, b->idmap));
        FUZZ_ASSERT(streq_ptr(a->idmap_uid_map, b->idmap_uid_map));
        FUZZ_ASSERT(streq_ptr(a->idmap_gid_map, b->idmap_gid_map));
}

/* Saves reg under path2 and loads it again. */
static void check_round_trip(Registry *reg, const char *path2) {
        _cleanup_(registry_freep) Registry *again = NULL;
        size_t dropped = SIZE_MAX;
        UmError e = {};
        char *path = reg->path;
        int r;

        reg->path = (char *) path2;
        r = registry_save(reg);
        reg->path = path;
        FUZZ_ASSERT(r == 0);
        r = registry_load(path2, &again, &dropped, &e);
        if (r < 0)
                fprintf(stderr, "reload: %s\n", e.message);
        FUZZ_ASSERT(r == 0 && dropped == 0);
        FUZZ_ASSERT(again->n_records == reg->n_records);
        for (size_t i = 0; i < reg->n_records; i++)
                check_same(reg->records[i], again->records[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *path, *path2;
        _cleanup_(registry_freep) Registry *reg = NULL;
        size_t dropped = SIZE_MAX;
        UmError e = {};
        int r;

        if (size > 1024 * 1024)
                return 0;
        if (!path) {
                path = fuzz_path("mounts.json");
                path2 = fuzz_path("saved.json");
        }
        fuzz_write_file(path, data, size);

        r = registry_load(path, &reg, &dropped, &e);
        if (r < 0) {
                FUZZ_ASSERT(!reg && e.kind != UM_ERROR_KIND_NONE && e.message[0]);
                FUZZ_ASSERT(r == -EBADMSG || r == -ENOMEM);
                return 0;
        }
        FUZZ_ASSERT(reg && streq(reg->path, path) && dropped != SIZE_MAX);
        FUZZ_ASSERT(reg->n_records <= REGISTRY_RECORDS_MAX);
        for (size_t i = 0; i < reg->n_records; i++)
                check_record(reg, reg->records[i]);
        check_round_trip(reg, path2);
        return 0;
}
