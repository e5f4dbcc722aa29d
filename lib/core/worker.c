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
#include "db_wake.h"
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
#define LEASE_NETWORK		"*"	/* every network the program serves */
/* run_pass's own outcomes beside a pass's results (enum bp_worker_result): none of theirs. */
#define PASS_BUSY		100	/* the pass lock not had by its deadline */
#define PASS_STANDBY		101	/* another worker holds the lease */

/* The lease of this job across the heads (docs/scale.md, "One worker per job"). */
struct lease {
	const char	*job;
	char		 holder[160];	/* host:pid:random */
	int64_t		 epoch;		/* the fencing number while held */
	int64_t		 renewed;	/* wall ms of the last renewal; 0: not held */
	int		 force;		/* SQLite, no other copy of the box runs: a holder is dead */
	char		 other[160];	/* the holder last seen, when not us */
};

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

static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/*
 * Opens (creating) PREFIX.NAME.SUFFIX, a head's own file (bp_config_state_path: beside a SQLite
 * database); the descriptor or -1 after logging why.
 */
static int
lock_open(const struct bp_config *cfg, const char *name, const char *suffix)
{
	char path[4200], sfx[160];
	int fd;

	if (snprintf(sfx, sizeof(sfx), ".%s.%s", name, suffix) >= (int)sizeof(sfx) ||
	    bp_config_state_path(cfg, sfx, path, sizeof(path)) == -1) {
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

/*
 * The fence of every write transaction of a holder (bp_db_set_fence): still the holder with
 * its epoch, checked and renewed by an UPDATE inside the transaction. On PostgreSQL the UPDATE
 * locks the row, so a takeover's upsert waits for this commit and then finds the lease renewed;
 * on SQLite the transaction holds the only write lock. 0, or -1: the lease was lost.
 */
static int
lease_fence(struct bp_db *db, void *arg)
{
	static const char sql[] = "UPDATE worker_leases SET expires_at = ? WHERE job = ? AND"
	    " network = '" LEASE_NETWORK "' AND holder = ? AND epoch = ?";
	struct lease *l = arg;
	struct bp_stmt *st = bp_db_stmt(db, sql);
	int64_t now = wall_ms();

	if (st == NULL)
		return -1;
	bp_stmt_int(st, 1, now + BP_WORKER_LEASE_TTL_MS);
	bp_stmt_text(st, 2, l->job);
	bp_stmt_text(st, 3, l->holder);
	bp_stmt_int(st, 4, l->epoch);
	if (bp_stmt_run(st) == -1)
		return -1;
	if (bp_db_changes(db) != 1) {
		bp_warn("lost the lease (epoch %lld) to another worker: writing nothing more",
		    (long long)l->epoch);
		l->renewed = 0;
		return -1;
	}
	l->renewed = now;
	return 0;
}

/*
 * Takes or renews the lease in one conditional upsert: free, expired, ours, or (force) left
 * by a dead copy of this head. A takeover raises the epoch. 1 held (fence set), 0 held by
 * another (l->other says who), -1 on a database error.
 */
static int
lease_take(struct bp_db *db, struct lease *l)
{
	static const char sql[] = "INSERT INTO worker_leases (job, network, holder, epoch,"
	    " expires_at) VALUES (?1, '" LEASE_NETWORK "', ?2, 1, ?3) ON CONFLICT (job, network)"
	    " DO UPDATE SET epoch = CASE WHEN worker_leases.holder = excluded.holder THEN"
	    " worker_leases.epoch ELSE worker_leases.epoch + 1 END, holder = excluded.holder,"
	    " expires_at = excluded.expires_at WHERE worker_leases.holder = excluded.holder OR"
	    " worker_leases.expires_at < ?4 OR ?5 = 1 RETURNING epoch";
	static const char sql_who[] = "SELECT holder FROM worker_leases WHERE job = ? AND"
	    " network = '" LEASE_NETWORK "'";
	struct bp_stmt *st = bp_db_stmt(db, sql);
	int64_t now = wall_ms(), epoch = 0;
	enum bp_db_step r;

	if (st == NULL)
		return -1;
	bp_stmt_text(st, 1, l->job);
	bp_stmt_text(st, 2, l->holder);
	bp_stmt_int(st, 3, now + BP_WORKER_LEASE_TTL_MS);
	bp_stmt_int(st, 4, now);
	bp_stmt_int(st, 5, l->force);
	if ((r = bp_stmt_step(st)) == BP_DB_ROW)
		epoch = bp_col_int(st, 0);
	bp_stmt_reset(st);
	if (r == BP_DB_ERROR)
		return -1;
	if (epoch > 0) {
		if (l->renewed == 0)
			bp_info("took the lease, epoch %lld", (long long)epoch);
		l->epoch = epoch;
		l->renewed = now;
		l->other[0] = '\0';
		bp_db_set_fence(db, lease_fence, l);
		return 1;
	}
	if (l->renewed != 0)
		bp_warn("lost the lease (epoch %lld)", (long long)l->epoch);
	l->renewed = 0;
	bp_db_set_fence(db, NULL, NULL);
	if ((st = bp_db_stmt(db, sql_who)) == NULL)
		return -1;
	bp_stmt_text(st, 1, l->job);
	if (bp_stmt_step(st) == BP_DB_ROW &&
	    strcmp(l->other, bp_col_text(st, 0)) != 0) {
		bp_strlcpy(l->other, bp_col_text(st, 0), sizeof(l->other));
		bp_info("standby: %s holds the lease", l->other);
	}
	bp_stmt_reset(st);
	return 0;
}

/* Gives the lease up (a clean exit): the next worker takes it at once, with a new epoch. */
static void
lease_release(struct bp_db *db, struct lease *l)
{
	static const char sql[] = "UPDATE worker_leases SET expires_at = 0 WHERE job = ? AND"
	    " network = '" LEASE_NETWORK "' AND holder = ?";
	struct bp_stmt *st;

	bp_db_set_fence(db, NULL, NULL);
	if (l->renewed == 0 || (st = bp_db_stmt(db, sql)) == NULL)
		return;
	bp_stmt_text(st, 1, l->job);
	bp_stmt_text(st, 2, l->holder);
	(void)bp_stmt_run(st);
	l->renewed = 0;
}

/*
 * Whether a --once copy may work without the lease: its holder is this head's long-running
 * copy (its run lock file names it), which waits for the pass lock that --once holds.
 */
static int
lease_held_here(const struct bp_config *cfg, const char *name, const struct lease *l)
{
	char buf[sizeof(l->other)];
	ssize_t n;
	int fd;

	if (l->other[0] == '\0' || (fd = lock_open(cfg, name, "run.lock")) == -1)
		return 0;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strcmp(buf, l->other) == 0;
}

/* Whether no long-running copy of this head holds its run lock. */
static int
run_lock_free(const struct bp_config *cfg, const char *name)
{
	int fd, free_;

	if ((fd = lock_open(cfg, name, "run.lock")) == -1)
		return 0;
	free_ = flock(fd, LOCK_SH | LOCK_NB) == 0;
	close(fd);
	return free_;
}

/* The lease before a pass: 1 go on, 0 another worker holds it, -1 database error. */
static int
lease_check(struct bp_worker_ctx *w, struct lease *l, int once)
{
	int r;

	if (l->renewed != 0 && wall_ms() - l->renewed < BP_WORKER_LEASE_RENEW_MS)
		return 1;
	/*
	 * SQLite, --once: with the pass lock held and no long-running copy, no live worker of
	 * this box can hold the lease: one a kill -9 left is taken at once.
	 */
	if (once && !bp_db_is_url(w->cfg->database))
		l->force = run_lock_free(w->cfg, w->name);
	if ((r = lease_take(w->db, l)) != 0)
		return r;
	return once && lease_held_here(w->cfg, w->name, l) ? 1 : 0;
}

/* This worker's name in the lease: host:pid:random. 0 or -1. */
static int
lease_init(struct lease *l, const char *job, int force)
{
	char host[64];
	unsigned char rnd[4];

	memset(l, 0, sizeof(*l));
	l->job = job;
	l->force = force;
	if (gethostname(host, sizeof(host)) == -1)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (bp_random(rnd, sizeof(rnd)) == -1)
		return -1;
	snprintf(l->holder, sizeof(l->holder), "%s:%ld:%02x%02x%02x%02x", host, (long)getpid(),
	    rnd[0], rnd[1], rnd[2], rnd[3]);
	return 0;
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
 * One pass under the pass lock and the lease. Returns the pass's result, PASS_BUSY when the
 * lock was not had by lock_deadline (busy, or a signal came while waiting), PASS_STANDBY when
 * another worker holds the lease (standby).
 */
static int
run_pass(const struct bp_worker_def *def, struct bp_worker_ctx *w, int lockfd,
    int64_t lock_deadline, struct recorded *rec, struct lease *l, int once)
{
	char msg[MSG_MAX];
	const char *said;
	int64_t started = (int64_t)time(NULL);
	int r;

	if ((r = lock_take(lockfd, lock_deadline)) != 0)
		return r == 1 ? PASS_BUSY : BP_WORKER_FAILED;
	if ((r = lease_check(w, l, once)) != 1) {
		flock(lockfd, LOCK_UN);
		return r == 0 ? PASS_STANDBY : BP_WORKER_FAILED;
	}
	if (!rec->quiet)
		record_start(w);
	msg[0] = '\0';
	w->failed = 0;
	r = def->pass(w, msg, sizeof(msg));
	if (r != BP_WORKER_FAILED && r != BP_WORKER_IDLE && r != BP_WORKER_MORE &&
	    r != BP_WORKER_SOON)
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
		bp_log(BP_LOG_DEBUG, "pass %s: %s", r == BP_WORKER_MORE ? "more" :
		    r == BP_WORKER_SOON ? "soon" : "idle", msg);
	return r;
}

/* A listener of the comma-separated channels; NULL when one of them cannot be heard. */
static struct bp_db_wake *
wake_open(const char *database, const char *channels)
{
	struct bp_db_wake *wk;
	const char *c;
	char one[32];
	size_t n;

	if ((wk = bp_db_wake_open(database)) == NULL)
		return NULL;
	for (c = channels; *c != '\0'; c += n + (c[n] == ',')) {
		if ((n = strcspn(c, ",")) == 0)
			continue;
		if (n >= sizeof(one)) {
			bp_db_wake_close(wk);
			return NULL;
		}
		memcpy(one, c, n);
		one[n] = '\0';
		if (bp_db_wake_listen(wk, one) == -1) {
			bp_db_wake_close(wk);
			return NULL;
		}
	}
	return wk;
}

static int
run(const struct bp_worker_def *def, struct bp_worker_ctx *w, const struct opts *o)
{
	int64_t start = bp_mono_us(), end, backoff = 0, soon = 0;
	int lockfd = -1, runfd = -1, rc = 1, r, failed = 0, once_failed = 0;
	struct recorded rec;
	struct lease l;
	struct bp_db_wake *wk = NULL;

	memset(&rec, 0, sizeof(rec));
	rec.quiet = o->mode != MODE_ONCE;
	/* On SQLite one box runs it all: whoever holds the run lock may take a lease left over. */
	if (lease_init(&l, def->name, o->mode != MODE_ONCE && !bp_db_is_url(w->cfg->database)) ==
	    -1 || (lockfd = lock_open(w->cfg, def->name, "lock")) == -1)
		goto out;
	if (o->mode == MODE_ONCE) {
		end = start + o->wait_s * 1000000;
		for (;;) {
			r = run_pass(def, w, lockfd, bp_mono_us() + o->wait_s * 1000000, &rec, &l,
			    1);
			if (r == PASS_STANDBY && !stop_flag && bp_mono_us() < end) {
				sleep_ms(BP_WORKER_STANDBY_MS);
				continue;
			}
			if (r == PASS_STANDBY) {
				if (stop_flag) {
					rc = 0;
					goto out;
				}
				fprintf(stderr, "%s: busy: %s holds the lease\n", def->name, l.other);
				rc = EXIT_BUSY;
				goto out;
			}
			if (r == PASS_BUSY) {
				if (stop_flag) {
					rc = 0;
					goto out;
				}
				fprintf(stderr, "%s: busy: another copy holds its pass lock\n",
				    def->name);
				rc = EXIT_BUSY;
				goto out;
			}
			if (r == BP_WORKER_FAILED)
				goto out;
			once_failed |= w->failed;
			/* In flight (SOON) is idle here: --once never waits for a chain. */
			if (r == BP_WORKER_IDLE || r == BP_WORKER_SOON || stop_flag)
				break;
		}
		rc = once_failed ? 1 : 0;
		goto out;
	}
	if ((runfd = lock_open(w->cfg, def->name, "run.lock")) == -1)
		goto out;
	if ((r = lock_take(runfd, 0)) != 0) {
		if (r == 1) {
			bp_info("busy: another copy runs (its run.lock); exiting");
			rc = 0;
		}
		goto out;
	}
	/* The run lock names this copy, for a --once of this head (lease_held_here). */
	if (ftruncate(runfd, 0) == -1 || pwrite(runfd, l.holder, strlen(l.holder), 0) == -1)
		bp_warn("cannot name this copy in its run lock: %s", strerror(errno));
	/* Without a listener the idle wait is the interval alone. */
	if (def->wake != NULL)
		wk = wake_open(w->cfg->database, def->wake);
	end = o->mode == MODE_FOR ? start + o->seconds * 1000000 : INT64_MAX;
	while (!stop_flag && bp_mono_us() < end) {
		int64_t wait_ms;

		r = run_pass(def, w, lockfd, end, &rec, &l, 0);
		if (r == PASS_BUSY)
			continue;	/* the deadline or a signal: the loop condition decides */
		if (r == PASS_STANDBY) {
			/* Standby: another head works; try again every second of the run. */
			wait_ms = BP_WORKER_STANDBY_MS;
			if (end != INT64_MAX && wait_ms > (end - bp_mono_us()) / 1000)
				wait_ms = (end - bp_mono_us()) / 1000;
			sleep_ms(wait_ms);
			continue;
		}
		failed = w->failed;
		if (r == BP_WORKER_MORE) {
			backoff = soon = 0;
			continue;
		}
		if (r == BP_WORKER_SOON) {
			/*
			 * What was sent lands on its own time: on a devchain in milliseconds, on a
			 * chain of 12 s blocks in seconds. Doubling from 10 ms finds the first at
			 * once and asks no more often than --interval for the second.
			 */
			backoff = 0;
			soon = soon == 0 ? BP_WORKER_SOON_MS : soon * 2;
			if (soon > o->interval_ms)
				soon = o->interval_ms;
			wait_ms = soon;
		} else if (r == BP_WORKER_FAILED) {
			/* Back off on repeated failures (an upstream that is down), up to 30 s. */
			backoff = backoff == 0 ? (o->interval_ms > 0 ? o->interval_ms : 100) :
			    backoff * 2;
			if (backoff > MAX_BACKOFF_MS)
				backoff = MAX_BACKOFF_MS;
			wait_ms = backoff;
		} else {
			backoff = soon = 0;
			wait_ms = o->interval_ms;
		}
		if (end != INT64_MAX && wait_ms > (end - bp_mono_us()) / 1000)
			wait_ms = (end - bp_mono_us()) / 1000;
		if (wk != NULL && backoff == 0 && wait_ms > 0)
			(void)bp_db_wake_wait(wk, (int)wait_ms);
		else
			sleep_ms(wait_ms);
	}
	rc = failed ? 1 : 0;
out:
	bp_db_wake_close(wk);
	lease_release(w->db, &l);
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

/* The caller's callback of bp_worker_each_lease, for lease_row. */
struct each_lease {
	int	(*fn)(const struct bp_worker_lease *, void *);
	void	*arg;
};

static int
lease_row(struct bp_stmt *st, void *arg)
{
	const struct each_lease *e = arg;
	struct bp_worker_lease l;

	l.job = bp_col_text(st, 0);
	l.network = bp_col_text(st, 1);
	l.holder = bp_col_text(st, 2);
	l.epoch = bp_col_int(st, 3);
	l.expires_at = bp_col_int(st, 4);
	return e->fn(&l, e->arg);
}

int
bp_worker_each_lease(struct bp_db *db, int (*fn)(const struct bp_worker_lease *, void *),
    void *arg)
{
	static const char sql[] = "SELECT job, network, holder, epoch, expires_at"
	    " FROM worker_leases ORDER BY job, network";
	struct each_lease e = { fn, arg };
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	return bp_stmt_each(st, lease_row, &e);
}
