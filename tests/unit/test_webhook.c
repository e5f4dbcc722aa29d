/*
 * Webhooks: the config of each event type (canonical form, every bad value naming its field),
 * the url rules (https, length, private hosts refused unless allowed), the signature (a vector
 * from the openssl CLI), and the queue in a real database: claims wait for confirmation and for
 * an active webhook, the day's deliveries cap, the retry schedule, the pause after the last
 * retry and the lease a dead pass leaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "index/index_event.h"
#include "index/index_read.h"
#include "unit.h"
#include "unit_db.h"
#include "webhook/webhook.h"
#include "webhook/webhook_match.h"
#include "webhook/webhook_queue.h"
#include "webhook/webhook_sign.h"

#define A1	"0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
#define H1	"0xabababababababababababababababababababababababababababababababab"

static struct bp_unit_db u;
static struct bp_config *cfg;

static int
setup(void)
{
	struct bp_network *n;

	if ((cfg = calloc(1, sizeof(*cfg))) == NULL || bp_unit_db_open(&u, "webhook") == -1)
		return 1;
	n = &cfg->nets[cfg->nnets++];
	snprintf(n->chain, sizeof(n->chain), "ethereum");
	snprintf(n->network, sizeof(n->network), "devnet");
	n->kind = BP_CHAIN_EVM;
	n->testnet = 1;
	n->rest_default = 1;
	snprintf(cfg->plans[0].name, sizeof(cfg->plans[0].name), "tiny");
	cfg->plans[0].webhook_deliveries = 2;
	snprintf(cfg->plans[1].name, sizeof(cfg->plans[1].name), "big");
	cfg->nplans = 2;
	cfg->webhooks.timeout_ms = 1000;
	cfg->webhooks.nretry = 2;
	cfg->webhooks.retry[0] = 10;
	cfg->webhooks.retry[1] = 60;
	return bp_db_exec(u.db, "INSERT INTO accounts (id, email, plan, created_at) VALUES"
	    " (1, 'a@x', 'tiny', 0), (2, 'b@x', 'big', 0);"
	    " INSERT INTO index_cursors (chain, head, confirmed) VALUES ('ethereum.devnet', 10, 8)")
	    == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	free(cfg);
	return 0;
}

/* Parses json as type t's config: 0 with canon, or -1 with why. */
static int
config_of(enum bp_webhook_type t, const char *json, struct bp_buf *canon, char *why, size_t cap)
{
	cJSON *j = cJSON_Parse(json);
	int rc;

	CU_ASSERT_FATAL(j != NULL);
	rc = bp_webhook_config_parse(t, j, canon, why, cap);
	cJSON_Delete(j);
	return rc;
}

static void
test_config_good(void)
{
	static const struct {
		enum bp_webhook_type t;
		const char *in, *canon;
	} rows[] = {
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{\"addresses\":[\"" A1 "\"]}",
		    "{\"addresses\":[\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\"]}" },
		{ BP_WEBHOOK_TOKEN_TRANSFER, "{\"contracts\":[\"" A1 "\"],\"addresses\":[\"" A1 "\"]}",
		    "{\"addresses\":[\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\"],\"contracts\":"
		    "[\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\"]}" },
		{ BP_WEBHOOK_MINED_TRANSACTION, "{\"tx_hashes\":[\"" H1 "\"]}",
		    "{\"tx_hashes\":[\"" H1 "\"]}" },
		{ BP_WEBHOOK_LOG, "{\"address\":\"" A1 "\",\"topics\":[null,\"" H1 "\",[\"" H1 "\"]]}",
		    "{\"address\":[\"0x70997970c51812dc3a010c7d01b50e0d17dc79c8\"],\"topics\":"
		    "[null,\"" H1 "\",[\"" H1 "\"]]}" },
	};
	struct bp_buf canon;
	char why[256];
	size_t i;

	bp_buf_init(&canon, 1 << 20);
	for (i = 0; i < BP_NITEMS(rows); i++) {
		CU_ASSERT_EQUAL(config_of(rows[i].t, rows[i].in, &canon, why, sizeof(why)), 0);
		CU_ASSERT_STRING_EQUAL(canon.data, rows[i].canon);
	}
	bp_buf_free(&canon);
}

static void
test_config_bad(void)
{
	static const struct {
		enum bp_webhook_type t;
		const char *in, *field;
	} rows[] = {
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "[]", "config" },
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{}", "config.addresses" },
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{\"addresses\":[]}", "config.addresses" },
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{\"addresses\":[\"0x70997970C51812dc3A010C7d01b50e0d17dc79C\"]}",
		    "config.addresses[0]" },
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{\"addresses\":[\"" A1 "\",\"\\u0000\"]}",
		    "config.addresses[1]" },
		{ BP_WEBHOOK_ADDRESS_ACTIVITY, "{\"addresses\":[\"" A1 "\"],\"x\":1}", "config.x" },
		{ BP_WEBHOOK_NFT_TRANSFER, "{}", "config.addresses" },
		{ BP_WEBHOOK_NFT_TRANSFER, "{\"contracts\":[1]}", "config.contracts[0]" },
		{ BP_WEBHOOK_MINED_TRANSACTION, "{\"tx_hashes\":\"" H1 "\"}", "config.tx_hashes" },
		{ BP_WEBHOOK_MINED_TRANSACTION, "{\"tx_hashes\":[\"0xzz\"]}", "config.tx_hashes[0]" },
		{ BP_WEBHOOK_LOG, "{}", "config.address" },
		{ BP_WEBHOOK_LOG, "{\"topics\":[null,null,null,null,null]}", "config.topics" },
		{ BP_WEBHOOK_LOG, "{\"topics\":[[]]}", "config.topics[0]" },
		{ BP_WEBHOOK_LOG, "{\"topics\":[null,{}]}", "config.topics[1]" },
		{ BP_WEBHOOK_LOG, "{\"address\":[\"" A1 "\", 5]}", "config.address[1]" },
		/* Nothing named: it would match every log of the chain. */
		{ BP_WEBHOOK_LOG, "{\"topics\":[]}", "config.topics" },
		{ BP_WEBHOOK_LOG, "{\"topics\":[null]}", "config.topics" },
		{ BP_WEBHOOK_LOG, "{\"topics\":[null,null,null,null]}", "config.topics" },
	};
	struct bp_buf canon;
	char why[256];
	size_t i;

	bp_buf_init(&canon, 1 << 20);
	for (i = 0; i < BP_NITEMS(rows); i++) {
		CU_ASSERT_EQUAL(config_of(rows[i].t, rows[i].in, &canon, why, sizeof(why)), -1);
		CU_ASSERT_EQUAL(strncmp(why, rows[i].field, strlen(rows[i].field)), 0);
		if (strncmp(why, rows[i].field, strlen(rows[i].field)) != 0)
			fprintf(stderr, "row %zu: %s\n", i, why);
	}
	bp_buf_free(&canon);
}

/* A create body with url; the first word of why, or "ok". */
static int
url_ok(int allow_private, const char *url, char *why, size_t cap)
{
	char body[4096];
	struct bp_webhook_input in;
	cJSON *j;
	int rc;

	snprintf(body, sizeof(body), "{\"url\":\"%s\",\"chain\":\"ethereum\",\"event_type\":"
	    "\"address_activity\",\"config\":{\"addresses\":[\"" A1 "\"]}}", url);
	CU_ASSERT_FATAL((j = cJSON_Parse(body)) != NULL);
	cfg->allow_private_urls = allow_private;
	rc = bp_webhook_input(cfg, j, 1, 1, BP_WEBHOOK_LOG, &in, why, cap);
	bp_buf_free(&in.canon);
	cJSON_Delete(j);
	return rc;
}

static void
test_url_rules(void)
{
	static const char *const refused[] = {
		"https://127.0.0.1/x", "https://10.1.2.3/", "https://192.168.0.1:8443/",
		"https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://localhost/",
		"http://example.com/", "ftp://example.com/", "https:///nohost",
	};
	char why[256], big[2100];
	size_t i;

	for (i = 0; i < BP_NITEMS(refused); i++) {
		if (url_ok(0, refused[i], why, sizeof(why)) != -1)
			CU_FAIL(refused[i]);
		CU_ASSERT_EQUAL(strncmp(why, "url", 3), 0);
	}
	CU_ASSERT_EQUAL(url_ok(1, "https://127.0.0.1/x", why, sizeof(why)), 0);
	CU_ASSERT_EQUAL(url_ok(1, "http://127.0.0.1/x", why, sizeof(why)), -1);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "https://127.0.0.1/", 18);
	CU_ASSERT_EQUAL(url_ok(1, big, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "2048"));
}

static void
test_sign_vector(void)
{
	char sig[BP_WEBHOOK_SIG_MAX];

	/* printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac whsec_test */
	CU_ASSERT_EQUAL(bp_webhook_sign("whsec_test", 1700000000, "{\"a\":1}", 7, sig), 0);
	CU_ASSERT_STRING_EQUAL(sig,
	    "38877139021993b830af32feea6e18a8da83eb2f6e49ee50bd9e4cf4ca4d3789");
}

/* Standard Webhooks' own test vector (standard-webhooks/libraries), and the secrets before. */
static void
test_sign_std(void)
{
	char sig[BP_WEBHOOK_STDSIG_MAX], hex[BP_WEBHOOK_SIG_MAX];
	const char *body = "{\"test\": 2432232314}";

	CU_ASSERT_EQUAL(bp_webhook_sign_std("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	    "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, strlen(body), sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
	/* A secret made before (whsec_ + 64 hex digits) is keyed with its 48 decoded bytes. */
	CU_ASSERT_EQUAL(bp_webhook_sign_std("whsec_0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef", "evt_1", 1700000000, "{\"a\":1}", 7, sig), 0);
	CU_ASSERT_STRING_EQUAL(sig, "v1,DKHvCsqz/X51AhAOBiSQ3mVxi51H+mlf0seSdv65mAc=");
	/* Format B's sha256= digest covers the body alone. */
	CU_ASSERT_EQUAL(bp_webhook_sign_body("whsec_test", "{\"a\":1}", 7, hex), 0);
	CU_ASSERT_STRING_EQUAL(hex,
	    "51426af50a41dd7ff2cd3f116594734766d4018d15d6fb07169aee5d2959adf5");
}

/* A webhook of account acct, created through the module. */
static void
make_webhook(int64_t acct, struct bp_webhook *w)
{
	struct bp_webhook_input in;
	char why[256];
	cJSON *j = cJSON_Parse("{\"url\":\"https://127.0.0.1/h\",\"chain\":\"ethereum\","
	    "\"event_type\":\"address_activity\",\"config\":{\"addresses\":[\"" A1 "\"]}}");

	cfg->allow_private_urls = 1;
	CU_ASSERT_FATAL(bp_webhook_input(cfg, j, 1, 1, BP_WEBHOOK_LOG, &in, why, sizeof(why)) == 0);
	CU_ASSERT_FATAL(bp_webhook_create(u.db, acct, 0, &in, w) == 1);
	bp_buf_free(&in.canon);
	cJSON_Delete(j);
}

/* A pending event of webhook wh in block (source id, body {}), recorded as the matcher does. */
static void
add_event(const char *id, const char *wh, int64_t block)
{
	struct bp_webhook_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.id = id;
	ev.webhook_id = wh;
	ev.network = "ethereum.devnet";
	ev.block_number = block;
	ev.block_hash = "0x";
	ev.source = id;
	ev.body = "{}";
	CU_ASSERT(bp_webhook_queue_add(u.db, &ev) == 1);
}

static void
test_queue(void)
{
	struct bp_webhook w1, w2, got;
	struct bp_webhook_job *jobs;
	struct bp_webhook_outcome out[4];
	char paused[4][BP_WEBHOOK_ID_MAX];
	size_t np;
	/* Noon UTC of tomorrow: the claims look up to 300 s ahead within one day of the day cap. */
	int64_t now = ((int64_t)time(NULL) / 86400 + 1) * 86400 + 43200;
	int n;

	make_webhook(1, &w1);	/* tiny: 2 deliveries a day */
	make_webhook(2, &w2);
	add_event("evt_a", w1.id, 8);
	add_event("evt_b", w1.id, 8);
	add_event("evt_c", w1.id, 8);
	add_event("evt_late", w2.id, 9);	/* above confirmed (8) */
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL(n, 2);	/* the cap of tiny; evt_late not final yet */
	bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	/* Leased rows are not claimed twice; a dead pass's leases come back; the day is spent. */
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL(n, 0);
	bp_webhook_jobs_free(jobs, 0);
	CU_ASSERT_EQUAL(bp_webhook_queue_release(u.db), 0);
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL(n, 0);
	bp_webhook_jobs_free(jobs, 0);
	/* Account 2: a failure is retried after 10 s, then 60 s, then the webhook pauses. */
	CU_ASSERT(bp_db_exec(u.db, "UPDATE index_cursors SET confirmed = 9") == 0);
	memset(out, 0, sizeof(out));
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(jobs[0].event_id, "evt_late");
	out[0].http_status = 500;
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, 1, paused, &np), 0);
	CU_ASSERT_EQUAL(np, 0);
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now + 9, 60, 10, &jobs), 0);
	bp_webhook_jobs_free(jobs, 0);
	n = bp_webhook_queue_claim(u.db, cfg, now + 11, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(jobs[0].attempts, 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, 1, paused, &np), 0);
	bp_webhook_jobs_free(jobs, 1);
	n = bp_webhook_queue_claim(u.db, cfg, now + 80, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, 1, paused, &np), 0);
	CU_ASSERT_EQUAL_FATAL(np, 1);
	CU_ASSERT_STRING_EQUAL(paused[0], w2.id);
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_get(u.db, 2, w2.id, &got), 1);
	CU_ASSERT_EQUAL(got.status, BP_WEBHOOK_PAUSED);
	bp_webhook_clear(&got);
	/* Held while paused; the resume sends it at once, from attempt 1 again. */
	CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now + 200, 60, 10, &jobs), 0);
	bp_webhook_jobs_free(jobs, 0);
	CU_ASSERT_EQUAL(bp_webhook_set_status(u.db, w2.id, BP_WEBHOOK_ACTIVE), 1);
	n = bp_webhook_queue_claim(u.db, cfg, now + 200, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(jobs[0].attempts, 0);
	out[0].ok = 1;
	out[0].http_status = 204;
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, 1, paused, &np), 0);
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now + 300, 60, 10, &jobs), 0);
	bp_webhook_jobs_free(jobs, 0);
	/* Delivered rows go after the retention; a deleted webhook takes its pending rows. */
	CU_ASSERT_EQUAL(bp_webhook_queue_prune(u.db, now + 100000, 1000, 100000000) >= 1, 1);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, w1.id), 0);	/* not account 2's */
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 1, w1.id), 1);
	bp_webhook_clear(&w1);
	bp_webhook_clear(&w2);
}

/*
 * A token event waits for its symbol and is sent as completed; a source is recorded once; the
 * worker's pause takes only an active webhook.
 */
static void
test_complete_pause(void)
{
	struct bp_webhook w, got;
	struct bp_webhook_event ev;
	struct bp_webhook_job *jobs;
	int64_t now = ((int64_t)time(NULL) / 86400 + 3) * 86400 + 43200;
	int n;

	make_webhook(2, &w);
	memset(&ev, 0, sizeof(ev));
	ev.id = "evt_tok";
	ev.webhook_id = w.id;
	ev.network = "ethereum.devnet";
	ev.block_number = 9;
	ev.block_hash = "0x";
	ev.source = "log:0x1:0:0";
	ev.body = "{\"symbol\":null}";
	ev.token = "0x5fbdb2315678afecb367f032d93f642f64180aa3";
	CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 1);
	ev.id = "evt_tok2";
	ev.body = "{}";
	CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 0);	/* the same source: left alone */
	CU_ASSERT_EQUAL(bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs), 0);
	bp_webhook_jobs_free(jobs, 0);
	CU_ASSERT_EQUAL(bp_webhook_queue_complete(u.db, "evt_tok", "{\"symbol\":\"T\"}"), 0);
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(jobs[0].event_id, "evt_tok");
	CU_ASSERT_STRING_EQUAL(jobs[0].body, "{\"symbol\":\"T\"}");
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_pause(u.db, w.id, now), 1);
	CU_ASSERT_EQUAL(bp_webhook_pause(u.db, w.id, now + 1), 0);	/* paused already */
	CU_ASSERT_EQUAL(bp_webhook_get(u.db, 2, w.id, &got), 1);
	CU_ASSERT_EQUAL(got.status, BP_WEBHOOK_PAUSED);
	CU_ASSERT_EQUAL(got.updated_at, now);
	bp_webhook_clear(&got);
	CU_ASSERT_EQUAL(bp_webhook_set_status(u.db, w.id, BP_WEBHOOK_DISABLED), 1);
	CU_ASSERT_EQUAL(bp_webhook_pause(u.db, w.id, now), 0);	/* disabled stays disabled */
	CU_ASSERT_EQUAL(bp_webhook_get(u.db, 2, w.id, &got), 1);
	CU_ASSERT_EQUAL(got.status, BP_WEBHOOK_DISABLED);
	bp_webhook_clear(&got);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, w.id), 1);
	bp_webhook_clear(&w);
}

/*
 * The claim asks the index for each network's confirmed head: rows of blocks above it, however
 * many come first, do not hold back a final one; a network the index has no cursor for waits.
 */
static void
test_claim_final(void)
{
	struct bp_webhook w;
	struct bp_webhook_event ev;
	struct bp_webhook_job *jobs;
	char id[32];
	int64_t now = ((int64_t)time(NULL) / 86400 + 5) * 86400 + 43200;
	int i, n;

	make_webhook(2, &w);
	memset(&ev, 0, sizeof(ev));
	ev.webhook_id = w.id;
	ev.block_hash = "0x";
	ev.body = "{}";
	ev.id = ev.source = id;
	ev.network = "ethereum.devnet";
	for (i = 0; i < 25; i++) {	/* above confirmed (9), and due first */
		snprintf(id, sizeof(id), "evt_high%d", i);
		ev.block_number = 50;
		CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 1);
	}
	ev.now = 1;
	snprintf(id, sizeof(id), "evt_other");
	ev.network = "ethereum.other";	/* not indexed */
	ev.block_number = 1;
	CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 1);
	snprintf(id, sizeof(id), "evt_final");
	ev.network = "ethereum.devnet";
	ev.block_number = 9;
	CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 1);
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 2, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(jobs[0].event_id, "evt_final");
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, w.id), 1);
	bp_webhook_clear(&w);
}

static int64_t	events_of(const char *wh, const char *state);

/* n pending events of webhook wh in block 8, named PREFIX0.., due from at. */
static void
add_events(const char *wh, const char *prefix, int n, int64_t at)
{
	struct bp_webhook_event ev;
	char id[32];
	int i;

	memset(&ev, 0, sizeof(ev));
	ev.webhook_id = wh;
	ev.network = "ethereum.devnet";
	ev.block_number = 8;
	ev.block_hash = "0x";
	ev.body = "{}";
	ev.id = ev.source = id;
	ev.now = at;
	CU_ASSERT_FATAL(bp_db_begin(u.db) == 0);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "%s%d", prefix, i);
		CU_ASSERT_EQUAL(bp_webhook_queue_add(u.db, &ev), 1);
	}
	CU_ASSERT_FATAL(bp_webhook_queue_counted(u.db, wh, 0, at / 86400, n, 0, 0) == 0);
	CU_ASSERT_FATAL(bp_db_commit(u.db) == 0);
}

/* Whether one of jobs[0..n) is of webhook wh. */
static int
has_hook(const struct bp_webhook_job *jobs, int n, const char *wh)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(jobs[i].webhook_id, wh) == 0)
			return 1;
	return 0;
}

/*
 * Item 1 of the tenant fences: a backlog of 600 older events, of an account past its day's
 * deliveries or of one without a cap, never holds back another webhook's event.
 */
static void
test_claim_fair(void)
{
	struct bp_webhook capped, busy, other;
	struct bp_webhook_job *jobs;
	int64_t now = ((int64_t)time(NULL) / 86400 + 7) * 86400 + 43200;
	int n, k;

	make_webhook(1, &capped);	/* tiny: 2 deliveries a day */
	make_webhook(2, &busy);		/* big: no cap */
	make_webhook(2, &other);
	add_events(capped.id, "evt_cap", 600, now - 100);
	add_events(busy.id, "evt_busy", 600, now - 100);
	add_events(other.id, "evt_other", 1, now);
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 10, &jobs);
	CU_ASSERT_EQUAL(n, 10);
	CU_ASSERT(has_hook(jobs, n, other.id));		/* behind 1,200 older rows */
	CU_ASSERT(has_hook(jobs, n, busy.id));
	bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	/* The capped account's rest waits for its next day, out of the due set. */
	for (k = 0; k < 3; k++) {
		n = bp_webhook_queue_claim(u.db, cfg, now + 1, 60, 10, &jobs);
		CU_ASSERT(!has_hook(jobs, n, capped.id));
		bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	}
	CU_ASSERT_EQUAL(events_of(capped.id, "pending"), 600);
	n = bp_webhook_queue_claim(u.db, cfg, (now / 86400 + 1) * 86400, 60, 600, &jobs);
	CU_ASSERT(has_hook(jobs, n, capped.id));	/* the next day, it is sent again */
	bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 1, capped.id), 1);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, busy.id), 1);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, other.id), 1);
	bp_webhook_clear(&capped);
	bp_webhook_clear(&busy);
	bp_webhook_clear(&other);
}

/* Undelivered events expire after the ttl, counted, and leave the backlog. */
static void
test_expire(void)
{
	static const char *const rep[] = { "evt_rep0" };
	struct bp_webhook w;
	struct bp_webhook_job *jobs;
	struct bp_webhook_outcome out[1];
	char paused[1][BP_WEBHOOK_ID_MAX];
	struct bp_buf b;
	size_t np;
	int64_t now = ((int64_t)time(NULL) / 86400 + 9) * 86400 + 43200;
	int n;

	make_webhook(2, &w);
	add_events(w.id, "evt_old", 3, now - 5000);
	add_events(w.id, "evt_new", 2, now - 10);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 5);
	CU_ASSERT_EQUAL(bp_webhook_queue_prune(u.db, now, 100000, 1000), 3);
	CU_ASSERT_EQUAL(events_of(w.id, "pending"), 2);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 2);
	bp_buf_init(&b, 4096);
	CU_ASSERT_EQUAL(bp_webhook_queue_counts(u.db, w.id, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(b.data != NULL ? strstr(b.data, "expired 3") : NULL);
	bp_buf_free(&b);
	/*
	 * A replay makes an old event due again: it has the ttl from then, not from when it was
	 * recorded (before, the next prune deleted it, replayed and never sent).
	 */
	add_events(w.id, "evt_rep", 1, now - 5000);
	n = bp_webhook_queue_claim(u.db, cfg, now - 4000, 60, 10, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	memset(out, 0, sizeof(out));
	out[0].ok = 1;
	out[0].http_status = 200;
	out[0].at = now - 4000;
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, (now - 4000) * 1000, jobs, out, 1,
	    paused, &np), 0);
	bp_webhook_jobs_free(jobs, 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_replay(u.db, w.id, 0, rep, 1, 0, now - 10, &np), 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_prune(u.db, now, 100000, 1000), 0);
	CU_ASSERT_EQUAL(events_of(w.id, "pending"), 3);
	/* Not due again within the ttl, it expires as any other. */
	CU_ASSERT_EQUAL(bp_webhook_queue_prune(u.db, now + 1000, 100000, 1000), 3);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, w.id), 1);
	bp_webhook_clear(&w);
}

/* count(*) of sql (a literal) with ?1 bound to webhook wh, and ?2 to state unless NULL. */
static int64_t
count_of(const char *sql, const char *wh, const char *state)
{
	struct bp_stmt *st = bp_db_stmt(u.db, sql);
	int64_t n = -1;

	CU_ASSERT_FATAL(st != NULL);
	bp_stmt_text(st, 1, wh);
	if (state != NULL)
		bp_stmt_text(st, 2, state);
	if (bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return n;
}

/*
 * A settle of more outcomes than one statement's rows (SETTLE_ROWS, 64), some failed: an
 * attempts row each, the acknowledged ones delivered, the failed ones due again after the
 * first retry, the backlog down by what was delivered.
 */
static void
test_settle_batch(void)
{
	static const char sql_att[] = "SELECT count(*) FROM webhook_attempts WHERE"
	    " webhook_id = ?1 AND attempt = 1 AND at > 0 AND duration_ms = 7 AND error = ''";
	static const char sql_503[] = "SELECT count(*) FROM webhook_attempts WHERE"
	    " webhook_id = ?1 AND http_status = 503";
	static const char sql_one[] = "SELECT count(*) FROM webhook_events WHERE"
	    " webhook_id = ?1 AND attempts = 1 AND lease_until = 0";
	struct bp_webhook w;
	struct bp_webhook_job *jobs;
	struct bp_webhook_outcome out[150];
	char paused[150][BP_WEBHOOK_ID_MAX];
	size_t np;
	int64_t now = ((int64_t)time(NULL) / 86400 + 11) * 86400 + 43200;
	int n, i, failed = 0;

	make_webhook(2, &w);
	add_events(w.id, "evt_batch", 150, now - 10);
	n = bp_webhook_queue_claim(u.db, cfg, now, 60, 150, &jobs);
	CU_ASSERT_EQUAL_FATAL(n, 150);
	memset(out, 0, sizeof(out));
	for (i = 0; i < n; i++) {
		out[i].at = now;
		out[i].ok = i % 7 != 3;
		out[i].http_status = out[i].ok ? 200 : 503;
		out[i].duration_ms = 7;
		failed += !out[i].ok;
	}
	CU_ASSERT_EQUAL(bp_webhook_queue_settle(u.db, cfg, now * 1000, jobs, out, (size_t)n,
	    paused, &np), 0);
	bp_webhook_jobs_free(jobs, (size_t)n);
	CU_ASSERT_EQUAL(np, 0);
	CU_ASSERT_EQUAL(events_of(w.id, "delivered"), 150 - failed);
	CU_ASSERT_EQUAL(events_of(w.id, "pending"), failed);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), failed);
	CU_ASSERT_EQUAL(count_of(sql_att, w.id, NULL), 150);
	CU_ASSERT_EQUAL(count_of(sql_503, w.id, NULL), failed);
	CU_ASSERT_EQUAL(count_of(sql_one, w.id, NULL), 150);
	/* The failed ones after their first retry's step (10 s), and not before. */
	n = bp_webhook_queue_claim(u.db, cfg, now + 9, 60, 150, &jobs);
	CU_ASSERT_EQUAL(n, 0);
	bp_webhook_jobs_free(jobs, 0);
	n = bp_webhook_queue_claim(u.db, cfg, now + 10, 60, 150, &jobs);
	CU_ASSERT_EQUAL(n, failed);
	bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 2, w.id), 1);
	bp_webhook_clear(&w);
}

/* The [webhooks] and [smtp] keys: "" when the file loads, else the error. */
static const char *
load(const char *text, struct bp_config **out)
{
	static char err[512];
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "%s/c.ini", u.dir);
	CU_ASSERT_FATAL((f = fopen(p, "w")) != NULL);
	fprintf(f, "[server]\ndatabase = %s\n%s", u.files, text);
	fclose(f);
	err[0] = '\0';
	*out = bp_config_load(p, err, sizeof(err));
	unlink(p);
	return err;
}

static void
test_config_keys(void)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "[webhooks]\nretry_schedule = \n", "retry_schedule" },
		{ "[webhooks]\nretry_schedule = 10,,60\n", "retry_schedule" },
		{ "[webhooks]\nretry_schedule = 10,0\n", "retry_schedule" },
		{ "[webhooks]\nretry_schedule = 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1\n", "retry_schedule" },
		{ "[webhooks]\ntimeout_ms = 5\n", "timeout_ms" },
		{ "[webhooks]\nnope = 1\n", "nope" },
		{ "[smtp]\nurl = http://x\nfrom = a@b\n", "url" },
		{ "[smtp]\nurl = smtp://127.0.0.1:25\n", "from" },
		{ "[plan free]\nwebhooks = -1\n", "webhooks" },
	};
	struct bp_config *c;
	size_t i;

	CU_ASSERT_STRING_EQUAL(load("", &c), "");
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(c->webhooks.timeout_ms, 15000);
	CU_ASSERT_EQUAL(c->webhooks.nretry, 5);
	CU_ASSERT_EQUAL(c->webhooks.retry[4], 21600);
	CU_ASSERT_EQUAL(bp_config_plan(c, "free")->webhooks, 5);
	CU_ASSERT_EQUAL(bp_config_plan(c, "free")->webhook_deliveries, 1000);
	bp_config_free(c);
	CU_ASSERT_STRING_EQUAL(load("[webhooks]\nretry_schedule = 1, 2 ,3\nparallel = 8\n"
	    "[smtp]\nurl = smtps://mail.example:465\nfrom = ops@example.com\n"
	    "[plan free]\nwebhook_deliveries = 0\n", &c), "");
	CU_ASSERT_FATAL(c != NULL);
	CU_ASSERT_EQUAL(c->webhooks.nretry, 3);
	CU_ASSERT_EQUAL(c->webhooks.retry[1], 2);
	CU_ASSERT_EQUAL(c->webhooks.parallel, 8);
	CU_ASSERT_STRING_EQUAL(c->webhooks.smtp_from, "ops@example.com");
	CU_ASSERT_EQUAL(bp_config_plan(c, "free")->webhook_deliveries, 0);
	bp_config_free(c);
	for (i = 0; i < BP_NITEMS(bad); i++) {
		const char *e = load(bad[i].text, &c);

		CU_ASSERT_PTR_NULL(c);
		CU_ASSERT_PTR_NOT_NULL(strstr(e, bad[i].err));
		bp_config_free(c);
	}
}

static int64_t
events_of(const char *wh, const char *state)
{
	static const char sql[] = "SELECT count(*) FROM webhook_events WHERE webhook_id = ?"
	    " AND (?2 IS NULL OR state = ?2)";

	return count_of(sql, wh, state);
}

/* The store hook: a transaction and an ERC-20 log of a watched address, once; the rollback. */
static void
test_match(void)
{
	static const char bh[] = "0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
	static const char tx[] = "0xcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
	struct bp_webhook w, small;
	struct bp_index_store_event e;
	struct bp_index_store_block blk;
	struct bp_buf b;
	uint8_t data[32];
	int i;

	make_webhook(2, &w);
	CU_ASSERT_FATAL(bp_db_exec(u.db, "INSERT INTO index_transactions (chain, hash,"
	    " block_number, tx_index, from_addr, to_addr, value, nonce, status, gas_used) VALUES"
	    " ('ethereum.devnet', '0xcccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc',"
	    " 20, 0, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',"
	    " '0x0000000000000000000000000000000000000001', '5', 0, 1, 21000)") == 0);
	memset(&e, 0, sizeof(e));
	e.pos.block = 20;
	e.pos.log_index = 3;
	snprintf(e.pos.tx_hash, sizeof(e.pos.tx_hash), "%s", tx);
	snprintf(e.pos.contract, sizeof(e.pos.contract), "0x5fbdb2315678afecb367f032d93f642f64180aa3");
	bp_hex_decode_fixed(e.pos.contract, 42, e.log.address, 20);
	bp_hex_decode_fixed("0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef", 66,
	    e.log.topics[0], 32);
	bp_hex_decode_fixed(A1, 42, e.log.topics[1] + 12, 20);
	e.log.topics[2][31] = 2;
	e.log.ntopics = 3;
	memset(data, 0, sizeof(data));
	data[31] = 7;
	e.log.data = data;
	e.log.datalen = sizeof(data);
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&e.log, NULL, 0, &e.ev), BP_INDEX_EVENT_ERC20);
	memset(&blk, 0, sizeof(blk));
	blk.number = 20;
	blk.hash = bh;
	blk.parent_hash = bh;
	blk.events = &e;
	blk.nevents = 1;
	/* Account 1's webhook watches the same: its plan holds a backlog of 1 event. */
	make_webhook(1, &small);
	cfg->plans[0].webhook_backlog = 1;
	CU_ASSERT_FATAL(bp_db_begin(u.db) == 0);
	for (i = 0; i < 2; i++)		/* a second pass over the block records nothing new */
		CU_ASSERT_EQUAL(bp_webhook_match_block(cfg, u.db, "ethereum.devnet", &blk), 0);
	CU_ASSERT_FATAL(bp_db_commit(u.db) == 0);
	cfg->plans[0].webhook_backlog = 0;
	CU_ASSERT_EQUAL(events_of(w.id, NULL), 2);	/* the ETH send and the token send */
	CU_ASSERT_EQUAL(events_of(small.id, NULL), 1);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 2);
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, small.id), 1);
	/* Counted, not silent: 1 dropped, then both again by the second pass; 1 recorded. */
	bp_buf_init(&b, 4096);
	CU_ASSERT_EQUAL(bp_webhook_queue_counts(u.db, small.id, &b), 0);
	CU_ASSERT_PTR_NOT_NULL(b.data != NULL ? strstr(b.data,
	    "recorded 1  dropped 0 (day's events)  dropped 3 (backlog)  expired 0") : NULL);
	bp_buf_free(&b);
	CU_ASSERT_EQUAL(bp_webhook_queue_recorded_today(u.db, 1, time(NULL) / 86400), 1);
	CU_ASSERT_EQUAL(bp_webhook_delete(u.db, 1, small.id), 1);
	bp_webhook_clear(&small);
	CU_ASSERT(bp_db_exec(u.db, "UPDATE webhook_events SET state = 'delivered'"
	    " WHERE source LIKE 'tx:%'") == 0);
	CU_ASSERT_EQUAL(bp_webhook_match_rollback(cfg, u.db, "ethereum.devnet", 20, bh), 0);
	CU_ASSERT_EQUAL(events_of(w.id, "pending"), 0);	/* taken back with the block */
	/* ... and from the backlog (the delivered one was set by SQL above, not by settle). */
	CU_ASSERT_EQUAL(bp_webhook_queue_backlog(u.db, w.id), 1);
	CU_ASSERT_EQUAL(events_of(w.id, "delivered"), 1);	/* what went out stays */
	bp_webhook_clear(&w);
}

/* Appends transaction t to the text at arg: "index hash from to status gas_used". */
static int
tx_line(const struct bp_index_block_tx *t, void *arg)
{
	char *out = arg;

	snprintf(out + strlen(out), 512 - strlen(out), "%lld %.6s %s %s %d %lld\n",
	    (long long)t->tx_index, t->hash, t->from, t->to != NULL ? t->to : "-", t->status,
	    (long long)t->gas_used);
	return 0;
}

/* The index's reader of a block's transactions, which the matcher uses: by tx_index, NULLs. */
static void
test_block_txs(void)
{
	char out[512] = "";

	CU_ASSERT_FATAL(bp_db_exec(u.db, "INSERT INTO index_transactions (chain, hash,"
	    " block_number, tx_index, from_addr, to_addr, value, nonce, status, gas_used) VALUES"
	    " ('ethereum.devnet', '0xdd', 21, 1, '0x01', NULL, '0', 1, NULL, NULL),"
	    " ('ethereum.devnet', '0xee', 21, 0, '0x02', '0x03', '5', 2, 0, 30000),"
	    " ('ethereum.devnet', '0xff', 22, 0, '0x02', '0x03', '5', 3, 1, 21000)") == 0);
	CU_ASSERT_EQUAL(bp_index_each_block_tx(u.db, "ethereum.devnet", 21, tx_line, out), 2);
	CU_ASSERT_STRING_EQUAL(out, "0 0xee 0x02 0x03 0 30000\n1 0xdd 0x01 - -1 -1\n");
	CU_ASSERT_EQUAL(bp_index_each_block_tx(u.db, "ethereum.devnet", 23, tx_line, out), 0);
}

BP_UNIT_SUITE(webhook, setup, teardown,
	{ "match: once per source; rollback takes back what was not sent", test_match },
	{ "the block's transactions through the index's reader", test_block_txs },
	{ "[webhooks], [smtp] and plan keys", test_config_keys },
	{ "config of each event type, canonical", test_config_good },
	{ "bad configs name their field", test_config_bad },
	{ "url: https, length, private hosts", test_url_rules },
	{ "signature vector", test_sign_vector },
	{ "Standard Webhooks signature", test_sign_std },
	{ "queue: confirmation, day cap, retries, pause, resume, prune", test_queue },
	{ "queue: a token event waits for its symbol; pause", test_complete_pause },
	{ "claim: final rows through the index's heads, however many are not", test_claim_final },
	{ "claim: fair across webhooks; an account past its day waits out of the due set",
	    test_claim_fair },
	{ "expiry: undelivered events past the ttl, counted; a replay has it from then",
	    test_expire },
	{ "settle: a batch past one statement's rows, some failed", test_settle_batch },
);
