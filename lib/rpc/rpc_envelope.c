/*
 * The envelope scanner (lib/rpc/rpc_envelope.h): untrusted request bodies in, items out, and the
 * envelopes and error objects the proxy writes. Which member names are refused and which are
 * dropped is in docs/rpc.md, "What is forwarded".
 */
#include <stddef.h>
#include <string.h>

#include "rpc_envelope.h"

/* 1 when the string value at span of s decodes to exactly lit. */
static int
string_is(const unsigned char *s, struct bp_rpc_scan_span v, const char *lit)
{
	char buf[16];
	size_t n;

	if (v.len < 2 || s[v.off] != '"' ||
	    bp_rpc_scan_decode(s + v.off, v.len, buf, sizeof(buf), &n) == -1)
		return 0;
	return n == strlen(lit) && memcmp(buf, lit, n) == 0;
}

enum envelope_key {
	K_JSONRPC,	/* 0 */
	K_METHOD,	/* 1 */
	K_PARAMS,	/* 2 */
	K_ID,		/* 3 */
	K__MAX
};

static const char *const key_names[K__MAX] = { "jsonrpc", "method", "params", "id" };

#define KEY_OTHER	(-1)	/* a member the envelope does not use: dropped when forwarded */
#define KEY_CONFUSABLE	(-2)	/* a spelling some node reads as one of the four: refused */

/*
 * Which envelope member a key (s at its quote, len with quotes) names, decoding escapes: K_*
 * for an exact name, KEY_CONFUSABLE for a name that folds to one of them without being it
 * ("METHOD", "\u004dethod", "param\u017f"), KEY_OTHER for anything else.
 */
static int
which_key(const unsigned char *s, size_t len)
{
	const char *key = (const char *)s + 1;
	char buf[32], folded[8];
	size_t n = len - 2, f;
	int k;

	/* Keys with escapes are decoded first, so "m\u0065thod" is method too. */
	if (memchr(key, '\\', n) != NULL) {
		if (bp_rpc_scan_decode(s, len, buf, sizeof(buf), &n) == -1)
			return KEY_OTHER;	/* longer than any folded spelling */
		key = buf;
	}
	for (k = 0; k < K__MAX; k++)
		if (n == strlen(key_names[k]) && memcmp(key, key_names[k], n) == 0)
			return k;
	/* Each of the four is at most 7 characters, and each character at most 3 bytes. */
	if (n > 21 || (f = bp_rpc_scan_fold(key, n, folded, sizeof(folded))) == 0)
		return KEY_OTHER;
	for (k = 0; k < K__MAX; k++)
		if (f == strlen(key_names[k]) && memcmp(folded, key_names[k], f) == 0)
			return KEY_CONFUSABLE;
	return KEY_OTHER;
}

static void
invalid(struct bp_rpc_envelope_item *it, const char *why)
{
	it->code = BP_JSONRPC_INVALID_REQUEST;
	it->why = why;
}

/*
 * Scans one request object at sc->pos (its '{'), depth the containers around it, into it.
 * Returns BP_RPC_SCAN_OK (the item's own verdict is in it->code), or the scan error of the body.
 */
static int
scan_request(struct bp_rpc_scan *sc, int depth, struct bp_rpc_envelope_item *it)
{
	struct bp_rpc_scan_span v[K__MAX];
	int seen[K__MAX] = { 0 }, dup = 0, confusable = 0, k, rc;
	size_t start = sc->pos;
	unsigned char c;

	memset(it, 0, sizeof(*it));
	memset(v, 0, sizeof(v));
	if (depth + 1 > BP_RPC_SCAN_DEPTH)
		return BP_RPC_SCAN_DEEP;
	sc->pos++;
	bp_rpc_scan_ws(sc);
	if (sc->pos < sc->len && sc->s[sc->pos] == '}')
		sc->pos++;
	else for (;;) {
		size_t kstart, klen, vstart;

		bp_rpc_scan_ws(sc);
		kstart = sc->pos;
		if ((rc = bp_rpc_scan_key(sc, &klen)) != BP_RPC_SCAN_OK)
			return rc;
		k = which_key(sc->s + kstart, klen);
		bp_rpc_scan_ws(sc);
		vstart = sc->pos;
		if ((rc = bp_rpc_scan_value(sc, depth + 1)) != BP_RPC_SCAN_OK)
			return rc;
		if (k == KEY_CONFUSABLE)
			confusable = 1;
		else if (k == KEY_OTHER)
			it->extra = 1;
		else {
			if (seen[k]++)
				dup = 1;
			else {
				v[k].off = vstart;
				v[k].len = sc->pos - vstart;
			}
		}
		if ((rc = bp_rpc_scan_next(sc, '}')) == BP_RPC_SCAN_SYNTAX)
			return rc;
		if (rc == 0)
			break;
	}
	it->raw.off = start;
	it->raw.len = sc->pos - start;

	/* The id first: the errors below echo it whenever it is one to echo. */
	if (seen[K_ID] == 1) {
		c = sc->s[v[K_ID].off];
		if (c == '"' || c == '-' || bp_rpc_scan_isdigit(c) || c == 'n')
			it->id = v[K_ID];
	}
	if (confusable)
		invalid(it, "invalid request: a member name differs from jsonrpc, method, params or "
		    "id only in case or in a letter that folds to theirs");
	else if (dup)
		invalid(it, "invalid request: a member appears twice");
	else if (seen[K_ID] == 0)
		invalid(it, "invalid request: id is required (notifications are not supported)");
	else if (it->id.len == 0)
		invalid(it, "invalid request: id must be a string, a number or null");
	else if (!seen[K_JSONRPC] || !string_is(sc->s, v[K_JSONRPC], "2.0"))
		invalid(it, "invalid request: jsonrpc must be \"2.0\"");
	else if (!seen[K_METHOD] || sc->s[v[K_METHOD].off] != '"')
		invalid(it, "invalid request: method must be a string");
	else if (seen[K_PARAMS] && sc->s[v[K_PARAMS].off] != '[' &&
	    sc->s[v[K_PARAMS].off] != '{')
		invalid(it, "invalid request: params must be an array or an object");
	else {
		it->method_raw = v[K_METHOD];
		bp_rpc_scan_decode(sc->s + v[K_METHOD].off, v[K_METHOD].len, it->method,
		    BP_JSONRPC_METHOD_MAX, &it->method_len);
		it->method[it->method_len <= BP_JSONRPC_METHOD_MAX ? it->method_len :
		    BP_JSONRPC_METHOD_MAX] = '\0';
		if (it->method_len == 0)
			invalid(it, "invalid request: method must not be empty");
		if (seen[K_PARAMS])
			it->params = v[K_PARAMS];
	}
	return BP_RPC_SCAN_OK;
}

int
bp_rpc_envelope_parse(const char *body, size_t len, size_t max_batch, struct bp_rpc_envelope_item *items,
    size_t cap, struct bp_rpc_envelope_body *out)
{
	struct bp_rpc_scan sc = { (const unsigned char *)body, len, 0 };
	struct bp_rpc_envelope_item scratch, *it;
	int rc = BP_RPC_SCAN_OK;

	memset(out, 0, sizeof(*out));
	bp_rpc_scan_ws(&sc);
	if (sc.pos >= sc.len) {
		rc = BP_RPC_SCAN_SYNTAX;
	} else if (sc.s[sc.pos] == '{') {
		out->n = 1;
		rc = scan_request(&sc, 0, cap > 0 ? &items[0] : &scratch);
	} else if (sc.s[sc.pos] == '[') {
		out->batch = 1;
		sc.pos++;
		bp_rpc_scan_ws(&sc);
		if (sc.pos < sc.len && sc.s[sc.pos] == ']')
			sc.pos++;
		else for (;;) {
			it = out->n < cap ? &items[out->n] : &scratch;
			bp_rpc_scan_ws(&sc);
			if (sc.pos < sc.len && sc.s[sc.pos] == '{') {
				if ((rc = scan_request(&sc, 1, it)) != BP_RPC_SCAN_OK)
					break;
			} else {
				memset(it, 0, sizeof(*it));
				it->raw.off = sc.pos;
				if ((rc = bp_rpc_scan_value(&sc, 1)) != BP_RPC_SCAN_OK)
					break;
				it->raw.len = sc.pos - it->raw.off;
				invalid(it, "invalid request: a request must be a JSON object");
			}
			out->n++;
			/* After a comma, go on; after ']', rc is BP_RPC_SCAN_OK (0). */
			if ((rc = bp_rpc_scan_next(&sc, ']')) != 1)
				break;
		}
	} else {
		rc = bp_rpc_scan_value(&sc, 0);
		if (rc == BP_RPC_SCAN_OK) {
			bp_rpc_scan_ws(&sc);
			if (sc.pos != sc.len)
				rc = BP_RPC_SCAN_SYNTAX;
			else {
				out->code = BP_JSONRPC_INVALID_REQUEST;
				out->why = "invalid request: the body must be a JSON object or an array of them";
				return -1;
			}
		}
	}
	if (rc == BP_RPC_SCAN_OK) {
		bp_rpc_scan_ws(&sc);
		if (sc.pos != sc.len)
			rc = BP_RPC_SCAN_SYNTAX;
	}
	if (rc == BP_RPC_SCAN_SYNTAX) {
		out->code = BP_JSONRPC_PARSE_ERROR;
		out->why = "parse error: the body is not valid JSON";
	} else if (rc == BP_RPC_SCAN_DEEP) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: JSON nested deeper than 64 levels";
	} else if (out->batch && out->n == 0) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: empty batch";
	} else if (out->batch && out->n > max_batch) {
		out->code = BP_JSONRPC_INVALID_REQUEST;
		out->why = "invalid request: batch larger than this service's max_batch";
	} else if (out->n > cap) {
		out->code = BP_JSONRPC_INTERNAL_ERROR;
		out->why = "internal error: no room for the batch";
	}
	return out->code != 0 ? -1 : 0;
}

int
bp_rpc_envelope_id_simple(const char *id, size_t len)
{
	size_t i;

	if (len == 0)
		return 0;
	if (id[0] == '"') {
		if (len < 3 || len > 130 || id[len - 1] != '"')
			return 0;
		for (i = 1; i + 1 < len; i++) {
			unsigned char c = (unsigned char)id[i];

			if (c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' ||
			    c == '&')
				return 0;
		}
		return 1;
	}
	if (len > 15 || id[0] < '0' || id[0] > '9' || (id[0] == '0' && len > 1))
		return 0;
	for (i = 1; i < len; i++)
		if (!bp_rpc_scan_isdigit((unsigned char)id[i]))
			return 0;
	return 1;
}

int
bp_rpc_envelope_write(struct bp_buf *b, const char *body, const struct bp_rpc_envelope_item *it,
    const char *id, size_t idlen)
{
	if (bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 || bp_buf_add(b, id, idlen) == -1 ||
	    bp_buf_adds(b, ",\"method\":") == -1 ||
	    bp_buf_add(b, body + it->method_raw.off, it->method_raw.len) == -1)
		return -1;
	if (it->params.len > 0 && (bp_buf_adds(b, ",\"params\":") == -1 ||
	    bp_buf_add(b, body + it->params.off, it->params.len) == -1))
		return -1;
	return bp_buf_adds(b, "}");
}

int
bp_rpc_envelope_error_obj(struct bp_buf *b, const char *id, size_t idlen, int code, const char *msg)
{
	if (bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    (idlen > 0 ? bp_buf_add(b, id, idlen) : bp_buf_adds(b, "null")) == -1 ||
	    bp_buf_printf(b, ",\"error\":{\"code\":%d,\"message\":\"", code) == -1 ||
	    bp_buf_json_str(b, msg) == -1 || bp_buf_adds(b, "\"}}") == -1)
		return -1;
	return 0;
}
