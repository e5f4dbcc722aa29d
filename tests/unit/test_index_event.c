/*
 * lib/index/index_event.c: decoding event logs into transfers and ERC-4337 records. Each table row is one
 * log, well formed or hostile (short or long data, wrong topic counts, address topics with dirty
 * high bytes, batch arrays that disagree or point outside the data); the batch data are ethers
 * v6 encodings (AbiCoder.defaultAbiCoder().encode).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "evm/abi.h"
#include "evm/u256.h"
#include "index/index_event.h"
#include "unit.h"

#define T_TRANSFER	"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
#define T_SINGLE	"0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62"
#define T_BATCH		"0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb"
#define T_USEROP	"0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f"
#define T_DEPLOYED	"0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d"
#define T_APPROVAL	"0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"

#define A_ZERO	"0x0000000000000000000000000000000000000000000000000000000000000000"
#define A_ONE	"0x00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
#define A_TWO	"0x0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"
#define A_OP	"0x000000000000000000000000f39fd6e51aad88f6f4ce6ab8827279cfffb92266"
#define A_DIRTY	"0x01000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
#define H_OP	"0x1111111111111111111111111111111111111111111111111111111111111111"
#define W_7	"0x0000000000000000000000000000000000000000000000000000000000000007"

#define TOKEN	"0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9"
#define EP	"0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789"
#define EP07	"0x0000000071727de22e5e9d8baf0edac6f37da032"
#define EP08	"0x4337084d9e255ff0702461cf8895ce9e3b5ff108"

/* 1000 * 10^18 as one word. */
#define D_1000E18 "0x00000000000000000000000000000000000000000000003635c9adc5dea00000"

/* encode(['uint256[]','uint256[]'], [[2,3],[5,1]]) */
#define D_BATCH "0x" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "00000000000000000000000000000000000000000000000000000000000000a0" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "0000000000000000000000000000000000000000000000000000000000000003" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "0000000000000000000000000000000000000000000000000000000000000005" \
    "0000000000000000000000000000000000000000000000000000000000000001"
/* encode(['uint256[]','uint256[]'], [[],[]]) */
#define D_BATCH_EMPTY "0x" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "0000000000000000000000000000000000000000000000000000000000000060" \
    "0000000000000000000000000000000000000000000000000000000000000000" \
    "0000000000000000000000000000000000000000000000000000000000000000"
/* ids [2,3] but values [5]: lengths disagree. */
#define D_BATCH_UNEVEN "0x" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "00000000000000000000000000000000000000000000000000000000000000a0" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "0000000000000000000000000000000000000000000000000000000000000003" \
    "0000000000000000000000000000000000000000000000000000000000000001" \
    "0000000000000000000000000000000000000000000000000000000000000005"
/* The values' offset points past the end of the data. */
#define D_BATCH_FAR "0x" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "0000000000000000000000000000000000000000000000000000000000001000" \
    "0000000000000000000000000000000000000000000000000000000000000001" \
    "0000000000000000000000000000000000000000000000000000000000000002"
/* A count near 2^64 with a tiny body: must not be believed. */
#define D_BATCH_HUGE "0x" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "0000000000000000000000000000000000000000000000000000000000000040" \
    "000000000000000000000000000000000000000000000000ffffffffffffffff" \
    "0000000000000000000000000000000000000000000000000000000000000002"
/* TransferSingle data: id 7, value 1000e18. */
#define D_SINGLE W_7 "00000000000000000000000000000000000000000000003635c9adc5dea00000"
/* encode(['uint256','bool','uint256','uint256'], [7, true, 123456789, 98765]) */
#define D_USEROP "0x" \
    "0000000000000000000000000000000000000000000000000000000000000007" \
    "0000000000000000000000000000000000000000000000000000000000000001" \
    "00000000000000000000000000000000000000000000000000000000075bcd15" \
    "00000000000000000000000000000000000000000000000000000000000181cd"
/* The same with success = 2: not a bool. */
#define D_USEROP_BADBOOL "0x" \
    "0000000000000000000000000000000000000000000000000000000000000007" \
    "0000000000000000000000000000000000000000000000000000000000000002" \
    "00000000000000000000000000000000000000000000000000000000075bcd15" \
    "00000000000000000000000000000000000000000000000000000000000181cd"
/* AccountDeployed data: factory, paymaster (zero). */
#define D_DEPLOYED "0x" \
    "0000000000000000000000009406cc6185a346906296840746125a0e44976454" \
    "0000000000000000000000000000000000000000000000000000000000000000"

struct row {
	const char		*what;
	const char		*address;
	const char		*topics[6];	/* NULL-terminated */
	const char		*data;		/* hex; NULL for none */
	enum bp_index_event_kind	 want;
};

static const struct row rows[] = {
	{ "erc20 transfer", TOKEN, { T_TRANSFER, A_ONE, A_TWO, NULL }, D_1000E18,
	    BP_INDEX_EVENT_ERC20 },
	{ "erc20 mint", TOKEN, { T_TRANSFER, A_ZERO, A_TWO, NULL }, D_1000E18, BP_INDEX_EVENT_ERC20 },
	{ "erc20 burn", TOKEN, { T_TRANSFER, A_ONE, A_ZERO, NULL }, D_1000E18, BP_INDEX_EVENT_ERC20 },
	{ "erc20 short data", TOKEN, { T_TRANSFER, A_ONE, A_TWO, NULL },
	    "0x00000000000000000000000000000000000000000000003635c9adc5dea000", BP_INDEX_EVENT_MALFORMED },
	{ "erc20 no data", TOKEN, { T_TRANSFER, A_ONE, A_TWO, NULL }, "0x", BP_INDEX_EVENT_MALFORMED },
	{ "erc20 long data", TOKEN, { T_TRANSFER, A_ONE, A_TWO, NULL }, D_1000E18 "00",
	    BP_INDEX_EVENT_MALFORMED },
	{ "erc20 two words", TOKEN, { T_TRANSFER, A_ONE, A_TWO, NULL },
	    D_1000E18 "0000000000000000000000000000000000000000000000000000000000000000",
	    BP_INDEX_EVENT_MALFORMED },
	{ "erc20 dirty from", TOKEN, { T_TRANSFER, A_DIRTY, A_TWO, NULL }, D_1000E18,
	    BP_INDEX_EVENT_MALFORMED },
	{ "erc20 dirty to", TOKEN, { T_TRANSFER, A_ONE, A_DIRTY, NULL }, D_1000E18,
	    BP_INDEX_EVENT_MALFORMED },
	{ "transfer 1 topic", TOKEN, { T_TRANSFER, NULL }, D_1000E18, BP_INDEX_EVENT_MALFORMED },
	{ "transfer 2 topics", TOKEN, { T_TRANSFER, A_ONE, NULL }, D_1000E18,
	    BP_INDEX_EVENT_MALFORMED },
	{ "transfer 5 topics", TOKEN, { T_TRANSFER, A_ONE, A_TWO, W_7, W_7, NULL }, "0x",
	    BP_INDEX_EVENT_OTHER },
	{ "erc721 transfer", TOKEN, { T_TRANSFER, A_ONE, A_TWO, W_7, NULL }, NULL,
	    BP_INDEX_EVENT_ERC721 },
	{ "erc721 mint", TOKEN, { T_TRANSFER, A_ZERO, A_TWO, W_7, NULL }, "0x", BP_INDEX_EVENT_ERC721 },
	{ "erc721 burn", TOKEN, { T_TRANSFER, A_ONE, A_ZERO, W_7, NULL }, "0x", BP_INDEX_EVENT_ERC721 },
	{ "erc721 with data", TOKEN, { T_TRANSFER, A_ONE, A_TWO, W_7, NULL }, D_1000E18,
	    BP_INDEX_EVENT_MALFORMED },
	{ "erc721 dirty to", TOKEN, { T_TRANSFER, A_ONE, A_DIRTY, W_7, NULL }, "0x",
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 single", TOKEN, { T_SINGLE, A_OP, A_ONE, A_TWO, NULL }, D_SINGLE,
	    BP_INDEX_EVENT_ERC1155_SINGLE },
	{ "1155 single mint", TOKEN, { T_SINGLE, A_OP, A_ZERO, A_TWO, NULL }, D_SINGLE,
	    BP_INDEX_EVENT_ERC1155_SINGLE },
	{ "1155 single short", TOKEN, { T_SINGLE, A_OP, A_ONE, A_TWO, NULL }, W_7,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 single 3 topics", TOKEN, { T_SINGLE, A_OP, A_ONE, NULL }, D_SINGLE,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 single dirty op", TOKEN, { T_SINGLE, A_DIRTY, A_ONE, A_TWO, NULL }, D_SINGLE,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch", TOKEN, { T_BATCH, A_OP, A_ZERO, A_TWO, NULL }, D_BATCH,
	    BP_INDEX_EVENT_ERC1155_BATCH },
	{ "1155 batch empty", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH_EMPTY,
	    BP_INDEX_EVENT_ERC1155_BATCH },
	{ "1155 batch uneven", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH_UNEVEN,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch far offset", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH_FAR,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch huge count", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH_HUGE,
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch no data", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, "0x",
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch truncated", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL },
	    "0x0000000000000000000000000000000000000000000000000000000000000040"
	    "00000000000000000000000000000000000000000000000000000000000000a0"
	    "0000000000000000000000000000000000000000000000000000000000000002",
	    BP_INDEX_EVENT_MALFORMED },
	{ "1155 batch 5 topics", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, W_7, NULL }, D_BATCH,
	    BP_INDEX_EVENT_OTHER },
	{ "user op", EP, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_USEROP, BP_INDEX_EVENT_USER_OP },
	{ "user op elsewhere", TOKEN, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_USEROP,
	    BP_INDEX_EVENT_OTHER },
	{ "user op bad bool", EP, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_USEROP_BADBOOL,
	    BP_INDEX_EVENT_MALFORMED },
	{ "user op short", EP, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_SINGLE,
	    BP_INDEX_EVENT_MALFORMED },
	{ "user op 3 topics", EP, { T_USEROP, H_OP, A_ONE, NULL }, D_USEROP, BP_INDEX_EVENT_MALFORMED },
	{ "account deployed", EP, { T_DEPLOYED, H_OP, A_ONE, NULL }, D_DEPLOYED,
	    BP_INDEX_EVENT_ACCOUNT_DEPLOYED },
	{ "account deployed dirty", EP, { T_DEPLOYED, H_OP, A_ONE, NULL },
	    "0x0100000000000000000000009406cc6185a346906296840746125a0e44976454"
	    "0000000000000000000000000000000000000000000000000000000000000000", BP_INDEX_EVENT_MALFORMED },
	{ "account deployed elsewhere", TOKEN, { T_DEPLOYED, H_OP, A_ONE, NULL }, D_DEPLOYED,
	    BP_INDEX_EVENT_OTHER },
	{ "approval", TOKEN, { T_APPROVAL, A_ONE, A_TWO, NULL }, D_1000E18, BP_INDEX_EVENT_OTHER },
	{ "no topics", TOKEN, { NULL }, D_1000E18, BP_INDEX_EVENT_OTHER },
};

/* Builds a log from a row; data is decoded into buf. */
static void
build(const struct row *r, struct bp_blocks_log *l, uint8_t *buf, size_t cap)
{
	size_t i;

	memset(l, 0, sizeof(*l));
	CU_ASSERT_FATAL(bp_hex_decode(r->address, strlen(r->address), l->address, 20, &i) == 0);
	for (i = 0; r->topics[i] != NULL && i < BP_BLOCKS_MAX_TOPICS; i++)
		CU_ASSERT_FATAL(bp_hex_decode_fixed(r->topics[i], strlen(r->topics[i]),
		    l->topics[i], 32) == 0);
	l->ntopics = i;
	if (r->topics[i] != NULL)
		l->ntopics = i + 1;	/* more than 4: the decoder must refuse to look */
	if (r->data != NULL)
		CU_ASSERT_FATAL(bp_hex_decode(r->data, strlen(r->data), buf, cap, &l->datalen) == 0);
	l->data = r->data != NULL ? buf : NULL;
}

static const uint8_t (*
entry_point(void))[20]
{
	static uint8_t ep[1][20];
	size_t n;

	bp_hex_decode(EP, strlen(EP), ep[0], sizeof(ep[0]), &n);
	return ep;
}

static void
test_table(void)
{
	uint8_t buf[1024];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct bp_index_event ev;
		struct bp_blocks_log l;
		enum bp_index_event_kind k;

		build(&rows[i], &l, buf, sizeof(buf));
		k = bp_index_event_decode(&l, entry_point(), 1, &ev);
		if (k != rows[i].want)
			fprintf(stderr, "\n  row '%s': kind %d, want %d\n", rows[i].what, k,
			    rows[i].want);
		CU_ASSERT_EQUAL(k, rows[i].want);
		CU_ASSERT_EQUAL(ev.kind, k);
	}
}

static void
dec(const struct bp_u256 *v, char *out)
{
	CU_ASSERT_FATAL(bp_u256_to_dec(v, out, BP_U256_DEC_MAX) == 0);
}

static void
hex20(const uint8_t a[20], char *out)
{
	CU_ASSERT_FATAL(bp_hex_encode(a, 20, out, 43) == 0);
}

static void
test_topics(void)
{
	static const char *const sigs[][2] = {
		{ "Transfer(address,address,uint256)", T_TRANSFER },
		{ "TransferSingle(address,address,address,uint256,uint256)", T_SINGLE },
		{ "TransferBatch(address,address,address,uint256[],uint256[])", T_BATCH },
		{ "UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)",
		    T_USEROP },
		{ "AccountDeployed(bytes32,address,address,address)", T_DEPLOYED },
	};
	uint8_t t[32], table[32];
	const char *sig;
	char h[67];
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		bp_abi_event_topic(sigs[i][0], t);
		bp_hex_encode(t, 32, h, sizeof(h));
		CU_ASSERT_STRING_EQUAL(h, sigs[i][1]);
		/* The decoder's written-out table: the same signature, the same hash. */
		sig = bp_index_event_signature(i, table);
		CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
		CU_ASSERT_STRING_EQUAL(sig, sigs[i][0]);
		CU_ASSERT_EQUAL(memcmp(table, t, 32), 0);
	}
	CU_ASSERT_PTR_NULL(bp_index_event_signature(i, table));
}

static void
test_erc20_fields(void)
{
	const struct row r = { "", TOKEN, { T_TRANSFER, A_ONE, A_ZERO, NULL }, D_1000E18, 0 };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	uint8_t buf[64];
	char s[BP_U256_DEC_MAX];

	build(&r, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_ERC20);
	hex20(ev.from, s);
	CU_ASSERT_STRING_EQUAL(s, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
	hex20(ev.to, s);
	CU_ASSERT_STRING_EQUAL(s, "0x0000000000000000000000000000000000000000");
	dec(&ev.value, s);
	CU_ASSERT_STRING_EQUAL(s, "1000000000000000000000");
}

static void
test_erc721_fields(void)
{
	const struct row r = { "", TOKEN, { T_TRANSFER, A_ZERO, A_TWO, W_7, NULL }, NULL, 0 };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	uint8_t buf[8];
	char s[BP_U256_DEC_MAX];

	build(&r, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_ERC721);
	hex20(ev.to, s);
	CU_ASSERT_STRING_EQUAL(s, "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc");
	dec(&ev.id, s);
	CU_ASSERT_STRING_EQUAL(s, "7");
	dec(&ev.value, s);
	CU_ASSERT_STRING_EQUAL(s, "1");
}

static void
test_1155_fields(void)
{
	const struct row single = { "", TOKEN, { T_SINGLE, A_OP, A_ONE, A_TWO, NULL }, D_SINGLE,
	    0 };
	const struct row batch = { "", TOKEN, { T_BATCH, A_OP, A_ZERO, A_TWO, NULL }, D_BATCH, 0 };
	static const char *const want[2][2] = { { "2", "5" }, { "3", "1" } };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	struct bp_u256 id, v;
	uint8_t buf[512];
	char s[BP_U256_DEC_MAX];
	size_t i;

	build(&single, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_ERC1155_SINGLE);
	hex20(ev.operator_, s);
	CU_ASSERT_STRING_EQUAL(s, "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
	hex20(ev.from, s);
	CU_ASSERT_STRING_EQUAL(s, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
	dec(&ev.id, s);
	CU_ASSERT_STRING_EQUAL(s, "7");
	dec(&ev.value, s);
	CU_ASSERT_STRING_EQUAL(s, "1000000000000000000000");

	build(&batch, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_ERC1155_BATCH);
	CU_ASSERT_EQUAL_FATAL(ev.count, 2);
	for (i = 0; i < ev.count; i++) {
		bp_index_event_batch_item(&ev, i, &id, &v);
		dec(&id, s);
		CU_ASSERT_STRING_EQUAL(s, want[i][0]);
		dec(&v, s);
		CU_ASSERT_STRING_EQUAL(s, want[i][1]);
	}
}

static void
test_4337_fields(void)
{
	const struct row op = { "", EP, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_USEROP, 0 };
	const struct row dep = { "", EP, { T_DEPLOYED, H_OP, A_ONE, NULL }, D_DEPLOYED, 0 };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	uint8_t buf[256];
	char s[BP_U256_DEC_MAX];

	build(&op, &l, buf, sizeof(buf));
	/* Without an entry point configured the events are nobody's. */
	CU_ASSERT_EQUAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_OTHER);
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, entry_point(), 1, &ev), BP_INDEX_EVENT_USER_OP);
	CU_ASSERT_FATAL(bp_hex_encode(ev.user_op_hash, 32, s, sizeof(s)) == 0);
	CU_ASSERT_STRING_EQUAL(s, H_OP);
	hex20(ev.sender, s);
	CU_ASSERT_STRING_EQUAL(s, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
	dec(&ev.nonce, s);
	CU_ASSERT_STRING_EQUAL(s, "7");
	CU_ASSERT_EQUAL(ev.success, 1);
	dec(&ev.gas_cost, s);
	CU_ASSERT_STRING_EQUAL(s, "123456789");
	dec(&ev.gas_used, s);
	CU_ASSERT_STRING_EQUAL(s, "98765");

	build(&dep, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, entry_point(), 1, &ev),
	    BP_INDEX_EVENT_ACCOUNT_DEPLOYED);
	hex20(ev.factory, s);
	CU_ASSERT_STRING_EQUAL(s, "0x9406cc6185a346906296840746125a0e44976454");
	hex20(ev.paymaster, s);
	CU_ASSERT_STRING_EQUAL(s, "0x0000000000000000000000000000000000000000");
}

/*
 * Every configured EntryPoint's events are kept (v0.6, v0.7, v0.8: the same events), each with
 * the address that emitted it; an EntryPoint not configured is nobody's.
 */
static void
test_4337_versions(void)
{
	static const char *const eps[3] = { EP, EP07, EP08 };
	const struct row op = { "", EP08, { T_USEROP, H_OP, A_ONE, A_ZERO, NULL }, D_USEROP, 0 };
	const struct row dep = { "", EP07, { T_DEPLOYED, H_OP, A_ONE, NULL }, D_DEPLOYED, 0 };
	uint8_t set[3][20], buf[256];
	struct bp_index_event ev;
	struct bp_blocks_log l;
	char s[BP_U256_DEC_MAX];
	size_t i, n;

	for (i = 0; i < 3; i++)
		CU_ASSERT_FATAL(bp_hex_decode(eps[i], strlen(eps[i]), set[i], 20, &n) == 0);
	build(&op, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL(bp_index_event_decode(&l, set, 2, &ev), BP_INDEX_EVENT_OTHER);
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, set, 3, &ev), BP_INDEX_EVENT_USER_OP);
	hex20(ev.entry_point, s);
	CU_ASSERT_STRING_EQUAL(s, EP08);
	dec(&ev.nonce, s);
	CU_ASSERT_STRING_EQUAL(s, "7");
	build(&dep, &l, buf, sizeof(buf));
	CU_ASSERT_EQUAL_FATAL(bp_index_event_decode(&l, set, 3, &ev),
	    BP_INDEX_EVENT_ACCOUNT_DEPLOYED);
	hex20(ev.entry_point, s);
	CU_ASSERT_STRING_EQUAL(s, EP07);
	hex20(ev.sender, s);
	CU_ASSERT_STRING_EQUAL(s, "0x70997970c51812dc3a010c7d01b50e0d17dc79c8");
}

/* A malformed log leaves nothing half-decoded behind. */
static void
test_malformed_clears(void)
{
	const struct row r = { "", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH_UNEVEN,
	    0 };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	uint8_t buf[512];
	size_t i;

	build(&r, &l, buf, sizeof(buf));
	memset(&ev, 0xaa, sizeof(ev));
	CU_ASSERT_EQUAL(bp_index_event_decode(&l, NULL, 0, &ev), BP_INDEX_EVENT_MALFORMED);
	CU_ASSERT_EQUAL(ev.count, 0);
	CU_ASSERT_PTR_NULL(ev.ids);
	for (i = 0; i < 20; i++)
		CU_ASSERT_EQUAL(ev.from[i], 0);
}

/* Every truncation of a valid batch is refused or decodes within the data; never a crash. */
static void
test_batch_truncations(void)
{
	const struct row r = { "", TOKEN, { T_BATCH, A_OP, A_ONE, A_TWO, NULL }, D_BATCH, 0 };
	struct bp_index_event ev;
	struct bp_blocks_log l;
	struct bp_u256 id, v;
	uint8_t buf[512], *copy;
	size_t full, n, i;

	build(&r, &l, buf, sizeof(buf));
	full = l.datalen;
	for (n = 0; n < full; n++) {
		/* A heap copy of exactly n bytes, so ASan sees any read past the end. */
		copy = malloc(n ? n : 1);
		CU_ASSERT_FATAL(copy != NULL);
		memcpy(copy, buf, n);
		l.data = copy;
		l.datalen = n;
		if (bp_index_event_decode(&l, NULL, 0, &ev) == BP_INDEX_EVENT_ERC1155_BATCH)
			for (i = 0; i < ev.count; i++)
				bp_index_event_batch_item(&ev, i, &id, &v);
		else
			CU_ASSERT_EQUAL(ev.kind, BP_INDEX_EVENT_MALFORMED);
		free(copy);
	}
}

BP_UNIT_SUITE(index_event, NULL, NULL,
	{ "event topics", test_topics },
	{ "table of logs", test_table },
	{ "erc20 fields", test_erc20_fields },
	{ "erc721 fields", test_erc721_fields },
	{ "erc1155 single and batch fields", test_1155_fields },
	{ "erc4337 fields", test_4337_fields },
	{ "erc4337 events of every EntryPoint version", test_4337_versions },
	{ "malformed clears the event", test_malformed_clears },
	{ "batch truncations", test_batch_truncations })
