/*
 * libFuzzer harness for the response cache's reading of untrusted params and node results
 * (lib/rpc/rpc_cache.c): bp_rpc_cache_rule on the client's params of every cached method (EVM's
 * and Solana's), and bp_rpc_cache_keep on the same bytes as a result. Beyond memory safety it
 * checks, aborting on a violation: a rule is in range, a block is never negative, nothing is
 * kept under BP_CACHE_NEVER or for a null result, a keep is 0, the TTL or for good, and no
 * method is kept on the other kind of chain.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_cache.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const methods[] = {
	"eth_blockNumber", "eth_call", "eth_chainId", "eth_estimateGas", "eth_feeHistory",
	"eth_getBalance", "eth_getBlockByHash", "eth_getBlockByNumber", "eth_getBlockReceipts",
	"eth_getCode", "eth_getLogs", "eth_getProof", "eth_getStorageAt",
	"eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getTransactionCount",
	"eth_sendRawTransaction", "eth_getUncleByBlockNumberAndIndex",
};

/* Solana's, and two it never keeps. */
static const char *const sol_methods[] = {
	"getTransaction", "getBlock", "getBalance", "getAccountInfo", "getSlot",
	"getTokenAccountsByOwner", "getGenesisHash", "sendTransaction", "getSignatureStatuses",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *m, *p, *s;
	enum bp_rpc_cache_rule rule, sr;
	int64_t block = 0, keep, fin;
	size_t n;

	if (size < 2)
		return 0;
	m = methods[data[0] % (sizeof(methods) / sizeof(methods[0]))];
	fin = (int64_t)(data[1] % 64) - 1;
	p = (const char *)data + 2;
	n = size - 2;
	rule = bp_rpc_cache_rule(BP_CHAIN_EVM, m, strlen(m), p, n, &block);
	if ((unsigned)rule >= BP_CACHE__MAX || (rule == BP_CACHE_AT_BLOCK && block < 0))
		abort();
	if (bp_rpc_cache_rule(BP_CHAIN_SOLANA, m, strlen(m), p, n, &block) != BP_CACHE_NEVER)
		abort();
	/* A Solana method: never on an EVM chain; on Solana for good, near the head or never. */
	s = sol_methods[data[0] % (sizeof(sol_methods) / sizeof(sol_methods[0]))];
	if (bp_rpc_cache_rule(BP_CHAIN_EVM, s, strlen(s), p, n, &block) != BP_CACHE_NEVER)
		abort();
	sr = bp_rpc_cache_rule(BP_CHAIN_SOLANA, s, strlen(s), p, n, &block);
	if (sr != BP_CACHE_NEVER && sr != BP_CACHE_FOREVER && sr != BP_CACHE_NEAR_HEAD)
		abort();
	keep = bp_rpc_cache_keep(rule, block, p, n, fin, 1000);
	if (keep != 0 && keep != 1000000 && keep != BP_CACHE_KEEP_FOREVER)
		abort();
	if (rule == BP_CACHE_NEVER && keep != 0)
		abort();
	if (n == 4 && memcmp(p, "null", 4) == 0 && keep != 0)
		abort();
	if (bp_rpc_cache_keep(rule, block, p, n, fin, 0) == 1000000)
		abort();
	return 0;
}
