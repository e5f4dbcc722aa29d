/*
 * lib/core/auth.c: scope lists (parsed and formatted, hostile rows), the shape of a key, generated
 * keys, and lookups against a temporary database made with bp_db_open(path, 1) and filled through
 * lib/db: found, unknown, malformed, revoked, and a cache that bp_limits_bump_generation drops;
 * keys that lib/core/account.c wrote, as the admin CLI does, found with their kind, scopes and plan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/account.h"
#include "core/admit.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/db.h"
#include "core/limits.h"
#include "core/util.h"
#include "unit.h"

static char dir[] = "/tmp/bp-unit-auth.XXXXXX";
static char ini[sizeof(dir) + 32];
static struct bp_config *cfg;
static struct bp_db *db;
static struct bp_limits *lim;
static struct bp_auth_cache *kc;

static int
setup(void)
{
	char err[512];
	FILE *fp;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(ini, sizeof(ini), "%s/blockport.ini", dir);
	if ((fp = fopen(ini, "w")) == NULL)
		return 1;
	fprintf(fp, "[server]\ndatabase = blockport.db\nkey_cache_seconds = 60\nanon_rps = 2\n"
	    "[plan gold]\nrps = 7\nrpd = 70\ncups = 700\nburst = 0\n"
	    "[plan unlimited]\nrps = 0\nrpd = 0\ncups = 0\n");
	fclose(fp);
	if ((cfg = bp_config_load(ini, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if ((db = bp_db_open(cfg->database, 1)) == NULL ||
	    (lim = bp_limits_open(cfg->limits_file)) == NULL || (kc = bp_auth_cache_new()) == NULL)
		return 1;
	return 0;
}

static int
teardown(void)
{
	char p[4096 + 8];

	bp_auth_cache_free(kc);
	bp_limits_close(lim);
	bp_db_close(db);
	snprintf(p, sizeof(p), "%s-wal", cfg->database);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", cfg->database);
	unlink(p);
	unlink(cfg->database);
	unlink(cfg->limits_file);
	unlink(ini);
	rmdir(dir);
	bp_config_free(cfg);
	return 0;
}

static int64_t
add_account(const char *plan)
{
	static const char sql[] =
	    "INSERT INTO accounts (email, plan, created_at) VALUES (?, ?, 0)";
	static int n;
	struct bp_stmt *st = bp_db_stmt(db, sql);
	char email[64];

	CU_ASSERT_FATAL(st != NULL);
	snprintf(email, sizeof(email), "a%d@example.test", ++n);
	bp_stmt_text(st, 1, email);
	bp_stmt_text(st, 2, plan);
	CU_ASSERT_FATAL(bp_stmt_step(st) == BP_DB_DONE);
	return bp_db_last_id(db);
}

/* Stores key for account as the admin CLI does (its SHA-256 only); returns the key id. */
static int64_t
add_key(int64_t account, const char *key, const char *kind, const char *scopes)
{
	static const char sql[] = "INSERT INTO api_keys (account_id, key_hash, prefix, kind,"
	    " scopes, name, created_at) VALUES (?, ?, ?, ?, ?, '', 0)";
	struct bp_stmt *st = bp_db_stmt(db, sql);
	unsigned char hash[32];

	CU_ASSERT_FATAL(st != NULL);
	bp_sha256(key, strlen(key), hash);
	bp_stmt_int(st, 1, account);
	bp_stmt_blob(st, 2, hash, sizeof(hash));
	bp_stmt_text(st, 3, "blockport_x");
	bp_stmt_text(st, 4, kind);
	bp_stmt_text(st, 5, scopes);
	CU_ASSERT_FATAL(bp_stmt_step(st) == BP_DB_DONE);
	return bp_db_last_id(db);
}

static void
revoke_key(int64_t id)
{
	static const char sql[] = "UPDATE api_keys SET revoked_at = 1 WHERE id = ?";
	struct bp_stmt *st = bp_db_stmt(db, sql);

	CU_ASSERT_FATAL(st != NULL);
	bp_stmt_int(st, 1, id);
	CU_ASSERT_FATAL(bp_stmt_step(st) == BP_DB_DONE);
}

/* A fresh key of the given kind. */
static void
gen(int test, char key[BP_KEY_LEN + 1])
{
	CU_ASSERT_FATAL(bp_key_generate(test, key, BP_KEY_LEN + 1) == 0);
}

#define ALL	BP_SCOPES_ALL
#define B(s)	BP_SCOPE_BIT(BP_SCOPE_##s)

struct srow {
	const char	*s;
	int		 ok;
	unsigned	 mask;
	const char	*bad;
};

static const struct srow srows[] = {
	{ "", 1, ALL, NULL },					/* no list: every scope */
	{ "rpc:read", 1, B(RPC_READ), NULL },
	{ "data:read", 1, B(DATA_READ), NULL },
	{ "rpc:read,rpc:write", 1, B(RPC_READ) | B(RPC_WRITE), NULL },
	{ "bundler:send,rpc:read", 1, B(BUNDLER) | B(RPC_READ), NULL },
	{ "rpc:read,rpc:read", 1, B(RPC_READ), NULL },
	{ "rpc:read,rpc:write,data:read,wallets:manage,webhooks:manage,gas:manage,bundler:send",
	    1, ALL, NULL },
	{ "rpc:reads", 0, 0, "rpc:reads" },
	{ "rpc:rea", 0, 0, "rpc:rea" },
	{ "RPC:READ", 0, 0, "RPC:READ" },
	{ " rpc:read", 0, 0, " rpc:read" },
	{ "rpc:read ", 0, 0, "rpc:read " },
	{ "rpc:read,", 0, 0, "(empty)" },
	{ ",rpc:read", 0, 0, "" },
	{ "rpc:read,,data:read", 0, 0, "" },
	{ ",", 0, 0, "" },
	{ "rpc:read;data:read", 0, 0, "rpc:read;data:read" },
	{ "rpc:read\xff", 0, 0, "rpc:read\xff" },
	{ "data:read,admin", 0, 0, "admin" },
	{ "*", 0, 0, "*" },
};

static void
test_scopes_parse(void)
{
	static char longlist[300];
	size_t i;

	for (i = 0; i < BP_NITEMS(srows); i++) {
		unsigned mask = 12345;
		char bad[80] = "untouched";
		int rc = bp_scopes_parse(srows[i].s, &mask, bad, sizeof(bad));

		CU_ASSERT_EQUAL(rc, srows[i].ok ? 0 : -1);
		if (srows[i].ok) {
			CU_ASSERT_EQUAL(mask, srows[i].mask);
		} else {
			CU_ASSERT_EQUAL(mask, 12345);	/* untouched on failure */
			CU_ASSERT_STRING_EQUAL(bad, srows[i].bad);
		}
		if (rc != (srows[i].ok ? 0 : -1))
			fprintf(stderr, "scope row %zu (%s): %d\n", i, srows[i].s, rc);
	}
	/* The bad entry is cut to 64 characters; no buffer for it is fine too. */
	memset(longlist, 'x', sizeof(longlist) - 1);
	{
		char bad[80];
		unsigned mask;

		CU_ASSERT_EQUAL(bp_scopes_parse(longlist, &mask, bad, sizeof(bad)), -1);
		CU_ASSERT_EQUAL(strlen(bad), 64);
		CU_ASSERT_EQUAL(bp_scopes_parse(longlist, &mask, NULL, 0), -1);
		CU_ASSERT_EQUAL(bp_scopes_parse(longlist, &mask, bad, 4), -1);
		CU_ASSERT_STRING_EQUAL(bad, "xxx");
	}
	CU_ASSERT_STRING_EQUAL(bp_scope_name(BP_SCOPE_RPC_READ), "rpc:read");
	CU_ASSERT_STRING_EQUAL(bp_scope_name(BP_SCOPE_BUNDLER), "bundler:send");
	CU_ASSERT_PTR_NULL(bp_scope_name(BP_SCOPE__MAX));
	CU_ASSERT_PTR_NULL(bp_scope_name((enum bp_scope)-1));
}

static void
test_scopes_format(void)
{
	char buf[256], small[20];
	unsigned m;

	bp_scopes_format(ALL, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "");			/* every scope: the empty list */
	bp_scopes_format(ALL | (1u << 20), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "");
	bp_scopes_format(B(DATA_READ) | B(RPC_READ), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "rpc:read,data:read");	/* in enum order */
	bp_scopes_format(B(BUNDLER) | (1u << 20), buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "bundler:send");		/* unknown bits are dropped */
	/* Every mask goes round: format, then parse, gives it back. */
	for (m = 1; m < ALL; m++) {
		unsigned back = 0;

		bp_scopes_format(m, buf, sizeof(buf));
		CU_ASSERT_EQUAL(bp_scopes_parse(buf, &back, NULL, 0), 0);
		CU_ASSERT_EQUAL(back, m);
	}
	/* A buffer too small keeps whole names only, never half of one. */
	bp_scopes_format(B(RPC_READ) | B(RPC_WRITE) | B(DATA_READ), small, sizeof(small));
	CU_ASSERT_STRING_EQUAL(small, "rpc:read,rpc:write");
	bp_scopes_format(B(RPC_READ) | B(RPC_WRITE), small, 12);
	CU_ASSERT_STRING_EQUAL(small, "rpc:read");
	bp_scopes_format(B(WEBHOOKS), small, 8);
	CU_ASSERT_STRING_EQUAL(small, "");
}

struct krow {
	const char	*key;
	int		 shape;		/* 1 test, 0 live, -1 neither */
};

#define HEX40	"0123456789abcdef0123456789abcdef01234567"

static const struct krow krows[] = {
	{ "blockport_test_" HEX40, 1 },
	{ "blockport_live_" HEX40, 0 },
	{ "blockport_live_" "0123456789ABCDEF0123456789abcdef01234567", -1 },	/* upper case */
	{ "blockport_live_" "0123456789abcdef0123456789abcdef0123456", -1 },	/* 39 */
	{ "blockport_live_" HEX40 "8", -1 },					/* 41 */
	{ "blockport_live_" HEX40 "\n", -1 },
	{ "blockport_live_" HEX40 " ", -1 },
	{ "blockport_live_" "0123456789abcdef0123456789abcdef0123456g", -1 },
	{ "blockport_live_" "0123456789abcdef0123456789abcdef0123456\xff", -1 },
	{ "blockport_prod_" HEX40, -1 },
	{ "blockport_Test_" HEX40, -1 },
	{ "Blockport_test_" HEX40, -1 },
	{ "blockport-test-" HEX40, -1 },
	{ "blockport_test" HEX40 "0", -1 },
	{ " blockport_test_" HEX40, -1 },
	{ "blockport_test_", -1 },
	{ "blockport_", -1 },
	{ "", -1 },
	{ HEX40, -1 },
};

static void
test_key_shape(void)
{
	char nul[BP_KEY_LEN + 8];
	size_t i;

	for (i = 0; i < BP_NITEMS(krows); i++) {
		CU_ASSERT_EQUAL(bp_key_shape(krows[i].key), krows[i].shape);
		if (bp_key_shape(krows[i].key) != krows[i].shape)
			fprintf(stderr, "key shape row %zu: %d\n", i, bp_key_shape(krows[i].key));
	}
	/* A NUL inside the key ends it early: too short. */
	memcpy(nul, "blockport_test_" HEX40, BP_KEY_LEN + 1);
	nul[30] = '\0';
	CU_ASSERT_EQUAL(bp_key_shape(nul), -1);
	CU_ASSERT_EQUAL(BP_KEY_LEN, 55);
}

static void
test_key_generate(void)
{
	char a[BP_KEY_LEN + 1], b[BP_KEY_LEN + 1], small[BP_KEY_LEN];
	int i;

	for (i = 0; i < 50; i++) {
		gen(1, a);
		gen(1, b);
		CU_ASSERT_EQUAL(bp_key_shape(a), 1);
		CU_ASSERT_EQUAL(strlen(a), BP_KEY_LEN);
		CU_ASSERT(strcmp(a, b) != 0);
		gen(0, a);
		CU_ASSERT_EQUAL(bp_key_shape(a), 0);
		CU_ASSERT(strncmp(a, "blockport_live_", 15) == 0);
	}
	memset(small, 'x', sizeof(small));
	CU_ASSERT_EQUAL(bp_key_generate(1, small, sizeof(small)), -1);	/* one byte short */
	CU_ASSERT_EQUAL(small[0], 'x');
}

static void
test_lookup(void)
{
	char tkey[BP_KEY_LEN + 1], lkey[BP_KEY_LEN + 1], other[BP_KEY_LEN + 1];
	char revoked[BP_KEY_LEN + 1], wrongkind[BP_KEY_LEN + 1], noplan[BP_KEY_LEN + 1];
	char badscope[BP_KEY_LEN + 1];
	int64_t gold = add_account("gold"), free_ = add_account("free"), gone = add_account("gone");
	int64_t tid, rid;
	struct bp_key k;

	bp_auth_cache_clear(kc);
	gen(1, tkey);
	gen(0, lkey);
	gen(1, other);
	gen(1, revoked);
	gen(1, wrongkind);
	gen(1, noplan);
	gen(1, badscope);
	tid = add_key(gold, tkey, "test", "data:read");
	add_key(free_, lkey, "live", "");
	rid = add_key(gold, revoked, "test", "");
	revoke_key(rid);
	add_key(gold, wrongkind, "live", "");		/* the row says live, the text test */
	add_key(gone, noplan, "test", "");
	add_key(free_, badscope, "test", "rpc:read,future:scope");

	memset(&k, 0xaa, sizeof(k));
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, tkey, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.id, tid);
	CU_ASSERT_EQUAL(k.account_id, gold);
	CU_ASSERT_EQUAL(k.test, 1);
	CU_ASSERT_EQUAL(k.scopes, B(DATA_READ));
	CU_ASSERT_STRING_EQUAL(k.plan.name, "gold");
	CU_ASSERT_EQUAL(k.plan.rps, 7);
	CU_ASSERT_EQUAL(k.plan.rpd, 70);
	CU_ASSERT_EQUAL(k.plan.cups, 700);

	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, lkey, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.test, 0);
	CU_ASSERT_EQUAL(k.scopes, ALL);
	CU_ASSERT_STRING_EQUAL(k.plan.name, "free");
	CU_ASSERT_EQUAL(k.plan.rps, 10);

	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, other, &k), BP_AUTH_UNKNOWN);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, revoked, &k), BP_AUTH_UNKNOWN);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, wrongkind, &k), BP_AUTH_UNKNOWN);
	/* An account on a plan the config lost is served as free, not unlimited. */
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, noplan, &k), BP_AUTH_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "has plan 'gone', which the config lacks"));
	CU_ASSERT_STRING_EQUAL(k.plan.name, "free");
	CU_ASSERT_EQUAL(k.plan.rps, 10);
	/* A scope this build does not know grants nothing, rather than everything. */
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, badscope, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.scopes, 0);

	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, NULL, &k), BP_AUTH_MISSING);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "", &k), BP_AUTH_MISSING);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "nope", &k), BP_AUTH_MALFORMED);
	/* Another Authorization scheme, as bp_req_api_key hands it over, is named as such. */
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "Basic YWJjOg==", &k), BP_AUTH_SCHEME);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "Digest username=\"a\"", &k),
	    BP_AUTH_SCHEME);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, " Basic x", &k), BP_AUTH_MALFORMED);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "Basic", &k), BP_AUTH_MALFORMED);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, "blockport_test_" HEX40 "0", &k),
	    BP_AUTH_MALFORMED);
	{
		char upper[BP_KEY_LEN + 1];
		size_t i;

		memcpy(upper, tkey, sizeof(upper));
		for (i = 15; i < BP_KEY_LEN; i++)
			if (upper[i] >= 'a' && upper[i] <= 'f')
				upper[i] = (char)(upper[i] - 32);
		CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, upper, &k),
		    strcmp(upper, tkey) == 0 ? BP_AUTH_OK : BP_AUTH_MALFORMED);
	}
	/* Cached answers are the same answers. */
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, tkey, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.id, tid);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, revoked, &k), BP_AUTH_UNKNOWN);
}

static void
test_cache(void)
{
	char key[BP_KEY_LEN + 1], later[BP_KEY_LEN + 1];
	int64_t acct = add_account("free"), id;
	struct bp_key k;

	bp_auth_cache_clear(kc);
	gen(1, key);
	gen(1, later);
	id = add_key(acct, key, "test", "");
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_OK);
	/* Revoked in the database: the cache still says yes (key_cache_seconds = 60)... */
	revoke_key(id);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_OK);
	/* ...until the admin CLI bumps the generation, as it does on every change. */
	bp_limits_bump_generation(lim);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_UNKNOWN);

	/* An unknown key is cached as unknown; a new key shows up after the bump. */
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, later, &k), BP_AUTH_UNKNOWN);
	add_key(acct, later, "test", "");
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, later, &k), BP_AUTH_UNKNOWN);
	bp_limits_bump_generation(lim);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, later, &k), BP_AUTH_OK);

	/* With key_cache_seconds = 0 nothing valid is kept: a revocation shows at once. */
	cfg->key_cache_seconds = 0;
	gen(1, key);
	id = add_key(acct, key, "test", "");
	bp_limits_bump_generation(lim);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_OK);
	revoke_key(id);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_UNKNOWN);
	cfg->key_cache_seconds = 60;
}

/* What lib/core/account.c writes is what the lookup reads: kind, scopes, plan, revocation. */
static void
test_account_keys(void)
{
	char tkey[BP_KEY_LEN + 1], lkey[BP_KEY_LEN + 1];
	int64_t acct = bp_account_create(db, "owner@example.test", "gold"), tid, lid;
	struct bp_key k;

	CU_ASSERT_FATAL(acct > 0);
	bp_auth_cache_clear(kc);
	gen(1, tkey);
	gen(0, lkey);
	tid = bp_account_key_add(db, acct, tkey, "rpc:read,bundler:send", "");
	lid = bp_account_key_add(db, acct, lkey, "", "backend");
	CU_ASSERT_FATAL(tid > 0 && lid > tid);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, tkey, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.id, tid);
	CU_ASSERT_EQUAL(k.account_id, acct);
	CU_ASSERT_EQUAL(k.test, 1);
	CU_ASSERT_EQUAL(k.scopes, B(RPC_READ) | B(BUNDLER));
	CU_ASSERT_STRING_EQUAL(k.plan.name, "gold");
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, lkey, &k), BP_AUTH_OK);
	CU_ASSERT_EQUAL(k.id, lid);
	CU_ASSERT_EQUAL(k.test, 0);
	CU_ASSERT_EQUAL(k.scopes, ALL);

	/* A plan move and a revocation show once the generation is bumped, as the CLI does. */
	CU_ASSERT_EQUAL(bp_account_set_plan(db, acct, "unlimited"), 0);
	CU_ASSERT_EQUAL(bp_account_key_revoke(db, tid), 1);
	bp_limits_bump_generation(lim);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, tkey, &k), BP_AUTH_UNKNOWN);
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, lkey, &k), BP_AUTH_OK);
	CU_ASSERT_STRING_EQUAL(k.plan.name, "unlimited");
	CU_ASSERT_EQUAL(k.plan.rps, 0);
}

static void
test_db_error(void)
{
	char path[sizeof(dir) + 32], key[BP_KEY_LEN + 1];
	struct bp_db *broken;
	struct bp_key k;

	/* A database without the api_keys table: the lookup fails as an error, not as unknown. */
	snprintf(path, sizeof(path), "%s/broken.db", dir);
	broken = bp_db_open(path, 1);
	CU_ASSERT_FATAL(broken != NULL);
	CU_ASSERT_EQUAL(bp_db_exec(broken, "DROP TABLE api_keys"), 0);
	bp_auth_cache_clear(kc);
	gen(1, key);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, broken, lim, cfg, key, &k), BP_AUTH_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "no such table: api_keys"));
	/* And the failure is not cached as an answer. */
	CU_ASSERT_EQUAL(bp_auth_lookup(kc, db, lim, cfg, key, &k), BP_AUTH_UNKNOWN);
	bp_db_close(broken);
	unlink(path);
	snprintf(path, sizeof(path), "%s/broken.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/broken.db-shm", dir);
	unlink(path);
}

/* bp_admit from one address with key; returns the status and fills ad. */
static int
admit1(struct bp_admit *a, const char *key, const char *addr, unsigned cu,
    struct bp_admission *ad)
{
	memset(ad, 0xaa, sizeof(*ad));
	return bp_admit(a, key, addr, 1, cu, ad);
}

static void
test_admit_refused(void)
{
	struct bp_admit a;
	struct bp_admission ad;
	int i;

	CU_ASSERT_FATAL(bp_admit_init(&a, cfg, db, lim) == 0);
	bp_unit_fresh_second();
	/* No key: 401 with the address's figures (anon_rps = 2). */
	CU_ASSERT_EQUAL(admit1(&a, NULL, "192.0.2.1", 1, &ad), 401);
	CU_ASSERT_STRING_EQUAL(ad.code, "unauthorized");
	CU_ASSERT(strstr(ad.message, "missing API key") != NULL);
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_MISSING);
	CU_ASSERT_EQUAL(ad.limit.limit, 2);
	CU_ASSERT_EQUAL(ad.limit.remaining, 1);
	CU_ASSERT(ad.limit.reset > 0);
	/* Another scheme is named, with what to send instead. */
	CU_ASSERT_EQUAL(admit1(&a, "Basic YWJjOg==", "192.0.2.1", 1, &ad), 401);
	CU_ASSERT(strstr(ad.message, "scheme Basic is not supported") != NULL);
	CU_ASSERT(strstr(ad.message, "Bearer") != NULL && strstr(ad.message, "X-API-Key") != NULL);
	CU_ASSERT_EQUAL(ad.limit.remaining, 0);
	/* The third in a second from that address is 429, whatever the key. */
	CU_ASSERT_EQUAL(admit1(&a, "nope", "192.0.2.1", 1, &ad), 429);
	CU_ASSERT_STRING_EQUAL(ad.code, "rate_limited");
	CU_ASSERT_EQUAL(ad.verdict, BP_LIMIT_RPS);
	CU_ASSERT_EQUAL(ad.limit.retry_after, 1);
	CU_ASSERT(strstr(ad.message, "requests per second") != NULL);
	/* IPv6: one /64 is one client. */
	for (i = 0; i < 2; i++)
		CU_ASSERT_EQUAL(admit1(&a, "nope", i ? "2001:db8:5:5::2" : "2001:db8:5:5::1", 1,
		    &ad), 401);
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_MALFORMED);
	CU_ASSERT_EQUAL(admit1(&a, "nope", "2001:db8:5:5:1:2:3:4", 1, &ad), 429);
	CU_ASSERT_EQUAL(admit1(&a, "nope", "2001:db8:5:6::1", 1, &ad), 401);
	bp_admit_fini(&a);
}

static void
test_admit_key(void)
{
	char gold[BP_KEY_LEN + 1], unl[BP_KEY_LEN + 1];
	int64_t acct = add_account("gold"), bigacct = add_account("unlimited"), id;
	struct bp_admission ad;
	struct bp_admit a;
	int i;

	CU_ASSERT_FATAL(bp_admit_init(&a, cfg, db, lim) == 0);
	gen(1, gold);
	gen(0, unl);
	id = add_key(acct, gold, "test", "rpc:read");
	add_key(bigacct, unl, "live", "");
	bp_unit_fresh_second();
	/* Admitted: who the key is, and the figures of its plan (gold: 7 a second). */
	CU_ASSERT_EQUAL(admit1(&a, gold, "192.0.2.2", 5, &ad), 0);
	CU_ASSERT_PTR_NULL(ad.code);
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_OK);
	CU_ASSERT_EQUAL(ad.verdict, BP_LIMIT_OK);
	CU_ASSERT_EQUAL(ad.key.id, id);
	CU_ASSERT_EQUAL(ad.key.account_id, acct);
	CU_ASSERT_EQUAL(ad.key.scopes, B(RPC_READ));
	CU_ASSERT_STRING_EQUAL(ad.key.plan.name, "gold");
	CU_ASSERT_EQUAL(ad.limit.limit, 7);
	CU_ASSERT_EQUAL(ad.limit.remaining, 6);
	/* A key does not count against its address: anon_rps = 2 is far below. */
	for (i = 1; i < 7; i++)
		CU_ASSERT_EQUAL(admit1(&a, gold, "192.0.2.2", 5, &ad), 0);
	CU_ASSERT_EQUAL(ad.limit.remaining, 0);
	CU_ASSERT_EQUAL(admit1(&a, gold, "192.0.2.2", 5, &ad), 429);
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_OK);		/* who it is is known all the same */
	CU_ASSERT_EQUAL(ad.key.id, id);
	CU_ASSERT_EQUAL(ad.limit.retry_after, 1);
	/* Cost: compute units count (gold: 700 a second), on another key of the account. */
	gen(1, gold);
	add_key(acct, gold, "test", "");
	CU_ASSERT_EQUAL(admit1(&a, gold, "192.0.2.2", 701, &ad), 429);
	CU_ASSERT_EQUAL(ad.verdict, BP_LIMIT_CUPS);
	CU_ASSERT(strstr(ad.message, "compute units per second") != NULL);
	/* An unlimited plan never says Remaining 0. */
	for (i = 0; i < 50; i++)
		CU_ASSERT_EQUAL(admit1(&a, unl, "192.0.2.3", 10, &ad), 0);
	CU_ASSERT_EQUAL(ad.limit.limit, BP_LIMIT_UNLIMITED);
	CU_ASSERT(ad.limit.remaining > 0);
	bp_admit_fini(&a);
}

static void
test_admit_deferred(void)
{
	char gold[BP_KEY_LEN + 1];
	int64_t acct = add_account("gold");
	struct bp_limit_state st;
	struct bp_admission ad;
	struct bp_admit a;
	int i;

	CU_ASSERT_FATAL(bp_admit_init(&a, cfg, db, lim) == 0);
	gen(1, gold);
	add_key(acct, gold, "test", "");
	bp_unit_fresh_second();
	/* Authenticated, not counted: gold's 7 a second are all there for the charges. */
	for (i = 0; i < 20; i++) {
		memset(&ad, 0xaa, sizeof(ad));
		CU_ASSERT_EQUAL(bp_admit_deferred(&a, gold, "192.0.2.5", &ad), 0);
	}
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_OK);
	CU_ASSERT_EQUAL(ad.limit.limit, 0);
	for (i = 0; i < 7; i++)
		CU_ASSERT_EQUAL(bp_admit_charge(a.lim, &ad.key, 1, 1, 5, &st), BP_LIMIT_OK);
	CU_ASSERT_EQUAL(st.remaining, 0);
	CU_ASSERT_EQUAL(bp_admit_charge(a.lim, &ad.key, 1, 1, 5, &st), BP_LIMIT_RPS);
	/* Without a valid key the address is counted at once (anon_rps = 2). */
	CU_ASSERT_EQUAL(bp_admit_deferred(&a, "nope", "192.0.2.6", &ad), 401);
	CU_ASSERT_EQUAL(bp_admit_deferred(&a, "nope", "192.0.2.6", &ad), 401);
	CU_ASSERT_EQUAL(bp_admit_deferred(&a, "nope", "192.0.2.6", &ad), 429);
	bp_admit_fini(&a);
}

static void
test_admit_db_error(void)
{
	char path[sizeof(dir) + 32], key[BP_KEY_LEN + 1];
	struct bp_admission ad;
	struct bp_admit a;

	/* The key lookup fails: 500, still with the address's figures for the headers. */
	snprintf(path, sizeof(path), "%s/broken2.db", dir);
	CU_ASSERT_FATAL(bp_admit_init(&a, cfg, bp_db_open(path, 1), lim) == 0);
	CU_ASSERT_FATAL(a.db != NULL);
	CU_ASSERT_EQUAL(bp_db_exec(a.db, "DROP TABLE api_keys"), 0);
	gen(1, key);
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(admit1(&a, key, "192.0.2.4", 1, &ad), 500);
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "no such table: api_keys"));
	CU_ASSERT_STRING_EQUAL(ad.code, "internal_error");
	CU_ASSERT_EQUAL(ad.auth, BP_AUTH_ERROR);
	CU_ASSERT_EQUAL(ad.limit.limit, 2);
	CU_ASSERT(ad.limit.remaining >= 0 && ad.limit.remaining <= 2);
	CU_ASSERT(ad.limit.reset > 0);
	bp_db_close(a.db);
	bp_admit_fini(&a);
	unlink(path);
	snprintf(path, sizeof(path), "%s/broken2.db-wal", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/broken2.db-shm", dir);
	unlink(path);
}

BP_UNIT_SUITE(auth, setup, teardown,
	{ "scope lists parsed", test_scopes_parse },
	{ "scope lists formatted and round-tripped", test_scopes_format },
	{ "key shape table", test_key_shape },
	{ "generated keys", test_key_generate },
	{ "lookup: found, unknown, malformed, revoked", test_lookup },
	{ "cache dropped by the key generation", test_cache },
	{ "keys written by lib/core/account.c", test_account_keys },
	{ "database errors", test_db_error },
	{ "admission refused: 401 and 429 per address", test_admit_refused },
	{ "admission of a key: who, figures, limits", test_admit_key },
	{ "deferred admission: a key's request counted by its first charge", test_admit_deferred },
	{ "admission when the key lookup fails: 500 with figures", test_admit_db_error })
