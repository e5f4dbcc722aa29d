/*
 * ERC-7562's reputation (lib/bundler/bundler_reputation.c): the status formula at its edges, the
 * hourly decay, the pool bound by status and stake, the rows (add after decay, set, each,
 * clear), inclusions read from a bundle receipt's logs, the bundling mode; and the rules hook
 * (lib/bundler/bundler_rules.c) that a network with trace_validation = false skips.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "bundler/bundler_reputation.h"
#include "bundler/bundler_rules.h"
#include "core/config.h"
#include "core/log.h"
#include "net/upstream.h"
#include "core/util.h"
#include "unit.h"
#include "unit_db.h"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "bundler_reputation");
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static void
test_formula(void)
{
	struct bp_bundler_reputation_entry e;
	int64_t seen = 2400, inc = 48;

	/* expected = seen / 10: ok up to included + 10, throttled up to included + 50. */
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(0, 0), BP_BUNDLER_REPUTATION_OK);
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(109, 0), BP_BUNDLER_REPUTATION_OK);
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(110, 0), BP_BUNDLER_REPUTATION_THROTTLED);
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(509, 0), BP_BUNDLER_REPUTATION_THROTTLED);
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(510, 0), BP_BUNDLER_REPUTATION_BANNED);
	CU_ASSERT_EQUAL(bp_bundler_reputation_status_of(510, 1), BP_BUNDLER_REPUTATION_THROTTLED);
	CU_ASSERT_STRING_EQUAL(bp_bundler_reputation_status_name(BP_BUNDLER_REPUTATION_BANNED), "banned");
	/* Each hour 1/24 goes (rounded down); a year is bounded work and leaves little. */
	bp_bundler_reputation_decay(&seen, &inc, 1);
	CU_ASSERT_EQUAL(seen, 2300);
	CU_ASSERT_EQUAL(inc, 46);
	bp_bundler_reputation_decay(&seen, &inc, 24 * 365);
	CU_ASSERT(seen < 24);
	CU_ASSERT(inc < 24);
	/* The pool's bound: banned none, throttled 4, staked ok none, unstaked 10 + inclusions. */
	memset(&e, 0, sizeof(e));
	CU_ASSERT_EQUAL(bp_bundler_reputation_cap(&e, 0), 10);
	CU_ASSERT_EQUAL(bp_bundler_reputation_cap(&e, 1), 0);
	e.ops_seen = 20;
	e.ops_included = 10;
	CU_ASSERT_EQUAL(bp_bundler_reputation_cap(&e, 0), 10 + 5 + 10);
	e.status = BP_BUNDLER_REPUTATION_THROTTLED;
	CU_ASSERT_EQUAL(bp_bundler_reputation_cap(&e, 1), 4);
	e.status = BP_BUNDLER_REPUTATION_BANNED;
	CU_ASSERT_EQUAL(bp_bundler_reputation_cap(&e, 1), -1);
}

static int
collect(const struct bp_bundler_reputation_entry *e, void *arg)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s %lld %lld %s;", e->address, (long long)e->ops_seen,
	    (long long)e->ops_included, bp_bundler_reputation_status_name(e->status));
	return 0;
}

#define PM	"0x00000000000000000000000000000000000000bb"
#define FAC	"0x00000000000000000000000000000000000000cc"
#define EP	"0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789"

static void
test_rows(void)
{
	struct bp_bundler_reputation_entry e;
	const int64_t t0 = 1700000000;
	char dump[512] = "";
	cJSON *logs;
	/* A UserOperationEvent paid by PM, an AccountDeployed by FAC, and one of another contract. */
	static const char receipt_logs[] = "["
	    "{\"address\":\"" EP "\",\"topics\":["
	    "\"0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f\","
	    "\"0x" "1111111111111111111111111111111111111111111111111111111111111111\","
	    "\"0x000000000000000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\","
	    "\"0x00000000000000000000000000000000000000000000000000000000000000bb\"],\"data\":\"0x\"},"
	    "{\"address\":\"" EP "\",\"topics\":["
	    "\"0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d\","
	    "\"0x" "1111111111111111111111111111111111111111111111111111111111111111\","
	    "\"0x000000000000000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"],\"data\":\"0x"
	    "00000000000000000000000000000000000000000000000000000000000000cc"
	    "0000000000000000000000000000000000000000000000000000000000000000\"},"
	    "{\"address\":\"0x0000000000000000000000000000000000000001\",\"topics\":["
	    "\"0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f\"],\"data\":7}]";

	CU_ASSERT_EQUAL(bp_bundler_reputation_get(u.db, "e.d", PM, t0, &e), 0);
	CU_ASSERT_EQUAL(e.ops_seen, 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_add(u.db, "e.d", PM, 48, 0, t0), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_add(u.db, "e.d", PM, 1, 0, t0), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_get(u.db, "e.d", PM, t0, &e), 0);
	CU_ASSERT_EQUAL(e.ops_seen, 49);
	/* An hour later, decayed first: 49 - 2 + 1. */
	CU_ASSERT_EQUAL(bp_bundler_reputation_add(u.db, "e.d", PM, 1, 0, t0 + 3600), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_get(u.db, "e.d", PM, t0 + 3600, &e), 0);
	CU_ASSERT_EQUAL(e.ops_seen, 48);
	CU_ASSERT_EQUAL(bp_bundler_reputation_crashed(u.db, "e.d", FAC, t0 + 3600), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(logs = cJSON_Parse(receipt_logs));
	CU_ASSERT_EQUAL(bp_bundler_reputation_included_logs(u.db, "e.d", EP, logs, t0 + 3600), 0);
	cJSON_Delete(logs);
	CU_ASSERT_EQUAL(bp_bundler_reputation_add(u.db, "e.d", FAC, 0, 1, t0 + 3600), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_set(u.db, "other.net", PM, 5, 5, t0), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_each(u.db, "e.d", t0 + 3600, collect, dump), 2);
	CU_ASSERT_STRING_EQUAL(dump, PM " 48 1 ok;" FAC " 10000 2 banned;");
	CU_ASSERT_EQUAL(bp_bundler_reputation_clear(u.db, "e.d"), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_each(u.db, "e.d", t0, collect, dump), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_get(u.db, "other.net", PM, t0, &e), 0);
	CU_ASSERT_EQUAL(e.ops_included, 5);
	/* The bundling mode: auto until set. */
	CU_ASSERT_EQUAL(bp_bundler_reputation_manual(u.db, "e.d"), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_set_manual(u.db, "e.d", 1), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_manual(u.db, "e.d"), 1);
	CU_ASSERT_EQUAL(bp_bundler_reputation_manual(u.db, "other.net"), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_set_manual(u.db, "e.d", 0), 0);
	CU_ASSERT_EQUAL(bp_bundler_reputation_manual(u.db, "e.d"), 0);
}

/* v0.8's EIP-7702 marker (20 bytes, then an initialisation call) is no factory to count or ban. */
static void
test_marker(void)
{
	struct bp_network net;
	struct bp_userop op;
	uint8_t init[24] = { 0x77, 0x02 };
	char dump[512] = "";

	memset(&net, 0, sizeof(net));
	memset(&op, 0, sizeof(op));
	bp_strlcpy(net.chain, "m7702", sizeof(net.chain));
	bp_strlcpy(net.network, "d", sizeof(net.network));
	op.version = BP_EP_V08;
	op.bytes[BP_USEROP_INIT_CODE] = init;
	op.len[BP_USEROP_INIT_CODE] = sizeof(init);
	bp_bundler_rules_seen(u.db, &net, &op);
	bp_bundler_rules_crashed(u.db, &net, &op, "AA13 initCode failed or OOG");
	CU_ASSERT_EQUAL(bp_bundler_reputation_each(u.db, "m7702.d", 0, collect, dump), 0);
	/* The same bytes from a v0.6 op name a factory. */
	op.version = BP_EP_V06;
	bp_bundler_rules_seen(u.db, &net, &op);
	CU_ASSERT_EQUAL(bp_bundler_reputation_each(u.db, "m7702.d", 0, collect, dump), 1);
}

/*
 * A node without debug_traceCall: a batch gets -32601 for each of its calls; a single call
 * (the eth_call of simulateValidation) "execution reverted" without data. It counts the
 * debug_traceCall asked for.
 */
static int traces_asked;

static void *
no_trace(void *arg)
{
	static const char one[] = "{\"jsonrpc\":\"2.0\",\"id\":%d,\"error\":{\"code\":-32601,"
	    "\"message\":\"Method not found\"}}";
	static const char call[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,"
	    "\"message\":\"execution reverted\"}}";
	char head[160], body[1024], *buf = malloc(1 << 20), *p;
	size_t have = 0, hlen, blen, used;
	int fd = (int)(intptr_t)arg, n, i, calls;

	while (buf != NULL && bp_unit_read_request(fd, buf, 1 << 20, &have, &hlen, &blen) == 0) {
		for (calls = 0, p = buf + hlen; (p = memmem(p, (size_t)(buf + hlen + blen - p),
		    "\"method\"", 8)) != NULL; p += 8)
			calls++;
		for (p = buf + hlen; (p = memmem(p, (size_t)(buf + hlen + blen - p),
		    "debug_traceCall", 15)) != NULL; p += 15)
			traces_asked++;
		if (buf[hlen] == '[') {
			used = (size_t)snprintf(body, sizeof(body), "[");
			for (i = 0; i < calls && used < sizeof(body) - 100; i++)
				used += (size_t)snprintf(body + used, sizeof(body) - used, "%s" ,
				    i ? "," : "") + (size_t)snprintf(body + used + (i ? 1 : 0),
				    sizeof(body) - used - 1, one, i);
			used += (size_t)snprintf(body + used, sizeof(body) - used, "]");
		} else
			used = (size_t)snprintf(body, sizeof(body), "%s", call);
		n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\n\r\n", used);
		if (bp_unit_send_all(fd, head, (size_t)n) == -1 ||
		    bp_unit_send_all(fd, body, used) == -1)
			break;
		bp_unit_request_done(buf, &have, hlen + blen);
	}
	free(buf);
	close(fd);
	return NULL;
}

static void
test_trace_auto(void)
{
	struct bp_userop_validate_result res;
	struct bp_userop_validate_error err;
	struct bp_upstream *up;
	struct bp_network net;
	struct bp_config cfg;
	struct bp_userop op;
	pthread_t acceptor;
	uint8_t ep[20] = { 0 };
	int lfd, port;

	memset(&op, 0, sizeof(op));
	memset(&res, 0, sizeof(res));
	memset(&err, 0, sizeof(err));
	CU_ASSERT_FATAL((lfd = bp_unit_server_start(&port, no_trace, &acceptor)) >= 0);
	bp_unit_node_config(&cfg, &net, "n", port);
	CU_ASSERT_PTR_NOT_NULL_FATAL(up = bp_upstream_new(&cfg));
	/* false: the eth_call's answer alone, and no trace asked for. */
	traces_asked = 0;
	bp_strlcpy(net.trace_validation, "false", sizeof(net.trace_validation));
	CU_ASSERT_EQUAL(bp_bundler_rules_simulate(up, &net, ep, &op, NULL, &res, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "eth_call failed: execution reverted"));
	CU_ASSERT_EQUAL(traces_asked, 0);
	/* auto (the default): the node cannot trace, so the eth_call's answer is all. */
	memset(&err, 0, sizeof(err));
	bp_strlcpy(net.trace_validation, "", sizeof(net.trace_validation));
	CU_ASSERT_EQUAL(bp_bundler_rules_simulate(up, &net, ep, &op, NULL, &res, &err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "eth_call failed: execution reverted"));
	CU_ASSERT(traces_asked > 0);
	/* true: the trace is required, and its absence is the node's error. */
	bp_strlcpy(net.trace_validation, "true", sizeof(net.trace_validation));
	CU_ASSERT_EQUAL(bp_bundler_rules_simulate(up, &net, ep, &op, NULL, &res, &err), -1);
	CU_ASSERT_EQUAL(err.code, -32603);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "could not trace"));
	bp_upstream_free(up);
	bp_unit_server_stop(lfd, acceptor);
}

BP_UNIT_SUITE(bundler_reputation, setup, teardown,
    { "status, decay and the pool bound by ERC-7562's constants", test_formula },
    { "rows: add after decay, set, crash, inclusions from logs, dump, clear, mode", test_rows },
    { "v0.8's EIP-7702 marker is no factory for reputation", test_marker },
    { "trace_validation: false asks for no trace, auto without a tracing node takes the "
      "eth_call's answer, true refuses", test_trace_auto })
