/*
 * ERC-20 token metadata, read from the chain and cached in SQLite (token.h, docs/tokens.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "index/index_read.h"
#include "price.h"
#include "spam.h"
#include "token.h"

/* The selectors of the reads, in the order of a token's reads after its code. */
static const uint8_t sel_decimals[4] = { 0x31, 0x3c, 0xe5, 0x67 };	/* decimals() */
static const uint8_t sel_supply[4] = { 0x18, 0x16, 0x0d, 0xdd };	/* totalSupply() */
static const uint8_t sel_name[4] = { 0x06, 0xfd, 0xde, 0x03 };		/* name() */
static const uint8_t sel_symbol[4] = { 0x95, 0xd8, 0x9b, 0x41 };	/* symbol() */

/* The reads of one token, in a batch: what each is. */
enum token_read {
	TR_CODE,	/* 0: eth_getCode */
	TR_DECIMALS,	/* 1 */
	TR_SUPPLY,	/* 2 */
	TR_NAME,	/* 3 */
	TR_SYMBOL,	/* 4 */
	TR__MAX
};

int
bp_token_chain_key(const struct bp_network *net, char *out, size_t cap)
{
	int w = snprintf(out, cap, "%s.%s", net->chain, net->network);

	return w < 0 || (size_t)w >= cap ? -1 : 0;
}

/* Copies text p[0..n) up to its first NUL into out, cut to cap - 1 bytes. */
static void
copy_text(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t i;

	for (i = 0; i < n && i + 1 < cap && p[i] != 0; i++)
		out[i] = (char)p[i];
	out[i] = '\0';
}

int
bp_token_decode_text(const uint8_t *data, size_t len, char *out, size_t cap)
{
	const uint8_t *p;
	size_t n;

	if (cap == 0)
		return -1;
	out[0] = '\0';
	if (data == NULL)
		return -1;
	/* bytes32 (MKR, SAI): exactly one word, which is not the offset of an ABI string. */
	if (len == 32) {
		copy_text(data, 32, out, cap);
		return 0;
	}
	if (bp_abi_read_bytes(data, len, 0, &p, &n) == -1)
		return -1;
	copy_text(p, n, out, cap);
	return 0;
}

/* ---- the cache ---- */

struct memo_entry {
	char		chain[BP_INDEX_CHAIN_MAX];	/* "" when the slot is empty */
	struct bp_token	t;
	int64_t		refreshed_at;
	int64_t		copied_at;	/* when read from the row: BP_TOKEN_MEMO_SECONDS good */
};

struct bp_token_memo {
	struct memo_entry	e[BP_TOKEN_MEMO];
};

struct bp_token_memo *
bp_token_memo_new(void)
{
	return calloc(1, sizeof(struct bp_token_memo));
}

void
bp_token_memo_free(struct bp_token_memo *m)
{
	free(m);
}

/* The slot of chain and contract (FNV-1a of both). */
static struct memo_entry *
memo_slot(struct bp_token_memo *m, const char *chain, const char *contract)
{
	uint32_t h = 2166136261u;
	const char *p;

	for (p = chain; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (p = contract; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return &m->e[h % BP_TOKEN_MEMO];
}

/* The memo's copy of contract into *t when it is still fresh; 1, else 0. */
static int
memo_get(struct bp_token_memo *m, const char *chain, const char *contract, int64_t now,
    int64_t max_age, struct bp_token *t)
{
	struct memo_entry *e;

	if (m == NULL)
		return 0;
	e = memo_slot(m, chain, contract);
	if (strcmp(e->chain, chain) != 0 || strcmp(e->t.contract, contract) != 0 ||
	    now - e->refreshed_at > max_age || now - e->copied_at > BP_TOKEN_MEMO_SECONDS)
		return 0;
	*t = e->t;
	return 1;
}

static void
memo_put(struct bp_token_memo *m, const char *chain, const struct bp_token *t,
    int64_t refreshed_at, int64_t now)
{
	struct memo_entry *e;

	if (m == NULL)
		return;
	e = memo_slot(m, chain, t->contract);
	bp_strlcpy(e->chain, chain, sizeof(e->chain));
	e->t = *t;
	e->refreshed_at = refreshed_at;
	e->copied_at = now;
}

/*
 * The cached row of contract into *t, and when it was refreshed into *at. Returns 2 when fresh,
 * 1 when its supply and verdict are older than max_age (name, symbol and decimals still good),
 * 0 when not cached, -1 on error.
 */
static int
cache_get(struct bp_db *db, const char *chain, const char *contract, int64_t now,
    int64_t max_age, struct bp_token *t, int64_t *at)
{
	static const char sql[] = "SELECT name, symbol, decimals, total_supply, spam, refreshed_at"
	    " FROM token_metadata WHERE chain = ? AND contract = ?";
	struct bp_stmt *st;
	const char *supply;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	switch (bp_stmt_step(st)) {
	case BP_DB_ROW:
		memset(t, 0, sizeof(*t));
		bp_strlcpy(t->contract, contract, sizeof(t->contract));
		if ((t->has_name = !bp_col_is_null(st, 0)))
			bp_strlcpy(t->name, bp_col_text(st, 0), sizeof(t->name));
		if ((t->has_symbol = !bp_col_is_null(st, 1)))
			bp_strlcpy(t->symbol, bp_col_text(st, 1), sizeof(t->symbol));
		t->decimals = (unsigned)bp_col_int(st, 2);
		supply = bp_col_text(st, 3);
		if (bp_u256_from_dec(&t->total_supply, supply, strlen(supply)) == -1)
			bp_u256_from_u64(&t->total_supply, 0);
		t->spam = (int)bp_col_int(st, 4);
		*at = bp_col_int(st, 5);
		rc = now - *at <= max_age ? 2 : 1;
		break;
	case BP_DB_DONE:
		rc = 0;
		break;
	default:
		break;
	}
	bp_stmt_reset(st);
	return rc;
}

/* Writes t (read or refreshed now) into the cache; the caller holds a transaction. 0 or -1. */
static int
cache_put(struct bp_db *db, const char *chain, const struct bp_token *t, int64_t now)
{
	static const char sql[] = "INSERT INTO token_metadata (chain, contract, name, symbol,"
	    " decimals, total_supply, spam, fetched_at, refreshed_at)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chain, contract) DO UPDATE SET"
	    " total_supply = excluded.total_supply, spam = excluded.spam,"
	    " refreshed_at = excluded.refreshed_at";
	char supply[BP_U256_DEC_MAX];
	struct bp_stmt *st;
	int rc;

	if (bp_u256_to_dec(&t->total_supply, supply, sizeof(supply)) == -1 ||
	    (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, t->contract);
	bp_stmt_text(st, 3, t->has_name ? t->name : NULL);
	bp_stmt_text(st, 4, t->has_symbol ? t->symbol : NULL);
	bp_stmt_int(st, 5, t->decimals);
	bp_stmt_text(st, 6, supply);
	bp_stmt_int(st, 7, t->spam);
	bp_stmt_int(st, 8, now);
	bp_stmt_int(st, 9, now);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
	return rc;
}

/* ---- reading from the chain ---- */

/* Sets up the reads of one token: all five when full, else (a refresh) its supply only. */
static size_t
plan_reads(struct bp_chain_read *rd, const uint8_t addr[20], int full)
{
	static const uint8_t *const sels[TR__MAX] = {
		NULL, sel_decimals, sel_supply, sel_name, sel_symbol,
	};
	size_t k, n = 0;

	for (k = 0; k < TR__MAX; k++) {
		if (!full && k != TR_SUPPLY)
			continue;
		memset(&rd[n], 0, sizeof(rd[n]));
		rd[n].op = k == TR_CODE ? BP_CHAIN_CODE : BP_CHAIN_CALL;
		memcpy(rd[n].address, addr, 20);
		rd[n].data = sels[k];
		rd[n].len = sels[k] != NULL ? 4 : 0;
		rd[n].block = BP_CHAIN_LATEST;
		n++;
	}
	return n;
}

/*
 * Whether a read's failure says nothing of the token (the node did not answer): then the token
 * is BP_TOKEN_UNREAD rather than "not a token".
 */
static int
unanswered(const struct bp_chain_read *rd)
{
	return rd->err.kind == BP_CHAIN_ERR_TRANSPORT || rd->err.kind == BP_CHAIN_ERR_PROTOCOL ||
	    rd->err.kind == BP_CHAIN_ERR_INTERNAL;
}

/* Reads the uint of a call's return word 0 into *v; 0, or -1 when absent or malformed. */
static int
call_u256(const struct bp_chain_read *rd, struct bp_u256 *v)
{
	if (rd->err.kind != BP_CHAIN_OK)
		return -1;
	return bp_abi_read_u256(rd->bytes, rd->nbytes, 0, v);
}

/* name() or symbol() into out; *has 1 when it was text. */
static void
call_text(const struct bp_chain_read *rd, char *out, size_t cap, int *has)
{
	*has = rd->err.kind == BP_CHAIN_OK &&
	    bp_token_decode_text(rd->bytes, rd->nbytes, out, cap) == 0;
	if (!*has)
		out[0] = '\0';
}

/*
 * Reads a full token's answers rd[0..TR__MAX) into *t (contract set). Returns BP_TOKEN_OK,
 * BP_TOKEN_NONE or BP_TOKEN_UNREAD.
 */
static int
read_full(const struct bp_chain_read *rd, struct bp_token *t)
{
	struct bp_u256 dec;
	uint64_t d;

	if (unanswered(&rd[TR_CODE]) || unanswered(&rd[TR_DECIMALS]) ||
	    unanswered(&rd[TR_SUPPLY]))
		return BP_TOKEN_UNREAD;
	if (rd[TR_CODE].err.kind != BP_CHAIN_OK || rd[TR_CODE].nbytes == 0)
		return BP_TOKEN_NONE;
	/* decimals() is a uint8 in the standard: anything above 255 is not an ERC-20. */
	if (call_u256(&rd[TR_DECIMALS], &dec) == -1 || bp_u256_to_u64(&dec, &d) == -1 ||
	    d > 255 || call_u256(&rd[TR_SUPPLY], &t->total_supply) == -1)
		return BP_TOKEN_NONE;
	t->decimals = (unsigned)d;
	call_text(&rd[TR_NAME], t->name, sizeof(t->name), &t->has_name);
	call_text(&rd[TR_SYMBOL], t->symbol, sizeof(t->symbol), &t->has_symbol);
	return BP_TOKEN_OK;
}

/* One token of a fetch: where it goes, and whether the cache had its name and decimals. */
struct pending {
	size_t		i;	/* index in the caller's arrays */
	int		full;	/* not cached: read everything */
	size_t		first;	/* its first read */
};

/*
 * Reads the tokens p[0..np) (at most BP_TOKEN_BATCH) in one JSON-RPC batch into out/found,
 * then works out their spam verdicts. No transaction is open.
 */
static int
fetch_batch(struct bp_db *db, struct bp_chain *ch, const struct bp_network *net,
    const char *chain, struct pending *p, size_t np, struct bp_token *out, int *found)
{
	struct bp_chain_read rd[BP_TOKEN_BATCH * TR__MAX];
	uint8_t addr[BP_TOKEN_BATCH][20];
	struct bp_token *t;
	size_t k, n = 0;
	int bits;

	for (k = 0; k < np; k++) {
		t = &out[p[k].i];
		if (bp_addr_parse(t->contract, strlen(t->contract), 0, addr[k]) == -1) {
			found[p[k].i] = BP_TOKEN_NONE;
			p[k].first = SIZE_MAX;
			continue;
		}
		p[k].first = n;
		n += plan_reads(&rd[n], addr[k], p[k].full);
	}
	if (n > 0)
		bp_chain_batch(ch, net, rd, n);
	for (k = 0; k < np; k++) {
		if (p[k].first == SIZE_MAX)
			continue;
		t = &out[p[k].i];
		if (p[k].full)
			found[p[k].i] = read_full(&rd[p[k].first], t);
		else if (unanswered(&rd[p[k].first]))
			found[p[k].i] = BP_TOKEN_UNREAD;
		else if (call_u256(&rd[p[k].first], &t->total_supply) == -1)
			found[p[k].i] = BP_TOKEN_NONE;	/* it stopped being a token */
		else
			found[p[k].i] = BP_TOKEN_OK;
		if (found[p[k].i] != BP_TOKEN_OK)
			continue;
		bits = bp_spam_check(db, chain, t->contract, t->has_name ? t->name : NULL,
		    t->has_symbol ? t->symbol : NULL, 1);
		if (bits == -1) {
			bp_chain_reads_free(rd, n);
			return -1;
		}
		t->spam = bits;
	}
	bp_chain_reads_free(rd, n);
	return 0;
}

/*
 * Writes the tokens of p[0..np) that were read into the cache, in one transaction, and once
 * committed into memo (may be NULL).
 */
static int
store_batch(struct bp_db *db, struct bp_token_memo *memo, const char *chain,
    const struct pending *p, size_t np, const struct bp_token *out, const int *found,
    int64_t now)
{
	size_t k;

	if (bp_db_begin(db) == -1)
		return -1;
	for (k = 0; k < np; k++)
		if (found[p[k].i] == BP_TOKEN_OK && cache_put(db, chain, &out[p[k].i], now) == -1) {
			bp_db_rollback(db);
			return -1;
		}
	if (bp_db_commit(db) == -1)
		return -1;
	for (k = 0; k < np; k++)
		if (found[p[k].i] == BP_TOKEN_OK)
			memo_put(memo, chain, &out[p[k].i], now, now);
	return 0;
}

int
bp_token_get_many(struct bp_db *db, struct bp_chain *ch, struct bp_token_memo *memo,
    const struct bp_config *cfg, const struct bp_network *net, const char *const contracts[],
    size_t n, int64_t now, struct bp_token *out, int *found)
{
	struct pending p[BP_TOKEN_BATCH];
	char chain[BP_INDEX_CHAIN_MAX];
	int64_t max_age = cfg->token_refresh_seconds, at = 0;
	size_t i, np = 0;
	int c;

	if (bp_token_chain_key(net, chain, sizeof(chain)) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		found[i] = BP_TOKEN_OK;
		if (memo_get(memo, chain, contracts[i], now, max_age, &out[i]))
			continue;
		if ((c = cache_get(db, chain, contracts[i], now, max_age, &out[i], &at)) == -1)
			return -1;
		if (c == 2) {
			memo_put(memo, chain, &out[i], at, now);
			continue;
		}
		if (c == 0) {
			memset(&out[i], 0, sizeof(out[i]));
			bp_strlcpy(out[i].contract, contracts[i], sizeof(out[i].contract));
		}
		p[np].i = i;
		p[np].full = c == 0;
		if (++np == BP_TOKEN_BATCH) {
			if (fetch_batch(db, ch, net, chain, p, np, out, found) == -1 ||
			    store_batch(db, memo, chain, p, np, out, found, now) == -1) {
				bp_err("%s: %s: caching token metadata failed", __func__, chain);
				return -1;
			}
			np = 0;
		}
	}
	if (np > 0 && (fetch_batch(db, ch, net, chain, p, np, out, found) == -1 ||
	    store_batch(db, memo, chain, p, np, out, found, now) == -1)) {
		bp_err("%s: %s: caching token metadata failed", __func__, chain);
		return -1;
	}
	return 0;
}

int
bp_token_spam_known(struct bp_db *db, const char *chain, const char *const contracts[],
    size_t n, int *verdict)
{
	struct bp_token t;
	int64_t at;
	size_t i;
	int c;

	/* One snapshot and one read lock for the run; no network call inside. */
	if (bp_db_begin_read(db) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		/* Any age: a stale verdict is still the best guess for an order. */
		if ((c = cache_get(db, chain, contracts[i], 0, INT64_MAX, &t, &at)) == -1) {
			bp_db_rollback(db);
			return -1;
		}
		verdict[i] = c == 0 ? -1 : t.spam;
	}
	return bp_db_commit(db);
}

int
bp_token_supply_changed(struct bp_db *db, const char *chain, const char *const contracts[],
    size_t n)
{
	static const char sql[] = "UPDATE token_metadata SET refreshed_at = 0"
	    " WHERE chain = ? AND contract = ?";
	struct bp_stmt *st;
	size_t i;

	if (n == 0)
		return 0;
	if (bp_db_begin(db) == -1)
		return -1;
	for (i = 0; i < n; i++)
		if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
		    bp_stmt_text(st, 2, contracts[i]) == -1 || bp_stmt_run(st) == -1) {
			bp_db_rollback(db);
			return -1;
		}
	return bp_db_commit(db);
}

/* ---- the answer ---- */

int
bp_token_json_member(struct bp_buf *b, const char *name, const char *text)
{
	if (bp_buf_printf(b, ",\"%s\":", name) == -1)
		return -1;
	if (text == NULL)
		return bp_buf_adds(b, "null");
	if (bp_buf_adds(b, "\"") == -1 || bp_buf_json_str(b, text) == -1)
		return -1;
	return bp_buf_adds(b, "\"");
}

int
bp_token_metadata_json(const struct bp_token *t, const char *chain,
    const struct bp_price *price, const char *logo, struct bp_buf *out)
{
	char cs[BP_ADDR_STR_MAX], supply[BP_U256_DEC_MAX], units[BP_U256_UNITS_MAX];
	char usd[BP_U256_UNITS_MAX], cap[BP_U256_UNITS_MAX];
	uint8_t addr[20];
	int has_usd = 0, has_cap = 0;

	if (bp_addr_parse(t->contract, strlen(t->contract), 0, addr) == -1 ||
	    bp_addr_format_checksum(addr, cs, sizeof(cs)) == -1 ||
	    bp_u256_to_dec(&t->total_supply, supply, sizeof(supply)) == -1 ||
	    bp_u256_format_units(&t->total_supply, t->decimals, units, sizeof(units)) == -1)
		return -1;
	if (price != NULL) {
		has_usd = bp_price_format(price, usd, sizeof(usd)) == 0;
		has_cap = bp_price_format_usd(&t->total_supply, t->decimals, price, cap,
		    sizeof(cap)) == 0;
	}
	if (bp_buf_printf(out, "{\"contract\":\"%s\"", cs) == -1 ||
	    bp_token_json_member(out, "chain", chain) == -1 ||
	    bp_token_json_member(out, "name", t->has_name ? t->name : NULL) == -1 ||
	    bp_token_json_member(out, "symbol", t->has_symbol ? t->symbol : NULL) == -1 ||
	    bp_buf_printf(out, ",\"decimals\":%u,\"total_supply\":\"%s\","
	    "\"formatted_total_supply\":\"%s\"", t->decimals, supply, units) == -1 ||
	    bp_token_json_member(out, "price_usd", has_usd ? usd : NULL) == -1 ||
	    bp_token_json_member(out, "market_cap_usd", has_cap ? cap : NULL) == -1 ||
	    bp_token_json_member(out, "logo_url", logo) == -1 ||
	    bp_buf_printf(out, ",\"spam\":%s}", t->spam != 0 ? "true" : "false") == -1)
		return -1;
	return 0;
}
