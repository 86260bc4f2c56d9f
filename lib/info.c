/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The info dict of a mount (org.freedesktop.UserMount1(5), "info keys") as an opaque object with
 * one getter per key (usermount_list(3)). The known keys are kept typed; the whole dict, including
 * keys a newer usermountd adds, is also kept as JSON text, so that a caller can pass on
 * what it does not know yet without a D-Bus type in this library's API.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib-internal.h"

/* D-Bus allows 32 nested arrays and 32 nested structs; variants nest too. */
#define JSON_MAX_DEPTH 128

enum {
        INFO_MOUNT_POINT,
        INFO_DEVICE,
        INFO_BACKING_FILE,
        INFO_FSTYPE,
        INFO_LABEL,
        INFO_UUID,
        INFO_OPTIONS,
        INFO_DRIVER,
        INFO_IDMAP,
        INFO_IDMAP_UID_MAP,
        INFO_IDMAP_GID_MAP,
        _INFO_STRING_MAX,
};

struct usermount_info {
        char *strings[_INFO_STRING_MAX];
        char **attributes;
        uint64_t mount_id;
        uint64_t created_usec;
        uint32_t partition;
        uint32_t owner_uid;
        bool has_owner_uid;
        char *json;
};

static const char *const string_keys[_INFO_STRING_MAX] = {
        [INFO_MOUNT_POINT] = "mount-point",
        [INFO_DEVICE] = "device",
        [INFO_BACKING_FILE] = "backing-file",
        [INFO_FSTYPE] = "fstype",
        [INFO_LABEL] = "label",
        [INFO_UUID] = "uuid",
        [INFO_OPTIONS] = "options",
        [INFO_DRIVER] = "driver",
        [INFO_IDMAP] = "idmap",
        [INFO_IDMAP_UID_MAP] = "idmap-uid-map",
        [INFO_IDMAP_GID_MAP] = "idmap-gid-map",
};

_public_ usermount_info *usermount_info_free(usermount_info *info) {
        if (!info)
                return NULL;
        for (size_t i = 0; i < _INFO_STRING_MAX; i++)
                free(info->strings[i]);
        usermount_strv_free(info->attributes);
        free(info->json);
        free(info);
        return NULL;
}


/* Writes s as a JSON string. */
static void json_put_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

static int json_put_value(sd_bus_message *m, FILE *f, unsigned depth);

/* Writes the basic value of type at m's position. */
static int json_put_basic(sd_bus_message *m, char type, FILE *f) {
        union {
                uint8_t y;
                int16_t n;
                uint16_t q;
                int32_t i;
                uint32_t u;
                int64_t x;
                uint64_t t;
                double d;
                int b;
                int h;
                const char *s;
        } v;
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        switch (type) {
        case SD_BUS_TYPE_BYTE: fprintf(f, "%u", (unsigned) v.y); break;
        case SD_BUS_TYPE_INT16: fprintf(f, "%d", (int) v.n); break;
        case SD_BUS_TYPE_UINT16: fprintf(f, "%u", (unsigned) v.q); break;
        case SD_BUS_TYPE_INT32: fprintf(f, "%" PRId32, v.i); break;
        case SD_BUS_TYPE_UINT32: fprintf(f, "%" PRIu32, v.u); break;
        case SD_BUS_TYPE_INT64: fprintf(f, "%" PRId64, v.x); break;
        case SD_BUS_TYPE_UINT64: fprintf(f, "%" PRIu64, v.t); break;
        case SD_BUS_TYPE_DOUBLE:
                /* JSON has no NaN or infinity. */
                if (isfinite(v.d))
                        fprintf(f, "%.17g", v.d);
                else
                        fputs("null", f);
                break;
        case SD_BUS_TYPE_BOOLEAN: fputs(v.b ? "true" : "false", f); break;
        case SD_BUS_TYPE_UNIX_FD:
                /* A number that means nothing outside this process. */
                fputs("null", f);
                break;
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_OBJECT_PATH:
        case SD_BUS_TYPE_SIGNATURE:
                json_put_string(f, v.s);
                break;
        default:
                return -EBADMSG;
        }
        return 0;
}

/* Writes a dict entry's key, whatever its basic type, as a JSON string. */
static int json_put_key(sd_bus_message *m, FILE *f) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *k;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, NULL);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (type == SD_BUS_TYPE_STRING || type == SD_BUS_TYPE_OBJECT_PATH ||
            type == SD_BUS_TYPE_SIGNATURE)
                return json_put_basic(m, type, f);
        k = open_memstream(&buf, &size);
        if (!k)
                return -ENOMEM;
        r = json_put_basic(m, type, k);
        if (fclose(k) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        json_put_string(f, buf);
        return 0;
}

/* Writes the elements of the container m is in, up to its end; dict entries as "k":v. */
static int json_put_elements(sd_bus_message *m, FILE *f, unsigned depth, bool dict) {
        const char *sep = "";
        int r;

        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                fputs(sep, f);
                sep = ",";
                if (dict) {
                        const char *contents;
                        char type;

                        r = sd_bus_message_peek_type(m, &type, &contents);
                        if (r < 0)
                                return r;
                        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, contents);
                        if (r <= 0)
                                return r < 0 ? r : -EBADMSG;
                        r = json_put_key(m, f);
                        if (r < 0)
                                return r;
                        fputc(':', f);
                        r = json_put_value(m, f, depth + 1);
                        if (r < 0)
                                return r;
                        r = sd_bus_message_exit_container(m);
                } else
                        r = json_put_value(m, f, depth + 1);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : 0;
}

/* Writes the next complete value of m, of any D-Bus type, as JSON. */
static int json_put_value(sd_bus_message *m, FILE *f, unsigned depth) {
        const char *contents;
        char type;
        bool dict;
        int r;

        if (depth > JSON_MAX_DEPTH)
                return -EBADMSG;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (type != SD_BUS_TYPE_ARRAY && type != SD_BUS_TYPE_VARIANT &&
            type != SD_BUS_TYPE_STRUCT)
                return json_put_basic(m, type, f);
        dict = type == SD_BUS_TYPE_ARRAY && contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN;

        r = sd_bus_message_enter_container(m, type, contents);
        if (r < 0)
                return r;
        if (type == SD_BUS_TYPE_VARIANT)
                r = json_put_value(m, f, depth + 1);
        else {
                fputc(dict ? '{' : '[', f);
                r = json_put_elements(m, f, depth, dict);
                fputc(dict ? '}' : ']', f);
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

/* Reads the variant of a known key into info if it has the key's type, writing its JSON. */
static int read_known(sd_bus_message *m, usermount_info *info, const char *key, FILE *f) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (type != SD_BUS_TYPE_VARIANT)
                return -EBADMSG;

        for (size_t i = 0; i < _INFO_STRING_MAX; i++)
                if (streq(key, string_keys[i]) && streq(contents, "s")) {
                        const char *s;
                        char *copy;

                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r < 0)
                                return r;
                        copy = strdup(s);
                        if (!copy)
                                return -ENOMEM;
                        /* A repeated key: the last one wins, as in the JSON. */
                        free(info->strings[i]);
                        info->strings[i] = copy;
                        json_put_string(f, s);
                        return 1;
                }

        if (streq(key, "attributes") && streq(contents, "as")) {
                char **l = NULL;

                r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, "as");
                if (r >= 0)
                        r = sd_bus_message_read_strv(m, &l);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0) {
                        usermount_strv_free(l);
                        return r;
                }
                usermount_strv_free(info->attributes);
                info->attributes = l;
                fputc('[', f);
                for (char **a = l; a && *a; a++) {
                        if (a != l)
                                fputc(',', f);
                        json_put_string(f, *a);
                }
                fputc(']', f);
                return 1;
        }
        if ((streq(key, "mount-id") || streq(key, "created-usec")) && streq(contents, "t")) {
                uint64_t v;

                r = sd_bus_message_read(m, "v", "t", &v);
                if (r < 0)
                        return r;
                *(streq(key, "mount-id") ? &info->mount_id : &info->created_usec) = v;
                fprintf(f, "%" PRIu64, v);
                return 1;
        }
        if ((streq(key, "partition") || streq(key, "owner-uid")) && streq(contents, "u")) {
                uint32_t v;

                r = sd_bus_message_read(m, "v", "u", &v);
                if (r < 0)
                        return r;
                if (streq(key, "partition"))
                        info->partition = v;
                else {
                        info->owner_uid = v;
                        info->has_owner_uid = true;
                }
                fprintf(f, "%" PRIu32, v);
                return 1;
        }
        return 0;
}

/* Reads one {sv} entry into info and writes it to the JSON object. */
static int read_entry(sd_bus_message *m, usermount_info *info, FILE *f) {
        const char *key;
        int r;

        r = sd_bus_message_read(m, "s", &key);
        if (r < 0)
                return r;
        json_put_string(f, key);
        fputc(':', f);
        r = read_known(m, info, key, f);
        if (r < 0)
                return r;
        if (r == 0)
                /* Unknown to this library, or of another type: only in the JSON. */
                r = json_put_value(m, f, 1);
        return r < 0 ? r : 0;
}

int info_read(sd_bus_message *m, usermount_info **ret) {
        _cleanup_(usermount_info_freep) usermount_info *info = NULL;
        _cleanup_free_ char *json = NULL;
        const char *sep = "";
        size_t size = 0;
        FILE *f;
        int r;

        info = calloc(1, sizeof(*info));
        if (!info)
                return -ENOMEM;
        f = open_memstream(&json, &size);
        if (!f)
                return -ENOMEM;

        fputc('{', f);
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r == 0)
                r = -EBADMSG;
        while (r >= 0 &&
               (r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv")) > 0) {
                fputs(sep, f);
                sep = ",";
                r = read_entry(m, info, f);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        fputc('}', f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;

        info->json = TAKE_PTR(json);
        *ret = TAKE_PTR(info);
        return 0;
}

int info_read_array(sd_bus_message *m, usermount_info ***ret, size_t *ret_n) {
        usermount_info **infos = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "a{sv}");
        if (r == 0)
                r = -EBADMSG;
        while (r >= 0 && (r = sd_bus_message_at_end(m, false)) == 0) {
                usermount_info **grown = reallocarray(infos, n + 1, sizeof(*infos));

                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                infos = grown;
                r = info_read(m, &infos[n]);
                if (r >= 0)
                        n++;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                usermount_info_list_free(infos, n);
                return r;
        }
        *ret = infos;
        *ret_n = n;
        return 0;
}

_public_ void usermount_info_list_free(usermount_info **infos, size_t n) {
        for (size_t i = 0; infos && i < n; i++)
                usermount_info_free(infos[i]);
        free(infos);
}

#define STRING_GETTER(name, index)                                                   \
        _public_ const char *usermount_info_get_##name(const usermount_info *info) { \
                return info ? info->strings[index] : NULL;                           \
        }

STRING_GETTER(mount_point, INFO_MOUNT_POINT)
STRING_GETTER(device, INFO_DEVICE)
STRING_GETTER(backing_file, INFO_BACKING_FILE)
STRING_GETTER(fstype, INFO_FSTYPE)
STRING_GETTER(label, INFO_LABEL)
STRING_GETTER(uuid, INFO_UUID)
STRING_GETTER(options, INFO_OPTIONS)
STRING_GETTER(driver, INFO_DRIVER)
STRING_GETTER(idmap, INFO_IDMAP)
STRING_GETTER(idmap_uid_map, INFO_IDMAP_UID_MAP)
STRING_GETTER(idmap_gid_map, INFO_IDMAP_GID_MAP)

_public_ const char *const *usermount_info_get_attributes(const usermount_info *info) {
        static const char *const none[] = { NULL };

        if (!info || !info->attributes)
                return none;
        return (const char *const *) info->attributes;
}

_public_ int usermount_info_has_attribute(const usermount_info *info, const char *attribute) {
        for (const char *const *a = usermount_info_get_attributes(info); attribute && *a; a++)
                if (streq(*a, attribute))
                        return 1;
        return 0;
}

_public_ uint64_t usermount_info_get_mount_id(const usermount_info *info) {
        return info ? info->mount_id : 0;
}

_public_ uint32_t usermount_info_get_partition(const usermount_info *info) {
        return info ? info->partition : 0;
}

_public_ int usermount_info_get_owner_uid(const usermount_info *info, uint32_t *ret_uid) {
        if (!info)
                return -EINVAL;
        if (!info->has_owner_uid)
                return -ENODATA;
        if (ret_uid)
                *ret_uid = info->owner_uid;
        return 0;
}

_public_ uint64_t usermount_info_get_created_usec(const usermount_info *info) {
        return info ? info->created_usec : 0;
}

_public_ const char *usermount_info_get_json(const usermount_info *info) {
        return info ? info->json : NULL;
}
