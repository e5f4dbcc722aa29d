/*
 * evmtool: Blockport's EVM primitives from the command line, so the end-to-end tests can check
 * them against someone else's code (ethers) and a real node (tests/e2e/evm.test.mjs).
 *
 *   evmtool sign-tx KEY CHAIN_ID NONCE TIP MAX_FEE GAS TO|- VALUE DATA
 *	prints: raw-tx-hex tx-hash sender
 *   evmtool personal-sign KEY MESSAGE       prints the 65-byte signature
 *   evmtool recover MESSAGE SIGNATURE       prints the signer's address (EIP-55)
 *   evmtool keccak HEXDATA                  prints keccak-256
 *   evmtool userop-hash VERSION EP CHAIN_ID JSON
 *	prints the userOpHash of the UserOperation JSON (the JSON-RPC form of VERSION, 0.6 to 0.8)
 *	for EntryPoint EP (tests/e2e/eip7702.test.mjs)
 * Numbers are decimal or 0x-hex; KEY, TO, DATA and SIGNATURE are 0x-hex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/secp.h"
#include "evm/tx.h"
#include "evm/u256.h"
#include "evm/userop.h"

static int
fail(const char *what, const char *arg)
{
	fprintf(stderr, "evmtool: bad %s: %s\n", what, arg);
	return 2;
}

static void
print_hex(const uint8_t *p, size_t n, const char *end)
{
	char *s = malloc(2 * n + 3);

	if (s == NULL || bp_hex_encode(p, n, s, 2 * n + 3) == -1)
		exit(1);
	fputs(s, stdout);
	fputs(end, stdout);
	free(s);
}

static int
u64_arg(const char *s, uint64_t *out)
{
	struct bp_u256 v;

	return bp_u256_parse(&v, s, strlen(s)) == 0 ? bp_u256_to_u64(&v, out) : -1;
}

static int
sign_tx(char **a)
{
	struct bp_tx1559 tx;
	uint8_t key[32], hash[32], addr[20], *raw = NULL, *data = NULL;
	char addrs[43];
	size_t rawlen, dlen;

	memset(&tx, 0, sizeof(tx));
	if (bp_hex_decode_fixed(a[0], strlen(a[0]), key, 32) == -1)
		return fail("key", a[0]);
	if (u64_arg(a[1], &tx.chain_id) == -1)
		return fail("chain id", a[1]);
	if (u64_arg(a[2], &tx.nonce) == -1)
		return fail("nonce", a[2]);
	if (bp_u256_parse(&tx.max_priority_fee_per_gas, a[3], strlen(a[3])) == -1)
		return fail("tip", a[3]);
	if (bp_u256_parse(&tx.max_fee_per_gas, a[4], strlen(a[4])) == -1)
		return fail("max fee", a[4]);
	if (u64_arg(a[5], &tx.gas_limit) == -1)
		return fail("gas", a[5]);
	if (strcmp(a[6], "-") != 0) {
		if (bp_addr_parse(a[6], strlen(a[6]), 0, tx.to) == -1)
			return fail("to", a[6]);
		tx.has_to = 1;
	}
	if (bp_u256_parse(&tx.value, a[7], strlen(a[7])) == -1)
		return fail("value", a[7]);
	if ((data = malloc(strlen(a[8]) / 2 + 1)) == NULL ||
	    bp_hex_decode(a[8], strlen(a[8]), data, strlen(a[8]) / 2 + 1, &dlen) == -1)
		return fail("data", a[8]);
	tx.data = data;
	tx.data_len = dlen;
	if (bp_tx_sign(&tx, key, &raw, &rawlen, hash) == -1 ||
	    bp_secp_priv_to_addr(key, addr) == -1)
		return fail("transaction", "cannot sign");
	bp_addr_format_checksum(addr, addrs, sizeof(addrs));
	print_hex(raw, rawlen, " ");
	print_hex(hash, 32, " ");
	printf("%s\n", addrs);
	free(raw);
	free(data);
	return 0;
}

static int
userop_hash(char **a)
{
	struct bp_userop op;
	enum bp_ep_version v;
	uint8_t ep[20], hash[32];
	uint64_t chain_id;
	const char *field;
	char why[256];
	cJSON *j;
	int rc;

	if (bp_ep_version_parse(a[0], &v) == -1)
		return fail("version", a[0]);
	if (bp_addr_parse(a[1], strlen(a[1]), 0, ep) == -1)
		return fail("entry point", a[1]);
	if (u64_arg(a[2], &chain_id) == -1)
		return fail("chain id", a[2]);
	if ((j = cJSON_Parse(a[3])) == NULL)
		return fail("json", a[3]);
	rc = bp_userop_from_json_v(v, j, &op, &field, why, sizeof(why));
	cJSON_Delete(j);
	if (rc == -1)
		return fail(field, why);
	bp_userop_hash_v(&op, ep, chain_id, hash);
	print_hex(hash, 32, "\n");
	bp_userop_free(&op);
	return 0;
}

int
main(int argc, char *argv[])
{
	uint8_t key[32], sig[BP_SECP_SIG_LEN], addr[20], hash[32], *data;
	char addrs[43];
	size_t n;
	int rc = 2;

	if (argc == 11 && strcmp(argv[1], "sign-tx") == 0)
		rc = sign_tx(argv + 2);
	else if (argc == 6 && strcmp(argv[1], "userop-hash") == 0)
		rc = userop_hash(argv + 2);
	else if (argc == 4 && strcmp(argv[1], "personal-sign") == 0) {
		if (bp_hex_decode_fixed(argv[2], strlen(argv[2]), key, 32) == -1)
			return fail("key", argv[2]);
		if (bp_secp_personal_sign(key, argv[3], strlen(argv[3]), sig) == -1)
			return fail("message", argv[3]);
		print_hex(sig, sizeof(sig), "\n");
		rc = 0;
	} else if (argc == 4 && strcmp(argv[1], "recover") == 0) {
		if (bp_hex_decode_fixed(argv[3], strlen(argv[3]), sig, sizeof(sig)) == -1)
			return fail("signature", argv[3]);
		if (bp_secp_personal_recover(argv[2], strlen(argv[2]), sig, addr) == -1)
			return fail("signature", "does not recover");
		bp_addr_format_checksum(addr, addrs, sizeof(addrs));
		printf("%s\n", addrs);
		rc = 0;
	} else if (argc == 3 && strcmp(argv[1], "keccak") == 0) {
		if ((data = malloc(strlen(argv[2]) / 2 + 1)) == NULL ||
		    bp_hex_decode(argv[2], strlen(argv[2]), data, strlen(argv[2]) / 2 + 1, &n) == -1)
			return fail("data", argv[2]);
		bp_keccak256(data, n, hash);
		print_hex(hash, 32, "\n");
		free(data);
		rc = 0;
	} else
		fputs("usage: evmtool sign-tx|personal-sign|recover|keccak|userop-hash ... (see the source)\n",
		    stderr);
	bp_secp_cleanup();
	return rc;
}
