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

#include "config.h"
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

#endif
