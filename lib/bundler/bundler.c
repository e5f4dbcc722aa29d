/*
 * The bundler's methods: chain id, entry points, send, lookups and receipts (bundler.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler.h"
#include "bundler_7702.h"
#include "bundler_handle_ops.h"
#include "bundler_pool.h"
#include "bundler_rules.h"
#include "bundler_v07.h"
#include "core/hex.h"
#include "core/http.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "index/index_read.h"
#include "rpc/rpc_client.h"
#include "userop_validate.h"

#define EV_USER_OP	"UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)"
#define EV_REVERT	"UserOperationRevertReason(bytes32,address,uint256,bytes)"
#define EV_BEFORE	"BeforeExecution()"

void
bp_bundler_chain_key(const struct bp_network *net, char *out, size_t len)
{
	snprintf(out, len, "%s.%s", net->chain, net->network);
}

int
bp_bundler_chain_id(struct bp_bundler_call *c)
{
	return bp_buf_printf(c->result, "\"0x%llx\"", (unsigned long long)c->net->chain_id) == -1 ?
	    bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory") : 0;
}

int
bp_bundler_entry_points(struct bp_bundler_call *c)
{
	struct bp_entry_point epc;
	uint8_t ep[20];
	char cs[BP_ADDR_STRLEN];
	int v, n = 0;

	/* v0.6 first (what a client that takes the first gets, as before), then v0.7, v0.8. */
	if (bp_buf_adds(c->result, "[") == -1)
		return -1;
	for (v = 0; v < BP_EP__MAX; v++) {
		bp_entry_point_of(c->net, (enum bp_ep_version)v, &epc);
		if (epc.entry_point[0] == '\0')
			continue;
		if (bp_addr_parse(epc.entry_point, strlen(epc.entry_point), 0, ep) == -1)
			return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "bad entry point in the "
			    "config");
		bp_addr_format_checksum(ep, cs, sizeof(cs));
		if (bp_buf_printf(c->result, "%s\"%s\"", n++ ? "," : "", cs) == -1)
			return -1;
	}
	return bp_buf_adds(c->result, "]") == -1 ? -1 : 0;
}

int
bp_bundler_op_param(struct bp_bundler_call *c, struct bp_userop *op, uint8_t ep[20])
{
	struct bp_entry_point epc;
	const char *s, *field;
	char why[200];

	memset(op, 0, sizeof(*op));
	if (cJSON_GetArraySize(c->params) < 2)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params must be [userOperation, "
		    "entryPoint]");
	if ((s = bp_bundler_param_str(c, 1, "entryPoint")) == NULL)
		return -1;
	if (bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, ep) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "entryPoint must be an address");
	if (bp_entry_point_find(c->net, ep, &epc) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "unsupported entry point %.42s "
		    "(eth_supportedEntryPoints lists the supported ones)", s);
	/* The op in its EntryPoint's form: v0.7 and v0.8 take factory, paymaster and their data. */
	if (bp_userop_from_json_v(epc.version, cJSON_GetArrayItem(c->params, 0), op, &field, why,
	    sizeof(why)) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "userOperation.%s: %s",
		    field ? field : "", why);
	return 0;
}

int
bp_bundler_json_bytes(struct bp_buf *b, const char *name, const uint8_t *p, size_t n)
{
	char *hex;
	int rc;

	if ((hex = malloc(2 * n + 3)) == NULL)
		return -1;
	bp_hex_encode(p, n, hex, 2 * n + 3);
	rc = bp_buf_printf(b, ",\"%s\":\"%s\"", name, hex);
	free(hex);
	return rc;
}

int
bp_bundler_op_json(const struct bp_userop *op, struct bp_buf *b)
{
	char addr[BP_ADDR_STRLEN], q[BP_U256_HEX_MAX];
	size_t i;

	bp_addr_format_checksum(op->sender, addr, sizeof(addr));
	if (bp_buf_printf(b, "{\"sender\":\"%s\"", addr) == -1)
		return -1;
	for (i = 0; i < BP_USEROP_NUM__MAX; i++) {
		bp_u256_to_quantity(&op->num[i], q, sizeof(q));
		if (bp_buf_printf(b, ",\"%s\":\"%s\"", bp_userop_num_name(i), q) == -1)
			return -1;
	}
	if (op->version != BP_EP_V06)
		return bp_bundler_v07_op_members(op, b);
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		if (bp_bundler_json_bytes(b, bp_userop_bytes_name(i), op->bytes[i], op->len[i]) == -1)
			return -1;
	return bp_buf_adds(b, "}");
}

static void
word_hex(const struct bp_u256 *v, char out[BP_BUNDLER_POOL_WORD_STR])
{
	uint8_t be[32];

	bp_u256_to_be32(v, be);
	bp_hex_encode_digits(be, 32, out, BP_BUNDLER_POOL_WORD_STR);
}

/* The pool row of op, whose hash is hash; op_json points into json (borrowed). */
static void
pool_row(const struct bp_bundler_call *c, const struct bp_userop *op, const uint8_t ep[20],
    const char *hash, const struct bp_userop_validate_result *res, char *json, struct bp_bundler_pool_op *row)
{
	memset(row, 0, sizeof(*row));
	bp_bundler_chain_key(c->net, row->chain, sizeof(row->chain));
	bp_strlcpy(row->hash, hash, sizeof(row->hash));
	bp_addr_format_lower(ep, row->entry_point, sizeof(row->entry_point));
	bp_addr_format_lower(op->sender, row->sender, sizeof(row->sender));
	word_hex(&op->num[BP_USEROP_NONCE], row->nonce);
	word_hex(&op->num[BP_USEROP_MAX_FEE_PER_GAS], row->max_fee);
	word_hex(&op->num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], row->max_priority);
	row->gas = (int64_t)(bp_userop_validate_total_gas(op) > INT64_MAX ? INT64_MAX : bp_userop_validate_total_gas(op));
	row->staked = !bp_u256_is_zero(&res->sender_stake) && res->sender_unstake_delay > 0;
	if (op->len[BP_USEROP_PAYMASTER_AND_DATA] >= 20)
		bp_addr_format_lower(op->bytes[BP_USEROP_PAYMASTER_AND_DATA], row->paymaster,
		    sizeof(row->paymaster));
	row->paymaster_staked = !bp_u256_is_zero(&res->paymaster_stake);
	row->op_json = json;
}

int
bp_bundler_send(struct bp_bundler_call *c)
{
	struct bp_userop_validate_result res;
	struct bp_userop op;
	struct bp_bundler_pool_op row;
	struct bp_u256 base_fee;
	struct bp_buf json;
	uint64_t gas_limit;
	uint8_t ep[20], hash[32], delegate[20];
	char hex[BP_BUNDLER_POOL_HASH_STR], pm_status[16];
	int rc = -1, pm_cap, is7702, apply;

	bp_buf_init(&json, 1024 * 1024);
	if (bp_bundler_op_param(c, &op, ep) == -1)
		goto out;
	if (bp_userop_validate_block_fees(c->up, c->net, &base_fee, &gas_limit, &c->err) == -1 ||
	    bp_userop_validate_check_fields(&op, &base_fee, &c->err) == -1)
		goto out;
	if (bp_userop_validate_total_gas(&op) > gas_limit) {
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "the gas limits add up to more than the "
		    "block gas limit");
		goto out;
	}
	if ((is7702 = bp_bundler_7702_prepare(c->up, c->net, &op, 1, delegate, &apply,
	    &c->err)) == -1)
		goto out;
	if (bp_bundler_rules_simulate(c->up, c->net, ep, &op, apply ? delegate : NULL, &res,
	    &c->err) == -1)
		goto out;
	bp_bundler_7702_hash(&op, ep, c->net, is7702, delegate, hash);
	bp_hex_encode(hash, 32, hex, sizeof(hex));
	if (bp_bundler_op_json(&op, &json) == -1 || bp_buf_add(&json, "", 1) == -1) {
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		goto out;
	}
	pool_row(c, &op, ep, hex, &res, json.data, &row);
	if (bp_bundler_rules_reputation(c->r->db, c->net, &op, ep, &res, &pm_cap, pm_status,
	    sizeof(pm_status), &c->err) == -1)
		goto out;
	switch (bp_bundler_pool_add(c->r->db, &row, BP_BUNDLER_SENDER_CAP, pm_cap)) {
	case BP_BUNDLER_POOL_ADDED:
		bp_bundler_rules_seen(c->r->db, c->net, &op);
		rc = bp_buf_printf(c->result, "\"%s\"", hex);
		break;
	case BP_BUNDLER_POOL_KNOWN:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "already known: %s is in the pool", hex);
		break;
	case BP_BUNDLER_POOL_UNDERPRICED:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "replacement underpriced: an op with this "
		    "sender and nonce is pending; raise maxFeePerGas and maxPriorityFeePerGas by at "
		    "least %d%% to replace it", BP_BUNDLER_POOL_REPLACE_BUMP);
		break;
	case BP_BUNDLER_POOL_IN_BUNDLE:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "an op with this sender and nonce is in a "
		    "bundle already and cannot be replaced");
		break;
	case BP_BUNDLER_POOL_SENDER_CAP:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_STAKE_TOO_LOW, "the sender is unstaked and has %d ops in "
		    "the pool already; wait for them to land, or stake", BP_BUNDLER_SENDER_CAP);
		break;
	case BP_BUNDLER_POOL_PAYMASTER_CAP:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_THROTTLED, "the paymaster %s is %s (ERC-7562 "
		    "reputation %s) and has %d ops in the pool already: throttled", row.paymaster,
		    row.paymaster_staked ? "staked" : "unstaked", pm_status, pm_cap);
		break;
	default:
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
		break;
	}
out:
	bp_userop_free(&op);
	bp_buf_free(&json);
	return rc;
}

/* params[0] as a 32-byte hash, lower-case into hex. 0, or -1 with -32602. */
static int
hash_param(struct bp_bundler_call *c, char hex[BP_BUNDLER_POOL_HASH_STR])
{
	const char *s = bp_bundler_param_str(c, 0, "userOpHash");
	uint8_t h[32];

	if (s == NULL)
		return -1;
	if (bp_hex_decode_fixed(s, strlen(s), h, 32) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "userOpHash must be 0x and 64 "
		    "hex digits");
	bp_hex_encode(h, 32, hex, BP_BUNDLER_POOL_HASH_STR);
	return 0;
}

/* Calls method with the one parameter hash (a transaction's) on the node; NULL with err set. */
static cJSON *
tx_call(struct bp_bundler_call *c, const char *method, const char *hash)
{
	struct bp_rpc_client_error jerr;
	cJSON *params, *res;

	if ((params = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString(hash))) {
		cJSON_Delete(params);
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
		return NULL;
	}
	res = bp_rpc_client_call(c->up, c->net, method, params, &jerr);
	cJSON_Delete(params);
	if (res == NULL)
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "the node did not answer: %s",
		    jerr.message);
	return res;
}

/* The EntryPoint of an indexed op: its row's, or for a row from before schema 022 v0.6's. */
static const char *
indexed_ep(const struct bp_bundler_call *c, const struct bp_index_user_op *iu)
{
	return iu->entry_point[0] != '\0' ? iu->entry_point : c->net->entry_point;
}

/*
 * The authorization of an EIP-7702 op's sender in the type 4 transaction tx that carried it
 * (its authorizationList: the op's eip7702Auth as its client sent it) into op; none is not an
 * error (the sender was delegated already).
 */
static void
tx_auth(const cJSON *tx, struct bp_userop *op)
{
	const cJSON *a;
	struct bp_tx_auth t;
	const char *field;
	char why[160];
	uint8_t who[20];

	if (!bp_userop_is_7702(op))
		return;
	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(tx, "authorizationList"))
		if (bp_userop_auth_from_json(a, &t, &field, why, sizeof(why)) == 0 &&
		    bp_tx_auth_authority(&t, who) == 0 && memcmp(who, op->sender, 20) == 0) {
			op->auth = t;
			op->has_auth = 1;
			return;
		}
}

/*
 * eth_getUserOperationByHash of an op the pool never had (another bundler's): the indexer's
 * UserOperationEvent names the transaction, whose handleOps calldata holds the op (found by
 * its sender and nonce), answered in its EntryPoint version's form (an EIP-7702 op with the
 * sender's authorization the transaction carried). null when the op is not indexed or the
 * transaction is not a handleOps call (a contract that called the EntryPoint).
 */
static int
foreign_op(struct bp_bundler_call *c, const char *chain, const char *hex)
{
	struct bp_index_user_op iu;
	struct bp_entry_point epc;
	struct bp_userop op;
	struct bp_u256 nonce;
	struct bp_buf json;
	const cJSON *in, *bh, *bn;
	char ep[BP_ADDR_STRLEN];
	uint8_t a[20], sender[20], *data = NULL;
	size_t len = 0;
	cJSON *tx;
	int r, rc;

	if ((r = bp_index_user_op(c->r->db, chain, hex, &iu)) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	if (r == 0 || bp_addr_parse(indexed_ep(c, &iu), strlen(indexed_ep(c, &iu)), 0, a) == -1 ||
	    bp_entry_point_find(c->net, a, &epc) == -1 ||
	    bp_addr_parse(iu.sender, strlen(iu.sender), 0, sender) == -1 ||
	    bp_u256_from_dec(&nonce, iu.nonce, strlen(iu.nonce)) == -1)
		return bp_buf_adds(c->result, "null");
	if ((tx = tx_call(c, "eth_getTransactionByHash", iu.tx_hash)) == NULL)
		return -1;
	in = cJSON_GetObjectItemCaseSensitive(tx, "input");
	bh = cJSON_GetObjectItemCaseSensitive(tx, "blockHash");
	bn = cJSON_GetObjectItemCaseSensitive(tx, "blockNumber");
	memset(&op, 0, sizeof(op));
	bp_buf_init(&json, 1024 * 1024);
	if (!cJSON_IsString(in) || !cJSON_IsString(bh) || !cJSON_IsString(bn) ||
	    (data = malloc(strlen(in->valuestring) / 2 + 1)) == NULL ||
	    bp_hex_decode(in->valuestring, strlen(in->valuestring), data,
	    strlen(in->valuestring) / 2 + 1, &len) == -1 ||
	    bp_bundler_handle_ops_find(data, len, epc.version, sender, &nonce, &op) != 1) {
		rc = bp_buf_adds(c->result, "null");
		goto out;
	}
	tx_auth(tx, &op);
	bp_addr_format_checksum(a, ep, sizeof(ep));
	rc = bp_bundler_op_json(&op, &json) == -1 || bp_buf_add(&json, "", 1) == -1 ||
	    bp_buf_printf(c->result, "{\"userOperation\":%s,\"entryPoint\":\"%s\","
	    "\"blockNumber\":\"%s\",\"blockHash\":\"%s\",\"transactionHash\":\"%s\"}",
	    json.data, ep, bn->valuestring, bh->valuestring, iu.tx_hash) == -1 ?
	    bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "response too large") : 0;
out:
	bp_userop_free(&op);
	bp_buf_free(&json);
	free(data);
	cJSON_Delete(tx);
	return rc;
}

int
bp_bundler_get_op(struct bp_bundler_call *c)
{
	struct bp_bundler_pool_op row;
	struct bp_index_user_op iu;
	char hex[BP_BUNDLER_POOL_HASH_STR], chain[BP_BUNDLER_POOL_CHAIN_MAX], ep[BP_ADDR_STRLEN];
	uint8_t a[20];
	int found, rc;

	if (hash_param(c, hex) == -1)
		return -1;
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	if ((found = bp_bundler_pool_get(c->r->db, chain, hex, &row)) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	if (found == 0 || strcmp(row.status, "dropped") == 0 || strcmp(row.status, "failed") == 0) {
		bp_bundler_pool_op_free(&row);
		return foreign_op(c, chain, hex);
	}
	/* Mined but not yet settled by the submitter: the indexer may know it already. */
	if (strcmp(row.status, "included") != 0 &&
	    bp_index_user_op(c->r->db, chain, hex, &iu) == 1 &&
	    bp_index_block_hash(c->r->db, chain, iu.block_number, row.block_hash,
	    sizeof(row.block_hash)) == 1) {
		bp_strlcpy(row.tx_hash, iu.tx_hash, sizeof(row.tx_hash));
		row.block_number = iu.block_number;
		bp_strlcpy(row.status, "included", sizeof(row.status));
	}
	bp_addr_parse(row.entry_point, strlen(row.entry_point), 0, a);
	bp_addr_format_checksum(a, ep, sizeof(ep));
	rc = bp_buf_printf(c->result, "{\"userOperation\":%s,\"entryPoint\":\"%s\",", row.op_json,
	    ep);
	if (rc == 0 && strcmp(row.status, "included") == 0)
		rc = bp_buf_printf(c->result, "\"blockNumber\":\"0x%llx\",\"blockHash\":\"%s\","
		    "\"transactionHash\":\"%s\"}", (unsigned long long)row.block_number,
		    row.block_hash, row.tx_hash);
	else if (rc == 0)
		rc = bp_buf_adds(c->result, "\"blockNumber\":null,\"blockHash\":null,"
		    "\"transactionHash\":null}");
	bp_bundler_pool_op_free(&row);
	return rc == -1 ? bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "response too large") : 0;
}

/* 1 when log is the event topic0 of the entry point ep (and, with h, for op hash h). */
static int
log_is(const cJSON *log, const char *ep, const char *topic0, const char *h)
{
	const cJSON *addr = cJSON_GetObjectItemCaseSensitive(log, "address");
	const cJSON *topics = cJSON_GetObjectItemCaseSensitive(log, "topics");
	const cJSON *t0 = cJSON_GetArrayItem(topics, 0), *t1 = cJSON_GetArrayItem(topics, 1);

	if (!cJSON_IsString(addr) || strcasecmp(addr->valuestring, ep) != 0 ||
	    !cJSON_IsString(t0) || strcasecmp(t0->valuestring, topic0) != 0)
		return 0;
	return h == NULL || (cJSON_IsString(t1) && strcasecmp(t1->valuestring, h) == 0);
}

/* Word i of the hex data string d as a QUANTITY into out; "" when it does not read. */
static void
data_word(const char *d, size_t i, char *out, size_t len)
{
	struct bp_u256 v;
	char word[2 + 64 + 1] = "0x";
	uint8_t be[32];

	out[0] = '\0';
	if (strlen(d) < 2 + 64 * (i + 1))
		return;
	memcpy(word + 2, d + 2 + 64 * i, 64);
	word[66] = '\0';
	if (bp_hex_decode_fixed(word, 66, be, 32) == -1)
		return;
	bp_u256_from_be32(&v, be);
	bp_u256_to_quantity(&v, out, len);
}

/* Builds the receipt of op hash h from the transaction receipt rcpt; NULL when not in it. */
static cJSON *
op_receipt(cJSON *rcpt, const char *ep, const char *h)
{
	char t_op[BP_BUNDLER_POOL_HASH_STR], t_rev[BP_BUNDLER_POOL_HASH_STR], t_before[BP_BUNDLER_POOL_HASH_STR];
	char nonce[80], cost[80], used[80], succ[80], addr[BP_ADDR_STRLEN];
	cJSON *logs = cJSON_GetObjectItemCaseSensitive(rcpt, "logs"), *l, *out = NULL, *mine;
	const cJSON *ev = NULL, *data, *topics;
	const char *reason = "";
	uint8_t t[32];
	int start = 0, i = 0, evi = -1, k;

	bp_abi_event_topic(EV_USER_OP, t);
	bp_hex_encode(t, 32, t_op, sizeof(t_op));
	bp_abi_event_topic(EV_REVERT, t);
	bp_hex_encode(t, 32, t_rev, sizeof(t_rev));
	bp_abi_event_topic(EV_BEFORE, t);
	bp_hex_encode(t, 32, t_before, sizeof(t_before));
	cJSON_ArrayForEach(l, logs) {
		if (log_is(l, ep, t_op, h)) {
			ev = l;
			evi = i;
			break;
		}
		if (log_is(l, ep, t_op, NULL) || log_is(l, ep, t_before, NULL))
			start = i + 1;
		i++;
	}
	if (ev == NULL || (data = cJSON_GetObjectItemCaseSensitive(ev, "data")) == NULL ||
	    !cJSON_IsString(data))
		return NULL;
	topics = cJSON_GetObjectItemCaseSensitive(ev, "topics");
	data_word(data->valuestring, 0, nonce, sizeof(nonce));
	data_word(data->valuestring, 1, succ, sizeof(succ));
	data_word(data->valuestring, 2, cost, sizeof(cost));
	data_word(data->valuestring, 3, used, sizeof(used));
	if ((out = cJSON_CreateObject()) == NULL || (mine = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(out);
		return NULL;
	}
	for (k = start; k < evi; k++) {
		l = cJSON_GetArrayItem(logs, k);
		if (log_is(l, ep, t_rev, h)) {
			const cJSON *d = cJSON_GetObjectItemCaseSensitive(l, "data");

			reason = cJSON_IsString(d) ? d->valuestring : "";
			continue;
		}
		cJSON_AddItemToArray(mine, cJSON_Duplicate(l, 1));
	}
	cJSON_AddStringToObject(out, "userOpHash", h);
	cJSON_AddStringToObject(out, "entryPoint", ep);
	for (k = 2; k <= 3; k++) {
		const cJSON *tk = cJSON_GetArrayItem(topics, k);

		snprintf(addr, sizeof(addr), "0x%s", cJSON_IsString(tk) &&
		    strlen(tk->valuestring) == 66 ? tk->valuestring + 26 : "");
		cJSON_AddStringToObject(out, k == 2 ? "sender" : "paymaster", addr);
	}
	cJSON_AddStringToObject(out, "nonce", nonce);
	cJSON_AddStringToObject(out, "actualGasCost", cost);
	cJSON_AddStringToObject(out, "actualGasUsed", used);
	cJSON_AddBoolToObject(out, "success", strcmp(succ, "0x1") == 0);
	cJSON_AddStringToObject(out, "reason", reason);
	cJSON_AddItemToObject(out, "logs", mine);
	cJSON_AddItemToObject(out, "receipt", cJSON_Duplicate(rcpt, 1));
	return out;
}

int
bp_bundler_receipt(struct bp_bundler_call *c)
{
	struct bp_bundler_pool_op row;
	struct bp_index_user_op iu;
	char hex[BP_BUNDLER_POOL_HASH_STR], chain[BP_BUNDLER_POOL_CHAIN_MAX], tx[BP_BUNDLER_POOL_HASH_STR];
	char ep[BP_ADDR_STRLEN];
	cJSON *rcpt = NULL, *out = NULL;
	char *text;
	int found, rc = -1;

	if (hash_param(c, hex) == -1)
		return -1;
	bp_bundler_chain_key(c->net, chain, sizeof(chain));
	bp_strlcpy(ep, c->net->entry_point, sizeof(ep));
	tx[0] = '\0';
	/*
	 * The pool's row first: the submitter keeps it current (a bundle whose block left the
	 * chain puts it back to pending). Then the indexer's: it knows any bundler's ops, of
	 * every EntryPoint version, and which EntryPoint emitted the event.
	 */
	if ((found = bp_bundler_pool_get(c->r->db, chain, hex, &row)) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	if (found == 1 && strcmp(row.status, "included") == 0)
		bp_strlcpy(tx, row.tx_hash, sizeof(tx));
	/* Its event is its own EntryPoint's. */
	if (found == 1)
		bp_strlcpy(ep, row.entry_point, sizeof(ep));
	bp_bundler_pool_op_free(&row);
	if (tx[0] == '\0') {
		if ((found = bp_index_user_op(c->r->db, chain, hex, &iu)) == -1)
			return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
		if (found == 0)
			return bp_buf_adds(c->result, "null");
		bp_strlcpy(tx, iu.tx_hash, sizeof(tx));
		bp_strlcpy(ep, indexed_ep(c, &iu), sizeof(ep));
	}
	if ((rcpt = tx_call(c, "eth_getTransactionReceipt", tx)) == NULL)
		return -1;
	if (!cJSON_IsObject(rcpt) || (out = op_receipt(rcpt, ep, hex)) == NULL)
		rc = bp_buf_adds(c->result, "null");
	else if ((text = cJSON_PrintUnformatted(out)) == NULL)
		rc = bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	else {
		rc = bp_buf_adds(c->result, text);
		free(text);
	}
	cJSON_Delete(out);
	cJSON_Delete(rcpt);
	return rc;
}
