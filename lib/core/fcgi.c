#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fastcgi.h>
#include <fcgiapp.h>

#include "admit.h"
#include "config.h"
#include "db.h"
#include "fcgi.h"
#include "limits.h"
#include "log.h"
#include "metrics.h"
#include "util.h"

/* Set by the signal handler (a lock-free atomic is safe there) and read by every thread. */
static atomic_int stopping;

/*
 * Runs in the one thread that waits in accept(), the only one that takes the stop signals
 * (serve): the signal interrupts accept(), and libfcgi returns as FCGX_ShutdownPending() asks.
 * The listening socket is not shut down to wake the threads: behind Apache a whole pool of
 * processes shares it (apache/fcgi-pool.sh), and one process stopping would stop them all.
 */
static void
on_signal(int sig)
{
	(void)sig;
	stopping = 1;
	FCGX_ShutdownPending();
}

/* The signals that stop a program: on_signal's. */
static void
stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
}

const struct bp_route *
bp_route_match(const struct bp_route *routes, size_t n, struct bp_req *r, int *path_matched)
{
	size_t i;

	*path_matched = 0;
	for (i = 0; i < n; i++) {
		const char *p = routes[i].pattern;
		size_t seg = 0, np = 0;
		struct bp_kv params[BP_MAX_PARAMS];
		int ok = 1;

		while (*p == '/') {
			const char *end;
			size_t len;

			p++;
			end = strchr(p, '/');
			len = end ? (size_t)(end - p) : strlen(p);
			if (seg == r->nseg) {
				ok = 0;
				break;
			}
			if (*p == ':') {
				if (np == BP_MAX_PARAMS || len - 1 >= sizeof(r->pname[0])) {
					ok = 0;
					break;
				}
				memcpy(r->pname[np], p + 1, len - 1);
				r->pname[np][len - 1] = '\0';
				params[np].name = r->pname[np];
				params[np++].value = r->seg[seg];
			} else if (strlen(r->seg[seg]) != len || memcmp(r->seg[seg], p, len) != 0) {
				ok = 0;
				break;
			}
			seg++;
			p += len;
		}
		if (!ok || seg != r->nseg)
			continue;
		*path_matched = 1;
		if (strcmp(routes[i].method, r->method) != 0)
			continue;
		memcpy(r->param, params, np * sizeof(params[0]));
		r->nparam = np;
		return &routes[i];
	}
	return NULL;
}

/* Sets r's answer to the refusal in ad: status, Retry-After on a 429, the uniform body. */
static int
error_admission(struct bp_req *r, const struct bp_admission *ad)
{
	if (ad->status == 429) {
		bp_reply_header(r, "Retry-After", "%lld", (long long)ad->limit.retry_after);
		r->refused = ad->verdict;
	}
	return bp_error(r, ad->status, ad->code, "%s", ad->message);
}

int
bp_error_limited(struct bp_req *r, enum bp_limit_verdict v)
{
	struct bp_admission ad;

	memset(&ad, 0, sizeof(ad));
	ad.limit = r->limit;
	bp_admit_limited(&ad, v);
	return error_admission(r, &ad);
}

enum bp_limit_verdict
bp_req_charge(struct bp_req *r, unsigned nday, unsigned cu)
{
	struct bp_limit_state st;
	enum bp_limit_verdict v;

	v = bp_admit_charge(r->lim, &r->key, r->owed ? 1 : 0, nday, cu, &st);
	if (r->owed)
		r->limit = st;
	r->owed = 0;
	if (v != BP_LIMIT_OK)
		r->limit.retry_after = st.retry_after;
	return v;
}

int
bp_req_charge_whole(enum bp_limit_verdict v)
{
	return v == BP_LIMIT_RPS || v == BP_LIMIT_FULL;
}

/* A request the handler did not count (BP_ROUTE_SELF_LIMIT): counted now, 429 when over. */
static void
settle_owed(struct bp_req *r)
{
	enum bp_limit_verdict v;

	if (!r->owed)
		return;
	r->owed = 0;
	if ((v = bp_admit_charge(r->lim, &r->key, 1, 0, 0, &r->limit)) == BP_LIMIT_OK)
		return;
	bp_buf_reset(&r->headers);	/* the refused answer's own headers only */
	bp_error_limited(r, v);
}

int
bp_req_need_scope(struct bp_req *r, enum bp_scope s)
{
	if (r->key.scopes & BP_SCOPE_BIT(s))
		return 0;
	return bp_error(r, 403, "forbidden", "this API key lacks the %s scope",
	    bp_scope_name(s));
}

/*
 * The one lookup of an EVM network for a request: an unknown or non-EVM chain (or network) is
 * status, 404 for a path (the resource is not there) or 400 for a body member (field names it).
 */
static const struct bp_network *
evm_network(struct bp_req *r, const char *chain, const char *network, const char *field)
{
	const struct bp_network *net;

	net = bp_config_rest_network(r->cfg, chain, r->key.test, network);
	if (net == NULL || net->kind != BP_CHAIN_EVM) {
		if (field == NULL)
			bp_error(r, 404, "not_found", "no EVM network \"%s%s%s\" for this key",
			    chain, network ? "." : "", network ? network : "");
		else
			bp_error(r, 400, "invalid_request", "%s: no EVM network \"%s%s%s\" for "
			    "this key", field, chain, network ? "." : "", network ? network : "");
	} else if (r->key.test && !net->testnet)
		bp_error(r, 403, "forbidden", "test keys may not use %s %s (a mainnet)",
		    net->chain, net->network);
	else
		return net;
	return NULL;
}

const struct bp_network *
bp_req_path_network(struct bp_req *r)
{
	return evm_network(r, bp_req_param(r, "chain"), bp_req_query(r, "network"), NULL);
}

const struct bp_network *
bp_req_evm_network(struct bp_req *r, const char *chain, const char *network)
{
	return evm_network(r, chain, network, "chain");
}

/*
 * Authenticates and counts the request (lib/core/admit.c); 0 to go on, or the status set in r.
 * A route that counts itself (self) leaves a valid key's request owed to its first charge.
 */
static int
admit(const struct bp_admit *a, struct bp_req *r, int self, unsigned cu)
{
	struct bp_admission ad;

	if (self)
		bp_admit_deferred(a, bp_req_api_key(r), r->remote_addr, &ad);
	else
		bp_admit(a, bp_req_api_key(r), r->remote_addr, 1, cu, &ad);
	r->limit = ad.limit;
	if (ad.auth == BP_AUTH_OK) {
		r->key = ad.key;
		r->authed = 1;
		r->owed = self && ad.status == 0;
	}
	return ad.status == 0 ? 0 : error_admission(r, &ad);
}

/*
 * The announced body length: 0 when there is none, else 400 for a bad Content-Length and 413
 * past max_body, with the error set in r. The web server sets CONTENT_LENGTH, chunked uploads
 * included (lighttpd buffers the body; Apache's mod_proxy_fcgi spools a chunked one first,
 * proxy-sendcl in apache/blockport.conf).
 */
static int
body_length(struct bp_req *r, int64_t *len)
{
	const char *cl = bp_req_env(r, "CONTENT_LENGTH");

	*len = 0;
	if (cl != NULL && *cl != '\0' && bp_parse_int64(cl, 0, INT64_MAX, len) == -1)
		return bp_error(r, 400, "invalid_request", "bad Content-Length");
	if (*len > r->cfg->max_body)
		return bp_error(r, 413, "payload_too_large",
		    "request body larger than %lld bytes", (long long)r->cfg->max_body);
	return 0;
}

/* Reads the body of len bytes (checked by body_length) into r; 0, or the status set in r. */
static int
read_body(struct bp_req *r, FCGX_Request *fr, int64_t len)
{
	int got;

	r->bodybuf.cap = (size_t)r->cfg->max_body;
	if (len == 0) {
		r->body = (char *)"";
		r->body_len = 0;
		return 0;
	}
	bp_buf_reset(&r->bodybuf);
	if (bp_buf_add(&r->bodybuf, "", 0) == -1 || r->bodybuf.size < (size_t)len + 1) {
		/* Grow once to the announced length, then read straight into it. */
		char *p = realloc(r->bodybuf.data, (size_t)len + 1);

		if (p == NULL)
			return bp_error(r, 500, "internal_error", "out of memory");
		r->bodybuf.data = p;
		r->bodybuf.size = (size_t)len + 1;
	}
	got = FCGX_GetStr(r->bodybuf.data, (int)len, fr->in);
	if (got != (int)len)
		return bp_error(r, 400, "invalid_request", "request body shorter than Content-Length");
	r->bodybuf.len = (size_t)len;
	r->bodybuf.data[len] = '\0';
	r->body = r->bodybuf.data;
	r->body_len = (size_t)len;
	return 0;
}

/* Whether r's path is an operator route's (with another method). */
static int
operator_path(const struct bp_app *app, struct bp_req *r)
{
	size_t i;
	int m;

	for (i = 0; i < app->nroutes; i++)
		if ((app->routes[i].flags & BP_ROUTE_OPERATOR) &&
		    (bp_route_match(&app->routes[i], 1, r, &m) != NULL || m))
			return 1;
	return 0;
}

static void
route_request(const struct bp_app *app, const struct bp_admit *a, struct bp_req *r,
    FCGX_Request *fr)
{
	const struct bp_route *route = NULL;
	int perr, matched = 0;
	int64_t len;

	perr = bp_req_parse(r, bp_req_env(r, "REQUEST_METHOD"), bp_req_env(r, "REQUEST_URI"));
	if (perr == 0)
		route = bp_route_match(app->routes, app->nroutes, r, &matched);
	if ((route != NULL && (route->flags & BP_ROUTE_OPERATOR)) ||
	    (route == NULL && matched && operator_path(app, r))) {
		/* The peer the web server saw: a forwarded header could say anything. */
		if (route != NULL && bp_metrics_allowed(r->cfg->metrics_allow, r->remote_addr)) {
			r->route = route;
			r->status = route->handler(r);
			return;
		}
		/* To anyone else not even a 405 says the path exists. */
		if (!bp_metrics_allowed(r->cfg->metrics_allow, r->remote_addr)) {
			route = NULL;
			matched = 0;
		}
	}
	if (admit(a, r, route && (route->flags & BP_ROUTE_SELF_LIMIT),
	    route && !(route->flags & BP_ROUTE_SELF_LIMIT) ? route->cu : 0) != 0)
		return;
	if (perr != 0)
		return;		/* the error body bp_req_parse set */
	/*
	 * The body cap is the service's, not a route's: 413 comes before 404 and 405, so a client
	 * learns it at once whatever the path (docs/decisions.md).
	 */
	if (body_length(r, &len) != 0)
		return;
	if (route == NULL) {
		if (matched) {
			bp_error(r, 405, "method_not_allowed", "method %s is not allowed on %s",
			    r->method, bp_req_env(r, "REQUEST_URI"));
			return;
		}
		bp_error(r, 404, "not_found", "no such endpoint: %s %s%s", r->method,
		    bp_req_env(r, "REQUEST_URI"),
		    r->nseg > 0 && strcmp(r->seg[0], "v1") == 0 ? "" : " (only /v1 exists)");
		return;
	}
	r->route = route;
	if (route->scope != BP_SCOPE_NONE && bp_req_need_scope(r, route->scope) != 0)
		return;
	if (read_body(r, fr, len) != 0)
		return;
	r->status = route->handler(r);
	if (r->status == 0)
		bp_error(r, 500, "internal_error", "handler gave no answer");
}

static void
dispatch(const struct bp_app *app, const struct bp_admit *a, struct bp_req *r, FCGX_Request *fr)
{
	route_request(app, a, r, fr);
	settle_owed(r);
}

static void
respond(struct bp_req *r, FCGX_Request *fr)
{
	char head[512];
	int n;

	/* Every answer carries the rate-limit figures: admission fills them first, whatever it says. */
	n = snprintf(head, sizeof(head), "Status: %d %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\nX-Request-Id: %s\r\nX-RateLimit-Limit: %lld\r\n"
	    "X-RateLimit-Remaining: %lld\r\nX-RateLimit-Reset: %lld\r\n", r->status,
	    bp_status_text(r->status), r->content_type ? r->content_type : "application/json",
	    r->out.len, r->id, (long long)r->limit.limit, (long long)r->limit.remaining,
	    (long long)r->limit.reset);
	FCGX_PutStr(head, n, fr->out);
	if (r->headers.len > 0)
		FCGX_PutStr(r->headers.data, (int)r->headers.len, fr->out);
	FCGX_PutStr("\r\n", 2, fr->out);
	if (r->out.len > 0)
		FCGX_PutStr(r->out.data, (int)r->out.len, fr->out);
}

/* What every thread of a program shares: read-only once the threads run, but for the lock. */
struct shared {
	const struct bp_app		*app;
	const struct bp_app_threads	*threads;	/* NULL: handlers run one at a time */
	const struct bp_config		*cfg;
	struct bp_limits		*lim;
	struct bp_metrics		*metrics;	/* NULL: not counted */
	pthread_mutex_t			 accept_lock;
	sigset_t			 stopsigs;	/* taken only while in accept() */
	unsigned			 pid;	/* programs are exec'd, never forked after start */
	unsigned long long		 seq;	/* request ids, taken atomically */
};

/* One thread: its own request, database connection, key cache and program context. */
struct worker {
	struct shared	*sh;
	struct bp_db	*db;	/* the main thread's comes from bp_fcgi_main */
	struct bp_limits *lim;	/* its own Redis connection, when the counters are there */
	pthread_t	 tid;
	int		 started;
	int		 failed;	/* could not open its resources */
};

/* Serves requests until the program stops; the worker's own resources are opened here. */
static void *
serve(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct bp_admit adm = { 0 };
	struct bp_req *r = NULL;
	void *ctx = NULL;
	FCGX_Request fr;
	int have_fr = 0;

	w->failed = 1;
	if (w->db == NULL && (w->db = bp_db_open(sh->cfg->database, 0)) == NULL)
		goto out;
	if (sh->threads != NULL && sh->threads->init != NULL &&
	    (ctx = sh->threads->init(sh->cfg, w->db)) == NULL)
		goto out;
	if ((w->lim = bp_limits_thread(sh->lim)) == NULL)
		goto out;
	if (bp_admit_init(&adm, sh->cfg, w->db, w->lim) == -1 || (r = malloc(sizeof(*r))) == NULL)
		goto out;
	bp_req_init(r);
	r->cfg = sh->cfg;
	r->db = w->db;
	r->lim = w->lim;
	r->metrics = sh->metrics;
	if (FCGX_InitRequest(&fr, 0, 0) != 0)
		goto out;
	have_fr = 1;
	w->failed = 0;
	for (;;) {
		int ok;

		/*
		 * libfcgi's threaded example serializes accept(); it costs nothing next to a request.
		 * The thread waiting there is the one the stop signals must wake (on_signal), so only
		 * it takes them; a signal that comes while every thread is busy waits for the first
		 * one back here.
		 */
		pthread_mutex_lock(&sh->accept_lock);
		pthread_sigmask(SIG_UNBLOCK, &sh->stopsigs, NULL);
		ok = !stopping && FCGX_Accept_r(&fr) >= 0;
		pthread_sigmask(SIG_BLOCK, &sh->stopsigs, NULL);
		pthread_mutex_unlock(&sh->accept_lock);
		if (!ok)
			break;
		bp_req_reset(r);
		r->ctx = ctx;
		r->envp = fr.envp;
		r->remote_addr = bp_req_env(r, "REMOTE_ADDR");
		snprintf(r->id, sizeof(r->id), "%x-%llx", sh->pid,
		    __atomic_add_fetch(&sh->seq, 1, __ATOMIC_RELAXED));
		bp_log_set_request(r->id);
		dispatch(sh->app, &adm, r, &fr);
		bp_metrics_request(r->metrics, sh->app->name, r->route ? r->route->pattern : NULL,
		    r->method, r->status);
		if (r->refused != BP_LIMIT_OK)
			bp_metrics_addf(r->metrics, 1, "blockport_limit_refusals_total{limit=\"%s\"}",
			    bp_limit_name(r->refused));
		if (r->status >= 500)
			bp_err("%s %s -> %d", r->method, bp_req_env(r, "REQUEST_URI"), r->status);
		respond(r, &fr);
		FCGX_Finish_r(&fr);
		bp_log_set_request(NULL);
		if (stopping)
			break;
	}
out:
	if (have_fr)
		FCGX_Free(&fr, 0);
	if (ctx != NULL && sh->threads->fini != NULL)
		sh->threads->fini(ctx);
	if (r != NULL) {
		bp_req_free(r);
		free(r);
	}
	bp_admit_fini(&adm);
	if (w->lim != NULL)
		bp_limits_thread_close(sh->lim, w->lim);
	return NULL;
}

/* BLOCKPORT_THREADS: request threads per process, 1 to BP_THREADS_MAX (default BP_THREADS). */
static unsigned
thread_count(void)
{
	const char *s = getenv("BLOCKPORT_THREADS");
	int64_t n;

	if (s == NULL || *s == '\0')
		return BP_THREADS;
	if (bp_parse_int64(s, 1, BP_THREADS_MAX, &n) == -1) {
		bp_warn("BLOCKPORT_THREADS=%s is not 1 to %d; using %d", s, BP_THREADS_MAX,
		    BP_THREADS);
		return BP_THREADS;
	}
	return (unsigned)n;
}

static int
run(const struct bp_app *app, const struct bp_app_threads *threads)
{
	struct bp_config *cfg = NULL;
	struct bp_db *db = NULL;
	struct bp_limits *lim = NULL;
	struct worker *ws = NULL;
	struct shared sh;
	struct sigaction sa;
	unsigned i, n = 1;
	char err[512];
	int rc = 1, app_inited = 0;

	/*
	 * No fastbins: libfcgi allocates each request's 8 KB stream buffers anew, and with small
	 * chunks parked in fastbins every such malloc first consolidated them all (3% of a busy
	 * program's CPU); the thread caches still take the small chunks.
	 */
	mallopt(M_MXFAST, 0);
	memset(&sh, 0, sizeof(sh));
	pthread_mutex_init(&sh.accept_lock, NULL);
	bp_log_init(app->name);
	if ((cfg = bp_config_load(NULL, err, sizeof(err))) == NULL) {
		bp_err("config: %s", err);
		goto out;
	}
	if ((db = bp_db_open(cfg->database, 0)) == NULL ||
	    (lim = bp_limits_open_config(cfg)) == NULL)
		goto out;
	if (app->init != NULL && app->init(cfg, db) == -1)
		goto out;
	app_inited = 1;
	sh.app = app;
	sh.threads = threads;
	sh.cfg = cfg;
	sh.lim = lim;
	sh.metrics = bp_metrics_open(cfg);
	sh.pid = (unsigned)getpid();
	if (threads != NULL)
		n = thread_count();
	if ((ws = calloc(n, sizeof(*ws))) == NULL)
		goto out;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Blocked in every thread (they inherit it) but while one waits in accept(). */
	stop_signals(&sh.stopsigs);
	pthread_sigmask(SIG_BLOCK, &sh.stopsigs, NULL);

	if (FCGX_Init() != 0)
		goto out;
	for (i = 0; i < n; i++) {
		ws[i].sh = &sh;
		if (i == 0) {
			ws[i].db = db;	/* the main thread serves too, on the first connection */
			continue;
		}
		if (pthread_create(&ws[i].tid, NULL, serve, &ws[i]) != 0) {
			bp_err("%s: cannot start thread %u of %u; serving with %u", __func__, i + 1, n,
			    i);
			break;
		}
		ws[i].started = 1;
	}
	serve(&ws[0]);
	/*
	 * The program is stopping (a signal, or the main thread could not open its resources): a
	 * signal to the process wakes the thread waiting in accept(), and the others stop at their
	 * turn there.
	 */
	stopping = 1;
	if (n > 1)
		kill(getpid(), SIGTERM);
	for (i = 1; i < n; i++) {
		if (ws[i].started)
			pthread_join(ws[i].tid, NULL);
		bp_db_close(ws[i].db);
	}
	rc = ws[0].failed;
out:
	if (app_inited && app->fini != NULL)
		app->fini();
	free(ws);
	bp_metrics_close(sh.metrics);
	bp_limits_close(lim);
	bp_db_close(db);
	bp_config_free(cfg);
	pthread_mutex_destroy(&sh.accept_lock);
	return rc;
}

int
bp_fcgi_main(const struct bp_app *app)
{
	return run(app, NULL);
}

int
bp_fcgi_main_threads(const struct bp_app *app, const struct bp_app_threads *threads)
{
	return run(app, threads);
}
