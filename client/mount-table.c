/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The rows of 'usermount list' (see mount-table.h).
 */
#include <time.h>

#include "macro.h"
#include "mount-table.h"

static const char *const columns[] = {
        "MOUNT POINT", "DEVICE", "TYPE", "LABEL", "OWNER", "CREATED", "OPTIONS",
};

Table *mount_table_new(void) {
        return table_new(columns, ELEMENTSOF(columns));
}

int mount_table_format_options(const MountInfo *info, char **ret) {
        _cleanup_free_ char *buf = NULL;
        const char *sep = "";
        size_t size = 0;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (char **a = info->attributes; a && *a; a++) {
                if (streq(*a, "idmap") && !isempty(info->idmap))
                        fprintf(f, "%sidmap=%s", sep, info->idmap);
                else
                        fprintf(f, "%s%s", sep, *a);
                sep = ",";
        }
        if (!isempty(info->options)) {
                fprintf(f, "%s%s", sep, info->options);
                sep = ",";
        }
        if (streq_ptr(info->driver, "userspace"))
                fprintf(f, "%sdriver=userspace", sep);
        if (fclose(f) != 0)
                return -ENOMEM;

        *ret = TAKE_PTR(buf);
        return 0;
}

char *mount_table_format_created(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (size == 0)
                return buf;
        buf[0] = 0;
        /* A time_t that cannot hold the value is a time nobody will see; show nothing. */
        if (usec == 0 || (uint64_t) t != usec / 1000000 || !localtime_r(&t, &tm))
                return buf;
        if (strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
                buf[0] = 0;
        return buf;
}

int mount_table_add(Table *t, const MountInfo *info, const char *owner) {
        _cleanup_free_ char *options = NULL;
        char created[32];
        int r;

        r = mount_table_format_options(info, &options);
        if (r < 0)
                return r;
        mount_table_format_created(info->created_usec, created, sizeof(created));

        /* Cells are escaped by the table; empty ones show as "-". */
        const char *cells[] = {
                info->mount_point, mount_info_source(info), info->fstype, info->label,
                owner, created, options,
        };
        for (size_t i = 0; i < ELEMENTSOF(cells); i++) {
                r = table_add_cell(t, cells[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}
