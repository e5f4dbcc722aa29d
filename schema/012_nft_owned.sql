-- 012: the shape of the owned-NFT list (GET /v1/nfts/{chain}/owned/{address}, docs/nfts.md).

-- Owner: lib/index/index_store.c (bp_index_store_owner_set and bp_index_store_owners_clear keep it in the
-- transaction of the rows of index_nft_owners they change; lib/index/index_reorg.c goes through
-- them). The number of index_nft_owners rows per owner, so the list's total is one lookup
-- instead of a count over every row the owner has. A row may hold 0.
CREATE TABLE index_nft_counts (
	chain		TEXT NOT NULL,
	owner		TEXT NOT NULL,
	tokens		INTEGER NOT NULL,
	PRIMARY KEY (chain, owner)
) WITHOUT ROWID;
INSERT INTO index_nft_counts (chain, owner, tokens)
	SELECT chain, owner, count(*) FROM index_nft_owners GROUP BY chain, owner;

-- The owned list's order, numeric in the token id (a decimal without leading zeros orders by
-- its length, then its text: 2 before 10), with the columns an entry shows, so a page is read
-- from this index alone. It replaces the (chain, owner) index, of which it is an extension.
DROP INDEX index_nft_owners_owner;
CREATE INDEX index_nft_owners_owned ON index_nft_owners (chain, owner, contract,
	(length(token_id)), token_id, standard, quantity);
