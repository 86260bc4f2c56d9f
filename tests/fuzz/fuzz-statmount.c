/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the reading of statmount() replies (mountns_statmount_parse() in shared/mountns.c,
 * the code behind mountns_mount_exists() and mountinfo_fstype()): the input is the
 * reply buffer, a 512-byte struct statmount (size at offset 0, mask at 8, the fs_type
 * string offset at 36, mnt_point at 108) and then the strings. Nothing may be read outside
 * the buffer, and the strings returned must lie inside it.
 */
#include "fuzz.h"
#include "mountns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *mount_point = NULL, *fstype = NULL;
        _cleanup_free_ void *buf = NULL;
        int r;

        if (size > 65536)
                return 0;
        /* A buffer of exactly the input's size, aligned like the daemon's calloc(). */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        r = mountns_statmount_parse(buf, size, &mount_point, &fstype);
        FUZZ_ASSERT(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == 0) {
                if (mount_point)
                        FUZZ_ASSERT(*mount_point && strlen(mount_point) < size);
                if (fstype)
                        FUZZ_ASSERT(*fstype && strlen(fstype) < size);
        } else
                FUZZ_ASSERT(!mount_point && !fstype);
        return 0;
}
