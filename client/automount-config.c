/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The settings of usermount automount (automount-config.h): the user's file, read with
 * inih one line at a time through our own reader, so that every problem is reported with
 * its line, and the command line merged over it.
 */
#include <errno.h>
#include <ini.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "automount-config.h"
#include "macro.h"
#include "parse-util.h"
#include "output.h"

#define SECTION "Automount"

static void strlist_done(StrList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i]);
        free(l->items);
        *l = (StrList) {};
}

void automount_config_done(AutomountConfig *config) {
        strlist_done(&config->ignore_labels);
        strlist_done(&config->ignore_uuids);
        strlist_done(&config->ignore_fstypes);
        *config = AUTOMOUNT_CONFIG_INIT;
}

int strlist_add(StrList *l, const char *s) {
        char **items = reallocarray(l->items, l->n + 1, sizeof(char *));
        char *copy;

        if (!items)
                return -ENOMEM;
        l->items = items;
        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        l->items[l->n++] = copy;
        return 0;
}

bool strlist_contains(const StrList *l, const char *s, int (*cmp)(const char *, const char *)) {
        if (!s)
                return false;
        for (size_t i = 0; i < l->n; i++)
                if (cmp(l->items[i], s) == 0)
                        return true;
        return false;
}

/* Adds each word of s (separated by spaces or tabs) to l. */
static int strlist_add_words(StrList *l, const char *s) {
        _cleanup_free_ char *copy = strdup(s);
        char *save = NULL;
        int r;

        if (!copy)
                return -ENOMEM;
        for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                r = strlist_add(l, w);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int strlist_extend(StrList *l, const StrList *more) {
        for (size_t i = 0; i < more->n; i++) {
                int r = strlist_add(l, more->items[i]);

                if (r < 0)
                        return r;
        }
        return 0;
}

int automount_parse_idmap(const char *s) {
        if (streq(s, "none"))
                return 0;
        if (streq(s, "user"))
                return 1;
        return -EINVAL;
}

/* ---- The file ------------------------------------------------------------------------- */

typedef struct Parser {
        FILE *f;
        const char *name;
        AutomountConfig *config;
        unsigned line;       /* the line last handed to inih */
        unsigned error_line; /* the first line the handler refused, 0: none */
        char *error;         /* its message, "NAME:LINE: ..." */
        bool oom;
} Parser;

static void parser_problem(Parser *p, const char *fmt, ...) _printf_(2, 3);
static void parser_problem(Parser *p, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL, *name = NULL;
        va_list ap;
        int n;

        if (p->error)
                return;
        va_start(ap, fmt);
        n = vasprintf(&what, fmt, ap);
        va_end(ap);
        name = output_escape(p->name);
        if (n < 0 || !name || asprintf(&p->error, "%s:%u: %s", name, p->line, what) < 0) {
                p->error = NULL;
                p->oom = true;
                return;
        }
        p->error_line = p->line;
}

/* A scalar that may be set once: *field is -1 until then. */
static void parser_set_once(Parser *p, const char *key, int *field, int value,
                            const char *expected, const char *raw) {
        _cleanup_free_ char *e = NULL;

        if (value < 0) {
                e = output_escape(raw);
                parser_problem(p, "%s= needs %s, not '%s'", key, expected, strempty(e));
        } else if (*field >= 0)
                parser_problem(p, "%s= is set twice", key);
        else
                *field = value;
}

static int parser_handler(void *userdata, const char *section, const char *key,
                          const char *value) {
        Parser *p = userdata;
        AutomountConfig *c = p->config;
        _cleanup_free_ char *e = NULL;
        int r = 0;

        if (!streq(section, SECTION)) {
                e = output_escape(section);
                if (isempty(section))
                        parser_problem(p, "settings must follow a [" SECTION "] line");
                else
                        parser_problem(p, "unknown section [%s]; the file has only [" SECTION
                                       "]", strempty(e));
                return 1;
        }
        if (streq(key, "IgnoreLabel")) {
                if (isempty(value))
                        parser_problem(p, "IgnoreLabel= needs a label");
                else
                        r = strlist_add(&c->ignore_labels, value);
        } else if (streq(key, "IgnoreUUID"))
                r = strlist_add_words(&c->ignore_uuids, value);
        else if (streq(key, "IgnoreFilesystemType"))
                r = strlist_add_words(&c->ignore_fstypes, value);
        else if (streq(key, "ReadOnly"))
                parser_set_once(p, key, &c->read_only, parse_boolean(value),
                                "yes or no", value);
        else if (streq(key, "Notify"))
                parser_set_once(p, key, &c->notify, parse_boolean(value),
                                "yes or no", value);
        else if (streq(key, "IdMap"))
                parser_set_once(p, key, &c->idmap_user, automount_parse_idmap(value),
                                "none or user", value);
        else {
                e = output_escape(key);
                parser_problem(p, "unknown setting '%s'", strempty(e));
        }
        if (r < 0)
                p->oom = true;
        /* Never stop inih: the first problem is the one reported, the rest are read. */
        return 1;
}

static char *parser_read_line(char *str, int num, void *userdata) {
        Parser *p = userdata;
        char *s = fgets(str, num, p->f);

        if (s)
                p->line++;
        return s;
}

int automount_config_parse(FILE *f, const char *name, AutomountConfig *config,
                           char **ret_error) {
        Parser p = { .f = f, .name = name, .config = config };
        _cleanup_free_ char *e = NULL;
        int line;

        automount_config_done(config);
        line = ini_parse_stream(parser_read_line, &p, parser_handler, &p);
        if (p.oom) {
                free(p.error);
                automount_config_done(config);
                return -ENOMEM;
        }
        if (line > 0 && (p.error_line == 0 || (unsigned) line < p.error_line)) {
                /* inih's own complaint: no '=', or a '[' without ']'. */
                free(p.error);
                e = output_escape(name);
                if (asprintf(&p.error, "%s:%d: not a [Section] or Key=value line",
                             strempty(e), line) < 0)
                        p.error = NULL;
        } else if (line < 0 && !p.error) {
                e = output_escape(name);
                if (asprintf(&p.error, "%s: cannot be read", strempty(e)) < 0)
                        p.error = NULL;
        }
        if (line != 0 || p.error) {
                automount_config_done(config);
                if (!p.error)
                        return -ENOMEM;
                *ret_error = p.error;
                return -EINVAL;
        }
        return 0;
}

int automount_config_load(const char *path, AutomountConfig *config, char **ret_error) {
        _cleanup_(fclosep) FILE *f = fopen(path, "re");

        if (!f)
                return -errno;
        return automount_config_parse(f, path, config, ret_error);
}

int automount_config_default_path(char **ret) {
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        struct passwd *pw;
        int n;

        /* The XDG Base Directory specification: a relative value is to be ignored. */
        if (xdg && xdg[0] == '/')
                n = asprintf(ret, "%s/usermount/automount.conf", xdg);
        else {
                if (!home || home[0] != '/') {
                        pw = getpwuid(getuid());
                        home = pw ? pw->pw_dir : NULL;
                }
                if (!home || home[0] != '/')
                        return -ENXIO;
                n = asprintf(ret, "%s/.config/usermount/automount.conf", home);
        }
        return n < 0 ? -ENOMEM : 0;
}

int automount_config_merge(AutomountConfig *config, const AutomountConfig *options) {
        int r;

        if (options->read_only >= 0)
                config->read_only = options->read_only;
        if (options->idmap_user >= 0)
                config->idmap_user = options->idmap_user;
        if (options->notify >= 0)
                config->notify = options->notify;
        r = strlist_extend(&config->ignore_labels, &options->ignore_labels);
        if (r >= 0)
                r = strlist_extend(&config->ignore_uuids, &options->ignore_uuids);
        if (r >= 0)
                r = strlist_extend(&config->ignore_fstypes, &options->ignore_fstypes);
        return r;
}

const char *automount_config_ignores(const AutomountConfig *config, const char *label,
                                     const char *uuid, const char *fstype) {
        if (strlist_contains(&config->ignore_labels, label, strcmp))
                return "label";
        if (strlist_contains(&config->ignore_uuids, uuid, strcasecmp))
                return "UUID";
        if (strlist_contains(&config->ignore_fstypes, fstype, strcmp))
                return "filesystem type";
        return NULL;
}
