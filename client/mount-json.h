/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON for scripts: usermountd's replies and signals as libusermount gives them
 * (usermount_info_get_json(): every info key, including ones a newer usermountd adds,
 * with its type: strings, numbers, booleans, arrays, objects), as json-c objects.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "usermount.h"

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/*
 * The info dict of info (libusermount's JSON of every key usermountd sent, with its
 * type) as a new JSON object. Returns 0, -EBADMSG if it is not an object, or -ENOMEM.
 */
int mount_json_from_usermount(const usermount_info *info, json_object **ret);

/*
 * The infos of a ListMounts reply as a new JSON array of objects, each as
 * mount_json_from_usermount() makes it. Returns 0, -EBADMSG or -ENOMEM.
 */
int mount_json_from_list(usermount_info *const *infos, size_t n, json_object **ret);

/*
 * The JSON object of one monitor event: {"event": event, "mount-point": mount_point,
 * then the keys of info in their order}. mount_point, the signal's argument, wins over
 * info's key of that name. Returns 0 or -ENOMEM; *ret is a new reference.
 */
int mount_json_event(const char *event, const char *mount_point, json_object *info,
                     json_object **ret);

/*
 * Formats o pretty-printed (two-space indentation) or on one line, slashes unescaped,
 * without a trailing newline; an empty array is "[]". Returns 0 or -ENOMEM; the caller frees *ret.
 */
int mount_json_format(json_object *o, bool pretty, char **ret);
