/* db/row.c: typed rows are read by column name, whatever the order of the SELECT, and a
 * missing column fails instead of shifting values. The results are built in memory with
 * libpq's own result constructors: no database is needed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <libpq-fe.h>

#include "db/db.h"

struct item {
	const char *name;
	int64_t count;
	bool live;
	int64_t limit;
	bool limit_null;
};
static const struct db_col item_cols[] = {
	DB_TEXT(struct item, name), DB_INT(struct item, count), DB_BOOL(struct item, live),
	DB_INT_OR_NULL(struct item, limit, limit_null),
};
static const struct db_row_spec item_row = DB_ROW_SPEC(struct item, item_cols);

/* A result with the given column names and rows (NULL cells are SQL NULL). */
static PGresult *result(int ncols, const char *const *names, int nrows, const char *const *cells)
{
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	PGresAttDesc attrs[8];
	memset(attrs, 0, sizeof attrs);
	for (int k = 0; k < ncols; k++) {
		attrs[k].name = (char *)names[k];
		attrs[k].typid = 25;
		attrs[k].typlen = -1;
		attrs[k].atttypmod = -1;
	}
	assert_int_equal(PQsetResultAttrs(res, ncols, attrs), 1);
	for (int i = 0; i < nrows; i++)
		for (int k = 0; k < ncols; k++) {
			const char *v = cells[i * ncols + k];
			assert_int_equal(PQsetvalue(res, i, k, (char *)v, v ? (int)strlen(v) : -1), 1);
		}
	return res;
}

static void reads_columns_by_name_in_any_order(void **state)
{
	(void)state;
	const char *names[] = {"live", "limit", "count", "name"};
	const char *cells[] = {"t", "7", "42", "first", "f", NULL, "-3", NULL};
	PGresult *res = result(4, names, 2, cells);
	struct db_rows rows;
	struct db_error err = {0};
	assert_int_equal(db_rows_fill(res, &item_row, &rows, &err), RG_OK);
	PQclear(res); /* the rows own their texts */
	assert_int_equal(rows.n, 2);
	const struct item *a = db_rows_at(&rows, 0), *b = db_rows_at(&rows, 1);
	assert_string_equal(a->name, "first");
	assert_int_equal(a->count, 42);
	assert_true(a->live);
	assert_int_equal(a->limit, 7);
	assert_false(a->limit_null);
	assert_null(b->name);
	assert_int_equal(b->count, -3);
	assert_false(b->live);
	assert_true(b->limit_null);
	db_rows_free(&rows);
	assert_null(rows.row);
	assert_int_equal(rows.n, 0);
}

/* int8's whole range, as PostgreSQL writes it, reads back exactly. */
static void reads_the_extremes_of_int8(void **state)
{
	(void)state;
	const char *names[] = {"live", "limit", "count", "name"};
	const char *cells[] = {"t", "9223372036854775807", "-9223372036854775808", "a",
			       "f", "0", "-1", "b"};
	PGresult *res = result(4, names, 2, cells);
	struct db_rows rows;
	struct db_error err = {0};
	assert_int_equal(db_rows_fill(res, &item_row, &rows, &err), RG_OK);
	PQclear(res);
	const struct item *a = db_rows_at(&rows, 0), *b = db_rows_at(&rows, 1);
	assert_true(a->limit == INT64_MAX);
	assert_true(a->count == INT64_MIN);
	assert_true(b->limit == 0);
	assert_true(b->count == -1);
	db_rows_free(&rows);
}

static void a_missing_column_fails_and_names_it(void **state)
{
	(void)state;
	const char *names[] = {"name", "count", "live"};
	const char *cells[] = {"x", "1", "t"};
	PGresult *res = result(3, names, 1, cells);
	struct db_rows rows;
	struct db_error err = {0};
	assert_int_equal(db_rows_fill(res, &item_row, &rows, &err), RG_ERROR);
	assert_non_null(strstr(err.message, "no column limit"));
	assert_null(strstr(err.message, "x"));
	assert_null(rows.row);
	PQclear(res);
}

static void no_rows_is_empty(void **state)
{
	(void)state;
	const char *names[] = {"name", "count", "live", "limit"};
	PGresult *res = result(4, names, 0, NULL);
	struct db_rows rows;
	struct db_error err = {0};
	assert_int_equal(db_rows_fill(res, &item_row, &rows, &err), RG_OK);
	assert_int_equal(rows.n, 0);
	assert_null(rows.row);
	assert_int_equal(rows.size, sizeof(struct item));
	PQclear(res);
}

struct scored {
	double score;
};
static const struct db_col scored_cols[] = {DB_FLOAT(struct scored, score)};
static const struct db_row_spec scored_row = DB_ROW_SPEC(struct scored, scored_cols);

static void reads_a_float_as_its_text_parses(void **state)
{
	(void)state;
	const char *names[] = {"score"};
	const char *cells[] = {"0.0607927", NULL};
	PGresult *res = result(1, names, 2, cells);
	struct db_rows rows;
	struct db_error err = {0};
	assert_int_equal(db_rows_fill(res, &scored_row, &rows, &err), RG_OK);
	PQclear(res);
	const struct scored *a = db_rows_at(&rows, 0), *b = db_rows_at(&rows, 1);
	assert_true(a->score == 0.0607927); /* the same double strtod gives */
	assert_true(b->score == 0);
	db_rows_free(&rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_columns_by_name_in_any_order),
		cmocka_unit_test(reads_the_extremes_of_int8),
		cmocka_unit_test(a_missing_column_fails_and_names_it),
		cmocka_unit_test(no_rows_is_empty),
		cmocka_unit_test(reads_a_float_as_its_text_parses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
