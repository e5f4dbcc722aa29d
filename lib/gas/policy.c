#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/db_batch.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "core/valid.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "policy.h"
#include "token/price.h"

static const char *const rule_names[BP_RULE__MAX] = {
	"max_gas_usd",			/* BP_RULE_MAX_GAS_USD */
	"max_per_user_per_day",		/* BP_RULE_MAX_PER_USER_PER_DAY */
	"allowed_contracts",		/* BP_RULE_ALLOWED_CONTRACTS */
	"allowed_methods",		/* BP_RULE_ALLOWED_METHODS */
	"rate_limit",			/* BP_RULE_RATE_LIMIT */
};

static const char *const status_names[BP_POLICY_STATUS__MAX] = {
	"active",	/* BP_POLICY_ACTIVE */
	"paused",	/* BP_POLICY_PAUSED */
	"deleted",	/* BP_POLICY_DELETED */
};

#define BIT(r)		(1u << (r))
#define COUNT_MAX	INT64_C(1000000000)
#define PERIOD_MAX	INT64_C(31536000)	/* a year */

const char *
bp_policy_rule_name(enum bp_policy_rule r)
{
	return r < BP_RULE__MAX ? rule_names[r] : "?";
}

const char *
bp_policy_status_name(enum bp_policy_status s)
{
	return s < BP_POLICY_STATUS__MAX ? status_names[s] : "?";
}

int
bp_policy_status_parse(const char *s, enum bp_policy_status *out)
{
	if (strcmp(s, "active") == 0)
		*out = BP_POLICY_ACTIVE;
	else if (strcmp(s, "paused") == 0)
		*out = BP_POLICY_PAUSED;
	else
		return -1;
	return 0;
}

/* A whole JSON number within [min, max] (no fraction, no exponent beyond the value). */
static int
json_int(const cJSON *j, int64_t min, int64_t max, int64_t *out)
{
	double d;

	if (!cJSON_IsNumber(j))
		return -1;
	d = j->valuedouble;
	if (!(d >= (double)min && d <= (double)max) || d != (double)(int64_t)d)
		return -1;
	*out = (int64_t)d;
	return 0;
}

/* "transfer(address,uint256)": an identifier, then a parenthesised list of type characters. */
static int
valid_signature(const char *s)
{
	size_t i = 0, depth = 0;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_' ||
	    s[0] == '$'))
		return 0;
	while (s[i] != '\0' && s[i] != '(') {
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$",
		    s[i]) == NULL)
			return 0;
		i++;
	}
	if (s[i] != '(')
		return 0;
	for (; s[i] != '\0'; i++) {
		if (s[i] == '(')
			depth++;
		else if (s[i] == ')') {
			if (depth-- == 0)
				return 0;
			if (depth == 0 && s[i + 1] != '\0')
				return 0;
		} else if (strchr("abcdefghijklmnopqrstuvwxyz0123456789[],", s[i]) == NULL)
			return 0;
	}
	return depth == 0 && i > 0 && s[i - 1] == ')';
}

static int
parse_list(const cJSON *v, const char *key, char *why, size_t cap, size_t *n)
{
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1 ||
	    cJSON_GetArraySize(v) > BP_POLICY_LIST_MAX) {
		snprintf(why, cap, "%s must be an array of 1 to %d strings", key, BP_POLICY_LIST_MAX);
		return -1;
	}
	*n = 0;
	return 0;
}

int
bp_policy_rules_parse(const cJSON *j, struct bp_policy_rules *r, char *why, size_t cap)
{
	const cJSON *v, *e;
	size_t i;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(j)) {
		snprintf(why, cap, "rules must be an object");
		return -1;
	}
	cJSON_ArrayForEach(v, j) {
		for (i = 0; i < BP_RULE__MAX; i++)
			if (strcmp(v->string, rule_names[i]) == 0)
				break;
		if (i == BP_RULE__MAX) {
			snprintf(why, cap, "rules: unknown key \"%.64s\" (known: max_gas_usd, "
			    "max_per_user_per_day, allowed_contracts, allowed_methods, rate_limit)",
			    v->string);
			return -1;
		}
		if (r->has & BIT(i)) {
			snprintf(why, cap, "%s: given twice", rule_names[i]);
			return -1;
		}
		r->has |= BIT(i);
		switch (i) {
		case BP_RULE_MAX_GAS_USD:
			if (!cJSON_IsString(v) ||
			    bp_strlcpy(r->max_gas_usd, v->valuestring, sizeof(r->max_gas_usd)) ==
			    -1 || (strchr(v->valuestring, '.') != NULL &&
			    strlen(strchr(v->valuestring, '.') + 1) > 18) ||
			    bp_u256_parse_units(&r->max_gas_usd_units, v->valuestring,
			    strlen(v->valuestring), BP_PRICE_USD_DECIMALS) == -1 ||
			    bp_u256_is_zero(&r->max_gas_usd_units)) {
				snprintf(why, cap, "max_gas_usd must be a decimal string greater "
				    "than 0 such as \"5.00\" (at most 18 decimals)");
				return -1;
			}
			break;
		case BP_RULE_MAX_PER_USER_PER_DAY:
			if (json_int(v, 1, COUNT_MAX, &r->max_per_user_per_day) == -1) {
				snprintf(why, cap, "max_per_user_per_day must be an integer from 1 "
				    "to %lld", (long long)COUNT_MAX);
				return -1;
			}
			break;
		case BP_RULE_ALLOWED_CONTRACTS:
			if (parse_list(v, rule_names[i], why, cap, &r->ncontracts) == -1)
				return -1;
			cJSON_ArrayForEach(e, v) {
				if (!cJSON_IsString(e) || bp_addr_parse(e->valuestring,
				    strlen(e->valuestring), BP_ADDR_CHECKSUM,
				    r->contracts[r->ncontracts]) == -1) {
					snprintf(why, cap, "allowed_contracts[%zu] must be an address "
					    "(mixed case must be a valid EIP-55 checksum)", r->ncontracts);
					return -1;
				}
				r->ncontracts++;
			}
			break;
		case BP_RULE_ALLOWED_METHODS:
			if (parse_list(v, rule_names[i], why, cap, &r->nmethods) == -1)
				return -1;
			cJSON_ArrayForEach(e, v) {
				size_t k = r->nmethods;
				const char *s = cJSON_IsString(e) ? e->valuestring : "";

				if (bp_strlcpy(r->methods[k], s, BP_POLICY_METHOD_MAX) == -1)
					s = "";
				if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
					if (bp_hex_decode_fixed(s, strlen(s), r->selectors[k], 4) == 0) {
						bp_hex_encode(r->selectors[k], 4, r->methods[k],
						    BP_POLICY_METHOD_MAX);
						r->nmethods++;
						continue;
					}
				} else if (valid_signature(s)) {
					bp_abi_selector(s, r->selectors[k]);
					r->nmethods++;
					continue;
				}
				snprintf(why, cap, "allowed_methods[%zu] must be a function signature "
				    "such as \"transfer(address,uint256)\" or a selector such as "
				    "\"0xa9059cbb\"", k);
				return -1;
			}
			break;
		case BP_RULE_RATE_LIMIT:
			if (!cJSON_IsObject(v) || cJSON_GetArraySize(v) != 2 ||
			    json_int(cJSON_GetObjectItemCaseSensitive(v, "count"), 1, COUNT_MAX,
			    &r->rate_count) == -1 ||
			    json_int(cJSON_GetObjectItemCaseSensitive(v, "period_seconds"), 1,
			    PERIOD_MAX, &r->rate_period) == -1) {
				snprintf(why, cap, "rate_limit must be {\"count\": N, "
				    "\"period_seconds\": S} with N and S integers from 1 (S at most "
				    "%lld)", (long long)PERIOD_MAX);
				return -1;
			}
			break;
		}
	}
	if (r->has == 0) {
		snprintf(why, cap, "rules must hold at least one rule");
		return -1;
	}
	return 0;
}

int
bp_policy_rules_json(const struct bp_policy_rules *r, struct bp_buf *b)
{
	char a[BP_ADDR_STR_MAX];
	const char *sep = "";
	size_t i;
	int fail = bp_buf_adds(b, "{") == -1;

	if (r->has & BIT(BP_RULE_MAX_GAS_USD)) {
		fail = fail || bp_buf_printf(b, "\"max_gas_usd\":\"%s\"", r->max_gas_usd) == -1;
		sep = ",";
	}
	if (r->has & BIT(BP_RULE_MAX_PER_USER_PER_DAY)) {
		fail = fail || bp_buf_printf(b, "%s\"max_per_user_per_day\":%lld", sep,
		    (long long)r->max_per_user_per_day) == -1;
		sep = ",";
	}
	if (r->has & BIT(BP_RULE_ALLOWED_CONTRACTS)) {
		fail = fail || bp_buf_printf(b, "%s\"allowed_contracts\":[", sep) == -1;
		for (i = 0; i < r->ncontracts; i++) {
			bp_addr_format_checksum(r->contracts[i], a, sizeof(a));
			fail = fail || bp_buf_printf(b, "%s\"%s\"", i ? "," : "", a) == -1;
		}
		fail = fail || bp_buf_adds(b, "]") == -1;
		sep = ",";
	}
	if (r->has & BIT(BP_RULE_ALLOWED_METHODS)) {
		fail = fail || bp_buf_printf(b, "%s\"allowed_methods\":[", sep) == -1;
		for (i = 0; i < r->nmethods; i++)
			fail = fail || bp_buf_printf(b, "%s\"", i ? "," : "") == -1 ||
			    bp_buf_json_str(b, r->methods[i]) == -1 || bp_buf_adds(b, "\"") == -1;
		fail = fail || bp_buf_adds(b, "]") == -1;
		sep = ",";
	}
	if (r->has & BIT(BP_RULE_RATE_LIMIT))
		fail = fail || bp_buf_printf(b, "%s\"rate_limit\":{\"count\":%lld,"
		    "\"period_seconds\":%lld}", sep, (long long)r->rate_count,
		    (long long)r->rate_period) == -1;
	fail = fail || bp_buf_adds(b, "}") == -1;
	return fail ? -1 : 0;
}

int
bp_policy_check(const struct bp_policy_rules *r, const struct bp_userop_call *calls, int ncalls,
    const struct bp_u256 *usd, char *why, size_t cap)
{
	char a[BP_ADDR_STR_MAX], s[11];
	size_t i;
	int c;

	if ((r->has & (BIT(BP_RULE_ALLOWED_CONTRACTS) | BIT(BP_RULE_ALLOWED_METHODS))) &&
	    ncalls < 0) {
		snprintf(why, cap, "%s: the calls of callData cannot be read (SimpleAccount execute "
		    "and executeBatch are understood)", r->has & BIT(BP_RULE_ALLOWED_CONTRACTS) ?
		    "allowed_contracts" : "allowed_methods");
		return r->has & BIT(BP_RULE_ALLOWED_CONTRACTS) ? BP_RULE_ALLOWED_CONTRACTS :
		    BP_RULE_ALLOWED_METHODS;
	}
	for (c = 0; c < ncalls; c++) {
		if (r->has & BIT(BP_RULE_ALLOWED_CONTRACTS)) {
			for (i = 0; i < r->ncontracts; i++)
				if (memcmp(r->contracts[i], calls[c].target, 20) == 0)
					break;
			if (i == r->ncontracts) {
				bp_addr_format_checksum(calls[c].target, a, sizeof(a));
				snprintf(why, cap, "allowed_contracts: %s is not an allowed contract",
				    a);
				return BP_RULE_ALLOWED_CONTRACTS;
			}
		}
		if (r->has & BIT(BP_RULE_ALLOWED_METHODS)) {
			for (i = 0; calls[c].has_selector && i < r->nmethods; i++)
				if (memcmp(r->selectors[i], calls[c].selector, 4) == 0)
					break;
			if (!calls[c].has_selector || i == r->nmethods) {
				if (calls[c].has_selector)
					bp_hex_encode(calls[c].selector, 4, s, sizeof(s));
				snprintf(why, cap, "allowed_methods: %s is not an allowed method",
				    calls[c].has_selector ? s : "a call without a selector");
				return BP_RULE_ALLOWED_METHODS;
			}
		}
	}
	if (r->has & BIT(BP_RULE_MAX_GAS_USD)) {
		if (usd == NULL) {
			snprintf(why, cap, "max_gas_usd: the USD price of this chain's coin is not "
			    "known, so the cost cannot be checked");
			return BP_RULE_MAX_GAS_USD;
		}
		if (bp_u256_cmp(usd, &r->max_gas_usd_units) > 0) {
			char u[BP_U256_UNITS_MAX];

			bp_u256_format_units(usd, BP_PRICE_USD_DECIMALS, u, sizeof(u));
			snprintf(why, cap, "max_gas_usd: the worst-case cost %s USD is over %s USD",
			    u, r->max_gas_usd);
			return BP_RULE_MAX_GAS_USD;
		}
	}
	return -1;
}

/* The string members of a create and of a PATCH body; rules and the name's length come after. */
static const struct bp_valid_field create_fields[] = {
	{ "name", BP_VALID_STRING, 1, 0, NULL },
	{ "chain", BP_VALID_STRING, 1, 0, NULL },
	{ "network", BP_VALID_STRING, 0, BP_NAME_MAX - 1, NULL },
};
static const struct bp_valid_field patch_fields[BP_NITEMS(create_fields)] = {
	{ "name", BP_VALID_STRING, 0, 0, NULL },
	{ "status", BP_VALID_STRING, 0, 0, NULL },
	{ "network", BP_VALID_STRING, 0, BP_NAME_MAX - 1, NULL },
};

int
bp_policy_input(const struct bp_config *cfg, const cJSON *body, int create,
    struct bp_policy_input *in, char *why, size_t cap)
{
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(body, "rules");
	const char *v[BP_NITEMS(create_fields)], *status, *s;
	size_t chars = 0, i;

	memset(in, 0, sizeof(*in));
	if ((create ? bp_valid_body(body, create_fields, BP_NITEMS(create_fields), v, why, cap) :
	    bp_valid_body(body, patch_fields, BP_NITEMS(patch_fields), v, why, cap)) == -1)
		return -1;
	in->name = v[0];
	in->chain = create ? v[1] : NULL;
	status = create ? NULL : v[1];
	in->network = v[2];
	if (!create && in->network != NULL) {
		snprintf(why, cap, "network cannot be changed (make a policy on the other network)");
		return -1;
	}
	for (s = in->name; s != NULL && *s != '\0'; s++)	/* UTF-8 characters */
		chars += ((unsigned char)*s & 0xc0) != 0x80;
	if (chars > BP_POLICY_NAME_CHARS) {
		snprintf(why, cap, "name must be 1 to %d characters", BP_POLICY_NAME_CHARS);
		return -1;
	}
	for (i = 0; in->chain != NULL && i < cfg->nnets; i++)
		if (strcmp(cfg->nets[i].chain, in->chain) == 0 && cfg->nets[i].kind == BP_CHAIN_EVM)
			break;
	if (in->chain != NULL && i == cfg->nnets) {
		snprintf(why, cap, "chain: no EVM chain \"%.32s\"", in->chain);
		return -1;
	}
	if (!create && status != NULL) {
		if (bp_policy_status_parse(status, &in->status) == -1) {
			snprintf(why, cap, "status must be active or paused");
			return -1;
		}
		in->has_status = 1;
	}
	if (rules == NULL && create) {
		snprintf(why, cap, "rules is required");
		return -1;
	}
	if (rules != NULL && bp_policy_rules_parse(rules, &in->rules, why, cap) == -1)
		return -1;
	in->has_rules = rules != NULL;
	if (!create && in->name == NULL && !in->has_rules && !in->has_status) {
		snprintf(why, cap, "give at least one of name, rules, status");
		return -1;
	}
	return 0;
}

int
bp_policy_json(const struct bp_policy *p, const struct bp_policy_spend *sp, struct bp_buf *b)
{
	int fail;

	fail = bp_buf_printf(b, "{\"id\":\"%s\",\"name\":\"", p->id) == -1 ||
	    bp_buf_json_str(b, p->name) == -1 ||
	    bp_buf_printf(b, "\",\"chain\":\"%s\",\"network\":%s%s%s,\"rules\":", p->chain,
	    p->network[0] ? "\"" : "", p->network[0] ? p->network : "null",
	    p->network[0] ? "\"" : "") == -1 ||
	    bp_policy_rules_json(&p->rules, b) == -1 ||
	    bp_buf_printf(b, ",\"status\":\"%s\"", status_names[p->status]) == -1 ||
	    bp_buf_json_time(b, "created_at", p->created_at) == -1 ||
	    bp_buf_json_time(b, "updated_at", p->updated_at) == -1;
	if (sp != NULL)
		fail = fail || bp_buf_printf(b, ",\"spend\":{\"today\":{\"count\":%lld,"
		    "\"usd\":\"%s\"},\"total\":{\"count\":%lld,\"usd\":\"%s\"}}",
		    (long long)sp->today_count, sp->today_usd, (long long)sp->total_count,
		    sp->total_usd) == -1;
	return fail || bp_buf_adds(b, "}") == -1 ? -1 : 0;
}

/* ---- the tables ---- */

#define POLICY_COLS "id, name, chain, rules, status, created_at, updated_at, network, testnet"

static int
policy_row(struct bp_stmt *st, struct bp_policy *p)
{
	char why[256];
	cJSON *j;
	int rc;

	memset(p, 0, sizeof(*p));
	bp_strlcpy(p->id, bp_col_text(st, 0), sizeof(p->id));
	bp_strlcpy(p->name, bp_col_text(st, 1), sizeof(p->name));
	bp_strlcpy(p->chain, bp_col_text(st, 2), sizeof(p->chain));
	p->status = strcmp(bp_col_text(st, 4), "paused") == 0 ? BP_POLICY_PAUSED :
	    strcmp(bp_col_text(st, 4), "active") == 0 ? BP_POLICY_ACTIVE : BP_POLICY_DELETED;
	p->created_at = bp_col_int(st, 5);
	p->updated_at = bp_col_int(st, 6);
	bp_strlcpy(p->network, bp_col_text(st, 7), sizeof(p->network));
	p->testnet = bp_col_int(st, 8) != 0;
	bp_sha256(bp_col_text(st, 3), strlen(bp_col_text(st, 3)), p->rules_sha);
	j = cJSON_Parse(bp_col_text(st, 3));
	rc = bp_policy_rules_parse(j, &p->rules, why, sizeof(why));
	cJSON_Delete(j);
	if (rc == -1)
		bp_err("%s: policy %s: stored rules do not parse: %s", __func__, p->id, why);
	return rc;
}

int
bp_policy_get(struct bp_db *db, int64_t account_id, const char *id, struct bp_policy *out)
{
	static const char sql[] = "SELECT " POLICY_COLS " FROM gas_policies"
	    " WHERE id = ? AND account_id = ? AND status <> 'deleted'";
	struct bp_stmt *st;
	enum bp_db_step step;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, id);
	bp_stmt_int(st, 2, account_id);
	step = bp_stmt_step(st);
	if (step == BP_DB_DONE)
		rc = 0;
	else if (step == BP_DB_ROW)
		rc = policy_row(st, out) == 0 ? 1 : -1;
	bp_stmt_reset(st);
	return rc;
}

static int
rules_text(const struct bp_policy_rules *r, struct bp_buf *b)
{
	bp_buf_init(b, 64 * 1024);
	return bp_policy_rules_json(r, b);
}

int
bp_policy_find(struct bp_db *db, const struct bp_key *key, const char *id,
    struct bp_policy *out, char *why, size_t cap)
{
	int found = bp_policy_get(db, key->account_id, id, out);

	if (found != 1 || out->testnet == key->test)
		return found;
	snprintf(why, cap, "policy %s is on %s %s: %s keys use only %s policies", out->id,
	    out->chain, out->network[0] != '\0' ? out->network : "(live)",
	    key->test ? "test" : "live", key->test ? "test-network" : "live-network");
	return BP_POLICY_OTHER_KIND;
}

int
bp_policy_create(struct bp_db *db, int64_t account_id, const char *name,
    const struct bp_network *net, const struct bp_policy_rules *rules, struct bp_policy *out)
{
	static const char sql[] = "INSERT INTO gas_policies (id, account_id, name, chain, rules,"
	    " status, created_at, updated_at, network, testnet)"
	    " VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)";
	struct bp_stmt *st;
	struct bp_buf b;
	uint8_t rnd[12];
	char id[BP_POLICY_ID_MAX];
	int64_t now = (int64_t)time(NULL);
	int rc = -1;

	if (rules_text(rules, &b) == -1 || bp_random(rnd, sizeof(rnd)) == -1)
		goto out;
	memcpy(id, "gp_", 3);
	bp_hex_encode_digits(rnd, sizeof(rnd), id + 3, sizeof(id) - 3);
	if ((st = bp_db_stmt(db, sql)) == NULL)
		goto out;
	bp_stmt_text(st, 1, id);
	bp_stmt_int(st, 2, account_id);
	bp_stmt_text(st, 3, name);
	bp_stmt_text(st, 4, net->chain);
	bp_stmt_text(st, 5, b.data);
	bp_stmt_int(st, 6, now);
	bp_stmt_int(st, 7, now);
	bp_stmt_text(st, 8, net->network);
	bp_stmt_int(st, 9, net->testnet != 0);
	if (bp_stmt_step(st) == BP_DB_DONE)
		rc = bp_policy_get(db, account_id, id, out);
	bp_stmt_reset(st);
out:
	bp_buf_free(&b);
	return rc;
}

/* Sets what is not NULL on the account's policy id (not deleted): 1 done, 0 none, -1 error. */
static int
policy_set(struct bp_db *db, int64_t account_id, const char *id, const char *name,
    const char *rules, const char *status)
{
	static const char sql[] = "UPDATE gas_policies SET name = coalesce(?, name),"
	    " rules = coalesce(?, rules), status = coalesce(?, status), updated_at = ?"
	    " WHERE id = ? AND account_id = ? AND status <> 'deleted'";
	struct bp_stmt *st;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, name);
	bp_stmt_text(st, 2, rules);
	bp_stmt_text(st, 3, status);
	bp_stmt_int(st, 4, (int64_t)time(NULL));
	bp_stmt_text(st, 5, id);
	bp_stmt_int(st, 6, account_id);
	if (bp_stmt_step(st) == BP_DB_DONE)
		rc = bp_db_changes(db) > 0;
	bp_stmt_reset(st);
	return rc;
}

int
bp_policy_update(struct bp_db *db, int64_t account_id, const char *id, const char *name,
    const struct bp_policy_rules *rules, const enum bp_policy_status *status,
    struct bp_policy *out)
{
	struct bp_buf b;
	int rc = -1;

	bp_buf_init(&b, 64 * 1024);
	if (rules != NULL && rules_text(rules, &b) == -1)
		goto out;
	rc = policy_set(db, account_id, id, name, rules != NULL ? b.data : NULL,
	    status != NULL ? status_names[*status] : NULL);
	if (rc == 1)
		rc = bp_policy_get(db, account_id, id, out);
out:
	bp_buf_free(&b);
	return rc;
}

int
bp_policy_delete(struct bp_db *db, int64_t account_id, const char *id)
{
	return policy_set(db, account_id, id, NULL, NULL, status_names[BP_POLICY_DELETED]);
}

/* What bp_policy_copy counts on: the lists, then the rate, end the rules; the hash, the policy. */
_Static_assert(offsetof(struct bp_policy_rules, ncontracts) <
    offsetof(struct bp_policy_rules, contracts) &&
    offsetof(struct bp_policy_rules, contracts) < offsetof(struct bp_policy_rules, nmethods) &&
    offsetof(struct bp_policy_rules, methods) < offsetof(struct bp_policy_rules, rate_count) &&
    offsetof(struct bp_policy_rules, rate_period) + sizeof(int64_t) ==
    sizeof(struct bp_policy_rules) &&
    offsetof(struct bp_policy, rules_sha) + 32 == sizeof(struct bp_policy),
    "bp_policy_copy copies struct bp_policy by its layout");

void
bp_policy_copy(struct bp_policy *dst, const struct bp_policy *src)
{
	const struct bp_policy_rules *r = &src->rules;

	/* Everything before the lists, then each list's used entries, then what follows. */
	memcpy(dst, src, offsetof(struct bp_policy, rules) + offsetof(struct bp_policy_rules,
	    contracts));
	memcpy(dst->rules.contracts, r->contracts, r->ncontracts * sizeof(r->contracts[0]));
	dst->rules.nmethods = r->nmethods;
	memcpy(dst->rules.selectors, r->selectors, r->nmethods * sizeof(r->selectors[0]));
	memcpy(dst->rules.methods, r->methods, r->nmethods * sizeof(r->methods[0]));
	dst->rules.rate_count = r->rate_count;
	dst->rules.rate_period = r->rate_period;
	memcpy(dst->rules_sha, src->rules_sha, sizeof(dst->rules_sha));
}

/* A row of POLICY_COLS as a list item, for bp_db_list_page. */
static int
list_item(struct bp_stmt *st, struct bp_buf *b)
{
	struct bp_policy p;

	return policy_row(st, &p) == -1 || bp_policy_json(&p, NULL, b) == -1 ? -1 : 0;
}

int
bp_policy_list(struct bp_db *db, const struct bp_key *key, const enum bp_policy_status *status,
    int64_t page, int64_t limit, struct bp_buf *b)
{
	/* The key's kind is in the text (bp_db_list_page binds account, status, limit, offset). */
#define WHERE(kind) " WHERE account_id = ? AND testnet = " kind " AND status <> 'deleted'" \
	" AND (?2 IS NULL OR status = ?2)"
#define PAGE " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"
	static const char *const sql_count[2] = {
		"SELECT count(*) FROM gas_policies" WHERE("0"),
		"SELECT count(*) FROM gas_policies" WHERE("1"),
	};
	static const char *const sql_page[2] = {
		"SELECT " POLICY_COLS " FROM gas_policies" WHERE("0") PAGE,
		"SELECT " POLICY_COLS " FROM gas_policies" WHERE("1") PAGE,
	};
#undef WHERE
#undef PAGE
	int k = key->test != 0;

	return bp_db_list_page(db, sql_count[k], sql_page[k], key->account_id,
	    status != NULL ? status_names[*status] : NULL, page, limit, "policies", list_item, b);
}
