/*
 * What the request threads of one process share (lib/core/fcgi.h): many threads at once on the
 * process-wide pieces of lib/: the SHA-256 method fetched once, the secp256k1 context created
 * once, curl's global init under several upstream pools opened at once, the log's request id
 * (per thread); the limits counters are in test_limits.c. make test runs the unit tests in the
 * ThreadSanitizer build too, where a data race fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/log.h"
#include "core/util.h"
#include "evm/secp.h"
#include "net/upstream.h"
#include "unit.h"

#define NTHREADS	8
#define ROUNDS		200

static const unsigned char abc_sha256[32] = {
	0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22,
	0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
	0x15, 0xad,
};

static void *
hash_and_sign(void *arg)
{
	uint8_t priv[32], pub[BP_SECP_PUB_LEN], again[BP_SECP_PUB_LEN];
	unsigned char h[32];
	char id[24];
	int i;

	snprintf(id, sizeof(id), "t%zu", (size_t)arg);
	bp_log_set_request(id);
	for (i = 0; i < ROUNDS; i++) {
		bp_sha256("abc", 3, h);
		if (memcmp(h, abc_sha256, 32) != 0)
			return (void *)1;
	}
	memset(priv, 0, sizeof(priv));
	priv[31] = (uint8_t)(1 + (size_t)arg);
	if (bp_secp_pubkey(priv, pub) != 0 || bp_secp_pubkey(priv, again) != 0 ||
	    memcmp(pub, again, sizeof(pub)) != 0)
		return (void *)1;
	bp_log_set_request(NULL);
	return NULL;
}

static void
test_hash_and_keys_from_threads(void)
{
	CU_ASSERT_EQUAL(bp_unit_threads(NTHREADS, hash_and_sign), 0);
}

static const struct bp_config *config;

static void *
open_pool(void *arg)
{
	struct bp_upstream *u;

	(void)arg;
	if ((u = bp_upstream_new(config)) == NULL)
		return (void *)1;
	bp_upstream_free(u);
	return NULL;
}

static void
test_upstream_pools_at_once(void)
{
	struct bp_config *cfg = calloc(1, sizeof(*cfg));

	CU_ASSERT_FATAL(cfg != NULL);
	config = cfg;
	CU_ASSERT_EQUAL(bp_unit_threads(NTHREADS, open_pool), 0);
	free(cfg);
}

BP_UNIT_SUITE(threads, NULL, NULL,
	{ "SHA-256 and secp256k1 from 8 threads at once", test_hash_and_keys_from_threads },
	{ "upstream pools (curl's global init) opened from 8 threads", test_upstream_pools_at_once },
)
