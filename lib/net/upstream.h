/*
 * The upstream nodes of a chain network: POSTs a JSON-RPC body to the network's upstream URLs
 * (the config's upstream lines), in order, with failover. One keep-alive curl handle per URL per
 * process, reused for every request; a URL that failed is skipped for upstream_down_seconds (per
 * process). See docs/rpc.md.
 *
 * An answer is definite, and goes back to the caller unchanged, when the node answered with a
 * JSON-RPC body: a JSON-RPC error (execution reverted, invalid params) is never retried
 * elsewhere. Connect errors, timeouts, HTTP 401, 403, 408 and 429, and any other answer without
 * a JSON-RPC body (a 502 page from a load balancer) fail over to the next URL.
 */
#ifndef BP_UPSTREAM_H
#define BP_UPSTREAM_H

#include <stddef.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/fcgi.h"

struct bp_upstream;

enum bp_upstream_status {
	BP_UPSTREAM_OK,		/* 0: a definite answer is in out */
	BP_UPSTREAM_FAILED,	/* 1: no upstream gave a definite answer */
	BP_UPSTREAM_TOO_LARGE,	/* 2: an answer passed max_response (not retried: all would) */
	BP_UPSTREAM__MAX
};

/* How a post went, for the caller's answer and logs. */
struct bp_upstream_info {
	long		 http_status;	/* of the answer used; 0 when none */
	size_t		 index;		/* the upstream line that answered */
	unsigned	 attempts;	/* URLs tried */
	char		 error[192];	/* the last failure, with the URL's scheme, host and port */
};

/*
 * A pool for one process, reading max_response, upstream_timeout_ms and upstream_down_seconds
 * from cfg, which must outlive it. Returns the pool, owned by the caller (bp_upstream_free), or
 * NULL after logging why.
 */
struct bp_upstream *bp_upstream_new(const struct bp_config *cfg);
void		 bp_upstream_free(struct bp_upstream *);

/*
 * POSTs body to net's upstreams in order: first those not marked down, then, as a last resort,
 * those that are. The answer's bytes replace out's contents (out's own cap still applies).
 * Returns the status; info (may be NULL) says which upstream answered or why none did.
 */
enum bp_upstream_status bp_upstream_post(struct bp_upstream *, const struct bp_network *net,
		    const char *body, size_t len, struct bp_buf *out,
		    struct bp_upstream_info *info);

/*
 * 1 when an answer with this HTTP status and body is definite (passed through), 0 when it fails
 * over. Exposed for the unit tests.
 */
int		 bp_upstream_definite(long http_status, const char *body, size_t len);

/*
 * Creates, when missing, the health file the pools of every process share (next to the limits
 * file): the admin CLI does so beside the limits file, so that both get the same owner. 0 or -1.
 */
int		 bp_upstream_health_init(const struct bp_config *cfg);

/* 1 when upstream i of net is marked down now. */
int		 bp_upstream_is_down(struct bp_upstream *, const struct bp_network *net, size_t i);

/*
 * Writes url without credentials, path or query ("https://host:port") into buf, for logs:
 * upstream URLs often carry an API key in the path.
 */
void		 bp_upstream_redact(const char *url, char *buf, size_t len);

/* For bp_fcgi_main_threads: each thread of a program gets its own pool. */
extern const struct bp_app_threads bp_upstream_threads;

#endif
