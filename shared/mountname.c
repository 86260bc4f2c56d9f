/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of mount points usermountd makes (mountname.h).
 */
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "mountname.h"
#include "utf8.h"

#define NAME_MAX_BYTES MOUNTNAME_MAX

/*
 * Characters that never go into a directory name: the separator, and everything that
 * utf8_char_unsafe() names for every escaper of device data (C0/DEL/C1 controls, as ESC
 * and CSI start terminal escapes; line separators; bidi marks, overrides and isolates and
 * the other invisible format characters that make a name display as something it is not;
 * noncharacters). A name shows up in file managers, shells and logs that do not escape it.
 */
static bool name_char_unsafe(uint32_t cp) {
        return cp == '/' || utf8_char_unsafe(cp);
}

/* A name made only of these says nothing; the uuid is a better name then. */
static bool name_is_meaningful(const char *s) {
        return s[strspn(s, "_.- ")] != 0;
}

bool mountname_sanitize(const char *label, char *buf, size_t n) {
        const unsigned char *p = (const unsigned char *) strempty(label);
        size_t o = 0, max;
        bool pending = false;

        if (n == 0)
                return false;
        max = n - 1 < NAME_MAX_BYTES ? n - 1 : NAME_MAX_BYTES;
        while (*p) {
                uint32_t cp = 0;
                size_t len = utf8_decode(p, &cp);

                if (len == 0 || name_char_unsafe(cp)) {
                        p += len ? len : 1;
                        pending = o > 0; /* a run of unsafe characters becomes one '_' */
                        continue;
                }
                if (o == 0 && (cp == '.' || cp == ' ' || cp == '-')) {
                        p += len; /* no hidden names, no leading blanks, nothing like an option */
                        continue;
                }
                if (o + (pending ? 1 : 0) + len > max)
                        break;
                if (pending)
                        buf[o++] = '_';
                pending = false;
                memcpy(buf + o, p, len);
                o += len;
                p += len;
        }
        while (o > 0 && buf[o - 1] == ' ')
                o--;
        buf[o] = 0;
        if (!name_is_meaningful(buf)) {
                buf[0] = 0;
                return false;
        }
        return true;
}

/* label, else uuid, else "disk", made safe. */
void mountname_base(const AttachRequest *req, char *buf, size_t n) {
        if (mountname_sanitize(req->label, buf, n) || mountname_sanitize(req->uuid, buf, n))
                return;
        snprintf(buf, n, "disk");
}

/* The directory name for the user: the user name if it is one safely, else the uid. */
void mountname_user_dir(const AttachRequest *req, char *buf, size_t n) {
        if (!isempty(req->user_name) && mountname_sanitize(req->user_name, buf, n) &&
            streq(buf, req->user_name))
                return;
        snprintf(buf, n, "%u", (unsigned) req->uid);
}

void mountname_default(const AttachRequest *req, char *buf, size_t n) {
        char user[NAME_MAX_BYTES + 1], base[NAME_MAX_BYTES + 1];

        mountname_user_dir(req, user, sizeof(user));
        mountname_base(req, base, sizeof(base));
        snprintf(buf, n, "%s/%s/%s", strempty(req->media_root), user, base);
}

