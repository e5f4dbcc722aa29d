/*
 * lib/token/spam.c: the text signal over a table of names (hostile rows included), the airdrop
 * figures read from index rows as the indexer writes them, and the verdict's thresholds.
 */
#include <stdio.h>
#include <string.h>

#include "core/db.h"
#include "token/spam.h"
#include "unit.h"
#include "unit_db.h"

#define CH	"ethereum.devnet"
#define DROP	"0x1000000000000000000000000000000000000001"
#define REAL	"0x2000000000000000000000000000000000000002"

static struct bp_unit_db u;
#define db	(u.db)

/* Receiver i of a contract: a distinct lower-case address. */
static void
receiver(char out[43], int tag, int i)
{
	snprintf(out, 43, "0x%02x%038x", tag, i);
}

/* Runs sql with the text parameters args[0..n) (NULL ends them); 0 or -1. */
static int
run(const char *sql, const char *const *args)
{
	struct bp_stmt *st = bp_db_stmt(db, sql);
	int i, rc;

	if (st == NULL)
		return -1;
	for (i = 0; args[i] != NULL; i++)
		bp_stmt_text(st, i + 1, args[i]);
	rc = bp_stmt_step(st) == BP_DB_DONE ? 0 : -1;
	bp_stmt_reset(st);
	return rc;
}

/* A mint of contract to receiver in transaction number tx, at log index log. */
static int
mint(const char *contract, const char *receiver, int tx, int log)
{
	static const char sql[] = "INSERT INTO index_transfers (chain, block_number, tx_hash,"
	    " log_index, standard, contract, from_addr, to_addr, value)"
	    " VALUES (?, 1, ?, ?, 'erc20', ?, '0x0000000000000000000000000000000000000000', ?, '1')";
	char txh[67], li[16];

	snprintf(txh, sizeof(txh), "0x%064x", tx);
	snprintf(li, sizeof(li), "%d", log);
	return run(sql, (const char *const[]){ CH, txh, li, contract, receiver, NULL });
}

/*
 * DROP: 150 receivers in 3 transactions, none of whom ever touched it. REAL: 150 receivers, one
 * transaction each, every second one has since sent a transaction to the contract.
 */
static int
setup(void)
{
	static const char tx_sql[] = "INSERT INTO index_transactions (chain, hash, block_number,"
	    " tx_index, from_addr, to_addr, value, nonce) VALUES (?, ?, 2, 0, ?, ?, '0', 0)";
	char a[43], tx[67];
	int i;

	if (bp_unit_db_open(&u, "spam") == -1)
		return 1;
	for (i = 0; i < 150; i++) {
		receiver(a, 0xaa, i);
		if (mint(DROP, a, i % 3, i) == -1)
			return 1;
		receiver(a, 0xbb, i);
		if (mint(REAL, a, 1000 + i, 0) == -1)
			return 1;
		snprintf(tx, sizeof(tx), "0x%064x", 5000 + i);
		if (i % 2 == 0 && run(tx_sql, (const char *const[]){ CH, tx, a, REAL, NULL }) == -1)
			return 1;
	}
	return 0;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

static void
test_text(void)
{
	static const struct {
		const char	*s;
		int		 spam;
	} rows[] = {
		{ "USD Coin", 0 }, { "USDC", 0 }, { "Wrapped Ether", 0 }, { "Maker", 0 },
		{ "Uniswap V3 Positions NFT-V1", 0 }, { "v1.0", 0 }, { "A.B", 0 },
		{ "x.community", 0 }, { "", 0 }, { ".com", 0 }, { "\xff\xfe", 0 },
		{ "Visit usdt-gift.com to claim", 1 }, { "https://evil.example", 1 },
		{ "www.rewards", 1 }, { "CLAIM", 1 }, { "$ Reward Token", 1 },
		{ "eth-drop.XYZ", 1 }, { "AirDrop Pass", 1 }, { "Voucher", 1 }, { "get.io!", 1 },
		{ "ClaimRewards", 1 }, { "xn.finance", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (bp_spam_text(rows[i].s) != rows[i].spam)
			fprintf(stderr, "spam_text row %zu (%s)\n", i, rows[i].s);
		CU_ASSERT_EQUAL(bp_spam_text(rows[i].s), rows[i].spam);
	}
	CU_ASSERT_EQUAL(bp_spam_text(NULL), 0);
}

static void
test_thresholds(void)
{
	struct bp_spam_airdrop a = { 100, 90, 10 };

	CU_ASSERT_EQUAL(bp_spam_airdrop_is_spam(&a), 1);
	a.receivers = 99;
	CU_ASSERT_EQUAL(bp_spam_airdrop_is_spam(&a), 0);	/* too few */
	a.receivers = 100, a.passive = 89;
	CU_ASSERT_EQUAL(bp_spam_airdrop_is_spam(&a), 0);	/* too many active */
	a.passive = 100, a.txs = 11;
	CU_ASSERT_EQUAL(bp_spam_airdrop_is_spam(&a), 0);	/* not in batches */
	a.txs = 0;
	CU_ASSERT_EQUAL(bp_spam_airdrop_is_spam(&a), 0);
}

static void
test_airdrop(void)
{
	struct bp_spam_airdrop a;

	CU_ASSERT_EQUAL(bp_spam_airdrop_stats(db, CH, DROP, &a), 0);
	CU_ASSERT_EQUAL(a.receivers, 150);
	CU_ASSERT_EQUAL(a.passive, 150);
	CU_ASSERT_EQUAL(a.txs, 3);
	CU_ASSERT_EQUAL(bp_spam_check(db, CH, DROP, "Token", "TOK", 1), BP_SPAM_AIRDROP);

	CU_ASSERT_EQUAL(bp_spam_airdrop_stats(db, CH, REAL, &a), 0);
	CU_ASSERT_EQUAL(a.receivers, 150);
	CU_ASSERT_EQUAL(a.passive, 75);
	CU_ASSERT_EQUAL(a.txs, 150);
	CU_ASSERT_EQUAL(bp_spam_check(db, CH, REAL, "Token", "TOK", 1), 0);
	CU_ASSERT_EQUAL(bp_spam_check(db, CH, REAL, "Token", "claim-tok.com", 0),
	    BP_SPAM_TEXT | BP_SPAM_NO_CODE);
	/* Another chain's rows do not count. */
	CU_ASSERT_EQUAL(bp_spam_airdrop_stats(db, "ethereum.mainnet", DROP, &a), 0);
	CU_ASSERT_EQUAL(a.receivers, 0);
	CU_ASSERT_EQUAL(bp_spam_check(NULL, CH, DROP, "Token", "TOK", -1), 0);
}

BP_UNIT_SUITE(spam, setup, teardown,
    { "name and symbol text", test_text },
    { "airdrop thresholds", test_thresholds },
    { "airdrop figures from the index", test_airdrop })
