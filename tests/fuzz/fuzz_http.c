/*
 * libFuzzer harness for the request parsing every FastCGI program runs on untrusted input
 * (lib/core/http.c) and the route table lookup (lib/core/fcgi.c). The input is split at its first two
 * newlines into a method, a request target and a body; the request struct is reused across
 * inputs with bp_req_reset, as the accept loop reuses it. A target that starts with 0x7f is a
 * repeat: the next byte times 32 copies of the rest, up to 8 KiB, so the fuzzer reaches the
 * length limits (414, the decode buffers, the segment and parameter counts) in a few steps.
 * Beyond memory safety it checks what the handlers rely on, aborting on a violation:
 *
 *  - a parsed request has at most BP_MAX_SEGS segments, none empty, none "." or "..", the
 *    method is upper-case letters, and every query name is unique and non-empty;
 *  - a refused request answers 400 or 414 in the uniform error body, which parses as JSON;
 *  - the 404 body the pipeline builds from the raw target parses as JSON too (any bytes);
 *  - a matched route has as many segments as its pattern, and each :param is that segment;
 *    a 405 (path matched, method not) never comes with a route;
 *  - bp_req_query_int gives a value within its bounds or a 400;
 *  - bp_json_depth_ok never reads past the length; when it says yes, cJSON's own nesting
 *    limit is not reached.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fcgi.h"
#include "core/http.h"
#include "core/util.h"

#define TARGET_REPEAT_MAX	8192

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int h(struct bp_req *r) { (void)r; return 200; }

static const struct bp_route routes[] = {
	{ "GET", "/v1/wallets", h, BP_SCOPE_WALLETS, 1, 0 },
	{ "POST", "/v1/wallets", h, BP_SCOPE_WALLETS, 1, 0 },
	{ "GET", "/v1/wallets/:address", h, BP_SCOPE_WALLETS, 1, 0 },
	{ "DELETE", "/v1/wallets/:address", h, BP_SCOPE_WALLETS, 1, 0 },
	{ "GET", "/v1/wallets/:address/tokens/:token", h, BP_SCOPE_DATA_READ, 1, 0 },
	{ "POST", "/v1/rpc/:chain/:network", h, BP_SCOPE_NONE, 0, 0 },
	{ "GET", "/v1/:a/:b/:c/:d/:e/:f/:g/:h", h, BP_SCOPE_NONE, 0, 0 },	/* all params */
};

static struct bp_req *req;

static void
check_json(const struct bp_req *r)
{
	cJSON *j = cJSON_ParseWithLength(r->out.data, r->out.len);

	if (j == NULL || !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "error")))
		abort();
	cJSON_Delete(j);
}

/* Counts the segments of a route pattern. */
static size_t
pattern_segments(const char *p)
{
	size_t n = 0;

	for (; *p != '\0'; p++)
		if (*p == '/' && p[1] != '\0')
			n++;
	return n;
}

static void
check_parsed(struct bp_req *r)
{
	const struct bp_route *rt;
	size_t i, k;
	int64_t v;
	int matched;

	if (r->nseg > BP_MAX_SEGS || r->nquery > BP_MAX_QUERY || r->method[0] == '\0')
		abort();
	for (i = 0; r->method[i] != '\0'; i++)
		if (r->method[i] < 'A' || r->method[i] > 'Z')
			abort();
	for (i = 0; i < r->nseg; i++)
		if (r->seg[i][0] == '\0' || strcmp(r->seg[i], ".") == 0 ||
		    strcmp(r->seg[i], "..") == 0)
			abort();
	for (i = 0; i < r->nquery; i++) {
		if (r->query[i].name[0] == '\0' || r->query[i].value == NULL)
			abort();
		for (k = 0; k < i; k++)
			if (strcmp(r->query[i].name, r->query[k].name) == 0)
				abort();
		if (bp_req_query(r, r->query[i].name) != r->query[i].value)
			abort();
	}

	rt = bp_route_match(routes, BP_NITEMS(routes), r, &matched);
	if (rt != NULL) {
		if (!matched || strcmp(rt->method, r->method) != 0 ||
		    pattern_segments(rt->pattern) != r->nseg || r->nparam > BP_MAX_PARAMS)
			abort();
		for (i = 0; i < r->nparam; i++) {
			for (k = 0; k < r->nseg; k++)
				if (r->param[i].value == r->seg[k])
					break;
			if (k == r->nseg || bp_req_param(r, r->param[i].name) == NULL)
				abort();
		}
	}

	if (bp_req_query_int(r, "limit", 50, 1, 100, &v) == 0) {
		if (v < 1 || v > 100)
			abort();
	} else {
		if (r->status != 400)
			abort();
		check_json(r);
	}
	if (bp_req_query_int(r, "from", 0, INT64_MIN, INT64_MAX, &v) != 0)
		check_json(r);
}

static void
check_body(struct bp_req *r, const char *body, size_t len)
{
	cJSON *j;
	char name[64] = "";

	/* An exact-length copy, so reading one byte past the length is caught. */
	char *copy = malloc(len > 0 ? len : 1);

	if (copy == NULL)
		return;
	memcpy(copy, body, len);
	if (bp_json_depth_ok(copy, len, BP_JSON_DEPTH)) {
		r->body = copy;
		r->body_len = len;
		j = bp_req_json(r);
		cJSON_Delete(j);
		if (j == NULL && r->status != 400)
			abort();
		/* A NUL found (by the scan, or none by its shortcut) is one the text holds. */
		if (j != NULL && bp_json_find_nul(copy, len, name, sizeof(name)) &&
		    memchr(copy, '\0', len) == NULL && memmem(copy, len, "\\u0000", 6) == NULL)
			abort();
		if (strlen(name) >= sizeof(name))
			abort();
	}
	r->body = NULL;
	r->body_len = 0;
	free(copy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *nl1, *nl2;
	char method[32], *target;
	size_t mlen, tlen;
	int rc;

	if (req == NULL) {
		if ((req = malloc(sizeof(*req))) == NULL)
			return 0;
		bp_req_init(req);
	}
	bp_req_reset(req);

	/* method \n target \n body: each part may hold any byte, NULs included. */
	if ((nl1 = memchr(p, '\n', size)) == NULL)
		return 0;
	mlen = (size_t)(nl1 - p);
	if (mlen >= sizeof(method))
		mlen = sizeof(method) - 1;
	memcpy(method, p, mlen);
	method[mlen] = '\0';
	nl2 = memchr(nl1 + 1, '\n', size - (size_t)(nl1 + 1 - p));
	tlen = nl2 ? (size_t)(nl2 - nl1 - 1) : size - (size_t)(nl1 + 1 - p);
	if (tlen >= 2 && (unsigned char)nl1[1] == 0x7f) {
		const char *frag = nl1 + 3;
		size_t flen = tlen - 2, copies = (size_t)(unsigned char)nl1[2] * 32, i;

		tlen = flen * copies < TARGET_REPEAT_MAX ? flen * copies : TARGET_REPEAT_MAX;
		if ((target = malloc(tlen + 1)) == NULL)
			return 0;
		for (i = 0; i < tlen; i++)
			target[i] = frag[i % flen];
	} else {
		if ((target = malloc(tlen + 1)) == NULL)
			return 0;
		memcpy(target, nl1 + 1, tlen);
	}
	target[tlen] = '\0';

	rc = bp_req_parse(req, method, target);
	if (rc == 0)
		check_parsed(req);
	else {
		if ((rc != 400 && rc != 414) || req->status != rc)
			abort();
		check_json(req);
	}
	/* The 404 the pipeline builds from the raw target: valid JSON whatever the bytes. */
	bp_error(req, 404, "not_found", "no such endpoint: %s %s", method, target);
	check_json(req);
	if (nl2 != NULL)
		check_body(req, nl2 + 1, size - (size_t)(nl2 + 1 - p));
	free(target);
	return 0;
}
