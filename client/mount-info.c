/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading and printing usermountd's info dict (see mount-info.h).
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mount-info.h"
#include "output.h"

void mount_info_done(MountInfo *info) {
        usermount_strv_free(info->attributes);
        *info = (MountInfo) {};
}

int mount_info_from_usermount(const usermount_info *src, MountInfo *ret) {
        const char *const *attributes = usermount_info_get_attributes(src);
        size_t n = 0;

        *ret = (MountInfo) {
                .mount_point = usermount_info_get_mount_point(src),
                .device = usermount_info_get_device(src),
                .backing_file = usermount_info_get_backing_file(src),
                .fstype = usermount_info_get_fstype(src),
                .label = usermount_info_get_label(src),
                .uuid = usermount_info_get_uuid(src),
                .options = usermount_info_get_options(src),
                .driver = usermount_info_get_driver(src),
                .idmap = usermount_info_get_idmap(src),
                .idmap_uid_map = usermount_info_get_idmap_uid_map(src),
                .idmap_gid_map = usermount_info_get_idmap_gid_map(src),
                .mount_id = usermount_info_get_mount_id(src),
                .partition = usermount_info_get_partition(src),
                .owner_uid = MOUNT_INFO_UID_INVALID,
                .created_usec = usermount_info_get_created_usec(src),
        };
        (void) usermount_info_get_owner_uid(src, &ret->owner_uid);

        while (attributes[n])
                n++;
        ret->attributes = calloc(n + 1, sizeof(char *));
        if (!ret->attributes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                ret->attributes[i] = strdup(attributes[i]);
                if (!ret->attributes[i])
                        return -ENOMEM;
        }
        return 0;
}

void mount_list_done(MountList *l) {
        for (size_t i = 0; l->infos && i < l->n; i++)
                mount_info_done(&l->infos[i]);
        free(l->infos);
        usermount_info_list_free(l->src, l->n);
        *l = (MountList) {};
}

int mount_list_fetch(usermount_client *c, MountList *ret) {
        int r;

        *ret = (MountList) {};
        r = usermount_list(c, &ret->src, &ret->n);
        if (r < 0)
                return r;
        ret->infos = calloc(ret->n ?: 1, sizeof(MountInfo));
        if (!ret->infos)
                return -ENOMEM;
        for (size_t i = 0; i < ret->n; i++) {
                r = mount_info_from_usermount(ret->src[i], &ret->infos[i]);
                if (r < 0)
                        return r;
        }
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
