#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi.h"
#include "address.h"
#include "core/hex.h"
#include "keccak.h"
#include "userop.h"

static const char *const num_names[BP_USEROP_NUM__MAX] = {
	"nonce",		/* BP_USEROP_NONCE */
	"callGasLimit",		/* BP_USEROP_CALL_GAS_LIMIT */
	"verificationGasLimit",	/* BP_USEROP_VERIFICATION_GAS_LIMIT */
	"preVerificationGas",	/* BP_USEROP_PRE_VERIFICATION_GAS */
	"maxFeePerGas",		/* BP_USEROP_MAX_FEE_PER_GAS */
	"maxPriorityFeePerGas",	/* BP_USEROP_MAX_PRIORITY_FEE_PER_GAS */
};

static const char *const bytes_names[BP_USEROP_BYTES__MAX] = {
	"initCode",		/* BP_USEROP_INIT_CODE */
	"callData",		/* BP_USEROP_CALL_DATA */
	"paymasterAndData",	/* BP_USEROP_PAYMASTER_AND_DATA */
	"signature",		/* BP_USEROP_SIGNATURE */
};

const char *
bp_userop_num_name(enum bp_userop_num i)
{
	return i < BP_USEROP_NUM__MAX ? num_names[i] : "?";
}

const char *
bp_userop_bytes_name(enum bp_userop_bytes i)
{
	return i < BP_USEROP_BYTES__MAX ? bytes_names[i] : "?";
}

void
bp_userop_free(struct bp_userop *op)
{
	size_t i;

	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		free(op->bytes[i]);
	memset(op, 0, sizeof(*op));
}

/* The string member name of j, or NULL (with why set) when it is absent or not a string. */
static const char *
member_str(const cJSON *j, const char *name, int required, char *why, size_t cap, int *absent)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, name);

	*absent = m == NULL;
	if (m == NULL) {
		if (required)
			snprintf(why, cap, "%s is required", name);
		return NULL;
	}
	if (!cJSON_IsString(m) || m->valuestring == NULL) {
		snprintf(why, cap, "%s must be a hex string", name);
		*absent = 0;
		return NULL;
	}
	return m->valuestring;
}

int
bp_userop_from_json(const cJSON *j, struct bp_userop *op, const char **field, char *why,
    size_t cap)
{
	const char *s;
	size_t i, n;
	int absent;

	memset(op, 0, sizeof(*op));
	*field = "user_operation";
	if (!cJSON_IsObject(j)) {
		snprintf(why, cap, "user_operation must be an object");
		return -1;
	}
	*field = "sender";
	if ((s = member_str(j, "sender", 1, why, cap, &absent)) == NULL)
		goto bad;
	if (bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, op->sender) == -1) {
		snprintf(why, cap, "sender must be an address: 0x and 40 hex digits (mixed case "
		    "must be a valid EIP-55 checksum)");
		goto bad;
	}
	for (i = 0; i < BP_USEROP_NUM__MAX; i++) {
		*field = num_names[i];
		if ((s = member_str(j, num_names[i], 1, why, cap, &absent)) == NULL)
			goto bad;
		n = strlen(s);
		/* "0x" and digits; padding is allowed, but never more than 64 digits. */
		if (n < 3 || n > 66 || bp_u256_from_hex(&op->num[i], s, n) == -1) {
			snprintf(why, cap, "%s must be a hex quantity: 0x and 1 to 64 hex digits",
			    num_names[i]);
			goto bad;
		}
	}
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++) {
		*field = bytes_names[i];
		s = member_str(j, bytes_names[i], i == BP_USEROP_CALL_DATA, why, cap, &absent);
		if (s == NULL) {
			if (absent && i != BP_USEROP_CALL_DATA)
				continue;
			goto bad;
		}
		n = strlen(s);
		if (n > 2 + 2 * (size_t)BP_USEROP_BYTES_MAX) {
			snprintf(why, cap, "%s is longer than %d bytes", bytes_names[i],
			    BP_USEROP_BYTES_MAX);
			goto bad;
		}
		if (n > 2 && (op->bytes[i] = malloc(n / 2)) == NULL) {
			snprintf(why, cap, "out of memory");
			goto bad;
		}
		if (bp_hex_decode(s, n, op->bytes[i], n / 2, &op->len[i]) == -1) {
			snprintf(why, cap, "%s must be hex data: 0x and an even number of hex digits",
			    bytes_names[i]);
			goto bad;
		}
	}
	*field = NULL;
	why[0] = '\0';
	return 0;
bad:
	bp_userop_free(op);
	return -1;
}

static void
put_word_u256(uint8_t *w, const struct bp_u256 *v)
{
	bp_u256_to_be32(v, w);
}

static void
put_word_addr(uint8_t *w, const uint8_t a[20])
{
	memset(w, 0, 12);
	memcpy(w + 12, a, 20);
}

void
bp_userop_hash(const struct bp_userop *op, const uint8_t ep[20], uint64_t chain_id,
    uint8_t out[32])
{
	uint8_t buf[10 * 32], outer[3 * 32];
	struct bp_u256 cid;

	put_word_addr(buf, op->sender);
	put_word_u256(buf + 32, &op->num[BP_USEROP_NONCE]);
	bp_keccak256(op->bytes[BP_USEROP_INIT_CODE], op->len[BP_USEROP_INIT_CODE], buf + 64);
	bp_keccak256(op->bytes[BP_USEROP_CALL_DATA], op->len[BP_USEROP_CALL_DATA], buf + 96);
	put_word_u256(buf + 128, &op->num[BP_USEROP_CALL_GAS_LIMIT]);
	put_word_u256(buf + 160, &op->num[BP_USEROP_VERIFICATION_GAS_LIMIT]);
	put_word_u256(buf + 192, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]);
	put_word_u256(buf + 224, &op->num[BP_USEROP_MAX_FEE_PER_GAS]);
	put_word_u256(buf + 256, &op->num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS]);
	bp_keccak256(op->bytes[BP_USEROP_PAYMASTER_AND_DATA], op->len[BP_USEROP_PAYMASTER_AND_DATA],
	    buf + 288);
	bp_keccak256(buf, sizeof(buf), outer);
	put_word_addr(outer + 32, ep);
	bp_u256_from_u64(&cid, chain_id);
	put_word_u256(outer + 64, &cid);
	bp_keccak256(outer, sizeof(outer), out);
}

/* 32 + the length rounded up to a word: what a bytes value takes in a tail. */
static size_t
tail_len(size_t n)
{
	return 32 + (n + 31) / 32 * 32;
}

uint8_t *
bp_userop_abi(const struct bp_userop *op, size_t pnd_len, size_t *len, size_t *packed_len)
{
	struct bp_abi_enc *e;
	uint8_t *out = NULL, *zero = NULL;
	size_t cap = 11 * 32 + 4 * 32 + 32, i;
	const uint8_t *pnd = op->bytes[BP_USEROP_PAYMASTER_AND_DATA];

	if (pnd_len == (size_t)-1)
		pnd_len = op->len[BP_USEROP_PAYMASTER_AND_DATA];
	else if (pnd_len > 0 && (pnd = zero = calloc(1, pnd_len)) == NULL)
		return NULL;
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++)
		cap += tail_len(i == BP_USEROP_PAYMASTER_AND_DATA ? pnd_len : op->len[i]);
	if ((e = bp_abi_enc_new(cap)) == NULL)
		goto out;
	bp_abi_put_address(e, op->sender);
	bp_abi_put_u256(e, &op->num[BP_USEROP_NONCE]);
	bp_abi_put_bytes(e, op->bytes[BP_USEROP_INIT_CODE], op->len[BP_USEROP_INIT_CODE]);
	bp_abi_put_bytes(e, op->bytes[BP_USEROP_CALL_DATA], op->len[BP_USEROP_CALL_DATA]);
	for (i = BP_USEROP_CALL_GAS_LIMIT; i < BP_USEROP_NUM__MAX; i++)
		bp_abi_put_u256(e, &op->num[i]);
	bp_abi_put_bytes(e, pnd, pnd_len);
	bp_abi_put_bytes(e, op->bytes[BP_USEROP_SIGNATURE], op->len[BP_USEROP_SIGNATURE]);
	if (bp_abi_enc_finish(e, NULL, &out, len) == -1)
		out = NULL;
	*packed_len = 11 * 32 + tail_len(op->len[BP_USEROP_INIT_CODE]) +
	    tail_len(op->len[BP_USEROP_CALL_DATA]);
out:
	bp_abi_enc_free(e);
	free(zero);
	return out;
}

int
bp_userop_max_cost(const struct bp_userop *op, struct bp_u256 *wei)
{
	struct bp_u256 gas, v;
	uint64_t g;

	if (bp_u256_mul_u64(&v, &op->num[BP_USEROP_VERIFICATION_GAS_LIMIT], 3) != 0 ||
	    bp_u256_add(&gas, &v, &op->num[BP_USEROP_CALL_GAS_LIMIT]) != 0 ||
	    bp_u256_add(&gas, &gas, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]) != 0 ||
	    bp_u256_to_u64(&gas, &g) == -1 ||
	    bp_u256_mul_u64(wei, &op->num[BP_USEROP_MAX_FEE_PER_GAS], g) != 0)
		return -1;
	return 0;
}

/* Fills c from a call's target and data. */
static void
call_set(struct bp_userop_call *c, const uint8_t target[20], const uint8_t *p, size_t n)
{
	memcpy(c->target, target, 20);
	c->has_selector = n >= 4;
	if (n >= 4)
		memcpy(c->selector, p, 4);
	else
		memset(c->selector, 0, 4);
}

int
bp_userop_calls(const uint8_t *data, size_t len, struct bp_userop_call *calls, size_t cap)
{
	/* execute(address,uint256,bytes) and executeBatch(address[],bytes[]) (tests check them). */
	static const uint8_t sel_exec[4] = { 0xb6, 0x1d, 0x27, 0xf6 };
	static const uint8_t sel_batch[4] = { 0x18, 0xdf, 0xb3, 0xc7 };
	uint8_t target[20];
	const uint8_t *args, *p, *dests, *funcs;
	size_t alen, n, dlen, flen, nd, nf, i;

	if (len == 0)
		return 0;
	if (len < 4)
		return -1;
	args = data + 4;
	alen = len - 4;
	if (memcmp(data, sel_exec, 4) == 0) {
		struct bp_u256 value;

		if (cap < 1 || bp_abi_read_address(args, alen, 0, target) == -1 ||
		    bp_abi_read_u256(args, alen, 1, &value) == -1 ||
		    bp_abi_read_bytes(args, alen, 2, &p, &n) == -1)
			return -1;
		call_set(&calls[0], target, p, n);
		return 1;
	}
	if (memcmp(data, sel_batch, 4) != 0)
		return -1;
	if (bp_abi_read_array(args, alen, 0, 1, &dests, &dlen, &nd) == -1 ||
	    bp_abi_read_array(args, alen, 1, 1, &funcs, &flen, &nf) == -1 || nd != nf || nd > cap)
		return -1;
	for (i = 0; i < nd; i++) {
		if (bp_abi_read_address(dests, dlen, i, target) == -1 ||
		    bp_abi_read_bytes(funcs, flen, i, &p, &n) == -1)
			return -1;
		call_set(&calls[i], target, p, n);
	}
	return (int)nd;
}
