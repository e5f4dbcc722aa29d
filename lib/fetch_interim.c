/*
 * TEMPORARY: weak stand-ins for the three lib/fetch.h functions webhooks use, until lib/fetch.c
 * (the one SSRF-safe fetcher) lands on main; the strong definitions there win, and this file is
 * deleted by the merge of main into the webhooks branch.
 */
#include <netdb.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "fetch.h"

#define WEAK	__attribute__((weak))

static int
refused(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		uint32_t a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);

		return (a >> 24) == 127 || (a >> 24) == 10 || (a >> 20) == 0xac1 ||
		    (a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe || (a >> 24) == 0 ||
		    (a >> 22) == (100 << 2 | 1) || (a >> 28) >= 14;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
		static const uint8_t zero[15];

		return (memcmp(b, zero, 15) == 0) || (b[0] & 0xfe) == 0xfc ||
		    (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || b[0] == 0xff ||
		    (memcmp(b, zero, 10) == 0 && b[10] == 0xff && b[11] == 0xff);
	}
	return 1;
}

WEAK int
bp_fetch_check_url(const char *url, bool allow_private, bool https_only, char *why,
    size_t whylen)
{
	struct addrinfo hints, *res = NULL, *ai;
	char host[256];
	const char *h, *end;
	size_t n;
	int rc = 0;

	if (strncmp(url, "https://", 8) == 0)
		h = url + 8;
	else if (!https_only && strncmp(url, "http://", 7) == 0)
		h = url + 7;
	else {
		snprintf(why, whylen, "must be an https:// URL");
		return -1;
	}
	if (*h == '[') {
		end = strchr(h, ']');
		h++;
	} else
		end = h + strcspn(h, ":/?#");
	if (end == NULL || (n = (size_t)(end - h)) == 0 || n >= sizeof(host) ||
	    memchr(h, '@', n) != NULL) {
		snprintf(why, whylen, "not a well-formed URL");
		return -1;
	}
	memcpy(host, h, n);
	host[n] = '\0';
	if (allow_private)
		return 0;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res) != 0) {
		snprintf(why, whylen, "host %s does not resolve", host);
		return -1;
	}
	for (ai = res; ai != NULL && rc == 0; ai = ai->ai_next)
		if (refused(ai->ai_addr)) {
			snprintf(why, whylen, "host %s is a private, loopback or reserved address",
			    host);
			rc = -1;
		}
	freeaddrinfo(res);
	return rc;
}

static size_t
on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct bp_fetch_guard *g = arg;
	size_t n = size * nmemb;

	if (g->res->body.len + n > g->max_bytes)
		return 0;
	return bp_buf_add(&g->res->body, p, n) == -1 ? 0 : n;
}

static curl_socket_t
on_open(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct bp_fetch_guard *g = arg;

	(void)purpose;
	if (!g->allow_private && refused(&a->addr)) {
		g->blocked = true;
		snprintf(g->why, sizeof(g->why), "the address is private, loopback or reserved");
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype, a->protocol);
}

WEAK int
bp_fetch_arm(CURL *h, const char *url, const struct bp_fetch_opts *o,
    struct bp_fetch_guard *g, struct bp_fetch_result *res)
{
	memset(res, 0, sizeof(*res));
	memset(g, 0, sizeof(*g));
	g->allow_private = o->allow_private;
	g->max_bytes = o->max_bytes ? o->max_bytes : 1024 * 1024;
	g->res = res;
	bp_buf_init(&res->body, g->max_bytes);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, o->connect_ms ? o->connect_ms : 3000L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->total_ms ? o->total_ms : 10000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, g);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, g);
	curl_easy_setopt(h, CURLOPT_USERAGENT, o->user_agent ? o->user_agent : "Blockport/1");
	if (o->ca_file != NULL && o->ca_file[0] != '\0')
		curl_easy_setopt(h, CURLOPT_CAINFO, o->ca_file);
	return 0;
}

WEAK void
bp_fetch_finish(CURL *h, CURLcode rc, struct bp_fetch_guard *g, struct bp_fetch_result *res)
{
	double t = 0;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &res->status);
	curl_easy_getinfo(h, CURLINFO_TOTAL_TIME, &t);
	res->elapsed_ms = (long)(t * 1000);
	if (g->blocked) {
		res->blocked = true;
		snprintf(res->error, sizeof(res->error), "%s", g->why);
	} else if (rc != CURLE_OK)
		snprintf(res->error, sizeof(res->error), "%s", curl_easy_strerror(rc));
}

WEAK void
bp_fetch_result_free(struct bp_fetch_result *res)
{
	bp_buf_free(&res->body);
}
