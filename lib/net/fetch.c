/*
 * The one outbound fetcher for URLs a user controls (lib/net/fetch.h, docs/fetch.md). Two checks:
 * a cheap one on the URL before anything is sent (scheme, length, credentials, localhost and
 * IP literals in every spelling resolvers accept), and the one that matters, on each address
 * curl is about to connect to (CURLOPT_OPENSOCKETFUNCTION): a name that resolves to a refused
 * address, a DNS answer that changed since the first check, or a redirect to such a host never
 * gets a socket.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include <curl/curl.h>

#include "core/log.h"
#include "core/util.h"
#include "fetch.h"

#define DEF_CONNECT_MS	3000
#define DEF_TOTAL_MS	10000
#define DEF_MAX_BYTES	(1024 * 1024)
#define REDIRECTS_MAX	3

enum {
	URL_OK = 0,
	URL_BAD = -1,		/* malformed, other scheme, credentials, too long */
	URL_REFUSED = -2,	/* a refused address: localhost or a non-public IP literal */
};

/* curl_global_init once per process, whichever thread fetches first. */
static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void
curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static const char *const class_names[] = {
	"public",		/* BP_ADDR_PUBLIC */
	"loopback",		/* BP_ADDR_LOOPBACK */
	"private",		/* BP_ADDR_PRIVATE */
	"link-local",		/* BP_ADDR_LINKLOCAL */
	"carrier-grade NAT",	/* BP_ADDR_CGNAT */
	"multicast",		/* BP_ADDR_MULTICAST */
	"unspecified",		/* BP_ADDR_UNSPECIFIED */
	"reserved",		/* BP_ADDR_RESERVED */
};

const char *
bp_addr_class_name(enum bp_addr_class c)
{
	if ((size_t)c >= BP_NITEMS(class_names))
		return "reserved";
	return class_names[c];
}

/* An IPv4 address in host byte order. */
static enum bp_addr_class
classify_v4(uint32_t a)
{
	unsigned o1 = a >> 24, o2 = (a >> 16) & 0xff;

	if (o1 == 0)
		return BP_ADDR_UNSPECIFIED;
	if (o1 == 127)
		return BP_ADDR_LOOPBACK;
	if (o1 == 10 || (o1 == 172 && (o2 & 0xf0) == 16) || (o1 == 192 && o2 == 168))
		return BP_ADDR_PRIVATE;
	if (o1 == 169 && o2 == 254)
		return BP_ADDR_LINKLOCAL;
	if (o1 == 100 && (o2 & 0xc0) == 64)
		return BP_ADDR_CGNAT;
	if (o1 >= 224 && o1 < 240)
		return BP_ADDR_MULTICAST;
	if (o1 >= 240)		/* 240/4 and 255.255.255.255 */
		return BP_ADDR_RESERVED;
	/*
	 * RFC 6890 special purpose: 192.0.0/24 (protocol assignments), 192.0.2/24, 198.51.100/24
	 * and 203.0.113/24 (documentation), 192.88.99/24 (6to4 relays), 198.18/15 (benchmarks).
	 */
	if ((a & 0xffffff00) == 0xc0000000 || (a & 0xffffff00) == 0xc0000200 ||
	    (a & 0xffffff00) == 0xc6336400 || (a & 0xffffff00) == 0xcb007100 ||
	    (a & 0xffffff00) == 0xc0586300 || (a & 0xfffe0000) == 0xc6120000)
		return BP_ADDR_RESERVED;
	return BP_ADDR_PUBLIC;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int
all_zero(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/*
 * The IPv6 forms that carry an IPv4 address are judged by it; the rest of the space is allowed
 * only inside global unicast (2000::/3), minus its special-purpose blocks.
 */
static enum bp_addr_class
classify_v6(const uint8_t *b)
{
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	enum bp_addr_class c;

	if (all_zero(b, 16))
		return BP_ADDR_UNSPECIFIED;
	if (all_zero(b, 15) && b[15] == 1)
		return BP_ADDR_LOOPBACK;
	/* ::ffff:a.b.c.d (mapped): the kernel connects over IPv4 to a.b.c.d. */
	if (all_zero(b, 10) && b[10] == 0xff && b[11] == 0xff)
		return classify_v4(be32(b + 12));
	/* 64:ff9b::a.b.c.d (NAT64, RFC 6052): a gateway connects to a.b.c.d. */
	if (memcmp(b, nat64, 12) == 0)
		return classify_v4(be32(b + 12));
	/* 2002:AABB:CCDD::/48 (6to4): the relay reaches AA.BB.CC.DD. */
	if (b[0] == 0x20 && b[1] == 0x02)
		return classify_v4(be32(b + 2));
	/*
	 * ::a.b.c.d (IPv4-compatible, deprecated) and ::ffff:0:a.b.c.d (SIIT): refused as their
	 * IPv4 address is, and reserved when that is public (neither is routed).
	 */
	if (all_zero(b, 12) ||
	    (all_zero(b, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0)) {
		c = classify_v4(be32(b + 12));
		return c == BP_ADDR_PUBLIC ? BP_ADDR_RESERVED : c;
	}
	if (b[0] == 0xff)
		return BP_ADDR_MULTICAST;
	if ((b[0] & 0xfe) == 0xfc)				/* fc00::/7 unique local */
		return BP_ADDR_PRIVATE;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)		/* fe80::/10 */
		return BP_ADDR_LINKLOCAL;
	if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)		/* fec0::/10 site local */
		return BP_ADDR_PRIVATE;
	if ((b[0] & 0xe0) != 0x20)				/* outside 2000::/3 */
		return BP_ADDR_RESERVED;
	/* 2001::/32 Teredo (the IPv4 inside is obfuscated), 2001:db8::/32 documentation. */
	if (b[0] == 0x20 && b[1] == 0x01 && ((b[2] == 0 && b[3] == 0) ||
	    (b[2] == 0x0d && b[3] == 0xb8)))
		return BP_ADDR_RESERVED;
	return BP_ADDR_PUBLIC;
}

enum bp_addr_class
bp_addr_classify(const struct sockaddr *sa)
{
	if (sa == NULL)
		return BP_ADDR_RESERVED;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		return classify_v4(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		return classify_v6(in6->sin6_addr.s6_addr);
	}
	return BP_ADDR_RESERVED;
}

/*
 * One part of an IPv4 literal as inet_aton reads it: 0x/0X hex (no digits reads as 0, as the
 * WHATWG URL parser does), a leading 0 octal, else decimal. Returns the end, or NULL when the
 * text is not a number or passes 2^32 - 1.
 */
static const char *
v4_part(const char *p, const char *end, uint32_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;
	const char *start;

	if (p < end && *p == '0' && p + 1 < end && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p < end && *p == '0' && p + 1 < end && p[1] != '.')
		base = 8;
	else if (p == end || !isdigit((unsigned char)*p))
		return NULL;
	for (start = p; p < end && *p != '.'; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return NULL;
		if ((unsigned)d >= base || (v = v * base + (unsigned)d) > UINT32_MAX)
			return NULL;
	}
	if (p == start && base != 16)
		return NULL;
	*out = (uint32_t)v;
	return p;
}

/* An IPv4 literal in any of inet_aton's spellings, one trailing dot allowed. 0 or -1. */
static int
parse_v4(const char *s, uint32_t *out)
{
	static const uint32_t last_max[] = { 0, UINT32_MAX, 0xffffff, 0xffff, 0xff };
	uint32_t part[4];
	const char *p = s, *end = s + strlen(s);
	size_t n = 0, i;
	uint32_t a = 0;

	if (end > p && end[-1] == '.')
		end--;
	for (;;) {
		if (n == 4 || (p = v4_part(p, end, &part[n])) == NULL)
			return -1;
		n++;
		if (p == end)
			break;
		p++;	/* the dot */
	}
	for (i = 0; i + 1 < n; i++) {
		if (part[i] > 0xff)
			return -1;
		a |= part[i] << (24 - 8 * i);
	}
	if (part[n - 1] > last_max[n])
		return -1;
	*out = a | part[n - 1];
	return 0;
}

int
bp_addr_parse_literal(const char *host, struct sockaddr_storage *out)
{
	char tmp[64];
	const char *h = host;
	size_t n;
	uint32_t a;

	if (host == NULL || (n = strlen(host)) == 0)
		return -1;
	memset(out, 0, sizeof(*out));
	if (host[0] == '[' || strchr(host, ':') != NULL) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)out;
		char *zone;

		if (host[0] == '[') {
			if (n < 2 || host[n - 1] != ']')
				return -1;
			h++;
			n -= 2;
		}
		if (n >= sizeof(tmp))
			return -1;
		memcpy(tmp, h, n);
		tmp[n] = '\0';
		/* A zone ("fe80::1%eth0", "%25" in a URL) names an interface, not the address. */
		if ((zone = strchr(tmp, '%')) != NULL)
			*zone = '\0';
		if (inet_pton(AF_INET6, tmp, &in6->sin6_addr) != 1)
			return -1;
		in6->sin6_family = AF_INET6;
		return 0;
	}
	if (parse_v4(host, &a) == -1)
		return -1;
	((struct sockaddr_in *)out)->sin_family = AF_INET;
	((struct sockaddr_in *)out)->sin_addr.s_addr = htonl(a);
	return 0;
}

/* The address in sa as text ("127.0.0.1", "::1"). */
static void
addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *p = sa->sa_family == AF_INET ?
	    (const void *)&((const struct sockaddr_in *)sa)->sin_addr :
	    (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    inet_ntop(sa->sa_family, p, buf, (socklen_t)len) == NULL)
		bp_strlcpy(buf, "address", len);
}

/* "localhost", "localhost." and any name under it (RFC 6761: they resolve to loopback). */
static int
is_localhost(const char *host)
{
	size_t n = strlen(host);

	if (n > 0 && host[n - 1] == '.')
		n--;
	return (n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    (n > 10 && strncasecmp(host + n - 10, ".localhost", 10) == 0);
}

/*
 * The static checks of bp_fetch_check_url_static; the host as curl reads it goes to host (room
 * for hostlen bytes; "" when the URL did not parse). Returns URL_OK, URL_BAD or URL_REFUSED.
 */
static int
check_static(const char *url, bool allow_private, bool https_only, char *host, size_t hostlen,
    char *why, size_t whylen)
{
	CURLU *u = NULL;
	char *scheme = NULL, *h = NULL, *user = NULL, *pass = NULL;
	struct sockaddr_storage ss;
	enum bp_addr_class c;
	size_t i, n;
	int ret = URL_BAD;

	if (hostlen > 0)
		host[0] = '\0';
	if (url == NULL || (n = strlen(url)) == 0) {
		snprintf(why, whylen, "empty URL");
		goto out;
	}
	if (n > BP_FETCH_URL_MAX) {
		snprintf(why, whylen, "URL longer than %d bytes", BP_FETCH_URL_MAX);
		goto out;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f) {
			snprintf(why, whylen, "URL holds a space, a control or a non-ASCII byte "
			    "(percent-encode it)");
			goto out;
		}
	if ((u = curl_url()) == NULL) {
		snprintf(why, whylen, "out of memory");
		goto out;
	}
	/* Flags 0: a scheme is required and must be one curl knows; nothing is guessed. */
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
		snprintf(why, whylen, "not a valid http(s) URL");
		goto out;
	}
	if (strcasecmp(scheme, "https") != 0 && (https_only || strcasecmp(scheme, "http") != 0)) {
		snprintf(why, whylen, "scheme %.16s is not allowed (%s only)", scheme,
		    https_only ? "https" : "http and https");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER ||
	    curl_url_get(u, CURLUPART_PASSWORD, &pass, 0) != CURLUE_NO_PASSWORD) {
		snprintf(why, whylen, "credentials in the URL are not allowed");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || h[0] == '\0') {
		snprintf(why, whylen, "URL has no host");
		goto out;
	}
	if (bp_strlcpy(host, h, hostlen) == -1) {
		snprintf(why, whylen, "host name too long");
		goto out;
	}
	if (!allow_private) {
		if (is_localhost(h)) {
			snprintf(why, whylen, "localhost is loopback");
			ret = URL_REFUSED;
			goto out;
		}
		if (bp_addr_parse_literal(h, &ss) == 0 &&
		    (c = bp_addr_classify((struct sockaddr *)&ss)) != BP_ADDR_PUBLIC) {
			char ip[INET6_ADDRSTRLEN];

			addr_text((struct sockaddr *)&ss, ip, sizeof(ip));
			snprintf(why, whylen, "%s is %s", ip, bp_addr_class_name(c));
			ret = URL_REFUSED;
			goto out;
		}
	}
	ret = URL_OK;
out:
	curl_free(scheme);
	curl_free(h);
	curl_free(user);
	curl_free(pass);
	curl_url_cleanup(u);
	return ret;
}

int
bp_fetch_check_url_static(const char *url, bool allow_private, bool https_only, char *why,
    size_t whylen)
{
	char host[256];

	if (whylen > 0)
		why[0] = '\0';
	return check_static(url, allow_private, https_only, host, sizeof(host), why, whylen);
}

int
bp_fetch_check_url(const char *url, bool allow_private, bool https_only, char *why,
    size_t whylen)
{
	struct addrinfo hints, *ai = NULL, *p;
	struct sockaddr_storage ss;
	char host[256], ip[INET6_ADDRSTRLEN];
	enum bp_addr_class c;
	int rc;

	if (whylen > 0)
		why[0] = '\0';
	if ((rc = check_static(url, allow_private, https_only, host, sizeof(host), why,
	    whylen)) != URL_OK)
		return -1;
	if (allow_private || bp_addr_parse_literal(host, &ss) == 0)
		return 0;
	/*
	 * A name: every address it resolves to now must be allowed. One that does not resolve
	 * passes (DNS may be down for a moment); delivery checks again at connect time.
	 */
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0)
		return 0;
	rc = 0;
	for (p = ai; p != NULL; p = p->ai_next)
		if ((c = bp_addr_classify(p->ai_addr)) != BP_ADDR_PUBLIC) {
			addr_text(p->ai_addr, ip, sizeof(ip));
			snprintf(why, whylen, "%.100s resolves to %s, which is %s", host, ip,
			    bp_addr_class_name(c));
			rc = -1;
			break;
		}
	freeaddrinfo(ai);
	return rc;
}

/* The address check, on the address curl is about to connect to. */
static curl_socket_t
on_open(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct bp_fetch_guard *g = clientp;
	enum bp_addr_class c;
	int fd;

	if (purpose != CURLSOCKTYPE_IPCXN) {
		g->blocked = true;
		snprintf(g->why, sizeof(g->why), "only plain connections are allowed");
		return CURL_SOCKET_BAD;
	}
	if (!g->allow_private && (c = bp_addr_classify(&a->addr)) != BP_ADDR_PUBLIC) {
		char ip[INET6_ADDRSTRLEN];

		addr_text(&a->addr, ip, sizeof(ip));
		g->blocked = true;
		snprintf(g->why, sizeof(g->why), "%s is %s", ip, bp_addr_class_name(c));
		return CURL_SOCKET_BAD;
	}
	if ((fd = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol)) < 0)
		return CURL_SOCKET_BAD;
	return fd;
}

/* The body, up to max_bytes: one byte more cuts the transfer (CURLE_WRITE_ERROR). */
static size_t
on_write(char *p, size_t size, size_t nmemb, void *ud)
{
	struct bp_fetch_guard *g = ud;
	size_t len = size * nmemb;

	if (g->res->body.len + len > g->max_bytes) {
		g->too_large = true;
		return 0;
	}
	if (bp_buf_add(&g->res->body, p, len) == -1)
		return 0;
	return len;
}

/* The defaults of lib/net/fetch.h filled in, max_redirects clamped to [0, 3]. */
static void
opts_fill(const struct bp_fetch_opts *in, struct bp_fetch_opts *o)
{
	if (in != NULL)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->connect_ms <= 0)
		o->connect_ms = DEF_CONNECT_MS;
	if (o->total_ms <= 0)
		o->total_ms = DEF_TOTAL_MS;
	if (o->connect_ms > o->total_ms)
		o->connect_ms = o->total_ms;
	if (o->max_bytes == 0)
		o->max_bytes = DEF_MAX_BYTES;
	if (o->max_redirects < 0)
		o->max_redirects = 0;
	if (o->max_redirects > REDIRECTS_MAX)
		o->max_redirects = REDIRECTS_MAX;
	if (o->user_agent == NULL)
		o->user_agent = "Blockport/1";
}

static void
result_init(struct bp_fetch_result *res, size_t max_bytes)
{
	memset(res, 0, sizeof(*res));
	bp_buf_init(&res->body, max_bytes);
}

void
bp_fetch_result_free(struct bp_fetch_result *res)
{
	if (res != NULL)
		bp_buf_free(&res->body);
}

int
bp_fetch_arm(CURL *h, const char *url, const struct bp_fetch_opts *in,
    struct bp_fetch_guard *g, struct bp_fetch_result *res)
{
	struct bp_fetch_opts o;
	char host[256];
	int rc;

	opts_fill(in, &o);
	result_init(res, o.max_bytes);
	memset(g, 0, sizeof(*g));
	g->allow_private = o.allow_private;
	g->max_bytes = o.max_bytes;
	g->res = res;
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		snprintf(res->error, sizeof(res->error), "curl_global_init failed");
		return -1;
	}
	if ((rc = check_static(url, o.allow_private, false, host, sizeof(host), res->error,
	    sizeof(res->error))) != URL_OK) {
		res->blocked = rc == URL_REFUSED;
		return -1;
	}
	/*
	 * CURLOPT_PROXY "": the environment's http_proxy would put the connection (and so the
	 * address check) on the proxy, not on the user's host.
	 */
	if (curl_easy_setopt(h, CURLOPT_URL, url) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 0L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o.connect_ms) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o.total_ms) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)(o.max_bytes < INT64_MAX ? o.max_bytes : INT64_MAX)) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_USERAGENT, o.user_agent) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, g) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_WRITEDATA, g) != CURLE_OK ||
	    (o.ca_file != NULL && (curl_easy_setopt(h, CURLOPT_CAINFO, o.ca_file) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_CAPATH, BP_FETCH_SYSTEM_CA_DIR) != CURLE_OK))) {
		snprintf(res->error, sizeof(res->error), "curl_easy_setopt failed");
		return -1;
	}
	return 0;
}

void
bp_fetch_finish(CURL *h, CURLcode rc, struct bp_fetch_guard *g, struct bp_fetch_result *res)
{
	long status = 0;
	char *ct = NULL;
	curl_off_t us = 0;

	if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK)
		res->status = status;
	if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct != NULL)
		bp_strlcpy(res->content_type, ct, sizeof(res->content_type));
	if (curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &us) == CURLE_OK)
		res->elapsed_ms = (long)(us / 1000);
	res->error[0] = '\0';
	res->blocked = false;
	if (rc == CURLE_OK)
		return;
	if (g->blocked && (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)) {
		res->blocked = true;
		res->status = 0;
		bp_strlcpy(res->error, g->why, sizeof(res->error));
	} else if (g->too_large || rc == CURLE_FILESIZE_EXCEEDED)
		snprintf(res->error, sizeof(res->error), "response larger than %zu bytes",
		    g->max_bytes);
	else if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(res->error, sizeof(res->error), "timed out after %ld ms", res->elapsed_ms);
	else
		snprintf(res->error, sizeof(res->error), "%s", curl_easy_strerror(rc));
}

static int
is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

int
bp_fetch_get(const char *url, const struct bp_fetch_opts *in, struct bp_fetch_result *res)
{
	struct bp_fetch_opts o;
	struct bp_fetch_guard g;
	char cur[BP_FETCH_URL_MAX + 1];
	int64_t start = bp_mono_us(), left;
	CURL *h = NULL;
	CURLcode rc;
	int hops = 0, ret = -1;

	opts_fill(in, &o);
	result_init(res, o.max_bytes);
	if (url == NULL || bp_strlcpy(cur, url, sizeof(cur)) == -1) {
		snprintf(res->error, sizeof(res->error), url == NULL ? "empty URL" :
		    "URL longer than %d bytes", BP_FETCH_URL_MAX);
		goto out;
	}
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK || (h = curl_easy_init()) == NULL) {
		snprintf(res->error, sizeof(res->error), "curl_easy_init failed");
		goto out;
	}
	/* Each hop is checked again (bp_fetch_arm) and the total limit covers all of them. */
	for (;;) {
		char *loc = NULL;
		struct bp_fetch_opts hop = o;

		if ((left = o.total_ms - (bp_mono_us() - start) / 1000) <= 0) {
			snprintf(res->error, sizeof(res->error), "timed out after %ld ms", o.total_ms);
			goto out;
		}
		hop.total_ms = left;
		bp_fetch_result_free(res);
		if (bp_fetch_arm(h, cur, &hop, &g, res) == -1 ||
		    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L) != CURLE_OK)
			goto out;
		rc = curl_easy_perform(h);
		bp_fetch_finish(h, rc, &g, res);
		if (rc != CURLE_OK)
			goto out;
		if (!is_redirect(res->status) || o.max_redirects == 0 ||
		    curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) != CURLE_OK || loc == NULL)
			break;
		if (hops == o.max_redirects) {
			snprintf(res->error, sizeof(res->error), "more than %d redirects",
			    o.max_redirects);
			goto out;
		}
		if (bp_strlcpy(cur, loc, sizeof(cur)) == -1) {
			snprintf(res->error, sizeof(res->error), "redirect URL longer than %d bytes",
			    BP_FETCH_URL_MAX);
			goto out;
		}
		hops++;
	}
	ret = 0;
out:
	res->elapsed_ms = (long)((bp_mono_us() - start) / 1000);
	curl_easy_cleanup(h);
	return ret;
}

/*
 * Arms h for the POST r (bp_fetch_arm, then the headers and the body); the header list goes to
 * *list, which the caller frees after the transfer (curl_slist_free_all). 0 or -1 (res->error).
 */
static int
arm_post(CURL *h, const struct bp_fetch_req *r, const struct bp_fetch_opts *o,
    struct bp_fetch_guard *g, struct bp_fetch_result *res, struct curl_slist **list)
{
	struct curl_slist *t;
	size_t i;

	*list = NULL;
	if (bp_fetch_arm(h, r->url, o, g, res) == -1)
		return -1;
	/* "Expect:" stops curl's 100-continue round trip on bodies over 1 KiB. */
	for (i = 0; r->hdrs != NULL && r->hdrs[i] != NULL; i++) {
		if ((t = curl_slist_append(*list, r->hdrs[i])) == NULL)
			break;
		*list = t;
	}
	if ((r->hdrs != NULL && r->hdrs[i] != NULL) ||
	    (t = curl_slist_append(*list, "Expect:")) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		return -1;
	}
	*list = t;
	if (curl_easy_setopt(h, CURLOPT_HTTPHEADER, *list) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POST, 1L) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->len) != CURLE_OK ||
	    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body != NULL ? r->body : "") != CURLE_OK) {
		snprintf(res->error, sizeof(res->error), "curl_easy_setopt failed");
		return -1;
	}
	return 0;
}

int
bp_fetch_post(const char *url, const char *const *hdrs, const char *body, size_t len,
    const struct bp_fetch_opts *in, struct bp_fetch_result *res)
{
	const struct bp_fetch_req r = { url, hdrs, body, len };
	struct bp_fetch_opts o;
	struct bp_fetch_guard g;
	struct curl_slist *list = NULL;
	CURL *h = NULL;
	CURLcode rc;
	int ret = -1;

	opts_fill(in, &o);
	result_init(res, o.max_bytes);
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK || (h = curl_easy_init()) == NULL) {
		snprintf(res->error, sizeof(res->error), "curl_easy_init failed");
		goto out;
	}
	if (arm_post(h, &r, &o, &g, res, &list) == -1)
		goto out;
	rc = curl_easy_perform(h);
	bp_fetch_finish(h, rc, &g, res);
	if (rc == CURLE_OK)
		ret = 0;
out:
	curl_easy_cleanup(h);
	curl_slist_free_all(list);
	return ret;
}

/* One transfer of bp_fetch_post_many. */
struct many {
	CURL			*h;
	struct curl_slist	*list;
	struct bp_fetch_guard	 g;
	int			 added;	/* in the multi handle */
};

int
bp_fetch_post_many(const struct bp_fetch_req *reqs, size_t n, const struct bp_fetch_opts *in,
    struct bp_fetch_result *res)
{
	struct bp_fetch_opts o;
	struct many *t = NULL;
	CURLM *m = NULL;
	CURLMsg *msg;
	size_t i;
	int running = 0, left, ret = -1;

	opts_fill(in, &o);
	for (i = 0; i < n; i++)
		result_init(&res[i], o.max_bytes);
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK || (m = curl_multi_init()) == NULL ||
	    (n > 0 && (t = calloc(n, sizeof(*t))) == NULL) ||
	    curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, 16L) != CURLM_OK) {
		for (i = 0; i < n; i++)
			snprintf(res[i].error, sizeof(res[i].error), "curl_multi_init failed");
		goto out;
	}
	for (i = 0; i < n; i++) {
		if ((t[i].h = curl_easy_init()) == NULL) {
			snprintf(res[i].error, sizeof(res[i].error), "curl_easy_init failed");
			continue;
		}
		/* A request that cannot be armed (bad URL, refused literal) fails alone. */
		if (arm_post(t[i].h, &reqs[i], &o, &t[i].g, &res[i], &t[i].list) == -1)
			continue;
		if (curl_easy_setopt(t[i].h, CURLOPT_PRIVATE, (void *)&t[i]) != CURLE_OK ||
		    curl_multi_add_handle(m, t[i].h) != CURLM_OK) {
			snprintf(res[i].error, sizeof(res[i].error), "curl_multi_add_handle failed");
			continue;
		}
		t[i].added = 1;
	}
	do {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct many *d;
			char *priv = NULL;

			if (msg->msg != CURLMSG_DONE ||
			    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv) !=
			    CURLE_OK || priv == NULL)
				continue;
			d = (struct many *)(void *)priv;
			bp_fetch_finish(d->h, msg->data.result, &d->g, &res[d - t]);
		}
		if (running > 0 && curl_multi_poll(m, NULL, 0, 1000, NULL) != CURLM_OK)
			break;
	} while (running > 0);
	ret = running == 0 ? 0 : -1;
out:
	for (i = 0; t != NULL && i < n; i++) {
		if (t[i].added) {
			curl_multi_remove_handle(m, t[i].h);
			/* Cut short (the multi failed): say so rather than leave no reason. */
			if (running > 0 && res[i].error[0] == '\0' && res[i].status == 0)
				snprintf(res[i].error, sizeof(res[i].error), "transfer not finished");
		}
		curl_easy_cleanup(t[i].h);
		curl_slist_free_all(t[i].list);
	}
	free(t);
	curl_multi_cleanup(m);
	return ret;
}
