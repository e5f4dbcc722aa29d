/*
 * The database: by default one SQLite file in WAL mode, shared by every program; a
 * postgresql:// URL instead names a PostgreSQL database (docs/scale.md). Programs reach it only
 * through this module, whose calls are the same on both (db_driver.h: db_sqlite.c, db_pg.c).
 * Statements are prepared once per connection and kept (bp_db_stmt caches them by their SQL
 * text), so a request costs a reset and a step, never a parse.
 */
#ifndef BP_DB_H
#define BP_DB_H

#include <stddef.h>
#include <stdint.h>

struct bp_db;
struct bp_stmt;

enum bp_db_step {
	BP_DB_ERROR = -1,
	BP_DB_DONE = 0,
	BP_DB_ROW = 1,
};

/*
 * Opens (creating if needed) the database at path with WAL, a busy timeout, foreign keys and
 * defensive mode on. With migrate set, applies the pending migrations of schema/; without it,
 * fails unless the schema is at the version this binary was built with. Returns a handle owned by
 * the caller (bp_db_close), or NULL after logging why.
 */
struct bp_db	*bp_db_open(const char *path, int migrate);
/* Whether target is a PostgreSQL URL (postgresql:// or postgres://) rather than a path. */
int		 bp_db_is_url(const char *target);
/* target as it may be printed: a URL's password is written ***. Returns out. */
const char	*bp_db_display(const char *target, char *out, size_t cap);
void		 bp_db_close(struct bp_db *);
/* The schema version of the file (PRAGMA user_version) and the one this binary carries. */
int		 bp_db_version(struct bp_db *);
int		 bp_db_schema_latest(void);

/*
 * The prepared statement for sql, reset and with its bindings cleared. sql must be a string that
 * lives as long as the process (a literal): it is cached by address. NULL after logging why.
 * The statement belongs to the cache; finish with bp_stmt_reset when done reading rows.
 */
struct bp_stmt	*bp_db_stmt(struct bp_db *, const char *sql);
/* Runs sql (one or more statements, no bindings, no rows); 0 or -1 after logging why. */
int		 bp_db_exec(struct bp_db *, const char *sql);
int		 bp_db_begin(struct bp_db *);	/* BEGIN IMMEDIATE */
/*
 * BEGIN (deferred) for a run of reads: they all see one snapshot, and the read lock is taken
 * once instead of once a statement. End it with bp_db_commit; never across a network call.
 */
int		 bp_db_begin_read(struct bp_db *);
/*
 * BEGIN IMMEDIATE that waits at most max_wait_us for another writer's lock: 0, or -1 when the
 * lock was not had in time or on an error, not logged (for best-effort writes: the cache's).
 */
int		 bp_db_try_begin(struct bp_db *, int64_t max_wait_us);
int		 bp_db_commit(struct bp_db *);
void		 bp_db_rollback(struct bp_db *);
int64_t		 bp_db_last_id(struct bp_db *);
/* PRAGMA data_version: changes whenever another connection commits; -1 on an error. */
int64_t		 bp_db_data_version(struct bp_db *);
int		 bp_db_changes(struct bp_db *);

/*
 * Wake-ups (docs/scale.md): a writer that committed what others wait for (BP_DB_WAKE_HEADS: the
 * indexer stored blocks) notifies the channel; listeners (db_wake.h) wake. On SQLite the
 * channel is the file DATABASE.CHANNEL (wake.h), on PostgreSQL a NOTIFY bp_CHANNEL, heard on
 * every head. Inside a transaction PostgreSQL delivers it at the commit. 0, or -1.
 */
#define BP_DB_WAKE_HEADS	"heads"
#define BP_DB_WAKE_PENDING	"pending"
#define BP_DB_WAKE_POOL		"pool"	/* an op entered the bundler's pool */
int		 bp_db_notify(struct bp_db *, const char *channel);

/*
 * A fence (the worker's lease, worker.c): fn runs inside every write transaction that
 * bp_db_begin or bp_db_try_begin opens on this handle, first; when it returns -1 the
 * transaction is rolled back and the begin fails, so a worker that lost its lease writes
 * nothing more. fn may run statements, never begin. NULL removes it.
 */
void		 bp_db_set_fence(struct bp_db *, int (*fn)(struct bp_db *, void *), void *arg);

/* Bindings, 1-based as in SQLite; 0 or -1. A NULL text binds SQL NULL. */
int		 bp_stmt_int(struct bp_stmt *, int idx, int64_t);
int		 bp_stmt_text(struct bp_stmt *, int idx, const char *);
int		 bp_stmt_blob(struct bp_stmt *, int idx, const void *, size_t);
int		 bp_stmt_null(struct bp_stmt *, int idx);
/* One step: BP_DB_ROW, BP_DB_DONE, or BP_DB_ERROR after logging why (constraint errors too). */
enum bp_db_step	 bp_stmt_step(struct bp_stmt *);
/* Whether the last BP_DB_ERROR was a UNIQUE or PRIMARY KEY constraint failure. */
int		 bp_stmt_was_conflict(struct bp_stmt *);
/* Column readers, 0-based; valid until the next step or reset. */
/* Steps a statement without rows (INSERT, DELETE) once and resets it; 0, or -1 (logged). */
int		 bp_stmt_run(struct bp_stmt *);
/*
 * Steps a statement through its rows, calling row for each until it returns non-zero, then
 * resets it. The number of calls, or -1 on a database error (logged).
 */
int		 bp_stmt_each(struct bp_stmt *, int (*row)(struct bp_stmt *, void *), void *arg);
int64_t		 bp_col_int(struct bp_stmt *, int col);
const char	*bp_col_text(struct bp_stmt *, int col);	/* "" for NULL */
int		 bp_col_is_null(struct bp_stmt *, int col);
const void	*bp_col_blob(struct bp_stmt *, int col, size_t *len);
void		 bp_stmt_reset(struct bp_stmt *);

struct bp_buf;
/*
 * Appends page (from 1) of limit rows of an account's list as {"key":[items],"page":P,
 * "limit":L,"total":T}. sql_count (the total) and sql_page (the rows) bind ?1 account_id and
 * ?2 status (NULL: any); sql_page also ?3 limit and ?4 the offset. item appends one row of
 * sql_page to b (0 or -1). Returns 0, or -1 on a database error or out of memory.
 */
int		 bp_db_list_page(struct bp_db *, const char *sql_count, const char *sql_page,
		    int64_t account_id, const char *status, int64_t page, int64_t limit,
		    const char *key, int (*item)(struct bp_stmt *, struct bp_buf *),
		    struct bp_buf *b);

#endif
