/*
 * The events the chain index keeps (docs/indexer.md, "What is stored"), decoded from the event
 * logs a node answers (evm/blocks.h reads them from JSON): ERC-20, ERC-721 and ERC-1155
 * transfers, and the ERC-4337 events of an EntryPoint. Pure functions over bytes; the node is
 * not trusted.
 */
#ifndef BP_INDEX_EVENT_H
#define BP_INDEX_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "evm/blocks.h"
#include "evm/u256.h"

/* What a log is to the index. */
enum bp_index_event_kind {
	BP_INDEX_EVENT_OTHER,			/* 0: not an event the index keeps */
	BP_INDEX_EVENT_MALFORMED,		/* 1: a known event signature with a bad layout */
	BP_INDEX_EVENT_ERC20,			/* 2: Transfer(from, to, value), 3 topics */
	BP_INDEX_EVENT_ERC721,		/* 3: Transfer(from, to, tokenId), 4 topics */
	BP_INDEX_EVENT_ERC1155_SINGLE,	/* 4: TransferSingle(operator, from, to, id, value) */
	BP_INDEX_EVENT_ERC1155_BATCH,		/* 5: TransferBatch(operator, from, to, ids[], values[]) */
	BP_INDEX_EVENT_USER_OP,		/* 6: an EntryPoint's UserOperationEvent (any version) */
	BP_INDEX_EVENT_ACCOUNT_DEPLOYED,	/* 7: an EntryPoint's AccountDeployed (any version) */
	BP_INDEX_EVENT__MAX
};

/*
 * A decoded event. Transfers fill operator (ERC-1155 only), from, to and, for all but a batch,
 * id and value (ERC-20: value only; ERC-721: id, and value 1). A batch gives count and views of
 * its two arrays inside the log's data: read item i with bp_index_event_batch_item. The ERC-4337
 * events fill entry_point (the log's address), user_op_hash, sender, paymaster and either
 * factory (AccountDeployed) or nonce, success, gas_cost and gas_used (UserOperationEvent).
 */
struct bp_index_event {
	enum bp_index_event_kind kind;
	uint8_t		 operator_[20];
	uint8_t		 from[20];
	uint8_t		 to[20];
	struct bp_u256	 id;
	struct bp_u256	 value;
	size_t		 count;			/* ERC-1155 batch: number of ids */
	const uint8_t	*ids, *values;		/* ERC-1155 batch: count words each */
	uint8_t		 entry_point[20];
	uint8_t		 user_op_hash[32];
	uint8_t		 sender[20];
	uint8_t		 paymaster[20];
	uint8_t		 factory[20];
	struct bp_u256	 nonce;
	int		 success;
	struct bp_u256	 gas_cost;
	struct bp_u256	 gas_used;
};

/*
 * Decodes log into *ev. The ERC-4337 events count only when one of the n EntryPoints in
 * entry_points (any version: their events are the same; NULL when n is 0) emitted them.
 * Untrusted input: every topic and word is checked (address words must have 12 zero bytes, bools be 0 or 1, arrays lie inside the data and be of equal length). Returns
 * ev->kind: BP_INDEX_EVENT_OTHER for logs the index ignores, BP_INDEX_EVENT_MALFORMED for one of its events
 * with the wrong number of topics or data of the wrong shape.
 */
enum bp_index_event_kind bp_index_event_decode(const struct bp_blocks_log *log,
		    const uint8_t (*entry_points)[20], size_t n, struct bp_index_event *ev);

/* Item i (< ev->count) of an ERC-1155 batch: its id and value. */
void		bp_index_event_batch_item(const struct bp_index_event *ev, size_t i,
		    struct bp_u256 *id, struct bp_u256 *value);

/*
 * The signature of event i of the ones the index recognises by topic 0 (0 .. 4; NULL past the
 * last) and its topic 0 into topic, so tests can check the table against keccak256.
 */
const char	*bp_index_event_signature(size_t i, uint8_t topic[32]);

#endif
