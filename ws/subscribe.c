/*
 * GET /v1/ws/{chain}/{network}: WebSocket subscriptions (SPEC.md section 4; docs/websocket.md).
 *
 * websocketd runs this program once per connection, after the upgrade, with the request in CGI
 * variables (REQUEST_URI, QUERY_STRING, REMOTE_ADDR, HTTP_*) and one JSON message a line on stdin
 * and stdout. The program:
 *
 *  - admits the connection: the key from ?apiKey=, else X-API-Key or Bearer on the upgrade
 *    (lib/core/admit.h), the rpc:read scope, live keys only on mainnets, and a slot among the key's
 *    plan's ws_connections; a refusal is one JSON-RPC error naming the HTTP status, then close;
 *  - admits every message again (the key may have been revoked; requests per second) and answers
 *    eth_subscribe / eth_unsubscribe itself; every other message goes through the JSON-RPC proxy
 *    of /v1/rpc (lib/rpc/rpc_proxy.h): the same envelope rules, method classes, scopes and CUs;
 *  - sends newHeads from the chain index (lib/ws/ws_follow.h): the indexer is the one follower of
 *    the node, whatever the number of connections;
 *  - stays bounded: a message cap (max_body), a cap on subscriptions, an idle timeout, and an
 *    output buffer cap past which a reader too slow to keep up is disconnected.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/admit.h"
#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/http.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/util.h"
#include "core/wake.h"
#include "index/index_feed.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_methods.h"
#include "ws/ws_follow.h"
#include "ws/ws_helper.h"
#include "ws/ws_logs.h"
#include "ws/ws_pending.h"
#include "ws/ws_slot.h"

#define MAX_SUBS	32			/* subscriptions per connection */
#define OUT_CAP		(4u * 1024 * 1024)	/* unsent bytes before a slow reader is dropped */
#define IDLE_MS		(300 * 1000)		/* no message and no subscription: close */
#define POLL_MS		100			/* how often the index is checked for new heads */
#define WATCH_MS	10000			/* the same when a wake file is watched (inotify) */
#define SUB_ID_LEN	35			/* "0x" + 32 hex digits + NUL */
#define WS_NICE		10			/* the connections' niceness (main) */
#define CHECK_US	INT64_C(60000000)	/* SQLite asked anyway, when the heads feed is used */
#define DB_KEEP_US	INT64_C(5000000)	/* an unused database handle is kept this long */

/* JSON-RPC error codes of the refusals that have no code of their own in the proxy. */
#define CODE_UNAUTHORIZED	(-32001)
#define CODE_TOO_LARGE		(-32600)

extern char **environ;

enum sub_kind { SUB_HEADS, SUB_LOGS, SUB_SYNCING, SUB_PENDING, SUB__MAX };

struct sub {
	enum sub_kind	 kind;
	char		 id[SUB_ID_LEN];
	struct bp_ws_logs *logs;	/* SUB_LOGS */
};

/* One connection: everything this process holds. */
struct conn {
	struct bp_config	*cfg;
	struct bp_db		*db;
	struct bp_limits	*lim;
	struct bp_admit		 adm;
	struct bp_ws_helper	 helper;	/* the proxy (ws/proxy), started when needed */
	struct bp_req		*req;		/* the upgrade request */
	const struct bp_network	*net;
	char			 chain[BP_INDEX_CHAIN_MAX];	/* "CHAIN.NETWORK" */
	char			*key;		/* as the client sent it (a copy); NULL: none */
	const char		*addr;
	struct bp_key		 k;		/* the admitted key */
	int			 slot_fd;	/* the flock held for the connection cap; -1 */
	struct sub		 subs[MAX_SUBS];
	size_t			 nsubs;
	struct sub		*cur;		/* the subscription emit_msg sends for */
	int			 following;
	int			 pending;	/* a newPendingTransactions subscription is open */
	int64_t			 pending_seq;	/* the last ws_pending row sent */
	unsigned		 cu[SUB__MAX];	/* what a notification of each kind costs */
	unsigned		 owed;		/* CUs of the notifications not charged yet */
	int			 wake_fd;	/* inotify on DATABASE.heads: wakes on a new block; -1 */
	struct bp_ws_follow	 follow;
	char			 feed[4200];	/* DATABASE.heads.CHAIN (index_feed.h); "": none */
	struct bp_buf		 feedbuf;	/* the feed as last read */
	int64_t			 next_check;	/* monotonic us: the next SQLite poll regardless */
	int64_t			 db_used;	/* monotonic us: the last use of db (conn_db) */
	struct bp_buf		 in;		/* bytes of the message being read */
	struct bp_buf		 out;		/* bytes not yet written to websocketd */
	struct bp_buf		 msg;		/* one outgoing message being built */
	int64_t			 last_in;	/* monotonic us of the last client message */
	int			 closing;	/* send what is queued, then exit */
};

/* Queues msg (one JSON text) and a newline; exits the loop when the reader is too slow. */
/* The connection's database handle, opened again if it was released; NULL on an error. */
static struct bp_db *
conn_db(struct conn *c)
{
	if (c->db == NULL) {
		if ((c->db = bp_db_open(c->cfg->database, 0)) == NULL)
			return NULL;
		c->adm.db = c->db;
		c->req->db = c->db;
		/* PRAGMA data_version belongs to a handle: read again from the last head sent. */
		c->follow.version = -1;
	}
	c->db_used = bp_mono_us();
	return c->db;
}

/*
 * Closes the handle when no subscription reads SQLite at every block (logs and pending ones do)
 * and it has not been used for DB_KEEP_US. Every open handle holds a lock on the database's
 * shared memory for its life, and every SQLite lock call on the machine walks all of them: a
 * thousand idle connections made each request of the FastCGI programs slower.
 */
static void
release_db(struct conn *c, int64_t now)
{
	size_t i;

	if (c->db == NULL || c->pending || now - c->db_used < DB_KEEP_US)
		return;
	for (i = 0; i < c->nsubs; i++)
		if (c->subs[i].kind == SUB_LOGS)
			return;
	bp_db_close(c->db);
	c->db = NULL;
	c->adm.db = NULL;
	c->req->db = NULL;
}

static void
send_line(struct conn *c, const char *msg, size_t len)
{
	size_t i, at = c->out.len;

	if (bp_buf_add(&c->out, msg, len) == -1 || bp_buf_add(&c->out, "\n", 1) == -1) {
		if (c->closing != 2)
			bp_warn("a slow reader: more than %u bytes unsent, disconnecting", OUT_CAP);
		c->out.len = at;
		c->closing = 2;
		return;
	}
	/* A raw newline in JSON text is whitespace: line mode needs the message on one line. */
	for (i = at; i < c->out.len - 1; i++)
		if (c->out.data[i] == '\n' || c->out.data[i] == '\r')
			c->out.data[i] = ' ';
}

/*
 * Sends a JSON-RPC error for a refusal with the HTTP status it stands for, in the uniform shape:
 * {"jsonrpc":"2.0","id":ID,"error":{"code":N,"message":"STATUS CODE: MESSAGE",
 * "data":{"status":STATUS,"code":"CODE"}}}.
 */
static void
send_refusal(struct conn *c, const char *id, size_t idlen, int rpc_code, int status,
    const char *code, const char *message)
{
	char text[BP_ADMIT_MSG + 64];

	snprintf(text, sizeof(text), "%d %s: %s", status, code, message);
	bp_buf_reset(&c->msg);
	if (bp_rpc_envelope_error_obj(&c->msg, id, idlen, rpc_code, text) == -1 || c->msg.len < 2)
		return;
	c->msg.len -= 2;	/* drop the closing "}}" to add data to the error object */
	if (bp_buf_printf(&c->msg, ",\"data\":{\"status\":%d,\"code\":\"", status) == -1 ||
	    bp_buf_json_str(&c->msg, code) == -1 || bp_buf_adds(&c->msg, "\"}}}") == -1)
		return;
	send_line(c, c->msg.data, c->msg.len);
}

static int
rpc_code_of(int status)
{
	switch (status) {
	case 401:
		return CODE_UNAUTHORIZED;
	case 403:
		return BP_JSONRPC_FORBIDDEN;
	case 429:
		return BP_JSONRPC_LIMITED;
	case 413:
		return CODE_TOO_LARGE;
	default:
		return BP_JSONRPC_INTERNAL_ERROR;
	}
}

static void
send_admission(struct conn *c, const char *id, size_t idlen, const struct bp_admission *ad)
{
	send_refusal(c, id, idlen, rpc_code_of(ad->status), ad->status, ad->code, ad->message);
}

/* Authenticates the connection; 0, or -1 after queueing the refusal. */
static int
admit_connection(struct conn *c, struct bp_req *r)
{
	struct bp_admission ad;
	const char *q = bp_req_query(r, "apiKey");

	/* A copy: the request's storage is reused for every proxied message. */
	if (q == NULL || *q == '\0')
		q = bp_req_api_key(r);
	if (q != NULL && (c->key = strdup(q)) == NULL)
		return -1;
	if (bp_admit(&c->adm, c->key, c->addr, 0, 0, &ad) != 0) {
		if (ad.auth == BP_AUTH_MISSING)
			snprintf(ad.message, sizeof(ad.message), "missing API key: pass it as "
			    "?apiKey=KEY, or in X-API-Key or \"Authorization: Bearer KEY\" on the upgrade");
		send_admission(c, NULL, 0, &ad);
		return -1;
	}
	c->k = ad.key;
	if (!(c->k.scopes & BP_SCOPE_BIT(BP_SCOPE_RPC_READ))) {
		send_refusal(c, NULL, 0, BP_JSONRPC_FORBIDDEN, 403, "forbidden",
		    "this API key lacks the rpc:read scope, which WebSocket subscriptions need");
		return -1;
	}
	if (c->k.test && !c->net->testnet) {
		send_refusal(c, NULL, 0, BP_JSONRPC_FORBIDDEN, 403, "forbidden", "this network is "
		    "a mainnet: test keys work on testnets only; use a live key");
		return -1;
	}
	c->slot_fd = bp_ws_slot_take(c->cfg->database, &c->k);
	if (c->slot_fd == -2) {
		char m[128];

		snprintf(m, sizeof(m), "too many open WebSocket connections for this key (the %s "
		    "plan allows %lld)", c->k.plan.name, (long long)c->k.plan.ws_connections);
		send_refusal(c, NULL, 0, BP_JSONRPC_LIMITED, 429, "rate_limited", m);
		return -1;
	}
	if (c->slot_fd == -1) {
		send_refusal(c, NULL, 0, BP_JSONRPC_INTERNAL_ERROR, 500, "internal_error",
		    "the connection count is unavailable");
		return -1;
	}
	return 0;
}

/* ---- subscriptions ---- */

/* Sends one log of the subscription c->cur. */
static int
emit_msg(const char *log, size_t len, void *arg)
{
	struct conn *c = arg;

	bp_buf_reset(&c->msg);
	if (bp_buf_printf(&c->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"eth_subscription\","
	    "\"params\":{\"subscription\":\"%s\",\"result\":", c->cur->id) == -1 ||
	    bp_buf_add(&c->msg, log, len) == -1 || bp_buf_adds(&c->msg, "}}") == -1)
		return -1;
	send_line(c, c->msg.data, c->msg.len);
	return c->closing ? -1 : 0;
}

/* An orphaned head: the logs sent for it go again with removed: true. */
static int
removed_fn(int64_t number, const char *hash, void *arg)
{
	struct conn *c = arg;
	size_t i;

	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind != SUB_LOGS)
			continue;
		c->cur = &c->subs[i];
		if (bp_ws_logs_removed(c->subs[i].logs, number, hash, emit_msg, c) == -1)
			return -1;
	}
	return 0;
}

static int
head_fn(const struct bp_index_block_head *h, void *arg)
{
	struct conn *c = arg;
	char core[640];
	const char *res;
	size_t i;
	int n;

	if ((res = bp_index_feed_result(h, core, sizeof(core))) == NULL) {
		bp_warn("block %lld: a stored head does not fit a message", (long long)h->number);
		return 0;
	}
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind == SUB_LOGS) {
			c->cur = &c->subs[i];
			n = conn_db(c) == NULL ? -1 : bp_ws_logs_block(c->subs[i].logs, c->db,
			    c->follow.chain, h->number, h->hash, emit_msg, c);
			if (n == -1 && !c->closing)
				bp_warn("block %lld: reading its logs failed", (long long)h->number);
			if (n > 0)
				c->owed += c->cu[SUB_LOGS];	/* a block's logs: one eth_getLogs */
			continue;
		}
		if (c->subs[i].kind != SUB_HEADS)
			continue;
		bp_buf_reset(&c->msg);
		if (bp_buf_printf(&c->msg, "{\"jsonrpc\":\"2.0\",\"method\":\"eth_subscription\","
		    "\"params\":{\"subscription\":\"%s\",\"result\":%s}}", c->subs[i].id, res) == -1)
			return -1;
		send_line(c, c->msg.data, c->msg.len);
		c->owed += c->cu[SUB_HEADS];
	}
	return c->closing ? -1 : 0;
}

static void
follow(struct conn *c, int timed_out)
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
	 * feed cannot continue (a gap, a reorg), and every CHECK_US in any case (on a quiet
	 * wake, not one that a block caused, when all the connections are busy; a feed left
	 * stale by an indexer that stopped between its commit and the feed), SQLite answers.
	 */
	if (c->feed[0] != '\0')
		n = bp_ws_follow_feed(&c->follow, c->feed, &c->feedbuf, &fns, c);
	if (n == -1)
		return;
	now = bp_mono_us();
	if (n != -2 && (!timed_out || now < c->next_check))
		return;
	c->next_check = now + CHECK_US;
	if ((conn_db(c) == NULL || bp_ws_follow_poll(&c->follow, c->db, &fns, c) == -1) &&
	    !c->closing)
		bp_warn("%s: reading the chain index failed", c->follow.chain);
}

/* One pending transaction's hash, to each newPendingTransactions subscription. */
static int
pending_fn(const char *hash, void *arg)
{
	struct conn *c = arg;
	char q[72];
	size_t i;

	snprintf(q, sizeof(q), "\"%s\"", hash);
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind != SUB_PENDING)
			continue;
		c->cur = &c->subs[i];
		if (emit_msg(q, strlen(q), c) == -1)
			return -1;
	}
	return 0;
}

/*
 * Charges the CUs of the notifications sent since the last call, once per wake rather than per
 * message (docs/websocket.md, "Accounting"). Notifications are never held back: when the key's
 * CUs per second are spent the limits count nothing (they refuse), and the key's own messages
 * are refused until they refill.
 */
static void
charge_notifications(struct conn *c)
{
	struct bp_limit_state st;

	if (c->owed == 0)
		return;
	(void)bp_admit_charge(c->lim, &c->k, 0, 0, c->owed, &st);
	c->owed = 0;
}

/* The CUs of a notification of each kind: those of the read a client would poll instead. */
static void
price_notifications(struct conn *c)
{
	static const char *const polled[SUB__MAX] = {
		[SUB_HEADS] = "eth_getBlockByNumber",
		[SUB_LOGS] = "eth_getLogs",
		[SUB_SYNCING] = "eth_syncing",
		[SUB_PENDING] = "eth_getFilterChanges",
	};
	const struct bp_rpc_method *m;
	size_t i;

	for (i = 0; i < SUB__MAX; i++) {
		m = bp_rpc_method(&bp_rpc_node_table, c->net->kind, polled[i], strlen(polled[i]));
		c->cu[i] = m != NULL ? m->cu : 1;
	}
}

/* Sends what cron/pending stored since the last hash sent. */
static void
follow_pending(struct conn *c)
{
	int n;

	if (!c->pending)
		return;
	do {
		n = conn_db(c) == NULL ? -1 :
		    bp_ws_pending_read(c->db, c->chain, &c->pending_seq, pending_fn, c);
		if (n > 0)
			c->owed += c->cu[SUB_PENDING];	/* one eth_getFilterChanges a read */
	} while (n == BP_WS_PENDING_READ && !c->closing);
	if (n == -1 && !c->closing)
		bp_warn("%s: reading the pending transactions failed", c->chain);
}

/* Answers a result (raw JSON) for the item's id. */
static void
send_result(struct conn *c, const char *id, size_t idlen, const char *result)
{
	bp_buf_reset(&c->msg);
	if (bp_buf_adds(&c->msg, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    bp_buf_add(&c->msg, idlen ? id : "null", idlen ? idlen : 4) == -1 ||
	    bp_buf_adds(&c->msg, ",\"result\":") == -1 || bp_buf_adds(&c->msg, result) == -1 ||
	    bp_buf_adds(&c->msg, "}") == -1)
		return;
	send_line(c, c->msg.data, c->msg.len);
}

static void
send_error(struct conn *c, const char *id, size_t idlen, int code, const char *msg)
{
	bp_buf_reset(&c->msg);
	if (bp_rpc_envelope_error_obj(&c->msg, id, idlen, code, msg) == 0)
		send_line(c, c->msg.data, c->msg.len);
}

/*
 * The first string of params (the raw array) into kind; the rest is not read (newHeads takes no
 * more). 0, or -1 when params is not an array starting with a short plain string.
 */
static int
sub_kind_arg(const char *params, size_t len, char *kind, size_t cap)
{
	size_t i = 0, n = 0;

	while (i < len && (params[i] == ' ' || params[i] == '\t' || params[i] == '\n' ||
	    params[i] == '\r'))
		i++;
	if (i >= len || params[i++] != '[')
		return -1;
	while (i < len && (params[i] == ' ' || params[i] == '\t' || params[i] == '\n' ||
	    params[i] == '\r'))
		i++;
	if (i >= len || params[i++] != '"')
		return -1;
	for (; i < len && params[i] != '"'; i++) {
		if (params[i] == '\\' || n + 1 >= cap)
			return -1;
		kind[n++] = params[i];
	}
	kind[n] = '\0';
	return i < len ? 0 : -1;
}

/*
 * Wakes the follower when the indexer has stored a block (it touches DATABASE.heads, wake.h)
 * rather than on a timer or on every commit. Without that file, every commit (DATABASE-wal);
 * without either, the index is polled every POLL_MS.
 */
static void
watch_heads(struct conn *c)
{
	char path[4200];

	if (bp_wake_path(c->cfg->database, BP_WAKE_HEADS, path, sizeof(path)) == 0 &&
	    bp_wake_watch(&c->wake_fd, path) == 0)
		return;
	if (bp_wake_path(c->cfg->database, "-wal", path, sizeof(path)) == -1)
		return;
	if (c->wake_fd == -1 && (c->wake_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1) {
		bp_warn("no inotify instance (%s; fs.inotify.max_user_instances is a limit per user"
		    " and each connection takes one): polling every %d ms", strerror(errno), POLL_MS);
		return;
	}
	if (inotify_add_watch(c->wake_fd, path, IN_MODIFY) == -1) {
		close(c->wake_fd);
		c->wake_fd = -1;
	}
}

/* Starts the head follower once; 0 or -1. */
static int
start_following(struct conn *c)
{
	if (c->following)
		return 0;
	if (conn_db(c) == NULL || bp_ws_follow_start(&c->follow, c->db, c->chain) == -1)
		return -1;
	c->following = 1;
	if (c->wake_fd == -1)
		watch_heads(c);
	return 0;
}

/* Starts the pending-transaction reader once, at the last stored hash; 0 or -1. */
static int
start_pending(struct conn *c)
{
	char path[4200];

	if (c->pending)
		return 0;
	if (conn_db(c) == NULL || bp_ws_pending_last(c->db, c->chain, &c->pending_seq) == -1)
		return -1;
	c->pending = 1;
	if (bp_wake_path(c->cfg->database, BP_WAKE_PENDING, path, sizeof(path)) == 0)
		(void)bp_wake_watch(&c->wake_fd, path);
	return 0;
}

/*
 * Forwards a message to the connection's proxy (ws/proxy: the code of POST /v1/rpc, in a process
 * started at the first message that needs it, so a connection that only subscribes never loads
 * libcurl; docs/websocket.md, "Memory"). Returns the HTTP status, the body in *body; 500 with
 * *body NULL when the proxy is unavailable.
 */
static int
call_proxy(struct conn *c, const char *body, size_t len, const char **out, size_t *outlen)
{
	int status;

	*out = NULL;
	*outlen = 0;
	if (bp_ws_helper_start(&c->helper, "proxy", c->net->chain, c->net->network, c->addr,
	    c->key) == -1 || bp_ws_helper_call(&c->helper, body, len, &status, out, outlen) == -1)
		return 500;
	return status;
}

/*
 * The syncing subscription: the node's eth_syncing once, at subscribe (a node that serves the
 * index is not expected to start syncing again; docs/websocket.md).
 */
static void
send_syncing(struct conn *c, struct sub *s)
{
	static const char ask[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"eth_syncing\","
	    "\"params\":[]}";
	const char *ans;
	size_t anslen;
	cJSON *j = NULL;
	char *txt = NULL;

	/* Through the proxy, which charges it as the eth_syncing it is. */
	if (call_proxy(c, ask, sizeof(ask) - 1, &ans, &anslen) != 200 ||
	    (j = cJSON_ParseWithLength(ans, anslen)) == NULL ||
	    !cJSON_HasObjectItem(j, "result") ||
	    (txt = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(j, "result"))) == NULL)
		bp_warn("eth_syncing: no answer from the node");
	else {
		c->cur = s;
		emit_msg(txt, strlen(txt), c);
	}
	free(txt);
	cJSON_Delete(j);
}

static void
subscribe(struct conn *c, const char *body, const struct bp_rpc_envelope_item *it)
{
	const char *id = body + it->id.off;
	unsigned char rnd[16];
	char kind[32], quoted[SUB_ID_LEN + 2], why[128];
	struct sub sub, *s;

	if (it->params.len == 0 || sub_kind_arg(body + it->params.off, it->params.len, kind,
	    sizeof(kind)) == -1) {
		send_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, "invalid params: "
		    "eth_subscribe takes [\"newHeads\"], [\"logs\", {address, topics}], "
		    "[\"newPendingTransactions\"] or [\"syncing\"]");
		return;
	}
	memset(&sub, 0, sizeof(sub));
	if (strcmp(kind, "newHeads") == 0)
		sub.kind = SUB_HEADS;
	else if (strcmp(kind, "logs") == 0)
		sub.kind = SUB_LOGS;
	else if (strcmp(kind, "syncing") == 0)
		sub.kind = SUB_SYNCING;
	else if (strcmp(kind, "newPendingTransactions") == 0)
		sub.kind = SUB_PENDING;
	else {
		send_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, "invalid params: unknown "
		    "subscription kind (newHeads, logs, newPendingTransactions and syncing are "
		    "offered)");
		return;
	}
	if (c->nsubs >= MAX_SUBS) {
		send_error(c, id, it->id.len, BP_JSONRPC_LIMITED, "too many subscriptions on this "
		    "connection (at most 32): unsubscribe first");
		return;
	}
	if (sub.kind == SUB_PENDING && start_pending(c) == -1) {
		send_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR,
		    "internal error: the pending transactions are unavailable");
		return;
	}
	if ((sub.kind == SUB_HEADS || sub.kind == SUB_LOGS) && start_following(c) == -1) {
		send_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR,
		    "internal error: the chain index is unavailable");
		return;
	}
	if (sub.kind == SUB_LOGS && (sub.logs = bp_ws_logs_new(body + it->params.off,
	    it->params.len, why, sizeof(why))) == NULL) {
		char m[192];

		snprintf(m, sizeof(m), "invalid params: %s", why);
		send_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, m);
		return;
	}
	if (bp_random(rnd, sizeof(rnd)) == -1 ||
	    bp_hex_encode(rnd, sizeof(rnd), sub.id, sizeof(sub.id)) == -1) {
		bp_ws_logs_free(sub.logs);
		send_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR, "internal error");
		return;
	}
	s = &c->subs[c->nsubs];
	*s = sub;
	c->nsubs++;
	snprintf(quoted, sizeof(quoted), "\"%s\"", s->id);
	send_result(c, id, it->id.len, quoted);
	if (s->kind == SUB_SYNCING)
		send_syncing(c, s);
}

static void
unsubscribe(struct conn *c, const char *body, const struct bp_rpc_envelope_item *it)
{
	const char *id = body + it->id.off;
	char sid[SUB_ID_LEN + 8];
	size_t i;

	if (it->params.len == 0 || sub_kind_arg(body + it->params.off, it->params.len, sid,
	    sizeof(sid)) == -1) {
		send_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS,
		    "invalid params: eth_unsubscribe takes [SUBSCRIPTION_ID]");
		return;
	}
	for (i = 0; i < c->nsubs; i++)
		if (strcasecmp(c->subs[i].id, sid) == 0)
			break;
	if (i == c->nsubs) {
		send_result(c, id, it->id.len, "false");
		return;
	}
	bp_ws_logs_free(c->subs[i].logs);
	c->subs[i] = c->subs[--c->nsubs];
	c->following = 0;
	c->pending = 0;
	for (i = 0; i < c->nsubs; i++) {
		if (c->subs[i].kind == SUB_HEADS || c->subs[i].kind == SUB_LOGS)
			c->following = 1;
		if (c->subs[i].kind == SUB_PENDING)
			c->pending = 1;
	}
	send_result(c, id, it->id.len, "true");
}

/* ---- messages ---- */

/* Forwards a message through the JSON-RPC proxy of /v1/rpc and queues its answer. */
static void
proxy(struct conn *c, char *body, size_t len, const struct bp_rpc_envelope_item *first, int single)
{
	struct bp_rpc_scan_span idspan = { 0, 0 };
	const char *ans;
	size_t anslen;
	int status;

	status = call_proxy(c, body, len, &ans, &anslen);
	if (status == 200) {
		send_line(c, ans, anslen);
		return;
	}
	/* The uniform error body of a refusal: the status, code and message, as a JSON-RPC error. */
	if (single && first->code == 0)
		idspan = first->id;
	{
		cJSON *j = ans != NULL ? cJSON_ParseWithLength(ans, anslen) : NULL;
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
		const cJSON *code = cJSON_GetObjectItemCaseSensitive(e, "code");
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");

		send_refusal(c, body + idspan.off, idspan.len, rpc_code_of(status), status,
		    cJSON_IsString(code) ? code->valuestring : "internal_error",
		    cJSON_IsString(msg) ? msg->valuestring : "the proxy is unavailable");
		cJSON_Delete(j);
	}
}

/* Handles one message (a line without its newline). */
static void
message(struct conn *c, char *body, size_t len)
{
	struct bp_admission ad;
	struct bp_rpc_envelope_item it;
	struct bp_rpc_envelope_body b;
	const struct bp_rpc_method *m;
	struct bp_limit_state st;
	enum bp_limit_verdict v;
	int sub = 0, unsub = 0, parsed;

	c->last_in = bp_mono_us();
	memset(&it, 0, sizeof(it));
	parsed = bp_rpc_envelope_parse(body, len, (size_t)c->cfg->max_batch, &it, 1, &b) == 0;
	if (parsed && !b.batch && it.code == 0) {
		sub = it.method_len == 13 && memcmp(it.method, "eth_subscribe", 13) == 0;
		unsub = it.method_len == 15 && memcmp(it.method, "eth_unsubscribe", 15) == 0;
	}
	if (conn_db(c) == NULL) {
		send_refusal(c, body + it.id.off, parsed && !b.batch ? it.id.len : 0,
		    rpc_code_of(500), 500, "internal_error", "the database is unavailable");
		return;
	}
	/* Every message is a request: the key again (revocation) and requests per second. */
	if (bp_admit(&c->adm, c->key, c->addr, 0, 0, &ad) != 0) {
		send_admission(c, body + it.id.off, parsed && !b.batch ? it.id.len : 0, &ad);
		if (ad.status != 429)
			c->closing = 1;
		return;
	}
	c->k = ad.key;
	if (!sub && !unsub) {
		proxy(c, body, len, &it, parsed && !b.batch);
		return;
	}
	/* Priced like the proxy's methods: a request for the day and the method's CUs. */
	m = bp_rpc_method(&bp_rpc_node_table, c->net->kind, it.method, it.method_len);
	v = bp_admit_charge(c->lim, &c->k, 0, 1, m != NULL ? m->cu : 1, &st);
	if (v != BP_LIMIT_OK) {
		char text[160];

		snprintf(text, sizeof(text), "rate limited: %s exceeded; retry after %lld s",
		    bp_limit_what(v), (long long)st.retry_after);
		send_error(c, body + it.id.off, it.id.len, BP_JSONRPC_LIMITED, text);
		return;
	}
	if (sub)
		subscribe(c, body, &it);
	else
		unsubscribe(c, body, &it);
}

/* Reads what stdin has; handles each whole line. 0, or -1 at end of input or on an error. */
static int
read_input(struct conn *c)
{
	char chunk[16384];
	ssize_t n;
	size_t i, start = 0;

	n = read(STDIN_FILENO, chunk, sizeof(chunk));
	if (n == 0 || (n == -1 && errno != EINTR && errno != EAGAIN))
		return -1;
	if (n < 0)
		return 0;
	for (i = 0; i < (size_t)n; i++) {
		if (chunk[i] != '\n')
			continue;
		if (bp_buf_add(&c->in, chunk + start, i - start) == -1)
			goto toolarge;
		start = i + 1;
		if (c->in.len > 0 && c->in.data[c->in.len - 1] == '\r')
			c->in.len--;
		if (c->in.len > 0) {
			/* NUL-terminated for the proxy, which reads a body as a C string too. */
			if (bp_buf_add(&c->in, "", 1) == -1)
				goto toolarge;
			c->in.len--;
			message(c, c->in.data, c->in.len);
		}
		bp_buf_reset(&c->in);
		if (c->closing)
			return 0;
	}
	if (bp_buf_add(&c->in, chunk + start, (size_t)n - start) == -1)
		goto toolarge;
	return 0;
toolarge:
	{
		char text[96];

		snprintf(text, sizeof(text), "message larger than %lld bytes",
		    (long long)c->cfg->max_body);
		send_refusal(c, NULL, 0, CODE_TOO_LARGE, 413, "payload_too_large", text);
	}
	c->closing = 1;
	return 0;
}

/* Writes what is queued; 0, or -1 when websocketd is gone. */
static int
write_output(struct conn *c)
{
	ssize_t n;

	if (c->out.len == 0)
		return 0;
	n = write(STDOUT_FILENO, c->out.data, c->out.len);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	memmove(c->out.data, c->out.data + n, c->out.len - (size_t)n);
	c->out.len -= (size_t)n;
	return 0;
}

static void
run(struct conn *c)
{
	struct pollfd pfd[3];
	int64_t now;
	int timeout, ready;

	c->last_in = bp_mono_us();
	while (c->closing != 2) {
		if (c->closing && c->out.len == 0)
			break;
		pfd[0].fd = c->closing ? -1 : STDIN_FILENO;
		pfd[0].events = POLLIN;
		pfd[1].fd = STDOUT_FILENO;
		pfd[1].events = c->out.len > 0 ? POLLOUT : 0;
		pfd[2].fd = c->following || c->pending ? c->wake_fd : -1;
		pfd[2].events = POLLIN;
		timeout = !c->following && !c->pending ? 1000 : c->wake_fd >= 0 ? WATCH_MS : POLL_MS;
		if ((ready = poll(pfd, 3, timeout)) == -1 && errno != EINTR)
			break;
		if (pfd[2].revents & POLLIN)
			bp_wake_drain(c->wake_fd);
		if ((pfd[1].revents & (POLLERR | POLLHUP)) != 0)
			break;
		if ((pfd[1].revents & POLLOUT) && write_output(c) == -1)
			break;
		if ((pfd[0].revents & (POLLIN | POLLHUP)) && read_input(c) == -1)
			break;
		follow(c, ready == 0);
		follow_pending(c);
		charge_notifications(c);
		now = bp_mono_us();
		if (c->nsubs == 0 && !c->closing && now - c->last_in > IDLE_MS * INT64_C(1000)) {
			send_refusal(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 408, "timeout",
			    "no message and no subscription for 300 s: closing");
			c->closing = 1;
		}
		if (c->out.len > 0 && write_output(c) == -1)
			break;
		release_db(c, now);
	}
	/* Whatever is left goes out blocking: the last error message, say. */
	if (c->closing != 2 && c->out.len > 0) {
		fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) & ~O_NONBLOCK);
		write_output(c);
	}
}

/* Opens everything and admits the connection; 0 to serve, -1 to close. */
static int
open_conn(struct conn *c)
{
	char err[512];
	const char *target = getenv("REQUEST_URI");
	struct bp_req *r;

	if ((c->cfg = bp_config_load(NULL, err, sizeof(err))) == NULL) {
		bp_err("config: %s", err);
		return -1;
	}
	bp_buf_init(&c->in, (size_t)c->cfg->max_body);
	c->db_used = bp_mono_us();
	if ((c->db = bp_db_open(c->cfg->database, 0)) == NULL ||
	    (c->lim = bp_limits_open(c->cfg->limits_file)) == NULL ||
	    bp_admit_init(&c->adm, c->cfg, c->db, c->lim) == -1 ||
	    (c->req = malloc(sizeof(*c->req))) == NULL)
		return -1;
	r = c->req;
	bp_req_init(r);
	r->cfg = c->cfg;
	r->db = c->db;
	r->lim = c->lim;
	r->envp = environ;
	c->addr = getenv("REMOTE_ADDR");
	if (bp_req_parse(r, "GET", target != NULL ? target : "/") != 0 || r->nseg != 4 ||
	    strcmp(r->seg[0], "v1") != 0 || strcmp(r->seg[1], "ws") != 0) {
		send_refusal(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 404, "not_found",
		    "no such endpoint: the WebSocket path is /v1/ws/{chain}/{network}");
		return -1;
	}
	if ((c->net = bp_config_network(c->cfg, r->seg[2], r->seg[3])) == NULL) {
		char m[160];

		snprintf(m, sizeof(m), "no such chain or network: %s/%s", r->seg[2], r->seg[3]);
		send_refusal(c, NULL, 0, BP_JSONRPC_INVALID_REQUEST, 404, "not_found", m);
		return -1;
	}
	snprintf(c->chain, sizeof(c->chain), "%s.%s", c->net->chain, c->net->network);
	if (bp_index_feed_path(c->cfg->database, c->chain, c->feed, sizeof(c->feed)) == -1)
		c->feed[0] = '\0';
	/* Spread over 2 s, so the connections' SQLite checks do not all come at once. */
	c->next_check = bp_mono_us() + CHECK_US + (int64_t)(getpid() % 2000) * 1000;
	price_notifications(c);
	return admit_connection(c, r);
}

static void
close_conn(struct conn *c)
{
	bp_ws_helper_stop(&c->helper);
	while (c->nsubs > 0)
		bp_ws_logs_free(c->subs[--c->nsubs].logs);
	if (c->req != NULL) {
		bp_req_free(c->req);
		free(c->req);
	}
	if (c->slot_fd >= 0)
		close(c->slot_fd);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	bp_admit_fini(&c->adm);
	bp_limits_close(c->lim);
	bp_db_close(c->db);
	bp_config_free(c->cfg);
	free(c->key);
	bp_buf_free(&c->in);
	bp_buf_free(&c->out);
	bp_buf_free(&c->msg);
	bp_buf_free(&c->feedbuf);
}

int
main(void)
{
	struct conn *c;
	int rc = 1;

	bp_log_init("ws");
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Below the web server and websocketd: a block wakes every connection at once, and at the
	 * same priority the thousand of them would share the CPU with the two processes that
	 * carry their messages out, so none would arrive before nearly all were written.
	 */
	if (setpriority(PRIO_PROCESS, 0, WS_NICE) == -1)
		bp_warn("setpriority: %s", strerror(errno));
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return 1;
	c->slot_fd = -1;
	c->wake_fd = -1;
	bp_buf_init(&c->out, OUT_CAP);
	bp_buf_init(&c->msg, BP_RESP_CAP);
	bp_buf_init(&c->feedbuf, BP_INDEX_FEED_MAX + 1);
	fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
	if (open_conn(c) == 0) {
		run(c);
		rc = 0;
	} else {
		c->closing = 1;
		run(c);
	}
	close_conn(c);
	free(c);
	return rc;
}
