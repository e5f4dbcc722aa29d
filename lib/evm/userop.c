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

/* An address member (required or not); 1 read, 0 absent, -1 bad (why set). */
static int
read_address(const cJSON *j, const char *name, int required, uint8_t out[20], char *why,
    size_t cap)
{
	const char *s;
	int absent;

	if ((s = member_str(j, name, required, why, cap, &absent)) == NULL)
		return absent && !required ? 0 : -1;
	if (bp_addr_parse(s, strlen(s), BP_ADDR_CHECKSUM, out) == -1) {
		snprintf(why, cap, "%s must be an address: 0x and 40 hex digits (mixed case "
		    "must be a valid EIP-55 checksum)", name);
		return -1;
	}
	return 1;
}

/*
 * A quantity member: "0x" and 1 to 64 hex digits (padding allowed), below 2^bits. 1 read, 0
 * absent (and not required), -1 bad (why set).
 */
static int
read_quantity(const cJSON *j, const char *name, int required, unsigned bits,
    struct bp_u256 *out, char *why, size_t cap)
{
	const char *s;
	size_t n;
	int absent;

	if ((s = member_str(j, name, required, why, cap, &absent)) == NULL)
		return absent && !required ? 0 : -1;
	n = strlen(s);
	if (n < 3 || n > 66 || bp_u256_from_hex(out, s, n) == -1) {
		snprintf(why, cap, "%s must be a hex quantity: 0x and 1 to 64 hex digits", name);
		return -1;
	}
	/* v0.7 packs some quantities two to a word, 16 bytes each. */
	if (bits < 256) {
		uint8_t w[32];

		bp_u256_to_be32(out, w);
		if (memcmp(w, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", (256 - bits) / 8) != 0) {
			snprintf(why, cap, "%s must be below 2^%u", name, bits);
			return -1;
		}
	}
	return 1;
}

/* A data member into a heap copy (NULL when empty); 1 read, 0 absent, -1 bad (why set). */
static int
read_data(const cJSON *j, const char *name, int required, uint8_t **out, size_t *len,
    char *why, size_t cap)
{
	const char *s;
	size_t n;
	int absent;

	*out = NULL;
	*len = 0;
	if ((s = member_str(j, name, required, why, cap, &absent)) == NULL)
		return absent && !required ? 0 : -1;
	n = strlen(s);
	if (n > 2 + 2 * (size_t)BP_USEROP_BYTES_MAX) {
		snprintf(why, cap, "%s is longer than %d bytes", name, BP_USEROP_BYTES_MAX);
		return -1;
	}
	if (n > 2 && (*out = malloc(n / 2)) == NULL) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	if (bp_hex_decode(s, n, *out, n / 2, len) == -1) {
		snprintf(why, cap, "%s must be hex data: 0x and an even number of hex digits", name);
		return -1;
	}
	return 1;
}

int
bp_userop_from_json(const cJSON *j, struct bp_userop *op, const char **field, char *why,
    size_t cap)
{
	size_t i;

	memset(op, 0, sizeof(*op));
	*field = "user_operation";
	if (!cJSON_IsObject(j)) {
		snprintf(why, cap, "user_operation must be an object");
		return -1;
	}
	*field = "sender";
	if (read_address(j, "sender", 1, op->sender, why, cap) == -1)
		goto bad;
	for (i = 0; i < BP_USEROP_NUM__MAX; i++) {
		*field = num_names[i];
		if (read_quantity(j, num_names[i], 1, 256, &op->num[i], why, cap) == -1)
			goto bad;
	}
	for (i = 0; i < BP_USEROP_BYTES__MAX; i++) {
		*field = bytes_names[i];
		if (read_data(j, bytes_names[i], i == BP_USEROP_CALL_DATA, &op->bytes[i],
		    &op->len[i], why, cap) == -1)
			goto bad;
	}
	*field = NULL;
	why[0] = '\0';
	return 0;
bad:
	bp_userop_free(op);
	return -1;
}

const uint8_t bp_userop_7702_marker[20] = { 0x77, 0x02 };

/*
 * factory into out (*n bytes): an address, or viem's "0x7702", the EIP-7702 marker's short form,
 * kept as 2 bytes because clients pack initCode as factory ++ factoryData and a paymaster signs
 * that (the EntryPoint reads 0x7702 alone as the marker). As read_address otherwise.
 */
static int
read_factory(const cJSON *j, uint8_t out[20], size_t *n, char *why, size_t cap)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, "factory");

	*n = 20;
	if (cJSON_IsString(m) && m->valuestring != NULL &&
	    strcmp(m->valuestring, "0x7702") == 0) {
		memcpy(out, bp_userop_7702_marker, 2);
		*n = 2;
		return 1;
	}
	return read_address(j, "factory", 0, out, why, cap);
}

int
bp_userop_auth_from_json(const cJSON *a, struct bp_tx_auth *t, const char **field, char *why,
    size_t cap)
{
	static const char *const q[5] = { "chainId", "nonce", "yParity", "r", "s" };
	static const char *const fq[5] = { "eip7702Auth.chainId", "eip7702Auth.nonce",
	    "eip7702Auth.yParity", "eip7702Auth.r", "eip7702Auth.s" };
	struct bp_u256 v[5];
	uint64_t y;
	size_t i;

	*field = "eip7702Auth";
	if (!cJSON_IsObject(a)) {
		snprintf(why, cap, "eip7702Auth must be an object: {chainId, address, nonce, "
		    "yParity, r, s}");
		return -1;
	}
	*field = "eip7702Auth.address";
	if (read_address(a, "address", 1, t->address, why, cap) == -1)
		return -1;
	for (i = 0; i < 5; i++) {
		*field = fq[i];
		if (read_quantity(a, q[i], 1, 256, &v[i], why, cap) == -1)
			return -1;
	}
	/* EIP-7702 bounds the nonce to 64 bits; a y parity outside 0 and 1 cannot recover. */
	*field = fq[1];
	if (bp_u256_to_u64(&v[1], &t->nonce) == -1) {
		snprintf(why, cap, "nonce must be below 2^64");
		return -1;
	}
	*field = fq[2];
	if (bp_u256_to_u64(&v[2], &y) == -1 || y > 1) {
		snprintf(why, cap, "yParity must be 0x0 or 0x1");
		return -1;
	}
	t->chain_id = v[0];
	t->y_parity = (uint8_t)y;
	bp_u256_to_be32(&v[3], t->r);
	bp_u256_to_be32(&v[4], t->s);
	return 0;
}

/* eip7702Auth into op->auth: 1 read, 0 absent, -1 bad (*field and why set). */
static int
read_auth(const cJSON *j, struct bp_userop *op, const char **field, char *why, size_t cap)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "eip7702Auth");

	if (a == NULL)
		return 0;
	if (bp_userop_auth_from_json(a, &op->auth, field, why, cap) == -1)
		return -1;
	op->has_auth = 1;
	return 1;
}

/* The JSON-RPC members of v0.7 and v0.8 beyond v0.6's six quantities. */
static const char *const pm_gas_names[2] = {
	"paymasterVerificationGasLimit", "paymasterPostOpGasLimit"
};

/* a ++ b (either may be empty) into a new heap buffer *out; 0, or -1 out of memory. */
static int
join(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint8_t **out, size_t *len)
{
	*out = NULL;
	*len = alen + blen;
	if (*len == 0)
		return 0;
	if ((*out = malloc(*len)) == NULL)
		return -1;
	if (alen > 0)
		memcpy(*out, a, alen);
	if (blen > 0)
		memcpy(*out + alen, b, blen);
	return 0;
}

/* The members a v0.7 form leaves out may be null, as some clients write them. */
static cJSON *
without_nulls(const cJSON *j)
{
	cJSON *c, *m, *next;

	if ((c = cJSON_Duplicate(j, 1)) == NULL)
		return NULL;
	for (m = c->child; m != NULL; m = next) {
		next = m->next;
		if (cJSON_IsNull(m))
			cJSON_Delete(cJSON_DetachItemViaPointer(c, m));
	}
	return c;
}

int
bp_userop_from_json_v07(const cJSON *j0, struct bp_userop *op, const char **field,
    char *why, size_t cap)
{
	/* The four quantities v0.7 packs in 16 bytes each (accountGasLimits, gasFees). */
	static const unsigned bits[BP_USEROP_NUM__MAX] = { 256, 128, 128, 256, 128, 128 };
	uint8_t factory[20], paymaster[20], word[32], *fdata = NULL, *pdata = NULL, *pnd = NULL;
	size_t flen = 0, plen = 0, factory_len, i;
	int has_factory, has_pm;
	cJSON *j = NULL;

	memset(op, 0, sizeof(*op));
	op->version = BP_EP_V07;
	*field = "user_operation";
	if (!cJSON_IsObject(j0)) {
		snprintf(why, cap, "user_operation must be an object");
		return -1;
	}
	if ((j = without_nulls(j0)) == NULL) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	*field = "sender";
	if (read_address(j, "sender", 1, op->sender, why, cap) == -1)
		goto bad;
	for (i = 0; i < BP_USEROP_NUM__MAX; i++) {
		*field = num_names[i];
		if (read_quantity(j, num_names[i], 1, bits[i], &op->num[i], why, cap) == -1)
			goto bad;
	}
	*field = "callData";
	if (read_data(j, "callData", 1, &op->bytes[BP_USEROP_CALL_DATA],
	    &op->len[BP_USEROP_CALL_DATA], why, cap) == -1)
		goto bad;
	*field = "signature";
	if (read_data(j, "signature", 0, &op->bytes[BP_USEROP_SIGNATURE],
	    &op->len[BP_USEROP_SIGNATURE], why, cap) == -1)
		goto bad;
	/* initCode = factory ++ factoryData. */
	*field = "factory";
	if ((has_factory = read_factory(j, factory, &factory_len, why, cap)) == -1)
		goto bad;
	*field = "factoryData";
	if (read_data(j, "factoryData", 0, &fdata, &flen, why, cap) == -1)
		goto bad;
	if (!has_factory && flen > 0) {
		snprintf(why, cap, "factoryData needs factory");
		goto bad;
	}
	if (has_factory && join(factory, factory_len, fdata, flen, &op->bytes[BP_USEROP_INIT_CODE],
	    &op->len[BP_USEROP_INIT_CODE]) == -1)
		goto oom;
	/* paymasterAndData = paymaster ++ both gas limits (16 bytes each) ++ paymasterData. */
	for (i = 0; i < 2; i++) {
		*field = pm_gas_names[i];
		if ((op->has_pm_gas[i] = read_quantity(j, pm_gas_names[i], 0, 128,
		    &op->pm_gas[i], why, cap)) == -1)
			goto bad;
	}
	*field = "paymaster";
	if ((has_pm = read_address(j, "paymaster", 0, paymaster, why, cap)) == -1)
		goto bad;
	*field = "paymasterData";
	if (read_data(j, "paymasterData", 0, &pdata, &plen, why, cap) == -1)
		goto bad;
	if (has_pm) {
		uint8_t head[52];

		memcpy(head, paymaster, 20);
		bp_u256_to_be32(&op->pm_gas[0], word);
		memcpy(head + 20, word + 16, 16);
		bp_u256_to_be32(&op->pm_gas[1], word);
		memcpy(head + 36, word + 16, 16);
		if (join(head, sizeof(head), pdata, plen, &pnd, &i) == -1)
			goto oom;
		op->bytes[BP_USEROP_PAYMASTER_AND_DATA] = pnd;
		op->len[BP_USEROP_PAYMASTER_AND_DATA] = i;
	}
	if (read_auth(j, op, field, why, cap) == -1)
		goto bad;
	free(fdata);
	free(pdata);
	cJSON_Delete(j);
	*field = NULL;
	why[0] = '\0';
	return 0;
oom:
	snprintf(why, cap, "out of memory");
bad:
	free(fdata);
	free(pdata);
	cJSON_Delete(j);
	bp_userop_free(op);
	return -1;
}

int
bp_userop_from_json_v(enum bp_ep_version v, const cJSON *j, struct bp_userop *op,
    const char **field, char *why, size_t cap)
{
	int rc;

	if (v == BP_EP_V06)
		return bp_userop_from_json(j, op, field, why, cap);
	rc = bp_userop_from_json_v07(j, op, field, why, cap);
	op->version = v;
	return rc;
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

/* hi (16 low bytes of a) ++ lo (16 low bytes of b): v0.7's accountGasLimits and gasFees. */
static void
put_word_pair(uint8_t *w, const struct bp_u256 *hi, const struct bp_u256 *lo)
{
	uint8_t t[32];

	bp_u256_to_be32(hi, t);
	memcpy(w, t + 16, 16);
	bp_u256_to_be32(lo, t);
	memcpy(w + 16, t + 16, 16);
}

/*
 * The eight words UserOperationLib.encode of v0.7 hashes (sender, nonce, keccak(initCode),
 * keccak(callData), accountGasLimits, preVerificationGas, gasFees, keccak(paymasterAndData)),
 * at w.
 */
static void
packed_words(const struct bp_userop *op, const struct bp_userop_digests *d,
    uint8_t w[8 * 32])
{
	struct bp_userop_digests own;

	if (d == NULL) {
		bp_userop_digests(op, &own);
		d = &own;
	}
	put_word_addr(w, op->sender);
	put_word_u256(w + 32, &op->num[BP_USEROP_NONCE]);
	memcpy(w + 64, d->init_code, 32);
	memcpy(w + 96, d->call_data, 32);
	bp_userop_account_gas_limits(op, w + 128);
	put_word_u256(w + 160, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]);
	bp_userop_gas_fees(op, w + 192);
	bp_keccak256(op->bytes[BP_USEROP_PAYMASTER_AND_DATA], op->len[BP_USEROP_PAYMASTER_AND_DATA],
	    w + 224);
}

void
bp_userop_digests(const struct bp_userop *op, struct bp_userop_digests *d)
{
	bp_keccak256(op->bytes[BP_USEROP_INIT_CODE], op->len[BP_USEROP_INIT_CODE], d->init_code);
	bp_keccak256(op->bytes[BP_USEROP_CALL_DATA], op->len[BP_USEROP_CALL_DATA], d->call_data);
}

void
bp_userop_account_gas_limits(const struct bp_userop *op, uint8_t out[32])
{
	put_word_pair(out, &op->num[BP_USEROP_VERIFICATION_GAS_LIMIT],
	    &op->num[BP_USEROP_CALL_GAS_LIMIT]);
}

void
bp_userop_gas_fees(const struct bp_userop *op, uint8_t out[32])
{
	put_word_pair(out, &op->num[BP_USEROP_MAX_PRIORITY_FEE_PER_GAS],
	    &op->num[BP_USEROP_MAX_FEE_PER_GAS]);
}

/*
 * Keccak-256 of the type strings of v0.8's EIP-712 hash (tests/unit/test_evm_userop.c
 * recomputes them): PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes
 * callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes
 * paymasterAndData), EIP712Domain(string name,string version,uint256 chainId,address
 * verifyingContract), "ERC4337" and "1".
 */
const uint8_t bp_userop_v08_typehash[32] = {
	0x29, 0xa0, 0xbc, 0xa4, 0xaf, 0x4b, 0xe3, 0x42, 0x13, 0x98, 0xda, 0x00, 0x29, 0x5e, 0x58, 0xe6,
	0xd7, 0xde, 0x38, 0xcb, 0x49, 0x22, 0x14, 0x75, 0x4c, 0xb6, 0xa4, 0x75, 0x07, 0xdd, 0x6f, 0x8e,
};
static const uint8_t domain_typehash[32] = {
	0x8b, 0x73, 0xc3, 0xc6, 0x9b, 0xb8, 0xfe, 0x3d, 0x51, 0x2e, 0xcc, 0x4c, 0xf7, 0x59, 0xcc, 0x79,
	0x23, 0x9f, 0x7b, 0x17, 0x9b, 0x0f, 0xfa, 0xca, 0xa9, 0xa7, 0x5d, 0x52, 0x2b, 0x39, 0x40, 0x0f,
};

/*
 * v0.8's EIP-712 hash: keccak256(0x1901 ++ domainSeparator ++ keccak256(typehash ++
 * encode(op))), with keccak256(initCode) replaced by *init_hash when it is not NULL.
 */
static void
hash_v08(const struct bp_userop *op, const uint8_t ep[20], const struct bp_u256 *cid,
    const uint8_t *init_hash, const struct bp_userop_digests *d, uint8_t out[32])
{
	uint8_t buf[9 * 32], dom[5 * 32], w[66];

	memcpy(buf, bp_userop_v08_typehash, 32);
	packed_words(op, d, buf + 32);
	if (init_hash != NULL)
		memcpy(buf + 32 + 64, init_hash, 32);
	w[0] = 0x19;
	w[1] = 0x01;
	memcpy(dom, domain_typehash, 32);
	bp_keccak256((const uint8_t *)"ERC4337", 7, dom + 32);
	bp_keccak256((const uint8_t *)"1", 1, dom + 64);
	put_word_u256(dom + 96, cid);
	put_word_addr(dom + 128, ep);
	bp_keccak256(dom, sizeof(dom), w + 2);
	bp_keccak256(buf, sizeof(buf), w + 34);
	bp_keccak256(w, sizeof(w), out);
}

int
bp_userop_is_7702(const struct bp_userop *op)
{
	size_t n = op->len[BP_USEROP_INIT_CODE];

	/*
	 * Only v0.8's EntryPoint knows the marker: to v0.6 and v0.7 it is a factory's address.
	 * Calldata past its end reads as zeros: a shorter initCode is compared as padded.
	 */
	return op->version == BP_EP_V08 && n >= 2 && memcmp(op->bytes[BP_USEROP_INIT_CODE], bp_userop_7702_marker,
	    n < 20 ? n : 20) == 0;
}

void
bp_userop_hash_7702(const struct bp_userop *op, const uint8_t ep[20], uint64_t chain_id,
    const uint8_t delegate[20], uint8_t out[32])
{
	struct bp_keccak k;
	struct bp_u256 cid;
	uint8_t init_hash[32];
	size_t n = op->len[BP_USEROP_INIT_CODE];

	/* keccak256(delegate), or keccak256(delegate ++ initCode[20:]) past 20 bytes. */
	bp_keccak_init(&k);
	bp_keccak_update(&k, delegate, 20);
	if (n > 20)
		bp_keccak_update(&k, op->bytes[BP_USEROP_INIT_CODE] + 20, n - 20);
	bp_keccak_final(&k, init_hash);
	bp_u256_from_u64(&cid, chain_id);
	hash_v08(op, ep, &cid, init_hash, NULL, out);
}

void
bp_userop_hash_v(const struct bp_userop *op, const uint8_t ep[20], uint64_t chain_id,
    uint8_t out[32])
{
	bp_userop_hash_vd(op, ep, chain_id, NULL, out);
}

void
bp_userop_hash_vd(const struct bp_userop *op, const uint8_t ep[20], uint64_t chain_id,
    const struct bp_userop_digests *d, uint8_t out[32])
{
	uint8_t buf[8 * 32], outer[3 * 32];
	struct bp_u256 cid;

	bp_u256_from_u64(&cid, chain_id);
	switch (op->version) {
	case BP_EP_V07:
		/* keccak256(abi.encode(keccak256(encode(op)), entryPoint, chainId)) */
		packed_words(op, d, buf);
		bp_keccak256(buf, sizeof(buf), outer);
		put_word_addr(outer + 32, ep);
		put_word_u256(outer + 64, &cid);
		bp_keccak256(outer, sizeof(outer), out);
		return;
	case BP_EP_V08:
		if (bp_userop_is_7702(op))
			bp_userop_hash_7702(op, ep, chain_id, op->has_auth ? op->auth.address :
			    bp_userop_7702_marker, out);
		else
			hash_v08(op, ep, &cid, NULL, d, out);
		return;
	default:
		bp_userop_hash(op, ep, chain_id, out);
		return;
	}
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
	uint8_t *out = NULL, *zero = NULL, w[32];
	size_t cap = 11 * 32 + 4 * 32 + 32, head = 11 * 32, i;
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
	if (op->version != BP_EP_V06) {
		/* PackedUserOperation: the four limits and fees in two words. */
		bp_userop_account_gas_limits(op, w);
		bp_abi_put_bytes32(e, w);
		bp_abi_put_u256(e, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]);
		bp_userop_gas_fees(op, w);
		bp_abi_put_bytes32(e, w);
		head = 9 * 32;
	} else
		for (i = BP_USEROP_CALL_GAS_LIMIT; i < BP_USEROP_NUM__MAX; i++)
			bp_abi_put_u256(e, &op->num[i]);
	bp_abi_put_bytes(e, pnd, pnd_len);
	bp_abi_put_bytes(e, op->bytes[BP_USEROP_SIGNATURE], op->len[BP_USEROP_SIGNATURE]);
	if (bp_abi_enc_finish(e, NULL, &out, len) == -1)
		out = NULL;
	*packed_len = head + tail_len(op->len[BP_USEROP_INIT_CODE]) +
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

	/* v0.7 and v0.8: the sum of the five limits, the paymaster's two included. */
	if (op->version != BP_EP_V06) {
		if (bp_u256_add(&gas, &op->num[BP_USEROP_VERIFICATION_GAS_LIMIT],
		    &op->num[BP_USEROP_CALL_GAS_LIMIT]) != 0 ||
		    bp_u256_add(&gas, &gas, &op->num[BP_USEROP_PRE_VERIFICATION_GAS]) != 0 ||
		    bp_u256_add(&gas, &gas, &op->pm_gas[0]) != 0 ||
		    bp_u256_add(&gas, &gas, &op->pm_gas[1]) != 0 ||
		    bp_u256_to_u64(&gas, &g) == -1 ||
		    bp_u256_mul_u64(wei, &op->num[BP_USEROP_MAX_FEE_PER_GAS], g) != 0)
			return -1;
		return 0;
	}
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
	/*
	 * execute(address,uint256,bytes) and executeBatch(address[],bytes[]) of v0.6,
	 * executeBatch(address[],uint256[],bytes[]) of v0.7 and executeBatch((address,uint256,
	 * bytes)[]) of v0.8 (tests check them).
	 */
	static const uint8_t sel_exec[4] = { 0xb6, 0x1d, 0x27, 0xf6 };
	static const uint8_t sel_batch[4] = { 0x18, 0xdf, 0xb3, 0xc7 };
	static const uint8_t sel_batch07[4] = { 0x47, 0xe1, 0xda, 0x2a };
	static const uint8_t sel_batch08[4] = { 0x34, 0xfc, 0xd5, 0xbe };
	uint8_t target[20];
	const uint8_t *args, *p, *dests, *funcs, *vals, *t;
	size_t alen, n, dlen, flen, vlen, tlen, nd, nf, nv, i;
	int v07;

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
	if (memcmp(data, sel_batch08, 4) == 0) {
		/* One array of Call tuples (each dynamic: its bytes). */
		if (bp_abi_read_array(args, alen, 0, 1, &dests, &dlen, &nd) == -1 || nd > cap)
			return -1;
		for (i = 0; i < nd; i++) {
			if (bp_abi_read_tuple(dests, dlen, i, &t, &tlen) == -1 ||
			    bp_abi_read_address(t, tlen, 0, target) == -1 ||
			    bp_abi_read_bytes(t, tlen, 2, &p, &n) == -1)
				return -1;
			call_set(&calls[i], target, p, n);
		}
		return (int)nd;
	}
	if (!(v07 = memcmp(data, sel_batch07, 4) == 0) && memcmp(data, sel_batch, 4) != 0)
		return -1;
	/* v0.7 puts the values between: none, or one per call, as SimpleAccount requires. */
	if (bp_abi_read_array(args, alen, 0, 1, &dests, &dlen, &nd) == -1 ||
	    (v07 && (bp_abi_read_array(args, alen, 1, 1, &vals, &vlen, &nv) == -1 ||
	    (nv != 0 && nv != nd))) ||
	    bp_abi_read_array(args, alen, v07 ? 2 : 1, 1, &funcs, &flen, &nf) == -1 || nd != nf ||
	    nd > cap)
		return -1;
	for (i = 0; i < nd; i++) {
		if (bp_abi_read_address(dests, dlen, i, target) == -1 ||
		    bp_abi_read_bytes(funcs, flen, i, &p, &n) == -1)
			return -1;
		call_set(&calls[i], target, p, n);
	}
	return (int)nd;
}
