/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Text tables (see table.h).
 */
#include "macro.h"
#include "output.h"
#include "table.h"

struct Table {
        size_t n_columns;
        char **cells; /* the header first, row by row */
        size_t n_cells;
};

Table *table_free(Table *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
        return NULL;
}

/* Appends cell, which the table then owns. */
static int table_take_cell(Table *t, char *cell) {
        char **grown;

        if (!cell)
                return -ENOMEM;
        grown = reallocarray(t->cells, t->n_cells + 1, sizeof(char *));
        if (!grown) {
                free(cell);
                return -ENOMEM;
        }
        t->cells = grown;
        t->cells[t->n_cells++] = cell;
        return 0;
}

Table *table_new(const char *const *headers, size_t n_columns) {
        _cleanup_(table_freep) Table *t = NULL;

        if (n_columns == 0)
                return NULL;
        t = calloc(1, sizeof(Table));
        if (!t)
                return NULL;
        t->n_columns = n_columns;
        for (size_t i = 0; i < n_columns; i++)
                if (table_take_cell(t, strdup(headers[i])) < 0)
                        return NULL;
        return TAKE_PTR(t);
}

int table_add_cell(Table *t, const char *text) {
        return table_take_cell(t, isempty(text) ? strdup("-") : output_escape(text));
}

size_t table_rows(const Table *t) {
        size_t n = t->n_cells - t->n_columns; /* the header is always there */

        return (n + t->n_columns - 1) / t->n_columns;
}

int table_format(const Table *t, char **ret) {
        _cleanup_free_ size_t *widths = calloc(t->n_columns, sizeof(size_t));
        _cleanup_free_ char *buf = NULL;
        size_t n_lines = 1 + table_rows(t), size = 0;
        FILE *f;

        if (!widths)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_cells; i++) {
                size_t w = output_width(t->cells[i]);

                if (w > widths[i % t->n_columns])
                        widths[i % t->n_columns] = w;
        }
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t line = 0; line < n_lines; line++)
                for (size_t col = 0; col < t->n_columns; col++) {
                        size_t i = line * t->n_columns + col;
                        /* A missing cell of a partial row is "-", no wider than a header. */
                        const char *cell = i < t->n_cells ? t->cells[i] : "-";

                        fputs(cell, f);
                        if (col + 1 == t->n_columns) {
                                fputc('\n', f);
                                continue;
                        }
                        /* Pad to the column's width, plus the two spaces between columns. */
                        for (size_t w = output_width(cell); w < widths[col] + 2; w++)
                                fputc(' ', f);
                }
        if (fclose(f) != 0)
                return -ENOMEM;

        *ret = TAKE_PTR(buf);
        return 0;
}
