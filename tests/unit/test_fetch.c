/*
 * lib/net/fetch.c: the address classifier (every refused range, its edges, and the spellings of
 * IPv4 and the IPv6 forms that carry an IPv4 address), the URL checks (schemes, credentials,
 * localhost, literals, length, bytes), and real fetches against a server on a loopback socket
 * (a thread per connection, one request each):
 *
 *   /ok          200 "hello"               /redir/N   302 to /redir/N-1; /redir/0 is 200 "landed"
 *   /big         2 MiB, Content-Length     /chunked   2 MiB chunked
 *   /hang        reads, never answers      /toftp     302 to ftp://127.0.0.1/
 *   POST /echo   200 with the request body
 *
 * The connect-time check is driven through CURLOPT_RESOLVE: a name that passes the URL check
 * resolves to 127.0.0.1 at connect time (DNS rebinding), and the server must see no connection.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <curl/curl.h>

#include "core/util.h"
#include "net/fetch.h"
#include "unit.h"

#define BIG	(2 * 1024 * 1024)

enum {
	PUB = BP_ADDR_PUBLIC, LOOP = BP_ADDR_LOOPBACK, PRIV = BP_ADDR_PRIVATE,
	LL = BP_ADDR_LINKLOCAL, CGN = BP_ADDR_CGNAT, MC = BP_ADDR_MULTICAST,
	UNS = BP_ADDR_UNSPECIFIED, RES = BP_ADDR_RESERVED,
	NOTLIT = -1,	/* not a literal: a name */
};

struct crow {
	const char	*host;
	int		 want;
};

static const struct crow crows[] = {
	/* IPv4, each range and its edges. */
	{ "0.0.0.0", UNS }, { "0.255.255.255", UNS }, { "1.0.0.0", PUB }, { "8.8.8.8", PUB },
	{ "9.255.255.255", PUB }, { "10.0.0.0", PRIV }, { "10.255.255.255", PRIV },
	{ "11.0.0.0", PUB }, { "100.63.255.255", PUB }, { "100.64.0.0", CGN },
	{ "100.127.255.255", CGN }, { "100.128.0.0", PUB }, { "126.255.255.255", PUB },
	{ "127.0.0.0", LOOP }, { "127.0.0.1", LOOP }, { "127.255.255.255", LOOP },
	{ "128.0.0.0", PUB }, { "169.253.255.255", PUB }, { "169.254.0.0", LL },
	{ "169.254.169.254", LL }, { "169.254.255.255", LL }, { "169.255.0.0", PUB },
	{ "172.15.255.255", PUB }, { "172.16.0.0", PRIV }, { "172.31.255.255", PRIV },
	{ "172.32.0.0", PUB }, { "192.167.255.255", PUB }, { "192.168.0.0", PRIV },
	{ "192.168.255.255", PRIV }, { "192.169.0.0", PUB }, { "192.0.0.8", RES },
	{ "192.0.2.1", RES }, { "192.88.99.1", RES }, { "198.17.255.255", PUB },
	{ "198.18.0.0", RES }, { "198.19.255.255", RES }, { "198.20.0.0", PUB },
	{ "198.51.100.7", RES }, { "203.0.113.5", RES }, { "223.255.255.255", PUB },
	{ "224.0.0.0", MC }, { "239.255.255.255", MC }, { "240.0.0.0", RES },
	{ "255.255.255.255", RES },
	/* IPv4 spellings resolvers accept. */
	{ "2130706433", LOOP }, { "0177.0.0.1", LOOP }, { "0x7f.1", LOOP }, { "0x7f000001", LOOP },
	{ "0X7F.0.0.1", LOOP }, { "127.1", LOOP }, { "127.0.1", LOOP }, { "017700000001", LOOP },
	{ "0177.0x0.00.1", LOOP }, { "127.0.0.1.", LOOP }, { "3232235521", PRIV },
	{ "0xa9.0xfe.0xa9.0xfe", LL }, { "2852039166", LL }, { "0251.0376.0251.0376", LL },
	{ "169.16689662", LL }, { "0", UNS }, { "0x", UNS }, { "167772161", PRIV },
	{ "0xA.1", PRIV }, { "4294967295", RES }, { "134744072", PUB },
	/* Not IPv4 literals. */
	{ "example.com", NOTLIT }, { "1.2.3.4.5", NOTLIT }, { "256.0.0.1", NOTLIT },
	{ "4294967296", NOTLIT }, { "1.16777216", NOTLIT }, { "1.1.65536", NOTLIT },
	{ "08.0.0.1", NOTLIT }, { "0x1g", NOTLIT }, { "", NOTLIT }, { "1..1", NOTLIT },
	{ ".1", NOTLIT }, { "1.2.3.4..", NOTLIT }, { "1.2.3.-4", NOTLIT }, { "+1.2.3.4", NOTLIT },
	{ "0x100000000", NOTLIT }, { "99999999999999999999", NOTLIT }, { "1e3", NOTLIT },
	/* IPv6. */
	{ "[::]", UNS }, { "::", UNS }, { "[::1]", LOOP }, { "::1", LOOP },
	{ "[0:0:0:0:0:0:0:1]", LOOP },
	{ "[::ffff:127.0.0.1]", LOOP }, { "[::ffff:7f00:1]", LOOP }, { "[::ffff:10.0.0.1]", PRIV },
	{ "[::ffff:169.254.169.254]", LL }, { "[::ffff:100.64.0.1]", CGN },
	{ "[::ffff:224.0.0.1]", MC }, { "[::ffff:0.0.0.0]", UNS }, { "[::ffff:8.8.8.8]", PUB },
	{ "[::127.0.0.1]", LOOP }, { "[::7f00:1]", LOOP }, { "[::10.0.0.1]", PRIV },
	{ "[::8.8.8.8]", RES }, { "[::ffff:0:127.0.0.1]", LOOP }, { "[::ffff:0:8.8.8.8]", RES },
	{ "[64:ff9b::7f00:1]", LOOP }, { "[64:ff9b::127.0.0.1]", LOOP },
	{ "[64:ff9b::10.0.0.1]", PRIV }, { "[64:ff9b::a9fe:a9fe]", LL },
	{ "[64:ff9b::8.8.8.8]", PUB }, { "[64:ff9b:1::1]", RES },
	{ "[2002:7f00:1::]", LOOP }, { "[2002:a9fe:a9fe::1]", LL }, { "[2002:c0a8:1::]", PRIV },
	{ "[2002:808:808::1]", PUB },
	{ "[fc00::]", PRIV }, { "[fc00::1]", PRIV }, { "[fdff:ffff:ffff:ffff::1]", PRIV },
	{ "[fe00::1]", RES }, { "[fe80::]", LL }, { "[fe80::1]", LL }, { "[fe80::1%25eth0]", LL },
	{ "fe80::1%eth0", LL }, { "[febf:ffff::1]", LL }, { "[fec0::1]", PRIV },
	{ "[ff00::]", MC }, { "[ff02::1]", MC }, { "[2001:db8::1]", RES }, { "[2001::1]", RES },
	{ "[1fff:ffff::1]", RES }, { "[4000::1]", RES }, { "[100::1]", RES },
	{ "[2606:4700:4700::1111]", PUB }, { "[2001:4860:4860::8888]", PUB },
	{ "[2000::]", PUB }, { "[3fff:ffff::1]", PUB },
	/* Not IPv6 literals. */
	{ "[::1", NOTLIT }, { "::1]", NOTLIT }, { "[]", NOTLIT }, { "[::g]", NOTLIT },
	{ "[1::2::3]", NOTLIT }, { "[127.0.0.1]", NOTLIT }, { "[:::]", NOTLIT },
};

static void
test_classify(void)
{
	struct sockaddr_storage ss;
	struct sockaddr_un un;
	size_t i;

	for (i = 0; i < BP_NITEMS(crows); i++) {
		int got = bp_addr_parse_literal(crows[i].host, &ss) == 0 ?
		    (int)bp_addr_classify((struct sockaddr *)&ss) : NOTLIT;

		if (got != crows[i].want)
			fprintf(stderr, "\n  %s: got %d, want %d\n", crows[i].host, got,
			    crows[i].want);
		CU_ASSERT_EQUAL(got, crows[i].want);
	}
	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	CU_ASSERT_EQUAL(bp_addr_classify((struct sockaddr *)&un), BP_ADDR_RESERVED);
	CU_ASSERT_EQUAL(bp_addr_classify(NULL), BP_ADDR_RESERVED);
	CU_ASSERT_STRING_EQUAL(bp_addr_class_name(BP_ADDR_LOOPBACK), "loopback");
	CU_ASSERT_STRING_EQUAL(bp_addr_class_name(BP_ADDR_LINKLOCAL), "link-local");
	CU_ASSERT_STRING_EQUAL(bp_addr_class_name((enum bp_addr_class)99), "reserved");
}

enum { OK = 0, BAD = -1, REFUSED = -2, NOTOK = 1 };

struct urow {
	const char	*url;
	int		 want;
	const char	*why;	/* a part of the reason, or NULL */
};

static const struct urow urows[] = {
	{ "http://example.com/", OK, NULL },
	{ "https://example.com:8443/a/b?c=d#e", OK, NULL },
	{ "HTTPS://EXAMPLE.COM/", OK, NULL },
	{ "http://8.8.8.8/", OK, NULL },
	{ "http://[2606:4700:4700::1111]/", OK, NULL },
	{ "http://localhost.example.com/", OK, NULL },
	{ "http://example.com/%41%00", OK, NULL },
	/* Other schemes. */
	{ "ftp://example.com/", BAD, "scheme ftp" },
	{ "file:///etc/passwd", BAD, "scheme file" },
	{ "gopher://example.com/", BAD, "scheme gopher" },
	{ "dict://example.com/", BAD, NULL },
	{ "ldap://example.com/", BAD, NULL },
	{ "javascript:alert(1)", BAD, NULL },
	{ "data:application/json,{}", BAD, NULL },
	{ "ipfs://bafy", BAD, NULL },
	{ "example.com/x", BAD, NULL },
	{ "//example.com/x", BAD, NULL },
	{ "", BAD, "empty" },
	{ "http://", BAD, NULL },
	{ "http://[::1/", BAD, NULL },
	/* Credentials and userinfo tricks. */
	{ "http://evil@127.0.0.1/", BAD, "credentials" },
	{ "http://127.0.0.1@evil.com/", BAD, "credentials" },
	{ "http://user:pass@example.com/", BAD, "credentials" },
	{ "http://:@example.com/", NOTOK, NULL },
	{ "http://127.0.0.1\\@example.com/", NOTOK, NULL },
	{ "http://example.com@@127.0.0.1/", NOTOK, NULL },
	/* Bytes. */
	{ "http://example.com /", BAD, "space" },
	{ "http://exa\tmple.com/", BAD, NULL },
	{ "http://example.com/\r\nX-Evil: 1", BAD, NULL },
	{ "http://\xc3\xa9xample.com/", BAD, "ASCII" },
	{ "http://example.com/\x7f", BAD, NULL },
	/* Refused hosts. */
	{ "http://127.0.0.1/", REFUSED, "127.0.0.1 is loopback" },
	{ "http://127.0.0.1:8545/", REFUSED, "loopback" },
	{ "http://localhost/", REFUSED, "localhost" },
	{ "http://LOCALHOST./", REFUSED, "localhost" },
	{ "http://api.localhost:80/", REFUSED, "localhost" },
	{ "http://2130706433/", REFUSED, "loopback" },
	{ "http://0177.0.0.1/", REFUSED, "loopback" },
	{ "http://0x7f.1/", REFUSED, "loopback" },
	{ "http://0x7f000001/", REFUSED, "loopback" },
	{ "http://127.1/", REFUSED, "loopback" },
	{ "http://127.0.0.1./", REFUSED, "loopback" },
	{ "http://0/", REFUSED, "unspecified" },
	{ "http://[::1]:8080/", REFUSED, "loopback" },
	{ "http://[::]/", REFUSED, "unspecified" },
	{ "http://[::ffff:127.0.0.1]/", REFUSED, "loopback" },
	{ "http://[::ffff:7f00:1]/", REFUSED, "loopback" },
	{ "http://[::ffff:10.0.0.1]/", REFUSED, "private" },
	{ "http://[64:ff9b::7f00:1]/", REFUSED, "loopback" },
	{ "http://[2002:7f00:1::]/", REFUSED, "loopback" },
	{ "http://169.254.169.254/latest/meta-data/", REFUSED, "169.254.169.254 is link-local" },
	{ "http://[fe80::1%25eth0]/", REFUSED, "link-local" },
	{ "http://[fd00::1]/", REFUSED, "private" },
	{ "http://10.0.0.1/", REFUSED, "private" },
	{ "http://172.16.0.1/", REFUSED, "private" },
	{ "http://192.168.1.1/", REFUSED, "private" },
	{ "http://100.64.0.1/", REFUSED, "carrier-grade NAT" },
	{ "http://224.0.0.1/", REFUSED, "multicast" },
	{ "http://255.255.255.255/", REFUSED, "reserved" },
	{ "https://0xa9.0xfe.0xa9.0xfe/", REFUSED, "link-local" },
	/* curl decodes a percent-encoded host and takes one slash: read as it reads them. */
	{ "http://%31%32%37.0.0.1/", REFUSED, "loopback" },
	{ "http://loc%61lhost/", REFUSED, "localhost" },
	{ "http://localhost%2e/", REFUSED, "localhost" },
	{ "http:/127.0.0.1/", REFUSED, "loopback" },
};

static int
is_localhost_name(const char *name)
{
	size_t n = strlen(name);

	return strcasecmp(name, "localhost") == 0 ||
	    (n > 10 && strcasecmp(name + n - 10, ".localhost") == 0);
}

static void
test_check_url(void)
{
	char why[200], *longurl;
	size_t i;
	int rc;

	for (i = 0; i < BP_NITEMS(urows); i++) {
		rc = bp_fetch_check_url_static(urows[i].url, false, false, why, sizeof(why));
		if (urows[i].want == NOTOK ? rc == 0 : rc != urows[i].want)
			fprintf(stderr, "\n  %s: got %d (%s), want %d\n", urows[i].url, rc, why,
			    urows[i].want);
		if (urows[i].want == NOTOK) {
			CU_ASSERT_NOT_EQUAL(rc, 0);
		} else {
			CU_ASSERT_EQUAL(rc, urows[i].want);
		}
		if (urows[i].why != NULL) {
			CU_ASSERT_PTR_NOT_NULL(strstr(why, urows[i].why));
		}
		if (rc == 0) {
			CU_ASSERT_STRING_EQUAL(why, "");
		} else {
			/* The full check agrees wherever no name is resolved. */
			CU_ASSERT_EQUAL(bp_fetch_check_url(urows[i].url, false, false, why,
			    sizeof(why)), -1);
		}
	}
	/* allow_private lifts the address refusals, not the others. */
	CU_ASSERT_EQUAL(bp_fetch_check_url_static("http://127.0.0.1/", true, false, why,
	    sizeof(why)), 0);
	CU_ASSERT_EQUAL(bp_fetch_check_url("http://localhost:1/", true, false, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(bp_fetch_check_url("http://[::ffff:7f00:1]/", true, false, why,
	    sizeof(why)), 0);
	CU_ASSERT_EQUAL(bp_fetch_check_url("ftp://127.0.0.1/", true, false, why, sizeof(why)), -1);
	CU_ASSERT_EQUAL(bp_fetch_check_url("http://u@127.0.0.1/", true, false, why, sizeof(why)),
	    -1);
	/* https_only. */
	CU_ASSERT_EQUAL(bp_fetch_check_url("http://8.8.8.8/", false, true, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "https only"));
	CU_ASSERT_EQUAL(bp_fetch_check_url("https://8.8.8.8/", false, true, why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(bp_fetch_check_url(NULL, false, false, why, sizeof(why)), -1);
	/*
	 * The DNS step: this machine's own name resolves (/etc/hosts) to a loopback or private
	 * address on any usual host or container; then the full check refuses it by what it
	 * resolves to, where the static check cannot tell.
	 */
	{
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
		char name[256], url[320];

		if (gethostname(name, sizeof(name)) == 0 && strchr(name, '.') == NULL &&
		    getaddrinfo(name, NULL, &hints, &ai) == 0) {
			int local = bp_addr_classify(ai->ai_addr) != BP_ADDR_PUBLIC;

			snprintf(url, sizeof(url), "http://%s/", name);
			CU_ASSERT_EQUAL(bp_fetch_check_url_static(url, false, false, why,
			    sizeof(why)), is_localhost_name(name) ? -2 : 0);
			if (local && !is_localhost_name(name)) {
				CU_ASSERT_EQUAL(bp_fetch_check_url(url, false, false, why,
				    sizeof(why)), -1);
				CU_ASSERT_PTR_NOT_NULL(strstr(why, " resolves to "));
				CU_ASSERT_EQUAL(bp_fetch_check_url(url, true, false, why,
				    sizeof(why)), 0);
			}
			freeaddrinfo(ai);
		}
	}
	/* Length: BP_FETCH_URL_MAX bytes pass, one more does not. */
	longurl = malloc(BP_FETCH_URL_MAX + 2);
	memcpy(longurl, "http://8.8.8.8/", 15);
	memset(longurl + 15, 'a', BP_FETCH_URL_MAX + 1 - 15);
	longurl[BP_FETCH_URL_MAX] = '\0';
	CU_ASSERT_EQUAL(bp_fetch_check_url(longurl, false, false, why, sizeof(why)), 0);
	longurl[BP_FETCH_URL_MAX] = 'a';
	longurl[BP_FETCH_URL_MAX + 1] = '\0';
	CU_ASSERT_EQUAL(bp_fetch_check_url(longurl, false, false, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "longer than"));
	free(longurl);
}

/* ---- A loopback server ---- */

static int lfd = -1;
static int port;
static pthread_t acceptor;
static int connections;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int
connections_seen(void)
{
	int v;

	pthread_mutex_lock(&mu);
	v = connections;
	pthread_mutex_unlock(&mu);
	return v;
}

static void
respond(int fd, const char *status, const char *extra, const char *body, size_t len)
{
	char head[512];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
	    "Connection: close\r\n%sContent-Length: %zu\r\n\r\n", status, extra, len);

	if (bp_unit_send_all(fd, head, (size_t)n) == 0)
		bp_unit_send_all(fd, body, len);
}

static void
answer_big(int fd, int chunked)
{
	char chunk[64 * 1024];	/* per call: connections are served at once */
	char head[128];
	size_t sent;
	int n;

	memset(chunk, 'a', sizeof(chunk));
	n = chunked ? snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n") :
	    snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", BIG);
	if (bp_unit_send_all(fd, head, (size_t)n) == -1)
		return;
	for (sent = 0; sent < BIG; sent += sizeof(chunk)) {
		if (chunked) {
			n = snprintf(head, sizeof(head), "%zx\r\n", sizeof(chunk));
			if (bp_unit_send_all(fd, head, (size_t)n) == -1)
				return;
		}
		if (bp_unit_send_all(fd, chunk, sizeof(chunk)) == -1 ||
		    (chunked && bp_unit_send_all(fd, "\r\n", 2) == -1))
			return;
	}
	if (chunked)
		bp_unit_send_all(fd, "0\r\n\r\n", 5);
}

/* The request target: from p up to the next space, into path. 0 or -1. */
static int
req_path(const char *p, const char *end, char *path, size_t len)
{
	const char *sp = memchr(p, ' ', (size_t)(end - p));

	if (sp == NULL || (size_t)(sp - p) >= len)
		return -1;
	memcpy(path, p, (size_t)(sp - p));
	path[sp - p] = '\0';
	return 0;
}

static void *
serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[8192], path[256], loc[320], *end, *cl;
	size_t have = 0, hlen, blen = 0;
	ssize_t r;
	int n;

	pthread_mutex_lock(&mu);
	connections++;
	pthread_mutex_unlock(&mu);
	while ((end = memmem(buf, have, "\r\n\r\n", 4)) == NULL) {
		if (have == sizeof(buf) || (r = read(fd, buf + have, sizeof(buf) - have)) <= 0)
			goto out;
		have += (size_t)r;
	}
	hlen = (size_t)(end + 4 - buf);
	if ((cl = memmem(buf, hlen, "Content-Length: ", 16)) != NULL)
		blen = (size_t)strtoul(cl + 16, NULL, 10);
	while (have < hlen + blen && have < sizeof(buf)) {
		if ((r = read(fd, buf + have, sizeof(buf) - have)) <= 0)
			goto out;
		have += (size_t)r;
	}
	if ((end = memchr(buf, ' ', hlen)) == NULL ||
	    req_path(end + 1, buf + hlen, path, sizeof(path)) == -1)
		goto out;
	if (strcmp(path, "/ok") == 0)
		respond(fd, "200 OK", "", "hello", 5);
	else if (strncmp(path, "/redir/", 7) == 0) {
		int k = (int)strtol(path + 7, NULL, 10);

		if (k <= 0)
			respond(fd, "200 OK", "", "landed", 6);
		else {
			snprintf(loc, sizeof(loc), "Location: /redir/%d\r\n", k - 1);
			respond(fd, "302 Found", loc, "", 0);
		}
	} else if (strcmp(path, "/toftp") == 0) {
		n = snprintf(loc, sizeof(loc), "Location: ftp://127.0.0.1:%d/\r\n", port);
		(void)n;
		respond(fd, "302 Found", loc, "", 0);
	} else if (strcmp(path, "/big") == 0)
		answer_big(fd, 0);
	else if (strcmp(path, "/chunked") == 0)
		answer_big(fd, 1);
	else if (strcmp(path, "/hang") == 0) {
		struct pollfd p = { fd, POLLIN, 0 };

		/* Until the client gives up and closes (or 10 s). */
		poll(&p, 1, 10000);
	} else if (strcmp(path, "/echo") == 0)
		respond(fd, "200 OK", "", buf + hlen, have - hlen);
	else
		respond(fd, "404 Not Found", "", "no", 2);
out:
	close(fd);
	return NULL;
}

static int
suite_init(void)
{
	return (lfd = bp_unit_server_start(&port, serve, &acceptor)) < 0 ? -1 : 0;
}

static int
suite_fini(void)
{
	bp_unit_server_stop(lfd, acceptor);
	return 0;
}

static void
url_of(char *buf, size_t len, const char *host, const char *path)
{
	snprintf(buf, len, "http://%s:%d%s", host, port, path);
}

static void
test_get(void)
{
	struct bp_fetch_opts o = { .allow_private = true };
	struct bp_fetch_result res;
	char url[128];

	url_of(url, sizeof(url), "127.0.0.1", "/ok");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 200);
	CU_ASSERT_EQUAL(res.body.len, 5);
	CU_ASSERT_STRING_EQUAL(res.body.data != NULL ? res.body.data : "", "hello");
	CU_ASSERT_STRING_EQUAL(res.content_type, "text/plain");
	CU_ASSERT_STRING_EQUAL(res.error, "");
	CU_ASSERT_FALSE(res.blocked);
	bp_fetch_result_free(&res);

	/* Any status is an answer. */
	url_of(url, sizeof(url), "localhost", "/nothing");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 404);
	bp_fetch_result_free(&res);

	/* A URL the check refuses is never fetched. */
	CU_ASSERT_EQUAL(bp_fetch_get("ftp://127.0.0.1/", &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "scheme ftp"));
	CU_ASSERT_EQUAL(res.status, 0);
	bp_fetch_result_free(&res);
	CU_ASSERT_EQUAL(bp_fetch_get(NULL, &o, &res), -1);
	bp_fetch_result_free(&res);
}

/* allow_private = false: refused before connecting, and the server sees no connection. */
static void
test_blocked(void)
{
	static const char *const hosts[] = { "127.0.0.1", "localhost", "2130706433", "0x7f.1",
	    "[::ffff:7f00:1]", "[::ffff:127.0.0.1]", "127.1" };
	struct bp_fetch_opts o = { .allow_private = false };
	struct bp_fetch_result res;
	char url[128];
	int before = connections_seen();
	size_t i;

	for (i = 0; i < BP_NITEMS(hosts); i++) {
		url_of(url, sizeof(url), hosts[i], "/ok");
		CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
		CU_ASSERT_TRUE(res.blocked);
		CU_ASSERT_EQUAL(res.status, 0);
		CU_ASSERT_EQUAL(res.body.len, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "loopback"));
		bp_fetch_result_free(&res);
		CU_ASSERT_EQUAL(bp_fetch_post(url, NULL, "x", 1, &o, &res), -1);
		CU_ASSERT_TRUE(res.blocked);
		bp_fetch_result_free(&res);
	}
	usleep(100 * 1000);
	CU_ASSERT_EQUAL(connections_seen(), before);
}

/*
 * The connect-time check: a name that passes the URL check resolves to 127.0.0.1 when curl
 * connects (CURLOPT_RESOLVE plays the rebinding DNS server). Two transfers in one curl multi,
 * as the webhook worker drives them: the refused one never connects, the allowed one answers.
 */
static void
test_rebind_multi(void)
{
	struct bp_fetch_opts deny = { .allow_private = false, .total_ms = 3000 };
	struct bp_fetch_opts allow = { .allow_private = true, .total_ms = 3000 };
	struct bp_fetch_guard g[2];
	struct bp_fetch_result res[2];
	struct curl_slist *resolve[2] = { NULL, NULL };
	CURL *h[2];
	CURLM *m;
	CURLMsg *msg;
	char url[128], entry[128];
	int before = connections_seen(), running = 1, left, i, done = 0;

	m = curl_multi_init();
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	for (i = 0; i < 2; i++) {
		const char *name = i == 0 ? "rebind.example" : "allowed.example";

		snprintf(url, sizeof(url), "http://%s:%d/ok", name, port);
		snprintf(entry, sizeof(entry), "%s:%d:127.0.0.1", name, port);
		h[i] = curl_easy_init();
		CU_ASSERT_PTR_NOT_NULL_FATAL(h[i]);
		CU_ASSERT_EQUAL(bp_fetch_arm(h[i], url, i == 0 ? &deny : &allow, &g[i], &res[i]),
		    0);
		resolve[i] = curl_slist_append(NULL, entry);
		curl_easy_setopt(h[i], CURLOPT_RESOLVE, resolve[i]);
		curl_easy_setopt(h[i], CURLOPT_PRIVATE, (char *)NULL + i);
		curl_multi_add_handle(m, h[i]);
	}
	while (running > 0) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		if (running > 0)
			curl_multi_poll(m, NULL, 0, 200, NULL);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			for (i = 0; i < 2; i++)
				if (msg->easy_handle == h[i]) {
					bp_fetch_finish(h[i], msg->data.result, &g[i], &res[i]);
					done++;
				}
		}
	}
	CU_ASSERT_EQUAL(done, 2);
	CU_ASSERT_TRUE(g[0].blocked);
	CU_ASSERT_TRUE(res[0].blocked);
	CU_ASSERT_EQUAL(res[0].status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(res[0].error, "127.0.0.1 is loopback"));
	CU_ASSERT_FALSE(res[1].blocked);
	CU_ASSERT_EQUAL(res[1].status, 200);
	CU_ASSERT_STRING_EQUAL(res[1].body.data != NULL ? res[1].body.data : "", "hello");
	CU_ASSERT_STRING_EQUAL(res[1].error, "");
	usleep(100 * 1000);
	/* Only the allowed transfer connected. */
	CU_ASSERT_EQUAL(connections_seen(), before + 1);
	for (i = 0; i < 2; i++) {
		curl_multi_remove_handle(m, h[i]);
		curl_easy_cleanup(h[i]);
		curl_slist_free_all(resolve[i]);
		bp_fetch_result_free(&res[i]);
	}
	curl_multi_cleanup(m);
}

static void
test_redirects(void)
{
	struct bp_fetch_opts o = { .allow_private = true, .max_redirects = 3 };
	struct bp_fetch_result res;
	char url[128];

	url_of(url, sizeof(url), "127.0.0.1", "/redir/3");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 200);
	CU_ASSERT_STRING_EQUAL(res.body.data != NULL ? res.body.data : "", "landed");
	bp_fetch_result_free(&res);

	url_of(url, sizeof(url), "127.0.0.1", "/redir/4");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "more than 3 redirects"));
	bp_fetch_result_free(&res);

	/* More than 3 asked for is 3. */
	o.max_redirects = 10;
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	bp_fetch_result_free(&res);

	/* Each hop is checked again: a redirect to ftp: is not followed. */
	url_of(url, sizeof(url), "127.0.0.1", "/toftp");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "scheme ftp"));
	bp_fetch_result_free(&res);

	/* No redirects followed: the 3xx is the answer. */
	o.max_redirects = 0;
	url_of(url, sizeof(url), "127.0.0.1", "/redir/1");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 302);
	bp_fetch_result_free(&res);
}

static void
test_limits(void)
{
	struct bp_fetch_opts o = { .allow_private = true, .max_bytes = 1024 * 1024 };
	struct bp_fetch_result res;
	char url[128];
	int64_t t0;

	/* The size cap, announced (Content-Length) and not (chunked). */
	url_of(url, sizeof(url), "127.0.0.1", "/big");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "larger than 1048576 bytes"));
	CU_ASSERT(res.body.len <= 1024 * 1024);
	bp_fetch_result_free(&res);
	url_of(url, sizeof(url), "127.0.0.1", "/chunked");
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "larger than"));
	CU_ASSERT(res.body.len <= 1024 * 1024);
	bp_fetch_result_free(&res);
	o.max_bytes = 3 * 1024 * 1024;
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), 0);
	CU_ASSERT_EQUAL(res.body.len, BIG);
	bp_fetch_result_free(&res);

	/* The total limit: a server that never answers. */
	o.total_ms = 400;
	url_of(url, sizeof(url), "127.0.0.1", "/hang");
	t0 = bp_mono_us();
	CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "timed out"));
	CU_ASSERT(bp_mono_us() - t0 < 2000 * 1000);
	CU_ASSERT(res.elapsed_ms >= 350);
	bp_fetch_result_free(&res);

	/*
	 * The connect limit, below the total one: a listener whose accept queue is full (backlog
	 * 0, never accepted, filled by two connections) drops the next SYN, so the connection
	 * never completes and the fetch gives up after connect_ms, not total_ms.
	 */
	{
		int full_port, lfull = bp_unit_bind_loopback(&full_port), c[2] = { -1, -1 };
		struct sockaddr_in sa = { .sin_family = AF_INET };
		size_t k;

		CU_ASSERT_FATAL(lfull >= 0 && listen(lfull, 0) == 0);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sa.sin_port = htons((uint16_t)full_port);
		for (k = 0; k < 2; k++) {
			c[k] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			connect(c[k], (struct sockaddr *)&sa, sizeof(sa));
		}
		usleep(50 * 1000);
		o.connect_ms = 300;
		o.total_ms = 5000;
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/", full_port);
		t0 = bp_mono_us();
		CU_ASSERT_EQUAL(bp_fetch_get(url, &o, &res), -1);
		CU_ASSERT(bp_mono_us() - t0 < 2000 * 1000);
		CU_ASSERT_PTR_NOT_NULL(strstr(res.error, "timed out"));
		bp_fetch_result_free(&res);
		for (k = 0; k < 2; k++)
			close(c[k]);
		close(lfull);
	}
}

static void
test_post(void)
{
	static const char *const hdrs[] = { "Content-Type: application/json", NULL };
	struct bp_fetch_opts o = { .allow_private = true };
	struct bp_fetch_result res;
	char url[128];

	url_of(url, sizeof(url), "127.0.0.1", "/echo");
	CU_ASSERT_EQUAL(bp_fetch_post(url, hdrs, "{\"a\":1}", 7, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 200);
	CU_ASSERT_STRING_EQUAL(res.body.data != NULL ? res.body.data : "", "{\"a\":1}");
	bp_fetch_result_free(&res);
	/* POST never follows a redirect. */
	o.max_redirects = 3;
	url_of(url, sizeof(url), "127.0.0.1", "/redir/1");
	CU_ASSERT_EQUAL(bp_fetch_post(url, NULL, "", 0, &o, &res), 0);
	CU_ASSERT_EQUAL(res.status, 302);
	bp_fetch_result_free(&res);
}

/* Several POSTs at once (curl multi): each ends on its own, a bad one fails alone. */
static void
test_post_many(void)
{
	static const char *const hdrs[] = { "Content-Type: application/json", NULL };
	struct bp_fetch_opts o = { .allow_private = true, .total_ms = 500 };
	struct bp_fetch_req reqs[5];
	struct bp_fetch_result res[5];
	char ok[128], hang[128], blocked[128];
	int before;
	size_t i;

	url_of(ok, sizeof(ok), "127.0.0.1", "/echo");
	url_of(hang, sizeof(hang), "127.0.0.1", "/hang");
	url_of(blocked, sizeof(blocked), "localhost", "/echo");
	reqs[0] = (struct bp_fetch_req){ ok, hdrs, "{\"n\":0}", 7 };
	reqs[1] = (struct bp_fetch_req){ "ftp://127.0.0.1/", NULL, "x", 1 };
	reqs[2] = (struct bp_fetch_req){ hang, NULL, "x", 1 };
	reqs[3] = (struct bp_fetch_req){ ok, NULL, "{\"n\":3}", 7 };
	reqs[4] = (struct bp_fetch_req){ ok, NULL, NULL, 0 };
	CU_ASSERT_EQUAL(bp_fetch_post_many(reqs, 5, &o, res), 0);
	CU_ASSERT_EQUAL(res[0].status, 200);
	CU_ASSERT_STRING_EQUAL(res[0].body.data != NULL ? res[0].body.data : "", "{\"n\":0}");
	CU_ASSERT_STRING_EQUAL(res[0].error, "");
	CU_ASSERT_EQUAL(res[1].status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(res[1].error, "scheme ftp"));
	CU_ASSERT_EQUAL(res[2].status, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(res[2].error, "timed out"));
	CU_ASSERT_EQUAL(res[3].status, 200);
	CU_ASSERT_STRING_EQUAL(res[3].body.data != NULL ? res[3].body.data : "", "{\"n\":3}");
	CU_ASSERT_EQUAL(res[4].status, 200);
	CU_ASSERT_EQUAL(res[4].body.len, 0);
	for (i = 0; i < 5; i++)
		bp_fetch_result_free(&res[i]);

	/* Refused addresses: every request fails alone, and nothing connects. */
	o.allow_private = false;
	before = connections_seen();
	reqs[2].url = blocked;
	CU_ASSERT_EQUAL(bp_fetch_post_many(reqs, 5, &o, res), 0);
	for (i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(res[i].status, 0);
		CU_ASSERT_NOT_EQUAL(res[i].error[0], '\0');
		CU_ASSERT_EQUAL(res[i].blocked, i != 1);
		bp_fetch_result_free(&res[i]);
	}
	usleep(100 * 1000);
	CU_ASSERT_EQUAL(connections_seen(), before);
	CU_ASSERT_EQUAL(bp_fetch_post_many(NULL, 0, &o, NULL), 0);
}

/* Threads fetching at once: no shared state between calls. */
static void *
fetch_thread(void *arg)
{
	struct bp_fetch_opts o = { .allow_private = true };
	struct bp_fetch_result res;
	char url[128];
	void *bad = NULL;

	(void)arg;
	url_of(url, sizeof(url), "127.0.0.1", "/ok");
	if (bp_fetch_get(url, &o, &res) != 0 || res.status != 200 || res.body.len != 5)
		bad = (void *)1;
	bp_fetch_result_free(&res);
	return bad;
}

static void
test_threads(void)
{
	CU_ASSERT_EQUAL(bp_unit_threads(8, fetch_thread), 0);
}

BP_UNIT_SUITE(fetch, suite_init, suite_fini,
    { "classifier: every range, edge and spelling", test_classify },
    { "URL checks: schemes, credentials, hosts, bytes, length", test_check_url },
    { "GET an allowed loopback server", test_get },
    { "refused addresses never connect", test_blocked },
    { "connect-time check (rebinding) under curl multi", test_rebind_multi },
    { "redirects: followed, capped at 3, each re-checked", test_redirects },
    { "size cap and total timeout", test_limits },
    { "POST", test_post },
    { "POST many at once (curl multi)", test_post_many },
    { "threads", test_threads });
