/*
 * The record of sponsorships (policy.h): the row of each (gas_sponsorships, what a policy's
 * max_per_user_per_day and rate_limit count), the spend per policy and UTC day
 * (gas_policy_days, what GET /v1/gas/policies/{id} shows) and per budget and day
 * (gas_budget_days, what the plan's and [server]'s sponsor_usd_per_day bound), counted and
 * written in the one transaction that checks the limits (so parallel requests of any process
 * cannot both pass one), shared by the sponsorships a process has ready (db_batch.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/db_batch.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/address.h"
#include "policy.h"
#include "token/price.h"

#define BIT(r)		(1u << (r))
#define DAY		86400

/* A stored USD decimal as 10^-36 USD units; "" and NULL are 0. */
static int
usd_units(const char *s, struct bp_u256 *out)
{
	memset(out, 0, sizeof(*out));
	if (s[0] == '\0')
		return 0;
	return bp_u256_parse_units(out, s, strlen(s), BP_PRICE_USD_DECIMALS);
}

static void
usd_text(const struct bp_u256 *u, char out[BP_U256_UNITS_MAX])
{
	bp_u256_format_units(u, BP_PRICE_USD_DECIMALS, out, BP_U256_UNITS_MAX);
}

int
bp_policy_spend(struct bp_db *db, const char *id, struct bp_policy_spend *out)
{
	static const char sql[] = "SELECT day, count, usd FROM gas_policy_days WHERE policy_id = ?";
	struct bp_u256 today, total, u;
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t day = (int64_t)time(NULL) / DAY;

	memset(out, 0, sizeof(*out));
	memset(&today, 0, sizeof(today));
	memset(&total, 0, sizeof(total));
	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	/* One row per UTC day with sponsorships: the total is their exact sum. */
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		if (usd_units(bp_col_text(st, 2), &u) == -1 || bp_u256_add(&total, &total, &u) != 0)
			break;
		out->total_count += bp_col_int(st, 1);
		if (bp_col_int(st, 0) == day) {
			today = u;
			out->today_count = bp_col_int(st, 1);
		}
	}
	bp_stmt_reset(st);
	if (step != BP_DB_DONE)
		return -1;
	usd_text(&today, out->today_usd);
	usd_text(&total, out->total_usd);
	return 1;
}

/* One integer from sql with the bindings given; -1 on error. */
static int64_t
count_of(struct bp_db *db, const char *sql, const char *id, const char *text, int64_t v)
{
	struct bp_stmt *st;
	int64_t n = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	if (text != NULL)
		bp_stmt_text(st, 2, text);
	bp_stmt_int(st, text != NULL ? 3 : 2, v);
	if (bp_stmt_step(st) == BP_DB_ROW)
		n = bp_col_int(st, 0);
	bp_stmt_reset(st);
	return n;
}

/*
 * The day rows the sponsorships of this thread's transaction add to: the policy's
 * (gas_policy_days) and the budgets' (gas_budget_days, the account's and the server's). Every
 * sponsorship of a batch adds to the same few rows, so each is read once a transaction, summed
 * here and written once at its end (db_batch.h's tail: sums_start, sums_flush) instead of read
 * and written again by every sponsorship. A sponsorship adds to them only once it is recorded,
 * so one refused adds nothing; what the transaction did not commit is forgotten at the next
 * start. A batch holds at most 32 sponsorships of 3 rows each.
 */
#define SUMS_MAX	128

struct day_sum {
	char		 policy[BP_POLICY_ID_MAX];	/* the policy's row; "" a budget's */
	int64_t		 account_id;	/* a budget's row: its account, 0 the server */
	int64_t		 day;
	int64_t		 count;		/* sponsorships this transaction added (a policy's row) */
	struct bp_u256	 usd;		/* the row's sum, with those added */
	int		 dirty;		/* added to: flush writes it */
};

static _Thread_local struct {
	size_t		 n;
	struct day_sum	 s[SUMS_MAX];
} sums;

static void
sums_start(void)
{
	sums.n = 0;
}

/* The row of policy (or, policy NULL, of account_id's budget) on day, or NULL. */
static struct day_sum *
sum_find(const char *policy, int64_t account_id, int64_t day)
{
	size_t i;

	for (i = 0; i < sums.n; i++)
		if (sums.s[i].day == day && (policy != NULL ?
		    strcmp(sums.s[i].policy, policy) == 0 :
		    sums.s[i].policy[0] == '\0' && sums.s[i].account_id == account_id))
			return &sums.s[i];
	return NULL;
}

/* The row as first read in this transaction (stored: its usd column, NULL or "" for none). */
static struct day_sum *
sum_add(const char *policy, int64_t account_id, int64_t day, const char *stored)
{
	struct day_sum *d;

	if (sums.n == SUMS_MAX) {
		bp_err("%s: more than %d day rows in one transaction", __func__, SUMS_MAX);
		return NULL;
	}
	d = &sums.s[sums.n];
	memset(d, 0, sizeof(*d));
	if (policy != NULL)
		snprintf(d->policy, sizeof(d->policy), "%s", policy);
	d->account_id = account_id;
	d->day = day;
	if (usd_units(stored != NULL ? stored : "", &d->usd) == -1)
		return NULL;
	sums.n++;
	return d;
}

/* Writes a policy's day row: its sponsorships added, and its sum. 0 or -1. */
static int
day_write(struct bp_db *db, const struct day_sum *d)
{
	static const char sql[] = "INSERT INTO gas_policy_days (policy_id, day, count, usd)"
	    " VALUES (?, ?, ?, ?) ON CONFLICT (policy_id, day) DO UPDATE SET"
	    " count = gas_policy_days.count + excluded.count, usd = excluded.usd";
	struct bp_stmt *st;
	char text[BP_U256_UNITS_MAX];

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	usd_text(&d->usd, text);
	bp_stmt_text(st, 1, d->policy);
	bp_stmt_int(st, 2, d->day);
	bp_stmt_int(st, 3, d->count);
	bp_stmt_text(st, 4, text);
	return bp_stmt_run(st);
}

/*
 * Writes n (1 or 2) budgets' day rows in one upsert: a sponsorship's are the account's and
 * the server's, distinct rows, so PostgreSQL takes both in one statement. 0 or -1.
 */
static int
budgets_write(struct bp_db *db, struct day_sum *const d[2], int n)
{
	static const char *const sql[2] = {
		"INSERT INTO gas_budget_days (account_id, day, usd) VALUES (?, ?, ?)"
		" ON CONFLICT (account_id, day) DO UPDATE SET usd = excluded.usd",
		"INSERT INTO gas_budget_days (account_id, day, usd) VALUES (?, ?, ?), (?, ?, ?)"
		" ON CONFLICT (account_id, day) DO UPDATE SET usd = excluded.usd",
	};
	struct bp_stmt *st;
	char text[BP_U256_UNITS_MAX];
	int k;

	if ((st = bp_db_stmt(db, sql[n - 1])) == NULL)
		return -1;
	for (k = 0; k < n; k++) {
		usd_text(&d[k]->usd, text);
		bp_stmt_int(st, 3 * k + 1, d[k]->account_id);
		bp_stmt_int(st, 3 * k + 2, d[k]->day);
		bp_stmt_text(st, 3 * k + 3, text);
	}
	return bp_stmt_run(st);
}

/* Writes the rows added to: 0, or -1 (nothing of the transaction is kept). */
static int
sums_flush(struct bp_db *db)
{
	struct day_sum *d, *pair[2];
	size_t i;
	int np = 0;

	for (i = 0; i < sums.n; i++) {
		d = &sums.s[i];
		if (!d->dirty)
			continue;
		if (d->policy[0] != '\0') {
			if (day_write(db, d) == -1)
				return -1;
			continue;
		}
		pair[np++] = d;
		if (np == 2) {
			if (budgets_write(db, pair, 2) == -1)
				return -1;
			np = 0;
		}
	}
	return np == 0 ? 0 : budgets_write(db, pair, 1);
}

static const struct bp_db_batch_tail sums_tail = { sums_start, sums_flush };

/* The row of one sponsorship, inside the transaction. */
static int
record_row(struct bp_db *db, const struct bp_policy *p, const char *network,
    const char *sender, const uint8_t op_hash[32], const struct bp_u256 *usd, int64_t now)
{
	static const char sql_ins[] = "INSERT INTO gas_sponsorships (policy_id, network, sender,"
	    " user_op_hash, usd, day, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)";
	struct bp_stmt *st;
	char hash[67], u[BP_U256_UNITS_MAX];

	bp_hex_encode(op_hash, 32, hash, sizeof(hash));
	if (usd != NULL)
		usd_text(usd, u);
	if ((st = bp_db_stmt(db, sql_ins)) == NULL)
		return -1;
	bp_stmt_text(st, 1, p->id);
	bp_stmt_text(st, 2, network);
	bp_stmt_text(st, 3, sender);
	bp_stmt_text(st, 4, hash);
	bp_stmt_text(st, 5, usd != NULL ? u : NULL);
	bp_stmt_int(st, 6, now / DAY);
	bp_stmt_int(st, 7, now);
	return bp_stmt_run(st);
}

/*
 * The budgets' sums with usd added (the account's, the server's: sum, from rows), unless that
 * passes either cap (a decimal; "" or "0": no cap). 1 within them, 0 over (why set), -1 when
 * a sum overflows.
 */
static int
budget_check(const struct bp_policy_budget *b, const struct bp_u256 *usd,
    struct day_sum *const rows[2], struct bp_u256 sum[2], char *why, size_t cap)
{
	static const char *const what[2] = { "sponsor_usd_per_day (the plan's budget)",
	    "sponsor_usd_per_day (the server's budget)" };
	const char *caps[2] = { b->account_usd, b->server_usd };
	struct bp_u256 limit;
	int i, capped;

	for (i = 0; i < 2; i++) {
		sum[i] = rows[i]->usd;
		capped = caps[i] != NULL && usd_units(caps[i], &limit) == 0 &&
		    !bp_u256_is_zero(&limit);
		if (capped && usd == NULL) {
			snprintf(why, cap, "%s: the USD price of this chain's coin is not known, "
			    "so the cost cannot be counted", what[i]);
			return 0;
		}
		if (usd != NULL && bp_u256_add(&sum[i], &sum[i], usd) != 0)
			return -1;
		if (capped && bp_u256_cmp(&sum[i], &limit) > 0) {
			snprintf(why, cap, "%s: %s USD a day (UTC) would be passed", what[i],
			    caps[i]);
			return 0;
		}
	}
	return 1;
}

/* One sponsorship to count and record, for record_one in a batch. */
struct record {
	const struct bp_policy		*p;
	const char			*network;
	const char			*sender;	/* lower-case 0x address */
	const uint8_t			*op_hash;
	const struct bp_u256		*usd;
	const struct bp_policy_budget	*budget;
	char				*why;
	size_t				 cap;
	int				 rc;	/* bp_policy_record's answer */
};

/*
 * The policy (still active with the rules the op was checked against: paused meanwhile,
 * refused) and the day rows of the sponsorship (rows: the policy's, the account's budget's,
 * the server's), those this transaction has not read yet read in the same SELECT: statements
 * are this path's cost. BP_DB_BATCH_KEEP, BP_DB_BATCH_UNDO (the policy changed) or an error.
 */
static int
policy_and_days(struct bp_db *db, const struct record *a, int64_t day, struct day_sum *rows[3])
{
#define DAYS(t, k, v) ", (SELECT usd FROM " t " WHERE " k " = " v " AND day = ?2)"
#define SAME(b) "SELECT rules" b " FROM gas_policies WHERE id = ?1 AND status = 'active'"
	static const char *const sql_same[3] = { SAME(""), SAME(DAYS("gas_policy_days",
	    "policy_id", "?1")), SAME(DAYS("gas_policy_days", "policy_id", "?1")
	    DAYS("gas_budget_days", "account_id", "?3") DAYS("gas_budget_days", "account_id",
	    "0")) };
#undef SAME
#undef DAYS
	const struct bp_policy_budget *budget = a->budget;
	struct bp_stmt *st;
	enum bp_db_step step;
	unsigned char sha[32];
	int i, nrows = budget != NULL ? 3 : 1, read = 0, ok = 1;

	rows[0] = sum_find(a->p->id, 0, day);
	rows[1] = budget != NULL ? sum_find(NULL, budget->account_id, day) : NULL;
	rows[2] = budget != NULL ? sum_find(NULL, 0, day) : NULL;
	for (i = 0; i < nrows; i++)
		read |= rows[i] == NULL;
	if ((st = bp_db_stmt(db, sql_same[read ? (budget != NULL ? 2 : 1) : 0])) == NULL)
		return BP_DB_BATCH_ERROR;
	bp_stmt_text(st, 1, a->p->id);
	bp_stmt_int(st, 2, day);
	if (read && budget != NULL)
		bp_stmt_int(st, 3, budget->account_id);
	if ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		bp_sha256(bp_col_text(st, 0), strlen(bp_col_text(st, 0)), sha);
		for (i = 0; ok && read && i < nrows; i++)
			if (rows[i] == NULL)
				ok = (rows[i] = sum_add(i == 0 ? a->p->id : NULL, i == 1 ?
				    budget->account_id : 0, day, bp_col_text(st, 1 + i))) != NULL;
	}
	bp_stmt_reset(st);
	if (step == BP_DB_ERROR || !ok)
		return BP_DB_BATCH_ERROR;
	if (step == BP_DB_DONE || memcmp(sha, a->p->rules_sha, sizeof(sha)) != 0)
		return BP_DB_BATCH_UNDO;
	return BP_DB_BATCH_KEEP;
}

/* Inside the (batch's) transaction: the counts, the budgets and the row of one sponsorship. */
static int
record_one(struct bp_db *db, void *arg)
{
	static const char sql_user[] = "SELECT count(*) FROM gas_sponsorships"
	    " WHERE policy_id = ? AND sender = ? AND day = ?";
	static const char sql_rate[] = "SELECT count(*) FROM gas_sponsorships"
	    " WHERE policy_id = ? AND created_at > ?";
	struct record *a = arg;
	const struct bp_policy_rules *r = &a->p->rules;
	struct day_sum *rows[3];
	struct bp_u256 day, sum[2];	/* the policy's, the account's, the server's with it */
	int64_t now = (int64_t)time(NULL), n;
	int rc;

	a->rc = BP_RULE__MAX;
	if ((rc = policy_and_days(db, a, now / DAY, rows)) != BP_DB_BATCH_KEEP) {
		if (rc == BP_DB_BATCH_UNDO)
			a->rc = BP_POLICY_CHANGED;
		return rc;
	}
	if (r->has & BIT(BP_RULE_MAX_PER_USER_PER_DAY)) {
		if ((n = count_of(db, sql_user, a->p->id, a->sender, now / DAY)) < 0)
			return BP_DB_BATCH_ERROR;
		if (n >= r->max_per_user_per_day) {
			snprintf(a->why, a->cap, "max_per_user_per_day: %s already has %lld "
			    "sponsored operations today (UTC)", a->sender, (long long)n);
			a->rc = BP_RULE_MAX_PER_USER_PER_DAY;
			return BP_DB_BATCH_UNDO;
		}
	}
	if (r->has & BIT(BP_RULE_RATE_LIMIT)) {
		if ((n = count_of(db, sql_rate, a->p->id, NULL, now - r->rate_period)) < 0)
			return BP_DB_BATCH_ERROR;
		if (n >= r->rate_count) {
			snprintf(a->why, a->cap, "rate_limit: the policy sponsored %lld operations "
			    "in the last %lld seconds", (long long)n, (long long)r->rate_period);
			a->rc = BP_RULE_RATE_LIMIT;
			return BP_DB_BATCH_UNDO;
		}
	}
	if (a->budget != NULL &&
	    (rc = budget_check(a->budget, a->usd, rows + 1, sum, a->why, a->cap)) != 1) {
		if (rc == -1)
			return BP_DB_BATCH_ERROR;
		a->rc = BP_POLICY_BUDGET;
		return BP_DB_BATCH_UNDO;
	}
	/* The day's sum added exactly in C (SQLite has no 256-bit sums). */
	day = rows[0]->usd;
	if ((a->usd != NULL && bp_u256_add(&day, &day, a->usd) != 0) ||
	    record_row(db, a->p, a->network, a->sender, a->op_hash, a->usd, now) == -1)
		return BP_DB_BATCH_ERROR;
	/* Recorded: only now does it add to what the transaction writes at its end. */
	rows[0]->usd = day;
	rows[0]->count++;
	rows[0]->dirty = 1;
	if (a->budget != NULL && a->usd != NULL) {
		rows[1]->usd = sum[0];
		rows[2]->usd = sum[1];
		rows[1]->dirty = rows[2]->dirty = 1;
	}
	a->rc = -1;
	return BP_DB_BATCH_KEEP;
}

int
bp_policy_record(struct bp_db *db, struct bp_db_batch *batch, const struct bp_policy *p,
    const char *network, const uint8_t sender[20], const uint8_t op_hash[32],
    const struct bp_u256 *usd, const struct bp_policy_budget *budget, char *why, size_t cap)
{
	char s[BP_ADDR_STR_MAX];
	struct record a = { p, network, s, op_hash, usd, budget, why, cap, BP_RULE__MAX };

	bp_addr_format_lower(sender, s, sizeof(s));
	switch (bp_db_batch_run_tail(batch, db, record_one, &a, &sums_tail)) {
	case BP_DB_BATCH_KEEP:
		return -1;
	case BP_DB_BATCH_UNDO:
		return a.rc;
	default:
		return BP_RULE__MAX;
	}
}
