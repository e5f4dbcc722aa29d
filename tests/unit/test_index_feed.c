/*
 * lib/index/index_feed.c, the heads feed: the newHeads result of a head, the file the indexer
 * writes after its commit (the newest heads, oldest first, replaced whole) and what a reader
 * gets back from it, unchanged or not, malformed or cut.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "index/index_feed.h"
#include "unit.h"
#include "unit_db.h"

#define CH	"ethereum.devnet"

static struct bp_unit_db u;

static int
setup(void)
{
	char sql[256];
	int i;

	if (bp_unit_db_open(&u, "indexfeed") == -1)
		return 1;
	/* Blocks 1 to 10, the node's header kept for block 10 only. */
	for (i = 1; i <= 10; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO index_blocks VALUES ('" CH "', %d, 'h%d',"
		    " 'h%d', 1700000000, 21000, 30000000, '7', 1)", i, i, i - 1);
		if (bp_db_exec(u.db, sql) != 0)
			return 1;
	}
	return bp_db_exec(u.db, "INSERT INTO index_headers VALUES ('" CH "', 10, 'h10',"
	    " '{\"hash\":\"h10\",\"miner\":\"0x01\"}')") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static void
test_head_json(void)
{
	struct bp_index_block_head h = { 26, "0xaa", "0xbb", 1700000000, 21000, 30000000,
	    "1000000000", NULL };
	char out[512];

	CU_ASSERT_EQUAL_FATAL(bp_index_feed_head_json(&h, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "{\"hash\":\"0xaa\",\"parentHash\":\"0xbb\",\"number\":\"0x1a\","
	    "\"timestamp\":\"0x6553f100\",\"gasUsed\":\"0x5208\",\"gasLimit\":\"0x1c9c380\","
	    "\"baseFeePerGas\":\"0x3b9aca00\"}");
	h.base_fee[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_head_json(&h, out, sizeof(out)), 0);
	CU_ASSERT_PTR_NULL(strstr(out, "baseFeePerGas"));
	CU_ASSERT_EQUAL(bp_index_feed_head_json(&h, out, 40), -1);
	/* The node's header, when kept, is the result as it is. */
	h.header = "{\"hash\":\"0xaa\"}";
	CU_ASSERT_STRING_EQUAL(bp_index_feed_result(&h, out, sizeof(out)), h.header);
	h.header = NULL;
	h.number = -1;
	CU_ASSERT_EQUAL(bp_index_feed_head_json(&h, out, sizeof(out)), -1);
	CU_ASSERT_PTR_NULL(bp_index_feed_result(&h, out, sizeof(out)));
}

/* What a read passed on: "NUMBER:HASH:PARENT:RESULT " a head; stops after stop heads (0: never). */
struct got {
	char	log[2048];
	int	calls;
	int	stop;
};

static int
on_head(const struct bp_index_block_head *h, void *arg)
{
	struct got *g = arg;
	size_t n = strlen(g->log);

	snprintf(g->log + n, sizeof(g->log) - n, "%lld:%s:%s:%s ", (long long)h->number, h->hash,
	    h->parent_hash, h->header);
	return ++g->calls == g->stop;
}

/* Reads the feed once: its return, and what was passed on equal to log (NULL: not checked). */
static void
expect_read(const char *path, struct bp_index_feed_seen *seen, struct bp_buf *buf, int stop,
    int rc, int calls, const char *log)
{
	struct got g;

	memset(&g, 0, sizeof(g));
	g.stop = stop;
	CU_ASSERT_EQUAL(bp_index_feed_read(path, seen, buf, on_head, &g), rc);
	CU_ASSERT_EQUAL(g.calls, calls);
	if (log != NULL)
		CU_ASSERT_STRING_EQUAL(g.log, log);
}

/* Replaces the file at path with text. */
static void
put_file(const char *path, const char *text)
{
	FILE *fp;

	CU_ASSERT_FATAL((fp = fopen(path, "w")) != NULL);
	fputs(text, fp);
	fclose(fp);
}

static void
test_feed(void)
{
	struct bp_index_feed_seen seen;
	struct bp_buf buf;
	struct stat before, after;
	char path[4200];
	FILE *fp;
	char text[4096];
	size_t len;

	static struct bp_config cfg;

	/* A head's own file: under state_dir when it is set, beside the database otherwise. */
	snprintf(cfg.database, sizeof(cfg.database), "%s", u.files);
	snprintf(cfg.state_dir, sizeof(cfg.state_dir), "/var/lib/bp");
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_path(&cfg, CH, path, sizeof(path)), 0);
	CU_ASSERT_STRING_EQUAL(path, "/var/lib/bp/blockport.heads." CH);
	cfg.state_dir[0] = '\0';
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_path(&cfg, CH, path, sizeof(path)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(path, ".heads." CH));
	CU_ASSERT_EQUAL(strncmp(path, u.files, strlen(u.files)), 0);
	CU_ASSERT_EQUAL(bp_index_feed_path(&cfg, CH, path, 8), -1);
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_path(&cfg, CH, path, sizeof(path)), 0);
	bp_buf_init(&buf, BP_INDEX_FEED_MAX + 1);
	memset(&seen, 0, sizeof(seen));
	unlink(path);
	/* No feed: the reader goes to SQLite. */
	expect_read(path, &seen, &buf, 0, -1, 0, "");

	/* The newest 8 heads, oldest first, each on its line; the kept header as it is. */
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_write(u.db, CH, path), 0);
	CU_ASSERT_FATAL((fp = fopen(path, "r")) != NULL);
	len = fread(text, 1, sizeof(text) - 1, fp);
	text[len] = '\0';
	fclose(fp);
	CU_ASSERT_EQUAL(strncmp(text, "3 h3 h2 {\"hash\":\"h3\",\"parentHash\":\"h2\",\"number\":"
	    "\"0x3\",", 50), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"baseFeePerGas\":\"0x7\"}\n4 h4 h3 {"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n10 h10 h9 {\"hash\":\"h10\",\"miner\":\"0x01\"}\n"));
	CU_ASSERT_EQUAL(text[len - 1], '\n');
	expect_read(path, &seen, &buf, 0, 1, 8, NULL);
	/* Unchanged: not read again. */
	expect_read(path, &seen, &buf, 0, 0, 0, "");

	/*
	 * Written again, the same bytes: a new modification time (past the old one, to the
	 * nanosecond) tells the reader, whatever the inode and the size.
	 */
	CU_ASSERT_EQUAL_FATAL(stat(path, &before), 0);
	CU_ASSERT_EQUAL_FATAL(bp_index_feed_write(u.db, CH, path), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &after), 0);
	CU_ASSERT(after.st_mtim.tv_sec > before.st_mtim.tv_sec ||
	    (after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec > before.st_mtim.tv_nsec));
	CU_ASSERT_EQUAL(after.st_size, before.st_size);
	/* The function stops the read: read, fewer heads. */
	expect_read(path, &seen, &buf, 2, 1, 2, NULL);

	/* A cut or malformed line: the heads before it, then -1. */
	put_file(path, "12 g12 g11 {\"hash\":\"g12\"}\n13 g13");
	expect_read(path, &seen, &buf, 0, -1, 1, "12:g12:g11:{\"hash\":\"g12\"} ");
	put_file(path, "x13 g13 g12 {}\n");
	expect_read(path, &seen, &buf, 0, -1, 0, "");
	put_file(path, "13 g13 g12 []\n");
	expect_read(path, &seen, &buf, 0, -1, 0, "");
	put_file(path, "13 g13\n");
	expect_read(path, &seen, &buf, 0, -1, 0, "");

	/* Nothing indexed: no feed rather than a stale one. */
	CU_ASSERT_EQUAL(bp_index_feed_write(u.db, "polygon.mainnet", path), -1);
	CU_ASSERT_EQUAL(access(path, F_OK), -1);
	bp_buf_free(&buf);
}

BP_UNIT_SUITE(index_feed, setup, teardown,
	{ "a head as a newHeads result", test_head_json },
	{ "the feed written, read, unchanged, malformed", test_feed })
