/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usermountd's info dicts as JSON with json-c (see mount-json.h).
 */
#include "macro.h"
#include "mount-json.h"

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

int mount_json_from_usermount(const usermount_info *info, json_object **ret) {
        const char *text = usermount_info_get_json(info);
        json_object *o;

        if (!text)
                return -EBADMSG;
        o = json_tokener_parse(text);
        if (!o)
                return -EBADMSG;
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int mount_json_from_list(usermount_info *const *infos, size_t n, json_object **ret) {
        _cleanup_(json_object_putp) json_object *mounts = json_object_new_array();
        int r;

        if (!mounts)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *info;

                r = mount_json_from_usermount(infos[i], &info);
                if (r >= 0)
                        r = json_add(mounts, NULL, info);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(mounts);
        return 0;
}
