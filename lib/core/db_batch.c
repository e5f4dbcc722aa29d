/*
 * Group commit (db_batch.h). No thread of its own: the first caller that finds no batch
 * running leads one. It begins a transaction on its connection (waiting for the database's
 * lock, which other processes take in turn), then takes the calls queued by then (its own
 * among them, or behind older ones), runs them, commits, hands each its result and wakes the
 * others; one still waiting then leads the next batch. The calls that arrive while a batch
 * runs queue up for the next, so the batches grow with the load and a lone call waits for
 * nothing. Each waiting call sleeps on a condition of its own, so a batch's end wakes the
 * threads whose calls it ran and, when the leader leaves with calls still queued, the oldest
 * of them to lead: none wakes to find its call still waiting (one condition for all made each
 * batch wake every waiting thread).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "db.h"
#include "db_batch.h"
#include "db_driver.h"

struct job {
	int				(*fn)(struct bp_db *, void *);
	void				*arg;
	const struct bp_db_batch_tail	*tail;
	int				 rc;
	int				 done;
	pthread_cond_t			 cv;	/* its thread waits here */
	struct job			*next;
};

struct bp_db_batch {
	pthread_mutex_t	 mu;
	struct job	*head;
	struct job	**tail;
	size_t		 max;
	int		 leading;	/* a thread runs a batch */
};

static const char sql_save[] = "SAVEPOINT bp_batch";
static const char sql_release[] = "RELEASE bp_batch";
static const char sql_undo[] = "ROLLBACK TO bp_batch";

struct bp_db_batch *
bp_db_batch_new(size_t max)
{
	struct bp_db_batch *b;

	if ((b = calloc(1, sizeof(*b))) == NULL)
		return NULL;
	if (pthread_mutex_init(&b->mu, NULL) != 0) {
		free(b);
		return NULL;
	}
	b->tail = &b->head;
	b->max = max > 0 ? max : 1;
	return b;
}

void
bp_db_batch_free(struct bp_db_batch *b)
{
	if (b == NULL)
		return;
	pthread_mutex_destroy(&b->mu);
	free(b);
}

static int
run_sql(struct bp_db *db, const char *sql)
{
	struct bp_stmt *st;

	return (st = bp_db_stmt(db, sql)) == NULL ? -1 : bp_stmt_run(st);
}

/* One call alone in the transaction db has begun, which this ends: KEEP, UNDO or ERROR. */
static int
finish_alone(struct bp_db *db, int (*fn)(struct bp_db *, void *), void *arg,
    const struct bp_db_batch_tail *tail)
{
	int rc;

	if (tail != NULL)
		tail->start();
	if ((rc = fn(db, arg)) != BP_DB_BATCH_KEEP ||
	    (tail != NULL && tail->flush(db) == -1)) {
		bp_db_rollback(db);
		return rc == BP_DB_BATCH_UNDO ? rc : BP_DB_BATCH_ERROR;
	}
	return bp_db_commit(db) == 0 ? BP_DB_BATCH_KEEP : BP_DB_BATCH_ERROR;
}

/* One call alone in its transaction: what a NULL batch and PostgreSQL do. */
static int
run_alone(struct bp_db *db, int (*fn)(struct bp_db *, void *), void *arg,
    const struct bp_db_batch_tail *tail)
{
	if (bp_db_begin(db) == -1)
		return BP_DB_BATCH_ERROR;
	return finish_alone(db, fn, arg, tail);
}

/* Whether a call before k in the list from j has k's tail (it is started and flushed once). */
static int
tail_seen(const struct job *j, const struct job *k)
{
	for (; j != k; j = j->next)
		if (j->tail == k->tail)
			return 1;
	return 0;
}

/* The n calls from j on, in the transaction db has begun, which this ends; sets their rc. */
static void
run_batch(struct bp_db *db, struct job *j, size_t n)
{
	struct job *k;
	size_t i;
	int broken = 0;

	if (n == 1) {
		j->rc = finish_alone(db, j->fn, j->arg, j->tail);
		return;
	}
	for (i = 0, k = j; i < n; i++, k = k->next)
		if (k->tail != NULL && !tail_seen(j, k))
			k->tail->start();
	for (i = 0, k = j; i < n; i++, k = k->next) {
		if (broken || run_sql(db, sql_save) == -1) {
			k->rc = BP_DB_BATCH_ERROR;
			continue;
		}
		if ((k->rc = k->fn(db, k->arg)) != BP_DB_BATCH_KEEP) {
			if (k->rc != BP_DB_BATCH_UNDO)
				k->rc = BP_DB_BATCH_ERROR;
			/* Its writes go, those of the calls before it stay. */
			if (run_sql(db, sql_undo) == -1)
				broken = 1;
		}
		if (run_sql(db, sql_release) == -1)
			broken = 1;
	}
	for (i = 0, k = j; !broken && i < n; i++, k = k->next)
		if (k->tail != NULL && !tail_seen(j, k) && k->tail->flush(db) == -1)
			broken = 1;
	/* A savepoint that could not be undone leaves the transaction unknown: none of it. */
	if (broken)
		bp_db_rollback(db);
	if (broken || bp_db_commit(db) != 0)
		for (i = 0, k = j; i < n; i++, k = k->next)
			if (k->rc == BP_DB_BATCH_KEEP)
				k->rc = BP_DB_BATCH_ERROR;
}

int
bp_db_batch_run(struct bp_db_batch *b, struct bp_db *db, int (*fn)(struct bp_db *, void *),
    void *arg)
{
	return bp_db_batch_run_tail(b, db, fn, arg, NULL);
}

int
bp_db_batch_run_tail(struct bp_db_batch *b, struct bp_db *db,
    int (*fn)(struct bp_db *, void *), void *arg, const struct bp_db_batch_tail *tail)
{
	struct job me = { fn, arg, tail, BP_DB_BATCH_ERROR, 0, PTHREAD_COND_INITIALIZER, NULL };
	struct job *first, *k;
	size_t n;
	int begun;

	if (b == NULL || !db->drv->one_writer)
		return run_alone(db, fn, arg, tail);
	pthread_mutex_lock(&b->mu);
	*b->tail = &me;
	b->tail = &me.next;
	while (!me.done && b->leading)
		pthread_cond_wait(&me.cv, &b->mu);
	if (me.done)
		goto out;
	/* This thread leads until its own call is done (older calls may go first). */
	b->leading = 1;
	/*
	 * Alone in the queue: let the threads that are ready run first, once. On a busy machine
	 * some of them reach their call meanwhile and share this transaction (the batches of
	 * gas.fcgi under load grew from 1.6 calls); on an idle one the yield returns at once.
	 */
	if (b->head == &me && me.next == NULL) {
		pthread_mutex_unlock(&b->mu);
		sched_yield();
		pthread_mutex_lock(&b->mu);
	}
	while (!me.done) {
		/*
		 * The database's lock first, then the calls: those that arrive while it is awaited
		 * (other processes hold it in turn) share this transaction instead of the next.
		 */
		pthread_mutex_unlock(&b->mu);
		begun = bp_db_begin(db) == 0;
		pthread_mutex_lock(&b->mu);
		first = b->head;
		for (n = 1, k = first; n < b->max && k->next != NULL; n++)
			k = k->next;
		b->head = k->next;
		if (b->head == NULL)
			b->tail = &b->head;
		k->next = NULL;
		pthread_mutex_unlock(&b->mu);
		if (begun)
			run_batch(db, first, n);
		else
			for (k = first; k != NULL; k = k->next)
				k->rc = BP_DB_BATCH_ERROR;
		pthread_mutex_lock(&b->mu);
		/* Under the lock: a woken thread's call (and its condition) ends once it has it. */
		for (k = first; k != NULL; k = k->next) {
			k->done = 1;
			if (k != &me)
				pthread_cond_signal(&k->cv);
		}
	}
	b->leading = 0;
	if (b->head != NULL)
		pthread_cond_signal(&b->head->cv);	/* the oldest call left leads next */
out:
	pthread_mutex_unlock(&b->mu);
	pthread_cond_destroy(&me.cv);
	return me.rc;
}
