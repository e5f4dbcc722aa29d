/*
 * EIP-7702 ops in the bundler (bundler_7702.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundler_7702.h"
#include "core/buf.h"
#include "core/util.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "evm/tx.h"

/* Sets e's code and message; returns -1. */
static int
set_err(struct bp_userop_validate_error *e, int code, const char *msg)
{
	e->code = code;
	bp_strlcpy(e->message, msg, sizeof(e->message));
	return -1;
}

/*
 * The sender's code and, with want_nonce, its pending nonce, in one batch. 0, or -1 when the
 * node did not answer. *code is the caller's (free()).
 */
static int
sender_state(struct bp_upstream *up, const struct bp_network *net, const uint8_t sender[20],
    int want_nonce, uint8_t **code, size_t *len, uint64_t *nonce)
{
	struct bp_chain_read r[2];
	struct bp_chain *ch;
	size_t n = want_nonce ? 2 : 1, ok;

	*code = NULL;
	*len = 0;
	/* Plain reads of one network: the context's config serves Multicall3 only. */
	if ((ch = bp_chain_new(NULL, up)) == NULL)
		return -1;
	memset(r, 0, sizeof(r));
	r[0].op = BP_CHAIN_CODE;
	memcpy(r[0].address, sender, 20);
	r[0].block = BP_CHAIN_LATEST;
	r[1].op = BP_CHAIN_TX_COUNT;
	memcpy(r[1].address, sender, 20);
	r[1].block = BP_CHAIN_LATEST;
	ok = bp_chain_batch(ch, net, r, n);
	bp_chain_free(ch);
	if (ok != n) {
		bp_chain_reads_free(r, n);
		return -1;
	}
	*code = r[0].bytes;
	*len = r[0].nbytes;
	r[0].bytes = NULL;
	if (want_nonce)
		*nonce = r[1].u64;
	bp_chain_reads_free(r, n);
	return 0;
}

int
bp_bundler_7702_prepare(struct bp_upstream *up, const struct bp_network *net,
    const struct bp_userop *op, int strict, uint8_t delegate[20], int *apply,
    struct bp_userop_validate_error *err)
{
	struct bp_u256 id;
	uint8_t *code = NULL, who[20];
	char msg[200], a[BP_ADDR_STRLEN];
	size_t len;
	uint64_t nonce = 0;
	int marker = bp_userop_is_7702(op), rc;

	*apply = 0;
	if (!op->has_auth && !marker)
		return 0;
	if (op->has_auth) {
		bp_u256_from_u64(&id, (uint64_t)net->chain_id);
		if (!bp_u256_is_zero(&op->auth.chain_id) && bp_u256_cmp(&op->auth.chain_id, &id) != 0) {
			snprintf(msg, sizeof(msg), "userOperation.eip7702Auth.chainId must be the "
			    "network's (0x%llx) or 0", (unsigned long long)net->chain_id);
			return set_err(err, BP_USEROP_VALIDATE_INVALID_PARAMS, msg);
		}
		if (strict) {
			if (bp_tx_auth_authority(&op->auth, who) == -1 ||
			    memcmp(who, op->sender, 20) != 0)
				return set_err(err, BP_USEROP_VALIDATE_INVALID_PARAMS, "userOperation."
				    "eip7702Auth is not signed by the sender");
			if (sender_state(up, net, op->sender, 1, &code, &len, &nonce) == -1)
				return set_err(err, BP_USEROP_VALIDATE_INTERNAL, "the node did not "
				    "answer");
			free(code);
			/*
			 * The tuple of another nonce would be skipped by the node, and the op run
			 * by an EOA without the code it was checked with.
			 */
			if (op->auth.nonce != nonce) {
				snprintf(msg, sizeof(msg), "userOperation.eip7702Auth.nonce is %llu; "
				    "the sender's nonce is %llu", (unsigned long long)op->auth.nonce,
				    (unsigned long long)nonce);
				return set_err(err, BP_USEROP_VALIDATE_INVALID_PARAMS, msg);
			}
		}
		memcpy(delegate, op->auth.address, 20);
		*apply = 1;
		return 1;
	}
	if (sender_state(up, net, op->sender, 0, &code, &len, &nonce) == -1)
		return set_err(err, BP_USEROP_VALIDATE_INTERNAL, "the node did not answer");
	rc = bp_tx_delegation(code, len, delegate);
	free(code);
	if (rc == 0) {
		bp_addr_format_checksum(op->sender, a, sizeof(a));
		snprintf(msg, sizeof(msg), "userOperation.eip7702Auth is required: the sender %s "
		    "is not delegated (factory 0x7702 runs the code an EOA delegates to)", a);
		return set_err(err, BP_USEROP_VALIDATE_INVALID_PARAMS, msg);
	}
	return 1;
}

void
bp_bundler_7702_hash(const struct bp_userop *op, const uint8_t ep[20], const struct bp_network *net,
    int rc, const uint8_t delegate[20], uint8_t out[32])
{
	if (rc == 1 && bp_userop_is_7702(op))
		bp_userop_hash_7702(op, ep, (uint64_t)net->chain_id, delegate, out);
	else
		bp_userop_hash_v(op, ep, (uint64_t)net->chain_id, out);
}

int
bp_bundler_7702_usable(struct bp_upstream *up, const struct bp_network *net,
    const struct bp_userop *op)
{
	uint8_t *code, d[20];
	size_t len;
	uint64_t nonce;
	int rc;

	if (sender_state(up, net, op->sender, 1, &code, &len, &nonce) == -1)
		return -1;
	rc = op->auth.nonce == nonce || (bp_tx_delegation(code, len, d) &&
	    memcmp(d, op->auth.address, 20) == 0);
	free(code);
	return rc;
}

char *
bp_bundler_7702_bundle_override(const struct bp_userop *const *ops, size_t n, int *oom)
{
	struct bp_buf b;
	char s[BP_ADDR_STRLEN], d[BP_ADDR_STRLEN];
	size_t i, k = 0;
	int rc = 0;

	*oom = 0;
	bp_buf_init(&b, 64 + n * 2 * BP_ADDR_STRLEN + n * 32);
	for (i = 0; i < n && rc == 0; i++) {
		if (!ops[i]->has_auth)
			continue;
		bp_addr_format_lower(ops[i]->sender, s, sizeof(s));
		bp_addr_format_lower(ops[i]->auth.address, d, sizeof(d));
		rc = bp_buf_printf(&b, "%s\"%s\":{\"code\":\"0xef0100%s\"}", k++ ? "," : "{", s,
		    d + 2);
	}
	if (rc == 0 && k > 0)
		rc = bp_buf_add(&b, "}", 2);
	if (rc == -1 || k == 0) {
		*oom = rc == -1;
		bp_buf_free(&b);
		return NULL;
	}
	return b.data;
}
