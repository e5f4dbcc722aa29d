/*
 * lib/rpc/rpc_client.c: the client's reading of an upstream's answer (bp_rpc_client_parse, with
 * hostile answers: reordered, repeated and stray ids, one object for a batch, codes past the
 * int64 range, cut messages, not JSON). Calls over the wire are in test_upstream.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "rpc/rpc_client.h"
#include "unit.h"

/* A body with NULs in it: its text and its whole length. */
#define WITH_NUL(s)	s, sizeof(s) - 1

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
	struct bp_rpc_client_call calls[3];
	char buf[300];
	size_t i, k;

	for (i = 0; i < BP_NITEMS(client_rows); i++) {
		const struct client_row *r = &client_rows[i];
		size_t len = r->len ? r->len : strlen(r->ans), got;
		int bad = 0;

		memset(calls, 0x5a, sizeof(calls));
		got = bp_rpc_client_parse(r->ans, len, calls, r->n);
		bad |= got != r->got;
		for (k = 0; k < r->n; k++) {
			const struct bp_rpc_client_call *c = &calls[k];
			char *text = NULL;

			switch (r->want[k][0]) {
			case '=':
				text = c->result ? cJSON_PrintUnformatted(c->result) : NULL;
				bad |= text == NULL || strcmp(text, r->want[k] + 1) != 0 ||
				    c->err.kind != BP_RPC_CLIENT_ERR_NONE;
				break;
			case '!':
				snprintf(buf, sizeof(buf), "!%lld %s", (long long)c->err.code,
				    c->err.message);
				bad |= c->result != NULL || c->err.kind != BP_RPC_CLIENT_ERR_RPC ||
				    strcmp(buf, r->want[k]) != 0;
				break;
			default:
				bad |= c->result != NULL || c->err.kind != BP_RPC_CLIENT_ERR_PROTOCOL ||
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
	struct bp_rpc_client_call c;
	char ans[700], want[sizeof(c.err.message)];

	memset(want, 'm', sizeof(want) - 1);
	want[sizeof(want) - 1] = '\0';
	snprintf(ans, sizeof(ans), "{\"id\":0,\"error\":{\"code\":1,\"message\":\"%s%s\"}}", want,
	    "tail");
	CU_ASSERT_EQUAL(bp_rpc_client_parse(ans, strlen(ans), &c, 1), 0);
	CU_ASSERT_EQUAL(c.err.kind, BP_RPC_CLIENT_ERR_RPC);
	CU_ASSERT_STRING_EQUAL(c.err.message, want);
	CU_ASSERT_EQUAL(bp_rpc_client_parse(NULL, 0, &c, 1), 0);
	CU_ASSERT_EQUAL(c.err.kind, BP_RPC_CLIENT_ERR_PROTOCOL);
	CU_ASSERT_PTR_NULL(c.result);
}

BP_UNIT_SUITE(rpc_client, NULL, NULL,
	{ "client answers", test_client_parse },
	{ "client answer limits", test_client_parse_limits },
)
