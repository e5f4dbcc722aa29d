/*
 * Format-B matching (webhook_match_int.h, docs/webhooks.md "Format B"): a webhook's types over
 * a stored block, its filters combined (each filter given must pass, one item of a list is
 * enough), each event's data built by webhook_b.c and recorded with its type, in the indexer's
 * store transaction like format A's.
 *
 * INTERNAL_TRANSFER comes from the block's call traces, which the indexer fetches only when a
 * webhook of the network wants them (bp_webhook_match_traces_wanted); PENDING_TRANSACTION from
 * cron/pending's transactions (bp_webhook_match_b_pending).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/address.h"
#include "index/index_event.h"
#include "webhook_b.h"
#include "webhook_match_int.h"

int
bp_webhook_match_b_filters(struct filter *f, const cJSON *j)
{
	const cJSON *min = cJSON_GetObjectItemCaseSensitive(j, "min_value");

	if (bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "selectors"), 4,
	    &f->selectors) == -1 ||
	    bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "topics"), 32,
	    &f->btopics) == -1)
		return -1;
	if (min != NULL) {
		if (!cJSON_IsString(min) || bp_u256_from_dec(&f->min, min->valuestring,
		    strlen(min->valuestring)) == -1)
			return -1;
		f->has_min = 1;
	}
	return 0;
}

/* The selector of transaction index i of the block (its input's first 4 bytes); 0 or -1. */
static int
selector(const struct match *m, int64_t i, uint8_t sel[4])
{
	const cJSON *txs, *t, *in;

	if (m->blk->block == NULL || i < 0 || i > 1000000 ||
	    (txs = cJSON_GetObjectItemCaseSensitive(m->blk->block, "transactions")) == NULL ||
	    (t = cJSON_GetArrayItem(txs, (int)i)) == NULL ||
	    !cJSON_IsString(in = cJSON_GetObjectItemCaseSensitive(t, "input")) ||
	    strlen(in->valuestring) < 10)
		return -1;
	return bp_hex_decode_fixed(in->valuestring, 10, sel, 4);
}

/* The selector of t (NULL: none) into sel, returned, or NULL. */
static const uint8_t *
selector_of(const struct match *m, const struct tx *t, uint8_t sel[4])
{
	return t != NULL && selector(m, t->index, sel) == 0 ? sel : NULL;
}

/* Whether a log of transaction hash in the block has one of f's topics as topic 0. */
static int
tx_has_topic(const struct match *m, const struct filter *f, const char *hash)
{
	const struct bp_index_store_event *e;
	size_t i;

	for (i = 0; i < m->blk->nevents; i++) {
		e = &m->blk->events[i];
		if (e->log.ntopics > 0 && strcmp(e->pos.tx_hash, hash) == 0 &&
		    bp_webhook_match_has(&f->btopics, e->log.topics[0]))
			return 1;
	}
	return 0;
}

/*
 * Whether an event passes f's filters: sel its transaction's selector (NULL: none known),
 * contract the token
 * or the recipient (NULL: none), value the amount moved, topic0 the log's first topic (NULL:
 * the transaction's logs are looked at). addresses are checked by the caller (per side).
 */
static int
passes(const struct match *m, const struct filter *f, const char *hash, const uint8_t *sel,
    const uint8_t *contract, const struct bp_u256 *value, const uint8_t *topic0)
{
	uint8_t h[32];

	if (f->contracts.n > 0 && (contract == NULL || !bp_webhook_match_has(&f->contracts,
	    contract)))
		return 0;
	if (f->has_min && bp_u256_cmp(value, &f->min) < 0)
		return 0;
	if (f->hashes.n > 0 && (bp_hex_decode_fixed(hash, strlen(hash), h, 32) == -1 ||
	    !bp_webhook_match_has(&f->hashes, h)))
		return 0;
	if (f->selectors.n > 0 && (sel == NULL || !bp_webhook_match_has(&f->selectors, sel)))
		return 0;
	if (f->btopics.n > 0 && (topic0 != NULL ? !bp_webhook_match_has(&f->btopics, topic0) :
	    !tx_has_topic(m, f, hash)))
		return 0;
	return 1;
}

/* Records m->data as an event of type t of f, named by source. 0 or -1. */
static int
emit_b(struct match *m, struct filter *f, enum bp_webhook_btype t, const char *source,
    const char *token)
{
	char id[EVT_ID_MAX], src[SOURCE_MAX];
	int rc;

	if ((rc = bp_webhook_match_room(m, f)) != 1)
		return rc;
	if (bp_webhook_match_event_id(id) == -1)
		return -1;
	/* One webhook may watch one transaction as several types: the type is in the source. */
	snprintf(src, sizeof(src), "%s:%s", bp_webhook_btype_name(t), source);
	bp_buf_reset(&m->body);
	if (bp_webhook_b_envelope(&m->body, id, t, bp_now_us() / 1000, f->chain, m->chain_id,
	    m->data.data, m->data.len) == -1) {
		bp_warn("webhook %s: the event of %s is too large; not recorded", f->id, src);
		return 0;
	}
	return bp_webhook_match_record(m, f, id, src, token, bp_webhook_btype_name(t));
}

/* ADDRESS_ACTIVITY and MINED_TRANSACTION of transaction t. */
static int
match_tx(struct match *m, struct filter *f, const struct tx *t)
{
	static const char *const dirs[2] = { "outgoing", "incoming" };
	struct bp_webhook_b_move mv;
	char source[SOURCE_MAX], price[80];
	uint8_t sel[4];
	int side, by_addr;

	memset(&mv, 0, sizeof(mv));
	if (bp_u256_from_dec(&mv.value, t->value, strlen(t->value)) == -1 ||
	    !passes(m, f, t->hash, selector_of(m, t, sel), t->has_to ? t->to : NULL, &mv.value,
	    NULL))
		return 0;
	mv.block = m->blk->number;
	mv.block_hash = m->blk->hash;
	mv.tx_hash = t->hash;
	mv.log_index = -1;
	mv.from = t->from;
	mv.to = t->has_to ? t->to : NULL;
	by_addr = f->addrs.n == 0 || bp_webhook_match_has(&f->addrs, t->from) ||
	    (t->has_to && bp_webhook_match_has(&f->addrs, t->to));
	if ((f->btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_ADDRESS_ACTIVITY)) && by_addr)
		for (side = 0; side < 2; side++) {
			if (side == 0 ? !bp_webhook_match_has(&f->addrs, t->from) :
			    !t->has_to || !bp_webhook_match_has(&f->addrs, t->to))
				continue;
			mv.direction = dirs[side];
			snprintf(source, sizeof(source), "tx:%s:%s", t->hash, dirs[side]);
			if (bp_webhook_b_data_move(&m->data, BP_WEBHOOK_B_ADDRESS_ACTIVITY,
			    &mv) == -1 || emit_b(m, f, BP_WEBHOOK_B_ADDRESS_ACTIVITY, source,
			    NULL) == -1)
				return -1;
		}
	if (!(f->btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_MINED_TRANSACTION)) || !by_addr)
		return 0;
	snprintf(source, sizeof(source), "tx:%s", t->hash);
	bp_webhook_match_price(m, t->index, price, sizeof(price));
	bp_buf_reset(&m->data);
	if (bp_buf_printf(&m->data, "{\"blockNumber\":%lld,\"blockHash\":\"%s\","
	    "\"transactionHash\":\"%s\",\"transactionIndex\":%lld", (long long)m->blk->number,
	    m->blk->hash, t->hash, (long long)t->index) == -1 ||
	    bp_webhook_b_data_tx(&m->data, t->from, t->has_to ? t->to : NULL, t->value,
	    t->status, t->gas_used, price) == -1)
		return -1;
	return emit_b(m, f, BP_WEBHOOK_B_MINED_TRANSACTION, source, NULL);
}

/* TOKEN_TRANSFER, NFT_ACTIVITY and ADDRESS_ACTIVITY of one token movement. */
static int
match_move(struct match *m, struct filter *f, struct bp_webhook_b_move *mv,
    const struct bp_index_store_event *e, size_t item)
{
	static const char *const dirs[2] = { "outgoing", "incoming" };
	enum bp_webhook_btype t = mv->standard != NULL ? BP_WEBHOOK_B_NFT_ACTIVITY :
	    BP_WEBHOOK_B_TOKEN_TRANSFER;
	char source[SOURCE_MAX];
	uint8_t sel[4];
	int side;

	if (!passes(m, f, e->pos.tx_hash, selector_of(m, bp_webhook_match_tx(m, e->pos.tx_hash),
	    sel), e->log.address, &mv->value, e->log.ntopics > 0 ? e->log.topics[0] : NULL))
		return 0;
	snprintf(source, sizeof(source), "log:%s:%lld:%zu", e->pos.tx_hash,
	    (long long)e->pos.log_index, item);
	if ((f->btypes & BP_WEBHOOK_B_BIT(t)) && (f->addrs.n == 0 ||
	    bp_webhook_match_has(&f->addrs, mv->from) || bp_webhook_match_has(&f->addrs, mv->to)))
		/* Both wait for the worker to complete them: a symbol, an NFT's metadata. */
		if (bp_webhook_b_data_move(&m->data, t, mv) == -1 || emit_b(m, f, t, source,
		    e->pos.contract) == -1)
			return -1;
	if (!(f->btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_ADDRESS_ACTIVITY)))
		return 0;
	for (side = 0; side < 2; side++) {
		if (!bp_webhook_match_has(&f->addrs, side == 0 ? mv->from : mv->to))
			continue;
		mv->direction = dirs[side];
		snprintf(source, sizeof(source), "log:%s:%lld:%zu:%s", e->pos.tx_hash,
		    (long long)e->pos.log_index, item, dirs[side]);
		if (bp_webhook_b_data_move(&m->data, BP_WEBHOOK_B_ADDRESS_ACTIVITY, mv) == -1 ||
		    emit_b(m, f, BP_WEBHOOK_B_ADDRESS_ACTIVITY, source, e->pos.contract) == -1)
			return -1;
	}
	mv->direction = NULL;
	return 0;
}

/* The token movements of log e (one, or one per id of a batch). */
static int
each_move(struct match *m, struct filter *f, const struct bp_index_store_event *e)
{
	struct bp_webhook_b_move mv;
	size_t i;

	memset(&mv, 0, sizeof(mv));
	mv.block = m->blk->number;
	mv.block_hash = m->blk->hash;
	mv.tx_hash = e->pos.tx_hash;
	mv.log_index = e->pos.log_index;
	mv.from = e->ev.from;
	mv.to = e->ev.to;
	mv.contract = e->log.address;
	switch (e->ev.kind) {
	case BP_INDEX_EVENT_ERC20:
		mv.value = e->ev.value;
		return match_move(m, f, &mv, e, 0);
	case BP_INDEX_EVENT_ERC721:
		mv.standard = "ERC721";
		mv.token_id = e->ev.id;
		bp_u256_from_u64(&mv.value, 1);
		return match_move(m, f, &mv, e, 0);
	case BP_INDEX_EVENT_ERC1155_SINGLE:
		mv.standard = "ERC1155";
		mv.token_id = e->ev.id;
		mv.value = e->ev.value;
		return match_move(m, f, &mv, e, 0);
	case BP_INDEX_EVENT_ERC1155_BATCH:
		mv.standard = "ERC1155";
		for (i = 0; i < e->ev.count; i++) {
			bp_index_event_batch_item(&e->ev, i, &mv.token_id, &mv.value);
			if (match_move(m, f, &mv, e, i) == -1)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

static int	match_traces(struct match *, struct filter *);

int
bp_webhook_match_b(struct match *m, struct filter *f)
{
	size_t i;

	if ((f->btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_NEW_BLOCK)) && m->blk->block != NULL) {
		char source[SOURCE_MAX];

		snprintf(source, sizeof(source), "block:%s", m->blk->hash);
		if (bp_webhook_b_data_block(&m->data, m->blk->block) == 0 &&
		    emit_b(m, f, BP_WEBHOOK_B_NEW_BLOCK, source, NULL) == -1)
			return -1;
	}
	if (f->btypes & (BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_ADDRESS_ACTIVITY) |
	    BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_MINED_TRANSACTION)))
		for (i = 0; i < m->ntx; i++)
			if (match_tx(m, f, &m->tx[i]) == -1)
				return -1;
	if (f->btypes & (BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_ADDRESS_ACTIVITY) |
	    BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_TOKEN_TRANSFER) |
	    BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_NFT_ACTIVITY)))
		for (i = 0; i < m->blk->nevents; i++)
			if (each_move(m, f, &m->blk->events[i]) == -1)
				return -1;
	if ((f->btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_INTERNAL_TRANSFER)) &&
	    m->blk->traces != NULL)
		return match_traces(m, f);
	return 0;
}

/* A 20-byte address member of o into a; 0, or -1 when absent or not one. */
static int
address(const cJSON *o, const char *name, uint8_t a[20])
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(j) ? bp_hex_decode_fixed(j->valuestring, strlen(j->valuestring), a,
	    20) : -1;
}

int
bp_webhook_match_b_pending(struct match *m, struct filter *f)
{
	const cJSON *t, *hash, *value, *input, *nonce;
	struct bp_u256 v, n;
	uint8_t from[20], to[20], sel[4];
	char source[SOURCE_MAX];
	int has_to, has_sel;

	cJSON_ArrayForEach(t, m->pending) {
		hash = cJSON_GetObjectItemCaseSensitive(t, "hash");
		value = cJSON_GetObjectItemCaseSensitive(t, "value");
		input = cJSON_GetObjectItemCaseSensitive(t, "input");
		nonce = cJSON_GetObjectItemCaseSensitive(t, "nonce");
		if (!cJSON_IsString(hash) || strlen(hash->valuestring) != 66 ||
		    address(t, "from", from) == -1 || !cJSON_IsString(value) ||
		    bp_u256_from_quantity(&v, value->valuestring, strlen(value->valuestring)) == -1 ||
		    !cJSON_IsString(nonce) ||
		    bp_u256_from_quantity(&n, nonce->valuestring, strlen(nonce->valuestring)) == -1)
			continue;	/* not a transaction the node should give */
		has_to = address(t, "to", to) == 0;
		has_sel = cJSON_IsString(input) && strlen(input->valuestring) >= 10 &&
		    bp_hex_decode_fixed(input->valuestring, 10, sel, 4) == 0;
		if (!(bp_webhook_match_has(&f->addrs, from) ||
		    (has_to && bp_webhook_match_has(&f->addrs, to))) ||
		    !passes(m, f, hash->valuestring, has_sel ? sel : NULL, has_to ? to : NULL, &v,
		    NULL))
			continue;
		snprintf(source, sizeof(source), "pending:%s", hash->valuestring);
		if (bp_webhook_b_data_pending(&m->data, hash->valuestring, from, has_to ? to : NULL,
		    &v, &n, has_sel ? sel : NULL) == -1 ||
		    emit_b(m, f, BP_WEBHOOK_B_PENDING_TRANSACTION, source, NULL) == -1)
			return -1;
	}
	return 0;
}

#define TRACE_DEPTH	1100	/* the EVM's call depth is 1024 */
#define TRACE_PATH	(SOURCE_MAX - 80)

/* Frame kinds that move value to their "to"; a DELEGATECALL's value is its caller's, not moved. */
static int
moves_value(const char *type)
{
	return type != NULL && (strcmp(type, "CALL") == 0 || strcmp(type, "CREATE") == 0 ||
	    strcmp(type, "CREATE2") == 0 || strcmp(type, "SELFDESTRUCT") == 0);
}

/*
 * One frame that may have moved value: its members from, to and value of o (names given: the
 * two trace formats name them apart), of kind call_type ("CALL"...), at trace address path
 * ("0,1") in transaction hash; recorded when it moved some and passes f. 0 or -1.
 */
static int
internal(struct match *m, struct filter *f, const char *hash, const struct tx *t,
    const uint8_t *sel, const cJSON *o, const char *fname, const char *tname, const char *vname,
    const char *call_type, const char *path)
{
	const cJSON *value = cJSON_GetObjectItemCaseSensitive(o, vname);
	struct bp_webhook_b_move mv;
	char source[SOURCE_MAX], ta[TRACE_PATH + 2];
	uint8_t from[20], to[20];

	memset(&mv, 0, sizeof(mv));
	if (!cJSON_IsString(value) || bp_u256_from_quantity(&mv.value, value->valuestring,
	    strlen(value->valuestring)) == -1 || bp_u256_is_zero(&mv.value) ||
	    address(o, fname, from) == -1 || address(o, tname, to) == -1 ||
	    !(bp_webhook_match_has(&f->addrs, from) || bp_webhook_match_has(&f->addrs, to)) ||
	    !passes(m, f, hash, sel, t != NULL && t->has_to ? t->to : NULL, &mv.value, NULL))
		return 0;
	snprintf(ta, sizeof(ta), "[%s]", path);
	mv.block = m->blk->number;
	mv.block_hash = m->blk->hash;
	mv.tx_hash = hash;
	mv.log_index = -1;
	mv.from = from;
	mv.to = to;
	mv.trace_address = ta;
	mv.call_type = call_type;
	snprintf(source, sizeof(source), "trace:%s:%s", hash, path);
	if (bp_webhook_b_data_move(&m->data, BP_WEBHOOK_B_INTERNAL_TRANSFER, &mv) == -1)
		return -1;
	return emit_b(m, f, BP_WEBHOOK_B_INTERNAL_TRANSFER, source, NULL);
}

/*
 * The frames under fr (a callTracer frame of transaction hash, at depth, its trace address path
 * "0,1" of len bytes): each one that moved value, matched. A frame that failed ("error") moved
 * nothing, nor did any under it.
 */
static int
match_frame(struct match *m, struct filter *f, const char *hash, const struct tx *t,
    const uint8_t *sel, const cJSON *fr, int depth, char *path, size_t len)
{
	const cJSON *c, *type;
	size_t k = 0, n;

	if (cJSON_GetObjectItemCaseSensitive(fr, "error") != NULL || depth > TRACE_DEPTH)
		return 0;
	type = cJSON_GetObjectItemCaseSensitive(fr, "type");
	if (depth > 0 && cJSON_IsString(type) && moves_value(type->valuestring) &&
	    internal(m, f, hash, t, sel, fr, "from", "to", "value", type->valuestring,
	    path) == -1)
		return -1;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(fr, "calls")) {
		n = (size_t)snprintf(path + len, TRACE_PATH - len, "%s%zu", len > 0 ? "," : "", k++);
		if (len + n >= TRACE_PATH)	/* deeper than a source holds: not named, not sent */
			break;
		if (match_frame(m, f, hash, t, sel, c, depth + 1, path, len + n) == -1)
			return -1;
		path[len] = '\0';
	}
	return 0;
}

/*
 * trace_block's entries (parity's flat form, depth first): call (not delegatecall nor
 * staticcall), create and suicide entries under a transaction's own call; an entry with an
 * error, and those under it, moved nothing.
 */
static int
match_flat(struct match *m, struct filter *f)
{
	const cJSON *e, *a, *r, *ta, *i, *type, *ct;
	char path[TRACE_PATH], failed[TRACE_PATH + 1], hash[BP_BLOCKS_HASH_STR];
	char prev[BP_BLOCKS_HASH_STR] = "";
	const struct tx *t = NULL;
	uint8_t sel[4];
	size_t len, fl = 0;
	int rc, tx_failed = 0;

	cJSON_ArrayForEach(e, m->blk->traces) {
		a = cJSON_GetObjectItemCaseSensitive(e, "action");
		r = cJSON_GetObjectItemCaseSensitive(e, "result");
		ta = cJSON_GetObjectItemCaseSensitive(e, "traceAddress");
		type = cJSON_GetObjectItemCaseSensitive(e, "type");
		if (bp_blocks_jhash(e, "transactionHash", hash) == -1 || !cJSON_IsArray(ta) ||
		    !cJSON_IsString(type))
			continue;	/* a block reward, or not an entry */
		if (strcmp(hash, prev) != 0) {
			bp_strlcpy(prev, hash, sizeof(prev));
			t = bp_webhook_match_tx(m, hash);
			fl = 0;
			tx_failed = 0;
		}
		len = 0;
		path[0] = '\0';
		cJSON_ArrayForEach(i, ta)
			if (cJSON_IsNumber(i) && len + 24 < sizeof(path))
				len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%d",
				    len > 0 ? "," : "", i->valueint);
		/* The transaction failed, or this is under its last failed entry (depth first). */
		if (tx_failed || (fl > 0 && strncmp(path, failed, fl) == 0 &&
		    (path[fl] == ',' || path[fl] == '\0')))
			continue;
		if (cJSON_GetObjectItemCaseSensitive(e, "error") != NULL) {
			if (len == 0)
				tx_failed = 1;
			else
				memcpy(failed, path, (fl = len) + 1);
			continue;
		}
		if (cJSON_GetArraySize(ta) == 0)
			continue;
		rc = 0;
		if (strcmp(type->valuestring, "call") == 0) {
			ct = cJSON_GetObjectItemCaseSensitive(a, "callType");
			if (cJSON_IsString(ct) && strcmp(ct->valuestring, "call") == 0)
				rc = internal(m, f, hash, t, selector_of(m, t, sel), a, "from", "to",
				    "value", "CALL", path);
		} else if (strcmp(type->valuestring, "create") == 0) {
			/* The new contract is the result's: merge its address into a copy. */
			cJSON *o = cJSON_Duplicate(a, 1);
			const cJSON *addr = cJSON_GetObjectItemCaseSensitive(r, "address");

			if (o == NULL)
				return -1;
			if (cJSON_IsString(addr) && cJSON_AddStringToObject(o, "address",
			    addr->valuestring) != NULL)
				rc = internal(m, f, hash, t, selector_of(m, t, sel), o, "from",
				    "address", "value", "CREATE", path);
			cJSON_Delete(o);
		} else if (strcmp(type->valuestring, "suicide") == 0)
			rc = internal(m, f, hash, t, selector_of(m, t, sel), a, "address",
			    "refundAddress", "balance", "SELFDESTRUCT", path);
		if (rc == -1)
			return -1;
	}
	return 0;
}

/* INTERNAL_TRANSFER: the value-moving inner frames of the block's transactions. */
static int
match_traces(struct match *m, struct filter *f)
{
	const cJSON *txs = cJSON_GetObjectItemCaseSensitive(m->blk->block, "transactions");
	const cJSON *fr, *x = txs != NULL ? txs->child : NULL;
	const struct tx *t;
	char path[TRACE_PATH], hash[BP_BLOCKS_HASH_STR];
	uint8_t sel[4];

	if (m->blk->traces_flat)
		return match_flat(m, f);
	/* index_fetch.c checked one frame per transaction, in order. */
	cJSON_ArrayForEach(fr, m->blk->traces) {
		if (x == NULL)
			break;
		if (bp_blocks_jhash(x, "hash", hash) == 0) {
			t = bp_webhook_match_tx(m, hash);
			path[0] = '\0';
			if (match_frame(m, f, hash, t, selector_of(m, t, sel),
			    cJSON_GetObjectItemCaseSensitive(fr, "result"), 0, path, 0) == -1)
				return -1;
		}
		x = x->next;
	}
	return 0;
}
