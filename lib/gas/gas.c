#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "core/hex.h"
#include "core/log.h"
#include "core/util.h"
#include "gas.h"
#include "rpc/jsonrpc.h"

/* Reward percentiles asked of eth_feeHistory, one per level. */
static const int percentiles[BP_GAS__MAX] = {
	10,	/* BP_GAS_SLOW */
	50,	/* BP_GAS_STANDARD */
	90,	/* BP_GAS_FAST */
};

/* Max fee = next base fee x this / 100 + tip: room for the base fee to rise meanwhile. */
static const uint64_t base_multiplier[BP_GAS__MAX] = {
	110,	/* BP_GAS_SLOW */
	125,	/* BP_GAS_STANDARD: one full block of rise (12.5%) twice */
	150,	/* BP_GAS_FAST */
};

/* Without EIP-1559: gas price = eth_gasPrice x this / 100. */
static const uint64_t legacy_multiplier[BP_GAS__MAX] = {
	100,	/* BP_GAS_SLOW */
	110,	/* BP_GAS_STANDARD */
	125,	/* BP_GAS_FAST */
};

/* Blocks until inclusion each level aims at: estimated_seconds is this x block_seconds. */
static const int64_t wait_blocks[BP_GAS__MAX] = {
	3,	/* BP_GAS_SLOW */
	2,	/* BP_GAS_STANDARD */
	1,	/* BP_GAS_FAST */
};

static const char *const level_names[BP_GAS__MAX] = {
	"slow",		/* BP_GAS_SLOW */
	"standard",	/* BP_GAS_STANDARD */
	"fast",		/* BP_GAS_FAST */
};

const char *
bp_gas_level_name(enum bp_gas_level l)
{
	return l < BP_GAS__MAX ? level_names[l] : "?";
}

static int
quantity_u256(const cJSON *j, struct bp_u256 *out)
{
	if (!cJSON_IsString(j) || j->valuestring == NULL)
		return -1;
	return bp_u256_from_hex(out, j->valuestring, strlen(j->valuestring));
}

int
bp_gas_history_parse(const cJSON *res, struct bp_gas_history *h)
{
	const cJSON *oldest, *base, *ratio, *reward, *row, *it;
	struct bp_u256 o;
	uint64_t ov;
	size_t i, k, nbase;
	int any = 0;

	memset(h, 0, sizeof(*h));
	oldest = cJSON_GetObjectItemCaseSensitive(res, "oldestBlock");
	base = cJSON_GetObjectItemCaseSensitive(res, "baseFeePerGas");
	ratio = cJSON_GetObjectItemCaseSensitive(res, "gasUsedRatio");
	reward = cJSON_GetObjectItemCaseSensitive(res, "reward");
	if (quantity_u256(oldest, &o) == -1 || bp_u256_to_u64(&o, &ov) == -1 ||
	    ov > INT64_MAX / 2 || !cJSON_IsArray(base) || !cJSON_IsArray(ratio))
		return -1;
	h->n = (size_t)cJSON_GetArraySize(ratio);
	nbase = (size_t)cJSON_GetArraySize(base);
	if (h->n == 0 || h->n > BP_GAS_BLOCKS || nbase != h->n + 1)
		return -1;
	h->newest = (int64_t)ov + (int64_t)h->n - 1;
	i = 0;
	cJSON_ArrayForEach(it, base) {
		if (quantity_u256(it, &h->base_fee[i]) == -1)
			return -1;
		any |= !bp_u256_is_zero(&h->base_fee[i++]);
	}
	i = 0;
	cJSON_ArrayForEach(it, ratio) {
		if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0))
			return -1;
		/* Only whether a block had transactions is read from it: no arithmetic. */
		h->empty[i++] = it->valuedouble == 0;
	}
	if (reward != NULL) {
		if (!cJSON_IsArray(reward) || (size_t)cJSON_GetArraySize(reward) != h->n)
			return -1;
		i = 0;
		cJSON_ArrayForEach(row, reward) {
			if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != BP_GAS__MAX)
				return -1;
			k = 0;
			cJSON_ArrayForEach(it, row)
				if (quantity_u256(it, &h->reward[i][k++]) == -1)
					return -1;
			i++;
		}
	} else {
		for (i = 0; i < h->n; i++)	/* no rewards: treat the blocks as empty */
			h->empty[i] = 1;
	}
	h->eip1559 = any;
	return 0;
}

static int
cmp_u256(const void *a, const void *b)
{
	return bp_u256_cmp(a, b);
}

static void
max_into(struct bp_u256 *a, const struct bp_u256 *b)
{
	if (bp_u256_cmp(a, b) < 0)
		*a = *b;
}

/* x * m / 100, saturating at 2^256 - 1 (only a hostile node gets there). */
static void
percent(struct bp_u256 *r, const struct bp_u256 *x, uint64_t m)
{
	if (bp_u256_mul_u64(r, x, m) != 0) {
		memset(r, 0xff, sizeof(*r));
		return;
	}
	bp_u256_div_u64(r, r, 100, NULL);
}

static void
add_sat(struct bp_u256 *r, const struct bp_u256 *a, const struct bp_u256 *b)
{
	if (bp_u256_add(r, a, b) != 0)
		memset(r, 0xff, sizeof(*r));
}

void
bp_gas_estimate(const struct bp_gas_history *h, const struct bp_u256 *floor_wei,
    int64_t block_seconds, struct bp_gas_sample *s)
{
	struct bp_u256 v[BP_GAS_BLOCKS], tip;
	size_t l, i, n;

	s->block_number = h->newest;
	memset(&s->base_fee, 0, sizeof(s->base_fee));
	if (h->eip1559 && h->n > 0)
		s->base_fee = h->base_fee[h->n];
	for (l = 0; l < BP_GAS__MAX; l++) {
		struct bp_gas_estimate *e = &s->est[l];

		e->seconds = wait_blocks[l] * block_seconds;
		if (!h->eip1559) {
			/* Legacy: one price, all of it tip; clients send it as gasPrice. */
			percent(&e->max_fee, &h->gas_price, legacy_multiplier[l]);
			max_into(&e->max_fee, floor_wei);
			if (l > 0)
				max_into(&e->max_fee, &s->est[l - 1].max_fee);
			e->max_priority = e->max_fee;
			continue;
		}
		for (i = n = 0; i < h->n; i++)
			if (!h->empty[i])
				v[n++] = h->reward[i][l];
		memset(&tip, 0, sizeof(tip));
		if (n > 0) {
			qsort(v, n, sizeof(v[0]), cmp_u256);
			tip = v[n / 2];
		}
		max_into(&tip, floor_wei);
		if (l > 0)
			max_into(&tip, &s->est[l - 1].max_priority);
		e->max_priority = tip;
		percent(&e->max_fee, &s->base_fee, base_multiplier[l]);
		add_sat(&e->max_fee, &e->max_fee, &tip);
		if (l > 0)
			max_into(&e->max_fee, &s->est[l - 1].max_fee);
	}
}

/* The network's priority floor in wei (gwei in the config, at most 9 decimals used). */
static void
floor_of(const struct bp_network *net, struct bp_u256 *out)
{
	const char *f = net->gas_priority_floor;

	if (bp_u256_parse_units(out, f, strlen(f), 9) == -1)
		memset(out, 0, sizeof(*out));	/* more than 9 decimals: below one wei */
}

static void
log_rpc(const struct bp_network *net, const char *what, const struct bp_rpc_client_error *err)
{
	bp_warn("%s.%s: %s: %s (%lld)", net->chain, net->network, what, err->message,
	    (long long)err->code);
}

int
bp_gas_sample_chain(struct bp_upstream *up, const struct bp_network *net,
    struct bp_gas_sample *s)
{
	struct bp_rpc_client_call calls[2];
	struct bp_gas_history h;
	struct bp_u256 floor_wei, head;
	cJSON *params = NULL, *pct;
	uint64_t hv;
	size_t i;
	int rc = -1;

	memset(calls, 0, sizeof(calls));
	memset(s, 0, sizeof(*s));
	if ((params = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString("0x5")) ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString("latest")) ||
	    (pct = cJSON_CreateArray()) == NULL || !cJSON_AddItemToArray(params, pct))
		goto out;
	for (i = 0; i < BP_GAS__MAX; i++)
		if (!cJSON_AddItemToArray(pct, cJSON_CreateNumber(percentiles[i])))
			goto out;
	calls[0].method = "eth_feeHistory";
	calls[0].params = params;
	bp_rpc_client_batch(up, net, calls, 1);
	if (calls[0].result != NULL && bp_gas_history_parse(calls[0].result, &h) == 0 &&
	    h.eip1559) {
		floor_of(net, &floor_wei);
		bp_gas_estimate(&h, &floor_wei, net->block_seconds, s);
		s->sampled_at = (int64_t)time(NULL);
		rc = 0;
		goto out;
	}
	if (calls[0].result == NULL && calls[0].err.kind != BP_RPC_CLIENT_ERR_RPC) {
		log_rpc(net, "eth_feeHistory", &calls[0].err);
		goto out;
	}
	/* No EIP-1559 (the method is missing, or there are no base fees): eth_gasPrice. */
	cJSON_Delete(calls[0].result);
	memset(calls, 0, sizeof(calls));
	calls[0].method = "eth_gasPrice";
	calls[1].method = "eth_blockNumber";
	bp_rpc_client_batch(up, net, calls, 2);
	memset(&h, 0, sizeof(h));
	if (quantity_u256(calls[0].result, &h.gas_price) == -1 ||
	    quantity_u256(calls[1].result, &head) == -1 || bp_u256_to_u64(&head, &hv) == -1 ||
	    hv > INT64_MAX) {
		log_rpc(net, "eth_gasPrice", calls[0].result == NULL ? &calls[0].err : &calls[1].err);
		goto out;
	}
	h.newest = (int64_t)hv;
	floor_of(net, &floor_wei);
	bp_gas_estimate(&h, &floor_wei, net->block_seconds, s);
	s->sampled_at = (int64_t)time(NULL);
	rc = 0;
out:
	for (i = 0; i < BP_NITEMS(calls); i++)
		cJSON_Delete(calls[i].result);
	cJSON_Delete(params);
	return rc;
}

static int
put_gwei(struct bp_buf *b, const char *name, const struct bp_u256 *wei)
{
	char s[BP_GAS_GWEI_MAX];

	if (bp_u256_format_units(wei, 9, s, sizeof(s)) == -1)
		return -1;
	return bp_buf_printf(b, "\"%s\":\"%s\"", name, s);
}

int
bp_gas_json(const struct bp_gas_sample *s, const char *chain, struct bp_buf *b)
{
	char t[32];
	size_t l;
	int fail;

	fail = bp_buf_adds(b, "{\"chain\":\"") == -1 || bp_buf_json_str(b, chain) == -1 ||
	    bp_buf_printf(b, "\",\"block_number\":%lld,", (long long)s->block_number) == -1 ||
	    put_gwei(b, "base_fee_gwei", &s->base_fee) == -1 ||
	    bp_buf_adds(b, ",\"estimates\":{") == -1;
	for (l = 0; !fail && l < BP_GAS__MAX; l++)
		fail = bp_buf_printf(b, "%s\"%s\":{", l ? "," : "", level_names[l]) == -1 ||
		    put_gwei(b, "max_fee_gwei", &s->est[l].max_fee) == -1 ||
		    bp_buf_adds(b, ",") == -1 ||
		    put_gwei(b, "max_priority_fee_gwei", &s->est[l].max_priority) == -1 ||
		    bp_buf_printf(b, ",\"estimated_seconds\":%lld}",
		    (long long)s->est[l].seconds) == -1;
	bp_time_iso((time_t)s->sampled_at, t, sizeof(t));
	fail = fail || bp_buf_printf(b, "},\"updated_at\":\"%s\"}", t) == -1;
	return fail ? -1 : 0;
}

int
bp_gas_store(struct bp_db *db, const struct bp_network *net, const struct bp_gas_sample *s)
{
	static const char sql[] = "INSERT INTO gas_samples (chain, network, block_number,"
	    " base_fee_wei, answer, sampled_at) VALUES (?, ?, ?, ?, ?, ?)"
	    " ON CONFLICT (chain, network) DO UPDATE SET block_number = excluded.block_number,"
	    " base_fee_wei = excluded.base_fee_wei, answer = excluded.answer,"
	    " sampled_at = excluded.sampled_at WHERE excluded.sampled_at >= gas_samples.sampled_at";
	struct bp_stmt *st;
	struct bp_buf b;
	char base[BP_U256_DEC_MAX];
	int rc = -1;

	bp_buf_init(&b, 4096);
	if (bp_gas_json(s, net->chain, &b) == -1 ||
	    (st = bp_db_stmt(db, sql)) == NULL)
		goto out;
	bp_u256_to_dec(&s->base_fee, base, sizeof(base));
	bp_stmt_text(st, 1, net->chain);
	bp_stmt_text(st, 2, net->network);
	bp_stmt_int(st, 3, s->block_number);
	bp_stmt_text(st, 4, base);
	bp_stmt_text(st, 5, b.data);
	bp_stmt_int(st, 6, s->sampled_at);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
out:
	bp_buf_free(&b);
	return rc;
}

int
bp_gas_load(struct bp_db *db, const struct bp_network *net, struct bp_buf *b,
    int64_t *sampled_at)
{
	static const char sql[] = "SELECT answer, sampled_at FROM gas_samples"
	    " WHERE chain = ? AND network = ?";
	struct bp_stmt *st;
	enum bp_db_step step;
	int rc = -1;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return -1;
	bp_stmt_text(st, 1, net->chain);
	bp_stmt_text(st, 2, net->network);
	step = bp_stmt_step(st);
	if (step == BP_DB_DONE)
		rc = 0;
	else if (step == BP_DB_ROW) {
		*sampled_at = bp_col_int(st, 1);
		rc = bp_buf_adds(b, bp_col_text(st, 0)) == -1 ? -1 : 1;
	}
	bp_stmt_reset(st);
	return rc;
}

int
bp_gas_prices(struct bp_db *db, struct bp_upstream *up, const struct bp_network *net,
    int64_t max_age, struct bp_buf *b)
{
	struct bp_gas_sample s;
	int64_t at = 0;
	int found;

	if ((found = bp_gas_load(db, net, b, &at)) == -1)
		return -1;
	if (found && (int64_t)time(NULL) - at <= max_age)
		return 0;
	if (bp_gas_sample_chain(up, net, &s) == -1)
		return found ? 0 : 1;
	if (bp_gas_store(db, net, &s) == -1)
		bp_warn("%s.%s: the gas sample was not stored", net->chain, net->network);
	bp_buf_reset(b);
	return bp_gas_json(&s, net->chain, b);
}
