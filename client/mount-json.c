/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * D-Bus values to JSON with json-c (see mount-json.h).
 */
#include <math.h>

#include "macro.h"
#include "mount-json.h"

/* D-Bus allows 32 nested arrays and 32 nested structs; variants nest too. */
#define MAX_DEPTH 128

static int read_value(sd_bus_message *m, unsigned depth, json_object **ret);

/* Adds val to the array or object o (key for objects); takes val even on failure. */
static int json_add(json_object *o, const char *key, json_object *val) {
        int r = key ? json_object_object_add(o, key, val) : json_object_array_add(o, val);

        if (r < 0) {
                /* json-c leaves val to us when it could not add it. */
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

/* Adds a new string s under key to the object o. */
static int json_add_string(json_object *o, const char *key, const char *s) {
        json_object *val = json_object_new_string(s);

        if (!val)
                return -ENOMEM;
        return json_add(o, key, val);
}

static int read_basic(sd_bus_message *m, char type, json_object **ret) {
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
        json_object *o;
        int r;

        r = sd_bus_message_read_basic(m, type, &v);
        if (r < 0)
                return r;
        switch (type) {
        case SD_BUS_TYPE_BYTE:
                o = json_object_new_int64(v.y);
                break;
        case SD_BUS_TYPE_INT16:
                o = json_object_new_int64(v.n);
                break;
        case SD_BUS_TYPE_UINT16:
                o = json_object_new_int64(v.q);
                break;
        case SD_BUS_TYPE_INT32:
                o = json_object_new_int64(v.i);
                break;
        case SD_BUS_TYPE_UINT32:
                o = json_object_new_int64(v.u);
                break;
        case SD_BUS_TYPE_INT64:
                o = json_object_new_int64(v.x);
                break;
        case SD_BUS_TYPE_UINT64:
                o = json_object_new_uint64(v.t);
                break;
        case SD_BUS_TYPE_DOUBLE:
                /* JSON has no NaN or infinity. */
                if (!isfinite(v.d)) {
                        *ret = NULL;
                        return 0;
                }
                o = json_object_new_double(v.d);
                break;
        case SD_BUS_TYPE_BOOLEAN:
                o = json_object_new_boolean(v.b);
                break;
        case SD_BUS_TYPE_UNIX_FD:
                /* A number that means nothing outside this process. */
                *ret = NULL;
                return 0;
        case SD_BUS_TYPE_STRING:
        case SD_BUS_TYPE_OBJECT_PATH:
        case SD_BUS_TYPE_SIGNATURE:
                o = json_object_new_string(v.s);
                break;
        default:
                return -EBADMSG;
        }
        if (!o)
                return -ENOMEM;
        *ret = o;
        return 0;
}

/* Reads the elements of the container m is in, until its end, into the array o. */
static int read_elements(sd_bus_message *m, unsigned depth, json_object *o) {
        int r;

        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                json_object *element;

                r = read_value(m, depth + 1, &element);
                if (r < 0)
                        return r;
                r = json_add(o, NULL, element);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : 0;
}

/* Reads one dict entry (entry is its signature without the braces) into the object o. */
static int read_entry(sd_bus_message *m, const char *entry, unsigned depth, json_object *o) {
        _cleanup_(json_object_putp) json_object *key = NULL;
        json_object *val;
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, entry);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        r = read_value(m, depth + 1, &key);
        if (r < 0)
                return r;
        r = read_value(m, depth + 1, &val);
        if (r < 0)
                return r;
        /* For a string key its text, for a number its digits; a later repeat replaces it. */
        r = json_add(o, key ? json_object_get_string(key) : "", val);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int read_dict(sd_bus_message *m, const char *contents, unsigned depth,
                     json_object *o) {
        /* contents is "{KV}"; entering an entry wants "KV". */
        _cleanup_free_ char *entry = strndup(contents + 1, strlen(contents) - 2);
        int r;

        if (!entry)
                return -ENOMEM;
        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                r = read_entry(m, entry, depth, o);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : 0;
}

/* Reads the array, struct or variant m is at. */
static int read_container(sd_bus_message *m, char type, const char *contents, unsigned depth,
                          json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        bool dict = type == SD_BUS_TYPE_ARRAY && contents[0] == SD_BUS_TYPE_DICT_ENTRY_BEGIN;
        int r;

        r = sd_bus_message_enter_container(m, type, contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;

        if (type == SD_BUS_TYPE_VARIANT)
                r = read_value(m, depth + 1, &o);
        else {
                o = dict ? json_object_new_object() : json_object_new_array();
                if (!o)
                        return -ENOMEM;
                r = dict ? read_dict(m, contents, depth, o) : read_elements(m, depth, o);
        }
        if (r < 0)
                return r;

        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int read_value(sd_bus_message *m, unsigned depth, json_object **ret) {
        const char *contents;
        char type;
        int r;

        if (depth > MAX_DEPTH)
                return -EBADMSG;
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG; /* nothing left where a value was expected */

        if (type == SD_BUS_TYPE_ARRAY || type == SD_BUS_TYPE_STRUCT ||
            type == SD_BUS_TYPE_VARIANT)
                return read_container(m, type, contents, depth, ret);
        return read_basic(m, type, ret);
}

int mount_json_read(sd_bus_message *m, json_object **ret) {
        return read_value(m, 0, ret);
}

int mount_json_event(const char *event, const char *mount_point, json_object *info,
                     json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        r = json_add_string(o, "event", event);
        if (r >= 0 && mount_point)
                r = json_add_string(o, "mount-point", mount_point);
        if (r < 0)
                return r;

        if (json_object_is_type(info, json_type_object)) {
                json_object_object_foreach(info, key, val) {
                        if (streq(key, "event") || (mount_point && streq(key, "mount-point")))
                                continue;
                        r = json_add(o, key, json_object_get(val));
                        if (r < 0)
                                return r;
                }
        }

        *ret = TAKE_PTR(o);
        return 0;
}

int mount_json_format(json_object *o, bool pretty, char **ret) {
        int flags = JSON_C_TO_STRING_NOSLASHESCAPE |
                    (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN);
        const char *s;
        char *copy;

        /* json-c prints an empty array pretty as "[\n]"; nobody writes it that way. */
        if (json_object_is_type(o, json_type_array) && json_object_array_length(o) == 0)
                s = "[]";
        else
                s = json_object_to_json_string_ext(o, flags);
        if (!s)
                return -ENOMEM;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}
