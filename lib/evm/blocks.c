/*
 * Typed block and log reads from an EVM node (evm/blocks.h), over the JSON-RPC client.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "address.h"
#include "blocks.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "rpc/jsonrpc.h"

/* ---- the JSON a node answers ---- */

const char *
bp_blocks_jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int
bp_blocks_jquantity(const cJSON *o, const char *name, uint64_t *out)
{
	const char *s = bp_blocks_jstr(o, name);

	return s != NULL && bp_hex_quantity_lenient(s, strlen(s), out) == 0 ? 0 : -1;
}

int
bp_blocks_jhash(const cJSON *o, const char *name, char out[BP_BLOCKS_HASH_STR])
{
	const char *s = bp_blocks_jstr(o, name);
	uint8_t b[32];

	if (s == NULL || bp_hex_decode_fixed(s, strlen(s), b, 32) == -1)
		return -1;
	return bp_hex_encode(b, 32, out, BP_BLOCKS_HASH_STR);
}

int
bp_blocks_jaddr(const cJSON *o, const char *name, char out[BP_BLOCKS_ADDR_STR],
    int nullable)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	uint8_t a[20];

	if (nullable && (v == NULL || cJSON_IsNull(v))) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || bp_addr_parse(v->valuestring, strlen(v->valuestring), 0, a) == -1)
		return -1;
	return bp_addr_format_lower(a, out, BP_BLOCKS_ADDR_STR);
}

int
bp_blocks_jdec(const cJSON *o, const char *name, char *out)
{
	const char *s = bp_blocks_jstr(o, name);
	struct bp_u256 v;

	if (s == NULL || bp_u256_from_hex(&v, s, strlen(s)) == -1)
		return -1;
	return bp_u256_to_dec(&v, out, BP_U256_DEC_MAX);
}

int
bp_blocks_parse_head(const cJSON *answer, int64_t *out)
{
	uint64_t v;

	if (!cJSON_IsString(answer) || bp_hex_quantity_lenient(answer->valuestring,
	    strlen(answer->valuestring), &v) == -1 || v > INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int
bp_blocks_parse_log(const cJSON *j, struct bp_blocks_log *l, struct bp_blocks_logpos *p,
    uint8_t **buf, size_t *bufcap)
{
	const cJSON *jtopics, *t;
	const char *data;
	uint64_t num, idx;
	size_t dlen;

	jtopics = cJSON_GetObjectItemCaseSensitive(j, "topics");
	data = bp_blocks_jstr(j, "data");
	if (!cJSON_IsArray(jtopics) || data == NULL ||
	    bp_blocks_jquantity(j, "blockNumber", &num) == -1 ||
	    bp_blocks_jquantity(j, "logIndex", &idx) == -1 || idx > INT64_MAX ||
	    bp_blocks_jhash(j, "transactionHash", p->tx_hash) == -1 ||
	    bp_blocks_jaddr(j, "address", p->contract, 0) == -1)
		return -1;
	p->block = (int64_t)num;
	p->log_index = (int64_t)idx;
	bp_addr_parse(p->contract, strlen(p->contract), 0, l->address);
	l->ntopics = 0;
	cJSON_ArrayForEach(t, jtopics) {
		if (l->ntopics == BP_BLOCKS_MAX_TOPICS || !cJSON_IsString(t) ||
		    bp_hex_decode_fixed(t->valuestring, strlen(t->valuestring),
		    l->topics[l->ntopics], 32) == -1)
			return -1;
		l->ntopics++;
	}
	/* Valid data ("0x", two digits a byte) is (dlen - 2) / 2 bytes: dlen / 2 + 1 is room. */
	dlen = strlen(data);
	if (dlen / 2 + 1 > *bufcap) {
		size_t ncap = dlen / 2 + 64;
		uint8_t *d = realloc(*buf, ncap);

		if (d == NULL)
			return -1;
		*buf = d;
		*bufcap = ncap;
	}
	if (bp_hex_decode(data, dlen, *buf, *bufcap, &l->datalen) == -1)
		return -1;
	l->data = *buf;
	return 0;
}

/* ---- the requests ---- */

/* Adds "0x" + the hex of n bytes to o as name (an object) or as an element (an array, name NULL). */
static int
add_hex(cJSON *o, const char *name, const uint8_t *p, size_t n)
{
	char s[2 * 32 + 3];
	cJSON *v;

	if (bp_hex_encode(p, n, s, sizeof(s)) == -1 || (v = cJSON_CreateString(s)) == NULL)
		return -1;
	if (name != NULL ? !cJSON_AddItemToObject(o, name, v) : !cJSON_AddItemToArray(o, v)) {
		cJSON_Delete(v);
		return -1;
	}
	return 0;
}

/* The params of eth_getLogs over [from, to], narrowed by f (NULL: every log of the range). */
static cJSON *
logs_params(const struct bp_blocks_filter *flt, int64_t from, int64_t to)
{
	char f[BP_HEX_QUANTITY64_MAX], t[BP_HEX_QUANTITY64_MAX];
	cJSON *params = cJSON_CreateArray(), *filter = cJSON_CreateObject(), *topics;
	int i, last = -1;

	bp_hex_quantity_encode((uint64_t)from, f, sizeof(f));
	bp_hex_quantity_encode((uint64_t)to, t, sizeof(t));
	if (params == NULL || filter == NULL || cJSON_AddStringToObject(filter, "fromBlock",
	    f) == NULL || cJSON_AddStringToObject(filter, "toBlock", t) == NULL)
		goto fail;
	if (flt != NULL && flt->address != NULL && add_hex(filter, "address", flt->address, 20) == -1)
		goto fail;
	for (i = 0; flt != NULL && i < BP_BLOCKS_MAX_TOPICS; i++)
		if (flt->topics[i] != NULL)
			last = i;
	if (last >= 0) {
		if ((topics = cJSON_AddArrayToObject(filter, "topics")) == NULL)
			goto fail;
		for (i = 0; i <= last; i++)
			if (flt->topics[i] == NULL ? !cJSON_AddItemToArray(topics, cJSON_CreateNull()) :
			    add_hex(topics, NULL, flt->topics[i], 32) == -1)
				goto fail;
	}
	cJSON_AddItemToArray(params, filter);
	return params;
fail:
	cJSON_Delete(params);
	cJSON_Delete(filter);
	return NULL;
}

/* The params [number, full] of eth_getBlockByNumber, or [number] (eth_getBlockReceipts). */
static cJSON *
block_params(int64_t n, int full)
{
	char q[BP_HEX_QUANTITY64_MAX];
	cJSON *params = cJSON_CreateArray();

	bp_hex_quantity_encode((uint64_t)n, q, sizeof(q));
	if (params == NULL || !cJSON_AddItemToArray(params, cJSON_CreateString(q)) ||
	    (full >= 0 && !cJSON_AddItemToArray(params, cJSON_CreateBool(full)))) {
		cJSON_Delete(params);
		return NULL;
	}
	return params;
}

/*
 * Whether a JSON-RPC error to eth_getLogs says the range or the result was too big, in the
 * words providers use (they state their caps only in message text): splitting the range is
 * then the answer.
 */
static int
logs_refused(const struct bp_rpc_client_error *e)
{
	static const char *const words[] = { "too many", "range", "limit", "exceed",
	    "more than", "too large", "too big", "response size", "max", "timeout" };
	size_t i;

	if (e->kind == BP_RPC_CLIENT_ERR_TRANSPORT)
		return strcasestr(e->message, "large") != NULL;
	if (e->kind != BP_RPC_CLIENT_ERR_RPC)
		return 0;
	if (e->code == -32005 || e->code == -32614)
		return 1;
	for (i = 0; i < BP_NITEMS(words); i++)
		if (strcasestr(e->message, words[i]) != NULL)
			return 1;
	return 0;
}

/* Whether a JSON-RPC error says the method does not exist. */
static int
method_missing(const struct bp_rpc_client_error *e)
{
	if (e->kind != BP_RPC_CLIENT_ERR_RPC)
		return 0;
	return e->code == -32601 || strcasestr(e->message, "not supported") != NULL ||
	    strcasestr(e->message, "does not exist") != NULL ||
	    strcasestr(e->message, "not available") != NULL ||
	    strcasestr(e->message, "unsupported") != NULL;
}

/* ---- ranges ---- */

void
bp_blocks_range_free(struct bp_blocks_range *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ncalls; i++) {
		cJSON_Delete((cJSON *)r->calls[i].params);
		cJSON_Delete(r->calls[i].result);
	}
	free(r->calls);
	for (i = 0; i < r->nextra; i++)
		cJSON_Delete(r->extra[i]);
	free(r->extra);
	free(r->blocks);
	free(r->receipts);
	free(r->logs);
	memset(r, 0, sizeof(*r));
}

static int
range_add_logs(struct bp_blocks_range *r, const cJSON *arr)
{
	if (r->nlogs == r->logscap) {
		size_t ncap = r->logscap ? r->logscap * 2 : 16;
		const cJSON **p = realloc(r->logs, ncap * sizeof(*p));

		if (p == NULL)
			return -1;
		r->logs = p;
		r->logscap = ncap;
	}
	r->logs[r->nlogs++] = arr;
	return 0;
}

/* Hands answer to r. 0, or -1 (answer freed) when out of memory. */
static int
range_keep(struct bp_blocks_range *r, cJSON *answer)
{
	cJSON **p = realloc(r->extra, (r->nextra + 1) * sizeof(*p));

	if (p == NULL) {
		cJSON_Delete(answer);
		return -1;
	}
	r->extra = p;
	r->extra[r->nextra++] = answer;
	return 0;
}

/*
 * Fetches the logs of [from, to] on its own, halving the range while the node refuses it.
 * The results are kept in r. 0, or -1 with err set.
 */
static int
logs_split(struct bp_blocks_src *src, const struct bp_blocks_filter *flt,
    struct bp_blocks_range *r, int64_t from, int64_t to, char *err, size_t errlen)
{
	struct bp_rpc_client_error e;
	cJSON *params, *res;
	int64_t mid;

	if ((params = logs_params(flt, from, to)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	res = bp_rpc_client_call(src->up, src->net, "eth_getLogs", params, &e);
	cJSON_Delete(params);
	if (res == NULL) {
		if (from == to || !logs_refused(&e)) {
			snprintf(err, errlen, "eth_getLogs %lld-%lld: %s", (long long)from,
			    (long long)to, e.message);
			return -1;
		}
		mid = from + (to - from) / 2;
		if (src->logs_range > mid - from + 1)
			src->logs_range = mid - from + 1;
		bp_info("%s: eth_getLogs %lld-%lld refused (%s); splitting, range now %lld",
		    src->name, (long long)from, (long long)to, e.message,
		    (long long)src->logs_range);
		if (logs_split(src, flt, r, from, mid, err, errlen) == -1)
			return -1;
		return logs_split(src, flt, r, mid + 1, to, err, errlen);
	}
	if (range_keep(r, res) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!cJSON_IsArray(res)) {
		snprintf(err, errlen, "eth_getLogs %lld-%lld: the result is not an array",
		    (long long)from, (long long)to);
		return -1;
	}
	return range_add_logs(r, res);
}

int
bp_blocks_logs(struct bp_blocks_src *src, const struct bp_blocks_filter *flt, int64_t from,
    int64_t to, struct bp_blocks_range *r, char *err, size_t errlen)
{
	int64_t f, t;

	for (f = from; f <= to; f = t + 1) {
		t = f + src->logs_range - 1 < to ? f + src->logs_range - 1 : to;
		if (logs_split(src, flt, r, f, t, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* The last block of the eth_getLogs piece that starts at f, in a range ending at to. */
static int64_t
piece_end(const struct bp_blocks_src *src, int64_t f, int64_t to)
{
	return f + src->logs_range - 1 < to ? f + src->logs_range - 1 : to;
}

/* Fills the calls of bp_blocks_range: blocks 0..n-1, the eth_getLogs pieces, the receipts. */
static int
range_calls(const struct bp_blocks_src *src, struct bp_blocks_range *r)
{
	size_t i, k = 0;
	int64_t f;

	for (i = 0; i < r->n; i++, k++) {
		r->calls[k].method = "eth_getBlockByNumber";
		if ((r->calls[k].params = block_params(r->from + (int64_t)i, 1)) == NULL)
			return -1;
	}
	for (f = r->from; f <= r->to; f += src->logs_range, k++) {
		r->calls[k].method = "eth_getLogs";
		if ((r->calls[k].params = logs_params(NULL, f, piece_end(src, f, r->to))) == NULL)
			return -1;
	}
	for (i = 0; src->receipts && i < r->n; i++, k++) {
		r->calls[k].method = "eth_getBlockReceipts";
		if ((r->calls[k].params = block_params(r->from + (int64_t)i, -1)) == NULL)
			return -1;
	}
	return 0;
}

int
bp_blocks_range(struct bp_blocks_src *src, int64_t from, int64_t to, struct bp_blocks_range *r,
    int *too_large, char *err, size_t errlen)
{
	size_t nlogcalls, i, k, ngot;
	int64_t f;

	*too_large = 0;
	memset(r, 0, sizeof(*r));
	r->from = from;
	r->to = to;
	r->n = (size_t)(to - from + 1);
	nlogcalls = (size_t)((to - from) / src->logs_range + 1);
	r->ncalls = r->n + nlogcalls + (src->receipts ? r->n : 0);
	r->calls = calloc(r->ncalls, sizeof(*r->calls));
	r->blocks = calloc(r->n, sizeof(*r->blocks));
	r->receipts = calloc(r->n, sizeof(*r->receipts));
	if (r->calls == NULL || r->blocks == NULL || r->receipts == NULL) {
		r->ncalls = 0;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (range_calls(src, r) == -1) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ngot = bp_rpc_client_batch(src->up, src->net, r->calls, r->ncalls);
	if (ngot == 0 && r->calls[0].err.kind == BP_RPC_CLIENT_ERR_TRANSPORT) {
		*too_large = strcasestr(r->calls[0].err.message, "large") != NULL;
		snprintf(err, errlen, "blocks %lld-%lld: %s", (long long)from, (long long)to,
		    r->calls[0].err.message);
		return -1;
	}
	for (i = 0; i < r->n; i++) {
		const struct bp_rpc_client_call *call = &r->calls[i];

		if (call->result == NULL || !cJSON_IsObject(call->result)) {
			snprintf(err, errlen, "block %lld: %s", (long long)(from + (int64_t)i),
			    call->result == NULL ? call->err.message : "not available yet");
			return -1;
		}
		r->blocks[i] = call->result;
	}
	k = r->n;
	for (f = from; f <= to; f += src->logs_range, k++) {
		const struct bp_rpc_client_call *call = &r->calls[k];
		int64_t t = piece_end(src, f, to);

		if (call->result != NULL && cJSON_IsArray(call->result)) {
			if (range_add_logs(r, call->result) == -1) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			continue;
		}
		if (call->result != NULL || f == t || !logs_refused(&call->err)) {
			snprintf(err, errlen, "eth_getLogs %lld-%lld: %s", (long long)f,
			    (long long)t, call->result != NULL ? "the result is not an array" :
			    call->err.message);
			return -1;
		}
		if (logs_split(src, NULL, r, f, t, err, errlen) == -1)
			return -1;
	}
	for (i = 0; src->receipts && i < r->n; i++, k++) {
		const struct bp_rpc_client_call *call = &r->calls[k];

		if (call->result == NULL && method_missing(&call->err)) {
			bp_warn("%s: the upstream has no eth_getBlockReceipts (%s): transactions"
			    " are stored without status from now on", src->name, call->err.message);
			src->receipts = 0;
			memset(r->receipts, 0, r->n * sizeof(*r->receipts));
			break;
		}
		if (call->result == NULL || !cJSON_IsArray(call->result)) {
			snprintf(err, errlen, "receipts of block %lld: %s",
			    (long long)(from + (int64_t)i), call->result == NULL ?
			    call->err.message : "not available yet");
			return -1;
		}
		r->receipts[i] = call->result;
	}
	return 0;
}

/* ---- single reads ---- */

int
bp_blocks_head(struct bp_blocks_src *src, int64_t *head, char *err, size_t errlen)
{
	struct bp_rpc_client_error e;
	cJSON *r;
	int rc;

	if ((r = bp_rpc_client_call(src->up, src->net, "eth_blockNumber", NULL, &e)) == NULL) {
		snprintf(err, errlen, "eth_blockNumber: %s", e.message);
		return -1;
	}
	if ((rc = bp_blocks_parse_head(r, head)) == -1)
		snprintf(err, errlen, "eth_blockNumber: bad answer");
	cJSON_Delete(r);
	return rc;
}

cJSON *
bp_blocks_by_number(struct bp_blocks_src *src, int64_t number, int full, char *err,
    size_t errlen)
{
	struct bp_rpc_client_error e;
	cJSON *params, *r;

	if ((params = block_params(number, full ? 1 : 0)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r = bp_rpc_client_call(src->up, src->net, "eth_getBlockByNumber", params, &e);
	cJSON_Delete(params);
	if (r == NULL) {
		snprintf(err, errlen, "block %lld: %s", (long long)number, e.message);
		return NULL;
	}
	if (!cJSON_IsObject(r)) {
		snprintf(err, errlen, "block %lld: not available", (long long)number);
		cJSON_Delete(r);
		return NULL;
	}
	return r;
}

int
bp_blocks_hashes(struct bp_blocks_src *src, int64_t lo, int64_t hi,
    char (*out)[BP_BLOCKS_HASH_STR], char *err, size_t errlen)
{
	size_t n = (size_t)(hi - lo + 1), i;
	struct bp_rpc_client_call *calls;
	int rc = -1;

	if ((calls = calloc(n, sizeof(*calls))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		calls[i].method = "eth_getBlockByNumber";
		if ((calls[i].params = block_params(lo + (int64_t)i, 0)) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (bp_rpc_client_batch(src->up, src->net, calls, n) == 0 &&
	    calls[0].err.kind == BP_RPC_CLIENT_ERR_TRANSPORT) {
		snprintf(err, errlen, "block hashes %lld-%lld: %s", (long long)lo, (long long)hi,
		    calls[0].err.message);
		goto out;
	}
	for (i = 0; i < n; i++) {
		/* A block the chain no longer has (the head went back) matches nothing. */
		if (!cJSON_IsObject(calls[i].result) ||
		    bp_blocks_jhash(calls[i].result, "hash", out[i]) == -1)
			out[i][0] = '\0';
	}
	rc = 0;
out:
	bp_rpc_client_calls_free(calls, n);
	return rc;
}
