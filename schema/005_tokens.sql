-- 005: token data: the metadata cache of ERC-20 contracts and the Chainlink price samples. See
-- docs/tokens.md. Chain keys are "CHAIN.NETWORK" ("ethereum.devnet"); addresses are lower-case
-- 0x hex; amounts are decimal text (256-bit values do not fit an SQLite integer); times are Unix
-- seconds.

-- Owner: lib/token/token.c. One row per ERC-20 contract read once from the chain (name, symbol and
-- decimals never change); total_supply and the spam verdict are read again when older than
-- [server] token_refresh_seconds. Contracts that are not ERC-20 have no row.
CREATE TABLE token_metadata (
	chain		TEXT NOT NULL,
	contract	TEXT NOT NULL,
	name		TEXT,				-- NULL when name() reverted or was not text
	symbol		TEXT,				-- NULL likewise; bytes32 (MKR-style) decoded
	decimals	INTEGER NOT NULL,		-- 0 .. 255
	total_supply	TEXT NOT NULL,			-- decimal, smallest unit
	spam		INTEGER NOT NULL DEFAULT 0,	-- bits of enum bp_spam_reason (lib/token/spam.h)
	fetched_at	INTEGER NOT NULL,		-- when name/symbol/decimals were read
	refreshed_at	INTEGER NOT NULL,		-- when total_supply and spam were read
	PRIMARY KEY (chain, contract)
);

-- Owner: lib/token/price.c (written by cron/prices.c). The latest answer of each Chainlink aggregator
-- named in a [prices CHAIN] section (`0xTOKEN = chainlink:0xAGGREGATOR`); read as the token's
-- USD price until it is older than [server] price_max_age, then the price is null.
CREATE TABLE token_prices (
	chain		TEXT NOT NULL,			-- the [prices CHAIN] name ("ethereum")
	contract	TEXT NOT NULL,			-- the token
	aggregator	TEXT NOT NULL,
	price		TEXT NOT NULL,			-- USD, exact decimal (answer / 10^decimals)
	round_id	TEXT NOT NULL,			-- decimal
	updated_at	INTEGER NOT NULL,		-- the aggregator's updatedAt
	sampled_at	INTEGER NOT NULL,
	PRIMARY KEY (chain, contract)
);
