/*
 * The database interface (db.h) over its drivers (db_driver.h): the target's form picks one (a
 * postgresql:// URL PostgreSQL, anything else a SQLite path) and every call goes through its
 * table. What is the same on every engine lives here: the migrations' order, the helpers over
 * steps, the list pages.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "db.h"
#include "db_driver.h"
#include "log.h"

int
bp_db_is_url(const char *target)
{
	return strncmp(target, "postgresql://", 13) == 0 || strncmp(target, "postgres://", 11) == 0;
}

const char *
bp_db_display(const char *target, char *out, size_t cap)
{
	const char *scheme, *at, *colon;
	size_t auth;

	if (cap == 0)
		return "";
	/* scheme://user:password@host/...: what lies between the user's ':' and the '@' goes. */
	if (!bp_db_is_url(target) || (scheme = strstr(target, "://")) == NULL)
		auth = 0;
	else
		auth = strcspn(scheme + 3, "/?");
	if (auth == 0 || (at = memchr(scheme + 3, '@', auth)) == NULL ||
	    (colon = memchr(scheme + 3, ':', (size_t)(at - scheme - 3))) == NULL) {
		snprintf(out, cap, "%s", target);
		return out;
	}
	snprintf(out, cap, "%.*s:***%s", (int)(colon - target), target, at);
	return out;
}

static const struct bp_db_driver *
driver_for(const char *target)
{
	return bp_db_is_url(target) ? &bp_db_pg : &bp_db_sqlite;
}

int
bp_db_schema_latest(void)
{
	return bp_schema_count;
}

static int
migrate(struct bp_db *db)
{
	int v, i;

	if ((v = db->drv->version(db)) < 0)
		return -1;
	if (v > bp_schema_count) {
		bp_err("database schema %d is newer than this program's %d", v, bp_schema_count);
		return -1;
	}
	for (i = v; i < bp_schema_count; i++) {
		if (db->drv->migrate_one(db, bp_schema_sql[i], i + 1) == -1) {
			bp_err("migration %03d failed; the database stays at version %d", i + 1, i);
			return -1;
		}
		bp_info("applied migration %03d", i + 1);
	}
	return 0;
}

struct bp_db *
bp_db_open(const char *target, int do_migrate)
{
	const struct bp_db_driver *drv = driver_for(target);
	struct bp_db *db;
	int v;

	if ((db = drv->open(target, do_migrate)) == NULL)
		return NULL;
	if (do_migrate) {
		if (migrate(db) == -1)
			goto fail;
	} else if ((v = drv->version(db)) != bp_schema_count) {
		/* Not the target: a URL may carry a password. */
		bp_err("%s database: schema version %d, this program needs %d: run 'blockport "
		    "migrate'", drv->name, v, bp_schema_count);
		goto fail;
	}
	return db;
fail:
	drv->close(db);
	return NULL;
}

void
bp_db_close(struct bp_db *db)
{
	if (db != NULL)
		db->drv->close(db);
}

int
bp_db_version(struct bp_db *db)
{
	return db->drv->version(db);
}

struct bp_stmt *
bp_db_stmt(struct bp_db *db, const char *sql)
{
	return db->drv->stmt(db, sql);
}

int
bp_db_exec(struct bp_db *db, const char *sql)
{
	return db->drv->exec(db, sql);
}

/* A write transaction just begun: the fence checked inside it, or rolled back. 0 or -1. */
static int
fenced(struct bp_db *db)
{
	if (db->fence == NULL || db->fence(db, db->fence_arg) == 0)
		return 0;
	db->drv->rollback(db);
	return -1;
}

int
bp_db_begin(struct bp_db *db)
{
	return db->drv->begin(db) == -1 ? -1 : fenced(db);
}

int
bp_db_begin_read(struct bp_db *db)
{
	return db->drv->begin_read(db);
}

int
bp_db_try_begin(struct bp_db *db, int64_t max_wait_us)
{
	return db->drv->try_begin(db, max_wait_us) == -1 ? -1 : fenced(db);
}

int
bp_db_commit(struct bp_db *db)
{
	return db->drv->commit(db);
}

void
bp_db_rollback(struct bp_db *db)
{
	db->drv->rollback(db);
}

int64_t
bp_db_last_id(struct bp_db *db)
{
	return db->drv->last_id(db);
}

int64_t
bp_db_data_version(struct bp_db *db)
{
	return db->drv->data_version(db);
}

int
bp_db_changes(struct bp_db *db)
{
	return db->drv->changes(db);
}

void
bp_db_set_fence(struct bp_db *db, int (*fn)(struct bp_db *, void *), void *arg)
{
	db->fence = fn;
	db->fence_arg = arg;
}

int
bp_db_notify(struct bp_db *db, const char *channel)
{
	return db->drv->notify(db, channel);
}

int
bp_stmt_int(struct bp_stmt *s, int idx, int64_t v)
{
	return s->drv->bind_int(s, idx, v);
}

int
bp_stmt_text(struct bp_stmt *s, int idx, const char *v)
{
	return s->drv->bind_text(s, idx, v);
}

int
bp_stmt_blob(struct bp_stmt *s, int idx, const void *p, size_t n)
{
	return s->drv->bind_blob(s, idx, p, n);
}

int
bp_stmt_null(struct bp_stmt *s, int idx)
{
	return s->drv->bind_null(s, idx);
}

enum bp_db_step
bp_stmt_step(struct bp_stmt *s)
{
	return s->drv->step(s);
}

int
bp_stmt_was_conflict(struct bp_stmt *s)
{
	return s->conflict;
}

void
bp_stmt_reset(struct bp_stmt *s)
{
	if (s != NULL)
		s->drv->reset(s);
}

int64_t
bp_col_int(struct bp_stmt *s, int col)
{
	return s->drv->col_int(s, col);
}

const char *
bp_col_text(struct bp_stmt *s, int col)
{
	return s->drv->col_text(s, col);
}

int
bp_col_is_null(struct bp_stmt *s, int col)
{
	return s->drv->col_is_null(s, col);
}

const void *
bp_col_blob(struct bp_stmt *s, int col, size_t *len)
{
	return s->drv->col_blob(s, col, len);
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
