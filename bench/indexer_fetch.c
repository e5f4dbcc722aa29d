/*
 * The baseline of bench/indexer.sh: a plain loop that fetches blocks [from, to] with the same
 * JSON-RPC batches the indexer sends (eth_getBlockByNumber(n, true) for each block, eth_getLogs
 * over pieces of logs_range blocks, and eth_getBlockReceipts(n) for each block when receipts is
 * 1), through the same client (lib/jsonrpc, lib/upstream), and throws the answers away. What the
 * indexer does beyond this (checking, decoding, SQLite) is its overhead.
 *
 *   indexer_fetch CONFIG FROM TO BATCH LOGS_RANGE RECEIPTS
 *
 * Prints "blocks N logs N seconds S" for the first evm network of CONFIG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/hex.h"
#include "core/util.h"
#include "net/upstream.h"
#include "rpc/jsonrpc.h"

static cJSON *
block_params(int64_t n, int full)
{
	char q[BP_HEX_QUANTITY64_MAX];
	cJSON *p = cJSON_CreateArray();

	bp_hex_quantity_encode((uint64_t)n, q, sizeof(q));
	cJSON_AddItemToArray(p, cJSON_CreateString(q));
	if (full >= 0)
		cJSON_AddItemToArray(p, cJSON_CreateBool(full));
	return p;
}

static cJSON *
logs_params(int64_t from, int64_t to)
{
	char f[BP_HEX_QUANTITY64_MAX], t[BP_HEX_QUANTITY64_MAX];
	cJSON *p = cJSON_CreateArray(), *o = cJSON_CreateObject();

	bp_hex_quantity_encode((uint64_t)from, f, sizeof(f));
	bp_hex_quantity_encode((uint64_t)to, t, sizeof(t));
	cJSON_AddStringToObject(o, "fromBlock", f);
	cJSON_AddStringToObject(o, "toBlock", t);
	cJSON_AddItemToArray(p, o);
	return p;
}

int
main(int argc, char *argv[])
{
	int64_t from, to, batch, range, receipts, b, f, blocks = 0, logs = 0, t0;
	const struct bp_network *net = NULL;
	struct bp_rpc_client_call *calls;
	struct bp_upstream *up;
	struct bp_config *cfg;
	char err[512];
	size_t i, n;

	if (argc != 7 || bp_parse_int64(argv[2], 0, INT64_MAX, &from) == -1 ||
	    bp_parse_int64(argv[3], 0, INT64_MAX, &to) == -1 ||
	    bp_parse_int64(argv[4], 1, 1000, &batch) == -1 ||
	    bp_parse_int64(argv[5], 1, 100000, &range) == -1 ||
	    bp_parse_int64(argv[6], 0, 1, &receipts) == -1) {
		fprintf(stderr, "usage: indexer_fetch CONFIG FROM TO BATCH LOGS_RANGE RECEIPTS\n");
		return 2;
	}
	if ((cfg = bp_config_load(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "indexer_fetch: %s\n", err);
		return 1;
	}
	for (i = 0; i < cfg->nnets && net == NULL; i++)
		if (cfg->nets[i].kind == BP_CHAIN_EVM)
			net = &cfg->nets[i];
	if (net == NULL || (up = bp_upstream_new(cfg)) == NULL)
		return 1;
	if ((calls = calloc((size_t)(batch * 2 + batch / range + 2), sizeof(*calls))) == NULL)
		return 1;
	t0 = bp_mono_us();
	for (b = from; b <= to; b += batch) {
		int64_t e = b + batch - 1 < to ? b + batch - 1 : to;

		n = 0;
		for (f = b; f <= e; f++) {
			calls[n].method = "eth_getBlockByNumber";
			calls[n++].params = block_params(f, 1);
		}
		for (f = b; f <= e; f += range) {
			calls[n].method = "eth_getLogs";
			calls[n++].params = logs_params(f, f + range - 1 < e ? f + range - 1 : e);
		}
		for (f = b; receipts && f <= e; f++) {
			calls[n].method = "eth_getBlockReceipts";
			calls[n++].params = block_params(f, -1);
		}
		if (bp_rpc_client_batch(up, net, calls, n) != n) {
			fprintf(stderr, "indexer_fetch: a call of blocks %lld-%lld failed\n",
			    (long long)b, (long long)e);
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (strcmp(calls[i].method, "eth_getBlockByNumber") == 0)
				blocks++;
			else if (strcmp(calls[i].method, "eth_getLogs") == 0)
				logs += cJSON_GetArraySize(calls[i].result);
			cJSON_Delete(calls[i].result);
			cJSON_Delete((cJSON *)calls[i].params);
		}
	}
	printf("blocks %lld logs %lld seconds %.3f\n", (long long)blocks, (long long)logs,
	    (double)(bp_mono_us() - t0) / 1e6);
	free(calls);
	bp_upstream_free(up);
	bp_config_free(cfg);
	return 0;
}
