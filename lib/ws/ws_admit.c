/*
 * The key of a WebSocket connection (ws_admit.h): lib/core/admit.h's admission and charges,
 * answered as JSON-RPC errors on the connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/admit.h"
#include "core/auth.h"
#include "core/config.h"
#include "core/http.h"
#include "core/limits.h"
#include "core/metrics.h"
#include "core/util.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_methods.h"
#include "ws_admit.h"
#include "ws_conn.h"
#include "ws_slot.h"

/* A 429 of the counters in the head's metrics, as the FastCGI pipeline counts its own. */
static void
count_refusal(struct bp_ws_conn *c, enum bp_limit_verdict v)
{
	bp_metrics_addf(c->metrics, 1, "blockport_limit_refusals_total{limit=\"%s\"}",
	    bp_limit_name(v));
}

static void
send_admission(struct bp_ws_conn *c, const char *id, size_t idlen, const struct bp_admission *ad)
{
	if (ad->status == 429)
		count_refusal(c, ad->verdict);
	bp_ws_conn_refuse(c, id, idlen, bp_ws_conn_rpc_code(ad->status), ad->status, ad->code,
	    ad->message);
}

/* The CUs of a notification of each kind: those of the read a client would poll instead. */
static void
price_notifications(struct bp_ws_conn *c)
{
	static const char *const polled[BP_WS_CONN__KINDS] = {
		[BP_WS_CONN_HEADS] = "eth_getBlockByNumber",
		[BP_WS_CONN_LOGS] = "eth_getLogs",
		[BP_WS_CONN_SYNCING] = "eth_syncing",
		[BP_WS_CONN_PENDING] = "eth_getFilterChanges",
	};
	const struct bp_rpc_method *m;
	size_t i;

	for (i = 0; i < BP_WS_CONN__KINDS; i++) {
		m = bp_rpc_method(&bp_rpc_node_table, c->net->kind, polled[i], strlen(polled[i]));
		c->cu[i] = m != NULL ? m->cu : 1;
	}
}

/*
 * The connection's slot under its key's cap: in Redis on several heads (every head's
 * connections together), else, or while Redis does not answer, a file of this head's own
 * (bp_config_state_path: PREFIX.ws/).
 */
static int
keep_slot(struct bp_ws_conn *c)
{
	char prefix[4200];
	int rc;

	if (c->slots == NULL)
		c->slots = bp_ws_slots_redis(c->cfg);
	if (c->slots != NULL &&
	    (rc = bp_ws_slot_keep_redis(c->slots, &c->k, &c->slot_fd, &c->slot)) != -1)
		return rc;
	if (bp_config_state_path(c->cfg, "", prefix, sizeof(prefix)) == -1)
		return -1;
	return bp_ws_slot_keep(prefix, &c->k, &c->slot_fd, &c->slot);
}

/* The 429 of a key with all its plan's ws_connections open: why (what), and the plan's cap. */
static void
refuse_slot(struct bp_ws_conn *c, const char *what)
{
	char m[BP_ADMIT_MSG];

	bp_metrics_add(c->metrics, "blockport_limit_refusals_total{limit=\"ws_connections\"}", 1);
	snprintf(m, sizeof(m), "%s (the %s plan allows %lld)", what, c->k.plan.name,
	    (long long)c->k.plan.ws_connections);
	bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_LIMITED, 429, "rate_limited", m);
}

int
bp_ws_admit_connection(struct bp_ws_conn *c)
{
	struct bp_admission ad;
	const char *q = bp_req_query(c->req, "apiKey");

	price_notifications(c);
	/* A copy: the request's storage is reused for every proxied message. */
	if (q == NULL || *q == '\0')
		q = bp_req_api_key(c->req);
	if (q != NULL && (c->key = strdup(q)) == NULL)
		return -1;
	/* Read before the lookup: a change made meanwhile is looked at again. */
	c->gen = bp_limits_generation(c->lim);
	c->recheck_at = bp_mono_us() + BP_WS_ADMIT_RECHECK_US;
	if (bp_admit(&c->adm, c->key, c->addr, 0, 0, &ad) != 0) {
		if (ad.auth == BP_AUTH_MISSING)
			snprintf(ad.message, sizeof(ad.message), "missing API key: pass it as "
			    "?apiKey=KEY, or in X-API-Key or \"Authorization: Bearer KEY\" on the upgrade");
		send_admission(c, NULL, 0, &ad);
		return -1;
	}
	c->k = ad.key;
	if (!(c->k.scopes & BP_SCOPE_BIT(BP_SCOPE_RPC_READ))) {
		bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_FORBIDDEN, 403, "forbidden",
		    "this API key lacks the rpc:read scope, which WebSocket subscriptions need");
		return -1;
	}
	if (c->k.test && !c->net->testnet) {
		bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_FORBIDDEN, 403, "forbidden", "this network "
		    "is a mainnet: test keys work on testnets only; use a live key");
		return -1;
	}
	switch (keep_slot(c)) {
	case -2:
		refuse_slot(c, "too many open WebSocket connections for this key");
		return -1;
	case -1:
		bp_ws_conn_refuse(c, NULL, 0, BP_JSONRPC_INTERNAL_ERROR, 500, "internal_error",
		    "the connection count is unavailable");
		return -1;
	}
	return 0;
}

/*
 * Takes k as c's key: its plan's limits from now on, and its cap on connections, which c may
 * now be past (a plan changed). 0, or -1 after queueing a 429 and closing. A slot that cannot
 * be looked at is not a reason to end an admitted connection: it keeps the one it has.
 */
static int
take_key(struct bp_ws_conn *c, const struct bp_key *k)
{
	c->k = *k;
	if (keep_slot(c) != -2)
		return 0;
	refuse_slot(c, "the key's plan changed: it allows fewer open WebSocket connections; "
	    "closing this one");
	c->closing = 1;
	return -1;
}

int
bp_ws_admit_message(struct bp_ws_conn *c, const char *id, size_t idlen)
{
	struct bp_admission ad;

	if (bp_ws_conn_db(c) == NULL) {
		bp_ws_conn_refuse(c, id, idlen, bp_ws_conn_rpc_code(500), 500, "internal_error",
		    "the database is unavailable");
		return -1;
	}
	if (bp_admit(&c->adm, c->key, c->addr, 0, 0, &ad) != 0) {
		send_admission(c, id, idlen, &ad);
		if (ad.status != 429)
			c->closing = 1;
		return -1;
	}
	return take_key(c, &ad.key);
}

void
bp_ws_admit_recheck(struct bp_ws_conn *c, int64_t now)
{
	enum bp_auth_result a;
	struct bp_key k;
	uint64_t gen;

	if (c->closing || now < c->recheck_at)
		return;
	c->recheck_at = now + BP_WS_ADMIT_RECHECK_US;
	/* A slot in Redis is a lease: renewed well within it (a renewal lost is logged there). */
	(void)bp_ws_slot_renew(c->slots);
	/* One word of the mapped limits file: a thousand idle connections cost no SQLite. */
	if ((gen = bp_limits_generation(c->lim)) == c->gen)
		return;
	if (bp_ws_conn_db(c) == NULL ||
	    (a = bp_auth_lookup(c->adm.keys, c->db, c->lim, c->cfg, c->key, &k)) == BP_AUTH_ERROR)
		return;		/* looked at again at the next tick */
	c->gen = gen;
	if (a != BP_AUTH_OK) {
		bp_ws_conn_refuse(c, NULL, 0, BP_WS_CONN_UNAUTHORIZED, 401, "unauthorized",
		    "this API key was revoked: closing the connection");
		c->closing = 1;
		return;
	}
	(void)take_key(c, &k);
}

int
bp_ws_admit_call(struct bp_ws_conn *c, const char *method, size_t len, const char *id,
    size_t idlen)
{
	const struct bp_rpc_method *m;
	struct bp_limit_state st;
	enum bp_limit_verdict v;
	char text[160];

	m = bp_rpc_method(&bp_rpc_node_table, c->net->kind, method, len);
	v = bp_admit_charge(c->lim, &c->k, 0, 1, m != NULL ? m->cu : 1, &st);
	if (v == BP_LIMIT_OK)
		return 0;
	count_refusal(c, v);
	snprintf(text, sizeof(text), "rate limited: %s exceeded; retry after %lld s",
	    bp_limit_what(v), (long long)st.retry_after);
	bp_ws_conn_error(c, id, idlen, BP_JSONRPC_LIMITED, text);
	return -1;
}

/*
 * Once per wake rather than per message (docs/websocket.md, "Accounting"). Notifications are
 * never held back: when the key's CUs per second are spent the limits count nothing (they
 * refuse), and the key's own messages are refused until they refill.
 */
void
bp_ws_admit_charge(struct bp_ws_conn *c)
{
	struct bp_limit_state st;

	if (c->owed == 0)
		return;
	(void)bp_admit_charge(c->lim, &c->k, 0, 0, c->owed, &st);
	c->owed = 0;
}
