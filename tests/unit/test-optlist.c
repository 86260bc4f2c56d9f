/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests of shared/optlist.c's splitting against libmount's own parser, which it replaced
 * in the daemon: every string of up to 7 characters over "a=,1" that passes the byte
 * checks splits into the same keys and values as mnt_optstr_next_option() finds.
 */
#include <glib.h>
#include <libmount/libmount.h>
#include <string.h>

#include "optlist.h"

static void assert_same_as_libmount(const char *s) {
        _cleanup_(option_list_done) OptionList l = {};
        UmError e = {};
        char *p = (char *) s, *name, *value;
        size_t name_len, value_len, i = 0;

        if (option_list_split(s, &l, &e) < 0)
                return; /* refused before splitting: nothing to compare */
        while (mnt_optstr_next_option(&p, &name, &name_len, &value, &value_len) == 0) {
                g_assert_cmpuint(i, <, l.n_items);
                g_assert_cmpuint(strlen(l.items[i].key), ==, name_len);
                g_assert_true(strncmp(l.items[i].key, name, name_len) == 0);
                g_assert_true(!value == !l.items[i].value);
                if (value) {
                        g_assert_cmpuint(strlen(l.items[i].value), ==, value_len);
                        g_assert_true(strncmp(l.items[i].value, value, value_len) == 0);
                }
                i++;
        }
        g_assert_cmpuint(i, ==, l.n_items);
}

static void test_like_libmount(void) {
        static const char alphabet[] = "a=,1";
        char s[8];
        unsigned n = 0;

        for (size_t len = 0; len < sizeof(s); len++) {
                size_t total = 1;

                for (size_t k = 0; k < len; k++)
                        total *= strlen(alphabet);
                for (size_t v = 0; v < total; v++) {
                        size_t x = v;

                        for (size_t k = 0; k < len; k++, x /= strlen(alphabet))
                                s[k] = alphabet[x % strlen(alphabet)];
                        s[len] = 0;
                        assert_same_as_libmount(s);
                        n++;
                }
        }
        g_test_message("%u strings compared", n);
}

static void test_examples(void) {
        static const char *const examples[] = {
                "ro", "ro,noatime,commit=5", "a=", "=b", "a=b=c", "=b=c", "==", "=",
                "uid=1000,gid=1000,umask=077", "context=system_u:object_r:x:s0",
        };

        for (size_t i = 0; i < G_N_ELEMENTS(examples); i++)
                assert_same_as_libmount(examples[i]);
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/optlist/like-libmount", test_like_libmount);
        g_test_add_func("/optlist/examples", test_examples);
        return g_test_run();
}
