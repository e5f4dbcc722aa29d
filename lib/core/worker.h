/*
 * The skeleton every cron/ program shares (docs/indexer.md, "Running"): command line, config,
 * database, locking, the loop of passes, signals, and the worker_runs record of each pass.
 *
 *   NAME --once [--wait SECONDS]        work until there is nothing left to do, then exit
 *   NAME --for SECONDS [--interval MS]  the cron mode: passes until SECONDS have gone by
 *   NAME --loop [--interval MS]         development: passes until SIGTERM or SIGINT
 *   common: [-c CONFIG] [-v]            (CONFIG defaults to $BLOCKPORT_CONFIG)
 *
 * Two flock(2) locks next to the database keep copies apart:
 *   DATABASE.NAME.lock      held during each pass, so passes of two copies never overlap;
 *   DATABASE.NAME.run.lock  held by --for and --loop for their whole run, so a second cron
 *                           copy (or a cron copy beside a --loop) exits at once, reporting
 *                           "busy", with status 0.
 * --once takes only the pass lock, waiting up to --wait seconds (default 30) for a running
 * copy to finish its pass; when it cannot get it, it says "busy" and exits with status 75
 * (EX_TEMPFAIL), so a script may retry. This is how a test runs a pass of its own while the
 * --loop copy of the stack keeps running.
 *
 * SIGTERM and SIGINT stop the program between passes: a pass that started finishes (its work is
 * bounded) and the program exits 0.
 */
#ifndef BP_WORKER_H
#define BP_WORKER_H

#include <stddef.h>
#include <stdint.h>

struct bp_config;
struct bp_db;

/*
 * The lease (docs/scale.md, "One worker per job"): a row of worker_leases per job that one
 * worker of all heads holds; others wait as standbys, trying every BP_WORKER_STANDBY_MS. A
 * holder renews it before a pass when it is BP_WORKER_LEASE_RENEW_MS old and in each of its
 * write transactions; a holder that died loses it BP_WORKER_LEASE_TTL_MS after its last renewal.
 */
#define BP_WORKER_LEASE_TTL_MS		6000
#define BP_WORKER_LEASE_RENEW_MS	1000
#define BP_WORKER_STANDBY_MS		1000

/* What a pass function returns. */
enum bp_worker_result {
	BP_WORKER_FAILED = -1,	/* the pass failed; message says why */
	BP_WORKER_IDLE = 0,	/* done: nothing more to do right now */
	BP_WORKER_MORE = 1,	/* more work is ready: run the next pass without waiting */
	/*
	 * Work is in flight elsewhere (a transaction sent, not yet mined): look again soon. The
	 * next pass waits BP_WORKER_SOON_MS, doubled at each SOON in a row up to --interval (a
	 * wake-up still ends the wait); --once takes it as IDLE and exits.
	 */
	BP_WORKER_SOON = 2,
};

#define BP_WORKER_SOON_MS		10

/* What a pass sees. The config and the database belong to the skeleton. */
struct bp_worker_ctx {
	const char		*name;		/* the worker's name, e.g. "indexer" */
	const struct bp_config	*cfg;
	struct bp_db		*db;
	void			*state;		/* the program's own, set by its init */
	/*
	 * Set by a pass that failed in part (one network of several): the pass is recorded as
	 * failed and --once exits 1 at the end, but the result it returns still decides when the
	 * next pass runs, so the healthy part does not wait behind the failing one. Cleared
	 * before each pass.
	 */
	int			 failed;
};

/* A worker program: its name and its three functions. */
struct bp_worker_def {
	const char	*name;
	/* Optional: sets up ctx->state once the config and database are open; 0 or -1. */
	int		(*init)(struct bp_worker_ctx *);
	/*
	 * One bounded unit of work. Writes a short summary (for worker_runs and `blockport
	 * status`) into msg, which holds msglen bytes. Returns an enum bp_worker_result.
	 */
	int		(*pass)(struct bp_worker_ctx *, char *msg, size_t msglen);
	/* Optional: frees ctx->state. */
	void		(*fini)(struct bp_worker_ctx *);
	/*
	 * Optional: wake-up channels (BP_DB_WAKE_*, db.h; several joined by commas) that end an
	 * idle wait of --for and --loop early, from any head (cron/deliver: a new block may make
	 * events final).
	 */
	const char	*wake;
};

/* Whether SIGTERM or SIGINT arrived: long passes may check it to stop early at a safe point. */
int	bp_worker_stopping(void);

/*
 * The whole program: parses argv, loads the config, opens the database (which must be migrated),
 * runs passes as the mode says, records each in worker_runs, and returns the exit status for
 * main: 0 when the last pass did not fail (or the worker was busy in --for/--loop mode), 1 on a
 * failure, 2 on a usage error, 75 when --once found the worker busy.
 */
int	bp_worker_main(const struct bp_worker_def *, int argc, char *argv[]);

/* A worker's last recorded pass (a row of worker_runs); strings valid during the call only. */
struct bp_worker_run {
	const char	*name;
	int64_t		 started_at;	/* Unix seconds */
	int		 running;	/* no end recorded yet */
	int		 ok;
	const char	*message;
};

/*
 * Calls fn for each worker's last recorded pass, in name order (`blockport status`); fn returns
 * 0 to go on, non-zero to stop. Returns the number of calls, or -1 on a database error.
 */
int	bp_worker_each_run(struct bp_db *, int (*fn)(const struct bp_worker_run *, void *),
	    void *arg);

struct bp_buf;
/* /metrics: each worker's last pass (a bp_metrics_source, lib/core/metrics.h). */
int	bp_worker_metrics(struct bp_db *, const struct bp_config *, struct bp_buf *);
/* A job's lease (a row of worker_leases); strings valid during the call only. */
struct bp_worker_lease {
	const char	*job;
	const char	*network;	/* "*": every network the job serves */
	const char	*holder;	/* host:pid:random */
	int64_t		 epoch;
	int64_t		 expires_at;	/* Unix ms; 0 after a clean release */
};

/*
 * Calls fn for each job's lease, in job order (`blockport status`); fn returns 0 to go on.
 * Returns the number of calls, or -1 on a database error.
 */
int	bp_worker_each_lease(struct bp_db *,
	    int (*fn)(const struct bp_worker_lease *, void *), void *arg);

#endif
