/*
 * libFuzzer harness for the indexer's decoding of what a chain node sends: event logs through
 * bp_index_event_decode and bp_index_event_batch_item (lib/index/index_event.c), the JSON logs and blocks the
 * indexer reads its fields from (lib/evm/blocks.c), and the continuity check of a fetched batch
 * (bp_index_fetch_check, lib/index/index_fetch.c). The node is not trusted: a buggy or hostile one may
 * send any topics, any data and any JSON.
 *
 * An input that starts with '{' or '[' is JSON (an eth_getLogs answer, a log, a block, an array
 * of them): it is parsed with cJSON_ParseWithLength and each object goes through the readers
 * the indexer calls (lib/evm/blocks.h: bp_blocks_parse_log, bp_blocks_jhash, bp_blocks_jaddr,
 * bp_blocks_jquantity, bp_blocks_jdec), then through bp_index_event_decode; each string through
 * bp_blocks_parse_head (an eth_blockNumber answer); and an array of objects, taken as the blocks
 * of a batch (their "receipts" and "logs" members as its receipts and logs), through
 * bp_index_fetch_check. Any other input is
 * a binary log (layout at binary_log), so the fuzzer reaches each event without having to guess
 * a Keccak-256 topic; that log is then also written as a node would write it in JSON, in one of
 * several spellings, printed, parsed back and read as the indexer reads it.
 *
 * Beyond memory safety it checks, aborting on a violation:
 *
 *  - the decoded kind and every field agree with a reference decoder written from the event
 *    layouts (index_event.c's header comment), independently of lib/: topic counts, address
 *    topics and words with 12 zero bytes, bools 0 or 1, the entry point's events only from it;
 *  - a malformed or ignored log leaves nothing half-decoded (all fields zero);
 *  - an ERC-1155 batch's two arrays lie inside the log's data, count words each, at the place
 *    bp_abi_read_array finds them, and every item reads inside them (the data is an exact-size
 *    copy, so ASan sees one byte too far);
 *  - a batch the harness ABI-encodes itself, (uint256[] ids, uint256[] values), decodes back to
 *    the same items, and is malformed exactly when the two lengths differ;
 *  - the JSON field readers accept exactly the forms their header comments give (a hash "0x" or
 *    "0X" and 64 hex digits, an address the same with 40, a quantity what the u256 parser takes
 *    and a uint64 holds), leave out untouched when they refuse, and give canonical text: a hash
 *    is "0x" and 64 lower-case digits equal to the input up to case, an address the same with
 *    40, a decimal has no leading zero and parses back to the value;
 *  - bp_blocks_parse_log gives the same log with a buffer of just enough room and with one it
 *    grows itself; its position fields and address are the members as the readers read them;
 *  - a log written in JSON reads back as the very same log (address, topics, data) in any case
 *    and with "0X", and is refused for odd data digits, a missing address, a non-string or
 *    fifth topic.
 *
 * Seeds: the corpus starts empty, as for the other harnesses; tests/fuzz/index.dict holds the
 * event topics as JSON strings, the field names, and a sample log.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/u256.h"
#include "index/index_event.h"
#include "index/index_fetch.h"

#define HASH_STR	BP_BLOCKS_HASH_STR
#define ADDR_STR	BP_BLOCKS_ADDR_STR
#define MAX_OBJECTS	64	/* JSON objects looked at per input */
#define MAX_ITEMS	8	/* elements of each array of a harness-built batch */

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

enum topic {
	TOPIC_TRANSFER,		/* 0 */
	TOPIC_TRANSFER_SINGLE,	/* 1 */
	TOPIC_TRANSFER_BATCH,	/* 2 */
	TOPIC_USER_OP,		/* 3 */
	TOPIC_ACCOUNT_DEPLOYED,	/* 4 */
	TOPIC__MAX
};

/* Written out rather than hashed with lib/, so a wrong topic in lib/index/index_event.c shows. */
static const char *const topic_hex[TOPIC__MAX] = {
	/* Transfer(address,address,uint256) */
	"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
	/* TransferSingle(address,address,address,uint256,uint256) */
	"0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62",
	/* TransferBatch(address,address,address,uint256[],uint256[]) */
	"0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb",
	/* UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256) */
	"0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f",
	/* AccountDeployed(bytes32,address,address,address) */
	"0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d",
};

/* EntryPoint v0.6, as the config names it. */
static const char entry_point_hex[] = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";

static uint8_t topics[TOPIC__MAX][32];
static uint8_t entry_point[20];

static void
setup(void)
{
	static int done;
	size_t i;

	if (done)
		return;
	for (i = 0; i < TOPIC__MAX; i++)
		if (bp_hex_decode_fixed(topic_hex[i], strlen(topic_hex[i]), topics[i], 32) != 0)
			abort();
	if (bp_addr_parse(entry_point_hex, strlen(entry_point_hex), BP_ADDR_CHECKSUM,
	    entry_point) != 0)
		abort();
	done = 1;
}

/* ---- the reference decoder and the checks ---- */

/* 1 when the 32-byte word w holds an address: 12 zero bytes first. */
static int
is_addr_word(const uint8_t *w)
{
	size_t i;

	for (i = 0; i < 12; i++)
		if (w[i] != 0)
			return 0;
	return 1;
}

static int
zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != 0)
			return 0;
	return 1;
}

/* 1 when the n bytes at p are all 'Z', the harness's canary for an untouched buffer. */
static int
all_z(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != 'Z')
			return 0;
	return 1;
}

static void
u256_at(struct bp_u256 *v, const uint8_t *w)
{
	bp_u256_from_be32(v, w);
}

/* Aborts unless [p, p + n) lies inside [base, base + len). */
static void
inside(const uint8_t *base, size_t len, const uint8_t *p, size_t n)
{
	if (p == NULL || base == NULL || p < base || (size_t)(p - base) > len ||
	    n > len - (size_t)(p - base))
		abort();
}

/*
 * What the index should make of log l, written from the event layouts alone. Fills *want for
 * every kind but BP_INDEX_EVENT_ERC1155_BATCH, whose arrays only the ABI reader can find: then
 * *batch_ok says whether the topics allow one (the data decides).
 */
static enum bp_index_event_kind
reference(const struct bp_blocks_log *l, const uint8_t *ep, struct bp_index_event *want,
    int *batch_ok)
{
	const uint8_t *t0 = l->topics[0], *d = l->data;
	size_t n = l->ntopics;

	memset(want, 0, sizeof(*want));
	*batch_ok = 0;
	if (n == 0 || n > BP_BLOCKS_MAX_TOPICS || (d == NULL && l->datalen != 0))
		return BP_INDEX_EVENT_OTHER;
	if (memcmp(t0, topics[TOPIC_TRANSFER], 32) == 0) {
		if (n < 3 || !is_addr_word(l->topics[1]) || !is_addr_word(l->topics[2]))
			return BP_INDEX_EVENT_MALFORMED;
		memcpy(want->from, l->topics[1] + 12, 20);
		memcpy(want->to, l->topics[2] + 12, 20);
		if (n == 3 && l->datalen == 32) {
			u256_at(&want->value, d);
			return BP_INDEX_EVENT_ERC20;
		}
		if (n == 4 && l->datalen == 0) {
			u256_at(&want->id, l->topics[3]);
			bp_u256_from_u64(&want->value, 1);
			return BP_INDEX_EVENT_ERC721;
		}
		return BP_INDEX_EVENT_MALFORMED;
	}
	if (memcmp(t0, topics[TOPIC_TRANSFER_SINGLE], 32) == 0 ||
	    memcmp(t0, topics[TOPIC_TRANSFER_BATCH], 32) == 0) {
		int batch = memcmp(t0, topics[TOPIC_TRANSFER_BATCH], 32) == 0;

		if (n != 4 || !is_addr_word(l->topics[1]) || !is_addr_word(l->topics[2]) ||
		    !is_addr_word(l->topics[3]))
			return BP_INDEX_EVENT_MALFORMED;
		memcpy(want->operator_, l->topics[1] + 12, 20);
		memcpy(want->from, l->topics[2] + 12, 20);
		memcpy(want->to, l->topics[3] + 12, 20);
		if (batch) {
			*batch_ok = 1;
			return BP_INDEX_EVENT_ERC1155_BATCH;
		}
		if (l->datalen != 64)
			return BP_INDEX_EVENT_MALFORMED;
		u256_at(&want->id, d);
		u256_at(&want->value, d + 32);
		return BP_INDEX_EVENT_ERC1155_SINGLE;
	}
	if (ep == NULL || memcmp(l->address, ep, 20) != 0)
		return BP_INDEX_EVENT_OTHER;
	if (memcmp(t0, topics[TOPIC_USER_OP], 32) == 0) {
		if (n != 4 || l->datalen != 128 || !is_addr_word(l->topics[2]) ||
		    !is_addr_word(l->topics[3]) || !zero(d + 32, 31) || d[63] > 1)
			return BP_INDEX_EVENT_MALFORMED;
		memcpy(want->entry_point, ep, 20);
		memcpy(want->user_op_hash, l->topics[1], 32);
		memcpy(want->sender, l->topics[2] + 12, 20);
		memcpy(want->paymaster, l->topics[3] + 12, 20);
		u256_at(&want->nonce, d);
		want->success = d[63];
		u256_at(&want->gas_cost, d + 64);
		u256_at(&want->gas_used, d + 96);
		return BP_INDEX_EVENT_USER_OP;
	}
	if (memcmp(t0, topics[TOPIC_ACCOUNT_DEPLOYED], 32) == 0) {
		if (n != 3 || l->datalen != 64 || !is_addr_word(l->topics[2]) ||
		    !is_addr_word(d) || !is_addr_word(d + 32))
			return BP_INDEX_EVENT_MALFORMED;
		memcpy(want->entry_point, ep, 20);
		memcpy(want->user_op_hash, l->topics[1], 32);
		memcpy(want->sender, l->topics[2] + 12, 20);
		memcpy(want->factory, d + 12, 20);
		memcpy(want->paymaster, d + 32 + 12, 20);
		return BP_INDEX_EVENT_ACCOUNT_DEPLOYED;
	}
	return BP_INDEX_EVENT_OTHER;
}

#define SAME(f)	(memcmp(&got->f, &want->f, sizeof(got->f)) == 0)

static int
same_event(const struct bp_index_event *got, const struct bp_index_event *want)
{
	return SAME(operator_) && SAME(from) && SAME(to) && SAME(id) && SAME(value) &&
	    SAME(count) && SAME(ids) && SAME(values) && SAME(user_op_hash) && SAME(sender) &&
	    SAME(paymaster) && SAME(factory) && SAME(entry_point) && SAME(nonce) && SAME(success) && SAME(gas_cost) &&
	    SAME(gas_used);
}

/*
 * A batch the harness encoded itself: its items, or items == NULL when the data is the
 * fuzzer's own.
 */
struct built {
	const uint8_t	(*ids)[32];
	const uint8_t	(*values)[32];
	size_t		 nids, nvalues;
};

/* Decodes l with and without the entry point and checks the answers against the reference. */
static void
check_log(const struct bp_blocks_log *l, const uint8_t *ep, const struct built *b)
{
	struct bp_index_event ev, want;
	enum bp_index_event_kind k, rk;
	int batch_ok;
	size_t i;

	k = bp_index_event_decode(l, (const uint8_t (*)[20])ep, ep != NULL, &ev);
	if (k != ev.kind || (unsigned)k >= BP_INDEX_EVENT__MAX)
		abort();
	rk = reference(l, ep, &want, &batch_ok);
	if (batch_ok) {
		const uint8_t *el;
		size_t eln, cnt;

		/* The topics are right: the arrays decide, as bp_abi_read_array reads them. */
		if (k == BP_INDEX_EVENT_MALFORMED) {
			if (b != NULL && b->nids == b->nvalues)
				abort();	/* a well-formed batch refused */
			memset(&want, 0, sizeof(want));
			rk = BP_INDEX_EVENT_MALFORMED;
		} else {
			if (k != BP_INDEX_EVENT_ERC1155_BATCH || (b != NULL && b->nids != b->nvalues))
				abort();
			inside(l->data, l->datalen, ev.ids, 0);
			inside(l->data, l->datalen, ev.values, 0);
			if (ev.count > (l->datalen - (size_t)(ev.ids - l->data)) / 32 ||
			    ev.count > (l->datalen - (size_t)(ev.values - l->data)) / 32)
				abort();
			if (bp_abi_read_array(l->data, l->datalen, 0, 1, &el, &eln, &cnt) != 0 ||
			    el != ev.ids || cnt != ev.count ||
			    bp_abi_read_array(l->data, l->datalen, 1, 1, &el, &eln, &cnt) != 0 ||
			    el != ev.values || cnt != ev.count)
				abort();
			want.count = ev.count;
			want.ids = ev.ids;
			want.values = ev.values;
			if (b != NULL && ev.count != b->nids)
				abort();
			for (i = 0; i < ev.count; i++) {
				struct bp_u256 id, value, x;

				bp_index_event_batch_item(&ev, i, &id, &value);
				if (b != NULL) {
					u256_at(&x, b->ids[i]);
					if (bp_u256_cmp(&x, &id) != 0)
						abort();
					u256_at(&x, b->values[i]);
					if (bp_u256_cmp(&x, &value) != 0)
						abort();
				}
			}
		}
	}
	if (k != rk)
		abort();
	if (rk == BP_INDEX_EVENT_MALFORMED || rk == BP_INDEX_EVENT_OTHER)
		memset(&want, 0, sizeof(want));
	if (!same_event(&ev, &want))
		abort();
	/* The entry point's own events never come from a log when there is no entry point. */
	if (ep != NULL) {
		k = bp_index_event_decode(l, NULL, 0, &ev);
		if (k == BP_INDEX_EVENT_USER_OP || k == BP_INDEX_EVENT_ACCOUNT_DEPLOYED)
			abort();
	}
}

/* ---- binary logs ---- */

/* Takes n bytes from the input, zero-padded past its end. */
static void
take(const uint8_t **p, size_t *left, uint8_t *out, size_t n)
{
	size_t k = *left < n ? *left : n;

	if (k > 0)
		memcpy(out, *p, k);
	memset(out + k, 0, n - k);
	*p += k;
	*left -= k;
}

/*
 * Builds (uint256[] ids, uint256[] values) from the input into a new exact-size buffer (the
 * caller frees it); b gets the items. 0, or -1 when the encoder fails.
 */
static int
build_batch(const uint8_t **p, size_t *left, int equal, struct built *b,
    uint8_t (*ids)[32], uint8_t (*values)[32], uint8_t **data, size_t *datalen)
{
	struct bp_abi_enc *e;
	struct bp_u256 v;
	uint8_t n[2];
	size_t i;
	int rc = -1;

	take(p, left, n, 2);
	b->nids = n[0] % (MAX_ITEMS + 1);
	b->nvalues = equal ? b->nids : n[1] % (MAX_ITEMS + 1);
	b->ids = (const uint8_t (*)[32])ids;
	b->values = (const uint8_t (*)[32])values;
	for (i = 0; i < b->nids; i++)
		take(p, left, ids[i], 32);
	for (i = 0; i < b->nvalues; i++)
		take(p, left, values[i], 32);
	if ((e = bp_abi_enc_new(4096)) == NULL)
		return -1;
	if (bp_abi_array_begin(e) != 0)
		goto out;
	for (i = 0; i < b->nids; i++) {
		u256_at(&v, ids[i]);
		if (bp_abi_put_u256(e, &v) != 0)
			goto out;
	}
	if (bp_abi_array_end(e) != 0 || bp_abi_array_begin(e) != 0)
		goto out;
	for (i = 0; i < b->nvalues; i++) {
		u256_at(&v, values[i]);
		if (bp_abi_put_u256(e, &v) != 0)
			goto out;
	}
	if (bp_abi_array_end(e) != 0 || bp_abi_enc_finish(e, NULL, data, datalen) != 0)
		goto out;
	rc = 0;
out:
	bp_abi_enc_free(e);
	return rc;
}

/* ---- JSON, as the indexer reads it ---- */

/*
 * The JSON readers of lib/evm/blocks.h, each called as the indexer calls them and checked against
 * its header comment: the accepted forms, the canonical text written, and out untouched on -1.
 */

/* The string member, as bp_blocks_jstr must find it. */
static const char *
member_str(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	const char *s = bp_blocks_jstr(o, name);

	if (s != (cJSON_IsString(v) ? v->valuestring : NULL))
		abort();
	return s;
}

/* 1 when s is "0x" or "0X" and exactly n hex digits. */
static int
hex_of_len(const char *s, size_t n)
{
	size_t i;

	if (s == NULL || strlen(s) != n + 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return 0;
	for (i = 2; i < n + 2; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/* bp_blocks_jquantity; checks it against the u256 parser (as lenient) and a uint64. */
static int
read_quantity(const cJSON *o, const char *name, uint64_t *out)
{
	const char *s = member_str(o, name);
	const uint64_t canary = 0xa5a5a5a5a5a5a5a5u;
	struct bp_u256 u;
	uint64_t v;
	int rc, want;

	*out = canary;
	rc = bp_blocks_jquantity(o, name, out);
	want = s != NULL && bp_u256_from_hex(&u, s, strlen(s)) == 0 && bp_u256_to_u64(&u, &v) == 0;
	if ((rc == 0) != want || (rc != 0 && rc != -1))
		abort();
	if (rc == -1) {
		if (*out != canary)
			abort();
		return -1;
	}
	if (v != *out)
		abort();
	return 0;
}

/* Aborts unless out is "0x" and the lower-case digits of s (len bytes). */
static void
lower_copy(const char *s, size_t len, const char *out)
{
	size_t i;

	if (strlen(out) != len || out[0] != '0' || out[1] != 'x' || (s[1] != 'x' && s[1] != 'X'))
		abort();
	for (i = 2; i < len; i++)
		if (out[i] != tolower((unsigned char)s[i]) || isupper((unsigned char)out[i]))
			abort();
}

/* bp_blocks_jhash: exactly "0x"/"0X" and 64 hex digits, written lower-case. */
static int
read_hash(const cJSON *o, const char *name, char out[HASH_STR])
{
	const char *s = member_str(o, name);
	int rc;

	memset(out, 'Z', HASH_STR);
	rc = bp_blocks_jhash(o, name, out);
	if ((rc == 0) != hex_of_len(s, 64) || (rc != 0 && rc != -1))
		abort();
	if (rc == -1) {
		if (!all_z(out, HASH_STR))
			abort();
		return -1;
	}
	lower_copy(s, strlen(s), out);
	return 0;
}

/* bp_blocks_jaddr: "0x"/"0X" and 40 hex digits written lower-case; "" for null when nullable. */
static int
read_addr(const cJSON *o, const char *name, char out[ADDR_STR], int nullable)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	const char *s = member_str(o, name);
	int rc;

	memset(out, 'Z', ADDR_STR);
	rc = bp_blocks_jaddr(o, name, out, nullable);
	if (nullable && (v == NULL || cJSON_IsNull(v))) {
		if (rc != 0 || out[0] != '\0')
			abort();
		return 0;
	}
	if ((rc == 0) != hex_of_len(s, 40) || (rc != 0 && rc != -1))
		abort();
	if (rc == -1) {
		if (!all_z(out, ADDR_STR))
			abort();
		return -1;
	}
	lower_copy(s, strlen(s), out);
	return 0;
}

/* bp_blocks_jdec; checks the decimal has no leading zero and reads back as the same value. */
static int
read_dec(const cJSON *o, const char *name, char *out)
{
	const char *s = member_str(o, name);
	struct bp_u256 v, back;
	int rc, want;

	memset(out, 'Z', BP_U256_DEC_MAX);
	rc = bp_blocks_jdec(o, name, out);
	want = s != NULL && bp_u256_from_hex(&v, s, strlen(s)) == 0;
	if ((rc == 0) != want || (rc != 0 && rc != -1))
		abort();
	if (rc == -1) {
		if (!all_z(out, BP_U256_DEC_MAX))
			abort();
		return -1;
	}
	if (memchr(out, '\0', BP_U256_DEC_MAX) == NULL || (out[0] == '0' && out[1] != '\0') ||
	    bp_u256_from_dec(&back, out, strlen(out)) != 0 || bp_u256_cmp(&v, &back) != 0)
		abort();
	return 0;
}

/*
 * bp_blocks_parse_log, called twice: with a new buffer of exactly the room the indexer's
 * function makes before decoding (dlen / 2 + 1, so it is not grown and an over-write shows),
 * and with no buffer at all (so it grows one); both must agree. On success the log and its
 * position are checked against the members, read here with the readers above, and the data is
 * copied into a new exact-size buffer (*buf, the caller's to free, also on failure), so an
 * over-read by the decoder shows. 0, or -1 where the indexer fails the batch.
 */
static int
read_log(const cJSON *j, struct bp_blocks_log *l, uint8_t **buf)
{
	char hash[HASH_STR], contract[ADDR_STR];
	struct bp_blocks_log l2;
	struct bp_blocks_logpos p, p2;
	const char *data;
	uint64_t num, idx;
	uint8_t *grown = NULL, addr[20], *exact;
	size_t cap = 0, cap2 = 0;
	int rc, rc2;

	*buf = NULL;
	memset(l, 0, sizeof(*l));
	memset(&l2, 0, sizeof(l2));
	memset(&p, 0, sizeof(p));
	memset(&p2, 0, sizeof(p2));
	data = member_str(j, "data");
	if (data != NULL) {
		cap = strlen(data) / 2 + 1;
		if ((*buf = malloc(cap)) == NULL)
			return -1;
	}
	rc = bp_blocks_parse_log(j, l, &p, buf, &cap);
	rc2 = bp_blocks_parse_log(j, &l2, &p2, &grown, &cap2);
	if (rc != rc2 || (rc != 0 && rc != -1))
		abort();
	if (data != NULL && cap != strlen(data) / 2 + 1)
		abort();	/* room enough: not grown */
	if (grown != NULL && cap2 < strlen(data) / 2 + 1)
		abort();
	if (rc == -1) {
		free(grown);
		return -1;
	}
	/* What the indexer's function must have checked, so these cannot fail. */
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "topics")) || data == NULL ||
	    read_quantity(j, "blockNumber", &num) != 0 || read_quantity(j, "logIndex", &idx) != 0 ||
	    idx > INT64_MAX || read_hash(j, "transactionHash", hash) != 0 ||
	    read_addr(j, "address", contract, 0) != 0)
		abort();
	if (p.block != (int64_t)num || p.log_index != (int64_t)idx ||
	    strcmp(p.tx_hash, hash) != 0 || strcmp(p.contract, contract) != 0 ||
	    bp_addr_parse(contract, strlen(contract), 0, addr) != 0 ||
	    memcmp(l->address, addr, 20) != 0)
		abort();
	if (l->ntopics > BP_BLOCKS_MAX_TOPICS ||
	    l->ntopics != (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "topics")))
		abort();
	if (l->data != *buf || l->datalen != (strlen(data) - 2) / 2 || l->datalen >= cap)
		abort();
	/* The grown buffer's answer is the same log in the same place. */
	if (l2.data != grown || memcmp(&p, &p2, sizeof(p)) != 0 || l2.ntopics != l->ntopics ||
	    memcmp(l2.address, l->address, 20) != 0 ||
	    memcmp(l2.topics, l->topics, l->ntopics * 32) != 0 || l2.datalen != l->datalen ||
	    memcmp(l2.data, l->data, l->datalen) != 0)
		abort();
	free(grown);
	if (l->datalen > 0) {
		if ((exact = malloc(l->datalen)) == NULL)
			return -1;
		memcpy(exact, *buf, l->datalen);
		free(*buf);
		*buf = exact;
	}
	l->data = *buf;
	return 0;
}

/* One log object as store_batch takes it: skipped when removed, else parsed and decoded. */
static void
json_log(const cJSON *j)
{
	struct bp_blocks_log l;
	uint8_t *buf = NULL;

	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "removed")) &&
	    read_log(j, &l, &buf) == 0)
		check_log(&l, entry_point, NULL);
	free(buf);
}

/* The block, transaction and receipt fields the indexer reads (index_fetch.c, index_store.c). */
static void
json_block_fields(const cJSON *j)
{
	char h[HASH_STR], a[ADDR_STR], dec[BP_U256_DEC_MAX];
	uint64_t v;

	(void)read_quantity(j, "number", &v);
	(void)read_hash(j, "hash", h);
	(void)read_hash(j, "parentHash", h);
	(void)read_hash(j, "blockHash", h);
	(void)read_quantity(j, "timestamp", &v);
	(void)read_quantity(j, "gasUsed", &v);
	(void)read_quantity(j, "gasLimit", &v);
	(void)read_dec(j, "baseFeePerGas", dec);
	(void)read_addr(j, "from", a, 0);
	(void)read_addr(j, "to", a, 1);
	(void)read_dec(j, "value", dec);
	(void)read_quantity(j, "transactionIndex", &v);
	(void)read_quantity(j, "nonce", &v);
	(void)read_quantity(j, "status", &v);
	(void)read_addr(j, "contractAddress", a, 1);
	(void)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "transactions"));
}

/* A string as an eth_blockNumber answer: bp_blocks_parse_head against the u256 parser. */
static void
json_head(const cJSON *j)
{
	const int64_t canary = -7;
	struct bp_u256 u;
	int64_t got = canary;
	uint64_t v;
	int rc, want;

	rc = bp_blocks_parse_head(j, &got);
	want = cJSON_IsString(j) && bp_u256_from_hex(&u, j->valuestring,
	    strlen(j->valuestring)) == 0 && bp_u256_to_u64(&u, &v) == 0 && v <= INT64_MAX;
	if ((rc == 0) != want || (rc != 0 && rc != -1) || (rc == -1 && got != canary) ||
	    (rc == 0 && (uint64_t)got != v))
		abort();
}

#define MAX_BATCH	16	/* blocks of a batch built from an input */

/*
 * An array of objects as the blocks of a fetched batch: from the first one's number on (0 when
 * it has none), each block's "receipts" and "logs" members (when arrays) as its receipts and a
 * piece of the batch's logs, checked against a stored head (nothing stored, or a zero hash, by
 * the parity of the array's length). What bp_index_fetch_check accepts must hold what its header
 * says: lower-case hashes, each block's parentHash its predecessor's, every log's block one of
 * the batch's with its hash.
 */
static void
json_batch(const cJSON *j)
{
	static const char zero_hash[] =
	    "0x0000000000000000000000000000000000000000000000000000000000000000";
	const cJSON *blocks[MAX_BATCH], *receipts[MAX_BATCH], *logs[MAX_BATCH], *e, *l;
	char err[256], h[HASH_STR];
	struct bp_index_fetch b;
	uint64_t first = 0, num;
	size_t n = 0, i;
	int rc;

	if (!cJSON_IsArray(j))
		return;
	memset(&b, 0, sizeof(b));
	cJSON_ArrayForEach(e, j) {
		if (n == MAX_BATCH || !cJSON_IsObject(e))
			return;
		blocks[n] = e;
		receipts[n] = cJSON_GetObjectItemCaseSensitive(e, "receipts");
		if (!cJSON_IsArray(receipts[n]))
			receipts[n] = NULL;
		l = cJSON_GetObjectItemCaseSensitive(e, "logs");
		if (cJSON_IsArray(l))
			logs[b.r.nlogs++] = l;
		n++;
	}
	if (n == 0)
		return;
	if (bp_blocks_jquantity(blocks[0], "number", &first) == -1 || first > INT64_MAX / 2)
		first = 0;
	b.r.from = (int64_t)first;
	b.r.to = b.r.from + (int64_t)n - 1;
	b.r.n = n;
	b.r.blocks = blocks;
	b.r.receipts = receipts;
	b.r.logs = logs;
	rc = bp_index_fetch_check(&b, b.r.from - 1, n % 2 ? "" : zero_hash, err, sizeof(err));
	if (rc != 0 && rc != 1 && rc != -1)
		abort();
	if (rc == 0) {
		for (i = 0; i < n; i++) {
			if (read_hash(blocks[i], "hash", h) != 0 || strcmp(h, b.hashes[i]) != 0 ||
			    read_hash(blocks[i], "parentHash", h) != 0 ||
			    (i > 0 && strcmp(h, b.hashes[i - 1]) != 0) ||
			    (i == 0 && n % 2 == 0 && strcmp(h, zero_hash) != 0) ||
			    read_quantity(blocks[i], "number", &num) != 0 ||
			    num != first + i)
				abort();
		}
		for (i = 0; i < b.r.nlogs; i++)
			cJSON_ArrayForEach(l, logs[i])
				if (read_quantity(l, "blockNumber", &num) != 0 || num < first ||
				    num >= first + n || read_hash(l, "blockHash", h) != 0 ||
				    strcmp(h, b.hashes[num - first]) != 0)
					abort();
	}
	free(b.hashes);
}

/* Visits the objects of j, at most *budget of them, depth levels down. */
static void
json_walk(const cJSON *j, int depth, size_t *budget)
{
	const cJSON *c;

	if (*budget == 0)
		return;
	if (cJSON_IsObject(j)) {
		(*budget)--;
		json_log(j);
		json_block_fields(j);
	}
	if (depth == 0 || !(cJSON_IsObject(j) || cJSON_IsArray(j)))
		return;
	cJSON_ArrayForEach(c, j)
		if (cJSON_IsObject(c) || cJSON_IsArray(c))
			json_walk(c, depth - 1, budget);
		else
			json_head(c);
}

/* Parses text (len bytes) with cJSON, as the JSON-RPC client does, from an exact-size copy. */
static cJSON *
json_parse(const void *text, size_t len)
{
	char *s = malloc(len > 0 ? len : 1);
	cJSON *j;

	if (s == NULL)
		return NULL;
	if (len > 0)
		memcpy(s, text, len);
	j = cJSON_ParseWithLength(s, len);
	free(s);
	return j;
}

static void
json_input(const uint8_t *in, size_t size)
{
	size_t budget = MAX_OBJECTS;
	cJSON *j;

	if ((j = json_parse(in, size)) != NULL) {
		json_walk(j, 3, &budget);
		json_batch(j);
		cJSON_Delete(j);
	}
}

/* ---- binary logs, and the same logs as a node would write them in JSON ---- */

/* How render spells a log; the bits from R_BAD_DATA on make a log the indexer refuses. */
#define R_UPPER		0x01	/* upper-case hex digits */
#define R_0X		0x02	/* "0X" prefixes */
#define R_BAD_DATA	0x04	/* data with an odd number of digits */
#define R_REMOVED	0x08	/* "removed": true (skipped, not refused) */
#define R_NO_ADDRESS	0x10	/* no address member */
#define R_BAD_TOPIC	0x20	/* a topic that is a number */
#define R_FIFTH_TOPIC	0x40	/* one topic more than a log can have, when it has four */

/* Appends "0x" and the hex of p to s (room for 2 * n + 3), spelled as r says. */
static char *
hex_str(char *s, const uint8_t *p, size_t n, unsigned r)
{
	size_t i;

	if (bp_hex_encode(p, n, s, 2 * n + 3) != 0)
		abort();
	for (i = 0; (r & R_UPPER) && s[i] != '\0'; i++)
		s[i] = (char)toupper((unsigned char)s[i]);
	s[1] = (r & R_0X) ? 'X' : 'x';
	return s;
}

/* Adds a string member spelled from p; 0 or -1 when out of memory. */
static int
add_hex(cJSON *to, const char *name, const uint8_t *p, size_t n, unsigned r)
{
	char *s = malloc(2 * n + 3);
	cJSON *v;

	if (s == NULL)
		return -1;
	hex_str(s, p, n, r);
	v = cJSON_CreateString(s);
	free(s);
	if (v == NULL)
		return -1;
	if (name == NULL ? !cJSON_AddItemToArray(to, v) : !cJSON_AddItemToObject(to, name, v)) {
		cJSON_Delete(v);
		return -1;
	}
	return 0;
}

/*
 * Writes l as an eth_getLogs element, prints it, and reads the text back as the indexer does:
 * what parse_log gives must be l itself, unless the spelling r is one the indexer refuses.
 */
static void
render(const struct bp_blocks_log *l, unsigned r)
{
	static const uint8_t txhash[32] = { 0x22, 0x22 };
	uint8_t num = 0x10, zero32[32] = { 0 };
	struct bp_blocks_log back;
	cJSON *o, *t, *j = NULL;
	uint8_t *buf = NULL;
	char *text = NULL;
	size_t i;
	int ok;

	if ((o = cJSON_CreateObject()) == NULL)
		return;
	if ((!(r & R_NO_ADDRESS) && add_hex(o, "address", l->address, 20, r) != 0) ||
	    (t = cJSON_AddArrayToObject(o, "topics")) == NULL)
		goto out;
	for (i = 0; i < l->ntopics; i++)
		if (add_hex(t, NULL, l->topics[i], 32, r) != 0)
			goto out;
	if ((r & R_FIFTH_TOPIC) && l->ntopics == BP_BLOCKS_MAX_TOPICS &&
	    add_hex(t, NULL, zero32, 32, r) != 0)
		goto out;
	if ((r & R_BAD_TOPIC) && !cJSON_AddItemToArray(t, cJSON_CreateNumber(1)))
		goto out;
	if (add_hex(o, "data", l->data, l->datalen, r) != 0 ||
	    add_hex(o, "blockNumber", &num, 1, r & R_UPPER) != 0 ||
	    add_hex(o, "logIndex", &num, 1, r & R_UPPER) != 0 ||
	    add_hex(o, "transactionHash", txhash, 32, r) != 0 ||
	    cJSON_AddBoolToObject(o, "removed", (r & R_REMOVED) != 0) == NULL)
		goto out;
	if ((r & R_BAD_DATA) && l->datalen > 0) {
		cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "data");

		d->valuestring[strlen(d->valuestring) - 1] = '\0';
	} else if (r & R_BAD_DATA)
		r &= ~(unsigned)R_BAD_DATA;	/* "0x" has no digit to take away */
	if (!(r & R_FIFTH_TOPIC) || l->ntopics != BP_BLOCKS_MAX_TOPICS)
		r &= ~(unsigned)R_FIFTH_TOPIC;
	if ((text = cJSON_PrintUnformatted(o)) == NULL || (j = json_parse(text, strlen(text))) == NULL)
		goto out;

	json_log(j);
	ok = read_log(j, &back, &buf) == 0;
	if (ok != !(r & (R_BAD_DATA | R_NO_ADDRESS | R_BAD_TOPIC | R_FIFTH_TOPIC)))
		abort();
	if (ok && (memcmp(back.address, l->address, 20) != 0 || back.ntopics != l->ntopics ||
	    memcmp(back.topics, l->topics, l->ntopics * 32) != 0 || back.datalen != l->datalen ||
	    (l->datalen > 0 && memcmp(back.data, l->data, l->datalen) != 0)))
		abort();
out:
	free(buf);
	cJSON_free(text);
	cJSON_Delete(j);
	cJSON_Delete(o);
}

/*
 * The binary layout, every part zero-padded when the input runs out:
 *
 *   byte 0   bits 0-2: topic 0 (0-4 the events of enum topic, 5-7 taken from the input)
 *            bits 3-5: ntopics (0-7: above BP_BLOCKS_MAX_TOPICS must be ignored)
 *            bit 6: the log comes from the entry point; bit 7: decode without an entry point
 *   byte 1   bit 0: topics 1-3 have address form (12 zero bytes)
 *            bit 1: the data is a batch the harness encodes; bit 2: with equal lengths
 *            bit 3: data words 0 and 1 have address form; bit 4: word 1 is a bool
 *            bit 5: data is NULL (with the rest's length, which must not be read)
 *            bit 6: the data is (byte 3 % 8) words, not the rest of the input
 *   byte 2   how render spells the log in JSON (R_*); 0xff: not rendered
 *   byte 3   the data's length in words, with byte 1's bit 6
 *   then     the 20-byte emitter (unless from the entry point), topic 0 when taken from the
 *            input, topics 1.., and the data: the rest of the input, or the batch's items.
 */
static void
binary_log(const uint8_t *in, size_t size)
{
	uint8_t ids[MAX_ITEMS][32], values[MAX_ITEMS][32], hdr[4];
	const uint8_t *p = in;
	struct bp_blocks_log l;
	struct built b, *bp = NULL;
	uint8_t *data = NULL, mode, flags;
	size_t left = size, i, t0, nt, stored;

	take(&p, &left, hdr, sizeof(hdr));
	mode = hdr[0];
	flags = hdr[1];
	memset(&l, 0, sizeof(l));
	t0 = mode & 7;
	nt = (mode >> 3) & 7;
	l.ntopics = nt;
	if (mode & 0x40)
		memcpy(l.address, entry_point, 20);
	else
		take(&p, &left, l.address, 20);
	stored = nt < BP_BLOCKS_MAX_TOPICS ? nt : BP_BLOCKS_MAX_TOPICS;
	for (i = 0; i < stored; i++) {
		if (i == 0 && t0 < TOPIC__MAX)
			memcpy(l.topics[0], topics[t0], 32);
		else
			take(&p, &left, l.topics[i], 32);
		if (i > 0 && (flags & 1))
			memset(l.topics[i], 0, 12);
	}
	if (flags & 2) {
		if (build_batch(&p, &left, flags & 4, &b, ids, values, &data, &l.datalen) != 0)
			return;
		bp = &b;
	} else {
		l.datalen = (flags & 64) ? (size_t)(hdr[3] % 8) * 32 : left;
		if ((data = malloc(l.datalen > 0 ? l.datalen : 1)) == NULL)
			return;
		take(&p, &left, data, l.datalen);
		if ((flags & 8) && l.datalen >= 64) {
			memset(data, 0, 12);
			memset(data + 32, 0, 12);
		}
		if ((flags & 16) && l.datalen >= 64) {
			memset(data + 32, 0, 31);
			data[63] &= 1;
		}
	}
	l.data = (flags & 32) && bp == NULL ? NULL : data;
	check_log(&l, (mode & 0x80) ? NULL : entry_point, bp);
	if (hdr[2] != 0xff && nt <= BP_BLOCKS_MAX_TOPICS && l.data != NULL)
		render(&l, hdr[2]);
	free(data);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	if (size > 0 && (data[0] == '{' || data[0] == '['))
		json_input(data, size);
	else
		binary_log(data, size);
	return 0;
}
