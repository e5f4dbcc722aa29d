/*
 * Webhook delivery over HTTPS (docs/webhooks.md, "Delivery"): many signed POSTs at once with
 * curl multi, so one slow receiver does not hold up the others. Every transfer is armed by
 * lib/net/fetch.h (protocols, the connect-time address check, limits, redirects never followed);
 * receivers' certificates are verified, [webhooks] ca_file adding trusted CAs. A 2xx answer
 * acknowledges; anything else (another status, a redirect, a timeout, a TLS error, a refused
 * address) is a failure.
 */
#ifndef BP_WEBHOOK_SEND_H
#define BP_WEBHOOK_SEND_H

#include <stddef.h>

#include "webhook_queue.h"

struct bp_config;
struct bp_webhook_sender;

#define BP_WEBHOOK_USER_AGENT	"Blockport-Webhooks/1 (+https://github.com/blockport)"

/* A sender for cfg's [webhooks] settings, its connections kept between calls; NULL on error. */
struct bp_webhook_sender *bp_webhook_sender_new(const struct bp_config *cfg);
void	bp_webhook_sender_free(struct bp_webhook_sender *);

/*
 * The streaming interface cron/deliver uses, so a slow receiver holds its own slot only:
 * start a job in a free slot (the sender takes job->body, setting it to NULL; -1 when no slot
 * is free), then collect finished ones, waiting up to wait_ms for one: each collected job
 * (its body now the caller's again) and its outcome go into jobs[i] and out[i], at most cap.
 */
size_t	bp_webhook_sender_free_slots(const struct bp_webhook_sender *);
size_t	bp_webhook_sender_busy(const struct bp_webhook_sender *);	/* started, not collected */
int	bp_webhook_sender_start(struct bp_webhook_sender *, struct bp_webhook_job *job);
size_t	bp_webhook_sender_collect(struct bp_webhook_sender *, int wait_ms,
	    struct bp_webhook_job *jobs, struct bp_webhook_outcome *out, size_t cap);

/*
 * POSTs each job's body to its url with the signature headers, at most [webhooks] parallel at
 * once, and writes each outcome into out[i]. Returns 0, or -1 when curl could not run at all
 * (every outcome is then a failure).
 */
int	bp_webhook_send(struct bp_webhook_sender *, const struct bp_webhook_job *jobs, size_t n,
	    struct bp_webhook_outcome *out);

#endif
