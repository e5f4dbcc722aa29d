/*
 * The cron worker skeleton (worker.h). The rules it keeps:
 * - Two copies never work at once: each pass runs under an exclusive flock on
 *   DATABASE.NAME.lock; the long-running modes also hold DATABASE.NAME.run.lock for their
 *   whole life, so cron never stacks up copies.
 * - A signal only sets a flag; the loop looks at it between passes, so a pass is never cut in
 *   the middle by us (a kill -9 can, which is why passes commit their work transactionally).
 * - Each pass is recorded in worker_runs: started_at and finished_at NULL when it begins,
 *   finished_at, ok and the pass's message when it ends. A --for or --loop run records a pass
 *   only when its outcome (ok, message) differs from the last one recorded, or RECORD_EVERY_S
 *   after it: an idle loop would otherwise commit twice a pass, and every commit makes every
 *   reader of the database (each FastCGI thread, each WebSocket connection) drop its page cache.
 * - worker_runs is this module's table: the passes write it, and bp_worker_each_run reads it back
 *   for `blockport status`.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "db.h"
#include "log.h"
#include "util.h"
#include "worker.h"
#include "metrics.h"

#define EXIT_BUSY		75	/* EX_TEMPFAIL of sysexits.h */
#define DEFAULT_WAIT_S		30
#define DEFAULT_INTERVAL_MS	1000
#define MAX_BACKOFF_MS		30000
#define LOCK_POLL_MS		20
#define MSG_MAX			512
#define RECORD_EVERY_S		10	/* a looping worker's same outcome, recorded again */

enum mode {
	MODE_NONE,	/* 0 */
	MODE_ONCE,	/* 1 */
	MODE_FOR,	/* 2 */
	MODE_LOOP,	/* 3 */
	MODE__MAX
};

struct opts {
	enum mode	 mode;
	int64_t		 seconds;	/* --for */
	int64_t		 interval_ms;	/* --for, --loop */
	int64_t		 wait_s;	/* --once */
	const char	*config;
	int		 verbose;
};

static volatile sig_atomic_t stop_flag;

/* What a --for or --loop run last wrote to worker_runs (run_pass). */
struct recorded {
	int	 quiet;		/* --for, --loop: record outcomes that changed, not every pass */
	int	 ok;
	int64_t	 at;		/* bp_mono_us() of the last record; 0: none yet */
	char	 msg[MSG_MAX];
};

static void
on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int
bp_worker_stopping(void)
{
	return stop_flag != 0;
}

static void
usage(const char *name)
{
	fprintf(stderr, "usage: %s --once [--wait SECONDS] [-c CONFIG] [-v]\n"
	    "       %s --for SECONDS [--interval MS] [-c CONFIG] [-v]\n"
	    "       %s --loop [--interval MS] [-c CONFIG] [-v]\n"
	    "CONFIG defaults to $BLOCKPORT_CONFIG; see docs/indexer.md\n", name, name, name);
}

/* Returns 0, or -1 after printing why. */
static int
parse_opts(const char *name, int argc, char *argv[], struct opts *o)
{
	int i;

	memset(o, 0, sizeof(*o));
	o->interval_ms = DEFAULT_INTERVAL_MS;
	o->wait_s = DEFAULT_WAIT_S;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		enum mode m = MODE_NONE;

		if (strcmp(a, "--once") == 0)
			m = MODE_ONCE;
		else if (strcmp(a, "--loop") == 0)
			m = MODE_LOOP;
		else if (strcmp(a, "--for") == 0) {
			if (v == NULL || bp_parse_int64(v, 1, INT64_C(31536000), &o->seconds) == -1) {
				fprintf(stderr, "%s: --for takes a number of seconds\n", name);
				return -1;
			}
			m = MODE_FOR;
			i++;
		} else if (strcmp(a, "--interval") == 0) {
			if (v == NULL || bp_parse_int64(v, 0, 3600000, &o->interval_ms) == -1) {
				fprintf(stderr, "%s: --interval takes milliseconds (0-3600000)\n", name);
				return -1;
			}
			i++;
			continue;
		} else if (strcmp(a, "--wait") == 0) {
			if (v == NULL || bp_parse_int64(v, 0, 86400, &o->wait_s) == -1) {
				fprintf(stderr, "%s: --wait takes seconds (0-86400)\n", name);
				return -1;
			}
			i++;
			continue;
		} else if (strcmp(a, "-c") == 0) {
			if (v == NULL) {
				fprintf(stderr, "%s: -c takes the config file\n", name);
				return -1;
			}
			o->config = v;
			i++;
			continue;
		} else if (strcmp(a, "-v") == 0) {
			o->verbose = 1;
			continue;
		} else {
			fprintf(stderr, "%s: unknown argument '%s'\n", name, a);
			return -1;
		}
		if (o->mode != MODE_NONE) {
			fprintf(stderr, "%s: give one of --once, --for, --loop\n", name);
			return -1;
		}
		o->mode = m;
	}
	if (o->mode == MODE_NONE) {
		fprintf(stderr, "%s: give one of --once, --for, --loop\n", name);
		return -1;
	}
	return 0;
}

/* Opens (creating) DATABASE.NAME.SUFFIX; the descriptor or -1 after logging why. */
static int
lock_open(const struct bp_config *cfg, const char *name, const char *suffix)
{
	char path[4200];
	int fd;

	if (snprintf(path, sizeof(path), "%s.%s.%s", cfg->database, name, suffix) >=
	    (int)sizeof(path)) {
		bp_err("%s: lock file path too long", __func__);
		return -1;
	}
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) == -1)
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
	return fd;
}

static void
sleep_ms(int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	/* A signal cuts the sleep short (no SA_RESTART); the caller checks the flag. */
	nanosleep(&ts, NULL);
}

/*
 * Takes the exclusive lock on fd, trying until deadline (monotonic microseconds; 0 = one try).
 * Returns 0 when held, 1 when another process holds it past the deadline or a signal came,
 * -1 on an error (logged).
 */
static int
lock_take(int fd, int64_t deadline)
{
	for (;;) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR) {
			bp_err("%s: flock: %s", __func__, strerror(errno));
			return -1;
		}
		if (stop_flag || bp_mono_us() >= deadline)
			return 1;
		sleep_ms(LOCK_POLL_MS);
	}
}

static void
record_start(struct bp_worker_ctx *w)
{
	static const char sql[] = "INSERT INTO worker_runs (name, started_at, finished_at, ok,"
	    " message) VALUES (?, ?, NULL, 0, 'running') ON CONFLICT(name) DO UPDATE SET"
	    " started_at = excluded.started_at, finished_at = NULL, ok = 0,"
	    " message = excluded.message";
	struct bp_stmt *st = bp_db_stmt(w->db, sql);

	if (st == NULL)
		return;
	bp_stmt_text(st, 1, w->name);
	bp_stmt_int(st, 2, (int64_t)time(NULL));
	if (bp_stmt_step(st) != BP_DB_DONE)
		bp_warn("%s: cannot record the start of a pass", __func__);
	bp_stmt_reset(st);
}

/* The end of a pass that began at started (Unix seconds), in one statement. */
static void
record_end(struct bp_worker_ctx *w, int64_t started, int ok, const char *msg)
{
	static const char sql[] = "INSERT INTO worker_runs (name, started_at, finished_at, ok,"
	    " message) VALUES (?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET"
	    " started_at = excluded.started_at, finished_at = excluded.finished_at,"
	    " ok = excluded.ok, message = excluded.message";
	struct bp_stmt *st = bp_db_stmt(w->db, sql);

	if (st == NULL)
		return;
	bp_stmt_text(st, 1, w->name);
	bp_stmt_int(st, 2, started);
	bp_stmt_int(st, 3, (int64_t)time(NULL));
	bp_stmt_int(st, 4, ok);
	bp_stmt_text(st, 5, msg);
	if (bp_stmt_step(st) != BP_DB_DONE)
		bp_warn("%s: cannot record the end of a pass", __func__);
	bp_stmt_reset(st);
}

/* Whether a quiet run records this outcome: it changed, or the last record is old. */
static int
record_due(const struct recorded *rec, int ok, const char *msg)
{
	return !rec->quiet || rec->at == 0 || rec->ok != ok || strcmp(rec->msg, msg) != 0 ||
	    bp_mono_us() - rec->at >= RECORD_EVERY_S * INT64_C(1000000);
}

/*
 * One pass under the pass lock. Returns the pass's result, or 2 when the lock was not had by
 * lock_deadline (busy, or a signal came while waiting).
 */
static int
run_pass(const struct bp_worker_def *def, struct bp_worker_ctx *w, int lockfd,
    int64_t lock_deadline, struct recorded *rec)
{
	char msg[MSG_MAX];
	const char *said;
	int64_t started = (int64_t)time(NULL);
	int r;

	if ((r = lock_take(lockfd, lock_deadline)) != 0)
		return r == 1 ? 2 : BP_WORKER_FAILED;
	if (!rec->quiet)
		record_start(w);
	msg[0] = '\0';
	w->failed = 0;
	r = def->pass(w, msg, sizeof(msg));
	if (r != BP_WORKER_FAILED && r != BP_WORKER_IDLE && r != BP_WORKER_MORE)
		r = BP_WORKER_FAILED;
	if (r == BP_WORKER_FAILED)
		w->failed = 1;
	said = msg[0] ? msg : w->failed ? "failed" : "ok";
	if (record_due(rec, !w->failed, said)) {
		record_end(w, started, !w->failed, said);
		rec->ok = !w->failed;
		rec->at = bp_mono_us();
		bp_strlcpy(rec->msg, said, sizeof(rec->msg));
	}
	flock(lockfd, LOCK_UN);
	/* A pass that failed in part said why where it happened; its retries stay quiet. */
	if (r == BP_WORKER_FAILED)
		bp_err("pass failed: %s", msg[0] ? msg : "(no message)");
	else
		bp_log(BP_LOG_DEBUG, "pass %s: %s", r == BP_WORKER_MORE ? "more" : "idle", msg);
	return r;
}

static int
run(const struct bp_worker_def *def, struct bp_worker_ctx *w, const struct opts *o)
{
	int64_t start = bp_mono_us(), end, backoff = 0;
	int lockfd = -1, runfd = -1, rc = 1, r, failed = 0, once_failed = 0;
	struct recorded rec;

	memset(&rec, 0, sizeof(rec));
	rec.quiet = o->mode != MODE_ONCE;

	if ((lockfd = lock_open(w->cfg, def->name, "lock")) == -1)
		goto out;
	if (o->mode == MODE_ONCE) {
		for (;;) {
			r = run_pass(def, w, lockfd, bp_mono_us() + o->wait_s * 1000000, &rec);
			if (r == 2) {
				if (stop_flag) {
					rc = 0;
					goto out;
				}
				fprintf(stderr, "%s: busy: another copy holds %s.%s.lock\n",
				    def->name, w->cfg->database, def->name);
				rc = EXIT_BUSY;
				goto out;
			}
			if (r == BP_WORKER_FAILED)
				goto out;
			once_failed |= w->failed;
			if (r == BP_WORKER_IDLE || stop_flag)
				break;
		}
		rc = once_failed ? 1 : 0;
		goto out;
	}
	if ((runfd = lock_open(w->cfg, def->name, "run.lock")) == -1)
		goto out;
	if ((r = lock_take(runfd, 0)) != 0) {
		if (r == 1) {
			bp_info("busy: another copy runs (%s.%s.run.lock); exiting",
			    w->cfg->database, def->name);
			rc = 0;
		}
		goto out;
	}
	end = o->mode == MODE_FOR ? start + o->seconds * 1000000 : INT64_MAX;
	while (!stop_flag && bp_mono_us() < end) {
		int64_t wait_ms;

		r = run_pass(def, w, lockfd, end, &rec);
		if (r == 2)
			continue;	/* the deadline or a signal: the loop condition decides */
		failed = w->failed;
		if (r == BP_WORKER_MORE) {
			backoff = 0;
			continue;
		}
		if (r == BP_WORKER_FAILED) {
			/* Back off on repeated failures (an upstream that is down), up to 30 s. */
			backoff = backoff == 0 ? (o->interval_ms > 0 ? o->interval_ms : 100) :
			    backoff * 2;
			if (backoff > MAX_BACKOFF_MS)
				backoff = MAX_BACKOFF_MS;
			wait_ms = backoff;
		} else {
			backoff = 0;
			wait_ms = o->interval_ms;
		}
		if (end != INT64_MAX && wait_ms > (end - bp_mono_us()) / 1000)
			wait_ms = (end - bp_mono_us()) / 1000;
		sleep_ms(wait_ms);
	}
	rc = failed ? 1 : 0;
out:
	if (runfd != -1)
		close(runfd);
	if (lockfd != -1)
		close(lockfd);
	return rc;
}

int
bp_worker_main(const struct bp_worker_def *def, int argc, char *argv[])
{
	struct bp_worker_ctx w;
	struct sigaction sa;
	struct opts o;
	char err[512];
	int rc = 1, inited = 0;

	memset(&w, 0, sizeof(w));
	w.name = def->name;
	bp_log_init(def->name);
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(def->name);
		return 0;
	}
	if (parse_opts(def->name, argc, argv, &o) == -1) {
		usage(def->name);
		return 2;
	}
	if (o.verbose)
		bp_log_set_level(BP_LOG_DEBUG);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if ((w.cfg = bp_config_load(o.config, err, sizeof(err))) == NULL) {
		bp_err("config: %s", err);
		goto out;
	}
	if ((w.db = bp_db_open(w.cfg->database, 0)) == NULL)
		goto out;
	if (def->init != NULL && def->init(&w) == -1)
		goto out;
	inited = 1;
	rc = run(def, &w, &o);
out:
	if (inited && def->fini != NULL)
		def->fini(&w);
	bp_db_close(w.db);
	bp_config_free((struct bp_config *)w.cfg);
	return rc;
}

/* The caller's callback of bp_worker_each_run, for run_row. */
struct each_run {
	int	(*fn)(const struct bp_worker_run *, void *);
	void	*arg;
};

static int
run_row(struct bp_stmt *st, void *arg)
{
	const struct each_run *e = arg;
	struct bp_worker_run r;

	r.name = bp_col_text(st, 0);
	r.started_at = bp_col_int(st, 1);
	r.running = bp_col_is_null(st, 2);
	r.ok = bp_col_int(st, 3) != 0;
	r.message = bp_col_text(st, 4);
	return e->fn(&r, e->arg);
}

int
bp_worker_each_run(struct bp_db *db, int (*fn)(const struct bp_worker_run *, void *), void *arg)
{
	static const char sql[] = "SELECT name, started_at, finished_at, ok, message"
	    " FROM worker_runs ORDER BY name";
	struct each_run e = { fn, arg };
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	return bp_stmt_each(st, run_row, &e);
}

int
bp_worker_metrics(struct bp_db *db, const struct bp_config *cfg, struct bp_buf *out)
{
	(void)cfg;
	if (bp_metrics_query(db, out, "blockport_worker_last_run_timestamp_seconds", "gauge",
	    "Unix time of each worker's last pass: its end, or its start while it runs.",
	    "worker", "SELECT name, COALESCE(finished_at, started_at) FROM worker_runs"
	    " ORDER BY name") == -1)
		return -1;
	return bp_metrics_query(db, out, "blockport_worker_last_run_ok", "gauge",
	    "1 when the worker's last finished pass succeeded, else 0.", "worker",
	    "SELECT name, ok FROM worker_runs WHERE finished_at IS NOT NULL ORDER BY name");
}
