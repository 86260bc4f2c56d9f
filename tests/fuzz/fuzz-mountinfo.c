/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the daemon's reading of /proc/self/mountinfo (device_mountinfo_find() in
 * worker/device.c, parsed with libmount): whether, and where, a device is mounted, for the
 * "is mounted at ..." refusal. The mount point goes into a message, so what comes back
 * must be escaped (valid UTF-8 without control characters) and fit the buffer, however
 * short.
 *
 * Input, NUL-separated: DEVNUM ("8:1"), NODE (the device's path, "/dev/sda1"), SIZE (one
 * byte: the buffer for the mount point is 1 + SIZE bytes), then the mountinfo text itself
 * (the rest of the input, NUL bytes and all).
 */
#include <sys/sysmacros.h>

#include "device.h"
#include "fuzz.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        unsigned maj = 0, min = 0;
        const char *devnum, *node, *text;
        char *buf;
        size_t text_size, buf_size;
        FuzzInput in;
        FILE *f;

        if (size > 65536 || !fuzz_input_init(&in, data, size))
                return 0;
        devnum = fuzz_field(&in);
        node = fuzz_field(&in);
        buf_size = 1 + (size_t) fuzz_byte(&in);
        text = fuzz_rest(&in, &text_size);
        (void) sscanf(devnum, "%u:%u", &maj, &min);

        /* Exactly the bytes of the text, so that reading past it is caught. */
        f = fmemopen((void *) text, text_size > 0 ? text_size : 1, "r");
        buf = malloc(buf_size);
        if (f && buf && device_mountinfo_find(f, makedev(maj, min), node, buf, buf_size)) {
                const unsigned char *p = (const unsigned char *) buf;
                size_t len = strnlen(buf, buf_size);

                FUZZ_ASSERT(len < buf_size);
                FUZZ_ASSERT(utf8_is_valid(buf));
                while (*p) {
                        uint32_t cp;
                        size_t n = utf8_decode(p, &cp);

                        FUZZ_ASSERT(cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0));
                        p += n;
                }
        }
        if (f)
                fclose(f);
        free(buf);
        fuzz_input_done(&in);
        return 0;
}
