#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "core/hex.h"
#include "core/log.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/secp.h"
#include "paymaster.h"
#include "rpc/jsonrpc.h"

int
bp_paymaster_hash(const struct bp_userop *op, uint64_t chain_id, const uint8_t paymaster[20],
    const struct bp_u256 *sender_nonce, uint64_t valid_until, uint64_t valid_after,
    uint8_t out[32])
{
	struct bp_abi_enc *e = NULL;
	uint8_t *abi, *enc = NULL;
	size_t len, packed, enclen;
	int rc = -1;

	/* pack(userOp): the op's encoding as the EntryPoint passes it, with the final pnd length. */
	if ((abi = bp_userop_abi(op, BP_PAYMASTER_PND_LEN, &len, &packed)) == NULL)
		return -1;
	if ((e = bp_abi_enc_new(packed + 8 * 32)) == NULL)
		goto out;
	bp_abi_put_bytes(e, abi, packed);
	bp_abi_put_u64(e, chain_id);
	bp_abi_put_address(e, paymaster);
	bp_abi_put_u256(e, sender_nonce);
	bp_abi_put_u64(e, valid_until);
	bp_abi_put_u64(e, valid_after);
	if (bp_abi_enc_finish(e, NULL, &enc, &enclen) == -1)
		goto out;
	bp_keccak256(enc, enclen, out);
	rc = 0;
out:
	bp_abi_enc_free(e);
	free(enc);
	free(abi);
	return rc;
}

void
bp_paymaster_hash_v07(const struct bp_userop *op, const struct bp_userop_digests *d,
    uint64_t chain_id, const uint8_t paymaster[20], const struct bp_u256 pm_gas[2],
    uint64_t valid_until, uint64_t valid_after, uint8_t out[32])
{
	struct bp_userop_digests own;
	uint8_t w[12 * 32], t[32];
	struct bp_u256 v;
	size_t i;

	memset(w, 0, sizeof(w));
	memcpy(w + 12, op->sender, 20);
	bp_u256_to_be32(&op->num[BP_USEROP_NONCE], w + 32);
	if (d == NULL) {
		bp_userop_digests(op, &own);
		d = &own;
	}
	memcpy(w + 64, d->init_code, 32);
	memcpy(w + 96, d->call_data, 32);
	bp_userop_account_gas_limits(op, w + 128);
	/* uint256(bytes32(paymasterAndData[20:52])): both limits, 16 bytes each. */
	for (i = 0; i < 2; i++) {
		bp_u256_to_be32(&pm_gas[i], t);
		memcpy(w + 160 + 16 * i, t + 16, 16);
	}
	bp_u256_to_be32(&op->num[BP_USEROP_PRE_VERIFICATION_GAS], w + 192);
	bp_userop_gas_fees(op, w + 224);
	bp_u256_from_u64(&v, chain_id);
	bp_u256_to_be32(&v, w + 256);
	memcpy(w + 288 + 12, paymaster, 20);
	bp_u256_from_u64(&v, valid_until);
	bp_u256_to_be32(&v, w + 320);
	bp_u256_from_u64(&v, valid_after);
	bp_u256_to_be32(&v, w + 352);
	bp_keccak256(w, sizeof(w), out);
}

int
bp_paymaster_sign(const uint8_t key[32], const uint8_t paymaster[20], const uint8_t hash[32],
    uint64_t valid_until, uint64_t valid_after, uint8_t pnd[BP_PAYMASTER_PND_LEN])
{
	struct bp_u256 v;

	memcpy(pnd, paymaster, 20);
	bp_u256_from_u64(&v, valid_until);
	bp_u256_to_be32(&v, pnd + 20);
	bp_u256_from_u64(&v, valid_after);
	bp_u256_to_be32(&v, pnd + 52);
	return bp_secp_personal_sign(key, hash, 32, pnd + 84);
}

int
bp_paymaster_sender_nonce(struct bp_upstream *up, const struct bp_network *net,
    const uint8_t paymaster[20], const uint8_t sender[20], struct bp_u256 *out)
{
	struct bp_rpc_client_error err;
	struct bp_abi_enc *e;
	static const uint8_t sel[4] = { 0x9c, 0x90, 0xb4, 0x43 };	/* senderNonce(address) */
	uint8_t *data = NULL, word[32];
	size_t len;
	char to[BP_ADDR_STR_MAX], hex[2 * 36 + 3];
	cJSON *params = NULL, *tx, *res = NULL;
	int rc = -1;

	if ((e = bp_abi_enc_new(64)) == NULL)
		return -1;
	bp_abi_put_address(e, sender);
	if (bp_abi_enc_finish(e, sel, &data, &len) == -1)
		goto out;
	bp_addr_format_lower(paymaster, to, sizeof(to));
	bp_hex_encode(data, len, hex, sizeof(hex));
	if ((params = cJSON_CreateArray()) == NULL || (tx = cJSON_CreateObject()) == NULL ||
	    !cJSON_AddItemToArray(params, tx) || cJSON_AddStringToObject(tx, "to", to) == NULL ||
	    cJSON_AddStringToObject(tx, "data", hex) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString("latest")))
		goto out;
	if ((res = bp_rpc_client_call(up, net, "eth_call", params, &err)) == NULL) {
		bp_warn("%s.%s: paymaster senderNonce: %s (%lld)", net->chain, net->network,
		    err.message, (long long)err.code);
		goto out;
	}
	if (!cJSON_IsString(res) || bp_hex_decode_fixed(res->valuestring,
	    strlen(res->valuestring), word, 32) == -1) {
		bp_warn("%s.%s: paymaster senderNonce: not one word (is %s a VerifyingPaymaster?)",
		    net->chain, net->network, to);
		goto out;
	}
	bp_u256_from_be32(out, word);
	rc = 0;
out:
	bp_abi_enc_free(e);
	free(data);
	cJSON_Delete(params);
	cJSON_Delete(res);
	return rc;
}

int
bp_paymaster_key_load(const char *path, uint8_t key[32], uint8_t addr[20])
{
	char text[128];
	size_t n;
	FILE *fp;
	int rc = -1;

	if ((fp = fopen(path, "r")) == NULL) {
		bp_err("%s: cannot open %s", __func__, path);
		return -1;
	}
	n = fread(text, 1, sizeof(text) - 1, fp);
	fclose(fp);
	text[n] = '\0';
	while (n > 0 && isspace((unsigned char)text[n - 1]))
		n--;
	if (bp_hex_decode_fixed(text, n, key, 32) == -1 || bp_secp_priv_to_addr(key, addr) == -1)
		bp_err("%s: %s does not hold a private key (0x and 64 hex digits)", __func__, path);
	else
		rc = 0;
	OPENSSL_cleanse(text, sizeof(text));
	if (rc == -1)
		OPENSSL_cleanse(key, 32);
	return rc;
}

int
bp_paymaster_grant(struct bp_upstream *up, const struct bp_network *net, const uint8_t key[32],
    const struct bp_userop *op, uint64_t valid_until, uint64_t valid_after,
    struct bp_paymaster_grant *out)
{
	struct bp_entry_point epc;
	struct bp_userop_digests d;
	struct bp_userop signed_op;
	struct bp_u256 nonce;
	uint8_t pm[20], ep[20], hash[32], word[32];
	size_t i;

	memset(out, 0, sizeof(*out));
	bp_entry_point_of(net, op->version, &epc);
	if (bp_addr_parse(epc.paymaster, strlen(epc.paymaster), 0, pm) == -1 ||
	    bp_addr_parse(epc.entry_point, strlen(epc.entry_point), 0, ep) == -1 ||
	    net->chain_id < 0) {
		bp_err("%s: %s.%s: no paymaster, entry point or chain id of v%s", __func__,
		    net->chain, net->network, bp_ep_version_name(op->version));
		return -1;
	}
	out->version = op->version;
	if (op->version == BP_EP_V06) {
		if (bp_paymaster_sender_nonce(up, net, pm, op->sender, &nonce) == -1 ||
		    bp_paymaster_hash(op, (uint64_t)net->chain_id, pm, &nonce, valid_until,
		    valid_after, hash) == -1 ||
		    bp_paymaster_sign(key, pm, hash, valid_until, valid_after, out->pnd) == -1)
			return -1;
		out->pnd_len = BP_PAYMASTER_PND_LEN;
	} else {
		/* The client's limits when it gave them (its estimate), else ours. */
		if (op->has_pm_gas[0])
			out->pm_gas[0] = op->pm_gas[0];
		else
			bp_u256_from_u64(&out->pm_gas[0], BP_PAYMASTER_V07_VERIFICATION_GAS);
		if (op->has_pm_gas[1])
			out->pm_gas[1] = op->pm_gas[1];
		bp_userop_digests(op, &d);	/* for getHash, then the userOpHash */
		bp_paymaster_hash_v07(op, &d, (uint64_t)net->chain_id, pm, out->pm_gas,
		    valid_until, valid_after, hash);
		/*
		 * v0.6's layout written 32 bytes on (its paymaster address lands at 32..52), then
		 * the head: paymaster ++ the two limits, over that address.
		 */
		if (bp_paymaster_sign(key, pm, hash, valid_until, valid_after, out->pnd + 32) == -1)
			return -1;
		memcpy(out->pnd, pm, 20);
		for (i = 0; i < 2; i++) {
			bp_u256_to_be32(&out->pm_gas[i], word);
			memcpy(out->pnd + 20 + 16 * i, word + 16, 16);
		}
		out->pnd_len = BP_PAYMASTER_V07_PND_LEN;
	}
	out->valid_until = valid_until;
	out->valid_after = valid_after;
	/* A shallow copy with the new paymasterAndData: nothing of it is freed. */
	signed_op = *op;
	signed_op.bytes[BP_USEROP_PAYMASTER_AND_DATA] = out->pnd;
	signed_op.len[BP_USEROP_PAYMASTER_AND_DATA] = out->pnd_len;
	signed_op.pm_gas[0] = out->pm_gas[0];
	signed_op.pm_gas[1] = out->pm_gas[1];
	/* signed_op's initCode and callData are op's: d holds their digests (v0.7, v0.8). */
	bp_userop_hash_vd(&signed_op, ep, (uint64_t)net->chain_id,
	    op->version == BP_EP_V06 ? NULL : &d, out->op_hash);
	return 0;
}

int
bp_paymaster_key_for(const struct bp_network *n, uint8_t key[32])
{
	struct bp_entry_point ep;
	uint8_t addr[20], want[20];
	int v, any = 0;

	if (n->paymaster_key_file[0] == '\0')
		return -1;
	/* One key signs for every version's paymaster: any version with both will do. */
	for (v = 0; v < BP_EP__MAX; v++) {
		bp_entry_point_of(n, (enum bp_ep_version)v, &ep);
		any |= ep.entry_point[0] != '\0' && ep.paymaster[0] != '\0';
	}
	if (!any) {
		bp_err("%s.%s: paymaster_key_file without an entry point and its paymaster: no "
		    "sponsorship", n->chain, n->network);
		return -1;
	}
	if (bp_paymaster_key_load(n->paymaster_key_file, key, addr) == -1)
		return -1;
	if (n->paymaster_signer[0] != '\0' && (bp_addr_parse(n->paymaster_signer,
	    strlen(n->paymaster_signer), 0, want) == -1 || memcmp(want, addr, 20) != 0)) {
		bp_err("%s.%s: paymaster_key_file is not the key of paymaster_signer %s",
		    n->chain, n->network, n->paymaster_signer);
		OPENSSL_cleanse(key, 32);
		return -1;
	}
	return 0;
}

void
bp_paymaster_keys_load(struct bp_paymaster_keys *k, const struct bp_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nnets; i++)
		k->net[i].ok = bp_paymaster_key_for(&cfg->nets[i], k->net[i].key) == 0;
}

const uint8_t *
bp_paymaster_keys_get(const struct bp_paymaster_keys *k, const struct bp_config *cfg,
    const struct bp_network *net)
{
	size_t i = (size_t)(net - cfg->nets);

	return k->net[i].ok ? k->net[i].key : NULL;
}

void
bp_paymaster_keys_wipe(struct bp_paymaster_keys *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}
