/*
 * lib/index/index_read.c, the chain index's readers: the bp_index_* readers against a fresh database migrated to the
 * current schema, with rows as the indexer writes them (schema/002_indexer.sql).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/db.h"
#include "index/index_read.h"
#include "unit.h"
#include "unit_db.h"

#define CH	"ethereum.devnet"
#define NFT	"0x5fc8d32690cc91d4c39d9d3abcbd16989f875707"
#define MULTI	"0x0165878a594ca255338adfa4d48449f69242eb8f"
#define TOK	"0xcf7ed3acca5a467e9e704c703e8d87f634fb0fc9"
#define U1	"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
#define U2	"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"
#define TXH	"0x0167d5afc355aec105e456c95d451883937736ee9f2590b8805cc5b458f0aa01"

#define ZERO	"0x0000000000000000000000000000000000000000"

/* An ERC-20 transfer of TOK in block 50, as the indexer writes it. */
#define XFER(tx, li, from, to) "INSERT INTO index_transfers (chain, block_number, tx_hash,"\
	" log_index, standard, contract, from_addr, to_addr, value) VALUES ('" CH "', 50, '" tx\
	"', " li ", 'erc20', '" TOK "', '" from "', '" to "', '1');"

static struct bp_unit_db u;
#define db	(u.db)

static int
setup(void)
{
	if (bp_unit_db_open(&u, "index") == -1)
		return 1;
	return bp_db_exec(db,
	    "INSERT INTO index_cursors (chain, head, head_hash, chain_head, confirmed, checked_at,"
	    " reorgs) VALUES ('" CH "', 120, '0xabc', 125, 113, 1700000000, 2);"
	    "INSERT INTO index_nft_owners VALUES ('" CH "', '" NFT "', '0', '" U1 "', 'erc721',"
	    " '1', 10);"
	    "INSERT INTO index_nft_owners VALUES ('" CH "', '" NFT "', '1', '" U2 "', 'erc721',"
	    " '1', 11);"
	    "INSERT INTO index_nft_owners VALUES ('" CH "', '" MULTI "', '7', '" U1 "', 'erc1155',"
	    " '123456789012345678901234567890', 12);"
	    "INSERT INTO index_nft_owners VALUES ('" CH "', '" MULTI "', '7', '" U2 "', 'erc1155',"
	    " '5', 12);"
	    "INSERT INTO index_erc20_holdings VALUES ('" CH "', '" U1 "', '" TOK "', 3);"
	    "INSERT INTO index_erc20_holdings VALUES ('ethereum.mainnet', '" U1 "', '" NFT "', 3);"
	    "INSERT INTO index_account_deployments (chain, sender, factory, paymaster,"
	    " user_op_hash, tx_hash, block_number, log_index) VALUES ('" CH "', '" U2 "',"
	    " '0x9406cc6185a346906296840746125a0e44976454', '0x0000000000000000000000000000000000000000',"
	    " '0x11', '" TXH "', 40, 2);"
	    "INSERT INTO index_transactions VALUES ('" CH "', '" TXH "', 40, 3, '" U1 "', NULL,"
	    " '0', 7, 1, 21000, '" MULTI "');") == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static void
test_head(void)
{
	struct bp_index_head h;

	CU_ASSERT_EQUAL_FATAL(bp_index_get_head(db, CH, &h), 1);
	CU_ASSERT_EQUAL(h.head, 120);
	CU_ASSERT_EQUAL(h.confirmed, 113);
	CU_ASSERT_EQUAL(h.chain_head, 125);
	CU_ASSERT_EQUAL(h.reorgs, 2);
	CU_ASSERT_STRING_EQUAL(h.head_hash, "0xabc");
	CU_ASSERT_EQUAL(bp_index_get_head(db, "nope.net", &h), 0);
	CU_ASSERT_EQUAL(h.head, -1);
	CU_ASSERT_EQUAL(h.confirmed, -1);
}

static void
test_owner(void)
{
	char owner[43], q[80];

	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "1", owner, sizeof(owner)), 1);
	CU_ASSERT_STRING_EQUAL(owner, U2);
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "2", owner, sizeof(owner)), 0);
	/* An ERC-1155 id has holders, not an owner. */
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, MULTI, "7", owner, sizeof(owner)), 0);
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, "ethereum.mainnet", NFT, "1", owner,
	    sizeof(owner)), 0);
	/* Too small a buffer is an error, not a truncated address. */
	CU_ASSERT_EQUAL(bp_index_nft_owner(db, CH, NFT, "1", owner, 10), -1);
	CU_ASSERT_EQUAL(bp_index_nft_balance(db, CH, MULTI, "7", U1, q, sizeof(q)), 0);
	CU_ASSERT_STRING_EQUAL(q, "123456789012345678901234567890");
	CU_ASSERT_EQUAL(bp_index_nft_balance(db, CH, MULTI, "7", TOK, q, sizeof(q)), 0);
	CU_ASSERT_STRING_EQUAL(q, "0");
}

struct seen {
	int	n;
	char	last[80];
};

static int
count_nft(const struct bp_index_nft *n, void *arg)
{
	struct seen *s = arg;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s/%s/%s/%s", n->contract, n->token_id, n->standard,
	    n->quantity);
	return 0;
}

static int
stop_first(const struct bp_index_nft *n, void *arg)
{
	(void)n;
	(void)arg;
	return 1;
}

static int
count_erc20(const char *contract, int64_t first, void *arg)
{
	struct seen *s = arg;

	s->n++;
	snprintf(s->last, sizeof(s->last), "%s@%lld", contract, (long long)first);
	return 0;
}

static void
test_each(void)
{
	struct seen s = { 0, "" };

	CU_ASSERT_EQUAL(bp_index_each_nft(db, CH, U1, count_nft, &s), 2);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_STRING_EQUAL(s.last, NFT "/0/erc721/1");	/* ordered by contract */
	CU_ASSERT_EQUAL(bp_index_each_nft(db, CH, U1, stop_first, NULL), 1);
	CU_ASSERT_EQUAL(bp_index_each_nft(db, CH, TOK, count_nft, &s), 0);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_each_erc20(db, CH, U1, count_erc20, &s), 1);
	CU_ASSERT_STRING_EQUAL(s.last, TOK "@3");
	CU_ASSERT_EQUAL(bp_index_each_erc20(db, CH, U2, count_erc20, &s), 0);
}

static void
test_deployment_and_tx(void)
{
	struct bp_index_deployment d;
	struct bp_index_tx t;

	CU_ASSERT_EQUAL_FATAL(bp_index_account_deployed(db, CH, U2, &d), 1);
	CU_ASSERT_STRING_EQUAL(d.factory, "0x9406cc6185a346906296840746125a0e44976454");
	CU_ASSERT_STRING_EQUAL(d.tx_hash, TXH);
	CU_ASSERT_EQUAL(d.block_number, 40);
	CU_ASSERT_EQUAL(bp_index_account_deployed(db, CH, U1, &d), 0);
	CU_ASSERT_EQUAL_FATAL(bp_index_get_tx(db, CH, TXH, &t), 1);
	CU_ASSERT_EQUAL(t.block_number, 40);
	CU_ASSERT_EQUAL(t.tx_index, 3);
	CU_ASSERT_STRING_EQUAL(t.from, U1);
	CU_ASSERT_STRING_EQUAL(t.to, "");
	CU_ASSERT_EQUAL(t.status, 1);
	CU_ASSERT_STRING_EQUAL(t.contract_created, MULTI);
	CU_ASSERT_EQUAL(bp_index_get_tx(db, "ethereum.mainnet", TXH, &t), 0);
}

/* The airdrop figures (bp_index_receivers) over transfers of TOK as the indexer writes them. */
static void
test_receivers(void)
{
	int64_t r, p, t;

	/*
	 * Tx a1 mints to U1, U2 and MULTI; U2 moves its token on (b1), U1 burns (c1) and has sent
	 * TOK a transaction: only MULTI stayed passive.
	 */
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(db, XFER("0xa1", "0", ZERO, U1) XFER("0xa1", "1", ZERO, U2)
	    XFER("0xa1", "2", ZERO, MULTI) XFER("0xb1", "0", U2, U1) XFER("0xc1", "0", U1, ZERO)
	    "INSERT INTO index_transactions VALUES ('" CH "', '0xd1', 51, 0, '" U1 "', '" TOK "',"
	    " '0', 8, 1, 21000, NULL);"), 0);
	CU_ASSERT_EQUAL(bp_index_receivers(db, CH, TOK, 1000, &r, &p, &t), 0);
	CU_ASSERT_EQUAL(r, 3);		/* the zero address is no receiver */
	CU_ASSERT_EQUAL(p, 1);
	CU_ASSERT_EQUAL(t, 2);		/* a1 and b1; c1 delivered to no receiver */
	CU_ASSERT_EQUAL(bp_index_receivers(db, CH, TOK, 2, &r, &p, &t), 0);
	CU_ASSERT_EQUAL(r, 2);		/* the sample */
	CU_ASSERT_EQUAL(bp_index_receivers(db, "ethereum.mainnet", TOK, 1000, &r, &p, &t), 0);
	CU_ASSERT_EQUAL(r + p + t, 0);
}

/* Marks each contract bp_index_each_erc20_chosen gives in got: slot = its last digit - 1. */
static int
add_chosen(const char *contract, void *arg)
{
	char *out = arg;

	out[contract[41] - '1'] = contract[41];
	return 0;
}

#define U3	"0x90f79bf6eb2c4f870365e785982e1f101e93b906"
#define R1	"0x1111111111111111111111111111111111111111"
#define T1	"0x2222222222222222222222222222222222222222"
#define T2	"0x3333333333333333333333333333333333333333"
#define T3	"0x4444444444444444444444444444444444444444"
#define TX(h, blk, from, to) "INSERT INTO index_transactions VALUES ('" CH "', '" h "', " blk \
	", 0, '" from "', '" to "', '0', 1, 1, 21000, NULL);"
#define XFERC(tx, li, contract, from, to) "INSERT INTO index_transfers (chain, block_number,"\
	" tx_hash, log_index, standard, contract, from_addr, to_addr, value) VALUES ('" CH "', 60,"\
	" '" tx "', " li ", 'erc20', '" contract "', '" from "', '" to "', '1');"

/* What an address chose: only its own transactions count, never a transfer naming it. */
static void
test_chosen(void)
{
	char got[5];

	/*
	 * U3 swaps through R1 (0xe1: T1 comes back to it) then calls T2 (0xe2, an approve). In
	 * 0xe3, sent by U1, T3 fakes a transfer out of U3 and T1 sends it some: neither is U3's.
	 */
	CU_ASSERT_EQUAL_FATAL(bp_db_exec(db, TX("0xe1", "60", U3, R1) TX("0xe2", "61", U3, T2)
	    TX("0xe3", "62", U1, T3) XFERC("0xe1", "0", T1, R1, U3)
	    XFERC("0xe3", "0", T3, U3, U1) XFERC("0xe3", "1", T1, U1, U3)), 0);
	memset(got, '-', 4);
	got[4] = '\0';
	CU_ASSERT_EQUAL(bp_index_each_erc20_chosen(db, CH, U3, 100, add_chosen, got), 3);
	CU_ASSERT_STRING_EQUAL(got, "123-");
	/* Its last transaction only: 0xe2. */
	memset(got, '-', 4);
	CU_ASSERT_EQUAL(bp_index_each_erc20_chosen(db, CH, U3, 1, add_chosen, got), 1);
	CU_ASSERT_STRING_EQUAL(got, "--3-");
	CU_ASSERT_EQUAL(bp_index_each_erc20_chosen(db, CH, U2, 100, add_chosen, got), 0);
}

BP_UNIT_SUITE(index_read, setup, teardown,
	{ "cursor and final head", test_head },
	{ "nft owner and balance", test_owner },
	{ "holdings of an address", test_each },
	{ "account deployed, mined tx", test_deployment_and_tx },
	{ "receivers of a token (airdrop figures)", test_receivers },
	{ "contracts an address chose (its own transactions)", test_chosen })
