/*
 * lib/gas/policy.c: rules validation (each bad value names its key), canonical JSON, the check of
 * calls and cost, and the tables in a real database: create, get (other accounts see nothing),
 * update, delete, the counting of max_per_user_per_day and rate_limit, and the exact spend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/db.h"
#include "core/db_batch.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "gas/policy.h"
#include "gas/policy_cache.h"
#include "token/price.h"
#include "unit.h"
#include "unit_db.h"

#define TOKEN	"0x5FbDB2315678afecb367f032d93F642f64180aa3"

static struct bp_unit_db u;
static struct bp_db *db;

static int
setup(void)
{
	if (bp_unit_db_open(&u, "policy") == -1)
		return 1;
	db = u.db;
	return bp_db_exec(db, "INSERT INTO accounts (id, email, plan, created_at) VALUES"
	    " (1, 'a@x', 'free', 0), (2, 'b@x', 'free', 0), (3, 'c@x', 'free', 0)") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static int
rules_of(const char *json, struct bp_policy_rules *r, char *why, size_t cap)
{
	cJSON *j = cJSON_Parse(json);
	int rc;

	CU_ASSERT_FATAL(j != NULL);
	rc = bp_policy_rules_parse(j, r, why, cap);
	cJSON_Delete(j);
	return rc;
}

static void
test_rules(void)
{
	static const struct {
		const char *json, *key;
	} bad[] = {
		{ "{}", "rules" }, { "[]", "rules" }, { "{\"colour\":1}", "colour" },
		{ "{\"max_gas_usd\":\"0\"}", "max_gas_usd" }, { "{\"max_gas_usd\":\"0.000\"}", "max_gas_usd" },
		{ "{\"max_gas_usd\":1}", "max_gas_usd" }, { "{\"max_gas_usd\":\"1.\"}", "max_gas_usd" },
		{ "{\"max_gas_usd\":\"1.0000000000000000001\"}", "max_gas_usd" },
		{ "{\"max_gas_usd\":\" 1\"}", "max_gas_usd" }, { "{\"max_gas_usd\":\"-1\"}", "max_gas_usd" },
		{ "{\"max_per_user_per_day\":0}", "max_per_user_per_day" },
		{ "{\"max_per_user_per_day\":2.5}", "max_per_user_per_day" },
		{ "{\"max_per_user_per_day\":1e300}", "max_per_user_per_day" },
		{ "{\"max_per_user_per_day\":true}", "max_per_user_per_day" },
		{ "{\"allowed_contracts\":[]}", "allowed_contracts" },
		{ "{\"allowed_contracts\":\"" TOKEN "\"}", "allowed_contracts" },
		{ "{\"allowed_contracts\":[\"0x5FbDB2315678afecb367f032d93F642f64180aA3\"]}",
		    "allowed_contracts" },	/* bad checksum */
		{ "{\"allowed_methods\":[\"transfer\"]}", "allowed_methods" },
		{ "{\"allowed_methods\":[\"transfer(address, uint256)\"]}", "allowed_methods" },
		{ "{\"allowed_methods\":[\"transfer(address,uint256))\"]}", "allowed_methods" },
		{ "{\"allowed_methods\":[\"1x(uint256)\"]}", "allowed_methods" },
		{ "{\"allowed_methods\":[\"0xa9059cbb00\"]}", "allowed_methods" },
		{ "{\"allowed_methods\":[null]}", "allowed_methods" },
		{ "{\"rate_limit\":{\"count\":1}}", "rate_limit" },
		{ "{\"rate_limit\":{\"count\":1,\"period_seconds\":0}}", "rate_limit" },
		{ "{\"rate_limit\":{\"count\":1,\"period_seconds\":60,\"x\":1}}", "rate_limit" },
		{ "{\"max_gas_usd\":\"1\",\"max_gas_usd\":\"2\"}", "max_gas_usd" },
	};
	struct bp_policy_rules r;
	struct bp_buf b;
	char why[512];
	size_t i;

	for (i = 0; i < BP_NITEMS(bad); i++) {
		CU_ASSERT(rules_of(bad[i].json, &r, why, sizeof(why)) == -1);
		if (strstr(why, bad[i].key) == NULL)
			fprintf(stderr, "row %zu: %s\n", i, why);
		CU_ASSERT(strstr(why, bad[i].key) != NULL);
	}
	CU_ASSERT_FATAL(rules_of("{\"rate_limit\":{\"period_seconds\":60,\"count\":2},"
	    "\"allowed_methods\":[\"transfer(address,uint256)\",\"0xA9059CBB\"],"
	    "\"allowed_contracts\":[\"" "0x5fbdb2315678afecb367f032d93f642f64180aa3" "\"],"
	    "\"max_per_user_per_day\":3,\"max_gas_usd\":\"5.50\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT(memcmp(r.selectors[0], r.selectors[1], 4) == 0);
	bp_buf_init(&b, 4096);
	CU_ASSERT_FATAL(bp_policy_rules_json(&r, &b) == 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"max_gas_usd\":\"5.50\",\"max_per_user_per_day\":3,"
	    "\"allowed_contracts\":[\"" TOKEN "\"],\"allowed_methods\":"
	    "[\"transfer(address,uint256)\",\"0xa9059cbb\"],"
	    "\"rate_limit\":{\"count\":2,\"period_seconds\":60}}");
	bp_buf_free(&b);
}

static void
test_check(void)
{
	struct bp_policy_rules r;
	struct bp_userop_call c[2];
	struct bp_u256 usd;
	char why[512];

	CU_ASSERT_FATAL(rules_of("{\"allowed_contracts\":[\"" TOKEN "\"],"
	    "\"allowed_methods\":[\"transfer(address,uint256)\"],\"max_gas_usd\":\"2\"}", &r, why,
	    sizeof(why)) == 0);
	memset(c, 0, sizeof(c));
	bp_addr_parse(TOKEN, strlen(TOKEN), 0, c[0].target);
	c[0].has_selector = 1;
	bp_abi_selector("transfer(address,uint256)", c[0].selector);
	c[1] = c[0];
	bp_u256_parse_units(&usd, "2", 1, BP_PRICE_USD_DECIMALS);
	CU_ASSERT(bp_policy_check(&r, c, 2, &usd, why, sizeof(why)) == -1);	/* exactly 2 */
	CU_ASSERT(bp_policy_check(&r, c, 0, &usd, why, sizeof(why)) == -1);	/* no calls */
	bp_u256_parse_units(&usd, "2.000000000000000000000000000000000001", 38,
	    BP_PRICE_USD_DECIMALS);
	CU_ASSERT(bp_policy_check(&r, c, 2, &usd, why, sizeof(why)) == BP_RULE_MAX_GAS_USD);
	CU_ASSERT(strncmp(why, "max_gas_usd", 11) == 0);
	CU_ASSERT(bp_policy_check(&r, c, 2, NULL, why, sizeof(why)) == BP_RULE_MAX_GAS_USD);
	CU_ASSERT(bp_policy_check(&r, c, -1, &usd, why, sizeof(why)) == BP_RULE_ALLOWED_CONTRACTS);
	c[1].target[19] ^= 1;
	CU_ASSERT(bp_policy_check(&r, c, 2, NULL, why, sizeof(why)) == BP_RULE_ALLOWED_CONTRACTS);
	c[1].target[19] ^= 1;
	c[1].selector[0] ^= 1;
	CU_ASSERT(bp_policy_check(&r, c, 2, NULL, why, sizeof(why)) == BP_RULE_ALLOWED_METHODS);
	c[1].has_selector = 0;
	CU_ASSERT(bp_policy_check(&r, c, 2, NULL, why, sizeof(why)) == BP_RULE_ALLOWED_METHODS);
	/* Without contract or method rules, unreadable callData passes. */
	CU_ASSERT_FATAL(rules_of("{\"max_per_user_per_day\":1}", &r, why, sizeof(why)) == 0);
	CU_ASSERT(bp_policy_check(&r, c, -1, NULL, why, sizeof(why)) == -1);
}

static const struct bp_network devnet = { .chain = "ethereum", .network = "devnet",
    .testnet = 1 };
static const struct bp_network mainnet = { .chain = "ethereum", .network = "mainnet" };
static const struct bp_key test1 = { .id = 1, .account_id = 1, .test = 1 };
static const struct bp_key live1 = { .id = 2, .account_id = 1, .test = 0 };
static const struct bp_key test2 = { .id = 3, .account_id = 2, .test = 1 };

static void
test_tables(void)
{
	struct bp_policy_rules r;
	struct bp_policy p, q;
	struct bp_policy_spend sp;
	enum bp_policy_status paused = BP_POLICY_PAUSED;
	struct bp_u256 usd;
	struct bp_buf b;
	uint8_t a[20], other[20], h[32];
	char why[512];

	CU_ASSERT_FATAL(rules_of("{\"max_per_user_per_day\":2,\"rate_limit\":{\"count\":3,"
	    "\"period_seconds\":3600}}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "first", &devnet, &r, &p) == 1);
	CU_ASSERT(strncmp(p.id, "gp_", 3) == 0 && strlen(p.id) == 27);
	CU_ASSERT(p.status == BP_POLICY_ACTIVE);
	CU_ASSERT(bp_policy_get(db, 2, p.id, &q) == 0);		/* another account */
	CU_ASSERT(bp_policy_get(db, 1, "gp_nope", &q) == 0);
	CU_ASSERT(bp_policy_update(db, 2, p.id, "x", NULL, &paused, &q) == 0);

	memset(a, 0xaa, 20);
	memset(other, 0xbb, 20);
	memset(h, 0x11, 32);
	bp_u256_parse_units(&usd, "0.25", 4, BP_PRICE_USD_DECIMALS);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, NULL, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, NULL, NULL, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, NULL, why, sizeof(why)) ==
	    BP_RULE_MAX_PER_USER_PER_DAY);
	CU_ASSERT(strncmp(why, "max_per_user_per_day", 20) == 0);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", other, h, &usd, NULL, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", other, h, &usd, NULL, why, sizeof(why)) ==
	    BP_RULE_RATE_LIMIT);
	CU_ASSERT(strncmp(why, "rate_limit", 10) == 0);
	CU_ASSERT_FATAL(bp_policy_spend(db, p.id, &sp) == 1);
	CU_ASSERT(sp.today_count == 3 && sp.total_count == 3);
	CU_ASSERT_STRING_EQUAL(sp.total_usd, "0.5");
	CU_ASSERT_STRING_EQUAL(sp.today_usd, "0.5");

	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, "renamed", NULL, &paused, &q) == 1);
	CU_ASSERT(q.status == BP_POLICY_PAUSED && strcmp(q.name, "renamed") == 0);
	CU_ASSERT(q.rules.max_per_user_per_day == 2);
	bp_buf_init(&b, 65536);
	CU_ASSERT(bp_policy_list(db, &test1, &paused, 1, 25, &b) == 0);
	CU_ASSERT(strstr(b.data, p.id) != NULL && strstr(b.data, "\"total\":1}") != NULL);
	bp_buf_reset(&b);
	CU_ASSERT(bp_policy_list(db, &test2, NULL, 1, 25, &b) == 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"policies\":[],\"page\":1,\"limit\":25,\"total\":0}");
	bp_buf_free(&b);
	CU_ASSERT(bp_policy_delete(db, 2, p.id) == 0);
	CU_ASSERT(bp_policy_delete(db, 1, p.id) == 1);
	CU_ASSERT(bp_policy_get(db, 1, p.id, &q) == 0);
	CU_ASSERT(bp_policy_delete(db, 1, p.id) == 0);
}

/*
 * Test and live apart (tenant fences, item 3): a policy belongs to its network's kind; a key of
 * the other kind finds it as BP_POLICY_OTHER_KIND (403) and lists only its own kind.
 */
static void
test_kinds(void)
{
	struct bp_policy_rules r;
	struct bp_policy t, l, q;
	struct bp_buf b;
	char why[512];

	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"1\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "t", &devnet, &r, &t) == 1);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "l", &mainnet, &r, &l) == 1);
	CU_ASSERT(t.testnet == 1 && l.testnet == 0);
	CU_ASSERT_STRING_EQUAL(l.network, "mainnet");
	CU_ASSERT(bp_policy_find(db, &test1, t.id, &q, why, sizeof(why)) == 1);
	CU_ASSERT(bp_policy_find(db, &live1, l.id, &q, why, sizeof(why)) == 1);
	CU_ASSERT(bp_policy_find(db, &test1, l.id, &q, why, sizeof(why)) == BP_POLICY_OTHER_KIND);
	CU_ASSERT(strstr(why, "mainnet") != NULL);
	CU_ASSERT(bp_policy_find(db, &live1, t.id, &q, why, sizeof(why)) == BP_POLICY_OTHER_KIND);
	CU_ASSERT(bp_policy_find(db, &test2, t.id, &q, why, sizeof(why)) == 0);
	bp_buf_init(&b, 65536);
	CU_ASSERT(bp_policy_list(db, &live1, NULL, 1, 25, &b) == 0);
	CU_ASSERT(strstr(b.data, l.id) != NULL && strstr(b.data, t.id) == NULL);
	CU_ASSERT(strstr(b.data, "\"network\":\"mainnet\"") != NULL);
	bp_buf_reset(&b);
	CU_ASSERT(bp_policy_list(db, &test1, NULL, 1, 25, &b) == 0);
	CU_ASSERT(strstr(b.data, t.id) != NULL && strstr(b.data, l.id) == NULL);
	bp_buf_free(&b);
}

/*
 * Budgets (tenant fences, item 5): the account's per plan and the server's, in USD per UTC
 * day, counted with the record; past either, BP_POLICY_BUDGET naming it and nothing written;
 * an unknown price is refused under a cap; "0" and "" are no cap.
 */
static void
test_budget(void)
{
	struct bp_policy_rules r;
	struct bp_policy p;
	struct bp_policy_spend sp;
	struct bp_u256 usd;
	uint8_t a[20], h[32];
	char why[512];
	struct bp_policy_budget plan = { 7, "1", "0" }, server = { 8, "", "2.5" };
	struct bp_policy_budget none = { 9, "0", "" }, fresh = { 10, "1", "" };
	struct bp_policy_budget full = { 10, "", "3.5" };

	memset(a, 0x77, 20);
	memset(h, 0x22, 32);
	bp_u256_parse_units(&usd, "0.6", 3, BP_PRICE_USD_DECIMALS);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"100\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "budget", &devnet, &r, &p) == 1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &plan, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &plan, why, sizeof(why)) ==
	    BP_POLICY_BUDGET);
	CU_ASSERT(strstr(why, "sponsor_usd_per_day (the plan's budget)") != NULL);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, NULL, &plan, why, sizeof(why)) ==
	    BP_POLICY_BUDGET);
	CU_ASSERT(strstr(why, "price") != NULL);
	CU_ASSERT(bp_policy_spend(db, p.id, &sp) == 1 && sp.today_count == 1);
	/* The server's: 0.6 already counted, then 0.6 x 3 more reach 2.4; the next is over. */
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &server, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &server, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &server, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &server, why, sizeof(why)) ==
	    BP_POLICY_BUDGET);
	CU_ASSERT(strstr(why, "the server's budget") != NULL);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, NULL, &none, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &none, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_spend(db, p.id, &sp) == 1 && sp.today_count == 6);
	/* Each budget counts its own row: account 10 has spent nothing, the server 3.6. */
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &fresh, why, sizeof(why)) == -1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, &usd, &full, why, sizeof(why)) ==
	    BP_POLICY_BUDGET);
	CU_ASSERT(strstr(why, "the server's budget") != NULL);
	CU_ASSERT(bp_policy_spend(db, p.id, &sp) == 1 && sp.today_count == 7);
}

/*
 * A policy paused or changed after it was read (another request, another process; or a cached
 * copy) is not recorded under the copy: the record checks it is still active with the same
 * rules, and answers BP_POLICY_CHANGED, counting nothing. The copy as stored records.
 */
static void
test_changed(void)
{
	struct bp_policy_rules r, tighter;
	struct bp_policy p, q;
	struct bp_policy_spend sp;
	enum bp_policy_status paused = BP_POLICY_PAUSED, active = BP_POLICY_ACTIVE;
	uint8_t a[20], h[32];
	char why[512];

	memset(a, 0x55, 20);
	memset(h, 0x33, 32);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"100\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"1\"}", &tighter, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "changed", &devnet, &r, &p) == 1);
	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, NULL, NULL, &paused, &q) == 1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, NULL, NULL, why, sizeof(why)) ==
	    BP_POLICY_CHANGED);
	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, NULL, &tighter, &active, &q) == 1);
	CU_ASSERT(bp_policy_record(db, NULL, &p, "devnet", a, h, NULL, NULL, why, sizeof(why)) ==
	    BP_POLICY_CHANGED);
	CU_ASSERT(bp_policy_spend(db, p.id, &sp) == 1 && sp.total_count == 0);
	CU_ASSERT(bp_policy_record(db, NULL, &q, "devnet", a, h, NULL, NULL, why, sizeof(why)) == -1);
	CU_ASSERT_FATAL(bp_policy_delete(db, 1, p.id) == 1);
	CU_ASSERT(bp_policy_record(db, NULL, &q, "devnet", a, h, NULL, NULL, why, sizeof(why)) ==
	    BP_POLICY_CHANGED);
	CU_ASSERT(bp_policy_spend(db, p.id, &sp) == 1 && sp.total_count == 1);
}

/*
 * lib/gas/policy_cache.c: a copy is kept after the first read and answered while the table
 * changes (the record checks it); reread takes the table's again, and drops a paused one.
 * Another account's key, or one of the other kind, is answered from the table.
 */
static void
test_cache(void)
{
	struct bp_policy_cache *c;
	struct bp_policy_rules r;
	struct bp_policy p, q;
	enum bp_policy_status paused = BP_POLICY_PAUSED;
	char why[512];

	CU_ASSERT_FATAL((c = bp_policy_cache_new()) != NULL);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"3\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_create(db, 1, "cached", &devnet, &r, &p) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, "renamed", NULL, &paused, &q) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT(q.status == BP_POLICY_ACTIVE && strcmp(q.name, "cached") == 0);
	CU_ASSERT(bp_policy_cache_find(c, db, &test2, p.id, 1, &q, why, sizeof(why)) == 0);
	CU_ASSERT(bp_policy_cache_find(c, db, &live1, p.id, 1, &q, why, sizeof(why)) ==
	    BP_POLICY_OTHER_KIND);
	CU_ASSERT(bp_policy_cache_find(NULL, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT(q.status == BP_POLICY_PAUSED);
	CU_ASSERT(bp_policy_cache_reread(c, db, 1, p.id, &q) == 1 &&
	    q.status == BP_POLICY_PAUSED);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT(q.status == BP_POLICY_PAUSED && strcmp(q.name, "renamed") == 0);
	/* A rule loosened elsewhere: the copy serves its generation only, the next reads anew. */
	paused = BP_POLICY_ACTIVE;
	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, NULL, NULL, &paused, &q) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"30\"}", &r, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_policy_update(db, 1, p.id, NULL, &r, NULL, &q) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 1, &q, why, sizeof(why)) == 1);
	CU_ASSERT_STRING_EQUAL(q.rules.max_gas_usd, "3");
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 2, &q, why, sizeof(why)) == 1);
	CU_ASSERT_STRING_EQUAL(q.rules.max_gas_usd, "30");
	CU_ASSERT(bp_policy_cache_reread(c, db, 1, p.id, &q) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 2, &q, why, sizeof(why)) == 1);
	CU_ASSERT_STRING_EQUAL(q.rules.max_gas_usd, "30");
	CU_ASSERT(bp_policy_delete(db, 1, p.id) == 1);
	CU_ASSERT(bp_policy_cache_find(c, db, &test1, p.id, 3, &q, why, sizeof(why)) == 0);
	bp_policy_cache_free(c);
}

/* A copy of the lists' used entries only is the same policy, whatever dst held before. */
static void
test_copy(void)
{
	static const char rules[] = "{\"max_gas_usd\":\"3\",\"allowed_contracts\":["
	    "\"0x1111111111111111111111111111111111111111\","
	    "\"0x2222222222222222222222222222222222222222\"],\"allowed_methods\":["
	    "\"transfer(address,uint256)\",\"approve(address,uint256)\",\"mint()\"],"
	    "\"rate_limit\":{\"count\":5,\"period_seconds\":60}}";
	static struct bp_policy p, q;
	struct bp_buf a, b;
	char why[512];

	CU_ASSERT_FATAL(rules_of(rules, &p.rules, why, sizeof(why)) == 0);
	snprintf(p.id, sizeof(p.id), "gp_copy");
	snprintf(p.name, sizeof(p.name), "copied");
	memset(p.rules_sha, 0x5a, sizeof(p.rules_sha));
	memset(&q, 0xa5, sizeof(q));
	bp_policy_copy(&q, &p);
	bp_buf_init(&a, 4096);
	bp_buf_init(&b, 4096);
	CU_ASSERT(bp_policy_rules_json(&p.rules, &a) == 0 && bp_policy_rules_json(&q.rules, &b) == 0);
	CU_ASSERT(a.len > 0 && a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
	CU_ASSERT_STRING_EQUAL(q.id, "gp_copy");
	CU_ASSERT_STRING_EQUAL(q.name, "copied");
	CU_ASSERT(memcmp(q.rules_sha, p.rules_sha, sizeof(q.rules_sha)) == 0);
	CU_ASSERT(q.rules.rate_count == 5 && q.rules.rate_period == 60);
	CU_ASSERT(memcmp(q.rules.selectors, p.rules.selectors, 3 * 4) == 0);
	bp_buf_free(&a);
	bp_buf_free(&b);
}

/* Create and update bodies: each bad member is named; names count UTF-8 characters. */
static void
test_input(void)
{
	static const struct {
		int create;
		const char *json, *key;
	} bad[] = {
		{ 1, "{\"chain\":\"ethereum\",\"rules\":{\"max_gas_usd\":\"1\"}}", "name" },
		{ 1, "{\"name\":\"\",\"chain\":\"ethereum\",\"rules\":{\"max_gas_usd\":\"1\"}}", "name" },
		{ 1, "{\"name\":7,\"chain\":\"ethereum\",\"rules\":{\"max_gas_usd\":\"1\"}}", "name" },
		{ 1, "{\"name\":\"x\",\"rules\":{\"max_gas_usd\":\"1\"}}", "chain" },
		{ 1, "{\"name\":\"x\",\"chain\":\"solana\",\"rules\":{\"max_gas_usd\":\"1\"}}", "chain" },
		{ 1, "{\"name\":\"x\",\"chain\":\"nochain\",\"rules\":{\"max_gas_usd\":\"1\"}}", "chain" },
		{ 1, "{\"name\":\"x\",\"chain\":\"ethereum\"}", "rules" },
		{ 1, "{\"name\":\"x\",\"chain\":\"ethereum\",\"rules\":{\"x\":1}}", "x" },
		{ 0, "{}", "at least one" },
		{ 0, "{\"status\":\"deleted\"}", "status" },
		{ 0, "{\"status\":1}", "status" },
	};
	struct bp_config *cfg = calloc(1, sizeof(*cfg));
	struct bp_policy_input in;
	char why[512], name[512];
	size_t i;
	cJSON *j;

	CU_ASSERT_FATAL(cfg != NULL);
	cfg->nnets = 2;
	bp_strlcpy(cfg->nets[0].chain, "ethereum", BP_NAME_MAX);
	cfg->nets[0].kind = BP_CHAIN_EVM;
	bp_strlcpy(cfg->nets[1].chain, "solana", BP_NAME_MAX);
	cfg->nets[1].kind = BP_CHAIN_SOLANA;
	for (i = 0; i < BP_NITEMS(bad); i++) {
		j = cJSON_Parse(bad[i].json);
		CU_ASSERT(bp_policy_input(cfg, j, bad[i].create, &in, why, sizeof(why)) == -1);
		CU_ASSERT(strstr(why, bad[i].key) != NULL);
		cJSON_Delete(j);
	}
	/* 100 two-byte characters pass, 101 do not. */
	for (i = 0; i < 101; i++)
		memcpy(name + 2 * i, "\xc3\xa9", 2);
	name[200] = '\0';
	j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "name", name);
	CU_ASSERT(bp_policy_input(cfg, j, 0, &in, why, sizeof(why)) == 0);
	CU_ASSERT(in.name != NULL && !in.has_rules && !in.has_status);
	name[200] = '\xc3';
	name[201] = '\xa9';
	name[202] = '\0';
	cJSON_ReplaceItemInObject(j, "name", cJSON_CreateString(name));
	CU_ASSERT(bp_policy_input(cfg, j, 0, &in, why, sizeof(why)) == -1);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"status\":\"paused\",\"rules\":{\"max_per_user_per_day\":2}}");
	CU_ASSERT(bp_policy_input(cfg, j, 0, &in, why, sizeof(why)) == 0);
	CU_ASSERT(in.has_status && in.status == BP_POLICY_PAUSED && in.has_rules);
	cJSON_Delete(j);
	free(cfg);
}

/*
 * Sponsorships of two accounts' policies from several threads sharing one batch (one
 * transaction, a savepoint each; the day rows summed in the transaction and written at its
 * end): each counts the ones before it in the batch, so the server's budget stops exactly at
 * its cap, neither account passes its plan's, and each day row is the exact sum of those
 * recorded.
 */
#define SHARED_THREADS	4
#define SHARED_CALLS	10
static struct bp_db_batch *shared_batch;
static struct bp_policy shared_policy[2];	/* account 2's, account 3's */

static void *
shared_worker(void *arg)
{
	int side = (int)(size_t)arg % 2;
	struct bp_policy_budget plan = { 2 + side, "4", "7" };
	struct bp_u256 usd;
	struct bp_db *tdb;
	uint8_t a[20], h[32];
	char why[512];
	int i, rc, bad = 0;

	if ((tdb = bp_db_open(u.path, 0)) == NULL)
		return (void *)1;
	memset(a, (int)(size_t)arg + 1, 20);
	memset(h, 0x33, 32);
	bp_u256_parse_units(&usd, "0.25", 4, BP_PRICE_USD_DECIMALS);
	for (i = 0; i < SHARED_CALLS; i++) {
		rc = bp_policy_record(tdb, shared_batch, &shared_policy[side], "devnet", a, h,
		    &usd, &plan, why, sizeof(why));
		bad |= rc != -1 && rc != BP_POLICY_BUDGET;
	}
	bp_db_close(tdb);
	return bad ? (void *)1 : NULL;
}

/* gas_budget_days' sum for account on today, as stored ("" when no row). */
static void
budget_row(int64_t account, char *out, size_t cap)
{
	static const char sql[] = "SELECT usd FROM gas_budget_days WHERE account_id = ? AND day = ?";
	struct bp_stmt *st;

	out[0] = '\0';
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return;
	bp_stmt_int(st, 1, account);
	bp_stmt_int(st, 2, (int64_t)time(NULL) / 86400);
	if (bp_stmt_step(st) == BP_DB_ROW)
		snprintf(out, cap, "%s", bp_col_text(st, 0));
	bp_stmt_reset(st);
}

static void
test_shared_batch(void)
{
	struct bp_policy_rules r;
	struct bp_policy_spend sp[2];
	char why[512], row[64], want[64];
	int i;

	/* Other tests' sponsorships today count against the server's budget: none left. */
	CU_ASSERT_FATAL(bp_db_exec(db, "DELETE FROM gas_budget_days") == 0);
	CU_ASSERT_FATAL((shared_batch = bp_db_batch_new(16)) != NULL);
	CU_ASSERT_FATAL(rules_of("{\"max_gas_usd\":\"100\"}", &r, why, sizeof(why)) == 0);
	for (i = 0; i < 2; i++)
		CU_ASSERT_FATAL(bp_policy_create(db, 2 + i, "shared", &devnet, &r,
		    &shared_policy[i]) == 1);
	CU_ASSERT_EQUAL_FATAL(bp_unit_threads(SHARED_THREADS, shared_worker), 0);
	/* 40 tries of 0.25 USD, 20 an account: the server's 7 USD take exactly 28. */
	for (i = 0; i < 2; i++)
		CU_ASSERT(bp_policy_spend(db, shared_policy[i].id, &sp[i]) == 1);
	CU_ASSERT_EQUAL(sp[0].today_count + sp[1].today_count, 28);
	CU_ASSERT(sp[0].today_count <= 16 && sp[1].today_count <= 16);
	for (i = 0; i < 2; i++) {
		snprintf(want, sizeof(want), "%lld.%s", (long long)sp[i].today_count / 4,
		    (const char *[]){ "0", "25", "5", "75" }[sp[i].today_count % 4]);
		if (strcmp(want + strlen(want) - 2, ".0") == 0)
			want[strlen(want) - 2] = '\0';
		CU_ASSERT_STRING_EQUAL(sp[i].today_usd, want);
		CU_ASSERT_STRING_EQUAL(sp[i].total_usd, want);
		budget_row(2 + i, row, sizeof(row));
		CU_ASSERT_STRING_EQUAL(row, want);
	}
	budget_row(0, row, sizeof(row));
	CU_ASSERT_STRING_EQUAL(row, "7");
	bp_db_batch_free(shared_batch);
}

BP_UNIT_SUITE(gas_policy, setup, teardown,
	{ "a policy changed after its read is not recorded under it", test_changed },
	{ "the policy cache", test_cache },
	{ "a copy holds the lists' used entries", test_copy },
    { "input: create and update bodies name the member at fault", test_input },
    { "rules: every bad value names its key; canonical JSON", test_rules },
    { "check: contracts, methods, unreadable callData, max_gas_usd", test_check },
    { "tables: ownership, counting, spend, states", test_tables },
    { "kinds: test and live policies apart", test_kinds },
    { "budget: the plan's and the server's USD a day", test_budget },
    { "batch: threads sharing a transaction count exactly", test_shared_batch })
