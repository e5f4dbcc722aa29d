/*
 * The client's messages (ws_message.h): framed by lines, parsed by the envelope of /v1/rpc
 * (lib/rpc/rpc_envelope.h), the subscriptions' methods answered on the connection's table
 * (ws_conn.h), the rest forwarded to the proxy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/hex.h"
#include "core/http.h"
#include "core/log.h"
#include "core/util.h"
#include "rpc/rpc_envelope.h"
#include "ws_admit.h"
#include "ws_conn.h"
#include "ws_helper.h"
#include "ws_logs.h"
#include "ws_message.h"
#include "ws_notify.h"

/*
 * Forwards a message to the connection's proxy (ws/proxy: the code of POST /v1/rpc, in a process
 * started at the first message that needs it, so a connection that only subscribes never loads
 * libcurl; docs/websocket.md, "Memory"). Returns the HTTP status, the body in *body; 500 with
 * *body NULL when the proxy is unavailable.
 */
static int
call_proxy(struct bp_ws_conn *c, const char *body, size_t len, const char **out,
    size_t *outlen)
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
send_syncing(struct bp_ws_conn *c, struct bp_ws_conn_sub *s)
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
		bp_ws_conn_emit(txt, strlen(txt), c);
	}
	free(txt);
	cJSON_Delete(j);
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

static void
subscribe(struct bp_ws_conn *c, const char *body, const struct bp_rpc_envelope_item *it)
{
	const char *id = body + it->id.off;
	unsigned char rnd[16];
	char kind[32], quoted[BP_WS_CONN_SUB_ID + 2], why[128];
	struct bp_ws_conn_sub sub, *s;

	if (it->params.len == 0 || sub_kind_arg(body + it->params.off, it->params.len, kind,
	    sizeof(kind)) == -1) {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, "invalid params: "
		    "eth_subscribe takes [\"newHeads\"], [\"logs\", {address, topics}], "
		    "[\"newPendingTransactions\"] or [\"syncing\"]");
		return;
	}
	memset(&sub, 0, sizeof(sub));
	if (strcmp(kind, "newHeads") == 0)
		sub.kind = BP_WS_CONN_HEADS;
	else if (strcmp(kind, "logs") == 0)
		sub.kind = BP_WS_CONN_LOGS;
	else if (strcmp(kind, "syncing") == 0)
		sub.kind = BP_WS_CONN_SYNCING;
	else if (strcmp(kind, "newPendingTransactions") == 0)
		sub.kind = BP_WS_CONN_PENDING;
	else {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, "invalid params: "
		    "unknown subscription kind (newHeads, logs, newPendingTransactions and syncing "
		    "are offered)");
		return;
	}
	if (c->nsubs >= BP_WS_CONN_SUBS) {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_LIMITED, "too many subscriptions on "
		    "this connection (at most 32): unsubscribe first");
		return;
	}
	if (sub.kind == BP_WS_CONN_PENDING && bp_ws_notify_pending_start(c) == -1) {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR,
		    "internal error: the pending transactions are unavailable");
		return;
	}
	if ((sub.kind == BP_WS_CONN_HEADS || sub.kind == BP_WS_CONN_LOGS) &&
	    bp_ws_notify_heads_start(c) == -1) {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR,
		    "internal error: the chain index is unavailable");
		return;
	}
	if (sub.kind == BP_WS_CONN_LOGS && (sub.logs = bp_ws_logs_new(body + it->params.off,
	    it->params.len, why, sizeof(why))) == NULL) {
		char m[192];

		snprintf(m, sizeof(m), "invalid params: %s", why);
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS, m);
		return;
	}
	if (bp_random(rnd, sizeof(rnd)) == -1 ||
	    bp_hex_encode(rnd, sizeof(rnd), sub.id, sizeof(sub.id)) == -1) {
		bp_ws_logs_free(sub.logs);
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR, "internal error");
		return;
	}
	s = &c->subs[c->nsubs];
	*s = sub;
	c->nsubs++;
	snprintf(quoted, sizeof(quoted), "\"%s\"", s->id);
	bp_ws_conn_result(c, id, it->id.len, quoted);
	if (s->kind == BP_WS_CONN_SYNCING)
		send_syncing(c, s);
}

static void
unsubscribe(struct bp_ws_conn *c, const char *body, const struct bp_rpc_envelope_item *it)
{
	const char *id = body + it->id.off;
	char sid[BP_WS_CONN_SUB_ID + 8];
	struct bp_ws_conn_sub *s;

	if (it->params.len == 0 || sub_kind_arg(body + it->params.off, it->params.len, sid,
	    sizeof(sid)) == -1) {
		bp_ws_conn_error(c, id, it->id.len, BP_JSONRPC_INVALID_PARAMS,
		    "invalid params: eth_unsubscribe takes [SUBSCRIPTION_ID]");
		return;
	}
	if ((s = bp_ws_conn_sub_find(c, sid)) == NULL) {
		bp_ws_conn_result(c, id, it->id.len, "false");
		return;
	}
	bp_ws_conn_sub_remove(c, s);
	bp_ws_conn_result(c, id, it->id.len, "true");
}

/* Forwards a message through the JSON-RPC proxy of /v1/rpc and queues its answer. */
static void
proxy(struct bp_ws_conn *c, char *body, size_t len, const struct bp_rpc_envelope_item *first,
    int single)
{
	struct bp_rpc_scan_span idspan = { 0, 0 };
	const char *ans;
	size_t anslen;
	int status;

	status = call_proxy(c, body, len, &ans, &anslen);
	if (status == 200) {
		bp_ws_conn_send(c, ans, anslen);
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

		bp_ws_conn_refuse(c, body + idspan.off, idspan.len, bp_ws_conn_rpc_code(status),
		    status, cJSON_IsString(code) ? code->valuestring : "internal_error",
		    cJSON_IsString(msg) ? msg->valuestring : "the proxy is unavailable");
		cJSON_Delete(j);
	}
}

void
bp_ws_message_handle(struct bp_ws_conn *c, char *body, size_t len)
{
	struct bp_rpc_envelope_item it;
	struct bp_rpc_envelope_body b;
	int sub = 0, unsub = 0, parsed;

	c->last_in = bp_mono_us();
	memset(&it, 0, sizeof(it));
	parsed = bp_rpc_envelope_parse(body, len, (size_t)c->cfg->max_batch, &it, 1, &b) == 0;
	if (parsed && !b.batch && it.code == 0) {
		sub = it.method_len == 13 && memcmp(it.method, "eth_subscribe", 13) == 0;
		unsub = it.method_len == 15 && memcmp(it.method, "eth_unsubscribe", 15) == 0;
	}
	/* Every message is a request: the key again (revocation) and requests per second. */
	if (bp_ws_admit_message(c, body + it.id.off, parsed && !b.batch ? it.id.len : 0) == -1)
		return;
	if (!sub && !unsub) {
		proxy(c, body, len, &it, parsed && !b.batch);
		return;
	}
	if (bp_ws_admit_call(c, it.method, it.method_len, body + it.id.off, it.id.len) == -1)
		return;
	if (sub)
		subscribe(c, body, &it);
	else
		unsubscribe(c, body, &it);
}

int
bp_ws_message_read(struct bp_ws_conn *c)
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
			bp_ws_message_handle(c, c->in.data, c->in.len);
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
		bp_ws_conn_refuse(c, NULL, 0, BP_WS_CONN_TOO_LARGE, 413, "payload_too_large", text);
	}
	c->closing = 1;
	return 0;
}
