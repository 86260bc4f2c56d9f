/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text tables for the terminal: a header row and rows of cells, laid out in columns as
 * wide as their widest cell.
 */
#pragma once

#include <stddef.h>

typedef struct Table Table;

/*
 * A new table with n_columns columns named by headers (our own text, not escaped). Returns
 * NULL when out of memory; free with table_free().
 */
Table *table_new(const char *const *headers, size_t n_columns);

/* Frees t; accepts NULL; returns NULL. */
Table *table_free(Table *t);

static inline void table_freep(Table **t) {
        table_free(*t);
}

/*
 * Adds the next cell, row by row: an escaped copy of text (output_escape()), or "-" when
 * text is NULL or empty. Returns 0 or -ENOMEM.
 */
int table_add_cell(Table *t, const char *text);

/* Number of rows added so far, not counting the header; a partial row counts. */
size_t table_rows(const Table *t);

/*
 * Formats the header and the rows, one line each ending in '\n', cells left-aligned and
 * separated by two spaces; the last column is not padded, so no line ends in a space.
 * A partial last row is completed with "-". Returns 0 or -ENOMEM; the caller frees *ret.
 */
int table_format(const Table *t, char **ret);
