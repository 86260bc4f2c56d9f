/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the partition table reader (shared/parttable.c) and the choice of a partition
 * (worker/partition.c): the input is a whole disk image, read from a memfd with
 * parttable_read() as the probe worker and usermount probe read a caller's image. A table
 * is bounded (at most PARTTABLE_MAX entries, every string NUL-terminated in its field,
 * every entry not marked beyond the end within the disk), and choosing any partition of
 * it, or none, gives a result or a refusal whose message fits its buffer.
 */
#include <sys/mman.h>

#include "fuzz.h"
#include "partition.h"
#include "parttable.h"

#define FIELD_OK(f) (memchr((f), 0, sizeof(f)) != NULL)

static void check_entry(const PartTable *t, const PartEntry *e) {
        FUZZ_ASSERT(FIELD_OK(e->type) && FIELD_OK(e->type_name) && FIELD_OK(e->name));
        FUZZ_ASSERT(FIELD_OK(e->uuid) && FIELD_OK(e->fstype) && FIELD_OK(e->usage));
        FUZZ_ASSERT(FIELD_OK(e->label) && FIELD_OK(e->fsuuid));
        if (!e->beyond_end)
                FUZZ_ASSERT(e->start <= t->disk_size && e->size <= t->disk_size - e->start);
        /* Nothing is probed beyond the end. */
        if (e->beyond_end)
                FUZZ_ASSERT(e->fstype[0] == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_close_ int fd = -EBADF;
        PartTable *t;
        int r;

        /* Disks of up to 1 MiB: a GPT with its backup fits, and every input stays quick. */
        if (size > 1024 * 1024)
                return 0;
        fd = memfd_create("fuzz-parttable", MFD_CLOEXEC);
        if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t) size))
                return 0;
        t = calloc(1, sizeof(PartTable));
        if (!t)
                return 0;
        r = parttable_read(fd, t);
        FUZZ_ASSERT(r == 0 || r == -E2BIG || r == -EIO || r == -ENOMEM);
        if (r == 0) {
                FUZZ_ASSERT(FIELD_OK(t->type) && t->n_entries <= PARTTABLE_MAX);
                FUZZ_ASSERT(t->disk_size == size);
                for (size_t i = 0; i < t->n_entries; i++)
                        check_entry(t, &t->entries[i]);
                for (uint32_t want = 0; want <= 6; want++) {
                        const PartEntry *e = NULL;
                        UmError error = {};

                        r = partition_select(t, want, "image", &e, &error);
                        FUZZ_ASSERT(r == 0 || (r < 0 && error.kind != UM_ERROR_KIND_NONE));
                        FUZZ_ASSERT(memchr(error.message, 0, sizeof(error.message)));
                        if (r == 0)
                                FUZZ_ASSERT(e && partition_mountable(e, NULL) &&
                                            (want == 0 || e->number == want));
                }
        }
        free(t);
        return 0;
}
