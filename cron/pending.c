/*
 * pending: the one follower of the nodes' pending transactions (docs/websocket.md), for the
 * newPendingTransactions subscriptions of every WebSocket connection. Each pass, for each
 * indexed EVM network, asks the node for the pending-transaction filter's changes
 * (eth_newPendingTransactionFilter once, made again when the node forgets it), appends the
 * hashes to ws_pending (lib/ws/ws_pending.h) and, when there were any, touches DATABASE.pending
 * (lib/core/wake.h), which the connections watch. One upstream poll, whatever the number of
 * connections. When a format-B webhook of the network wants PENDING_TRANSACTION, the new
 * transactions are read from the node (one batch, no database transaction open) and matched
 * (lib/webhook/webhook_match.h) in a transaction of their own. Run from cron
 * (cron/pending.cron) or with --loop.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "core/worker.h"
#include "net/upstream.h"
#include "rpc/rpc_client.h"
#include "webhook/webhook_match.h"
#include "ws/ws_pending.h"

#define MAX_HASHES	4096	/* hashes taken from one answer */
#define WEBHOOK_TXS	256	/* transactions read for webhooks a pass (one batch) */

struct net {
	const struct bp_network	*net;
	char			 key[80];	/* "CHAIN.NETWORK" */
	char			 filter[80];	/* the node's filter id; "" when none yet */
};

struct state {
	struct bp_upstream	*up;
	struct net		 nets[BP_MAX_NETWORKS];
	size_t			 n;
};

static int
pending_init(struct bp_worker_ctx *w)
{
	struct state *s = calloc(1, sizeof(*s));
	struct net *n;
	size_t i;

	if ((w->state = s) == NULL || (s->up = bp_upstream_new(w->cfg)) == NULL)
		return -1;
	/* The networks the indexer follows: the ones whose heads the connections get. */
	for (i = 0; i < w->cfg->nnets; i++) {
		n = &s->nets[s->n];
		n->net = &w->cfg->nets[i];
		if (n->net->kind == BP_CHAIN_EVM && n->net->index) {
			snprintf(n->key, sizeof(n->key), "%s.%s", n->net->chain, n->net->network);
			s->n++;
		}
	}
	return 0;
}

/*
 * PENDING_TRANSACTION: the transactions of hashes[0..k) (at most WEBHOOK_TXS) for the
 * network's webhooks that want them. A node that does not know one any more (mined and
 * pruned, dropped) leaves it out. 0, or -1 with err set.
 */
static int
feed_webhooks(struct bp_worker_ctx *w, struct state *s, struct net *n, const char **hashes,
    size_t k, char *err, size_t errlen)
{
	struct bp_rpc_client_call calls[WEBHOOK_TXS];
	cJSON *params[WEBHOOK_TXS], *txs;
	size_t i;
	int want, rc = -1;

	if ((want = bp_webhook_match_pending_wanted(w->db, n->key)) <= 0) {
		if (want == -1)
			snprintf(err, errlen, "database error");
		return want;
	}
	if (k > WEBHOOK_TXS)
		k = WEBHOOK_TXS;	/* the newest wait for the next pass's filter changes */
	memset(calls, 0, sizeof(calls));
	for (i = 0; i < k; i++) {
		params[i] = cJSON_CreateArray();
		cJSON_AddItemToArray(params[i], cJSON_CreateString(hashes[i]));
		calls[i].method = "eth_getTransactionByHash";
		calls[i].params = params[i];
	}
	bp_rpc_client_batch(s->up, n->net, calls, k);
	if ((txs = cJSON_CreateArray()) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < k; i++)
		if (cJSON_IsObject(calls[i].result)) {
			cJSON_AddItemToArray(txs, calls[i].result);
			calls[i].result = NULL;
		}
	if (bp_db_begin(w->db) == -1 ||
	    bp_webhook_match_pending(w->cfg, w->db, n->key, txs) == -1) {
		bp_db_rollback(w->db);
		snprintf(err, errlen, "webhooks: database error");
	} else if (bp_db_commit(w->db) == -1)
		snprintf(err, errlen, "webhooks: database error");
	else
		rc = 0;
	cJSON_Delete(txs);
out:
	for (i = 0; i < k; i++) {
		cJSON_Delete(params[i]);
		cJSON_Delete(calls[i].result);
	}
	return rc;
}

/* The new pending hashes of one network; the number stored, or -1 with err set. */
static int
follow(struct bp_worker_ctx *w, struct state *s, struct net *n, char *err, size_t errlen)
{
	struct bp_rpc_client_error e;
	const char **hashes = NULL;
	cJSON *res, *params, *h;
	size_t k = 0;
	int rc;

	if (n->filter[0] == '\0') {
		res = bp_rpc_client_call(s->up, n->net, "eth_newPendingTransactionFilter", NULL, &e);
		if (!cJSON_IsString(res) || strlen(res->valuestring) >= sizeof(n->filter)) {
			snprintf(err, errlen, "eth_newPendingTransactionFilter: %s",
			    res == NULL ? e.message : "not a filter id");
			cJSON_Delete(res);
			return -1;
		}
		bp_strlcpy(n->filter, res->valuestring, sizeof(n->filter));
		cJSON_Delete(res);
	}
	if ((params = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString(n->filter))) {
		cJSON_Delete(params);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	res = bp_rpc_client_call(s->up, n->net, "eth_getFilterChanges", params, &e);
	cJSON_Delete(params);
	if (!cJSON_IsArray(res)) {
		/* The node forgot the filter (restarted, expired, another upstream): a new one. */
		snprintf(err, errlen, "eth_getFilterChanges: %s",
		    res == NULL ? e.message : "not an array");
		n->filter[0] = '\0';
		cJSON_Delete(res);
		return -1;
	}
	if (cJSON_GetArraySize(res) == 0) {
		cJSON_Delete(res);
		return 0;
	}
	if ((hashes = calloc(MAX_HASHES, sizeof(*hashes))) == NULL) {
		cJSON_Delete(res);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(h, res)
		if (cJSON_IsString(h) && k < MAX_HASHES)
			hashes[k++] = h->valuestring;
	rc = bp_ws_pending_add(w->db, n->key, hashes, k, (int64_t)time(NULL));
	if (rc == -1)
		snprintf(err, errlen, "database error");
	else if (feed_webhooks(w, s, n, hashes, k, err, errlen) == -1)
		rc = -1;
	free(hashes);
	cJSON_Delete(res);
	return rc;
}

static int
pending_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *s = w->state;
	size_t i, ok = 0, failed = 0;
	int total = 0, r;
	char err[384];

	for (i = 0; i < s->n && !bp_worker_stopping(); i++) {
		if ((r = follow(w, s, &s->nets[i], err, sizeof(err))) == -1) {
			bp_warn("%s: %s", s->nets[i].key, err);
			failed++;
			continue;
		}
		total += r;
		ok++;
	}
	if (total > 0 && bp_db_notify(w->db, BP_DB_WAKE_PENDING) == -1)
		bp_warn("cannot notify the pending transactions");
	snprintf(msg, msglen, "%d pending transactions from %zu networks, %zu failed", total, ok,
	    failed);
	if (failed > 0)
		w->failed = 1;
	return ok == 0 && failed > 0 ? BP_WORKER_FAILED : BP_WORKER_IDLE;
}

static void
pending_fini(struct bp_worker_ctx *w)
{
	struct state *s = w->state;

	if (s == NULL)
		return;
	bp_upstream_free(s->up);
	free(s);
	w->state = NULL;
}

static const struct bp_worker_def pending = {
	"pending", pending_init, pending_pass, pending_fini, NULL,
};

int	main(int, char *[]);

int
main(int argc, char *argv[])
{
	return bp_worker_main(&pending, argc, argv);
}
