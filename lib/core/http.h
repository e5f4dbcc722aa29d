/*
 * One HTTP request and its response, as a FastCGI program sees them. The parsing here is the
 * trust boundary: the method, the request target (path segments, query), the headers and the
 * body all come from the client. It does not touch FastCGI itself, so the unit tests and the fuzz
 * harness drive it directly (tests/fuzz/fuzz_http.c).
 */
#ifndef BP_HTTP_H
#define BP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "auth.h"
#include "buf.h"
#include "limits.h"

#define BP_MAX_SEGS	16
#define BP_MAX_QUERY	32
#define BP_MAX_PARAMS	8
#define BP_TARGET_MAX	4096
#define BP_JSON_DEPTH	64
#define BP_RESP_CAP	(64u * 1024 * 1024)

struct bp_config;
struct bp_db;
struct bp_metrics;
struct bp_route;

struct bp_kv {
	const char	*name;
	const char	*value;
};

struct bp_req {
	/* The request, as parsed. */
	char		 method[16];
	char		*seg[BP_MAX_SEGS];	/* decoded path segments; "/v1/a/b" is v1, a, b */
	size_t		 nseg;
	struct bp_kv	 query[BP_MAX_QUERY];	/* decoded; a repeated name keeps the first */
	size_t		 nquery;
	struct bp_kv	 param[BP_MAX_PARAMS];	/* :name segments of the matched route */
	char		 pname[BP_MAX_PARAMS][32];
	size_t		 nparam;
	char		*body;			/* NUL-terminated; may hold NULs */
	size_t		 body_len;
	const char	*remote_addr;
	char		 id[24];		/* request id, in X-Request-Id and the log */
	char *const	*envp;			/* CGI variables: HTTP_* headers and so on */

	/* Filled by the pipeline before the handler runs. */
	struct bp_key	 key;
	int		 authed;
	const struct bp_route *route;
	const struct bp_config *cfg;
	struct bp_db	*db;
	struct bp_limits *lim;
	struct bp_limit_state limit;
	struct bp_metrics *metrics;		/* the head's counters; NULL: none */
	enum bp_limit_verdict refused;		/* the limit that answered 429; BP_LIMIT_OK */
	int		 owed;			/* 1: the request is not counted yet (bp_req_charge) */
	void		*ctx;			/* the thread's program context (lib/core/fcgi.h) */

	/* The response. */
	int		 status;
	const char	*content_type;
	struct bp_buf	 headers;		/* extra "Name: value\r\n" lines */
	struct bp_buf	 out;

	/* Storage the pointers above point into. */
	char		 segbuf[BP_TARGET_MAX];
	char		 querybuf[BP_TARGET_MAX + 2 * BP_MAX_QUERY];	/* see bp_req_parse */
	struct bp_buf	 bodybuf;
};

/* Prepares r for a request; bp_req_free releases what the request grew. */
void		 bp_req_init(struct bp_req *);
void		 bp_req_reset(struct bp_req *);
void		 bp_req_free(struct bp_req *);

/*
 * Parses method and request target ("/v1/x/y?a=1"): percent-decoding, no NUL, no empty or dot
 * segments, bounded counts. Returns 0, or the HTTP status to answer (400, 414) with the error body
 * already set in r.
 */
int		 bp_req_parse(struct bp_req *, const char *method, const char *target);
/* The CGI variable name ("HTTP_X_API_KEY") from envp, or NULL. */
const char	*bp_req_env(const struct bp_req *, const char *name);
/*
 * The API key from X-API-Key, else from "Authorization: Bearer" ("" when Bearer has no token);
 * an Authorization header of another scheme is returned whole ("Basic ..."), which bp_auth_lookup
 * tells apart from a key (BP_AUTH_SCHEME). NULL when there is neither.
 */
const char	*bp_req_api_key(const struct bp_req *);
/* The query value of name, or NULL. */
const char	*bp_req_query(const struct bp_req *, const char *name);
/* The :name path parameter of the matched route, or NULL. */
const char	*bp_req_param(const struct bp_req *, const char *name);
/*
 * The integer query parameter name within [min, max], def when absent. Returns 0, or -1 with a
 * 400 invalid_request naming the parameter set in r.
 */
int		 bp_req_query_int(struct bp_req *, const char *name, int64_t def, int64_t min,
		    int64_t max, int64_t *out);
/*
 * The query parameter name as a flag: "true" 1, "false" or absent 0. Returns 0, or -1 with a
 * 400 invalid_request naming the parameter set in r.
 */
int		 bp_req_query_bool(struct bp_req *, const char *name, int *out);

#define BP_PAGE_MAX	1000000000	/* so the offset cannot overflow */
#define BP_LIMIT_MAX	100
/*
 * A list's paging query parameters: page from 1 to BP_PAGE_MAX (1 when absent), limit from 1 to
 * BP_LIMIT_MAX (limit_def when absent). Returns 0, or -1 with a 400 as bp_req_query_int.
 */
int		 bp_req_paging(struct bp_req *, int64_t limit_def, int64_t *page, int64_t *limit);
/*
 * The body parsed as JSON with its nesting capped at BP_JSON_DEPTH. Returns a tree owned by the
 * caller (cJSON_Delete), or NULL with a 400 invalid_request set in r.
 */
cJSON		*bp_req_json(struct bp_req *);
/* Checks JSON nesting depth without parsing; 1 when within max. */
int		 bp_json_depth_ok(const char *, size_t len, int max);
/*
 * Finds a NUL in any string of the JSON text s (len bytes, may hold NULs): a raw 0 byte or the
 * escape \u0000. cJSON ends its strings at the first NUL, so a parsed body reads "12\u0000 more"
 * as "12" and a member name "owner\u0000x" as "owner": a handler that takes strings from a body
 * calls this after bp_req_json and refuses the body on 1. Meant for text that has parsed; on any
 * other it still reads only [s, s + len), but its answer means little.
 *
 * Returns 1 when there is a NUL, with the raw name of the top-level member it is in (or is part
 * of) copied to name (room for cap bytes) for the error message: "" when the body is not an
 * object, or the name has a byte outside printable ASCII or a backslash, or does not fit. Returns
 * 0 when there is none, with name "". Nothing is allocated; there is no other error.
 */
int		 bp_json_find_nul(const char *s, size_t len, char *name, size_t cap);
/*
 * The body as a JSON object with no NUL in any string (bp_req_json, then bp_json_find_nul).
 * Returns a tree owned by the caller (cJSON_Delete), or NULL with a 400 set in r.
 */
cJSON		*bp_req_json_object(struct bp_req *);

/*
 * Sets the response to the uniform error body of SPEC.md section 7:
 * {"error":{"code":..,"message":..,"status":..}}. Returns status, so handlers can
 * "return bp_error(r, 404, ...)".
 */
int		 bp_error(struct bp_req *, int status, const char *code, const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
struct bp_error;
/* bp_error with what a lib/ call set in err (lib/core/error.h). Returns its status. */
int		 bp_error_reply(struct bp_req *, const struct bp_error *err);
/* Sets a JSON response: status and the serialized tree (not freed). Returns status. */
int		 bp_reply_json(struct bp_req *, int status, const cJSON *);
/* Answers with what the handler wrote into r->out as JSON. Returns status. */
int		 bp_reply_out(struct bp_req *, int status);
/* Sets a response body of raw bytes with a content type. Returns status. */
int		 bp_reply_raw(struct bp_req *, int status, const char *ctype, const void *,
		    size_t);
/* Adds a response header line; 0 or -1. */
int		 bp_reply_header(struct bp_req *, const char *name, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
/* The reason phrase of a status ("Not Found"). */
const char	*bp_status_text(int status);

#endif
