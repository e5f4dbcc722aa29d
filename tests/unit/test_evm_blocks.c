/*
 * lib/evm/blocks.c: the readers of a node's JSON, one table of members each, well formed and
 * hostile (wrong types, wrong lengths, odd digits, overflow, NUL-free but non-hex text), and an
 * eth_getLogs element read whole. Each refusal must leave the output untouched.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "evm/blocks.h"
#include "unit.h"

#define H64	"00000000000000000000000000000000000000000000000000000000000000aB"
#define H64L	"0x00000000000000000000000000000000000000000000000000000000000000ab"

struct row {
	const char	*json;		/* {"v": ...} */
	int		 ok;
	const char	*want;		/* the canonical text, or the value in decimal */
};

static cJSON *
parse(const char *s)
{
	cJSON *j = cJSON_Parse(s);

	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	return j;
}

static void
test_quantity(void)
{
	static const struct row rows[] = {
		{ "{\"v\": \"0x0\"}", 1, "0" },
		{ "{\"v\": \"0x00ff\"}", 1, "255" },		/* padded: nodes do it */
		{ "{\"v\": \"0xffffffffffffffff\"}", 1, "18446744073709551615" },
		{ "{\"v\": \"0x10000000000000000\"}", 0, NULL },	/* 65 bits */
		{ "{\"v\": \"0x\"}", 0, NULL },
		{ "{\"v\": \"12\"}", 0, NULL },
		{ "{\"v\": \"0xg\"}", 0, NULL },
		{ "{\"v\": 16}", 0, NULL },
		{ "{\"v\": null}", 0, NULL },
		{ "{\"V\": \"0x1\"}", 0, NULL },		/* names match case-sensitively */
		{ "[\"0x1\"]", 0, NULL },
	};
	char dec[32];
	uint64_t v;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *j = parse(rows[i].json);

		v = 42;
		CU_ASSERT_EQUAL(bp_blocks_jquantity(j, "v", &v), rows[i].ok ? 0 : -1);
		if (rows[i].ok) {
			snprintf(dec, sizeof(dec), "%llu", (unsigned long long)v);
			CU_ASSERT_STRING_EQUAL(dec, rows[i].want);
		} else
			CU_ASSERT_EQUAL(v, 42);
		cJSON_Delete(j);
	}
}

static void
test_hash_addr_dec(void)
{
	static const struct row hashes[] = {
		{ "{\"v\": \"0x" H64 "\"}", 1, H64L },
		{ "{\"v\": \"0X" H64 "\"}", 1, H64L },
		{ "{\"v\": \"0x" H64 "0\"}", 0, NULL },		/* 65 digits */
		{ "{\"v\": \"0x" H64 "00\"}", 0, NULL },	/* 33 bytes */
		{ "{\"v\": \"" H64 "\"}", 0, NULL },
		{ "{\"v\": 1}", 0, NULL },
	};
	static const struct row addrs[] = {
		{ "{\"v\": \"0x70997970C51812dc3A010C7d01b50e0d17dc79C8\"}", 1,
		    "0x70997970c51812dc3a010c7d01b50e0d17dc79c8" },
		{ "{\"v\": \"0x70997970c51812dc3a010c7d01b50e0d17dc79c\"}", 0, NULL },
		{ "{\"v\": \"0x70997970c51812dc3a010c7d01b50e0d17dc79zz\"}", 0, NULL },
		{ "{\"v\": null}", 0, NULL },
		{ "{}", 0, NULL },
	};
	static const struct row decs[] = {
		{ "{\"v\": \"0x0\"}", 1, "0" },
		{ "{\"v\": \"0x3635c9adc5dea00000\"}", 1, "1000000000000000000000" },
		{ "{\"v\": \"0x1" H64 "\"}", 0, NULL },		/* 257 bits */
		{ "{\"v\": \"-0x1\"}", 0, NULL },
	};
	char out[BP_U256_DEC_MAX + BP_BLOCKS_HASH_STR];
	size_t i;

	for (i = 0; i < sizeof(hashes) / sizeof(hashes[0]); i++) {
		cJSON *j = parse(hashes[i].json);

		snprintf(out, sizeof(out), "untouched");
		CU_ASSERT_EQUAL(bp_blocks_jhash(j, "v", out), hashes[i].ok ? 0 : -1);
		CU_ASSERT_STRING_EQUAL(out, hashes[i].ok ? hashes[i].want : "untouched");
		cJSON_Delete(j);
	}
	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		cJSON *j = parse(addrs[i].json);

		snprintf(out, sizeof(out), "untouched");
		CU_ASSERT_EQUAL(bp_blocks_jaddr(j, "v", out, 0), addrs[i].ok ? 0 : -1);
		CU_ASSERT_STRING_EQUAL(out, addrs[i].ok ? addrs[i].want : "untouched");
		cJSON_Delete(j);
	}
	for (i = 0; i < sizeof(decs) / sizeof(decs[0]); i++) {
		cJSON *j = parse(decs[i].json);

		snprintf(out, sizeof(out), "untouched");
		CU_ASSERT_EQUAL(bp_blocks_jdec(j, "v", out), decs[i].ok ? 0 : -1);
		CU_ASSERT_STRING_EQUAL(out, decs[i].ok ? decs[i].want : "untouched");
		cJSON_Delete(j);
	}
	/* A contract creation's "to": null or absent is "" when nullable. */
	{
		cJSON *j = parse("{\"v\": null}");

		CU_ASSERT_EQUAL(bp_blocks_jaddr(j, "v", out, 1), 0);
		CU_ASSERT_STRING_EQUAL(out, "");
		CU_ASSERT_EQUAL(bp_blocks_jaddr(j, "w", out, 1), 0);
		cJSON_Delete(j);
	}
}

static void
test_head(void)
{
	static const struct row rows[] = {
		{ "\"0x1b4\"", 1, "436" },
		{ "\"0x7fffffffffffffff\"", 1, "9223372036854775807" },
		{ "\"0x8000000000000000\"", 0, NULL },		/* INT64_MAX + 1 */
		{ "436", 0, NULL },
		{ "null", 0, NULL },
		{ "{\"result\": \"0x1\"}", 0, NULL },
	};
	char dec[32];
	int64_t v;
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *j = parse(rows[i].json);

		v = -5;
		CU_ASSERT_EQUAL(bp_blocks_parse_head(j, &v), rows[i].ok ? 0 : -1);
		snprintf(dec, sizeof(dec), "%lld", (long long)v);
		CU_ASSERT_STRING_EQUAL(dec, rows[i].ok ? rows[i].want : "-5");
		cJSON_Delete(j);
	}
}

#define LOG(addr, topics, data, idx)						\
	"{\"address\": \"" addr "\", \"topics\": [" topics "], \"data\": \"" data "\","	\
	" \"blockNumber\": \"0x10\", \"logIndex\": \"" idx "\", \"transactionHash\": \"0x" H64 "\"}"
#define A	"0x5fc8d32690cc91d4c39d9d3abcbd16989f875707"
#define T	"\"0x" H64 "\""

static void
test_parse_log(void)
{
	static const struct row rows[] = {
		{ LOG(A, T "," T, "0x0102", "0x3"), 1, NULL },
		{ LOG(A, "", "0x", "0x0"), 1, NULL },
		{ LOG(A, T "," T "," T "," T "," T, "0x", "0x0"), 0, NULL },	/* 5 topics */
		{ LOG(A, "1", "0x", "0x0"), 0, NULL },			/* a number */
		{ LOG(A, "\"0x01\"", "0x", "0x0"), 0, NULL },		/* a short topic */
		{ LOG(A, T, "0x010", "0x0"), 0, NULL },			/* odd digits */
		{ LOG(A, T, "0x", "0x8000000000000000"), 0, NULL },	/* log index */
		{ LOG("0x5fc8", T, "0x", "0x0"), 0, NULL },		/* short address */
	};
	struct bp_blocks_logpos pos;
	struct bp_blocks_log l;
	uint8_t *buf = NULL;
	size_t cap = 0, i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *j = parse(rows[i].json);

		CU_ASSERT_EQUAL(bp_blocks_parse_log(j, &l, &pos, &buf, &cap),
		    rows[i].ok ? 0 : -1);
		if (i == 0) {
			CU_ASSERT_EQUAL(l.ntopics, 2);
			CU_ASSERT_EQUAL(l.topics[1][31], 0xab);
			CU_ASSERT_EQUAL(l.datalen, 2);
			CU_ASSERT_EQUAL(l.data[1], 0x02);
			CU_ASSERT_EQUAL(pos.block, 16);
			CU_ASSERT_EQUAL(pos.log_index, 3);
			CU_ASSERT_STRING_EQUAL(pos.contract, A);
			CU_ASSERT_EQUAL(l.address[19], 0x07);
		}
		cJSON_Delete(j);
	}
	free(buf);
}

BP_UNIT_SUITE(evm_blocks, NULL, NULL,
	{ "quantities", test_quantity },
	{ "hashes, addresses, decimals", test_hash_addr_dec },
	{ "eth_blockNumber answers", test_head },
	{ "eth_getLogs elements", test_parse_log })
