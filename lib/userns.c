/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading /proc/self/uid_map to tell the initial user namespace from any other (userns.h).
 */
#include <stdint.h>
#include <stdio.h>

#include "macro.h"
#include "userns.h"

int userns_detect(void) {
        _cleanup_(fclosep) FILE *f = NULL;
        unsigned long long inside, outside, count;
        /* At most 340 lines of three numbers (the kernel's limit); one line says enough. */
        char buf[4096];
        int consumed = 0;
        size_t n;

        f = fopen("/proc/self/uid_map", "re");
        if (!f)
                return -errno;
        n = fread(buf, 1, sizeof(buf) - 1, f);
        if (ferror(f))
                return -EIO;
        buf[n] = 0;
        /* One line "0 0 4294967295", and nothing after it: a second line means a namespace. */
        if (sscanf(buf, " %llu %llu %llu %n", &inside, &outside, &count, &consumed) != 3)
                return 1;
        if (buf[consumed] != 0)
                return 1;
        return !(inside == 0 && outside == 0 && count == UINT32_MAX);
}
