/*
 * Webhook signatures (webhook_sign.h): OpenSSL's HMAC-SHA256 over the parts of a message.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

#include "core/hex.h"
#include "webhook_sign.h"

/*
 * The HMAC implementation, fetched once per process (a provider lookup costs more than the MAC
 * of a small body); read-only afterwards, shared by every thread, never freed.
 */
static EVP_MAC *hmac_impl;
static pthread_once_t hmac_once = PTHREAD_ONCE_INIT;

static void
hmac_fetch(void)
{
	hmac_impl = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* HMAC-SHA256 of prefix (plen bytes) followed by body (len bytes), keyed with key. 0 or -1. */
static int
hmac(const unsigned char *key, size_t keylen, const char *prefix, size_t plen,
    const char *body, size_t len, unsigned char mac[32])
{
	EVP_MAC_CTX *ctx;
	OSSL_PARAM params[2];
	size_t outl = 0;
	int ok;

	pthread_once(&hmac_once, hmac_fetch);
	if (hmac_impl == NULL || (ctx = EVP_MAC_CTX_new(hmac_impl)) == NULL)
		return -1;
	params[0] = OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	ok = EVP_MAC_init(ctx, key, keylen, params) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)prefix, plen) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)body, len) == 1 &&
	    EVP_MAC_final(ctx, mac, &outl, 32) == 1 && outl == 32;
	EVP_MAC_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* The hex HMAC of "<prefix><body>" keyed with the secret's text, into out. 0 or -1. */
static int
sign_hex(const char *secret, const char *prefix, size_t plen, const char *body, size_t len,
    char out[BP_WEBHOOK_SIG_MAX])
{
	unsigned char mac[32];

	out[0] = '\0';
	if (hmac((const unsigned char *)secret, strlen(secret), prefix, plen, body, len,
	    mac) == -1)
		return -1;
	return bp_hex_encode_digits(mac, sizeof(mac), out, BP_WEBHOOK_SIG_MAX);
}

int
bp_webhook_sign(const char *secret, int64_t ts, const char *body, size_t len,
    char out[BP_WEBHOOK_SIG_MAX])
{
	char prefix[32];
	int n;

	out[0] = '\0';
	n = snprintf(prefix, sizeof(prefix), "%lld.", (long long)ts);
	if (n <= 0 || (size_t)n >= sizeof(prefix))
		return -1;
	return sign_hex(secret, prefix, (size_t)n, body, len, out);
}

int
bp_webhook_sign_body(const char *secret, const char *body, size_t len,
    char out[BP_WEBHOOK_SIG_MAX])
{
	return sign_hex(secret, "", 0, body, len, out);
}

/*
 * The Standard Webhooks key of secret: the base64 text after "whsec_", decoded. The secrets
 * made before (whsec_ + 64 hex digits) are valid base64 too (48 bytes), and the official
 * libraries decode them the same way, so they verify as well. A text that is not base64
 * (none is made here) is used as it is. Returns the key's length.
 */
static size_t
std_key(const char *secret, unsigned char key[BP_WEBHOOK_SECRET_MAX])
{
	const char *b = secret;
	size_t len;
	int n, pad = 0;

	if (strncmp(b, "whsec_", 6) == 0)
		b += 6;
	len = strlen(b);
	if (len > 0 && len % 4 == 0 && len / 4 * 3 <= BP_WEBHOOK_SECRET_MAX &&
	    strspn(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
	    == len && (n = EVP_DecodeBlock(key, (const unsigned char *)b, (int)len)) > 0) {
		/* DecodeBlock counts the padding's zero bytes. */
		pad = (b[len - 1] == '=') + (b[len - 2] == '=');
		if (n - pad > 0 && memchr(b, '=', len - (size_t)pad) == NULL)
			return (size_t)(n - pad);
	}
	len = strlen(secret);
	if (len > BP_WEBHOOK_SECRET_MAX)
		len = BP_WEBHOOK_SECRET_MAX;
	memcpy(key, secret, len);
	return len;
}

int
bp_webhook_sign_std(const char *secret, const char *msg_id, int64_t ts, const char *body,
    size_t len, char out[BP_WEBHOOK_STDSIG_MAX])
{
	unsigned char key[BP_WEBHOOK_SECRET_MAX], mac[32];
	char prefix[96];
	size_t keylen;
	int n, rc;

	out[0] = '\0';
	n = snprintf(prefix, sizeof(prefix), "%s.%lld.", msg_id, (long long)ts);
	if (n <= 0 || (size_t)n >= sizeof(prefix))
		return -1;
	keylen = std_key(secret, key);
	rc = hmac(key, keylen, prefix, (size_t)n, body, len, mac);
	OPENSSL_cleanse(key, sizeof(key));
	if (rc == -1)
		return -1;
	memcpy(out, "v1,", 3);
	/* 32 bytes are 44 characters and a NUL: BP_WEBHOOK_STDSIG_MAX holds them. */
	EVP_EncodeBlock((unsigned char *)out + 3, mac, sizeof(mac));
	return 0;
}
