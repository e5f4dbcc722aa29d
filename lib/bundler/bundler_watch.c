/*
 * The bundle submitter's watch over the bundles it sent (bundler_submit.h, steps 1 and 2):
 * inclusion, nonces another transaction took, fee bumps, reorgs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "bundler_pool.h"
#include "bundler_reputation.h"
#include "bundler_submit.h"
#include "bundler_submit_int.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/abi.h"
#include "evm/address.h"

#define EV_USER_OP	"UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)"

/* The receipt of hash: an object, a JSON null while not mined, or NULL when no answer. */
static cJSON *
receipt(struct bp_upstream *up, const struct bp_network *net, const char *hash)
{
	char params[96];

	snprintf(params, sizeof(params), "[\"%s\"]", hash);
	return bp_bundler_submit_call(up, net, "eth_getTransactionReceipt", params);
}

struct watch {
	struct bp_db		*db;
	struct bp_upstream	*up;
	struct bp_bundler_submitter	*s;
	int			 failed;
	int			 settled;
	int			 open;
	/* For bp_bundler_pool_bundle_ops: the ops of the bundle at hand. */
	struct bp_bundler_pool_outcome	 out[BP_BUNDLER_SUBMIT_OPS_MAX];
	size_t			 nout;
	const cJSON		*logs;
};

/*
 * 1 when log is the UserOperationEvent of one of net's EntryPoints (the event is the same in
 * every version; a bundle goes to one of them) for op hash h; success into *ok.
 */
static int
op_event(const cJSON *log, const struct bp_network *net, const char *topic0, const char *h,
    int *ok)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(log, "address");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(log, "topics");
	const cJSON *t0 = cJSON_GetArrayItem(t, 0), *t1 = cJSON_GetArrayItem(t, 1);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(log, "data");
	enum bp_ep_version v;
	uint8_t addr[20];

	if (!cJSON_IsString(a) || bp_bundler_submit_ep_version(net, a->valuestring, addr, &v) == -1 ||
	    !cJSON_IsString(t0) ||
	    strcasecmp(t0->valuestring, topic0) != 0 || !cJSON_IsString(t1) ||
	    strcasecmp(t1->valuestring, h) != 0)
		return 0;
	/* data: nonce, success, actualGasCost, actualGasUsed; success is word 1's last digit. */
	*ok = cJSON_IsString(d) && strlen(d->valuestring) >= 2 + 128 &&
	    d->valuestring[2 + 127] == '1';
	return 1;
}

static int
outcome(const char *hash, void *arg)
{
	struct watch *w = arg;
	struct bp_bundler_pool_outcome *o;
	char t0[BP_BUNDLER_POOL_HASH_STR];
	uint8_t t[32];
	const cJSON *l;

	if (w->nout == BP_BUNDLER_SUBMIT_OPS_MAX)
		return 1;
	o = &w->out[w->nout++];
	memset(o, 0, sizeof(*o));
	bp_strlcpy(o->hash, hash, sizeof(o->hash));
	bp_abi_event_topic(EV_USER_OP, t);
	bp_hex_encode(t, 32, t0, sizeof(t0));
	cJSON_ArrayForEach(l, w->logs)
		if (op_event(l, w->s->net, t0, hash, &o->success)) {
			o->found = 1;
			break;
		}
	return 0;
}

/* Marks b included from its receipt r. 0 or -1. */
static int
settle(struct watch *w, const struct bp_bundler_pool_bundle *b, const cJSON *r, const char *hash)
{
	const cJSON *bn = cJSON_GetObjectItemCaseSensitive(r, "blockNumber");
	const cJSON *bh = cJSON_GetObjectItemCaseSensitive(r, "blockHash");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status");
	const cJSON *to = cJSON_GetObjectItemCaseSensitive(r, "to");
	enum bp_ep_version v;
	char ep[BP_ADDR_STRLEN];
	uint8_t a[20];
	uint64_t number;

	if (bp_bundler_submit_quantity(bn, &number) == -1 || !cJSON_IsString(bh))
		return -1;
	w->nout = 0;
	w->logs = cJSON_GetObjectItemCaseSensitive(r, "logs");
	if (bp_bundler_pool_bundle_ops(w->db, b->id, outcome, w) == -1)
		return -1;
	w->settled++;
	/* The EntryPoint the bundle went to (its ops', any version's) emitted their events. */
	if (!cJSON_IsString(to) ||
	    bp_bundler_submit_ep_version(w->s->net, to->valuestring, a, &v) == -1)
		memcpy(a, w->s->ep, 20);
	bp_addr_format_lower(a, ep, sizeof(ep));
	if (bp_bundler_reputation_included_logs(w->db, b->chain, ep, w->logs, (int64_t)time(NULL)) == -1)
		bp_warn("%s: %s: inclusions not counted for reputation", __func__, b->chain);
	return bp_bundler_pool_bundle_included(w->db, b->id, hash, (int64_t)number, bh->valuestring, w->out,
	    w->nout, cJSON_IsString(st) && strcmp(st->valuestring, "0x0") == 0 ?
	    "the bundle transaction reverted" : "no UserOperationEvent for it in the bundle");
}

/* Collects the ops of a bundle (for a re-send) by hash. */
static int
bundle_op(const char *hash, void *arg)
{
	struct watch *w = arg;

	if (w->nout == BP_BUNDLER_SUBMIT_OPS_MAX)
		return 1;
	bp_strlcpy(w->out[w->nout++].hash, hash, sizeof(w->out[0].hash));
	return 0;
}

/* Re-sends b with both fees raised by BP_BUNDLER_SUBMIT_FEE_BUMP percent. 0 or -1. */
static int
bump(struct watch *w, struct bp_bundler_pool_bundle *b)
{
	w->nout = 0;
	if (bp_bundler_pool_bundle_ops(w->db, b->id, bundle_op, w) == -1)
		return -1;
	return bp_bundler_submit_bump(w->db, w->up, w->s, b, w->out, w->nout);
}

/* What became of a bundle that was sent (bp_bundler_pool_each_bundle callback). */
static int
watch_one(struct bp_bundler_pool_bundle *b, void *arg)
{
	struct watch *w = arg;
	char hashes[sizeof(b->old_tx_hashes) + BP_BUNDLER_POOL_HASH_STR + 2], *h, *save = NULL;
	uint64_t latest;
	cJSON *r, *tx;
	char params[96];

	/*
	 * The chain's nonce first, then the receipts: a bundle mined between the two reads is
	 * then seen mined, never taken for one whose nonce another transaction used.
	 */
	if (bp_bundler_submit_tx_count(w->up, w->s, "latest", &latest) == -1) {
		w->failed = 1;
		return 1;
	}
	snprintf(hashes, sizeof(hashes), "%s%s%s", b->tx_hash, b->old_tx_hashes[0] ? "," : "",
	    b->old_tx_hashes);
	for (h = strtok_r(hashes, ",", &save); h != NULL; h = strtok_r(NULL, ",", &save)) {
		if ((r = receipt(w->up, w->s->net, h)) == NULL) {
			w->failed = 1;
			return 1;
		}
		if (cJSON_IsObject(r)) {
			if (settle(w, b, r, h) == -1)
				w->failed = 1;
			cJSON_Delete(r);
			return 0;
		}
		cJSON_Delete(r);
	}
	/*
	 * No receipt. The chain's nonce decides, never the row's (evm_revert moves it back); a
	 * transaction the node shows in a block is mined and its receipt is on its way (anvil
	 * moves the nonce before it serves the receipt): wait for it.
	 */
	snprintf(params, sizeof(params), "[\"%s\"]", b->tx_hash);
	if ((tx = bp_bundler_submit_call(w->up, w->s->net, "eth_getTransactionByHash", params)) == NULL) {
		w->failed = 1;
		return 1;
	}
	if (cJSON_IsObject(tx) && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(tx,
	    "blockNumber"))) {
		cJSON_Delete(tx);
		w->open++;
		return 0;
	}
	/*
	 * The nonce moved and neither the receipt nor the transaction shows: another transaction
	 * took it, or this one was mined a moment ago and the node has not stored it yet (anvil
	 * moves the nonce first). A bundle sent that recently waits a pass or two: released now,
	 * its ops would be re-checked against a nonce they used themselves and dropped.
	 */
	if (latest > (uint64_t)b->nonce && time(NULL) - b->sent_at < BP_BUNDLER_SUBMIT_TAKEN_GRACE) {
		cJSON_Delete(tx);
		w->open++;
		return 0;
	}
	if (latest > (uint64_t)b->nonce) {
		cJSON_Delete(tx);
		bp_warn("bundle: %s: nonce %lld of bundle %lld was taken by another transaction; "
		    "its ops go back to the pool", b->chain, (long long)b->nonce, (long long)b->id);
		w->settled++;
		return bp_bundler_pool_bundle_release(w->db, b->id, "dropped") == -1 ? (w->failed = 1) : 0;
	}
	if (!cJSON_IsObject(tx)) {
		bp_warn("bundle: %s: bundle %lld (%s) vanished from the node; its ops go back to "
		    "the pool", b->chain, (long long)b->id, b->tx_hash);
		w->settled++;
		if (bp_bundler_pool_bundle_release(w->db, b->id, "dropped") == -1)
			w->failed = 1;
	} else if (time(NULL) - b->sent_at >= BP_BUNDLER_SUBMIT_STUCK_SECONDS) {
		if (bump(w, b) == -1)
			w->failed = 1;
		w->open++;
	} else
		w->open++;
	cJSON_Delete(tx);
	return 0;
}

/* An included bundle of the last blocks: orphaned when its receipt is gone or moved. */
static int
reorg_one(struct bp_bundler_pool_bundle *b, void *arg)
{
	struct watch *w = arg;
	const cJSON *bh;
	cJSON *r;

	if ((r = receipt(w->up, w->s->net, b->tx_hash)) == NULL) {
		w->failed = 1;
		return 1;
	}
	bh = cJSON_GetObjectItemCaseSensitive(r, "blockHash");
	if (!cJSON_IsObject(r) || !cJSON_IsString(bh) ||
	    strcasecmp(bh->valuestring, b->block_hash) != 0) {
		bp_warn("bundle: %s: block %lld of bundle %lld left the chain; its ops go back to "
		    "the pool", b->chain, (long long)b->block_number, (long long)b->id);
		w->settled++;
		if (bp_bundler_pool_bundle_release(w->db, b->id, "orphaned") == -1)
			w->failed = 1;
	}
	cJSON_Delete(r);
	return 0;
}

int
bp_bundler_watch_pass(struct bp_db *db, struct bp_upstream *up, struct bp_bundler_submitter *s,
    const char *chain, int reorgs, int *settled, int *open)
{
	struct watch w;
	uint64_t head;
	cJSON *r = NULL;

	memset(&w, 0, sizeof(w));
	w.db = db;
	w.up = up;
	w.s = s;
	if (bp_bundler_pool_each_bundle(db, chain, 0, 0, watch_one, &w) == -1)
		w.failed = 1;
	if (reorgs && (r = bp_bundler_submit_call(up, s->net, "eth_blockNumber", "[]")) != NULL &&
	    bp_bundler_submit_quantity(r, &head) == 0 &&
	    bp_bundler_pool_each_bundle(db, chain, 1, head > BP_BUNDLER_SUBMIT_REORG_DEPTH ?
	    (int64_t)(head - BP_BUNDLER_SUBMIT_REORG_DEPTH) : 0, reorg_one, &w) == -1)
		w.failed = 1;
	cJSON_Delete(r);
	*settled = w.settled;
	*open = w.open;
	return w.failed ? -1 : 0;
}
