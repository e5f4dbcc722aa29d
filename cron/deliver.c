/*
 * deliver: sends the webhook events the indexer's matcher recorded (docs/webhooks.md,
 * "Delivery"). A pass:
 *   1. completes the token symbols and decimals of waiting token events (webhook_token.h);
 *   2. takes back the leases of a pass that died, and claims due deliveries with a lease
 *      (webhook_queue.h): pending, block confirmed, webhook active, account under its day;
 *   3. POSTs them all at once with curl multi, signed (webhook_send.h);
 *   4. settles them in one transaction: delivered, retried later, or the webhook paused after
 *      its last retry, whose owner then gets an e-mail (mail.h);
 *   5. once a minute, prunes delivered events and old attempts.
 * Killed at any point, it loses nothing: what was claimed and not settled is sent again, with
 * the same evt_ id, by the next pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "evm/chain.h"
#include "log.h"
#include "mail.h"
#include "upstream.h"
#include "util.h"
#include "webhook.h"
#include "webhook_queue.h"
#include "webhook_send.h"
#include "webhook_token.h"
#include "worker.h"

#define PRUNE_EVERY	60	/* seconds */
#define TOKENS_MAX	1000	/* events completed per pass */

struct state {
	struct bp_upstream		*up;
	struct bp_chain			*chain;
	struct bp_webhook_sender	*sender;
	int64_t				 pruned_at;
};

/* Tells the owner of webhook id that it was paused; logs when there is no SMTP server. */
static void
notify_paused(struct bp_worker_ctx *w, const char *id)
{
	struct bp_webhook wh;
	struct bp_buf body;
	char email[256], subject[128], err[256];
	int rc;

	if (bp_webhook_get(w->db, -1, id, &wh) != 1 ||
	    bp_webhook_owner_email(w->db, id, email, sizeof(email)) != 1) {
		bp_warn("webhook %s was paused; its owner could not be found", id);
		return;
	}
	bp_buf_init(&body, 16 * 1024);
	snprintf(subject, sizeof(subject), "Blockport webhook %s paused after failed deliveries",
	    id);
	bp_buf_printf(&body, "Your webhook %s, which sends %s events to\n\n  %s\n\nwas paused:"
	    " a delivery failed and all %zu retries failed too.\n\nNew events are recorded and"
	    " held while it is paused. Fix the receiver, then resume it with\n\n  PATCH"
	    " /v1/webhooks/%s {\"status\":\"active\"}\n\nand the held events are delivered.\n",
	    id, bp_webhook_type_name(wh.type), wh.url, w->cfg->webhooks.nretry, id);
	rc = bp_mail_send(w->cfg, email, subject, body.data != NULL ? body.data : "", err,
	    sizeof(err));
	if (rc == 1)
		bp_warn("webhook %s (%s) paused; no [smtp] url, so %s was not told", id, wh.url,
		    email);
	else if (rc == -1)
		bp_warn("webhook %s paused; the e-mail to %s failed: %s", id, email, err);
	else
		bp_log(BP_LOG_INFO, "webhook %s paused; %s told", id, email);
	bp_buf_free(&body);
	bp_webhook_clear(&wh);
}

static int
deliver_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *s = w->state;
	const struct bp_webhooks_config *cfg = &w->cfg->webhooks;
	struct bp_webhook_job *jobs = NULL;
	struct bp_webhook_outcome *out = NULL;
	char (*paused)[BP_WEBHOOK_ID_MAX] = NULL;
	size_t max = (size_t)cfg->parallel, npaused = 0, i, ok = 0;
	int64_t now = (int64_t)time(NULL);
	int n, filled, rc = BP_WORKER_FAILED;

	if ((filled = bp_webhook_tokens_fill(w->db, w->cfg, s->chain, TOKENS_MAX)) == -1) {
		snprintf(msg, msglen, "database error while completing token events");
		return BP_WORKER_FAILED;
	}
	/* The lease outlives the attempt: a pass that is still sending keeps its claims. */
	n = bp_webhook_queue_claim(w->db, w->cfg, now, cfg->timeout_ms / 1000 + 60, max, &jobs);
	if (n == -1) {
		snprintf(msg, msglen, "database error while claiming deliveries");
		return BP_WORKER_FAILED;
	}
	if (n > 0) {
		if ((out = calloc((size_t)n, sizeof(*out))) == NULL ||
		    (paused = calloc((size_t)n, sizeof(*paused))) == NULL) {
			snprintf(msg, msglen, "out of memory");
			goto out;
		}
		bp_webhook_send(s->sender, jobs, (size_t)n, out);
		if (bp_webhook_queue_settle(w->db, w->cfg, jobs, out, (size_t)n, paused,
		    &npaused) == -1) {
			snprintf(msg, msglen, "database error while recording %d deliveries", n);
			goto out;
		}
		for (i = 0; i < (size_t)n; i++)
			ok += out[i].ok != 0;
		for (i = 0; i < npaused; i++)
			notify_paused(w, paused[i]);
	}
	if (now - s->pruned_at >= PRUNE_EVERY) {
		if (bp_webhook_queue_prune(w->db, now, cfg->retention_seconds) == -1)
			bp_warn("pruning delivered webhook events failed; will try again");
		s->pruned_at = now;
	}
	snprintf(msg, msglen, "%d sent, %zu acknowledged, %zu paused, %d token events completed",
	    n, ok, npaused, filled);
	rc = (size_t)n == max ? BP_WORKER_MORE : BP_WORKER_IDLE;
out:
	free(paused);
	free(out);
	bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
	return rc;
}

static int
deliver_init(struct bp_worker_ctx *w)
{
	struct state *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	w->state = s;
	if ((s->up = bp_upstream_new(w->cfg)) == NULL ||
	    (s->chain = bp_chain_new(w->cfg, s->up)) == NULL ||
	    (s->sender = bp_webhook_sender_new(w->cfg)) == NULL)
		return -1;
	return 0;
}

static void
deliver_fini(struct bp_worker_ctx *w)
{
	struct state *s = w->state;

	if (s == NULL)
		return;
	bp_webhook_sender_free(s->sender);
	bp_chain_free(s->chain);
	bp_upstream_free(s->up);
	free(s);
	w->state = NULL;
}

static const struct bp_worker_def deliver = {
	"deliver", deliver_init, deliver_pass, deliver_fini,
};

int
main(int argc, char *argv[])
{
	return bp_worker_main(&deliver, argc, argv);
}
