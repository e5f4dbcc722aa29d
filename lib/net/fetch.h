/*
 * The one outbound fetcher for every URL a user controls (NFT metadata, contractURI, token
 * lists given by URL, webhook receivers): libcurl restricted to http and https, a connect limit
 * and a total limit, a response size cap, redirects followed by hand (at most max_redirects,
 * each new URL checked again), and an address check on the address actually connected
 * (CURLOPT_OPENSOCKETFUNCTION), so neither DNS rebinding nor a redirect reaches a refused range:
 * loopback, private (RFC 1918, fc00::/7), link-local (169.254/16, fe80::/10), CGNAT
 * (100.64/10), multicast, 0.0.0.0/8 and the other unspecified/reserved forms, and the
 * IPv4-mapped / IPv4-compatible / NAT64 IPv6 forms of all of them. `[server] allow_private_urls
 * = true` lifts the check (tests, private deployments). docs/fetch.md.
 *
 * Thread-safe: no process-global mutable state; curl_global_init once (pthread_once).
 */
#ifndef BP_FETCH_H
#define BP_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "core/buf.h"

enum bp_addr_class {
	BP_ADDR_PUBLIC = 0,
	BP_ADDR_LOOPBACK,	/* 127/8, ::1 */
	BP_ADDR_PRIVATE,	/* 10/8, 172.16/12, 192.168/16, fc00::/7 */
	BP_ADDR_LINKLOCAL,	/* 169.254/16 (cloud metadata), fe80::/10 */
	BP_ADDR_CGNAT,		/* 100.64/10 */
	BP_ADDR_MULTICAST,	/* 224/4, ff00::/8 */
	BP_ADDR_UNSPECIFIED,	/* 0/8, :: */
	BP_ADDR_RESERVED,	/* 240/4, 255.255.255.255, other special-purpose ranges */
};

/* The class of a connected or resolved address (AF_INET or AF_INET6; anything else RESERVED). */
enum bp_addr_class	bp_addr_classify(const struct sockaddr *sa);
/* "loopback", "private", ... for error messages and logs. */
const char		*bp_addr_class_name(enum bp_addr_class);

/*
 * Parses a URL host as an IP literal the way resolvers accept them: dotted, decimal
 * (2130706433), octal (0177.0.0.1), hex (0x7f.0.0.1), short forms (127.1), and [v6] with
 * brackets. Returns 0 and fills out, or -1 when host is a name, not a literal.
 */
int	bp_addr_parse_literal(const char *host, struct sockaddr_storage *out);

struct bp_fetch_opts {
	bool		 allow_private;	/* from [server] allow_private_urls */
	long		 connect_ms;	/* 0: 3000 */
	long		 total_ms;	/* 0: 10000 */
	size_t		 max_bytes;	/* 0: 1 MiB; a larger answer fails with "too large" */
	int		 max_redirects;	/* 0: none followed (a 3xx is the answer); at most 3 */
	const char	*ca_file;	/* CAs (PEM) trusted besides the system's, or NULL */
	const char	*user_agent;	/* NULL: "Blockport/1" */
};

struct bp_fetch_result {
	long		status;		/* final HTTP status; 0 when there was no answer */
	struct bp_buf	body;		/* the body (capped); bp_buf_free it */
	char		content_type[128];
	bool		blocked;	/* refused by the address check (nothing was sent) */
	char		error[200];	/* empty on success; else why, e.g. "127.0.0.1 is loopback" */
	long		elapsed_ms;
};

/*
 * GET url (http or https only). Returns 0 when an HTTP answer came back (any status: look at
 * res->status), -1 otherwise (bad URL, other scheme, refused address, timeout, TLS, too large,
 * too many redirects), with res->error saying why. res is always initialised; free it with
 * bp_fetch_result_free.
 */
int	bp_fetch_get(const char *url, const struct bp_fetch_opts *, struct bp_fetch_result *res);

/*
 * POST body (Content-Type and other headers from the NULL-terminated array hdrs, e.g.
 * "Content-Type: application/json"); redirects are never followed. As bp_fetch_get.
 */
int	bp_fetch_post(const char *url, const char *const *hdrs, const char *body, size_t len,
	    const struct bp_fetch_opts *, struct bp_fetch_result *res);

void	bp_fetch_result_free(struct bp_fetch_result *);

/*
 * For callers that drive many transfers with curl multi (webhook delivery): arms an easy handle
 * with every rule above (protocols, limits, the connect-time address check; redirects off) and
 * writes the answer into res. h is new or curl_easy_reset (arm sets only its own options); the
 * caller adds the method, headers and body. guard must live as long as the transfer; after it,
 * a refused address shows as guard->blocked with guard->why. Returns 0 or -1 (res->error set;
 * res->blocked when the URL names a refused address). res is initialised either way.
 */
struct bp_fetch_guard {
	bool	allow_private;
	bool	blocked;
	bool	too_large;	/* the body passed max_bytes: the transfer was cut */
	char	why[160];
	size_t	max_bytes;
	struct bp_fetch_result *res;
};
int	bp_fetch_arm(CURL *h, const char *url, const struct bp_fetch_opts *,
	    struct bp_fetch_guard *guard, struct bp_fetch_result *res);
/*
 * After a transfer armed with bp_fetch_arm: fills res->status, content_type, elapsed_ms, blocked
 * and error (empty when rc is CURLE_OK).
 */
void	bp_fetch_finish(CURL *h, CURLcode rc, struct bp_fetch_guard *, struct bp_fetch_result *);

/*
 * POSTs n requests at once (curl multi, each armed as above; at most 16 transfers in flight), as
 * the webhook worker delivers. res is an array of n results, each filled as bp_fetch_post fills
 * its one (a bad URL or a refused address fails that request alone); free each with
 * bp_fetch_result_free. Returns 0 when every request ran to its own end, -1 when the batch could
 * not be set up (then every res[i].error says so).
 */
struct bp_fetch_req {
	const char		*url;
	const char *const	*hdrs;	/* NULL-terminated "Name: value" lines, or NULL */
	const char		*body;
	size_t			 len;
};
int	bp_fetch_post_many(const struct bp_fetch_req *reqs, size_t n,
	    const struct bp_fetch_opts *, struct bp_fetch_result *res);

/*
 * For checks at creation time (POST /v1/webhooks): resolves url's host and returns 0 when it is
 * http(s), well-formed and every address it resolves to is allowed; else -1 with why. Delivery
 * checks again at connect time: this only gives an early, clear 400.
 */
int	bp_fetch_check_url(const char *url, bool allow_private, bool https_only, char *why,
	    size_t whylen);
/*
 * bp_fetch_check_url without DNS: length (BP_FETCH_URL_MAX), printable ASCII, scheme, no
 * credentials, and a host that is neither localhost nor a refused IP literal in any spelling.
 * Returns 0, -1 with why for a bad URL, -2 with why for a refused address.
 */
int	bp_fetch_check_url_static(const char *url, bool allow_private, bool https_only,
	    char *why, size_t whylen);

/* The system's hashed CA directory, kept trusted when ca_file adds CAs (OpenSSL reads both). */
#define BP_FETCH_SYSTEM_CA_DIR	"/etc/ssl/certs"
#define BP_FETCH_URL_MAX	2048	/* bytes; a longer URL is refused */

#endif
