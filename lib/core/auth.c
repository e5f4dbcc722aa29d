#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "db.h"
#include "hex.h"
#include "limits.h"
#include "log.h"
#include "util.h"

#define CACHE_SLOTS	1024	/* power of two */
#define NEG_TTL		5	/* seconds an unknown key stays cached as unknown */

static const char *const scope_names[BP_SCOPE__MAX] = {
	"rpc:read",		/* BP_SCOPE_RPC_READ */
	"rpc:write",		/* BP_SCOPE_RPC_WRITE */
	"data:read",		/* BP_SCOPE_DATA_READ */
	"wallets:manage",	/* BP_SCOPE_WALLETS */
	"webhooks:manage",	/* BP_SCOPE_WEBHOOKS */
	"gas:manage",		/* BP_SCOPE_GAS */
	"bundler:send",		/* BP_SCOPE_BUNDLER */
};

struct cache_entry {
	unsigned char	 hash[32];
	int		 used;
	int		 found;
	uint64_t	 generation;
	time_t		 loaded;
	struct bp_key	 key;
};

/* The per-process key cache: one per caller (bp_auth_cache_new), never shared between threads. */
struct bp_auth_cache {
	struct cache_entry e[CACHE_SLOTS];
};

/*
 * The key lookup reads the tables account.c owns and writes; it stays here, next to the cache
 * whose entries it fills, so a miss costs one step and no copy through fixed-size buffers.
 */
static const char sql_lookup[] =
    "SELECT k.id, k.account_id, k.kind, k.scopes, a.plan FROM api_keys k"
    " JOIN accounts a ON a.id = k.account_id"
    " WHERE k.key_hash = ? AND k.revoked_at IS NULL";

const char *
bp_scope_name(enum bp_scope s)
{
	return (unsigned)s < BP_SCOPE__MAX ? scope_names[s] : NULL;
}

int
bp_scopes_parse(const char *s, unsigned *mask, char *bad, size_t badlen)
{
	unsigned m = 0;
	const char *p = s;

	while (*p != '\0') {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int i, hit = -1;

		for (i = 0; i < BP_SCOPE__MAX; i++)
			if (strlen(scope_names[i]) == n && memcmp(scope_names[i], p, n) == 0)
				hit = i;
		if (hit < 0) {
			if (bad != NULL)
				snprintf(bad, badlen, "%.*s", (int)(n > 64 ? 64 : n), p);
			return -1;
		}
		m |= BP_SCOPE_BIT(hit);
		p += n;
		if (*p == ',' && *++p == '\0') {
			if (bad != NULL)
				snprintf(bad, badlen, "(empty)");
			return -1;
		}
	}
	*mask = m == 0 ? BP_SCOPES_ALL : m;
	return 0;
}

void
bp_scopes_format(unsigned mask, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	if ((mask & BP_SCOPES_ALL) == BP_SCOPES_ALL)
		return;
	for (i = 0; i < BP_SCOPE__MAX; i++) {
		int n;

		if (!(mask & BP_SCOPE_BIT(i)))
			continue;
		n = snprintf(buf + off, len - off, "%s%s", off ? "," : "", scope_names[i]);
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = '\0';	/* whole names only, never half of one */
			return;
		}
		off += (size_t)n;
	}
}

int
bp_key_shape(const char *key)
{
	size_t i, plen = sizeof(BP_KEY_PREFIX) - 1;
	int test;

	if (strncmp(key, BP_KEY_PREFIX, plen) != 0)
		return -1;
	if (strncmp(key + plen, "live_", 5) == 0)
		test = 0;
	else if (strncmp(key + plen, "test_", 5) == 0)
		test = 1;
	else
		return -1;
	for (i = plen + 5; i < BP_KEY_LEN; i++)
		if (!((key[i] >= '0' && key[i] <= '9') || (key[i] >= 'a' && key[i] <= 'f')))
			return -1;
	return key[BP_KEY_LEN] == '\0' ? test : -1;
}

int
bp_key_generate(int test, char *buf, size_t len)
{
	unsigned char r[BP_KEY_RANDOM_BYTES];
	char hex[2 * BP_KEY_RANDOM_BYTES + 1];

	if (len < BP_KEY_LEN + 1 || bp_random(r, sizeof(r)) == -1)
		return -1;
	bp_hex_encode_digits(r, sizeof(r), hex, sizeof(hex));
	snprintf(buf, len, "%s%s_%s", BP_KEY_PREFIX, test ? "test" : "live", hex);
	return 0;
}

struct bp_auth_cache *
bp_auth_cache_new(void)
{
	return calloc(1, sizeof(struct bp_auth_cache));
}

void
bp_auth_cache_free(struct bp_auth_cache *c)
{
	free(c);
}

void
bp_auth_cache_clear(struct bp_auth_cache *c)
{
	memset(c, 0, sizeof(*c));
}

/*
 * Whether key is an Authorization header of a scheme other than Bearer ("Basic dXNlcg=="): a
 * token of letters, digits and "-._~+/" then a space. A key has no space.
 */
static int
other_scheme(const char *key)
{
	const char *p = key;

	while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
	    (*p != '\0' && strchr("-._~+/", *p) != NULL))
		p++;
	return p > key && *p == ' ';
}

enum bp_auth_result
bp_auth_lookup(struct bp_auth_cache *cache, struct bp_db *db, struct bp_limits *lim,
    const struct bp_config *cfg, const char *key, struct bp_key *out)
{
	unsigned char hash[32];
	struct cache_entry *e;
	struct bp_stmt *st;
	uint64_t gen;
	time_t now;
	enum bp_db_step step;
	int shape;

	if (key == NULL || *key == '\0')
		return BP_AUTH_MISSING;
	if ((shape = bp_key_shape(key)) < 0)
		return other_scheme(key) ? BP_AUTH_SCHEME : BP_AUTH_MALFORMED;
	bp_sha256(key, BP_KEY_LEN, hash);
	e = &cache->e[(hash[0] | (hash[1] << 8)) & (CACHE_SLOTS - 1)];
	gen = bp_limits_generation(lim);
	now = time(NULL);
	if (e->used && e->generation == gen && memcmp(e->hash, hash, 32) == 0 &&
	    now - e->loaded < (e->found ? cfg->key_cache_seconds : NEG_TTL)) {
		if (!e->found)
			return BP_AUTH_UNKNOWN;
		*out = e->key;
		return BP_AUTH_OK;
	}
	if ((st = bp_db_stmt(db, sql_lookup)) == NULL || bp_stmt_blob(st, 1, hash, 32) == -1)
		return BP_AUTH_ERROR;
	memset(e, 0, sizeof(*e));
	if ((step = bp_stmt_step(st)) == BP_DB_ERROR)
		return BP_AUTH_ERROR;
	memcpy(e->hash, hash, 32);
	e->generation = gen;
	e->loaded = now;
	e->used = 1;
	if (step == BP_DB_ROW) {
		const struct bp_plan *plan = bp_config_plan(cfg, bp_col_text(st, 4));

		e->key.id = bp_col_int(st, 0);
		e->key.account_id = bp_col_int(st, 1);
		e->key.test = strcmp(bp_col_text(st, 2), "test") == 0;
		if (bp_scopes_parse(bp_col_text(st, 3), &e->key.scopes, NULL, 0) == -1)
			e->key.scopes = 0;	/* a scope this build does not know grants nothing */
		if (plan == NULL) {
			bp_err("%s: account %lld has plan '%s', which the config lacks; using free",
			    __func__, (long long)e->key.account_id, bp_col_text(st, 4));
			plan = bp_config_plan(cfg, "free");
		}
		if (plan != NULL)
			e->key.plan = *plan;
		/* The kind in the key text and in the row agree unless the row was edited. */
		e->found = e->key.test == shape;
	}
	bp_stmt_reset(st);
	if (!e->found)
		return BP_AUTH_UNKNOWN;
	*out = e->key;
	return BP_AUTH_OK;
}
