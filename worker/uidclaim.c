/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A uid of one's own from a range (see uidclaim.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/param.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "procfs.h"
#include "uidclaim.h"

void uid_claim_release(UidClaim *c) {
        /* Unlinked while still locked: a claimer that opened the file meanwhile and gets the
         * lock after us sees that it is no longer the file at that name (lock_uid_file()). */
        if (c->lock_fd >= 0)
                (void) unlinkat(c->dir_fd, c->lock_name, 0);
        uid_claim_hand_over(c);
}

void uid_claim_hand_over(UidClaim *c) {
        c->lock_fd = safe_close(c->lock_fd);
        c->dir_fd = safe_close(c->dir_fd);
}

/*
 * Locks dir_fd/name, creating it: 1 and *ret_fd when this process holds it now, 0 when
 * another claimer does. A lock on a file that was unlinked between our open() and flock()
 * (its claim ended) locks nothing, so the name is opened again then.
 */
static int lock_uid_file(int dir_fd, const char *name, int *ret_fd) {
        for (unsigned attempt = 0; attempt < 16; attempt++) {
                _cleanup_close_ int fd = -EBADF;
                struct stat locked, named;

                fd = openat(dir_fd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                            0600);
                if (fd < 0)
                        return -errno;
                if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                        return errno == EWOULDBLOCK ? 0 : -errno;
                if (fstat(fd, &locked) < 0)
                        return -errno;
                if (fstatat(dir_fd, name, &named, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        return -errno;
                }
                if (locked.st_dev != named.st_dev || locked.st_ino != named.st_ino)
                        continue;
                *ret_fd = TAKE_FD(fd);
                return 1;
        }
        return -EAGAIN;
}

/* Marks in used[] (a bit per id of [first, first + count)) the ids any process runs with
 * as one of its uids or gids: one pass over /proc for a whole claim. -errno. */
static int ids_in_use(unsigned first, unsigned count, uint8_t *used) {
        _cleanup_(closedirp) DIR *d = opendir("/proc");
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                char path[sizeof(de->d_name) + 8];
                ProcStatus st;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "%s/status", de->d_name);
                fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || proc_status_read_fd(fd, &st) < 0)
                        continue; /* gone meanwhile */
                for (unsigned k = 0; k < 4; k++) {
                        if (st.uids[k] >= first && st.uids[k] - first < count)
                                used[(st.uids[k] - first) / 8] |= 1u << ((st.uids[k] - first) % 8);
                        if (st.gids[k] >= first && st.gids[k] - first < count)
                                used[(st.gids[k] - first) / 8] |= 1u << ((st.gids[k] - first) % 8);
                }
        }
        return 0;
}

/*
 * Marks in used[] the ids of [first, first + count) that /etc/subuid or /etc/subgid
 * delegate to a user: that user's containers run processes as them, which could signal or
 * trace a process of ours that runs as one too. Lines are "name:start:count"; what does
 * not parse is skipped (the file is the administrator's, and read-only here).
 */
static void ids_delegated(const char *path, unsigned first, unsigned count, uint8_t *used) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");
        char line[512];

        while (f && fgets(line, sizeof(line), f)) {
                unsigned long long start, n;
                char *colon = strchr(line, ':');

                if (!colon || sscanf(colon + 1, "%llu:%llu", &start, &n) != 2)
                        continue;
                for (unsigned long long id = MAX(start, (unsigned long long) first);
                     id < start + n && id < (unsigned long long) first + count; id++)
                        used[(id - first) / 8] |= 1u << ((id - first) % 8);
        }
}

/* 1 if no account or group has id, 0 if one does, -errno. */
static int id_unassigned(unsigned id) {
        struct passwd pw, *pwp = NULL;
        struct group gr, *grp = NULL;
        char buf[16384];
        int r;

        r = getpwuid_r((uid_t) id, &pw, buf, sizeof(buf), &pwp);
        if (r != 0)
                return -r;
        if (pwp)
                return 0;
        r = getgrgid_r((gid_t) id, &gr, buf, sizeof(buf), &grp);
        if (r != 0)
                return -r;
        return !grp;
}

int uid_claim_id_unused(unsigned id) {
        uint8_t used = 0;
        int r = id_unassigned(id);

        if (r <= 0)
                return r;
        r = ids_in_use(id, 1, &used);
        return r < 0 ? r : !used;
}

int uid_claim(const char *lock_dir, const char *prefix, uid_t first, unsigned count,
              UidClaimFlags flags, const char *what, UidClaim *ret, UmError *error) {
        const bool scan = !(flags & UID_CLAIM_NO_PROCESS_SCAN);
        UidClaim c = UID_CLAIM_NULL;
        _cleanup_free_ uint8_t *used = NULL;
        int r;

        if (count == 0 || count > UID_CLAIM_COUNT_MAX || first == 0 ||
            (uint64_t) first + count > (uint64_t) UINT32_MAX)
                return um_error_set(error, UM_ERROR_KIND_FAILED, EINVAL,
                                    "The uid range of %s is not usable.", what);
        c.dir_fd = open(lock_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (c.dir_fd < 0)
                return um_error_set(error, UM_ERROR_KIND_FAILED, errno,
                                    "Could not open the directory of the uid locks of %s: %s.",
                                    what, strerror(errno));
        /* One pass over /proc skips the uids processes hold; the one chosen is checked
         * again once locked, as that pass may predate a process that took it and let its
         * lock go. Without the scans, the claimer's exec checks (uidclaim.h). */
        used = calloc((count + 7) / 8, 1);
        if (!used) {
                uid_claim_release(&c);
                return um_error_set(error, UM_ERROR_KIND_FAILED, ENOMEM, "Out of memory.");
        }
        ids_delegated("/etc/subuid", (unsigned) first, count, used);
        ids_delegated("/etc/subgid", (unsigned) first, count, used);
        r = scan ? ids_in_use((unsigned) first, count, used) : 0;
        if (r < 0) {
                uid_claim_release(&c);
                return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                    "Could not read the processes' ids: %s.", strerror(-r));
        }
        for (unsigned i = 0; i < count; i++) {
                unsigned uid = (unsigned) first + i;
                int fd = -EBADF;

                if (used[i / 8] & (1u << (i % 8)))
                        continue;
                snprintf(c.lock_name, sizeof(c.lock_name), "%s%u", prefix, uid);
                r = lock_uid_file(c.dir_fd, c.lock_name, &fd);
                if (r == 0)
                        continue;
                if (r > 0) {
                        c.lock_fd = fd;
                        r = scan ? uid_claim_id_unused(uid) : id_unassigned(uid);
                        if (r > 0) {
                                c.uid = (uid_t) uid;
                                *ret = c;
                                return 0;
                        }
                        (void) unlinkat(c.dir_fd, c.lock_name, 0);
                        c.lock_fd = safe_close(c.lock_fd);
                }
                if (r < 0) {
                        uid_claim_release(&c);
                        return um_error_set(error, UM_ERROR_KIND_FAILED, -r,
                                            "Could not claim uid %u for %s: %s.", uid, what,
                                            strerror(-r));
                }
        }
        uid_claim_release(&c);
        return um_error_set(error, UM_ERROR_KIND_FAILED, EBUSY,
                            "Every uid %s may run as (%u to %u) is in use; try again later.",
                            what, (unsigned) first, (unsigned) first + count - 1);
}
