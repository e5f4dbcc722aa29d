/*
 * The signatures of a webhook delivery (SPEC.md section 6; docs/webhooks.md, "Delivery"):
 *  - format A: X-Service-Signature is the lower-case hex HMAC-SHA256, keyed with the webhook's
 *    signing secret exactly as it was given out ("whsec_" included), of
 *    "<timestamp>.<raw body>", where timestamp is X-Service-Timestamp (Unix seconds);
 *  - format B: X-Service-Signature is "sha256=" and the hex HMAC-SHA256 of the raw body, keyed
 *    the same way;
 *  - every delivery: webhook-signature as the Standard Webhooks specification defines it,
 *    "v1," and the base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>", keyed
 *    with the base64-decoded text after "whsec_".
 */
#ifndef BP_WEBHOOK_SIGN_H
#define BP_WEBHOOK_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "webhook.h"

#define BP_WEBHOOK_SIG_MAX	65	/* 64 hex digits + NUL */
#define BP_WEBHOOK_STDSIG_MAX	48	/* "v1," + 44 base64 characters + NUL */

/* Writes the signature of body (len bytes) at timestamp ts into out. 0, or -1 (OpenSSL). */
int	bp_webhook_sign(const char *secret, int64_t ts, const char *body, size_t len,
	    char out[BP_WEBHOOK_SIG_MAX]);
/* Format B's: the hex HMAC of the body alone (without "sha256="). 0 or -1. */
int	bp_webhook_sign_body(const char *secret, const char *body, size_t len,
	    char out[BP_WEBHOOK_SIG_MAX]);
/* The Standard Webhooks signature of body sent as msg_id at ts, "v1,<base64>". 0 or -1. */
int	bp_webhook_sign_std(const char *secret, const char *msg_id, int64_t ts, const char *body,
	    size_t len, char out[BP_WEBHOOK_STDSIG_MAX]);

#endif
