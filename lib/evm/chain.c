/*
 * Typed chain reads over the JSON-RPC client (chain.h, docs/evm.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "abi.h"
#include "address.h"
#include "chain.h"
#include "core/hex.h"
#include "core/util.h"
#include "rpc/jsonrpc.h"

/* Multicall3's aggregate3((address,bool,bytes)[]) selector. */
static const uint8_t sel_aggregate3[4] = { 0x82, 0xad, 0x56, 0xcb };
/* The code of the EIP-140 revert a node reports for eth_call ("execution reverted"). */
#define REVERT_CODE	3
/* Reads sent at once: a batch on the stack. Larger batches go in slices of this many. */
#define BATCH_MAX	64

enum mc3_state {
	MC3_UNKNOWN,	/* 0: not asked yet (or the node did not answer) */
	MC3_ABSENT,	/* 1 */
	MC3_PRESENT,	/* 2 */
	MC3__MAX
};

struct bp_chain {
	const struct bp_config	*cfg;
	struct bp_upstream	*up;
	enum mc3_state		 mc3[BP_MAX_NETWORKS];	/* by index in cfg->nets */
};

static const char *const methods[BP_CHAIN_OP__MAX] = {
	"eth_blockNumber",		/* BP_CHAIN_BLOCK_NUMBER */
	"eth_getCode",			/* BP_CHAIN_CODE */
	"eth_getBalance",		/* BP_CHAIN_BALANCE */
	"eth_getTransactionCount",	/* BP_CHAIN_TX_COUNT */
	"eth_call",			/* BP_CHAIN_CALL */
};

struct bp_chain *
bp_chain_new(const struct bp_config *cfg, struct bp_upstream *up)
{
	struct bp_chain *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->cfg = cfg;
	c->up = up;
	return c;
}

void
bp_chain_free(struct bp_chain *c)
{
	free(c);
}

static void
set_err(struct bp_chain_error *e, enum bp_chain_err_kind kind, int64_t code, const char *msg)
{
	e->kind = kind;
	e->code = code;
	bp_strlcpy(e->message, msg, sizeof(e->message));
}

/* A cJSON string of the bytes in hex, or NULL when out of memory. */
static cJSON *
json_hex(const uint8_t *p, size_t n)
{
	cJSON *j;
	char *s;

	if (n > (SIZE_MAX - 3) / 2 || (s = malloc(2 * n + 3)) == NULL)
		return NULL;
	bp_hex_encode(p, n, s, 2 * n + 3);
	j = cJSON_CreateString(s);
	free(s);
	return j;
}

/* The params of read r, a new cJSON array owned by the caller; NULL when out of memory. */
static cJSON *
read_params(const struct bp_chain_read *r)
{
	char a[BP_ADDR_STR_MAX], q[BP_HEX_QUANTITY64_MAX];
	cJSON *p, *tx;

	if (r->op == BP_CHAIN_BLOCK_NUMBER)
		return cJSON_CreateArray();
	if ((p = cJSON_CreateArray()) == NULL)
		return NULL;
	bp_addr_format_lower(r->address, a, sizeof(a));
	if (r->op == BP_CHAIN_CALL) {
		if ((tx = cJSON_CreateObject()) == NULL || !cJSON_AddItemToArray(p, tx) ||
		    cJSON_AddStringToObject(tx, "to", a) == NULL ||
		    !cJSON_AddItemToObject(tx, "data", json_hex(r->data, r->len)))
			goto fail;
	} else if (!cJSON_AddItemToArray(p, cJSON_CreateString(a)))
		goto fail;
	if (r->block < 0)
		bp_strlcpy(q, "latest", sizeof(q));
	else
		bp_hex_quantity_encode((uint64_t)r->block, q, sizeof(q));
	if (!cJSON_AddItemToArray(p, cJSON_CreateString(q)))
		goto fail;
	return p;
fail:
	cJSON_Delete(p);
	return NULL;
}

/* Reads a client call's outcome into r: its error, or its result checked for r's type. */
static void
read_result(struct bp_chain_read *r, const struct bp_rpc_client_call *c)
{
	const char *s;
	size_t len;

	r->bytes = NULL;
	r->nbytes = 0;
	if (c->result == NULL) {
		set_err(&r->err, c->err.kind == BP_RPC_CLIENT_ERR_TRANSPORT ? BP_CHAIN_ERR_TRANSPORT :
		    c->err.kind == BP_RPC_CLIENT_ERR_RPC ? BP_CHAIN_ERR_RPC : BP_CHAIN_ERR_PROTOCOL,
		    c->err.code, c->err.message);
		return;
	}
	set_err(&r->err, BP_CHAIN_OK, 0, "");
	if (!cJSON_IsString(c->result)) {
		set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not a string");
		return;
	}
	s = c->result->valuestring;
	len = strlen(s);
	switch (r->op) {
	case BP_CHAIN_BLOCK_NUMBER:
	case BP_CHAIN_TX_COUNT:
		if (bp_hex_quantity_lenient(s, len, &r->u64) == -1)
			set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not a 64-bit quantity");
		return;
	case BP_CHAIN_BALANCE:
		if (bp_u256_from_hex(&r->u256, s, len) == -1)
			set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not a quantity");
		return;
	default:
		break;
	}
	/* DATA: "0x" and an even number of digits. */
	if (len < 2 || len % 2 != 0) {
		set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not hex data");
		return;
	}
	if (len == 2) {		/* no bytes: "0x" (or "0X"), nothing to allocate */
		uint8_t none;

		if (bp_hex_decode(s, len, &none, 0, &r->nbytes) == -1)
			set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not hex data");
		return;
	}
	if ((r->bytes = malloc((len - 2) / 2)) == NULL) {
		set_err(&r->err, BP_CHAIN_ERR_INTERNAL, 0, "out of memory");
		return;
	}
	if (bp_hex_decode(s, len, r->bytes, (len - 2) / 2, &r->nbytes) == -1) {
		free(r->bytes);
		r->bytes = NULL;
		r->nbytes = 0;
		set_err(&r->err, BP_CHAIN_ERR_DECODE, 0, "result is not hex data");
	}
}

/*
 * Fills calls[0..n) for reads[0..n) (params owned by the calls, freed by calls_free). 0, or -1
 * when out of memory (every read then has BP_CHAIN_ERR_INTERNAL).
 */
static int
calls_build(struct bp_chain_read *reads, struct bp_rpc_client_call *calls, size_t n)
{
	size_t i;

	memset(calls, 0, n * sizeof(*calls));
	for (i = 0; i < n; i++) {
		reads[i].bytes = NULL;
		reads[i].nbytes = 0;
		if ((unsigned)reads[i].op >= BP_CHAIN_OP__MAX ||
		    (calls[i].params = read_params(&reads[i])) == NULL)
			goto fail;
		calls[i].method = methods[reads[i].op];
	}
	return 0;
fail:
	for (i = 0; i < n; i++) {
		cJSON_Delete((cJSON *)calls[i].params);
		calls[i].params = NULL;
		set_err(&reads[i].err, BP_CHAIN_ERR_INTERNAL, 0, "out of memory or bad read");
	}
	return -1;
}

/* Reads the calls' outcomes into the reads and frees the calls; the number that succeeded. */
static size_t
calls_finish(struct bp_chain_read *reads, struct bp_rpc_client_call *calls, size_t n)
{
	size_t i, ok = 0;

	for (i = 0; i < n; i++) {
		read_result(&reads[i], &calls[i]);
		ok += reads[i].err.kind == BP_CHAIN_OK;
		cJSON_Delete(calls[i].result);
		cJSON_Delete((cJSON *)calls[i].params);
	}
	return ok;
}

size_t
bp_chain_batch(struct bp_chain *c, const struct bp_network *net, struct bp_chain_read *reads,
    size_t n)
{
	struct bp_rpc_client_call calls[BATCH_MAX];
	size_t done = 0, k, ok = 0;

	while (done < n) {
		k = n - done < BATCH_MAX ? n - done : BATCH_MAX;
		if (calls_build(reads + done, calls, k) == 0) {
			if (k == 1)
				calls[0].result = bp_rpc_client_call(c->up, net, calls[0].method,
				    calls[0].params, &calls[0].err);
			else
				bp_rpc_client_batch(c->up, net, calls, k);
			ok += calls_finish(reads + done, calls, k);
		}
		done += k;
	}
	return ok;
}

size_t
bp_chain_parse(struct bp_chain_read *reads, size_t n, const char *ans, size_t len)
{
	struct bp_rpc_client_call calls[BATCH_MAX];

	if (n > BATCH_MAX || calls_build(reads, calls, n) == -1)
		return 0;
	bp_rpc_client_parse(ans, len, calls, n);
	return calls_finish(reads, calls, n);
}

void
bp_chain_reads_free(struct bp_chain_read *reads, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(reads[i].bytes);
		reads[i].bytes = NULL;
		reads[i].nbytes = 0;
	}
}

/* Runs the one read r; 0, or -1 with *err (may be NULL) set. */
static int
one(struct bp_chain *c, const struct bp_network *net, struct bp_chain_read *r,
    struct bp_chain_error *err)
{
	int rc = bp_chain_batch(c, net, r, 1) == 1 ? 0 : -1;

	if (err != NULL)
		*err = r->err;
	return rc;
}

/* Runs the one read op of address at block into *r; as one. */
static int
account_read(struct bp_chain *c, const struct bp_network *net, enum bp_chain_op op,
    const uint8_t address[20], int64_t block, struct bp_chain_read *r,
    struct bp_chain_error *err)
{
	memset(r, 0, sizeof(*r));
	r->op = op;
	r->block = block;
	memcpy(r->address, address, 20);
	return one(c, net, r, err);
}

int
bp_chain_block_number(struct bp_chain *c, const struct bp_network *net, uint64_t *out,
    struct bp_chain_error *err)
{
	struct bp_chain_read r = { .op = BP_CHAIN_BLOCK_NUMBER, .block = BP_CHAIN_LATEST };

	if (one(c, net, &r, err) == -1)
		return -1;
	*out = r.u64;
	return 0;
}

int
bp_chain_code(struct bp_chain *c, const struct bp_network *net, const uint8_t address[20],
    int64_t block, uint8_t **code, size_t *len, struct bp_chain_error *err)
{
	struct bp_chain_read r;

	if (account_read(c, net, BP_CHAIN_CODE, address, block, &r, err) == -1)
		return -1;
	*code = r.bytes;
	*len = r.nbytes;
	return 0;
}

int
bp_chain_has_code(struct bp_chain *c, const struct bp_network *net, const uint8_t address[20],
    int64_t block, struct bp_chain_error *err)
{
	uint8_t *code;
	size_t len;

	if (bp_chain_code(c, net, address, block, &code, &len, err) == -1)
		return -1;
	free(code);
	return len > 0;
}

int
bp_chain_balance(struct bp_chain *c, const struct bp_network *net, const uint8_t address[20],
    int64_t block, struct bp_u256 *out, struct bp_chain_error *err)
{
	struct bp_chain_read r;

	if (account_read(c, net, BP_CHAIN_BALANCE, address, block, &r, err) == -1)
		return -1;
	*out = r.u256;
	return 0;
}

int
bp_chain_tx_count(struct bp_chain *c, const struct bp_network *net, const uint8_t address[20],
    int64_t block, uint64_t *out, struct bp_chain_error *err)
{
	struct bp_chain_read r;

	if (account_read(c, net, BP_CHAIN_TX_COUNT, address, block, &r, err) == -1)
		return -1;
	*out = r.u64;
	return 0;
}

int
bp_chain_call(struct bp_chain *c, const struct bp_network *net, const uint8_t to[20],
    const uint8_t *data, size_t len, int64_t block, uint8_t **ret, size_t *retlen,
    struct bp_chain_error *err)
{
	struct bp_chain_read r = { .op = BP_CHAIN_CALL, .data = data, .len = len, .block = block };

	memcpy(r.address, to, 20);
	if (one(c, net, &r, err) == -1)
		return -1;
	*ret = r.bytes;
	*retlen = r.nbytes;
	return 0;
}

/* eth_call, then word 0 of the return data as a uint256 or an address (want_addr). */
static int
call_word(struct bp_chain *c, const struct bp_network *net, const uint8_t to[20],
    const uint8_t *data, size_t len, int64_t block, struct bp_u256 *u, uint8_t addr[20],
    struct bp_chain_error *err)
{
	struct bp_chain_read r = { .op = BP_CHAIN_CALL, .data = data, .len = len, .block = block };
	int rc = -1;

	memcpy(r.address, to, 20);
	if (one(c, net, &r, err) == -1)
		return -1;
	if (u != NULL)
		rc = bp_abi_read_u256(r.bytes, r.nbytes, 0, u);
	else
		rc = bp_abi_read_address(r.bytes, r.nbytes, 0, addr);
	if (rc == -1 && err != NULL)
		set_err(err, BP_CHAIN_ERR_DECODE, 0, u != NULL ?
		    "return data is not a uint256" : "return data is not an address");
	bp_chain_reads_free(&r, 1);
	return rc;
}

int
bp_chain_call_u256(struct bp_chain *c, const struct bp_network *net, const uint8_t to[20],
    const uint8_t *data, size_t len, int64_t block, struct bp_u256 *out,
    struct bp_chain_error *err)
{
	return call_word(c, net, to, data, len, block, out, NULL, err);
}

int
bp_chain_call_address(struct bp_chain *c, const struct bp_network *net, const uint8_t to[20],
    const uint8_t *data, size_t len, int64_t block, uint8_t out[20],
    struct bp_chain_error *err)
{
	return call_word(c, net, to, data, len, block, NULL, out, err);
}

/* ---- Multicall3 ---- */

int
bp_chain_mc3_encode(const struct bp_chain_read *reads, size_t n, uint8_t **out, size_t *outlen)
{
	struct bp_abi_enc *e;
	size_t i, cap = 4 + 64;
	int rc = -1;

	for (i = 0; i < n; i++) {
		if (reads[i].op != BP_CHAIN_CALL || reads[i].len > SIZE_MAX / 8)
			return -1;
		/* offset, target, allowFailure, offset, length, data padded */
		cap += 6 * 32 + reads[i].len;
	}
	if (n == 0 || (e = bp_abi_enc_new(cap)) == NULL)
		return -1;
	bp_abi_array_begin(e);
	for (i = 0; i < n; i++) {
		bp_abi_tuple_begin(e);
		bp_abi_put_address(e, reads[i].address);
		bp_abi_put_bool(e, 1);
		bp_abi_put_bytes(e, reads[i].data, reads[i].len);
		bp_abi_tuple_end(e);
	}
	bp_abi_array_end(e);
	if (bp_abi_enc_finish(e, sel_aggregate3, out, outlen) == 0)
		rc = 0;
	bp_abi_enc_free(e);
	return rc;
}

int
bp_chain_mc3_decode(const uint8_t *ret, size_t len, struct bp_chain_read *reads, size_t n)
{
	const uint8_t *elems, *sub, *p;
	size_t elen, count, sublen, pn, i;
	int ok = 0, success;

	for (i = 0; i < n; i++) {
		reads[i].bytes = NULL;
		reads[i].nbytes = 0;
	}
	if (bp_abi_read_array(ret, len, 0, 1, &elems, &elen, &count) == -1 || count != n)
		goto bad;
	for (i = 0; i < n; i++) {
		if (bp_abi_read_tuple(elems, elen, i, &sub, &sublen) == -1 ||
		    bp_abi_read_bool(sub, sublen, 0, &success) == -1 ||
		    bp_abi_read_bytes(sub, sublen, 1, &p, &pn) == -1)
			goto bad;
		if (pn > 0) {
			if ((reads[i].bytes = malloc(pn)) == NULL)
				goto bad;
			memcpy(reads[i].bytes, p, pn);
			reads[i].nbytes = pn;
		}
		if (success) {
			set_err(&reads[i].err, BP_CHAIN_OK, 0, "");
			ok++;
		} else
			set_err(&reads[i].err, BP_CHAIN_ERR_RPC, REVERT_CODE, "execution reverted");
	}
	return ok;
bad:
	bp_chain_reads_free(reads, n);
	for (i = 0; i < n; i++)
		set_err(&reads[i].err, BP_CHAIN_ERR_DECODE, 0,
		    "Multicall3 answer is not one result per call");
	return -1;
}

int
bp_chain_has_multicall3(struct bp_chain *c, const struct bp_network *net)
{
	size_t i = (size_t)(net - c->cfg->nets);
	uint8_t mc3[20];
	int code;

	if (net < c->cfg->nets || i >= c->cfg->nnets || i >= BP_MAX_NETWORKS)
		return -1;
	if (c->mc3[i] != MC3_UNKNOWN)
		return c->mc3[i] == MC3_PRESENT;
	bp_addr_parse(BP_CHAIN_MULTICALL3, strlen(BP_CHAIN_MULTICALL3), 0, mc3);
	if ((code = bp_chain_has_code(c, net, mc3, BP_CHAIN_LATEST, NULL)) == -1)
		return -1;
	c->mc3[i] = code ? MC3_PRESENT : MC3_ABSENT;
	return code;
}

size_t
bp_chain_calls(struct bp_chain *c, const struct bp_network *net, struct bp_chain_read *reads,
    size_t n)
{
	struct bp_chain_read agg = { .op = BP_CHAIN_CALL };
	struct bp_chain_error err;
	uint8_t *data = NULL;
	size_t i;
	int ok;

	if (n < 2 || bp_chain_has_multicall3(c, net) != 1 ||
	    bp_chain_mc3_encode(reads, n, &data, &agg.len) == -1)
		return bp_chain_batch(c, net, reads, n);
	bp_addr_parse(BP_CHAIN_MULTICALL3, strlen(BP_CHAIN_MULTICALL3), 0, agg.address);
	agg.data = data;
	agg.block = reads[0].block;
	if (one(c, net, &agg, &err) == -1) {
		for (i = 0; i < n; i++) {
			reads[i].bytes = NULL;
			reads[i].nbytes = 0;
			reads[i].err = err;
		}
		ok = 0;
	} else if ((ok = bp_chain_mc3_decode(agg.bytes, agg.nbytes, reads, n)) < 0)
		ok = 0;
	bp_chain_reads_free(&agg, 1);
	free(data);
	return (size_t)ok;
}
