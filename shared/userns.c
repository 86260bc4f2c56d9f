/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which user namespace this process is in (userns.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"
#include "userns.h"

bool userns_uid_map_is_initial(const char *contents) {
        unsigned long long inside, outside, count;
        int consumed = 0;

        if (!contents)
                return false;
        /* One line, and nothing after it: a second mapping line means a namespace. */
        if (sscanf(contents, " %llu %llu %llu %n", &inside, &outside, &count, &consumed) != 3)
                return false;
        if (contents[consumed] != 0)
                return false;
        return inside == 0 && outside == 0 && count == UINT32_MAX;
}

int userns_detect(void) {
        _cleanup_(fclosep) FILE *f = NULL;
        /* At most 340 lines of three numbers (the kernel's limit); one line says enough. */
        char buf[4096];
        size_t n;

        f = fopen("/proc/self/uid_map", "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        if (ferror(f))
                return -EIO;
        buf[n] = 0;
        return !userns_uid_map_is_initial(buf);
}
