-- 006: the NFT resource's caches (docs/nfts.md), written by fcgi/nfts.c on a
-- metadata or collection request, and by cron/nftmeta.c. Chains are "CHAIN.NETWORK" keys,
-- addresses lower-case 0x hex, token ids decimal text, times Unix seconds.

-- Owner: lib/nft/nft_cache.c.
-- One token's metadata document as last fetched. status 'ok': the fields below hold what the
-- document said; 'failed': the fetch or the parse failed, the fields are NULL, and nothing is
-- fetched again before next_retry (a backoff that doubles with each failure).
CREATE TABLE nft_metadata (
	chain		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	token_id	TEXT NOT NULL,
	token_uri	TEXT NOT NULL,		-- tokenURI/uri as the contract answered ({id} as is)
	status		TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
	name		TEXT,
	description	TEXT,
	image		TEXT,			-- the document's image, as written (ipfs://...)
	traits		TEXT,			-- JSON array of {trait_type, value} strings
	error		TEXT,			-- why the last fetch failed ('' when ok)
	attempts	INTEGER NOT NULL DEFAULT 0,	-- failures in a row
	fetched_at	INTEGER NOT NULL,
	next_retry	INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chain, contract, token_id)
) WITHOUT ROWID;

-- Owner: lib/nft/nft_cache.c.
-- One collection's on-chain facts and contractURI document. standard is what ERC-165 said;
-- name and symbol what the contract answered (NULL when it has none); the rest from
-- contractURI() when the contract has one. spam is lib/token/spam.c's verdict (NULL: not judged).
CREATE TABLE nft_collections (
	chain		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	standard	TEXT NOT NULL CHECK (standard IN ('erc721', 'erc1155')),
	name		TEXT,
	symbol		TEXT,
	contract_uri	TEXT,
	description	TEXT,
	image		TEXT,
	banner		TEXT,
	spam		INTEGER,
	status		TEXT NOT NULL CHECK (status IN ('pending', 'ok', 'failed')),	-- contractURI
	attempts	INTEGER NOT NULL DEFAULT 0,
	fetched_at	INTEGER NOT NULL,
	next_retry	INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (chain, contract)
) WITHOUT ROWID;

-- Owner: lib/nft/nft_cache.c.
-- A counter per network, moved by every write to the two caches above: GET owned keeps its
-- answers while this and the index's cursor stay put (lib/nft/nft_owned.c).
CREATE TABLE nft_cache_versions (
	chain		TEXT PRIMARY KEY,
	version		INTEGER NOT NULL
);

-- Owner: lib/nft/nft_cache.c.
-- Where cron/nftmeta.c's walk over the index's tokens stopped, per network.
CREATE TABLE nft_fill_cursors (
	chain		TEXT PRIMARY KEY,
	contract	TEXT NOT NULL,
	token_id	TEXT NOT NULL
);
