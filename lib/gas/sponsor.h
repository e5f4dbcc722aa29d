/*
 * One sponsorship, end to end after the policy and network are known (docs/gas.md, Sponsorship
 * flow): parse the UserOperation, price its worst case, decode its calls, check the rules, sign
 * with the VerifyingPaymaster key, count and record atomically. fcgi/gas.c's POST
 * /v1/gas/sponsor and the bundler's ERC-7677 pm_getPaymasterData share it.
 */
#ifndef BP_SPONSOR_H
#define BP_SPONSOR_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"
#include "evm/u256.h"
#include "paymaster.h"
#include "policy.h"

struct bp_db;
struct bp_policy_cache;
struct bp_upstream;

/* What a sponsorship came to. */
struct bp_sponsor_result {
	int				 status;	/* 200, or the HTTP status of the refusal */
	const char			*code;		/* the error code when not 200 */
	const char			*field;		/* bp_sponsor_allowed: the member at fault */
	char				 message[512];	/* why, naming the field or the rule */
	struct bp_paymaster_grant	 grant;
	int				 have_usd;	/* 0: no [prices CHAIN] native */
	struct bp_u256			 usd;		/* worst case, 10^-36 USD */
};

/*
 * The rules of a sponsorship under policy p on net that need no UserOperation, the same for
 * POST /v1/gas/sponsor and the bundler's ERC-7677 methods: p is active (403 naming its state),
 * p is for net's chain and network, entry_point (the client's text; NULL: the network's
 * entry_point_version) is an EntryPoint of net, whose version goes to *version, and net has
 * that version's paymaster and the signer key (key, NULL when not). Returns 0, or 403 or 400
 * with out->field ("policy_id", "chain", "network" or "entry_point", for a caller that names
 * the member), out->code and out->message.
 */
int	bp_sponsor_allowed(const struct bp_policy *p, const struct bp_network *net,
	    const uint8_t *key, const char *entry_point, enum bp_ep_version *version,
	    struct bp_sponsor_result *out);

/* What a process's threads share: the group commit (db_batch.h), the policies (policy_cache.h). */
struct bp_sponsor_shared {
	struct bp_db_batch	*batch;
	struct bp_policy_cache	*policies;
};

/*
 * Sponsors the UserOperation j (untrusted JSON, in the form of EntryPoint version) under the
 * active policy p on net for the API key who (its account's plan budget, and cfg's server
 * budget), signing with key, the signature valid for validity seconds; its count and record
 * share a transaction with other threads' through sh (NULL: its own). p may be a cached copy
 * (bp_policy_cache_find): when the record finds it changed, the policy is read again and the
 * operation sponsored once more under it. Returns out->status: 200, 400 (a bad field), 403 (a
 * rule or a budget refused, the policy paused meanwhile), 404 (deleted meanwhile), 500 (the
 * node did not answer, a database error).
 */
int	bp_sponsor(struct bp_db *, const struct bp_sponsor_shared *, struct bp_upstream *,
	    const struct bp_config *, const struct bp_network *net, const uint8_t key[32],
	    const struct bp_key *who, const struct bp_policy *p, enum bp_ep_version version,
	    const cJSON *j, struct bp_sponsor_result *out);

/*
 * Appends the answer of a sponsorship that succeeded to b: v0.7/v0.8's members (paymaster,
 * paymasterData and the two gas limits), and paymasterAndData for v0.6; 0, or -1 when b is
 * full.
 */
int	bp_sponsor_json(const struct bp_sponsor_result *, struct bp_buf *b);

#endif
