/*
 * Signed webhook POSTs with curl multi (webhook_send.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "net/fetch.h"
#include "webhook_send.h"
#include "webhook_sign.h"

#define ANSWER_MAX	(16 * 1024)	/* what is kept of a receiver's answer (nothing reads it) */

enum slot_state {
	SLOT_FREE,	/* 0 */
	SLOT_RUNNING,	/* 1: in the multi handle */
	SLOT_DONE,	/* 2: outcome set, waiting to be collected */
};

/* One transfer slot: an easy handle kept for its connection, and the job it carries. */
struct slot {
	CURL			*h;
	struct curl_slist	*hdrs;
	struct bp_fetch_guard	 guard;
	struct bp_fetch_result	 res;
	enum slot_state		 state;
	struct bp_webhook_job	 job;		/* owned while not FREE (its body too) */
	struct bp_webhook_outcome out;
};

struct bp_webhook_sender {
	const struct bp_config	*cfg;
	CURLM			*multi;
	struct slot		*slots;
	size_t			 nslots;
	size_t			 running;	/* slots RUNNING */
	size_t			 used;		/* slots not FREE */
};

struct bp_webhook_sender *
bp_webhook_sender_new(const struct bp_config *cfg)
{
	struct bp_webhook_sender *s;
	size_t i;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->cfg = cfg;
	s->nslots = (size_t)cfg->webhooks.parallel;
	if ((s->multi = curl_multi_init()) == NULL ||
	    (s->slots = calloc(s->nslots, sizeof(*s->slots))) == NULL)
		goto fail;
	curl_multi_setopt(s->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)s->nslots);
	/* Keep every connection between passes: a TLS handshake costs more than a delivery. */
	curl_multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)s->nslots);
	for (i = 0; i < s->nslots; i++)
		if ((s->slots[i].h = curl_easy_init()) == NULL)
			goto fail;
	return s;
fail:
	bp_webhook_sender_free(s);
	return NULL;
}

void
bp_webhook_sender_free(struct bp_webhook_sender *s)
{
	size_t i;

	if (s == NULL)
		return;
	for (i = 0; s->slots != NULL && i < s->nslots; i++) {
		if (s->slots[i].state == SLOT_RUNNING)
			curl_multi_remove_handle(s->multi, s->slots[i].h);
		if (s->slots[i].state != SLOT_FREE)
			free(s->slots[i].job.body);
		curl_slist_free_all(s->slots[i].hdrs);
		bp_fetch_result_free(&s->slots[i].res);
		if (s->slots[i].h != NULL)
			curl_easy_cleanup(s->slots[i].h);
	}
	free(s->slots);
	if (s->multi != NULL)
		curl_multi_cleanup(s->multi);
	free(s);
}

/* Starts sl->job. 0, or -1 with sl->out's error set (the job is then done). */
static int
start(struct bp_webhook_sender *s, struct slot *sl)
{
	const struct bp_webhook_job *job = &sl->job;
	struct bp_webhook_outcome *out = &sl->out;
	const struct bp_webhooks_config *w = &s->cfg->webhooks;
	struct bp_fetch_opts o;
	char sig[BP_WEBHOOK_SIG_MAX], stdsig[BP_WEBHOOK_STDSIG_MAX], line[128];
	int64_t ts = (int64_t)time(NULL);

	memset(out, 0, sizeof(*out));
	out->at = ts;
	memset(&o, 0, sizeof(o));
	o.allow_private = s->cfg->allow_private_urls != 0;
	o.connect_ms = w->timeout_ms;
	o.total_ms = w->timeout_ms;
	o.max_bytes = ANSWER_MAX;
	o.max_redirects = 0;
	o.ca_file = w->ca_file[0] != '\0' ? w->ca_file : NULL;
	o.user_agent = BP_WEBHOOK_USER_AGENT;
	curl_slist_free_all(sl->hdrs);
	sl->hdrs = NULL;
	bp_fetch_result_free(&sl->res);
	curl_easy_reset(sl->h);
	/* Format A signs "<timestamp>.<body>", format B the body alone ("sha256=" + hex). */
	if ((job->format_b ? bp_webhook_sign_body(job->secret, job->body, job->len, sig) :
	    bp_webhook_sign(job->secret, ts, job->body, job->len, sig)) == -1) {
		snprintf(out->error, sizeof(out->error), "signing failed");
		return -1;
	}
	if (bp_webhook_sign_std(job->secret, job->event_id, ts, job->body, job->len,
	    stdsig) == -1) {
		snprintf(out->error, sizeof(out->error), "signing failed");
		return -1;
	}
	if (bp_fetch_arm(sl->h, job->url, &o, &sl->guard, &sl->res) == -1) {
		snprintf(out->error, sizeof(out->error), "%s", sl->res.error);
		return -1;
	}
	if (job->format_b) {
		snprintf(line, sizeof(line), "X-Service-Signature: sha256=%s", sig);
		sl->hdrs = curl_slist_append(sl->hdrs, line);
		snprintf(line, sizeof(line), "X-Webhook-Event: %s", job->event_type);
		sl->hdrs = curl_slist_append(sl->hdrs, line);
		snprintf(line, sizeof(line), "X-Webhook-Idempotency-Key: %s", job->event_id);
		sl->hdrs = curl_slist_append(sl->hdrs, line);
	} else {
		snprintf(line, sizeof(line), "X-Service-Signature: %s", sig);
		sl->hdrs = curl_slist_append(sl->hdrs, line);
		snprintf(line, sizeof(line), "X-Service-Timestamp: %lld", (long long)ts);
		sl->hdrs = curl_slist_append(sl->hdrs, line);
	}
	/* Standard Webhooks, on every delivery: the event's id, so a retry is known as one. */
	snprintf(line, sizeof(line), "webhook-id: %s", job->event_id);
	sl->hdrs = curl_slist_append(sl->hdrs, line);
	snprintf(line, sizeof(line), "webhook-timestamp: %lld", (long long)ts);
	sl->hdrs = curl_slist_append(sl->hdrs, line);
	snprintf(line, sizeof(line), "webhook-signature: %s", stdsig);
	sl->hdrs = curl_slist_append(sl->hdrs, line);
	sl->hdrs = curl_slist_append(sl->hdrs, "Content-Type: application/json");
	sl->hdrs = curl_slist_append(sl->hdrs, "Expect:");	/* no 100-continue round trip */
	if (sl->hdrs == NULL) {
		snprintf(out->error, sizeof(out->error), "out of memory");
		return -1;
	}
	curl_easy_setopt(sl->h, CURLOPT_POST, 1L);
	curl_easy_setopt(sl->h, CURLOPT_POSTFIELDS, job->body);
	curl_easy_setopt(sl->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)job->len);
	curl_easy_setopt(sl->h, CURLOPT_HTTPHEADER, sl->hdrs);
	curl_easy_setopt(sl->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(sl->h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(sl->h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(sl->h, CURLOPT_PRIVATE, sl);
	if (curl_multi_add_handle(s->multi, sl->h) != CURLM_OK) {
		snprintf(out->error, sizeof(out->error), "curl could not start the transfer");
		return -1;
	}
	return 0;
}

/* The outcome of a finished transfer. */
static void
finish(struct slot *sl, CURLcode rc, struct bp_webhook_outcome *out)
{
	bp_fetch_finish(sl->h, rc, &sl->guard, &sl->res);
	out->http_status = rc == CURLE_OK ? sl->res.status : 0;
	out->duration_ms = sl->res.elapsed_ms;
	out->ok = rc == CURLE_OK && out->http_status >= 200 && out->http_status < 300;
	if (rc != CURLE_OK)
		snprintf(out->error, sizeof(out->error), "%s", sl->res.error[0] != '\0' ?
		    sl->res.error : curl_easy_strerror(rc));
	else if (out->http_status >= 300 && out->http_status < 400)
		snprintf(out->error, sizeof(out->error), "redirect %ld (not followed)",
		    out->http_status);
}

size_t
bp_webhook_sender_free_slots(const struct bp_webhook_sender *s)
{
	return s->nslots - s->used;
}

size_t
bp_webhook_sender_busy(const struct bp_webhook_sender *s)
{
	return s->used;
}

int
bp_webhook_sender_start(struct bp_webhook_sender *s, struct bp_webhook_job *job)
{
	struct slot *sl = NULL;
	size_t i;

	for (i = 0; i < s->nslots && sl == NULL; i++)
		if (s->slots[i].state == SLOT_FREE)
			sl = &s->slots[i];
	if (sl == NULL)
		return -1;
	sl->job = *job;
	job->body = NULL;
	s->used++;
	if (start(s, sl) == 0) {
		sl->state = SLOT_RUNNING;
		s->running++;
	} else
		sl->state = SLOT_DONE;
	return 0;
}

size_t
bp_webhook_sender_collect(struct bp_webhook_sender *s, int wait_ms,
    struct bp_webhook_job *jobs, struct bp_webhook_outcome *out, size_t cap)
{
	struct slot *sl;
	CURLMsg *msg;
	size_t n = 0, i;
	int still, left;

	if (s->running > 0) {
		/* Waits only when no transfer has ended yet (info_read would take a message). */
		if (curl_multi_perform(s->multi, &still) == CURLM_OK &&
		    (size_t)still == s->running && wait_ms > 0)
			curl_multi_poll(s->multi, NULL, 0, wait_ms, NULL);
		curl_multi_perform(s->multi, &still);
		while ((msg = curl_multi_info_read(s->multi, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&sl);
			curl_multi_remove_handle(s->multi, msg->easy_handle);
			finish(sl, msg->data.result, &sl->out);
			sl->state = SLOT_DONE;
			s->running--;
		}
	}
	for (i = 0; i < s->nslots && n < cap; i++) {
		sl = &s->slots[i];
		if (sl->state != SLOT_DONE)
			continue;
		jobs[n] = sl->job;
		out[n] = sl->out;
		memset(&sl->job, 0, sizeof(sl->job));
		sl->state = SLOT_FREE;
		s->used--;
		n++;
	}
	return n;
}

int
bp_webhook_send(struct bp_webhook_sender *s, const struct bp_webhook_job *jobs, size_t n,
    struct bp_webhook_outcome *out)
{
	struct bp_webhook_job copy, done;
	struct bp_webhook_outcome o;
	size_t next = 0, finished = 0, k, i;

	while (finished < n) {
		while (next < n && bp_webhook_sender_free_slots(s) > 0) {
			/* The caller keeps its bodies: the slot gets a copy tagged with the index. */
			copy = jobs[next];
			if ((copy.body = malloc(jobs[next].len + 1)) == NULL)
				return -1;
			memcpy(copy.body, jobs[next].body, jobs[next].len + 1);
			copy.attempts = (int64_t)next;
			bp_webhook_sender_start(s, &copy);
			next++;
		}
		while ((k = bp_webhook_sender_collect(s, 100, &done, &o, 1)) > 0) {
			i = (size_t)done.attempts;
			out[i] = o;
			free(done.body);
			finished += k;
		}
	}
	return 0;
}
