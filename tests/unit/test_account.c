/*
 * lib/core/account.c on a fresh database: accounts created (a taken e-mail is 0, not an error),
 * found by id or e-mail, moved to another plan and listed with their active keys; keys stored
 * as their SHA-256 and prefix only, listed per account or all, revoked once; a database without
 * the tables fails as an error. bp_auth_lookup reading what this module wrote: test_auth.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/account.h"
#include "core/auth.h"
#include "core/db.h"
#include "core/util.h"
#include "unit.h"
#include "unit_db.h"

#define KEY_A	"blockport_test_0123456789abcdef0123456789abcdef01234567"
#define KEY_B	"blockport_live_89abcdef0123456789abcdef0123456789abcdef"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "account");
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

/* What the callbacks saw: the rows' ids, and a line of the last row. */
struct seen {
	int	 n;
	int	 stop_after;	/* 0: never stop */
	int64_t	 ids[16];
	char	 last[512];
};

static int
see_account(const struct bp_account_row *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < (int)BP_NITEMS(s->ids))
		s->ids[s->n] = r->id;
	snprintf(s->last, sizeof(s->last), "%s %s %lld", r->email, r->plan,
	    (long long)r->active_keys);
	s->n++;
	return s->stop_after != 0 && s->n == s->stop_after;
}

static int
see_key(const struct bp_account_key_row *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < (int)BP_NITEMS(s->ids))
		s->ids[s->n] = r->id;
	snprintf(s->last, sizeof(s->last), "%s %s %s [%s] [%s] %s", r->email, r->prefix, r->kind,
	    r->scopes, r->name, r->revoked ? "revoked" : "active");
	s->n++;
	CU_ASSERT(r->created_at > 0);
	return s->stop_after != 0 && s->n == s->stop_after;
}

static void
test_accounts(void)
{
	struct bp_account a;
	struct seen s;
	char idtext[32];
	int64_t one, two;

	one = bp_account_create(u.db, "one@example.test", "free");
	two = bp_account_create(u.db, "two@example.test", "growth");
	CU_ASSERT(one > 0);
	CU_ASSERT(two > one);
	/* A taken e-mail is its own answer, and not logged as a database error. */
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_account_create(u.db, "one@example.test", "growth"), 0);
	CU_ASSERT_STRING_EQUAL(bp_unit_log_end(), "");

	memset(&a, 0xaa, sizeof(a));
	CU_ASSERT_EQUAL(bp_account_find(u.db, "two@example.test", &a), 1);
	CU_ASSERT_EQUAL(a.id, two);
	CU_ASSERT_STRING_EQUAL(a.email, "two@example.test");
	CU_ASSERT_STRING_EQUAL(a.plan, "growth");
	snprintf(idtext, sizeof(idtext), "%lld", (long long)one);
	CU_ASSERT_EQUAL(bp_account_find(u.db, idtext, &a), 1);
	CU_ASSERT_STRING_EQUAL(a.email, "one@example.test");
	CU_ASSERT_EQUAL(bp_account_find(u.db, idtext, NULL), 1);
	CU_ASSERT_EQUAL(bp_account_find(u.db, "9999", &a), 0);
	CU_ASSERT_EQUAL(bp_account_find(u.db, "nobody@example.test", &a), 0);
	CU_ASSERT_EQUAL(bp_account_find(u.db, "", &a), 0);
	CU_ASSERT_EQUAL(a.id, one);			/* untouched when not found */
	/* By id, as the other domains read it (webhook quotas and e-mails). */
	CU_ASSERT_EQUAL(bp_account_get(u.db, two, &a), 1);
	CU_ASSERT_EQUAL(a.id, two);
	CU_ASSERT_STRING_EQUAL(a.email, "two@example.test");
	CU_ASSERT_STRING_EQUAL(a.plan, "growth");
	CU_ASSERT_EQUAL(bp_account_get(u.db, two + 100, &a), 0);
	CU_ASSERT_EQUAL(a.id, two);			/* untouched when not found */

	CU_ASSERT_EQUAL(bp_account_set_plan(u.db, one, "enterprise"), 0);
	CU_ASSERT_EQUAL(bp_account_find(u.db, "one@example.test", &a), 1);
	CU_ASSERT_STRING_EQUAL(a.plan, "enterprise");

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_account_each(u.db, see_account, &s), 2);
	CU_ASSERT_EQUAL(s.ids[0], one);
	CU_ASSERT_EQUAL(s.ids[1], two);
	CU_ASSERT_STRING_EQUAL(s.last, "two@example.test growth 0");
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	CU_ASSERT_EQUAL(bp_account_each(u.db, see_account, &s), 1);
	CU_ASSERT_STRING_EQUAL(s.last, "one@example.test enterprise 0");
}

static void
test_keys(void)
{
	static const char sql[] = "SELECT key_hash, prefix, kind, scopes, name FROM api_keys"
	    " WHERE id = ?";
	unsigned char want[32];
	const void *hash;
	struct bp_stmt *st;
	struct seen s;
	size_t len;
	int64_t one = bp_account_create(u.db, "keys1@example.test", "free");
	int64_t two = bp_account_create(u.db, "keys2@example.test", "free");
	int64_t ka, kb, kc;

	CU_ASSERT_FATAL(one > 0 && two > 0);
	/* Not the shape of a key: nothing is stored. */
	CU_ASSERT_EQUAL(bp_account_key_add(u.db, one, "blockport_test_xyz", "", ""), -1);
	CU_ASSERT_EQUAL(bp_account_key_add(u.db, one, KEY_A "0", "", ""), -1);
	ka = bp_account_key_add(u.db, one, KEY_A, "rpc:read,data:read", "backend");
	kb = bp_account_key_add(u.db, two, KEY_B, "", "");
	CU_ASSERT(ka > 0);
	CU_ASSERT(kb > ka);
	/* The same key twice: key_hash is UNIQUE. */
	CU_ASSERT_EQUAL(bp_account_key_add(u.db, two, KEY_A, "", ""), -1);

	/* Only the SHA-256 and the first 19 characters are stored; the kind comes from the text. */
	st = bp_db_stmt(u.db, sql);
	CU_ASSERT_FATAL(st != NULL);
	bp_stmt_int(st, 1, ka);
	CU_ASSERT_FATAL(bp_stmt_step(st) == BP_DB_ROW);
	bp_sha256(KEY_A, strlen(KEY_A), want);
	hash = bp_col_blob(st, 0, &len);
	CU_ASSERT_EQUAL(len, 32);
	CU_ASSERT(hash != NULL && memcmp(hash, want, 32) == 0);
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 1), "blockport_test_0123");
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 2), "test");
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 3), "rpc:read,data:read");
	CU_ASSERT_STRING_EQUAL(bp_col_text(st, 4), "backend");
	bp_stmt_reset(st);

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_account_each_key(u.db, two, see_key, &s), 1);
	CU_ASSERT_STRING_EQUAL(s.last, "keys2@example.test blockport_live_89ab live [] [] active");
	memset(&s, 0, sizeof(s));
	CU_ASSERT(bp_account_each_key(u.db, -1, see_key, &s) >= 2);	/* every account's */
	CU_ASSERT_EQUAL(s.ids[0], ka);
	CU_ASSERT_EQUAL(s.ids[1], kb);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_account_each_key(u.db, 9999, see_key, &s), 0);

	/* Revoked once; the second time, and an unknown id, change nothing. */
	kc = bp_account_key_add(u.db, one, "blockport_live_" "ffffffffffffffffffffffffffffffffffffffff",
	    "gas:manage", "");
	CU_ASSERT(kc > kb);
	CU_ASSERT_EQUAL(bp_account_key_revoke(u.db, ka), 1);
	CU_ASSERT_EQUAL(bp_account_key_revoke(u.db, ka), 0);
	CU_ASSERT_EQUAL(bp_account_key_revoke(u.db, 9999), 0);
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	CU_ASSERT_EQUAL(bp_account_each_key(u.db, one, see_key, &s), 1);
	CU_ASSERT_STRING_EQUAL(s.last, "keys1@example.test blockport_test_0123 test"
	    " [rpc:read,data:read] [backend] revoked");
	/* The account list counts the active keys only. */
	memset(&s, 0, sizeof(s));
	CU_ASSERT(bp_account_each(u.db, see_account, &s) >= 2);
	CU_ASSERT_STRING_EQUAL(s.last, "keys2@example.test free 1");
}

/* Last: the tables are dropped, and every call fails as an error, not as "none". */
static void
test_db_error(void)
{
	struct bp_account a;
	struct seen s;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL_FATAL(bp_unit_db_drop(&u, "api_keys"), 0);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_account_key_add(u.db, 1, KEY_B, "", ""), -1);
	CU_ASSERT_EQUAL(bp_account_each_key(u.db, -1, see_key, &s), -1);
	CU_ASSERT_EQUAL(bp_account_key_revoke(u.db, 1), -1);
	CU_ASSERT_EQUAL(bp_account_each(u.db, see_account, &s), -1);
	CU_ASSERT(bp_unit_db_missing(&u, bp_unit_log_end(), "api_keys"));
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT_EQUAL_FATAL(bp_unit_db_drop(&u, "accounts"), 0);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_account_find(u.db, "1", &a), -1);
	CU_ASSERT_EQUAL(bp_account_create(u.db, "three@example.test", "free"), -1);
	CU_ASSERT_EQUAL(bp_account_set_plan(u.db, 1, "free"), -1);
	CU_ASSERT(bp_unit_db_missing(&u, bp_unit_log_end(), "accounts"));
}

BP_UNIT_SUITE(account, setup, teardown,
    { "accounts: created, taken e-mail, found, plan moved, listed", test_accounts },
    { "keys: hash and prefix only, listed, revoked once", test_keys },
    { "database errors", test_db_error })
