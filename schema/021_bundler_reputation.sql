-- 021: the bundler's ERC-7562 reputation of factories, paymasters and aggregators, and the
-- bundling mode of each network (docs/bundler.md, "ERC-7562"). Addresses are lower-case 0x hex.

-- Owner: lib/bundler/bundler_reputation.c (fcgi/bundler.c counts ops seen on accept and the
-- debug_bundler_* methods set and clear rows; cron/bundle.c counts ops included and bans an
-- entity whose op fails the bundle's re-check). The counts decay by 1/24 each hour: hour is the
-- Unix hour they were last decayed to.
CREATE TABLE bundler_reputation (
	chain		TEXT NOT NULL,			-- "CHAIN.NETWORK"
	address		TEXT NOT NULL,
	ops_seen	INTEGER NOT NULL,
	ops_included	INTEGER NOT NULL,
	hour		INTEGER NOT NULL,
	updated_at	INTEGER NOT NULL,
	PRIMARY KEY (chain, address)
);

-- Owner: lib/bundler/bundler_reputation.c (debug_bundler_setBundlingMode). A network without a
-- row bundles automatically; "manual" leaves bundling to debug_bundler_sendBundleNow.
CREATE TABLE bundler_modes (
	chain		TEXT PRIMARY KEY,
	mode		TEXT NOT NULL CHECK (mode IN ('auto', 'manual')),
	updated_at	INTEGER NOT NULL
);
