/*
 * lib/jsonrpc.c: the envelope scanner (table-driven, with hostile rows: NULs, bad UTF-8, lone
 * surrogates, deep nesting, ids of every type, over-long method names), the method table and
 * its compute-unit costs, block arguments, the answer scanners, the error writer, and the
 * client's reading of an upstream's answer (bp_jsonrpc_client_parse, with hostile answers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "unit.h"
#include "util.h"

#define CAP	8
/* A body with NULs in it: its text and its whole length. */
#define WITH_NUL(s)	s, sizeof(s) - 1

struct env_row {
	const char	*body;
	size_t		 len;		/* 0: strlen(body) */
	int		 code;		/* whole-body code, 0 when items are answered */
	size_t		 n;		/* items, when code is 0 */
	int		 item0;		/* code of the first item */
	const char	*id0;		/* raw id of the first item; NULL: none */
	const char	*method0;	/* decoded method of a valid first item */
};

static const struct env_row env_rows[] = {
	/* Valid single calls. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_chainId\"}", 0, 0, 1, 0, "1", "eth_chainId" },
	{ " \t\r\n{ \"method\" : \"eth_call\" , \"params\" : [ ] , \"id\" : \"x\" , \"jsonrpc\" : \"2.0\" } \n",
	    0, 0, 1, 0, "\"x\"", "eth_call" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\",\"params\":{}}", 0, 0, 1, 0, "null", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"m\"}", 0, 0, 1, 0, "1.0", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":-0.5e+10,\"method\":\"m\"}", 0, 0, 1, 0, "-0.5e+10", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":123456789012345678901234567890,\"method\":\"m\"}", 0, 0, 1, 0,
	    "123456789012345678901234567890", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0041\\n\",\"method\":\"m\"}", 0, 0, 1, 0, "\"a\\u0041\\n\"", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\u0065th_call\"}", 0, 0, 1, 0, "1", "eth_call" },
	{ "{\"jsonrpc\":\"\\u0032.0\",\"id\":1,\"method\":\"m\"}", 0, 0, 1, 0, "1", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"extra\":[1,{\"a\":null}]}", 0, 0, 1, 0, "1", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"method\":\"m\"}", 0, 0, 1,
	    0, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "m" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"method\":\"m\"}", 0, 0, 1, 0,
	    "\"\\ud83d\\ude00\"", "m" },

	/* Not JSON: -32700 for the whole body. */
	{ "", 0, -32700, 0, 0, NULL, NULL },
	{ "   ", 0, -32700, 0, 0, NULL, NULL },
	{ "nope", 0, -32700, 0, 0, NULL, NULL },
	{ "{", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"} x", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1.,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":.5,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":-,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1e,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":+1,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":tru,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":NaN,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{'jsonrpc':'2.0'}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\" \"id\":1}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"a\":1 /* c */}", 0, -32700, 0, 0, NULL, NULL },
	{ "\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	/* NULs, raw and escaped-wrong, and control bytes. */
	{ WITH_NUL("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\0"), -32700, 0, 0, NULL, NULL },
	{ WITH_NUL("\0{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}"), -32700, 0, 0, NULL, NULL },
	{ WITH_NUL("{\"jsonrpc\":\"2.0\",\0\"id\":1,\"method\":\"m\"}"), -32700, 0, 0, NULL, NULL },
	{ WITH_NUL("{\"jsonrpc\":\"2.0\",\"id\":\"a\0b\",\"method\":\"m\"}"), -32700, 0, 0, NULL,
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\x41\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\u00g1\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\u12\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	/* Bad UTF-8: \xff, overlong, encoded surrogate, past U+10FFFF, truncated; lone surrogates. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xc0\xaf\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xe0\x80\xaf\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xed\xa0\x80\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xf4\x90\x80\x80\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\xe2\x82\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\udc00\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\\u0041\",\"method\":\"m\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "\xff", 0, -32700, 0, 0, NULL, NULL },

	/* JSON, but not a request: one -32600 for the body. */
	{ "\"a string\"", 0, -32600, 0, 0, NULL, NULL },
	{ "42", 0, -32600, 0, 0, NULL, NULL },
	{ "null", 0, -32600, 0, 0, NULL, NULL },
	{ "true", 0, -32600, 0, 0, NULL, NULL },
	{ "[]", 0, -32600, 0, 0, NULL, NULL },
	{ " [ \n ] ", 0, -32600, 0, 0, NULL, NULL },

	/* Invalid requests: -32600 for the item, with its id when the id is usable. */
	{ "{}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"m\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0 \",\"id\":1,\"method\":\"m\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"id\":1,\"method\":\"m\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":[\"m\"]}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"x\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":1}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":null}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":false,\"method\":\"m\"}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}", 0, 0, 1, -32600, NULL, NULL },
	/* Duplicate members, also when one is spelt with escapes: the id is not echoed if doubled. */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\":\"b\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"m\\u0065thod\":\"b\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"a\"}", 0, 0, 1, -32600, NULL, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[],\"params\":{}}", 0, 0, 1, -32600,
	    "1", NULL },
	/* A key that only looks like a member is another member (dropped when forwarded). */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"method\\u0000\":\"b\"}", 0, 0, 1, 0, "1", "a" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"methods\":\"b\"}", 0, 0, 1, 0, "1", "a" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"me thod\":\"b\"}", 0, 0, 1, 0, "1", "a" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"m\xc3\xa9thod\":\"b\"}", 0, 0, 1, 0, "1", "a" },
	/*
	 * A key that a node decoding like Go's encoding/json (case-insensitive, last one wins), .NET
	 * or Java reads as one of the four is refused: case variants, escaped spellings, and the
	 * non-ASCII letters that fold to s, k or i (U+017F, U+212A, U+0130, U+0131), whichever
	 * comes first, with or without the real member beside it.
	 */
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"Method\":\"eth_sendRawTransaction\"}",
	    0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"METHOD\":\"eth_sendRawTransaction\"}",
	    0, 0, 1, -32600, "1", NULL },
	{ "{\"METHOD\":\"eth_sendRawTransaction\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\"}",
	    0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"METHOD\":\"eth_chainId\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"\\u004dETHOD\":\"b\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"\\u006dethoD\":\"b\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"m\\u0045thod\":\"b\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":[],\"PARAMS\":[1]}", 0, 0, 1, -32600,
	    "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"param\xc5\xbf\":[1]}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"param\\u017f\":[1]}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"j\xc5\xbfonrpc\":\"1.0\",\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, 0, 1, -32600, "1",
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"ID\":2,\"method\":\"a\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"\xc4\xb1" "d\":2,\"method\":\"a\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"\\u0130D\":2,\"method\":\"a\"}", 0, 0, 1, -32600, "1", NULL },
	{ "{\"JsonRpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, 0, 1, -32600, "1", NULL },

	/* Batches. */
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}]",
	    0, 0, 2, 0, "1", "a" },
	{ "[1]", 0, 0, 1, -32600, NULL, NULL },
	{ "[[]]", 0, 0, 1, -32600, NULL, NULL },
	{ "[null,\"x\",{}]", 0, 0, 3, -32600, NULL, NULL },
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},]", 0, -32700, 0, 0, NULL, NULL },
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, -32700, 0, 0, NULL, NULL },
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} {}]", 0, -32700, 0, 0, NULL, NULL },
	{ "[{},{},{},{},{},{}]", 0, -32600, 0, 0, NULL, NULL },	/* over max_batch 5 */
	{ "[{},{},{},{},{}]", 0, 0, 5, -32600, NULL, NULL },	/* exactly max_batch */
	{ "[{},{},{},{},{},{]", 0, -32700, 0, 0, NULL, NULL },	/* broken beats too large */
	/* The same in a batch: the item is refused, its neighbours are not. */
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"mEthod\":\"eth_sendRawTransaction\"},"
	    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"eth_chainId\"}]", 0, 0, 2, -32600, "1", NULL },
	{ "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"\\u006dethod\":\"debug_traceCall\"}]",
	    0, 0, 1, -32600, "1", NULL },
};

static void
test_envelope_table(void)
{
	struct bp_jsonrpc_item items[CAP];
	struct bp_jsonrpc_body b;
	size_t i;

	for (i = 0; i < BP_NITEMS(env_rows); i++) {
		const struct env_row *row = &env_rows[i];
		size_t len = row->len ? row->len : strlen(row->body);
		int rc = bp_jsonrpc_parse(row->body, len, 5, items, CAP, &b);
		int ok = 1;

		if (row->code != 0)
			ok = rc == -1 && b.code == row->code && b.why != NULL;
		else {
			ok = rc == 0 && b.code == 0 && b.n == row->n && items[0].code == row->item0;
			if (ok && row->id0 != NULL)
				ok = items[0].id.len == strlen(row->id0) &&
				    memcmp(row->body + items[0].id.off, row->id0, items[0].id.len) == 0;
			else if (ok)
				ok = items[0].id.len == 0;
			if (ok && row->method0 != NULL)
				ok = strcmp(items[0].method, row->method0) == 0 &&
				    items[0].method_len == strlen(row->method0);
			if (ok && row->item0 != 0)
				ok = items[0].why != NULL;
			/* The item's raw bytes are inside the body. */
			if (ok)
				ok = items[0].raw.off + items[0].raw.len <= len;
		}
		if (!ok)
			fprintf(stderr, "\nenvelope row %zu (%.60s): rc %d code %d n %zu item0 %d\n",
			    i, row->body, rc, b.code, b.n, b.n ? items[0].code : 0);
		CU_ASSERT(ok);
	}
}

/* A body of prefix, k '[' then k ']', and suffix, into buf; its length. */
static size_t
nested(char *buf, size_t size, const char *prefix, size_t k, const char *suffix)
{
	size_t n = strlen(prefix), m = strlen(suffix);

	CU_ASSERT_FATAL(n + 2 * k + m < size);
	memcpy(buf, prefix, n);
	memset(buf + n, '[', k);
	memset(buf + n + k, ']', k);
	memcpy(buf + n + 2 * k, suffix, m);
	return n + 2 * k + m;
}

/* Nesting: 64 levels pass, 65 are one -32600 for the body; nothing recurses. */
static void
test_envelope_depth(void)
{
	static const char single[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":";
	static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":";
	static char body[4 * 1024 * 1024];
	struct bp_jsonrpc_item items[CAP];
	struct bp_jsonrpc_body b;
	size_t n;

	/* A single call: the object and 63 arrays pass, 64 arrays do not. */
	n = nested(body, sizeof(body), single, 63, "}");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, n, 5, items, CAP, &b), 0);
	n = nested(body, sizeof(body), single, 64, "}");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, n, 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* In a batch the array counts as a level. */
	n = nested(body, sizeof(body), batch, 62, "}]");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(b.n, 1);
	n = nested(body, sizeof(body), batch, 63, "}]");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, n, 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* Four million open brackets: refused without using the stack. */
	memset(body, '[', sizeof(body));
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, sizeof(body), 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* Objects that never close, within the depth: not JSON. */
	memset(body, '{', 10);
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, 10, 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32700);
}

static void
test_envelope_batch(void)
{
	static const char body[] =
	    "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_chainId\"},"
	    " {\"jsonrpc\":\"2.0\",\"id\":2},"
	    " 5,"
	    " {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"eth_getBalance\",\"params\":[\"0x1\",\"latest\"]}]";
	struct bp_jsonrpc_item items[CAP];
	struct bp_jsonrpc_body b;

	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, sizeof(body) - 1, 100, items, CAP, &b), 0);
	CU_ASSERT(b.batch);
	CU_ASSERT_EQUAL(b.n, 4);
	CU_ASSERT_EQUAL(items[0].code, 0);
	CU_ASSERT_EQUAL(items[1].code, -32600);
	CU_ASSERT_EQUAL(items[1].id.len, 1);
	CU_ASSERT_EQUAL(items[2].code, -32600);
	CU_ASSERT_EQUAL(items[2].id.len, 0);
	CU_ASSERT_EQUAL(items[2].raw.len, 1);
	CU_ASSERT_EQUAL(body[items[2].raw.off], '5');
	CU_ASSERT_EQUAL(items[3].code, 0);
	CU_ASSERT_STRING_EQUAL(items[3].method, "eth_getBalance");
	CU_ASSERT_EQUAL(items[3].params.len, strlen("[\"0x1\",\"latest\"]"));
	CU_ASSERT(memcmp(body + items[3].params.off, "[\"0x1\",\"latest\"]", items[3].params.len) == 0);
	CU_ASSERT_EQUAL(body[items[3].raw.off], '{');
	CU_ASSERT_EQUAL(body[items[3].raw.off + items[3].raw.len - 1], '}');
	/* More items than room: refused, never written past cap. */
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, sizeof(body) - 1, 100, items, 2, &b), -1);
	CU_ASSERT_EQUAL(b.n, 4);
}

/* What the proxy forwards: the four members only, extra ones dropped, bytes kept. */
static void
test_envelope_forwarded(void)
{
	static const struct {
		const char	*body;
		int		 extra;
		const char	*id;
		const char	*sent;
	} rows[] = {
		{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"eth_chainId\"}", 0, "7",
		    "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"eth_chainId\"}" },
		{ " { \"params\" : [ \"0x1\" , \"latest\" ] , \"method\" : \"e\\u0074h_getBalance\" ,"
		    " \"id\" : 1.0 , \"jsonrpc\" : \"\\u0032.0\" } ", 0, "0",
		    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"e\\u0074h_getBalance\","
		    "\"params\":[ \"0x1\" , \"latest\" ]}" },
		{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"methods\":\"x\","
		    "\"method\\u0000\":\"eth_sendRawTransaction\",\"params\":{}}", 1, "1",
		    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_blockNumber\",\"params\":{}}" },
	};
	struct bp_jsonrpc_item items[CAP];
	struct bp_jsonrpc_body b;
	struct bp_buf out;
	size_t i;

	bp_buf_init(&out, 4096);
	for (i = 0; i < BP_NITEMS(rows); i++) {
		CU_ASSERT_FATAL(bp_jsonrpc_parse(rows[i].body, strlen(rows[i].body), 5, items, CAP,
		    &b) == 0);
		CU_ASSERT_EQUAL(items[0].code, 0);
		CU_ASSERT_EQUAL(items[0].extra, rows[i].extra);
		bp_buf_reset(&out);
		CU_ASSERT_EQUAL(bp_jsonrpc_envelope(&out, rows[i].body, &items[0], rows[i].id,
		    strlen(rows[i].id)), 0);
		CU_ASSERT_EQUAL(out.len, strlen(rows[i].sent));
		CU_ASSERT(out.len == strlen(rows[i].sent) &&
		    memcmp(out.data, rows[i].sent, out.len) == 0);
	}
	/* A full buffer is an error, not a cut request. */
	bp_buf_free(&out);
	bp_buf_init(&out, 16);
	CU_ASSERT_FATAL(bp_jsonrpc_parse(rows[0].body, strlen(rows[0].body), 5, items, CAP, &b) == 0);
	CU_ASSERT_EQUAL(bp_jsonrpc_envelope(&out, rows[0].body, &items[0], "1", 1), -1);
	bp_buf_free(&out);
}

static void
test_method_names(void)
{
	static const char *const long_name =
	    "eth_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct bp_jsonrpc_item items[CAP];
	struct bp_jsonrpc_body b;
	char body[512];
	int n;

	/* A name of exactly 64 bytes is kept; 65 is marked too long, truncated and terminated. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%.64s\"}", long_name);
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(items[0].method_len, 64);
	CU_ASSERT_EQUAL(strlen(items[0].method), 64);
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%.65s\"}", long_name);
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT(items[0].method_len > BP_JSONRPC_METHOD_MAX);
	CU_ASSERT_EQUAL(strlen(items[0].method), 64);
	CU_ASSERT_PTR_NULL(bp_jsonrpc_method(BP_CHAIN_EVM, items[0].method, items[0].method_len));
	/* An escaped NUL stays in the name, so the name is not eth_call. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\\u0000x\"}");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(items[0].method_len, 10);
	CU_ASSERT_PTR_NULL(bp_jsonrpc_method(BP_CHAIN_EVM, items[0].method, items[0].method_len));
	CU_ASSERT_PTR_NOT_NULL(bp_jsonrpc_method(BP_CHAIN_EVM, items[0].method, 8));
	/* A 4-byte escape decodes to UTF-8. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud83d\\ude00\"}");
	CU_ASSERT_EQUAL(bp_jsonrpc_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(items[0].method_len, 4);
	CU_ASSERT(memcmp(items[0].method, "\xf0\x9f\x98\x80", 4) == 0);
}

static void
test_id_simple(void)
{
	static const struct { const char *id; int simple; } rows[] = {
		{ "0", 1 }, { "1", 1 }, { "42", 1 }, { "999999999999999", 1 },
		{ "9999999999999999", 0 }, { "01", 0 }, { "-1", 0 }, { "1.0", 0 }, { "1e2", 0 },
		{ "null", 0 }, { "\"a\"", 1 }, { "\"abc-123_:/.\"", 1 }, { "\"\"", 0 },
		{ "\"a\\u0041\"", 0 }, { "\"a<b\"", 0 }, { "\"a&b\"", 0 }, { "\"\xc3\xa9\"", 0 },
		{ "\"", 0 }, { "", 0 }, { "true", 0 },
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		int got = bp_jsonrpc_id_simple(rows[i].id, strlen(rows[i].id));

		if (got != rows[i].simple)
			fprintf(stderr, "\nid_simple(%s) = %d\n", rows[i].id, got);
		CU_ASSERT_EQUAL(got, rows[i].simple);
	}
}

static void
test_method_table(void)
{
	size_t n, i;
	const struct bp_jsonrpc_method *t = bp_jsonrpc_methods(&n);

	CU_ASSERT(n > 100);
	for (i = 0; i < n; i++) {
		/* Sorted in byte order, unique (bsearch), each name findable for its kind only. */
		if (i > 0 && strcmp(t[i - 1].name, t[i].name) >= 0) {
			fprintf(stderr, "\nmethod table out of order at %s\n", t[i].name);
			CU_FAIL("method table out of order");
		}
		CU_ASSERT_PTR_EQUAL(bp_jsonrpc_method(t[i].kind, t[i].name, strlen(t[i].name)), &t[i]);
		CU_ASSERT_PTR_NULL(bp_jsonrpc_method(t[i].kind == BP_CHAIN_EVM ? BP_CHAIN_SOLANA :
		    BP_CHAIN_EVM, t[i].name, strlen(t[i].name)));
		CU_ASSERT(strlen(t[i].name) <= BP_JSONRPC_METHOD_MAX);
		CU_ASSERT((unsigned)t[i].cls < BP_RPC_CLASS__MAX);
		/* Every offered method costs at least 1; archive costs only with a block argument. */
		if (t[i].cls != BP_RPC_DENIED)
			CU_ASSERT(t[i].cu >= 1 && t[i].cu <= 20);
		CU_ASSERT((t[i].archive_cu != 0) == (t[i].block_arg >= 0));
		if (t[i].archive_cu != 0)
			CU_ASSERT(t[i].archive_cu >= t[i].cu);
		/* The prefixes never offered are never in the table as offered methods. */
		if (strncmp(t[i].name, "anvil_", 6) == 0 || strncmp(t[i].name, "personal_", 9) == 0)
			CU_ASSERT_EQUAL(t[i].cls, BP_RPC_DENIED);
	}
}

static void
test_method_classes_and_costs(void)
{
	static const struct {
		enum bp_chain_kind kind;
		const char	*name;
		int		 found;
		enum bp_rpc_class cls;
		unsigned	 cu;
		unsigned	 archive_cu;
	} rows[] = {
		/* SPEC.md's anchors. */
		{ BP_CHAIN_EVM, "eth_blockNumber", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_getStorageAt", 1, BP_RPC_READ, 2, 20 },
		/* Alchemy / 10, at least 1. */
		{ BP_CHAIN_EVM, "eth_chainId", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_call", 1, BP_RPC_READ, 3, 20 },
		{ BP_CHAIN_EVM, "eth_getLogs", 1, BP_RPC_READ, 6, 0 },
		{ BP_CHAIN_EVM, "eth_getBalance", 1, BP_RPC_READ, 2, 20 },
		{ BP_CHAIN_EVM, "eth_getTransactionReceipt", 1, BP_RPC_READ, 2, 0 },
		{ BP_CHAIN_EVM, "eth_estimateGas", 1, BP_RPC_READ, 2, 20 },
		{ BP_CHAIN_EVM, "eth_feeHistory", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_sendRawTransaction", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_EVM, "debug_traceTransaction", 1, BP_RPC_DEBUG, 4, 0 },
		{ BP_CHAIN_EVM, "trace_block", 1, BP_RPC_DEBUG, 2, 0 },
		{ BP_CHAIN_EVM, "trace_replayTransaction", 1, BP_RPC_DEBUG, 8, 0 },
		{ BP_CHAIN_EVM, "eth_subscribe", 1, BP_RPC_SUBSCRIBE, 1, 0 },
		{ BP_CHAIN_EVM, "eth_sendTransaction", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "debug_setHead", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "personal_sign", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "wallet_addEthereumChain", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "admin_peers", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "miner_start", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "anvil_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "hardhat_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "evm_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "evm_", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "debug_storageRangeAt", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_nope", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "ETH_CHAINID", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_chainid", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_chainId ", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "evm", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "getSlot", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "getSlot", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_SOLANA, "getAccountInfo", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_SOLANA, "getTransaction", 1, BP_RPC_READ, 4, 0 },
		{ BP_CHAIN_SOLANA, "sendTransaction", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_SOLANA, "requestAirdrop", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_SOLANA, "accountSubscribe", 1, BP_RPC_SUBSCRIBE, 1, 0 },
		{ BP_CHAIN_SOLANA, "eth_blockNumber", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "anvil_mine", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "", 0, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		const struct bp_jsonrpc_method *m = bp_jsonrpc_method(rows[i].kind, rows[i].name,
		    strlen(rows[i].name));

		if ((m != NULL) != rows[i].found || (m != NULL && (m->cls != rows[i].cls ||
		    m->cu != rows[i].cu || m->archive_cu != rows[i].archive_cu))) {
			fprintf(stderr, "\nmethod row %s: found %d\n", rows[i].name, m != NULL);
			CU_FAIL("method row");
		}
	}
	CU_ASSERT_STRING_EQUAL(bp_jsonrpc_class_name(BP_RPC_WRITE), "write");
	CU_ASSERT_STRING_EQUAL(bp_jsonrpc_class_name(BP_RPC_CLASS__MAX), "?");
}

static void
test_block_arg_and_cost(void)
{
	static const struct {
		const char	*params;
		int		 index;
		enum bp_block_ref ref;
		int64_t		 number;
	} rows[] = {
		{ "[\"0xabc\",\"0x10\"]", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"0xabc\",\"0X1F\"]", 1, BP_BLOCK_NUMBER, 31 },
		{ "[\"0xabc\",\"earliest\"]", 1, BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",\"latest\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"pending\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"safe\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"finalized\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",{\"blockNumber\":\"0x5\"}]", 1, BP_BLOCK_NUMBER, 5 },
		{ "[\"0xabc\",{\"blockHash\":\"0x5\"}]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0x\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0xzz\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0x8000000000000000\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0x7fffffffffffffff\"]", 1, BP_BLOCK_NUMBER, INT64_MAX },
		{ "[\"0xabc\",\"0x10000000000000000\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",16]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"\\u0030x10\"]", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"a\",\"0x0\",\"0x3\"]", 2, BP_BLOCK_NUMBER, 3 },
		{ "{\"a\":1}", 1, BP_BLOCK_NONE, 0 },
		/* Elements are read lazily: what stands before a break is still read. */
		{ "[\"0xabc\",\"0x10\"", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"0xabc\" \"0x10\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0x1\"]", -1, BP_BLOCK_NONE, 0 },
	};
	const struct bp_jsonrpc_method *getstorage, *blocknum;
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		int64_t number = -7;
		enum bp_block_ref ref = bp_jsonrpc_block_arg(rows[i].params, strlen(rows[i].params),
		    rows[i].index, &number);

		if (ref != rows[i].ref || (ref == BP_BLOCK_NUMBER && number != rows[i].number)) {
			fprintf(stderr, "\nblock arg %s: %d %lld\n", rows[i].params, ref,
			    (long long)number);
			CU_FAIL("block arg");
		}
	}
	getstorage = bp_jsonrpc_method(BP_CHAIN_EVM, "eth_getStorageAt", 16);
	blocknum = bp_jsonrpc_method(BP_CHAIN_EVM, "eth_blockNumber", 15);
	CU_ASSERT_PTR_NOT_NULL_FATAL(getstorage);
	CU_ASSERT_PTR_NOT_NULL_FATAL(blocknum);
	/* Archive: more than archive_depth below the head. */
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 0, 1000, 128), 20);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 871, 1000, 128), 20);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 872, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 1000, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 5000, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 0, -1, 128), 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NONE, 0, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(getstorage, BP_BLOCK_NUMBER, 0, INT64_MAX, 1), 20);
	CU_ASSERT_EQUAL(bp_jsonrpc_cost(blocknum, BP_BLOCK_NUMBER, 0, 1000, 128), 1);
}

static void
test_answer_scanners(void)
{
	static const char obj[] =
	    " {\"jsonrpc\":\"2.0\",\"result\":{\"id\":5,\"x\":[1,2]},\"\\u0069d\":\"abc\",\"id\":9}";
	static const char arr[] = "[ {\"id\":0} , 1 ,\"x\",[[]] ]";
	struct bp_jsonrpc_iter it;
	struct bp_jsonrpc_span v, e;
	int n = 0;

	/* The member at the top level, spelt with an escape, first one wins. */
	CU_ASSERT_EQUAL(bp_jsonrpc_member(obj, sizeof(obj) - 1, "id", &v), 1);
	CU_ASSERT_EQUAL(v.len, 5);
	CU_ASSERT(memcmp(obj + v.off, "\"abc\"", 5) == 0);
	CU_ASSERT_EQUAL(bp_jsonrpc_member(obj, sizeof(obj) - 1, "error", &v), 0);
	CU_ASSERT_EQUAL(bp_jsonrpc_member("[1]", 3, "id", &v), -1);
	CU_ASSERT_EQUAL(bp_jsonrpc_member("{\"a\":", 5, "id", &v), -1);
	CU_ASSERT_EQUAL(bp_jsonrpc_member("{}", 2, "id", &v), 0);
	CU_ASSERT_EQUAL(bp_jsonrpc_member("", 0, "id", &v), -1);

	bp_jsonrpc_iter_init(&it, arr, sizeof(arr) - 1);
	while (bp_jsonrpc_iter_next(&it, &e) == 1)
		n++;
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), 0);
	bp_jsonrpc_iter_init(&it, "[]", 2);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), 0);
	bp_jsonrpc_iter_init(&it, "[1,", 3);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), 1);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), -1);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), -1);
	bp_jsonrpc_iter_init(&it, "{\"a\":1}", 7);
	CU_ASSERT_EQUAL(bp_jsonrpc_iter_next(&it, &e), -1);
}

static void
test_error_obj(void)
{
	struct bp_buf b;

	bp_buf_init(&b, 4096);
	CU_ASSERT_EQUAL(bp_jsonrpc_error_obj(&b, "1.0", 3, -32601, "no \"such\"\n method"), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"error\":{\"code\":-32601,"
	    "\"message\":\"no \\\"such\\\"\\n method\"}}");
	bp_buf_reset(&b);
	CU_ASSERT_EQUAL(bp_jsonrpc_error_obj(&b, NULL, 0, -32700, "parse error"), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"parse error\"}}");
	bp_buf_free(&b);
	bp_buf_init(&b, 10);
	CU_ASSERT_EQUAL(bp_jsonrpc_error_obj(&b, NULL, 0, -32700, "parse error"), -1);
	bp_buf_free(&b);
}

/*
 * One answer to n calls (ids 0..n-1) and what each call gets: "=JSON" a result (printed
 * unformatted), "!CODE MESSAGE" the node's error, "?MESSAGE" a protocol error.
 */
struct client_row {
	size_t		 n;
	const char	*ans;
	size_t		 len;		/* 0: strlen(ans) */
	size_t		 got;
	const char	*want[3];
};

#define R0	"{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x1\"}"
#define R1	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}"
#define E1	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32000,\"message\":\"boom\"}}"
#define NOANS	"?no answer for this call"
#define NOTJSON	"?answer is not JSON"
#define NEITHER	"?answer has neither result nor error"

static const struct client_row client_rows[] = {
	{ 1, R0, 0, 1, { "=\"0x1\"" } },
	{ 1, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":null}", 0, 1, { "=null" } },
	/* A single call's answer without a usable id is still its answer. */
	{ 1, "{\"result\":7}", 0, 1, { "=7" } },
	{ 1, "{\"id\":\"0\",\"result\":7}", 0, 1, { "=7" } },
	{ 1, "{\"id\":0}", 0, 0, { NEITHER } },
	/* A batch in any order; a repeated id keeps the first answer that has something. */
	{ 2, "[" R1 "," R0 "]", 0, 2, { "=\"0x1\"", "=[1]" } },
	{ 2, "[" E1 "," R1 "]", 0, 0, { NOANS, "!-32000 boom" } },
	{ 3, "[{\"id\":1}," R1 "]", 0, 1, { NOANS, "=[1]", NOANS } },
	/* Ids that name no call: out of range, negative, fractional, strings, missing. */
	{ 2, "[{\"id\":2,\"result\":1},{\"id\":-1,\"result\":1},{\"id\":0.5,\"result\":1},"
	    "{\"id\":\"1\",\"result\":1},{\"result\":1},{\"id\":1e300,\"result\":1}]", 0, 0,
	    { NOANS, NOANS } },
	{ 2, "[1,\"x\",null,[],[" R0 "]]", 0, 0, { NOANS, NOANS } },
	/* One object for a batch: an error goes to every call, a result to none. */
	{ 3, "{\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bad batch\"}}", 0, 0,
	    { "!-32600 bad batch", "!-32600 bad batch", "!-32600 bad batch" } },
	{ 2, "{\"result\":1,\"result\":2}", 0, 0, { NOANS, NOANS } },
	{ 2, "{\"id\":1,\"result\":1,\"result\":2}", 0, 1, { NOANS, "=1" } },
	/* Error objects: an error beats a result; codes that do not fit an int64 are 0. */
	{ 1, "{\"id\":0,\"result\":1,\"error\":{\"code\":3}}", 0, 0, { "!3 error without a message" } },
	{ 1, "{\"id\":0,\"result\":1,\"error\":\"no\"}", 0, 1, { "=1" } },
	{ 3, "[{\"id\":0,\"error\":{\"code\":1e300,\"message\":\"x\"}},"
	    "{\"id\":1,\"error\":{\"code\":-1.9,\"message\":7}},"
	    "{\"id\":2,\"error\":{\"code\":\"-32000\",\"message\":\"\"}}]", 0, 0,
	    { "!0 x", "!-1 error without a message", "!0 " } },
	{ 2, "[{\"id\":0,\"error\":{\"code\":-9223372036854775808}},"
	    "{\"id\":1,\"error\":{\"code\":9223372036854775808}}]", 0, 0,
	    { "!-9223372036854775808 error without a message", "!0 error without a message" } },
	/* Not JSON, or JSON that answers nothing. */
	{ 2, "", 0, 0, { NOTJSON, NOTJSON } },
	{ 1, "<html>502 Bad Gateway</html>", 0, 0, { NOTJSON } },
	{ 1, WITH_NUL("\0{\"id\":0,\"result\":1}"), 1, { "=1" } },	/* cJSON: NUL is space */
	{ 1, "{\"id\":0,\"result\":1", 0, 0, { NOTJSON } },
	{ 1, "\"0x1\"", 0, 0, { NOANS } },
	{ 0, R0, 0, 0, { NULL } },
};

static void
test_client_parse(void)
{
	struct bp_jsonrpc_call calls[3];
	char buf[300];
	size_t i, k;

	for (i = 0; i < BP_NITEMS(client_rows); i++) {
		const struct client_row *r = &client_rows[i];
		size_t len = r->len ? r->len : strlen(r->ans), got;
		int bad = 0;

		memset(calls, 0x5a, sizeof(calls));
		got = bp_jsonrpc_client_parse(r->ans, len, calls, r->n);
		bad |= got != r->got;
		for (k = 0; k < r->n; k++) {
			const struct bp_jsonrpc_call *c = &calls[k];
			char *text = NULL;

			switch (r->want[k][0]) {
			case '=':
				text = c->result ? cJSON_PrintUnformatted(c->result) : NULL;
				bad |= text == NULL || strcmp(text, r->want[k] + 1) != 0 ||
				    c->err.kind != BP_JSONRPC_ERR_NONE;
				break;
			case '!':
				snprintf(buf, sizeof(buf), "!%lld %s", (long long)c->err.code,
				    c->err.message);
				bad |= c->result != NULL || c->err.kind != BP_JSONRPC_ERR_RPC ||
				    strcmp(buf, r->want[k]) != 0;
				break;
			default:
				bad |= c->result != NULL || c->err.kind != BP_JSONRPC_ERR_PROTOCOL ||
				    strcmp(c->err.message, r->want[k] + 1) != 0;
				break;
			}
			free(text);
			cJSON_Delete(c->result);
		}
		CU_ASSERT_FALSE(bad);
		if (bad)
			fprintf(stderr, "client row %zu: got %zu\n", i, got);
	}
}

/* A message longer than err.message is cut to fit; a NULL answer of length 0 is not JSON. */
static void
test_client_parse_limits(void)
{
	struct bp_jsonrpc_call c;
	char ans[700], want[sizeof(c.err.message)];

	memset(want, 'm', sizeof(want) - 1);
	want[sizeof(want) - 1] = '\0';
	snprintf(ans, sizeof(ans), "{\"id\":0,\"error\":{\"code\":1,\"message\":\"%s%s\"}}", want,
	    "tail");
	CU_ASSERT_EQUAL(bp_jsonrpc_client_parse(ans, strlen(ans), &c, 1), 0);
	CU_ASSERT_EQUAL(c.err.kind, BP_JSONRPC_ERR_RPC);
	CU_ASSERT_STRING_EQUAL(c.err.message, want);
	CU_ASSERT_EQUAL(bp_jsonrpc_client_parse(NULL, 0, &c, 1), 0);
	CU_ASSERT_EQUAL(c.err.kind, BP_JSONRPC_ERR_PROTOCOL);
	CU_ASSERT_PTR_NULL(c.result);
}

BP_UNIT_SUITE(jsonrpc, NULL, NULL,
	{ "envelope table", test_envelope_table },
	{ "envelope depth", test_envelope_depth },
	{ "envelope batch", test_envelope_batch },
	{ "envelope forwarded", test_envelope_forwarded },
	{ "method names", test_method_names },
	{ "id simple", test_id_simple },
	{ "method table", test_method_table },
	{ "method classes and costs", test_method_classes_and_costs },
	{ "block argument and cost", test_block_arg_and_cost },
	{ "answer scanners", test_answer_scanners },
	{ "error object", test_error_obj },
	{ "client answers", test_client_parse },
	{ "client answer limits", test_client_parse_limits },
)
