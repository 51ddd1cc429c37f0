/* Typed rows: a db/ read names the columns it wants and gets C structs back, in the spirit of
 * GNU Taler's GNUNET_PQ_ResultSpec. Columns are found by name, never by position, so a
 * changed SELECT fails loudly (RG_ERROR, the log line naming the missing column) instead of
 * shifting values into the wrong fields. Nothing above db/ sees a PGresult. */
#ifndef RG_DB_ROW_H
#define RG_DB_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

struct db_error;

enum db_kind {
	DB_KIND_TEXT, /* const char *: NULL for SQL NULL, else a NUL-terminated copy */
	DB_KIND_INT,  /* int64_t: 0 for SQL NULL */
	DB_KIND_BOOL, /* bool: PostgreSQL's "t" is true; SQL NULL is false */
	DB_KIND_FLOAT, /* double: 0 for SQL NULL */
};

#define DB_NO_NULL_FLAG ((size_t)-1)

/* One column of a row struct: the result column `name` goes to the member at `offset`. */
struct db_col {
	const char *name;
	enum db_kind kind;
	size_t offset;
	size_t null_offset; /* a bool member set when the value is SQL NULL, or DB_NO_NULL_FLAG */
};

/* Column `column` into the member at `path` in type (a nested member such as entry.key is
 * fine), for a result that holds two structs' columns; the others below name the column
 * after the member. */
#define DB_COL_AT(column, kind, type, path) {column, kind, offsetof(type, path), DB_NO_NULL_FLAG}
#define DB_INT_AT_OR_NULL(column, type, path, flag) \
	{column, DB_KIND_INT, offsetof(type, path), offsetof(type, flag)}
/* The result column is named like the member: the SQL aliases its columns to the names. */
#define DB_TEXT(type, member) {#member, DB_KIND_TEXT, offsetof(type, member), DB_NO_NULL_FLAG}
#define DB_INT(type, member) {#member, DB_KIND_INT, offsetof(type, member), DB_NO_NULL_FLAG}
#define DB_BOOL(type, member) {#member, DB_KIND_BOOL, offsetof(type, member), DB_NO_NULL_FLAG}
#define DB_FLOAT(type, member) {#member, DB_KIND_FLOAT, offsetof(type, member), DB_NO_NULL_FLAG}
/* An integer that may be SQL NULL: `flag` (a bool member) tells. */
#define DB_INT_OR_NULL(type, member, flag) \
	{#member, DB_KIND_INT, offsetof(type, member), offsetof(type, flag)}

/* The shape of one row struct. */
struct db_row_spec {
	const char *type_name; /* for the log line of a mismatch */
	const struct db_col *cols;
	size_t ncols;
	size_t row_size;
};
#define DB_ROW_SPEC(type, cols) {#type, cols, sizeof cols / sizeof cols[0], sizeof(type)}

/* Rows read through a spec (free them with db_rows_free): one allocation that holds the
 * structs, and the texts they point to, in it or in the result they came from. */
struct db_rows {
	void *row;   /* n structs of `size` bytes; NULL when n == 0 */
	size_t n;
	size_t size; /* sizeof one struct */
	void *res;   /* the result whose texts the rows point to, or NULL */
};

/* Row i (i < rows->n). */
static inline const void *db_rows_at(const struct db_rows *rows, size_t i)
{
	return (const char *)rows->row + i * rows->size;
}

/* Frees what a read filled (nothing when empty); rows is zeroed. */
void db_rows_free(struct db_rows *rows);

/* Takes the rows of one result: every spec column must be present (else RG_ERROR with err
 * naming the column, never a value). `res` is a const void * to keep libpq out of this
 * header; it stays the caller's. */
enum rg_status db_rows_fill(const void *res, const struct db_row_spec *spec,
			    struct db_rows *out, struct db_error *err) RG_MUSTCHECK;
/* db_rows_fill of a result handed over: the rows keep res (a PGresult *) and point into it,
 * without a copy of its texts; res is cleared here when no row keeps it. */
enum rg_status db_rows_take(void *res, const struct db_row_spec *spec, struct db_rows *out,
			    struct db_error *err) RG_MUSTCHECK;
/* Row i of one result alone (i < its number of rows), as db_rows_fill reads it: for a result
 * whose rows go to different owners. */
enum rg_status db_rows_fill_one(const void *res, int i, const struct db_row_spec *spec,
				struct db_rows *out, struct db_error *err) RG_MUSTCHECK;

#endif
