/*
 * lib/core/worker.c's lease (worker_leases, migration 015), with real worker processes
 * (bp_worker_main in forked children), on SQLite and, in scripts/test.sh's PostgreSQL step, on
 * PostgreSQL: a --once takes it, works and releases it; a holder that lost it writes nothing
 * more (the fence of each write transaction); two long-running workers of one job with state
 * dirs of their own (two heads) never work at once, and after kill -9 of the holder the other
 * takes over within 10 s with a greater epoch (PostgreSQL: on SQLite one box's run lock
 * decides, and a leftover lease is taken at once).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/db.h"
#include "core/util.h"
#include "core/worker.h"
#include "unit.h"
#include "unit_db.h"

static struct bp_unit_db u;
static char busy_path[600];	/* exists while a pass works: O_EXCL finds an overlap */
static char overlap_path[600];	/* written by a pass that found another working */
static int fence_mode;		/* the pass writes until its begin fails */

static void
nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* A pass that marks it works, writes a row in a fenced transaction, and waits a little. */
static int
probe_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	static const char sql[] = "INSERT INTO lease_probe (pid, at) VALUES (?, ?)";
	struct bp_stmt *st;
	int fd, n = 0;

	if ((fd = open(busy_path, O_CREAT | O_EXCL | O_WRONLY, 0600)) == -1) {
		close(open(overlap_path, O_CREAT | O_WRONLY, 0600));
		snprintf(msg, msglen, "overlap");
		return BP_WORKER_FAILED;
	}
	close(fd);
	do {
		if (bp_db_begin(w->db) == -1)
			break;
		if ((st = bp_db_stmt(w->db, sql)) == NULL)
			break;
		bp_stmt_int(st, 1, getpid());
		bp_stmt_int(st, 2, bp_mono_us());
		if (bp_stmt_run(st) == -1 || bp_db_commit(w->db) == -1) {
			bp_db_rollback(w->db);
			break;
		}
		nap_ms(50);
	} while (fence_mode && ++n < 400);
	unlink(busy_path);
	snprintf(msg, msglen, "probe");
	return fence_mode ? BP_WORKER_FAILED : BP_WORKER_IDLE;
}

static const struct bp_worker_def probe = { "probe", NULL, probe_pass, NULL, NULL };
/* The same, woken by the heads channel (as cron/deliver is). */
static const struct bp_worker_def woken = { "probe", NULL, probe_pass, NULL, BP_DB_WAKE_HEADS };
/* Two channels (as cron/bundle: pool and heads). */
static const struct bp_worker_def woken2 = { "probe", NULL, probe_pass, NULL,
    BP_DB_WAKE_POOL "," BP_DB_WAKE_HEADS };

/* A probe pass that leaves work in flight (cron/bundle: a bundle sent, not yet mined). */
static int
soon_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	return probe_pass(w, msg, msglen) == BP_WORKER_FAILED ? BP_WORKER_FAILED : BP_WORKER_SOON;
}

static const struct bp_worker_def soon = { "probe", NULL, soon_pass, NULL, NULL };
static const struct bp_worker_def *spawn_def = &probe;
static const char *spawn_interval = "20";

static int
setup(void)
{
	if (bp_unit_db_open(&u, "lease") == -1)
		return 1;
	snprintf(busy_path, sizeof(busy_path), "%s/busy", u.dir);
	snprintf(overlap_path, sizeof(overlap_path), "%s/overlap", u.dir);
	return bp_db_exec(u.db, "CREATE TABLE lease_probe (pid BIGINT NOT NULL,"
	    " at BIGINT NOT NULL)") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	char path[700];
	int i;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/head%d.ini", u.dir, i);
		unlink(path);
		snprintf(path, sizeof(path), "rm -rf '%s/head%d'", u.dir, i);
		if (system(path) != 0)
			return 1;
	}
	unlink(overlap_path);
	unlink(busy_path);
	bp_unit_db_close(&u);
	return 0;
}

/* The config of head i: the suite's database, a state dir of its own. Its path into out. */
static void
head_config(int i, char *out, size_t cap)
{
	char dir[600];
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/head%d", u.dir, i);
	mkdir(dir, 0700);
	snprintf(out, cap, "%s/head%d.ini", u.dir, i);
	CU_ASSERT_FATAL((f = fopen(out, "w")) != NULL);
	fprintf(f, "[server]\ndatabase = %s\nlimits_file = %s/limits\nstate_dir = %s\n", u.path,
	    dir, dir);
	fclose(f);
}

/* A worker process: bp_worker_main(probe a1 [a2] --interval 20 --wait 2 -c config). */
static pid_t
spawn(const char *config, const char *a1, const char *a2)
{
	char *argv[10];
	int argc = 0, fd;
	pid_t pid;

	if ((pid = fork()) != 0)
		return pid;
	/* Its log (took the lease, standby) stays out of the test's output. */
	if (getenv("LEASE_DEBUG") == NULL && (fd = open("/dev/null", O_WRONLY)) != -1)
		dup2(fd, STDERR_FILENO);
	argv[argc++] = (char *)"probe";
	argv[argc++] = (char *)a1;
	if (a2 != NULL)
		argv[argc++] = (char *)a2;
	argv[argc++] = (char *)"--interval";
	argv[argc++] = (char *)spawn_interval;
	argv[argc++] = (char *)"--wait";
	argv[argc++] = (char *)"2";
	argv[argc++] = (char *)"-c";
	argv[argc++] = (char *)config;
	argv[argc] = NULL;
	_exit(bp_worker_main(spawn_def, argc, argv));
}

struct lease_row {
	char	 holder[160];
	int64_t	 epoch;
	int64_t	 expires_at;
	int	 n;
};

static int
see_lease(const struct bp_worker_lease *l, void *arg)
{
	struct lease_row *r = arg;

	if (strcmp(l->job, "probe") == 0) {
		snprintf(r->holder, sizeof(r->holder), "%s", l->holder);
		r->epoch = l->epoch;
		r->expires_at = l->expires_at;
		r->n++;
	}
	return 0;
}

static void
get_lease(struct lease_row *r)
{
	memset(r, 0, sizeof(*r));
	CU_ASSERT(bp_worker_each_lease(u.db, see_lease, r) >= 0);
}

static int64_t
probe_rows(void)
{
	struct bp_stmt *st = bp_db_stmt(u.db, "SELECT count(*) FROM lease_probe");
	int64_t n = -1;

	if (st != NULL && bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	if (st != NULL)
		bp_stmt_reset(st);
	return n;
}

static int
wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A --once of head 0 that writes until it is fenced, once it has written rows more rows. */
static pid_t
spawn_writer(char *cfg, int rows)
{
	int64_t n, deadline;
	pid_t pid;

	head_config(0, cfg, 600);
	fence_mode = 1;
	n = probe_rows();
	pid = spawn(cfg, "--once", NULL);
	deadline = bp_mono_us() + 10000000;
	while (probe_rows() < n + rows && bp_mono_us() < deadline)
		nap_ms(20);
	CU_ASSERT_FATAL(probe_rows() >= n + rows);
	return pid;
}

static void
test_once_takes_and_releases(void)
{
	struct lease_row r, r2;
	char cfg[600];

	head_config(0, cfg, sizeof(cfg));
	fence_mode = 0;
	CU_ASSERT_EQUAL(wait_exit(spawn(cfg, "--once", NULL)), 0);
	get_lease(&r);
	CU_ASSERT_EQUAL(r.n, 1);
	CU_ASSERT_EQUAL(r.epoch, 1);
	CU_ASSERT_EQUAL(r.expires_at, 0);	/* released at the clean exit */
	CU_ASSERT_PTR_NOT_NULL(strchr(r.holder, ':'));
	CU_ASSERT_EQUAL(probe_rows(), 1);
	/* Another worker takes the released lease at once, with a greater epoch. */
	CU_ASSERT_EQUAL(wait_exit(spawn(cfg, "--once", NULL)), 0);
	get_lease(&r2);
	CU_ASSERT_EQUAL(r2.epoch, 2);
	CU_ASSERT_STRING_NOT_EQUAL(r2.holder, r.holder);
	CU_ASSERT_EQUAL(probe_rows(), 2);
}

static void
test_fence(void)
{
	struct lease_row r;
	char cfg[600], sql[400];
	int64_t n;
	pid_t pid;
	int rc;

	pid = spawn_writer(cfg, 3);
	/* Another head takes the lease over (as after a pause past the TTL). */
	get_lease(&r);
	snprintf(sql, sizeof(sql), "UPDATE worker_leases SET holder = 'other:1:0', epoch ="
	    " epoch + 1, expires_at = %lld WHERE job = 'probe'",
	    (long long)(time(NULL) + 60) * 1000);
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(u.db, sql), 0);
	n = probe_rows();
	/* Its next write transaction fails: nothing more is written; it exits busy. */
	rc = wait_exit(pid);
	CU_ASSERT(rc == 75 || rc == 1);
	CU_ASSERT_EQUAL(probe_rows(), n);
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(u.db, "UPDATE worker_leases SET expires_at = 0"
	    " WHERE job = 'probe'"), 0);
	fence_mode = 0;
}

static void
test_two_heads_failover(void)
{
	struct lease_row r, r2;
	char cfg0[600], cfg1[600];
	int64_t start, took;
	pid_t a, b, holder, other;

	if (!bp_db_is_url(u.path)) {
		CU_PASS("on SQLite one box's run lock decides: not two heads");
		return;
	}
	head_config(0, cfg0, sizeof(cfg0));
	head_config(1, cfg1, sizeof(cfg1));
	unlink(overlap_path);
	a = spawn(cfg0, "--for", "40");
	b = spawn(cfg1, "--for", "40");
	nap_ms(3000);
	get_lease(&r);
	CU_ASSERT_EQUAL_FATAL(r.n, 1);
	CU_ASSERT(r.expires_at > 0);
	holder = atol(strchr(r.holder, ':') + 1) == a ? a : b;
	other = holder == a ? b : a;
	CU_ASSERT_EQUAL(atol(strchr(r.holder, ':') + 1), holder);
	/* kill -9: no release. The standby takes over within 10 s, with a greater epoch. */
	kill(holder, SIGKILL);
	wait_exit(holder);
	unlink(busy_path);	/* the killed pass's mark */
	start = bp_mono_us();
	took = 0;
	while (bp_mono_us() - start < 12000000) {
		get_lease(&r2);
		if (r2.epoch > r.epoch) {
			took = bp_mono_us() - start;
			break;
		}
		nap_ms(100);
	}
	CU_ASSERT(took > 0 && took < 10000000);
	CU_ASSERT_EQUAL(atol(strchr(r2.holder, ':') + 1), other);
	kill(other, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(other), 0);
	CU_ASSERT_EQUAL(access(overlap_path, F_OK), -1);	/* never both at work */
	get_lease(&r);
	CU_ASSERT_EQUAL(r.expires_at, 0);
}

/*
 * SQLite: a --once killed while it held the lease does not hold up the next --once of the box
 * (no long-running copy, the pass lock held: the holder is dead), as with the flocks alone.
 */
static void
test_sqlite_crash_restart(void)
{
	struct lease_row r, r2;
	char cfg[600];
	int64_t t;
	pid_t pid;

	if (bp_db_is_url(u.path)) {
		CU_PASS("on PostgreSQL the next worker waits for the lease to expire");
		return;
	}
	pid = spawn_writer(cfg, 2);
	get_lease(&r);
	CU_ASSERT_FATAL(r.expires_at > 0);
	kill(pid, SIGKILL);
	wait_exit(pid);
	unlink(busy_path);
	fence_mode = 0;
	t = bp_mono_us();
	CU_ASSERT_EQUAL(wait_exit(spawn(cfg, "--once", NULL)), 0);
	t = bp_mono_us() - t;
	CU_ASSERT(t < BP_WORKER_LEASE_TTL_MS * INT64_C(1000) / 2);
	get_lease(&r2);
	CU_ASSERT_EQUAL(r2.epoch, r.epoch + 1);
}

/* Waits up to 10 s for the probe's rows to reach n; whether they did. */
static int
rows_reach(int64_t n)
{
	int64_t t = bp_mono_us();

	while (probe_rows() < n && bp_mono_us() - t < 10000000)
		nap_ms(20);
	return probe_rows() >= n;
}

/* A worker of def with --interval 60000, spawned as spawn() does (a1: its mode). */
static pid_t
spawn_slow(const struct bp_worker_def *def, const char *cfg, const char *a1, const char *a2)
{
	pid_t pid;

	spawn_def = def;
	spawn_interval = "60000";
	pid = spawn(cfg, a1, a2);
	spawn_def = &probe;
	spawn_interval = "20";
	return pid;
}

/* A worker of def runs its next pass at a notify of each of its channels, not its interval. */
static void
woken_by(const struct bp_worker_def *def, const char *const *ch, int nch)
{
	char cfg[600];
	int64_t n, t;
	pid_t pid;
	int i;

	head_config(0, cfg, sizeof(cfg));
	fence_mode = 0;
	n = probe_rows();
	pid = spawn_slow(def, cfg, "--for", "30");
	CU_ASSERT_FATAL(rows_reach(n + 1));
	for (i = 0; i < nch; i++) {
		nap_ms(300);	/* into its idle wait */
		CU_ASSERT_EQUAL(bp_db_notify(u.db, ch[i]), 0);
		t = bp_mono_us();
		CU_ASSERT(rows_reach(n + 2 + i));
		CU_ASSERT(bp_mono_us() - t < 5000000);
	}
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid), 0);
}

static void
test_woken(void)
{
	static const char *const ch[] = { BP_DB_WAKE_HEADS };

	woken_by(&woken, ch, 1);
}

/* Each of a worker's two wake channels runs its next pass (cron/bundle: pool, heads). */
static void
test_woken_two(void)
{
	static const char *const ch[] = { BP_DB_WAKE_POOL, BP_DB_WAKE_HEADS };

	woken_by(&woken2, ch, 2);
}

/*
 * A pass that leaves work in flight (BP_WORKER_SOON) is followed after 10 ms, doubling, not
 * after the interval; --once takes it for idle and exits.
 */
static void
test_soon(void)
{
	char cfg[600];
	int64_t n, t;
	pid_t pid;

	head_config(0, cfg, sizeof(cfg));
	fence_mode = 0;
	n = probe_rows();
	t = bp_mono_us();
	pid = spawn_slow(&soon, cfg, "--for", "30");
	/* Five passes: 10 + 20 + 40 + 80 ms of waits beside their own 50 ms each. */
	CU_ASSERT(rows_reach(n + 5));
	CU_ASSERT(bp_mono_us() - t < 8000000);
	/* Backing off, not at once: by 1.5 s at most 8 (30 without a wait). */
	nap_ms(1500 - (bp_mono_us() - t) / 1000);
	CU_ASSERT(probe_rows() <= n + 15);
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid), 0);
	n = probe_rows();
	t = bp_mono_us();
	CU_ASSERT_EQUAL(wait_exit(spawn_slow(&soon, cfg, "--once", NULL)), 0);
	CU_ASSERT_EQUAL(probe_rows(), n + 1);
	CU_ASSERT(bp_mono_us() - t < 8000000);
}

BP_UNIT_SUITE(worker_lease, setup, teardown,
    { "a --once takes the lease, works, releases it; the next takes it with epoch + 1",
	test_once_takes_and_releases },
    { "a holder that lost its lease writes nothing more (the fence)", test_fence },
    { "two heads' workers never both work; kill -9 of the holder: taken over in 10 s",
	test_two_heads_failover },
    { "SQLite: a --once killed holding the lease does not hold up the next",
	test_sqlite_crash_restart },
    { "a worker with a wake channel runs its next pass at a notify", test_woken },
    { "a worker with two wake channels runs its next pass at a notify of either", test_woken_two },
    { "a pass with work in flight is followed within ms, not the interval; --once exits",
	test_soon })
