/*
 * indexer: follows the head of every configured EVM network and stores what later features need
 * (schema/002_indexer.sql, docs/indexer.md): blocks, transactions, ERC-20/721/1155 transfers,
 * ERC-20 holdings and NFT ownership, and the ERC-4337 events of the network's entry point.
 *
 * A pass does, for each network, at most one batch of index_batch blocks, with the pieces of
 * lib/ (docs/indexer.md, "The pieces"):
 *   1. the node's head (evm/blocks.h); at or below the stored head, a look for a reorg at the
 *      tip (index_reorg.h);
 *   2. the batch: blocks, logs and receipts in one JSON-RPC batch, checked to be one chain that
 *      continues the stored head (index_fetch.h); a batch that does not link to the stored
 *      head is a reorg: walk back and roll back (index_reorg.h);
 *      and, when an INTERNAL_TRANSFER webhook wants them, their call traces;
 *   3. one SQLite transaction: the rows, the holdings, the store hook and the cursor
 *      (index_store.h), so a crash leaves no gap and no duplicate;
 *   4. pruning past index_retention_blocks, a bounded slice (index_prune.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "core/worker.h"
#include "evm/address.h"
#include "evm/blocks.h"
#include "evm/entry_point.h"
#include "index/index_feed.h"
#include "index/index_fetch.h"
#include "index/index_prune.h"
#include "index/index_reorg.h"
#include "index/index_store.h"
#include "net/upstream.h"
#include "token/token.h"
#include "webhook/webhook_match.h"

/* One indexed network. */
struct chain {
	struct bp_index_store_chain	 st;		/* key, confirmations, entry point, hook */
	struct bp_blocks_src	 src;		/* where and how its blocks are read */
	uint8_t			 entry_points[BP_EP__MAX][20];
	int64_t			 batch;		/* blocks per batch; halved when too large */
	int64_t			 retention;	/* 0 = keep everything */
	int			 fails;		/* failed passes in a row */
	int64_t			 retry_at;	/* monotonic us: skipped until then after a failure */
	char			 last_err[160];
	char			 feed[4200];	/* DATABASE.heads.CHAIN (index_feed.h) */
	/* The last idle save of the cursor (idle): its heads, and when (monotonic us; 0: none). */
	int64_t			 idle_head, idle_node_head, idle_saved;
};

#define IDLE_SAVE_US	INT64_C(10000000)	/* an unchanged idle cursor, saved again */

#define SUPPLY_MAX	256	/* tokens a batch marks stale; past it the rest wait for their TTL */

struct state {
	struct bp_upstream *up;		/* the process's pool, shared by the chains */
	struct bp_index_store_hook webhooks;	/* webhook matching in the store's transaction */
	struct bp_index_store_hook hook;	/* the store's: the webhooks', and on_block below */
	/* The ERC-20 contracts a batch minted or burnt, whose cached supply it makes stale. */
	char		 supply[SUPPLY_MAX][BP_BLOCKS_ADDR_STR];
	size_t		 nsupply;
	struct chain	 chains[BP_MAX_NETWORKS];
	size_t		 nchains;
};

/*
 * Saves the cursor as it is, with the node's head, when either head moved or IDLE_SAVE_US after
 * the last idle save: a save every idle pass (5 a second in a 200 ms loop) made every reader of
 * the database drop its page cache that often. BP_WORKER_IDLE, or FAILED with err set.
 */
static int
idle(struct bp_db *db, struct chain *c, const struct bp_index_store_cursor *cur, int64_t head,
    char *err, size_t errlen)
{
	int64_t now = bp_mono_us();

	if (c->idle_saved != 0 && c->idle_head == cur->head && c->idle_node_head == head &&
	    now - c->idle_saved < IDLE_SAVE_US)
		return BP_WORKER_IDLE;
	if (bp_index_store_cursor_save(db, &c->st, cur, head, 0) == -1) {
		snprintf(err, errlen, "database error");
		return BP_WORKER_FAILED;
	}
	c->idle_head = cur->head;
	c->idle_node_head = head;
	c->idle_saved = now;
	return BP_WORKER_IDLE;
}

/*
 * The store's hook: notes the ERC-20 contracts whose supply a block changed (a Transfer from or
 * to the zero address), in memory only, so the store's transaction writes nothing more; then
 * the webhook matcher's.
 */
static int
on_block(void *arg, struct bp_db *db, const char *chain, const struct bp_index_store_block *b)
{
	static const uint8_t zero[20];
	struct state *s = arg;
	size_t i, k;

	for (i = 0; i < b->nevents; i++) {
		const struct bp_index_store_event *e = &b->events[i];

		if (e->ev.kind != BP_INDEX_EVENT_ERC20 || (memcmp(e->ev.from, zero, 20) != 0 &&
		    memcmp(e->ev.to, zero, 20) != 0))
			continue;
		for (k = 0; k < s->nsupply && strcmp(s->supply[k], e->pos.contract) != 0; k++)
			;
		if (k == s->nsupply && s->nsupply < SUPPLY_MAX)
			bp_strlcpy(s->supply[s->nsupply++], e->pos.contract, sizeof(s->supply[0]));
	}
	return s->webhooks.block != NULL ? s->webhooks.block(s->webhooks.arg, db, chain, b) : 0;
}

static int
on_rollback(void *arg, struct bp_db *db, const char *chain, int64_t number, const char *hash)
{
	struct state *s = arg;

	return s->webhooks.rollback != NULL ?
	    s->webhooks.rollback(s->webhooks.arg, db, chain, number, hash) : 0;
}

/*
 * After a stored batch: the token metadata of what it minted or burnt reads totalSupply()
 * again (lib/token/token.c), in a transaction of its own. A failure only leaves the cached
 * supply to its TTL.
 */
static void
supply_changed(struct bp_db *db, struct state *s, const char *chain)
{
	const char *list[SUPPLY_MAX];
	size_t i;

	for (i = 0; i < s->nsupply; i++)
		list[i] = s->supply[i];
	if (bp_token_supply_changed(db, chain, list, s->nsupply) == -1)
		bp_warn("%s: the token supplies of %zu contracts stay cached", chain, s->nsupply);
	s->nsupply = 0;
}

/*
 * Indexes one batch of chain c. Returns BP_WORKER_IDLE when caught up, BP_WORKER_MORE when more
 * blocks are ready, BP_WORKER_FAILED with err set. *n gets the counts.
 */
static int
index_chain(struct bp_db *db, struct state *s, struct chain *c, struct bp_index_store_counts *n,
    char *err, size_t errlen)
{
	struct bp_index_store_cursor cur;
	struct bp_index_fetch b;
	int64_t head, to;
	int r, too_large, want, t;

	if (bp_index_store_cursor_load(db, &c->st, &cur) == -1) {
		snprintf(err, errlen, "database error");
		return BP_WORKER_FAILED;
	}
	if (bp_blocks_head(&c->src, &head, err, errlen) == -1)
		return BP_WORKER_FAILED;
	if (head <= cur.head) {
		/*
		 * Nothing new, but the chain's head block may differ from the one stored at its
		 * height. A node whose head is merely below ours (a lagging fallback upstream, the
		 * moment after evm_revert) is not a reorg: the first block it adds above our head
		 * is checked against our head's hash.
		 */
		if (cur.hash[0] != '\0' &&
		    (r = bp_index_reorg_check_head(db, &c->st, &c->src, &cur, head, err, errlen)) != 0)
			return r == 1 ? BP_WORKER_MORE : BP_WORKER_FAILED;
		if (head < cur.head)
			bp_log(BP_LOG_DEBUG, "%s: the node's head %lld is below the index's %lld",
			    c->st.key, (long long)head, (long long)cur.head);
		return idle(db, c, &cur, head, err, errlen);
	}
	for (;;) {
		to = cur.head + c->batch < head ? cur.head + c->batch : head;
		r = bp_index_fetch_batch(&c->src, cur.head + 1, to, cur.head, cur.hash, &b, &too_large,
		    err, errlen);
		if (r != -1 || !too_large || to == cur.head + 1)
			break;
		bp_index_fetch_free(&b);
		/* Blocks that do not fit max_response: smaller batches, for this process. */
		c->batch = (to - cur.head) / 2;
		bp_warn("%s: %s; index_batch now %lld", c->st.key, err, (long long)c->batch);
	}
	/*
	 * INTERNAL_TRANSFER webhooks need the blocks' call traces: fetched here, with no
	 * transaction open, and only when one wants them (a trace costs the node a replay).
	 */
	if (r == 0 && (want = bp_webhook_match_traces_wanted(db, c->st.key)) != 0) {
		if (want == -1) {
			snprintf(err, errlen, "database error");
			r = -1;
		} else if ((t = bp_index_fetch_traces(&c->src, &b, err, errlen)) == -1)
			r = -1;
		else if (t == 1)	/* said at create; an upstream changed since */
			bp_warn("%s: %s: no INTERNAL_TRANSFER events for blocks %lld-%lld",
			    c->st.key, err, (long long)b.r.from, (long long)b.r.to);
	}
	s->nsupply = 0;
	if (r == 0 && bp_index_store_batch(db, &c->st, &b, head, n) == -1) {
		snprintf(err, errlen, "database error while storing blocks %lld-%lld",
		    (long long)b.r.from, (long long)b.r.to);
		r = -1;
	}
	bp_index_fetch_free(&b);
	if (r == -1)
		return BP_WORKER_FAILED;
	if (r == 0)
		supply_changed(db, s, c->st.key);
	if (r == 1)
		return bp_index_reorg_walk(db, &c->st, &c->src, &cur, head, err, errlen) == -1 ?
		    BP_WORKER_FAILED : BP_WORKER_MORE;
	if (bp_index_prune(db, &c->st, c->retention, to) == -1)
		bp_warn("%s: pruning failed; will try again", c->st.key);
	return to < head ? BP_WORKER_MORE : BP_WORKER_IDLE;
}

/* Appends to the pass message; it stays NUL-terminated when it fills up. */
static void
msg_add(char *msg, size_t msglen, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
msg_add(char *msg, size_t msglen, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*off >= msglen)
		return;
	va_start(ap, fmt);
	k = vsnprintf(msg + *off, msglen - *off, fmt, ap);
	va_end(ap);
	if (k > 0)
		*off += (size_t)k;
}

/*
 * One pass: a batch (at most) for each network. A network whose pass failed is skipped for a
 * while (1 s, doubling to 60 s) so that it cannot hold up the others; the pass is then recorded
 * as failed while the healthy networks decide when the next one runs.
 */
static int
indexer_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *s = w->state;
	int any_more = 0, any_ok = 0, any_failed = 0, stored = 0;
	size_t i, off = 0;

	msg[0] = '\0';
	for (i = 0; i < s->nchains && !bp_worker_stopping(); i++) {
		struct chain *c = &s->chains[i];
		int64_t now = bp_mono_us();
		struct bp_index_store_counts n;
		char err[512];
		int r;

		if (off > 0)
			msg_add(msg, msglen, &off, "; ");
		if (c->retry_at > now) {
			any_failed = 1;
			msg_add(msg, msglen, &off, "%s: retry in %llds after: %s", c->st.key,
			    (long long)((c->retry_at - now) / 1000000 + 1), c->last_err);
			continue;
		}
		memset(&n, 0, sizeof(n));
		err[0] = '\0';
		r = index_chain(w->db, s, c, &n, err, sizeof(err));
		if (r == BP_WORKER_FAILED) {
			int64_t wait_s = c->fails < 6 ? INT64_C(1) << c->fails : 60;

			bp_err("%s: %s", c->st.key, err);
			c->fails++;
			c->retry_at = now + wait_s * 1000000;
			bp_strlcpy(c->last_err, err, sizeof(c->last_err));
			any_failed = 1;
			msg_add(msg, msglen, &off, "%s: %s", c->st.key, err);
			continue;
		}
		c->fails = 0;
		c->retry_at = 0;
		any_ok = 1;
		any_more |= r == BP_WORKER_MORE;
		if (n.blocks > 0) {
			stored = 1;
			/* Committed: the WebSocket connections read the new heads from the feed. */
			if (c->feed[0] != '\0' &&
			    bp_index_feed_write(w->db, c->st.key, c->feed) == -1)
				bp_warn("%s: the heads feed %s was not written", c->st.key, c->feed);
			bp_log(BP_LOG_DEBUG, "%s: %lld blocks, %lld txs, %lld logs, %lld transfers,"
			    " %lld 4337 events, %lld malformed", c->st.key, (long long)n.blocks,
			    (long long)n.txs, (long long)n.logs, (long long)n.transfers,
			    (long long)n.userops, (long long)n.malformed);
			msg_add(msg, msglen, &off, "%s: +%lld blocks, %lld logs", c->st.key,
			    (long long)n.blocks, (long long)n.logs);
		} else
			msg_add(msg, msglen, &off, "%s: up to date", c->st.key);
	}
	if (s->nchains == 0)
		snprintf(msg, msglen, "no evm networks to index");
	/* The WebSocket connections, on every head, wait for new blocks on this (db.h). */
	if (stored && bp_db_notify(w->db, BP_DB_WAKE_HEADS) == -1)
		bp_warn("cannot notify the new heads");
	if (any_failed && !any_ok)
		return BP_WORKER_FAILED;
	w->failed = any_failed;
	return any_more ? BP_WORKER_MORE : BP_WORKER_IDLE;
}

static int
indexer_init(struct bp_worker_ctx *w)
{
	struct bp_entry_point ep;
	struct state *s;
	size_t i;
	int v;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	w->state = s;
	if ((s->up = bp_upstream_new(w->cfg)) == NULL)
		return -1;
	bp_webhook_match_hook(w->cfg, &s->webhooks);
	s->hook.block = on_block;
	s->hook.rollback = on_rollback;
	s->hook.arg = s;
	for (i = 0; i < w->cfg->nnets; i++) {
		const struct bp_network *net = &w->cfg->nets[i];
		struct chain *c;

		if (net->kind != BP_CHAIN_EVM || !net->index)
			continue;
		c = &s->chains[s->nchains++];
		snprintf(c->st.key, sizeof(c->st.key), "%s.%s", net->chain, net->network);
		/*
		 * The feed is a head's file: on PostgreSQL the connections of the other heads could
		 * not read it, so they all follow the index's tables (docs/scale.md).
		 */
		if (!bp_db_is_url(w->cfg->database) &&
		    bp_index_feed_path(w->cfg, c->st.key, c->feed, sizeof(c->feed)) == -1)
			return -1;
		c->st.start_block = net->start_block;
		c->st.confirmations = net->confirmations;
		c->st.hook = &s->hook;
		/* Every EntryPoint version's events: ops of other bundlers are looked up here. */
		for (v = 0; v < BP_EP__MAX; v++) {
			bp_entry_point_of(net, (enum bp_ep_version)v, &ep);
			if (ep.entry_point[0] != '\0' && bp_addr_parse(ep.entry_point,
			    strlen(ep.entry_point), 0, c->entry_points[c->st.n_entry_points]) == 0)
				c->st.n_entry_points++;
		}
		c->st.entry_points = c->entry_points;
		c->src.up = s->up;
		c->src.net = net;
		c->src.name = c->st.key;
		c->src.logs_range = net->index_logs_range < net->index_batch ?
		    net->index_logs_range : net->index_batch;
		c->src.receipts = net->index_receipts;
		c->batch = net->index_batch;
		c->retention = net->index_retention_blocks;
	}
	return 0;
}

static void
indexer_fini(struct bp_worker_ctx *w)
{
	struct state *s = w->state;
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nchains; i++)
		free(s->chains[i].st.data);
	bp_upstream_free(s->up);
	free(s);
	w->state = NULL;
}

static const struct bp_worker_def indexer = {
	"indexer", indexer_init, indexer_pass, indexer_fini, NULL,
};

int
main(int argc, char *argv[])
{
	return bp_worker_main(&indexer, argc, argv);
}
