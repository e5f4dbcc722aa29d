/*
 * The bundle submitter (bundler_submit.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <cjson/cJSON.h>

#include "bundler_7702.h"
#include "bundler_pool.h"
#include "bundler_reputation.h"
#include "bundler_rules.h"
#include "bundler_submit.h"
#include "bundler_submit_int.h"
#include "bundler_v07.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/tx.h"
#include "evm/u256.h"
#include "evm/userop.h"
#include "gas/paymaster.h"
#include "rpc/rpc_client.h"
#include "userop_validate.h"

#define SIG_FAILED_OP	"FailedOp(uint256,string)"
#define SIG_FAILED_OP_REVERT "FailedOpWithRevert(uint256,string,bytes)"
#define CANDIDATES_MAX	256

int
bp_bundler_submit_init(struct bp_bundler_submitter *s, const struct bp_network *net)
{
	const struct bp_network *n = net;

	memset(s, 0, sizeof(*s));
	s->net = net;
	if (n->kind != BP_CHAIN_EVM || n->bundler_key[0] == '\0' || n->entry_point[0] == '\0')
		return 1;
	if (bp_addr_parse(n->entry_point, strlen(n->entry_point), 0, s->ep) == -1)
		return -1;
	if (bp_paymaster_key_load(n->bundler_key, s->key, s->addr) == -1)
		return -1;
	memcpy(s->beneficiary, s->addr, 20);
	if (n->bundler_beneficiary[0] != '\0' && bp_addr_parse(n->bundler_beneficiary,
	    strlen(n->bundler_beneficiary), 0, s->beneficiary) == -1)
		return -1;
	return 0;
}

void
bp_bundler_submit_fini(struct bp_bundler_submitter *s)
{
	OPENSSL_cleanse(s->key, sizeof(s->key));
}

/* ---- chain reads ---- */

cJSON *
bp_bundler_submit_call(struct bp_upstream *up, const struct bp_network *net, const char *method,
    const char *params)
{
	struct bp_rpc_client_error e;
	cJSON *p, *res;

	if ((p = cJSON_Parse(params)) == NULL)
		return NULL;
	res = bp_rpc_client_call(up, net, method, p, &e);
	cJSON_Delete(p);
	if (res == NULL)
		bp_warn("bundle: %s.%s: %s: %s", net->chain, net->network, method, e.message);
	return res;
}

int
bp_bundler_submit_quantity(const cJSON *j, uint64_t *out)
{
	return cJSON_IsString(j) &&
	    bp_hex_quantity_lenient(j->valuestring, strlen(j->valuestring), out) == 0 ? 0 : -1;
}

int
bp_bundler_submit_tx_count(struct bp_upstream *up, const struct bp_bundler_submitter *s,
    const char *tag, uint64_t *out)
{
	char addr[BP_ADDR_STRLEN], params[96];
	cJSON *r;
	int rc;

	bp_addr_format_lower(s->addr, addr, sizeof(addr));
	snprintf(params, sizeof(params), "[\"%s\",\"%s\"]", addr, tag);
	if ((r = bp_bundler_submit_call(up, s->net, "eth_getTransactionCount", params)) == NULL)
		return -1;
	rc = bp_bundler_submit_quantity(r, out);
	cJSON_Delete(r);
	return rc;
}

/* The node's eth_maxPriorityFeePerGas into tip; 0, or -1 when it has none. */
static int
suggested_tip(struct bp_upstream *up, const struct bp_network *net, struct bp_u256 *tip)
{
	cJSON *r;
	int rc;

	if ((r = bp_bundler_submit_call(up, net, "eth_maxPriorityFeePerGas", "[]")) == NULL)
		return -1;
	rc = cJSON_IsString(r) && bp_u256_from_quantity(tip, r->valuestring,
	    strlen(r->valuestring)) == 0 ? 0 : -1;
	cJSON_Delete(r);
	return rc;
}

/* ---- ops ---- */

/* One op of a bundle: its row's keys and the parsed op. */
struct cand {
	char		hash[BP_BUNDLER_POOL_HASH_STR];
	char		sender[BP_BUNDLER_POOL_ADDR_STR];
	char		nonce[BP_BUNDLER_POOL_WORD_STR];
	int64_t		gas;
	char		*json;
	struct bp_userop op;
	int		parsed;
};

/* The ops of one bundle: all of one EntryPoint (the first op's), of its version. */
struct cands {
	struct cand	*c;
	size_t		 n;
	char		 ep[BP_BUNDLER_POOL_ADDR_STR];	/* "" until the first op */
	enum bp_ep_version version;
};

static void
cands_free(struct cands *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++) {
		free(cs->c[i].json);
		bp_userop_free(&cs->c[i].op);
	}
	free(cs->c);
	cs->c = NULL;
	cs->n = 0;
}

/* Collects pending ops; one a sender, its lowest nonce (ops come highest fee first). */
static int
collect(const struct bp_bundler_pool_op *op, void *arg)
{
	struct cands *cs = arg;
	struct cand *c;
	size_t i;

	/* One EntryPoint a bundle: the best paying op's; the others wait for the next. */
	if (cs->ep[0] == '\0')
		bp_strlcpy(cs->ep, op->entry_point, sizeof(cs->ep));
	if (strcmp(op->entry_point, cs->ep) != 0)
		return 0;
	for (i = 0; i < cs->n; i++)
		if (strcmp(cs->c[i].sender, op->sender) == 0) {
			c = &cs->c[i];
			if (strcmp(op->nonce, c->nonce) < 0) {
				char *j = strdup(op->op_json);

				if (j == NULL)
					return 1;
				free(c->json);
				c->json = j;
				bp_strlcpy(c->hash, op->hash, sizeof(c->hash));
				bp_strlcpy(c->nonce, op->nonce, sizeof(c->nonce));
				c->gas = op->gas;
			}
			return 0;
		}
	if (cs->n == CANDIDATES_MAX)
		return 1;
	c = &cs->c[cs->n];
	memset(c, 0, sizeof(*c));
	if ((c->json = strdup(op->op_json)) == NULL)
		return 1;
	bp_strlcpy(c->hash, op->hash, sizeof(c->hash));
	bp_strlcpy(c->sender, op->sender, sizeof(c->sender));
	bp_strlcpy(c->nonce, op->nonce, sizeof(c->nonce));
	c->gas = op->gas;
	cs->n++;
	return 0;
}

/* Parses c's JSON, in the form of version v, into c->op; 0 or -1. */
static int
parse_cand(struct cand *c, enum bp_ep_version v)
{
	const char *field;
	char why[160];
	cJSON *j;
	int rc;

	if (c->parsed)
		return 0;
	if ((j = cJSON_Parse(c->json)) == NULL)
		return -1;
	rc = bp_userop_from_json_v(v, j, &c->op, &field, why, sizeof(why));
	cJSON_Delete(j);
	c->parsed = rc == 0;
	return rc;
}

/* v as the 32-byte big-endian ABI word at w. */
static void
put_word(uint8_t *w, uint64_t v)
{
	struct bp_u256 u;

	bp_u256_from_u64(&u, v);
	bp_u256_to_be32(&u, w);
}

int
bp_bundler_submit_ep_version(const struct bp_network *net, const char *ep, uint8_t a[20],
    enum bp_ep_version *v)
{
	struct bp_entry_point epc;

	if (bp_addr_parse(ep, strlen(ep), 0, a) == -1 || bp_entry_point_find(net, a, &epc) == -1)
		return -1;
	*v = epc.version;
	return 0;
}

/* The calldata of handleOps(ops, beneficiary) of version v; NULL when out of memory. */
static uint8_t *
handle_ops(const struct cand *cs, size_t n, enum bp_ep_version v, const uint8_t beneficiary[20],
    size_t *len)
{
	uint8_t **enc, *out = NULL, *p;
	size_t *elen, packed, total = 0, i, off;

	enc = calloc(n ? n : 1, sizeof(*enc));
	elen = calloc(n ? n : 1, sizeof(*elen));
	if (enc == NULL || elen == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		if ((enc[i] = bp_userop_abi(&cs[i].op, (size_t)-1, &elen[i], &packed)) == NULL)
			goto out;
		total += elen[i];
	}
	*len = 4 + 64 + 32 + 32 * n + total;
	if ((out = calloc(1, *len)) == NULL)
		goto out;
	bp_abi_selector(bp_bundler_v07_handle_ops_sig(v), out);
	put_word(out + 4, 0x40);
	memset(out + 4 + 32, 0, 12);
	memcpy(out + 4 + 32 + 12, beneficiary, 20);
	put_word(out + 4 + 64, n);
	p = out + 4 + 96;
	off = 32 * n;
	for (i = 0; i < n; i++) {
		put_word(p + 32 * i, off);
		memcpy(p + off, enc[i], elen[i]);
		off += elen[i];
	}
out:
	for (i = 0; enc != NULL && i < n; i++)
		free(enc[i]);
	free(enc);
	free(elen);
	return out;
}

/* The op index and reason of a FailedOp revert; 0 or -1. */
static int
failed_op(const uint8_t *data, size_t len, uint64_t *index, char *reason, size_t cap)
{
	uint8_t sel[4];

	bp_abi_selector(SIG_FAILED_OP, sel);
	/* v0.7/v0.8's FailedOpWithRevert(index, reason, inner) reads the same way. */
	if (data != NULL && len >= 4 && memcmp(data, sel, 4) != 0)
		bp_abi_selector(SIG_FAILED_OP_REVERT, sel);
	if (data == NULL || len < 4 || memcmp(data, sel, 4) != 0 ||
	    bp_abi_read_u64(data + 4, len - 4, 0, index) == -1 ||
	    bp_abi_read_string(data + 4, len - 4, 1, reason, cap) == -1)
		return -1;
	return 0;
}

/* The authorizations of cs[0..n) into out (room for n); their count. */
static size_t
auths_of(const struct cand *cs, size_t n, struct bp_tx_auth *out)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if (cs[i].op.has_auth)
			out[k++] = cs[i].op.auth;
	return k;
}

/* The re-check's state override of cs[0..n) (bp_bundler_7702_bundle_override). */
static char *
override_of(const struct cand *cs, size_t n, int *oom)
{
	const struct bp_userop *ops[BP_BUNDLER_SUBMIT_OPS_MAX];
	size_t i;

	for (i = 0; i < n && i < BP_BUNDLER_SUBMIT_OPS_MAX; i++)
		ops[i] = &cs[i].op;
	return bp_bundler_7702_bundle_override(ops, i, oom);
}

/*
 * Signs the handleOps data to EntryPoint ep with nonce and fees: a type 2 transaction, or a
 * type 4 one that carries auth[0..nauth) when there are any (EIP-7702 ops). 0 or -1.
 */
static int
sign(const struct bp_bundler_submitter *s, const uint8_t ep[20], const uint8_t *data, size_t len,
    uint64_t nonce, uint64_t gas_limit, const struct bp_u256 *fee, const struct bp_u256 *tip,
    const struct bp_tx_auth *auth, size_t nauth, struct bp_bundler_pool_bundle *b)
{
	struct bp_tx7702 t4;
	struct bp_tx1559 tx;
	uint8_t *raw = NULL, h[32];
	size_t rawlen;
	int rc;

	memset(&tx, 0, sizeof(tx));
	tx.chain_id = (uint64_t)s->net->chain_id;
	tx.nonce = nonce;
	tx.max_fee_per_gas = *fee;
	tx.max_priority_fee_per_gas = *tip;
	tx.gas_limit = gas_limit;
	tx.has_to = 1;
	memcpy(tx.to, ep, 20);
	tx.data = data;
	tx.data_len = len;
	if (nauth > 0) {
		t4.tx = tx;
		t4.auth = auth;
		t4.nauth = nauth;
		rc = bp_tx7702_sign(&t4, s->key, &raw, &rawlen, h);
	} else
		rc = bp_tx_sign(&tx, s->key, &raw, &rawlen, h);
	if (rc == -1)
		return -1;
	free(b->raw_tx);
	if ((b->raw_tx = malloc(2 * rawlen + 3)) == NULL) {
		free(raw);
		return -1;
	}
	bp_hex_encode(raw, rawlen, b->raw_tx, 2 * rawlen + 3);
	free(raw);
	bp_hex_encode(h, 32, b->tx_hash, sizeof(b->tx_hash));
	bp_u256_to_dec(fee, b->max_fee, sizeof(b->max_fee));
	bp_u256_to_dec(tip, b->max_priority, sizeof(b->max_priority));
	b->nonce = (int64_t)nonce;
	b->gas_limit = (int64_t)gas_limit;
	return 0;
}

static void
send_raw(struct bp_upstream *up, const struct bp_network *net, const char *raw)
{
	size_t n = strlen(raw) + 8;
	char *params;
	cJSON *r;

	if ((params = malloc(n)) == NULL)
		return;
	snprintf(params, n, "[\"%s\"]", raw);
	r = bp_bundler_submit_call(up, net, "eth_sendRawTransaction", params);
	cJSON_Delete(r);
	free(params);
}

int
bp_bundler_submit_bump(struct bp_db *db, struct bp_upstream *up,
    const struct bp_bundler_submitter *s, struct bp_bundler_pool_bundle *b,
    const struct bp_bundler_pool_outcome *ops, size_t nops)
{
	struct cand cs[BP_BUNDLER_SUBMIT_OPS_MAX];
	struct bp_tx_auth auth[BP_BUNDLER_SUBMIT_OPS_MAX];
	struct bp_bundler_pool_op row;
	struct bp_u256 fee, tip;
	enum bp_ep_version v = BP_EP_V06;
	uint8_t *data = NULL, ep[20];
	size_t i, n = 0, len;
	uint64_t rem;
	int rc = -1;

	memset(cs, 0, sizeof(cs));
	for (i = 0; i < nops && i < BP_BUNDLER_SUBMIT_OPS_MAX; i++) {
		if (bp_bundler_pool_get(db, b->chain, ops[i].hash, &row) != 1)
			goto out;
		cs[n].json = row.op_json;
		row.op_json = NULL;
		n++;
		/* The bundle went to its ops' EntryPoint (one a bundle). */
		if ((i == 0 && bp_bundler_submit_ep_version(s->net, row.entry_point, ep, &v) == -1) ||
		    parse_cand(&cs[n - 1], v) == -1)
			goto out;
	}
	if (bp_u256_from_dec(&fee, b->max_fee, strlen(b->max_fee)) == -1 ||
	    bp_u256_from_dec(&tip, b->max_priority, strlen(b->max_priority)) == -1 ||
	    bp_u256_mul_u64(&fee, &fee, 100 + BP_BUNDLER_SUBMIT_FEE_BUMP) == -1 ||
	    bp_u256_mul_u64(&tip, &tip, 100 + BP_BUNDLER_SUBMIT_FEE_BUMP) == -1)
		goto out;
	bp_u256_div_u64(&fee, &fee, 100, &rem);
	bp_u256_div_u64(&tip, &tip, 100, &rem);
	if (n == 0 || (data = handle_ops(cs, n, v, s->beneficiary, &len)) == NULL ||
	    sign(s, ep, data, len, (uint64_t)b->nonce, (uint64_t)b->gas_limit, &fee, &tip,
	    auth, auths_of(cs, n, auth), b) == -1)
		goto out;
	/* Recorded before it is sent: a crash after this finds the new version. */
	if (bp_bundler_pool_bundle_bump(db, b->id, b->tx_hash, b->raw_tx, b->max_fee,
	    b->max_priority) == -1)
		goto out;
	bp_info("bundle: %s: bundle %lld re-sent with fees +%d%% as %s", b->chain,
	    (long long)b->id, BP_BUNDLER_SUBMIT_FEE_BUMP, b->tx_hash);
	send_raw(up, s->net, b->raw_tx);
	rc = 0;
out:
	free(data);
	for (i = 0; i < n; i++) {
		free(cs[i].json);
		bp_userop_free(&cs[i].op);
	}
	return rc;
}

/* The gas limit of the handleOps transaction: eth_estimateGas + 20%, or the ops' sum. */
static uint64_t
gas_limit_of(struct bp_upstream *up, const struct bp_bundler_submitter *s, const uint8_t ep[20],
    const uint8_t *data, size_t len, const struct cand *cs, size_t n, const char *override)
{
	char from[BP_ADDR_STRLEN], to[BP_ADDR_STRLEN], *hex, *params;
	size_t i, plen = 2 * len + 256 + (override ? strlen(override) : 0);
	uint64_t g = 0, sum = 60000;
	cJSON *r = NULL;

	for (i = 0; i < n; i++)
		sum += (uint64_t)cs[i].gas + 2 * 100000;
	if ((hex = malloc(2 * len + 3)) == NULL || (params = malloc(plen)) == NULL) {
		free(hex);
		return sum;
	}
	bp_hex_encode(data, len, hex, 2 * len + 3);
	bp_addr_format_lower(s->addr, from, sizeof(from));
	bp_addr_format_lower(ep, to, sizeof(to));
	/* With EIP-7702 ops, estimated as the re-check ran: their delegations applied. */
	snprintf(params, plen, "[{\"from\":\"%s\",\"to\":\"%s\",\"data\":\"%s\"}%s%s]", from,
	    to, hex, override ? ",\"latest\"," : "", override ? override : "");
	r = bp_bundler_submit_call(up, s->net, "eth_estimateGas", params);
	free(hex);
	free(params);
	if (r != NULL && bp_bundler_submit_quantity(r, &g) == 0)
		sum = g + g / 5;
	cJSON_Delete(r);
	return sum;
}

/* Builds, records and sends a bundle of the pending ops. 1 sent, 0 nothing to send, -1. */
static int
build(struct bp_db *db, struct bp_upstream *up, struct bp_bundler_submitter *s, const char *chain,
    size_t *nsent, size_t *ndropped)
{
	struct cands cs;
	struct bp_bundler_pool_bundle b;
	struct bp_u256 base_fee, fee, tip, sug;
	struct bp_userop_validate_error err;
	struct bp_tx_auth auth[BP_BUNDLER_SUBMIT_OPS_MAX];
	char (*hashes)[BP_BUNDLER_POOL_HASH_STR] = NULL, reason[256], why[300], *override = NULL;
	uint8_t *data = NULL, *ret = NULL, ep[20];
	size_t i, n = 0, len, retlen, nauth;
	uint64_t block_gas, gas = 0, nonce, gas_limit, idx;
	int rc = -1, r, oom;

	memset(&b, 0, sizeof(b));
	memset(&err, 0, sizeof(err));
	memset(&cs, 0, sizeof(cs));
	if ((cs.c = calloc(CANDIDATES_MAX, sizeof(*cs.c))) == NULL)
		return -1;
	if (bp_bundler_pool_each_pending(db, chain, CANDIDATES_MAX, collect, &cs) == -1)
		goto out;
	if (cs.n == 0) {
		rc = 0;
		goto out;
	}
	if (bp_bundler_submit_ep_version(s->net, cs.ep, ep, &cs.version) == -1) {
		/* An EntryPoint the config no longer names: its ops cannot be bundled. */
		for (i = 0; i < cs.n; i++)
			bp_bundler_pool_drop(db, chain, cs.c[i].hash, "the network no longer has "
			    "this op's EntryPoint");
		rc = 0;
		goto out;
	}
	if (bp_userop_validate_block_fees(up, s->net, &base_fee, &block_gas, &err) == -1)
		goto out;
	/* As many as fit nine tenths of the block (a verification's worst case is 3x its limit). */
	for (i = 0; i < cs.n && n < BP_BUNDLER_SUBMIT_OPS_MAX; i++) {
		if (gas + (uint64_t)cs.c[i].gas > block_gas / 10 * 9)
			continue;
		if (parse_cand(&cs.c[i], cs.version) == -1) {
			bp_bundler_pool_drop(db, chain, cs.c[i].hash, "the stored op does not parse");
			continue;
		}
		/* An authorization the EOA's nonce has passed would not run: the op would fail. */
		if (cs.c[i].op.has_auth && (r = bp_bundler_7702_usable(up, s->net,
		    &cs.c[i].op)) != 1) {
			if (r == -1)
				goto out;
			bp_bundler_pool_drop(db, chain, cs.c[i].hash, "eip7702Auth no longer "
			    "applies: the sender's nonce moved past it");
			(*ndropped)++;
			continue;
		}
		gas += (uint64_t)cs.c[i].gas;
		if (i != n) {
			struct cand t = cs.c[n];

			cs.c[n] = cs.c[i];
			cs.c[i] = t;
		}
		n++;
	}
	/* Re-check with eth_call of handleOps; an op that fails is dropped with its reason. */
	while (n > 0) {
		free(data);
		free(ret);
		free(override);
		ret = NULL;
		if ((data = handle_ops(cs.c, n, cs.version, s->beneficiary, &len)) == NULL ||
		    ((override = override_of(cs.c, n, &oom)) == NULL && oom))
			goto out;
		/*
		 * At "pending": the next block's timestamp, which validity windows are held to;
		 * the senders of EIP-7702 ops delegated as their authorizations will make them.
		 */
		r = bp_userop_validate_eth_call(up, s->net, ep, data, len, "pending", override, &ret,
		    &retlen, &err);
		if (r == -1)
			goto out;
		if (r == 0)
			break;
		if (failed_op(ret, retlen, &idx, reason, sizeof(reason)) == -1 || idx >= n) {
			/* Not one op's fault that we can name: drop the last (lowest fee) and retry. */
			idx = n - 1;
			bp_strlcpy(reason, "handleOps reverted", sizeof(reason));
		}
		snprintf(why, sizeof(why), "re-check before bundling failed: %s", reason);
		bp_bundler_pool_drop(db, chain, cs.c[idx].hash, why);
		bp_bundler_rules_crashed(db, s->net, &cs.c[idx].op, reason);
		(*ndropped)++;
		if (idx != n - 1) {
			struct cand t = cs.c[idx];

			memmove(&cs.c[idx], &cs.c[idx + 1], (n - 1 - idx) * sizeof(cs.c[0]));
			cs.c[n - 1] = t;
		}
		n--;
	}
	if (n == 0) {
		rc = 0;
		goto out;
	}
	/* The transaction pays the least any op of it offers, so every op covers its own gas. */
	fee = cs.c[0].op.num[BP_USEROP_MAX_FEE_PER_GAS];
	tip = cs.c[0].op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS];
	for (i = 1; i < n; i++) {
		if (bp_u256_cmp(&cs.c[i].op.num[BP_USEROP_MAX_FEE_PER_GAS], &fee) < 0)
			fee = cs.c[i].op.num[BP_USEROP_MAX_FEE_PER_GAS];
		if (bp_u256_cmp(&cs.c[i].op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], &tip) < 0)
			tip = cs.c[i].op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS];
	}
	/*
	 * No more tip than the node suggests (as Alto does): each op still pays its own fee to
	 * the beneficiary through the EntryPoint. Paying the ops' tip would make it the next
	 * suggestion on a quiet chain, which clients double again (1, 2, 4 ... gwei).
	 */
	if (suggested_tip(up, s->net, &sug) == 0 && bp_u256_cmp(&sug, &tip) < 0)
		tip = sug;
	if (bp_u256_cmp(&tip, &fee) > 0)
		tip = fee;
	nauth = auths_of(cs.c, n, auth);
	gas_limit = gas_limit_of(up, s, ep, data, len, cs.c, n, override) +
	    nauth * BP_BUNDLER_7702_AUTH_GAS;
	if (gas_limit > block_gas)
		gas_limit = block_gas;
	if (bp_bundler_submit_tx_count(up, s, "pending", &nonce) == -1)
		goto out;
	if ((hashes = calloc(n, sizeof(*hashes))) == NULL)
		goto out;
	for (i = 0; i < n; i++)
		memcpy(hashes[i], cs.c[i].hash, sizeof(hashes[i]));
	bp_strlcpy(b.chain, chain, sizeof(b.chain));
	bp_addr_format_lower(s->addr, b.bundler, sizeof(b.bundler));
	if (sign(s, ep, data, len, nonce, gas_limit, &fee, &tip, auth, nauth, &b) == -1)
		goto out;
	/* Recorded with its nonce and bytes BEFORE it is sent (crash safety). */
	if (bp_bundler_pool_bundle_record(db, &b, hashes, n) == -1) {
		rc = 0;		/* an op moved meanwhile: the next pass builds again */
		goto out;
	}
	send_raw(up, s->net, b.raw_tx);
	bp_strlcpy(s->last_tx, b.tx_hash, sizeof(s->last_tx));
	*nsent = n;
	rc = 1;
out:
	bp_userop_validate_error_free(&err);
	bp_bundler_pool_bundle_free(&b);
	free(hashes);
	free(data);
	free(ret);
	free(override);
	cands_free(&cs);
	return rc;
}

int
bp_bundler_submit_pass(struct bp_db *db, struct bp_upstream *up, struct bp_bundler_submitter *s, char *msg,
    size_t msglen)
{
	char chain[BP_BUNDLER_POOL_CHAIN_MAX];
	size_t sent = 0, dropped = 0;
	int64_t now = bp_mono_us();
	int built = 0, failed, settled = 0, open = 0, reorgs, again = 0;

	snprintf(chain, sizeof(chain), "%s.%s", s->net->chain, s->net->network);
	/*
	 * Not at every pass: the quick looks at a bundle in flight, and the wake-ups at each block
	 * stored (many a second while an indexer catches up), would each ask for every recent
	 * receipt.
	 */
	reorgs = s->reorg_at == 0 || now - s->reorg_at >= BP_BUNDLER_SUBMIT_REORG_EVERY_MS * 1000;
	if (reorgs)
		s->reorg_at = now;
	failed = bp_bundler_watch_pass(db, up, s, chain, reorgs, &settled, &open) == -1;
	s->last_tx[0] = '\0';
	if (!failed && open == 0 && (s->force || bp_bundler_reputation_manual(db, chain) == 0) &&
	    (built = build(db, up, s, chain, &sent, &dropped)) == -1)
		failed = 1;
	/*
	 * The bundle just sent, looked for at once: an automining node has mined it, and settling
	 * it now frees its ops' senders and answers their receipts without waiting for a pass.
	 */
	if (built == 1 && bp_bundler_watch_pass(db, up, s, chain, 0, &again, &open) == -1)
		failed = 1;
	settled += again;
	snprintf(msg, msglen, "%s: %d settled, %d in flight, %zu ops sent, %zu dropped", chain,
	    settled, open, sent, dropped);
	if (failed)
		return -1;
	if (settled > 0)
		return 1;
	return open > 0 ? 2 : 0;
}
