#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "buf.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define STMT_CACHE	96
#define BUSY_MAX_US	INT64_C(5000000)	/* give up on a lock after 5 s */
#define BUSY_STEP_US	20			/* the first wait; doubled up to BUSY_CAP_US */
#define BUSY_CAP_US	200
#define CKPT_FRAMES	1000			/* SQLite's default wal_autocheckpoint */

extern const char *const bp_schema_sql[];
extern const int bp_schema_count;

struct bp_stmt {
	const char	*sql;
	sqlite3_stmt	*st;
	int		 conflict;
};

struct bp_db {
	sqlite3		*h;
	struct bp_stmt	 cache[STMT_CACHE];
	size_t		 ncache;
	int64_t		 busy_since;	/* bp_mono_us() when the current wait for a lock began */
	int64_t		 busy_max;	/* how long to wait in all: BUSY_MAX_US, or bp_db_try_begin's */
	int		 ckpt_at;	/* WAL frames when this connection last checkpointed */
};

/* Statements of the transaction calls, cached like any other (their addresses are the keys). */
static const char sql_begin[] = "BEGIN IMMEDIATE";
static const char sql_begin_read[] = "BEGIN";
static const char sql_commit[] = "COMMIT";
static const char sql_rollback[] = "ROLLBACK";

static int
pragma_int(struct bp_db *db, const char *sql)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

int
bp_db_exec(struct bp_db *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		bp_err("%s: %s", __func__, msg ? msg : sqlite3_errmsg(db->h));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/*
 * The busy handler: waits for a lock another connection holds, up to BUSY_MAX_US in all.
 * SQLite's own (sqlite3_busy_timeout) sleeps 1, 2, 5, 10 ms ... between tries, which is far
 * longer than a write transaction here holds the lock (tens of microseconds): under parallel
 * writers every request that met a lock lost a millisecond or more. This one tries again after
 * 20 us, doubling to at most 200 us. Returns nonzero to try again.
 */
static int
on_busy(void *arg, int count)
{
	struct bp_db *db = arg;
	struct timespec ts;
	int64_t now = bp_mono_us(), wait;

	if (count == 0)
		db->busy_since = now;
	else if (now - db->busy_since > (db->busy_max > 0 ? db->busy_max : BUSY_MAX_US))
		return 0;
	wait = count < 6 ? (int64_t)BUSY_STEP_US << count : BUSY_CAP_US;
	if (wait > BUSY_CAP_US)
		wait = BUSY_CAP_US;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)(wait * 1000);
	nanosleep(&ts, NULL);
	return 1;
}

/*
 * The WAL hook, in place of SQLite's autocheckpoint: a passive checkpoint once the WAL has
 * grown by CKPT_FRAMES frames since this connection's last one. SQLite's own checkpoints after
 * every commit while the WAL holds more than 1,000 frames; under steady writes from several
 * processes the WAL is seldom reset (a reader is nearly always in it), so it stays over that
 * mark and every commit paid a checkpoint and its two fsyncs. The WAL is still checkpointed
 * as often per frame written, and reset whenever a checkpoint catches up.
 */
static int
on_wal(void *arg, sqlite3 *h, const char *name, int frames)
{
	struct bp_db *db = arg;

	if (frames < db->ckpt_at)	/* the WAL was reset since */
		db->ckpt_at = 0;
	if (frames - db->ckpt_at >= CKPT_FRAMES) {
		db->ckpt_at = frames;
		sqlite3_wal_checkpoint_v2(h, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	}
	return SQLITE_OK;
}

int
bp_db_version(struct bp_db *db)
{
	return pragma_int(db, "PRAGMA user_version");
}

int
bp_db_schema_latest(void)
{
	return bp_schema_count;
}

static int
migrate(struct bp_db *db)
{
	char sql[64];
	int v, i;

	if ((v = bp_db_version(db)) < 0)
		return -1;
	if (v > bp_schema_count) {
		bp_err("database schema %d is newer than this program's %d", v, bp_schema_count);
		return -1;
	}
	for (i = v; i < bp_schema_count; i++) {
		if (bp_db_begin(db) == -1)
			return -1;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", i + 1);
		if (bp_db_exec(db, bp_schema_sql[i]) == -1 || bp_db_exec(db, sql) == -1) {
			bp_err("migration %03d failed; the database stays at version %d", i + 1, i);
			bp_db_rollback(db);
			return -1;
		}
		if (bp_db_commit(db) == -1)
			return -1;
		bp_info("applied migration %03d", i + 1);
	}
	return 0;
}

/*
 * The database holds webhook signing secrets and key hashes: a new file is made 0600 whatever
 * the umask (SQLite gives its -wal and -shm files the database's mode), and `migrate` takes
 * the bits of others off an existing one. Group bits an install set on purpose stay. A
 * connection's own temporary and in-memory databases (":memory:", "", URIs) are not files here.
 */
static int
private_file(const char *path, int do_migrate)
{
	struct stat sb;
	int fd;

	if (path[0] == '\0' || strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
		return 0;
	if ((fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) != -1) {
		/* O_CREAT's mode is cut by the umask, which may hold 0600's bits: set it. */
		if (fchmod(fd, 0600) == -1) {
			bp_err("%s: %s: chmod: %s", __func__, path, strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
		return 0;
	}
	if (errno != EEXIST) {
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
		return -1;
	}
	if (do_migrate && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (sb.st_mode & 0007) != 0 && chmod(path, sb.st_mode & 0770) == -1)
		bp_warn("%s: %s: cannot take others' access off: %s", __func__, path,
		    strerror(errno));
	return 0;
}

struct bp_db *
bp_db_open(const char *path, int do_migrate)
{
	struct bp_db *db, *ret = NULL;
	int v;

	if (private_file(path, do_migrate) == -1)
		return NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		bp_err("%s: %s: %s", __func__, path, db->h ? sqlite3_errmsg(db->h) : "no memory");
		goto out;
	}
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_busy_handler(db->h, on_busy, db);
	sqlite3_wal_hook(db->h, on_wal, db);
	if (bp_db_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	    "PRAGMA foreign_keys = ON;") == -1) {
		bp_err("%s: %s: cannot set up the database", __func__, path);
		goto out;
	}
	if (do_migrate) {
		if (migrate(db) == -1)
			goto out;
	} else if ((v = bp_db_version(db)) != bp_schema_count) {
		bp_err("%s: schema version %d, this program needs %d: run 'blockport migrate'",
		    path, v, bp_schema_count);
		goto out;
	}
	ret = db;
	db = NULL;
out:
	bp_db_close(db);
	return ret;
}

void
bp_db_close(struct bp_db *db)
{
	size_t i;

	if (db == NULL)
		return;
	for (i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].st);
	sqlite3_close(db->h);
	free(db);
}

struct bp_stmt *
bp_db_stmt(struct bp_db *db, const char *sql)
{
	struct bp_stmt *s;
	size_t i;

	for (i = 0; i < db->ncache; i++)
		if (db->cache[i].sql == sql) {
			s = &db->cache[i];
			sqlite3_reset(s->st);
			sqlite3_clear_bindings(s->st);
			s->conflict = 0;
			return s;
		}
	if (db->ncache == STMT_CACHE) {
		bp_err("%s: more than %d distinct statements", __func__, STMT_CACHE);
		return NULL;
	}
	s = &db->cache[db->ncache];
	if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st, NULL) !=
	    SQLITE_OK) {
		bp_err("%s: %s in: %s", __func__, sqlite3_errmsg(db->h), sql);
		return NULL;
	}
	s->sql = sql;
	s->conflict = 0;
	db->ncache++;
	return s;
}

/* Runs one of the transaction statements through the cache; 0 or -1 (logged). */
static int
tx_step(struct bp_db *db, const char *sql)
{
	struct bp_stmt *st;
	enum bp_db_step step;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	step = bp_stmt_step(st);
	bp_stmt_reset(st);
	return step == BP_DB_DONE ? 0 : -1;
}

int
bp_db_begin(struct bp_db *db)
{
	return tx_step(db, sql_begin);
}

int
bp_db_begin_read(struct bp_db *db)
{
	return tx_step(db, sql_begin_read);
}

int
bp_db_try_begin(struct bp_db *db, int64_t max_wait_us)
{
	struct bp_stmt *st;
	int rc;

	if ((st = bp_db_stmt(db, sql_begin)) == NULL)
		return -1;
	db->busy_max = max_wait_us > 0 ? max_wait_us : 1;
	rc = sqlite3_step(st->st);
	sqlite3_reset(st->st);
	db->busy_max = 0;
	return rc == SQLITE_DONE ? 0 : -1;
}

int
bp_db_commit(struct bp_db *db)
{
	return tx_step(db, sql_commit);
}

void
bp_db_rollback(struct bp_db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		tx_step(db, sql_rollback);
}

int64_t
bp_db_last_id(struct bp_db *db)
{
	return sqlite3_last_insert_rowid(db->h);
}

int
bp_db_changes(struct bp_db *db)
{
	return sqlite3_changes(db->h);
}

int
bp_stmt_int(struct bp_stmt *s, int idx, int64_t v)
{
	return sqlite3_bind_int64(s->st, idx, v) == SQLITE_OK ? 0 : -1;
}

int
bp_stmt_text(struct bp_stmt *s, int idx, const char *v)
{
	if (v == NULL)
		return bp_stmt_null(s, idx);
	return sqlite3_bind_text(s->st, idx, v, -1, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : -1;
}

int
bp_stmt_blob(struct bp_stmt *s, int idx, const void *p, size_t n)
{
	return sqlite3_bind_blob64(s->st, idx, p, n, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : -1;
}

int
bp_stmt_null(struct bp_stmt *s, int idx)
{
	return sqlite3_bind_null(s->st, idx) == SQLITE_OK ? 0 : -1;
}

enum bp_db_step
bp_stmt_step(struct bp_stmt *s)
{
	int rc = sqlite3_step(s->st);

	if (rc == SQLITE_ROW)
		return BP_DB_ROW;
	if (rc == SQLITE_DONE)
		return BP_DB_DONE;
	rc = sqlite3_extended_errcode(sqlite3_db_handle(s->st));
	s->conflict = rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY;
	if (!s->conflict)
		bp_err("%s: %s in: %s", __func__, sqlite3_errmsg(sqlite3_db_handle(s->st)),
		    s->sql);
	sqlite3_reset(s->st);
	return BP_DB_ERROR;
}

int
bp_stmt_run(struct bp_stmt *st)
{
	int rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;

	bp_stmt_reset(st);
	return rc;
}

int
bp_stmt_each(struct bp_stmt *st, int (*row)(struct bp_stmt *, void *), void *arg)
{
	enum bp_db_step step;
	int n = 0, stop = 0;

	while (!stop && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		stop = row(st, arg);
		n++;
	}
	bp_stmt_reset(st);
	return !stop && step == BP_DB_ERROR ? -1 : n;
}

int
bp_stmt_was_conflict(struct bp_stmt *s)
{
	return s->conflict;
}

int64_t
bp_col_int(struct bp_stmt *s, int col)
{
	return sqlite3_column_int64(s->st, col);
}

const char *
bp_col_text(struct bp_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s->st, col);

	return t ? (const char *)t : "";
}

int
bp_col_is_null(struct bp_stmt *s, int col)
{
	return sqlite3_column_type(s->st, col) == SQLITE_NULL;
}

const void *
bp_col_blob(struct bp_stmt *s, int col, size_t *len)
{
	const void *p = sqlite3_column_blob(s->st, col);

	*len = (size_t)sqlite3_column_bytes(s->st, col);
	return p;
}

void
bp_stmt_reset(struct bp_stmt *s)
{
	if (s != NULL)
		sqlite3_reset(s->st);
}

int64_t
bp_db_data_version(struct bp_db *db)
{
	struct bp_stmt *st;
	int64_t v = -1;

	if ((st = bp_db_stmt(db, "PRAGMA data_version")) == NULL)
		return -1;
	if (bp_stmt_step(st) == BP_DB_ROW)
		v = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return v;
}

int
bp_db_list_page(struct bp_db *db, const char *sql_count, const char *sql_page,
    int64_t account_id, const char *status, int64_t page, int64_t limit, const char *key,
    int (*item)(struct bp_stmt *, struct bp_buf *), struct bp_buf *b)
{
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t total = -1;
	int fail, n = 0;

	if ((st = bp_db_stmt(db, sql_count)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_text(st, 2, status);
	if (bp_stmt_step(st) == BP_DB_ROW)
		total = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (total < 0 || (st = bp_db_stmt(db, sql_page)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_text(st, 2, status);
	bp_stmt_int(st, 3, limit);
	bp_stmt_int(st, 4, (page - 1) * limit);
	fail = bp_buf_printf(b, "{\"%s\":[", key) == -1;
	while (!fail && (step = bp_stmt_step(st)) == BP_DB_ROW)
		fail = (n++ > 0 && bp_buf_adds(b, ",") == -1) || item(st, b) == -1;
	bp_stmt_reset(st);
	if (fail || step == BP_DB_ERROR)
		return -1;
	return bp_buf_printf(b, "],\"page\":%lld,\"limit\":%lld,\"total\":%lld}",
	    (long long)page, (long long)limit, (long long)total) == -1 ? -1 : 0;
}
