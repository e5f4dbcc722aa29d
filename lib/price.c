#include <string.h>

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
