/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Accountable owners of uids through /etc/subuid, and the owners polkit authorized
 * (owner.h). The lines themselves are parsed by idmap_parse_subid(), one line at a time,
 * so that the daemon reads the file exactly as it does for id-mapped mounts.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idmap.h"
#include "macro.h"
#include "owner.h"

int owner_resolve_nss(const char *name, uid_t *ret) {
        struct passwd pw, *result = NULL;
        char buf[4096], *end;
        unsigned long long v;

        /* Numeric first, as shadow's tools read an owner field: useradd refuses such names. */
        if (*name >= '0' && *name <= '9') {
                errno = 0;
                v = strtoull(name, &end, 10);
                if (*end || errno || v >= UINT32_MAX)
                        return -ENOENT;
                *ret = (uid_t) v;
                return 0;
        }
        if (getpwnam_r(name, &pw, buf, sizeof(buf), &result) != 0 || !result)
                return -ENOENT;
        *ret = result->pw_uid;
        return 0;
}

static int range_cmp(const void *a, const void *b) {
        const OwnerRange *x = a, *y = b;

        if (x->first != y->first)
                return x->first < y->first ? -1 : 1;
        if (x->owner != y->owner)
                return x->owner < y->owner ? -1 : 1;
        return 0;
}

/* One line: its owner resolved and its range parsed by idmap_parse_subid(). 1 with the
 * range, 0 if the line delegates nothing, -ENOMEM. */
static int parse_line(const char *line, size_t len, OwnerResolveFunc resolve, OwnerRange *ret) {
        _cleanup_free_ IdRange *ranges = NULL;
        char buf[512], name[512];
        const char *colon;
        size_t n = 0;
        uid_t owner;
        int r;

        /* idmap_parse_subid() skips longer lines as well. */
        if (len == 0 || len >= sizeof(buf) || memchr(line, 0, len))
                return 0;
        memcpy(buf, line, len);
        buf[len] = 0;
        colon = strchr(buf, ':');
        if (!colon || colon == buf)
                return 0;
        memcpy(name, buf, (size_t) (colon - buf));
        name[colon - buf] = 0;
        /* (uid_t) -1 means "everybody" to the counting functions: never an owner. */
        if (resolve(name, &owner) < 0 || owner == (uid_t) -1)
                return 0;
        r = idmap_parse_subid(buf, name, owner, &ranges, &n);
        if (r < 0)
                return r;
        if (n != 1)
                return 0;
        *ret = (OwnerRange) { .first = ranges[0].first, .count = ranges[0].count,
                              .owner = owner };
        return 1;
}

int owner_map_parse(OwnerMap *m, const char *text, size_t size, OwnerResolveFunc resolve) {
        _cleanup_free_ OwnerRange *ranges = NULL;
        _cleanup_free_ uint64_t *reach = NULL;
        size_t n = 0, allocated = 0;

        if (!resolve)
                resolve = owner_resolve_nss;
        for (size_t at = 0; at < size;) {
                const char *nl = memchr(text + at, '\n', size - at);
                size_t len = nl ? (size_t) (nl - (text + at)) : size - at;
                OwnerRange range;
                int r = parse_line(text + at, len, resolve, &range);

                if (r < 0)
                        return r;
                if (r > 0) {
                        if (n == allocated) {
                                size_t want = allocated ? allocated * 2 : 16;
                                OwnerRange *t = reallocarray(ranges, want, sizeof(*t));

                                if (!t)
                                        return -ENOMEM;
                                ranges = t;
                                allocated = want;
                        }
                        ranges[n++] = range;
                }
                at += len + 1;
        }
        if (n > 0) {
                qsort(ranges, n, sizeof(*ranges), range_cmp);
                reach = calloc(n, sizeof(*reach));
                if (!reach)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++) {
                        uint64_t end = (uint64_t) ranges[i].first + ranges[i].count;

                        reach[i] = i > 0 && reach[i - 1] > end ? reach[i - 1] : end;
                }
        }
        free(m->ranges);
        free(m->reach);
        m->ranges = TAKE_PTR(ranges);
        m->reach = TAKE_PTR(reach);
        m->n_ranges = n;
        return 0;
}

static bool same_file(const OwnerMap *m, const struct stat *st) {
        return m->present && m->dev == st->st_dev && m->ino == st->st_ino &&
               m->size == st->st_size && m->mtime.tv_sec == st->st_mtim.tv_sec &&
               m->mtime.tv_nsec == st->st_mtim.tv_nsec && m->ctime.tv_sec == st->st_ctim.tv_sec &&
               m->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

static void remember_file(OwnerMap *m, const struct stat *st) {
        m->read = true;
        m->present = true;
        m->dev = st->st_dev;
        m->ino = st->st_ino;
        m->size = st->st_size;
        m->mtime = st->st_mtim;
        m->ctime = st->st_ctim;
}

/* Reads at most OWNER_FILE_MAX bytes of fd; *ret_truncated when there was more. */
static int read_bounded(int fd, char **ret, size_t *ret_size, bool *ret_truncated) {
        _cleanup_free_ char *buf = malloc(OWNER_FILE_MAX + 1);
        size_t size = 0;
        ssize_t k;

        if (!buf)
                return -ENOMEM;
        /* One byte more than is used tells a file of exactly OWNER_FILE_MAX from a longer one. */
        while (size < OWNER_FILE_MAX + 1) {
                k = read(fd, buf + size, OWNER_FILE_MAX + 1 - size);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        *ret_truncated = size > OWNER_FILE_MAX;
        if (*ret_truncated) {
                /* Only whole lines: a cut range would delegate a part of one. */
                char *nl = memrchr(buf, '\n', OWNER_FILE_MAX);

                size = nl ? (size_t) (nl - buf) + 1 : 0;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int owner_map_refresh(OwnerMap *m, const char *path, OwnerResolveFunc resolve) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        bool truncated = false;
        struct stat st;
        size_t size = 0;
        int r;

        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        return -errno;
                if (m->read && !m->present)
                        return 0;
                r = owner_map_parse(m, "", 0, resolve);
                if (r < 0)
                        return r;
                m->read = true;
                m->present = false;
                return 1;
        }
        if (same_file(m, &st))
                return 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd >= 0 && fstat(fd, &st) < 0)
                fd = safe_close(fd);
        if (fd < 0) {
                r = -errno;
                remember_file(m, &st);
                return r;
        }
        /* What was read is what is remembered: a file replaced meanwhile is read again. */
        remember_file(m, &st);
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        r = read_bounded(fd, &text, &size, &truncated);
        if (r < 0)
                return r;
        r = owner_map_parse(m, text, size, resolve);
        if (r < 0) {
                m->present = false; /* try again with the next request */
                return r;
        }
        return truncated ? -EFBIG : 1;
}

uid_t owner_map_lookup(const OwnerMap *m, uid_t uid) {
        size_t lo = 0, hi = m->n_ranges;
        uid_t best = uid;
        bool found = false;

        if (uid == 0 || uid == (uid_t) -1)
                return uid;
        /* lo: the number of ranges that start at or below uid. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (m->ranges[mid].first <= uid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        /* Going down, a range ending above uid can exist only while reach says so. */
        for (size_t i = lo; i > 0 && m->reach[i - 1] > uid; i--) {
                const OwnerRange *r = &m->ranges[i - 1];

                if (uid < (uint64_t) r->first + r->count && (!found || r->owner < best)) {
                        best = r->owner;
                        found = true;
                }
        }
        return best;
}

void owner_map_done(OwnerMap *m) {
        free(m->ranges);
        free(m->reach);
        *m = (OwnerMap) {};
}

bool owner_known_has(const OwnerKnown *k, uid_t owner) {
        for (size_t i = 0; i < k->n; i++)
                if (k->owners[i] == owner)
                        return true;
        return false;
}

void owner_known_add(OwnerKnown *k, uid_t owner) {
        if (owner_known_has(k, owner))
                return;
        if (k->n < OWNER_KNOWN_MAX) {
                k->owners[k->n++] = owner;
                return;
        }
        k->owners[k->next] = owner;
        k->next = (k->next + 1) % OWNER_KNOWN_MAX;
}
