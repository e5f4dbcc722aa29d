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

/* One integer of a SELECT on batch_rows with key k bound; -1 on error. */
static int64_t
scalar(struct bp_db *db, const char *sql, int64_t k)
{
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

static int64_t
count_rows(struct bp_db *db, int64_t k)
{
	return scalar(db, "SELECT count(*) FROM batch_rows WHERE k = ?", k);
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

/*
 * A tail: the calls of a transaction add to a sum in the thread that runs them (only as they
 * keep), written once at its end under key 4; a flush that fails keeps nothing of its
 * transaction. The row under key 4 must hold exactly the calls kept, in every batch.
 */
static _Thread_local int64_t tail_sum;
static int tail_fail;	/* flush fails */
static int tail_starts, tail_flushes;

static void
tail_start(void)
{
	tail_sum = 0;
	__atomic_add_fetch(&tail_starts, 1, __ATOMIC_RELAXED);
}

static int
tail_flush(struct bp_db *db)
{
	__atomic_add_fetch(&tail_flushes, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&tail_fail, __ATOMIC_RELAXED))
		return -1;
	return tail_sum == 0 ? 0 : add_row(db, 4, tail_sum);
}

static const struct bp_db_batch_tail tail = { tail_start, tail_flush };

/* Writes a row under key 5, then adds 1 to the tail's sum unless it answers otherwise. */
static int
tail_call(struct bp_db *db, void *arg)
{
	struct call *c = arg;

	if (add_row(db, 5, c->v) == -1)
		return BP_DB_BATCH_ERROR;
	if (c->want == BP_DB_BATCH_KEEP)
		tail_sum++;
	return c->want;
}

static int64_t
sum_of(struct bp_db *db, int64_t k)
{
	return scalar(db, "SELECT coalesce(sum(v), 0) FROM batch_rows WHERE k = ?", k);
}

static void *
tail_worker(void *arg)
{
	struct bp_db *db;
	struct call c;
	int i, bad = 0;

	if ((db = bp_db_open(u.path, 0)) == NULL)
		return (void *)1;
	for (i = 0; i < CALLS; i++) {
		c = (struct call){ db, 5, (int64_t)(size_t)arg, i % 4 == 0 ? BP_DB_BATCH_UNDO :
		    BP_DB_BATCH_KEEP };
		bad |= bp_db_batch_run_tail(batch, db, tail_call, &c, &tail) != c.want;
	}
	bp_db_close(db);
	return bad ? (void *)1 : NULL;
}

static void
test_tail(void)
{
	struct call c = { u.db, 5, 0, BP_DB_BATCH_KEEP };

	CU_ASSERT_EQUAL_FATAL(bp_unit_threads(NTHREADS, tail_worker), 0);
	/* Each call kept its row and added 1: the flushed sums add up to exactly those. */
	CU_ASSERT_EQUAL(count_rows(u.db, 5), NTHREADS * (CALLS - CALLS / 4));
	CU_ASSERT_EQUAL(sum_of(u.db, 4), NTHREADS * (CALLS - CALLS / 4));
	/* One start and one flush a transaction, whatever its calls (here fewer than calls). */
	CU_ASSERT(tail_flushes > 0 && tail_flushes <= tail_starts);
	if (strncmp(u.path, "postgres", 8) != 0)
		CU_ASSERT(tail_starts < NTHREADS * CALLS);
	/* A flush that fails: the call's own row goes too, alone or in a batch. */
	__atomic_store_n(&tail_fail, 1, __ATOMIC_RELAXED);
	CU_ASSERT_EQUAL(bp_db_batch_run_tail(NULL, u.db, tail_call, &c, &tail), BP_DB_BATCH_ERROR);
	CU_ASSERT_EQUAL(bp_db_batch_run_tail(batch, u.db, tail_call, &c, &tail),
	    BP_DB_BATCH_ERROR);
	__atomic_store_n(&tail_fail, 0, __ATOMIC_RELAXED);
	CU_ASSERT_EQUAL(count_rows(u.db, 5), NTHREADS * (CALLS - CALLS / 4));
}

BP_UNIT_SUITE(db_batch, setup, teardown,
	{ "one call keeps, undoes or fails", test_alone },
	{ "threads share transactions, limits hold", test_threads },
	{ "a tail adds up what the kept calls of a transaction added, once", test_tail },
)
