#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "config.h"
#include "db.h"
#include "limits_redis.h"
#include "metrics.h"
#include "util.h"

#define LINE_MAX_LEN	1024

enum section_kind {
	SEC_SERVER,	/* 0 */
	SEC_PLAN,	/* 1 */
	SEC_CHAIN,	/* 2 */
	SEC_PRICES,	/* 3: gas, [prices CHAIN] */
	SEC_WEBHOOKS,	/* 4: [webhooks] */
	SEC_SMTP,	/* 5: [smtp] */
	SEC__MAX
};

enum value_type {
	VT_INT,		/* 0: decimal within [min, max] */
	VT_BOOL,	/* 1: true/false/yes/no/1/0 */
	VT_PATH,	/* 2: file path; relative paths are relative to the config file */
	VT_URL,		/* 3: http:// or https:// URL */
	VT_ADDR,	/* 4: 0x + 40 hex digits */
	VT_KIND,	/* 5: evm or solana */
	VT_DECIMAL,	/* 6: gas: digits, optionally '.' and 1 to 18 digits */
	VT_HTTPURL,	/* 7: nfts: one http:// or https:// URL (a gateway) */
	VT_TEXT,	/* 8: any text that fits; check() validates what needs it */
	VT__MAX
};

/*
 * Every key the file may hold: its section, type, bounds, and where it lands. A key that is not
 * here is an error, so a typo is caught at start rather than silently ignored.
 */
struct rule {
	enum section_kind sec;
	const char	*key;
	enum value_type	 type;
	int64_t		 min, max;
	size_t		 off;		/* offset in struct bp_config, bp_plan or bp_network */
	size_t		 size;		/* size of a string field */
};

#define CFG(f)	offsetof(struct bp_config, f), sizeof(((struct bp_config *)0)->f)
#define PLAN(f)	offsetof(struct bp_plan, f), sizeof(((struct bp_plan *)0)->f)
#define PRICE(f) offsetof(struct bp_prices, f), sizeof(((struct bp_prices *)0)->f)
#define WH(f)	offsetof(struct bp_config, webhooks.f), sizeof(((struct bp_config *)0)->webhooks.f)
#define NET(f)	offsetof(struct bp_network, f), sizeof(((struct bp_network *)0)->f)
#define MiB	(1024 * 1024)

static const struct rule rules[] = {
	{ SEC_SERVER, "database", VT_PATH, 0, 0, CFG(database) },
	{ SEC_SERVER, "limits_file", VT_PATH, 0, 0, CFG(limits_file) },
	{ SEC_SERVER, "limits", VT_TEXT, 0, 0, CFG(limits_url) },
	/* ---- Operator metrics (lib/core/metrics.c; docs/metrics.md) ---- */
	{ SEC_SERVER, "metrics_allow", VT_TEXT, 0, 0, CFG(metrics_allow) },
	{ SEC_SERVER, "state_dir", VT_PATH, 0, 0, CFG(state_dir) },
	{ SEC_SERVER, "max_body", VT_INT, 1024, 64 * MiB, CFG(max_body) },
	{ SEC_SERVER, "max_response", VT_INT, 1024, 256 * MiB, CFG(max_response) },
	{ SEC_SERVER, "max_batch", VT_INT, 1, 1000, CFG(max_batch) },
	{ SEC_SERVER, "upstream_timeout_ms", VT_INT, 100, 600000, CFG(upstream_timeout_ms) },
	{ SEC_SERVER, "upstream_down_seconds", VT_INT, 0, 3600, CFG(upstream_down_seconds) },
	{ SEC_SERVER, "upstream_first_byte_ms", VT_INT, 0, 600000, CFG(upstream_first_byte_ms) },
	{ SEC_SERVER, "anon_rps", VT_INT, 0, 1000000, CFG(anon_rps) },
	{ SEC_SERVER, "key_cache_seconds", VT_INT, 0, 3600, CFG(key_cache_seconds) },
	{ SEC_SERVER, "allow_private_urls", VT_BOOL, 0, 1, CFG(allow_private_urls) },
	{ SEC_PLAN, "rps", VT_INT, 0, INT64_C(1000000000), PLAN(rps) },
	{ SEC_PLAN, "rpd", VT_INT, 0, INT64_C(1000000000000), PLAN(rpd) },
	{ SEC_PLAN, "cups", VT_INT, 0, INT64_C(1000000000), PLAN(cups) },
	{ SEC_PLAN, "debug", VT_BOOL, 0, 1, PLAN(debug) },
	{ SEC_PLAN, "ws_connections", VT_INT, 0, 1000000, PLAN(ws_connections) },
	{ SEC_CHAIN, "kind", VT_KIND, 0, 0, NET(kind) },
	{ SEC_CHAIN, "chain_id", VT_INT, 0, INT64_MAX, NET(chain_id) },
	{ SEC_CHAIN, "testnet", VT_BOOL, 0, 1, NET(testnet) },
	{ SEC_CHAIN, "default", VT_BOOL, 0, 1, NET(rest_default) },
	{ SEC_CHAIN, "upstream", VT_URL, 0, 0, NET(upstream) },
	{ SEC_CHAIN, "confirmations", VT_INT, 0, 10000, NET(confirmations) },
	{ SEC_CHAIN, "archive_depth", VT_INT, 1, INT64_MAX, NET(archive_depth) },
	{ SEC_CHAIN, "start_block", VT_INT, 0, INT64_MAX, NET(start_block) },
	{ SEC_CHAIN, "entry_point", VT_ADDR, 0, 0, NET(entry_point) },
	{ SEC_CHAIN, "account_factory", VT_ADDR, 0, 0, NET(account_factory) },
	{ SEC_CHAIN, "account_implementation", VT_ADDR, 0, 0, NET(account_implementation) },
	{ SEC_CHAIN, "paymaster", VT_ADDR, 0, 0, NET(paymaster) },
	{ SEC_CHAIN, "paymaster_signer", VT_ADDR, 0, 0, NET(paymaster_signer) },
	{ SEC_CHAIN, "index", VT_BOOL, 0, 1, NET(index) },
	{ SEC_CHAIN, "index_batch", VT_INT, 1, 1000, NET(index_batch) },
	{ SEC_CHAIN, "index_logs_range", VT_INT, 1, 100000, NET(index_logs_range) },
	{ SEC_CHAIN, "index_retention_blocks", VT_INT, 0, INT64_MAX, NET(index_retention_blocks) },
	{ SEC_CHAIN, "index_receipts", VT_BOOL, 0, 1, NET(index_receipts) },
	/* ---- Gas: prices, sponsorship and the sampler (docs/gas.md) ---- */
	{ SEC_SERVER, "gas_sample_max_age", VT_INT, 1, 86400, CFG(gas_sample_max_age) },
	{ SEC_SERVER, "paymaster_validity", VT_INT, 10, 86400, CFG(paymaster_validity) },
	{ SEC_CHAIN, "paymaster_key_file", VT_PATH, 0, 0, NET(paymaster_key_file) },
	{ SEC_PLAN, "sponsor_usd_per_day", VT_DECIMAL, 0, 0, PLAN(sponsor_usd_per_day) },
	{ SEC_SERVER, "sponsor_usd_per_day", VT_DECIMAL, 0, 0, CFG(sponsor_usd_per_day) },
	{ SEC_CHAIN, "block_seconds", VT_INT, 1, 3600, NET(block_seconds) },
	{ SEC_CHAIN, "gas_sample", VT_BOOL, 0, 1, NET(gas_sample) },
	{ SEC_CHAIN, "gas_priority_floor", VT_DECIMAL, 0, 0, NET(gas_priority_floor) },
	{ SEC_PRICES, "native", VT_DECIMAL, 0, 0, PRICE(native) },
	/* ---- Tokens (docs/tokens.md); token price keys are read by token_price() ---- */
	{ SEC_SERVER, "token_list", VT_PATH, 0, 0, CFG(token_list) },
	{ SEC_SERVER, "price_max_age", VT_INT, 1, INT64_C(31536000), CFG(price_max_age) },
	{ SEC_SERVER, "token_refresh_seconds", VT_INT, 0, 86400, CFG(token_refresh_seconds) },
	{ SEC_SERVER, "token_balances_max", VT_INT, 1, 10000, CFG(token_balances_max) },
	/* ---- The JSON-RPC response cache (lib/rpc/rpc_cache.c; docs/rpc.md) ---- */
	{ SEC_SERVER, "rpc_cache", VT_BOOL, 0, 1, CFG(rpc_cache) },
	{ SEC_SERVER, "rpc_cache_mb", VT_INT, 1, 1024 * 1024, CFG(rpc_cache_mb) },
	{ SEC_SERVER, "rpc_cache_max_item", VT_INT, 1024, 64 * MiB, CFG(rpc_cache_max_item) },
	{ SEC_SERVER, "rpc_cache_file", VT_PATH, 0, 0, CFG(rpc_cache_file) },
	{ SEC_CHAIN, "finality_depth", VT_INT, 1, 1000000, NET(finality_depth) },
	{ SEC_CHAIN, "cache_ttl_ms", VT_INT, 0, 3600000, NET(cache_ttl_ms) },
	{ SEC_CHAIN, "cache", VT_BOOL, 0, 1, NET(cache) },
	/* ---- NFTs: gateways, the metadata retry backoff, the fetch guard per network ---- */
	{ SEC_SERVER, "ipfs_gateway", VT_HTTPURL, 0, 0, CFG(ipfs_gateway) },
	{ SEC_SERVER, "arweave_gateway", VT_HTTPURL, 0, 0, CFG(arweave_gateway) },
	{ SEC_SERVER, "nft_retry_seconds", VT_INT, 1, 86400, CFG(nft_retry_seconds) },
	{ SEC_CHAIN, "allow_private_urls", VT_BOOL, 0, 1, NET(allow_private_urls) },
	/* ---- Bundler: the submitter's key and beneficiary (docs/bundler.md) ---- */
	{ SEC_CHAIN, "bundler_key", VT_PATH, 0, 0, NET(bundler_key) },
	{ SEC_CHAIN, "bundler_beneficiary", VT_ADDR, 0, 0, NET(bundler_beneficiary) },
	{ SEC_CHAIN, "trace_validation", VT_TEXT, 0, 0, NET(trace_validation) },
	{ SEC_CHAIN, "debug_bundler", VT_BOOL, 0, 1, NET(debug_bundler) },
	/* ---- ERC-4337 v0.7 and v0.8 beside v0.6 (docs/wallets.md, docs/gas.md) ---- */
	{ SEC_CHAIN, "entry_point_version", VT_TEXT, 0, 0, NET(entry_point_version) },
	{ SEC_CHAIN, "entry_point_v07", VT_ADDR, 0, 0, NET(entry_point_v07) },
	{ SEC_CHAIN, "account_factory_v07", VT_ADDR, 0, 0, NET(account_factory_v07) },
	{ SEC_CHAIN, "account_implementation_v07", VT_ADDR, 0, 0, NET(account_implementation_v07) },
	{ SEC_CHAIN, "paymaster_v07", VT_ADDR, 0, 0, NET(paymaster_v07) },
	{ SEC_CHAIN, "entry_point_v08", VT_ADDR, 0, 0, NET(entry_point_v08) },
	{ SEC_CHAIN, "account_factory_v08", VT_ADDR, 0, 0, NET(account_factory_v08) },
	{ SEC_CHAIN, "account_implementation_v08", VT_ADDR, 0, 0, NET(account_implementation_v08) },
	{ SEC_CHAIN, "paymaster_v08", VT_ADDR, 0, 0, NET(paymaster_v08) },
	/* ---- Webhooks: the cap per plan, delivery and its e-mail (docs/webhooks.md) ---- */
	{ SEC_PLAN, "webhooks", VT_INT, 0, 1000000, PLAN(webhooks) },
	{ SEC_PLAN, "webhook_deliveries", VT_INT, 0, INT64_C(1000000000), PLAN(webhook_deliveries) },
	{ SEC_WEBHOOKS, "timeout_ms", VT_INT, 100, 600000, WH(timeout_ms) },
	{ SEC_WEBHOOKS, "retry_schedule", VT_TEXT, 0, 0, WH(retry_schedule) },
	{ SEC_WEBHOOKS, "retry_schedule_b", VT_TEXT, 0, 0, WH(retry_schedule_b) },
	{ SEC_WEBHOOKS, "ca_file", VT_PATH, 0, 0, WH(ca_file) },
	{ SEC_WEBHOOKS, "parallel", VT_INT, 1, 4096, WH(parallel) },
	{ SEC_WEBHOOKS, "retention_seconds", VT_INT, 60, INT64_C(31536000), WH(retention_seconds) },
	{ SEC_SMTP, "url", VT_TEXT, 0, 0, WH(smtp_url) },
	{ SEC_SMTP, "from", VT_TEXT, 0, 0, WH(smtp_from) },
	/* ---- Rate limits: the per-second buckets' size (docs/limits.md) ---- */
	{ SEC_PLAN, "burst", VT_INT, 0, 3600, PLAN(burst) },
	/* ---- Webhooks: the fences, events per account and day, backlog, expiry ---- */
	{ SEC_PLAN, "webhook_events_day", VT_INT, 0, INT64_C(1000000000), PLAN(webhook_events_day) },
	{ SEC_PLAN, "webhook_backlog", VT_INT, 0, INT64_C(1000000000), PLAN(webhook_backlog) },
	{ SEC_WEBHOOKS, "event_ttl_seconds", VT_INT, 60, INT64_C(31536000), WH(event_ttl_seconds) },
};

/* The plans of SPEC.md section 8, present unless the file redefines them. */
static const struct bp_plan default_plans[] = {
	{ "free", 10, 100000, 200, 0, 10, 5, 1000, 1000, 1000, BP_PLAN_BURST, "10" },
	{ "growth", 100, 5000000, 2000, 1, 100, 100, 0, 1000000, 100000, BP_PLAN_BURST, "1000" },
	{ "enterprise", 0, 0, 0, 1, 0, 0, 0, 0, 0, BP_PLAN_BURST, "0" },
};

struct loader {
	struct bp_config *cfg;
	FILE		*fp;
	const char	*file;
	char		 dir[4096];
	int		 line;
	int		 failed;
	char		*err;
	size_t		 errlen;
	char		 cursec[128];
	int		 section_line;	/* line of a [section] header not yet started, or 0 */
	enum section_kind cursec_kind;
	void		*cursec_obj;
};

static void
fail(struct loader *l, const char *key, const char *fmt, const char *what)
{
	char msg[256];

	if (l->failed)
		return;
	l->failed = 1;
	snprintf(msg, sizeof(msg), fmt, what);
	snprintf(l->err, l->errlen, "%s:%d: %s%s%s", l->file, l->line,
	    key ? key : "", key ? ": " : "", msg);
}

/*
 * inih calls this once per physical line; counting here gives the line of every callback. It
 * also notes each [section] header: inih does not report a section until its first key, so a
 * section repeated right after itself would otherwise look like one section.
 */
static char *
reader(char *str, int num, void *stream)
{
	struct loader *l = stream;
	char max[16];
	size_t n;

	if (num > LINE_MAX_LEN)
		num = LINE_MAX_LEN;
	if (fgets(str, num, l->fp) == NULL)
		return NULL;
	l->line++;
	n = strlen(str);
	if (n > 0 && str[n - 1] != '\n' && !feof(l->fp)) {
		/* inih's buffer (INI_MAX_LINE) holds num - 2 characters, a newline and a NUL. */
		snprintf(max, sizeof(max), "%d", num - 2);
		fail(l, NULL, "line longer than %s characters", max);
	}
	if (str[strspn(str, " \t")] == '[')
		l->section_line = l->line;
	return str;
}

static int
valid_name(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= BP_NAME_MAX)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		    *s == '-'))
			return 0;
	return 1;
}

/*
 * Starts [section], or takes up again one given before: a later block of a section adds to it,
 * a key given again replaces the earlier value (later wins), and each upstream line adds a
 * fallback. So lines appended to a written config (make run EXTRA_CONFIG=FILE) override it.
 */
static int
start_section(struct loader *l, const char *section)
{
	struct bp_config *c = l->cfg;
	const char *arg;
	size_t i;

	snprintf(l->cursec, sizeof(l->cursec), "%s", section);
	l->cursec_obj = NULL;
	if (strcmp(section, "server") == 0) {
		l->cursec_kind = SEC_SERVER;
		l->cursec_obj = c;
		return 0;
	}
	if (strncmp(section, "plan ", 5) == 0) {
		arg = section + 5;
		if (!valid_name(arg)) {
			fail(l, NULL, "bad plan name in [%s]", section);
			return -1;
		}
		l->cursec_kind = SEC_PLAN;
		for (i = 0; i < c->nplans; i++)
			if (strcmp(c->plans[i].name, arg) == 0)
				break;
		if (i == c->nplans) {
			if (c->nplans == BP_MAX_PLANS) {
				fail(l, NULL, "too many plans at [%s]", section);
				return -1;
			}
			memset(&c->plans[i], 0, sizeof(c->plans[i]));
			bp_strlcpy(c->plans[i].name, arg, sizeof(c->plans[i].name));
			c->plans[i].burst = BP_PLAN_BURST;
			c->nplans++;
		}
		l->cursec_obj = &c->plans[i];
		return 0;
	}
	if (strncmp(section, "chain ", 6) == 0) {
		char chain[64], *dot;
		struct bp_network *n;

		arg = section + 6;
		if (bp_strlcpy(chain, arg, sizeof(chain)) == -1 ||
		    (dot = strchr(chain, '.')) == NULL) {
			fail(l, NULL, "[%s]: expected [chain NAME.NETWORK]", section);
			return -1;
		}
		*dot = '\0';
		if (!valid_name(chain) || !valid_name(dot + 1)) {
			fail(l, NULL, "[%s]: bad chain or network name", section);
			return -1;
		}
		l->cursec_kind = SEC_CHAIN;
		for (i = 0; i < c->nnets; i++)
			if (strcmp(c->nets[i].chain, chain) == 0 &&
			    strcmp(c->nets[i].network, dot + 1) == 0) {
				l->cursec_obj = &c->nets[i];
				return 0;
			}
		if (c->nnets == BP_MAX_NETWORKS) {
			fail(l, NULL, "too many networks at [%s]", section);
			return -1;
		}
		n = &c->nets[c->nnets++];
		memset(n, 0, sizeof(*n));
		bp_strlcpy(n->chain, chain, sizeof(n->chain));
		bp_strlcpy(n->network, dot + 1, sizeof(n->network));
		n->kind = BP_CHAIN_EVM;
		n->archive_depth = 128;
		n->index = 1;
		n->gas_sample = 1;
		n->index_batch = 100;
		n->index_logs_range = 100;
		n->index_retention_blocks = 100000;
		n->index_receipts = 1;
		n->chain_id = -1;
		n->block_seconds = 12;
		bp_strlcpy(n->gas_priority_floor, "0.001", sizeof(n->gas_priority_floor));
		n->finality_depth = 1024;
		n->cache = 1;
		n->allow_private_urls = -1;	/* nfts: [server]'s */
		l->cursec_kind = SEC_CHAIN;
		l->cursec_obj = n;
		return 0;
	}
	if (strncmp(section, "prices ", 7) == 0) {	/* gas: USD prices of a chain */
		arg = section + 7;
		if (!valid_name(arg)) {
			fail(l, NULL, "bad chain name in [%s]", section);
			return -1;
		}
		l->cursec_kind = SEC_PRICES;
		for (i = 0; i < c->nprices; i++)
			if (strcmp(c->prices[i].chain, arg) == 0) {
				l->cursec_obj = &c->prices[i];
				return 0;
			}
		if (c->nprices == BP_MAX_PRICES) {
			fail(l, NULL, "too many price sections at [%s]", section);
			return -1;
		}
		memset(&c->prices[c->nprices], 0, sizeof(c->prices[0]));
		bp_strlcpy(c->prices[c->nprices].chain, arg, sizeof(c->prices[0].chain));
		l->cursec_kind = SEC_PRICES;
		l->cursec_obj = &c->prices[c->nprices++];
		return 0;
	}
	if (strcmp(section, "webhooks") == 0 || strcmp(section, "smtp") == 0) {
		/* Their keys are offsets into the config itself (WH()). */
		l->cursec_kind = section[0] == 'w' ? SEC_WEBHOOKS : SEC_SMTP;
		l->cursec_obj = c;
		return 0;
	}
	fail(l, NULL, "unknown section [%s]", section);
	return -1;
}

/* Gas: "12", "0.5", "3000.25": digits, then optionally '.' and 1 to 18 digits. */
static int
valid_decimal(const char *s, size_t cap)
{
	size_t n = strspn(s, "0123456789"), f;

	if (n == 0 || n > 20)
		return 0;
	if (s[n] == '\0')
		return n < cap;
	if (s[n] != '.')
		return 0;
	f = strspn(s + n + 1, "0123456789");
	return f >= 1 && f <= 18 && s[n + 1 + f] == '\0' && n + 1 + f < cap;
}

static int
set_value(struct loader *l, const struct rule *r, const char *value)
{
	char *field = (char *)l->cursec_obj + r->off;
	int64_t v;
	size_t i;

	switch (r->type) {
	case VT_INT:
		if (bp_parse_int64(value, r->min, r->max, &v) == -1) {
			fail(l, r->key, "not a whole number in range: '%s'", value);
			return -1;
		}
		memcpy(field, &v, sizeof(v));
		return 0;
	case VT_BOOL: {
		int b;

		if (!strcmp(value, "true") || !strcmp(value, "yes") || !strcmp(value, "1"))
			b = 1;
		else if (!strcmp(value, "false") || !strcmp(value, "no") || !strcmp(value, "0"))
			b = 0;
		else {
			fail(l, r->key, "expected true or false, not '%s'", value);
			return -1;
		}
		memcpy(field, &b, sizeof(b));
		return 0;
	}
	case VT_KIND: {
		enum bp_chain_kind k;

		if (strcmp(value, "evm") == 0)
			k = BP_CHAIN_EVM;
		else if (strcmp(value, "solana") == 0)
			k = BP_CHAIN_SOLANA;
		else {
			fail(l, r->key, "expected evm or solana, not '%s'", value);
			return -1;
		}
		memcpy(field, &k, sizeof(k));
		return 0;
	}
	case VT_ADDR:
		if (strlen(value) != 42 || value[0] != '0' || (value[1] != 'x' && value[1] != 'X') ||
		    strspn(value + 2, "0123456789abcdefABCDEF") != 40) {
			fail(l, r->key, "not a 0x address of 40 hex digits: '%s'", value);
			return -1;
		}
		for (i = 0; i < 42; i++)
			field[i] = (char)(value[i] >= 'A' && value[i] <= 'F' ? value[i] + 32 :
			    value[i] == 'X' ? 'x' : value[i]);
		field[42] = '\0';
		return 0;
	case VT_TEXT:
		if (bp_strlcpy(field, value, r->size) == -1) {
			fail(l, r->key, "too long: '%s'", value);
			return -1;
		}
		return 0;
	case VT_DECIMAL:
		if (!valid_decimal(value, r->size)) {
			fail(l, r->key, "not a decimal number such as 12 or 0.5: '%s'", value);
			return -1;
		}
		memcpy(field, value, strlen(value) + 1);
		return 0;
	case VT_URL: {
		struct bp_network *n = l->cursec_obj;

		if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0) {
			fail(l, r->key, "not an http:// or https:// URL: '%s'", value);
			return -1;
		}
		/* upstream is the one key that may repeat: each line adds a fallback. */
		if (n->nupstream == BP_MAX_UPSTREAMS) {
			fail(l, r->key, "more than %s upstreams", "8");
			return -1;
		}
		if (bp_strlcpy(n->upstream[n->nupstream], value, BP_URL_MAX) == -1) {
			fail(l, r->key, "URL too long: '%s'", value);
			return -1;
		}
		n->nupstream++;
		return 0;
	}
	case VT_HTTPURL:
		if ((strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0) ||
		    strpbrk(value, " \t") != NULL) {
			fail(l, r->key, "not an http:// or https:// URL: '%s'", value);
			return -1;
		}
		if (bp_strlcpy(field, value, r->size) == -1) {
			fail(l, r->key, "URL too long: '%s'", value);
			return -1;
		}
		return 0;
	case VT_PATH: {
		char tmp[4096];
		int w;

		if (value[0] == '\0') {
			fail(l, r->key, "empty path%s", "");
			return -1;
		}
		/* A database URL (postgresql://) is not a path: kept as written. */
		if (value[0] == '/' || bp_db_is_url(value))
			w = snprintf(tmp, sizeof(tmp), "%s", value);
		else
			w = snprintf(tmp, sizeof(tmp), "%s/%s", l->dir, value);
		if (w < 0 || (size_t)w >= sizeof(tmp) || (size_t)w >= r->size) {
			fail(l, r->key, "path too long%s", "");
			return -1;
		}
		memcpy(field, tmp, (size_t)w + 1);
		return 0;
	}
	default:
		break;
	}
	fail(l, r->key, "internal: bad rule%s", "");
	return -1;
}

/* Tokens: s is "0x" + 40 hex digits; copies it in lower case into out (43 bytes). 0 or -1. */
static int
lower_addr(const char *s, char *out)
{
	size_t i;

	if (strlen(s) != 42 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') ||
	    strspn(s + 2, "0123456789abcdefABCDEF") != 40)
		return -1;
	for (i = 0; i < 42; i++)
		out[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] + 32 : s[i] == 'X' ? 'x' : s[i]);
	out[42] = '\0';
	return 0;
}

/*
 * Tokens: a `0xCONTRACT = PRICE` or `0xCONTRACT = chainlink:0xAGGREGATOR` line of a
 * [prices CHAIN] section (docs/tokens.md). A contract given again replaces its price.
 */
static int
token_price(struct loader *l, const char *name, const char *value)
{
	struct bp_prices *p = l->cursec_obj;
	struct bp_config *c = l->cfg;
	struct bp_token_price t;
	size_t i;

	memset(&t, 0, sizeof(t));
	memcpy(t.chain, p->chain, sizeof(t.chain));
	if (lower_addr(name, t.contract) == -1) {
		fail(l, name, "a token price key is a 0x address of 40 hex digits%s", "");
		return -1;
	}
	if (strncmp(value, "chainlink:", 10) == 0) {
		if (lower_addr(value + 10, t.aggregator) == -1) {
			fail(l, name, "not chainlink:0x + 40 hex digits: '%s'", value);
			return -1;
		}
	} else if (!valid_decimal(value, sizeof(t.price))) {
		fail(l, name, "not a decimal USD price such as 1.0001 or chainlink:0x...: '%s'",
		    value);
		return -1;
	} else
		memcpy(t.price, value, strlen(value) + 1);
	for (i = 0; i < c->ntoken_prices; i++)
		if (strcmp(c->token_prices[i].chain, t.chain) == 0 &&
		    strcmp(c->token_prices[i].contract, t.contract) == 0)
			break;
	if (i == BP_MAX_TOKEN_PRICES) {
		fail(l, name, "more than 256 token prices in all [prices] sections%s", "");
		return -1;
	}
	c->token_prices[i] = t;
	if (i == c->ntoken_prices)
		c->ntoken_prices++;
	return 0;
}

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct loader *l = user;
	static const char *const secnames[SEC__MAX] = { "server", "plan", "chain", "prices",
	    "webhooks", "smtp" };
	size_t i;

	if (l->failed)
		return 0;
	if (name == NULL) {	/* inih >= 50 may report a section start with a NULL name */
		l->section_line = 0;
		return start_section(l, section) == 0;
	}
	if (l->section_line != 0 || strcmp(section, l->cursec) != 0) {
		int line = l->line, rc;

		/* Errors about the section name the line of its header. */
		if (l->section_line != 0)
			l->line = l->section_line;
		l->section_line = 0;
		rc = start_section(l, section);
		l->line = line;
		if (rc == -1)
			return 0;
	}
	if (l->cursec_obj == NULL) {
		fail(l, name, "key outside any section%s", "");
		return 0;
	}
	if (l->cursec_kind == SEC_PRICES && strncmp(name, "0x", 2) == 0)
		return token_price(l, name, value) == 0;
	for (i = 0; i < BP_NITEMS(rules); i++)
		if (rules[i].sec == l->cursec_kind && strcmp(rules[i].key, name) == 0)
			return set_value(l, &rules[i], value) == 0;
	fail(l, name, "unknown key in a [%s] section", secnames[l->cursec_kind]);
	return 0;
}

/* A retry schedule ("10,60,600,3600,21600": 1 to 16 delays, each 1 s to a week). */
static int
check_schedule(struct loader *l, const char *name, const char *p, int64_t *retry,
    size_t *nretry)
{
	char item[32];
	const char *comma;
	size_t n;

	*nretry = 0;
	for (;;) {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		while (n > 0 && *p == ' ')
			p++, n--;
		while (n > 0 && p[n - 1] == ' ')
			n--;
		if (n == 0 || n >= sizeof(item) || *nretry == BP_WEBHOOK_RETRIES_MAX) {
			fail(l, name, "expected 1 to 16 comma-separated seconds%s", "");
			return -1;
		}
		memcpy(item, p, n);
		item[n] = '\0';
		if (bp_parse_int64(item, 1, 604800, &retry[*nretry]) == -1) {
			fail(l, name, "each delay is 1 to 604800 seconds, not '%s'", item);
			return -1;
		}
		(*nretry)++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return 0;
}

/* Webhooks: the two retry schedules, the e-mail's url. */
static int
check_webhooks(struct loader *l)
{
	struct bp_webhooks_config *w = &l->cfg->webhooks;

	if (check_schedule(l, "retry_schedule", w->retry_schedule, w->retry, &w->nretry) == -1 ||
	    check_schedule(l, "retry_schedule_b", w->retry_schedule_b, w->retry_b,
	    &w->nretry_b) == -1)
		return -1;
	if (w->smtp_url[0] != '\0' && strncmp(w->smtp_url, "smtp://", 7) != 0 &&
	    strncmp(w->smtp_url, "smtps://", 8) != 0) {
		fail(l, "url", "[smtp] url must be smtp:// or smtps://%s", "");
		return -1;
	}
	if (w->smtp_url[0] != '\0' && w->smtp_from[0] == '\0') {
		fail(l, "from", "required in [smtp] with a url%s", "");
		return -1;
	}
	return 0;
}

/* Checks what single keys cannot: required keys and relations between sections. */
static int
check(struct loader *l)
{
	struct bp_config *c = l->cfg;
	char err[200];
	size_t i;

	l->line = 0;
	if (c->database[0] == '\0') {
		fail(l, "database", "required in [server]%s", "");
		return -1;
	}
	/* The counters are a file: next to a SQLite database, named on PostgreSQL. */
	if (c->limits_file[0] == '\0' && bp_db_is_url(c->database)) {
		fail(l, "limits_file", "required when database is a postgresql:// URL%s", "");
		return -1;
	}
	if (c->limits_file[0] == '\0' &&
	    snprintf(c->limits_file, sizeof(c->limits_file), "%s.limits", c->database) >=
	    (int)sizeof(c->limits_file)) {
		fail(l, "limits_file", "path too long%s", "");
		return -1;
	}
	/* A URL has no "next to": a head's own files go beside its counters (docs/scale.md). */
	if (c->state_dir[0] == '\0' && bp_db_is_url(c->database) &&
	    snprintf(c->state_dir, sizeof(c->state_dir), "%.*s",
	    (int)(strrchr(c->limits_file, '/') - c->limits_file), c->limits_file) < 0)
		return -1;
	if (c->limits_url[0] != '\0' && bp_limits_redis_parse(c->limits_url, err, sizeof(err)) == -1) {
		fail(l, "limits", "%s", err);
		return -1;
	}
	if (bp_metrics_allow_check(c->metrics_allow, err, sizeof(err)) == -1) {
		fail(l, "metrics_allow", "%s", err);
		return -1;
	}
	if (check_webhooks(l) == -1)
		return -1;
	for (i = 0; i < c->nnets; i++) {
		struct bp_network *n = &c->nets[i];
		char sec[80];

		snprintf(sec, sizeof(sec), "[chain %s.%s]", n->chain, n->network);
		if (n->nupstream == 0) {
			fail(l, "upstream", "at least one upstream is required in %s", sec);
			return -1;
		}
		if (n->kind == BP_CHAIN_EVM && n->chain_id < 0) {
			fail(l, "chain_id", "required for an evm chain in %s", sec);
			return -1;
		}
	}
	return 0;
}

struct bp_config *
bp_config_load(const char *path, char *err, size_t errlen)
{
	struct bp_config *cfg = NULL, *ret = NULL;
	struct loader l;
	const char *slash;
	int rc;

	memset(&l, 0, sizeof(l));
	l.err = err;
	l.errlen = errlen;
	if (path == NULL && (path = getenv("BLOCKPORT_CONFIG")) == NULL) {
		snprintf(err, errlen, "BLOCKPORT_CONFIG is not set (the path of blockport.ini)");
		goto out;
	}
	l.file = path;
	if ((cfg = calloc(1, sizeof(*cfg))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	l.cfg = cfg;
	if (bp_strlcpy(cfg->path, path, sizeof(cfg->path)) == -1) {
		snprintf(err, errlen, "config path too long");
		goto out;
	}
	if ((slash = strrchr(path, '/')) == NULL)
		snprintf(l.dir, sizeof(l.dir), ".");
	else
		snprintf(l.dir, sizeof(l.dir), "%.*s", (int)(slash - path), path);
	if (l.dir[0] == '\0')
		snprintf(l.dir, sizeof(l.dir), "/");
	cfg->max_body = 1 * MiB;
	cfg->max_response = 32 * MiB;
	cfg->max_batch = 100;
	cfg->upstream_timeout_ms = 10000;
	cfg->upstream_down_seconds = 30;
	cfg->upstream_first_byte_ms = 1000;
	cfg->anon_rps = 20;
	cfg->key_cache_seconds = 30;
	cfg->gas_sample_max_age = 30;
	cfg->paymaster_validity = 600;
	cfg->price_max_age = 3600;
	cfg->token_refresh_seconds = 60;
	cfg->token_balances_max = 1000;
	cfg->rpc_cache = 1;
	cfg->rpc_cache_mb = 256;
	cfg->rpc_cache_max_item = 1 * MiB;
	bp_strlcpy(cfg->ipfs_gateway, "https://ipfs.io/ipfs/", sizeof(cfg->ipfs_gateway));
	bp_strlcpy(cfg->arweave_gateway, "https://arweave.net/", sizeof(cfg->arweave_gateway));
	cfg->nft_retry_seconds = 300;
	cfg->webhooks.timeout_ms = 15000;
	bp_strlcpy(cfg->webhooks.retry_schedule, "10,60,600,3600,21600",
	    sizeof(cfg->webhooks.retry_schedule));
	bp_strlcpy(cfg->webhooks.retry_schedule_b, "1,5,30,300,1800,7200,28800",
	    sizeof(cfg->webhooks.retry_schedule_b));
	cfg->webhooks.parallel = 256;
	cfg->webhooks.retention_seconds = 7 * 86400;
	cfg->webhooks.event_ttl_seconds = 3 * 86400;
	memcpy(cfg->plans, default_plans, sizeof(default_plans));
	cfg->nplans = BP_NITEMS(default_plans);
	if ((l.fp = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	rc = ini_parse_stream(reader, &l, handler, &l);
	fclose(l.fp);
	if (l.failed)
		goto out;
	if (rc != 0) {
		l.line = rc;
		fail(&l, NULL, "syntax error (expected [section] or key = value)%s", "");
		goto out;
	}
	if (check(&l) == -1)
		goto out;
	ret = cfg;
	cfg = NULL;
out:
	free(cfg);
	return ret;
}

void
bp_config_free(struct bp_config *c)
{
	free(c);
}

const struct bp_plan *
bp_config_plan(const struct bp_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nplans; i++)
		if (strcmp(c->plans[i].name, name) == 0)
			return &c->plans[i];
	return NULL;
}

int
bp_config_state_path(const struct bp_config *c, const char *suffix, char *out, size_t cap)
{
	int n = c->state_dir[0] == '\0' ? snprintf(out, cap, "%s%s", c->database, suffix) :
	    snprintf(out, cap, "%s/blockport%s", c->state_dir, suffix);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

const struct bp_network *
bp_config_network(const struct bp_config *c, const char *chain, const char *network)
{
	size_t i;

	for (i = 0; i < c->nnets; i++)
		if (strcmp(c->nets[i].chain, chain) == 0 &&
		    strcmp(c->nets[i].network, network) == 0)
			return &c->nets[i];
	return NULL;
}

const struct bp_network *
bp_config_rest_network(const struct bp_config *c, const char *chain, int testkey,
    const char *network)
{
	const struct bp_network *first = NULL;
	size_t i;

	if (network != NULL)
		return bp_config_network(c, chain, network);
	for (i = 0; i < c->nnets; i++) {
		const struct bp_network *n = &c->nets[i];

		if (strcmp(n->chain, chain) != 0 || n->testnet != (testkey != 0))
			continue;
		if (n->rest_default)
			return n;
		if (first == NULL)
			first = n;
	}
	return first;
}
