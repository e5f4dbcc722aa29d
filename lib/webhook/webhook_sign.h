/*
 * The signature of a webhook delivery (SPEC.md section 6, format A; docs/webhooks.md):
 * X-Service-Signature is the lower-case hex HMAC-SHA256, keyed with the webhook's signing
 * secret exactly as it was given out ("whsec_" included), of "<timestamp>.<raw body>", where
 * timestamp is X-Service-Timestamp, the Unix seconds of the attempt.
 */
#ifndef BP_WEBHOOK_SIGN_H
#define BP_WEBHOOK_SIGN_H

#include <stddef.h>
#include <stdint.h>

#define BP_WEBHOOK_SIG_MAX	65	/* 64 hex digits + NUL */

/* Writes the signature of body (len bytes) at timestamp ts into out. 0, or -1 (OpenSSL). */
int	bp_webhook_sign(const char *secret, int64_t ts, const char *body, size_t len,
	    char out[BP_WEBHOOK_SIG_MAX]);

#endif
