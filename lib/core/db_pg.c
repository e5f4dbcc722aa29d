/*
 * The PostgreSQL driver (db_driver.h) on libpq, chosen by a postgresql:// URL. The callers'
 * SQL is the same as on SQLite: placeholders (? and ?N) become $N once, when a statement is
 * first prepared on a connection; the dialect differences live here and nowhere else
 * (docs/scale.md):
 * - migrations: INTEGER -> BIGINT (SQLite's integers are 64-bit), INTEGER PRIMARY KEY -> an
 *   identity column, BLOB -> BYTEA, WITHOUT ROWID dropped (mig_translate);
 * - PRAGMA user_version -> a one-row schema_version table;
 * - BEGIN IMMEDIATE (one writer at a time) -> BEGIN and a transaction-scoped advisory lock, so
 *   writers take turns as on SQLite and a caller's read-then-write stays correct;
 * - last insert id -> lastval(); data_version -> the WAL position;
 * - a statement that fails inside a transaction aborts it on PostgreSQL but not on SQLite, so an
 *   INSERT or UPDATE that may conflict runs under a savepoint there;
 * - serialization failures and deadlocks (40001, 40P01) of a statement outside a transaction
 *   are retried here, a few times, not by each caller.
 * A connection is not thread-safe: each thread opens its own handle (docs/concurrency.md).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "buf.h"
#include "db.h"
#include "db_driver.h"
#include "log.h"
#include "util.h"

#define STMT_CACHE	96
#define RETRIES		5
#define TEXT_MAX	(1 << 20)	/* a statement or a migration, rewritten */
#define BYTEA_OID	17
#define BOOL_OID	16
#define INT8_OID	20
#define TEXT_OID	25
/* The advisory lock every write transaction takes: "bp" and a version. */
#define WRITER_LOCK	"SELECT pg_advisory_xact_lock(1651507201)"

struct pg_param {
	char		*buf;
	size_t		 cap;
	int		 len;
	int		 isnull;
	int		 binary;	/* a blob: sent as its bytes */
	int		 isint;		/* bound as an integer */
};

struct pg_col {
	unsigned char	*buf;	/* a bytea column's bytes, decoded, NUL-terminated */
	size_t		 cap;
	size_t		 len;
	int		 row;	/* the row buf holds; -1 none */
};

struct pg_db;

struct pg_stmt {
	struct bp_stmt	 base;
	struct pg_db	*db;
	char		 name[16];
	int		 prepared;
	int		 nparams;
	int		 guard;		/* may conflict: under a savepoint in a transaction */
	unsigned int	*ptypes;	/* the types the server gave the parameters */
	const char	**vals;		/* what PQexecPrepared takes, filled at each run */
	int		*lens, *fmts;
	struct pg_param	*params;
	PGresult	*res;
	int		 row, nrows, ncols;
	struct pg_col	*cols;
};

struct pg_db {
	struct bp_db	 base;
	PGconn		*conn;
	struct pg_stmt	 cache[STMT_CACHE];
	size_t		 ncache;
	int		 changes;
};

#define PG(db)	((struct pg_db *)(db))
#define PS(s)	((struct pg_stmt *)(s))

/* Runs sql as a simple query (no parameters); its result (the last statement's) or NULL. */
static PGresult *
simple(struct pg_db *db, const char *sql, int logged)
{
	PGresult *r = PQexec(db->conn, sql);
	ExecStatusType st = PQresultStatus(r);

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
		return r;
	if (logged)
		bp_err("postgresql: %s in: %s", PQerrorMessage(db->conn), sql);
	PQclear(r);
	return NULL;
}

static int
pg_exec(struct bp_db *db, const char *sql)
{
	PGresult *r = simple(PG(db), sql, 1);

	PQclear(r);
	return r != NULL ? 0 : -1;
}

static int
in_tx(struct pg_db *db)
{
	return PQtransactionStatus(db->conn) != PQTRANS_IDLE;
}

static struct bp_db *
pg_open(const char *url, int do_migrate)
{
	struct pg_db *db;
	PGresult *r;

	(void)do_migrate;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	db->base.drv = &bp_db_pg;
	db->conn = PQconnectdb(url);
	if (PQstatus(db->conn) != CONNECTION_OK) {
		/* libpq's message names host and port, never the password. */
		bp_err("postgresql: %s", PQerrorMessage(db->conn));
		goto fail;
	}
	/* Notices (an IF NOT EXISTS that found the table) are not errors: keep them off stderr. */
	r = simple(db, "SET client_min_messages = warning", 1);
	if (r == NULL)
		goto fail;
	PQclear(r);
	return &db->base;
fail:
	PQfinish(db->conn);
	free(db);
	return NULL;
}

static void
stmt_free(struct pg_stmt *s)
{
	int i;

	PQclear(s->res);
	for (i = 0; i < s->nparams; i++)
		free(s->params[i].buf);
	for (i = 0; i < s->ncols; i++)
		free(s->cols[i].buf);
	free(s->params);
	free(s->ptypes);
	free(s->vals);
	free(s->lens);
	free(s->fmts);
	free(s->cols);
}

static void
pg_close(struct bp_db *bdb)
{
	struct pg_db *db = PG(bdb);
	size_t i;

	for (i = 0; i < db->ncache; i++)
		stmt_free(&db->cache[i]);
	PQfinish(db->conn);
	free(db);
}

static int
pg_version(struct bp_db *bdb)
{
	struct pg_db *db = PG(bdb);
	PGresult *r;
	int v = 0;

	/* A database no migration has touched has no table yet: version 0. */
	if ((r = simple(db, "SELECT to_regclass('schema_version') IS NOT NULL", 1)) == NULL)
		return -1;
	if (PQntuples(r) == 1 && PQgetvalue(r, 0, 0)[0] == 't') {
		PQclear(r);
		if ((r = simple(db, "SELECT max(version) FROM schema_version", 1)) == NULL)
			return -1;
		v = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
	}
	PQclear(r);
	return v;
}

/* The text built in b, or NULL (b freed) when building it failed. */
static char *
buf_take(struct bp_buf *b, int fail)
{
	if (!fail && (b->data != NULL || bp_buf_adds(b, "") == 0) && b->data != NULL)
		return b->data;
	bp_buf_free(b);
	return NULL;
}

/* Whether sql[i] starts the word w (in upper case, as the migrations write types). */
static int
word_at(const char *sql, size_t i, const char *w)
{
	size_t n = strlen(w);

	return strncmp(sql + i, w, n) == 0 && (i == 0 || !(isalnum((unsigned char)sql[i - 1]) ||
	    sql[i - 1] == '_')) && !(isalnum((unsigned char)sql[i + n]) || sql[i + n] == '_');
}

/*
 * A migration's text in PostgreSQL's dialect (see the top of this file), or NULL without
 * memory. Only words in upper case are types here; comments change too, harmlessly.
 */
static char *
mig_translate(const char *sql)
{
	static const char *const from[] = { "INTEGER PRIMARY KEY", "INTEGER", "BLOB",
	    "WITHOUT ROWID" };
	static const char *const to[] = {
	    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "BIGINT", "BYTEA", "" };
	struct bp_buf b;
	size_t i, k;
	int fail = 0;

	bp_buf_init(&b, TEXT_MAX);
	for (i = 0; !fail && sql[i] != '\0'; ) {
		for (k = 0; k < sizeof(from) / sizeof(from[0]); k++)
			if (word_at(sql, i, from[k]))
				break;
		if (k < sizeof(from) / sizeof(from[0])) {
			fail = bp_buf_adds(&b, to[k]) == -1;
			i += strlen(from[k]);
		} else
			fail = bp_buf_add(&b, sql + i++, 1) == -1;
	}
	return buf_take(&b, fail);
}

static int
pg_migrate_one(struct bp_db *bdb, const char *sql, int version)
{
	struct pg_db *db = PG(bdb);
	char v[160];
	char *t;
	int rc = -1;

	if ((t = mig_translate(sql)) == NULL)
		return -1;
	snprintf(v, sizeof(v), "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT "
	    "NULL); DELETE FROM schema_version; INSERT INTO schema_version VALUES (%d)", version);
	if (pg_exec(bdb, "BEGIN; " WRITER_LOCK) == 0) {
		if (pg_exec(bdb, t) == 0 && pg_exec(bdb, v) == 0 && pg_exec(bdb, "COMMIT") == 0)
			rc = 0;
		else if (in_tx(db))
			pg_exec(bdb, "ROLLBACK");
	}
	free(t);
	return rc;
}

/*
 * SQLite's placeholders in PostgreSQL's: ?N is $N, a bare ? is one more than the largest before
 * it (SQLite's rule). Quoted text is copied as it is. The text (malloc'd) and *n, the largest.
 */
static char *
rewrite(const char *sql, int *n)
{
	struct bp_buf b;
	const char *p;
	char num[16], q = 0;
	long v;
	int fail = 0;

	*n = 0;
	bp_buf_init(&b, TEXT_MAX);
	for (p = sql; !fail && *p != '\0'; p++) {
		if (q != 0) {
			if (*p == q)
				q = 0;
		} else if (*p == '\'' || *p == '"')
			q = *p;
		else if (*p == '?') {
			if (isdigit((unsigned char)p[1]))
				v = strtol(p + 1, (char **)&p, 10), p--;
			else
				v = *n + 1;
			if (v > *n)
				*n = (int)v;
			snprintf(num, sizeof(num), "$%ld", v);
			fail = bp_buf_adds(&b, num) == -1;
			continue;
		}
		fail = bp_buf_add(&b, p, 1) == -1;
	}
	return buf_take(&b, fail);
}

/* An INSERT or UPDATE that may fail on a constraint; an upsert's target is handled. */
static int
may_conflict(const char *sql)
{
	while (isspace((unsigned char)*sql))
		sql++;
	if (strncasecmp(sql, "INSERT", 6) != 0 && strncasecmp(sql, "UPDATE", 6) != 0)
		return 0;
	return strstr(sql, "ON CONFLICT") == NULL;
}

static int
sqlstate_is(const PGresult *r, const char *code)
{
	const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);

	return st != NULL && strcmp(st, code) == 0;
}

/*
 * Prepares s on the server, at its first step: the server infers each parameter's type from
 * where it stands. Where it cannot (SQLite's "?2 IS NULL OR x = ?2"), the types of the first
 * bindings are given instead: integer BIGINT, text TEXT, bytes BYTEA, and a NULL none, then
 * TEXT when that is still not enough. 0 or -1 (logged).
 */
static int
prepare(struct pg_stmt *s)
{
	PGconn *c = s->db->conn;
	PGresult *r;
	char *text;
	int n, i, ok, typed, tx = in_tx(s->db);

	if ((text = rewrite(s->base.sql, &n)) == NULL)
		return -1;
	for (typed = 0; typed < 3; typed++) {
		/* A failed PREPARE would abort the caller's transaction: try under a savepoint. */
		if (tx)
			PQclear(simple(s->db, "SAVEPOINT bp_prepare", 1));
		for (i = 0; typed && i < n; i++)
			s->ptypes[i] = s->params[i].isnull ? (typed == 2 ? TEXT_OID : 0) :
			    s->params[i].binary ? BYTEA_OID : s->params[i].isint ? INT8_OID :
			    TEXT_OID;
		r = PQprepare(c, s->name, text, n, s->ptypes);
		ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (tx)
			PQclear(simple(s->db, ok ? "RELEASE SAVEPOINT bp_prepare" :
			    "ROLLBACK TO SAVEPOINT bp_prepare", 1));
		/* 42P18 indeterminate, 42P08 ambiguous: the types were not enough. */
		if (ok || !(sqlstate_is(r, "42P18") || sqlstate_is(r, "42P08")) || typed == 2) {
			if (!ok)
				bp_err("postgresql: %s in: %s", PQresultErrorMessage(r), s->base.sql);
			PQclear(r);
			break;
		}
		PQclear(r);
	}
	free(text);
	if (!ok)
		return -1;
	r = PQdescribePrepared(c, s->name);
	if (PQresultStatus(r) != PGRES_COMMAND_OK || PQnparams(r) != n) {
		bp_err("postgresql: cannot describe: %s", s->base.sql);
		PQclear(r);
		return -1;
	}
	for (i = 0; i < n; i++)
		s->ptypes[i] = PQparamtype(r, i);
	PQclear(r);
	s->prepared = 1;
	return 0;
}

static struct bp_stmt *
pg_stmt(struct bp_db *bdb, const char *sql)
{
	struct pg_db *db = PG(bdb);
	struct pg_stmt *s;
	char *text;
	size_t i;
	int n;

	for (i = 0; i < db->ncache; i++)
		if (db->cache[i].base.sql == sql) {
			s = &db->cache[i];
			s->base.drv->reset(&s->base);
			for (n = 0; n < s->nparams; n++)
				s->params[n].isnull = 1;
			s->base.conflict = 0;
			return &s->base;
		}
	if (db->ncache == STMT_CACHE) {
		bp_err("%s: more than %d distinct statements", __func__, STMT_CACHE);
		return NULL;
	}
	if ((text = rewrite(sql, &n)) == NULL)
		return NULL;
	free(text);
	s = &db->cache[db->ncache];
	memset(s, 0, sizeof(*s));
	s->base.drv = &bp_db_pg;
	s->base.sql = sql;
	s->db = db;
	s->nparams = n;
	s->guard = may_conflict(sql);
	snprintf(s->name, sizeof(s->name), "bp%zu", db->ncache);
	if ((s->params = calloc((size_t)n + 1, sizeof(*s->params))) == NULL ||
	    (s->ptypes = calloc((size_t)n + 1, sizeof(*s->ptypes))) == NULL ||
	    (s->vals = calloc((size_t)n + 1, sizeof(*s->vals))) == NULL ||
	    (s->lens = calloc((size_t)n + 1, sizeof(*s->lens))) == NULL ||
	    (s->fmts = calloc((size_t)n + 1, sizeof(*s->fmts))) == NULL) {
		stmt_free(s);
		return NULL;
	}
	for (i = 0; i < (size_t)n; i++)
		s->params[i].isnull = 1;
	db->ncache++;
	return &s->base;
}

static struct pg_param *
param(struct bp_stmt *s, int idx)
{
	if (idx < 1 || idx > PS(s)->nparams)
		return NULL;
	return &PS(s)->params[idx - 1];
}

/* Copies n bytes (and a NUL) into p; 0 or -1. */
static int
param_set(struct pg_param *p, const void *v, size_t n, int binary)
{
	char *nb;

	if (p == NULL || n > INT32_MAX)
		return -1;
	if (n + 1 > p->cap) {
		if ((nb = realloc(p->buf, n + 1)) == NULL)
			return -1;
		p->buf = nb;
		p->cap = n + 1;
	}
	memcpy(p->buf, v, n);
	p->buf[n] = '\0';
	p->len = (int)n;
	p->isnull = 0;
	p->binary = binary;
	p->isint = 0;
	return 0;
}

static int
pg_bind_int(struct bp_stmt *s, int idx, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%lld", (long long)v);

	if (param_set(param(s, idx), num, (size_t)n, 0) == -1)
		return -1;
	PS(s)->params[idx - 1].isint = 1;
	return 0;
}

static int
pg_bind_null(struct bp_stmt *s, int idx)
{
	struct pg_param *p = param(s, idx);

	if (p == NULL)
		return -1;
	p->isnull = 1;
	return 0;
}

static int
pg_bind_text(struct bp_stmt *s, int idx, const char *v)
{
	if (v == NULL)
		return pg_bind_null(s, idx);
	return param_set(param(s, idx), v, strlen(v), 0);
}

static int
pg_bind_blob(struct bp_stmt *s, int idx, const void *v, size_t n)
{
	return param_set(param(s, idx), n > 0 ? v : "", n, 1);
}

static void
pg_reset(struct bp_stmt *bs)
{
	struct pg_stmt *s = PS(bs);

	PQclear(s->res);
	s->res = NULL;
}

/*
 * A connection the server closed (a restart, a failover, an idle timeout) is opened again, and
 * its statements prepared again at their next step. Only between transactions: a transaction
 * the connection held is lost with it and must fail. 0 or -1 (logged).
 */
static int
reconnect(struct pg_db *db)
{
	PGresult *r;
	size_t i;

	PQreset(db->conn);
	if (PQstatus(db->conn) != CONNECTION_OK) {
		bp_err("postgresql: cannot connect again: %s", PQerrorMessage(db->conn));
		return -1;
	}
	for (i = 0; i < db->ncache; i++)
		db->cache[i].prepared = 0;
	if ((r = simple(db, "SET client_min_messages = warning", 1)) == NULL)
		return -1;
	PQclear(r);
	bp_warn("postgresql: connected again after the connection was lost");
	return 0;
}

/* Executes s with its bindings; the result, kept in s->res, or NULL after an error. */
static PGresult *
run(struct pg_stmt *s, int *conflict)
{
	PGconn *c = s->db->conn;
	PGresult *r = NULL;
	int i, tries, again = 0, tx = in_tx(s->db), guard = tx && s->guard;
	ExecStatusType st;

	for (i = 0; i < s->nparams; i++) {
		struct pg_param *p = &s->params[i];

		s->vals[i] = p->isnull ? NULL : p->buf;
		s->lens[i] = p->len;
		/* Bytes go as they are: to a BYTEA column a text's too, which is not hex. */
		s->fmts[i] = !p->isnull && (p->binary || s->ptypes[i] == BYTEA_OID);
	}
	for (tries = 0; ; tries++) {
		if (guard)
			PQclear(simple(s->db, "SAVEPOINT bp_stmt", 1));
		r = PQexecPrepared(c, s->name, s->nparams, s->vals, s->lens, s->fmts, 0);
		st = PQresultStatus(r);
		if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
			if (guard)
				PQclear(simple(s->db, "RELEASE SAVEPOINT bp_stmt", 1));
			break;
		}
		if (!tx && !again++ && PQstatus(c) == CONNECTION_BAD) {
			PQclear(r);
			r = NULL;
			if (reconnect(s->db) == -1 || prepare(s) == -1)
				break;
			continue;
		}
		if (guard)
			PQclear(simple(s->db, "ROLLBACK TO SAVEPOINT bp_stmt", 1));
		*conflict = sqlstate_is(r, "23505");
		/* Outside a transaction the statement is the whole of it: try it again. */
		if (!tx && tries < RETRIES && (sqlstate_is(r, "40001") || sqlstate_is(r, "40P01"))) {
			PQclear(r);
			r = NULL;
			nanosleep(&(struct timespec){ 0, 1000000L << tries }, NULL);
			continue;
		}
		if (!*conflict)
			bp_err("postgresql: %s in: %s", PQresultErrorMessage(r), s->base.sql);
		PQclear(r);
		r = NULL;
		break;
	}
	return r;
}

static enum bp_db_step
pg_step(struct bp_stmt *bs)
{
	struct pg_stmt *s = PS(bs);
	int i;

	if (s->res == NULL) {
		bs->conflict = 0;
		if (!s->prepared && prepare(s) == -1)
			return BP_DB_ERROR;
		if ((s->res = run(s, &bs->conflict)) == NULL)
			return BP_DB_ERROR;
		s->db->changes = (int)strtol(PQcmdTuples(s->res), NULL, 10);
		s->nrows = PQntuples(s->res);
		s->row = -1;
		if (PQnfields(s->res) > s->ncols) {
			struct pg_col *nc = realloc(s->cols, PQnfields(s->res) * sizeof(*nc));

			if (nc == NULL) {
				pg_reset(bs);
				return BP_DB_ERROR;
			}
			memset(nc + s->ncols, 0, (PQnfields(s->res) - s->ncols) * sizeof(*nc));
			s->cols = nc;
			s->ncols = PQnfields(s->res);
		}
		for (i = 0; i < s->ncols; i++)
			s->cols[i].row = -1;
	}
	if (s->row + 1 < s->nrows) {
		s->row++;
		return BP_DB_ROW;
	}
	s->row = s->nrows;
	return BP_DB_DONE;
}

static int
col_ok(struct pg_stmt *s, int col)
{
	return s->res != NULL && s->row >= 0 && s->row < s->nrows && col >= 0 &&
	    col < PQnfields(s->res);
}

static int64_t
pg_col_int(struct bp_stmt *bs, int col)
{
	struct pg_stmt *s = PS(bs);
	const char *v;

	if (!col_ok(s, col))
		return 0;
	v = PQgetvalue(s->res, s->row, col);
	if (PQftype(s->res, col) == BOOL_OID)
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

static int
pg_col_is_null(struct bp_stmt *bs, int col)
{
	struct pg_stmt *s = PS(bs);

	return !col_ok(s, col) || PQgetisnull(s->res, s->row, col);
}

/* A BYTEA column's bytes, decoded from the text form once per row. */
static const void *
bytea(struct pg_stmt *s, int col, size_t *len)
{
	struct pg_col *c = &s->cols[col];
	unsigned char *raw;
	size_t n;

	if (c->row != s->row) {
		raw = PQunescapeBytea((const unsigned char *)PQgetvalue(s->res, s->row, col), &n);
		if (raw == NULL)
			return *len = 0, "";
		if (n + 1 > c->cap) {
			unsigned char *nb = realloc(c->buf, n + 1);

			if (nb == NULL) {
				PQfreemem(raw);
				return *len = 0, "";
			}
			c->buf = nb;
			c->cap = n + 1;
		}
		memcpy(c->buf, raw, n);
		c->buf[n] = '\0';
		c->len = n;
		c->row = s->row;
		PQfreemem(raw);
	}
	*len = c->len;
	return c->buf;
}

static const char *
pg_col_text(struct bp_stmt *bs, int col)
{
	struct pg_stmt *s = PS(bs);
	size_t n;

	if (!col_ok(s, col))
		return "";
	if (PQftype(s->res, col) == BYTEA_OID)
		return bytea(s, col, &n);
	return PQgetvalue(s->res, s->row, col);
}

static const void *
pg_col_blob(struct bp_stmt *bs, int col, size_t *len)
{
	struct pg_stmt *s = PS(bs);

	*len = 0;
	if (!col_ok(s, col) || PQgetisnull(s->res, s->row, col))
		return NULL;
	if (PQftype(s->res, col) == BYTEA_OID)
		return bytea(s, col, len);
	*len = (size_t)PQgetlength(s->res, s->row, col);
	return PQgetvalue(s->res, s->row, col);
}

/* Before a BEGIN: a connection an earlier failure found closed is opened again. */
static int
alive(struct pg_db *db)
{
	return PQstatus(db->conn) == CONNECTION_OK ? 0 : reconnect(db);
}

static int
pg_begin(struct bp_db *db)
{
	if (alive(PG(db)) == -1)
		return -1;
	return pg_exec(db, "BEGIN; " WRITER_LOCK);
}

/* One snapshot for a run of reads, as SQLite's deferred BEGIN gives. */
static int
pg_begin_read(struct bp_db *db)
{
	if (alive(PG(db)) == -1)
		return -1;
	return pg_exec(db, "BEGIN ISOLATION LEVEL REPEATABLE READ");
}

static int
pg_try_begin(struct bp_db *bdb, int64_t max_wait_us)
{
	struct pg_db *db = PG(bdb);
	char sql[160];
	PGresult *r;

	if (alive(db) == -1)
		return -1;
	snprintf(sql, sizeof(sql), "BEGIN; SET LOCAL lock_timeout = %lld; " WRITER_LOCK,
	    (long long)(max_wait_us > 1000 ? (max_wait_us + 999) / 1000 : 1));
	if ((r = simple(db, sql, 0)) == NULL) {
		if (in_tx(db))
			PQclear(simple(db, "ROLLBACK", 0));
		return -1;
	}
	PQclear(r);
	return 0;
}

static int
pg_commit(struct bp_db *bdb)
{
	PGresult *r = simple(PG(bdb), "COMMIT", 1);
	int ok;

	/* COMMIT of a transaction an error aborted succeeds as a ROLLBACK. */
	ok = r != NULL && strcmp(PQcmdStatus(r), "COMMIT") == 0;
	PQclear(r);
	if (r != NULL && !ok)
		bp_err("postgresql: the transaction was rolled back after an error");
	return ok ? 0 : -1;
}

static void
pg_rollback(struct bp_db *bdb)
{
	if (in_tx(PG(bdb)))
		PQclear(simple(PG(bdb), "ROLLBACK", 1));
}

/* The identity value of this connection's last INSERT, as SQLite's last rowid; 0 before any. */
static int64_t
pg_last_id(struct bp_db *bdb)
{
	struct pg_db *db = PG(bdb);
	PGresult *r;
	int64_t v = 0;

	if (in_tx(db))
		PQclear(simple(db, "SAVEPOINT bp_last", 1));
	if ((r = simple(db, "SELECT lastval()", 0)) != NULL)
		v = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else if (in_tx(db))
		PQclear(simple(db, "ROLLBACK TO SAVEPOINT bp_last", 1));
	PQclear(r);
	return v;
}

static int
pg_changes(struct bp_db *db)
{
	return PG(db)->changes;
}

/* Where the WAL is: it moves whenever anyone commits a write, as data_version does. */
static int64_t
pg_data_version(struct bp_db *bdb)
{
	PGresult *r = simple(PG(bdb), "SELECT pg_current_wal_insert_lsn()", 1);
	unsigned long long hi, lo;
	char *end;
	int64_t v = -1;

	if (r != NULL) {
		/* "16/B374D848": the high and low 32 bits in hexadecimal. */
		hi = strtoull(PQgetvalue(r, 0, 0), &end, 16);
		if (*end == '/') {
			lo = strtoull(end + 1, NULL, 16);
			v = (int64_t)((hi << 32) | lo);
		}
	}
	PQclear(r);
	return v;
}

/* NOTIFY bp_CHANNEL: delivered at the commit of the transaction open, or at once. */
static int
pg_notify(struct bp_db *bdb, const char *channel)
{
	char sql[96];
	PGresult *r;

	if (snprintf(sql, sizeof(sql), "NOTIFY bp_%s", channel) >= (int)sizeof(sql) ||
	    (r = simple(PG(bdb), sql, 1)) == NULL)
		return -1;
	PQclear(r);
	return 0;
}

const struct bp_db_driver bp_db_pg = {
	.name = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.version = pg_version,
	.migrate_one = pg_migrate_one,
	.stmt = pg_stmt,
	.exec = pg_exec,
	.begin = pg_begin,
	.begin_read = pg_begin_read,
	.try_begin = pg_try_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.last_id = pg_last_id,
	.data_version = pg_data_version,
	.changes = pg_changes,
	.notify = pg_notify,
	.bind_int = pg_bind_int,
	.bind_text = pg_bind_text,
	.bind_blob = pg_bind_blob,
	.bind_null = pg_bind_null,
	.step = pg_step,
	.reset = pg_reset,
	.col_int = pg_col_int,
	.col_text = pg_col_text,
	.col_is_null = pg_col_is_null,
	.col_blob = pg_col_blob,
};
