/*
 * lib/rpc/rpc_methods.c: the node method table (order, kinds, anchors, classes), compute-unit costs,
 * block arguments (tags, quantities, EIP-1898 objects, and objects a node could read another
 * block from) and archive pricing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "rpc/rpc_envelope.h"
#include "rpc/rpc_methods.h"
#include "unit.h"

#define NODE	(&bp_rpc_node_table)	/* the node proxy's method table */

static void
test_method_table(void)
{
	const struct bp_rpc_method *t = NODE->rows;
	size_t n = NODE->nrows, i;

	CU_ASSERT(n > 100);
	for (i = 0; i < n; i++) {
		/* Sorted in byte order, unique (bsearch), each name findable for its kind only. */
		if (i > 0 && strcmp(t[i - 1].name, t[i].name) >= 0) {
			fprintf(stderr, "\nmethod table out of order at %s\n", t[i].name);
			CU_FAIL("method table out of order");
		}
		CU_ASSERT_PTR_EQUAL(bp_rpc_method(NODE, t[i].kind, t[i].name, strlen(t[i].name)),
		    &t[i]);
		CU_ASSERT_PTR_NULL(bp_rpc_method(NODE, t[i].kind == BP_CHAIN_EVM ? BP_CHAIN_SOLANA :
		    BP_CHAIN_EVM, t[i].name, strlen(t[i].name)));
		CU_ASSERT(strlen(t[i].name) <= BP_JSONRPC_METHOD_MAX);
		CU_ASSERT((unsigned)t[i].cls < BP_RPC_CLASS__MAX);
		/* Every offered method costs at least 1; archive costs only with a block argument. */
		if (t[i].cls != BP_RPC_DENIED)
			CU_ASSERT(t[i].cu >= 1 && t[i].cu <= 20);
		CU_ASSERT((t[i].archive_cu != 0) == (t[i].block_arg >= 0));
		if (t[i].archive_cu != 0)
			CU_ASSERT(t[i].archive_cu >= t[i].cu);
		/* The prefixes never offered are never in the table as offered methods. */
		if (strncmp(t[i].name, "anvil_", 6) == 0 || strncmp(t[i].name, "personal_", 9) == 0)
			CU_ASSERT_EQUAL(t[i].cls, BP_RPC_DENIED);
	}
}

static void
test_method_classes_and_costs(void)
{
	static const struct {
		enum bp_chain_kind kind;
		const char	*name;
		int		 found;
		enum bp_rpc_class cls;
		unsigned	 cu;
		unsigned	 archive_cu;
	} rows[] = {
		/* SPEC.md's anchors. */
		{ BP_CHAIN_EVM, "eth_blockNumber", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_getStorageAt", 1, BP_RPC_READ, 2, 20 },
		/* Alchemy / 10, at least 1. */
		{ BP_CHAIN_EVM, "eth_chainId", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_call", 1, BP_RPC_READ, 3, 20 },
		{ BP_CHAIN_EVM, "eth_getLogs", 1, BP_RPC_READ, 6, 0 },
		{ BP_CHAIN_EVM, "eth_getBalance", 1, BP_RPC_READ, 2, 20 },
		{ BP_CHAIN_EVM, "eth_getTransactionReceipt", 1, BP_RPC_READ, 2, 0 },
		{ BP_CHAIN_EVM, "eth_estimateGas", 1, BP_RPC_READ, 2, 20 },
		{ BP_CHAIN_EVM, "eth_feeHistory", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_EVM, "eth_sendRawTransaction", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_EVM, "debug_traceTransaction", 1, BP_RPC_DEBUG, 4, 0 },
		{ BP_CHAIN_EVM, "trace_block", 1, BP_RPC_DEBUG, 2, 0 },
		{ BP_CHAIN_EVM, "trace_replayTransaction", 1, BP_RPC_DEBUG, 8, 0 },
		{ BP_CHAIN_EVM, "eth_subscribe", 1, BP_RPC_SUBSCRIBE, 1, 0 },
		{ BP_CHAIN_EVM, "eth_sendTransaction", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "debug_setHead", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "personal_sign", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "wallet_addEthereumChain", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "admin_peers", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "miner_start", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "anvil_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "hardhat_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "evm_mine", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "evm_", 1, BP_RPC_DENIED, 0, 0 },
		{ BP_CHAIN_EVM, "debug_storageRangeAt", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_nope", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "ETH_CHAINID", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_chainid", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "eth_chainId ", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "evm", 0, 0, 0, 0 },
		{ BP_CHAIN_EVM, "getSlot", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "getSlot", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_SOLANA, "getAccountInfo", 1, BP_RPC_READ, 1, 0 },
		{ BP_CHAIN_SOLANA, "getTransaction", 1, BP_RPC_READ, 4, 0 },
		{ BP_CHAIN_SOLANA, "sendTransaction", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_SOLANA, "requestAirdrop", 1, BP_RPC_WRITE, 4, 0 },
		{ BP_CHAIN_SOLANA, "accountSubscribe", 1, BP_RPC_SUBSCRIBE, 1, 0 },
		{ BP_CHAIN_SOLANA, "eth_blockNumber", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "anvil_mine", 0, 0, 0, 0 },
		{ BP_CHAIN_SOLANA, "", 0, 0, 0, 0 },
	};
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		const struct bp_rpc_method *m = bp_rpc_method(NODE, rows[i].kind, rows[i].name,
		    strlen(rows[i].name));

		if ((m != NULL) != rows[i].found || (m != NULL && (m->cls != rows[i].cls ||
		    m->cu != rows[i].cu || m->archive_cu != rows[i].archive_cu))) {
			fprintf(stderr, "\nmethod row %s: found %d\n", rows[i].name, m != NULL);
			CU_FAIL("method row");
		}
	}
	CU_ASSERT_STRING_EQUAL(bp_rpc_methods_class_name(BP_RPC_WRITE), "write");
	CU_ASSERT_STRING_EQUAL(bp_rpc_methods_class_name(BP_RPC_CLASS__MAX), "?");
}

static void
test_block_arg_and_cost(void)
{
	static const struct {
		const char	*params;
		int		 index;
		enum bp_block_ref ref;
		int64_t		 number;
	} rows[] = {
		{ "[\"0xabc\",\"0x10\"]", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"0xabc\",\"0X1F\"]", 1, BP_BLOCK_NUMBER, 31 },
		{ "[\"0xabc\",\"earliest\"]", 1, BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",\"latest\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"pending\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"safe\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"finalized\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",{\"blockNumber\":\"0x5\"}]", 1, BP_BLOCK_NUMBER, 5 },
		{ "[\"0xabc\",{\"blockHash\":\"0x5\"}]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x5\",\"requireCanonical\":true}]", 1, BP_BLOCK_NONE, 0 },
		/*
		 * A hash, as a string or EIP-1898's object: looked up by the caller, not read as a
		 * zero-padded number; a second blockHash, or one that folds to it, is block 0.
		 */
		{ "[\"0xabc\",\"0x00000000000000000000000000000000000000000000000000000000000000ab\"]", 1, BP_BLOCK_HASH, 0 },
		{ "[\"0xabc\",\"0X00000000000000000000000000000000000000000000000000000000000000ab\"]", 1, BP_BLOCK_HASH, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x00000000000000000000000000000000000000000000000000000000000000ab\"}]", 1, BP_BLOCK_HASH, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x00000000000000000000000000000000000000000000000000000000000000ab\",\"requireCanonical\":true}]", 1,
		    BP_BLOCK_HASH, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x00000000000000000000000000000000000000000000000000000000000000ab\",\"BLOCKHASH\":\"0x1\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x00000000000000000000000000000000000000000000000000000000000000ab\",\"blockHash\":\"0x00000000000000000000000000000000000000000000000000000000000000ab\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",\"0x00000000000000000000000000000000000000000000000000000000000000az\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",{\"blockNumber\":\"0x5\",\"other\":1}]", 1, BP_BLOCK_NUMBER, 5 },
		/*
		 * An object a node could read another block from is priced as block 0: a second
		 * blockNumber (Go keeps the last), or a name that folds to it (Go matches those).
		 */
		{ "[\"0xabc\",{\"blockNumber\":\"latest\",\"blockNumber\":\"0x1\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",{\"blockNumber\":\"latest\",\"BlockNumber\":\"0x1\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",{\"BLOCKNUMBER\":\"0x1\",\"blockNumber\":\"latest\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",{\"blockHash\":\"0x5\",\"blocknumber\":\"0x1\"}]", 1, BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",{\"bl\\u006fckNumber\":\"0x1\",\"blockNumber\":\"0x9\"}]", 1,
		    BP_BLOCK_NUMBER, 0 },
		{ "[\"0xabc\",\"0x\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0xzz\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0x8000000000000000\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"0x7fffffffffffffff\"]", 1, BP_BLOCK_NUMBER, INT64_MAX },
		{ "[\"0xabc\",\"0x10000000000000000\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",16]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0xabc\",\"\\u0030x10\"]", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"a\",\"0x0\",\"0x3\"]", 2, BP_BLOCK_NUMBER, 3 },
		{ "{\"a\":1}", 1, BP_BLOCK_NONE, 0 },
		/* Elements are read lazily: what stands before a break is still read. */
		{ "[\"0xabc\",\"0x10\"", 1, BP_BLOCK_NUMBER, 16 },
		{ "[\"0xabc\" \"0x10\"]", 1, BP_BLOCK_NONE, 0 },
		{ "[\"0x1\"]", -1, BP_BLOCK_NONE, 0 },
	};
	const struct bp_rpc_method *getstorage, *blocknum;
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		char hash[BP_BLOCK_HASH_STR] = "";
		int64_t number = -7;
		enum bp_block_ref ref = bp_rpc_methods_block_arg(rows[i].params, strlen(rows[i].params),
		    rows[i].index, &number, hash);

		if (ref != rows[i].ref || (ref == BP_BLOCK_NUMBER && number != rows[i].number) ||
		    (ref == BP_BLOCK_HASH && strcmp(hash, "0x00000000000000000000000000000000000000000000000000000000000000ab") != 0)) {
			fprintf(stderr, "\nblock arg %s: %d %lld\n", rows[i].params, ref,
			    (long long)number);
			CU_FAIL("block arg");
		}
	}
	getstorage = bp_rpc_method(NODE, BP_CHAIN_EVM, "eth_getStorageAt", 16);
	blocknum = bp_rpc_method(NODE, BP_CHAIN_EVM, "eth_blockNumber", 15);
	CU_ASSERT_PTR_NOT_NULL_FATAL(getstorage);
	CU_ASSERT_PTR_NOT_NULL_FATAL(blocknum);
	/* Archive: more than archive_depth below the head. */
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 0, 1000, 128), 20);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 871, 1000, 128), 20);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 872, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 1000, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 5000, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 0, -1, 128), 2);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NONE, 0, 1000, 128), 2);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_NUMBER, 0, INT64_MAX, 1), 20);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(blocknum, BP_BLOCK_NUMBER, 0, 1000, 128), 1);
	/* A hash the caller could not place is archive; a method without archive cost is not. */
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(getstorage, BP_BLOCK_HASH, 0, -1, 128), 20);
	CU_ASSERT_EQUAL(bp_rpc_methods_cost(blocknum, BP_BLOCK_HASH, 0, -1, 128), 1);
}

BP_UNIT_SUITE(rpc_methods, NULL, NULL,
	{ "method table", test_method_table },
	{ "method classes and costs", test_method_classes_and_costs },
	{ "block argument and cost", test_block_arg_and_cost },
)
