/*
 * Spam verdicts for token contracts and NFT collections (docs/tokens.md, "Spam"): the `spam`
 * boolean of token balance entries and of NFT collections, and `exclude_spam=true`.
 *
 * A contract is spam when any of these documented signals holds:
 *   - BP_SPAM_TEXT: its name or symbol carries a URL (a scheme "://", "www.", or a dotted
 *     host with a common top-level domain such as "x.com", "claim.io") or a lure word ("claim",
 *     "visit", "reward", "airdrop", "voucher"), matched case-insensitively;
 *   - BP_SPAM_NO_CODE: the address has no code (a token with no code cannot be real);
 *   - BP_SPAM_AIRDROP: the index shows an unsolicited airdrop: at least BP_SPAM_AIRDROP_MIN
 *     distinct receivers (of the first BP_SPAM_AIRDROP_SAMPLE the index holds), of which at
 *     least BP_SPAM_AIRDROP_PCT percent never sent a transaction to the contract nor moved the
 *     token on, and which got it in batches (on average at least BP_SPAM_AIRDROP_BATCH
 *     receivers per transaction). "Never" is as far as the index tells: transactions are kept
 *     for the retention only, transfers for good.
 *
 * The text check is pure; the airdrop check reads the indexer's tables through its reader
 * (bp_index_receivers, lib/index/index_read.h). Both are thread-safe. Callers cache the verdict
 * (lib/token/token.c keeps it with the token's metadata).
 */
#ifndef BP_SPAM_H
#define BP_SPAM_H

#include <stdint.h>

struct bp_db;

#define BP_SPAM_AIRDROP_MIN	100	/* receivers before an airdrop can be spam */
#define BP_SPAM_AIRDROP_SAMPLE	1000	/* receivers looked at, at most */
#define BP_SPAM_AIRDROP_PCT	90	/* passive receivers, percent of those looked at */
#define BP_SPAM_AIRDROP_BATCH	10	/* receivers per transaction, on average */

/* The signals, as bits of a verdict; 0 is "not spam". */
enum bp_spam_reason {
	BP_SPAM_TEXT = 1 << 0,
	BP_SPAM_NO_CODE = 1 << 1,
	BP_SPAM_AIRDROP = 1 << 2,
};

/* What the index tells of a contract's receivers (bp_spam_airdrop_stats). */
struct bp_spam_airdrop {
	int64_t		receivers;	/* distinct receivers looked at (at most the sample) */
	int64_t		passive;	/* of them, never sent to the contract nor moved the token */
	int64_t		txs;		/* distinct transactions that delivered to them */
};

/*
 * Whether s (a token or collection name or symbol, untrusted, may be NULL) carries a URL or a
 * lure word. Returns 1 or 0.
 */
int		bp_spam_text(const char *s);

/*
 * Reads the airdrop figures of contract (lower-case 0x address) on chain ("CHAIN.NETWORK") from
 * the index into *out. Any standard (ERC-20, ERC-721, ERC-1155) of transfers counts. Returns 0,
 * or -1 on a database error (logged).
 */
int		bp_spam_airdrop_stats(struct bp_db *, const char *chain, const char *contract,
		    struct bp_spam_airdrop *out);

/* Whether the figures make an airdrop spam, by the thresholds above. Returns 1 or 0. */
int		bp_spam_airdrop_is_spam(const struct bp_spam_airdrop *);

/*
 * The verdict for a contract: the bits of enum bp_spam_reason that hold, 0 when none.
 * name and symbol may be NULL (unknown); has_code is 1, 0, or -1 when not known (then no
 * BP_SPAM_NO_CODE). With db NULL the airdrop signal is not looked at. Returns the bits, or -1
 * on a database error (logged).
 */
int		bp_spam_check(struct bp_db *, const char *chain, const char *contract,
		    const char *name, const char *symbol, int has_code);

#endif
