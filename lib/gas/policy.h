/*
 * Gas sponsorship policies (SPEC.md sections 2 and 3, Gas policy; docs/gas.md): the rules (their
 * validation, canonical JSON and the check of one UserOperation against them), and the tables
 * gas_policies, gas_sponsorships and gas_policy_days (schema/004_gas.sql), with the atomic
 * counting of sponsorships. fcgi/gas.c and the bundler's ERC-7677 methods use it.
 *
 * States: active (on creation) <-> paused with PATCH; any -> deleted with DELETE, irreversible,
 * after which the policy answers 404 like one that never existed.
 */
#ifndef BP_POLICY_H
#define BP_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/auth.h"
#include "core/buf.h"
#include "core/config.h"
#include "evm/u256.h"
#include "evm/userop.h"

struct bp_db;
struct bp_db_batch;

#define BP_POLICY_ID_MAX	28	/* "gp_" + 24 hex digits + NUL */
#define BP_POLICY_NAME_CHARS	100
#define BP_POLICY_NAME_MAX	(4 * BP_POLICY_NAME_CHARS + 1)
#define BP_POLICY_LIST_MAX	100	/* addresses in allowed_contracts, entries in allowed_methods */
#define BP_POLICY_METHOD_MAX	256	/* a method signature's length + NUL */
#define BP_POLICY_USD_MAX	64

enum bp_policy_rule {
	BP_RULE_MAX_GAS_USD,		/* 0 */
	BP_RULE_MAX_PER_USER_PER_DAY,	/* 1 */
	BP_RULE_ALLOWED_CONTRACTS,	/* 2 */
	BP_RULE_ALLOWED_METHODS,	/* 3 */
	BP_RULE_RATE_LIMIT,		/* 4 */
	BP_RULE__MAX
};

enum bp_policy_status {
	BP_POLICY_ACTIVE,	/* 0 */
	BP_POLICY_PAUSED,	/* 1 */
	BP_POLICY_DELETED,	/* 2 */
	BP_POLICY_STATUS__MAX
};

struct bp_policy_rules {
	unsigned	 has;			/* 1 << enum bp_policy_rule */
	char		 max_gas_usd[BP_POLICY_USD_MAX];	/* as given */
	struct bp_u256	 max_gas_usd_units;	/* in 10^-36 USD (lib/token/price.h) */
	int64_t		 max_per_user_per_day;
	size_t		 ncontracts;
	uint8_t		 contracts[BP_POLICY_LIST_MAX][20];
	size_t		 nmethods;
	uint8_t		 selectors[BP_POLICY_LIST_MAX][4];
	char		 methods[BP_POLICY_LIST_MAX][BP_POLICY_METHOD_MAX];	/* as given */
	int64_t		 rate_count;
	int64_t		 rate_period;		/* seconds */
};

struct bp_policy {
	char			 id[BP_POLICY_ID_MAX];
	char			 name[BP_POLICY_NAME_MAX];
	char			 chain[BP_NAME_MAX];
	char			 network[BP_NAME_MAX];	/* "": made before networks (live) */
	int			 testnet;	/* its network's kind: which keys see it */
	enum bp_policy_status	 status;
	int64_t			 created_at;
	int64_t			 updated_at;
	struct bp_policy_rules	 rules;
	unsigned char		 rules_sha[32];	/* of the stored rules: what was read changed? */
};

/*
 * *dst = *src, copying of the lists only the entries in use: a whole struct is 28 KB (100
 * method signatures of 256 bytes), which the sponsor path copied out of the policy cache on
 * every request.
 */
void	bp_policy_copy(struct bp_policy *dst, const struct bp_policy *src);

/* A policy's spend: sponsorships and their worst-case USD, today (UTC) and ever. */
struct bp_policy_spend {
	int64_t		 today_count;
	char		 today_usd[BP_U256_UNITS_MAX];
	int64_t		 total_count;
	char		 total_usd[BP_U256_UNITS_MAX];
};

const char	*bp_policy_rule_name(enum bp_policy_rule);
const char	*bp_policy_status_name(enum bp_policy_status);
/* The status named s that a client may set (active, paused); 0 or -1. */
int		 bp_policy_status_parse(const char *s, enum bp_policy_status *out);

/*
 * Validates the rules object j: max_gas_usd (a decimal string > 0, at most 18 decimals),
 * max_per_user_per_day (an integer >= 1), allowed_contracts (1 to 100 addresses, EIP-55 checked
 * when mixed case), allowed_methods (1 to 100 function signatures "transfer(address,uint256)" or
 * selectors "0xa9059cbb"), rate_limit ({"count": N >= 1, "period_seconds": S >= 1}); at least
 * one rule. Returns 0, or -1 with why (room for cap bytes) starting with the key at fault.
 */
int		 bp_policy_rules_parse(const cJSON *j, struct bp_policy_rules *out, char *why,
		    size_t cap);
/* Appends the rules as a canonical JSON object to b (addresses EIP-55); 0, or -1 when full. */
int		 bp_policy_rules_json(const struct bp_policy_rules *, struct bp_buf *b);

/*
 * Checks the calls an op makes (ncalls -1: callData the decoder cannot read) and its worst-case
 * cost (usd in 10^-36 USD; NULL when no price is known) against the rules that need no count.
 * Returns -1 when they pass, else the rule refused with why set.
 */
int		 bp_policy_check(const struct bp_policy_rules *, const struct bp_userop_call *calls,
		    int ncalls, const struct bp_u256 *usd, char *why, size_t cap);

/* What a create or update body says; the strings point into the body. */
struct bp_policy_input {
	const char		*name;		/* NULL: not given */
	const char		*chain;		/* NULL: not given */
	const char		*network;	/* NULL: not given (the key's kind's network) */
	int			 has_rules;
	struct bp_policy_rules	 rules;
	int			 has_status;
	enum bp_policy_status	 status;
};

/*
 * Reads the body of POST /v1/gas/policies (create: name, chain, rules required, network
 * optional; status not taken) or of PATCH (any of name, rules, status; at least one): name 1 to 100 characters,
 * chain an EVM chain of cfg, rules as bp_policy_rules_parse, status active or paused. Other
 * members are ignored. Returns 0, or -1 with why starting with the member at fault.
 */
int		 bp_policy_input(const struct bp_config *cfg, const cJSON *body, int create,
		    struct bp_policy_input *in, char *why, size_t cap);

/* Appends the policy's JSON (with spend when not NULL) to b; 0, or -1 when full. */
int		 bp_policy_json(const struct bp_policy *, const struct bp_policy_spend *,
		    struct bp_buf *b);

/*
 * Table functions: 1 found (or done), 0 no such policy of the account, -1 error (logged).
 * A policy is made on net and belongs to its kind (test or live network).
 */
int		 bp_policy_create(struct bp_db *, int64_t account_id, const char *name,
		    const struct bp_network *net, const struct bp_policy_rules *,
		    struct bp_policy *out);
int		 bp_policy_get(struct bp_db *, int64_t account_id, const char *id,
		    struct bp_policy *out);

#define BP_POLICY_OTHER_KIND	2
/*
 * The policy id of key's account as key may use it: 1 with out filled, 0 none (or deleted),
 * BP_POLICY_OTHER_KIND for a policy of the other kind than key's (a test key sees only
 * test-network policies, a live key only live ones: 403) with why set, -1 error.
 */
int		 bp_policy_find(struct bp_db *, const struct bp_key *key, const char *id,
		    struct bp_policy *out, char *why, size_t cap);
/* Updates what is not NULL; out is the policy after the update. */
int		 bp_policy_update(struct bp_db *, int64_t account_id, const char *id,
		    const char *name, const struct bp_policy_rules *rules,
		    const enum bp_policy_status *status, struct bp_policy *out);
int		 bp_policy_delete(struct bp_db *, int64_t account_id, const char *id);
int		 bp_policy_spend(struct bp_db *, const char *id, struct bp_policy_spend *out);
/*
 * Appends {"policies":[...],"page":P,"limit":L,"total":T} of the policies of key's account and
 * kind (status NULL: every one not deleted), newest first. 0 or -1.
 */
int		 bp_policy_list(struct bp_db *, const struct bp_key *key,
		    const enum bp_policy_status *, int64_t page, int64_t limit, struct bp_buf *b);

/* The sponsorship budgets in USD per UTC day: "" or "0" is no cap. */
struct bp_policy_budget {
	int64_t		 account_id;	/* whose sponsorship: the policy's account */
	const char	*account_usd;	/* the account's plan's sponsor_usd_per_day */
	const char	*server_usd;	/* [server] sponsor_usd_per_day, every account together */
};

#define BP_POLICY_BUDGET	(BP_RULE__MAX + 1)	/* bp_policy_record: a budget refused */
#define BP_POLICY_CHANGED	(BP_RULE__MAX + 2)	/* bp_policy_record: p is not as stored */

/*
 * Records one sponsorship of policy p for sender on network, after counting, in one
 * BEGIN IMMEDIATE transaction (so parallel requests of any process cannot both pass a limit),
 * shared with other threads' sponsorships through batch (NULL: its own; db_batch.h):
 * max_per_user_per_day for sender this UTC day, rate_limit over the last period, and the
 * budgets (NULL: none) of the account and of the server this UTC day, which the sponsorship
 * adds to. usd is the worst case in 10^-36 USD or NULL (refused under a budget: it cannot be
 * counted). p is checked in the transaction to be active with the rules it was read with (a
 * cached copy may be behind). Returns -1 recorded, the rule refused or BP_POLICY_BUDGET (why
 * set, naming it), BP_POLICY_CHANGED (read p again), or BP_RULE__MAX on a database error.
 */
int		 bp_policy_record(struct bp_db *, struct bp_db_batch *,
		    const struct bp_policy *p, const char *network, const uint8_t sender[20],
		    const uint8_t op_hash[32], const struct bp_u256 *usd,
		    const struct bp_policy_budget *budget, char *why, size_t cap);

#endif
