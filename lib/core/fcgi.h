/*
 * The FastCGI program skeleton every fcgi/ program shares: the accept loop, and for each request
 * the pipeline of DESIGN.md: parse, authenticate, rate limit and compute units, route, scope,
 * body, handler, response. A program is a route table and a two-line main:
 *
 *	static const struct bp_route routes[] = {
 *		{ "GET", "/v1/wallets/:address", get_wallet, BP_SCOPE_WALLETS, 2, 0 },
 *	};
 *	static const struct bp_app app = { "wallets", routes, BP_NITEMS(routes), NULL, NULL };
 *	int main(void) { return bp_fcgi_main(&app); }
 */
#ifndef BP_FCGI_H
#define BP_FCGI_H

#include <stddef.h>

#include "http.h"

#define BP_SCOPE_NONE	(-1)	/* the handler checks scopes itself */

enum bp_route_flags {
	BP_ROUTE_SELF_LIMIT = 1 << 0,	/* the handler counts the day and compute units per item */
	/*
	 * For operators, not the API (GET /metrics): no key, nothing counted, only from loopback
	 * and [server] metrics_allow; any other client gets what a path the API has not gets.
	 */
	BP_ROUTE_OPERATOR = 1 << 1,
};

/* A handler answers through bp_reply_* or bp_error and returns the status. */
typedef int (*bp_handler)(struct bp_req *);

struct bp_route {
	const char	*method;
	const char	*pattern;	/* "/v1/wallets/:address": literal or :name segments */
	bp_handler	 handler;
	int		 scope;		/* enum bp_scope, or BP_SCOPE_NONE */
	unsigned	 cu;		/* compute units one call costs */
	unsigned	 flags;
};

struct bp_app {
	const char		*name;
	const struct bp_route	*routes;
	size_t			 nroutes;
	/* Optional: once after the config, database and counters are open; 0 or -1 to stop. */
	int			(*init)(const struct bp_config *, struct bp_db *);
	void			(*fini)(void);
};

/*
 * Concurrency (docs/decisions.md). A program started with bp_fcgi_main serves one request at a
 * time, as it always did. A program whose handlers are thread-safe opts in with
 * bp_fcgi_main_threads: the process then serves BLOCKPORT_THREADS requests at once (default
 * BP_THREADS), each thread accepting its own FastCGI requests with its own struct bp_req,
 * database connection (r->db), API key cache and program context. The contract:
 *   - app->init and app->fini run once per process, before the threads start and after they
 *     stop: what they set up (a parsed key, a table) must be read-only while requests run;
 *   - threads->init runs once in each thread, with that thread's database connection, and
 *     returns the thread's context (NULL to stop the program); the pipeline puts it in r->ctx
 *     for every request the thread serves; threads->fini frees it in the same thread;
 *   - a handler keeps its mutable state in r and r->ctx only: no file-static variables written
 *     after init. r->cfg is shared and read-only; r->lim is shared and atomic (lib/core/limits.c);
 *     everything else in lib/ that a handler calls is thread-safe.
 * The ThreadSanitizer build of make test holds the programs that opted in to this.
 */
#define BP_THREADS	16	/* default request threads per process */
#define BP_THREADS_MAX	256

struct bp_app_threads {
	void	*(*init)(const struct bp_config *, struct bp_db *);
	void	 (*fini)(void *);
};

/* Runs the accept loop until the web server stops the program; the exit status. */
int		 bp_fcgi_main(const struct bp_app *);
/* The same with a pool of threads (above); threads may be NULL for a stateless program. */
int		 bp_fcgi_main_threads(const struct bp_app *, const struct bp_app_threads *);
/* Threads whose context (r->ctx) is an upstream pool of their own (bp_upstream_new). */

/*
 * Finds the route for r's method and path and fills r->param. Returns the route, or NULL with
 * *path_matched set when some route has the path but another method (405), clear when none (404).
 */
const struct bp_route *bp_route_match(const struct bp_route *, size_t, struct bp_req *,
		    int *path_matched);

/*
 * Counts more work inside a request whose route has BP_ROUTE_SELF_LIMIT: nday requests for the
 * daily count and cu compute units. Such a request's admission authenticates without counting
 * (bp_admit_deferred): the first charge counts the request itself too, in the same step, and
 * fills r->limit; a request that made none is counted after its handler, and answered 429
 * instead when over the limit. Returns the verdict; r->limit is updated.
 */
enum bp_limit_verdict bp_req_charge(struct bp_req *, unsigned nday, unsigned cu);
/*
 * 1 when verdict v of bp_req_charge refuses the whole request (its requests per second, or no
 * counter for the key), not only the work charged: a batch then answers 429 as a whole, as an
 * admission refused before any item would.
 */
int		 bp_req_charge_whole(enum bp_limit_verdict v);

/* Answers 403 unless the key has scope s; 0 when it has. */
int		 bp_req_need_scope(struct bp_req *, enum bp_scope s);
/*
 * The EVM network a REST path's {chain} (and an optional ?network=) means for r's key
 * (DESIGN.md, "Networks on REST paths"). Returns it, or NULL with the answer set in r: 404
 * not_found when the config has no such EVM network (the path names what is not there), 403
 * when a test key names a mainnet.
 */
const struct bp_network *bp_req_path_network(struct bp_req *);
/*
 * The same for a chain and network named in a JSON body: 400 naming the member "chain" when
 * there is no such EVM network, 403 as above.
 */
const struct bp_network *bp_req_evm_network(struct bp_req *, const char *chain,
		    const char *network);
/* Answers 429 for a verdict from the counters, with Retry-After; returns 429. */
int		 bp_error_limited(struct bp_req *, enum bp_limit_verdict);

#endif
