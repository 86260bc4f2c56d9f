/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading and printing usermountd's info dict (see mount-info.h).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "mount-info.h"
#include "output.h"

static void strv_free(char **l) {
        for (char **p = l; p && *p; p++)
                free(*p);
        free(l);
}

void mount_info_done(MountInfo *info) {
        strv_free(info->attributes);
        *info = (MountInfo) {};
}

/* The keys we show, with their D-Bus types; a table so that list/monitor share it. */
static const struct {
        const char *key;
        const char *signature;
        size_t offset;
} info_fields[] = {
        { "mount-point", "s", offsetof(MountInfo, mount_point) },
        { "device", "s", offsetof(MountInfo, device) },
        { "backing-file", "s", offsetof(MountInfo, backing_file) },
        { "fstype", "s", offsetof(MountInfo, fstype) },
        { "label", "s", offsetof(MountInfo, label) },
        { "uuid", "s", offsetof(MountInfo, uuid) },
        { "options", "s", offsetof(MountInfo, options) },
        { "driver", "s", offsetof(MountInfo, driver) },
        { "idmap", "s", offsetof(MountInfo, idmap) },
        { "idmap-uid-map", "s", offsetof(MountInfo, idmap_uid_map) },
        { "idmap-gid-map", "s", offsetof(MountInfo, idmap_gid_map) },
        { "attributes", "as", offsetof(MountInfo, attributes) },
        { "mount-id", "t", offsetof(MountInfo, mount_id) },
        { "partition", "u", offsetof(MountInfo, partition) },
        { "owner-uid", "u", offsetof(MountInfo, owner_uid) },
        { "created-usec", "t", offsetof(MountInfo, created_usec) },
};

/* Reads the variant of one dict entry into field, or skips it if its type is not sig. */
static int read_field(sd_bus_message *m, const char *sig, void *field) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (type != SD_BUS_TYPE_VARIANT || !streq_ptr(contents, sig))
                return sd_bus_message_skip(m, "v");

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, sig);
        if (r < 0)
                return r;
        if (streq(sig, "as")) {
                char ***l = field;

                /* A repeated key: the last one wins, without leaking the first. */
                strv_free(*l);
                *l = NULL;
                r = sd_bus_message_read_strv(m, l);
        } else
                r = sd_bus_message_read_basic(m, sig[0], field);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int read_entry(sd_bus_message *m, MountInfo *info) {
        const char *key;
        int r;

        r = sd_bus_message_read(m, "s", &key);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(info_fields); i++)
                if (streq(key, info_fields[i].key))
                        return read_field(m, info_fields[i].signature,
                                          (char *) info + info_fields[i].offset);
        return sd_bus_message_skip(m, "v");
}

int mount_info_read(sd_bus_message *m, MountInfo *ret) {
        int r;

        *ret = (MountInfo) { .owner_uid = MOUNT_INFO_UID_INVALID };
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv")) > 0) {
                r = read_entry(m, ret);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

void mount_info_free_array(MountInfo *infos, size_t n) {
        for (size_t i = 0; infos && i < n; i++)
                mount_info_done(&infos[i]);
        free(infos);
}

int mount_info_read_array(sd_bus_message *m, MountInfo **ret, size_t *ret_n) {
        MountInfo *infos = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "a{sv}");
        if (r < 0)
                return r;
        if (r == 0)
                return -EBADMSG;
        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                MountInfo *grown = reallocarray(infos, n + 1, sizeof(MountInfo));

                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                infos = grown;
                /* Counted first, so that a failed read is freed with the others. */
                r = mount_info_read(m, &infos[n++]);
                if (r < 0)
                        break;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                mount_info_free_array(infos, n);
                return r;
        }

        *ret = infos;
        *ret_n = n;
        return 0;
}

const char *mount_info_source(const MountInfo *info) {
        if (!isempty(info->backing_file))
                return info->backing_file;
        if (!isempty(info->device))
                return info->device;
        return NULL;
}

bool mount_info_has_attribute(const MountInfo *info, const char *attr) {
        for (char **a = info->attributes; a && *a; a++)
                if (streq(*a, attr))
                        return true;
        return false;
}

/* Writes s escaped; false when out of memory. */
static bool put_escaped(FILE *f, const char *s) {
        _cleanup_free_ char *e = output_escape(s);

        if (!e)
                return false;
        fputs(e, f);
        return true;
}

/* Writes the "(ext4, label 'foo', image /x.img, options 'a,b')" part, if there is any. */
static bool put_details(FILE *f, const MountInfo *info) {
        const char *sep = " (";
        bool ok = true;

        if (!isempty(info->fstype)) {
                fputs(sep, f);
                ok = ok && put_escaped(f, info->fstype);
                sep = ", ";
        }
        if (!isempty(info->label)) {
                fprintf(f, "%slabel '", sep);
                ok = ok && put_escaped(f, info->label);
                fputc('\'', f);
                sep = ", ";
        } else if (!isempty(info->uuid)) {
                fprintf(f, "%sUUID ", sep);
                ok = ok && put_escaped(f, info->uuid);
                sep = ", ";
        }
        if (!isempty(info->backing_file) && info->partition > 0) {
                fprintf(f, "%spartition %" PRIu32 " of image ", sep, info->partition);
                ok = ok && put_escaped(f, info->backing_file);
                sep = ", ";
        } else if (!isempty(info->backing_file)) {
                fprintf(f, "%simage ", sep);
                ok = ok && put_escaped(f, info->backing_file);
                sep = ", ";
        }
        if (!isempty(info->options)) {
                fprintf(f, "%soptions '", sep);
                ok = ok && put_escaped(f, info->options);
                fputc('\'', f);
                sep = ", ";
        }
        if (streq_ptr(info->driver, "userspace")) {
                fprintf(f, "%suserspace driver", sep);
                sep = ", ";
        }
        if (!streq(sep, " ("))
                fputc(')', f);
        return ok;
}

/* Writes ", nodev,nosuid,noexec locked": the locked attributes other than ro and idmap. */
static bool put_locked(FILE *f, const MountInfo *info) {
        const char *sep = ", ";
        bool ok = true;

        for (char **a = info->attributes; a && *a; a++) {
                if (streq(*a, "ro") || streq(*a, "idmap"))
                        continue;
                fputs(sep, f);
                ok = ok && put_escaped(f, *a);
                sep = ",";
        }
        if (!streq(sep, ", "))
                fputs(" locked", f);
        return ok;
}

int mount_info_format_summary(const MountInfo *info, const char *source, const char *target,
                              char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        bool ok;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        fputs("Mounted ", f);
        ok = put_escaped(f, isempty(info->device) ? source : info->device);
        ok = put_details(f, info) && ok;
        fputs(" at ", f);
        ok = put_escaped(f, target) && ok;
        if (mount_info_has_attribute(info, "ro"))
                fputs(", read-only", f);
        if (!isempty(info->idmap) && !streq(info->idmap, "none")) {
                fputs(", id-mapped (", f);
                ok = put_escaped(f, info->idmap) && ok;
                /* on-disk:host:count, as the kernel's maps and X-mount.idmap write them */
                if (!isempty(info->idmap_uid_map)) {
                        fputs(": uids ", f);
                        ok = put_escaped(f, info->idmap_uid_map) && ok;
                }
                if (!isempty(info->idmap_gid_map)) {
                        fputs(", gids ", f);
                        ok = put_escaped(f, info->idmap_gid_map) && ok;
                }
                fputc(')', f);
        }
        ok = put_locked(f, info) && ok;

        if (fclose(f) != 0 || !ok)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Writes " FIELD", escaped, or " -" when field is missing or empty. */
static bool put_field(FILE *f, const char *field) {
        fputc(' ', f);
        if (isempty(field)) {
                fputc('-', f);
                return true;
        }
        return put_escaped(f, field);
}

int mount_info_format_event(const MountInfo *info, bool added, const char *mount_point,
                            char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        bool ok;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        fputc(added ? '+' : '-', f);
        ok = put_field(f, isempty(mount_point) ? info->mount_point : mount_point);
        ok = put_field(f, mount_info_source(info)) && ok;
        ok = put_field(f, info->fstype) && ok;

        if (fclose(f) != 0 || !ok)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}
