/*
 * The bundler's JSON-RPC envelope, method dispatch and answers (bundler_rpc.h).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundler_rpc.h"
#include "core/auth.h"
#include "core/fcgi.h"
#include "core/hex.h"
#include "core/limits.h"
#include "rpc/rpc_envelope.h"

int
bp_bundler_fail(struct bp_bundler_call *c, int code, const char *fmt, ...)
{
	va_list ap;

	c->err.code = code;
	va_start(ap, fmt);
	vsnprintf(c->err.message, sizeof(c->err.message), fmt, ap);
	va_end(ap);
	return -1;
}

const char *
bp_bundler_param_str(struct bp_bundler_call *c, int i, const char *what)
{
	const cJSON *j = cJSON_GetArrayItem(c->params, i);

	if (!cJSON_IsString(j)) {
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params[%d] (%s) must be a string", i,
		    what);
		return NULL;
	}
	return j->valuestring;
}

/* The outcome of one item: its result or error, appended to out. */
static int
answer(struct bp_buf *out, const char *id, size_t idlen, const struct bp_bundler_call *c,
    int ok)
{
	char *hex = NULL;
	int rc;

	if (ok) {
		if (bp_buf_adds(out, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
		    (idlen > 0 ? bp_buf_add(out, id, idlen) : bp_buf_adds(out, "null")) == -1 ||
		    bp_buf_adds(out, ",\"result\":") == -1 ||
		    bp_buf_add(out, c->result->data, c->result->len) == -1 ||
		    bp_buf_adds(out, "}") == -1)
			return -1;
		return 0;
	}
	if (c->err.data == NULL)
		return bp_rpc_envelope_error_obj(out, id, idlen, c->err.code, c->err.message);
	if ((hex = malloc(2 * c->err.len + 3)) == NULL)
		return -1;
	bp_hex_encode(c->err.data, c->err.len, hex, 2 * c->err.len + 3);
	rc = bp_buf_adds(out, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    (idlen > 0 ? bp_buf_add(out, id, idlen) : bp_buf_adds(out, "null")) == -1 ||
	    bp_buf_printf(out, ",\"error\":{\"code\":%d,\"message\":\"", c->err.code) == -1 ||
	    bp_buf_json_str(out, c->err.message) == -1 ||
	    bp_buf_printf(out, "\",\"data\":\"%s\"}}", hex) == -1 ? -1 : 0;
	free(hex);
	return rc;
}

static const struct bp_bundler_method *
find(const struct bp_bundler_method *tab, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(tab[i].name, name) == 0)
			return &tab[i];
	return NULL;
}

/* The names of the scopes in mask, " or "-separated, into buf. */
static void
scope_names(unsigned mask, char *buf, size_t len)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < BP_SCOPE__MAX; i++)
		if (mask & BP_SCOPE_BIT(i))
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
			    used ? " or " : "", bp_scope_name((enum bp_scope)i));
}

/*
 * One item: judged (method, scope, limits), then run. Returns 0 with the answer appended, or
 * the HTTP status already set in r (a single call refused with 403 or 429).
 */
static int
item(struct bp_req *r, const struct bp_rpc_envelope_item *it, int batch, struct bp_bundler_call *c,
    const struct bp_bundler_method *tab, size_t n, struct bp_buf *out)
{
	const char *id = r->body + it->id.off;
	const struct bp_bundler_method *m;
	enum bp_limit_verdict lv;
	cJSON *params = NULL;
	char names[96];
	int ok = 0, rc;

	c->err.code = 0;
	bp_buf_reset(c->result);
	if (it->code != 0)
		return bp_rpc_envelope_error_obj(out, id, it->id.len, it->code, it->why);
	if (it->method_len > BP_JSONRPC_METHOD_MAX || (m = find(tab, n, it->method)) == NULL) {
		bp_bundler_fail(c, BP_JSONRPC_METHOD_NOT_FOUND, "the method %s is not offered by "
		    "the bundler", it->method_len <= BP_JSONRPC_METHOD_MAX ? it->method : "given");
		return answer(out, id, it->id.len, c, 0);
	}
	if (!(r->key.scopes & m->scopes)) {
		scope_names(m->scopes, names, sizeof(names));
		if (!batch) {
			bp_error(r, 403, "forbidden", "this API key lacks the %s scope, which %s needs",
			    names, m->name);
			return 1;
		}
		bp_bundler_fail(c, BP_JSONRPC_FORBIDDEN, "forbidden: this API key lacks the %s "
		    "scope, which %s needs", names, m->name);
		return answer(out, id, it->id.len, c, 0);
	}
	if ((lv = bp_req_charge(r, 1, m->cu)) != BP_LIMIT_OK) {
		if (!batch || bp_req_charge_whole(lv)) {
			bp_error_limited(r, lv);
			return 1;
		}
		bp_bundler_fail(c, BP_JSONRPC_LIMITED, "rate limited: %s exceeded; retry after "
		    "%lld s", bp_limit_what(lv), (long long)r->limit.retry_after);
		return answer(out, id, it->id.len, c, 0);
	}
	if (it->params.len == 0)
		params = cJSON_CreateArray();
	else
		params = cJSON_ParseWithLength(r->body + it->params.off, it->params.len);
	if (params == NULL)
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "out of memory");
	else if (!cJSON_IsArray(params))
		bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params must be an array");
	else {
		c->params = params;
		ok = m->fn(c) == 0;
	}
	rc = answer(out, id, it->id.len, c, ok);
	cJSON_Delete(params);
	bp_userop_validate_error_free(&c->err);
	c->params = NULL;
	return rc;
}

int
bp_bundler_serve(struct bp_req *r, const struct bp_network *net, struct bp_upstream *up,
    const uint8_t *pm_key, const struct bp_bundler_method *tab, size_t n)
{
	struct bp_rpc_envelope_item *items;
	struct bp_rpc_envelope_body body;
	struct bp_bundler_call c;
	struct bp_buf result;
	size_t cap = (size_t)r->cfg->max_batch, i;
	int rc;

	if (r->key.test && !net->testnet)
		return bp_error(r, 403, "forbidden", "%s/%s is a mainnet: test keys work on "
		    "testnets only; use a live key", net->chain, net->network);
	if ((items = calloc(cap, sizeof(*items))) == NULL)
		return bp_error(r, 500, "internal_error", "out of memory");
	memset(&c, 0, sizeof(c));
	bp_buf_init(&result, (size_t)r->cfg->max_response);
	c.r = r;
	c.net = net;
	c.up = up;
	c.pm_key = pm_key;
	c.result = &result;
	bp_buf_reset(&r->out);
	r->content_type = "application/json";
	if (bp_rpc_envelope_parse(r->body, r->body_len, cap, items, cap, &body) == -1) {
		rc = bp_rpc_envelope_error_obj(&r->out, NULL, 0, body.code, body.why);
		goto done;
	}
	rc = body.batch ? bp_buf_adds(&r->out, "[") : 0;
	for (i = 0; rc == 0 && i < body.n && i < cap; i++) {
		if (i > 0 && bp_buf_adds(&r->out, ",") == -1)
			rc = -1;
		else
			rc = item(r, &items[i], body.batch, &c, tab, n, &r->out);
	}
	if (rc == 1) {		/* a single call refused in the uniform body */
		rc = r->status;
		goto out;
	}
	if (rc == 0 && body.batch)
		rc = bp_buf_adds(&r->out, "]");
done:
	rc = rc == 0 ? (r->status = 200) :
	    bp_error(r, 500, "internal_error", "response too large");
out:
	bp_buf_free(&result);
	free(items);
	return rc;
}
