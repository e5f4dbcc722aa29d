/*
 * JSON-RPC method tables (lib/rpc/rpc_methods.c; docs/rpc.md): per chain kind, each method's class
 * (read, write, debug, WebSocket only, never offered) and its compute-unit cost, plain and at
 * an archive block, and the reading of block arguments that decides which cost applies.
 */
#ifndef BP_RPC_METHODS_H
#define BP_RPC_METHODS_H

#include <stddef.h>
#include <stdint.h>

#include "core/config.h"

/* Method classes: what a key needs to call a method over HTTP. */
enum bp_rpc_class {
	BP_RPC_READ,		/* 0: rpc:read */
	BP_RPC_WRITE,		/* 1: rpc:write */
	BP_RPC_DEBUG,		/* 2: rpc:read and a plan with debug */
	BP_RPC_SUBSCRIBE,	/* 3: only over the WebSocket endpoint */
	BP_RPC_DENIED,		/* 4: never offered: node accounts, node and dev-chain controls */
	BP_RPC_CLASS__MAX
};

/* One row of the method table. */
struct bp_rpc_method {
	const char		*name;
	enum bp_chain_kind	 kind;
	enum bp_rpc_class	 cls;
	unsigned		 cu;		/* compute units of a call */
	unsigned		 archive_cu;	/* at a block older than archive_depth; 0 = never */
	int			 block_arg;	/* index in params of the block argument; -1 none */
};

/*
 * A program's method table: what it offers and at what cost. Each program that answers
 * JSON-RPC passes its own to the proxy (lib/rpc/rpc_proxy.h): the node proxy's is bp_rpc_node_table;
 * the bundler's will hold its own methods.
 */
struct bp_rpc_table {
	const char			*name;		/* for logs and tests: "node" */
	const struct bp_rpc_method	*rows;		/* sorted by name in byte order */
	size_t				 nrows;
	const struct bp_rpc_method	*prefixes;	/* whole namespaces never offered */
	size_t				 nprefixes;
};

/* The methods of Ethereum and Solana nodes (fcgi/rpc.c; docs/rpc.md lists them). */
extern const struct bp_rpc_table bp_rpc_node_table;

/*
 * The row of method name (len bytes, may hold NULs) for chain kind in table t: an exact row, or
 * the row of a never-offered prefix (wallet_, personal_, admin_, miner_, anvil_, hardhat_,
 * evm_, ...). NULL for a method t does not know.
 */
const struct bp_rpc_method *bp_rpc_method(const struct bp_rpc_table *t,
		    enum bp_chain_kind, const char *name, size_t len);
/* The name of a class ("read"), or "?". */
const char	*bp_rpc_methods_class_name(enum bp_rpc_class);

/* What a block argument names. */
enum bp_block_ref {
	BP_BLOCK_NONE,		/* 0: absent, a tag near the head, or not understood */
	BP_BLOCK_NUMBER,	/* 1: a block number (earliest is 0) */
	BP_BLOCK_HASH,		/* 2: a block hash, whose number the caller looks up */
	BP_BLOCK__MAX
};

#define BP_BLOCK_HASH_STR	67	/* "0x", 64 hex digits and a NUL */

/*
 * Reads params[index] (params is the raw array text) as a block argument: a quantity "0x1f",
 * a tag, a block hash (66 characters: "0x" and 64 hex digits, as every method with an archive
 * cost takes, EIP-1898), or an EIP-1898 object {"blockNumber": ...} / {"blockHash": ...}. Sets
 * *number for BP_BLOCK_NUMBER, hash (room for BP_BLOCK_HASH_STR bytes, lower case) for
 * BP_BLOCK_HASH. An object a node could read another block from (blockNumber or blockHash
 * twice, or a member whose name folds to one: "BlockNumber", "BLOCKHASH") counts as block 0, so
 * it is priced as the oldest block rather than the one this scan would pick.
 */
enum bp_block_ref bp_rpc_methods_block_arg(const char *params, size_t len, int index,
		    int64_t *number, char *hash);

/*
 * The compute units of one call of m: archive_cu when m reads state at a block whose number is
 * more than archive_depth below head (head < 0: unknown, never archive), or at a hash the
 * caller could not place (ref BP_BLOCK_HASH: unknown to the node, or not looked up), else cu.
 */
unsigned	 bp_rpc_methods_cost(const struct bp_rpc_method *m, enum bp_block_ref ref,
		    int64_t number, int64_t head, int64_t archive_depth);

#endif
