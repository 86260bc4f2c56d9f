/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The administrator's configuration (conf.h): built-in defaults, reference counting and
 * lookups. Parsing of /etc/usermount/usermount.conf lives in conf_load().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "macro.h"
#include "policy.h"

static void fstype_done(ConfFsType *t) {
        if (t->allowed_options)
                for (char **k = t->allowed_options; *k; k++)
                        free(*k);
        free(t->allowed_options);
        free(t->default_options);
        free(t->forced_options);
}

Conf *conf_unref(Conf *c) {
        if (!c)
                return NULL;
        if (--c->n_ref > 0)
                return NULL;
        for (size_t i = 0; i < c->n_fstypes; i++)
                fstype_done(&c->fstypes[i]);
        free(c->fstypes);
        free(c->path);
        free(c->media_root);
        free(c->image_check_user);
        free(c);
        return NULL;
}

Conf *conf_ref(Conf *c) {
        if (c)
                c->n_ref++;
        return c;
}

int conf_new_default(Conf **ret) {
        _cleanup_(conf_unrefp) Conf *c = calloc(1, sizeof(Conf));
        size_t n = 0;

        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        c->media_root = strdup(CONF_DEFAULT_MEDIA_ROOT);
        c->image_check_user = strdup(CONF_DEFAULT_IMAGE_CHECK_USER);
        if (!c->media_root || !c->image_check_user)
                return -ENOMEM;
        c->allow_exec = true;
        c->image_check = false;
        c->image_check_uid = (uid_t) -1;
        c->image_check_gid = (gid_t) -1;
        c->image_check_timeout_usec = CONF_DEFAULT_IMAGE_CHECK_TIMEOUT_USEC;
        c->limits = (ConfLimits) {
                .max_requests = CONF_DEFAULT_MAX_REQUESTS,
                .max_requests_per_user = CONF_DEFAULT_MAX_REQUESTS_PER_USER,
                .max_mounts = CONF_DEFAULT_MAX_MOUNTS,
                .max_mounts_per_user = CONF_DEFAULT_MAX_MOUNTS_PER_USER,
                .max_loop_devices = CONF_DEFAULT_MAX_LOOP_DEVICES,
                .max_loop_devices_per_user = CONF_DEFAULT_MAX_LOOP_DEVICES_PER_USER,
                .max_workers = CONF_DEFAULT_MAX_WORKERS,
                .max_workers_per_user = CONF_DEFAULT_MAX_WORKERS_PER_USER,
                .request_timeout_usec = CONF_DEFAULT_REQUEST_TIMEOUT_USEC,
        };

        for (const char *const *t = policy_fstypes(); *t; t++)
                n++;
        c->fstypes = calloc(n, sizeof(ConfFsType));
        if (!c->fstypes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                c->fstypes[i] = (ConfFsType) { .name = policy_fstypes()[i], .allowed = true };
        c->n_fstypes = n;
        *ret = TAKE_PTR(c);
        return 0;
}

const ConfFsType *conf_fstype(const Conf *c, const char *fstype) {
        if (!c || !fstype)
                return NULL;
        for (size_t i = 0; i < c->n_fstypes; i++)
                if (streq(c->fstypes[i].name, fstype))
                        return &c->fstypes[i];
        return NULL;
}

bool conf_fstype_allowed(const Conf *c, const char *fstype) {
        const ConfFsType *t = conf_fstype(c, fstype);

        return t && t->allowed;
}

int conf_load(const char *path, bool missing_ok, FILE *diag, Conf **ret) {
        if (access(path, F_OK) < 0) {
                if (errno == ENOENT && missing_ok)
                        return conf_new_default(ret);
                return -errno;
        }
        /* The parser is being written (issue 4). */
        return -EOPNOTSUPP;
}

int conf_check(const char *path, FILE *out) {
        /* Being written (issue 4). */
        return -EOPNOTSUPP;
}
