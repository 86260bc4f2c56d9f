/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The administrator's configuration (conf.h): built-in defaults, reference counting,
 * lookups, and conf_load(), which reads /etc/usermount/usermount.conf with inih.
 *
 * The stages of conf_load():
 *   file     one fd (no blocking on FIFOs), a regular file not writable by others, at most
 *            CONF_FILE_MAX bytes
 *   lines    our reader hands inih one line at a time and checks each raw line first:
 *            NUL bytes, UTF-8, control characters, length, syntax. A bad line is reported
 *            and inih gets an empty line instead, so that nothing is split or half-read,
 *            and every bad line is reported, not only the first inih would name
 *   keys     inih's handler checks section, key, duplicates and the value of each key
 *   whole    per-type option lists through policy.c, the image checker's user (unless
 *            checks take their uids from ImageCheckUidRange=)
 * Every problem is written as "PATH:LINE: message"; any problem means no Conf at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "label.h"
#include "macro.h"
#include "parse-util.h"
#include "pathcheck.h"
#include "policy.h"
#include "um-error.h"
#include "utf8.h"

/* After this many problems the rest are counted, not printed: binary garbage has many lines. */
#define CONF_PROBLEMS_SHOWN 100
/* Room for one escaped value in a message. */
#define ESCAPED_MAX 128

static void fstype_done(ConfFsType *t) {
        if (t->allowed_options)
                for (char **k = t->allowed_options; *k; k++)
                        free(*k);
        free(t->allowed_options);
        free(t->default_options);
        free(t->forced_options);
        option_list_done(&t->defaults);
        option_list_done(&t->forced);
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
        free(c->selinux_type);
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
        c->image_check_uid_first = CONF_DEFAULT_IMAGE_CHECK_UID_FIRST;
        c->image_check_uid_count = CONF_DEFAULT_IMAGE_CHECK_UID_COUNT;
        c->image_check_timeout_usec = CONF_DEFAULT_IMAGE_CHECK_TIMEOUT_USEC;
        for (int k = 0; k < _SOURCE_KIND_MAX; k++)
                c->driver.kinds[k] = DRIVER_SETTING_AUTO;
        c->driver_uid_first = CONF_DEFAULT_DRIVER_UID_FIRST;
        c->driver_uid_count = CONF_DEFAULT_DRIVER_UID_COUNT;
        c->limits = (ConfLimits) {
                .max_requests = CONF_DEFAULT_MAX_REQUESTS,
                .max_requests_per_user = CONF_DEFAULT_MAX_REQUESTS_PER_USER,
                .max_mounts = CONF_DEFAULT_MAX_MOUNTS,
                .max_mounts_per_user = CONF_DEFAULT_MAX_MOUNTS_PER_USER,
                .max_loop_devices = CONF_DEFAULT_MAX_LOOP_DEVICES,
                .max_loop_devices_per_user = CONF_DEFAULT_MAX_LOOP_DEVICES_PER_USER,
                .max_drivers = CONF_DEFAULT_MAX_DRIVERS,
                .max_drivers_per_user = CONF_DEFAULT_MAX_DRIVERS_PER_USER,
                .max_workers = CONF_DEFAULT_MAX_WORKERS,
                .max_workers_per_user = CONF_DEFAULT_MAX_WORKERS_PER_USER,
                .max_unauthorized_requests = CONF_DEFAULT_MAX_UNAUTHORIZED_REQUESTS,
                .request_timeout_usec = CONF_DEFAULT_REQUEST_TIMEOUT_USEC,
                .driver_memory_max = CONF_DEFAULT_DRIVER_MEMORY_MAX,
                .driver_tasks_max = CONF_DEFAULT_DRIVER_TASKS_MAX,
                .driver_cpu_sec = CONF_DEFAULT_DRIVER_CPU_SEC,
        };

        for (const char *const *t = fstype_names(); *t; t++)
                n++;
        c->fstypes = calloc(n, sizeof(ConfFsType));
        if (!c->fstypes)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                c->fstypes[i] = (ConfFsType) { .name = fstype_names()[i], .allowed = true };
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

/* ---- Sections and keys ---------------------------------------------------------------------- */

typedef struct Parser Parser;
typedef struct ConfKey ConfKey;

/* Parses value (never NULL) for key into p->conf; reports problems itself. */
typedef int (*ConfKeyParse)(Parser *p, const ConfKey *key, const char *value);

struct ConfKey {
        const char *name;
        ConfKeyParse parse;
        size_t offset;          /* into ConfLimits, for numbers */
        unsigned min, max;      /* numbers and seconds */
        bool empty_ok;          /* "Key=" means something (an empty list) */
};

/* Index of a section: General, Limits, Labels, then one per type in fstype_names() order. */
enum {
        SECTION_GENERAL,
        SECTION_LIMITS,
        SECTION_LABELS,
        SECTION_FSTYPES,
        SECTION_NONE = -1,      /* before the first section header */
        SECTION_IGNORED = -2,   /* an unknown or repeated section: reported once, keys skipped */
};

#define SECTION_MAX_KEYS 16

/* One problem, kept until the end so that they are written in the order of the lines. */
typedef struct Problem {
        unsigned line;
        unsigned seq;
        char *text;
} Problem;

struct Parser {
        const char *path;
        FILE *diag;
        Problem *list;          /* the problems to write, at most CONF_PROBLEMS_SHOWN */
        size_t n_list;
        Conf *conf;
        const char *data;       /* the file, NUL-terminated */
        size_t size, pos;
        unsigned line;          /* the line last handed to inih, 1-based */
        unsigned problems;
        unsigned bad_line;      /* the last line we reported as unparsable */
        int section;            /* index, SECTION_NONE or SECTION_IGNORED */
        unsigned *section_lines; /* per section: the line of its header, 0 when not seen */
        unsigned (*key_lines)[SECTION_MAX_KEYS]; /* per section and key: the line that set it */
};

/* Writes one problem; returns -EINVAL, for "return problem(...)". */
static int problem(Parser *p, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int problem(Parser *p, unsigned line, const char *fmt, ...) {
        Problem *list;
        char *text;
        va_list ap;
        int r;

        p->problems++;
        if (!p->diag || p->n_list >= CONF_PROBLEMS_SHOWN)
                return -EINVAL;
        va_start(ap, fmt);
        r = vasprintf(&text, fmt, ap);
        va_end(ap);
        list = r >= 0 ? realloc(p->list, (p->n_list + 1) * sizeof(Problem)) : NULL;
        if (!list) {
                /* Out of memory: say so rather than lose the line. */
                fprintf(p->diag, "%s:%u: (out of memory describing this problem)\n", p->path,
                        line);
                if (r >= 0)
                        free(text);
                return -EINVAL;
        }
        p->list = list;
        p->list[p->n_list] = (Problem) { line, p->problems, text };
        p->n_list++;
        return -EINVAL;
}

static int problem_compare(const void *a, const void *b) {
        const Problem *x = a, *y = b;

        if (x->line != y->line)
                return x->line < y->line ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the problems in the order of their lines, and how many were left out. */
static void problems_write(Parser *p) {
        if (!p->diag)
                return;
        qsort(p->list, p->n_list, sizeof(Problem), problem_compare);
        for (size_t i = 0; i < p->n_list; i++)
                fprintf(p->diag, "%s:%u: %s\n", p->path, p->list[i].line, p->list[i].text);
        if (p->problems > p->n_list)
                fprintf(p->diag, "%s:0: %zu more problems not shown\n", p->path,
                        (size_t) p->problems - p->n_list);
}

static const char *esc(const char *s, char buf[static ESCAPED_MAX]) {
        return um_escape(s, buf, ESCAPED_MAX);
}

/* Strict: decimal digits only, no sign, no spaces, no overflow. */
static bool parse_unsigned(const char *s, unsigned max, unsigned *ret) {
        unsigned long v = 0;

        if (!*s)
                return false;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return false;
                v = v * 10 + (unsigned) (*s - '0');
                if (v > max)
                        return false;
        }
        *ret = (unsigned) v;
        return true;
}

static int parse_bool(Parser *p, const ConfKey *key, const char *value) {
        char e[ESCAPED_MAX];
        int r = parse_boolean(value);

        if (r < 0)
                return problem(p, p->line, "%s= needs yes or no (true/false, on/off, 1/0), not "
                               "'%s'", key->name, esc(value, e));
        if (streq(key->name, "AllowExec"))
                p->conf->allow_exec = r;
        else
                p->conf->image_check = r;
        return 0;
}

/* A canonical absolute path (pathcheck.h) without whitespace, not "/". */
static const char *path_problem(const char *path) {
        PathProblem problem = path_check_canonical(path, PATH_MAX);

        if (problem == PATH_NOT_ABSOLUTE)
                return "must be an absolute path";
        if (streq(path, "/"))
                return "must not be the root directory";
        /* Unreachable: a configuration line is shorter than NAME_MAX. */
        if (problem == PATH_TOO_LONG || problem == PATH_LONG_NAME)
                return "is too long";
        for (const char *c = path; *c; c++)
                if (*c == ' ' || *c == '\t')
                        return "must not contain whitespace";
        switch (problem) {
        case PATH_DOUBLE_SLASH:
        case PATH_TRAILING_SLASH:
                return "must be canonical: no '//' and no trailing '/'";
        case PATH_DOT:
        case PATH_DOT_DOT:
                return "must be canonical: no '.' or '..' components";
        default:
                return NULL;
        }
}

static int parse_media_root(Parser *p, const ConfKey *key, const char *value) {
        const char *why = path_problem(value);
        char e[ESCAPED_MAX], *s;

        if (why)
                return problem(p, p->line, "%s='%s' %s", key->name, esc(value, e), why);
        s = strdup(value);
        if (!s)
                return problem(p, p->line, "out of memory");
        free(p->conf->media_root);
        p->conf->media_root = s;
        return 0;
}

/* Splits a space- or comma-separated list; runs of separators count as one. Owned. */
static char **split_list(const char *value) {
        size_t n = 0, max = strlen(value) / 2 + 2;
        char **list = calloc(max, sizeof(char *));

        if (!list)
                return NULL;
        for (const char *c = value; *c;) {
                size_t len;

                c += strspn(c, " \t,");
                len = strcspn(c, " \t,");
                if (len == 0)
                        break;
                list[n] = strndup(c, len);
                if (!list[n]) {
                        while (n > 0)
                                free(list[--n]);
                        return mfree(list);
                }
                n++;
                c += len;
        }
        return list;
}

static void strv_free(char **l) {
        for (char **k = l; k && *k; k++)
                free(*k);
        free(l);
}

static void strv_freep(char ***l) {
        strv_free(*l);
}

static int parse_allowed_filesystems(Parser *p, const ConfKey *key, const char *value) {
        _cleanup_(strv_freep) char **list = split_list(value);
        char e[ESCAPED_MAX];
        bool ok = true;

        if (!list)
                return problem(p, p->line, "out of memory");
        for (size_t i = 0; list[i]; i++) {
                bool known = conf_fstype(p->conf, list[i]) != NULL, twice = false;

                for (size_t j = 0; j < i; j++)
                        twice = twice || streq(list[i], list[j]);
                if (!known)
                        problem(p, p->line, "%s=: '%s' is not a filesystem type usermount can "
                                "mount (ext2, ext3, ext4, xfs, btrfs, squashfs, erofs, vfat, "
                                "exfat, ntfs3, iso9660, udf)", key->name, esc(list[i], e));
                else if (twice)
                        problem(p, p->line, "%s=: '%s' is listed twice", key->name, list[i]);
                ok = ok && known && !twice;
        }
        if (!ok)
                return -EINVAL;
        for (size_t i = 0; i < p->conf->n_fstypes; i++) {
                ConfFsType *t = &p->conf->fstypes[i];

                t->allowed = false;
                for (size_t j = 0; list[j]; j++)
                        t->allowed = t->allowed || streq(list[j], t->name);
        }
        return 0;
}

/* A user name as useradd accepts it, or a numeric uid. */
static bool user_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 32)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                      (i > 0 && ((c >= '0' && c <= '9') || c == '-' || c == '.')) ||
                      (c >= '0' && c <= '9') || (i == n - 1 && c == '$')))
                        return false;
        }
        return true;
}

static int parse_image_check_user(Parser *p, const ConfKey *key, const char *value) {
        char e[ESCAPED_MAX], *s;

        if (!user_name_valid(value))
                return problem(p, p->line, "%s='%s' is neither a user name nor a numeric uid",
                               key->name, esc(value, e));
        s = strdup(value);
        if (!s)
                return problem(p, p->line, "out of memory");
        free(p->conf->image_check_user);
        p->conf->image_check_user = s;
        return 0;
}

/*
 * "FIRST-LAST", inclusive decimal uids from 1 to 4294967294, at least
 * CONF_IMAGE_CHECK_UID_COUNT_MIN and at most CONF_IMAGE_CHECK_UID_COUNT_MAX of them; or
 * empty: no range, every check runs as ImageCheckUser=.
 */
static int parse_uid_range(Parser *p, const ConfKey *key, const char *value) {
        const bool driver = streq(key->name, "DriverUidRange");
        uid_t *ret_first = driver ? &p->conf->driver_uid_first : &p->conf->image_check_uid_first;
        unsigned *ret_count = driver ? &p->conf->driver_uid_count :
                &p->conf->image_check_uid_count;
        const char *dash = strchr(value, '-');
        char e[ESCAPED_MAX], first_s[16];
        unsigned first, last;
        uint64_t count;

        if (!*value) {
                *ret_first = 0;
                *ret_count = 0;
                return 0;
        }
        if (!dash || (size_t) (dash - value) >= sizeof(first_s))
                goto syntax;
        memcpy(first_s, value, (size_t) (dash - value));
        first_s[dash - value] = 0;
        if (!parse_unsigned(first_s, UINT_MAX - 1, &first) || first == 0 ||
            !parse_unsigned(dash + 1, UINT_MAX - 1, &last) || last == 0)
                goto syntax;
        if (first > last)
                return problem(p, p->line, "%s=%s: the first uid is greater than the last",
                               key->name, value);
        count = (uint64_t) last - first + 1;
        if (count < CONF_IMAGE_CHECK_UID_COUNT_MIN && driver)
                return problem(p, p->line, "%s=%s is a single uid; a range needs at least %u",
                               key->name, value, CONF_IMAGE_CHECK_UID_COUNT_MIN);
        if (count < CONF_IMAGE_CHECK_UID_COUNT_MIN)
                return problem(p, p->line, "%s=%s is a single uid; a range needs at least %u "
                               "(for one uid, set ImageCheckUser= and leave %s= empty)",
                               key->name, value, CONF_IMAGE_CHECK_UID_COUNT_MIN, key->name);
        if (count > CONF_IMAGE_CHECK_UID_COUNT_MAX)
                return problem(p, p->line, "%s=%s has %llu uids; at most %u are allowed",
                               key->name, value, (unsigned long long) count,
                               CONF_IMAGE_CHECK_UID_COUNT_MAX);
        *ret_first = (uid_t) first;
        *ret_count = (unsigned) count;
        return 0;

syntax:
        return problem(p, p->line, "%s= needs FIRST-LAST, two uids from 1 to 4294967294%s, "
                       "not '%s'", key->name, driver ? "" : " (or nothing, for no range)",
                       esc(value, e));
}

static bool parse_range(Parser *p, const ConfKey *key, const char *value, unsigned *ret) {
        char e[ESCAPED_MAX];

        if (parse_unsigned(value, key->max, ret) && *ret >= key->min)
                return true;
        problem(p, p->line, "%s= needs a whole number from %u to %u, not '%s'", key->name,
                key->min, key->max, esc(value, e));
        return false;
}

static int parse_limit(Parser *p, const ConfKey *key, const char *value) {
        unsigned v;

        if (!parse_range(p, key, value, &v))
                return -EINVAL;
        *(unsigned *) ((char *) &p->conf->limits + key->offset) = v;
        return 0;
}

static int parse_seconds(Parser *p, const ConfKey *key, const char *value) {
        unsigned v;

        if (!parse_range(p, key, value, &v))
                return -EINVAL;
        if (streq(key->name, "RequestTimeoutSec"))
                p->conf->limits.request_timeout_usec = (uint64_t) v * 1000000u;
        else
                p->conf->image_check_timeout_usec = (uint64_t) v * 1000000u;
        return 0;
}

/* DriverMemoryMax=: bytes, or a whole number with K, M or G (powers of 1024), from 64M to
 * 64G (more than a driver needs; less, and libfuse's threads would not start). */
static int parse_driver_memory(Parser *p, const ConfKey *key, const char *value) {
        static const char units[] = "KMG";
        char e[ESCAPED_MAX], digits[32];
        size_t n = strlen(value);
        unsigned long long shift = 0;
        unsigned v;

        if (n > 0 && n < sizeof(digits) && strchr(units, value[n - 1])) {
                shift = 10 * (unsigned long long) (strchr(units, value[n - 1]) - units + 1);
                n--;
        }
        if (n == 0 || n >= sizeof(digits))
                goto bad;
        memcpy(digits, value, n);
        digits[n] = 0;
        if (!parse_unsigned(digits, UINT_MAX, &v))
                goto bad;
        uint64_t bytes = (uint64_t) v << shift;
        if ((bytes >> shift) != v || bytes < (64ULL << 20) || bytes > (64ULL << 30))
                goto bad;
        p->conf->limits.driver_memory_max = bytes;
        return 0;
bad:
        return problem(p, p->line, "%s= needs a size from 64M to 64G (bytes, or a number with "
                       "K, M or G), not '%s'", key->name, esc(value, e));
}

/* DriverCPUSec=: seconds from 1 to a year, or "infinity" for no limit. */
static int parse_driver_cpu(Parser *p, const ConfKey *key, const char *value) {
        char e[ESCAPED_MAX];
        unsigned v;

        if (streq(value, "infinity")) {
                p->conf->limits.driver_cpu_sec = 0;
                return 0;
        }
        if (!parse_unsigned(value, 366u * 86400u, &v) || v == 0)
                return problem(p, p->line, "%s= needs seconds from 1 to 31622400, or infinity, "
                               "not '%s'", key->name, esc(value, e));
        p->conf->limits.driver_cpu_sec = v;
        return 0;
}

/* An SELinux type name; empty: computed from the caller's context (label.h). */
static int parse_selinux_type(Parser *p, const ConfKey *key, const char *value) {
        char e[ESCAPED_MAX], *s = NULL;

        if (*value && !label_selinux_type_valid(value))
                return problem(p, p->line, "%s='%s' is not an SELinux type name (a letter, then "
                               "letters, digits, '_', '.' or '-', at most %d bytes)", key->name,
                               esc(value, e), LABEL_TYPE_MAX);
        if (*value) {
                s = strdup(value);
                if (!s)
                        return problem(p, p->line, "out of memory");
        }
        free(p->conf->selinux_type);
        p->conf->selinux_type = s;
        return 0;
}

static ConfFsType *parser_fstype(Parser *p) {
        return &p->conf->fstypes[p->section - SECTION_FSTYPES];
}

/* Driver= in [General] (every kind not named stays auto) or in a type's section (every
 * kind not named follows [General]). */
static int parse_driver(Parser *p, const ConfKey *key, const char *value) {
        DriverPolicy d;
        char why[160];

        if (driver_policy_parse(value, &d, why, sizeof(why)) < 0)
                return problem(p, p->line, "%s=: %s", key->name, why);
        if (p->section == SECTION_GENERAL) {
                for (int k = 0; k < _SOURCE_KIND_MAX; k++)
                        if (d.kinds[k] == DRIVER_SETTING_UNSET)
                                d.kinds[k] = DRIVER_SETTING_AUTO;
                p->conf->driver = d;
        } else
                parser_fstype(p)->driver = d;
        return 0;
}

static int parse_allowed_options(Parser *p, const ConfKey *key, const char *value) {
        ConfFsType *t = parser_fstype(p);
        char **list = split_list(value);

        if (!list)
                return problem(p, p->line, "out of memory");
        strv_free(t->allowed_options);
        t->allowed_options = list;
        return 0;
}

static int parse_option_string(Parser *p, const ConfKey *key, const char *value) {
        ConfFsType *t = parser_fstype(p);
        char **dest = streq(key->name, "DefaultOptions") ? &t->default_options :
                &t->forced_options;
        char *s = NULL;

        /* Checked as a whole, with the other lists of the section, once the file is read. */
        if (*value) {
                s = strdup(value);
                if (!s)
                        return problem(p, p->line, "out of memory");
        }
        free(*dest);
        *dest = s;
        return 0;
}

#define LIMIT(n, field) \
        { n, parse_limit, offsetof(ConfLimits, field), 1, 1000000, false }

/* Indices into general_keys[], in its order: the whole-file checks use them to find a key's
 * line. The entries are not designated initializers, so that tests/install/test-man.sh
 * finds every key in the table. */
enum {
        GENERAL_MEDIA_ROOT,
        GENERAL_ALLOWED_FILESYSTEMS,
        GENERAL_ALLOW_EXEC,
        GENERAL_IMAGE_CHECK,
        GENERAL_IMAGE_CHECK_USER,
        GENERAL_IMAGE_CHECK_UID_RANGE,
        GENERAL_IMAGE_CHECK_TIMEOUT_SEC,
        GENERAL_DRIVER,
        GENERAL_DRIVER_UID_RANGE,
        _GENERAL_MAX,
};

static const ConfKey general_keys[_GENERAL_MAX + 1] = {
        { "MediaRoot", parse_media_root },
        { "AllowedFilesystems", parse_allowed_filesystems, .empty_ok = true },
        { "AllowExec", parse_bool },
        { "ImageCheck", parse_bool },
        { "ImageCheckUser", parse_image_check_user },
        { "ImageCheckUidRange", parse_uid_range, .empty_ok = true },
        { "ImageCheckTimeoutSec", parse_seconds, 0, 1, 86400, false },
        { "Driver", parse_driver },
        { "DriverUidRange", parse_uid_range },
        { NULL },
};
_Static_assert(_GENERAL_MAX <= SECTION_MAX_KEYS, "SECTION_MAX_KEYS too small");

static const ConfKey limits_keys[] = {
        LIMIT("MaxRequests", max_requests),
        LIMIT("MaxRequestsPerUser", max_requests_per_user),
        LIMIT("MaxMounts", max_mounts),
        LIMIT("MaxMountsPerUser", max_mounts_per_user),
        LIMIT("MaxLoopDevices", max_loop_devices),
        LIMIT("MaxLoopDevicesPerUser", max_loop_devices_per_user),
        LIMIT("MaxDrivers", max_drivers),
        LIMIT("MaxDriversPerUser", max_drivers_per_user),
        LIMIT("MaxWorkers", max_workers),
        LIMIT("MaxWorkersPerUser", max_workers_per_user),
        LIMIT("MaxUnauthorizedRequests", max_unauthorized_requests),
        { "RequestTimeoutSec", parse_seconds, 0, 1, 3600, false },
        { "DriverMemoryMax", parse_driver_memory },
        { "DriverTasksMax", parse_limit, offsetof(ConfLimits, driver_tasks_max), 8, 4096, false },
        { "DriverCPUSec", parse_driver_cpu },
        { NULL },
};
_Static_assert(ELEMENTSOF(limits_keys) - 1 <= SECTION_MAX_KEYS, "SECTION_MAX_KEYS too small");

static const ConfKey labels_keys[] = {
        { "SELinuxType", parse_selinux_type, .empty_ok = true },
        { NULL },
};

/* In the order of PolicyConfList, so that a list's index is its key's index. */
static const ConfKey fstype_keys[] = {
        { "AllowedOptions", parse_allowed_options, .empty_ok = true },
        { "DefaultOptions", parse_option_string, .empty_ok = true },
        { "ForcedOptions", parse_option_string, .empty_ok = true },
        { "Driver", parse_driver },
        { NULL },
};

static const ConfKey *section_keys(int section) {
        return section == SECTION_GENERAL ? general_keys :
                section == SECTION_LIMITS ? limits_keys :
                section == SECTION_LABELS ? labels_keys : fstype_keys;
}

static const char *section_name(const Parser *p, int section) {
        return section == SECTION_GENERAL ? "General" :
                section == SECTION_LIMITS ? "Limits" :
                section == SECTION_LABELS ? "Labels" :
                p->conf->fstypes[section - SECTION_FSTYPES].name;
}

static int section_find(const Parser *p, const char *name) {
        if (streq(name, "General"))
                return SECTION_GENERAL;
        if (streq(name, "Limits"))
                return SECTION_LIMITS;
        if (streq(name, "Labels"))
                return SECTION_LABELS;
        for (size_t i = 0; i < p->conf->n_fstypes; i++)
                if (streq(name, p->conf->fstypes[i].name))
                        return SECTION_FSTYPES + (int) i;
        return SECTION_NONE;
}

static void keys_join(const ConfKey *keys, char *buf, size_t size) {
        size_t o = 0;

        buf[0] = 0;
        for (const ConfKey *k = keys; k->name && o < size; k++)
                o += snprintf(buf + o, size - o, "%s%s", k == keys ? "" : ", ", k->name);
}

/* inih's handler: one Key=value of the current line. Never stops inih. */
static int parser_handle(void *userdata, const char *section, const char *name,
                         const char *value) {
        Parser *p = userdata;
        const ConfKey *keys, *k;
        char e[ESCAPED_MAX], known[256];
        unsigned *line;

        if (p->section == SECTION_IGNORED)
                return 1;
        if (p->section == SECTION_NONE) {
                problem(p, p->line, "'%s' is outside of any section: put it under [General], "
                        "[Limits], [Labels] or a filesystem type's section", esc(name, e));
                return 1;
        }
        keys = section_keys(p->section);
        for (k = keys; k->name; k++)
                if (streq(k->name, name))
                        break;
        if (!k->name) {
                keys_join(keys, known, sizeof(known));
                problem(p, p->line, "unknown key '%s' in [%s]; [%s] knows %s", esc(name, e),
                        section_name(p, p->section), section_name(p, p->section), known);
                return 1;
        }
        line = &p->key_lines[p->section][k - keys];
        if (*line > 0) {
                problem(p, p->line, "%s= is set twice in [%s] (first on line %u)", k->name,
                        section_name(p, p->section), *line);
                return 1;
        }
        *line = p->line;
        if (!*value && !k->empty_ok) {
                problem(p, p->line, "%s= needs a value", k->name);
                return 1;
        }
        (void) k->parse(p, k, value);
        return 1;
}

/* ---- Lines ---------------------------------------------------------------------------------- */

/* NUL bytes, UTF-8, control characters (tab aside); the first problem of a raw line. */
static bool line_bytes_ok(Parser *p, const char *s, size_t len) {
        for (size_t i = 0; i < len;) {
                uint32_t cp;
                size_t n;

                if (s[i] == 0) {
                        problem(p, p->line, "the line contains a NUL byte (at byte %zu)", i + 1);
                        return false;
                }
                n = utf8_decode((const unsigned char *) s + i, &cp);
                /* A sequence cut by the end of the line is invalid, too. */
                if (n == 0 || i + n > len) {
                        problem(p, p->line, "the line is not valid UTF-8 (at byte %zu)", i + 1);
                        return false;
                }
                if ((cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp < 0xa0)) {
                        problem(p, p->line, "the line contains a control character (U+%04X at "
                                "byte %zu)", (unsigned) cp, i + 1);
                        return false;
                }
                i += n;
        }
        return true;
}

/* A "[Name]" line: records the section for the handler; false when it cannot be parsed. */
static bool line_section(Parser *p, const char *s, size_t len) {
        const char *end = memchr(s, ']', len), *after;
        _cleanup_free_ char *name = NULL;
        char e[ESCAPED_MAX];
        int section;

        /* Keys after a bad header belong to no section, not to the one before it. */
        p->section = SECTION_IGNORED;
        if (!end) {
                problem(p, p->line, "section header without ']'");
                return false;
        }
        /* Only whitespace or a comment may follow; inih would silently drop anything. */
        for (after = end + 1; after < s + len && (*after == ' ' || *after == '\t'); after++)
                ;
        if (after < s + len && *after != ';' && *after != '#') {
                problem(p, p->line, "text after the section header's ']'");
                return false;
        }
        name = strndup(s + 1, (size_t) (end - s - 1));
        if (!name) {
                problem(p, p->line, "out of memory");
                return false;
        }
        section = section_find(p, name);
        if (section == SECTION_NONE)
                problem(p, p->line, "unknown section [%s]; known sections are [General], "
                        "[Limits], [Labels] and one per filesystem type ([ext4], [vfat], ...)",
                        esc(name, e));
        else if (p->section_lines[section] > 0)
                problem(p, p->line, "section [%s] appears a second time (first on line %u)",
                        name, p->section_lines[section]);
        else {
                p->section_lines[section] = p->line;
                p->section = section;
        }
        return true;
}

/* A "Key=value" line: inih would also split at ':', and would take "=value" as a key "". */
static bool line_key_value(Parser *p, const char *s, size_t len) {
        const char *eq = memchr(s, '=', len);
        size_t key_len;

        if (!eq) {
                problem(p, p->line, "expected 'Key=value', '[Section]' or a comment ('#' or "
                        "';')");
                return false;
        }
        key_len = (size_t) (eq - s);
        while (key_len > 0 && (s[key_len - 1] == ' ' || s[key_len - 1] == '\t'))
                key_len--;
        if (key_len == 0) {
                problem(p, p->line, "'=' without a key before it");
                return false;
        }
        if (memchr(s, ':', key_len)) {
                problem(p, p->line, "':' in a key: write Key=value");
                return false;
        }
        return true;
}

/*
 * Checks one raw line (without its line end) and decides what inih gets. Leading
 * whitespace is indentation and is removed here, so that inih never takes a line for the
 * continuation of the previous value (its multi-line values); an indented line must be
 * complete on its own.
 */
static bool line_check(Parser *p, const char **s, size_t *len, int max_len) {
        if (p->line == 1 && *len >= 3 && memcmp(*s, "\xef\xbb\xbf", 3) == 0) {
                *s += 3;
                *len -= 3;
        }
        if (*len > (size_t) max_len) {
                problem(p, p->line, "line is longer than %d bytes", max_len);
                return false;
        }
        if (!line_bytes_ok(p, *s, *len))
                return false;
        while (*len > 0 && (**s == ' ' || **s == '\t')) {
                (*s)++;
                (*len)--;
        }
        if (*len == 0 || **s == '#' || **s == ';')
                return true;
        if (**s == '[')
                return line_section(p, *s, *len);
        return line_key_value(p, *s, *len);
}

/*
 * inih's reader: one line of p->data per call, with "\n". inih needs room for the line,
 * "\r\n" and NUL in num bytes, so a line may have num - 3 bytes; a longer one is reported
 * and replaced, never split.
 */
static char *parser_read_line(char *str, int num, void *userdata) {
        Parser *p = userdata;
        const char *s = p->data + p->pos, *nl;
        size_t len;

        if (p->pos >= p->size || num < 4)
                return NULL;
        nl = memchr(s, '\n', p->size - p->pos);
        len = nl ? (size_t) (nl - s) : p->size - p->pos;
        p->pos += len + (nl ? 1 : 0);
        p->line++;
        if (len > 0 && s[len - 1] == '\r')
                len--;

        if (!line_check(p, &s, &len, num - 3)) {
                p->bad_line = p->line;
                len = 0;
        }
        memcpy(str, s, len);
        str[len] = '\n';
        str[len + 1] = 0;
        return str;
}

/* ---- The file ------------------------------------------------------------------------------- */

static const char *file_type_name(mode_t mode) {
        if (S_ISDIR(mode))
                return "a directory";
        if (S_ISFIFO(mode))
                return "a FIFO";
        if (S_ISCHR(mode) || S_ISBLK(mode))
                return "a device";
        if (S_ISSOCK(mode))
                return "a socket";
        return "not a regular file";
}

/*
 * Reads the whole file through one fd. O_NONBLOCK, so that opening a FIFO does not wait
 * for a writer; it is refused after fstat() anyway. Returns -EINVAL after reporting a file
 * that is not acceptable, -errno when it cannot be read.
 */
static int read_file(Parser *p, char **ret_data, size_t *ret_size) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        struct stat st;

        fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode)) {
                problem(p, 0, "is %s; the configuration must be a regular file",
                        file_type_name(st.st_mode));
                return -EINVAL;
        }
        if (st.st_mode & S_IWOTH) {
                problem(p, 0, "is writable by every user; the configuration must be writable "
                        "by its owner only (chmod o-w)");
                return -EINVAL;
        }
        if (st.st_size > (off_t) CONF_FILE_MAX)
                goto too_large;

        data = malloc(CONF_FILE_MAX + 2);
        if (!data)
                return -ENOMEM;
        /* Up to one byte more than allowed, in case the file grew after fstat(). */
        while (size <= CONF_FILE_MAX) {
                ssize_t n = read(fd, data + size, CONF_FILE_MAX + 1 - size);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        if (size > CONF_FILE_MAX)
                goto too_large;
        data[size] = 0;
        *ret_data = TAKE_PTR(data);
        *ret_size = size;
        return 0;

too_large:
        problem(p, 0, "is larger than %u bytes", CONF_FILE_MAX);
        return -EINVAL;
}

/* ---- Checks of the whole file --------------------------------------------------------------- */

typedef struct FsTypeReport {
        Parser *p;
        int section;
} FsTypeReport;

static void fstype_report(void *userdata, PolicyConfList list, const char *message) {
        FsTypeReport *r = userdata;

        problem(r->p, r->p->key_lines[r->section][list], "[%s] %s=: %s",
                section_name(r->p, r->section), policy_conf_list_name(list), message);
}

int conf_fstype_split(ConfFsType *t, bool forced, UmError *error) {
        OptionList *l = forced ? &t->forced : &t->defaults;
        const char *s = forced ? t->forced_options : t->default_options;

        option_list_done(l);
        return isempty(s) ? 0 : option_list_split(s, l, error);
}

/* DefaultOptions= and ForcedOptions= of every section are split here, once. */
static int check_fstypes(Parser *p) {
        for (size_t i = 0; i < p->conf->n_fstypes; i++) {
                FsTypeReport report = { p, SECTION_FSTYPES + (int) i };
                ConfFsType *t = &p->conf->fstypes[i];
                int r;

                t->path = p->conf->path;
                for (int forced = 0; forced <= 1; forced++) {
                        UmError e = {};

                        r = conf_fstype_split(t, forced, &e);
                        if (r == -ENOMEM)
                                return r;
                        if (r < 0)
                                fstype_report(&report, forced ? POLICY_CONF_FORCED_OPTIONS :
                                              POLICY_CONF_DEFAULT_OPTIONS, e.message);
                }
                r = policy_check_conf_fstype(t, fstype_report, &report);
                if (r == -ENOMEM)
                        return r;
        }
        return 0;
}

/* A driver and an image check must never share a uid: both parse hostile images. */
static int check_uid_ranges(Parser *p) {
        const Conf *c = p->conf;
        uint64_t a0 = c->driver_uid_first, a1 = a0 + c->driver_uid_count;
        uint64_t b0 = c->image_check_uid_first, b1 = b0 + c->image_check_uid_count;
        unsigned line = p->key_lines[SECTION_GENERAL][GENERAL_DRIVER_UID_RANGE] ?:
                p->key_lines[SECTION_GENERAL][GENERAL_IMAGE_CHECK_UID_RANGE];

        if (c->image_check_uid_count > 0 && a0 < b1 && b0 < a1)
                return problem(p, line, "DriverUidRange=%llu-%llu overlaps ImageCheckUidRange="
                               "%llu-%llu: userspace drivers and image checks must never share "
                               "a uid", (unsigned long long) a0, (unsigned long long) a1 - 1,
                               (unsigned long long) b0, (unsigned long long) b1 - 1);
        return 0;
}

/*
 * The image checker's user, only looked up when it is needed: with ImageCheck=yes and no
 * ImageCheckUidRange=, since with a range each check takes a uid of it instead.
 */
static int check_image_user(Parser *p) {
        unsigned line = p->key_lines[SECTION_GENERAL][GENERAL_IMAGE_CHECK_USER] ?:
                p->key_lines[SECTION_GENERAL][GENERAL_IMAGE_CHECK];
        const char *user = p->conf->image_check_user;
        struct passwd *pw;
        char e[ESCAPED_MAX];
        unsigned uid;

        if (!p->conf->image_check || p->conf->image_check_uid_count > 0)
                return 0;
        errno = 0;
        if (parse_unsigned(user, UINT_MAX - 1, &uid)) {
                pw = getpwuid((uid_t) uid);
                if (!pw && uid != 0) {
                        /* A uid no account has is the best choice: nothing else runs as it. */
                        p->conf->image_check_uid = (uid_t) uid;
                        p->conf->image_check_gid = (gid_t) uid;
                        return 0;
                }
        } else
                pw = getpwnam(user);
        if (!pw)
                return problem(p, line, "ImageCheckUser: user '%s' does not exist%s%s",
                               esc(user, e), errno ? ": " : "", errno ? strerror(errno) : "");
        if (pw->pw_uid == 0 || pw->pw_gid == 0)
                return problem(p, line, "ImageCheckUser: '%s' has uid or gid 0; the image "
                               "check must run without privileges", esc(user, e));
        p->conf->image_check_uid = pw->pw_uid;
        p->conf->image_check_gid = pw->pw_gid;
        return 0;
}

static void parser_done(Parser *p) {
        for (size_t i = 0; i < p->n_list; i++)
                free(p->list[i].text);
        free(p->list);
        free(p->section_lines);
        free(p->key_lines);
        conf_unref(p->conf);
}

/* Parses what read_file() returned into p->conf; the number of problems is in p. */
static int parser_run(Parser *p) {
        size_t n_sections = SECTION_FSTYPES + p->conf->n_fstypes;
        int r;

        p->section = SECTION_NONE;
        p->section_lines = calloc(n_sections, sizeof(unsigned));
        p->key_lines = calloc(n_sections, sizeof(*p->key_lines));
        if (!p->section_lines || !p->key_lines)
                return -ENOMEM;

        r = ini_parse_stream(parser_read_line, p, parser_handle, p);
        if (r == -2)
                return -ENOMEM;
        /* Every line inih cannot parse is refused before it sees it; this is a safety net. */
        if (r != 0 && (r < 0 || (unsigned) r != p->bad_line))
                problem(p, r > 0 ? (unsigned) r : 0, "the line cannot be parsed");

        r = check_fstypes(p);
        if (r < 0)
                return r;
        (void) check_image_user(p);
        (void) check_uid_ranges(p);
        return 0;
}

int conf_load(const char *path, bool missing_ok, FILE *diag, Conf **ret) {
        _cleanup_(parser_done) Parser p = { .path = path, .diag = diag };
        _cleanup_free_ char *data = NULL;
        struct stat st;
        int r;

        if (!path || !ret)
                return -EINVAL;
        r = read_file(&p, &data, &p.size);
        if (r == -ENOENT && lstat(path, &st) == 0) {
                /* A dangling symlink is a mistake, not an absent file. */
                problem(&p, 0, "is a symbolic link to a file that does not exist");
                r = -EINVAL;
        }
        if (r == -EINVAL) {
                problems_write(&p);
                return r;
        }
        if (r == -ENOENT && missing_ok)
                return conf_new_default(ret);
        if (r < 0)
                return r;
        p.data = data;

        r = conf_new_default(&p.conf);
        if (r < 0)
                return r;
        p.conf->path = strdup(path);
        if (!p.conf->path)
                return -ENOMEM;
        r = parser_run(&p);
        if (r < 0)
                return r;
        if (p.problems > 0) {
                problems_write(&p);
                return -EINVAL;
        }
        *ret = TAKE_PTR(p.conf);
        return 0;
}

/* ---- --check-config ------------------------------------------------------------------------- */

static void print_fstype(const ConfFsType *t, FILE *out) {
        char forced[256], driver[96];

        fprintf(out, "\n[%s]\n", t->name);
        if (!t->allowed)
                fprintf(out, "# not allowed by AllowedFilesystems=\n");
        policy_describe_forced(t->name, forced, sizeof(forced));
        if (*forced)
                fprintf(out, "# always forced by usermount: %s\n", forced);
        if (t->allowed_options) {
                fprintf(out, "AllowedOptions=");
                for (char **k = t->allowed_options; *k; k++)
                        fprintf(out, "%s%s", k == t->allowed_options ? "" : ",", *k);
                fprintf(out, "\n");
        } else
                fprintf(out, "# AllowedOptions: every option usermount knows for %s\n",
                        t->name);
        fprintf(out, "DefaultOptions=%s\n", strempty(t->default_options));
        fprintf(out, "ForcedOptions=%s\n", strempty(t->forced_options));
        driver_policy_format(&t->driver, driver, sizeof(driver));
        if (*driver)
                fprintf(out, "Driver=%s\n", driver);
        else
                fprintf(out, "# Driver: as in [General]\n");
}

static void print_summary(const Conf *c, FILE *out) {
        const ConfLimits *l = &c->limits;
        char driver[96];

        fprintf(out, "[General]\nMediaRoot=%s\nAllowedFilesystems=", c->media_root);
        for (size_t i = 0, n = 0; i < c->n_fstypes; i++)
                if (c->fstypes[i].allowed)
                        fprintf(out, "%s%s", n++ > 0 ? " " : "", c->fstypes[i].name);
        fprintf(out, "\nAllowExec=%s\nImageCheck=%s\n", c->allow_exec ? "yes" : "no",
                c->image_check ? "yes" : "no");
        if (c->image_check && c->image_check_uid_count > 0)
                fprintf(out, "# the image check runs as uid %u to %u, a uid of its own for "
                        "each check (its gid the same); ImageCheckUser= is not used\n",
                        (unsigned) c->image_check_uid_first,
                        (unsigned) c->image_check_uid_first + c->image_check_uid_count - 1);
        else if (c->image_check)
                fprintf(out, "# the image check runs as uid %u, gid %u\n",
                        (unsigned) c->image_check_uid, (unsigned) c->image_check_gid);
        fprintf(out, "ImageCheckUser=%s\nImageCheckUidRange=", c->image_check_user);
        if (c->image_check_uid_count > 0)
                fprintf(out, "%u-%u", (unsigned) c->image_check_uid_first,
                        (unsigned) c->image_check_uid_first + c->image_check_uid_count - 1);
        fprintf(out, "\nImageCheckTimeoutSec=%llu\n",
                (unsigned long long) (c->image_check_timeout_usec / 1000000u));
        driver_policy_format(&c->driver, driver, sizeof(driver));
        fprintf(out, "Driver=%s\nDriverUidRange=%u-%u\n", driver,
                (unsigned) c->driver_uid_first,
                (unsigned) c->driver_uid_first + c->driver_uid_count - 1);
        fprintf(out, "\n[Limits]\nMaxRequests=%u\nMaxRequestsPerUser=%u\nMaxMounts=%u\n"
                "MaxMountsPerUser=%u\nMaxLoopDevices=%u\nMaxLoopDevicesPerUser=%u\n"
                "MaxDrivers=%u\nMaxDriversPerUser=%u\n"
                "MaxWorkers=%u\nMaxWorkersPerUser=%u\nMaxUnauthorizedRequests=%u\n"
                "RequestTimeoutSec=%llu\nDriverMemoryMax=%lluM\nDriverTasksMax=%u\n",
                l->max_requests, l->max_requests_per_user, l->max_mounts,
                l->max_mounts_per_user, l->max_loop_devices, l->max_loop_devices_per_user,
                l->max_drivers, l->max_drivers_per_user,
                l->max_workers, l->max_workers_per_user, l->max_unauthorized_requests,
                (unsigned long long) (l->request_timeout_usec / 1000000u),
                (unsigned long long) (l->driver_memory_max >> 20), l->driver_tasks_max);
        if (l->driver_cpu_sec > 0)
                fprintf(out, "DriverCPUSec=%llu\n", (unsigned long long) l->driver_cpu_sec);
        else
                fprintf(out, "DriverCPUSec=infinity\n");
        fprintf(out, "\n[Labels]\n");
        if (!c->selinux_type)
                fprintf(out, "# on SELinux systems, the type is computed from the caller's "
                        "context\n");
        fprintf(out, "SELinuxType=%s\n", strempty(c->selinux_type));
        for (size_t i = 0; i < c->n_fstypes; i++)
                print_fstype(&c->fstypes[i], out);
}

int conf_check(const char *path, FILE *out) {
        _cleanup_(conf_unrefp) Conf *c = NULL;
        const char *p = path ?: CONF_DEFAULT_PATH;
        int r;

        r = conf_load(p, !path, out, &c);
        if (r == -EINVAL) {
                fprintf(out, "%s: not valid\n", p);
                return 1;
        }
        if (r < 0) {
                fprintf(out, "%s: cannot be read: %s\n", p, strerror(-r));
                return r;
        }
        if (!c->path)
                fprintf(out, "# %s: no file; the built-in defaults apply:\n", p);
        else
                fprintf(out, "# %s is valid; the effective settings:\n", p);
        print_summary(c, out);
        return 0;
}
