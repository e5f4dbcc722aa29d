/*
 * Spam verdicts for token contracts and NFT collections (spam.h, docs/tokens.md "Spam").
 */
#include <stddef.h>
#include <string.h>

#include "core/log.h"
#include "core/util.h"
#include "index/index_read.h"
#include "spam.h"

/* Lure words: a name or symbol that asks the holder to go somewhere or take something. */
static const char *const lure_words[] = {
	"claim", "visit", "reward", "airdrop", "voucher",
};

/* Top-level domains that, after "word.", make a name a link ("usdt-claim.com"). */
static const char *const tlds[] = {
	"com", "io", "xyz", "org", "net", "app", "site", "finance", "top", "info", "co", "me",
	"gift", "club", "online", "live", "link", "pro", "fun", "vip", "cc", "ly", "to", "gg",
	"fi", "cash", "money", "network", "tech", "store", "win", "bet", "ai",
};

static int
lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static int
is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether word (lower-case ASCII) occurs in s[0..len) regardless of case. */
static int
has_word(const char *s, size_t len, const char *word)
{
	size_t n = strlen(word), i, j;

	for (i = 0; i + n <= len; i++) {
		for (j = 0; j < n; j++)
			if (lower((unsigned char)s[i + j]) != (unsigned char)word[j])
				break;
		if (j == n)
			return 1;
	}
	return 0;
}

/*
 * Whether s[0..len) has "LABEL.TLD" with TLD one of tlds, not followed by a letter or digit
 * ("Uniswap.io" yes, "v1.0" no, "x.community" no).
 */
static int
has_domain(const char *s, size_t len)
{
	size_t i, k, n, j;

	for (i = 1; i + 1 < len; i++) {
		if (s[i] != '.' || !is_alnum((unsigned char)s[i - 1]))
			continue;
		for (k = 0; k < BP_NITEMS(tlds); k++) {
			n = strlen(tlds[k]);
			if (i + 1 + n > len)
				continue;
			for (j = 0; j < n; j++)
				if (lower((unsigned char)s[i + 1 + j]) != (unsigned char)tlds[k][j])
					break;
			if (j == n && (i + 1 + n == len || !is_alnum((unsigned char)s[i + 1 + n])))
				return 1;
		}
	}
	return 0;
}

int
bp_spam_text(const char *s)
{
	size_t len, k;

	if (s == NULL)
		return 0;
	len = strlen(s);
	if (has_word(s, len, "://") || has_word(s, len, "www.") || has_domain(s, len))
		return 1;
	for (k = 0; k < BP_NITEMS(lure_words); k++)
		if (has_word(s, len, lure_words[k]))
			return 1;
	return 0;
}

int
bp_spam_airdrop_stats(struct bp_db *db, const char *chain, const char *contract,
    struct bp_spam_airdrop *out)
{
	if (bp_index_receivers(db, chain, contract, BP_SPAM_AIRDROP_SAMPLE, &out->receivers,
	    &out->passive, &out->txs) == -1) {
		bp_err("%s: %s %s: reading the index failed", __func__, chain, contract);
		return -1;
	}
	return 0;
}

int
bp_spam_airdrop_is_spam(const struct bp_spam_airdrop *a)
{
	if (a->receivers < BP_SPAM_AIRDROP_MIN || a->txs <= 0)
		return 0;
	if (a->passive * 100 < a->receivers * BP_SPAM_AIRDROP_PCT)
		return 0;
	return a->receivers >= a->txs * BP_SPAM_AIRDROP_BATCH;
}

int
bp_spam_check(struct bp_db *db, const char *chain, const char *contract, const char *name,
    const char *symbol, int has_code)
{
	struct bp_spam_airdrop a;
	int bits = 0;

	if (bp_spam_text(name) || bp_spam_text(symbol))
		bits |= BP_SPAM_TEXT;
	if (has_code == 0)
		bits |= BP_SPAM_NO_CODE;
	if (db != NULL) {
		if (bp_spam_airdrop_stats(db, chain, contract, &a) != 0)
			return -1;
		if (bp_spam_airdrop_is_spam(&a))
			bits |= BP_SPAM_AIRDROP;
	}
	return bits;
}
