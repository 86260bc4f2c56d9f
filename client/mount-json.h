/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * JSON for scripts: usermountd's replies and signals converted value by value with json-c,
 * so that every info key, including ones a newer usermountd adds, reaches the script with
 * its type (strings, numbers, booleans, arrays, objects).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

static inline void json_object_putp(json_object **o) {
        if (*o)
                json_object_put(*o);
}

/*
 * Reads the next complete value of m, of any D-Bus type, into a new JSON value: strings,
 * object paths and signatures become strings, integers numbers, booleans booleans,
 * doubles numbers (null when not finite), variants their contents, arrays and structs
 * arrays, dicts objects (keys of other basic types as text), file descriptors null. An
 * info dict (a{sv}) becomes an object, a ListMounts reply (aa{sv}) an array of objects.
 * A repeated key keeps its last value. Returns 0 or -errno; *ret is a new reference (a
 * NULL *ret is JSON null).
 */
int mount_json_read(sd_bus_message *m, json_object **ret);

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
