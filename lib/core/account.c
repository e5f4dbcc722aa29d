/*
 * The accounts and api_keys tables (account.h). Every statement that writes them is here; the
 * one other reader is bp_auth_lookup in auth.c.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "auth.h"
#include "db.h"
#include "util.h"

/* Steps st, bound by the caller, and copies its row (id, email, plan) into *out (may be NULL). */
static int
account_copy(struct bp_stmt *st, struct bp_account *out)
{
	enum bp_db_step step;

	if ((step = bp_stmt_step(st)) == BP_DB_ROW && out != NULL) {
		out->id = bp_col_int(st, 0);
		bp_strlcpy(out->email, bp_col_text(st, 1), sizeof(out->email));
		bp_strlcpy(out->plan, bp_col_text(st, 2), sizeof(out->plan));
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : step == BP_DB_ROW;
}

int
bp_account_find(struct bp_db *db, const char *who, struct bp_account *out)
{
	static const char sql[] = "SELECT id, email, plan FROM accounts WHERE id = ? OR email = ?";
	struct bp_stmt *st;
	int64_t n;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	/* Not a number: an id no row has, so only the e-mail can match. */
	bp_stmt_int(st, 1, bp_parse_int64(who, 1, INT64_MAX, &n) == 0 ? n : -1);
	bp_stmt_text(st, 2, who);
	return account_copy(st, out);
}

int
bp_account_get(struct bp_db *db, int64_t id, struct bp_account *out)
{
	static const char sql[] = "SELECT id, email, plan FROM accounts WHERE id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, id);
	return account_copy(st, out);
}

int64_t
bp_account_create(struct bp_db *db, const char *email, const char *plan)
{
	static const char sql[] =
	    "INSERT INTO accounts (email, plan, created_at) VALUES (?, ?, ?)";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, email);
	bp_stmt_text(st, 2, plan);
	bp_stmt_int(st, 3, time(NULL));
	if (bp_stmt_run(st) == -1)
		return bp_stmt_was_conflict(st) ? 0 : -1;	/* email is UNIQUE */
	return bp_db_last_id(db);
}

int
bp_account_set_plan(struct bp_db *db, int64_t id, const char *plan)
{
	static const char sql[] = "UPDATE accounts SET plan = ? WHERE id = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, plan);
	bp_stmt_int(st, 2, id);
	return bp_stmt_run(st);
}

/* The caller's callback of bp_account_each or bp_account_each_key, for the row functions. */
struct each {
	int	(*account)(const struct bp_account_row *, void *);
	int	(*key)(const struct bp_account_key_row *, void *);
	void	*arg;
};

static int
account_row(struct bp_stmt *st, void *arg)
{
	const struct each *e = arg;
	struct bp_account_row r;

	r.id = bp_col_int(st, 0);
	r.email = bp_col_text(st, 1);
	r.plan = bp_col_text(st, 2);
	r.created_at = bp_col_int(st, 3);
	r.active_keys = bp_col_int(st, 4);
	return e->account(&r, e->arg);
}

int
bp_account_each(struct bp_db *db, int (*fn)(const struct bp_account_row *, void *), void *arg)
{
	static const char sql[] = "SELECT a.id, a.email, a.plan, a.created_at,"
	    " (SELECT count(*) FROM api_keys k WHERE k.account_id = a.id"
	    " AND k.revoked_at IS NULL) FROM accounts a ORDER BY a.id";
	struct each e = { fn, NULL, arg };
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	return bp_stmt_each(st, account_row, &e);
}

int64_t
bp_account_key_add(struct bp_db *db, int64_t account_id, const char *key, const char *scopes,
    const char *name)
{
	static const char sql[] = "INSERT INTO api_keys (account_id, key_hash, prefix, kind,"
	    " scopes, name, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
	char prefix[BP_ACCOUNT_KEY_PREFIX_LEN + 1];
	unsigned char hash[32];
	struct bp_stmt *st;
	int test;

	if ((test = bp_key_shape(key)) < 0)
		return -1;
	bp_sha256(key, strlen(key), hash);
	snprintf(prefix, sizeof(prefix), "%.*s", BP_ACCOUNT_KEY_PREFIX_LEN, key);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, account_id);
	bp_stmt_blob(st, 2, hash, sizeof(hash));
	bp_stmt_text(st, 3, prefix);
	bp_stmt_text(st, 4, test ? "test" : "live");
	bp_stmt_text(st, 5, scopes);
	bp_stmt_text(st, 6, name);
	bp_stmt_int(st, 7, time(NULL));
	if (bp_stmt_run(st) == -1)
		return -1;
	return bp_db_last_id(db);
}

static int
key_row(struct bp_stmt *st, void *arg)
{
	const struct each *e = arg;
	struct bp_account_key_row r;

	r.id = bp_col_int(st, 0);
	r.email = bp_col_text(st, 1);
	r.prefix = bp_col_text(st, 2);
	r.kind = bp_col_text(st, 3);
	r.scopes = bp_col_text(st, 4);
	r.name = bp_col_text(st, 5);
	r.created_at = bp_col_int(st, 6);
	r.revoked = !bp_col_is_null(st, 7);
	return e->key(&r, e->arg);
}

int
bp_account_each_key(struct bp_db *db, int64_t account_id,
    int (*fn)(const struct bp_account_key_row *, void *), void *arg)
{
	static const char sql[] = "SELECT k.id, a.email, k.prefix, k.kind, k.scopes, k.name,"
	    " k.created_at, k.revoked_at FROM api_keys k JOIN accounts a"
	    " ON a.id = k.account_id WHERE ?1 < 0 OR k.account_id = ?1 ORDER BY k.id";
	struct each e = { NULL, fn, arg };
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_int(st, 1, account_id) == -1)
		return -1;
	return bp_stmt_each(st, key_row, &e);
}

int
bp_account_key_revoke(struct bp_db *db, int64_t id)
{
	static const char sql[] = "UPDATE api_keys SET revoked_at = ?"
	    " WHERE id = ? AND revoked_at IS NULL";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_int(st, 1, time(NULL));
	bp_stmt_int(st, 2, id);
	if (bp_stmt_run(st) == -1)
		return -1;
	/* Already revoked, or no such key: nothing changed either way. */
	return bp_db_changes(db) == 1;
}
