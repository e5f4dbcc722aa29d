/*
 * The bundler: lib/bundler/bundler_pool.c (add, duplicates, replacement bump, the sender cap, bundles
 * recorded, settled and released), lib/bundler/userop_validate.c (AAxx codes, the simulateValidation
 * revert decoder with hostile rows, the result checks, field checks, preVerificationGas) and
 * lib/bundler/bundler_estimate.c's ExecutionResult decoder.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundler/bundler_estimate.h"
#include "bundler/bundler_pool.h"
#include "bundler/bundler_submit.h"
#include "bundler/userop_validate.h"
#include "core/db.h"
#include "core/config.h"
#include "core/db_wake.h"
#include "core/util.h"
#include "evm/abi.h"
#include "net/upstream.h"
#include "unit.h"
#include "unit_db.h"

static struct bp_unit_db u;

static int
setup(void)
{
	return bp_unit_db_open(&u, "bundler");
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static void
word(char out[BP_BUNDLER_POOL_WORD_STR], unsigned long long v)
{
	snprintf(out, BP_BUNDLER_POOL_WORD_STR, "%064llx", v);
}

static void
mkop(struct bp_bundler_pool_op *op, const char *hash, const char *sender, unsigned nonce, unsigned fee,
    unsigned tip, int staked)
{
	memset(op, 0, sizeof(*op));
	bp_strlcpy(op->chain, "ethereum.devnet", sizeof(op->chain));
	snprintf(op->hash, sizeof(op->hash), "0x%064x", 0);
	memcpy(op->hash + 66 - strlen(hash), hash, strlen(hash));
	bp_strlcpy(op->entry_point, "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789",
	    sizeof(op->entry_point));
	bp_strlcpy(op->sender, sender, sizeof(op->sender));
	word(op->nonce, nonce);
	word(op->max_fee, fee);
	word(op->max_priority, tip);
	op->gas = 100000;
	op->staked = staked;
	op->paymaster_staked = 0;
	op->op_json = (char *)"{}";
}

#define S1 "0x1111111111111111111111111111111111111111"
#define S2 "0x2222222222222222222222222222222222222222"

static int
count(const struct bp_bundler_pool_op *op, void *arg)
{
	(void)op;
	(*(int *)arg)++;
	return 0;
}

static int
collect_hash(const char *hash, void *arg)
{
	char (*h)[BP_BUNDLER_POOL_HASH_STR] = arg;

	bp_strlcpy(h[0], hash, BP_BUNDLER_POOL_HASH_STR);
	return 0;
}

static void
test_pool(void)
{
	struct bp_bundler_pool_op op, got;
	struct bp_bundler_pool_bundle b;
	struct bp_bundler_pool_outcome out;
	char hashes[1][BP_BUNDLER_POOL_HASH_STR];
	int n = 0, as_sender, as_pm;

	mkop(&op, "a1", S1, 0, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_KNOWN);
	/* Same sender and nonce: 9% more is underpriced, 10% on one fee only too, 10% on both is not. */
	mkop(&op, "a2", S1, 0, 1090, 109, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_UNDERPRICED);
	mkop(&op, "a2", S1, 0, 1100, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_UNDERPRICED);
	mkop(&op, "a2", S1, 0, 1100, 110, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "a1", S1, 0, 0, 0, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_get(u.db, "ethereum.devnet", op.hash, &got), 1);
	CU_ASSERT_STRING_EQUAL(got.status, "dropped");
	CU_ASSERT_PTR_NOT_NULL(strstr(got.reason, "replaced by"));
	bp_bundler_pool_op_free(&got);
	/* The cap: an unstaked sender has 4 at most; a staked one is not capped. */
	mkop(&op, "a3", S1, 1, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "a4", S1, 2, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "a5", S1, 3, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "a6", S1, 4, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_SENDER_CAP);
	mkop(&op, "a6", S1, 4, 1000, 100, 1);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	/* An unstaked paymaster: 2 at most here. */
	mkop(&op, "c1", "0x3333333333333333333333333333333333333333", 0, 1000, 100, 1);
	bp_strlcpy(op.paymaster, S2, sizeof(op.paymaster));
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 2), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "c2", "0x4444444444444444444444444444444444444444", 0, 1000, 100, 1);
	bp_strlcpy(op.paymaster, S2, sizeof(op.paymaster));
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 2), BP_BUNDLER_POOL_ADDED);
	mkop(&op, "c3", "0x5555555555555555555555555555555555555555", 0, 1000, 100, 1);
	bp_strlcpy(op.paymaster, S2, sizeof(op.paymaster));
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 2), BP_BUNDLER_POOL_PAYMASTER_CAP);
	op.paymaster_staked = 1;		/* a staked paymaster in good standing: no bound */
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 0), BP_BUNDLER_POOL_ADDED);
	/* STO-040's roles: S2 pays for ops, 0x33.. sends one. */
	CU_ASSERT_EQUAL(bp_bundler_pool_roles(u.db, "ethereum.devnet", S2, &as_sender, &as_pm), 0);
	CU_ASSERT(!as_sender && as_pm);
	CU_ASSERT_EQUAL(bp_bundler_pool_roles(u.db, "ethereum.devnet",
	    "0x3333333333333333333333333333333333333333", &as_sender, &as_pm), 0);
	CU_ASSERT(as_sender && !as_pm);
	CU_ASSERT_EQUAL(bp_bundler_pool_roles(u.db, "other.net", S2, &as_sender, &as_pm), 0);
	CU_ASSERT(!as_sender && !as_pm);
	n = 0;
	CU_ASSERT_EQUAL(bp_bundler_pool_each_pending(u.db, "ethereum.devnet", 100, count, &n), 8);
	CU_ASSERT_EQUAL(n, 8);
	/* A bundle recorded, then released: the op is pending again; then settled. */
	mkop(&op, "b1", S2, 0, 5000, 500, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	memset(&b, 0, sizeof(b));
	bp_strlcpy(b.chain, "ethereum.devnet", sizeof(b.chain));
	bp_strlcpy(b.bundler, S2, sizeof(b.bundler));
	bp_strlcpy(b.tx_hash, op.hash, sizeof(b.tx_hash));
	b.raw_tx = strdup("0x02");
	bp_strlcpy(b.max_fee, "5000", sizeof(b.max_fee));
	bp_strlcpy(b.max_priority, "500", sizeof(b.max_priority));
	memcpy(hashes[0], op.hash, sizeof(hashes[0]));
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_record(u.db, &b, hashes, 1), 0);
	CU_ASSERT(b.id > 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_record(u.db, &b, hashes, 1), -1);	/* no longer pending */
	mkop(&got, "b2", S2, 0, 6000, 600, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &got, 4, 10), BP_BUNDLER_POOL_IN_BUNDLE);
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_release(u.db, b.id, "dropped"), 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_get(u.db, "ethereum.devnet", op.hash, &got), 1);
	CU_ASSERT_STRING_EQUAL(got.status, "pending");
	CU_ASSERT_EQUAL(got.bundle_id, 0);
	bp_bundler_pool_op_free(&got);
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_record(u.db, &b, hashes, 1), 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_ops(u.db, b.id, collect_hash, hashes), 1);
	memset(&out, 0, sizeof(out));
	memcpy(out.hash, op.hash, sizeof(out.hash));
	out.found = 1;
	out.success = 1;
	CU_ASSERT_EQUAL(bp_bundler_pool_bundle_included(u.db, b.id, b.tx_hash, 42, b.tx_hash, &out, 1,
	    "x"), 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_get(u.db, "ethereum.devnet", op.hash, &got), 1);
	CU_ASSERT_STRING_EQUAL(got.status, "included");
	CU_ASSERT_EQUAL(got.block_number, 42);
	CU_ASSERT_EQUAL(got.success, 1);
	bp_bundler_pool_op_free(&got);
	bp_bundler_pool_bundle_free(&b);
}

static void
test_reason_codes(void)
{
	static const struct { const char *reason; int code; } rows[] = {
		{ "AA10 sender already constructed", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "AA21 didn't pay prefund", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "AA22 expired or not due", BP_USEROP_VALIDATE_SHORT_DEADLINE },
		{ "AA23 reverted", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "AA24 signature error", BP_USEROP_VALIDATE_BAD_SIGNATURE },
		{ "AA30 paymaster not deployed", BP_USEROP_VALIDATE_REJECTED_PAYMASTER },
		{ "AA32 paymaster expired or not due", BP_USEROP_VALIDATE_SHORT_DEADLINE },
		{ "AA34 signature error", BP_USEROP_VALIDATE_BAD_SIGNATURE },
		{ "AA96 invalid aggregator", BP_USEROP_VALIDATE_AGGREGATOR },
		{ "", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "AA", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "AAx1", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
		{ "\xff\xff", BP_USEROP_VALIDATE_REJECTED_ACCOUNT },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		CU_ASSERT_EQUAL(bp_userop_validate_reason_code(rows[i].reason), rows[i].code);
}

/* FailedOp(uint256,string) encoded by hand. */
static size_t
failed_op(uint8_t *out, const char *reason)
{
	size_t n = strlen(reason);

	memset(out, 0, 4 + 4 * 32);
	bp_abi_selector("FailedOp(uint256,string)", out);
	out[4 + 63] = 0x40;
	out[4 + 95] = (uint8_t)n;
	memcpy(out + 4 + 96, reason, n);
	return 4 + 96 + (n + 31) / 32 * 32;
}

static void
test_decode(void)
{
	struct bp_userop_validate_result res;
	struct bp_userop_validate_error err;
	uint8_t buf[4 + 32 * 16];
	size_t n, cut;
	uint64_t pre, paid;
	const uint8_t *r;
	size_t rlen;
	int ok;

	memset(&err, 0, sizeof(err));
	n = failed_op(buf, "AA21 didn't pay prefund");
	CU_ASSERT_EQUAL(bp_userop_validate_decode_validation(buf, n, &res, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_REJECTED_ACCOUNT);
	CU_ASSERT_STRING_EQUAL(err.message, "AA21 didn't pay prefund");
	CU_ASSERT_EQUAL(err.len, n);
	bp_userop_validate_error_free(&err);
	/* Every truncation of it fails cleanly. */
	for (cut = 0; cut < n; cut++) {
		CU_ASSERT_EQUAL(bp_userop_validate_decode_validation(buf, cut, &res, &err), -1);
		bp_userop_validate_error_free(&err);
	}
	CU_ASSERT_EQUAL(bp_userop_validate_decode_validation(NULL, 0, &res, &err), -1);
	/* A ValidationResult: offset 0xe0 to returnInfo, 6 stake words, then returnInfo. */
	memset(buf, 0, sizeof(buf));
	bp_abi_selector("ValidationResult((uint256,uint256,bool,uint48,uint48,bytes),"
	    "(uint256,uint256),(uint256,uint256),(uint256,uint256))", buf);
	buf[4 + 31] = 0xe0;
	buf[4 + 63] = 7;		/* sender stake */
	buf[4 + 95] = 9;		/* sender unstake delay */
	buf[4 + 0xe0 + 31] = 0x50;	/* preOpGas */
	buf[4 + 0xe0 + 95] = 1;		/* sigFailed */
	buf[4 + 0xe0 + 191] = 0xc0;	/* offset of paymasterContext */
	n = 4 + 0xe0 + 0xc0 + 32;
	CU_ASSERT_EQUAL(bp_userop_validate_decode_validation(buf, n, &res, &err), 0);
	CU_ASSERT_EQUAL(res.sig_failed, 1);
	CU_ASSERT_EQUAL(res.sender_unstake_delay, 9);
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&res, 1000, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_BAD_SIGNATURE);
	res.sig_failed = 0;
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&res, 1000, &err), 0);
	res.valid_until = 1010;
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&res, 1000, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_SHORT_DEADLINE);
	res.valid_until = 0;
	res.valid_after = 1001;
	CU_ASSERT_EQUAL(bp_userop_validate_check_result(&res, 1000, &err), -1);
	buf[4 + 0xe0 + 95] = 2;		/* a bool that is not 0 or 1 */
	CU_ASSERT_EQUAL(bp_userop_validate_decode_validation(buf, n, &res, &err), -1);
	/* ExecutionResult(preOpGas, paid, validAfter, validUntil, targetSuccess, targetResult). */
	memset(buf, 0, sizeof(buf));
	bp_abi_selector("ExecutionResult(uint256,uint256,uint48,uint48,bool,bytes)", buf);
	buf[4 + 31] = 0x10;
	buf[4 + 63] = 0x30;
	buf[4 + 159] = 1;
	buf[4 + 191] = 0xc0;
	buf[4 + 0xc0 + 31] = 2;
	buf[4 + 0xe0] = 0xab;
	n = 4 + 0xe0 + 32;
	CU_ASSERT_EQUAL(bp_bundler_execution_result(buf, n, &pre, &paid, &ok, &r, &rlen, &err), 0);
	CU_ASSERT_EQUAL(pre, 0x10);
	CU_ASSERT_EQUAL(paid, 0x30);
	CU_ASSERT_EQUAL(ok, 1);
	CU_ASSERT_EQUAL(rlen, 2);
	CU_ASSERT_EQUAL(r[0], 0xab);
	for (cut = 0; cut < n - 32; cut++)
		CU_ASSERT_EQUAL(bp_bundler_execution_result(buf, cut, &pre, &paid, &ok, &r, &rlen,
		    &err), -1);
	n = failed_op(buf, "AA33 reverted");
	CU_ASSERT_EQUAL(bp_bundler_execution_result(buf, n, &pre, &paid, &ok, &r, &rlen, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_REJECTED_PAYMASTER);
	bp_userop_validate_error_free(&err);
}

static void
test_fields(void)
{
	struct bp_userop op;
	struct bp_userop_validate_error err;
	struct bp_u256 base;
	uint8_t cd[4] = { 1, 0, 0, 2 };
	uint64_t pvg;

	memset(&op, 0, sizeof(op));
	memset(&err, 0, sizeof(err));
	op.bytes[BP_USEROP_CALL_DATA] = cd;
	op.len[BP_USEROP_CALL_DATA] = sizeof(cd);
	pvg = bp_userop_validate_pre_verification_gas(&op, 0);
	CU_ASSERT(pvg > 18300);
	CU_ASSERT_EQUAL(bp_userop_validate_pre_verification_gas(&op, 1), pvg + 21000);
	/* What the estimate answers (with the fixed part) passes once written into the op. */
	pvg += 21000;
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], pvg);
	bp_u256_from_u64(&op.num[BP_USEROP_CALL_GAS_LIMIT], 10000);
	bp_u256_from_u64(&op.num[BP_USEROP_VERIFICATION_GAS_LIMIT], 100000);
	bp_u256_from_u64(&op.num[BP_USEROP_MAX_FEE_PER_GAS], 100);
	bp_u256_from_u64(&op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], 10);
	bp_u256_from_u64(&base, 100);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, &base, &err), 0);
	bp_u256_from_u64(&base, 101);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, &base, &err), -1);
	CU_ASSERT_EQUAL(err.code, BP_USEROP_VALIDATE_INVALID_PARAMS);
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], 18300);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), -1);
	bp_u256_from_u64(&op.num[BP_USEROP_PRE_VERIFICATION_GAS], pvg);
	bp_u256_from_u64(&op.num[BP_USEROP_CALL_GAS_LIMIT], 9099);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), -1);
	bp_u256_from_u64(&op.num[BP_USEROP_CALL_GAS_LIMIT], 10000);
	bp_u256_from_u64(&op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], 101);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), -1);
	bp_u256_from_u64(&op.num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS], 10);
	/* 2^255 gas saturates instead of wrapping. */
	op.num[BP_USEROP_VERIFICATION_GAS_LIMIT].w[3] = UINT64_C(1) << 63;
	CU_ASSERT_EQUAL(bp_userop_validate_total_gas(&op), UINT64_MAX);
	CU_ASSERT_EQUAL(bp_userop_validate_check_fields(&op, NULL, &err), -1);
}

/*
 * An op the pool takes wakes the submitter's idle wait (cron/bundle listens on BP_DB_WAKE_POOL);
 * one it refuses does not: without the wake-up an op waited up to the loop's interval.
 */
static void
test_pool_wake(void)
{
	struct bp_bundler_pool_op op;
	struct bp_db_wake *w;

	CU_ASSERT_PTR_NOT_NULL_FATAL(w = bp_db_wake_open(u.path));
	CU_ASSERT_EQUAL(bp_db_wake_listen(w, BP_DB_WAKE_POOL), 0);
	mkop(&op, "d1", "0xabababababababababababababababababababab", 0, 1000, 100, 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_ADDED);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 5000), 1);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 0), 0);
	CU_ASSERT_EQUAL(bp_bundler_pool_add(u.db, &op, 4, 10), BP_BUNDLER_POOL_KNOWN);
	CU_ASSERT_EQUAL(bp_db_wake_wait(w, 200), 0);
	bp_db_wake_close(w);
}

/* The calls of eth_blockNumber a node of node_head() was asked. */
static int	head_calls;

static void
count_heads(const char *body, size_t len)
{
	if (memmem(body, len, "eth_blockNumber", 15) != NULL)
		__atomic_add_fetch(&head_calls, 1, __ATOMIC_SEQ_CST);
}

/* A node at block 0x40 that answers every call so and counts the calls of eth_blockNumber. */
static void *
node_head(void *arg)
{
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"0x40\"}";

	bp_unit_serve_json((int)(intptr_t)arg, body, sizeof(body) - 1, count_heads);
	return NULL;
}

/*
 * An idle submitter's passes ask the node nothing but the head for the reorg check, and that
 * at most once a BP_BUNDLER_SUBMIT_REORG_EVERY_MS: cron/bundle wakes at every block stored
 * (channel heads), which an indexer catching up stores many times a second.
 */
static void
test_submit_idle(void)
{
	struct bp_bundler_submitter s;
	struct bp_upstream *up;
	struct bp_network net;
	struct bp_config cfg;
	pthread_t acceptor;
	char msg[200];
	int lfd, port, k;

	CU_ASSERT_FATAL((lfd = bp_unit_server_start(&port, node_head, &acceptor)) >= 0);
	bp_unit_node_config(&cfg, &net, "idle", port);
	memset(&s, 0, sizeof(s));
	s.net = &net;
	CU_ASSERT_PTR_NOT_NULL_FATAL(up = bp_upstream_new(&cfg));
	__atomic_store_n(&head_calls, 0, __ATOMIC_SEQ_CST);
	for (k = 0; k < 5; k++)
		CU_ASSERT_EQUAL(bp_bundler_submit_pass(u.db, up, &s, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&head_calls, __ATOMIC_SEQ_CST), 1);
	/* A second later the recent bundles are looked at again. */
	usleep(BP_BUNDLER_SUBMIT_REORG_EVERY_MS * 1000 + 50000);
	CU_ASSERT_EQUAL(bp_bundler_submit_pass(u.db, up, &s, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(__atomic_load_n(&head_calls, __ATOMIC_SEQ_CST), 2);
	bp_upstream_free(up);
	bp_unit_server_stop(lfd, acceptor);
}

BP_UNIT_SUITE(bundler, setup, teardown,
    { "pool: duplicates, replacement bump, sender cap, bundles", test_pool },
    { "pool: an op taken wakes the submitter, one refused does not", test_pool_wake },
    { "validate: AAxx reasons to ERC-7769 codes", test_reason_codes },
    { "validate: revert decoders with truncated and hostile data", test_decode },
    { "validate: gas and fee checks, preVerificationGas", test_fields },
    { "submitter: idle passes look for reorgs at most once a second", test_submit_idle })
