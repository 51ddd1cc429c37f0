/* Typed rows (db/row.h): one pass finds the columns by name (and sizes the texts to copy), a
 * second writes the values into one block of structs. A result that db/ hands over whole
 * (db_rows_take) keeps its texts where libpq put them; one that stays its caller's has them
 * copied after the structs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/pg.h"
#include "db/row.h"

#define DB_ROW_MAX_COLS 48

void db_rows_free(struct db_rows *rows)
{
	free(rows->row);
	PQclear(rows->res);
	*rows = (struct db_rows){0};
}

/* PostgreSQL's text of an integer: an optional '-' and digits (strtoll's locale and base
 * handling cost more than the rest of a 64-row fill). */
static int64_t int_of(const char *s)
{
	bool neg = *s == '-';
	uint64_t v = 0;
	for (s += neg; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return neg ? (int64_t)(0 - v) : (int64_t)v;
}

/* One value into its member; a text is copied at *text, or with text NULL points into res. */
static void put(char *row, const struct db_col *col, const PGresult *res, int i, int f,
		char **text)
{
	bool null = PQgetisnull(res, i, f) != 0;
	const char *v = PQgetvalue(res, i, f);
	if (col->null_offset != DB_NO_NULL_FLAG)
		*(bool *)(row + col->null_offset) = null;
	switch (col->kind) {
	case DB_KIND_TEXT: {
		const char *copy = NULL;
		if (!null && text == NULL) {
			copy = v; /* libpq's text ends with a NUL */
		} else if (!null) {
			size_t len = (size_t)PQgetlength(res, i, f);
			memcpy(*text, v, len);
			(*text)[len] = '\0';
			copy = *text;
			*text += len + 1;
		}
		memcpy(row + col->offset, &copy, sizeof copy);
		break;
	}
	case DB_KIND_INT: {
		int64_t n = null ? 0 : int_of(v);
		memcpy(row + col->offset, &n, sizeof n);
		break;
	}
	case DB_KIND_BOOL: {
		bool b = !null && v[0] == 't';
		memcpy(row + col->offset, &b, sizeof b);
		break;
	}
	case DB_KIND_FLOAT: {
		double d = null ? 0 : strtod(v, NULL);
		memcpy(row + col->offset, &d, sizeof d);
		break;
	}
	}
}

/* Rows first .. first + n - 1 of res through spec; borrow: the texts stay in res. */
static enum rg_status fill(const PGresult *res, int first, int n, const struct db_row_spec *spec,
			   bool borrow, struct db_rows *out, struct db_error *err)
{
	int field[DB_ROW_MAX_COLS];
	*out = (struct db_rows){.size = spec->row_size};
	if (spec->ncols > DB_ROW_MAX_COLS) {
		db_error_set(err, RG_ERROR, NULL, "row spec has too many columns");
		return RG_ERROR;
	}
	size_t text = 0;
	for (size_t k = 0; k < spec->ncols; k++) {
		field[k] = PQfnumber(res, spec->cols[k].name);
		if (field[k] < 0) {
			char msg[160];
			snprintf(msg, sizeof msg, "%s: the result has no column %s", spec->type_name,
				 spec->cols[k].name);
			db_error_set(err, RG_ERROR, NULL, msg);
			return RG_ERROR;
		}
		if (spec->cols[k].kind == DB_KIND_TEXT && !borrow)
			for (int i = first; i < first + n; i++)
				text += (size_t)PQgetlength(res, i, field[k]) + 1;
	}
	if (n == 0)
		return RG_OK;
	char *block = malloc((size_t)n * spec->row_size + text);
	if (!block) {
		db_error_set(err, RG_NOMEM, NULL, "out of memory reading rows");
		return RG_NOMEM;
	}
	memset(block, 0, (size_t)n * spec->row_size);
	char *texts = block + (size_t)n * spec->row_size;
	for (int i = 0; i < n; i++)
		for (size_t k = 0; k < spec->ncols; k++)
			put(block + (size_t)i * spec->row_size, &spec->cols[k], res, first + i,
			    field[k], borrow ? NULL : &texts);
	out->row = block;
	out->n = (size_t)n;
	return RG_OK;
}

enum rg_status db_rows_fill(const void *res, const struct db_row_spec *spec,
			    struct db_rows *out, struct db_error *err)
{
	return fill(res, 0, PQntuples(res), spec, false, out, err);
}

enum rg_status db_rows_take(void *res, const struct db_row_spec *spec, struct db_rows *out,
			    struct db_error *err)
{
	enum rg_status st = fill(res, 0, PQntuples(res), spec, true, out, err);
	if (st == RG_OK && out->n > 0)
		out->res = res;
	else
		PQclear(res);
	return st;
}

enum rg_status db_rows_fill_one(const void *res, int i, const struct db_row_spec *spec,
				struct db_rows *out, struct db_error *err)
{
	return fill(res, i, 1, spec, false, out, err);
}

/* The result's rows through the statement's spec; res is cleared here. */
static enum rg_status take(PGresult *res, const struct db_stmt *stmt, struct db_rows *out,
			   struct db_error *err)
{
	if (out && stmt->row)
		return db_rows_take(res, stmt->row, out, err);
	enum rg_status st = RG_OK;
	if (out) {
		st = RG_ERROR;
		db_error_set(err, st, NULL, "statement has no row spec");
	}
	PQclear(res);
	return st;
}

enum rg_status db_query(struct db_conn *c, const struct db_stmt *stmt, const char *const *params,
			struct db_rows *out, struct db_error *err)
{
	PGresult *res = NULL;
	*out = (struct db_rows){0};
	enum rg_status st = db_exec(c, stmt, params, &res, err);
	return st == RG_OK ? take(res, stmt, out, err) : st;
}

enum rg_status db_query_audited(struct db_conn *c, const struct db_stmt *stmt,
				const struct db_actor *actor, const char *const *params,
				struct db_rows *out, struct db_error *err)
{
	PGresult *res = NULL;
	if (out)
		*out = (struct db_rows){0};
	enum rg_status st = db_exec_audited(c, stmt, actor, params, &res, err);
	return st == RG_OK ? take(res, stmt, out, err) : st;
}
