/*
 * EIP-1559 transaction encoding and signing (tx.h; EIP-1559 "Specification", EIP-2718).
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

/* Puts the nine unsigned fields of tx into e. Errors are sticky in e. */
static void
put_fields(struct bp_rlp_enc *e, const struct bp_tx1559 *tx)
{
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
}

/*
 * Builds 0x02 || rlp(list) with the signature fields when sig is set. *out is a new buffer
 * the caller frees.
 */
static int
encode(const struct bp_tx1559 *tx, int sig, unsigned int y_parity, const uint8_t *r,
    const uint8_t *s, uint8_t **out, size_t *outlen)
{
	struct bp_rlp_enc *e;
	struct bp_u256 v;
	uint8_t *body = NULL, *res = NULL;
	size_t blen;
	int rc = -1;

	if (tx == NULL || (tx->data_len > 0 && tx->data == NULL))
		return -1;
	/* One byte of the cap goes to the type prefix. */
	if ((e = bp_rlp_enc_new(BP_TX_MAX_SIZE - 1)) == NULL)
		return -1;
	(void)bp_rlp_list_begin(e);
	put_fields(e, tx);
	if (sig) {
		(void)bp_rlp_put_u64(e, y_parity);
		bp_u256_from_be32(&v, r);
		(void)bp_rlp_put_u256(e, &v);
		bp_u256_from_be32(&v, s);
		(void)bp_rlp_put_u256(e, &v);
	}
	(void)bp_rlp_list_end(e);
	if (bp_rlp_enc_finish(e, &body, &blen) != 0)
		goto out;
	if ((res = malloc(blen + 1)) == NULL)
		goto out;
	res[0] = TX_TYPE_1559;
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

int
bp_tx_signing_hash(const struct bp_tx1559 *tx, uint8_t hash[32])
{
	uint8_t *buf;
	size_t n;

	if (encode(tx, 0, 0, NULL, NULL, &buf, &n) != 0)
		return -1;
	bp_keccak256(buf, n, hash);
	free(buf);
	return 0;
}

int
bp_tx_encode_signed(const struct bp_tx1559 *tx, unsigned int y_parity, const uint8_t r[32],
    const uint8_t s[32], uint8_t **raw, size_t *rawlen)
{
	if (y_parity > 1 || r == NULL || s == NULL || raw == NULL || rawlen == NULL)
		return -1;
	return encode(tx, 1, y_parity, r, s, raw, rawlen);
}

int
bp_tx_sign(const struct bp_tx1559 *tx, const uint8_t priv[32], uint8_t **raw, size_t *rawlen,
    uint8_t txhash[32])
{
	uint8_t h[32], sig[BP_SECP_SIG_LEN];
	uint8_t *buf;
	size_t n;

	if (raw == NULL || rawlen == NULL)
		return -1;
	if (bp_tx_signing_hash(tx, h) != 0)
		return -1;
	if (bp_secp_sign(priv, h, sig) != 0)
		return -1;
	if (bp_tx_encode_signed(tx, sig[64], sig, sig + 32, &buf, &n) != 0)
		return -1;
	if (txhash != NULL)
		bp_keccak256(buf, n, txhash);
	*raw = buf;
	*rawlen = n;
	return 0;
}
