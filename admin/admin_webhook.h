/*
 * `blockport webhook ...`: the operator's webhook commands (docs/webhooks.md).
 */
#ifndef BP_ADMIN_ADMIN_WEBHOOK_H
#define BP_ADMIN_ADMIN_WEBHOOK_H

struct bp_config;
struct bp_db;

/* Runs `webhook ARGS...` (argv after "webhook"); the exit status. */
int	admin_webhook(const struct bp_config *, struct bp_db *, int argc, char **argv);

#endif
