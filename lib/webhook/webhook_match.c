/*
 * Webhook matching in the indexer's store transaction (webhook_match.h, docs/webhooks.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/account.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/address.h"
#include "evm/u256.h"
#include "index/index_read.h"
#include "webhook.h"
#include "webhook_match.h"
#include "webhook_match_int.h"
#include "webhook_b.h"
#include "webhook_queue.h"

void
bp_webhook_match_hook(const struct bp_config *cfg, struct bp_index_store_hook *out)
{
	out->block = bp_webhook_match_block;
	out->rollback = bp_webhook_match_rollback;
	out->arg = (void *)(uintptr_t)cfg;
}

/* ---- configs ---- */

int
bp_webhook_match_list(const cJSON *j, size_t w, struct list *l)
{
	const cJSON *it;

	l->w = w;
	l->n = 0;
	if (j == NULL)
		return 0;
	if (cJSON_IsString(j)) {
		if ((l->v = malloc(w)) == NULL ||
		    bp_hex_decode_fixed(j->valuestring, strlen(j->valuestring), l->v, w) == -1)
			return -1;
		l->n = 1;
		return 0;
	}
	if (!cJSON_IsArray(j) || (l->v = malloc(w * ((size_t)cJSON_GetArraySize(j) + 1))) == NULL)
		return -1;
	cJSON_ArrayForEach(it, j) {
		if (!cJSON_IsString(it) || bp_hex_decode_fixed(it->valuestring,
		    strlen(it->valuestring), l->v + l->n * w, w) == -1)
			return -1;
		l->n++;
	}
	return 0;
}

int
bp_webhook_match_has(const struct list *l, const uint8_t *v)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (memcmp(l->v + i * l->w, v, l->w) == 0)
			return 1;
	return 0;
}

static void
filter_free(struct filter *f)
{
	size_t i;

	free(f->addrs.v);
	free(f->contracts.v);
	free(f->hashes.v);
	free(f->selectors.v);
	free(f->btopics.v);
	for (i = 0; i < TOPICS; i++)
		free(f->topics[i].v);
}

/* The stored (canonical) config of f's type. 0, or -1 when it does not read. */
static int
filter_parse(struct filter *f, const char *config)
{
	cJSON *j = cJSON_Parse(config), *t, *pos;
	int rc = -1;

	if (j == NULL)
		return -1;
	if (bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "addresses"), 20,
	    &f->addrs) == -1 ||
	    bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "contracts"), 20,
	    &f->contracts) == -1 ||
	    bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "tx_hashes"), 32,
	    &f->hashes) == -1)
		goto out;
	if (f->btypes != 0) {
		rc = bp_webhook_match_b_filters(f, j);
		goto out;
	}
	if (f->type == BP_WEBHOOK_LOG) {
		if (bp_webhook_match_list(cJSON_GetObjectItemCaseSensitive(j, "address"), 20,
		    &f->addrs) == -1)
			goto out;
		t = cJSON_GetObjectItemCaseSensitive(j, "topics");
		cJSON_ArrayForEach(pos, t) {
			if (f->ntopics == TOPICS)
				goto out;
			if (!cJSON_IsNull(pos) &&
			    bp_webhook_match_list(pos, 32, &f->topics[f->ntopics]) == -1)
				goto out;
			f->ntopics++;
		}
	}
	rc = 0;
out:
	cJSON_Delete(j);
	return rc;
}

/*
 * Sets f->acct to f's account in m->acct, added with its plan's fences the first time (the
 * rows come in account order, so the last one is the one to look at). 0 or -1.
 */
static int
acct_of(struct match *m, struct filter *f)
{
	const struct bp_plan *p;
	struct bp_account a;
	struct acct *x;

	if (m->nacct > 0 && m->acct[m->nacct - 1].id == f->account_id) {
		f->acct = m->nacct - 1;
		return 0;
	}
	if ((x = realloc(m->acct, (m->nacct + 1) * sizeof(*x))) == NULL)
		return -1;
	m->acct = x;
	x = &m->acct[m->nacct];
	memset(x, 0, sizeof(*x));
	x->id = f->account_id;
	x->today = -1;
	/* An account that is gone or a plan no longer configured gets the first plan's fences. */
	p = bp_account_get(m->db, f->account_id, &a) == 1 ? bp_config_plan(m->cfg, a.plan) : NULL;
	if (p == NULL && m->cfg->nplans > 0)
		p = &m->cfg->plans[0];
	if (p != NULL) {
		x->day_cap = p->webhook_events_day;
		x->backlog_cap = p->webhook_backlog;
	}
	f->acct = m->nacct++;
	return 0;
}

/*
 * Whether f may record one more event: its account under its day's events, itself under its
 * backlog. A refusal is counted on f (dropped_day, dropped_backlog). 1 yes, 0 no, -1 error.
 */
int
bp_webhook_match_room(struct match *m, struct filter *f)
{
	struct acct *a = &m->acct[f->acct];

	if (a->day_cap > 0) {
		if (a->today < 0 &&
		    (a->today = bp_webhook_queue_recorded_today(m->db, a->id, m->day)) < 0)
			return -1;
		if (a->today + a->added >= a->day_cap) {
			f->dropped_day++;
			return 0;
		}
	}
	if (a->backlog_cap > 0) {
		if (f->backlog < 0 && (f->backlog = bp_webhook_queue_backlog(m->db, f->id)) < 0)
			return -1;
		if (f->backlog + f->added >= a->backlog_cap) {
			f->dropped_backlog++;
			return 0;
		}
	}
	return 1;
}

/* The network's webhooks that record events (all but disabled). 0 or -1. */
static int
load_filters(struct match *m)
{
	static const char sql[] = "SELECT id, event_type, config, chain, account_id, event_types"
	    " FROM webhooks"
	    " WHERE network = ? AND status <> 'disabled' ORDER BY account_id, id";
	struct bp_stmt *st;
	enum bp_db_step step;
	struct filter *f;
	size_t cap = 0;

	if ((st = bp_db_stmt(m->db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, m->network);
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (m->nf == cap) {
			cap = cap ? cap * 2 : 16;
			if ((f = realloc(m->f, cap * sizeof(*f))) == NULL)
				break;
			m->f = f;
		}
		f = &m->f[m->nf];
		memset(f, 0, sizeof(*f));
		bp_strlcpy(f->id, bp_col_text(st, 0), sizeof(f->id));
		bp_strlcpy(f->chain, bp_col_text(st, 3), sizeof(f->chain));
		f->account_id = bp_col_int(st, 4);
		f->backlog = -1;
		if (acct_of(m, f) == -1) {
			step = BP_DB_ERROR;
			break;
		}
		f->btypes = bp_col_is_null(st, 5) ? 0 : bp_webhook_btypes_parse(bp_col_text(st, 5));
		if (bp_webhook_type_parse(bp_col_text(st, 1), &f->type) == -1 ||
		    filter_parse(f, bp_col_text(st, 2)) == -1) {
			bp_warn("webhook %s: its stored config does not read; skipped", f->id);
			filter_free(f);
			continue;
		}
		m->nf++;
	}
	bp_stmt_reset(st);
	return step == BP_DB_DONE ? 0 : -1;
}

/* Keeps transaction t of the block in m (the struct match at arg); 1 to stop when out of memory. */
static int
keep_tx(const struct bp_index_block_tx *t, void *arg)
{
	struct match *m = arg;
	struct tx *x;

	if (m->ntx == m->txcap) {
		m->txcap = m->txcap ? m->txcap * 2 : 64;
		if ((x = realloc(m->tx, m->txcap * sizeof(*x))) == NULL) {
			m->nomem = 1;
			return 1;
		}
		m->tx = x;
	}
	x = &m->tx[m->ntx];
	memset(x, 0, sizeof(*x));
	bp_strlcpy(x->hash, t->hash, sizeof(x->hash));
	x->index = t->tx_index;
	if (bp_addr_parse(t->from, strlen(t->from), 0, x->from) == -1)
		return 0;
	x->has_to = t->to != NULL && bp_addr_parse(t->to, strlen(t->to), 0, x->to) == 0;
	bp_strlcpy(x->value, t->value, sizeof(x->value));
	x->status = t->status;
	x->gas_used = t->gas_used;
	m->ntx++;
	return 0;
}

/* The block's transactions as stored, through the index's reader. 0 or -1. */
static int
load_txs(struct match *m)
{
	return bp_index_each_block_tx(m->db, m->network, m->blk->number, keep_tx, m) == -1 ||
	    m->nomem ? -1 : 0;
}

const struct tx *
bp_webhook_match_tx(const struct match *m, const char *hash)
{
	size_t i;

	for (i = 0; i < m->ntx; i++)
		if (strcmp(m->tx[i].hash, hash) == 0)
			return &m->tx[i];
	return NULL;
}

/* ---- the data of an event ---- */

/* Starts data: {"chain":..,"block_number":..,"tx_hash":..}. */
static int
data_start(struct match *m, const struct filter *f, const char *tx_hash)
{
	bp_buf_reset(&m->data);
	return bp_buf_printf(&m->data, "{\"chain\":\"%s\",\"block_number\":%lld,"
	    "\"tx_hash\":\"%s\"", f->chain, (long long)m->blk->number, tx_hash);
}

/*
 * Records the event of f named by source with m->data (closed here) as its data; token, when
 * not NULL, is a contract whose symbol and decimals the worker fills in before the first
 * attempt. A (webhook, source) recorded before is left alone. 0 or -1.
 */
int
bp_webhook_match_event_id(char id[EVT_ID_MAX])
{
	uint8_t rnd[12];

	if (bp_random(rnd, sizeof(rnd)) == -1)
		return -1;
	memcpy(id, "evt_", 4);
	return bp_hex_encode_digits(rnd, sizeof(rnd), id + 4, EVT_ID_MAX - 4);
}

static int
emit(struct match *m, struct filter *f, const char *source, const char *token)
{
	char id[EVT_ID_MAX];

	if (bp_buf_adds(&m->data, "}") == -1) {
		bp_warn("webhook %s: the data of %s is too large; not recorded", f->id, source);
		return 0;
	}
	if (bp_webhook_match_event_id(id) == -1)
		return -1;
	bp_buf_reset(&m->body);
	if (bp_buf_printf(&m->body, "{\"id\":\"%s\",\"event_type\":\"%s\",\"webhook_id\":\"%s\","
	    "\"created_at\":\"%s\",\"data\":", id, bp_webhook_type_name(f->type), f->id,
	    m->now) == -1 || bp_buf_add(&m->body, m->data.data, m->data.len) == -1 ||
	    bp_buf_adds(&m->body, "}") == -1) {
		bp_warn("webhook %s: the event of %s is too large; not recorded", f->id, source);
		return 0;
	}
	return bp_webhook_match_record(m, f, id, source, token, NULL);
}

int
bp_webhook_match_record(struct match *m, struct filter *f, const char *id, const char *source,
    const char *token, const char *event_type)
{
	struct bp_webhook_event ev;
	int rc;

	ev.id = id;
	ev.webhook_id = f->id;
	ev.network = m->network;
	ev.block_number = m->blk->number;
	ev.block_hash = m->blk->hash;
	ev.source = source;
	ev.body = m->body.data;
	ev.token = token;
	ev.event_type = event_type;
	ev.now = (int64_t)time(NULL);
	if ((rc = bp_webhook_queue_add(m->db, &ev)) == 1) {
		f->added++;
		m->acct[f->acct].added++;
	}
	return rc == -1 ? -1 : 0;
}

/* address_activity of a transaction: its native value, one event per watched side. */
static int
match_tx_activity(struct match *m, struct filter *f, const struct tx *t)
{
	static const char *const dirs[2] = { "outgoing", "incoming" };
	char source[SOURCE_MAX];
	int side, rc;

	for (side = 0; side < 2; side++) {
		if (side == 0 ? !bp_webhook_match_has(&f->addrs, t->from) :
		    !t->has_to || !bp_webhook_match_has(&f->addrs, t->to))
			continue;
		if ((rc = bp_webhook_match_room(m, f)) != 1) {
			if (rc == -1)
				return -1;
			continue;
		}
		snprintf(source, sizeof(source), "tx:%s:%s", t->hash, dirs[side]);
		if (data_start(m, f, t->hash) == -1 ||
		    bp_webhook_b_put_addr(&m->data, "from", t->from) == -1 ||
		    bp_webhook_b_put_addr(&m->data, "to", t->has_to ? t->to : NULL) == -1 ||
		    bp_buf_printf(&m->data, ",\"value\":\"%s\",\"asset\":\"ETH\",\"contract\":null,"
		    "\"direction\":\"%s\"", t->value, dirs[side]) == -1 ||
		    emit(m, f, source, NULL) == -1)
			return -1;
	}
	return 0;
}

/* The receipt's effectiveGasPrice of transaction index i, as decimal wei; "" when unknown. */
void
bp_webhook_match_price(const struct match *m, int64_t i, char *out, size_t cap)
{
	const cJSON *r, *p;
	struct bp_u256 v;

	out[0] = '\0';
	if (m->blk->receipts == NULL || i < 0 || i > 1000000 ||
	    (r = cJSON_GetArrayItem(m->blk->receipts, (int)i)) == NULL ||
	    !cJSON_IsString(p = cJSON_GetObjectItemCaseSensitive(r, "effectiveGasPrice")) ||
	    bp_u256_from_quantity(&v, p->valuestring, strlen(p->valuestring)) == -1 ||
	    bp_u256_to_dec(&v, out, cap) == -1)
		out[0] = '\0';
}

/* mined_transaction: tx_hash, block_number, block_hash, from, to, status, gas_used, price. */
static int
match_tx_mined(struct match *m, struct filter *f, const struct tx *t)
{
	char source[SOURCE_MAX], price[80];
	uint8_t h[32];
	int rc;

	if (bp_hex_decode_fixed(t->hash, strlen(t->hash), h, sizeof(h)) == -1 ||
	    !bp_webhook_match_has(&f->hashes, h))
		return 0;
	if ((rc = bp_webhook_match_room(m, f)) != 1)
		return rc;
	snprintf(source, sizeof(source), "tx:%s", t->hash);
	bp_webhook_match_price(m, t->index, price, sizeof(price));
	if (data_start(m, f, t->hash) == -1 ||
	    bp_buf_printf(&m->data, ",\"block_hash\":\"%s\",\"transaction_index\":%lld",
	    m->blk->hash, (long long)t->index) == -1 ||
	    bp_webhook_b_put_addr(&m->data, "from", t->from) == -1 ||
	    bp_webhook_b_put_addr(&m->data, "to", t->has_to ? t->to : NULL) == -1 ||
	    bp_buf_printf(&m->data, ",\"value\":\"%s\",\"status\":%s", t->value,
	    t->status == 1 ? "\"success\"" : t->status == 0 ? "\"reverted\"" : "null") == -1 ||
	    (t->gas_used >= 0 ? bp_buf_printf(&m->data, ",\"gas_used\":%lld",
	    (long long)t->gas_used) : bp_buf_adds(&m->data, ",\"gas_used\":null")) == -1 ||
	    (price[0] != '\0' ? bp_buf_printf(&m->data, ",\"effective_gas_price\":\"%s\"", price) :
	    bp_buf_adds(&m->data, ",\"effective_gas_price\":null")) == -1)
		return -1;
	return emit(m, f, source, NULL);
}

/* One token movement of a log: an ERC-20 amount, or an NFT id and quantity. */
struct move {
	const struct bp_index_store_event	*e;
	size_t				 item;		/* batch index */
	struct bp_u256			 id, value;
	int				 nft;
	const char			*standard;	/* "ERC721", "ERC1155"; NULL for ERC-20 */
};

/* Token events of a movement: token_transfer, nft_transfer, address_activity. */
static int
match_move(struct match *m, struct filter *f, const struct move *mv)
{
	static const char *const dirs[2] = { "outgoing", "incoming" };
	const struct bp_index_store_event *e = mv->e;
	const uint8_t *contract = e->log.address;
	char source[SOURCE_MAX];
	int side, by_addr, rc;

	by_addr = bp_webhook_match_has(&f->addrs, e->ev.from) ||
	    bp_webhook_match_has(&f->addrs, e->ev.to);
	switch (f->type) {
	case BP_WEBHOOK_TOKEN_TRANSFER:
	case BP_WEBHOOK_NFT_TRANSFER:
		if ((f->type == BP_WEBHOOK_NFT_TRANSFER) != mv->nft ||
		    !(by_addr || bp_webhook_match_has(&f->contracts, contract)))
			return 0;
		if ((rc = bp_webhook_match_room(m, f)) != 1)
			return rc;
		snprintf(source, sizeof(source), "log:%s:%lld:%zu", e->pos.tx_hash,
		    (long long)e->pos.log_index, mv->item);
		if (data_start(m, f, e->pos.tx_hash) == -1 ||
		    bp_webhook_b_put_addr(&m->data, "contract", contract) == -1 ||
		    bp_webhook_b_put_addr(&m->data, "from", e->ev.from) == -1 ||
		    bp_webhook_b_put_addr(&m->data, "to", e->ev.to) == -1)
			return -1;
		if (!mv->nft)
			return bp_webhook_b_put_u256(&m->data, "value", &mv->value, 1) == -1 ||
			    bp_buf_adds(&m->data, ",\"symbol\":null,\"decimals\":null") == -1 ? -1 :
			    emit(m, f, source, e->pos.contract);
		return bp_webhook_b_put_u256(&m->data, "token_id", &mv->id, 1) == -1 ||
		    bp_buf_printf(&m->data, ",\"standard\":\"%s\"", mv->standard) == -1 ||
		    bp_webhook_b_put_u256(&m->data, "quantity", &mv->value, 0) == -1 ? -1 :
		    emit(m, f, source, NULL);
	case BP_WEBHOOK_ADDRESS_ACTIVITY:
		for (side = 0; side < 2; side++) {
			if (!bp_webhook_match_has(&f->addrs, side == 0 ? e->ev.from : e->ev.to))
				continue;
			if ((rc = bp_webhook_match_room(m, f)) != 1) {
				if (rc == -1)
					return -1;
				continue;
			}
			snprintf(source, sizeof(source), "log:%s:%lld:%zu:%s", e->pos.tx_hash,
			    (long long)e->pos.log_index, mv->item, dirs[side]);
			if (data_start(m, f, e->pos.tx_hash) == -1 ||
			    bp_webhook_b_put_addr(&m->data, "from", e->ev.from) == -1 ||
			    bp_webhook_b_put_addr(&m->data, "to", e->ev.to) == -1 ||
			    bp_webhook_b_put_u256(&m->data, "value", &mv->value, 1) == -1 ||
			    bp_buf_adds(&m->data, ",\"asset\":null") == -1 ||
			    bp_webhook_b_put_addr(&m->data, "contract", contract) == -1 ||
			    bp_buf_printf(&m->data, ",\"direction\":\"%s\"", dirs[side]) == -1 ||
			    emit(m, f, source, e->pos.contract) == -1)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

/* Whether log e passes f's eth_getLogs-style filter. */
static int
log_matches(const struct filter *f, const struct bp_index_store_event *e)
{
	size_t i;

	if (f->addrs.n > 0 && !bp_webhook_match_has(&f->addrs, e->log.address))
		return 0;
	for (i = 0; i < f->ntopics; i++) {
		if (f->topics[i].n == 0)
			continue;
		if (i >= e->log.ntopics || !bp_webhook_match_has(&f->topics[i], e->log.topics[i]))
			return 0;
	}
	return 1;
}

/* log: the log as eth_getLogs returns it, with block_number and log_index decoded. */
static int
match_log(struct match *m, struct filter *f, const struct bp_index_store_event *e)
{
	const struct tx *t;
	char source[SOURCE_MAX], h[BP_BLOCKS_HASH_STR], *hex = NULL;
	size_t i;
	int rc = -1;

	if (!log_matches(f, e))
		return 0;
	if ((rc = bp_webhook_match_room(m, f)) != 1)
		return rc;
	snprintf(source, sizeof(source), "log:%s:%lld", e->pos.tx_hash,
	    (long long)e->pos.log_index);
	t = bp_webhook_match_tx(m, e->pos.tx_hash);
	if ((hex = malloc(2 * e->log.datalen + 3)) == NULL ||
	    bp_hex_encode(e->log.data, e->log.datalen, hex, 2 * e->log.datalen + 3) == -1)
		goto out;
	if (data_start(m, f, e->pos.tx_hash) == -1 ||
	    bp_buf_printf(&m->data, ",\"log_index\":%lld,\"address\":\"%s\",\"topics\":[",
	    (long long)e->pos.log_index, e->pos.contract) == -1)
		goto out;
	for (i = 0; i < e->log.ntopics; i++) {
		bp_hex_encode(e->log.topics[i], 32, h, sizeof(h));
		if (bp_buf_printf(&m->data, "%s\"%s\"", i ? "," : "", h) == -1)
			goto out;
	}
	if (bp_buf_printf(&m->data, "],\"data\":\"%s\",\"blockNumber\":\"0x%llx\","
	    "\"blockHash\":\"%s\",\"transactionHash\":\"%s\",\"logIndex\":\"0x%llx\","
	    "\"removed\":false", hex, (unsigned long long)m->blk->number, m->blk->hash,
	    e->pos.tx_hash, (unsigned long long)e->pos.log_index) == -1 ||
	    (t != NULL && bp_buf_printf(&m->data, ",\"transactionIndex\":\"0x%llx\"",
	    (unsigned long long)t->index) == -1))
		goto big;
	rc = emit(m, f, source, NULL);
	goto out;
big:
	bp_warn("webhook %s: log %s is too large to send; not recorded", f->id, source);
	rc = 0;
out:
	free(hex);
	return rc;
}

/* The token movements of log e (none, one, or one per id of a batch), each through fn. */
static int
each_move(struct match *m, struct filter *f, const struct bp_index_store_event *e)
{
	struct move mv;
	size_t i;

	memset(&mv, 0, sizeof(mv));
	mv.e = e;
	switch (e->ev.kind) {
	case BP_INDEX_EVENT_ERC20:
		mv.value = e->ev.value;
		return match_move(m, f, &mv);
	case BP_INDEX_EVENT_ERC721:
		mv.nft = 1;
		mv.standard = "ERC721";
		mv.id = e->ev.id;
		bp_u256_from_u64(&mv.value, 1);
		return match_move(m, f, &mv);
	case BP_INDEX_EVENT_ERC1155_SINGLE:
		mv.nft = 1;
		mv.standard = "ERC1155";
		mv.id = e->ev.id;
		mv.value = e->ev.value;
		return match_move(m, f, &mv);
	case BP_INDEX_EVENT_ERC1155_BATCH:
		mv.nft = 1;
		mv.standard = "ERC1155";
		for (i = 0; i < e->ev.count; i++) {
			mv.item = i;
			bp_index_event_batch_item(&e->ev, i, &mv.id, &mv.value);
			if (match_move(m, f, &mv) == -1)
				return -1;
		}
		return 0;
	default:
		return 0;
	}
}

/* Sets m up for network chain and block (or the pending pseudo-block): the webhooks. 0 or -1. */
static int
match_open(struct match *m, const struct bp_config *cfg, struct bp_db *db, const char *chain,
    const struct bp_index_store_block *block)
{
	const struct bp_network *net;

	memset(m, 0, sizeof(*m));
	m->db = db;
	m->cfg = cfg;
	m->network = chain;
	m->day = (int64_t)time(NULL) / 86400;
	m->blk = block;
	bp_buf_init(&m->data, BODY_MAX);
	bp_buf_init(&m->body, BODY_MAX + 512);
	bp_time_iso(time(NULL), m->now, sizeof(m->now));
	m->chain_id = (net = bp_webhook_network(cfg, chain)) != NULL ? net->chain_id : 0;
	return load_filters(m);
}

/*
 * With ok, what each webhook recorded and dropped, counted once a block in the caller's
 * transaction; then frees m. 0, or -1 when !ok or the count failed.
 */
static int
match_close(struct match *m, int ok)
{
	size_t i;

	for (i = 0; ok && i < m->nf; i++)
		if (bp_webhook_queue_counted(m->db, m->f[i].id, m->f[i].account_id, m->day,
		    m->f[i].added, m->f[i].dropped_day, m->f[i].dropped_backlog) == -1)
			ok = 0;
	for (i = 0; i < m->nf; i++)
		filter_free(&m->f[i]);
	free(m->f);
	free(m->acct);
	free(m->tx);
	bp_buf_free(&m->data);
	bp_buf_free(&m->body);
	return ok ? 0 : -1;
}

int
bp_webhook_match_block(void *cfg, struct bp_db *db, const char *chain,
    const struct bp_index_store_block *block)
{
	struct match m;
	size_t i, j;
	int ok = 0, need_tx = 0;

	if (match_open(&m, cfg, db, chain, block) == -1)
		goto out;
	/* Format B's transactions are read whatever its types: a log's filters may need them. */
	for (i = 0; i < m.nf; i++)
		need_tx |= m.f[i].type == BP_WEBHOOK_ADDRESS_ACTIVITY ||
		    m.f[i].type == BP_WEBHOOK_MINED_TRANSACTION || m.f[i].type == BP_WEBHOOK_LOG ||
		    m.f[i].btypes != 0;
	if (need_tx && load_txs(&m) == -1)
		goto out;
	for (i = 0; i < m.nf; i++) {
		struct filter *f = &m.f[i];

		if (f->btypes != 0) {
			if (bp_webhook_match_b(&m, f) == -1)
				goto out;
			continue;
		}
		for (j = 0; j < m.ntx; j++)
			if ((f->type == BP_WEBHOOK_ADDRESS_ACTIVITY &&
			    match_tx_activity(&m, f, &m.tx[j]) == -1) ||
			    (f->type == BP_WEBHOOK_MINED_TRANSACTION &&
			    match_tx_mined(&m, f, &m.tx[j]) == -1))
				goto out;
		for (j = 0; j < block->nevents; j++)
			if ((f->type == BP_WEBHOOK_LOG ? match_log(&m, f, &block->events[j]) :
			    each_move(&m, f, &block->events[j])) == -1)
				goto out;
	}
	ok = 1;
out:
	return match_close(&m, ok);
}

int
bp_webhook_match_pending(const struct bp_config *cfg, struct bp_db *db, const char *chain,
    const cJSON *txs)
{
	/* No block yet: block 0, always final, and no reorg's rollback names it. */
	static const struct bp_index_store_block pending = { 0, "pending", "pending", NULL, 0,
	    NULL, NULL, NULL, 0 };
	struct match m;
	size_t i;
	int ok = 0;

	if (match_open(&m, cfg, db, chain, &pending) == -1)
		goto out;
	m.pending = txs;
	for (i = 0; i < m.nf; i++)
		if ((m.f[i].btypes & BP_WEBHOOK_B_BIT(BP_WEBHOOK_B_PENDING_TRANSACTION)) &&
		    bp_webhook_match_b_pending(&m, &m.f[i]) == -1)
			goto out;
	ok = 1;
out:
	return match_close(&m, ok);
}

/* Whether a webhook of network chain (not disabled) has format-B type t: 1, 0, or -1. */
static int
type_wanted(struct bp_db *db, const char *chain, enum bp_webhook_btype t)
{
	static const char sql[] = "SELECT 1 FROM webhooks WHERE network = ? AND status <> 'disabled'"
	    " AND event_types LIKE ? LIMIT 1";
	struct bp_stmt *st;
	enum bp_db_step step;
	char like[64];

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	snprintf(like, sizeof(like), "%%%s%%", bp_webhook_btype_name(t));
	bp_stmt_text(st, 1, chain);
	bp_stmt_text(st, 2, like);
	step = bp_stmt_step(st);
	bp_stmt_reset(st);
	return step == BP_DB_ROW ? 1 : step == BP_DB_DONE ? 0 : -1;
}

int
bp_webhook_match_pending_wanted(struct bp_db *db, const char *chain)
{
	return type_wanted(db, chain, BP_WEBHOOK_B_PENDING_TRANSACTION);
}

int
bp_webhook_match_traces_wanted(struct bp_db *db, const char *chain)
{
	return type_wanted(db, chain, BP_WEBHOOK_B_INTERNAL_TRANSFER);
}

int
bp_webhook_match_rollback(void *cfg, struct bp_db *db, const char *chain, int64_t number,
    const char *hash)
{
	(void)cfg;
	return bp_webhook_queue_drop_block(db, chain, number, hash);
}
