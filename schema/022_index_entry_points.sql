-- 022: the EntryPoint that emitted each indexed ERC-4337 event (docs/indexer.md): the indexer
-- records the events of every EntryPoint version a network configures (v0.6, v0.7, v0.8), and
-- a lookup answers in the op's own version. Rows from before are v0.6's, the only EntryPoint
-- indexed then: '' stands for the network's entry_point. Written by lib/index/index_store.c,
-- which owns both tables (002).
ALTER TABLE index_user_ops ADD COLUMN entry_point TEXT NOT NULL DEFAULT '';
ALTER TABLE index_account_deployments ADD COLUMN entry_point TEXT NOT NULL DEFAULT '';
