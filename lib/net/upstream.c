#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "core/log.h"
#include "core/metrics.h"
#include "core/util.h"
#include "health.h"
#include "upstream.h"

#define MAX_ENTRIES	(BP_MAX_NETWORKS * BP_MAX_UPSTREAMS)

struct bp_upstream;
static void	count_attempt(struct bp_upstream *, const struct bp_network *,
		    enum bp_upstream_status, int64_t);

/* One upstream URL: its keep-alive handle and its health. Networks sharing a URL share it. */
struct entry {
	char		 url[BP_URL_MAX];
	char		 safe[128];	/* redacted, for logs */
	CURL		*h;
	int64_t		 down_until;	/* monotonic microseconds; 0 = healthy */
};

struct bp_upstream {
	const struct bp_config	*cfg;
	struct bp_health	*health;	/* shared by every process; NULL: entries' own */
	struct bp_metrics	*metrics;	/* the head's latency and errors; NULL: none */
	struct curl_slist	*headers;
	struct entry		*entries;
	size_t			 nentries;
};

/* Where the write callback puts the answer, and the cap it counts against. */
struct sink {
	struct bp_buf	*out;
	size_t		 max;
	int		 too_large;
	int64_t		 first_byte_by;	/* monotonic us; 0 = no bound but the total timeout */
	int		 no_first_byte;	/* the bound passed without a byte */
};

/* curl_global_init once per process, whichever thread opens the first pool (pthread_once). */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void
curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* The health file of cfg: the limits file's path and "-health". 0, or -1 when too long. */
static int
health_path(const struct bp_config *cfg, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s-health", cfg->limits_file);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
bp_upstream_health_init(const struct bp_config *cfg)
{
	char path[sizeof(cfg->limits_file) + 8];
	struct bp_health *h;

	if (health_path(cfg, path, sizeof(path)) == -1 || (h = bp_health_open(path)) == NULL)
		return -1;
	bp_health_close(h);
	return 0;
}

struct bp_upstream *
bp_upstream_new(const struct bp_config *cfg)
{
	char path[sizeof(cfg->limits_file) + 8];
	struct bp_upstream *u = NULL, *ret = NULL;
	struct curl_slist *h;

	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		bp_err("%s: curl_global_init failed", __func__);
		goto out;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (u->entries = calloc(MAX_ENTRIES, sizeof(*u->entries))) == NULL) {
		bp_err("%s: out of memory", __func__);
		goto out;
	}
	u->cfg = cfg;
	/*
	 * "Expect:" stops curl's 100-continue round trip on bodies over 1 KiB. Nothing else is
	 * added: every custom header costs curl work on each request (it is matched against the
	 * headers curl writes itself), and nodes need no more than the content type.
	 */
	if ((h = curl_slist_append(NULL, "Content-Type: application/json")) == NULL ||
	    (u->headers = h, curl_slist_append(h, "Expect:")) == NULL) {
		bp_err("%s: out of memory", __func__);
		goto out;
	}
	/*
	 * The health every thread and process shares, next to the limits file; without it (no
	 * limits file, as in the unit tests, or an unwritable directory) each pool keeps its own.
	 */
	if (cfg->limits_file[0] != '\0' && health_path(cfg, path, sizeof(path)) == 0)
		u->health = bp_health_open(path);
	/* On a cluster every head's too (docs/scale.md): a node one head found dead, all skip. */
	if (u->health != NULL && strncmp(cfg->limits_url, "redis://", 8) == 0 &&
	    bp_health_share(u->health, cfg->limits_url) == -1)
		bp_warn("upstream health: %s is not a Redis URL: kept to this head", cfg->limits_url);
	u->metrics = bp_metrics_open(cfg);
	ret = u;
	u = NULL;
out:
	bp_upstream_free(u);
	return ret;
}

void
bp_upstream_free(struct bp_upstream *u)
{
	size_t i;

	if (u == NULL)
		return;
	for (i = 0; u->entries != NULL && i < u->nentries; i++)
		if (u->entries[i].h != NULL)
			curl_easy_cleanup(u->entries[i].h);
	free(u->entries);
	bp_health_close(u->health);
	bp_metrics_close(u->metrics);
	curl_slist_free_all(u->headers);
	free(u);
}

void
bp_upstream_redact(const char *url, char *buf, size_t len)
{
	const char *p = strstr(url, "://"), *host, *end, *at;
	size_t n;

	if (len == 0)
		return;
	if (p == NULL) {
		bp_strlcpy(buf, "?", len);
		return;
	}
	host = p + 3;
	end = host + strcspn(host, "/?#");
	/* user:password@host: drop everything up to the last '@' of the authority. */
	for (at = host; at < end; at++)
		if (*at == '@')
			host = at + 1;
	n = (size_t)(p + 3 - url);
	snprintf(buf, len, "%.*s%.*s", (int)n, url, (int)(end - host), host);
}

static size_t
on_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;

	if (n > s->max - s->out->len) {
		s->too_large = 1;
		return 0;	/* curl aborts the transfer with CURLE_WRITE_ERROR */
	}
	if (bp_buf_add(s->out, data, n) == -1) {
		s->too_large = 1;
		return 0;
	}
	return n;
}

/*
 * Aborts a transfer that has had no byte of the answer by s->first_byte_by. curl calls this about
 * once a second while nothing moves, so the bound is kept to within about a second.
 */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
    curl_off_t ulnow)
{
	struct sink *s = arg;

	(void)dltotal;
	(void)ultotal;
	(void)ulnow;
	if (s->first_byte_by == 0 || dlnow > 0 || bp_mono_us() < s->first_byte_by)
		return 0;
	s->no_first_byte = 1;
	return 1;	/* CURLE_ABORTED_BY_CALLBACK */
}

/* The entry of url, created with its curl handle on first use; NULL after logging why. */
static struct entry *
entry_for(struct bp_upstream *u, const char *url)
{
	const struct bp_config *c = u->cfg;
	struct entry *e;
	size_t i;
	long tmo;
	CURL *h;

	for (i = 0; i < u->nentries; i++)
		if (strcmp(u->entries[i].url, url) == 0)
			return &u->entries[i];
	if (u->nentries == MAX_ENTRIES) {
		bp_err("%s: more than %d upstream URLs", __func__, MAX_ENTRIES);
		return NULL;
	}
	if ((h = curl_easy_init()) == NULL) {
		bp_err("%s: curl_easy_init failed", __func__);
		return NULL;
	}
	e = &u->entries[u->nentries];
	memset(e, 0, sizeof(*e));
	bp_strlcpy(e->url, url, sizeof(e->url));
	bp_upstream_redact(url, e->safe, sizeof(e->safe));
	tmo = (long)c->upstream_timeout_ms;
	/*
	 * Hardening of curl's libcurl-security.md: HTTP(S) only, no redirects, timeouts, and the
	 * answer's size counted in the write callback (MAXFILESIZE stops early when the length
	 * is announced). The URL is the operator's, from the config, never the client's.
	 */
	if (curl_easy_setopt(h, CURLOPT_URL, e->url) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 0L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, tmo) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, tmo) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_response) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_HTTPHEADER, u->headers) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L) != CURLE_OK) {
		bp_err("%s: %s: curl_easy_setopt failed", __func__, e->safe);
		curl_easy_cleanup(h);
		return NULL;
	}
	e->h = h;
	u->nentries++;
	return e;
}

int
bp_upstream_definite(long status, const char *body, size_t len)
{
	size_t i = 0;

	while (i < len && (body[i] == ' ' || body[i] == '\t' || body[i] == '\r' ||
	    body[i] == '\n'))
		i++;
	if (i == len || (body[i] != '{' && body[i] != '['))
		return 0;
	/* Overloaded, throttled or refusing our credentials: another upstream may do better. */
	if (status == 401 || status == 403 || status == 408 || status == 429)
		return 0;
	if (status >= 200 && status < 300)
		return 1;
	/* An error status counts only with a JSON-RPC body, not any JSON an HTTP layer made up. */
	if (status >= 400 && status < 600)
		return memmem(body, len, "\"jsonrpc\"", 9) != NULL;
	return 0;
}

int
bp_upstream_is_down(struct bp_upstream *u, const struct bp_network *net, size_t i)
{
	size_t k;

	if (i >= net->nupstream)
		return 0;
	if (u->health != NULL)
		return bp_health_down(u->health, net->upstream[i], bp_mono_us());
	for (k = 0; k < u->nentries; k++)
		if (strcmp(u->entries[k].url, net->upstream[i]) == 0)
			return u->entries[k].down_until > bp_mono_us();
	return 0;
}

/*
 * One POST to e, giving up after first_byte_ms without a byte of the answer when that is not 0.
 * Returns BP_UPSTREAM_OK for a definite answer in out, BP_UPSTREAM_TOO_LARGE, or
 * BP_UPSTREAM_FAILED with the reason in info->error.
 */
static enum bp_upstream_status
attempt(struct bp_upstream *u, struct entry *e, const char *body, size_t len,
    int64_t first_byte_ms, struct bp_buf *out, struct bp_upstream_info *info)
{
	struct sink s;
	CURLcode rc;
	long status = 0;

	bp_buf_reset(out);
	s.out = out;
	s.max = (size_t)u->cfg->max_response < out->cap ? (size_t)u->cfg->max_response : out->cap;
	s.too_large = 0;
	s.no_first_byte = 0;
	s.first_byte_by = first_byte_ms > 0 ? bp_mono_us() + first_byte_ms * 1000 : 0;
	if (curl_easy_setopt(e->h, CURLOPT_POSTFIELDS, body) != CURLE_OK ||
	    curl_easy_setopt(e->h, CURLOPT_XFERINFODATA, &s) != CURLE_OK ||
	    curl_easy_setopt(e->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) != CURLE_OK ||
	    curl_easy_setopt(e->h, CURLOPT_WRITEDATA, &s) != CURLE_OK) {
		snprintf(info->error, sizeof(info->error), "%s: curl_easy_setopt failed", e->safe);
		return BP_UPSTREAM_FAILED;
	}
	rc = curl_easy_perform(e->h);
	curl_easy_getinfo(e->h, CURLINFO_RESPONSE_CODE, &status);
	info->http_status = status;
	if ((rc == CURLE_WRITE_ERROR && s.too_large) || rc == CURLE_FILESIZE_EXCEEDED) {
		bp_buf_reset(out);
		snprintf(info->error, sizeof(info->error), "%s: answer too large (over %zu bytes)",
		    e->safe, s.max);
		return BP_UPSTREAM_TOO_LARGE;
	}
	if (rc != CURLE_OK) {
		if (s.no_first_byte)
			snprintf(info->error, sizeof(info->error), "%s: no answer within %lld ms",
			    e->safe, (long long)first_byte_ms);
		else
			snprintf(info->error, sizeof(info->error), "%s: %s", e->safe,
			    curl_easy_strerror(rc));
		return BP_UPSTREAM_FAILED;
	}
	if (!bp_upstream_definite(status, out->data ? out->data : "", out->len)) {
		snprintf(info->error, sizeof(info->error), "%s: HTTP %ld without a JSON-RPC body",
		    e->safe, status);
		return BP_UPSTREAM_FAILED;
	}
	return BP_UPSTREAM_OK;
}

/* 1 when an upstream after i of net is not marked down: leaving i early has somewhere to go. */
static int
later_healthy(struct bp_upstream *u, const struct bp_network *net, size_t i, int64_t now)
{
	size_t k, j;

	for (k = i + 1; k < net->nupstream && k < BP_MAX_UPSTREAMS; k++) {
		if (u->health != NULL) {
			if (!bp_health_down(u->health, net->upstream[k], now))
				return 1;
			continue;
		}
		for (j = 0; j < u->nentries; j++)
			if (strcmp(u->entries[j].url, net->upstream[k]) == 0)
				break;
		if (j == u->nentries || u->entries[j].down_until <= now)
			return 1;
	}
	return 0;
}

enum bp_upstream_status
bp_upstream_post(struct bp_upstream *u, const struct bp_network *net, const char *body,
    size_t len, struct bp_buf *out, struct bp_upstream_info *info)
{
	struct bp_upstream_info dummy;
	char tried[BP_MAX_UPSTREAMS] = { 0 };
	int64_t tmo_us = u->cfg->upstream_timeout_ms * 1000;
	enum bp_upstream_status st;
	int pass;
	size_t i;

	if (info == NULL)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	snprintf(info->error, sizeof(info->error), "no upstream configured");
	/* Pass 0: the healthy ones in order. Pass 1: the ones marked down, as a last resort. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < net->nupstream && i < BP_MAX_UPSTREAMS; i++) {
			struct entry *e;
			int64_t now;

			if (tried[i])
				continue;
			if ((e = entry_for(u, net->upstream[i])) == NULL) {
				tried[i] = 1;
				continue;
			}
			now = bp_mono_us();
			if (pass == 0 && (u->health != NULL ? bp_health_check(u->health, e->url, now,
			    tmo_us) == BP_HEALTH_DOWN : e->down_until > now))
				continue;
			tried[i] = 1;
			info->attempts++;
			/* A node that accepts but does not answer is left early when another may. */
			st = attempt(u, e, body, len, pass == 0 && later_healthy(u, net, i, now) ?
			    u->cfg->upstream_first_byte_ms : 0, out, info);
			count_attempt(u, net, st, bp_mono_us() - now);
			if (st == BP_UPSTREAM_OK) {
				e->down_until = 0;
				if (u->health != NULL)
					bp_health_ok(u->health, e->url);
				info->index = i;
				return st;
			}
			if (st == BP_UPSTREAM_TOO_LARGE) {
				bp_warn("upstream %s.%s: %s", net->chain, net->network, info->error);
				return st;
			}
			if (u->cfg->upstream_down_seconds > 0) {
				bp_warn("upstream %s.%s #%zu: %s; skipped for %llds", net->chain,
				    net->network, i, info->error,
				    (long long)u->cfg->upstream_down_seconds);
				e->down_until = bp_mono_us() +
				    u->cfg->upstream_down_seconds * INT64_C(1000000);
				if (u->health != NULL)
					bp_health_fail(u->health, e->url, e->down_until);
			} else
				bp_warn("upstream %s.%s #%zu: %s", net->chain, net->network, i,
				    info->error);
		}
	}
	bp_buf_reset(out);
	return BP_UPSTREAM_FAILED;
}

/* One attempt in the head's metrics: its time, and an error when it gave no definite answer. */
static void
count_attempt(struct bp_upstream *u, const struct bp_network *net, enum bp_upstream_status st,
    int64_t us)
{
	char series[160];

	if (u->metrics == NULL)
		return;
	snprintf(series, sizeof(series), "blockport_upstream_request_duration_seconds{"
	    "network=\"%s.%s\"}", net->chain, net->network);
	bp_metrics_observe(u->metrics, series, us);
	if (st != BP_UPSTREAM_OK)
		bp_metrics_addf(u->metrics, 1, "blockport_upstream_errors_total{network=\"%s.%s\"}",
		    net->chain, net->network);
}

/* The per-thread upstream of a program that serves several requests at once (lib/core/fcgi.h). */
static void *
upstream_thread_init(const struct bp_config *cfg, struct bp_db *db)
{
	(void)db;
	return bp_upstream_new(cfg);
}

static void
upstream_thread_fini(void *ctx)
{
	bp_upstream_free(ctx);
}

const struct bp_app_threads bp_upstream_threads = { upstream_thread_init, upstream_thread_fini };
