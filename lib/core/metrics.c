/*
 * Operator metrics (lib/core/metrics.h, docs/metrics.md). The file is a table of slots shared
 * lock-free by every process of a head, as lib/core/limits.c's: a slot is claimed by the hash of
 * its series text (bp_slot_claim), its text written once by whoever claims it first and
 * published with a release store, its values only ever changed by atomic adds.
 */
#include <sys/mman.h>

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

#define NSLOTS		2048	/* routes x statuses x programs, networks: far below */
#define PROBES		64
#define SERIES_MAX	176
#define NWORDS		16

/* Histogram buckets, in microseconds; word NBUCKETS is +Inf, word NWORDS - 1 the sum. */
static const int64_t bucket_us[] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000
};
#define NBUCKETS	(sizeof(bucket_us) / sizeof(bucket_us[0]))
_Static_assert(NBUCKETS + 2 <= NWORDS, "buckets, +Inf and the sum fit a slot");

enum { NAME_NONE, NAME_WRITING, NAME_READY };	/* slot.named */
enum { KIND_VALUE, KIND_HISTOGRAM };		/* slot.kind */

struct slot {
	uint64_t	key;		/* hash of the series text, never 0; 0 = free */
	uint32_t	named;		/* NAME_*: the text is readable once NAME_READY */
	uint32_t	kind;
	char		name[SERIES_MAX];
	int64_t		w[NWORDS];	/* the value in w[0], or a histogram's words */
};
_Static_assert(offsetof(struct slot, key) == 0, "bp_slot_claim needs the key first");

/* The mapping itself: nothing per process but the address. */
struct bp_metrics {
	struct slot	slots[NSLOTS];
};

/* The families the file holds: what the exposition says of each. */
static const struct family {
	const char	*name;
	const char	*type;
	const char	*help;
} families[] = {
	{ "blockport_http_requests_total", "counter",
	    "Requests answered, by program, route pattern, method and status." },
	{ "blockport_limit_refusals_total", "counter",
	    "Requests refused with 429, by the limit that refused them." },
	{ "blockport_rpc_cache_requests_total", "counter",
	    "JSON-RPC response cache lookups, by network and result (hit or miss)." },
	{ "blockport_rpc_cache_store_failures_total", "counter",
	    "JSON-RPC answers the response cache was to keep and did not (write lock busy), by network." },
	{ "blockport_upstream_errors_total", "counter",
	    "Upstream node requests that gave no definite answer, by network." },
	{ "blockport_upstream_request_duration_seconds", "histogram",
	    "Time of each request to an upstream node, by network." },
	{ "blockport_ws_connections", "gauge",
	    "WebSocket connections open on this head." },
};

struct bp_metrics *
bp_metrics_open_path(const char *path)
{
	return bp_map_file(path, sizeof(struct bp_metrics));
}

struct bp_metrics *
bp_metrics_open(const struct bp_config *cfg)
{
	char path[sizeof(cfg->limits_file) + 16];
	int n;

	if (cfg->limits_file[0] == '\0')
		return NULL;
	n = snprintf(path, sizeof(path), "%s-metrics", cfg->limits_file);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	return bp_metrics_open_path(path);
}

int
bp_metrics_init(const struct bp_config *cfg)
{
	struct bp_metrics *m;

	if (cfg->limits_file[0] == '\0')
		return 0;
	if ((m = bp_metrics_open(cfg)) == NULL)
		return -1;
	bp_metrics_close(m);
	return 0;
}

void
bp_metrics_close(struct bp_metrics *m)
{
	if (m != NULL)
		munmap(m, sizeof(*m));
}

/* The slot of series, claimed and named if new; NULL when the table is full or m is NULL. */
static struct slot *
slot_for(struct bp_metrics *m, const char *series, uint32_t kind)
{
	uint64_t k = bp_fnv1a_str(BP_FNV1A_BASIS, series);
	uint32_t none = NAME_NONE;
	struct slot *s;

	if (m == NULL || strlen(series) >= SERIES_MAX)
		return NULL;
	if (k == 0)
		k = 1;
	s = bp_slot_claim(m->slots, sizeof(struct slot), NSLOTS, PROBES, k);
	if (s == NULL)
		return NULL;
	/* The first to get here writes the text; the others only add (the text is the same). */
	if (__atomic_load_n(&s->named, __ATOMIC_ACQUIRE) == NAME_NONE &&
	    __atomic_compare_exchange_n(&s->named, &none, NAME_WRITING, 0, __ATOMIC_ACQ_REL,
	    __ATOMIC_ACQUIRE)) {
		memcpy(s->name, series, strlen(series) + 1);
		s->kind = kind;
		__atomic_store_n(&s->named, NAME_READY, __ATOMIC_RELEASE);
	}
	return s;
}

void
bp_metrics_add(struct bp_metrics *m, const char *series, int64_t n)
{
	struct slot *s = slot_for(m, series, KIND_VALUE);

	if (s != NULL)
		__atomic_add_fetch(&s->w[0], n, __ATOMIC_RELAXED);
}

void
bp_metrics_addf(struct bp_metrics *m, int64_t n, const char *fmt, ...)
{
	char series[SERIES_MAX];
	va_list ap;
	int len;

	if (m == NULL)
		return;
	va_start(ap, fmt);
	len = vsnprintf(series, sizeof(series), fmt, ap);
	va_end(ap);
	if (len > 0 && (size_t)len < sizeof(series))
		bp_metrics_add(m, series, n);
}

void
bp_metrics_observe(struct bp_metrics *m, const char *series, int64_t us)
{
	struct slot *s = slot_for(m, series, KIND_HISTOGRAM);
	size_t b;

	if (s == NULL)
		return;
	if (us < 0)
		us = 0;
	for (b = 0; b < NBUCKETS && us > bucket_us[b]; b++)
		;
	/* One bucket each, made cumulative when rendered: two adds whatever the bucket. */
	__atomic_add_fetch(&s->w[b], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->w[NWORDS - 1], us, __ATOMIC_RELAXED);
}

int64_t
bp_metrics_value(struct bp_metrics *m, const char *series)
{
	uint64_t k = bp_fnv1a_str(BP_FNV1A_BASIS, series);
	size_t i;

	if (m == NULL)
		return 0;
	if (k == 0)
		k = 1;
	for (i = 0; i < PROBES; i++) {
		struct slot *s = &m->slots[(k + i) % NSLOTS];
		uint64_t cur = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);

		if (cur == 0)
			return 0;
		if (cur == k)
			return __atomic_load_n(&s->w[0], __ATOMIC_RELAXED);
	}
	return 0;
}

void
bp_metrics_request(struct bp_metrics *m, const char *program, const char *route,
    const char *method, int status)
{
	/* A path no route has is one series: its method is whatever the client sent. */
	if (route == NULL) {
		route = "";
		method = "";
	}
	bp_metrics_addf(m, 1, "blockport_http_requests_total{program=\"%s\",route=\"%s\","
	    "method=\"%s\",status=\"%d\"}", program, route, method, status);
}

/* A published slot, copied: its text, and its words read once each. */
struct sample {
	char		name[SERIES_MAX];
	uint32_t	kind;
	int64_t		w[NWORDS];
};

/* The family part of a series: its length up to the brace. */
static size_t
family_len(const char *series)
{
	return strcspn(series, "{");
}

static int
sample_cmp(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;
	size_t lx = family_len(x->name), ly = family_len(y->name);
	int c = strncmp(x->name, y->name, lx < ly ? lx : ly);

	if (c != 0)
		return c;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct family *
family_of(const char *series)
{
	size_t i, len = family_len(series);

	for (i = 0; i < BP_NITEMS(families); i++)
		if (strlen(families[i].name) == len && memcmp(families[i].name, series, len) == 0)
			return &families[i];
	return NULL;
}

int
bp_metrics_family(struct bp_buf *out, const char *name, const char *type, const char *help)
{
	return bp_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int
bp_metrics_sample(struct bp_buf *out, const char *name, const char *labels, double value)
{
	return bp_buf_printf(out, "%s%s%s%s %.17g\n", name, *labels ? "{" : "", labels,
	    *labels ? "}" : "", value);
}

/* Where bp_metrics_query's rows go. */
struct query {
	struct bp_buf	*out;
	const char	*name, *label;
	int		 rc;
};

static int
query_row(struct bp_stmt *st, void *arg)
{
	struct query *q = arg;
	char labels[SERIES_MAX];
	const char *v;
	size_t n = 0;

	if (q->label == NULL) {
		q->rc |= bp_metrics_sample(q->out, q->name, "", (double)bp_col_int(st, 0));
		return 0;
	}
	/* A label value escaped as the text format wants: \, \" and \n. */
	n = (size_t)snprintf(labels, sizeof(labels), "%s=\"", q->label);
	for (v = bp_col_text(st, 0); *v != '\0' && n + 4 < sizeof(labels); v++) {
		if (*v == '\\' || *v == '"' || *v == '\n')
			labels[n++] = '\\';
		labels[n++] = *v == '\n' ? 'n' : *v;
	}
	labels[n++] = '"';
	labels[n] = '\0';
	q->rc |= bp_metrics_sample(q->out, q->name, labels, (double)bp_col_int(st, 1));
	return 0;
}

int
bp_metrics_query(struct bp_db *db, struct bp_buf *out, const char *name, const char *type,
    const char *help, const char *label, const char *sql)
{
	struct query q = { out, name, label, 0 };
	struct bp_stmt *st;
	size_t mark = out->len;

	if ((st = bp_db_stmt(db, sql)) == NULL ||
	    (q.rc = bp_metrics_family(out, name, type, help)) == -1 ||
	    bp_stmt_each(st, query_row, &q) < 0 || q.rc != 0) {
		/* A family that could not be read is left out whole, its header too. */
		out->len = mark;
		if (out->data != NULL)
			out->data[mark] = '\0';
		return -1;
	}
	return 0;
}

/* A histogram's lines: cumulative buckets, +Inf, the sum in seconds and the count. */
static int
render_histogram(struct bp_buf *out, const struct sample *s)
{
	size_t flen = family_len(s->name), b;
	const char *labels = s->name + flen;	/* "{...}" or "" */
	char inner[SERIES_MAX];
	int64_t cum = 0;
	int rc = 0;

	/* The labels without their braces, to add le to. */
	snprintf(inner, sizeof(inner), "%.*s", *labels == '{' ? (int)strlen(labels) - 2 : 0,
	    *labels == '{' ? labels + 1 : "");
	for (b = 0; b <= NBUCKETS; b++) {
		char le[32];

		cum += s->w[b];
		if (b < NBUCKETS)
			snprintf(le, sizeof(le), "%g", (double)bucket_us[b] / 1e6);
		else
			snprintf(le, sizeof(le), "+Inf");
		rc |= bp_buf_printf(out, "%.*s_bucket{%s%sle=\"%s\"} %lld\n", (int)flen, s->name,
		    inner, *inner ? "," : "", le, (long long)cum);
	}
	rc |= bp_buf_printf(out, "%.*s_sum%s %.6f\n", (int)flen, s->name, labels,
	    (double)s->w[NWORDS - 1] / 1e6);
	rc |= bp_buf_printf(out, "%.*s_count%s %lld\n", (int)flen, s->name, labels,
	    (long long)cum);
	return rc;
}

int
bp_metrics_render(struct bp_metrics *m, struct bp_buf *out)
{
	struct sample *v;
	const struct family *last = NULL;
	size_t i, n = 0;
	int rc = 0;

	if (m == NULL)
		return 0;
	if ((v = malloc(NSLOTS * sizeof(*v))) == NULL)
		return -1;
	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &m->slots[i];
		size_t w;

		if (__atomic_load_n(&s->named, __ATOMIC_ACQUIRE) != NAME_READY)
			continue;
		memcpy(v[n].name, s->name, sizeof(v[n].name));
		v[n].kind = s->kind;
		for (w = 0; w < NWORDS; w++)
			v[n].w[w] = __atomic_load_n(&s->w[w], __ATOMIC_RELAXED);
		n++;
	}
	qsort(v, n, sizeof(*v), sample_cmp);
	for (i = 0; i < n && rc == 0; i++) {
		const struct family *f = family_of(v[i].name);

		if (f == NULL)
			continue;	/* a series of a newer build: not ours to describe */
		if (f != last && bp_metrics_family(out, f->name, f->type, f->help) == -1)
			rc = -1;
		last = f;
		if (v[i].kind == KIND_HISTOGRAM)
			rc |= render_histogram(out, &v[i]);
		else
			rc |= bp_buf_printf(out, "%s %lld\n", v[i].name, (long long)v[i].w[0]);
	}
	free(v);
	return rc == 0 ? 0 : -1;
}

/* One entry of an allow list: an address, with a prefix length or not. */
struct net {
	int		af;
	unsigned char	a[16];
	int		bits;
};

static int
parse_net(const char *s, size_t len, struct net *n)
{
	char buf[64], *slash;
	int64_t bits;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if ((slash = strchr(buf, '/')) != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, buf, n->a) == 1)
		n->af = AF_INET, n->bits = 32;
	else if (inet_pton(AF_INET6, buf, n->a) == 1)
		n->af = AF_INET6, n->bits = 128;
	else
		return -1;
	if (slash != NULL) {
		if (bp_parse_int64(slash, 0, n->bits, &bits) == -1)
			return -1;
		n->bits = (int)bits;
	}
	return 0;
}

static int
net_has(const struct net *n, const struct net *addr)
{
	int full = n->bits / 8, rest = n->bits % 8;

	if (n->af != addr->af || memcmp(n->a, addr->a, (size_t)full) != 0)
		return 0;
	return rest == 0 || ((n->a[full] ^ addr->a[full]) & (0xff << (8 - rest))) == 0;
}

/* Calls fn for each entry of allow; -1 at the first that does not parse (its text in *bad). */
static int
each_net(const char *allow, int (*fn)(const struct net *, void *), void *arg,
    const char **bad, size_t *badlen)
{
	const char *p = allow;

	while (*p != '\0') {
		size_t len;
		struct net n;

		p += strspn(p, ", \t");
		if ((len = strcspn(p, ", \t")) == 0)
			break;
		if (parse_net(p, len, &n) == -1) {
			*bad = p;
			*badlen = len;
			return -1;
		}
		if (fn(&n, arg))
			return 1;
		p += len;
	}
	return 0;
}

static int
net_has_arg(const struct net *n, void *arg)
{
	return net_has(n, arg);
}

int
bp_metrics_allowed(const char *allow, const char *addr)
{
	static const struct net loop4 = { AF_INET, { 127 }, 8 };
	static const struct net loop6 = { AF_INET6, { [15] = 1 }, 128 };
	const char *bad;
	size_t badlen;
	struct net a;

	if (addr == NULL || parse_net(addr, strlen(addr), &a) == -1 || a.bits != 32 + 96 *
	    (a.af == AF_INET6))
		return 0;
	/* An IPv4-mapped IPv6 peer is its IPv4 address. */
	if (a.af == AF_INET6 && memcmp(a.a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
		memmove(a.a, a.a + 12, 4);
		a.af = AF_INET;
		a.bits = 32;
	}
	if (net_has(&loop4, &a) || net_has(&loop6, &a))
		return 1;
	return allow != NULL && each_net(allow, net_has_arg, &a, &bad, &badlen) == 1;
}

static int
net_none(const struct net *n, void *arg)
{
	(void)n;
	(void)arg;
	return 0;
}

int
bp_metrics_allow_check(const char *allow, char *err, size_t errlen)
{
	const char *bad;
	size_t badlen;

	if (each_net(allow, net_none, NULL, &bad, &badlen) == -1) {
		snprintf(err, errlen, "\"%.*s\" is not an address or CIDR block", (int)badlen,
		    bad);
		return -1;
	}
	return 0;
}

int
bp_metrics_serve(struct bp_req *r, const bp_metrics_source *sources, size_t n)
{
	struct bp_buf *out = &r->out;
	int64_t failed = 0;
	size_t i;

	bp_buf_reset(out);
	if (bp_metrics_render(r->metrics, out) == -1)
		return bp_error(r, 500, "internal_error", "out of memory");
	for (i = 0; i < n; i++)
		if (sources[i](r->db, r->cfg, out) == -1)
			failed++;
	/* Always there, so an alert on it never sees "no data" for "no errors". */
	if (bp_metrics_family(out, "blockport_scrape_errors", "gauge",
	    "Sources of this scrape that could not be read (their families are missing).") == -1 ||
	    bp_metrics_sample(out, "blockport_scrape_errors", "", (double)failed) == -1)
		return bp_error(r, 500, "internal_error", "out of memory");
	r->status = 200;
	r->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return 200;
}
