/*
 * lib/core/http.c and the route table of lib/core/fcgi.c: request-target parsing (lighttpd's
 * src/t/test_request.c style: each malformed target with the status it must get), query
 * integers, the API key headers, the JSON depth check and the uniform error body, and route
 * matching with 404 and 405 told apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fcgi.h"
#include "core/http.h"
#include "core/util.h"
#include "unit.h"

/* A request on the heap, as bp_fcgi_main keeps it; the struct is large. */
static struct bp_req *
req_new(void)
{
	struct bp_req *r = malloc(sizeof(*r));

	CU_ASSERT_FATAL(r != NULL);
	bp_req_init(r);
	return r;
}

static void
req_free(struct bp_req *r)
{
	bp_req_free(r);
	free(r);
}

/* Checks that r holds the uniform error body with status and code, as valid JSON. */
static void
assert_error_body(struct bp_req *r, int status, const char *code)
{
	cJSON *j = cJSON_ParseWithLength(r->out.data, r->out.len), *e, *c, *s, *m;

	CU_ASSERT_EQUAL(r->status, status);
	CU_ASSERT_STRING_EQUAL(r->content_type, "application/json");
	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_EQUAL(cJSON_GetArraySize(j), 1);
	e = cJSON_GetObjectItemCaseSensitive(j, "error");
	c = cJSON_GetObjectItemCaseSensitive(e, "code");
	s = cJSON_GetObjectItemCaseSensitive(e, "status");
	m = cJSON_GetObjectItemCaseSensitive(e, "message");
	CU_ASSERT(cJSON_IsString(c) && strcmp(c->valuestring, code) == 0);
	CU_ASSERT(cJSON_IsNumber(s) && s->valueint == status);
	CU_ASSERT(cJSON_IsString(m) && m->valuestring[0] != '\0');
	cJSON_Delete(j);
}

struct prow {
	const char	*method;
	const char	*target;
	int		 status;		/* 0: parsed */
	size_t		 nseg;
	const char	*seg[4];		/* the first segments, decoded */
};

static const struct prow prows[] = {
	{ "GET", "/", 0, 0, { NULL } },
	{ "GET", "/v1", 0, 1, { "v1" } },
	{ "GET", "/v1/", 0, 1, { "v1" } },			/* a trailing slash adds nothing */
	{ "GET", "/v1/a/b", 0, 3, { "v1", "a", "b" } },
	{ "GET", "/v1/a/b/", 0, 3, { "v1", "a", "b" } },
	{ "POST", "/v1/rpc/ethereum/mainnet", 0, 4, { "v1", "rpc", "ethereum", "mainnet" } },
	/* Each segment is decoded on its own: %2F stays inside it. */
	{ "GET", "/v1/a%2Fb", 0, 2, { "v1", "a/b" } },
	{ "GET", "/v1/a%2fb/c", 0, 3, { "v1", "a/b", "c" } },
	{ "GET", "/v1/%2F", 0, 2, { "v1", "/" } },
	{ "GET", "/v1/%41%62c", 0, 2, { "v1", "Abc" } },
	{ "GET", "/v1/a+b", 0, 2, { "v1", "a+b" } },		/* '+' is a space only in queries */
	{ "GET", "/v1/a%20b", 0, 2, { "v1", "a b" } },
	{ "GET", "/v1/%25", 0, 2, { "v1", "%" } },
	{ "GET", "/v1/...", 0, 2, { "v1", "..." } },		/* not a dot segment */
	{ "GET", "/v1/.a", 0, 2, { "v1", ".a" } },
	{ "GET", "/v1/%ff%fe", 0, 2, { "v1", "\xff\xfe" } },	/* bytes, not UTF-8: no route has them */
	{ "GET", "/v1/a#b", 0, 2, { "v1", "a#b" } },
	{ "GET", "/v1?", 0, 1, { "v1" } },
	/* An encoded NUL, anywhere. */
	{ "GET", "/v1/%00", 400, 0, { NULL } },
	{ "GET", "/v1/a%00b", 400, 0, { NULL } },
	{ "GET", "/%00/v1", 400, 0, { NULL } },
	/* Bad escapes. */
	{ "GET", "/v1/%", 400, 0, { NULL } },
	{ "GET", "/v1/%4", 400, 0, { NULL } },
	{ "GET", "/v1/%4/x", 400, 0, { NULL } },
	{ "GET", "/v1/%zz", 400, 0, { NULL } },
	{ "GET", "/v1/%g0", 400, 0, { NULL } },
	{ "GET", "/v1/%0g", 400, 0, { NULL } },
	{ "GET", "/v1/%%41", 400, 0, { NULL } },
	{ "GET", "/v1/%-1", 400, 0, { NULL } },
	/* Dot segments are refused, plain or encoded, never resolved. */
	{ "GET", "/v1/.", 400, 0, { NULL } },
	{ "GET", "/v1/..", 400, 0, { NULL } },
	{ "GET", "/v1/../x", 400, 0, { NULL } },
	{ "GET", "/v1/./x", 400, 0, { NULL } },
	{ "GET", "/..", 400, 0, { NULL } },
	{ "GET", "/v1/%2e", 400, 0, { NULL } },
	{ "GET", "/v1/%2E%2e", 400, 0, { NULL } },
	{ "GET", "/v1/.%2e/x", 400, 0, { NULL } },
	/* Empty segments. */
	{ "GET", "//", 400, 0, { NULL } },
	{ "GET", "//v1", 400, 0, { NULL } },
	{ "GET", "/v1//a", 400, 0, { NULL } },
	{ "GET", "/v1/a//", 400, 0, { NULL } },
	/* Not an origin-form target. */
	{ "GET", "", 400, 0, { NULL } },
	{ "GET", "v1/a", 400, 0, { NULL } },
	{ "GET", "*", 400, 0, { NULL } },
	{ "GET", "http://host/v1", 400, 0, { NULL } },
	{ "GET", "?a=1", 400, 0, { NULL } },
	{ "GET", NULL, 400, 0, { NULL } },
	/* Methods: upper-case letters, shorter than 16. */
	{ "DELETE", "/v1", 0, 1, { "v1" } },
	{ "PROPFIND", "/v1", 0, 1, { "v1" } },
	{ "ABCDEFGHIJKLMNO", "/v1", 0, 1, { "v1" } },		/* 15 letters */
	{ "ABCDEFGHIJKLMNOP", "/v1", 400, 0, { NULL } },	/* 16 */
	{ "", "/v1", 400, 0, { NULL } },
	{ NULL, "/v1", 400, 0, { NULL } },
	{ "get", "/v1", 400, 0, { NULL } },
	{ "G T", "/v1", 400, 0, { NULL } },
	{ "G\x01T", "/v1", 400, 0, { NULL } },
	{ "G\xc3\x89T", "/v1", 400, 0, { NULL } },
	{ "M-SEARCH", "/v1", 400, 0, { NULL } },
};

static void
test_parse_table(void)
{
	size_t i, k;

	for (i = 0; i < BP_NITEMS(prows); i++) {
		const struct prow *p = &prows[i];
		struct bp_req *r = req_new();
		int rc = bp_req_parse(r, p->method, p->target);

		CU_ASSERT_EQUAL(rc, p->status);
		if (rc != p->status)
			fprintf(stderr, "parse row %zu (%s %s): %d\n", i, p->method ? p->method : "NULL",
			    p->target ? p->target : "NULL", rc);
		if (rc != 0) {
			assert_error_body(r, rc, "invalid_request");
		} else {
			CU_ASSERT_EQUAL(r->nseg, p->nseg);
			for (k = 0; k < p->nseg && k < 4 && k < r->nseg; k++)
				CU_ASSERT_STRING_EQUAL(r->seg[k], p->seg[k]);
			CU_ASSERT_STRING_EQUAL(r->method, p->method);
		}
		req_free(r);
	}
}

/* Builds n segments "/s0/s1/..." and then tail into buf. */
static void
segments(char *buf, size_t len, size_t n, const char *tail)
{
	size_t i, off = 0;

	for (i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, len - off, "/s%zu", i);
	snprintf(buf + off, len - off, "%s", tail);
}

static void
test_parse_limits(void)
{
	static char target[BP_TARGET_MAX + 16];
	struct bp_req *r = req_new();

	segments(target, sizeof(target), BP_MAX_SEGS, "");
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	CU_ASSERT_EQUAL(r->nseg, BP_MAX_SEGS);
	CU_ASSERT_STRING_EQUAL(r->seg[BP_MAX_SEGS - 1], "s15");
	bp_req_reset(r);
	segments(target, sizeof(target), BP_MAX_SEGS, "/");		/* a trailing slash is no segment */
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	bp_req_reset(r);
	segments(target, sizeof(target), BP_MAX_SEGS + 1, "");
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 400);
	assert_error_body(r, 400, "invalid_request");
	bp_req_reset(r);

	/* The target: 4095 bytes parse, 4096 are 414, and so is anything longer. */
	memset(target, 'a', sizeof(target));
	target[0] = '/';
	target[BP_TARGET_MAX - 1] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	CU_ASSERT_EQUAL(r->nseg, 1);
	CU_ASSERT_EQUAL(strlen(r->seg[0]), BP_TARGET_MAX - 2);
	bp_req_reset(r);
	memset(target, 'a', sizeof(target));
	target[0] = '/';
	target[BP_TARGET_MAX] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 414);
	assert_error_body(r, 414, "invalid_request");
	bp_req_reset(r);
	target[BP_TARGET_MAX] = 'a';
	target[BP_TARGET_MAX + 15] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 414);
	bp_req_reset(r);
	/* 4096 bytes that are mostly query. */
	memset(target, 'q', sizeof(target));
	memcpy(target, "/v1?q=", 6);
	target[BP_TARGET_MAX] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 414);
	bp_req_reset(r);
	/* The longest target made of escapes only. */
	{
		size_t i;

		target[0] = '/';
		for (i = 1; i + 3 <= BP_TARGET_MAX - 1; i += 3)
			memcpy(target + i, "%41", 3);
		target[i] = '\0';
		CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
		CU_ASSERT_EQUAL(strlen(r->seg[0]), (i - 1) / 3);
	}
	req_free(r);
}

struct qrow {
	const char	*target;
	int		 status;
	size_t		 nquery;
	const char	*name[3];
	const char	*value[3];
};

static const struct qrow qrows[] = {
	{ "/v1?a=1&b=2", 0, 2, { "a", "b" }, { "1", "2" } },
	{ "/v1?a=1&a=2", 0, 1, { "a" }, { "1" } },		/* a repeated name keeps the first */
	{ "/v1?a=1&b=2&a=3&b=4", 0, 2, { "a", "b" }, { "1", "2" } },
	{ "/v1?a+b=c+d", 0, 1, { "a b" }, { "c d" } },		/* '+' is a space */
	{ "/v1?a=%2B%20+", 0, 1, { "a" }, { "+  " } },
	{ "/v1?a=%26&b=%3D", 0, 2, { "a", "b" }, { "&", "=" } },
	{ "/v1?a", 0, 1, { "a" }, { "" } },
	{ "/v1?a=", 0, 1, { "a" }, { "" } },
	{ "/v1?a=b=c", 0, 1, { "a" }, { "b=c" } },
	{ "/v1?=x", 0, 0, { NULL }, { NULL } },		/* no name: dropped */
	{ "/v1?&&&", 0, 0, { NULL }, { NULL } },
	{ "/v1?a=1&", 0, 1, { "a" }, { "1" } },
	{ "/v1?&a=1", 0, 1, { "a" }, { "1" } },
	{ "/v1?", 0, 0, { NULL }, { NULL } },
	{ "/v1?a=1?b=2", 0, 1, { "a" }, { "1?b=2" } },
	{ "/v1?%c3%a9=%ff", 0, 1, { "\xc3\xa9" }, { "\xff" } },
	{ "/v1?a=%00", 400, 0, { NULL }, { NULL } },
	{ "/v1?%00=1", 400, 0, { NULL }, { NULL } },
	{ "/v1?a=%zz", 400, 0, { NULL }, { NULL } },
	{ "/v1?a=%", 400, 0, { NULL }, { NULL } },
	{ "/v1?a=1&b=%4", 400, 0, { NULL }, { NULL } },
	/* A bad path is refused even with a good query. */
	{ "/v1/%00?a=1", 400, 0, { NULL }, { NULL } },
	{ "/v1/..?a=1", 400, 0, { NULL }, { NULL } },
};

static void
test_query_table(void)
{
	size_t i, k;

	for (i = 0; i < BP_NITEMS(qrows); i++) {
		const struct qrow *q = &qrows[i];
		struct bp_req *r = req_new();
		int rc = bp_req_parse(r, "GET", q->target);

		CU_ASSERT_EQUAL(rc, q->status);
		if (rc != q->status)
			fprintf(stderr, "query row %zu (%s): %d\n", i, q->target, rc);
		if (rc == 0) {
			CU_ASSERT_EQUAL(r->nquery, q->nquery);
			for (k = 0; k < q->nquery && k < r->nquery; k++) {
				CU_ASSERT_STRING_EQUAL(r->query[k].name, q->name[k]);
				CU_ASSERT_STRING_EQUAL(bp_req_query(r, q->name[k]), q->value[k]);
			}
			CU_ASSERT_PTR_NULL(bp_req_query(r, "missing"));
		} else {
			assert_error_body(r, rc, "invalid_request");
		}
		req_free(r);
	}
}

static void
test_query_limits(void)
{
	static char target[BP_TARGET_MAX];
	struct bp_req *r = req_new();
	size_t i, off;

	/* BP_MAX_QUERY distinct names parse; one more is 400. */
	off = (size_t)snprintf(target, sizeof(target), "/v1?");
	for (i = 0; i < BP_MAX_QUERY; i++)
		off += (size_t)snprintf(target + off, sizeof(target) - off, "p%zu=%zu&", i, i);
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	CU_ASSERT_EQUAL(r->nquery, BP_MAX_QUERY);
	CU_ASSERT_STRING_EQUAL(bp_req_query(r, "p31"), "31");
	bp_req_reset(r);
	snprintf(target + off, sizeof(target) - off, "extra=1");
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 400);
	bp_req_reset(r);

	/*
	 * Names without '=' take one byte more decoded than raw ("a&" is "a\0\0"): a target made
	 * of them, repeated or not, must still fit the decode buffer.
	 */
	off = (size_t)snprintf(target, sizeof(target), "/?");
	while (off + 2 < sizeof(target) - 1) {
		memcpy(target + off, "a&", 2);
		off += 2;
	}
	target[off] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	CU_ASSERT_EQUAL(r->nquery, 1);
	CU_ASSERT_STRING_EQUAL(bp_req_query(r, "a"), "");
	bp_req_reset(r);
	/* The same with 32 distinct short names first, then one long name. */
	off = (size_t)snprintf(target, sizeof(target), "/?");
	for (i = 0; i < BP_MAX_QUERY - 1; i++)
		off += (size_t)snprintf(target + off, sizeof(target) - off, "%c%c&",
		    (int)('a' + i % 26), (int)('a' + i / 26));
	memset(target + off, 'z', sizeof(target) - 1 - off);
	target[sizeof(target) - 1] = '\0';
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", target), 0);
	CU_ASSERT_EQUAL(r->nquery, BP_MAX_QUERY);
	req_free(r);
}

struct irow {
	const char	*value;		/* NULL: parameter absent */
	int		 ok;
	int64_t		 v;
};

static const struct irow irows[] = {
	{ NULL, 1, 50 },			/* the default */
	{ "1", 1, 1 },
	{ "100", 1, 100 },
	{ "0", 0, 0 },
	{ "101", 0, 0 },
	{ "-1", 0, 0 },
	{ "", 0, 0 },
	{ "abc", 0, 0 },
	{ "+5", 0, 0 },
	{ "05", 0, 0 },
	{ "5.0", 0, 0 },
	{ " 5", 0, 0 },
	{ "9223372036854775807", 0, 0 },
	{ "9223372036854775808", 0, 0 },
	{ "-9223372036854775809", 0, 0 },
	{ "0x10", 0, 0 },
};

static void
test_query_int(void)
{
	size_t i;

	for (i = 0; i < BP_NITEMS(irows); i++) {
		struct bp_req *r = req_new();
		char target[128];
		int64_t v = -7;

		if (irows[i].value == NULL)
			snprintf(target, sizeof(target), "/v1/x?other=1");
		else
			snprintf(target, sizeof(target), "/v1/x?limit=%s", irows[i].value);
		CU_ASSERT_FATAL(bp_req_parse(r, "GET", target) == 0);
		CU_ASSERT_EQUAL(bp_req_query_int(r, "limit", 50, 1, 100, &v), irows[i].ok ? 0 : -1);
		if (irows[i].ok) {
			CU_ASSERT_EQUAL(v, irows[i].v);
		} else {
			assert_error_body(r, 400, "invalid_request");
			CU_ASSERT(strstr(r->out.data, "limit") != NULL);	/* names the parameter */
			CU_ASSERT(strstr(r->out.data, "1 to 100") != NULL);
		}
		req_free(r);
	}
}

static void
test_query_bool(void)
{
	static const struct {
		const char	*target;
		int		 rc, v;
	} rows[] = {
		{ "/v1/x", 0, 0 },
		{ "/v1/x?f=true", 0, 1 },
		{ "/v1/x?f=false", 0, 0 },
		{ "/v1/x?f=TRUE", -1, 0 },
		{ "/v1/x?f=1", -1, 0 },
		{ "/v1/x?f=", -1, 0 },
		{ "/v1/x?f=true%00", 400, 0 },	/* a NUL never reaches a handler */
		{ "/v1/x?f=truex", -1, 0 },
	};
	struct bp_req *r;
	size_t i;
	int v, rc;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		r = req_new();
		rc = bp_req_parse(r, "GET", rows[i].target);
		if (rows[i].rc == 400) {
			CU_ASSERT_EQUAL(rc, 400);
			req_free(r);
			continue;
		}
		CU_ASSERT_FATAL(rc == 0);
		CU_ASSERT_EQUAL(bp_req_query_bool(r, "f", &v), rows[i].rc);
		if (rows[i].rc == 0) {
			CU_ASSERT_EQUAL(v, rows[i].v);
		} else {
			assert_error_body(r, 400, "invalid_request");
			CU_ASSERT(strstr(r->out.data, "f must be true or false") != NULL);
		}
		req_free(r);
	}
}

struct drow {
	const char	*s;
	int		 max;
	int		 ok;
};

static const struct drow drows[] = {
	{ "", 1, 1 },
	{ "{}", 1, 1 },
	{ "{}", 0, 0 },
	{ "[[[]]]", 3, 1 },
	{ "[[[]]]", 2, 0 },
	{ "[[],[],[]]", 2, 1 },				/* siblings do not add up */
	{ "{\"a\":{\"b\":[1]}}", 3, 1 },
	{ "{\"a\":{\"b\":[1]}}", 2, 0 },
	/* Brackets inside strings are text. */
	{ "[\"[[[[[[[[\"]", 1, 1 },
	{ "{\"{{{{\":\"}}}}[[[[\"}", 1, 1 },
	/* An escaped quote does not end the string; an escaped backslash does not escape it. */
	{ "[\"\\\"[[[[\"]", 1, 1 },
	{ "[\"\\\\\",[[[[]]]]]", 2, 0 },
	{ "[\"\\\\\",[[[[]]]]]", 5, 1 },
	/* An unterminated string hides the rest; a trailing backslash reads nothing past the end. */
	{ "[\"[[[[[[", 1, 1 },
	{ "[\"\\", 1, 1 },
};

static void
test_json_depth(void)
{
	static char deep[200001];
	size_t i;

	for (i = 0; i < BP_NITEMS(drows); i++) {
		CU_ASSERT_EQUAL(bp_json_depth_ok(drows[i].s, strlen(drows[i].s), drows[i].max),
		    drows[i].ok);
		if (bp_json_depth_ok(drows[i].s, strlen(drows[i].s), drows[i].max) != drows[i].ok)
			fprintf(stderr, "depth row %zu (%s)\n", i, drows[i].s);
	}
	/* 100000 levels deep fails fast; the same inside a string is fine. */
	memset(deep, '[', 100000);
	memset(deep + 100000, ']', 100000);
	CU_ASSERT_EQUAL(bp_json_depth_ok(deep, 200000, BP_JSON_DEPTH), 0);
	deep[0] = '"';
	deep[199999] = '"';
	memset(deep + 1, '[', 199998);
	CU_ASSERT_EQUAL(bp_json_depth_ok(deep, 200000, BP_JSON_DEPTH), 1);
	/* Exactly the limit, and one more. */
	memset(deep, '[', BP_JSON_DEPTH);
	memset(deep + BP_JSON_DEPTH, ']', BP_JSON_DEPTH);
	CU_ASSERT_EQUAL(bp_json_depth_ok(deep, 2 * BP_JSON_DEPTH, BP_JSON_DEPTH), 1);
	memset(deep, '{', BP_JSON_DEPTH + 1);
	CU_ASSERT_EQUAL(bp_json_depth_ok(deep, BP_JSON_DEPTH + 1, BP_JSON_DEPTH), 0);
	/* The length bounds the scan: a NUL is a byte like any other. */
	CU_ASSERT_EQUAL(bp_json_depth_ok("[\0[[", 4, 2), 0);
	CU_ASSERT_EQUAL(bp_json_depth_ok("[\0[[", 2, 2), 1);
}

/* A body with its length: a literal may hold NULs. */
#define BODY(lit)	lit, sizeof(lit) - 1

struct nrow {
	const char	*s;
	size_t		 len;
	size_t		 cap;		/* room for the name */
	int		 found;
	const char	*name;		/* what goes into the message */
};

static const struct nrow nrows[] = {
	{ BODY("{\"owner\":\"0xab\",\"salt\":\"12\"}"), 32, 0, "" },
	{ BODY("{}"), 32, 0, "" },
	{ BODY(""), 32, 0, "" },
	/* The escape and the raw byte, in a value: the member is named. */
	{ BODY("{\"salt\":\"12\\u0000 more\"}"), 32, 1, "salt" },
	{ BODY("{\"owner\":\"0xab\",\"salt\":\"1\0 2\"}"), 32, 1, "salt" },
	{ BODY("{\"salt\":\"\\u00000\"}"), 32, 1, "salt" },
	/* In a name: the raw name is not plain text, so it is not echoed. */
	{ BODY("{\"owner\\u0000x\":\"a\"}"), 32, 1, "" },
	{ BODY("{\"ow\0ner\":\"a\"}"), 32, 1, "" },
	/* Deeper down, the top-level member is named; after a nested array, the next one. */
	{ BODY("{\"meta\":{\"a\":[\"x\",\"\\u0000\"]}}"), 32, 1, "meta" },
	{ BODY("{\"a\":[1,{\"c\":2}],\"b\":\"\\u0000\"}"), 32, 1, "b" },
	{ BODY("{\"a\":\"{,[\",\"b\":\"x\\u0000\"}"), 32, 1, "b" },
	/* Not a NUL: another code point, an escaped backslash before "u0000", upper-case U. */
	{ BODY("{\"a\":\"\\u0001\\u000a\\u1000\"}"), 32, 0, "" },
	{ BODY("{\"a\":\"\\\\u0000\"}"), 32, 0, "" },
	{ BODY("{\"a\":\"\\\\\\u0000\"}"), 32, 1, "a" },
	/* A NUL outside any string is white space to cJSON, and not looked at. */
	{ BODY("{\"a\":1}\0"), 32, 0, "" },
	{ BODY("{\0\"a\":1}"), 32, 0, "" },
	/* Not an object: found, but no name. */
	{ BODY("[\"\\u0000\"]"), 32, 1, "" },
	{ BODY("[{\"a\":\"\\u0000\"}]"), 32, 1, "" },
	{ BODY("\"\\u0000\""), 32, 1, "" },
	/* Names that do not go into a message: too long for the room, not ASCII, empty. */
	{ BODY("{\"abcdefgh\":\"\\u0000\"}"), 8, 1, "" },
	{ BODY("{\"abcdefgh\":\"\\u0000\"}"), 9, 1, "abcdefgh" },
	{ BODY("{\"caf\xc3\xa9\":\"\\u0000\"}"), 32, 1, "" },
	{ BODY("{\"a\\\"b\":\"\\u0000\"}"), 32, 1, "" },
	{ BODY("{\"\":\"\\u0000\"}"), 32, 1, "" },
	/* No room at all: found, and nothing written. */
	{ BODY("{\"a\":\"\\u0000\"}"), 0, 1, NULL },
	/* The length bounds the scan: an escape cut short is not a NUL. */
	{ "{\"a\":\"\\u0000\"}", 11, 32, 0, "" },
	{ "{\"a\":\"\\u0000\"}", 12, 32, 1, "a" },
	{ "{\"a\":\"\\", 7, 32, 0, "" },
};

static void
test_json_find_nul(void)
{
	char name[33];
	size_t i;

	for (i = 0; i < BP_NITEMS(nrows); i++) {
		const struct nrow *n = &nrows[i];
		int found;

		memset(name, 'Z', sizeof(name));
		found = bp_json_find_nul(n->s, n->len, name, n->cap);
		CU_ASSERT_EQUAL(found, n->found);
		if (n->name != NULL) {
			CU_ASSERT_STRING_EQUAL(name, n->name);
		} else {
			CU_ASSERT_EQUAL(name[0], 'Z');
		}
		if (found != n->found || (n->name != NULL && strcmp(name, n->name) != 0))
			fprintf(stderr, "NUL row %zu: %d \"%.32s\"\n", i, found, name);
	}
}

static void
test_req_json(void)
{
	static char deep[2 * BP_JSON_DEPTH + 3];
	struct bp_req *r = req_new();
	cJSON *j;

	r->body = (char *)"{\"a\":[1,2]}";
	r->body_len = strlen(r->body);
	j = bp_req_json(r);
	CU_ASSERT(j != NULL && cJSON_IsObject(j));
	cJSON_Delete(j);

	r->body = (char *)"";
	r->body_len = 0;
	CU_ASSERT_PTR_NULL(bp_req_json(r));
	assert_error_body(r, 400, "invalid_request");
	bp_req_reset(r);

	r->body = (char *)"{\"a\":";
	r->body_len = strlen(r->body);
	CU_ASSERT_PTR_NULL(bp_req_json(r));
	assert_error_body(r, 400, "invalid_request");
	bp_req_reset(r);

	/* A NUL inside the body ends nothing early: the length is what counts. */
	r->body = (char *)"{\"a\":\0}";
	r->body_len = 7;
	CU_ASSERT_PTR_NULL(bp_req_json(r));
	bp_req_reset(r);

	memset(deep, '[', BP_JSON_DEPTH + 1);
	memset(deep + BP_JSON_DEPTH + 1, ']', BP_JSON_DEPTH + 1);
	r->body = deep;
	r->body_len = 2 * BP_JSON_DEPTH + 2;
	CU_ASSERT_PTR_NULL(bp_req_json(r));
	assert_error_body(r, 400, "invalid_request");
	CU_ASSERT(strstr(r->out.data, "nested") != NULL);
	bp_req_reset(r);
	r->body = deep + 1;		/* exactly BP_JSON_DEPTH */
	r->body_len = 2 * BP_JSON_DEPTH;
	j = bp_req_json(r);
	CU_ASSERT(j != NULL);
	cJSON_Delete(j);
	req_free(r);
}

static void
test_api_key(void)
{
	static char *const xkey[] = { "HTTP_X_API_KEY=abc", NULL };
	static char *const bearer[] = { "HTTP_AUTHORIZATION=Bearer abc", NULL };
	static char *const spaces[] = { "HTTP_AUTHORIZATION=bearer    abc", NULL };
	static char *const basic[] = { "HTTP_AUTHORIZATION=Basic YWJjOg==", NULL };
	static char *const bare[] = { "HTTP_AUTHORIZATION=Bearer", NULL };
	static char *const both[] = { "HTTP_AUTHORIZATION=Bearer two", "HTTP_X_API_KEY=one", NULL };
	static char *const empty[] = { "HTTP_X_API_KEY=", "HTTP_AUTHORIZATION=Bearer two", NULL };
	static char *const none[] = { "REQUEST_METHOD=GET", NULL };
	struct bp_req *r = req_new();

	r->envp = xkey;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "abc");
	r->envp = bearer;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "abc");
	r->envp = spaces;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "abc");
	r->envp = basic;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "Basic YWJjOg==");	/* whole: the scheme */
	r->envp = bare;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "");
	r->envp = both;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "one");	/* X-API-Key first */
	r->envp = empty;
	CU_ASSERT_STRING_EQUAL(bp_req_api_key(r), "two");
	r->envp = none;
	CU_ASSERT_PTR_NULL(bp_req_api_key(r));
	CU_ASSERT_STRING_EQUAL(bp_req_env(r, "REQUEST_METHOD"), "GET");
	CU_ASSERT_PTR_NULL(bp_req_env(r, "REQUEST"));
	r->envp = NULL;
	CU_ASSERT_PTR_NULL(bp_req_api_key(r));
	req_free(r);
}

static void
test_error_body(void)
{
	struct bp_req *r = req_new();
	char big[2000];

	CU_ASSERT_EQUAL(bp_error(r, 404, "not_found", "no such endpoint: %s", "/v1/\"x\"\\"), 404);
	CU_ASSERT_STRING_EQUAL(r->out.data, "{\"error\":{\"code\":\"not_found\",\"message\":"
	    "\"no such endpoint: /v1/\\\"x\\\"\\\\\",\"status\":404}}");
	assert_error_body(r, 404, "not_found");
	/* Raw bytes from a request line: control characters and stray bytes stay valid JSON. */
	CU_ASSERT_EQUAL(bp_error(r, 400, "invalid_request", "bad: %s", "\x01\xff\xc3\n"), 400);
	assert_error_body(r, 400, "invalid_request");
	CU_ASSERT(strstr(r->out.data, "\\u0001\\ufffd\\ufffd\\n") != NULL);
	/* A long message is cut, not lost. */
	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	bp_error(r, 500, "internal_error", "%s", big);
	assert_error_body(r, 500, "internal_error");
	/* A second error replaces the first. */
	bp_error(r, 429, "rate_limited", "slow down");
	assert_error_body(r, 429, "rate_limited");
	CU_ASSERT_STRING_EQUAL(bp_status_text(429), "Too Many Requests");
	CU_ASSERT_STRING_EQUAL(bp_status_text(414), "URI Too Long");
	CU_ASSERT_STRING_EQUAL(bp_status_text(299), "Unknown");
	req_free(r);
}

static void
test_reset_keeps_process_state(void)
{
	struct bp_req *r = req_new();
	const struct bp_config *cfg = (const struct bp_config *)0x1;
	struct bp_db *db = (struct bp_db *)0x2;
	struct bp_limits *lim = (struct bp_limits *)0x3;

	r->cfg = cfg;
	r->db = db;
	r->lim = lim;
	CU_ASSERT_EQUAL(bp_req_parse(r, "GET", "/v1/a?b=c"), 0);
	bp_reply_header(r, "X-Test", "%d", 1);
	bp_error(r, 404, "not_found", "x");
	bp_req_reset(r);
	CU_ASSERT_EQUAL(r->nseg, 0);
	CU_ASSERT_EQUAL(r->nquery, 0);
	CU_ASSERT_EQUAL(r->status, 0);
	CU_ASSERT_EQUAL(r->out.len, 0);
	CU_ASSERT_EQUAL(r->headers.len, 0);
	CU_ASSERT_PTR_EQUAL(r->cfg, cfg);
	CU_ASSERT_PTR_EQUAL(r->db, db);
	CU_ASSERT_PTR_EQUAL(r->lim, lim);
	req_free(r);
}

/* Route matching: a small table with shared paths, parameters and methods. */
static int h(struct bp_req *r) { (void)r; return 200; }

static const struct bp_route routes[] = {
	{ "GET", "/v1/wallets", h, BP_SCOPE_WALLETS, 1, 0 },			/* 0 */
	{ "POST", "/v1/wallets", h, BP_SCOPE_WALLETS, 1, 0 },			/* 1 */
	{ "GET", "/v1/wallets/:address", h, BP_SCOPE_WALLETS, 1, 0 },		/* 2 */
	{ "DELETE", "/v1/wallets/:address", h, BP_SCOPE_WALLETS, 1, 0 },	/* 3 */
	{ "GET", "/v1/wallets/:address/tokens/:token", h, BP_SCOPE_DATA_READ, 1, 0 },	/* 4 */
	{ "GET", "/v1/wallets/stats", h, BP_SCOPE_WALLETS, 1, 0 },		/* 5: after :address */
	{ "POST", "/v1/rpc/:chain/:network", h, BP_SCOPE_NONE, 0, 0 },		/* 6 */
};

struct mrow {
	const char	*method;
	const char	*target;
	int		 route;		/* index, or -1 */
	int		 matched;	/* path_matched: 1 with route -1 means 405 */
	const char	*pname, *pvalue;
};

static const struct mrow mrows[] = {
	{ "GET", "/v1/wallets", 0, 1, NULL, NULL },
	{ "GET", "/v1/wallets/", 0, 1, NULL, NULL },
	{ "POST", "/v1/wallets", 1, 1, NULL, NULL },
	{ "PUT", "/v1/wallets", -1, 1, NULL, NULL },			/* 405 */
	{ "HEAD", "/v1/wallets", -1, 1, NULL, NULL },
	{ "GET", "/v1/wallets/0xabc", 2, 1, "address", "0xabc" },
	{ "DELETE", "/v1/wallets/0xabc", 3, 1, "address", "0xabc" },
	{ "PATCH", "/v1/wallets/0xabc", -1, 1, NULL, NULL },		/* 405 */
	{ "GET", "/v1/wallets/a%2Fb", 2, 1, "address", "a/b" },	/* one segment */
	{ "GET", "/v1/wallets/a/b", -1, 0, NULL, NULL },		/* 404 */
	{ "GET", "/v1/wallets/0xabc/tokens/0xdef", 4, 1, "token", "0xdef" },
	{ "POST", "/v1/wallets/0xabc/tokens/0xdef", -1, 1, NULL, NULL },
	{ "GET", "/v1/wallets/0xabc/tokens", -1, 0, NULL, NULL },
	{ "GET", "/v1/wallets/0xabc/nfts/0xdef", -1, 0, NULL, NULL },
	{ "GET", "/v1/wallets/stats", 2, 1, "address", "stats" },	/* first match wins */
	{ "GET", "/v1/wallet", -1, 0, NULL, NULL },
	{ "GET", "/v1/walletsx", -1, 0, NULL, NULL },
	{ "GET", "/V1/wallets", -1, 0, NULL, NULL },
	{ "GET", "/v1", -1, 0, NULL, NULL },
	{ "GET", "/", -1, 0, NULL, NULL },
	{ "POST", "/v1/rpc/ethereum/mainnet", 6, 1, "network", "mainnet" },
	{ "GET", "/v1/rpc/ethereum/mainnet", -1, 1, NULL, NULL },
	{ "POST", "/v1/rpc/ethereum", -1, 0, NULL, NULL },
	{ "POST", "/v1/rpc/ethereum/mainnet/x", -1, 0, NULL, NULL },
};

static void
test_route_match(void)
{
	size_t i;

	for (i = 0; i < BP_NITEMS(mrows); i++) {
		const struct mrow *m = &mrows[i];
		struct bp_req *r = req_new();
		const struct bp_route *rt;
		int matched = -1;

		CU_ASSERT_FATAL(bp_req_parse(r, m->method, m->target) == 0);
		rt = bp_route_match(routes, BP_NITEMS(routes), r, &matched);
		CU_ASSERT_EQUAL(rt == NULL ? -1 : (int)(rt - routes), m->route);
		CU_ASSERT_EQUAL(matched, m->matched);
		if ((rt == NULL ? -1 : (int)(rt - routes)) != m->route || matched != m->matched)
			fprintf(stderr, "route row %zu (%s %s): %d, %d\n", i, m->method, m->target,
			    rt == NULL ? -1 : (int)(rt - routes), matched);
		if (m->pname != NULL) {
			CU_ASSERT(bp_req_param(r, m->pname) != NULL &&
			    strcmp(bp_req_param(r, m->pname), m->pvalue) == 0);
		}
		if (rt == NULL) {
			CU_ASSERT_EQUAL(r->nparam, 0);
		}
		CU_ASSERT_PTR_NULL(bp_req_param(r, "nope"));
		req_free(r);
	}
	/* Both parameters of a two-parameter route. */
	{
		struct bp_req *r = req_new();
		int matched;

		CU_ASSERT_FATAL(bp_req_parse(r, "POST", "/v1/rpc/solana/devnet") == 0);
		CU_ASSERT_PTR_EQUAL(bp_route_match(routes, BP_NITEMS(routes), r, &matched),
		    &routes[6]);
		CU_ASSERT_EQUAL(r->nparam, 2);
		CU_ASSERT_STRING_EQUAL(bp_req_param(r, "chain"), "solana");
		CU_ASSERT_STRING_EQUAL(bp_req_param(r, "network"), "devnet");
		/* An empty table matches nothing (fcgi/v1.c). */
		CU_ASSERT_PTR_NULL(bp_route_match(routes, 0, r, &matched));
		CU_ASSERT_EQUAL(matched, 0);
		req_free(r);
	}
}

BP_UNIT_SUITE(http, NULL, NULL,
	{ "request target table", test_parse_table },
	{ "segment count and target length (414)", test_parse_limits },
	{ "query table", test_query_table },
	{ "query count and decode buffer bounds", test_query_limits },
	{ "bp_req_query_int", test_query_int },
	{ "bp_req_query_bool", test_query_bool },
	{ "bp_json_depth_ok", test_json_depth },
	{ "bp_json_find_nul", test_json_find_nul },
	{ "bp_req_json", test_req_json },
	{ "API key from X-API-Key and Authorization", test_api_key },
	{ "uniform error body", test_error_body },
	{ "bp_req_reset keeps the process state", test_reset_keeps_process_state },
	{ "route table: 404, 405 and parameters", test_route_match })
