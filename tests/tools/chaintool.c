/*
 * chaintool: the typed chain reads of lib/evm/chain.h from the command line, so the end-to-end
 * tests can check them against another client (viem) on the devchain (tests/e2e/chain.test.mjs).
 * The config is $BLOCKPORT_CONFIG; CHAIN NETWORK name one of its networks.
 *
 *   chaintool CHAIN NETWORK block-number          prints the head, decimal
 *   chaintool CHAIN NETWORK code ADDRESS          prints the code, 0x-hex
 *   chaintool CHAIN NETWORK has-code ADDRESS      prints 1 or 0
 *   chaintool CHAIN NETWORK balance ADDRESS       prints wei, decimal
 *   chaintool CHAIN NETWORK tx-count ADDRESS      prints the account's nonce, decimal
 *   chaintool CHAIN NETWORK call-u256 TO DATA     prints word 0 of the return data, decimal
 *   chaintool CHAIN NETWORK has-multicall3        prints 1 or 0
 *   chaintool CHAIN NETWORK batch|calls TO DATA [TO DATA ...]
 *	eth_calls with bp_chain_batch (a JSON-RPC batch) or bp_chain_calls (Multicall3 when the
 *	network has it); prints one line a call: "ok HEX" or "error KIND CODE MESSAGE".
 *   chaintool CHAIN NETWORK send7702 KEY EOA_KEY DELEGATE
 *	lib/evm/tx.c's EIP-7702 signer on a real node (tests/e2e/eip7702.test.mjs): EOA_KEY signs an
 *	authorization for DELEGATE (the network's chain id, the EOA's nonce), KEY sends it in a
 *	type 4 transaction to the EOA (eth_sendRawTransaction); prints "TXHASH EOA", the hash
 *	checked against the node's.
 * A read that fails prints "error KIND CODE MESSAGE" and exits 1; bad arguments exit 2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/config.h"
#include "core/hex.h"
#include "core/log.h"
#include "evm/address.h"
#include "evm/chain.h"
#include "evm/secp.h"
#include "evm/tx.h"
#include "evm/u256.h"
#include "net/upstream.h"
#include "rpc/rpc_client.h"

#define MAX_CALLS	32
#define DATA_MAX	4096

static void
print_hex(const uint8_t *p, size_t n)
{
	char *s = malloc(2 * n + 3);

	if (s == NULL || bp_hex_encode(p, n, s, 2 * n + 3) == -1)
		exit(1);
	puts(s);
	free(s);
}

static void
print_err(const struct bp_chain_error *e)
{
	printf("error %d %lld %s\n", (int)e->kind, (long long)e->code, e->message);
}

static int
address(const char *s, uint8_t out[20])
{
	if (bp_addr_parse(s, strlen(s), 0, out) == -1) {
		fprintf(stderr, "chaintool: bad address %s\n", s);
		return -1;
	}
	return 0;
}

/* Reads the TO DATA pairs of argv into reads (data into bufs); the number, or -1. */
static int
calls_args(int argc, char **argv, struct bp_chain_read *reads, uint8_t (*bufs)[DATA_MAX])
{
	int i, n = 0;

	if (argc % 2 != 0 || argc / 2 > MAX_CALLS || argc == 0)
		return -1;
	memset(reads, 0, MAX_CALLS * sizeof(*reads));
	for (i = 0; i < argc; i += 2, n++) {
		reads[n].op = BP_CHAIN_CALL;
		reads[n].block = BP_CHAIN_LATEST;
		if (address(argv[i], reads[n].address) == -1 || bp_hex_decode(argv[i + 1],
		    strlen(argv[i + 1]), bufs[n], DATA_MAX, &reads[n].len) == -1)
			return -1;
		reads[n].data = bufs[n];
	}
	return n;
}

/* The quantity eth_gasPrice answers, into *v. 0 or -1. */
static int
gas_price(struct bp_upstream *up, const struct bp_network *net, struct bp_u256 *v)
{
	struct bp_rpc_client_error err;
	cJSON *r;
	int rc = -1;

	if ((r = bp_rpc_client_call(up, net, "eth_gasPrice", NULL, &err)) == NULL) {
		printf("error %d %lld %s\n", (int)err.kind, (long long)err.code, err.message);
		return -1;
	}
	if (cJSON_IsString(r) && bp_u256_from_hex(v, r->valuestring, strlen(r->valuestring)) == 0)
		rc = 0;
	cJSON_Delete(r);
	return rc;
}

static int
send7702(struct bp_chain *c, struct bp_upstream *up, const struct bp_network *net, char **argv)
{
	struct bp_chain_error err;
	struct bp_rpc_client_error rerr;
	struct bp_tx7702 t;
	struct bp_tx_auth auth;
	struct bp_u256 price, tip;
	uint8_t key[32], eoa_key[32], from[20], eoa[20], hash[32], *raw = NULL;
	char *hex = NULL, want[67], eoas[43];
	size_t rawlen;
	cJSON *params = NULL, *r = NULL;
	int rc = 1;

	memset(&t, 0, sizeof(t));
	memset(&auth, 0, sizeof(auth));
	if (bp_hex_decode_fixed(argv[0], strlen(argv[0]), key, 32) == -1 ||
	    bp_hex_decode_fixed(argv[1], strlen(argv[1]), eoa_key, 32) == -1 ||
	    bp_secp_priv_to_addr(key, from) == -1 || bp_secp_priv_to_addr(eoa_key, eoa) == -1 ||
	    address(argv[2], auth.address) == -1) {
		fprintf(stderr, "chaintool: bad key or delegate\n");
		return 2;
	}
	bp_u256_from_u64(&auth.chain_id, (uint64_t)net->chain_id);
	if (bp_chain_tx_count(c, net, eoa, BP_CHAIN_LATEST, &auth.nonce, &err) == -1 ||
	    bp_chain_tx_count(c, net, from, BP_CHAIN_LATEST, &t.tx.nonce, &err) == -1) {
		print_err(&err);
		return 1;
	}
	if (gas_price(up, net, &price) == -1)
		return 1;
	/* A tip of 1 gwei and room for the base fee to double. */
	bp_u256_from_u64(&tip, 1000000000);
	t.tx.chain_id = (uint64_t)net->chain_id;
	t.tx.max_priority_fee_per_gas = tip;
	if (bp_u256_mul_u64(&t.tx.max_fee_per_gas, &price, 2) != 0 ||
	    bp_u256_add(&t.tx.max_fee_per_gas, &t.tx.max_fee_per_gas, &tip) != 0)
		return 1;
	/* 21,000 and 25,000 an authorization (EIP-7702's PER_EMPTY_ACCOUNT_COST), with room. */
	t.tx.gas_limit = 100000;
	t.tx.has_to = 1;
	memcpy(t.tx.to, eoa, 20);
	t.auth = &auth;
	t.nauth = 1;
	if (bp_tx_auth_sign(&auth, eoa_key) == -1 ||
	    bp_tx7702_sign(&t, key, &raw, &rawlen, hash) == -1 ||
	    (hex = malloc(2 * rawlen + 3)) == NULL ||
	    bp_hex_encode(raw, rawlen, hex, 2 * rawlen + 3) == -1 ||
	    (params = cJSON_CreateArray()) == NULL ||
	    !cJSON_AddItemToArray(params, cJSON_CreateString(hex))) {
		fprintf(stderr, "chaintool: cannot sign\n");
		goto out;
	}
	if ((r = bp_rpc_client_call(up, net, "eth_sendRawTransaction", params, &rerr)) == NULL) {
		printf("error %d %lld %s\n", (int)rerr.kind, (long long)rerr.code, rerr.message);
		goto out;
	}
	bp_hex_encode(hash, 32, want, sizeof(want));
	if (!cJSON_IsString(r) || strcasecmp(r->valuestring, want) != 0) {
		fprintf(stderr, "chaintool: the node's hash is not %s\n", want);
		goto out;
	}
	bp_addr_format_checksum(eoa, eoas, sizeof(eoas));
	printf("%s %s\n", want, eoas);
	rc = 0;
out:
	cJSON_Delete(params);
	cJSON_Delete(r);
	free(hex);
	free(raw);
	return rc;
}

static int
run(struct bp_chain *c, const struct bp_network *net, int argc, char **argv)
{
	static struct bp_chain_read reads[MAX_CALLS];
	static uint8_t bufs[MAX_CALLS][DATA_MAX];
	struct bp_chain_error err;
	struct bp_u256 v;
	char dec[BP_U256_DEC_MAX];
	uint8_t a[20], *code;
	uint64_t u;
	size_t len;
	int n, i;

	if (strcmp(argv[0], "block-number") == 0) {
		if (bp_chain_block_number(c, net, &u, &err) == -1)
			goto fail;
		printf("%llu\n", (unsigned long long)u);
	} else if (strcmp(argv[0], "has-multicall3") == 0) {
		if ((n = bp_chain_has_multicall3(c, net)) == -1)
			return 1;
		printf("%d\n", n);
	} else if (argc == 2 && strcmp(argv[0], "code") == 0) {
		if (address(argv[1], a) == -1)
			return 2;
		if (bp_chain_code(c, net, a, BP_CHAIN_LATEST, &code, &len, &err) == -1)
			goto fail;
		print_hex(code, len);
		free(code);
	} else if (argc == 2 && strcmp(argv[0], "has-code") == 0) {
		if (address(argv[1], a) == -1)
			return 2;
		if ((n = bp_chain_has_code(c, net, a, BP_CHAIN_LATEST, &err)) == -1)
			goto fail;
		printf("%d\n", n);
	} else if (argc == 2 && strcmp(argv[0], "balance") == 0) {
		if (address(argv[1], a) == -1)
			return 2;
		if (bp_chain_balance(c, net, a, BP_CHAIN_LATEST, &v, &err) == -1)
			goto fail;
		bp_u256_to_dec(&v, dec, sizeof(dec));
		puts(dec);
	} else if (argc == 2 && strcmp(argv[0], "tx-count") == 0) {
		if (address(argv[1], a) == -1)
			return 2;
		if (bp_chain_tx_count(c, net, a, BP_CHAIN_LATEST, &u, &err) == -1)
			goto fail;
		printf("%llu\n", (unsigned long long)u);
	} else if (argc == 3 && strcmp(argv[0], "call-u256") == 0) {
		if (calls_args(argc - 1, argv + 1, reads, bufs) != 1)
			return 2;
		if (bp_chain_call_u256(c, net, reads[0].address, reads[0].data, reads[0].len,
		    BP_CHAIN_LATEST, &v, &err) == -1)
			goto fail;
		bp_u256_to_dec(&v, dec, sizeof(dec));
		puts(dec);
	} else if (strcmp(argv[0], "batch") == 0 || strcmp(argv[0], "calls") == 0) {
		if ((n = calls_args(argc - 1, argv + 1, reads, bufs)) == -1)
			return 2;
		if (argv[0][0] == 'b')
			bp_chain_batch(c, net, reads, (size_t)n);
		else
			bp_chain_calls(c, net, reads, (size_t)n);
		for (i = 0; i < n; i++) {
			if (reads[i].err.kind == BP_CHAIN_OK) {
				fputs("ok ", stdout);
				print_hex(reads[i].bytes, reads[i].nbytes);
			} else
				print_err(&reads[i].err);
		}
		bp_chain_reads_free(reads, (size_t)n);
	} else {
		fprintf(stderr, "chaintool: unknown command %s\n", argv[0]);
		return 2;
	}
	return 0;
fail:
	print_err(&err);
	return 1;
}

int
main(int argc, char **argv)
{
	struct bp_config *cfg;
	const struct bp_network *net;
	struct bp_upstream *up = NULL;
	struct bp_chain *c = NULL;
	char err[512];
	const char *path = getenv("BLOCKPORT_CONFIG");
	int rc = 2;

	bp_log_init("chaintool");
	if (argc < 4 || path == NULL) {
		fprintf(stderr, "usage: BLOCKPORT_CONFIG=FILE chaintool CHAIN NETWORK COMMAND ...\n");
		return 2;
	}
	if ((cfg = bp_config_load(path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "chaintool: %s\n", err);
		return 2;
	}
	if ((net = bp_config_network(cfg, argv[1], argv[2])) == NULL)
		fprintf(stderr, "chaintool: no network %s %s\n", argv[1], argv[2]);
	else if ((up = bp_upstream_new(cfg)) != NULL && (c = bp_chain_new(cfg, up)) != NULL)
		rc = argc == 7 && strcmp(argv[3], "send7702") == 0 ?
		    send7702(c, up, net, argv + 4) : run(c, net, argc - 3, argv + 3);
	bp_chain_free(c);
	bp_upstream_free(up);
	bp_config_free(cfg);
	return rc;
}
