/*
 * lib/core/db.c and its drivers: what every caller relies on, the same on SQLite and on
 * PostgreSQL (scripts/test.sh runs this suite on both, BLOCKPORT_TEST_PG): the migrations from
 * an empty database, placeholders, identity ids, conflicts that leave a transaction usable,
 * bytes and 64-bit integers as they were stored, and one writer at a time.
 */
#include <stdint.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "core/db.h"
#include "core/db_wake.h"
#include "unit.h"
#include "unit_db.h"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "dbengine") == -1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static int64_t
count_of(struct bp_db *db, const char *sql)
{
	struct bp_stmt *st = bp_db_stmt(db, sql);
	int64_t n = -1;

	if (st != NULL && bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return n;
}

/* From an empty database to the last migration, then opened as a program opens it. */
static void
test_migrations(void)
{
	struct bp_db *again;

	CU_ASSERT_EQUAL(bp_db_version(u.db), bp_db_schema_latest());
	CU_ASSERT(bp_db_schema_latest() >= 14);
	/* A table of the first migration and of the last: both there, empty. */
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts"), 0);
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM gas_budget_days"), 0);
	/* 010's seeded row, and 013's column added to an existing table. */
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM rpc_cache_size WHERE id = 1"), 1);
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM webhook_usage WHERE recorded = 0"),
	    0);
	/* Without migrate: the schema is current. Migrating again applies nothing. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(again = bp_db_open(u.path, 0));
	CU_ASSERT_EQUAL(bp_db_version(again), bp_db_schema_latest());
	bp_db_close(again);
	CU_ASSERT_PTR_NOT_NULL_FATAL(again = bp_db_open(u.path, 1));
	CU_ASSERT_EQUAL(bp_db_version(again), bp_db_schema_latest());
	bp_db_close(again);
}

/* ?N reused, a bare ? after it, a '?' in a string; last id and changes. */
static void
test_statements(void)
{
	static const char ins[] = "INSERT INTO accounts (email, plan, created_at)"
	    " VALUES (?, ?2 || '?', ?3)";
	static const char sel[] = "SELECT id, plan, created_at FROM accounts WHERE email = ?1"
	    " AND (?2 IS NULL OR plan = ?2) AND created_at > ?";
	static const char upd[] = "UPDATE accounts SET plan = ? WHERE created_at >= ?";
	struct bp_stmt *st;
	int64_t id1, id2, big = INT64_C(4611686018427387904);	/* 2^62 */

	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "a@example.test");
	bp_stmt_text(st, 2, "free");
	bp_stmt_int(st, 3, big);
	CU_ASSERT_EQUAL_FATAL(bp_stmt_run(st), 0);
	CU_ASSERT_EQUAL(bp_db_changes(u.db), 1);
	id1 = bp_db_last_id(u.db);
	CU_ASSERT(id1 > 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "b@example.test");
	bp_stmt_text(st, 2, "pro");
	bp_stmt_int(st, 3, 5);
	CU_ASSERT_EQUAL_FATAL(bp_stmt_run(st), 0);
	id2 = bp_db_last_id(u.db);
	CU_ASSERT(id2 > id1);

	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, sel));
	bp_stmt_text(st, 1, "a@example.test");
	bp_stmt_null(st, 2);
	bp_stmt_int(st, 3, 0);
	CU_ASSERT_EQUAL_FATAL(bp_stmt_step(st), BP_DB_ROW);
	CU_ASSERT_EQUAL(bp_col_int(st, 0), id1);
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 1), "free?");
	CU_ASSERT_EQUAL(bp_col_int(st, 2), big);
	CU_ASSERT_EQUAL(bp_stmt_step(st), BP_DB_DONE);
	bp_stmt_reset(st);
	/* The same statement again, the NULL now a text: no row of that plan. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, sel));
	bp_stmt_text(st, 1, "a@example.test");
	bp_stmt_text(st, 2, "pro?");
	bp_stmt_int(st, 3, 0);
	CU_ASSERT_EQUAL(bp_stmt_step(st), BP_DB_DONE);
	bp_stmt_reset(st);

	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, upd));
	bp_stmt_text(st, 1, "scale");
	bp_stmt_int(st, 2, 5);
	CU_ASSERT_EQUAL(bp_stmt_run(st), 0);
	CU_ASSERT_EQUAL(bp_db_changes(u.db), 2);
}

/* A conflict in a transaction is reported and the transaction goes on, as on SQLite. */
static void
test_conflict_in_tx(void)
{
	static const char ins[] = "INSERT INTO accounts (email, plan, created_at) VALUES (?, 'free', 1)";
	struct bp_stmt *st;

	CU_ASSERT_EQUAL_FATAL(bp_db_begin(u.db), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "c@example.test");
	CU_ASSERT_EQUAL(bp_stmt_run(st), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "c@example.test");
	CU_ASSERT_EQUAL(bp_stmt_step(st), BP_DB_ERROR);
	CU_ASSERT(bp_stmt_was_conflict(st));
	bp_stmt_reset(st);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "d@example.test");
	CU_ASSERT_EQUAL(bp_stmt_run(st), 0);
	CU_ASSERT_EQUAL(bp_db_commit(u.db), 0);
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts WHERE email IN"
	    " ('c@example.test', 'd@example.test')"), 2);
	/* A rollback takes back what the transaction wrote. */
	CU_ASSERT_EQUAL_FATAL(bp_db_begin(u.db), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_text(st, 1, "e@example.test");
	CU_ASSERT_EQUAL(bp_stmt_run(st), 0);
	bp_db_rollback(u.db);
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts WHERE email ="
	    " 'e@example.test'"), 0);
}

/* Bytes with a NUL and a backslash, through a blob and through a text, come back whole. */
static void
test_bytes(void)
{
	static const char ins[] = "INSERT INTO rpc_cache (key, network, method, result, size,"
	    " expires_at, stored_at) VALUES (?, 'e.d', 'm', ?, 0, 0, 0)";
	static const char sel[] = "SELECT key, result FROM rpc_cache WHERE key = ?";
	static const unsigned char key[] = { 0x00, 0x5c, 0xff, 0x27, 0x00 };
	struct bp_stmt *st;
	const void *p;
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, ins));
	bp_stmt_blob(st, 1, key, sizeof(key));
	bp_stmt_text(st, 2, "{\"a\":\"\\\\x00\"}");
	CU_ASSERT_EQUAL_FATAL(bp_stmt_run(st), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(u.db, sel));
	bp_stmt_blob(st, 1, key, sizeof(key));
	CU_ASSERT_EQUAL_FATAL(bp_stmt_step(st), BP_DB_ROW);
	p = bp_col_blob(st, 0, &n);
	CU_ASSERT_EQUAL(n, sizeof(key));
	CU_ASSERT(p != NULL && memcmp(p, key, sizeof(key)) == 0);
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 1), "{\"a\":\"\\\\x00\"}");
	CU_ASSERT_FALSE(bp_col_is_null(st, 1));
	bp_stmt_reset(st);
}

/* One writer at a time: a second connection's bounded begin gives up while one is open. */
static void
test_one_writer(void)
{
	struct bp_db *other;

	CU_ASSERT_PTR_NOT_NULL_FATAL(other = bp_db_open(u.path, 0));
	CU_ASSERT_EQUAL_FATAL(bp_db_begin(u.db), 0);
	CU_ASSERT_EQUAL(bp_db_try_begin(other, 20000), -1);
	CU_ASSERT_EQUAL(bp_db_commit(u.db), 0);
	CU_ASSERT_EQUAL(bp_db_try_begin(other, 20000), 0);
	CU_ASSERT_EQUAL(bp_db_commit(other), 0);
	/* A commit moves the data version another connection sees. */
	{
		int64_t v = bp_db_data_version(u.db);

		CU_ASSERT(v != -1);
		CU_ASSERT_EQUAL(bp_db_exec(other, "UPDATE accounts SET plan = 'free'"), 0);
		CU_ASSERT(bp_db_data_version(u.db) != v);
	}
	bp_db_close(other);
}

/*
 * PostgreSQL: a connection the server ended (a restart, a failover) is opened again at the next
 * statement outside a transaction, its statements prepared again. SQLite has no connection.
 */
static void
terminate(int64_t pid)
{
	struct bp_db *other;
	struct bp_stmt *st;

	/* With a timeout, the call returns once the backend is gone. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(other = bp_db_open(u.path, 0));
	CU_ASSERT_PTR_NOT_NULL_FATAL(st = bp_db_stmt(other, "SELECT pg_terminate_backend(?, 5000)"));
	bp_stmt_int(st, 1, pid);
	CU_ASSERT_EQUAL(bp_stmt_step(st), BP_DB_ROW);
	bp_stmt_reset(st);
	bp_db_close(other);
}

static void
test_reconnect(void)
{
	int64_t pid;

	if (u.schema[0] == '\0')
		return;
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts WHERE id > 0"), 4);
	CU_ASSERT_FATAL((pid = count_of(u.db, "SELECT pg_backend_pid()")) > 0);
	terminate(pid);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts WHERE id > 0"), 4);
	CU_ASSERT_FATAL((pid = count_of(u.db, "SELECT pg_backend_pid()")) > 0);
	bp_unit_log_end();
	/* Lost again, then found lost by a failed statement: the next BEGIN connects again. */
	terminate(pid);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_db_begin(u.db), -1);		/* the BEGIN finds it closed */
	CU_ASSERT_EQUAL(bp_db_begin(u.db), 0);
	CU_ASSERT_EQUAL(count_of(u.db, "SELECT count(*) FROM accounts WHERE id > 0"), 4);
	CU_ASSERT_EQUAL(bp_db_commit(u.db), 0);
	bp_unit_log_end();
}

/*
 * A wake-up from one connection reaches a listener of the same database, and only on its
 * channel: the wake files on SQLite, NOTIFY/LISTEN on PostgreSQL (what ws/subscribe on another
 * head waits on).
 */
static void
test_wake(void)
{
	struct bp_db_wake *w;

	CU_ASSERT_PTR_NOT_NULL_FATAL(w = bp_db_wake_open(u.path));
	CU_ASSERT_EQUAL(bp_db_wake_listen(w, BP_DB_WAKE_HEADS), 0);
	CU_ASSERT(bp_db_wake_fd(w) >= 0);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 0), 0);
	CU_ASSERT_EQUAL(bp_db_notify(u.db, BP_DB_WAKE_PENDING), 0);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 200), 0);
	CU_ASSERT_EQUAL(bp_db_notify(u.db, BP_DB_WAKE_HEADS), 0);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 5000), 1);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 0), 0);
	/* Inside a transaction: at the commit (PostgreSQL), or at once (a file): woken either way. */
	CU_ASSERT_EQUAL_FATAL(bp_db_begin(u.db), 0);
	CU_ASSERT_EQUAL(bp_db_notify(u.db, BP_DB_WAKE_HEADS), 0);
	CU_ASSERT_EQUAL(bp_db_commit(u.db), 0);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 5000), 1);
	bp_db_wake_close(w);
}

BP_UNIT_SUITE(db_engine, setup, teardown,
	{ "a wake-up reaches a listener, on its channel only", test_wake },
	{ "migrations from an empty database", test_migrations },
	{ "placeholders, last id, changes, 64-bit integers", test_statements },
	{ "a conflict in a transaction, commit and rollback", test_conflict_in_tx },
	{ "bytes through blobs and texts", test_bytes },
	{ "one writer at a time; data version", test_one_writer },
	{ "a lost connection opened again (PostgreSQL)", test_reconnect },
)
