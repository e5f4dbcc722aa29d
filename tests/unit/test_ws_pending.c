/*
 * lib/ws/ws_pending.c against a fresh database: the hashes cron/pending appends, in order per
 * chain, malformed ones skipped, read after a seq in bounded steps, and pruned by age.
 */
#include <stdio.h>
#include <string.h>

#include "core/db.h"
#include "unit.h"
#include "unit_db.h"
#include "ws/ws_pending.h"

#define CH	"ethereum.devnet"
#define H1	"0x1111111111111111111111111111111111111111111111111111111111111111"
#define H2	"0xAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "pending") == -1 ? 1 : 0;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

struct got {
	char	hashes[8][67];
	size_t	n;
};

static int
collect(const char *hash, void *arg)
{
	struct got *g = arg;

	if (g->n < 8)
		snprintf(g->hashes[g->n++], sizeof(g->hashes[0]), "%s", hash);
	return 0;
}

static void
test_pending(void)
{
	const char *in[] = { H1, "0x12", NULL, H2 };
	const char *other[] = { H2 };
	struct got g;
	int64_t seq, after = 0;

	CU_ASSERT_EQUAL(bp_ws_pending_last(u.db, CH, &seq), 0);
	CU_ASSERT_EQUAL(seq, 0);
	CU_ASSERT_EQUAL(bp_ws_pending_add(u.db, CH, in, 4, 1000), 2);
	CU_ASSERT_EQUAL(bp_ws_pending_add(u.db, "polygon.mainnet", other, 1, 1000), 1);
	CU_ASSERT_EQUAL(bp_ws_pending_last(u.db, CH, &seq), 0);
	CU_ASSERT_EQUAL(seq, 2);
	memset(&g, 0, sizeof(g));
	CU_ASSERT_EQUAL(bp_ws_pending_read(u.db, CH, &after, collect, &g), 2);
	CU_ASSERT_EQUAL(after, 2);
	CU_ASSERT_STRING_EQUAL(g.hashes[0], H1);
	CU_ASSERT_STRING_EQUAL(g.hashes[1],
	    "0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	CU_ASSERT_EQUAL(bp_ws_pending_read(u.db, CH, &after, collect, &g), 0);
	/* Later, past the age: the old rows go, the numbering goes on. */
	CU_ASSERT_EQUAL(bp_ws_pending_add(u.db, CH, other, 1, 1000 + BP_WS_PENDING_KEEP_SECONDS + 1), 1);
	after = 0;
	memset(&g, 0, sizeof(g));
	CU_ASSERT_EQUAL(bp_ws_pending_read(u.db, CH, &after, collect, &g), 1);
	CU_ASSERT_EQUAL(after, 3);
}

BP_UNIT_SUITE(ws_pending, setup, teardown,
	{ "append, read after a seq, prune", test_pending })
