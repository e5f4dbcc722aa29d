/*
 * lib/core/worker.c's reader of worker_runs (bp_worker_each_run, for `blockport status`) on a
 * fresh database: none, then runs in name order with their running, ok and failed states; a
 * callback that stops; a database without the table fails as an error.
 */
#include <stdio.h>
#include <string.h>

#include "core/db.h"
#include "core/worker.h"
#include "unit.h"
#include "unit_db.h"

struct seen {
	int	 n;
	int	 stop_after;	/* 0: never stop */
	char	 lines[4][128];
};

static int
see_run(const struct bp_worker_run *r, void *arg)
{
	struct seen *s = arg;

	if (s->n < 4)
		snprintf(s->lines[s->n], sizeof(s->lines[0]), "%s %lld %s %s", r->name,
		    (long long)r->started_at, r->running ? "running" : r->ok ? "ok" : "failed",
		    r->message);
	s->n++;
	return s->stop_after != 0 && s->n == s->stop_after;
}

static void
test_each_run(void)
{
	/* The rows the passes write (record_start, record_end), put here directly. */
	static const char rows[] = "INSERT INTO worker_runs (name, started_at, finished_at, ok,"
	    " message) VALUES ('prices', 30, 31, 1, '2 feeds'), ('gas', 10, NULL, 0, 'running'),"
	    " ('indexer', 20, 22, 0, 'ethereum.devnet: timeout')";
	struct bp_unit_db u;
	struct seen s;

	CU_ASSERT_FATAL(bp_unit_db_open(&u, "worker") == 0);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_worker_each_run(u.db, see_run, &s), 0);
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(u.db, rows), 0);
	CU_ASSERT_EQUAL(bp_worker_each_run(u.db, see_run, &s), 3);
	CU_ASSERT_STRING_EQUAL(s.lines[0], "gas 10 running running");
	CU_ASSERT_STRING_EQUAL(s.lines[1], "indexer 20 failed ethereum.devnet: timeout");
	CU_ASSERT_STRING_EQUAL(s.lines[2], "prices 30 ok 2 feeds");
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	CU_ASSERT_EQUAL(bp_worker_each_run(u.db, see_run, &s), 2);

	CU_ASSERT_EQUAL_FATAL(bp_unit_db_drop(&u, "worker_runs"), 0);
	memset(&s, 0, sizeof(s));
	bp_unit_log_begin();
	CU_ASSERT_EQUAL(bp_worker_each_run(u.db, see_run, &s), -1);
	CU_ASSERT(bp_unit_db_missing(&u, bp_unit_log_end(), "worker_runs"));
	CU_ASSERT_EQUAL(s.n, 0);
	bp_unit_db_close(&u);
}

BP_UNIT_SUITE(worker, NULL, NULL,
    { "worker_runs read back in name order", test_each_run })
