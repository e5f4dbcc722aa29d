/*
 * The notifications of a WebSocket connection (docs/websocket.md, "One follower for all
 * connections"): woken by the indexer and cron/pending through their wake files (inotify), the
 * heads from the heads feed or the chain index (ws_follow.h) to the newHeads and logs
 * subscriptions, the pending transactions (ws_pending.h) to the newPendingTransactions ones.
 */
#ifndef BP_WS_NOTIFY_H
#define BP_WS_NOTIFY_H

struct bp_ws_conn;

#define BP_WS_NOTIFY_POLL_MS	100	/* how often the index is checked for new heads */
#define BP_WS_NOTIFY_WATCH_MS	10000	/* the same when a wake file is watched (inotify) */

/* Starts the head follower of c once, and its watch of the heads' wake file; 0 or -1. */
int	bp_ws_notify_heads_start(struct bp_ws_conn *c);

/* Starts the pending-transaction reader of c once, at the last stored hash; 0 or -1. */
int	bp_ws_notify_pending_start(struct bp_ws_conn *c);

/*
 * Sends the new heads (and their logs) to c's subscriptions; timed_out: the wait ended without
 * a wake (SQLite is then asked every BP_WS_CONN_CHECK_US even when the feed answered).
 */
void	bp_ws_notify_heads(struct bp_ws_conn *c, int timed_out);

/* Sends what cron/pending stored since the last hash sent. */
void	bp_ws_notify_pending(struct bp_ws_conn *c);

#endif
