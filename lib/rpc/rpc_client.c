/*
 * The JSON-RPC client (lib/rpc/rpc_client.h). Requests carry the ids 0..n-1 (a single call: 0) and
 * answers are matched by id, so a node that reorders a batch is still understood.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/util.h"
#include "net/upstream.h"
#include "rpc_client.h"

static void
set_err(struct bp_rpc_client_error *e, enum bp_rpc_client_err_kind kind, int64_t code,
    const char *msg)
{
	e->kind = kind;
	e->code = code;
	bp_strlcpy(e->message, msg, sizeof(e->message));
}

/* Appends one request object with id to b; 0 or -1. */
static int
client_request(struct bp_buf *b, size_t id, const char *method, const cJSON *params)
{
	char *p = NULL;
	int rc = -1;

	if (params != NULL && !cJSON_IsArray(params) && !cJSON_IsObject(params))
		return -1;
	if (params != NULL && (p = cJSON_PrintUnformatted(params)) == NULL)
		return -1;
	if (bp_buf_printf(b, "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"", id) == 0 &&
	    bp_buf_json_str(b, method) == 0 && bp_buf_adds(b, "\",\"params\":") == 0 &&
	    bp_buf_adds(b, p ? p : "[]") == 0 && bp_buf_adds(b, "}") == 0)
		rc = 0;
	free(p);
	return rc;
}

/* Every call unanswered, before a request is sent or an answer read. */
static void
client_reset(struct bp_rpc_client_call *calls, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		calls[i].result = NULL;
		set_err(&calls[i].err, BP_RPC_CLIENT_ERR_PROTOCOL, 0, "no answer for this call");
	}
}

/*
 * The code member of an error object as an int64: a number is truncated toward zero; one
 * outside the int64 range (a node may send 1e300, and converting it would be undefined
 * behaviour) or anything that is not a number gives 0.
 */
static int64_t
client_code(const cJSON *code)
{
	if (!cJSON_IsNumber(code) || !(code->valuedouble >= -9223372036854775808.0 &&
	    code->valuedouble < 9223372036854775808.0))
		return 0;
	return (int64_t)code->valuedouble;
}

/* Takes the answer for one call out of the response object o into c; 1 for a result. */
static int
client_take(cJSON *o, struct bp_rpc_client_call *c)
{
	cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "result");
	cJSON *err = cJSON_GetObjectItemCaseSensitive(o, "error");

	if (err != NULL && cJSON_IsObject(err)) {
		cJSON *msg = cJSON_GetObjectItemCaseSensitive(err, "message");

		set_err(&c->err, BP_RPC_CLIENT_ERR_RPC,
		    client_code(cJSON_GetObjectItemCaseSensitive(err, "code")),
		    cJSON_IsString(msg) ? msg->valuestring : "error without a message");
		return 0;
	}
	if (res == NULL) {
		set_err(&c->err, BP_RPC_CLIENT_ERR_PROTOCOL, 0, "answer has neither result nor error");
		return 0;
	}
	c->result = cJSON_DetachItemViaPointer(o, res);
	memset(&c->err, 0, sizeof(c->err));
	return 1;
}

/* The id of an answer object as an index below n, or -1. */
static long
client_id(const cJSON *o, size_t n)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");

	if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= (double)n ||
	    id->valuedouble != (double)(long)id->valuedouble)
		return -1;
	return (long)id->valuedouble;
}

size_t
bp_rpc_client_parse(const char *ans, size_t len, struct bp_rpc_client_call *calls, size_t n)
{
	cJSON *root, *o;
	size_t i, got = 0;

	client_reset(calls, n);
	/* cJSON caps nesting itself (CJSON_NESTING_LIMIT); answers are the operator's nodes'. */
	if (len == 0 || (root = cJSON_ParseWithLength(ans, len)) == NULL) {
		for (i = 0; i < n; i++)
			set_err(&calls[i].err, BP_RPC_CLIENT_ERR_PROTOCOL, 0, "answer is not JSON");
		return 0;
	}
	if (cJSON_IsArray(root)) {
		cJSON_ArrayForEach(o, root) {
			long k = client_id(o, n);

			if (k >= 0 && calls[k].result == NULL &&
			    calls[k].err.kind == BP_RPC_CLIENT_ERR_PROTOCOL)
				got += (size_t)client_take(o, &calls[k]);
		}
	} else if (cJSON_IsObject(root)) {
		long k = client_id(root, n);

		if (k >= 0 || n == 1)
			got += (size_t)client_take(root, &calls[k >= 0 ? k : 0]);
		else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "error")))
			/* One error for the whole batch (a node that refused it): each call gets it. */
			for (i = 0; i < n; i++)
				client_take(root, &calls[i]);
		/*
		 * Anything else without an id answers no call of a batch: a result cannot say
		 * which call it is for (and taking one per call would hand a repeated "result"
		 * member to the next call).
		 */
	}
	cJSON_Delete(root);
	return got;
}

static size_t
client_send(struct bp_upstream *up, const struct bp_network *net, struct bp_rpc_client_call *calls,
    size_t n, int batch)
{
	struct bp_upstream_info info;
	struct bp_buf req, ans;
	size_t i, got = 0;

	bp_buf_init(&req, SIZE_MAX / 4);
	bp_buf_init(&ans, SIZE_MAX / 4);
	client_reset(calls, n);
	if (batch && bp_buf_adds(&req, "[") == -1)
		goto fail;
	for (i = 0; i < n; i++)
		if ((i > 0 && bp_buf_adds(&req, ",") == -1) ||
		    client_request(&req, i, calls[i].method, calls[i].params) == -1)
			goto fail;
	if (batch && bp_buf_adds(&req, "]") == -1)
		goto fail;
	switch (bp_upstream_post(up, net, req.data, req.len, &ans, &info)) {
	case BP_UPSTREAM_OK:
		break;
	case BP_UPSTREAM_TOO_LARGE:
	case BP_UPSTREAM_FAILED:
	default:
		for (i = 0; i < n; i++)
			set_err(&calls[i].err, BP_RPC_CLIENT_ERR_TRANSPORT, 0, info.error);
		goto out;
	}
	got = bp_rpc_client_parse(ans.data, ans.len, calls, n);
	goto out;
fail:
	for (i = 0; i < n; i++)
		set_err(&calls[i].err, BP_RPC_CLIENT_ERR_PROTOCOL, 0,
		    "could not build the request (params must be an array or an object)");
out:
	bp_buf_free(&req);
	bp_buf_free(&ans);
	return got;
}

cJSON *
bp_rpc_client_call(struct bp_upstream *up, const struct bp_network *net, const char *method,
    const cJSON *params, struct bp_rpc_client_error *err)
{
	struct bp_rpc_client_call c = { method, params, NULL, { 0, 0, "" } };

	client_send(up, net, &c, 1, 0);
	if (err != NULL)
		*err = c.err;
	return c.result;
}

size_t
bp_rpc_client_batch(struct bp_upstream *up, const struct bp_network *net,
    struct bp_rpc_client_call *calls, size_t n)
{
	if (n == 0)
		return 0;
	return client_send(up, net, calls, n, 1);
}

void
bp_rpc_client_calls_free(struct bp_rpc_client_call *calls, size_t n)
{
	size_t i;

	for (i = 0; calls != NULL && i < n; i++) {
		cJSON_Delete((cJSON *)calls[i].params);
		cJSON_Delete(calls[i].result);
	}
	free(calls);
}
