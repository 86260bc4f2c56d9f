/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzzes the id-map parsers (worker/idmap-userns.c, shared/idmap.c): the text of
 * /proc/PID/uid_map, /etc/subuid lines, and the delegation check between them, which decides
 * whether a caller may have an id-mapped mount with its namespace's maps. That check is compared
 * with an independent one: every host id of the map must be the caller's own or in a delegated
 * range. A parsed map must also survive its round trip through both text forms.
 *
 * Input, NUL-separated fields:
 *   MAP      uid_map text ("0 1000 1\n1 100000 65536\n")
 *   SUBID    /etc/subuid text ("user:100000:65536\n")
 *   USER     the caller's user name (its uid is 1000)
 *   SIZE     one byte: the size of the buffer for the short-buffer formatting check
 */
#include "fuzz.h"
#include "idmap-userns.h"

#define OWN_ID 1000u

/* Whether host id `id` is OWN_ID or in one of the ranges; *ret_end the end of that cover. */
static bool covered(uint64_t id, const IdRange *ranges, size_t n, uint64_t *ret_end) {
        uint64_t end = 0;

        if (id == OWN_ID)
                end = OWN_ID + 1;
        for (size_t i = 0; i < n; i++)
                if (id >= ranges[i].first && id < (uint64_t) ranges[i].first + ranges[i].count &&
                    (uint64_t) ranges[i].first + ranges[i].count > end)
                        end = (uint64_t) ranges[i].first + ranges[i].count;
        *ret_end = end;
        return end > 0;
}

/* The same question as idmap_check_delegation(), answered by walking each extent. */
static bool delegated(const IdMap *map, const IdRange *ranges, size_t n) {
        for (uint32_t i = 0; i < map->n_extents; i++) {
                uint64_t id = map->extents[i].lower;
                uint64_t last = id + map->extents[i].count;

                while (id < last) {
                        uint64_t end;

                        if (!covered(id, ranges, n, &end))
                                return false;
                        id = end;
                }
        }
        return true;
}

static void check_map(const IdMap *m) {
        FUZZ_ASSERT(m->n_extents >= 1 && m->n_extents <= IDMAP_MAX_EXTENTS);
        for (uint32_t i = 0; i < m->n_extents; i++) {
                const IdExtent *a = &m->extents[i];

                FUZZ_ASSERT(a->count > 0);
                FUZZ_ASSERT((uint64_t) a->first + a->count <= (UINT64_C(1) << 32));
                FUZZ_ASSERT((uint64_t) a->lower + a->count <= (UINT64_C(1) << 32));
                for (uint32_t j = 0; j < i; j++) {
                        const IdExtent *b = &m->extents[j];

                        FUZZ_ASSERT((uint64_t) a->first + a->count <= b->first ||
                                    (uint64_t) b->first + b->count <= a->first);
                        FUZZ_ASSERT((uint64_t) a->lower + a->count <= b->lower ||
                                    (uint64_t) b->lower + b->count <= a->lower);
                }
        }
}

static void check_round_trip(const IdMap *m, size_t small) {
        static IdMap again;
        static char text[16384], shorter[256];
        int r;

        FUZZ_ASSERT(idmap_to_proc_text(m, text, sizeof(text)) == 0);
        FUZZ_ASSERT(idmap_parse(text, &again) == 0);
        FUZZ_ASSERT(again.n_extents == m->n_extents);
        FUZZ_ASSERT(memcmp(again.extents, m->extents, m->n_extents * sizeof(IdExtent)) == 0);
        FUZZ_ASSERT(idmap_to_string(m, text, sizeof(text)) == 0);

        /* Too small a buffer is -ENOBUFS, and what is in it stays a string. */
        memset(shorter, 'x', sizeof(shorter));
        r = idmap_to_string(m, shorter, small);
        FUZZ_ASSERT(r == 0 || r == -ENOBUFS);
        if (small > 0)
                FUZZ_ASSERT(memchr(shorter, 0, small));
        r = idmap_to_proc_text(m, shorter, small);
        FUZZ_ASSERT(r == 0 || r == -ENOBUFS);
        if (small > 0)
                FUZZ_ASSERT(memchr(shorter, 0, small));
        for (size_t i = small; i < sizeof(shorter); i++)
                FUZZ_ASSERT(shorter[i] == 'x');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static IdMap map;
        _cleanup_free_ IdRange *ranges = NULL;
        const char *map_text, *subid, *user;
        size_t n = SIZE_MAX, small;
        UmError e = {};
        FuzzInput in;
        int parsed, r;

        if (size > 65536 || !fuzz_input_init(&in, data, size))
                return 0;
        map_text = fuzz_field(&in);
        subid = fuzz_field(&in);
        user = fuzz_field(&in);
        small = fuzz_byte(&in);

        parsed = idmap_parse(map_text, &map);
        FUZZ_ASSERT(parsed == 0 || parsed == -EINVAL || parsed == -E2BIG);
        if (parsed == 0) {
                check_map(&map);
                check_round_trip(&map, small);
        }

        r = idmap_parse_subid(subid, *user ? user : NULL, OWN_ID, &ranges, &n);
        FUZZ_ASSERT(r == 0 || r == -ENOMEM);
        if (r == 0) {
                FUZZ_ASSERT((n == 0) == (ranges == NULL));
                for (size_t i = 0; i < n; i++)
                        FUZZ_ASSERT(ranges[i].count > 0 && (uint64_t) ranges[i].first +
                                    ranges[i].count <= (UINT64_C(1) << 32));
        }

        if (parsed == 0 && r == 0) {
                r = idmap_check_delegation(&map, OWN_ID, ranges, n, "uid", "/etc/subuid", &e);
                FUZZ_ASSERT(r == 0 || r == -EPERM);
                FUZZ_ASSERT((r == 0) == delegated(&map, ranges, n));
                if (r < 0)
                        FUZZ_ASSERT(e.kind == UM_ERROR_KIND_NOT_AUTHORIZED && e.message[0]);
        }
        fuzz_input_done(&in);
        return 0;
}
