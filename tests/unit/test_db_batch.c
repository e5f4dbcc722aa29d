/*
 * lib/core/db_batch.c: the group commit of the threads' short write transactions. A call alone
 * keeps, undoes or fails as its function says; from many threads at once, each with its own
 * connection, a limit checked inside the calls holds exactly, a call that undoes or fails loses
 * only its own writes, and calls do share transactions (on SQLite; each is its own on
 * PostgreSQL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/db.h"
#include "core/db_batch.h"
#include "unit.h"
#include "unit_db.h"

#define NTHREADS	8
#define CALLS		40
#define LIMIT		200	/* rows the limited calls may add, fewer than NTHREADS * CALLS */

static struct bp_unit_db u;
static struct bp_db_batch *batch;
static int shared;		/* calls run on another thread's connection */

static int
setup(void)
{
	if (bp_unit_db_open(&u, "batch") == -1)
		return 1;
	if ((batch = bp_db_batch_new(16)) == NULL)
		return 1;
	return bp_db_exec(u.db, "CREATE TABLE batch_rows (k INTEGER NOT NULL,"
	    " v INTEGER NOT NULL)") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_db_batch_free(batch);
	bp_unit_db_close(&u);
	return 0;
}

static int64_t
count_rows(struct bp_db *db, int64_t k)
{
	static const char sql[] = "SELECT count(*) FROM batch_rows WHERE k = ?";
	struct bp_stmt *st;
	int64_t n = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, k);
	if (bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return n;
}

static int
add_row(struct bp_db *db, int64_t k, int64_t v)
{
	static const char sql[] = "INSERT INTO batch_rows (k, v) VALUES (?, ?)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, k);
	bp_stmt_int(st, 2, v);
	return bp_stmt_run(st);
}

struct call {
	struct bp_db	*own;	/* the caller's connection */
	int64_t		 k;
	int64_t		 v;
	int		 want;	/* what fn returns after writing: KEEP, UNDO or ERROR */
};

/* Writes a row, then answers as told. */
static int
write_then(struct bp_db *db, void *arg)
{
	struct call *c = arg;

	if (add_row(db, c->k, c->v) == -1)
		return BP_DB_BATCH_ERROR;
	return c->want;
}

/* Adds a row under key 2 unless LIMIT rows are there: a limit counted inside the call. */
static int
limited(struct bp_db *db, void *arg)
{
	struct call *c = arg;
	int64_t n;

	if (db != c->own)
		__atomic_store_n(&shared, 1, __ATOMIC_RELAXED);
	if ((n = count_rows(db, 2)) < 0)
		return BP_DB_BATCH_ERROR;
	if (n >= LIMIT)
		return BP_DB_BATCH_UNDO;
	/* A little time in the transaction, so calls of other threads queue for the next one. */
	usleep(50);
	return add_row(db, 2, c->v) == 0 ? BP_DB_BATCH_KEEP : BP_DB_BATCH_ERROR;
}

static void
test_alone(void)
{
	struct call c = { u.db, 1, 0, BP_DB_BATCH_KEEP };

	CU_ASSERT_EQUAL(bp_db_batch_run(NULL, u.db, write_then, &c), BP_DB_BATCH_KEEP);
	c.want = BP_DB_BATCH_UNDO;
	CU_ASSERT_EQUAL(bp_db_batch_run(NULL, u.db, write_then, &c), BP_DB_BATCH_UNDO);
	c.want = BP_DB_BATCH_ERROR;
	CU_ASSERT_EQUAL(bp_db_batch_run(batch, u.db, write_then, &c), BP_DB_BATCH_ERROR);
	c.want = BP_DB_BATCH_KEEP;
	CU_ASSERT_EQUAL(bp_db_batch_run(batch, u.db, write_then, &c), BP_DB_BATCH_KEEP);
	CU_ASSERT_EQUAL(count_rows(u.db, 1), 2);
}

/* Each thread: CALLS limited calls, and as many of key 3 of which every third undoes. */
static void *
worker(void *arg)
{
	struct bp_db *db;
	struct call c;
	int i, rc, bad = 0;

	if ((db = bp_db_open(u.path, 0)) == NULL)
		return (void *)1;
	for (i = 0; i < CALLS; i++) {
		c = (struct call){ db, 2, (int64_t)(size_t)arg * CALLS + i, BP_DB_BATCH_KEEP };
		rc = bp_db_batch_run(batch, db, limited, &c);
		bad |= rc != BP_DB_BATCH_KEEP && rc != BP_DB_BATCH_UNDO;
		c.k = 3;
		c.want = i % 3 == 0 ? BP_DB_BATCH_UNDO : BP_DB_BATCH_KEEP;
		bad |= bp_db_batch_run(batch, db, write_then, &c) != c.want;
	}
	bp_db_close(db);
	return bad ? (void *)1 : NULL;
}

static void
test_threads(void)
{
	CU_ASSERT_EQUAL_FATAL(bp_unit_threads(NTHREADS, worker), 0);
	/* Exactly the limit, though every thread checked it in parallel. */
	CU_ASSERT_EQUAL(count_rows(u.db, 2), LIMIT);
	/* Only the undone calls' rows are missing, whichever batch they shared. */
	CU_ASSERT_EQUAL(count_rows(u.db, 3), NTHREADS * (CALLS - (CALLS + 2) / 3));
	if (strncmp(u.path, "postgres", 8) != 0)
		CU_ASSERT(__atomic_load_n(&shared, __ATOMIC_RELAXED));
}

BP_UNIT_SUITE(db_batch, setup, teardown,
	{ "one call keeps, undoes or fails", test_alone },
	{ "threads share transactions, limits hold", test_threads },
)
