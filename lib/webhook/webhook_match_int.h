/*
 * The matcher's own state, shared by its two halves: webhook_match.c (format A, the block's
 * walk, the fences) and webhook_match_b.c (format B). Not for other modules.
 */
#ifndef BP_WEBHOOK_MATCH_INT_H
#define BP_WEBHOOK_MATCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "evm/blocks.h"
#include "evm/u256.h"
#include "index/index_store.h"
#include "webhook.h"

#define EVT_ID_MAX	29		/* "evt_" + 24 hex digits + NUL */
#define BODY_MAX	(1024 * 1024)	/* an event's envelope; a bigger log is not sent */
#define SOURCE_MAX	160
#define TOPICS		4

/* A list of addresses (20 bytes) or hashes (32 bytes) from a webhook's config. */
struct list {
	uint8_t		*v;
	size_t		 n, w;
};

/*
 * An account of the block's webhooks and its fences ([plan] webhook_events_day and
 * webhook_backlog), its day's events read at its first event of the block.
 */
struct acct {
	int64_t			 id;
	int64_t			 day_cap, backlog_cap;	/* 0: none */
	int64_t			 today;		/* recorded today before this block; -1 unread */
	int64_t			 added;		/* recorded in this block */
};

/* One webhook of the block's network, its config parsed. */
struct filter {
	char			 id[BP_WEBHOOK_ID_MAX];
	char			 chain[BP_NAME_MAX];
	int64_t			 account_id;
	size_t			 acct;		/* its index in match.acct */
	int64_t			 backlog;	/* pending before this block; -1 unread */
	int64_t			 added, dropped_day, dropped_backlog;	/* in this block */
	enum bp_webhook_type	 type;
	struct list		 addrs, contracts, hashes;
	struct list		 topics[TOPICS];	/* n == 0: any topic at that position */
	size_t			 ntopics;
	/* Format B (webhook_b.h): its types, and the filters format A does not have. */
	uint32_t		 btypes;		/* 0: format A */
	struct list		 selectors, btopics;	/* 4 bytes; topic 0 hashes */
	int			 has_min;
	struct bp_u256		 min;
};

/* A transaction of the block, as the store wrote it. */
struct tx {
	char		hash[BP_BLOCKS_HASH_STR];
	int64_t		index;
	uint8_t		from[20], to[20];
	int		has_to;
	char		value[80];
	int		status;		/* 1, 0, or -1 unknown */
	int64_t		gas_used;	/* -1 unknown */
};

/* What a block's matching works with. */
struct match {
	struct bp_db			*db;
	const struct bp_config		*cfg;
	const char			*network;
	int64_t				 day;		/* UTC day of the block's events */
	struct acct			*acct;
	size_t				 nacct;
	const struct bp_index_store_block	*blk;
	struct filter			*f;
	size_t				 nf;
	struct tx			*tx;
	size_t				 ntx, txcap;
	int				 nomem;		/* keep_tx ran out of memory */
	struct bp_buf			 data, body;
	char				 now[32];
	int64_t				 chain_id;	/* format B's envelope */
	const cJSON			*pending;	/* PENDING_TRANSACTION's transactions */
};

/* A hex string or an array of them (w bytes each) from a stored config into l; 0 or -1. */
int	bp_webhook_match_list(const cJSON *j, size_t w, struct list *l);
/* Whether l holds v (l->w bytes). */
int	bp_webhook_match_has(const struct list *l, const uint8_t *v);
/* Whether f may record one more event (its account's day, its backlog); 1, 0 (counted), -1. */
int	bp_webhook_match_room(struct match *m, struct filter *f);
/* The block's transaction of hash, as stored; NULL when not there. */
const struct tx *bp_webhook_match_tx(const struct match *m, const char *hash);
/* The receipt's effectiveGasPrice of transaction index i, decimal; "" when unknown. */
void	bp_webhook_match_price(const struct match *m, int64_t i, char *out, size_t cap);
/*
 * Records m->body, the envelope of event id of f, named by source (token, event_type as
 * struct bp_webhook_event has them), counting it. 0 or -1.
 */
int	bp_webhook_match_record(struct match *m, struct filter *f, const char *id,
	    const char *source, const char *token, const char *event_type);
/* A new evt_ id into id; 0 or -1. */
int	bp_webhook_match_event_id(char id[EVT_ID_MAX]);
/* Format B: the events of f in the block (webhook_match_b.c). 0 or -1. */
int	bp_webhook_match_b(struct match *m, struct filter *f);
/* Format B: PENDING_TRANSACTION of f over m->pending (webhook_match_b.c). 0 or -1. */
int	bp_webhook_match_b_pending(struct match *m, struct filter *f);
/* Format B: reads f's filters from its stored config (parsed JSON j). 0 or -1. */
int	bp_webhook_match_b_filters(struct filter *f, const cJSON *j);

#endif
