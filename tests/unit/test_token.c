/*
 * The token modules: lib/token/token.c's decoding of name()/symbol() answers (ABI strings, bytes32,
 * hostile blobs), lib/token/token_balance.c's order of exact decimals, lib/token/token_list.c's logos,
 * lib/token/price.c's token prices (fixed and Chainlink samples, staleness, exact USD values) and the
 * [prices CHAIN] token lines of lib/core/config.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "core/db.h"
#include "core/util.h"
#include "token/price.h"
#include "token/token.h"
#include "token/token_balance.h"
#include "token/token_list.h"
#include "unit.h"
#include "unit_db.h"

#define TOK	"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
#define FEED	"0x6b175474e89094c44da98b954eedeac495271d0f"
#define AGG	"0xaed0c38402a5d19df6e4c03f4e2dced6e29c1ee9"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "token") == -1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

/* Writes text as a config file next to the unit database and loads it; NULL with err set. */
static struct bp_config *
load(const char *text, char *err, size_t errlen)
{
	char path[256];
	struct bp_config *c;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/t.ini", u.dir);
	if ((fp = fopen(path, "w")) == NULL)
		return NULL;
	fputs(text, fp);
	fclose(fp);
	c = bp_config_load(path, err, errlen);
	unlink(path);
	return c;
}

/* An ABI string answer: offset 32, length, the bytes padded to words. */
static size_t
abi_string(const char *s, size_t n, uint8_t *out)
{
	size_t words = (n + 31) / 32;

	memset(out, 0, 64 + 32 * words);
	out[31] = 32;
	out[62] = (uint8_t)(n >> 8);
	out[63] = (uint8_t)n;
	memcpy(out + 64, s, n);
	return 64 + 32 * words;
}

static void
test_decode_text(void)
{
	uint8_t buf[512], b32[32];
	char out[BP_TOKEN_TEXT_MAX], longname[300];
	size_t n;

	n = abi_string("USD Coin", 8, buf);
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "USD Coin");
	/* bytes32, MKR-style: the text ends at the first NUL. */
	memset(b32, 0, sizeof(b32));
	memcpy(b32, "MKR", 3);
	CU_ASSERT_EQUAL(bp_token_decode_text(b32, 32, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "MKR");
	/* A full bytes32 without a NUL. */
	memset(b32, 'A', sizeof(b32));
	CU_ASSERT_EQUAL(bp_token_decode_text(b32, 32, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strlen(out), 32);
	/* A NUL inside an ABI string ends it; a long one is cut at 128 bytes. */
	n = abi_string("AB\0CD", 5, buf);
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "AB");
	memset(longname, 'x', sizeof(longname));
	n = abi_string(longname, 300, buf);
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strlen(out), BP_TOKEN_TEXT_MAX - 1);
	/* Hostile: empty, short, a length past the end, an offset past the end, NULL. */
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, 0, out, sizeof(out)), -1);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, 31, out, sizeof(out)), -1);
	n = abi_string("abc", 3, buf);
	buf[63] = 200;
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), -1);
	n = abi_string("abc", 3, buf);
	buf[31] = 0xff;
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), -1);
	CU_ASSERT_EQUAL(bp_token_decode_text(NULL, 64, out, sizeof(out)), -1);
	/* An empty ABI string is a known, empty name. */
	n = abi_string("", 0, buf);
	CU_ASSERT_EQUAL(bp_token_decode_text(buf, n, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
}

static void
test_cmp_decimal(void)
{
	static const struct {
		const char	*a, *b;
		int		 sign;
	} rows[] = {
		{ "0", "0", 0 }, { "1", "0", 1 }, { "10", "9", 1 }, { "9.99", "10", -1 },
		{ "1.5", "1.25", 1 }, { "1.25", "1.5", -1 }, { "1.5", "1.5", 0 }, { "1", "1.0001", -1 },
		{ "1.0001", "1", 1 }, { "0.000001", "0.00001", -1 }, { "123456789012345678901234567890",
		  "123456789012345678901234567891", -1 }, { "2.5", "2.50", 0 },
	};
	size_t i;
	int c;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		c = bp_token_cmp_decimal(rows[i].a, rows[i].b);
		CU_ASSERT_EQUAL((c > 0) - (c < 0), rows[i].sign);
	}
}

static void
test_token_list(void)
{
	static const char text[] = "{\"name\":\"t\",\"tokens\":["
	    "{\"chainId\":1,\"address\":\"0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48\","
	    "\"logoURI\":\"https://x.example/usdc.png\"},"
	    "{\"chainId\":10,\"address\":\"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\","
	    "\"logoURI\":\"ipfs://QmUsdc\"},"
	    "{\"chainId\":1,\"address\":\"0x6b175474e89094c44da98b954eedeac495271d0f\","
	    "\"logoURI\":\"javascript:alert(1)\"},"
	    "{\"chainId\":1.5,\"address\":\"" FEED "\",\"logoURI\":\"https://a\"},"
	    "{\"chainId\":1,\"address\":\"0x12\",\"logoURI\":\"https://a\"},"
	    "{\"chainId\":\"1\",\"address\":\"" FEED "\",\"logoURI\":\"https://a\"},"
	    "7, null, []]}";
	struct bp_token_list *l;

	CU_ASSERT_PTR_NOT_NULL_FATAL(l = bp_token_list_parse(text, strlen(text)));
	CU_ASSERT_EQUAL(bp_token_list_size(l), 2);
	CU_ASSERT_STRING_EQUAL(bp_token_list_logo(l, 1, TOK), "https://x.example/usdc.png");
	CU_ASSERT_STRING_EQUAL(bp_token_list_logo(l, 1, "0xA0B86991C6218B36C1D19D4A2E9EB0CE3606EB48"),
	    "https://x.example/usdc.png");
	CU_ASSERT_STRING_EQUAL(bp_token_list_logo(l, 10, TOK), "ipfs://QmUsdc");
	CU_ASSERT_PTR_NULL(bp_token_list_logo(l, 5, TOK));
	CU_ASSERT_PTR_NULL(bp_token_list_logo(l, 1, FEED));
	CU_ASSERT_PTR_NULL(bp_token_list_logo(l, 1, "nonsense"));
	bp_token_list_free(l);
	CU_ASSERT_PTR_NULL(bp_token_list_logo(NULL, 1, TOK));
	bp_unit_log_begin();
	CU_ASSERT_PTR_NULL(bp_token_list_parse("[1,2]", 5));
	CU_ASSERT_PTR_NULL(bp_token_list_parse("{\"tokens\":", 10));
	CU_ASSERT_PTR_NULL(bp_token_list_load("/nonexistent/list.json"));
	CU_ASSERT_PTR_NOT_NULL(strstr(bp_unit_log_end(), "token list"));
}

static void
test_usd(void)
{
	struct bp_price p;
	struct bp_u256 v;
	char out[BP_U256_UNITS_MAX];

	CU_ASSERT_EQUAL(bp_price_parse("2.5", &p), 0);
	bp_u256_from_u64(&v, 1234567800);
	CU_ASSERT_EQUAL(bp_price_format_usd(&v, 6, &p, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "3086.4195");
	/* 2^130 + 5 with 18 decimals at 2.5 USD, exact. */
	CU_ASSERT_EQUAL(bp_u256_from_dec(&v, "1361129467683753853853498429727072845829", 40), 0);
	CU_ASSERT_EQUAL(bp_price_format_usd(&v, 18, &p, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "3402823669209384634633.7460743176821145725");
	CU_ASSERT_EQUAL(bp_price_format(&p, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "2.5");
	CU_ASSERT_EQUAL(bp_price_parse("0.000000000000000001", &p), 0);
	CU_ASSERT_EQUAL(bp_price_format(&p, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "0.000000000000000001");
	/* Too many decimals to format with the price's 18: null. */
	CU_ASSERT_EQUAL(bp_price_format_usd(&v, 238, &p, out, sizeof(out)), -1);
	/* 2^255 x 3000: does not fit 256 bits. */
	CU_ASSERT_EQUAL(bp_u256_from_hex(&v, "0x8000000000000000000000000000000000000000000000000000000000000000", 66), 0);
	CU_ASSERT_EQUAL(bp_price_parse("3000", &p), 0);
	CU_ASSERT_EQUAL(bp_price_format_usd(&v, 18, &p, out, sizeof(out)), -1);
}

/* latestRoundData's five words and decimals' one. */
static void
round_words(uint8_t r[160], uint8_t d[32], uint64_t answer, int negative, uint64_t updated,
    uint8_t decimals)
{
	int i;

	memset(r, 0, 160);
	memset(d, 0, 32);
	r[31] = 7;
	for (i = 0; i < 8; i++) {
		r[63 - i] = (uint8_t)(answer >> (8 * i));
		r[127 - i] = (uint8_t)(updated >> (8 * i));
	}
	if (negative)
		memset(r + 32, 0xff, 24);
	r[159] = 7;
	d[31] = decimals;
}

static void
test_chainlink(void)
{
	struct bp_price_round rd;
	uint8_t r[160], d[32];
	char out[BP_U256_UNITS_MAX];

	round_words(r, d, 123456789012, 0, 1700000000, 8);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, sizeof(d), &rd), 0);
	CU_ASSERT_EQUAL(rd.updated_at, 1700000000);
	CU_ASSERT_STRING_EQUAL(rd.round_id, "7");
	bp_price_format(&rd.price, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "1234.56789012");
	round_words(r, d, 5, 0, 1, 18);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, sizeof(d), &rd), 0);
	bp_price_format(&rd.price, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "0.000000000000000005");
	/* Negative, zero, 19 decimals, short answers: no price. */
	round_words(r, d, 5, 1, 1, 8);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, sizeof(d), &rd), -1);
	round_words(r, d, 0, 0, 1, 8);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, sizeof(d), &rd), -1);
	round_words(r, d, 5, 0, 1, 19);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, sizeof(d), &rd), -1);
	round_words(r, d, 5, 0, 1, 8);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, 128, d, sizeof(d), &rd), -1);
	CU_ASSERT_EQUAL(bp_price_round_decode(r, sizeof(r), d, 31, &rd), -1);
	CU_ASSERT_EQUAL(bp_price_round_decode(NULL, 0, d, sizeof(d), &rd), -1);
}

static void
test_token_prices(void)
{
	static const char text[] = "[server]\ndatabase = x.db\nprice_max_age = 600\n"
	    "[prices ethereum]\nnative = 3000\n"
	    "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48 = 1.0001\n"
	    FEED " = chainlink:" AGG "\n"
	    "[prices polygon]\n" TOK " = 0.99\n";
	struct bp_config *c;
	struct bp_price p;
	char err[512], out[BP_U256_UNITS_MAX];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c = load(text, err, sizeof(err)));
	CU_ASSERT_EQUAL(c->ntoken_prices, 3);
	CU_ASSERT_EQUAL(c->price_max_age, 600);
	CU_ASSERT_EQUAL(c->token_refresh_seconds, 60);
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "ethereum", TOK, 1000, &p), 0);
	bp_price_format(&p, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "1.0001");
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "polygon", TOK, 1000, &p), 0);
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "base", TOK, 1000, &p), -1);
	/* The Chainlink token: no sample yet, then a sample, then too old. */
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "ethereum", FEED, 1000, &p), -1);
	CU_ASSERT_EQUAL(bp_price_parse("0.9998", &p), 0);
	CU_ASSERT_EQUAL(bp_price_sample_store(u.db, "ethereum", FEED, AGG, &p, "42", 1000, 1001), 0);
	memset(&p, 0, sizeof(p));
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "ethereum", FEED, 1600, &p), 0);
	bp_price_format(&p, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "0.9998");
	CU_ASSERT_EQUAL(bp_price_token(c, u.db, "ethereum", FEED, 1601, &p), -1);
	CU_ASSERT_EQUAL(bp_price_token(c, NULL, "ethereum", FEED, 1600, &p), -1);
	bp_config_free(c);

	/* A section given again (make run EXTRA_CONFIG): a token's later price wins. */
	CU_ASSERT_PTR_NOT_NULL_FATAL(c = load("[server]\ndatabase = x.db\n[prices ethereum]\n"
	    TOK " = 1\n" FEED " = 2\n[server]\nanon_rps = 3\n[prices ethereum]\n"
	    "0xA0B86991C6218B36C1D19D4A2E9EB0CE3606EB48 = 0.5\n", err, sizeof(err)));
	CU_ASSERT_EQUAL(c->ntoken_prices, 2);
	CU_ASSERT_EQUAL(bp_price_token(c, NULL, "ethereum", TOK, 0, &p), 0);
	bp_price_format(&p, out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "0.5");
	bp_config_free(c);

	/* Bad lines name the key. */
	CU_ASSERT_PTR_NULL(load("[server]\ndatabase = x.db\n[prices ethereum]\n0x12 = 1\n", err,
	    sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "0x12: a token price key is a 0x address"));
	CU_ASSERT_PTR_NULL(load("[server]\ndatabase = x.db\n[prices ethereum]\n" TOK " = cheap\n",
	    err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a decimal USD price"));
	CU_ASSERT_PTR_NULL(load("[server]\ndatabase = x.db\n[prices ethereum]\n" TOK
	    " = chainlink:0xzz\n", err, sizeof(err)));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not chainlink:0x"));
	CU_ASSERT_PTR_NULL(load("[server]\ndatabase = x.db\n" TOK " = 1\n", err, sizeof(err)));
}

BP_UNIT_SUITE(token, setup, teardown,
    { "name and symbol answers", test_decode_text },
    { "order of exact decimals", test_cmp_decimal },
    { "token list logos", test_token_list },
    { "exact USD values", test_usd },
    { "Chainlink answers", test_chainlink },
    { "token prices in the config and samples", test_token_prices })
