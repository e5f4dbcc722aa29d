/*
 * The method tables (lib/rpc/rpc_methods.h) and compute-unit pricing. A table is data a program
 * passes to the proxy; the node proxy's is here.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "core/util.h"
#include "rpc_envelope.h"
#include "rpc_methods.h"
#include "rpc_scan.h"

/*
 * The method table: one row per method, sorted by name in byte order (bsearch; the unit tests
 * check the order). Costs are compute units per call: SPEC.md's anchors (eth_blockNumber 1,
 * eth_getStorageAt at an archive block 20) and Alchemy's published costs divided by 10 and
 * rounded, at least 1, for the rest (docs/rpc.md). archive_cu applies when block_arg names a
 * block more than archive_depth below the head: the methods that read historical state. A call
 * answered from the response cache (lib/rpc/rpc_cache.h) costs a quarter of this, rounded up.
 */
#define E	BP_CHAIN_EVM
#define S	BP_CHAIN_SOLANA
#define R	BP_RPC_READ
#define W	BP_RPC_WRITE
#define D	BP_RPC_DEBUG
#define SUB	BP_RPC_SUBSCRIBE
#define NO	BP_RPC_DENIED
#define ARCHIVE_CU	20

static const struct bp_rpc_method node_methods[] = {
	{ "accountSubscribe", S, SUB, 1, 0, -1 },
	{ "accountUnsubscribe", S, SUB, 1, 0, -1 },
	{ "blockSubscribe", S, SUB, 1, 0, -1 },
	{ "blockUnsubscribe", S, SUB, 1, 0, -1 },
	{ "debug_getBadBlocks", E, D, 4, 0, -1 },
	{ "debug_getRawBlock", E, D, 4, 0, -1 },
	{ "debug_getRawHeader", E, D, 4, 0, -1 },
	{ "debug_getRawReceipts", E, D, 4, 0, -1 },
	{ "debug_getRawTransaction", E, D, 4, 0, -1 },
	{ "debug_setHead", E, NO, 0, 0, -1 },
	{ "debug_traceBlockByHash", E, D, 4, 0, -1 },
	{ "debug_traceBlockByNumber", E, D, 4, 0, -1 },
	{ "debug_traceCall", E, D, 4, ARCHIVE_CU, 1 },
	{ "debug_traceTransaction", E, D, 4, 0, -1 },
	{ "eth_accounts", E, R, 1, 0, -1 },
	{ "eth_blobBaseFee", E, R, 1, 0, -1 },
	{ "eth_blockNumber", E, R, 1, 0, -1 },
	{ "eth_call", E, R, 3, ARCHIVE_CU, 1 },
	{ "eth_chainId", E, R, 1, 0, -1 },
	{ "eth_coinbase", E, NO, 0, 0, -1 },
	{ "eth_createAccessList", E, R, 1, ARCHIVE_CU, 1 },
	{ "eth_estimateGas", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_feeHistory", E, R, 1, 0, -1 },
	{ "eth_gasPrice", E, R, 2, 0, -1 },
	{ "eth_getAccount", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getBalance", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getBlockByHash", E, R, 2, 0, -1 },
	{ "eth_getBlockByNumber", E, R, 2, 0, -1 },
	{ "eth_getBlockReceipts", E, R, 2, 0, -1 },
	{ "eth_getBlockTransactionCountByHash", E, R, 2, 0, -1 },
	{ "eth_getBlockTransactionCountByNumber", E, R, 2, 0, -1 },
	{ "eth_getCode", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getFilterChanges", E, R, 2, 0, -1 },
	{ "eth_getFilterLogs", E, R, 6, 0, -1 },
	{ "eth_getLogs", E, R, 6, 0, -1 },
	{ "eth_getProof", E, R, 2, ARCHIVE_CU, 2 },
	{ "eth_getStorageAt", E, R, 2, ARCHIVE_CU, 2 },
	{ "eth_getTransactionByBlockHashAndIndex", E, R, 2, 0, -1 },
	{ "eth_getTransactionByBlockNumberAndIndex", E, R, 2, 0, -1 },
	{ "eth_getTransactionByHash", E, R, 2, 0, -1 },
	{ "eth_getTransactionCount", E, R, 2, ARCHIVE_CU, 1 },
	{ "eth_getTransactionReceipt", E, R, 2, 0, -1 },
	{ "eth_getUncleByBlockHashAndIndex", E, R, 2, 0, -1 },
	{ "eth_getUncleByBlockNumberAndIndex", E, R, 2, 0, -1 },
	{ "eth_getUncleCountByBlockHash", E, R, 2, 0, -1 },
	{ "eth_getUncleCountByBlockNumber", E, R, 2, 0, -1 },
	{ "eth_maxPriorityFeePerGas", E, R, 1, 0, -1 },
	{ "eth_newBlockFilter", E, R, 2, 0, -1 },
	{ "eth_newFilter", E, R, 2, 0, -1 },
	{ "eth_newPendingTransactionFilter", E, R, 2, 0, -1 },
	{ "eth_protocolVersion", E, R, 1, 0, -1 },
	{ "eth_sendRawTransaction", E, W, 4, 0, -1 },
	{ "eth_sendTransaction", E, NO, 0, 0, -1 },
	{ "eth_sign", E, NO, 0, 0, -1 },
	{ "eth_signTransaction", E, NO, 0, 0, -1 },
	{ "eth_signTypedData", E, NO, 0, 0, -1 },
	{ "eth_signTypedData_v3", E, NO, 0, 0, -1 },
	{ "eth_signTypedData_v4", E, NO, 0, 0, -1 },
	{ "eth_simulateV1", E, R, 4, ARCHIVE_CU, 1 },
	{ "eth_submitHashrate", E, NO, 0, 0, -1 },
	{ "eth_submitWork", E, NO, 0, 0, -1 },
	{ "eth_subscribe", E, SUB, 1, 0, -1 },
	{ "eth_syncing", E, R, 1, 0, -1 },
	{ "eth_uninstallFilter", E, R, 1, 0, -1 },
	{ "eth_unsubscribe", E, SUB, 1, 0, -1 },
	{ "getAccountInfo", S, R, 1, 0, -1 },
	{ "getBalance", S, R, 1, 0, -1 },
	{ "getBlock", S, R, 4, 0, -1 },
	{ "getBlockCommitment", S, R, 1, 0, -1 },
	{ "getBlockHeight", S, R, 1, 0, -1 },
	{ "getBlockProduction", S, R, 1, 0, -1 },
	{ "getBlockTime", S, R, 1, 0, -1 },
	{ "getBlocks", S, R, 4, 0, -1 },
	{ "getBlocksWithLimit", S, R, 4, 0, -1 },
	{ "getClusterNodes", S, R, 1, 0, -1 },
	{ "getEpochInfo", S, R, 1, 0, -1 },
	{ "getEpochSchedule", S, R, 1, 0, -1 },
	{ "getFeeForMessage", S, R, 1, 0, -1 },
	{ "getFirstAvailableBlock", S, R, 1, 0, -1 },
	{ "getGenesisHash", S, R, 1, 0, -1 },
	{ "getHealth", S, R, 1, 0, -1 },
	{ "getHighestSnapshotSlot", S, R, 1, 0, -1 },
	{ "getIdentity", S, R, 1, 0, -1 },
	{ "getInflationGovernor", S, R, 1, 0, -1 },
	{ "getInflationRate", S, R, 1, 0, -1 },
	{ "getInflationReward", S, R, 1, 0, -1 },
	{ "getLargestAccounts", S, R, 4, 0, -1 },
	{ "getLatestBlockhash", S, R, 1, 0, -1 },
	{ "getLeaderSchedule", S, R, 1, 0, -1 },
	{ "getMaxRetransmitSlot", S, R, 1, 0, -1 },
	{ "getMaxShredInsertSlot", S, R, 1, 0, -1 },
	{ "getMinimumBalanceForRentExemption", S, R, 1, 0, -1 },
	{ "getMultipleAccounts", S, R, 4, 0, -1 },
	{ "getProgramAccounts", S, R, 4, 0, -1 },
	{ "getRecentPerformanceSamples", S, R, 1, 0, -1 },
	{ "getRecentPrioritizationFees", S, R, 1, 0, -1 },
	{ "getSignatureStatuses", S, R, 1, 0, -1 },
	{ "getSignaturesForAddress", S, R, 4, 0, -1 },
	{ "getSlot", S, R, 1, 0, -1 },
	{ "getSlotLeader", S, R, 1, 0, -1 },
	{ "getSlotLeaders", S, R, 1, 0, -1 },
	{ "getStakeMinimumDelegation", S, R, 1, 0, -1 },
	{ "getSupply", S, R, 1, 0, -1 },
	{ "getTokenAccountBalance", S, R, 1, 0, -1 },
	{ "getTokenAccountsByDelegate", S, R, 4, 0, -1 },
	{ "getTokenAccountsByOwner", S, R, 4, 0, -1 },
	{ "getTokenLargestAccounts", S, R, 4, 0, -1 },
	{ "getTokenSupply", S, R, 1, 0, -1 },
	{ "getTransaction", S, R, 4, 0, -1 },
	{ "getTransactionCount", S, R, 1, 0, -1 },
	{ "getVersion", S, R, 1, 0, -1 },
	{ "getVoteAccounts", S, R, 1, 0, -1 },
	{ "isBlockhashValid", S, R, 1, 0, -1 },
	{ "logsSubscribe", S, SUB, 1, 0, -1 },
	{ "logsUnsubscribe", S, SUB, 1, 0, -1 },
	{ "minimumLedgerSlot", S, R, 1, 0, -1 },
	{ "net_listening", E, R, 1, 0, -1 },
	{ "net_peerCount", E, R, 1, 0, -1 },
	{ "net_version", E, R, 1, 0, -1 },
	{ "programSubscribe", S, SUB, 1, 0, -1 },
	{ "programUnsubscribe", S, SUB, 1, 0, -1 },
	{ "requestAirdrop", S, W, 4, 0, -1 },
	{ "rootSubscribe", S, SUB, 1, 0, -1 },
	{ "rootUnsubscribe", S, SUB, 1, 0, -1 },
	{ "sendTransaction", S, W, 4, 0, -1 },
	{ "signatureSubscribe", S, SUB, 1, 0, -1 },
	{ "signatureUnsubscribe", S, SUB, 1, 0, -1 },
	{ "simulateTransaction", S, R, 4, 0, -1 },
	{ "slotSubscribe", S, SUB, 1, 0, -1 },
	{ "slotUnsubscribe", S, SUB, 1, 0, -1 },
	{ "slotsUpdatesSubscribe", S, SUB, 1, 0, -1 },
	{ "slotsUpdatesUnsubscribe", S, SUB, 1, 0, -1 },
	{ "trace_block", E, D, 2, 0, -1 },
	{ "trace_call", E, D, 8, ARCHIVE_CU, 2 },
	{ "trace_callMany", E, D, 8, 0, -1 },
	{ "trace_filter", E, D, 8, 0, -1 },
	{ "trace_get", E, D, 2, 0, -1 },
	{ "trace_rawTransaction", E, D, 8, 0, -1 },
	{ "trace_replayBlockTransactions", E, D, 8, 0, -1 },
	{ "trace_replayTransaction", E, D, 8, 0, -1 },
	{ "trace_transaction", E, D, 3, 0, -1 },
	{ "voteSubscribe", S, SUB, 1, 0, -1 },
	{ "voteUnsubscribe", S, SUB, 1, 0, -1 },
	{ "web3_clientVersion", E, R, 2, 0, -1 },
	{ "web3_sha3", E, R, 2, 0, -1 },
};

/*
 * Whole namespaces that are never offered: the node's own accounts and keys, node
 * administration, mining, and the controls of development chains (anvil, hardhat, ganache).
 */
static const struct bp_rpc_method denied_prefixes[] = {
	{ "admin_", E, NO, 0, 0, -1 },
	{ "anvil_", E, NO, 0, 0, -1 },
	{ "clique_", E, NO, 0, 0, -1 },
	{ "engine_", E, NO, 0, 0, -1 },
	{ "evm_", E, NO, 0, 0, -1 },
	{ "ganache_", E, NO, 0, 0, -1 },
	{ "hardhat_", E, NO, 0, 0, -1 },
	{ "miner_", E, NO, 0, 0, -1 },
	{ "personal_", E, NO, 0, 0, -1 },
	{ "wallet_", E, NO, 0, 0, -1 },
};

#undef E
#undef S
#undef R
#undef W
#undef D
#undef SUB
#undef NO

const struct bp_rpc_table bp_rpc_node_table = {
	"node",
	node_methods, BP_NITEMS(node_methods),
	denied_prefixes, BP_NITEMS(denied_prefixes),
};

const char *
bp_rpc_methods_class_name(enum bp_rpc_class c)
{
	static const char *const names[BP_RPC_CLASS__MAX] = {
		"read",		/* BP_RPC_READ */
		"write",	/* BP_RPC_WRITE */
		"debug",	/* BP_RPC_DEBUG */
		"subscribe",	/* BP_RPC_SUBSCRIBE */
		"denied",	/* BP_RPC_DENIED */
	};

	return (unsigned)c < BP_RPC_CLASS__MAX ? names[c] : "?";
}

/* Byte order of a row name and (name, len), as memcmp sees it. */
static int
cmp_name(const char *row, const char *name, size_t len)
{
	size_t rl = strlen(row);
	int c = memcmp(row, name, rl < len ? rl : len);

	if (c != 0)
		return c;
	return rl < len ? -1 : rl > len;
}

const struct bp_rpc_method *
bp_rpc_method(const struct bp_rpc_table *t, enum bp_chain_kind kind, const char *name,
    size_t len)
{
	size_t lo = 0, hi = t->nrows, i;

	if (len == 0 || len > BP_JSONRPC_METHOD_MAX)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_name(t->rows[mid].name, name, len);

		if (c == 0)
			return t->rows[mid].kind == kind ? &t->rows[mid] : NULL;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = 0; i < t->nprefixes; i++) {
		size_t pl = strlen(t->prefixes[i].name);

		if (t->prefixes[i].kind == kind && len >= pl &&
		    memcmp(name, t->prefixes[i].name, pl) == 0)
			return &t->prefixes[i];
	}
	return NULL;
}

/* A block argument given as a string: a quantity, a tag or a block hash. */
static enum bp_block_ref
block_string(const unsigned char *s, struct bp_rpc_scan_span v, int64_t *number, char *hash)
{
	char buf[80];
	uint8_t h[32];
	uint64_t q;
	size_t n;

	if (v.len < 2 || s[v.off] != '"' ||
	    bp_rpc_scan_decode(s + v.off, v.len, buf, sizeof(buf), &n) == -1)
		return BP_BLOCK_NONE;
	if (n == 8 && memcmp(buf, "earliest", 8) == 0) {
		*number = 0;
		return BP_BLOCK_NUMBER;
	}
	/* What a node reads as a hash, not as a zero-padded number (geth, reth, anvil). */
	if (n == 2 * sizeof(h) + 2 && bp_hex_decode_fixed(buf, n, h, sizeof(h)) == 0) {
		bp_hex_encode(h, sizeof(h), hash, BP_BLOCK_HASH_STR);
		return BP_BLOCK_HASH;
	}
	if (bp_hex_quantity_lenient(buf, n, &q) == -1 || q > (uint64_t)INT64_MAX)
		return BP_BLOCK_NONE;
	*number = (int64_t)q;
	return BP_BLOCK_NUMBER;
}

enum bp_block_ref
bp_rpc_methods_block_arg(const char *params, size_t len, int index, int64_t *number,
    char *hash)
{
	static const char *const members[] = { "blockNumber", "blockHash" };
	struct bp_rpc_scan_iter it;
	struct bp_rpc_scan_span e, v;
	enum bp_block_ref ref;
	size_t k;
	int i = 0;

	if (index < 0)
		return BP_BLOCK_NONE;
	bp_rpc_scan_iter_init(&it, params, len);
	while (bp_rpc_scan_iter_next(&it, &e) == 1) {
		if (i++ != index)
			continue;
		if (params[e.off] == '"')
			return block_string((const unsigned char *)params, e, number, hash);
		if (params[e.off] != '{')
			return BP_BLOCK_NONE;
		/* EIP-1898: {"blockNumber": "0x.."} or {"blockHash": "0x.."}. */
		for (k = 0; k < BP_NITEMS(members); k++) {
			switch (bp_rpc_scan_member_strict(params + e.off, e.len, members[k], &v)) {
			case 1:
				v.off += e.off;
				ref = block_string((const unsigned char *)params, v, number, hash);
				/* A blockHash that is no hash is the node's error to give. */
				return k == 1 && ref != BP_BLOCK_HASH ? BP_BLOCK_NONE : ref;
			case -2:
				/* A node that folds names or keeps the last may read another block. */
				*number = 0;
				return BP_BLOCK_NUMBER;
			default:
				break;
			}
		}
		return BP_BLOCK_NONE;
	}
	return BP_BLOCK_NONE;
}

unsigned
bp_rpc_methods_cost(const struct bp_rpc_method *m, enum bp_block_ref ref, int64_t number,
    int64_t head, int64_t archive_depth)
{
	if (m->archive_cu == 0 || ref == BP_BLOCK_NONE || (ref == BP_BLOCK_NUMBER &&
	    (head < 0 || number > head || head - number <= archive_depth)))
		return m->cu;
	return m->archive_cu > m->cu ? m->archive_cu : m->cu;
}
