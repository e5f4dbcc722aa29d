/*
 * libFuzzer harness for the JSON-RPC envelope and batch scanner (lib/rpc/rpc_envelope.c), and for
 * the scanners that read upstream answers (lib/rpc/rpc_scan.c) and block arguments
 * (lib/rpc/rpc_methods.c). Beyond memory safety it checks what the proxy relies on, aborting on a
 * violation:
 *
 *  - every span (item, id, params) lies inside the body, and ids and params start as their
 *    types do; the method name is NUL-terminated within its buffer;
 *  - whatever the scanner accepts, cJSON parses too, with the same number of batch items (the
 *    scanner is never looser than a real JSON parser, so nothing it forwards reads two ways);
 *  - a valid item's method is found by the table under its decoded name, or not at all;
 *  - each valid item, written anew as the proxy forwards it (bp_rpc_envelope_write), is one valid
 *    request with the same method and params and no other member.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib lib/rpc/rpc_scan.c \
 *       lib/rpc/rpc_envelope.c lib/rpc/rpc_methods.c lib/core/hex.c lib/core/buf.c lib/core/log.c lib/core/util.c \
 *       tests/fuzz/fuzz_jsonrpc.c -lcjson -lcrypto -o build/fuzz_jsonrpc
 *   build/fuzz_jsonrpc -max_len=4096 -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rpc/jsonrpc.h"

#define CAP		16
#define NODE		(&bp_rpc_node_table)
#define MAX_BATCH	10

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_span(struct bp_rpc_scan_span s, size_t len)
{
	if (s.off > len || s.len > len - s.off)
		abort();
}

/* The scanner said yes: so must cJSON, with the same shape. */
static void
agree_with_cjson(const char *body, size_t len, const struct bp_rpc_envelope_body *b)
{
	cJSON *j;

	/* cJSON stops at a NUL and allows what RFC 8259 does not in a few places; only check
	 * the direction that matters: accepted by us implies parsed by cJSON. */
	if (memchr(body, '\0', len) != NULL)
		abort();	/* a NUL is never valid JSON outside a string, nor raw inside one */
	if ((j = cJSON_ParseWithLength(body, len)) == NULL)
		abort();
	if (b->batch && (!cJSON_IsArray(j) || (size_t)cJSON_GetArraySize(j) != b->n))
		abort();
	if (!b->batch && !cJSON_IsObject(j))
		abort();
	cJSON_Delete(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_rpc_envelope_item items[CAP];
	struct bp_rpc_envelope_body b;
	struct bp_rpc_scan_iter it;
	struct bp_rpc_scan_span e, v;
	const char *body = (const char *)data;
	int64_t number;
	char hash[BP_BLOCK_HASH_STR];
	size_t i;

	if (bp_rpc_envelope_parse(body, size, MAX_BATCH, items, CAP, &b) == 0) {
		if (b.code != 0 || b.n == 0 || b.n > CAP || (b.batch && b.n > MAX_BATCH))
			abort();
		agree_with_cjson(body, size, &b);
		for (i = 0; i < b.n; i++) {
			const struct bp_rpc_envelope_item *x = &items[i];
			const struct bp_rpc_method *m;

			check_span(x->raw, size);
			check_span(x->id, size);
			check_span(x->params, size);
			if (memchr(x->method, '\0', sizeof(x->method)) == NULL)
				abort();
			if (x->code != 0) {
				if (x->code != BP_JSONRPC_INVALID_REQUEST || x->why == NULL)
					abort();
				continue;
			}
			if (x->id.len == 0 || x->method_len == 0)
				abort();
			if (x->params.len != 0 && body[x->params.off] != '[' &&
			    body[x->params.off] != '{')
				abort();
			m = bp_rpc_method(NODE, BP_CHAIN_EVM, x->method, x->method_len);
			if (m != NULL && strncmp(m->name, x->method, strlen(m->name)) != 0)
				abort();
			if (m != NULL && m->block_arg >= 0 && x->params.len != 0)
				bp_rpc_methods_block_arg(body + x->params.off, x->params.len, m->block_arg,
				    &number, hash);
			(void)bp_rpc_envelope_id_simple(body + x->id.off, x->id.len);
			/*
			 * What the proxy forwards (the envelope written anew with our id) is one
			 * valid request with the same method and params and nothing else.
			 */
			{
				struct bp_rpc_envelope_item again[1];
				struct bp_rpc_envelope_body b2;
				struct bp_buf fwd;

				bp_buf_init(&fwd, size + 64);
				if (bp_rpc_envelope_write(&fwd, body, x, "7", 1) != 0 ||
				    bp_rpc_envelope_parse(fwd.data, fwd.len, MAX_BATCH, again, 1, &b2) != 0 ||
				    b2.batch || again[0].code != 0 || again[0].extra ||
				    again[0].id.len != 1 || again[0].method_len != x->method_len ||
				    memcmp(again[0].method, x->method, sizeof(x->method)) != 0 ||
				    again[0].params.len != x->params.len)
					abort();
				bp_buf_free(&fwd);
			}
		}
	} else if (b.code != BP_JSONRPC_PARSE_ERROR && b.code != BP_JSONRPC_INVALID_REQUEST &&
	    b.code != BP_JSONRPC_INTERNAL_ERROR)
		abort();

	/* The answer scanners take anything an upstream might send. */
	if (bp_rpc_scan_member(body, size, "id", &v) == 1)
		check_span(v, size);
	if (bp_rpc_scan_member_strict(body, size, "blockNumber", &v) == 1)
		check_span(v, size);
	bp_rpc_scan_iter_init(&it, body, size);
	for (i = 0; i < 1000 && bp_rpc_scan_iter_next(&it, &e) == 1; i++) {
		check_span(e, size);
		if (bp_rpc_scan_member(body + e.off, e.len, "id", &v) == 1)
			check_span(v, e.len);
	}
	if (bp_rpc_methods_block_arg(body, size, 1, &number, hash) == BP_BLOCK_HASH &&
	    strlen(hash) != BP_BLOCK_HASH_STR - 1)
		abort();
	return 0;
}
