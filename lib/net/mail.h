/*
 * E-mail to account owners through [smtp] url and from, with libcurl's SMTP (docs/webhooks.md:
 * a webhook paused after its last retry). Without an [smtp] url nothing is sent: the caller
 * logs the message instead.
 */
#ifndef BP_MAIL_H
#define BP_MAIL_H

#include <stddef.h>

struct bp_config;

/*
 * Sends a plain-text message (subject and body: one line and any text, no NULs) to one
 * address. Returns 0 sent, 1 when no SMTP server is configured, -1 with err set.
 */
int	bp_mail_send(const struct bp_config *, const char *to, const char *subject,
	    const char *body, char *err, size_t errlen);

#endif
