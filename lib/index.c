/*
 * The chain index: the readers of a node's JSON answers, log decoding and the read side of the
 * indexer's tables (index.h).
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
 *   EntryPoint v0.6
 *            UserOperationEvent(bytes32 indexed userOpHash, address indexed sender,
 *            address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost,
 *            uint256 actualGasUsed)
 *            AccountDeployed(bytes32 indexed userOpHash, address indexed sender,
 *            address factory, address paymaster)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/hex.h"
#include "index.h"
#include "log.h"
#include "util.h"

enum topic {
	TOPIC_TRANSFER,		/* 0 */
	TOPIC_TRANSFER_SINGLE,	/* 1 */
	TOPIC_TRANSFER_BATCH,	/* 2 */
	TOPIC_USER_OP,		/* 3 */
	TOPIC_ACCOUNT_DEPLOYED,	/* 4 */
	TOPIC__MAX
};

static const char *const topic_sigs[TOPIC__MAX] = {
	"Transfer(address,address,uint256)",				/* TOPIC_TRANSFER */
	"TransferSingle(address,address,address,uint256,uint256)",	/* TOPIC_TRANSFER_SINGLE */
	"TransferBatch(address,address,address,uint256[],uint256[])",	/* TOPIC_TRANSFER_BATCH */
	"UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)", /* USER_OP */
	"AccountDeployed(bytes32,address,address,address)",		/* ACCOUNT_DEPLOYED */
};

static uint8_t topics[TOPIC__MAX][32];
static int topics_ready;

static void
topics_init(void)
{
	size_t i;

	if (topics_ready)
		return;
	for (i = 0; i < TOPIC__MAX; i++)
		bp_abi_event_topic(topic_sigs[i], topics[i]);
	topics_ready = 1;
}

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

static enum bp_index_kind
decode_transfer(const struct bp_index_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 3 && l->ntopics != 4)
		return BP_INDEX_MALFORMED;
	if (topic_address(l->topics[1], ev->from) == -1 ||
	    topic_address(l->topics[2], ev->to) == -1)
		return BP_INDEX_MALFORMED;
	if (l->ntopics == 3) {
		/* ERC-20: the value is the only data word. */
		if (l->datalen != 32 || bp_abi_read_u256(l->data, l->datalen, 0, &ev->value) == -1)
			return BP_INDEX_MALFORMED;
		return BP_INDEX_ERC20;
	}
	/* ERC-721: all three arguments are indexed, so there is no data. */
	if (l->datalen != 0)
		return BP_INDEX_MALFORMED;
	bp_u256_from_be32(&ev->id, l->topics[3]);
	bp_u256_from_u64(&ev->value, 1);
	return BP_INDEX_ERC721;
}

static enum bp_index_kind
decode_1155(const struct bp_index_log *l, int batch, struct bp_index_event *ev)
{
	const uint8_t *ids, *values;
	size_t idslen, valueslen, nids, nvalues;

	if (l->ntopics != 4 || topic_address(l->topics[1], ev->operator_) == -1 ||
	    topic_address(l->topics[2], ev->from) == -1 ||
	    topic_address(l->topics[3], ev->to) == -1)
		return BP_INDEX_MALFORMED;
	if (!batch) {
		if (l->datalen != 64 ||
		    bp_abi_read_u256(l->data, l->datalen, 0, &ev->id) == -1 ||
		    bp_abi_read_u256(l->data, l->datalen, 1, &ev->value) == -1)
			return BP_INDEX_MALFORMED;
		return BP_INDEX_ERC1155_SINGLE;
	}
	if (bp_abi_read_array(l->data, l->datalen, 0, 1, &ids, &idslen, &nids) == -1 ||
	    bp_abi_read_array(l->data, l->datalen, 1, 1, &values, &valueslen, &nvalues) == -1 ||
	    nids != nvalues)
		return BP_INDEX_MALFORMED;
	ev->ids = ids;
	ev->values = values;
	ev->count = nids;
	return BP_INDEX_ERC1155_BATCH;
}

static enum bp_index_kind
decode_user_op(const struct bp_index_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 4 || l->datalen != 128 ||
	    topic_address(l->topics[2], ev->sender) == -1 ||
	    topic_address(l->topics[3], ev->paymaster) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 0, &ev->nonce) == -1 ||
	    bp_abi_read_bool(l->data, l->datalen, 1, &ev->success) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 2, &ev->gas_cost) == -1 ||
	    bp_abi_read_u256(l->data, l->datalen, 3, &ev->gas_used) == -1)
		return BP_INDEX_MALFORMED;
	memcpy(ev->user_op_hash, l->topics[1], 32);
	return BP_INDEX_USER_OP;
}

static enum bp_index_kind
decode_account_deployed(const struct bp_index_log *l, struct bp_index_event *ev)
{
	if (l->ntopics != 3 || l->datalen != 64 ||
	    topic_address(l->topics[2], ev->sender) == -1 ||
	    bp_abi_read_address(l->data, l->datalen, 0, ev->factory) == -1 ||
	    bp_abi_read_address(l->data, l->datalen, 1, ev->paymaster) == -1)
		return BP_INDEX_MALFORMED;
	memcpy(ev->user_op_hash, l->topics[1], 32);
	return BP_INDEX_ACCOUNT_DEPLOYED;
}

enum bp_index_kind
bp_index_decode_log(const struct bp_index_log *l, const uint8_t *entry_point,
    struct bp_index_event *ev)
{
	const uint8_t *t0;

	topics_init();
	memset(ev, 0, sizeof(*ev));
	ev->kind = BP_INDEX_OTHER;
	if (l->ntopics == 0 || l->ntopics > BP_INDEX_MAX_TOPICS ||
	    (l->data == NULL && l->datalen != 0))
		return ev->kind;
	t0 = l->topics[0];
	if (memcmp(t0, topics[TOPIC_TRANSFER], 32) == 0)
		ev->kind = decode_transfer(l, ev);
	else if (memcmp(t0, topics[TOPIC_TRANSFER_SINGLE], 32) == 0)
		ev->kind = decode_1155(l, 0, ev);
	else if (memcmp(t0, topics[TOPIC_TRANSFER_BATCH], 32) == 0)
		ev->kind = decode_1155(l, 1, ev);
	else if (entry_point != NULL && memcmp(l->address, entry_point, 20) == 0) {
		if (memcmp(t0, topics[TOPIC_USER_OP], 32) == 0)
			ev->kind = decode_user_op(l, ev);
		else if (memcmp(t0, topics[TOPIC_ACCOUNT_DEPLOYED], 32) == 0)
			ev->kind = decode_account_deployed(l, ev);
	}
	if (ev->kind == BP_INDEX_MALFORMED) {
		/* Nothing half-decoded leaks out of a malformed log. */
		memset(ev, 0, sizeof(*ev));
		ev->kind = BP_INDEX_MALFORMED;
	}
	return ev->kind;
}

void
bp_index_batch_item(const struct bp_index_event *ev, size_t i, struct bp_u256 *id,
    struct bp_u256 *value)
{
	/* decode_1155 checked that count words of each array lie inside the data. */
	bp_u256_from_be32(id, ev->ids + 32 * i);
	bp_u256_from_be32(value, ev->values + 32 * i);
}

/* ---- the JSON a node answers ---- */

const char *
bp_index_jstr(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int
bp_index_jquantity(const cJSON *o, const char *name, uint64_t *out)
{
	const char *s = bp_index_jstr(o, name);

	return s != NULL && bp_hex_quantity_lenient(s, strlen(s), out) == 0 ? 0 : -1;
}

int
bp_index_jhash(const cJSON *o, const char *name, char out[BP_INDEX_HASH_STR])
{
	const char *s = bp_index_jstr(o, name);
	uint8_t b[32];

	if (s == NULL || bp_hex_decode_fixed(s, strlen(s), b, 32) == -1)
		return -1;
	return bp_hex_encode(b, 32, out, BP_INDEX_HASH_STR);
}

int
bp_index_jaddr(const cJSON *o, const char *name, char out[BP_INDEX_ADDR_STR],
    int nullable)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	uint8_t a[20];

	if (nullable && (v == NULL || cJSON_IsNull(v))) {
		out[0] = '\0';
		return 0;
	}
	if (!cJSON_IsString(v) || bp_addr_parse(v->valuestring, strlen(v->valuestring), 0, a) == -1)
		return -1;
	return bp_addr_format_lower(a, out, BP_INDEX_ADDR_STR);
}

int
bp_index_jdec(const cJSON *o, const char *name, char *out)
{
	const char *s = bp_index_jstr(o, name);
	struct bp_u256 v;

	if (s == NULL || bp_u256_from_hex(&v, s, strlen(s)) == -1)
		return -1;
	return bp_u256_to_dec(&v, out, BP_U256_DEC_MAX);
}

int
bp_index_parse_log(const cJSON *j, struct bp_index_log *l, struct bp_index_logpos *p,
    uint8_t **buf, size_t *bufcap)
{
	const cJSON *jtopics, *t;
	const char *data;
	uint64_t num, idx;
	size_t dlen;

	jtopics = cJSON_GetObjectItemCaseSensitive(j, "topics");
	data = bp_index_jstr(j, "data");
	if (!cJSON_IsArray(jtopics) || data == NULL ||
	    bp_index_jquantity(j, "blockNumber", &num) == -1 ||
	    bp_index_jquantity(j, "logIndex", &idx) == -1 || idx > INT64_MAX ||
	    bp_index_jhash(j, "transactionHash", p->tx_hash) == -1 ||
	    bp_index_jaddr(j, "address", p->contract, 0) == -1)
		return -1;
	p->block = (int64_t)num;
	p->log_index = (int64_t)idx;
	bp_addr_parse(p->contract, strlen(p->contract), 0, l->address);
	l->ntopics = 0;
	cJSON_ArrayForEach(t, jtopics) {
		if (l->ntopics == BP_INDEX_MAX_TOPICS || !cJSON_IsString(t) ||
		    bp_hex_decode_fixed(t->valuestring, strlen(t->valuestring),
		    l->topics[l->ntopics], 32) == -1)
			return -1;
		l->ntopics++;
	}
	/* Valid data ("0x", two digits a byte) is (dlen - 2) / 2 bytes: dlen / 2 + 1 is room. */
	dlen = strlen(data);
	if (dlen / 2 + 1 > *bufcap) {
		size_t ncap = dlen / 2 + 64;
		uint8_t *d = realloc(*buf, ncap);

		if (d == NULL)
			return -1;
		*buf = d;
		*bufcap = ncap;
	}
	if (bp_hex_decode(data, dlen, *buf, *bufcap, &l->datalen) == -1)
		return -1;
	l->data = *buf;
	return 0;
}

/* ---- the indexer's tables ---- */

/*
 * The statement for sql with the strings keys[0..nkeys) bound to its parameters 1..nkeys. It
 * belongs to the db module's cache (the caller resets it); NULL after bp_db_stmt logged why.
 */
static struct bp_stmt *
query(struct bp_db *db, const char *sql, const char *const keys[], size_t nkeys)
{
	struct bp_stmt *st;
	size_t i;

	if ((st = bp_db_stmt(db, sql)) == NULL)
		return NULL;
	for (i = 0; i < nkeys; i++)
		bp_stmt_text(st, (int)i + 1, keys[i]);
	return st;
}

/*
 * A query for at most one row: steps the statement of query() once. On a row, fill(st, out)
 * copies the columns out and returns 0, or -1 when they do not fit. Returns 1 for a row, 0 for
 * none, -1 on a database error (logged by the db module) or when fill failed.
 */
static int
lookup(struct bp_db *db, const char *sql, const char *const keys[], size_t nkeys,
    int (*fill)(struct bp_stmt *, void *), void *out)
{
	struct bp_stmt *st;
	int rc = -1;

	if ((st = query(db, sql, keys, nkeys)) == NULL)
		return -1;
	switch (bp_stmt_step(st)) {
	case BP_DB_ROW:
		rc = fill(st, out) == 0 ? 1 : -1;
		break;
	case BP_DB_DONE:
		rc = 0;
		break;
	default:
		break;
	}
	bp_stmt_reset(st);
	return rc;
}

/* A text column copied into a caller's buffer, for lookup. */
struct text_out {
	char	*s;
	size_t	 size;
};

/* Column 0 into the text_out at arg; 0, or -1 when it does not fit. */
static int
fill_text(struct bp_stmt *st, void *arg)
{
	struct text_out *t = arg;

	return bp_strlcpy(t->s, bp_col_text(st, 0), t->size);
}

/* A cursor row into the bp_index_head at arg, for lookup. */
static int
fill_head(struct bp_stmt *st, void *arg)
{
	struct bp_index_head *out = arg;

	out->head = bp_col_int(st, 0);
	out->confirmed = bp_col_int(st, 1);
	out->chain_head = bp_col_int(st, 2);
	out->checked_at = bp_col_int(st, 3);
	out->reorgs = bp_col_int(st, 4);
	bp_strlcpy(out->head_hash, bp_col_text(st, 5), sizeof(out->head_hash));
	return 0;
}

int
bp_index_get_head(struct bp_db *db, const char *chain, struct bp_index_head *out)
{
	static const char sql[] = "SELECT head, confirmed, chain_head, checked_at, reorgs,"
	    " head_hash FROM index_cursors WHERE chain = ?";
	const char *keys[] = { chain };
	int rc;

	if ((rc = lookup(db, sql, keys, BP_NITEMS(keys), fill_head, out)) == 0) {
		memset(out, 0, sizeof(*out));
		out->head = out->confirmed = out->chain_head = -1;
	}
	return rc;
}

int
bp_index_nft_owner(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, char *owner, size_t ownerlen)
{
	static const char sql[] = "SELECT owner FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND standard = 'erc721'";
	const char *keys[] = { chain, contract, token_id };
	struct text_out t = { owner, ownerlen };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_text, &t);
}

int
bp_index_nft_balance(struct bp_db *db, const char *chain, const char *contract,
    const char *token_id, const char *owner, char *out, size_t outlen)
{
	static const char sql[] = "SELECT quantity FROM index_nft_owners WHERE chain = ?"
	    " AND contract = ? AND token_id = ? AND owner = ?";
	const char *keys[] = { chain, contract, token_id, owner };
	struct text_out t = { out, outlen };

	switch (lookup(db, sql, keys, BP_NITEMS(keys), fill_text, &t)) {
	case 1:
		return 0;
	case 0:
		return bp_strlcpy(out, "0", outlen);
	default:
		return -1;
	}
}

int
bp_index_each_nft(struct bp_db *db, const char *chain, const char *owner,
    int (*fn)(const struct bp_index_nft *, void *), void *arg)
{
	static const char sql[] = "SELECT contract, token_id, standard, quantity, block_number"
	    " FROM index_nft_owners WHERE chain = ? AND owner = ? ORDER BY contract, token_id";
	const char *keys[] = { chain, owner };
	struct bp_index_nft n;
	struct bp_stmt *st;
	enum bp_db_step r;
	int count = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		n.contract = bp_col_text(st, 0);
		n.token_id = bp_col_text(st, 1);
		n.standard = bp_col_text(st, 2);
		n.quantity = bp_col_text(st, 3);
		n.block_number = bp_col_int(st, 4);
		count++;
		if (fn(&n, arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

int
bp_index_each_erc20(struct bp_db *db, const char *chain, const char *owner,
    int (*fn)(const char *, int64_t, void *), void *arg)
{
	static const char sql[] = "SELECT contract, first_block FROM index_erc20_holdings"
	    " WHERE chain = ? AND owner = ? ORDER BY contract";
	const char *keys[] = { chain, owner };
	struct bp_stmt *st;
	enum bp_db_step r;
	int count = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((r = bp_stmt_step(st)) == BP_DB_ROW) {
		count++;
		if (fn(bp_col_text(st, 0), bp_col_int(st, 1), arg) != 0)
			break;
	}
	bp_stmt_reset(st);
	return r == BP_DB_ERROR ? -1 : count;
}

/* An AccountDeployed row into the bp_index_deployment at arg, for lookup. */
static int
fill_deployment(struct bp_stmt *st, void *arg)
{
	struct bp_index_deployment *out = arg;

	bp_strlcpy(out->factory, bp_col_text(st, 0), sizeof(out->factory));
	bp_strlcpy(out->paymaster, bp_col_text(st, 1), sizeof(out->paymaster));
	bp_strlcpy(out->user_op_hash, bp_col_text(st, 2), sizeof(out->user_op_hash));
	bp_strlcpy(out->tx_hash, bp_col_text(st, 3), sizeof(out->tx_hash));
	out->block_number = bp_col_int(st, 4);
	return 0;
}

int
bp_index_account_deployed(struct bp_db *db, const char *chain, const char *sender,
    struct bp_index_deployment *out)
{
	static const char sql[] = "SELECT factory, paymaster, user_op_hash, tx_hash,"
	    " block_number FROM index_account_deployments WHERE chain = ? AND sender = ?"
	    " ORDER BY block_number, log_index LIMIT 1";
	const char *keys[] = { chain, sender };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_deployment, out);
}

/* A transaction row into the bp_index_tx at arg, for lookup. */
static int
fill_tx(struct bp_stmt *st, void *arg)
{
	struct bp_index_tx *out = arg;

	out->block_number = bp_col_int(st, 0);
	out->tx_index = bp_col_int(st, 1);
	bp_strlcpy(out->from, bp_col_text(st, 2), sizeof(out->from));
	bp_strlcpy(out->to, bp_col_text(st, 3), sizeof(out->to));
	bp_strlcpy(out->value, bp_col_text(st, 4), sizeof(out->value));
	out->status = bp_col_is_null(st, 5) ? -1 : (int)bp_col_int(st, 5);
	bp_strlcpy(out->contract_created, bp_col_text(st, 6), sizeof(out->contract_created));
	return 0;
}

int
bp_index_get_tx(struct bp_db *db, const char *chain, const char *hash, struct bp_index_tx *out)
{
	static const char sql[] = "SELECT block_number, tx_index, from_addr, to_addr, value,"
	    " status, contract_created FROM index_transactions WHERE chain = ? AND hash = ?";
	const char *keys[] = { chain, hash };

	return lookup(db, sql, keys, BP_NITEMS(keys), fill_tx, out);
}

/* ---- Readers for the wallet resource (lib/wallets.c); self-contained, may move as a block. */

/* Column 0 as an int64 into the int64_t at arg, for lookup. */
static int
fill_int(struct bp_stmt *st, void *arg)
{
	*(int64_t *)arg = bp_col_int(st, 0);
	return 0;
}

int
bp_index_block_time(struct bp_db *db, const char *chain, int64_t number, int64_t *ts)
{
	/* The number is bound as text: the column's INTEGER affinity makes it a number again. */
	static const char sql[] = "SELECT timestamp FROM index_blocks WHERE chain = ? AND number = ?";
	char num[24];
	const char *keys[] = { chain, num };

	snprintf(num, sizeof(num), "%lld", (long long)number);
	return lookup(db, sql, keys, BP_NITEMS(keys), fill_int, ts);
}

int
bp_index_sender_deployment(struct bp_db *db, const char *chain, const char *sender,
    struct bp_index_deployment *out)
{
	/* No ORDER BY: see index.h. Column 5 only picks the first record. */
	static const char sql[] = "SELECT factory, paymaster, user_op_hash, tx_hash,"
	    " block_number, log_index FROM index_account_deployments WHERE chain = ? AND sender = ?";
	const char *keys[] = { chain, sender };
	struct bp_index_deployment cur;
	struct bp_stmt *st;
	enum bp_db_step step;
	int64_t best_log = 0;
	int found = 0;

	if ((st = query(db, sql, keys, BP_NITEMS(keys))) == NULL)
		return -1;
	while ((step = bp_stmt_step(st)) == BP_DB_ROW) {
		fill_deployment(st, &cur);
		if (!found || cur.block_number < out->block_number ||
		    (cur.block_number == out->block_number && bp_col_int(st, 5) < best_log)) {
			*out = cur;
			best_log = bp_col_int(st, 5);
		}
		found = 1;
	}
	bp_stmt_reset(st);
	return step == BP_DB_ERROR ? -1 : found;
}

/* ---- End of the wallet resource's readers. */
