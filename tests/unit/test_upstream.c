/*
 * lib/net/upstream.c and the client (lib/rpc/rpc_client.c) against a scripted HTTP server on a loopback
 * socket (a thread per connection, keep-alive): failover order, what is definite and what fails
 * over, marking down and skipping, the last-resort pass, the response cap (announced and
 * chunked), timeouts, connection reuse, and single and batch client calls matched by id.
 *
 * The server's answer depends on the request path:
 *   /ok       JSON-RPC: "echo" returns params, "fail" an error -32000, anything else "ok";
 *             batches answered in order            /rev  the same, batches in reverse order
 *   /503      503 text      /429  429 with a JSON-RPC body      /html  200 with an HTML page
 *   /500rpc   500 with a JSON-RPC error body       /slow  waits 2 s, then as /ok
 *   /big      2 MiB chunked                        /bigcl 2 MiB with Content-Length
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/upstream.h"
#include "rpc/jsonrpc.h"
#include "unit.h"

#define BIG	(2 * 1024 * 1024)

static int lfd = -1;
static int port;
static int dead_port;
static pthread_t acceptor;
static int hits_ok, hits_503, hits_429, hits_500rpc, hits_html, connections;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static void
count(int *c)
{
	pthread_mutex_lock(&mu);
	(*c)++;
	pthread_mutex_unlock(&mu);
}

static int
get(int *c)
{
	int v;

	pthread_mutex_lock(&mu);
	v = *c;
	pthread_mutex_unlock(&mu);
	return v;
}

static int
respond(int fd, int status, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", status, len);

	if (bp_unit_send_all(fd, head, (size_t)n) == -1)
		return -1;
	return bp_unit_send_all(fd, body, len);
}

/* One JSON-RPC request object -> its answer. */
static cJSON *
answer_one(const cJSON *q)
{
	cJSON *a = cJSON_CreateObject(), *id = cJSON_GetObjectItem(q, "id");
	const cJSON *m = cJSON_GetObjectItem(q, "method");

	cJSON_AddStringToObject(a, "jsonrpc", "2.0");
	cJSON_AddItemToObject(a, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
	if (cJSON_IsString(m) && strcmp(m->valuestring, "fail") == 0) {
		cJSON *e = cJSON_AddObjectToObject(a, "error");

		cJSON_AddNumberToObject(e, "code", -32000);
		cJSON_AddStringToObject(e, "message", "boom");
	} else if (cJSON_IsString(m) && strcmp(m->valuestring, "echo") == 0)
		cJSON_AddItemToObject(a, "result", cJSON_Duplicate(cJSON_GetObjectItem(q, "params"), 1));
	else
		cJSON_AddStringToObject(a, "result", "ok");
	return a;
}

static int
answer_rpc(int fd, const char *body, size_t len, int reverse)
{
	cJSON *q = cJSON_ParseWithLength(body, len), *a, *e;
	char *text;
	int rc;

	if (cJSON_IsArray(q)) {
		a = cJSON_CreateArray();
		cJSON_ArrayForEach(e, q) {
			if (reverse)
				cJSON_InsertItemInArray(a, 0, answer_one(e));
			else
				cJSON_AddItemToArray(a, answer_one(e));
		}
	} else
		a = answer_one(q);
	text = cJSON_PrintUnformatted(a);
	rc = respond(fd, 200, text, strlen(text));
	free(text);
	cJSON_Delete(a);
	cJSON_Delete(q);
	return rc;
}

static int
answer_big(int fd, int chunked)
{
	static char chunk[64 * 1024];
	char head[256];
	size_t sent;
	int n;

	memset(chunk, 'a', sizeof(chunk));
	n = chunked ? snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") :
	    snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", BIG);
	if (bp_unit_send_all(fd, head, (size_t)n) == -1)
		return -1;
	for (sent = 0; sent < BIG; sent += sizeof(chunk)) {
		if (chunked) {
			n = snprintf(head, sizeof(head), "%zx\r\n", sizeof(chunk));
			if (bp_unit_send_all(fd, head, (size_t)n) == -1)
				return -1;
		}
		if (bp_unit_send_all(fd, sent == 0 ? "{" : chunk,
		    sent == 0 ? 1 : sizeof(chunk)) == -1)
			return -1;
		if (sent == 0 && bp_unit_send_all(fd, chunk, sizeof(chunk) - 1) == -1)
			return -1;
		if (chunked && bp_unit_send_all(fd, "\r\n", 2) == -1)
			return -1;
	}
	return chunked ? bp_unit_send_all(fd, "0\r\n\r\n", 5) : 0;
}

/* Serves one keep-alive connection until the client closes it. */
static void *
serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	static const char rpc_err[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":3,\"message\":\"execution reverted\"}}";
	static const char throttled[] =
	    "{\"jsonrpc\":\"2.0\",\"id\":0,\"error\":{\"code\":-32005,\"message\":\"slow down\"}}";
	char *buf = malloc(1 << 20);
	size_t have = 0;

	count(&connections);
	for (;;) {
		char *end, path[64];
		size_t hlen, blen;
		int rc;

		if (buf == NULL || bp_unit_read_request(fd, buf, 1 << 20, &have, &hlen, &blen) == -1)
			goto out;
		if (hlen < 6 || memcmp(buf, "POST ", 5) != 0 ||
		    (end = memchr(buf + 5, ' ', hlen - 5)) == NULL ||
		    (size_t)(end - buf - 5) >= sizeof(path))
			goto out;
		memcpy(path, buf + 5, (size_t)(end - buf - 5));
		path[end - buf - 5] = '\0';
		if (strcmp(path, "/ok") == 0) {
			count(&hits_ok);
			rc = answer_rpc(fd, buf + hlen, blen, 0);
		} else if (strcmp(path, "/rev") == 0)
			rc = answer_rpc(fd, buf + hlen, blen, 1);
		else if (strcmp(path, "/slow") == 0) {
			sleep(2);
			rc = answer_rpc(fd, buf + hlen, blen, 0);
		} else if (strcmp(path, "/503") == 0) {
			count(&hits_503);
			rc = respond(fd, 503, "Service Unavailable", 19);
		} else if (strcmp(path, "/429") == 0) {
			count(&hits_429);
			rc = respond(fd, 429, throttled, sizeof(throttled) - 1);
		} else if (strcmp(path, "/500rpc") == 0) {
			count(&hits_500rpc);
			rc = respond(fd, 500, rpc_err, sizeof(rpc_err) - 1);
		} else if (strcmp(path, "/html") == 0) {
			count(&hits_html);
			rc = respond(fd, 200, "<html>maintenance</html>", 24);
		} else if (strcmp(path, "/big") == 0)
			rc = answer_big(fd, 1);
		else if (strcmp(path, "/bigcl") == 0)
			rc = answer_big(fd, 0);
		else
			rc = respond(fd, 404, "no", 2);
		if (rc == -1)
			goto out;
		bp_unit_request_done(buf, &have, hlen + blen);
	}
out:
	free(buf);
	close(fd);
	return NULL;
}

static int
suite_init(void)
{
	int dfd;

	/* Failovers log a warning each; the assertions say what matters here. */
	bp_log_set_level(BP_LOG_ERR);
	/* A port that was just free and has no listener: connections are refused. */
	if ((dfd = bp_unit_bind_loopback(&dead_port)) < 0)
		return -1;
	close(dfd);
	return (lfd = bp_unit_server_start(&port, serve, &acceptor)) < 0 ? -1 : 0;
}

static int
suite_fini(void)
{
	bp_unit_server_stop(lfd, acceptor);
	bp_log_set_level(BP_LOG_INFO);
	return 0;
}

static void
config_init(struct bp_config *c, int64_t timeout_ms, int64_t down_s)
{
	memset(c, 0, sizeof(*c));
	c->max_response = 1024 * 1024;
	c->max_batch = 100;
	c->upstream_timeout_ms = timeout_ms;
	c->upstream_down_seconds = down_s;
}

/* Fills net with upstream paths ("dead" is the refusing port). */
static void
net_init(struct bp_network *n, const char *const *paths, size_t np)
{
	size_t i;

	memset(n, 0, sizeof(*n));
	bp_strlcpy(n->chain, "test", sizeof(n->chain));
	bp_strlcpy(n->network, "net", sizeof(n->network));
	for (i = 0; i < np; i++) {
		if (strcmp(paths[i], "dead") == 0)
			snprintf(n->upstream[i], BP_URL_MAX, "http://127.0.0.1:%d/", dead_port);
		else
			snprintf(n->upstream[i], BP_URL_MAX, "http://127.0.0.1:%d%s", port, paths[i]);
	}
	n->nupstream = np;
}

static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"x\"}";

static void
test_definite(void)
{
	static const struct { long status; const char *body; int definite; } rows[] = {
		{ 200, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}", 1 },
		{ 200, " \r\n[{\"jsonrpc\":\"2.0\"}]", 1 },
		{ 200, "<html>", 0 },
		{ 200, "", 0 },
		{ 200, "   ", 0 },
		{ 204, "", 0 },
		{ 400, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{}}", 1 },
		{ 404, "<html>not found</html>", 0 },
		{ 500, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3}}", 1 },
		{ 500, "{\"message\":\"internal\"}", 0 },
		{ 502, "Bad Gateway", 0 },
		{ 503, "{\"jsonrpc\":\"2.0\",\"error\":{}}", 1 },
		{ 504, "", 0 },
		{ 429, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32005}}", 0 },
		{ 401, "{\"jsonrpc\":\"2.0\",\"error\":{}}", 0 },
		{ 403, "{\"jsonrpc\":\"2.0\",\"error\":{}}", 0 },
		{ 408, "{\"jsonrpc\":\"2.0\",\"error\":{}}", 0 },
		{ 302, "{\"jsonrpc\":\"2.0\"}", 0 },
		{ 0, "{}", 0 },
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++)
		CU_ASSERT_EQUAL(bp_upstream_definite(rows[i].status, rows[i].body,
		    strlen(rows[i].body)), rows[i].definite);
}

static void
test_redact(void)
{
	char buf[128];

	bp_upstream_redact("https://user:secret@node.example:8545/v3/APIKEY?x=1#f", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "https://node.example:8545");
	bp_upstream_redact("http://127.0.0.1:8545", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "http://127.0.0.1:8545");
	bp_upstream_redact("http://a@b@host/p", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "http://host");
	bp_upstream_redact("nonsense", buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "?");
	bp_upstream_redact("https://host.example/path", buf, 10);
	CU_ASSERT_EQUAL(strlen(buf), 9);
}

/* A dead port and a 503 fail over to the third; both are then skipped until they are due. */
static void
test_failover_and_skip(void)
{
	static const char *const paths[] = { "dead", "/503", "/ok" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int ok0 = get(&hits_ok), s0 = get(&hits_503);

	config_init(&cfg, 2000, 30);
	net_init(&net, paths, 3);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.index, 2);
	CU_ASSERT_EQUAL(info.attempts, 3);
	CU_ASSERT_EQUAL(info.http_status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "\"result\":\"ok\""));
	CU_ASSERT(bp_upstream_is_down(u, &net, 0));
	CU_ASSERT(bp_upstream_is_down(u, &net, 1));
	CU_ASSERT(!bp_upstream_is_down(u, &net, 2));
	CU_ASSERT_EQUAL(get(&hits_503), s0 + 1);
	/* Now the two bad ones are skipped. */
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.index, 2);
	CU_ASSERT_EQUAL(info.attempts, 1);
	CU_ASSERT_EQUAL(get(&hits_503), s0 + 1);
	CU_ASSERT_EQUAL(get(&hits_ok), ok0 + 2);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* 429 (even with a JSON-RPC body) and a 200 HTML page fail over; the log names no path. */
static void
test_failover_statuses(void)
{
	static const char *const paths[] = { "/429", "/html", "/ok" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;

	config_init(&cfg, 2000, 30);
	net_init(&net, paths, 3);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.index, 2);
	CU_ASSERT_EQUAL(info.attempts, 3);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* A JSON-RPC error in a 500 is the answer: passed through, the next upstream never asked. */
static void
test_passthrough(void)
{
	static const char *const paths[] = { "/500rpc", "/ok" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int ok0 = get(&hits_ok);

	config_init(&cfg, 2000, 30);
	net_init(&net, paths, 2);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.index, 0);
	CU_ASSERT_EQUAL(info.http_status, 500);
	CU_ASSERT_PTR_NOT_NULL(strstr(out.data, "execution reverted"));
	CU_ASSERT(!bp_upstream_is_down(u, &net, 0));
	CU_ASSERT_EQUAL(get(&hits_ok), ok0);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* All fail: FAILED. Marked-down upstreams are still tried as a last resort next time. */
static void
test_all_fail_and_last_resort(void)
{
	static const char *const paths[] = { "dead", "/503" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int s0 = get(&hits_503);

	config_init(&cfg, 2000, 30);
	net_init(&net, paths, 2);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info),
	    BP_UPSTREAM_FAILED);
	CU_ASSERT_EQUAL(info.attempts, 2);
	CU_ASSERT_EQUAL(out.len, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.error, "503"));
	CU_ASSERT_PTR_NULL(strstr(info.error, "/503"));
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info),
	    BP_UPSTREAM_FAILED);
	CU_ASSERT_EQUAL(info.attempts, 2);
	CU_ASSERT_EQUAL(get(&hits_503), s0 + 2);
	bp_upstream_free(u);
	/* upstream_down_seconds = 0: nothing is ever marked down. */
	config_init(&cfg, 2000, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info);
	CU_ASSERT(!bp_upstream_is_down(u, &net, 0));
	CU_ASSERT(!bp_upstream_is_down(u, &net, 1));
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* Past max_response, chunked or announced: TOO_LARGE at once, not retried elsewhere. */
static void
test_too_large(void)
{
	static const char *const chunked[] = { "/big", "/ok" }, *const announced[] = { "/bigcl", "/ok" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int ok0 = get(&hits_ok);

	config_init(&cfg, 5000, 30);
	bp_buf_init(&out, 64 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	net_init(&net, chunked, 2);
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info),
	    BP_UPSTREAM_TOO_LARGE);
	CU_ASSERT_EQUAL(info.attempts, 1);
	CU_ASSERT_EQUAL(out.len, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(info.error, "too large"));
	net_init(&net, announced, 2);
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info),
	    BP_UPSTREAM_TOO_LARGE);
	CU_ASSERT_EQUAL(get(&hits_ok), ok0);
	/* The output buffer's own cap counts too. */
	bp_buf_free(&out);
	bp_buf_init(&out, 16);
	net_init(&net, chunked + 1, 1);
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info),
	    BP_UPSTREAM_TOO_LARGE);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* Posts to /slow then /ok with cfg: /ok answers well before /slow would, and /slow is marked. */
static void
leaves_slow(const struct bp_config *cfg)
{
	static const char *const paths[] = { "/slow", "/ok" };
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int64_t t0;

	net_init(&net, paths, 2);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(cfg));
	t0 = bp_mono_us();
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT(bp_mono_us() - t0 < 1500000);
	CU_ASSERT_EQUAL(info.index, 1);
	CU_ASSERT(bp_upstream_is_down(u, &net, 0));
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/* A node that does not answer within upstream_timeout_ms fails over. */
static void
test_timeout(void)
{
	struct bp_config cfg;

	config_init(&cfg, 200, 30);
	leaves_slow(&cfg);
}

/*
 * A node that accepts but sends nothing is left after upstream_first_byte_ms when another
 * upstream can answer; with none left, the whole timeout applies.
 */
static void
test_first_byte(void)
{
	static const char *const paths[] = { "/slow" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_upstream_info info;
	struct bp_buf out;
	int64_t t0;

	config_init(&cfg, 10000, 30);
	cfg.upstream_first_byte_ms = 300;
	leaves_slow(&cfg);
	/* Alone, the slow node is waited for (2 s here, under the 10 s timeout). */
	net_init(&net, paths, 1);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	t0 = bp_mono_us();
	CU_ASSERT_EQUAL(bp_upstream_post(u, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT(bp_mono_us() - t0 >= 1900000);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

/*
 * Health is shared through the file next to the limits file: a URL one pool (another thread or
 * process) found dead is skipped by every other pool at once, without an attempt of its own.
 */
static void
test_shared_health(void)
{
	static const char *const paths[] = { "dead", "/ok" };
	char dir[] = "/tmp/bp-unit-health.XXXXXX", path[64];
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *a, *b;
	struct bp_upstream_info info;
	struct bp_buf out;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	config_init(&cfg, 1000, 30);
	snprintf(cfg.limits_file, sizeof(cfg.limits_file), "%s/limits", dir);
	net_init(&net, paths, 2);
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a = bp_upstream_new(&cfg));
	CU_ASSERT_PTR_NOT_NULL_FATAL(b = bp_upstream_new(&cfg));
	CU_ASSERT_FALSE(bp_upstream_is_down(b, &net, 0));
	CU_ASSERT_EQUAL(bp_upstream_post(a, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.attempts, 2);
	CU_ASSERT(bp_upstream_is_down(b, &net, 0));
	CU_ASSERT_EQUAL(bp_upstream_post(b, &net, call, sizeof(call) - 1, &out, &info), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(info.attempts, 1);
	CU_ASSERT_EQUAL(info.index, 1);
	bp_upstream_free(a);
	bp_upstream_free(b);
	bp_buf_free(&out);
	snprintf(path, sizeof(path), "%s/limits-health", dir);
	CU_ASSERT_EQUAL(unlink(path), 0);
	rmdir(dir);
}

/* One connection serves many requests (keep-alive); networks sharing a URL share it. */
static void
test_keepalive(void)
{
	static const char *const paths[] = { "/ok" };
	struct bp_config cfg;
	struct bp_network a, b;
	struct bp_upstream *u;
	struct bp_buf out;
	int c0 = get(&connections), i;

	config_init(&cfg, 2000, 30);
	net_init(&a, paths, 1);
	net_init(&b, paths, 1);
	bp_strlcpy(b.network, "other", sizeof(b.network));
	bp_buf_init(&out, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	for (i = 0; i < 10; i++)
		CU_ASSERT_EQUAL(bp_upstream_post(u, i % 2 ? &a : &b, call, sizeof(call) - 1, &out,
		    NULL), BP_UPSTREAM_OK);
	CU_ASSERT_EQUAL(get(&connections), c0 + 1);
	bp_upstream_free(u);
	bp_buf_free(&out);
}

static void
test_client_call(void)
{
	static const char *const paths[] = { "dead", "/ok" }, *const dead[] = { "dead" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_rpc_client_error err;
	cJSON *params = cJSON_Parse("[\"0x1\",{\"a\":[1,2]}]"), *res;
	char *text;

	config_init(&cfg, 2000, 30);
	net_init(&net, paths, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	res = bp_rpc_client_call(u, &net, "echo", params, &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(res);
	text = cJSON_PrintUnformatted(res);
	CU_ASSERT_STRING_EQUAL(text, "[\"0x1\",{\"a\":[1,2]}]");
	CU_ASSERT_EQUAL(err.kind, BP_RPC_CLIENT_ERR_NONE);
	free(text);
	cJSON_Delete(res);
	/* No params: []. */
	res = bp_rpc_client_call(u, &net, "echo", NULL, &err);
	CU_ASSERT(cJSON_IsArray(res) && cJSON_GetArraySize(res) == 0);
	cJSON_Delete(res);
	/* A JSON-RPC error. */
	CU_ASSERT_PTR_NULL(bp_rpc_client_call(u, &net, "fail", NULL, &err));
	CU_ASSERT_EQUAL(err.kind, BP_RPC_CLIENT_ERR_RPC);
	CU_ASSERT_EQUAL(err.code, -32000);
	CU_ASSERT_STRING_EQUAL(err.message, "boom");
	/* Params that are neither array nor object are refused before sending. */
	res = cJSON_CreateString("x");
	CU_ASSERT_PTR_NULL(bp_rpc_client_call(u, &net, "echo", res, &err));
	CU_ASSERT_EQUAL(err.kind, BP_RPC_CLIENT_ERR_PROTOCOL);
	cJSON_Delete(res);
	/* Nothing answers. */
	net_init(&net, dead, 1);
	CU_ASSERT_PTR_NULL(bp_rpc_client_call(u, &net, "echo", NULL, &err));
	CU_ASSERT_EQUAL(err.kind, BP_RPC_CLIENT_ERR_TRANSPORT);
	cJSON_Delete(params);
	bp_upstream_free(u);
}

static void
test_client_batch(void)
{
	static const char *const rev[] = { "/rev" }, *const dead[] = { "dead" };
	struct bp_config cfg;
	struct bp_network net;
	struct bp_upstream *u;
	struct bp_rpc_client_call calls[4];
	cJSON *p0 = cJSON_Parse("[0]"), *p2 = cJSON_Parse("[2]");
	size_t i;

	config_init(&cfg, 2000, 30);
	net_init(&net, rev, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u = bp_upstream_new(&cfg));
	memset(calls, 0, sizeof(calls));
	calls[0].method = "echo";
	calls[0].params = p0;
	calls[1].method = "fail";
	calls[2].method = "echo";
	calls[2].params = p2;
	calls[3].method = "other";
	/* The node answers in reverse order: answers still land on their calls. */
	CU_ASSERT_EQUAL(bp_rpc_client_batch(u, &net, calls, 4), 3);
	CU_ASSERT(cJSON_IsArray(calls[0].result) &&
	    cJSON_GetArrayItem(calls[0].result, 0)->valueint == 0);
	CU_ASSERT_PTR_NULL(calls[1].result);
	CU_ASSERT_EQUAL(calls[1].err.kind, BP_RPC_CLIENT_ERR_RPC);
	CU_ASSERT(cJSON_IsArray(calls[2].result) &&
	    cJSON_GetArrayItem(calls[2].result, 0)->valueint == 2);
	CU_ASSERT(cJSON_IsString(calls[3].result));
	for (i = 0; i < 4; i++)
		cJSON_Delete(calls[i].result);
	net_init(&net, dead, 1);
	CU_ASSERT_EQUAL(bp_rpc_client_batch(u, &net, calls, 4), 0);
	for (i = 0; i < 4; i++) {
		CU_ASSERT_PTR_NULL(calls[i].result);
		CU_ASSERT_EQUAL(calls[i].err.kind, BP_RPC_CLIENT_ERR_TRANSPORT);
	}
	CU_ASSERT_EQUAL(bp_rpc_client_batch(u, &net, calls, 0), 0);
	cJSON_Delete(p0);
	cJSON_Delete(p2);
	bp_upstream_free(u);
}

BP_UNIT_SUITE(upstream, suite_init, suite_fini,
	{ "definite answers", test_definite },
	{ "redacted URLs", test_redact },
	{ "failover and skip", test_failover_and_skip },
	{ "failover statuses", test_failover_statuses },
	{ "JSON-RPC errors pass through", test_passthrough },
	{ "all fail, last resort", test_all_fail_and_last_resort },
	{ "response cap", test_too_large },
	{ "timeout", test_timeout },
	{ "first-byte bound when another upstream can answer", test_first_byte },
	{ "health shared by pools through the file", test_shared_health },
	{ "keep-alive", test_keepalive },
	{ "client call", test_client_call },
	{ "client batch", test_client_batch },
)
