/*
 * Admission: authenticate a request and count it (DESIGN.md's pipeline, steps 2 and 3). Any
 * program calls it with the key the client sent, the client's address and the request's cost:
 * the FastCGI skeleton (lib/core/fcgi.c) once per request, a WebSocket program once per connection or
 * message. Nothing here knows about FastCGI or HTTP framing; the answer carries everything a
 * caller sends back: the verdict, who the key is, the X-RateLimit-* figures and, when refused,
 * the status, code and message of the uniform error body.
 */
#ifndef BP_ADMIT_H
#define BP_ADMIT_H

#include "auth.h"
#include "limits.h"

struct bp_config;
struct bp_db;

/* What admission reads: opened once per process (or thread) by bp_admit_init. */
struct bp_admit {
	const struct bp_config	*cfg;
	struct bp_db		*db;
	struct bp_limits	*lim;
	struct bp_auth_cache	*keys;		/* owned: bp_admit_fini frees it */
};

#define BP_ADMIT_MSG	256

/* The answer for one request. */
struct bp_admission {
	int			 status;	/* 0: admitted; else the HTTP status to answer */
	const char		*code;		/* the error code ("unauthorized"); NULL when admitted */
	char			 message[BP_ADMIT_MSG];
	enum bp_auth_result	 auth;
	enum bp_limit_verdict	 verdict;
	struct bp_key		 key;		/* account, key id, plan: valid when auth is OK */
	struct bp_limit_state	 limit;		/* X-RateLimit-* and Retry-After: always filled */
};

/* Fills a with the service's handles and a new key cache; 0, or -1 when out of memory. */
int		 bp_admit_init(struct bp_admit *, const struct bp_config *, struct bp_db *,
		    struct bp_limits *);
void		 bp_admit_fini(struct bp_admit *);

/*
 * Authenticates key (the key text; NULL when none was sent; an Authorization value of another
 * scheme as bp_req_api_key returns it) and counts one request from addr (the client address) for
 * it: nday requests for the day and cu compute units. A request without a valid key is counted
 * per client address (anon_rps, per /64 for IPv6). Fills out; returns out->status (0: go on).
 */
int		 bp_admit(const struct bp_admit *, const char *key, const char *addr,
		    unsigned nday, unsigned cu, struct bp_admission *out);
/*
 * The same, but a valid key's request is not counted yet (out->limit stays zero): the caller
 * counts it with its first bp_admit_charge, with the day and compute units it then knows, so a
 * JSON-RPC request costs one count (one Redis round trip on a cluster), not two. A request
 * without a valid key is counted per client address at once, as by bp_admit.
 */
int		 bp_admit_deferred(const struct bp_admit *, const char *key, const char *addr,
		    struct bp_admission *out);
/*
 * Counts nreq requests, nday for the day and cu compute units for the admitted key k against its
 * plan (also later in a request, for work counted per item). Fills st; returns the verdict.
 */
enum bp_limit_verdict bp_admit_charge(struct bp_limits *, const struct bp_key *k,
		    unsigned nreq, unsigned nday, unsigned cu, struct bp_limit_state *st);
/* Sets out to the 429 of verdict v (not BP_LIMIT_OK), out->limit already filled; returns 429. */
int		 bp_admit_limited(struct bp_admission *out, enum bp_limit_verdict v);

#endif
