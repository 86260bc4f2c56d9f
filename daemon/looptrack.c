/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Loop devices attached for users that still exist (see looptrack.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysmacros.h>

#include "looptrack.h"
#include "macro.h"

int looptrack_diskseq(dev_t devnum, uint64_t *ret) {
        _cleanup_(fclosep) FILE *f = NULL;
        char path[64];
        uint64_t seq;

        snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/diskseq", major(devnum), minor(devnum));
        f = fopen(path, "re");
        if (!f)
                return -errno;
        if (fscanf(f, "%" SCNu64, &seq) != 1)
                return -EIO;
        *ret = seq;
        return 0;
}

int looptrack_add(LoopTrack *t, dev_t devnum, uint64_t diskseq, uid_t uid) {
        LoopTrackEntry *e = reallocarray(t->entries, t->n_entries + 1, sizeof(LoopTrackEntry));

        if (!e)
                return -ENOMEM;
        t->entries = e;
        t->entries[t->n_entries++] = (LoopTrackEntry) { devnum, diskseq, uid };
        return 0;
}

static bool entry_alive(const LoopTrackEntry *e) {
        uint64_t seq;

        return looptrack_diskseq(e->devnum, &seq) >= 0 && seq == e->diskseq;
}

size_t looptrack_prune(LoopTrack *t) {
        size_t kept = 0, n = t->n_entries;

        for (size_t i = 0; i < t->n_entries; i++) {
                if (!entry_alive(&t->entries[i]))
                        continue;
                t->entries[kept++] = t->entries[i];
        }
        t->n_entries = kept;
        return n - kept;
}

size_t looptrack_count(const LoopTrack *t, uid_t uid) {
        size_t n = 0;

        for (size_t i = 0; i < t->n_entries; i++)
                if (uid == (uid_t) -1 || t->entries[i].uid == uid)
                        n++;
        return n;
}

void looptrack_done(LoopTrack *t) {
        t->entries = mfree(t->entries);
        t->n_entries = 0;
}
