/*
 * The JSON-RPC proxy pipeline (lib/rpc/rpc_proxy.h; SPEC.md section 4; docs/rpc.md): everything
 * between an authenticated request and the node's answer, shared by the programs that forward
 * JSON-RPC (fcgi/rpc.c; the WebSocket program for non-subscription methods). It validates the
 * envelope, judges each item against the program's method table (class, scope, plan), charges
 * each valid item one request for the day and its compute units, and forwards only the items
 * that passed.
 *
 *  - A single call with only the four envelope members and an id that survives any node
 *    unchanged is forwarded as the client sent it and answered with the node's bytes as they
 *    came: no parse, no re-serialisation.
 *  - Other single calls and every batch are forwarded written anew (the four members only) with
 *    the proxy's own ids, and the answer is put together item by item, in the client's order,
 *    with the client's id bytes put back.
 *  - Errors the proxy answers itself are JSON-RPC error objects in a 200 answer and cost
 *    nothing; a missing scope (403) or a limit (429) on a single call, a test key on a mainnet
 *    (403) and a failure of every upstream (500) use the uniform error body.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/config.h"
#include "core/db.h"
#include "core/fcgi.h"
#include "core/hex.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/util.h"
#include "head_mark.h"
#include "net/upstream.h"
#include "rpc_cache.h"
#include "rpc_client.h"
#include "rpc_envelope.h"
#include "rpc_methods.h"
#include "rpc_proxy.h"
#include "rpc_scan.h"

#define HEAD_TTL_US	(10 * INT64_C(1000000))	/* how long a known head serves archive checks */
#define KEEP_MAX	(1024 * 1024)		/* buffers larger than this are not kept */
#define HASHES_KEPT	64	/* block hashes whose numbers a proxy remembers */
#define HASH_LOOKUPS	4	/* hashes a request may have looked up; the rest cost archive */

/* What the proxy decided for one item. */
struct verdict {
	int		 code;		/* 0: forward it; else the JSON-RPC error it gets */
	unsigned	 cu;		/* compute units charged */
	size_t		 fwd;		/* its index in the forwarded batch */
	char		 msg[224];
	/* The response cache (lib/rpc/rpc_cache.h). */
	enum bp_rpc_cache_rule rule;	/* BP_CACHE_NEVER: not looked up, not kept */
	int64_t		 block;		/* for BP_CACHE_AT_BLOCK */
	unsigned char	 key[32];
	int		 hit;		/* answered from the cache: p->hits[hit_off, + hit_len) */
	size_t		 hit_off, hit_len;
	int		 head;		/* eth_blockNumber: kept to the shared high-water mark */
};

/* An answer of the upstream for one forwarded item: the element and its id, in p->ans. */
struct answer {
	struct bp_rpc_scan_span	elem;
	struct bp_rpc_scan_span	id;
};

/*
 * A proxy: one per program (one per thread, were the program threaded). Its buffers and tables
 * are reused by every request; only the cached chain heads carry over from one to the next.
 */
struct bp_rpc_proxy {
	const struct bp_config		*cfg;
	const struct bp_rpc_table	*table;
	struct bp_upstream		*up;
	size_t				 cap;		/* max_batch */
	struct bp_rpc_envelope_item		*items;
	struct verdict			*v;
	struct answer			*ans_of;
	struct bp_buf			 req;	/* what goes upstream when it is not the body */
	struct bp_buf			 ans;	/* what came back, when it must be merged */
	struct bp_db			*db;	/* the response cache's; NULL: no cache */
	struct bp_db			*own_db;	/* rpc_cache_file's connection, when set */
	struct bp_head_mark		*mark;	/* heads shared by every process; may be NULL */
	struct bp_buf			 hits;	/* results the cache answered, this request */
	struct bp_buf			 scratch;	/* cache keys */
	struct bp_metrics		*metrics;	/* the request's (settle counts in it) */
	unsigned			 nhits;
	struct {
		int64_t	number;
		int64_t	at;			/* monotonic microseconds; 0 = never fetched */
	} heads[BP_MAX_NETWORKS];
	/* Numbers of block hashes, for the price of EIP-1898 reads: a hash names one number. */
	struct {
		size_t	net;			/* index in cfg->nets + 1; 0: free */
		int64_t	number;
		char	hash[BP_BLOCK_HASH_STR];
	} hashes[HASHES_KEPT];
	size_t				 next_hash;	/* the slot replaced next */
	unsigned			 lookups;	/* this request's, up to HASH_LOOKUPS */
};

struct bp_rpc_proxy *
bp_rpc_proxy_new(const struct bp_config *cfg, const struct bp_rpc_table *table)
{
	struct bp_rpc_proxy *p, *ret = NULL;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		bp_err("%s: out of memory", __func__);
		return NULL;
	}
	p->cfg = cfg;
	p->table = table;
	p->cap = (size_t)cfg->max_batch;
	/* The upstream caps answers at max_response; requests are bounded by max_body. */
	bp_buf_init(&p->req, SIZE_MAX / 4);
	bp_buf_init(&p->ans, SIZE_MAX / 4);
	bp_buf_init(&p->hits, SIZE_MAX / 4);
	bp_buf_init(&p->scratch, SIZE_MAX / 4);
	/* Without the file (no limits file, as in the unit tests) heads are not kept monotonic. */
	p->mark = bp_head_mark_open(cfg);
	if ((p->up = bp_upstream_new(cfg)) == NULL)
		goto out;
	p->items = calloc(p->cap, sizeof(*p->items));
	p->v = calloc(p->cap, sizeof(*p->v));
	p->ans_of = calloc(p->cap, sizeof(*p->ans_of));
	if (p->items == NULL || p->v == NULL || p->ans_of == NULL) {
		bp_err("%s: out of memory", __func__);
		goto out;
	}
	ret = p;
	p = NULL;
out:
	bp_rpc_proxy_free(p);
	return ret;
}

void
bp_rpc_proxy_free(struct bp_rpc_proxy *p)
{
	if (p == NULL)
		return;
	bp_upstream_free(p->up);
	free(p->items);
	free(p->v);
	free(p->ans_of);
	bp_buf_free(&p->req);
	bp_buf_free(&p->ans);
	bp_buf_free(&p->hits);
	bp_buf_free(&p->scratch);
	bp_head_mark_close(p->mark);
	bp_db_close(p->own_db);
	free(p);
}

void
bp_rpc_proxy_use_cache(struct bp_rpc_proxy *p, struct bp_db *db)
{
	p->db = NULL;
	if (!p->cfg->rpc_cache)
		return;
	if (p->cfg->rpc_cache_file[0] == '\0') {
		p->db = db;
		return;
	}
	/* A file of its own: this thread's connection to it (made by `blockport migrate`). */
	if (p->own_db == NULL && (p->own_db = bp_db_open(p->cfg->rpc_cache_file, 0)) == NULL)
		bp_warn("%s: no response cache", p->cfg->rpc_cache_file);
	p->db = p->own_db;
}

/* Answers one JSON-RPC error object (HTTP 200). */
static int
reply_error(struct bp_req *r, const char *id, size_t idlen, int code, const char *msg)
{
	bp_buf_reset(&r->out);
	if (bp_rpc_envelope_error_obj(&r->out, id, idlen, code, msg) == -1)
		return bp_error(r, 500, "internal_error", "out of memory");
	return bp_reply_out(r, 200);
}

static int
upstream_failed(struct bp_req *r, const struct bp_network *net, enum bp_upstream_status s)
{
	if (s == BP_UPSTREAM_TOO_LARGE)
		return bp_error(r, 500, "internal_error",
		    "upstream response too large (the limit is %lld bytes)",
		    (long long)r->cfg->max_response);
	return bp_error(r, 500, "internal_error",
	    "no upstream node of %s/%s answered; retry with exponential backoff", net->chain,
	    net->network);
}

/* The method name for messages: as sent when it is short printable ASCII. */
static const char *
shown(const struct bp_rpc_envelope_item *it)
{
	size_t i;

	if (it->method_len > BP_JSONRPC_METHOD_MAX)
		return "(a method name over 64 bytes)";
	for (i = 0; i < it->method_len; i++)
		if ((unsigned char)it->method[i] < 0x20 || (unsigned char)it->method[i] > 0x7e)
			return "(a method name with unprintable characters)";
	return it->method;
}

static void
set_v(struct verdict *v, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
set_v(struct verdict *v, int code, const char *fmt, ...)
{
	va_list ap;

	v->code = code;
	v->cu = 0;
	va_start(ap, fmt);
	vsnprintf(v->msg, sizeof(v->msg), fmt, ap);
	va_end(ap);
}

/* A quantity answer ("0x1a") as a number, or -1. */
static int64_t
quantity(const cJSON *j)
{
	uint64_t v;

	if (!cJSON_IsString(j) || j->valuestring == NULL ||
	    bp_hex_quantity_lenient(j->valuestring, strlen(j->valuestring), &v) == -1 ||
	    v > (uint64_t)INT64_MAX)
		return -1;
	return (int64_t)v;
}

/*
 * The chain head as far as an archive check of block number needs it: a block already older
 * than archive_depth below the known head stays so (heads only grow), so the head is fetched
 * (eth_blockNumber, with failover) only when none is known or the known one is old. -1 when it
 * cannot be had: the call is then priced as recent.
 */
static int64_t
head_for(struct bp_rpc_proxy *p, const struct bp_network *net, int64_t number)
{
	size_t idx = (size_t)(net - p->cfg->nets);
	struct bp_rpc_client_error err;
	int64_t now = bp_mono_us(), h;
	cJSON *res;

	if (idx >= BP_MAX_NETWORKS)
		return -1;
	if (p->heads[idx].at != 0 && (now - p->heads[idx].at < HEAD_TTL_US ||
	    number < p->heads[idx].number - net->archive_depth))
		return p->heads[idx].number;
	res = bp_rpc_client_call(p->up, net, "eth_blockNumber", NULL, &err);
	h = quantity(res);
	cJSON_Delete(res);
	if (h < 0) {
		bp_warn("%s.%s: no head for the archive check: %s", net->chain, net->network,
		    err.kind != BP_RPC_CLIENT_ERR_NONE ? err.message : "bad eth_blockNumber answer");
		return p->heads[idx].at != 0 ? p->heads[idx].number : -1;
	}
	p->heads[idx].number = h;
	p->heads[idx].at = now;
	return h;
}

/*
 * The number of the block hash names on net (eth_getBlockByHash, remembered: a hash names one
 * block for good), or -1 when the node does not know it, cannot be asked, or this request has
 * had its HASH_LOOKUPS: a read at such a hash is priced as archive, so a batch of made-up
 * hashes costs its sender, not the proxy's time.
 */
static int64_t
hash_number(struct bp_rpc_proxy *p, const struct bp_network *net, const char *hash)
{
	size_t idx = (size_t)(net - p->cfg->nets) + 1, i;
	struct bp_rpc_client_error err;
	char text[BP_BLOCK_HASH_STR + 16];
	cJSON *params, *res;
	int64_t n;

	for (i = 0; i < HASHES_KEPT; i++)
		if (p->hashes[i].net == idx && strcmp(p->hashes[i].hash, hash) == 0)
			return p->hashes[i].number;
	if (p->lookups >= HASH_LOOKUPS)
		return -1;
	p->lookups++;
	snprintf(text, sizeof(text), "[\"%s\",false]", hash);
	if ((params = cJSON_Parse(text)) == NULL)
		return -1;
	res = bp_rpc_client_call(p->up, net, "eth_getBlockByHash", params, &err);
	n = quantity(cJSON_GetObjectItemCaseSensitive(res, "number"));
	cJSON_Delete(params);
	cJSON_Delete(res);
	if (n < 0)
		return -1;
	i = p->next_hash++ % HASHES_KEPT;
	p->hashes[i].net = idx;
	p->hashes[i].number = n;
	memcpy(p->hashes[i].hash, hash, BP_BLOCK_HASH_STR);
	return n;
}

static unsigned
cost(struct bp_rpc_proxy *p, const struct bp_req *r, const struct bp_network *net, const struct bp_rpc_method *m,
    const struct bp_rpc_envelope_item *it)
{
	char hash[BP_BLOCK_HASH_STR];
	enum bp_block_ref ref;
	int64_t number;

	if (m->archive_cu == 0 || it->params.len == 0 || r->body[it->params.off] != '[')
		return m->cu;
	ref = bp_rpc_methods_block_arg(r->body + it->params.off, it->params.len, m->block_arg,
	    &number, hash);
	if (ref == BP_BLOCK_HASH && (number = hash_number(p, net, hash)) >= 0)
		ref = BP_BLOCK_NUMBER;
	if (ref != BP_BLOCK_NUMBER)
		return bp_rpc_methods_cost(m, ref, 0, -1, net->archive_depth);
	return bp_rpc_methods_cost(m, BP_BLOCK_NUMBER, number, head_for(p, net, number),
	    net->archive_depth);
}

/* What a cache hit costs: a quarter of the call's compute units, rounded up (docs/rpc.md). */
static unsigned
hit_cost(unsigned cu)
{
	return (cu + 3) / 4;
}

/*
 * Looks item it up in the response cache: sets v->rule, v->key and, on a hit, v->hit with the
 * result appended to p->hits. Returns v->hit.
 */
static int
lookup(struct bp_rpc_proxy *p, const struct bp_req *r, const struct bp_network *net,
    const struct bp_rpc_envelope_item *it, struct verdict *v)
{
	const char *params = it->params.len != 0 ? r->body + it->params.off : "";

	v->rule = BP_CACHE_NEVER;
	v->hit = 0;
	v->head = net->kind == BP_CHAIN_EVM && it->method_len == 15 &&
	    memcmp(it->method, "eth_blockNumber", 15) == 0;
	if (p->db == NULL || !net->cache)
		return 0;
	v->rule = bp_rpc_cache_rule(net->kind, it->method, it->method_len, params,
	    it->params.len, &v->block);
	/* Near-head answers are kept only with a TTL. */
	if (v->rule == BP_CACHE_NEAR_HEAD && net->cache_ttl_ms == 0)
		v->rule = BP_CACHE_NEVER;
	if (v->rule == BP_CACHE_NEVER)
		return 0;
	if (bp_rpc_cache_key(&p->scratch, net, it->method, it->method_len, params,
	    it->params.len, v->key) == -1) {
		v->rule = BP_CACHE_NEVER;
		return 0;
	}
	v->hit_off = p->hits.len;
	if (bp_rpc_cache_get(p->db, v->key, bp_now_us(), &p->hits) == 1) {
		v->hit = 1;
		v->hit_len = p->hits.len - v->hit_off;
		p->nhits++;
	}
	bp_metrics_addf(r->metrics, 1, "blockport_rpc_cache_requests_total{network=\"%s.%s\","
	    "result=\"%s\"}", net->chain, net->network, v->hit ? "hit" : "miss");
	return v->hit;
}

/*
 * Judges one item: method, class, plan, scope, compute units. Records the verdict in v and
 * returns 0; for a single call, a missing scope or a limit answers the whole request instead
 * (403 or 429, set in r) and that status is returned.
 */
static int
judge(struct bp_rpc_proxy *p, struct bp_req *r, const struct bp_network *net, const struct bp_rpc_envelope_item *it,
    struct verdict *v, int batch)
{
	const struct bp_rpc_method *m;
	enum bp_limit_verdict lv;
	enum bp_scope need;

	v->code = 0;
	v->cu = 0;
	v->msg[0] = '\0';
	v->rule = BP_CACHE_NEVER;
	v->hit = 0;
	v->head = 0;
	if (it->code != 0) {
		set_v(v, it->code, "%s", it->why);
		return 0;
	}
	if ((m = bp_rpc_method(p->table, net->kind, it->method, it->method_len)) == NULL) {
		set_v(v, BP_JSONRPC_METHOD_NOT_FOUND, "the method %s does not exist/is not available",
		    shown(it));
		return 0;
	}
	switch (m->cls) {
	case BP_RPC_DENIED:
		set_v(v, BP_JSONRPC_METHOD_NOT_FOUND, "the method %s is not offered by this service "
		    "(node accounts, node administration and dev-chain controls are disabled)",
		    shown(it));
		return 0;
	case BP_RPC_SUBSCRIBE:
		set_v(v, BP_JSONRPC_METHOD_NOT_FOUND, "%s is not available over HTTP: subscribe over "
		    "WebSocket at /v1/ws/%s/%s", shown(it), net->chain, net->network);
		return 0;
	case BP_RPC_DEBUG:
		if (!r->key.plan.debug) {
			set_v(v, BP_JSONRPC_METHOD_NOT_FOUND, "the method %s is not available on "
			    "the %s plan (debug_* and trace_* need a plan with debug)", shown(it),
			    r->key.plan.name);
			return 0;
		}
		break;
	default:
		break;
	}
	need = m->cls == BP_RPC_WRITE ? BP_SCOPE_RPC_WRITE : BP_SCOPE_RPC_READ;
	if (!(r->key.scopes & BP_SCOPE_BIT(need))) {
		if (!batch)
			return bp_error(r, 403, "forbidden", "this API key lacks the %s scope, "
			    "which %s needs", bp_scope_name(need), shown(it));
		set_v(v, BP_JSONRPC_FORBIDDEN, "forbidden: this API key lacks the %s scope, which "
		    "%s needs", bp_scope_name(need), shown(it));
		return 0;
	}
	v->cu = cost(p, r, net, m, it);
	if (lookup(p, r, net, it, v))
		v->cu = hit_cost(v->cu);
	if ((lv = bp_req_charge(r, 1, v->cu)) != BP_LIMIT_OK) {
		if (v->hit) {
			v->hit = 0;
			p->nhits--;
		}
		if (!batch || bp_req_charge_whole(lv))
			return bp_error_limited(r, lv);
		set_v(v, BP_JSONRPC_LIMITED, "rate limited: %s exceeded; retry after %lld s",
		    bp_limit_what(lv),
		    (long long)r->limit.retry_after);
		return 0;
	}
	return 0;
}

/* Appends src with [cut.off, cut.off + cut.len) replaced by rep (rlen bytes); 0 or -1. */
static int
splice(struct bp_buf *b, const char *src, struct bp_rpc_scan_span whole,
    struct bp_rpc_scan_span cut, const char *rep, size_t rlen)
{
	if (bp_buf_add(b, src + whole.off, cut.off - whole.off) == -1 ||
	    bp_buf_add(b, rep, rlen) == -1 ||
	    bp_buf_add(b, src + cut.off + cut.len, whole.off + whole.len - cut.off - cut.len) == -1)
		return -1;
	return 0;
}

/* Appends {"jsonrpc":"2.0","id":ID,"result":RESULT} to b; 0 or -1. */
static int
result_obj(struct bp_buf *b, const char *id, size_t idlen, const char *res, size_t rlen)
{
	if (bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
	    bp_buf_add(b, id, idlen) == -1 || bp_buf_adds(b, ",\"result\":") == -1 ||
	    bp_buf_add(b, res, rlen) == -1 || bp_buf_adds(b, "}") == -1)
		return -1;
	return 0;
}

/*
 * Keeps an eth_blockNumber result (res, rlen bytes: a JSON string) to the shared high-water
 * mark. upstream is the index of the upstream that answered, or -1 for a cached answer (the
 * mark is then only read). Returns 1 with the JSON string to answer instead in fixed (cap
 * bytes), or 0 to answer res.
 */
static int
mark_head(struct bp_rpc_proxy *p, const struct bp_network *net, const char *res, size_t rlen,
    long upstream, char *fixed, size_t cap)
{
	uint64_t q;
	int64_t h;
	size_t n;

	if (p->mark == NULL || rlen < 3 || res[0] != '"' || res[rlen - 1] != '"' ||
	    bp_hex_quantity_lenient(res + 1, rlen - 2, &q) == -1 || q > (uint64_t)INT64_MAX)
		return 0;
	if (upstream < 0)
		h = bp_head_mark_get(p->mark, net);
	else
		h = bp_head_mark_see(p->mark, net, (int64_t)q, (unsigned)upstream);
	if (h <= (int64_t)q || cap < 4)
		return 0;
	fixed[0] = '"';
	if (bp_hex_quantity_encode((uint64_t)h, fixed + 1, cap - 2) == -1)
		return 0;
	n = strlen(fixed);
	fixed[n] = '"';
	fixed[n + 1] = '\0';
	return 1;
}

/* The highest finalized block the proxy knows of net without asking (-1: none). */
static int64_t
known_finalized(struct bp_rpc_proxy *p, const struct bp_network *net)
{
	size_t idx = (size_t)(net - p->cfg->nets);
	int64_t h = bp_head_mark_get(p->mark, net);

	if (idx < BP_MAX_NETWORKS && p->heads[idx].at != 0 && p->heads[idx].number > h)
		h = p->heads[idx].number;
	return h < 0 || h < net->finality_depth ? -1 : h - net->finality_depth;
}

/*
 * After an upstream answer (elem, elen bytes: one response object) to item it: keeps
 * eth_blockNumber to the high-water mark and stores the result in the cache when its rule says
 * so. upstream is the index of the upstream that answered. Returns 1 when the answer must be
 * written anew with the result in fixed (cap bytes), else 0.
 */
static int
settle(struct bp_rpc_proxy *p, const struct bp_network *net, const struct bp_rpc_envelope_item *it,
    const struct verdict *v, const char *elem, size_t elen, long upstream, char *fixed,
    size_t cap)
{
	struct bp_rpc_scan_span res, err;
	size_t idx = (size_t)(net - p->cfg->nets);
	const char *rs;
	int64_t keep, now;
	size_t rl;
	int fix = 0;

	if (bp_rpc_scan_member(elem, elen, "result", &res) != 1 ||
	    bp_rpc_scan_member(elem, elen, "error", &err) != 0)
		return 0;	/* an error, or not an answer: never kept */
	rs = elem + res.off;
	rl = res.len;
	if (v->head && (fix = mark_head(p, net, rs, rl, upstream, fixed, cap)) == 1) {
		rs = fixed;
		rl = strlen(fixed);
	}
	if (v->rule == BP_CACHE_NEVER || p->db == NULL)
		return fix;
	keep = bp_rpc_cache_keep(v->rule, v->block, rs, rl, known_finalized(p, net),
	    net->cache_ttl_ms);
	/* Not final by the heads known: final by the head now, if the known one is old? */
	if (keep != BP_CACHE_KEEP_FOREVER && (v->rule == BP_CACHE_AT_BLOCK ||
	    v->rule == BP_CACHE_RESULT_BLOCK) && idx < BP_MAX_NETWORKS &&
	    (p->heads[idx].at == 0 || bp_mono_us() - p->heads[idx].at >= HEAD_TTL_US)) {
		head_for(p, net, INT64_MAX);
		keep = bp_rpc_cache_keep(v->rule, v->block, rs, rl, known_finalized(p, net),
		    net->cache_ttl_ms);
	}
	/*
	 * Logs are the one answer a node that has not reached a range gives without an error or a
	 * null (an empty or short list). With several upstreams they are kept for good only from
	 * the one that set the head mark, which has reached it.
	 */
	if (keep == BP_CACHE_KEEP_FOREVER && net->nupstream > 1 && it->method_len == 11 &&
	    memcmp(it->method, "eth_getLogs", 11) == 0 &&
	    bp_head_mark_owner(p->mark, net) != (int)upstream)
		keep = net->cache_ttl_ms * 1000;
	if (keep == 0)
		return fix;
	now = bp_now_us();
	/* Counted: a store given up on a busy database shows only as a later miss. */
	if (bp_rpc_cache_put(p->db, p->cfg, v->key, net, it->method, rs, rl,
	    keep == BP_CACHE_KEEP_FOREVER ? 0 : now + keep, now) == -1)
		bp_metrics_addf(p->metrics, 1, "blockport_rpc_cache_store_failures_total"
		    "{network=\"%s.%s\"}", net->chain, net->network);
	return fix;
}

/* Appends the answer of a cache hit (v->hit) for id to b; 0 or -1. */
static int
hit_obj(struct bp_rpc_proxy *p, struct bp_buf *b, const struct bp_network *net,
    const struct verdict *v, const char *id, size_t idlen)
{
	const char *res = p->hits.data + v->hit_off;
	char fixed[32];

	if (v->head && mark_head(p, net, res, v->hit_len, -1, fixed, sizeof(fixed)) == 1)
		return result_obj(b, id, idlen, fixed, strlen(fixed));
	return result_obj(b, id, idlen, res, v->hit_len);
}

static void
trim(struct bp_buf *b)
{
	if (b->size > KEEP_MAX)
		bp_buf_free(b);
	else
		bp_buf_reset(b);
}

static int
single(struct bp_rpc_proxy *p, struct bp_req *r, const struct bp_network *net, const struct bp_rpc_envelope_item *it,
    const struct verdict *v)
{
	const char *id = r->body + it->id.off;
	struct bp_rpc_scan_span whole = { 0, r->body_len }, at;
	struct bp_upstream_info info;
	enum bp_upstream_status s;
	char fixed[32];
	int rc;

	if (v->code != 0)
		return reply_error(r, id, it->id.len, v->code, v->msg);
	if (v->hit) {
		bp_buf_reset(&r->out);
		if (hit_obj(p, &r->out, net, v, id, it->id.len) == -1)
			return bp_error(r, 500, "internal_error", "out of memory");
		return bp_reply_out(r, 200);
	}
	if (!it->extra && bp_rpc_envelope_id_simple(id, it->id.len)) {
		/* The hot path: the client's bytes up, the node's bytes down. */
		if ((s = bp_upstream_post(p->up, net, r->body, r->body_len, &r->out, &info)) !=
		    BP_UPSTREAM_OK)
			return upstream_failed(r, net, s);
		if ((v->head || v->rule != BP_CACHE_NEVER) && settle(p, net, it, v, r->out.data,
		    r->out.len, (long)info.index, fixed, sizeof(fixed)) == 1) {
			bp_buf_reset(&r->out);
			if (result_obj(&r->out, id, it->id.len, fixed, strlen(fixed)) == -1)
				return bp_error(r, 500, "internal_error", "out of memory");
		}
		return bp_reply_out(r, 200);
	}
	/*
	 * Members the proxy does not read, or an id a node might not echo byte for byte (1.0, big
	 * numbers, escapes): the envelope is written anew with only its four members and our id.
	 */
	bp_buf_reset(&p->req);
	if (bp_rpc_envelope_write(&p->req, r->body, it, "0", 1) == -1)
		return bp_error(r, 500, "internal_error", "out of memory");
	s = bp_upstream_post(p->up, net, p->req.data, p->req.len, &p->ans, &info);
	if (s != BP_UPSTREAM_OK) {
		rc = upstream_failed(r, net, s);
		goto out;
	}
	bp_buf_reset(&r->out);
	whole.len = p->ans.len;
	if ((v->head || v->rule != BP_CACHE_NEVER) && settle(p, net, it, v, p->ans.data,
	    p->ans.len, (long)info.index, fixed, sizeof(fixed)) == 1)
		rc = result_obj(&r->out, id, it->id.len, fixed, strlen(fixed));
	else if (bp_rpc_scan_member(p->ans.data, p->ans.len, "id", &at) == 1)
		rc = splice(&r->out, p->ans.data, whole, at, id, it->id.len);
	else
		rc = bp_buf_add(&r->out, p->ans.data, p->ans.len);
	if (rc == -1) {
		rc = bp_error(r, 500, "internal_error", "upstream response too large");
		goto out;
	}
	rc = bp_reply_out(r, 200);
out:
	trim(&p->req);
	trim(&p->ans);
	return rc;
}

/* The forwarded index an answer's id names, or -1. */
static long
answer_index(const char *s, struct bp_rpc_scan_span id, size_t nfwd)
{
	size_t i;
	long k = 0;

	if (id.len == 0 || id.len > 6)
		return -1;
	for (i = 0; i < id.len; i++) {
		if (s[id.off + i] < '0' || s[id.off + i] > '9')
			return -1;
		k = k * 10 + (s[id.off + i] - '0');
	}
	return (size_t)k < nfwd ? k : -1;
}

/* Finds each forwarded item's answer in p->ans; sets *whole_err to a batch-wide error. */
static void
match_answers(struct bp_rpc_proxy *p, size_t nfwd, struct bp_rpc_scan_span *whole_err)
{
	struct bp_rpc_scan_iter iter;
	struct bp_rpc_scan_span e, id;
	size_t i;

	memset(whole_err, 0, sizeof(*whole_err));
	for (i = 0; i < nfwd; i++)
		memset(&p->ans_of[i], 0, sizeof(p->ans_of[i]));
	bp_rpc_scan_iter_init(&iter, p->ans.data, p->ans.len);
	while (bp_rpc_scan_iter_next(&iter, &e) == 1) {
		long k;

		if (bp_rpc_scan_member(p->ans.data + e.off, e.len, "id", &id) != 1)
			continue;
		id.off += e.off;
		if ((k = answer_index(p->ans.data, id, nfwd)) < 0 || p->ans_of[k].elem.len != 0)
			continue;
		p->ans_of[k].elem = e;
		p->ans_of[k].id = id;
	}
	/* Not an array: one error object for the whole batch (a node that refused it). */
	if (iter.state != 2 && bp_rpc_scan_member(p->ans.data, p->ans.len, "error", whole_err) != 1)
		memset(whole_err, 0, sizeof(*whole_err));
}

static int
batch(struct bp_rpc_proxy *p, struct bp_req *r, const struct bp_network *net, size_t n)
{
	struct bp_rpc_scan_span whole_err = { 0, 0 };
	struct bp_upstream_info info;
	enum bp_upstream_status s;
	size_t i, nfwd = 0;
	char num[24], fixed[32];
	int rc = -1;

	bp_buf_reset(&p->req);
	bp_buf_reset(&p->ans);
	if (bp_buf_adds(&p->req, "[") == -1)
		goto nomem;
	for (i = 0; i < n; i++) {
		const struct bp_rpc_envelope_item *it = &p->items[i];
		int w;

		if (p->v[i].code != 0 || p->v[i].hit)
			continue;
		p->v[i].fwd = nfwd;
		w = snprintf(num, sizeof(num), "%zu", nfwd);
		if ((nfwd > 0 && bp_buf_adds(&p->req, ",") == -1) ||
		    bp_rpc_envelope_write(&p->req, r->body, it, num, (size_t)w) == -1)
			goto nomem;
		nfwd++;
	}
	if (bp_buf_adds(&p->req, "]") == -1)
		goto nomem;
	if (nfwd > 0) {
		s = bp_upstream_post(p->up, net, p->req.data, p->req.len, &p->ans, &info);
		if (s != BP_UPSTREAM_OK) {
			rc = upstream_failed(r, net, s);
			goto out;
		}
		match_answers(p, nfwd, &whole_err);
	}

	bp_buf_reset(&r->out);
	if (bp_buf_adds(&r->out, "[") == -1)
		goto toolarge;
	for (i = 0; i < n; i++) {
		const struct bp_rpc_envelope_item *it = &p->items[i];
		const char *id = r->body + it->id.off;
		const struct answer *a;

		if (i > 0 && bp_buf_adds(&r->out, ",") == -1)
			goto toolarge;
		if (p->v[i].code != 0) {
			if (bp_rpc_envelope_error_obj(&r->out, id, it->id.len, p->v[i].code,
			    p->v[i].msg) == -1)
				goto toolarge;
			continue;
		}
		if (p->v[i].hit) {
			if (hit_obj(p, &r->out, net, &p->v[i], id, it->id.len) == -1)
				goto toolarge;
			continue;
		}
		a = &p->ans_of[p->v[i].fwd];
		if (a->elem.len != 0) {
			const struct verdict *v = &p->v[i];

			if ((v->head || v->rule != BP_CACHE_NEVER) && settle(p, net, it, v,
			    p->ans.data + a->elem.off, a->elem.len, (long)info.index, fixed,
			    sizeof(fixed)) == 1) {
				if (result_obj(&r->out, id, it->id.len, fixed, strlen(fixed)) == -1)
					goto toolarge;
			} else if (splice(&r->out, p->ans.data, a->elem, a->id, id, it->id.len) == -1)
				goto toolarge;
		} else if (whole_err.len != 0) {
			if (bp_buf_adds(&r->out, "{\"jsonrpc\":\"2.0\",\"id\":") == -1 ||
			    bp_buf_add(&r->out, id, it->id.len) == -1 ||
			    bp_buf_adds(&r->out, ",\"error\":") == -1 ||
			    bp_buf_add(&r->out, p->ans.data + whole_err.off, whole_err.len) == -1 ||
			    bp_buf_adds(&r->out, "}") == -1)
				goto toolarge;
		} else if (bp_rpc_envelope_error_obj(&r->out, id, it->id.len, BP_JSONRPC_INTERNAL_ERROR,
		    "internal error: the upstream node gave no answer for this request") == -1)
			goto toolarge;
	}
	if (bp_buf_adds(&r->out, "]") == -1)
		goto toolarge;
	rc = bp_reply_out(r, 200);
	goto out;
toolarge:
	rc = bp_error(r, 500, "internal_error", "upstream response too large");
	goto out;
nomem:
	rc = bp_error(r, 500, "internal_error", "out of memory");
out:
	trim(&p->req);
	trim(&p->ans);
	return rc;
}

/* X-Compute-Units: what the request was charged (docs/rpc.md). No printf on the hot path. */
static void
compute_units_header(struct bp_req *r, unsigned cu)
{
	char digits[16], *p = digits + sizeof(digits);

	do
		*--p = (char)('0' + cu % 10);
	while ((cu /= 10) != 0);
	if (bp_buf_adds(&r->headers, "X-Compute-Units: ") == -1 ||
	    bp_buf_add(&r->headers, p, (size_t)(digits + sizeof(digits) - p)) == -1 ||
	    bp_buf_adds(&r->headers, "\r\n") == -1)
		bp_warn("%s: no room for the header", __func__);
}

int
bp_rpc_proxy_serve(struct bp_rpc_proxy *p, struct bp_req *r, const struct bp_network *net)
{
	struct bp_rpc_envelope_body body;
	unsigned total = 0;
	size_t i;
	int rc;

	if (r->key.test && !net->testnet)
		return bp_error(r, 403, "forbidden", "%s/%s is a mainnet: test keys work on "
		    "testnets only; use a live key", net->chain, net->network);
	trim(&p->hits);
	p->metrics = r->metrics;
	p->nhits = 0;
	p->lookups = 0;
	if (bp_rpc_envelope_parse(r->body, r->body_len, (size_t)r->cfg->max_batch, p->items, p->cap,
	    &body) == -1) {
		compute_units_header(r, 0);
		return reply_error(r, NULL, 0, body.code, body.why);
	}
	for (i = 0; i < body.n; i++) {
		if ((rc = judge(p, r, net, &p->items[i], &p->v[i], body.batch)) != 0)
			return rc;
		total += p->v[i].cu;
	}
	compute_units_header(r, total);
	if (p->nhits > 0 && bp_buf_printf(&r->headers, "X-Cache-Hits: %u\r\n", p->nhits) == -1)
		bp_warn("%s: no room for the header", __func__);
	if (!body.batch)
		return single(p, r, net, &p->items[0], &p->v[0]);
	return batch(p, r, net, body.n);
}
