/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of attached mounts: records in memory, mirrored to a JSON state file that
 * is replaced atomically after every change and read back at start with every field
 * checked (see registry.h for the format and what is refused).
 */
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <limits.h>
#include <search.h>
#include <sys/stat.h>

#include "fd-util.h"
#include "registry.h"
#include "utf8.h"

#define REGISTRY_VERSION 1
/* Our nesting is three deep; unknown fields may nest a little, hostile ones not at all. */
#define REGISTRY_JSON_DEPTH 16

static inline void json_object_putp(struct json_object **o) {
        json_object_put(*o);
}
#define _cleanup_json_ _cleanup_(json_object_putp)

static inline void json_tokener_freep(struct json_tokener **t) {
        if (*t)
                json_tokener_free(*t);
}

MountRecord *mount_record_free(MountRecord *r) {
        if (!r)
                return NULL;
        free(r->mount_point);
        free(r->device);
        free(r->backing_file);
        free(r->fstype);
        free(r->label);
        free(r->uuid);
        free(r->options);
        free(r->idmap);
        free(r->idmap_uid_map);
        free(r->idmap_gid_map);
        free(r->driver);
        free(r->driver_name);
        free(r);
        return NULL;
}

Registry *registry_free(Registry *reg) {
        if (!reg)
                return NULL;
        for (size_t i = 0; i < reg->n_records; i++)
                mount_record_free(reg->records[i]);
        free(reg->records);
        free(reg->path);
        free(reg);
        return NULL;
}

/* ---- validation ------------------------------------------------------------------ */

static bool path_is_valid(const char *p) {
        return p && p[0] == '/' && strlen(p) < PATH_MAX && utf8_is_valid(p);
}

static bool string_is_valid(const char *s) {
        return !s || utf8_is_valid(s);
}

/* Whether rec has everything a reload needs, so that what is saved is never dropped. */
static bool mount_record_is_valid(const MountRecord *rec) {
        return rec->mount_id != 0 && rec->mntns_id != 0 && rec->owner_uid != (uid_t) -1 &&
               path_is_valid(rec->mount_point) && path_is_valid(rec->device) &&
               string_is_valid(rec->backing_file) && string_is_valid(rec->fstype) &&
               string_is_valid(rec->label) && string_is_valid(rec->uuid) &&
               string_is_valid(rec->options) && string_is_valid(rec->idmap) &&
               string_is_valid(rec->idmap_uid_map) && string_is_valid(rec->idmap_gid_map) &&
               string_is_valid(rec->driver) && string_is_valid(rec->driver_name) &&
               rec->driver_pid < INT32_MAX && rec->driver_uid < UINT32_MAX &&
               rec->driver_start != UINT64_MAX &&
               rec->mount_id != UINT64_MAX && rec->mntns_id != UINT64_MAX &&
               rec->devnum != UINT64_MAX && rec->attr_set != UINT64_MAX &&
               rec->created_usec != UINT64_MAX;
}

/* ---- reading --------------------------------------------------------------------- */

/*
 * Reads field key of o as an unsigned 64-bit integer. Absent: 0 when optional, else
 * -ENOENT. Wrong type, negative or clamped (json-c turns anything beyond 2^64-1 into
 * UINT64_MAX): -EINVAL.
 */
static int json_get_u64(struct json_object *o, const char *key, bool required, uint64_t *ret) {
        struct json_object *v;
        uint64_t u;

        if (!json_object_object_get_ex(o, key, &v)) {
                if (required)
                        return -ENOENT;
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
                return -EINVAL;
        u = json_object_get_uint64(v);
        if (u == UINT64_MAX)
                return -EINVAL;
        *ret = u;
        return 0;
}

/* Reads a string field: absent or null gives NULL unless required; no NUL, valid UTF-8. */
static int json_get_string(struct json_object *o, const char *key, bool required, char **ret) {
        struct json_object *v;
        const char *s;
        char *copy;

        if (!json_object_object_get_ex(o, key, &v) || json_object_is_type(v, json_type_null)) {
                if (required)
                        return -ENOENT;
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return -EINVAL;
        s = json_object_get_string(v);
        if (strlen(s) != (size_t) json_object_get_string_len(v) || !utf8_is_valid(s))
                return -EINVAL;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

static int json_get_bool(struct json_object *o, const char *key, bool *ret) {
        struct json_object *v;

        if (!json_object_object_get_ex(o, key, &v)) {
                *ret = false;
                return 0;
        }
        if (!json_object_is_type(v, json_type_boolean))
                return -EINVAL;
        *ret = json_object_get_boolean(v);
        return 0;
}

static int record_read_numbers(struct json_object *o, MountRecord *rec) {
        uint64_t uid = 0, partition = 0;
        int r;

        if ((r = json_get_u64(o, "mount_id", true, &rec->mount_id)) < 0 ||
            (r = json_get_u64(o, "mntns_id", true, &rec->mntns_id)) < 0 ||
            (r = json_get_u64(o, "owner_uid", true, &uid)) < 0 ||
            (r = json_get_u64(o, "devnum", false, &rec->devnum)) < 0 ||
            (r = json_get_u64(o, "attr_set", false, &rec->attr_set)) < 0 ||
            (r = json_get_u64(o, "created_usec", false, &rec->created_usec)) < 0 ||
            (r = json_get_u64(o, "driver_pid", false, &rec->driver_pid)) < 0 ||
            (r = json_get_u64(o, "driver_start", false, &rec->driver_start)) < 0 ||
            (r = json_get_u64(o, "driver_uid", false, &rec->driver_uid)) < 0 ||
            (r = json_get_u64(o, "partition", false, &partition)) < 0 ||
            (r = json_get_bool(o, "created_dir", &rec->created_dir)) < 0 ||
            (r = json_get_bool(o, "file_backed", &rec->file_backed)) < 0 ||
            (r = json_get_bool(o, "private_ns", &rec->private_ns)) < 0)
                return r;
        if (uid >= UINT32_MAX || partition > UINT32_MAX)
                return -EINVAL;
        rec->partition = (uint32_t) partition;
        rec->owner_uid = (uid_t) uid;
        return 0;
}

static int record_read_strings(struct json_object *o, MountRecord *rec) {
        int r;

        if ((r = json_get_string(o, "mount_point", true, &rec->mount_point)) < 0 ||
            (r = json_get_string(o, "device", true, &rec->device)) < 0 ||
            (r = json_get_string(o, "backing_file", false, &rec->backing_file)) < 0 ||
            (r = json_get_string(o, "fstype", false, &rec->fstype)) < 0 ||
            (r = json_get_string(o, "label", false, &rec->label)) < 0 ||
            (r = json_get_string(o, "uuid", false, &rec->uuid)) < 0 ||
            (r = json_get_string(o, "options", false, &rec->options)) < 0 ||
            (r = json_get_string(o, "idmap", false, &rec->idmap)) < 0 ||
            (r = json_get_string(o, "idmap_uid_map", false, &rec->idmap_uid_map)) < 0 ||
            (r = json_get_string(o, "idmap_gid_map", false, &rec->idmap_gid_map)) < 0 ||
            (r = json_get_string(o, "driver", false, &rec->driver)) < 0 ||
            (r = json_get_string(o, "driver_name", false, &rec->driver_name)) < 0)
                return r;
        return 0;
}

/* One record from one array element: -EINVAL if malformed, -ENOMEM. */
static int record_from_json(struct json_object *o, MountRecord **ret) {
        _cleanup_(mount_record_freep) MountRecord *rec = NULL;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -EINVAL;
        rec = calloc(1, sizeof(*rec));
        if (!rec)
                return -ENOMEM;
        r = record_read_numbers(o, rec);
        if (r >= 0)
                r = record_read_strings(o, rec);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || !mount_record_is_valid(rec))
                return -EINVAL;
        *ret = TAKE_PTR(rec);
        return 0;
}

/* Reads all of fd, at most REGISTRY_FILE_SIZE_MAX bytes, into a NUL-terminated buffer. */
static int read_bounded(int fd, size_t hint, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, allocated = 0;

        /* Reads one byte more than allowed, to notice a file that is (or grew) too large. */
        for (;;) {
                ssize_t n;

                if (size + 1 >= allocated) {
                        size_t want = allocated > 0 ? allocated * 2 : hint + 4096;
                        char *p;

                        if (want > (size_t) REGISTRY_FILE_SIZE_MAX + 2)
                                want = (size_t) REGISTRY_FILE_SIZE_MAX + 2;
                        if (want <= allocated)
                                return -EFBIG;
                        p = realloc(buf, want);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        allocated = want;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                size += (size_t) n;
                if (size > REGISTRY_FILE_SIZE_MAX)
                        return -EFBIG;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/*
 * Reads the whole state file into a NUL-terminated buffer. -ENOENT if it does not exist,
 * -EBADMSG (with error) if it is not a regular file or too large.
 */
static int read_state_file(const char *path, char **ret, size_t *ret_size, UmError *error) {
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return r;
                if (r == -ELOOP)
                        return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                            "the registry is a symbolic link");
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "the registry cannot be opened: %s", strerror(-r));
        }
        if (fstat(fd, &st) < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "the registry cannot be inspected");
        if (!S_ISREG(st.st_mode))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry is not a regular file");
        if (st.st_size > (off_t) REGISTRY_FILE_SIZE_MAX)
                r = -EFBIG;
        else
                r = read_bounded(fd, (size_t) st.st_size, ret, ret_size);
        if (r == -EFBIG)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry is larger than %u bytes",
                                    REGISTRY_FILE_SIZE_MAX);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "the registry cannot be read: %s", strerror(-r));
        return 0;
}

/* Parses the whole buffer as one JSON value; anything else is -EBADMSG. */
static int parse_json(const char *text, size_t size, struct json_object **ret, UmError *error) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = NULL;
        struct json_object *o;
        enum json_tokener_error e;

        /* JSON text never holds a raw NUL; json-c would stop there and ignore the rest. */
        if (memchr(text, 0, size))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry contains a NUL byte");
        tok = json_tokener_new_ex(REGISTRY_JSON_DEPTH);
        if (!tok)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        o = json_tokener_parse_ex(tok, text, (int) size);
        e = json_tokener_get_error(tok);
        if (!o || e != json_tokener_success) {
                json_object_put(o);
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry is not valid JSON: %s",
                                    e == json_tokener_continue ? "unexpected end of file"
                                                               : json_tokener_error_desc(e));
        }
        *ret = o;
        return 0;
}

/* The "mounts" array of a version 1 top-level object, or -EBADMSG. */
static int top_level_mounts(struct json_object *top, struct json_object **ret, UmError *error) {
        struct json_object *version, *mounts;

        if (!json_object_is_type(top, json_type_object))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry is not a JSON object");
        if (!json_object_object_get_ex(top, "version", &version) ||
            !json_object_is_type(version, json_type_int) ||
            json_object_get_int64(version) != REGISTRY_VERSION)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry does not have version %d", REGISTRY_VERSION);
        if (!json_object_object_get_ex(top, "mounts", &mounts) ||
            !json_object_is_type(mounts, json_type_array))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EBADMSG,
                                    "the registry has no \"mounts\" array");
        *ret = mounts;
        return 0;
}

static Registry *registry_new(const char *path) {
        Registry *reg = calloc(1, sizeof(*reg));

        if (!reg)
                return NULL;
        reg->path = strdup(path);
        if (!reg->path)
                return registry_free(reg);
        return reg;
}

/* Appends rec (taking ownership on success). */
static int registry_append(Registry *reg, MountRecord *rec) {
        MountRecord **a;

        if (reg->n_records >= REGISTRY_RECORDS_MAX)
                return -ENOSPC;
        a = reallocarray(reg->records, reg->n_records + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        reg->records = a;
        reg->records[reg->n_records++] = rec;
        return 0;
}

static int compare_mount_id(const void *a, const void *b) {
        uint64_t x = ((const MountRecord *) a)->mount_id, y = ((const MountRecord *) b)->mount_id;

        return x < y ? -1 : x > y;
}

static void tree_node_keep(void *node) {
}

/*
 * Keeps the valid records of mounts, the first of each mount id, up to the limit. A tree
 * of the ids seen keeps the duplicate check O(log n) even for a file at the limit.
 */
static int registry_fill(Registry *reg, struct json_object *mounts, size_t *ret_dropped) {
        size_t n = json_object_array_length(mounts), dropped = 0;
        void *seen = NULL;
        int failure = 0;

        for (size_t i = 0; i < n && failure == 0; i++) {
                _cleanup_(mount_record_freep) MountRecord *rec = NULL;
                void *node;
                int r;

                r = record_from_json(json_object_array_get_idx(mounts, i), &rec);
                if (r == -ENOMEM) {
                        failure = r;
                        continue;
                }
                if (r < 0 || reg->n_records >= REGISTRY_RECORDS_MAX) {
                        dropped++;
                        continue;
                }
                node = tsearch(rec, &seen, compare_mount_id);
                if (!node) {
                        failure = -ENOMEM;
                        continue;
                }
                if (*(MountRecord **) node != rec) {
                        dropped++; /* a mount id seen in an earlier record */
                        continue;
                }
                r = registry_append(reg, rec);
                if (r < 0) {
                        (void) tdelete(rec, &seen, compare_mount_id);
                        failure = r;
                        continue;
                }
                TAKE_PTR(rec);
        }
        tdestroy(seen, tree_node_keep);
        if (failure < 0)
                return failure;
        *ret_dropped = dropped;
        return 0;
}

int registry_load(const char *path, Registry **ret, size_t *ret_dropped, UmError *error) {
        _cleanup_(registry_freep) Registry *reg = NULL;
        _cleanup_json_ struct json_object *top = NULL;
        _cleanup_free_ char *text = NULL;
        struct json_object *mounts = NULL;
        size_t size = 0, dropped = 0;
        int r;

        if (isempty(path))
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL, "no registry path");
        reg = registry_new(path);
        if (!reg)
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "out of memory");

        r = read_state_file(path, &text, &size, error);
        if (r == -ENOENT)
                goto done;
        if (r < 0)
                return r;
        r = parse_json(text, size, &top, error);
        if (r < 0)
                return r;
        r = top_level_mounts(top, &mounts, error);
        if (r < 0)
                return r;
        r = registry_fill(reg, mounts, &dropped);
        if (r < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, r,
                                    "the registry cannot be loaded: %s", strerror(-r));
done:
        if (ret_dropped)
                *ret_dropped = dropped;
        *ret = TAKE_PTR(reg);
        return 0;
}

/* ---- writing --------------------------------------------------------------------- */

/* Adds key to o, taking v (which may be NULL after a failed allocation). */
static int json_add(struct json_object *o, const char *key, struct json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int json_add_u64(struct json_object *o, const char *key, uint64_t u) {
        return json_add(o, key, json_object_new_uint64(u));
}

/* Strings that are NULL are left out (absent reads back as NULL). */
static int json_add_string(struct json_object *o, const char *key, const char *s) {
        if (!s)
                return 0;
        return json_add(o, key, json_object_new_string(s));
}

static int record_to_json(const MountRecord *rec, struct json_object **ret) {
        _cleanup_json_ struct json_object *o = json_object_new_object();

        if (!o)
                return -ENOMEM;
        if (json_add_u64(o, "mount_id", rec->mount_id) < 0 ||
            json_add_u64(o, "mntns_id", rec->mntns_id) < 0 ||
            json_add_string(o, "mount_point", rec->mount_point) < 0 ||
            json_add_string(o, "device", rec->device) < 0 ||
            json_add_u64(o, "devnum", rec->devnum) < 0 ||
            json_add_string(o, "backing_file", rec->backing_file) < 0 ||
            json_add_u64(o, "owner_uid", rec->owner_uid) < 0 ||
            json_add_string(o, "fstype", rec->fstype) < 0 ||
            json_add_string(o, "label", rec->label) < 0 ||
            json_add_string(o, "uuid", rec->uuid) < 0 ||
            (rec->partition > 0 && json_add_u64(o, "partition", rec->partition) < 0) ||
            json_add_string(o, "options", rec->options) < 0 ||
            json_add_u64(o, "attr_set", rec->attr_set) < 0 ||
            json_add_string(o, "idmap", rec->idmap) < 0 ||
            json_add_string(o, "idmap_uid_map", rec->idmap_uid_map) < 0 ||
            json_add_string(o, "idmap_gid_map", rec->idmap_gid_map) < 0 ||
            json_add_string(o, "driver", rec->driver) < 0 ||
            json_add_string(o, "driver_name", rec->driver_name) < 0 ||
            (rec->driver_pid && (json_add_u64(o, "driver_pid", rec->driver_pid) < 0 ||
                                 json_add_u64(o, "driver_start", rec->driver_start) < 0 ||
                                 json_add_u64(o, "driver_uid", rec->driver_uid) < 0)) ||
            json_add(o, "created_dir", json_object_new_boolean(rec->created_dir)) < 0 ||
            json_add_u64(o, "created_usec", rec->created_usec) < 0)
                return -ENOMEM;
        /* Only where true: the records of every other mount read as before. */
        if (rec->file_backed &&
            json_add(o, "file_backed", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        if (rec->private_ns &&
            json_add(o, "private_ns", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* The whole file as text (owned by the caller), with a trailing newline. */
static int registry_to_text(const Registry *reg, char **ret) {
        _cleanup_json_ struct json_object *top = json_object_new_object();
        struct json_object *mounts = NULL;
        const char *s;
        char *text;

        if (!top || json_add(top, "version", json_object_new_int(REGISTRY_VERSION)) < 0 ||
            json_add(top, "mounts", json_object_new_array()) < 0)
                return -ENOMEM;
        mounts = json_object_object_get(top, "mounts");
        for (size_t i = 0; i < reg->n_records; i++) {
                struct json_object *o = NULL;

                if (record_to_json(reg->records[i], &o) < 0)
                        return -ENOMEM;
                if (json_object_array_add(mounts, o) < 0) {
                        json_object_put(o);
                        return -ENOMEM;
                }
        }
        s = json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s || asprintf(&text, "%s\n", s) < 0)
                return -ENOMEM;
        *ret = text;
        return 0;
}

int registry_save(const Registry *reg) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (!reg || isempty(reg->path))
                return -EINVAL;
        r = registry_to_text(reg, &text);
        if (r < 0)
                return r;
        return file_write_atomic(reg->path, text);
}

/* ---- changes and lookups --------------------------------------------------------- */

int registry_add(Registry *reg, MountRecord *rec) {
        int r;

        if (!reg || !rec || !mount_record_is_valid(rec))
                return -EINVAL;
        if (registry_find_mount_id(reg, rec->mount_id))
                return -EEXIST;
        r = registry_append(reg, rec);
        if (r < 0)
                return r;
        r = registry_save(reg);
        if (r < 0) {
                /* Memory as before; and the file too, if it was replaced after all. */
                reg->records[--reg->n_records] = NULL;
                (void) registry_save(reg);
                return r;
        }
        return 0;
}

int registry_remove(Registry *reg, MountRecord *rec) {
        size_t i;

        if (!reg || !rec)
                return -EINVAL;
        for (i = 0; i < reg->n_records; i++)
                if (reg->records[i] == rec)
                        break;
        if (i == reg->n_records)
                return -ENOENT;
        memmove(reg->records + i, reg->records + i + 1,
                (reg->n_records - i - 1) * sizeof(*reg->records));
        reg->n_records--;
        mount_record_free(rec);
        return registry_save(reg);
}

MountRecord *registry_find_mount_point(const Registry *reg, uint64_t mntns_id, const char *path) {
        if (!reg || !path)
                return NULL;
        for (size_t i = 0; i < reg->n_records; i++)
                if (reg->records[i]->mntns_id == mntns_id &&
                    streq(reg->records[i]->mount_point, path))
                        return reg->records[i];
        return NULL;
}

MountRecord *registry_find_mount_id(const Registry *reg, uint64_t mount_id) {
        if (!reg)
                return NULL;
        for (size_t i = 0; i < reg->n_records; i++)
                if (reg->records[i]->mount_id == mount_id)
                        return reg->records[i];
        return NULL;
}

MountRecord *registry_find_device(const Registry *reg, uint64_t mntns_id, const char *device) {
        if (!reg || !device)
                return NULL;
        for (size_t i = 0; i < reg->n_records; i++)
                if (reg->records[i]->mntns_id == mntns_id &&
                    streq(reg->records[i]->device, device))
                        return reg->records[i];
        return NULL;
}

size_t registry_count_owner(const Registry *reg, uid_t uid) {
        size_t n = 0;

        if (!reg)
                return 0;
        for (size_t i = 0; i < reg->n_records; i++)
                if (reg->records[i]->owner_uid == uid)
                        n++;
        return n;
}
