/*
 * The SQLite driver (db_driver.h): one file in WAL mode, shared by every program, the embedded
 * default. Statements are prepared once per connection and kept by their SQL's address.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db.h"
#include "db_driver.h"
#include "log.h"
#include "util.h"
#include "wake.h"

#define STMT_CACHE	96
#define BUSY_MAX_US	INT64_C(5000000)	/* give up on a lock after 5 s */
#define BUSY_STEP_US	20			/* the first wait; doubled up to BUSY_CAP_US */
#define BUSY_CAP_US	200
#define CKPT_FRAMES	1000			/* SQLite's default wal_autocheckpoint */

struct sq_stmt {
	struct bp_stmt	 base;
	sqlite3_stmt	*st;
};

struct sq_db {
	struct bp_db	 base;
	sqlite3		*h;
	struct sq_stmt	 cache[STMT_CACHE];
	size_t		 ncache;
	int64_t		 busy_since;	/* bp_mono_us() when the current wait for a lock began */
	int64_t		 busy_max;	/* how long to wait in all: BUSY_MAX_US, or bp_db_try_begin's */
};

/* Statements of the transaction calls, cached like any other (their addresses are the keys). */
#define SQ(db)	((struct sq_db *)(db))
#define ST(s)	(((struct sq_stmt *)(s))->st)

static const char sql_begin[] = "BEGIN IMMEDIATE";
static const char sql_begin_read[] = "BEGIN";
static const char sql_commit[] = "COMMIT";
static const char sql_rollback[] = "ROLLBACK";

static enum bp_db_step sq_step(struct bp_stmt *);
static int sq_begin(struct bp_db *);
static int sq_commit(struct bp_db *);
static void sq_rollback(struct bp_db *);

static int
pragma_int(struct sq_db *db, const char *sql)
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

static int
sq_exec(struct bp_db *bdb, const char *sql)
{
	struct sq_db *db = SQ(bdb);
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
	struct sq_db *db = arg;
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
 * The WAL hook, in place of SQLite's autocheckpoint: a passive checkpoint by the commit that
 * takes the WAL past a multiple of CKPT_FRAMES frames. SQLite's own checkpoints after every
 * commit while the WAL holds more than 1,000 frames; under steady writes from several
 * processes the WAL is seldom reset (a reader is nearly always in it), so it stays over that
 * mark and every commit paid a checkpoint and its two fsyncs. Counting from each connection's
 * own last checkpoint instead made every connection (a program has one a thread) checkpoint
 * once per 1,000 frames: 64 connections, one checkpoint every dozen sponsorships. The frames
 * a commit wrote are the pages this connection wrote since the last call (CACHE_WRITE, reset
 * here), so exactly one commit crosses each mark, whichever connection made it.
 */
static int
on_wal(void *arg, sqlite3 *h, const char *name, int frames)
{
	int wrote = 0, hi = 0;

	(void)arg;
	sqlite3_db_status(h, SQLITE_DBSTATUS_CACHE_WRITE, &wrote, &hi, 1);
	if (wrote > frames)	/* writes of the transaction before the hook was set */
		wrote = frames;
	if ((frames - wrote) / CKPT_FRAMES != frames / CKPT_FRAMES)
		sqlite3_wal_checkpoint_v2(h, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return SQLITE_OK;
}

static int
sq_version(struct bp_db *db)
{
	return pragma_int(SQ(db), "PRAGMA user_version");
}

static int
sq_migrate_one(struct bp_db *db, const char *sql, int version)
{
	char v[64];

	if (sq_begin(db) == -1)
		return -1;
	snprintf(v, sizeof(v), "PRAGMA user_version = %d", version);
	if (sq_exec(db, sql) == -1 || sq_exec(db, v) == -1) {
		sq_rollback(db);
		return -1;
	}
	return sq_commit(db);
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

/*
 * Before SQLite's first use in the process: no memory statistics. They are kept under one
 * mutex every allocation of every connection takes (sqlite3_status, which nothing here reads),
 * and on a program with a connection per request thread that mutex was a tenth of SQL's CPU.
 * A process that used SQLite before (it cannot be configured then) keeps them.
 */
static void
sq_configure(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static struct bp_db *
sq_open(const char *path, int do_migrate)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct sq_db *db;

	pthread_once(&once, sq_configure);

	if (private_file(path, do_migrate) == -1)
		return NULL;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	db->base.drv = &bp_db_sqlite;
	if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
	    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		bp_err("%s: %s: %s", __func__, path, db->h ? sqlite3_errmsg(db->h) : "no memory");
		goto fail;
	}
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_busy_handler(db->h, on_busy, db);
	sqlite3_wal_hook(db->h, on_wal, db);
	if (sq_exec(&db->base, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
	    "PRAGMA foreign_keys = ON;") == -1) {
		bp_err("%s: %s: cannot set up the database", __func__, path);
		goto fail;
	}
	return &db->base;
fail:
	sqlite3_close(db->h);
	free(db);
	return NULL;
}

static void
sq_close(struct bp_db *bdb)
{
	struct sq_db *db = SQ(bdb);
	size_t i;

	for (i = 0; i < db->ncache; i++)
		sqlite3_finalize(db->cache[i].st);
	sqlite3_close(db->h);
	free(db);
}

static struct bp_stmt *
sq_stmt(struct bp_db *bdb, const char *sql)
{
	struct sq_db *db = SQ(bdb);
	struct sq_stmt *s;
	size_t i;

	for (i = 0; i < db->ncache; i++)
		if (db->cache[i].base.sql == sql) {
			s = &db->cache[i];
			sqlite3_reset(s->st);
			sqlite3_clear_bindings(s->st);
			s->base.conflict = 0;
			return &s->base;
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
	s->base.drv = &bp_db_sqlite;
	s->base.sql = sql;
	s->base.conflict = 0;
	db->ncache++;
	return &s->base;
}

/* Runs one of the transaction statements through the cache; 0 or -1 (logged). */
static int
tx_step(struct bp_db *db, const char *sql)
{
	struct bp_stmt *st;
	enum bp_db_step step;

	if ((st = sq_stmt(db, sql)) == NULL)
		return -1;
	step = sq_step(st);
	sqlite3_reset(ST(st));
	return step == BP_DB_DONE ? 0 : -1;
}

static int
sq_begin(struct bp_db *db)
{
	return tx_step(db, sql_begin);
}

static int
sq_begin_read(struct bp_db *db)
{
	return tx_step(db, sql_begin_read);
}

static int
sq_try_begin(struct bp_db *db, int64_t max_wait_us)
{
	struct bp_stmt *st;
	int rc;

	if ((st = sq_stmt(db, sql_begin)) == NULL)
		return -1;
	SQ(db)->busy_max = max_wait_us > 0 ? max_wait_us : 1;
	rc = sqlite3_step(ST(st));
	sqlite3_reset(ST(st));
	SQ(db)->busy_max = 0;
	return rc == SQLITE_DONE ? 0 : -1;
}

static int
sq_commit(struct bp_db *db)
{
	return tx_step(db, sql_commit);
}

static void
sq_rollback(struct bp_db *db)
{
	if (!sqlite3_get_autocommit(SQ(db)->h))
		tx_step(db, sql_rollback);
}

static int64_t
sq_last_id(struct bp_db *db)
{
	return sqlite3_last_insert_rowid(SQ(db)->h);
}

static int
sq_changes(struct bp_db *db)
{
	return sqlite3_changes(SQ(db)->h);
}

static int
sq_bind_int(struct bp_stmt *s, int idx, int64_t v)
{
	return sqlite3_bind_int64(ST(s), idx, v) == SQLITE_OK ? 0 : -1;
}

static int
sq_bind_text(struct bp_stmt *s, int idx, const char *v)
{
	if (v == NULL)
		return sqlite3_bind_null(ST(s), idx) == SQLITE_OK ? 0 : -1;
	return sqlite3_bind_text(ST(s), idx, v, -1, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : -1;
}

static int
sq_bind_blob(struct bp_stmt *s, int idx, const void *p, size_t n)
{
	return sqlite3_bind_blob64(ST(s), idx, p, n, SQLITE_TRANSIENT) == SQLITE_OK ? 0 : -1;
}

static int
sq_bind_null(struct bp_stmt *s, int idx)
{
	return sqlite3_bind_null(ST(s), idx) == SQLITE_OK ? 0 : -1;
}

static enum bp_db_step
sq_step(struct bp_stmt *s)
{
	sqlite3_stmt *st = ST(s);
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return BP_DB_ROW;
	if (rc == SQLITE_DONE)
		return BP_DB_DONE;
	rc = sqlite3_extended_errcode(sqlite3_db_handle(st));
	s->conflict = rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY;
	if (!s->conflict)
		bp_err("bp_stmt_step: %s in: %s", sqlite3_errmsg(sqlite3_db_handle(st)),
		    s->sql);
	sqlite3_reset(st);
	return BP_DB_ERROR;
}

static int64_t
sq_col_int(struct bp_stmt *s, int col)
{
	return sqlite3_column_int64(ST(s), col);
}

static const char *
sq_col_text(struct bp_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(ST(s), col);

	return t ? (const char *)t : "";
}

static int
sq_col_is_null(struct bp_stmt *s, int col)
{
	return sqlite3_column_type(ST(s), col) == SQLITE_NULL;
}

static const void *
sq_col_blob(struct bp_stmt *s, int col, size_t *len)
{
	const void *p = sqlite3_column_blob(ST(s), col);

	*len = (size_t)sqlite3_column_bytes(ST(s), col);
	return p;
}

static void
sq_reset(struct bp_stmt *s)
{
	sqlite3_reset(ST(s));
}

/* PRAGMA data_version: changes whenever another connection commits. */
static int64_t
sq_data_version(struct bp_db *db)
{
	struct bp_stmt *st;
	int64_t v = -1;

	if ((st = sq_stmt(db, "PRAGMA data_version")) == NULL)
		return -1;
	if (sq_step(st) == BP_DB_ROW)
		v = sqlite3_column_int64(ST(st), 0);
	sqlite3_reset(ST(st));
	return v;
}

/* Touches DATABASE.CHANNEL, which the listeners watch with inotify (wake.h). */
static int
sq_notify(struct bp_db *bdb, const char *channel)
{
	char path[4200];
	const char *file = sqlite3_db_filename(SQ(bdb)->h, "main");

	if (file == NULL || snprintf(path, sizeof(path), "%s.%s", file, channel) >=
	    (int)sizeof(path))
		return -1;
	return bp_wake_touch(path);
}

const struct bp_db_driver bp_db_sqlite = {
	.name = "sqlite",
	.one_writer = 1,
	.open = sq_open,
	.close = sq_close,
	.version = sq_version,
	.migrate_one = sq_migrate_one,
	.stmt = sq_stmt,
	.exec = sq_exec,
	.begin = sq_begin,
	.begin_read = sq_begin_read,
	.try_begin = sq_try_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.last_id = sq_last_id,
	.data_version = sq_data_version,
	.changes = sq_changes,
	.notify = sq_notify,
	.bind_int = sq_bind_int,
	.bind_text = sq_bind_text,
	.bind_blob = sq_bind_blob,
	.bind_null = sq_bind_null,
	.step = sq_step,
	.reset = sq_reset,
	.col_int = sq_col_int,
	.col_text = sq_col_text,
	.col_is_null = sq_col_is_null,
	.col_blob = sq_col_blob,
};
