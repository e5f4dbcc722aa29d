/*
 * Format-B webhooks (SPEC.md section 6 "Format B", docs/webhooks.md): the seven upper-case
 * event types, the filters a webhook takes (checked, canonical JSON), the envelope and the data
 * of each type. The resource itself is webhook.c's; matching webhook_match.c's.
 */
#ifndef BP_WEBHOOK_B_H
#define BP_WEBHOOK_B_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/config.h"
#include "evm/u256.h"

enum bp_webhook_btype {
	BP_WEBHOOK_B_ADDRESS_ACTIVITY,		/* 0 */
	BP_WEBHOOK_B_MINED_TRANSACTION,		/* 1 */
	BP_WEBHOOK_B_NFT_ACTIVITY,		/* 2 */
	BP_WEBHOOK_B_TOKEN_TRANSFER,		/* 3 */
	BP_WEBHOOK_B_INTERNAL_TRANSFER,		/* 4 */
	BP_WEBHOOK_B_NEW_BLOCK,			/* 5 */
	BP_WEBHOOK_B_PENDING_TRANSACTION,	/* 6 */
	BP_WEBHOOK_B__MAX
};

#define BP_WEBHOOK_B_BIT(t)	(1u << (t))
#define BP_WEBHOOK_B_TYPES_MAX	160	/* "ADDRESS_ACTIVITY,..." all seven, and a NUL */
#define BP_WEBHOOK_B_SELECTORS_MAX	100

const char	*bp_webhook_btype_name(enum bp_webhook_btype);
/* An upper-case name; 0 or -1. */
int		 bp_webhook_btype_parse(const char *, enum bp_webhook_btype *);
/* The first type of mask (event_type of a format-B webhook); BP_WEBHOOK_B__MAX for none. */
enum bp_webhook_btype bp_webhook_btype_first(uint32_t mask);
/* The types of mask as "A,B" (the stored form) into out; 0 or -1 when it does not fit. */
int		 bp_webhook_btypes_format(uint32_t mask, char *out, size_t cap);
/* The stored form back; the mask, 0 when nothing reads. */
uint32_t	 bp_webhook_btypes_parse(const char *);

/*
 * Reads event_type (an upper-case name) or event_types (an array of 1 to 7 of them, no
 * repeats) of a create body into *mask. Returns 1 format B, 0 neither is upper-case (format A:
 * the caller goes on), -1 with why naming the field.
 */
int		 bp_webhook_btypes_input(const cJSON *body, uint32_t *mask, char *why,
		    size_t cap);

/*
 * Checks filters (untrusted; NULL: none) for the types of mask and writes their canonical JSON
 * into canon (addresses and hashes lower-case, min_value a decimal string, keys in one order):
 *   addresses	[addresses]: a side of the event (from or to) is one of them
 *   contracts	[addresses]: the token contract, or the transaction's recipient
 *   min_value	decimal string (or an integer): the value moved is at least this
 *   selectors	[0x + 8 hex digits]: the transaction's input starts with one of them
 *   topics	[hashes]: the log (or, for a transaction, one of its logs) has one as topic 0
 *   tx_hashes	[hashes]: the transaction is one of them (MINED_TRANSACTION)
 * Every filter given must pass, and within a list one item. ADDRESS_ACTIVITY,
 * INTERNAL_TRANSFER and PENDING_TRANSACTION need addresses; TOKEN_TRANSFER and NFT_ACTIVITY
 * addresses or contracts; MINED_TRANSACTION tx_hashes or addresses. Returns 0, or -1 with why
 * starting with the field ("filters.min_value must be ...").
 */
int		 bp_webhook_filters_parse(uint32_t mask, const cJSON *filters,
		    struct bp_buf *canon, char *why, size_t cap);

/*
 * Whether network net's upstream serves call traces (trace_block, or debug_traceBlockByHash
 * with the callTracer, of its latest block), which INTERNAL_TRANSFER needs: 0, or -1 with why naming event_types and
 * the network (the node does not serve them, or did not answer). Asked when such a webhook is
 * created, with no transaction open.
 */
int		 bp_webhook_b_traces_served(const struct bp_config *, const struct bp_network *net,
		    char *why, size_t cap);

/*
 * Appends the envelope {id, type, createdAt, chain, chainId, data} around data (a JSON object,
 * len bytes); created_ms is Unix milliseconds (createdAt is ISO 8601 with milliseconds).
 */
int		 bp_webhook_b_envelope(struct bp_buf *b, const char *id,
		    enum bp_webhook_btype t, int64_t created_ms, const char *chain,
		    int64_t chain_id, const char *data, size_t len);

/* Appends ,"name":"0xChecksummed" (a NULL: null); both formats' data use it. 0 or -1. */
int		 bp_webhook_b_put_addr(struct bp_buf *b, const char *name, const uint8_t *a);
/* Appends ,"name":"decimal" (quoted) or ,"name":decimal. 0 or -1. */
int		 bp_webhook_b_put_u256(struct bp_buf *b, const char *name,
		    const struct bp_u256 *v, int quoted);

/* One movement of value, what the data of most types is made of. */
struct bp_webhook_b_move {
	int64_t			 block;
	const char		*block_hash;
	const char		*tx_hash;
	int64_t			 log_index;	/* -1: none (a transaction's own value) */
	const uint8_t		*from, *to;	/* to NULL: a contract creation */
	const uint8_t		*contract;	/* NULL: the native coin */
	struct bp_u256		 value;		/* amount (NFT: quantity) */
	struct bp_u256		 token_id;	/* NFT */
	const char		*standard;	/* "ERC721", "ERC1155"; NULL for the others */
	const char		*direction;	/* ADDRESS_ACTIVITY: "outgoing", "incoming" */
	/* INTERNAL_TRANSFER: the frame's place ("[0,1]", JSON) and kind ("CALL", "CREATE"...). */
	const char		*trace_address, *call_type;
};

/*
 * The data of TOKEN_TRANSFER, ADDRESS_ACTIVITY, NFT_ACTIVITY and INTERNAL_TRANSFER events of mv, written into b
 * (reset first). A token's symbol and decimals (and valueFormatted) are null placeholders the
 * token filler completes before the first attempt (webhook_token.c); an NFT's metadata is
 * null (see docs/webhooks.md). 0 or -1.
 */
int		 bp_webhook_b_data_move(struct bp_buf *b, enum bp_webhook_btype t,
		    const struct bp_webhook_b_move *mv);

/*
 * Closes MINED_TRANSACTION's data after its block and position members: from, to (null for a
 * creation), value (wei, decimal), status ("success", "reverted", null without a receipt),
 * gasUsed (null when unknown), effectiveGasPrice (price "" is null). 0 or -1.
 */
int		 bp_webhook_b_data_tx(struct bp_buf *b, const uint8_t *from, const uint8_t *to,
		    const char *value, int status, int64_t gas_used, const char *price);

/*
 * PENDING_TRANSACTION's data into b (reset first): transactionHash, from, to (null for a
 * creation), value (wei, decimal), nonce, selector (the input's first 4 bytes; null: none). 0/-1.
 */
int		 bp_webhook_b_data_pending(struct bp_buf *b, const char *hash, const uint8_t *from,
		    const uint8_t *to, const struct bp_u256 *value, const struct bp_u256 *nonce,
		    const uint8_t *sel);

/*
 * NEW_BLOCK's data from the node's block object (number, hash, parentHash, timestamp, gasUsed,
 * transactions), into b (reset first). 0, or -1 when the block lacks a member.
 */
int		 bp_webhook_b_data_block(struct bp_buf *b, const cJSON *block);

#endif
