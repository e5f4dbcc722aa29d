/*
 * The notifications of a WebSocket connection (ws_notify.h): what the follower and the pending
 * reader report, as eth_subscription messages to each subscription of its kind, their CUs owed
 * (ws_admit.h charges them once per wake).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "core/db.h"
#include "core/db_wake.h"
#include "index/index_feed.h"
#include "ws_conn.h"
#include "ws_follow.h"
#include "ws_logs.h"
#include "ws_notify.h"
#include "ws_pending.h"

/* An orphaned head: the logs sent for it go again with removed: true. */
static int
removed_fn(int64_t number, const char *hash, void *arg)
{
	struct bp_ws_conn *c = arg;
	size_t i;

	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind != BP_WS_CONN_LOGS)
			continue;
		c->cur = &c->subs[i];
		if (bp_ws_logs_removed(c->subs[i].logs, number, hash, bp_ws_conn_emit, c) == -1)
			return -1;
	}
	return 0;
}

static int
head_fn(const struct bp_index_block_head *h, void *arg)
{
	struct bp_ws_conn *c = arg;
	char core[640];
	const char *res;
	size_t i;
	int n;

	if ((res = bp_index_feed_result(h, core, sizeof(core))) == NULL) {
		bp_warn("block %lld: a stored head does not fit a message", (long long)h->number);
		return 0;
	}
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind == BP_WS_CONN_LOGS) {
			c->cur = &c->subs[i];
			n = bp_ws_conn_db(c) == NULL ? -1 : bp_ws_logs_block(c->subs[i].logs, c->db,
			    c->follow.chain, h->number, h->hash, bp_ws_conn_emit, c);
			if (n == -1 && !c->closing)
				bp_warn("block %lld: reading its logs failed", (long long)h->number);
			if (n > 0)
				c->owed += c->cu[BP_WS_CONN_LOGS];	/* a block's logs: one eth_getLogs */
			continue;
		}
		if (c->subs[i].kind != BP_WS_CONN_HEADS)
			continue;
		bp_buf_reset(&c->msg);
		if (bp_buf_printf(&c->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"eth_subscription\","
		    "\"params\":{\"subscription\":\"%s\",\"result\":%s}}", c->subs[i].id, res) == -1)
			return -1;
		bp_ws_conn_send(c, c->msg.data, c->msg.len);
		c->owed += c->cu[BP_WS_CONN_HEADS];
	}
	return c->closing ? -1 : 0;
}

void
bp_ws_notify_heads(struct bp_ws_conn *c, int timed_out)
{
	static const struct bp_ws_follow_fns fns = { removed_fn, head_fn };

	int64_t now;
	int n = -2;

	if (!c->following)
		return;
	/*
	 * The indexer's feed first: one small file read, no SQLite, so a thousand connections
	 * woken by one block do not each take SQLite's locks (every connection of the database
	 * holds a lock on its shared memory, and each lock call walks all of them). What the
	 * feed cannot continue (a gap, a reorg), and every BP_WS_CONN_CHECK_US in any case (on a
	 * quiet wake, not one that a block caused, when all the connections are busy; a feed
	 * left stale by an indexer that stopped between its commit and the feed), SQLite answers.
	 */
	if (c->feed[0] != '\0')
		n = bp_ws_follow_feed(&c->follow, c->feed, &c->feedbuf, &fns, c);
	if (n == -1)
		return;
	now = bp_mono_us();
	if (n != -2 && (!timed_out || now < c->next_check))
		return;
	c->next_check = now + BP_WS_CONN_CHECK_US;
	if ((bp_ws_conn_db(c) == NULL || bp_ws_follow_poll(&c->follow, c->db, &fns, c) == -1) &&
	    !c->closing)
		bp_warn("%s: reading the chain index failed", c->follow.chain);
}

/* One pending transaction's hash, to each newPendingTransactions subscription. */
static int
pending_fn(const char *hash, void *arg)
{
	struct bp_ws_conn *c = arg;
	char q[72];
	size_t i;

	snprintf(q, sizeof(q), "\"%s\"", hash);
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind != BP_WS_CONN_PENDING)
			continue;
		c->cur = &c->subs[i];
		if (bp_ws_conn_emit(q, strlen(q), c) == -1)
			return -1;
	}
	return 0;
}

void
bp_ws_notify_pending(struct bp_ws_conn *c)
{
	int n;

	if (!c->pending)
		return;
	do {
		n = bp_ws_conn_db(c) == NULL ? -1 :
		    bp_ws_pending_read(c->db, c->chain, &c->pending_seq, pending_fn, c);
		if (n > 0)
			c->owed += c->cu[BP_WS_CONN_PENDING];	/* one eth_getFilterChanges a read */
	} while (n == BP_WS_PENDING_READ && !c->closing);
	if (n == -1 && !c->closing)
		bp_warn("%s: reading the pending transactions failed", c->chain);
}

/*
 * Listens to channel (BP_DB_WAKE_*): the indexer's new blocks, cron/pending's hashes, on this
 * head or another (db_wake.h). Without a listener the index is polled every
 * BP_WS_NOTIFY_POLL_MS.
 */
static void
listen_to(struct bp_ws_conn *c, const char *channel)
{
	if (c->wake == NULL && (c->wake = bp_db_wake_open(c->cfg->database)) == NULL) {
		bp_warn("no wake-up listener: polling every %d ms", BP_WS_NOTIFY_POLL_MS);
		return;
	}
	if (bp_db_wake_listen(c->wake, channel) == -1)
		bp_warn("cannot listen to %s: %s", channel, strerror(errno));
}

int
bp_ws_notify_heads_start(struct bp_ws_conn *c)
{
	if (c->following)
		return 0;
	if (bp_ws_conn_db(c) == NULL || bp_ws_follow_start(&c->follow, c->db, c->chain) == -1)
		return -1;
	c->following = 1;
	listen_to(c, BP_DB_WAKE_HEADS);
	return 0;
}

int
bp_ws_notify_pending_start(struct bp_ws_conn *c)
{
	if (c->pending)
		return 0;
	if (bp_ws_conn_db(c) == NULL || bp_ws_pending_last(c->db, c->chain, &c->pending_seq) == -1)
		return -1;
	c->pending = 1;
	listen_to(c, BP_DB_WAKE_PENDING);
	return 0;
}
