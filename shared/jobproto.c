/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the daemon and usermount-worker both know of the jobs (jobproto.h): their wire layout
 * and the packing of mount options.
 */
#include <string.h>

#include "jobproto.h"

const WorkerJobLayout job_layouts[] = {
        { JOB_PROBE, sizeof(ProbeJob), sizeof(ProbeReply), 2 },
        { JOB_OPEN_DEVICE, sizeof(OpenDeviceJob), sizeof(ProbeReply), 1 },
        { JOB_BUILD, sizeof(BuildJob), sizeof(BuildReply), 2 },
        { JOB_ATTACH, sizeof(AttachJob), sizeof(AttachResult), 2 },
        { JOB_DETACH, sizeof(DetachJob), 0, 1 },
        { JOB_START_DRIVER, sizeof(BuildJob), sizeof(DriverStartReply), 2 },
        { JOB_LOOP_SETUP, sizeof(LoopSetupJob), sizeof(LoopSetupReply), 1 },
        { JOB_DRIVE_EJECT, sizeof(DriveEjectJob), 0, 0 },
        { JOB_LOOP_CLAIM, 0, 0, 0 },
        { JOB_PREPARE_DRIVER, sizeof(PrepareDriverJob), 0, 0 },
};
const size_t job_n_layouts = ELEMENTSOF(job_layouts);

const WorkerJobLayout *job_layout(JobType type) {
        for (size_t i = 0; i < job_n_layouts; i++)
                if (job_layouts[i].type == (uint32_t) type)
                        return &job_layouts[i];
        return NULL;
}

uint32_t job_layouts_hash(void) {
        return worker_layout_hash(job_layouts, job_n_layouts);
}

int job_set_string(char *dst, size_t n, const char *s) {
        size_t l = strlen(strempty(s));

        if (l >= n)
                return -ENAMETOOLONG;
        memcpy(dst, strempty(s), l + 1);
        return 0;
}

static int put(JobOptions *j, const char *s, size_t l) {
        if (j->used + l > sizeof(j->items))
                return -E2BIG;
        memcpy(j->items + j->used, s, l);
        j->used += (uint32_t) l;
        return 0;
}

int job_options_pack(const MountOptions *o, JobOptions *ret) {
        int r = 0;

        *ret = (JobOptions) {
                .attr_set = o->attr_set,
                .read_only = o->read_only,
                .n_items = (uint32_t) o->n_items,
        };
        for (size_t i = 0; r >= 0 && i < o->n_items; i++) {
                const char *v = o->items[i].value;

                r = put(ret, o->items[i].key, strlen(o->items[i].key) + 1);
                if (r >= 0)
                        r = put(ret, v ? "=" : "-", 1);
                if (r >= 0 && v)
                        r = put(ret, v, strlen(v) + 1);
        }
        return r;
}

/* The NUL-terminated string at *pos (within used), advancing pos; NULL if none. */
static const char *take(const JobOptions *j, size_t *pos) {
        const char *s = j->items + *pos, *end;

        if (*pos >= j->used)
                return NULL;
        end = memchr(s, 0, j->used - *pos);
        if (!end)
                return NULL;
        *pos += (size_t) (end - s) + 1;
        return s;
}

int job_options_unpack(const JobOptions *j, MountOptions *ret) {
        MountOptions o = {
                .attr_set = j->attr_set,
                .read_only = j->read_only,
        };
        size_t pos = 0;

        if (j->used > sizeof(j->items) || j->n_items > j->used)
                return -EBADMSG;
        o.items = calloc(j->n_items ?: 1, sizeof(MountOption));
        if (!o.items)
                return -ENOMEM;
        for (; o.n_items < j->n_items; o.n_items++) {
                const char *key = take(j, &pos), *value = NULL;
                char kind;

                if (!key || !*key || pos >= j->used) {
                        mount_options_done(&o);
                        return -EBADMSG;
                }
                kind = j->items[pos++];
                if (kind == '=')
                        value = take(j, &pos);
                if ((kind != '=' && kind != '-') || (kind == '=' && !value)) {
                        mount_options_done(&o);
                        return -EBADMSG;
                }
                o.items[o.n_items].key = strdup(key);
                o.items[o.n_items].value = value ? strdup(value) : NULL;
                if (!o.items[o.n_items].key || (value && !o.items[o.n_items].value)) {
                        o.n_items++;
                        mount_options_done(&o);
                        return -ENOMEM;
                }
        }
        if (pos != j->used) {
                mount_options_done(&o);
                return -EBADMSG;
        }
        *ret = o;
        return 0;
}

int detach_job_init(DetachJob *j, const char *mount_point, uint64_t mount_id, bool force,
                    bool remove_dir) {
        *j = (DetachJob) { .mount_id = mount_id, .force = force, .remove_dir = remove_dir };
        return JOB_SET_STRING(j->mount_point, mount_point);
}

static bool idmap_ok(const IdMap *m) {
        return m->n_extents <= IDMAP_MAX_EXTENTS;
}

static bool probe_ok(const SourceProbe *p) {
        return JOB_STRING_OK(p->fstype) && JOB_STRING_OK(p->label) && JOB_STRING_OK(p->uuid);
}

int source_partition_check(const SourcePartition *p) {
        if (p->number == 0 ? (p->offset != 0 || p->size != 0) :
                             (p->size == 0 || p->offset > UINT64_MAX - p->size))
                return -EBADMSG;
        return 0;
}

int probe_reply_check(const ProbeReply *r) {
        if (!probe_ok(&r->probe) || !JOB_STRING_OK(r->device) || !idmap_ok(&r->uid_map) ||
            source_partition_check(&r->partition) < 0 ||
            !idmap_ok(&r->gid_map) || r->source.type < SOURCE_UNKNOWN ||
            r->source.type > SOURCE_IMAGE)
                return -EBADMSG;
        return 0;
}

int build_reply_check(const BuildReply *r) {
        if (!JOB_STRING_OK(r->device) || !JOB_STRING_OK(r->backing_file) ||
            !idmap_ok(&r->uid_map) || !idmap_ok(&r->gid_map) || r->idmap_mode < IDMAP_NONE ||
            r->idmap_mode > IDMAP_NAMESPACE || r->driver_pid > INT32_MAX ||
            (r->driver_pid && (r->driver_uid == 0 || r->driver_uid == UINT32_MAX)))
                return -EBADMSG;
        return 0;
}

int driver_start_reply_check(const DriverStartReply *r) {
        if (r->pid == 0 || r->pid > INT32_MAX || r->uid == 0 || r->uid == UINT32_MAX)
                return -EBADMSG;
        return 0;
}
