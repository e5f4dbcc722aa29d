-- 015: one worker per job across the heads of a cluster (docs/scale.md, "One worker per job").

-- Owner: lib/core/worker.c. The lease of a job (a cron/ program) on a network ('*': every
-- network the program serves, as the workers do today): its holder (host:pid:random), a fencing
-- epoch that grows at each takeover, and when it expires (Unix milliseconds of the holder's
-- clock). Taken or renewed by one conditional upsert; each write transaction of the holder
-- checks it (bp_db_set_fence), so a holder that lost it writes nothing more.
CREATE TABLE worker_leases (
	job		TEXT NOT NULL,
	network		TEXT NOT NULL,
	holder		TEXT NOT NULL,
	epoch		INTEGER NOT NULL,
	expires_at	INTEGER NOT NULL,
	PRIMARY KEY (job, network)
);
