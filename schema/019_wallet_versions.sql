-- 019: the EntryPoint version a wallet was made for (docs/wallets.md). Its factory (already on
-- the row) is that version's SimpleAccountFactory; rows from before are v0.6's, the only
-- version there was. Written by lib/wallet/wallets_db.c, which owns the table (003).
ALTER TABLE wallets ADD COLUMN entry_point_version TEXT NOT NULL DEFAULT '0.6';
