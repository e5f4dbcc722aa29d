/*
 * Webhook signatures (webhook_sign.h): OpenSSL's HMAC over the timestamp, a dot and the body.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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

int
bp_webhook_sign(const char *secret, int64_t ts, const char *body, size_t len,
    char out[BP_WEBHOOK_SIG_MAX])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	char prefix[32];
	int n, rc = -1;
	EVP_MAC_CTX *ctx = NULL;
	OSSL_PARAM params[2];
	size_t outl = 0;

	out[0] = '\0';
	n = snprintf(prefix, sizeof(prefix), "%lld.", (long long)ts);
	if (n <= 0 || (size_t)n >= sizeof(prefix))
		return -1;
	pthread_once(&hmac_once, hmac_fetch);
	if (hmac_impl == NULL)
		return -1;
	params[0] = OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if ((ctx = EVP_MAC_CTX_new(hmac_impl)) != NULL &&
	    EVP_MAC_init(ctx, (const unsigned char *)secret, strlen(secret), params) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)prefix, (size_t)n) == 1 &&
	    EVP_MAC_update(ctx, (const unsigned char *)body, len) == 1 &&
	    EVP_MAC_final(ctx, mac, &outl, sizeof(mac)) == 1 && outl == 32) {
		maclen = (unsigned int)outl;
		rc = bp_hex_encode_digits(mac, maclen, out, BP_WEBHOOK_SIG_MAX);
	}
	EVP_MAC_CTX_free(ctx);
	return rc;
}
