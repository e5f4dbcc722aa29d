/*
 * libFuzzer harness for what the token modules read from outside: name()/symbol() return data
 * (lib/token/token.c), latestRoundData()/decimals() answers of an aggregator (lib/token/price.c), token-list
 * JSON (lib/token/token_list.c) and names judged by the spam signals (lib/token/spam.c). The first byte
 * picks the parser. Beyond memory safety it checks that decoded text is NUL-terminated within
 * its buffer and holds no NUL before its end, and that a decoded price formats and parses back.
 *
 *   make fuzz (tests/fuzz/run.sh builds it against the whole of lib/)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "token/price.h"
#include "token/spam.h"
#include "token/token.h"
#include "token/token_list.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_text(const uint8_t *data, size_t len)
{
	char out[BP_TOKEN_TEXT_MAX + 1];

	out[BP_TOKEN_TEXT_MAX] = 'Z';
	if (bp_token_decode_text(data, len, out, BP_TOKEN_TEXT_MAX) == 0 &&
	    strlen(out) >= BP_TOKEN_TEXT_MAX)
		abort();
	if (out[BP_TOKEN_TEXT_MAX] != 'Z')
		abort();
	(void)bp_spam_text(out);
}

static void
check_round(const uint8_t *data, size_t len)
{
	struct bp_price_round r;
	struct bp_price back;
	char text[BP_U256_UNITS_MAX];
	size_t split = len > 0 ? data[0] : 0;

	if (split > len - (len > 0))
		split = len - (len > 0);
	if (len == 0)
		return;
	if (bp_price_round_decode(data + 1, split, data + 1 + split, len - 1 - split, &r) != 0)
		return;
	if (bp_price_format(&r.price, text, sizeof(text)) != 0 || bp_price_parse(text, &back) != 0 ||
	    back.whole != r.price.whole || back.frac != r.price.frac)
		abort();
}

static void
check_list(const uint8_t *data, size_t len)
{
	struct bp_token_list *l = bp_token_list_parse((const char *)data, len);

	(void)bp_token_list_logo(l, 1, "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");
	bp_token_list_free(l);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	char *s;

	if (len == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		check_text(data + 1, len - 1);
		break;
	case 1:
		check_round(data + 1, len - 1);
		break;
	case 2:
		check_list(data + 1, len - 1);
		break;
	default:
		if ((s = malloc(len)) == NULL)
			return 0;
		memcpy(s, data + 1, len - 1);
		s[len - 1] = '\0';
		(void)bp_spam_text(s);
		free(s);
		break;
	}
	return 0;
}
