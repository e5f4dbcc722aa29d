/*
 * USD prices of a chain's coins: the [prices CHAIN] sections of the config (DESIGN.md, Prices: a
 * fixed price in the config by default; a sampler may keep them from a source later), and exact
 * USD arithmetic on them. No floating point: a price is a whole part and 18 decimals, a USD
 * amount is an integer count of 10^-36 USD (BP_PRICE_USD_DECIMALS), written with
 * bp_u256_format_units.
 */
#ifndef BP_PRICE_H
#define BP_PRICE_H

#include <stdint.h>

#include "core/config.h"
#include "evm/u256.h"

#define BP_PRICE_USD_DECIMALS	36

/* A price in USD: whole + frac / 10^18. */
struct bp_price {
	uint64_t	whole;
	uint64_t	frac;	/* 0 .. 10^18 - 1 */
};

/*
 * The USD price of one native coin of chain (ETH on ethereum) from [prices CHAIN] native.
 * Returns 0, or -1 when the config names none (a value that is not known is null, never made up).
 */
int	bp_price_native(const struct bp_config *, const char *chain, struct bp_price *out);

/* Parses "3000.25" (digits, optionally '.' and 1 to 18 digits) into out; 0 or -1. */
int	bp_price_parse(const char *s, struct bp_price *out);

/*
 * usd = wei / 10^18 * price, exactly, in 10^-36 USD. Returns 0, or -1 when it does not fit 256
 * bits (about 10^41 USD).
 */
int	bp_price_usd(const struct bp_u256 *wei, const struct bp_price *price, struct bp_u256 *usd);

/* ---- Tokens (docs/tokens.md) ---- */

struct bp_db;

/*
 * The USD price of token contract (lower-case 0x) on chain (a [prices CHAIN] name: "ethereum"):
 * its fixed price in the config, else, for `chainlink:0x...`, the latest sample cron/prices
 * stored, when its updatedAt is at most cfg->price_max_age seconds before now. db may be NULL
 * (fixed prices only). Returns 0, or -1 when no price is known (or on a database error, logged).
 */
int	bp_price_token(const struct bp_config *, struct bp_db *, const char *chain,
	    const char *contract, int64_t now, struct bp_price *out);

/*
 * amount / 10^decimals x price, exactly, as a decimal string (bp_u256_format_units) into out
 * (room for cap bytes; BP_U256_UNITS_MAX is enough). Returns 0, or -1 when it does not fit 256
 * bits or decimals is above 237 (then the value is null).
 */
int	bp_price_format_usd(const struct bp_u256 *amount, unsigned decimals,
	    const struct bp_price *price, char *out, size_t cap);

/* Writes price as an exact decimal string ("3000.25", "1") into out (BP_U256_UNITS_MAX). */
int	bp_price_format(const struct bp_price *price, char *out, size_t cap);

/*
 * A Chainlink answer (an int256, two's complement in answer) with its aggregator's decimals
 * (0 to 18) as a price, exactly. Returns 0, or -1 when the answer is not positive, decimals is
 * above 18, or the whole part does not fit 64 bits.
 */
int	bp_price_from_answer(const struct bp_u256 *answer, unsigned decimals,
	    struct bp_price *out);

/*
 * Stores the latest sample of token contract's aggregator on chain (owner: this module;
 * written by cron/prices). 0, or -1 on a database error (logged).
 */
int	bp_price_sample_store(struct bp_db *, const char *chain, const char *contract,
	    const char *aggregator, const struct bp_price *price, const char *round_id,
	    int64_t updated_at, int64_t sampled_at);

/* ---- Chainlink aggregators (cron/prices.c) ---- */

struct bp_chain;
struct bp_network;

/* One answer of an aggregator's latestRoundData(), with its decimals(). */
struct bp_price_round {
	struct bp_price	price;
	char		round_id[BP_U256_DEC_MAX];	/* decimal */
	int64_t		updated_at;			/* Unix seconds */
};

/*
 * Decodes the return data of latestRoundData() (roundId, answer, startedAt, updatedAt,
 * answeredInRound; untrusted) and of decimals() into *out. Returns 0, or -1 when either is
 * malformed or the answer is not a positive price of at most 18 decimals (see
 * bp_price_from_answer).
 */
int	bp_price_round_decode(const uint8_t *round, size_t roundlen, const uint8_t *dec,
	    size_t declen, struct bp_price_round *out);

/*
 * Reads aggregator (20 bytes) on net: latestRoundData() and decimals() in one JSON-RPC batch.
 * Returns 0 with *out set, 1 when the node did not answer, -1 when the answer is not a usable
 * price (reverted, malformed, not positive).
 */
int	bp_price_round_read(struct bp_chain *, const struct bp_network *net,
	    const uint8_t aggregator[20], struct bp_price_round *out);

#endif
