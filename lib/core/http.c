#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <fcgiapp.h>

#include "error.h"
#include "hex.h"
#include "http.h"
#include "util.h"

void
bp_req_init(struct bp_req *r)
{
	memset(r, 0, sizeof(*r));
	bp_buf_init(&r->headers, 16 * 1024);
	bp_buf_init(&r->out, BP_RESP_CAP);
	bp_buf_init(&r->bodybuf, 0);
}

void
bp_req_reset(struct bp_req *r)
{
	struct bp_buf h = r->headers, o = r->out, b = r->bodybuf;
	const struct bp_config *cfg = r->cfg;
	struct bp_db *db = r->db;
	struct bp_limits *lim = r->lim;
	struct bp_metrics *metrics = r->metrics;

	bp_buf_reset(&h);
	bp_buf_reset(&o);
	/* A large request body is not kept for the next request. */
	if (b.size > 64 * 1024)
		bp_buf_free(&b);
	bp_buf_reset(&b);
	if (o.size > 1024 * 1024)
		bp_buf_free(&o);
	memset(r, 0, sizeof(*r));
	r->headers = h;
	r->out = o;
	r->bodybuf = b;
	r->cfg = cfg;
	r->db = db;
	r->lim = lim;
	r->metrics = metrics;
}

void
bp_req_free(struct bp_req *r)
{
	bp_buf_free(&r->headers);
	bp_buf_free(&r->out);
	bp_buf_free(&r->bodybuf);
}

/*
 * Percent-decodes [s, s+n) into dst (NUL-terminated, at most n + 1 bytes). plus turns '+' into a
 * space (query strings). Returns -1 for a bad escape or an encoded NUL.
 */
static int
pct_decode(char *dst, const char *s, size_t n, int plus)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (s[i] == '%') {
			int hi, lo;

			if (i + 2 >= n || (hi = bp_hex_digit((unsigned char)s[i + 1])) < 0 ||
			    (lo = bp_hex_digit((unsigned char)s[i + 2])) < 0 || (hi == 0 && lo == 0))
				return -1;
			*dst++ = (char)(hi << 4 | lo);
			i += 2;
		} else if (s[i] == '+' && plus)
			*dst++ = ' ';
		else
			*dst++ = s[i];
	}
	*dst = '\0';
	return 0;
}

int
bp_req_parse(struct bp_req *r, const char *method, const char *target)
{
	const char *q, *p, *end, *pend;
	char *dst;
	size_t plen, i;

	if (method == NULL || bp_strlcpy(r->method, method, sizeof(r->method)) == -1 ||
	    method[0] == '\0')
		return bp_error(r, 400, "invalid_request", "bad request method");
	for (i = 0; r->method[i] != '\0'; i++)
		if (r->method[i] < 'A' || r->method[i] > 'Z')
			return bp_error(r, 400, "invalid_request", "bad request method");
	if (target == NULL || target[0] != '/')
		return bp_error(r, 400, "invalid_request", "bad request target");
	if (strlen(target) >= BP_TARGET_MAX)
		return bp_error(r, 414, "invalid_request", "request target longer than %d bytes",
		    BP_TARGET_MAX - 1);
	q = strchr(target, '?');
	plen = q ? (size_t)(q - target) : strlen(target);

	/* Path segments: split on '/', then decode each, so "%2F" stays inside a segment. */
	dst = r->segbuf;
	for (p = target + 1, pend = target + plen; p < pend;) {
		size_t n;

		end = memchr(p, '/', (size_t)(pend - p));
		n = end ? (size_t)(end - p) : (size_t)(pend - p);
		if (n == 0)
			return bp_error(r, 400, "invalid_request", "empty path segment");
		if (r->nseg == BP_MAX_SEGS)
			return bp_error(r, 400, "invalid_request", "too many path segments");
		if (pct_decode(dst, p, n, 0) == -1)
			return bp_error(r, 400, "invalid_request", "bad percent-encoding in path");
		if (strcmp(dst, ".") == 0 || strcmp(dst, "..") == 0)
			return bp_error(r, 400, "invalid_request", "dot segment in path");
		r->seg[r->nseg++] = dst;
		dst += strlen(dst) + 1;
		if (end == NULL)
			break;
		p = end + 1;	/* a trailing slash ends the loop here */
	}

	/* Query: name=value pairs split on '&', each side decoded. */
	if (q != NULL) {
		dst = r->querybuf;
		for (p = q + 1; *p != '\0';) {
			const char *amp = strchr(p, '&'), *eq;
			size_t n = amp ? (size_t)(amp - p) : strlen(p);

			if (n > 0) {
				struct bp_kv *kv;
				char *start = dst;
				size_t nlen;

				eq = memchr(p, '=', n);
				nlen = eq ? (size_t)(eq - p) : n;
				if (r->nquery == BP_MAX_QUERY)
					return bp_error(r, 400, "invalid_request",
					    "more than %d query parameters", BP_MAX_QUERY);
				kv = &r->query[r->nquery];
				if (pct_decode(dst, p, nlen, 1) == -1)
					return bp_error(r, 400, "invalid_request",
					    "bad percent-encoding in query");
				kv->name = dst;
				dst += strlen(dst) + 1;
				if (pct_decode(dst, eq ? eq + 1 : p + n, eq ? n - nlen - 1 : 0, 1) == -1)
					return bp_error(r, 400, "invalid_request",
					    "bad percent-encoding in query");
				kv->value = dst;
				dst += strlen(dst) + 1;
				/*
				 * A pair without a name, or with a name seen before, is dropped and its
				 * space reused, so only kept pairs use querybuf: each decodes to at most
				 * its raw length plus two NULs ("a&" is "a\0\0"), which sizes the buffer.
				 */
				if (kv->name[0] != '\0' && bp_req_query(r, kv->name) == NULL)
					r->nquery++;
				else
					dst = start;
			}
			if (amp == NULL)
				break;
			p = amp + 1;
		}
	}
	return 0;
}

const char *
bp_req_env(const struct bp_req *r, const char *name)
{
	return r->envp ? FCGX_GetParam(name, (char **)r->envp) : NULL;
}

const char *
bp_req_api_key(const struct bp_req *r)
{
	const char *k = bp_req_env(r, "HTTP_X_API_KEY");

	if (k != NULL && *k != '\0')
		return k;
	if ((k = bp_req_env(r, "HTTP_AUTHORIZATION")) != NULL) {
		if (strncasecmp(k, "Bearer", 6) != 0 || (k[6] != ' ' && k[6] != '\0'))
			return k;	/* another scheme: whole, so the answer can name it */
		for (k += 6; *k == ' '; k++)
			;
		return k;
	}
	return NULL;
}

const char *
bp_req_query(const struct bp_req *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nquery; i++)
		if (strcmp(r->query[i].name, name) == 0)
			return r->query[i].value;
	return NULL;
}

const char *
bp_req_param(const struct bp_req *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nparam; i++)
		if (strcmp(r->param[i].name, name) == 0)
			return r->param[i].value;
	return NULL;
}

int
bp_req_query_int(struct bp_req *r, const char *name, int64_t def, int64_t min, int64_t max,
    int64_t *out)
{
	const char *v = bp_req_query(r, name);

	if (v == NULL) {
		*out = def;
		return 0;
	}
	if (bp_parse_int64(v, min, max, out) == -1) {
		bp_error(r, 400, "invalid_request",
		    "query parameter %s must be a whole number from %lld to %lld", name,
		    (long long)min, (long long)max);
		return -1;
	}
	return 0;
}

int
bp_req_query_bool(struct bp_req *r, const char *name, int *out)
{
	const char *v = bp_req_query(r, name);

	if (v != NULL && strcmp(v, "true") != 0 && strcmp(v, "false") != 0) {
		bp_error(r, 400, "invalid_request", "%s must be true or false", name);
		return -1;
	}
	*out = v != NULL && strcmp(v, "true") == 0;
	return 0;
}

int
bp_req_paging(struct bp_req *r, int64_t limit_def, int64_t *page, int64_t *limit)
{
	if (bp_req_query_int(r, "page", 1, 1, BP_PAGE_MAX, page) == -1 ||
	    bp_req_query_int(r, "limit", limit_def, 1, BP_LIMIT_MAX, limit) == -1)
		return -1;
	return 0;
}

int
bp_json_depth_ok(const char *s, size_t len, int max)
{
	int depth = 0, instr = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (instr) {
			if (c == '\\')
				i++;
			else if (c == '"')
				instr = 0;
			continue;
		}
		if (c == '"')
			instr = 1;
		else if (c == '[' || c == '{') {
			if (++depth > max)
				return 0;
		} else if (c == ']' || c == '}')
			depth--;
	}
	return 1;
}

/*
 * A scan, not a parse: the text has parsed already, so strings, escapes and the nesting are
 * well formed. A string is a member name when it is the first thing in the top-level object or
 * the first after a comma at depth 1.
 */
int
bp_json_find_nul(const char *s, size_t len, char *name, size_t cap)
{
	size_t i, start, klen = 0;
	int depth = 0, expect_key = 0;
	const char *key = NULL;

	if (cap > 0)
		name[0] = '\0';
	/* No escape and no NUL byte (nearly every body): nothing to find, without the scan. */
	if (memchr(s, '\\', len) == NULL && memchr(s, '\0', len) == NULL)
		return 0;
	for (i = 0; i < len; i++) {
		int nul = 0, is_key;

		if (s[i] == '{' || s[i] == '[') {
			depth++;
			expect_key = depth == 1 && s[i] == '{';
			continue;
		}
		if (s[i] == '}' || s[i] == ']') {
			depth--;
			continue;
		}
		if (s[i] == ',' && depth == 1) {
			expect_key = 1;
			continue;
		}
		if (s[i] != '"')
			continue;
		/* A string: find its closing quote, noting any NUL on the way. */
		start = ++i;
		for (; i < len && s[i] != '"'; i++) {
			if (s[i] == '\0')
				nul = 1;
			else if (s[i] == '\\' && i + 1 < len) {
				if (s[i + 1] == 'u' && i + 5 < len && memcmp(s + i + 2, "0000", 4) == 0)
					nul = 1;
				i++;
			}
		}
		is_key = depth == 1 && expect_key;
		if (is_key) {
			expect_key = 0;
			key = s + start;
			klen = i - start;
		}
		if (nul) {
			size_t k;

			/* The name goes into an error message: plain text or nothing. */
			if (key == NULL || klen >= cap)
				return 1;
			for (k = 0; k < klen; k++)
				if (key[k] < 0x20 || key[k] > 0x7e || key[k] == '\\')
					return 1;
			memcpy(name, key, klen);
			name[klen] = '\0';
			return 1;
		}
	}
	return 0;
}

cJSON *
bp_req_json(struct bp_req *r)
{
	cJSON *j;

	if (r->body == NULL || r->body_len == 0) {
		bp_error(r, 400, "invalid_request", "request body must be JSON");
		return NULL;
	}
	if (!bp_json_depth_ok(r->body, r->body_len, BP_JSON_DEPTH)) {
		bp_error(r, 400, "invalid_request", "JSON nested deeper than %d levels",
		    BP_JSON_DEPTH);
		return NULL;
	}
	if ((j = cJSON_ParseWithLength(r->body, r->body_len)) == NULL) {
		bp_error(r, 400, "invalid_request", "request body is not valid JSON");
		return NULL;
	}
	return j;
}

const char *
bp_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 204: return "No Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

int
bp_error(struct bp_req *r, int status, const char *code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bp_buf_reset(&r->out);
	r->status = status;
	r->content_type = "application/json";
	if (bp_buf_adds(&r->out, "{\"error\":{\"code\":\"") == -1 ||
	    bp_buf_json_str(&r->out, code) == -1 ||
	    bp_buf_adds(&r->out, "\",\"message\":\"") == -1 ||
	    bp_buf_json_str(&r->out, msg) == -1 ||
	    bp_buf_printf(&r->out, "\",\"status\":%d}}", status) == -1)
		bp_buf_reset(&r->out);
	return status;
}

int
bp_error_reply(struct bp_req *r, const struct bp_error *err)
{
	return bp_error(r, err->status, err->code, "%s", err->message);
}

int
bp_reply_raw(struct bp_req *r, int status, const char *ctype, const void *p, size_t n)
{
	bp_buf_reset(&r->out);
	if (bp_buf_add(&r->out, p, n) == -1)
		return bp_error(r, 500, "internal_error", "response too large");
	r->status = status;
	r->content_type = ctype;
	return status;
}

cJSON *
bp_req_json_object(struct bp_req *r)
{
	char nul[32];	/* BP_NAME_MAX, as the handlers had it */
	cJSON *body;

	if ((body = bp_req_json(r)) == NULL)
		return NULL;
	if (!cJSON_IsObject(body))
		bp_error(r, 400, "invalid_request", "request body must be a JSON object");
	else if (bp_json_find_nul(r->body, r->body_len, nul, sizeof(nul)))
		bp_error(r, 400, "invalid_request", "%s must not contain NUL characters",
		    nul[0] != '\0' ? nul : "the request body");
	else
		return body;
	cJSON_Delete(body);
	return NULL;
}

int
bp_reply_out(struct bp_req *r, int status)
{
	r->status = status;
	r->content_type = "application/json";
	return status;
}

int
bp_reply_json(struct bp_req *r, int status, const cJSON *j)
{
	char *s = cJSON_PrintUnformatted(j);
	int rc;

	if (s == NULL)
		return bp_error(r, 500, "internal_error", "out of memory");
	rc = bp_reply_raw(r, status, "application/json", s, strlen(s));
	free(s);
	return rc;
}

int
bp_reply_header(struct bp_req *r, const char *name, const char *fmt, ...)
{
	va_list ap;
	int rc;

	if (bp_buf_printf(&r->headers, "%s: ", name) == -1)
		return -1;
	va_start(ap, fmt);
	rc = bp_buf_vprintf(&r->headers, fmt, ap);
	va_end(ap);
	if (rc == -1)
		return -1;
	return bp_buf_adds(&r->headers, "\r\n");
}
