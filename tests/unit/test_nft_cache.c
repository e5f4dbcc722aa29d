/*
 * The NFT resource's SQL: the index readers it uses (lib/index/index_read.c, "Readers for the NFT
 * resource") and the caches of schema/006_nfts.sql (lib/nft/nft_cache.c), against a fresh database.
 */
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/util.h"
#include "index/index_read.h"
#include "index/index_store.h"
#include "nft/nft_priv.h"
#include "unit.h"
#include "unit_db.h"

#define CH	"ethereum.devnet"
#define A	"0x5fc8d32690cc91d4c39d9d3abcbd16989f875707"
#define B	"0x0165878a594ca255338adfa4d48449f69242eb8f"
#define U1	"0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
#define U2	"0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"

static struct bp_unit_db u;
#define db	(u.db)

/* The rows go in through the store, as the indexer writes them, so its counts are kept. */
static int
owner_set(const char *chain, const char *contract, const char *id, const char *owner,
    const char *standard, const char *quantity, int64_t block)
{
	struct bp_index_store_chain c;

	memset(&c, 0, sizeof(c));
	snprintf(c.key, sizeof(c.key), "%s", chain);
	return bp_index_store_owner_set(db, &c, contract, id, owner, standard, quantity, block);
}

static int
setup(void)
{
	if (bp_unit_db_open(&u, "nft") == -1)
		return 1;
	return owner_set(CH, A, "0", U1, "erc721", "1", 10) == 0 &&
	    owner_set(CH, A, "10", U1, "erc721", "1", 11) == 0 &&
	    owner_set(CH, A, "9", U1, "erc721", "1", 11) == 0 &&
	    owner_set(CH, A, "2", U2, "erc721", "1", 11) == 0 &&
	    owner_set(CH, B, "7", U1, "erc1155", "5", 12) == 0 &&
	    owner_set(CH, B, "7", U2, "erc1155", "2", 12) == 0 &&
	    owner_set(CH, B, "8", U2, "erc1155", "1", 13) == 0 &&
	    owner_set("other.net", A, "5", U1, "erc721", "1", 1) == 0 ? 0 : 1;
}

static int
teardown(void)
{
	bp_unit_db_close(&u);
	return 0;
}

struct seen {
	char	rows[16][128];
	int	n;
};

static int
collect(const struct bp_index_nft *x, void *arg)
{
	struct seen *s = arg;

	snprintf(s->rows[s->n++], sizeof(s->rows[0]), "%s/%s/%s/%s", x->contract + 2 + 36,
	    x->token_id, x->standard, x->quantity);
	return s->n == 16;
}

static void
test_index_readers(void)
{
	struct seen s;
	char one[43];
	int64_t n, tokens, owners;

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_nft_page(db, CH, U1, 0, 10, collect, &s), 4);
	/* By contract, then token id as a number: 9 before 10. */
	CU_ASSERT_STRING_EQUAL(s.rows[0], "eb8f/7/erc1155/5");
	CU_ASSERT_STRING_EQUAL(s.rows[1], "5707/0/erc721/1");
	CU_ASSERT_STRING_EQUAL(s.rows[2], "5707/9/erc721/1");
	CU_ASSERT_STRING_EQUAL(s.rows[3], "5707/10/erc721/1");
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_nft_page(db, CH, U1, 1, 1, collect, &s), 1);
	CU_ASSERT_STRING_EQUAL(s.rows[0], "5707/0/erc721/1");
	CU_ASSERT_EQUAL(bp_index_nft_page(db, CH, U1, 4, 10, collect, &s), 0);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_each_nft(db, CH, U2, collect, &s), 3);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U1, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U2, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, "other.net", U1, &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, "0xnobody", &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(bp_index_nft_holders(db, CH, B, "7", one, sizeof(one), &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(bp_index_nft_holders(db, CH, B, "8", one, sizeof(one), &n), 0);
	CU_ASSERT_EQUAL(n, 1);
	CU_ASSERT_STRING_EQUAL(one, U2);
	CU_ASSERT_EQUAL(bp_index_nft_holders(db, CH, B, "9", one, sizeof(one), &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_STRING_EQUAL(one, "");
	CU_ASSERT_EQUAL(bp_index_nft_collection(db, CH, A, &tokens, &owners), 0);
	CU_ASSERT_EQUAL(tokens, 4);
	CU_ASSERT_EQUAL(owners, 2);
	CU_ASSERT_EQUAL(bp_index_nft_collection(db, CH, B, &tokens, &owners), 0);
	CU_ASSERT_EQUAL(tokens, 2);
	CU_ASSERT_EQUAL(owners, 2);
	/* One row per token, resuming after a (contract, token) pair. */
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_nft_tokens_after(db, CH, "", "", 100, collect, &s), 6);
	CU_ASSERT_STRING_EQUAL(s.rows[0], "eb8f/7/erc1155/2");
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(bp_index_nft_tokens_after(db, CH, B, "8", 2, collect, &s), 2);
	CU_ASSERT_STRING_EQUAL(s.rows[0], "5707/0/erc721/1");
	CU_ASSERT_STRING_EQUAL(s.rows[1], "5707/10/erc721/1");
}

static void
test_caches(void)
{
	struct bp_nft_names nm = { CH, A, "", "10" };
	struct bp_nft_coll c, c2;
	struct bp_nft_meta m, m2;
	char (*spam)[BP_ADDR_STR_MAX];
	char *name, *image, cc[BP_ADDR_STR_MAX], ct[BP_U256_DEC_MAX];
	int64_t v0, v1;
	size_t n;

	CU_ASSERT_EQUAL(bp_nft_cache_version(db, CH, &v0), 0);
	memset(&c, 0, sizeof(c));
	c.standard = BP_NFT_STD_721;
	c.name = "Apes";
	c.spam = 1;
	CU_ASSERT_EQUAL(bp_nft_coll_store(db, &nm, &c), 0);
	CU_ASSERT_EQUAL(bp_nft_coll_load(db, &nm, &c2), 0);
	CU_ASSERT_EQUAL(c2.found, 1);
	CU_ASSERT_EQUAL(c2.standard, BP_NFT_STD_721);
	CU_ASSERT_STRING_EQUAL(c2.name, "Apes");
	CU_ASSERT_PTR_NULL(c2.symbol);
	CU_ASSERT_STRING_EQUAL(c2.status, "pending");
	bp_nft_coll_free(&c2);
	memset(&m, 0, sizeof(m));
	m.ok = 1;
	m.token_uri = "ipfs://QmX/10";
	m.name = "Ape 10";
	m.image = "ipfs://QmX/10.png";
	m.traits = "[]";
	CU_ASSERT_EQUAL(bp_nft_meta_store(db, &nm, &m), 0);
	CU_ASSERT_EQUAL(bp_nft_meta_load(db, &nm, &m2), 0);
	CU_ASSERT(m2.found && m2.ok);
	CU_ASSERT_STRING_EQUAL(m2.token_uri, "ipfs://QmX/10");
	CU_ASSERT_STRING_EQUAL(m2.image, "ipfs://QmX/10.png");
	bp_nft_meta_free(&m2);
	/* Every store moved the version. */
	CU_ASSERT_EQUAL(bp_nft_cache_version(db, CH, &v1), 0);
	CU_ASSERT_EQUAL(v1, v0 + 2);
	CU_ASSERT_EQUAL(bp_nft_cached_token(db, CH, A, "10", &name, &image), 0);
	CU_ASSERT_STRING_EQUAL(name, "Ape 10");
	free(name);
	free(image);
	/* A failed row is not a cached name. */
	m.ok = 0;
	m.name = NULL;
	m.attempts = 1;
	m.next_retry = 99;
	CU_ASSERT_EQUAL(bp_nft_meta_store(db, &nm, &m), 0);
	CU_ASSERT_EQUAL(bp_nft_cached_token(db, CH, A, "10", &name, &image), 0);
	CU_ASSERT_PTR_NULL(name);
	CU_ASSERT_PTR_NULL(image);
	CU_ASSERT_EQUAL(bp_nft_meta_load(db, &nm, &m2), 0);
	CU_ASSERT(m2.found && !m2.ok && m2.attempts == 1 && m2.next_retry == 99);
	bp_nft_meta_free(&m2);
	CU_ASSERT_EQUAL(bp_nft_cached_collection(db, CH, A, &name), 0);
	CU_ASSERT_STRING_EQUAL(name, "Apes");
	free(name);
	CU_ASSERT_EQUAL(bp_nft_cached_collection(db, CH, B, &name), 0);
	CU_ASSERT_PTR_NULL(name);
	CU_ASSERT_EQUAL(bp_nft_spam_contracts(db, CH, &spam, &n), 0);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_STRING_EQUAL(spam[0], A);
	free(spam);
	CU_ASSERT_EQUAL(bp_nft_spam_contracts(db, "other.net", &spam, &n), 0);
	CU_ASSERT_EQUAL(n, 0);
	free(spam);
	CU_ASSERT_EQUAL(bp_nft_cursor_load(db, CH, cc, ct), 0);
	CU_ASSERT_STRING_EQUAL(cc, "");
	CU_ASSERT_EQUAL(bp_nft_cursor_store(db, CH, B, "8"), 0);
	CU_ASSERT_EQUAL(bp_nft_cursor_store(db, CH, A, "2"), 0);
	CU_ASSERT_EQUAL(bp_nft_cursor_load(db, CH, cc, ct), 0);
	CU_ASSERT_STRING_EQUAL(cc, A);
	CU_ASSERT_STRING_EQUAL(ct, "2");
}

/* The kept counts follow transfers, quantity changes and burns, and match the rows. */
static void
test_counts(void)
{
	struct bp_index_store_chain c;
	int64_t n;
	const char *who[] = { U1, U2 };
	size_t i;

	memset(&c, 0, sizeof(c));
	snprintf(c.key, sizeof(c.key), "%s", CH);
	/* An ERC-721 transfer: the holders cleared, the new owner set. */
	CU_ASSERT_EQUAL(bp_index_store_owners_clear(db, &c, A, "0", "erc721"), 0);
	CU_ASSERT_EQUAL(owner_set(CH, A, "0", U2, "erc721", "1", 20), 0);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U1, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U2, &n), 0);
	CU_ASSERT_EQUAL(n, 4);
	/* A new quantity of an id held: no new row. All of it sent away: one row less. */
	CU_ASSERT_EQUAL(owner_set(CH, B, "7", U1, "erc1155", "6", 21), 0);
	CU_ASSERT_EQUAL(owner_set(CH, B, "7", U2, "erc1155", "0", 21), 0);
	/* A zero quantity of an id not held changes nothing. */
	CU_ASSERT_EQUAL(owner_set(CH, B, "99", U2, "erc1155", "0", 21), 0);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U1, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U2, &n), 0);
	CU_ASSERT_EQUAL(n, 3);
	/* A burn of an ERC-1155 id with two holders clears both. */
	CU_ASSERT_EQUAL(owner_set(CH, B, "8", U1, "erc1155", "4", 22), 0);
	CU_ASSERT_EQUAL(bp_index_store_owners_clear(db, &c, B, "8", "erc1155"), 0);
	for (i = 0; i < BP_NITEMS(who); i++) {
		struct seen s;

		memset(&s, 0, sizeof(s));
		CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, who[i], &n), 0);
		CU_ASSERT_EQUAL(bp_index_each_nft(db, CH, who[i], collect, &s), n);
	}
	CU_ASSERT_EQUAL(bp_index_nft_count(db, CH, U2, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
}

BP_UNIT_SUITE(nft_cache, setup, teardown,
	{ "index readers: page, count, holders, collection, tokens after", test_index_readers },
	{ "caches: store, load, version, names, spam, cursor", test_caches },
	{ "kept counts: transfers, quantities, burns", test_counts })
