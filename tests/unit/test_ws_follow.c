/*
 * lib/ws/ws_follow.c and lib/ws/ws_logs.c, the WebSocket program's head follower and logs filter: heads
 * written by a second connection (as the indexer writes them) are delivered in order, a reorg
 * reports the orphaned heads newest first and delivers the new branch, the heads feed
 * (lib/index/index_feed.c) is continued or handed back to SQLite, and the logs filter refuses
 * what eth_getLogs would not take.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "unit.h"
#include "unit_db.h"
#include "ws/ws_follow.h"
#include "ws/ws_logs.h"

#define CH	"ethereum.devnet"

static struct bp_unit_db u;
static struct bp_db *writer;	/* the indexer's connection: data_version moves for the reader */

/* What a poll reported, as text: "+11 -12 ...". */
struct seen {
	char	log[512];
};

static int
on_removed(int64_t number, const char *hash, void *arg)
{
	struct seen *s = arg;
	size_t n = strlen(s->log);

	snprintf(s->log + n, sizeof(s->log) - n, "-%lld:%s ", (long long)number, hash);
	return 0;
}

static int
on_head(const struct bp_index_block_head *h, void *arg)
{
	struct seen *s = arg;
	size_t n = strlen(s->log);

	snprintf(s->log + n, sizeof(s->log) - n, "+%lld:%s ", (long long)h->number, h->hash);
	return 0;
}

static const struct bp_ws_follow_fns fns = { on_removed, on_head };

static int
setup(void)
{
	if (bp_unit_db_open(&u, "wsfollow") == -1)
		return 1;
	if ((writer = bp_db_open(u.path, 0)) == NULL)
		return 1;
	return bp_db_exec(writer,
	    "INSERT INTO index_cursors (chain, head, head_hash) VALUES ('" CH "', 10, 'h10');"
	    "INSERT INTO index_blocks VALUES ('" CH "', 10, 'h10', 'h9', 1700000000, 1, 30000000,"
	    " '1000000000', 0);") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_db_close(writer);
	bp_unit_db_close(&u);
	return 0;
}

/* Stores block number with hash and parent (as the indexer does). */
static void
put(int64_t number, const char *hash, const char *parent)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "INSERT INTO index_blocks VALUES ('" CH "', %lld, '%s', '%s',"
	    " 1700000000, 21000, 30000000, NULL, 1)", (long long)number, hash, parent);
	CU_ASSERT_EQUAL(bp_db_exec(writer, sql), 0);
}

static void
drop_from(int64_t number)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DELETE FROM index_blocks WHERE chain = '" CH "' AND number >= %lld",
	    (long long)number);
	CU_ASSERT_EQUAL(bp_db_exec(writer, sql), 0);
}

/* Polls f once: n heads reported, and what was seen equal to log. */
static void
expect(struct bp_ws_follow *f, int n, const char *log)
{
	struct seen s;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_ws_follow_poll(f, u.db, &fns, &s), n);
	CU_ASSERT_STRING_EQUAL(s.log, log);
}

static void
test_follow(void)
{
	struct bp_ws_follow f;

	CU_ASSERT_EQUAL_FATAL(bp_ws_follow_start(&f, u.db, CH), 0);
	CU_ASSERT_EQUAL(f.last, 10);
	expect(&f, 0, "");

	put(11, "h11", "h10");
	put(12, "h12", "h11");
	expect(&f, 2, "+11:h11 +12:h12 ");
	/* Nothing written since: nothing read. */
	expect(&f, 0, "");

	/* A reorg two deep that grows past the old head. */
	drop_from(11);
	put(11, "x11", "h10");
	put(12, "x12", "x11");
	put(13, "x13", "x12");
	expect(&f, 3, "-12:h12 -11:h11 +11:x11 +12:x12 +13:x13 ");

	/* The head replaced at the same height: noticed at once. */
	drop_from(13);
	put(13, "y13", "x12");
	expect(&f, 1, "-13:x13 +13:y13 ");

	/* Rolled back, not yet stored again: wait, report nothing twice. */
	drop_from(13);
	expect(&f, 0, "");
	put(13, "y13", "x12");
	put(14, "y14", "y13");
	expect(&f, 1, "+14:y14 ");
}

/* Keeps the newHeads result of the last head reported. */
static int
on_result(const struct bp_index_block_head *h, void *arg)
{
	char core[640];
	const char *r = bp_index_feed_result(h, core, sizeof(core));

	snprintf(arg, 512, "%s", r != NULL ? r : "NULL");
	return 0;
}

static void
test_head_header(void)
{
	static const struct bp_ws_follow_fns rfns = { NULL, on_result };
	struct bp_ws_follow f;
	char res[512];

	CU_ASSERT_EQUAL_FATAL(bp_ws_follow_start(&f, u.db, CH), 0);
	CU_ASSERT_FATAL(bp_ws_follow_poll(&f, u.db, &rfns, res) >= 0);	/* the earlier rows */
	/* The node's header, as the store kept it for that block's hash, goes as it is. */
	put(f.last + 1, "z1", f.sent[f.last % BP_WS_FOLLOW_RING].hash);
	CU_ASSERT_EQUAL(bp_db_exec(writer, "INSERT INTO index_headers SELECT chain, number, hash,"
	    " '{\"hash\":\"z1\",\"miner\":\"0x01\",\"logsBloom\":\"0x00\"}' FROM index_blocks"
	    " WHERE hash = 'z1'"), 0);
	CU_ASSERT_EQUAL(bp_ws_follow_poll(&f, u.db, &rfns, res), 1);
	CU_ASSERT_STRING_EQUAL(res, "{\"hash\":\"z1\",\"miner\":\"0x01\",\"logsBloom\":\"0x00\"}");
	/* A header kept for another hash of that number (a stale row) is not sent: core fields. */
	put(f.last + 1, "z2", "z1");
	CU_ASSERT_EQUAL(bp_db_exec(writer, "INSERT INTO index_headers SELECT chain, number, 'other',"
	    " '{\"hash\":\"other\"}' FROM index_blocks WHERE hash = 'z2'"), 0);
	CU_ASSERT_EQUAL(bp_ws_follow_poll(&f, u.db, &rfns, res), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(res, "{\"hash\":\"z2\",\"parentHash\":\"z1\",\"number\":"));
	CU_ASSERT_PTR_NULL(strstr(res, "miner"));
}

static void
test_logs_filter(void)
{
	static const char *const good[] = {
		"[\"logs\"]",
		"[\"logs\",{}]",
		"[\"logs\",{\"address\":\"0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9\"}]",
		"[\"logs\",{\"address\":[\"0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9\"],"
		    "\"topics\":[null,[\"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef\"]]}]",
	};
	static const char *const bad[] = {
		"[\"logs\",{\"address\":\"0x12\"}]",
		"[\"logs\",{\"address\":\"cf7ed3acca5a467e9e704c703e8d87f634fb0fc9\"}]",
		"[\"logs\",{\"topics\":[null,null,null,null,null]}]",
		"[\"logs\",{\"topics\":[\"0x01\"]}]",
		"[\"logs\",{\"fromBlock\":\"0x1\"}]",
		"[\"logs\",[]]",
		"[\"logs\",{},1]",
		"{\"logs\":1}",
		"[\"logs\",",
	};
	struct bp_ws_logs *l;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		l = bp_ws_logs_new(good[i], strlen(good[i]), err, sizeof(err));
		CU_ASSERT_PTR_NOT_NULL(l);
		/* Nothing kept for a block: nothing removed. */
		if (l != NULL)
			CU_ASSERT_EQUAL(bp_ws_logs_removed(l, 5, "0xaa", NULL, NULL), 0);
		bp_ws_logs_free(l);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		l = bp_ws_logs_new(bad[i], strlen(bad[i]), err, sizeof(err));
		CU_ASSERT_PTR_NULL(l);
		CU_ASSERT(err[0] != '\0');
		bp_ws_logs_free(l);
	}
}

/* Polls the feed once: its return, and what was seen equal to log. */
static void
expect_feed(struct bp_ws_follow *f, const char *path, struct bp_buf *buf, int rc,
    const char *log)
{
	struct seen s;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_ws_follow_feed(f, path, buf, &fns, &s), rc);
	CU_ASSERT_STRING_EQUAL(s.log, log);
}

/* The heads feed: what the indexer writes, a connection reads without SQLite. */
static void
test_feed(void)
{
	struct bp_ws_follow f, late;
	struct bp_buf buf;
	struct seen sink;
	char path[4200], h[32], p[BP_INDEX_HASH_STR], want[96];
	int64_t top, i;
	FILE *fp;

	static struct bp_config cfg;

	snprintf(cfg.database, sizeof(cfg.database), "%s", u.files);
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_path(&cfg, CH, path, sizeof(path)), 0);
	bp_buf_init(&buf, BP_INDEX_FEED_MAX + 1);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(bp_ws_follow_start(&f, u.db, CH), 0);
	memset(&sink, 0, sizeof(sink));
	CU_ASSERT_FATAL(bp_ws_follow_poll(&f, u.db, &fns, &sink) >= 0);	/* earlier tests' rows */
	top = f.last;
	/* No feed yet: SQLite it is. */
	expect_feed(&f, path, &buf, -2, "");
	/* Two new heads, written to the feed after the commit, as the indexer does. */
	snprintf(p, sizeof(p), "%s", f.sent[top % BP_WS_FOLLOW_RING].hash);
	put(top + 1, "f1", p);
	put(top + 2, "f2", "f1");
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_write(writer, CH, path), 0);
	late = f;	/* a connection that will fall behind */
	snprintf(want, sizeof(want), "+%lld:f1 +%lld:f2 ", (long long)top + 1, (long long)top + 2);
	expect_feed(&f, path, &buf, 2, want);
	CU_ASSERT_EQUAL(f.last, top + 2);
	/* Read again: nothing new, nothing twice. */
	expect_feed(&f, path, &buf, 0, "");
	/* Seven more: the feed keeps the last 8 (from top + 2), so the late one sees a gap. */
	for (i = 3; i <= 9; i++) {
		snprintf(h, sizeof(h), "f%lld", (long long)i);
		snprintf(p, sizeof(p), "f%lld", (long long)i - 1);
		put(top + i, h, p);
	}
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_write(writer, CH, path), 0);
	expect_feed(&late, path, &buf, -2, "");
	CU_ASSERT_EQUAL(late.last, top);
	memset(&sink, 0, sizeof(sink));
	CU_ASSERT_EQUAL(bp_ws_follow_poll(&late, u.db, &fns, &sink), 9);
	memset(&sink, 0, sizeof(sink));
	CU_ASSERT_EQUAL(bp_ws_follow_feed(&f, path, &buf, &fns, &sink), 7);
	CU_ASSERT_EQUAL(f.last, top + 9);
	snprintf(want, sizeof(want), "+%lld:f3 ", (long long)top + 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(sink.log, want));
	snprintf(want, sizeof(want), "+%lld:f9 ", (long long)top + 9);
	CU_ASSERT_PTR_NOT_NULL(strstr(sink.log, want));
	/* A reorg of the last head: the feed no longer holds what was sent, SQLite walks back. */
	drop_from(top + 9);
	put(top + 9, "g9", "f8");
	put(top + 10, "g10", "g9");
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_write(writer, CH, path), 0);
	expect_feed(&f, path, &buf, -2, "");
	snprintf(want, sizeof(want), "-%lld:f9 +%lld:g9 +%lld:g10 ", (long long)top + 9,
	    (long long)top + 9, (long long)top + 10);
	expect(&f, 2, want);
	/* A malformed feed is not trusted (index_feed's own test has the other cases). */
	CU_ASSERT_FATAL((fp = fopen(path, "w")) != NULL);
	fputs("x13 g13 g12 {}\n", fp);
	fclose(fp);
	expect_feed(&f, path, &buf, -2, "");
	unlink(path);
	bp_buf_free(&buf);
}

BP_UNIT_SUITE(ws_follow, setup, teardown,
	{ "heads in order, reorgs walked back", test_follow },
	{ "the node's stored header as the result", test_head_header },
	{ "the logs filter", test_logs_filter },
	{ "the heads feed: continued, gaps and reorgs to SQLite", test_feed })
