/*
 * libFuzzer harness for what the bundler reads from nodes and clients (docs/bundler.md): the
 * revert data of simulateValidation (bp_userop_validate_decode_validation: ValidationResult, FailedOp,
 * Error(string)) and of simulateHandleOp (bp_bundler_execution_result), the same of v0.7/v0.8's
 * EntryPointSimulations (bundler_v07.h: ValidationResult and ExecutionResult returned,
 * FailedOpWithRevert), and a client's UserOperation, in v0.6's and in v0.7's form, rendered back
 * as the JSON of eth_getUserOperationByHash (bp_bundler_op_json); and handleOps calldata read
 * back into ops (bp_bundler_handle_ops_op, bp_bundler_handle_ops_find, each version's).
 *
 * Beyond memory safety it checks, aborting on a violation:
 *
 *  - a refused revert has an ERC-7769 code in -32507 .. -32500 and a NUL-terminated message;
 *    kept revert data is a copy of the input;
 *  - an accepted ExecutionResult's targetResult lies inside the input;
 *  - an op that parses renders as JSON that parses back to the same op;
 *  - an op read from calldata has byte fields within BP_USEROP_BYTES_MAX and renders as JSON
 *    that parses; one that does not decode leaves the op empty;
 *  - the node's traces of a validation, judged by ERC-7562 (bp_erc7562_check; the input as
 *    [steps, calls, prestate] for the quick pass and the static pass): a verdict is 0, -32502
 *    or -32505 with a NUL-terminated message, and a pass answers 0 or 1; code read as bytes
 *    gives only the static pass's flags.
 *
 * So the fuzzer reaches the decoders without finding a selector, each input is also tried with
 * the five selectors in front.
 *
 *   bash tests/fuzz/run.sh 60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler/bundler.h"
#include "bundler/bundler_estimate.h"
#include "bundler/bundler_handle_ops.h"
#include "bundler/bundler_v07.h"
#include "bundler/erc7562.h"
#include "bundler/erc7562_quick.h"
#include "bundler/userop_validate.h"
#include "core/buf.h"
#include "evm/abi.h"
#include "evm/userop.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const sigs[] = {
	"ValidationResult((uint256,uint256,bool,uint48,uint48,bytes),(uint256,uint256),"
	    "(uint256,uint256),(uint256,uint256))",
	"FailedOp(uint256,string)",
	"Error(string)",
	"ExecutionResult(uint256,uint256,uint48,uint48,bool,bytes)",
	"FailedOpWithRevert(uint256,string,bytes)",
};

/* A refusal: an ERC-7769 code, a NUL-terminated message, kept data a copy of the input. */
static void
check_refusal(const struct bp_userop_validate_error *err, const uint8_t *d, size_t n)
{
	if (err->code < -32507 || err->code > -32500 ||
	    memchr(err->message, '\0', sizeof(err->message)) == NULL)
		abort();
	if (err->data != NULL && (err->len != n || memcmp(err->data, d, n) != 0))
		abort();
}

static void
decode(const uint8_t *d, size_t n)
{
	struct bp_userop_validate_result res;
	struct bp_userop_validate_error err;
	const uint8_t *r;
	size_t rlen;
	uint64_t pre, paid;
	int ok;

	memset(&err, 0, sizeof(err));
	if (bp_userop_validate_decode_validation(d, n, &res, &err) == -1)
		check_refusal(&err, d, n);
	bp_userop_validate_error_free(&err);
	if (bp_bundler_execution_result(d, n, &pre, &paid, &ok, &r, &rlen, &err) == 0) {
		if (r < d || r + rlen > d + n)
			abort();
	}
	bp_userop_validate_error_free(&err);
	/* v0.7/v0.8: results are return data (no selector), failures revert. */
	if (bp_bundler_v07_decode_validation(d, n, &res, &err) == -1)
		check_refusal(&err, d, n);
	bp_userop_validate_error_free(&err);
	if (bp_bundler_v07_decode_revert(d, n, &err) != -1)
		abort();
	check_refusal(&err, d, n);
	bp_userop_validate_error_free(&err);
	if (bp_bundler_v07_execution_result(d, n, &pre, &paid, &ok, &r, &rlen, &err) == 0) {
		if (r < d || r + rlen > d + n)
			abort();
	}
	bp_userop_validate_error_free(&err);
}

/* An op read back from calldata (the tuple itself, or handleOps of the zero sender's nonce 0). */
static void
handle_ops(const uint8_t *d, size_t n)
{
	static const uint8_t zero[20];
	struct bp_userop op;
	struct bp_u256 nonce;
	struct bp_buf b;
	uint8_t *buf;
	cJSON *k;
	int v, i, r;

	bp_u256_from_u64(&nonce, 0);
	for (v = 0; v < BP_EP__MAX; v++)
		for (i = 0; i < 2; i++) {
			if (i == 0)
				r = bp_bundler_handle_ops_op(d, n, (enum bp_ep_version)v, &op) == 0;
			else {
				if ((buf = malloc(n + 4)) == NULL)
					continue;
				bp_abi_selector(bp_bundler_v07_handle_ops_sig((enum bp_ep_version)v),
				    buf);
				memcpy(buf + 4, d, n);
				r = bp_bundler_handle_ops_find(buf, n + 4, (enum bp_ep_version)v, zero,
				    &nonce, &op) == 1;
				free(buf);
			}
			if (!r) {
				if (i == 0 && (op.bytes[0] != NULL || op.len[0] != 0))
					abort();
				continue;
			}
			for (r = 0; r < BP_USEROP_BYTES__MAX; r++)
				if (op.len[r] > BP_USEROP_BYTES_MAX)
					abort();
			bp_buf_init(&b, 1024 * 1024);
			if (bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0) {
				if ((k = cJSON_Parse(b.data)) == NULL)
					abort();
				cJSON_Delete(k);
			}
			bp_buf_free(&b);
			bp_userop_free(&op);
		}
}

/* An op of version v that parses renders as JSON that parses back to the same op. */
static void
roundtrip_v(const cJSON *j, enum bp_ep_version v)
{
	struct bp_userop op, back;
	struct bp_buf b;
	const char *field;
	char why[200];
	cJSON *k;
	size_t i;

	if (bp_userop_from_json_v(v, j, &op, &field, why, sizeof(why)) == 0) {
		bp_buf_init(&b, 1024 * 1024);
		if (bp_bundler_op_json(&op, &b) == 0 && bp_buf_add(&b, "", 1) == 0) {
			if ((k = cJSON_Parse(b.data)) == NULL ||
			    bp_userop_from_json_v(v, k, &back, &field, why, sizeof(why)) == -1)
				abort();
			if (memcmp(op.sender, back.sender, 20) != 0 ||
			    memcmp(op.num, back.num, sizeof(op.num)) != 0)
				abort();
			for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
				if (op.len[i] != back.len[i] || (op.len[i] > 0 &&
				    memcmp(op.bytes[i], back.bytes[i], op.len[i]) != 0))
					abort();
			bp_userop_free(&back);
			cJSON_Delete(k);
		}
		bp_buf_free(&b);
		bp_userop_free(&op);
	}
}

static void
roundtrip(const uint8_t *data, size_t size)
{
	cJSON *j;

	if ((j = cJSON_ParseWithLength((const char *)data, size)) == NULL)
		return;
	roundtrip_v(j, BP_EP_V06);
	roundtrip_v(j, BP_EP_V07);
	cJSON_Delete(j);
}

/* The ERC-7562 engine and its quick passes on the input as traces; the static pass's code reader. */
static void
traces(const uint8_t *data, size_t size)
{
	static const uint8_t ep[20] = { 0x5f, 0xf1, 0x37, 0xd4 }, acct[20] = { 0xaa }, pm[20] = {
	    0xbb };
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	cJSON *j;
	int rc;

	if (bp_erc7562_code_flags(data, size) > 0x07)
		abort();
	memset(&in, 0, sizeof(in));
	memcpy(in.entry_point, ep, 20);
	memcpy(in.addr[BP_ERC7562_ACCOUNT], acct, 20);
	in.present[BP_ERC7562_ACCOUNT] = 1;
	memcpy(in.addr[BP_ERC7562_PAYMASTER], pm, 20);
	in.present[BP_ERC7562_PAYMASTER] = size % 2;
	if (bp_erc7562_check((const char *)data, size, &in, &v) == 0 &&
	    ((v.code != 0 && v.code != -32502 && v.code != -32505) ||
	    memchr(v.message, '\0', sizeof(v.message)) == NULL))
		abort();
	if ((j = cJSON_ParseWithLength((const char *)data, size)) == NULL)
		return;
	if (cJSON_IsArray(j) && cJSON_GetArraySize(j) == 3) {
		rc = bp_erc7562_quick(cJSON_GetArrayItem(j, 0), cJSON_GetArrayItem(j, 1),
		    cJSON_GetArrayItem(j, 2), &in);
		if (rc != 0 && rc != 1)
			abort();
		rc = bp_erc7562_quick_static(cJSON_GetArrayItem(j, 1), cJSON_GetArrayItem(j, 2),
		    &in);
		if (rc != 0 && rc != 1)
			abort();
	}
	cJSON_Delete(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;
	size_t i;

	decode(data, size);
	if ((buf = malloc(size + 4)) != NULL) {
		for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			bp_abi_selector(sigs[i], buf);
			memcpy(buf + 4, data, size);
			decode(buf, size + 4);
		}
		free(buf);
	}
	roundtrip(data, size);
	handle_ops(data, size);
	traces(data, size);
	return 0;
}
