#include <string.h>

#include "core/db.h"
#include "core/log.h"
#include "evm/abi.h"
#include "evm/chain.h"
#include "price.h"

#define E18	UINT64_C(1000000000000000000)

int
bp_price_parse(const char *s, struct bp_price *out)
{
	struct bp_u256 w;
	const char *dot = strchr(s, '.');
	size_t n = dot != NULL ? (size_t)(dot - s) : strlen(s), f, i;
	uint64_t frac = 0;

	if (n == 0 || bp_u256_from_dec(&w, s, n) == -1 || bp_u256_to_u64(&w, &out->whole) == -1)
		return -1;
	if (dot != NULL) {
		f = strlen(dot + 1);
		if (f == 0 || f > 18 || strspn(dot + 1, "0123456789") != f)
			return -1;
		for (i = 0; i < 18; i++)
			frac = frac * 10 + (uint64_t)(i < f ? dot[1 + i] - '0' : 0);
	}
	out->frac = frac;
	return 0;
}

int
bp_price_native(const struct bp_config *cfg, const char *chain, struct bp_price *out)
{
	size_t i;

	for (i = 0; i < cfg->nprices; i++)
		if (strcmp(cfg->prices[i].chain, chain) == 0 && cfg->prices[i].native[0] != '\0')
			return bp_price_parse(cfg->prices[i].native, out);
	return -1;
}

int
bp_price_usd(const struct bp_u256 *wei, const struct bp_price *price, struct bp_u256 *usd)
{
	struct bp_u256 a, b;

	/* wei * (whole * 10^18 + frac) = (wei * whole) * 10^18 + wei * frac, in 10^-36 USD. */
	if (bp_u256_mul_u64(&a, wei, price->whole) != 0 || bp_u256_mul_u64(&a, &a, E18) != 0 ||
	    bp_u256_mul_u64(&b, wei, price->frac) != 0 || bp_u256_add(usd, &a, &b) != 0)
		return -1;
	return 0;
}

/* ---- Tokens (docs/tokens.md) ---- */

int
bp_price_token(const struct bp_config *cfg, struct bp_db *db, const char *chain,
    const char *contract, int64_t now, struct bp_price *out)
{
	static const char sql[] = "SELECT price, updated_at FROM token_prices"
	    " WHERE chain = ? AND contract = ? AND aggregator = ?";
	const struct bp_token_price *t = NULL;
	struct bp_stmt *st;
	int rc = -1;
	size_t i;

	for (i = 0; i < cfg->ntoken_prices && t == NULL; i++)
		if (strcmp(cfg->token_prices[i].chain, chain) == 0 &&
		    strcmp(cfg->token_prices[i].contract, contract) == 0)
			t = &cfg->token_prices[i];
	if (t == NULL)
		return -1;
	if (t->price[0] != '\0')
		return bp_price_parse(t->price, out);
	if (db == NULL || (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, t->aggregator);
	if (bp_stmt_step(st) == BP_DB_ROW && now - bp_col_int(st, 1) <= cfg->price_max_age)
		rc = bp_price_parse(bp_col_text(st, 0), out);
	bp_stmt_reset(st);
	return rc;
}

int
bp_price_format_usd(const struct bp_u256 *amount, unsigned decimals,
    const struct bp_price *price, char *out, size_t cap)
{
	struct bp_u256 usd;

	/* amount x (whole x 10^18 + frac) counts units of 10^-(decimals + 18) USD. */
	if (decimals > BP_U256_MAX_DECIMALS - 18 || bp_price_usd(amount, price, &usd) == -1)
		return -1;
	return bp_u256_format_units(&usd, decimals + 18, out, cap);
}

int
bp_price_format(const struct bp_price *price, char *out, size_t cap)
{
	struct bp_u256 one;

	bp_u256_from_u64(&one, 1);
	return bp_price_format_usd(&one, 0, price, out, cap);
}

int
bp_price_from_answer(const struct bp_u256 *answer, unsigned decimals, struct bp_price *out)
{
	struct bp_u256 whole, scaled;
	uint64_t rem, frac, pow = 1;
	unsigned i;
	uint8_t be[32];

	bp_u256_to_be32(answer, be);
	if (decimals > 18 || (be[0] & 0x80) != 0 || bp_u256_is_zero(answer))
		return -1;
	for (i = 0; i < decimals; i++)
		pow *= 10;
	if (bp_u256_div_u64(&whole, answer, pow, &rem) == -1 ||
	    bp_u256_to_u64(&whole, &out->whole) == -1)
		return -1;
	/* rem / 10^decimals as 18 digits: rem x 10^(18 - decimals). */
	bp_u256_from_u64(&scaled, rem);
	for (i = decimals; i < 18; i++)
		if (bp_u256_mul_u64(&scaled, &scaled, 10) != 0)
			return -1;
	if (bp_u256_to_u64(&scaled, &frac) == -1)
		return -1;
	out->frac = frac;
	return 0;
}

int
bp_price_sample_store(struct bp_db *db, const char *chain, const char *contract,
    const char *aggregator, const struct bp_price *price, const char *round_id,
    int64_t updated_at, int64_t sampled_at)
{
	static const char sql[] = "INSERT INTO token_prices (chain, contract, aggregator, price,"
	    " round_id, updated_at, sampled_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, contract) DO UPDATE SET aggregator = excluded.aggregator,"
	    " price = excluded.price, round_id = excluded.round_id,"
	    " updated_at = excluded.updated_at, sampled_at = excluded.sampled_at";
	char text[BP_U256_UNITS_MAX];
	struct bp_stmt *st;
	int rc;

	if (bp_price_format(price, text, sizeof(text)) == -1 || (st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, contract);
	bp_stmt_text(st, 3, aggregator);
	bp_stmt_text(st, 4, text);
	bp_stmt_text(st, 5, round_id);
	bp_stmt_int(st, 6, updated_at);
	bp_stmt_int(st, 7, sampled_at);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
	if (rc == -1)
		bp_err("%s: %s %s: storing the sample failed", __func__, chain, contract);
	return rc;
}

/* ---- Chainlink aggregators ---- */

int
bp_price_round_decode(const uint8_t *round, size_t roundlen, const uint8_t *dec,
    size_t declen, struct bp_price_round *out)
{
	struct bp_u256 id, answer, d;
	uint64_t decimals, updated;

	memset(out, 0, sizeof(*out));
	if (round == NULL || dec == NULL || roundlen < 5 * 32 ||
	    bp_abi_read_u256(round, roundlen, 0, &id) == -1 ||
	    bp_abi_read_u256(round, roundlen, 1, &answer) == -1 ||
	    bp_abi_read_u64(round, roundlen, 3, &updated) == -1 || updated > INT64_MAX ||
	    bp_abi_read_u256(dec, declen, 0, &d) == -1 || bp_u256_to_u64(&d, &decimals) == -1 ||
	    decimals > 18 || bp_u256_to_dec(&id, out->round_id, sizeof(out->round_id)) == -1)
		return -1;
	out->updated_at = (int64_t)updated;
	return bp_price_from_answer(&answer, (unsigned)decimals, &out->price);
}

int
bp_price_round_read(struct bp_chain *ch, const struct bp_network *net,
    const uint8_t aggregator[20], struct bp_price_round *out)
{
	static const uint8_t sel_round[4] = { 0xfe, 0xaf, 0x96, 0x8c };	/* latestRoundData() */
	static const uint8_t sel_dec[4] = { 0x31, 0x3c, 0xe5, 0x67 };		/* decimals() */
	struct bp_chain_read rd[2];
	int rc, k;

	memset(rd, 0, sizeof(rd));
	for (k = 0; k < 2; k++) {
		rd[k].op = BP_CHAIN_CALL;
		memcpy(rd[k].address, aggregator, 20);
		rd[k].data = k == 0 ? sel_round : sel_dec;
		rd[k].len = 4;
		rd[k].block = BP_CHAIN_LATEST;
	}
	bp_chain_batch(ch, net, rd, 2);
	if (rd[0].err.kind == BP_CHAIN_ERR_TRANSPORT || rd[1].err.kind == BP_CHAIN_ERR_TRANSPORT)
		rc = 1;
	else if (rd[0].err.kind != BP_CHAIN_OK || rd[1].err.kind != BP_CHAIN_OK)
		rc = -1;
	else
		rc = bp_price_round_decode(rd[0].bytes, rd[0].nbytes, rd[1].bytes, rd[1].nbytes,
		    out);
	bp_chain_reads_free(rd, 2);
	return rc;
}
