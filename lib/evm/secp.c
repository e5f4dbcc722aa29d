/*
 * Ethereum keys and signatures on libsecp256k1 (secp.h, docs/evm.md).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <secp256k1.h>
#include <secp256k1_recovery.h>

#include "keccak.h"
#include "secp.h"

/*
 * One context per process, created on first use under ctx_lock; the calls that use it take it
 * const, which libsecp256k1 allows from many threads at once.
 */
static secp256k1_context *ctx;
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Half the group order n, big-endian: s above it is "high" (EIP-2). n =
 * FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE BAAEDCE6 AF48A03B BFD25E8C D0364141.
 */
static const uint8_t half_order[32] = {
	0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d,
	0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
};

static secp256k1_context *create_ctx(void);

/* The context, created and randomized on first use; NULL (logged) on failure. */
static secp256k1_context *
get_ctx(void)
{
	secp256k1_context *c;

	pthread_mutex_lock(&ctx_lock);
	if (ctx == NULL)
		ctx = create_ctx();
	c = ctx;
	pthread_mutex_unlock(&ctx_lock);
	return c;
}

static secp256k1_context *
create_ctx(void)
{
	uint8_t seed[32];
	secp256k1_context *c;

	c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
	if (c == NULL) {
		fprintf(stderr, "%s: secp256k1_context_create failed\n", __func__);
		return NULL;
	}
	/* Blinding against side channels in signing and key generation. */
	if (RAND_bytes(seed, sizeof(seed)) != 1 ||
	    secp256k1_context_randomize(c, seed) != 1) {
		fprintf(stderr, "%s: cannot randomize the secp256k1 context\n", __func__);
		OPENSSL_cleanse(seed, sizeof(seed));
		secp256k1_context_destroy(c);
		return NULL;
	}
	OPENSSL_cleanse(seed, sizeof(seed));
	return c;
}

void
bp_secp_cleanup(void)
{
	pthread_mutex_lock(&ctx_lock);
	if (ctx != NULL) {
		secp256k1_context_destroy(ctx);
		ctx = NULL;
	}
	pthread_mutex_unlock(&ctx_lock);
}

int
bp_secp_pubkey(const uint8_t priv[32], uint8_t pub[BP_SECP_PUB_LEN])
{
	secp256k1_context *c;
	secp256k1_pubkey pk;
	uint8_t ser[65];
	size_t n = sizeof(ser);

	if ((c = get_ctx()) == NULL)
		return -1;
	if (secp256k1_ec_pubkey_create(c, &pk, priv) != 1)
		return -1;
	if (secp256k1_ec_pubkey_serialize(c, ser, &n, &pk, SECP256K1_EC_UNCOMPRESSED) != 1 ||
	    n != 65)
		return -1;
	memcpy(pub, ser + 1, BP_SECP_PUB_LEN);
	return 0;
}

void
bp_secp_pub_to_addr(const uint8_t pub[BP_SECP_PUB_LEN], uint8_t addr[20])
{
	uint8_t h[32];

	bp_keccak256(pub, BP_SECP_PUB_LEN, h);
	memcpy(addr, h + 12, 20);
}

int
bp_secp_priv_to_addr(const uint8_t priv[32], uint8_t addr[20])
{
	uint8_t pub[BP_SECP_PUB_LEN];

	if (bp_secp_pubkey(priv, pub) != 0)
		return -1;
	bp_secp_pub_to_addr(pub, addr);
	return 0;
}

int
bp_secp_sign(const uint8_t priv[32], const uint8_t hash[32], uint8_t sig[BP_SECP_SIG_LEN])
{
	secp256k1_context *c;
	secp256k1_ecdsa_recoverable_signature rs;
	int recid, rc = -1;

	if ((c = get_ctx()) == NULL)
		return -1;
	/* NULL nonce function: RFC 6979, the same nonces as ethers and geth; s comes out low. */
	if (secp256k1_ecdsa_sign_recoverable(c, &rs, hash, priv, NULL, NULL) != 1)
		goto out;
	if (secp256k1_ecdsa_recoverable_signature_serialize_compact(c, sig, &recid, &rs) != 1 ||
	    recid < 0 || recid > 1)
		goto out;
	sig[64] = (uint8_t)recid;
	rc = 0;
out:
	OPENSSL_cleanse(&rs, sizeof(rs));
	return rc;
}

int
bp_secp_recover(const uint8_t hash[32], const uint8_t sig[BP_SECP_SIG_LEN], uint8_t addr[20])
{
	secp256k1_context *c;
	secp256k1_ecdsa_recoverable_signature rs;
	secp256k1_pubkey pk;
	uint8_t ser[65];
	size_t n = sizeof(ser);
	int recid;

	switch (sig[64]) {
	case 0:
	case 1:
		recid = sig[64];
		break;
	case 27:
	case 28:
		recid = sig[64] - 27;
		break;
	default:
		return -1;
	}
	/* High s is malleable (EIP-2); libsecp256k1's recover would accept it. */
	if (memcmp(sig + 32, half_order, 32) > 0)
		return -1;
	if ((c = get_ctx()) == NULL)
		return -1;
	/* parse_compact rejects r or s not below the order; recover rejects r or s of 0. */
	if (secp256k1_ecdsa_recoverable_signature_parse_compact(c, &rs, sig, recid) != 1)
		return -1;
	if (secp256k1_ecdsa_recover(c, &pk, &rs, hash) != 1)
		return -1;
	if (secp256k1_ec_pubkey_serialize(c, ser, &n, &pk, SECP256K1_EC_UNCOMPRESSED) != 1 ||
	    n != 65)
		return -1;
	bp_secp_pub_to_addr(ser + 1, addr);
	return 0;
}

void
bp_secp_personal_hash(const void *msg, size_t n, uint8_t hash[32])
{
	static const char prefix[] = "\x19" "Ethereum Signed Message:\n";
	char len[24];
	int ll;
	struct bp_keccak k;

	ll = snprintf(len, sizeof(len), "%zu", n);
	bp_keccak_init(&k);
	bp_keccak_update(&k, prefix, sizeof(prefix) - 1);
	bp_keccak_update(&k, len, (size_t)ll);
	bp_keccak_update(&k, msg, n);
	bp_keccak_final(&k, hash);
}

int
bp_secp_personal_sign(const uint8_t priv[32], const void *msg, size_t n,
    uint8_t sig[BP_SECP_SIG_LEN])
{
	uint8_t h[32];

	bp_secp_personal_hash(msg, n, h);
	if (bp_secp_sign(priv, h, sig) != 0)
		return -1;
	sig[64] += 27;
	return 0;
}

int
bp_secp_personal_recover(const void *msg, size_t n, const uint8_t sig[BP_SECP_SIG_LEN],
    uint8_t addr[20])
{
	uint8_t h[32];

	bp_secp_personal_hash(msg, n, h);
	return bp_secp_recover(h, sig, addr);
}
