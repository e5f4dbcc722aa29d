/*
 * Group commit: the short write transactions of a process's request threads, run several in
 * one transaction. On SQLite every writer of every process takes one lock in turn, and each
 * transaction pays its fixed part (the lock's fcntl calls, re-reading the pages other
 * connections changed, writing the WAL frames of pages every transaction touches: the same
 * day's counter row, the same index leaf); a batch pays it once. Each call still runs alone as
 * far as what it sees and writes goes: the calls of a batch run one after the other in one
 * thread, each in a savepoint of its own, so one's refusal or error undoes only its writes, and
 * a check inside one sees the writes of those before it (limits hold exactly).
 *
 * On PostgreSQL (many writers, row locks) each call is its own transaction, as without a
 * batch: two batches taking the same rows in different orders would deadlock.
 */
#ifndef BP_DB_BATCH_H
#define BP_DB_BATCH_H

#include <stddef.h>

struct bp_db;
struct bp_db_batch;

/* What a call's function returns: keep its writes, undo them (a refusal), or an error. */
#define BP_DB_BATCH_KEEP	0
#define BP_DB_BATCH_UNDO	1
#define BP_DB_BATCH_ERROR	(-1)

/*
 * A process's batch, shared by its threads (made in the program's init, freed at its end);
 * at most max calls a transaction. NULL when out of memory.
 */
struct bp_db_batch	*bp_db_batch_new(size_t max);
void			 bp_db_batch_free(struct bp_db_batch *);

/*
 * Runs fn(db', arg) inside a write transaction, with this thread's db or the connection of the
 * thread that leads the batch (fn uses the db it is given, runs statements only, never begins
 * or commits, and makes no network call). Returns BP_DB_BATCH_KEEP once fn's writes are
 * committed, BP_DB_BATCH_UNDO when fn returned it (its writes undone), or BP_DB_BATCH_ERROR
 * when fn did or the transaction failed (nothing of fn's kept). A NULL batch runs fn alone.
 */
int	bp_db_batch_run(struct bp_db_batch *, struct bp_db *db,
	    int (*fn)(struct bp_db *, void *), void *arg);

/*
 * What the calls of a transaction add to the same rows (a day's counters every sponsorship
 * adds to), written once a transaction instead of once a call. Both run in the thread that
 * runs the calls: start before the first call (forget the last transaction's), flush after
 * the last and before the commit (-1: nothing of the transaction is kept). A call adds to what
 * flush writes only as it returns BP_DB_BATCH_KEEP, so an undone call adds nothing.
 */
struct bp_db_batch_tail {
	void	(*start)(void);
	int	(*flush)(struct bp_db *);
};

/* bp_db_batch_run, with tail's start and flush around the calls of fn's transaction. */
int	bp_db_batch_run_tail(struct bp_db_batch *, struct bp_db *db,
	    int (*fn)(struct bp_db *, void *), void *arg, const struct bp_db_batch_tail *tail);

#endif
