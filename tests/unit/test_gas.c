/*
 * lib/gas/gas.c and lib/token/price.c: the fee-history reader (hostile answers), the estimator (ordering,
 * median, floor, empty blocks, no EIP-1559, saturation), the exact gwei answer, and USD prices.
 */
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "gas/gas.h"
#include "token/price.h"
#include "unit.h"

static cJSON *
parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);

	CU_ASSERT_FATAL(j != NULL);
	return j;
}

static void
dec_is(const struct bp_u256 *v, const char *want)
{
	char got[BP_U256_DEC_MAX];

	bp_u256_to_dec(v, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, want);
}

/* Five blocks, one empty; tips in wei. */
static const char history[] =
    "{\"oldestBlock\":\"0x10\","
    "\"baseFeePerGas\":[\"0x3b9aca00\",\"0x3b9aca00\",\"0x3b9aca00\",\"0x3b9aca00\",\"0x3b9aca00\","
    "\"0x77359400\"],"
    "\"gasUsedRatio\":[0.5,0,0.9,0.1,1],"
    "\"reward\":[[\"0x1\",\"0x5\",\"0x9\"],[\"0x0\",\"0x0\",\"0x0\"],[\"0x2\",\"0x6\",\"0x64\"],"
    "[\"0x3\",\"0x7\",\"0x8\"],[\"0x4\",\"0x4\",\"0x4\"]]}";

static void
test_estimate(void)
{
	struct bp_gas_history h;
	struct bp_gas_sample s;
	struct bp_u256 floor_wei;
	struct bp_buf b;
	cJSON *j = parse(history);
	size_t l;

	CU_ASSERT_FATAL(bp_gas_history_parse(j, &h) == 0);
	CU_ASSERT(h.eip1559 && h.n == 5 && h.newest == 0x14 && h.empty[1] && !h.empty[0]);
	bp_u256_from_u64(&floor_wei, 0);
	memset(&s, 0, sizeof(s));
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	CU_ASSERT(s.block_number == 20);
	dec_is(&s.base_fee, "2000000000");
	/* Medians over the four non-empty blocks (the upper middle): 3, 6, 9. */
	dec_is(&s.est[BP_GAS_SLOW].max_priority, "3");
	dec_is(&s.est[BP_GAS_STANDARD].max_priority, "6");
	dec_is(&s.est[BP_GAS_FAST].max_priority, "9");
	dec_is(&s.est[BP_GAS_SLOW].max_fee, "2200000003");	/* 110% of the base fee + tip */
	dec_is(&s.est[BP_GAS_STANDARD].max_fee, "2500000006");
	dec_is(&s.est[BP_GAS_FAST].max_fee, "3000000009");
	CU_ASSERT(s.est[BP_GAS_SLOW].seconds == 36 && s.est[BP_GAS_FAST].seconds == 12);
	for (l = 1; l < BP_GAS__MAX; l++) {
		CU_ASSERT(bp_u256_cmp(&s.est[l].max_fee, &s.est[l - 1].max_fee) >= 0);
		CU_ASSERT(bp_u256_cmp(&s.est[l].max_priority, &s.est[l - 1].max_priority) >= 0);
	}
	/* The floor lifts every level; the answer is exact gwei. */
	bp_u256_from_u64(&floor_wei, 1000000000);
	bp_gas_estimate(&h, &floor_wei, 2, &s);
	dec_is(&s.est[BP_GAS_FAST].max_priority, "1000000000");
	s.sampled_at = 1700000000;
	bp_buf_init(&b, 4096);
	CU_ASSERT_FATAL(bp_gas_json(&s, "ethereum", &b) == 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"chain\":\"ethereum\",\"block_number\":20,"
	    "\"base_fee_gwei\":\"2\",\"estimates\":{"
	    "\"slow\":{\"max_fee_gwei\":\"3.2\",\"max_priority_fee_gwei\":\"1\",\"estimated_seconds\":6},"
	    "\"standard\":{\"max_fee_gwei\":\"3.5\",\"max_priority_fee_gwei\":\"1\",\"estimated_seconds\":4},"
	    "\"fast\":{\"max_fee_gwei\":\"4\",\"max_priority_fee_gwei\":\"1\",\"estimated_seconds\":2}},"
	    "\"updated_at\":\"2023-11-14T22:13:20Z\"}");
	bp_buf_free(&b);
	cJSON_Delete(j);
}

/* A tip that would break the order (standard below slow) is lifted to the level below. */
static void
test_order_and_empty(void)
{
	struct bp_gas_history h;
	struct bp_gas_sample s;
	struct bp_u256 floor_wei;
	cJSON *j = parse("{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x0\",\"0x7\"],"
	    "\"gasUsedRatio\":[0.3],\"reward\":[[\"0x9\",\"0x2\",\"0x1\"]]}");

	bp_u256_from_u64(&floor_wei, 1);
	CU_ASSERT_FATAL(bp_gas_history_parse(j, &h) == 0);
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	dec_is(&s.est[BP_GAS_STANDARD].max_priority, "9");
	dec_is(&s.est[BP_GAS_FAST].max_priority, "9");
	dec_is(&s.est[BP_GAS_STANDARD].max_fee, "17");	/* 7 x 125% = 8 (floor) + 9 */
	cJSON_Delete(j);
	/* Only empty blocks: every tip is the floor. */
	j = parse("{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x5\",\"0x5\",\"0x4\"],"
	    "\"gasUsedRatio\":[0,0],\"reward\":[[\"0x0\",\"0x0\",\"0x0\"],[\"0x0\",\"0x0\",\"0x0\"]]}");
	CU_ASSERT_FATAL(bp_gas_history_parse(j, &h) == 0);
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	dec_is(&s.est[BP_GAS_SLOW].max_priority, "1");
	dec_is(&s.est[BP_GAS_FAST].max_priority, "1");
	dec_is(&s.est[BP_GAS_SLOW].max_fee, "5");		/* 4 x 110% = 4 + 1 */
	cJSON_Delete(j);
	/* No base fees at all: not EIP-1559; the legacy price is all tip. */
	j = parse("{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x0\",\"0x0\"],"
	    "\"gasUsedRatio\":[0.5]}");
	CU_ASSERT_FATAL(bp_gas_history_parse(j, &h) == 0);
	CU_ASSERT(!h.eip1559);
	bp_u256_from_u64(&h.gas_price, 1000);
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	dec_is(&s.base_fee, "0");
	dec_is(&s.est[BP_GAS_SLOW].max_fee, "1000");
	dec_is(&s.est[BP_GAS_STANDARD].max_fee, "1100");
	dec_is(&s.est[BP_GAS_FAST].max_priority, "1250");
	cJSON_Delete(j);
	/* A hostile node's huge fees saturate instead of wrapping. */
	j = parse("{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x"
	    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff\"],"
	    "\"gasUsedRatio\":[0.5],\"reward\":[[\"0x1\",\"0x1\",\"0x1\"]]}");
	CU_ASSERT_FATAL(bp_gas_history_parse(j, &h) == 0);
	bp_gas_estimate(&h, &floor_wei, 12, &s);
	CU_ASSERT(bp_u256_cmp(&s.est[BP_GAS_FAST].max_fee, &s.base_fee) >= 0);
	cJSON_Delete(j);
}

static void
test_history_hostile(void)
{
	static const char *const rows[] = {
		"[]", "{}", "null",
		"{\"oldestBlock\":1,\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[0.5]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\"],\"gasUsedRatio\":[0.5]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[],\"gasUsedRatio\":[]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"1\"],\"gasUsedRatio\":[0.5]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[-1]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[\"a\"]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[0.5],"
		    "\"reward\":[[\"0x1\",\"0x1\"]]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[0.5],"
		    "\"reward\":[]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],\"gasUsedRatio\":[0.5],"
		    "\"reward\":[[\"0x1\",\"0x1\",null]]}",
		"{\"oldestBlock\":\"0xffffffffffffffffff\",\"baseFeePerGas\":[\"0x1\",\"0x1\"],"
		    "\"gasUsedRatio\":[0.5]}",
		"{\"oldestBlock\":\"0x1\",\"baseFeePerGas\":[\"0x1\",\"0x1\",\"0x1\",\"0x1\",\"0x1\","
		    "\"0x1\",\"0x1\"],\"gasUsedRatio\":[1,1,1,1,1,1]}",	/* more than 5 blocks */
	};
	struct bp_gas_history h;
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		cJSON *j = parse(rows[i]);

		CU_ASSERT(bp_gas_history_parse(j, &h) == -1);
		cJSON_Delete(j);
	}
}

static void
test_price(void)
{
	struct bp_price p;
	struct bp_u256 wei, usd;
	char s[BP_U256_UNITS_MAX];

	CU_ASSERT(bp_price_parse("3000", &p) == 0 && p.whole == 3000 && p.frac == 0);
	CU_ASSERT(bp_price_parse("0.5", &p) == 0 && p.whole == 0 &&
	    p.frac == UINT64_C(500000000000000000));
	CU_ASSERT(bp_price_parse("1.000000000000000001", &p) == 0 && p.frac == 1);
	CU_ASSERT(bp_price_parse("1.0000000000000000001", &p) == -1);	/* 19 decimals */
	CU_ASSERT(bp_price_parse("", &p) == -1);
	CU_ASSERT(bp_price_parse(".5", &p) == -1);
	CU_ASSERT(bp_price_parse("5.", &p) == -1);
	CU_ASSERT(bp_price_parse("18446744073709551616", &p) == -1);	/* 2^64 */
	/* 0.0001 ETH at 3000.5 USD = 0.30005 USD, exactly. */
	bp_price_parse("3000.5", &p);
	bp_u256_from_u64(&wei, UINT64_C(100000000000000));
	CU_ASSERT_FATAL(bp_price_usd(&wei, &p, &usd) == 0);
	bp_u256_format_units(&usd, BP_PRICE_USD_DECIMALS, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "0.30005");
	memset(&wei, 0xff, sizeof(wei));
	CU_ASSERT(bp_price_usd(&wei, &p, &usd) == -1);
}

BP_UNIT_SUITE(gas, NULL, NULL,
    { "estimates: medians, multipliers, floor, exact gwei", test_estimate },
    { "estimates: order, empty blocks, no EIP-1559, saturation", test_order_and_empty },
    { "hostile eth_feeHistory answers are refused", test_history_hostile },
    { "USD prices: parsing and exact products", test_price })
