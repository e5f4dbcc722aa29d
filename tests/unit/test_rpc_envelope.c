/*
 * lib/rpc/rpc_envelope.c: the envelope scanner (table-driven, with hostile rows: NULs, bad UTF-8,
 * lone surrogates, deep nesting, ids of every type, over-long method names, and members that a
 * node could read as another envelope member: case variants, duplicates, escaped and folding
 * names), what the proxy forwards, and the error writer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_methods.h"
#include "unit.h"

#define CAP	8
#define NODE	(&bp_rpc_node_table)	/* the node proxy's method table */
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
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;
	size_t i;

	for (i = 0; i < BP_NITEMS(env_rows); i++) {
		const struct env_row *row = &env_rows[i];
		size_t len = row->len ? row->len : strlen(row->body);
		int rc = bp_rpc_envelope_parse(row->body, len, 5, items, CAP, &b);
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
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;
	size_t n;

	/* A single call: the object and 63 arrays pass, 64 arrays do not. */
	n = nested(body, sizeof(body), single, 63, "}");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, n, 5, items, CAP, &b), 0);
	n = nested(body, sizeof(body), single, 64, "}");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, n, 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* In a batch the array counts as a level. */
	n = nested(body, sizeof(body), batch, 62, "}]");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(b.n, 1);
	n = nested(body, sizeof(body), batch, 63, "}]");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, n, 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* Four million open brackets: refused without using the stack. */
	memset(body, '[', sizeof(body));
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, sizeof(body), 5, items, CAP, &b), -1);
	CU_ASSERT_EQUAL(b.code, -32600);
	/* Objects that never close, within the depth: not JSON. */
	memset(body, '{', 10);
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, 10, 5, items, CAP, &b), -1);
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
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;

	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, sizeof(body) - 1, 100, items, CAP, &b), 0);
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
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, sizeof(body) - 1, 100, items, 2, &b), -1);
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
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;
	struct bp_buf out;
	size_t i;

	bp_buf_init(&out, 4096);
	for (i = 0; i < BP_NITEMS(rows); i++) {
		CU_ASSERT_FATAL(bp_rpc_envelope_parse(rows[i].body, strlen(rows[i].body), 5, items, CAP,
		    &b) == 0);
		CU_ASSERT_EQUAL(items[0].code, 0);
		CU_ASSERT_EQUAL(items[0].extra, rows[i].extra);
		bp_buf_reset(&out);
		CU_ASSERT_EQUAL(bp_rpc_envelope_write(&out, rows[i].body, &items[0], rows[i].id,
		    strlen(rows[i].id)), 0);
		CU_ASSERT_EQUAL(out.len, strlen(rows[i].sent));
		CU_ASSERT(out.len == strlen(rows[i].sent) &&
		    memcmp(out.data, rows[i].sent, out.len) == 0);
	}
	/* A full buffer is an error, not a cut request. */
	bp_buf_free(&out);
	bp_buf_init(&out, 16);
	CU_ASSERT_FATAL(bp_rpc_envelope_parse(rows[0].body, strlen(rows[0].body), 5, items, CAP, &b) == 0);
	CU_ASSERT_EQUAL(bp_rpc_envelope_write(&out, rows[0].body, &items[0], "1", 1), -1);
	bp_buf_free(&out);
}

static void
test_method_names(void)
{
	static const char *const long_name =
	    "eth_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;
	char body[512];
	int n;

	/* A name of exactly 64 bytes is kept; 65 is marked too long, truncated and terminated. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%.64s\"}", long_name);
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(items[0].method_len, 64);
	CU_ASSERT_EQUAL(strlen(items[0].method), 64);
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%.65s\"}", long_name);
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT(items[0].method_len > BP_JSONRPC_METHOD_MAX);
	CU_ASSERT_EQUAL(strlen(items[0].method), 64);
	CU_ASSERT_PTR_NULL(bp_rpc_method(NODE, BP_CHAIN_EVM, items[0].method, items[0].method_len));
	/* An escaped NUL stays in the name, so the name is not eth_call. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_call\\u0000x\"}");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, (size_t)n, 5, items, CAP, &b), 0);
	CU_ASSERT_EQUAL(items[0].method_len, 10);
	CU_ASSERT_PTR_NULL(bp_rpc_method(NODE, BP_CHAIN_EVM, items[0].method, items[0].method_len));
	CU_ASSERT_PTR_NOT_NULL(bp_rpc_method(NODE, BP_CHAIN_EVM, items[0].method, 8));
	/* A 4-byte escape decodes to UTF-8. */
	n = snprintf(body, sizeof(body), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud83d\\ude00\"}");
	CU_ASSERT_EQUAL(bp_rpc_envelope_parse(body, (size_t)n, 5, items, CAP, &b), 0);
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
		int got = bp_rpc_envelope_id_simple(rows[i].id, strlen(rows[i].id));

		if (got != rows[i].simple)
			fprintf(stderr, "\nid_simple(%s) = %d\n", rows[i].id, got);
		CU_ASSERT_EQUAL(got, rows[i].simple);
	}
}

static void
test_error_obj(void)
{
	struct bp_buf b;

	bp_buf_init(&b, 4096);
	CU_ASSERT_EQUAL(bp_rpc_envelope_error_obj(&b, "1.0", 3, -32601, "no \"such\"\n method"), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"error\":{\"code\":-32601,"
	    "\"message\":\"no \\\"such\\\"\\n method\"}}");
	bp_buf_reset(&b);
	CU_ASSERT_EQUAL(bp_rpc_envelope_error_obj(&b, NULL, 0, -32700, "parse error"), 0);
	CU_ASSERT_STRING_EQUAL(b.data, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
	    "\"message\":\"parse error\"}}");
	bp_buf_free(&b);
	bp_buf_init(&b, 10);
	CU_ASSERT_EQUAL(bp_rpc_envelope_error_obj(&b, NULL, 0, -32700, "parse error"), -1);
	bp_buf_free(&b);
}

BP_UNIT_SUITE(rpc_envelope, NULL, NULL,
	{ "envelope table", test_envelope_table },
	{ "envelope depth", test_envelope_depth },
	{ "envelope batch", test_envelope_batch },
	{ "envelope forwarded", test_envelope_forwarded },
	{ "method names", test_method_names },
	{ "id simple", test_id_simple },
	{ "error object", test_error_obj },
)
