/*
 * The events the chain index keeps, decoded from logs (index_event.h).
 *
 * Event layouts (Solidity ABI; indexed arguments are topics, the rest ABI-encoded data):
 *   ERC-20   Transfer(address indexed from, address indexed to, uint256 value)
 *   ERC-721  Transfer(address indexed from, address indexed to, uint256 indexed tokenId)
 *            Same topic 0 as ERC-20; the topic count tells them apart (Blockscout does the
 *            same). A Transfer with any other count (CryptoKitties' unindexed one) is not kept.
 *   ERC-1155 TransferSingle(address indexed operator, address indexed from, address indexed to,
 *            uint256 id, uint256 value)
 *            TransferBatch(address indexed operator, address indexed from, address indexed to,
 *            uint256[] ids, uint256[] values)
 *   EntryPoint v0.6, v0.7 and v0.8 (the same two events, the same layouts, in every version)
 *            UserOperationEvent(bytes32 indexed userOpHash, address indexed sender,
 *            address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost,
 *            uint256 actualGasUsed)
 *            AccountDeployed(bytes32 indexed userOpHash, address indexed sender,
 *            address factory, address paymaster)
 */
#include <string.h>

#include "evm/abi.h"
#include "index_event.h"

enum topic {
	TOPIC_TRANSFER,		/* 0 */
	TOPIC_TRANSFER_SINGLE,	/* 1 */
	TOPIC_TRANSFER_BATCH,	/* 2 */
	TOPIC_USER_OP,		/* 3 */
	TOPIC_ACCOUNT_DEPLOYED,	/* 4 */
	TOPIC__MAX
};

/*
 * Topic 0 of each event: keccak256 of its signature (bp_index_event_signature gives the text; the
 * unit tests hash it again), written out so that decoding needs no state set up at run time.
 */
static const uint8_t topics[TOPIC__MAX][32] = {
	{	/* TOPIC_TRANSFER: Transfer(address,address,uint256) */
		0xdd, 0xf2, 0x52, 0xad, 0x1b, 0xe2, 0xc8, 0x9b,
		0x69, 0xc2, 0xb0, 0x68, 0xfc, 0x37, 0x8d, 0xaa,
		0x95, 0x2b, 0xa7, 0xf1, 0x63, 0xc4, 0xa1, 0x16,
		0x28, 0xf5, 0x5a, 0x4d, 0xf5, 0x23, 0xb3, 0xef,
	},
	{	/* TOPIC_TRANSFER_SINGLE: TransferSingle(address,address,address,uint256,uint256) */
		0xc3, 0xd5, 0x81, 0x68, 0xc5, 0xae, 0x73, 0x97,
		0x73, 0x1d, 0x06, 0x3d, 0x5b, 0xbf, 0x3d, 0x65,
		0x78, 0x54, 0x42, 0x73, 0x43, 0xf4, 0xc0, 0x83,
		0x24, 0x0f, 0x7a, 0xac, 0xaa, 0x2d, 0x0f, 0x62,
	},
	{	/* TOPIC_TRANSFER_BATCH: TransferBatch(address,address,address,uint256[],uint256[]) */
		0x4a, 0x39, 0xdc, 0x06, 0xd4, 0xc0, 0xdb, 0xc6,
		0x4b, 0x70, 0xaf, 0x90, 0xfd, 0x69, 0x8a, 0x23,
		0x3a, 0x51, 0x8a, 0xa5, 0xd0, 0x7e, 0x59, 0x5d,
		0x98, 0x3b, 0x8c, 0x05, 0x26, 0xc8, 0xf7, 0xfb,
	},
	{	/* TOPIC_USER_OP: UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256) */
		0x49, 0x62, 0x8f, 0xd1, 0x47, 0x10, 0x06, 0xc1,
		0x48, 0x2d, 0xa8, 0x80, 0x28, 0xe9, 0xce, 0x4d,
		0xbb, 0x08, 0x0b, 0x81, 0x5c, 0x9b, 0x03, 0x44,
		0xd3, 0x9e, 0x5a, 0x8e, 0x6e, 0xc1, 0x41, 0x9f,
	},
	{	/* TOPIC_ACCOUNT_DEPLOYED: AccountDeployed(bytes32,address,address,address) */
		0xd5, 0x1a, 0x9c, 0x61, 0x26, 0x7a, 0xa6, 0x19,
		0x69, 0x61, 0x88, 0x3e, 0xcf, 0x5f, 0xf2, 0xda,
		0x66, 0x19, 0xc3, 0x7d, 0xac, 0x0f, 0xa9, 0x21,
		0x22, 0x51, 0x3f, 0xb3, 0x2c, 0x03, 0x2d, 0x2d,
	},
};

/* An address topic: 12 zero bytes, then the address. 0, or -1 when the high bytes are not 0. */
static int
topic_address(const uint8_t t[32], uint8_t out[20])
{
	size_t i;

	for (i = 0; i < 12; i++)
		if (t[i] != 0)
			return -1;
	memcpy(out, t + 12, 20);
	return 0;
}

static enum bp_index_event_kind
decode_transfer(const struct bp_blocks_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 3 && l->ntopics != 4)
		return BP_INDEX_EVENT_MALFORMED;
	if (topic_address(l->topics[1], ev->from) == -1 ||
	    topic_address(l->topics[2], ev->to) == -1)
		return BP_INDEX_EVENT_MALFORMED;
	if (l->ntopics == 3) {
		/* ERC-20: the value is the only data word. */
		if (l->datalen != 32 || bp_abi_read_u256(l->data, l->datalen, 0, &ev->value) == -1)
			return BP_INDEX_EVENT_MALFORMED;
		return BP_INDEX_EVENT_ERC20;
	}
	/* ERC-721: all three arguments are indexed, so there is no data. */
	if (l->datalen != 0)
		return BP_INDEX_EVENT_MALFORMED;
	bp_u256_from_be32(&ev->id, l->topics[3]);
	bp_u256_from_u64(&ev->value, 1);
	return BP_INDEX_EVENT_ERC721;
}

static enum bp_index_event_kind
decode_1155(const struct bp_blocks_log *l, int batch, struct bp_index_event *ev)
{
	const uint8_t *ids, *values;
	size_t idslen, valueslen, nids, nvalues;

	if (l->ntopics != 4 || topic_address(l->topics[1], ev->operator_) == -1 ||
	    topic_address(l->topics[2], ev->from) == -1 ||
	    topic_address(l->topics[3], ev->to) == -1)
		return BP_INDEX_EVENT_MALFORMED;
	if (!batch) {
		if (l->datalen != 64 ||
		    bp_abi_read_u256(l->data, l->datalen, 0, &ev->id) == -1 ||
		    bp_abi_read_u256(l->data, l->datalen, 1, &ev->value) == -1)
			return BP_INDEX_EVENT_MALFORMED;
		return BP_INDEX_EVENT_ERC1155_SINGLE;
	}
	if (bp_abi_read_array(l->data, l->datalen, 0, 1, &ids, &idslen, &nids) == -1 ||
	    bp_abi_read_array(l->data, l->datalen, 1, 1, &values, &valueslen, &nvalues) == -1 ||
	    nids != nvalues)
		return BP_INDEX_EVENT_MALFORMED;
	ev->ids = ids;
	ev->values = values;
	ev->count = nids;
	return BP_INDEX_EVENT_ERC1155_BATCH;
}

static enum bp_index_event_kind
decode_user_op(const struct bp_blocks_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 4 || l->datalen != 128 ||
	    topic_address(l->topics[2], ev->sender) == -1 ||
	    topic_address(l->topics[3], ev->paymaster) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 0, &ev->nonce) == -1 ||
	    bp_abi_read_bool(l->data, l->datalen, 1, &ev->success) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 2, &ev->gas_cost) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 3, &ev->gas_used) == -1)
		return BP_INDEX_EVENT_MALFORMED;
	memcpy(ev->user_op_hash, l->topics[1], 32);
	return BP_INDEX_EVENT_USER_OP;
}

static enum bp_index_event_kind
decode_account_deployed(const struct bp_blocks_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 3 || l->datalen != 64 ||
	    topic_address(l->topics[2], ev->sender) == -1 ||
	    bp_abi_read_address(l->data, l->datalen, 0, ev->factory) == -1 ||
	    bp_abi_read_address(l->data, l->datalen, 1, ev->paymaster) == -1)
		return BP_INDEX_EVENT_MALFORMED;
	memcpy(ev->user_op_hash, l->topics[1], 32);
	return BP_INDEX_EVENT_ACCOUNT_DEPLOYED;
}

/* The Solidity signatures, for bp_index_event_signature. */
static const char *const topic_sigs[TOPIC__MAX] = {
	"Transfer(address,address,uint256)",	/* TOPIC_TRANSFER */
	"TransferSingle(address,address,address,uint256,uint256)",	/* TOPIC_TRANSFER_SINGLE */
	"TransferBatch(address,address,address,uint256[],uint256[])",	/* TOPIC_TRANSFER_BATCH */
	"UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)",	/* TOPIC_USER_OP */
	"AccountDeployed(bytes32,address,address,address)",	/* TOPIC_ACCOUNT_DEPLOYED */
};

const char *
bp_index_event_signature(size_t i, uint8_t topic[32])
{
	if (i >= TOPIC__MAX)
		return NULL;
	memcpy(topic, topics[i], 32);
	return topic_sigs[i];
}

enum bp_index_event_kind
bp_index_event_decode(const struct bp_blocks_log *l, const uint8_t (*entry_points)[20],
    size_t n, struct bp_index_event *ev)
{
	const uint8_t *t0;
	size_t i;

	memset(ev, 0, sizeof(*ev));
	ev->kind = BP_INDEX_EVENT_OTHER;
	if (l->ntopics == 0 || l->ntopics > BP_BLOCKS_MAX_TOPICS ||
	    (l->data == NULL && l->datalen != 0))
		return ev->kind;
	t0 = l->topics[0];
	if (memcmp(t0, topics[TOPIC_TRANSFER], 32) == 0)
		ev->kind = decode_transfer(l, ev);
	else if (memcmp(t0, topics[TOPIC_TRANSFER_SINGLE], 32) == 0)
		ev->kind = decode_1155(l, 0, ev);
	else if (memcmp(t0, topics[TOPIC_TRANSFER_BATCH], 32) == 0)
		ev->kind = decode_1155(l, 1, ev);
	else if (memcmp(t0, topics[TOPIC_USER_OP], 32) == 0 ||
	    memcmp(t0, topics[TOPIC_ACCOUNT_DEPLOYED], 32) == 0) {
		/* Anyone can emit these: only a configured EntryPoint's count. */
		for (i = 0; i < n && memcmp(l->address, entry_points[i], 20) != 0; i++)
			continue;
		if (i == n)
			return ev->kind;
		ev->kind = memcmp(t0, topics[TOPIC_USER_OP], 32) == 0 ? decode_user_op(l, ev) :
		    decode_account_deployed(l, ev);
		if (ev->kind != BP_INDEX_EVENT_MALFORMED)
			memcpy(ev->entry_point, l->address, 20);
	}
	if (ev->kind == BP_INDEX_EVENT_MALFORMED) {
		/* Nothing half-decoded leaks out of a malformed log. */
		memset(ev, 0, sizeof(*ev));
		ev->kind = BP_INDEX_EVENT_MALFORMED;
	}
	return ev->kind;
}

void
bp_index_event_batch_item(const struct bp_index_event *ev, size_t i, struct bp_u256 *id,
    struct bp_u256 *value)
{
	/* decode_1155 checked that count words of each array lie inside the data. */
	bp_u256_from_be32(id, ev->ids + 32 * i);
	bp_u256_from_be32(value, ev->values + 32 * i);
}
