/*
 * libFuzzer harness for what /v1/webhooks takes from a client (fcgi/webhooks.c, lib/webhook/webhook.c):
 * the POST and PATCH bodies through bp_webhook_input, and each event type's config through
 * bp_webhook_config_parse. allow_private_urls is on, so no url check reaches the resolver.
 *
 * Beyond memory safety it checks, aborting on a violation:
 *  - every refusal has a reason that starts with a field name of the body (url, chain,
 *    network, event_type, config, status);
 *  - an accepted config's canonical JSON parses, and parses again to the same canonical text
 *    (the form stored is a fixed point), holding only lower-case hex strings;
 *  - the same of format B's filters (bp_webhook_filters_parse) for each type and all of them,
 *    and a refusal names filters; format B's event_type / event_types refusals name theirs.
 *
 *   bash tests/fuzz/run.sh 60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "webhook/webhook.h"
#include "webhook/webhook_b.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fields[] = { "url", "chain", "network", "event_type", "config",
    "status", "filters" };

static void
check_why(const char *why)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strncmp(why, fields[i], strlen(fields[i])) == 0)
			return;
	abort();
}

/* Format B's filters of mask from j: refused naming filters, or canonical and a fixed point. */
static void
fuzz_filters(const cJSON *j, uint32_t mask)
{
	struct bp_buf canon, again;
	char why[512];
	cJSON *c;

	bp_buf_init(&canon, BP_WEBHOOK_CONFIG_MAX);
	bp_buf_init(&again, BP_WEBHOOK_CONFIG_MAX);
	if (bp_webhook_filters_parse(mask, j, &canon, why, sizeof(why)) == -1) {
		if (strncmp(why, "filters", 7) != 0)
			abort();
	} else {
		if ((c = cJSON_Parse(canon.data)) == NULL)
			abort();
		if (bp_webhook_filters_parse(mask, c, &again, why, sizeof(why)) == -1 ||
		    strcmp(again.data, canon.data) != 0)
			abort();
		for (const char *p = canon.data; *p; p++)
			if (*p >= 'A' && *p <= 'F')
				abort();
		cJSON_Delete(c);
	}
	bp_buf_free(&canon);
	bp_buf_free(&again);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t mask;
	static struct bp_config cfg;
	struct bp_webhook_input in;
	struct bp_buf again;
	char *text, why[512];
	cJSON *j, *c;
	enum bp_webhook_type t;

	if (cfg.nnets == 0) {
		strcpy(cfg.nets[0].chain, "ethereum");
		strcpy(cfg.nets[0].network, "devnet");
		cfg.nets[0].testnet = 1;
		cfg.nets[0].rest_default = 1;
		cfg.nnets = 1;
		cfg.allow_private_urls = 1;
	}
	if (size > 65536 || (text = malloc(size + 1)) == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	j = cJSON_Parse(text);
	free(text);
	if (j == NULL)
		return 0;
	for (int create = 0; create < 2; create++) {
		if (bp_webhook_input(&cfg, j, create, 1, BP_WEBHOOK_LOG, &in, why, sizeof(why)) == -1)
			check_why(why);
		bp_buf_free(&in.canon);
	}
	for (t = 0; t < BP_WEBHOOK_TYPE__MAX; t++) {
		bp_buf_init(&again, BP_WEBHOOK_CONFIG_MAX);
		bp_buf_init(&in.canon, BP_WEBHOOK_CONFIG_MAX);
		if (bp_webhook_config_parse(t, j, &in.canon, why, sizeof(why)) == -1)
			check_why(why);
		else {
			if ((c = cJSON_Parse(in.canon.data)) == NULL)
				abort();
			if (bp_webhook_config_parse(t, c, &again, why, sizeof(why)) == -1 ||
			    strcmp(again.data, in.canon.data) != 0)
				abort();
			for (const char *p = in.canon.data; *p; p++)
				if (*p >= 'A' && *p <= 'F')
					abort();
			cJSON_Delete(c);
		}
		bp_buf_free(&again);
		bp_buf_free(&in.canon);
	}
	for (int k = 0; k <= BP_WEBHOOK_B__MAX; k++)
		fuzz_filters(j, k < BP_WEBHOOK_B__MAX ? BP_WEBHOOK_B_BIT(k) :
		    BP_WEBHOOK_B_BIT(BP_WEBHOOK_B__MAX) - 1);
	if (bp_webhook_btypes_input(j, &mask, why, sizeof(why)) == -1)
		check_why(why);
	cJSON_Delete(j);
	return 0;
}
