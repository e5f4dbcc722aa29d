/*
 * EIP-1559 and EIP-7702 transaction encoding and signing (tx.h; EIP-1559 and EIP-7702
 * "Specification", EIP-2718).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "keccak.h"
#include "rlp.h"
#include "secp.h"
#include "tx.h"
#include "u256.h"

#define TX_TYPE_1559	0x02
#define TX_TYPE_7702	0x04
#define AUTH_MAGIC	0x05

/* Puts r and s as RLP integers (minimal bytes). Errors are sticky in e. */
static void
put_rs(struct bp_rlp_enc *e, const uint8_t r[32], const uint8_t s[32])
{
	struct bp_u256 v;

	bp_u256_from_be32(&v, r);
	(void)bp_rlp_put_u256(e, &v);
	bp_u256_from_be32(&v, s);
	(void)bp_rlp_put_u256(e, &v);
}

/*
 * Puts the unsigned fields of tx into e: the nine of type 2, then for type 4 (auth not NULL)
 * the authorization list. Errors are sticky in e.
 */
static void
put_fields(struct bp_rlp_enc *e, const struct bp_tx1559 *tx, const struct bp_tx_auth *auth,
    size_t nauth)
{
	size_t i;

	(void)bp_rlp_put_u64(e, tx->chain_id);
	(void)bp_rlp_put_u64(e, tx->nonce);
	(void)bp_rlp_put_u256(e, &tx->max_priority_fee_per_gas);
	(void)bp_rlp_put_u256(e, &tx->max_fee_per_gas);
	(void)bp_rlp_put_u64(e, tx->gas_limit);
	if (tx->has_to)
		(void)bp_rlp_put_bytes(e, tx->to, sizeof(tx->to));
	else
		(void)bp_rlp_put_bytes(e, NULL, 0);
	(void)bp_rlp_put_u256(e, &tx->value);
	(void)bp_rlp_put_bytes(e, tx->data, tx->data_len);
	/* The access list: always empty. */
	(void)bp_rlp_list_begin(e);
	(void)bp_rlp_list_end(e);
	if (auth == NULL)
		return;
	(void)bp_rlp_list_begin(e);
	for (i = 0; i < nauth; i++) {
		(void)bp_rlp_list_begin(e);
		(void)bp_rlp_put_u256(e, &auth[i].chain_id);
		(void)bp_rlp_put_bytes(e, auth[i].address, sizeof(auth[i].address));
		(void)bp_rlp_put_u64(e, auth[i].nonce);
		(void)bp_rlp_put_u64(e, auth[i].y_parity);
		put_rs(e, auth[i].r, auth[i].s);
		(void)bp_rlp_list_end(e);
	}
	(void)bp_rlp_list_end(e);
}

/*
 * Builds type || rlp(list) with the signature fields when sig is set; type 4 carries auth.
 * *out is a new buffer the caller frees.
 */
static int
encode(uint8_t type, const struct bp_tx1559 *tx, const struct bp_tx_auth *auth, size_t nauth,
    int sig, unsigned int y_parity, const uint8_t *r, const uint8_t *s, uint8_t **out,
    size_t *outlen)
{
	struct bp_rlp_enc *e;
	uint8_t *body = NULL, *res = NULL;
	size_t blen;
	int rc = -1;

	if (tx == NULL || (tx->data_len > 0 && tx->data == NULL))
		return -1;
	/* EIP-7702: no contract creation, and an empty list makes the transaction invalid. */
	if (type == TX_TYPE_7702 && (!tx->has_to || auth == NULL || nauth == 0))
		return -1;
	/* One byte of the cap goes to the type prefix. */
	if ((e = bp_rlp_enc_new(BP_TX_MAX_SIZE - 1)) == NULL)
		return -1;
	(void)bp_rlp_list_begin(e);
	put_fields(e, tx, type == TX_TYPE_7702 ? auth : NULL, nauth);
	if (sig) {
		(void)bp_rlp_put_u64(e, y_parity);
		put_rs(e, r, s);
	}
	(void)bp_rlp_list_end(e);
	if (bp_rlp_enc_finish(e, &body, &blen) != 0)
		goto out;
	if ((res = malloc(blen + 1)) == NULL)
		goto out;
	res[0] = type;
	memcpy(res + 1, body, blen);
	*out = res;
	*outlen = blen + 1;
	res = NULL;
	rc = 0;
out:
	free(body);
	free(res);
	bp_rlp_enc_free(e);
	return rc;
}

static int
signing_hash(uint8_t type, const struct bp_tx1559 *tx, const struct bp_tx_auth *auth,
    size_t nauth, uint8_t hash[32])
{
	uint8_t *buf;
	size_t n;

	if (encode(type, tx, auth, nauth, 0, 0, NULL, NULL, &buf, &n) != 0)
		return -1;
	bp_keccak256(buf, n, hash);
	free(buf);
	return 0;
}

static int
encode_signed(uint8_t type, const struct bp_tx1559 *tx, const struct bp_tx_auth *auth,
    size_t nauth, unsigned int y_parity, const uint8_t r[32], const uint8_t s[32],
    uint8_t **raw, size_t *rawlen)
{
	if (y_parity > 1 || r == NULL || s == NULL || raw == NULL || rawlen == NULL)
		return -1;
	return encode(type, tx, auth, nauth, 1, y_parity, r, s, raw, rawlen);
}

static int
sign(uint8_t type, const struct bp_tx1559 *tx, const struct bp_tx_auth *auth, size_t nauth,
    const uint8_t priv[32], uint8_t **raw, size_t *rawlen, uint8_t txhash[32])
{
	uint8_t h[32], sig[BP_SECP_SIG_LEN];
	uint8_t *buf;
	size_t n;

	if (raw == NULL || rawlen == NULL)
		return -1;
	if (signing_hash(type, tx, auth, nauth, h) != 0)
		return -1;
	if (bp_secp_sign(priv, h, sig) != 0)
		return -1;
	if (encode_signed(type, tx, auth, nauth, sig[64], sig, sig + 32, &buf, &n) != 0)
		return -1;
	if (txhash != NULL)
		bp_keccak256(buf, n, txhash);
	*raw = buf;
	*rawlen = n;
	return 0;
}

int
bp_tx_signing_hash(const struct bp_tx1559 *tx, uint8_t hash[32])
{
	return signing_hash(TX_TYPE_1559, tx, NULL, 0, hash);
}

int
bp_tx_encode_signed(const struct bp_tx1559 *tx, unsigned int y_parity, const uint8_t r[32],
    const uint8_t s[32], uint8_t **raw, size_t *rawlen)
{
	return encode_signed(TX_TYPE_1559, tx, NULL, 0, y_parity, r, s, raw, rawlen);
}

int
bp_tx_sign(const struct bp_tx1559 *tx, const uint8_t priv[32], uint8_t **raw, size_t *rawlen,
    uint8_t txhash[32])
{
	return sign(TX_TYPE_1559, tx, NULL, 0, priv, raw, rawlen, txhash);
}

int
bp_tx7702_signing_hash(const struct bp_tx7702 *t, uint8_t hash[32])
{
	if (t == NULL)
		return -1;
	return signing_hash(TX_TYPE_7702, &t->tx, t->auth, t->nauth, hash);
}

int
bp_tx7702_encode_signed(const struct bp_tx7702 *t, unsigned int y_parity, const uint8_t r[32],
    const uint8_t s[32], uint8_t **raw, size_t *rawlen)
{
	if (t == NULL)
		return -1;
	return encode_signed(TX_TYPE_7702, &t->tx, t->auth, t->nauth, y_parity, r, s, raw,
	    rawlen);
}

int
bp_tx7702_sign(const struct bp_tx7702 *t, const uint8_t priv[32], uint8_t **raw,
    size_t *rawlen, uint8_t txhash[32])
{
	if (t == NULL)
		return -1;
	return sign(TX_TYPE_7702, &t->tx, t->auth, t->nauth, priv, raw, rawlen, txhash);
}

int
bp_tx_auth_hash(const struct bp_tx_auth *a, uint8_t hash[32])
{
	struct bp_rlp_enc *e;
	uint8_t *body = NULL, buf[128];
	size_t blen;
	int rc = -1;

	/* rlp([u256, 20 bytes, u64]) takes at most 3 + 33 + 21 + 9 bytes. */
	if (a == NULL || (e = bp_rlp_enc_new(sizeof(buf) - 1)) == NULL)
		return -1;
	(void)bp_rlp_list_begin(e);
	(void)bp_rlp_put_u256(e, &a->chain_id);
	(void)bp_rlp_put_bytes(e, a->address, sizeof(a->address));
	(void)bp_rlp_put_u64(e, a->nonce);
	(void)bp_rlp_list_end(e);
	if (bp_rlp_enc_finish(e, &body, &blen) == 0) {
		buf[0] = AUTH_MAGIC;
		memcpy(buf + 1, body, blen);
		bp_keccak256(buf, blen + 1, hash);
		rc = 0;
	}
	free(body);
	bp_rlp_enc_free(e);
	return rc;
}

int
bp_tx_auth_sign(struct bp_tx_auth *a, const uint8_t priv[32])
{
	uint8_t h[32], sig[BP_SECP_SIG_LEN];

	if (bp_tx_auth_hash(a, h) == -1 || bp_secp_sign(priv, h, sig) == -1)
		return -1;
	memcpy(a->r, sig, 32);
	memcpy(a->s, sig + 32, 32);
	a->y_parity = sig[64];
	return 0;
}

int
bp_tx_auth_authority(const struct bp_tx_auth *a, uint8_t addr[20])
{
	uint8_t h[32], sig[BP_SECP_SIG_LEN];

	/* bp_secp_recover would also take 27 and 28, which a tuple's y_parity is not. */
	if (a == NULL || a->y_parity > 1 || bp_tx_auth_hash(a, h) == -1)
		return -1;
	memcpy(sig, a->r, 32);
	memcpy(sig + 32, a->s, 32);
	sig[64] = a->y_parity;
	return bp_secp_recover(h, sig, addr);
}

int
bp_tx_delegation(const uint8_t *code, size_t len, uint8_t delegate[20])
{
	if (code == NULL || len != BP_TX_DELEGATION_LEN || code[0] != 0xef || code[1] != 0x01 ||
	    code[2] != 0x00)
		return 0;
	memcpy(delegate, code + 3, 20);
	return 1;
}
