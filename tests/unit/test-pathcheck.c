/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pathcheck: which absolute paths are canonical, and the first problem of those that are
 * not (absolute and length first, then the components from left to right).
 */
#include <glib.h>
#include <limits.h>
#include <string.h>

#include "macro.h"
#include "pathcheck.h"

typedef struct PathCase {
        const char *path;
        PathProblem problem;
} PathCase;

static const PathCase path_cases[] = {
        { "/", PATH_OK },
        { "/a", PATH_OK },
        { "/run/media/user", PATH_OK },
        { "/a/.b/..c/...", PATH_OK },
        { "/a b/c\tc", PATH_OK },           /* whitespace is the callers' business */
        { "", PATH_NOT_ABSOLUTE },
        { "a", PATH_NOT_ABSOLUTE },
        { "./a", PATH_NOT_ABSOLUTE },
        { "~/a", PATH_NOT_ABSOLUTE },
        { "//", PATH_DOUBLE_SLASH },
        { "//a", PATH_DOUBLE_SLASH },
        { "/a//b", PATH_DOUBLE_SLASH },
        { "/a//", PATH_DOUBLE_SLASH },
        { "/a/", PATH_TRAILING_SLASH },
        { "/a/b/", PATH_TRAILING_SLASH },
        { "/.", PATH_DOT },
        { "/a/./b", PATH_DOT },
        { "/a/.", PATH_DOT },
        { "/..", PATH_DOT_DOT },
        { "/a/../b", PATH_DOT_DOT },
        { "/a/..", PATH_DOT_DOT },
        /* The first problem from the left. */
        { "/./a//", PATH_DOT },
        { "/a//./", PATH_DOUBLE_SLASH },
        { "/../a/", PATH_DOT_DOT },
};

static void test_table(void) {
        for (size_t i = 0; i < ELEMENTSOF(path_cases); i++) {
                const PathCase *c = &path_cases[i];

                g_test_message("'%s'", c->path);
                g_assert_cmpint(path_check_canonical(c->path, PATH_MAX), ==, c->problem);
        }
        g_assert_cmpint(path_check_canonical(NULL, PATH_MAX), ==, PATH_NOT_ABSOLUTE);
}

/* max counts the bytes with the terminating NUL: a path of max - 1 bytes fits. */
static void test_length(void) {
        char path[PATH_MAX + 1];

        memset(path, 'a', sizeof(path) - 1);
        path[sizeof(path) - 1] = 0;
        for (size_t i = 0; i < sizeof(path) - 1; i += NAME_MAX + 1)
                path[i] = '/';
        path[PATH_MAX] = 0;
        g_assert_cmpint(path_check_canonical(path, PATH_MAX), ==, PATH_TOO_LONG);
        path[PATH_MAX - 1] = 0;
        g_assert_cmpint(path_check_canonical(path, PATH_MAX), ==, PATH_OK);
        g_assert_cmpint(path_check_canonical("/abc", 5), ==, PATH_OK);
        g_assert_cmpint(path_check_canonical("/abcd", 5), ==, PATH_TOO_LONG);
        /* Length before components. */
        g_assert_cmpint(path_check_canonical("/a/../b", 4), ==, PATH_TOO_LONG);
        g_assert_cmpint(path_check_canonical("a/bcd", 4), ==, PATH_NOT_ABSOLUTE);
}

static void test_long_name(void) {
        char path[NAME_MAX + 8];

        path[0] = '/';
        memset(path + 1, 'n', NAME_MAX);
        path[NAME_MAX + 1] = 0;
        g_assert_cmpint(path_check_canonical(path, PATH_MAX), ==, PATH_OK);
        strcpy(path + NAME_MAX + 1, "n");
        g_assert_cmpint(path_check_canonical(path, PATH_MAX), ==, PATH_LONG_NAME);
        strcpy(path + NAME_MAX + 1, "/..");
        g_assert_cmpint(path_check_canonical(path, PATH_MAX), ==, PATH_DOT_DOT);
}

static void test_control_characters(void) {
        g_assert_false(path_has_control_characters(""));
        g_assert_false(path_has_control_characters("/run/m\xc3\xa9" "dia/\xc2\x9b"));
        g_assert_true(path_has_control_characters("/a\nb"));
        g_assert_true(path_has_control_characters("/a\x01"));
        g_assert_true(path_has_control_characters("\x1b[31m"));
        g_assert_true(path_has_control_characters("/a\x7f"));
}

int main(int argc, char *argv[]) {
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/pathcheck/table", test_table);
        g_test_add_func("/pathcheck/length", test_length);
        g_test_add_func("/pathcheck/long-name", test_long_name);
        g_test_add_func("/pathcheck/control-characters", test_control_characters);
        return g_test_run();
}
