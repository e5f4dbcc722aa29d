/*
 * E-mail with libcurl's SMTP (mail.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/util.h"
#include "mail.h"

#define MAIL_MAX	(64 * 1024)

struct reader {
	const char	*p;
	size_t		 left;
};

static size_t
on_read(char *dst, size_t size, size_t nmemb, void *arg)
{
	struct reader *r = arg;
	size_t n = size * nmemb;

	if (n > r->left)
		n = r->left;
	memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
	return n;
}

/* Whether s is safe in a header line: no CR, LF or NUL-free control characters. */
static int
header_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return 0;
	return 1;
}

int
bp_mail_send(const struct bp_config *cfg, const char *to, const char *subject,
    const char *body, char *err, size_t errlen)
{
	const struct bp_webhooks_config *w = &cfg->webhooks;
	struct curl_slist *rcpt = NULL;
	struct bp_buf msg;
	struct reader rd;
	char date[64], addr[300];
	time_t now = time(NULL);
	struct tm tm;
	CURLcode rc;
	CURL *h = NULL;
	int ret = -1;

	err[0] = '\0';
	if (w->smtp_url[0] == '\0')
		return 1;
	if (!header_safe(to) || !header_safe(subject) || strchr(to, '<') || strchr(to, '>')) {
		snprintf(err, errlen, "bad recipient or subject");
		return -1;
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	bp_buf_init(&msg, MAIL_MAX);
	if (bp_buf_printf(&msg, "Date: %s\r\nFrom: <%s>\r\nTo: <%s>\r\nSubject: %s\r\n"
	    "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n", date,
	    w->smtp_from, to, subject) == -1)
		goto out;
	/* The body, lines ending in CRLF and a leading dot doubled (RFC 5321 4.5.2). */
	for (const char *p = body; *p != '\0'; p++) {
		if ((p == body || p[-1] == '\n') && *p == '.' && bp_buf_adds(&msg, ".") == -1)
			goto out;
		if (*p == '\n' && (p == body || p[-1] != '\r') && bp_buf_adds(&msg, "\r") == -1)
			goto out;
		if (bp_buf_add(&msg, p, 1) == -1)
			goto out;
	}
	if (bp_buf_adds(&msg, "\r\n") == -1)
		goto out;
	snprintf(addr, sizeof(addr), "<%s>", to);
	if ((h = curl_easy_init()) == NULL || (rcpt = curl_slist_append(NULL, addr)) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rd.p = msg.data;
	rd.left = msg.len;
	snprintf(addr, sizeof(addr), "<%s>", w->smtp_from);
	curl_easy_setopt(h, CURLOPT_URL, w->smtp_url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl_easy_setopt(h, CURLOPT_MAIL_FROM, addr);
	curl_easy_setopt(h, CURLOPT_MAIL_RCPT, rcpt);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(h, CURLOPT_READDATA, &rd);
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 30000L);
	if ((rc = curl_easy_perform(h)) != CURLE_OK)
		snprintf(err, errlen, "%s: %s", w->smtp_url, curl_easy_strerror(rc));
	else
		ret = 0;
out:
	if (ret == -1 && err[0] == '\0')
		snprintf(err, errlen, "message too large");
	curl_slist_free_all(rcpt);
	if (h != NULL)
		curl_easy_cleanup(h);
	bp_buf_free(&msg);
	return ret;
}
