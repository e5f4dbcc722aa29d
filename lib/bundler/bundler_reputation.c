/*
 * ERC-7562's reputation and the bundling mode, in the database (bundler_reputation.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "bundler_reputation.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/abi.h"

#define HOURS_MAX	(24 * 90)	/* decay steps applied at once: the counts are long gone by then */

static const char *const status_names[BP_BUNDLER_REPUTATION__MAX] = {
	"ok",		/* 0 */
	"throttled",	/* 1 */
	"banned",	/* 2 */
};

const char *
bp_bundler_reputation_status_name(enum bp_bundler_reputation_status s)
{
	return (unsigned)s < BP_BUNDLER_REPUTATION__MAX ? status_names[s] : "unknown";
}

enum bp_bundler_reputation_status
bp_bundler_reputation_status_of(int64_t seen, int64_t included)
{
	int64_t expected = seen / BP_BUNDLER_REPUTATION_MIN_INCLUSION_DENOMINATOR;

	if (expected <= included + BP_BUNDLER_REPUTATION_THROTTLING_SLACK)
		return BP_BUNDLER_REPUTATION_OK;
	if (expected <= included + BP_BUNDLER_REPUTATION_BAN_SLACK)
		return BP_BUNDLER_REPUTATION_THROTTLED;
	return BP_BUNDLER_REPUTATION_BANNED;
}

void
bp_bundler_reputation_decay(int64_t *seen, int64_t *included, int64_t hours)
{
	int64_t h;

	for (h = 0; h < hours && h < HOURS_MAX && (*seen > 0 || *included > 0); h++) {
		*seen -= *seen / BP_BUNDLER_REPUTATION_DECAY_DIVISOR;
		*included -= *included / BP_BUNDLER_REPUTATION_DECAY_DIVISOR;
	}
}

int
bp_bundler_reputation_cap(const struct bp_bundler_reputation_entry *e, int staked)
{
	int64_t bonus;

	if (e->status == BP_BUNDLER_REPUTATION_BANNED)
		return -1;
	if (e->status == BP_BUNDLER_REPUTATION_THROTTLED)
		return BP_BUNDLER_REPUTATION_THROTTLED_ENTITY_MEMPOOL_COUNT;
	if (staked)
		return 0;
	/* SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT + inclusionRate * INCLUSION_RATE_FACTOR + min(included, 10000) */
	bonus = e->ops_included < 10000 ? e->ops_included : 10000;
	if (e->ops_seen > 0)
		bonus += e->ops_included * BP_BUNDLER_REPUTATION_INCLUSION_RATE_FACTOR / e->ops_seen;
	return BP_BUNDLER_REPUTATION_SAME_UNSTAKED_ENTITY_MEMPOOL_COUNT + (int)bonus;
}

/* Fills e from counts stored at hour, decayed to now. */
static void
entry(struct bp_bundler_reputation_entry *e, const char *address, int64_t seen, int64_t included,
    int64_t hour, int64_t now)
{
	memset(e, 0, sizeof(*e));
	bp_strlcpy(e->address, address, sizeof(e->address));
	bp_bundler_reputation_decay(&seen, &included, now / 3600 - hour);
	e->ops_seen = seen;
	e->ops_included = included;
	e->status = bp_bundler_reputation_status_of(seen, included);
}

int
bp_bundler_reputation_get(struct bp_db *db, const char *chain, const char *address, int64_t now,
    struct bp_bundler_reputation_entry *out)
{
	static const char sql[] = "SELECT ops_seen, ops_included, hour FROM bundler_reputation"
	    " WHERE chain = ? AND address = ?";
	struct bp_stmt *st;
	enum bp_db_step step;

	entry(out, address, 0, 0, now / 3600, now);
	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_text(st, 2, address) == -1)
		return -1;
	if ((step = bp_stmt_step(st)) == BP_DB_ROW)
		entry(out, address, bp_col_int(st, 0), bp_col_int(st, 1), bp_col_int(st, 2), now);
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : 0;
}

static int
put(struct bp_db *db, const char *chain, const char *address, int64_t seen, int64_t included,
    int64_t now)
{
	static const char sql[] = "INSERT INTO bundler_reputation (chain, address, ops_seen,"
	    " ops_included, hour, updated_at) VALUES (?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, address) DO UPDATE SET ops_seen = excluded.ops_seen,"
	    " ops_included = excluded.ops_included, hour = excluded.hour,"
	    " updated_at = excluded.updated_at";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_text(st, 2, address) == -1 || bp_stmt_int(st, 3, seen) == -1 ||
	    bp_stmt_int(st, 4, included) == -1 || bp_stmt_int(st, 5, now / 3600) == -1 ||
	    bp_stmt_int(st, 6, now) == -1)
		return -1;
	return bp_stmt_run(st);
}

int
bp_bundler_reputation_add(struct bp_db *db, const char *chain, const char *address, int64_t seen,
    int64_t included, int64_t now)
{
	struct bp_bundler_reputation_entry e;

	if (bp_db_begin(db) == -1)
		return -1;
	if (bp_bundler_reputation_get(db, chain, address, now, &e) == -1 ||
	    put(db, chain, address, e.ops_seen + seen, e.ops_included + included, now) == -1 ||
	    bp_db_commit(db) == -1) {
		bp_db_rollback(db);
		return -1;
	}
	return 0;
}

int
bp_bundler_reputation_set(struct bp_db *db, const char *chain, const char *address, int64_t seen,
    int64_t included, int64_t now)
{
	return put(db, chain, address, seen, included, now);
}

int
bp_bundler_reputation_crashed(struct bp_db *db, const char *chain, const char *address, int64_t now)
{
	return put(db, chain, address, BP_BUNDLER_REPUTATION_CRASH_SEEN, 0, now);
}

/* Word i of the log's hex data as an address ("0x" + 40) into out; 0, or -1. */
static int
data_addr(const cJSON *log, size_t i, char out[43])
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(log, "data");
	const char *s;

	if (!cJSON_IsString(d) || strlen(s = d->valuestring) < 2 + 64 * (i + 1))
		return -1;
	snprintf(out, 43, "0x%.40s", s + 2 + 64 * i + 24);
	return 0;
}

/* Topic i of the log, or NULL. */
static const char *
topic(const cJSON *log, int i)
{
	const cJSON *t = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(log, "topics"), i);

	return cJSON_IsString(t) && strlen(t->valuestring) == 66 ? t->valuestring : NULL;
}

/* Counts one inclusion of address unless it is none (the zero address). */
static int
included(struct bp_db *db, const char *chain, const char *address, int64_t now)
{
	size_t i;

	if (strlen(address) != 42)
		return 0;
	for (i = 2; i < 42; i++)
		if (address[i] != '0')
			break;
	if (i == 42)
		return 0;
	return bp_bundler_reputation_add(db, chain, address, 0, 1, now);
}

int
bp_bundler_reputation_included_logs(struct bp_db *db, const char *chain, const char *ep,
    const cJSON *logs, int64_t now)
{
	char ev_op[67], ev_deployed[67], a[43];
	const cJSON *l, *addr;
	const char *t0, *t3;
	uint8_t t[32];
	int rc = 0;

	bp_abi_event_topic("UserOperationEvent(bytes32,address,address,uint256,bool,uint256,"
	    "uint256)", t);
	bp_hex_encode(t, 32, ev_op, sizeof(ev_op));
	bp_abi_event_topic("AccountDeployed(bytes32,address,address,address)", t);
	bp_hex_encode(t, 32, ev_deployed, sizeof(ev_deployed));
	cJSON_ArrayForEach(l, logs) {
		addr = cJSON_GetObjectItemCaseSensitive(l, "address");
		if (!cJSON_IsString(addr) || strcasecmp(addr->valuestring, ep) != 0 ||
		    (t0 = topic(l, 0)) == NULL)
			continue;
		if (strcasecmp(t0, ev_op) == 0 && (t3 = topic(l, 3)) != NULL) {
			snprintf(a, sizeof(a), "0x%.40s", t3 + 26);
			rc |= included(db, chain, a, now);
		} else if (strcasecmp(t0, ev_deployed) == 0 && data_addr(l, 0, a) == 0)
			rc |= included(db, chain, a, now);
	}
	return rc == 0 ? 0 : -1;
}

int
bp_bundler_reputation_each(struct bp_db *db, const char *chain, int64_t now,
    int (*fn)(const struct bp_bundler_reputation_entry *, void *), void *arg)
{
	static const char sql[] = "SELECT address, ops_seen, ops_included, hour"
	    " FROM bundler_reputation WHERE chain = ? ORDER BY address LIMIT 10000";
	struct bp_bundler_reputation_entry e;
	struct bp_stmt *st;
	enum bp_db_step step;
	int n = 0, stop = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1)
		return -1;
	while (!stop && (step = bp_stmt_step(st)) == BP_DB_ROW) {
		entry(&e, bp_col_text(st, 0), bp_col_int(st, 1), bp_col_int(st, 2),
		    bp_col_int(st, 3), now);
		stop = fn(&e, arg);
		n++;
	}
	bp_stmt_reset(st);
	return !stop && step == BP_DB_ERROR ? -1 : n;
}

int
bp_bundler_reputation_clear(struct bp_db *db, const char *chain)
{
	static const char sql[] = "DELETE FROM bundler_reputation WHERE chain = ?";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1)
		return -1;
	return bp_stmt_run(st);
}

int
bp_bundler_reputation_manual(struct bp_db *db, const char *chain)
{
	static const char sql[] = "SELECT mode FROM bundler_modes WHERE chain = ?";
	struct bp_stmt *st;
	enum bp_db_step step;
	int rc = 0;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1)
		return -1;
	if ((step = bp_stmt_step(st)) == BP_DB_ROW)
		rc = strcmp(bp_col_text(st, 0), "manual") == 0;
	else if (step == BP_DB_ERROR)
		rc = -1;
	bp_stmt_reset(st);
	return rc;
}

int
bp_bundler_reputation_set_manual(struct bp_db *db, const char *chain, int manual)
{
	static const char sql[] = "INSERT INTO bundler_modes (chain, mode, updated_at)"
	    " VALUES (?, ?, ?) ON CONFLICT (chain) DO UPDATE SET mode = excluded.mode,"
	    " updated_at = excluded.updated_at";
	struct bp_stmt *st;

	if ((st = bp_db_stmt(db, sql)) == NULL || bp_stmt_text(st, 1, chain) == -1 ||
	    bp_stmt_text(st, 2, manual ? "manual" : "auto") == -1 ||
	    bp_stmt_int(st, 3, (int64_t)time(NULL)) == -1)
		return -1;
	return bp_stmt_run(st);
}
