/*
 * deliver: sends the webhook events the indexer's matcher recorded (docs/webhooks.md,
 * "Delivery"). A pass:
 *   1. completes the token symbols and decimals of waiting token events (webhook_token.h);
 *   2. takes back the leases of a pass that died; once a minute, prunes delivered events and
 *      old attempts, and expires undelivered events older than [webhooks] event_ttl_seconds
 *      (counted per webhook), before anything is claimed: so what a pass (and --once) sends
 *      is what was due when it began, however long the sending takes;
 *   3. streams: claims due deliveries with a lease (webhook_queue.h: pending, block confirmed,
 *      webhook active, account under its day) for every free slot of the sender, POSTs them
 *      signed with curl multi (webhook_send.h), and settles each as it ends: delivered,
 *      retried later, or the webhook paused after its last retry, whose owner then gets an
 *      e-mail (mail.h). A slow receiver holds its own slot, never the others;
 * Killed at any point, it loses nothing: what was claimed and not settled is sent again, with
 * the same evt_ id, by the next pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/config.h"
#include "core/db.h"
#include "core/log.h"
#include "core/util.h"
#include "core/worker.h"
#include "evm/chain.h"
#include "evm/address.h"
#include "evm/u256.h"
#include "net/mail.h"
#include "nft/nft.h"
#include "net/upstream.h"
#include "webhook/webhook.h"
#include "webhook/webhook_queue.h"
#include "webhook/webhook_send.h"
#include "webhook/webhook_token.h"

#define PRUNE_EVERY	60	/* seconds */
#define TOKENS_MAX	1000	/* events completed per pass */

struct state {
	struct bp_upstream		*up;
	struct bp_chain			*chain;
	struct bp_webhook_sender	*sender;
	int64_t				 pruned_at;
	struct bp_webhook_nft_meta	 meta;		/* NFT_ACTIVITY's, from lib/nft's cache */
};

/* The webhook filler's NFT metadata (webhook_token.h): the NFT cache's, never a fetch. */
static int
nft_meta(void *arg, struct bp_db *db, const char *network, const char *contract,
    const char *token_id, struct bp_buf *out)
{
	const struct bp_config *cfg = arg;
	const struct bp_network *net;
	char chain[BP_NAME_MAX], *dot;
	struct bp_u256 id;
	uint8_t a[20];

	bp_strlcpy(chain, network, sizeof(chain));
	if ((dot = strchr(chain, '.')) == NULL)
		return bp_buf_adds(out, "null");
	*dot = '\0';
	if ((net = bp_config_network(cfg, chain, dot + 1)) == NULL ||
	    bp_addr_parse(contract, strlen(contract), 0, a) == -1 ||
	    bp_u256_from_dec(&id, token_id, strlen(token_id)) == -1)
		return bp_buf_adds(out, "null");
	return bp_nft_cached_metadata(cfg, db, net, a, &id, out);
}

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

/* Settles what the sender finished, then tells the owners of webhooks paused now. 0 or -1. */
static int
settle(struct bp_worker_ctx *w, struct bp_webhook_job *done, struct bp_webhook_outcome *out,
    size_t k, char (*paused)[BP_WEBHOOK_ID_MAX], size_t *acked, size_t *npaused)
{
	size_t np = 0, i;
	int rc;

	rc = bp_webhook_queue_settle(w->db, w->cfg, bp_now_us() / 1000, done, out, k, paused, &np);
	for (i = 0; i < k; i++) {
		*acked += out[i].ok != 0;
		free(done[i].body);
		done[i].body = NULL;
	}
	for (i = 0; rc == 0 && i < np; i++)
		notify_paused(w, paused[i]);
	*npaused += np;
	return rc;
}

/*
 * A pass streams: while slots are free it claims due deliveries for them, and it settles each
 * transfer as it ends, so a slow receiver holds its own slot and nothing else. It claims for at
 * most CLAIM_FOR_US, then lets what is in flight finish (at most timeout_ms). A claim costs a
 * dozen statements however many rows it takes, so while transfers are in flight it waits for
 * a batch of free slots (CLAIM_SLOTS, an eighth of them), and after a claim that found less
 * than it asked (nothing more is due) it waits COLLECT_MS before asking again.
 */
#define CLAIM_FOR_US	(5 * 1000000)
#define CLAIM_SLOTS(max)	((max) / 8 > 0 ? (max) / 8 : 1)
#define COLLECT_MS	20
#define SETTLE_BATCH	64		/* outcomes per transaction at most ... */
#define SETTLE_US	(20 * 1000)	/* ... or what ended within this long */

static int
deliver_pass(struct bp_worker_ctx *w, char *msg, size_t msglen)
{
	struct state *s = w->state;
	const struct bp_webhooks_config *cfg = &w->cfg->webhooks;
	struct bp_webhook_job *jobs, *done = NULL;
	struct bp_webhook_outcome *out = NULL;
	char (*paused)[BP_WEBHOOK_ID_MAX] = NULL;
	size_t max = (size_t)cfg->parallel, claimed = 0, acked = 0, npaused = 0, k = 0, i, nfree;
	int64_t start = bp_mono_us(), first = 0, dry = 0;
	int n, filled, claiming = 1, failed = 0, rc = BP_WORKER_FAILED;

	if ((filled = bp_webhook_tokens_fill(w->db, w->cfg, s->chain, &s->meta,
	    TOKENS_MAX)) == -1) {
		snprintf(msg, msglen, "database error while completing token events");
		return BP_WORKER_FAILED;
	}
	if ((done = calloc(max, sizeof(*done))) == NULL ||
	    (out = calloc(max, sizeof(*out))) == NULL ||
	    (paused = calloc(max, sizeof(*paused))) == NULL) {
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	if (bp_webhook_queue_release(w->db) == -1) {
		snprintf(msg, msglen, "database error while taking back leases");
		goto out;
	}
	if ((int64_t)time(NULL) - s->pruned_at >= PRUNE_EVERY) {
		if (bp_webhook_queue_prune(w->db, (int64_t)time(NULL), cfg->retention_seconds,
		    cfg->event_ttl_seconds) == -1)
			bp_warn("pruning and expiring webhook events failed; will try again");
		s->pruned_at = (int64_t)time(NULL);
	}
	for (;;) {
		nfree = bp_webhook_sender_free_slots(s->sender);
		if (claiming && nfree > 0 && (nfree >= CLAIM_SLOTS(max) ||
		    bp_webhook_sender_busy(s->sender) == 0) &&
		    (dry == 0 || bp_mono_us() - dry >= COLLECT_MS * 1000)) {
			/* The lease outlives the attempt: a pass still sending keeps its claims. */
			n = bp_webhook_queue_claim(w->db, w->cfg, (int64_t)time(NULL),
			    cfg->timeout_ms / 1000 + 60, nfree, &jobs);
			if (n == -1) {
				failed = 1;
				claiming = 0;
			}
			for (i = 0; n > 0 && i < (size_t)n; i++)
				bp_webhook_sender_start(s->sender, &jobs[i]);
			bp_webhook_jobs_free(jobs, n > 0 ? (size_t)n : 0);
			claimed += n > 0 ? (size_t)n : 0;
			dry = n >= 0 && (size_t)n < nfree ? bp_mono_us() : 0;
			if (bp_worker_stopping() || bp_mono_us() - start > CLAIM_FOR_US)
				claiming = 0;
		}
		if (bp_webhook_sender_busy(s->sender) == 0 && k == 0)
			break;		/* nothing due, nothing in flight, nothing to record */
		if (k < max) {
			i = bp_webhook_sender_collect(s->sender, COLLECT_MS, done + k, out + k,
			    max - k);
			if (k == 0 && i > 0)
				first = bp_mono_us();
			k += i;
		}
		/* Outcomes are recorded in batches: one transaction for many, soon after they end. */
		if (k > 0 && (k >= SETTLE_BATCH || bp_mono_us() - first >= SETTLE_US ||
		    bp_webhook_sender_busy(s->sender) == 0)) {
			if (settle(w, done, out, k, paused, &acked, &npaused) == -1) {
				/* Unsettled rows keep their lease: the next pass sends them again. */
				failed = 1;
				claiming = 0;
			}
			k = 0;
		}
	}
	snprintf(msg, msglen, "%zu sent, %zu acknowledged, %zu paused, %d token events completed%s",
	    claimed, acked, npaused, filled, failed ? "; database errors" : "");
	rc = failed ? BP_WORKER_FAILED : claimed > 0 ? BP_WORKER_MORE : BP_WORKER_IDLE;
out:
	free(paused);
	free(out);
	free(done);
	return rc;
}

static int
deliver_init(struct bp_worker_ctx *w)
{
	struct state *s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	w->state = s;
	s->meta.fn = nft_meta;
	s->meta.arg = (void *)w->cfg;
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
	"deliver", deliver_init, deliver_pass, deliver_fini, BP_DB_WAKE_HEADS,
};

int
main(int argc, char *argv[])
{
	return bp_worker_main(&deliver, argc, argv);
}
