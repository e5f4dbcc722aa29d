/*
 * One WebSocket connection of ws/subscribe (docs/websocket.md): everything its process holds
 * (the config, the database handle, the admitted key, the subscriptions table, the buffers of
 * websocketd's lines), its database handle opened when needed and released when idle, and the
 * messages it queues for the client. websocketd runs one process per connection, so this is a
 * plain struct, one per process. The other lib/ws/ modules of the program work on it:
 * ws_admit (the key), ws_message (the client's messages), ws_notify (the notifications) and
 * ws_loop (the poll loop).
 */
#ifndef BP_WS_CONN_H
#define BP_WS_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "core/admit.h"
#include "core/auth.h"
#include "core/buf.h"
#include "index/index_read.h"
#include "ws_follow.h"
#include "ws_helper.h"

struct bp_config;
struct bp_db;
struct bp_db_wake;
struct bp_limits;
struct bp_network;
struct bp_req;
struct bp_ws_logs;

#define BP_WS_CONN_SUBS		32			/* subscriptions per connection */
#define BP_WS_CONN_OUT_CAP	(4u * 1024 * 1024)	/* unsent bytes before a slow reader is dropped */
#define BP_WS_CONN_SUB_ID	35			/* "0x" + 32 hex digits + NUL */
#define BP_WS_CONN_CHECK_US	INT64_C(60000000)	/* SQLite asked anyway, when the heads feed is used */
#define BP_WS_CONN_DB_KEEP_US	INT64_C(5000000)	/* an unused database handle is kept this long */

/* JSON-RPC error codes of the refusals that have no code of their own in the proxy. */
#define BP_WS_CONN_UNAUTHORIZED	(-32001)
#define BP_WS_CONN_TOO_LARGE	(-32600)

enum bp_ws_conn_kind {
	BP_WS_CONN_HEADS,
	BP_WS_CONN_LOGS,
	BP_WS_CONN_SYNCING,
	BP_WS_CONN_PENDING,
	BP_WS_CONN__KINDS
};

struct bp_ws_conn_sub {
	enum bp_ws_conn_kind	 kind;
	char			 id[BP_WS_CONN_SUB_ID];
	struct bp_ws_logs	*logs;	/* BP_WS_CONN_LOGS */
};

struct bp_metrics;
struct bp_ws_slots;

/* One connection: everything this process holds. */
struct bp_ws_conn {
	struct bp_config	*cfg;
	struct bp_db		*db;
	struct bp_limits	*lim;
	struct bp_metrics	*metrics;	/* the head's counters; NULL: none */
	struct bp_admit		 adm;
	struct bp_ws_helper	 helper;	/* the proxy (ws/proxy), started when needed */
	struct bp_req		*req;		/* the upgrade request */
	const struct bp_network	*net;
	char			 chain[BP_INDEX_CHAIN_MAX];	/* "CHAIN.NETWORK" */
	char			*key;		/* as the client sent it (a copy); NULL: none */
	const char		*addr;
	struct bp_key		 k;		/* the admitted key */
	int			 slot_fd;	/* the flock held for the connection cap; -1 */
	int64_t			 slot;		/* its number (DATABASE.ws/KEYID.N) */
	struct bp_ws_slots	*slots;		/* limits = redis://: the slot in Redis; NULL */
	uint64_t		 gen;		/* the key generation c->k was looked up at */
	int64_t			 recheck_at;	/* monotonic us: the next look at the generation */
	struct bp_ws_conn_sub	 subs[BP_WS_CONN_SUBS];
	size_t			 nsubs;
	struct bp_ws_conn_sub	*cur;		/* the subscription bp_ws_conn_emit sends for */
	int			 following;
	int			 pending;	/* a newPendingTransactions subscription is open */
	int64_t			 pending_seq;	/* the last ws_pending row sent */
	unsigned		 cu[BP_WS_CONN__KINDS];	/* what a notification of each kind costs */
	unsigned		 owed;		/* CUs of the notifications not charged yet */
	struct bp_db_wake	*wake;		/* new blocks and pending txs (db_wake.h); NULL */
	struct bp_ws_follow	 follow;
	char			 feed[4200];	/* DATABASE.heads.CHAIN (index_feed.h); "": none */
	struct bp_buf		 feedbuf;	/* the feed as last read */
	int64_t			 next_check;	/* monotonic us: the next SQLite poll regardless */
	int64_t			 db_used;	/* monotonic us: the last use of db (bp_ws_conn_db) */
	struct bp_buf		 in;		/* bytes of the message being read */
	struct bp_buf		 out;		/* bytes not yet written to websocketd */
	struct bp_buf		 msg;		/* one outgoing message being built */
	int64_t			 last_in;	/* monotonic us of the last client message */
	int			 closing;	/* send what is queued, then exit (2: at once) */
};

/* A new connection, nothing open yet, stdout made non-blocking; NULL when out of memory. */
struct bp_ws_conn *bp_ws_conn_new(void);

/*
 * Opens the config, the database, the limits and the upgrade request (REQUEST_URI,
 * REMOTE_ADDR) of c and finds its network; 0, or -1 (after queueing a refusal when the path
 * names no network). The key is admitted apart (bp_ws_admit_connection).
 */
int	bp_ws_conn_open(struct bp_ws_conn *c);

/* Closes and frees everything c holds, and c. */
void	bp_ws_conn_free(struct bp_ws_conn *c);

/* The connection's database handle, opened again if it was released; NULL on an error. */
struct bp_db *bp_ws_conn_db(struct bp_ws_conn *c);

/*
 * Closes the handle when no subscription reads SQLite at every block and it has not been used
 * for BP_WS_CONN_DB_KEEP_US (now: monotonic us).
 */
void	bp_ws_conn_release_db(struct bp_ws_conn *c, int64_t now);

/* Queues msg (one JSON text) and a newline; closes at once (closing 2) past the output cap. */
void	bp_ws_conn_send(struct bp_ws_conn *c, const char *msg, size_t len);

/* Writes what is queued; 0, or -1 when websocketd is gone. */
int	bp_ws_conn_write(struct bp_ws_conn *c);

/*
 * Queues a JSON-RPC error for a refusal with the HTTP status it stands for, in the uniform
 * shape: {"jsonrpc":"2.0","id":ID,"error":{"code":N,"message":"STATUS CODE: MESSAGE",
 * "data":{"status":STATUS,"code":"CODE"}}}.
 */
void	bp_ws_conn_refuse(struct bp_ws_conn *c, const char *id, size_t idlen, int rpc_code,
	    int status, const char *code, const char *message);

/* The JSON-RPC error code of a refusal with HTTP status. */
int	bp_ws_conn_rpc_code(int status);

/* Queues a result (raw JSON) for the id (idlen 0: null). */
void	bp_ws_conn_result(struct bp_ws_conn *c, const char *id, size_t idlen, const char *result);

/* Queues a JSON-RPC error for the id (idlen 0: null). */
void	bp_ws_conn_error(struct bp_ws_conn *c, const char *id, size_t idlen, int code,
	    const char *msg);

/*
 * Queues one notification (raw JSON result, len bytes) of the subscription c->cur, c the
 * struct bp_ws_conn at arg (the ws_logs callback). 0, or -1 when the connection is closing.
 */
int	bp_ws_conn_emit(const char *result, size_t len, void *arg);

/* The subscription of id (case-insensitive), or NULL. */
struct bp_ws_conn_sub *bp_ws_conn_sub_find(struct bp_ws_conn *c, const char *id);

/* Removes s from c's table; following and pending say what the rest still needs. */
void	bp_ws_conn_sub_remove(struct bp_ws_conn *c, struct bp_ws_conn_sub *s);

#endif
