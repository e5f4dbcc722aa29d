/*
 * libFuzzer harness for the typed chain reads' reading of what a node sends back
 * (lib/evm/chain.c): bp_chain_parse, the answer to a batch of reads turned into C types, and
 * bp_chain_mc3_decode, Multicall3's aggregate3 return data. The node is not trusted.
 *
 * Input: byte 0 picks the reads: n = 1 + (byte 0 & 3) reads, read i of kind
 * ((byte 0 >> 2) + i) % BP_CHAIN_OP__MAX; the rest, in an exact-size copy so a read past it
 * shows, is both the JSON-RPC answer and the aggregate3 return data. Beyond memory safety and
 * leaks, it checks, aborting on a violation:
 *
 *  - the return value of bp_chain_parse is the number of reads whose err.kind is BP_CHAIN_OK,
 *    and a read that failed holds no bytes;
 *  - a code or call read that succeeded holds bytes exactly when it has more than zero of
 *    them, and no more bytes than half the answer (each byte took two hex digits);
 *  - bp_chain_mc3_decode returns -1 (every read then BP_CHAIN_ERR_DECODE, no bytes) or the
 *    number of reads that are BP_CHAIN_OK, each other one a revert (BP_CHAIN_ERR_RPC, code 3);
 *    no read holds more bytes than the data.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evm/chain.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
check_parse(struct bp_chain_read *r, size_t n, const char *ans, size_t len)
{
	size_t i, ok = 0, got;

	got = bp_chain_parse(r, n, ans, len);
	for (i = 0; i < n; i++) {
		if (r[i].err.kind != BP_CHAIN_OK) {
			if (r[i].bytes != NULL || r[i].nbytes != 0)
				abort();
			continue;
		}
		ok++;
		if ((r[i].bytes != NULL) != (r[i].nbytes > 0) || r[i].nbytes > len / 2)
			abort();
		if (r[i].op != BP_CHAIN_CODE && r[i].op != BP_CHAIN_CALL && r[i].bytes != NULL)
			abort();
	}
	if (ok != got)
		abort();
	bp_chain_reads_free(r, n);
}

static void
check_mc3(struct bp_chain_read *r, size_t n, const uint8_t *data, size_t len)
{
	size_t i, ok = 0;
	int got;

	for (i = 0; i < n; i++)
		r[i].op = BP_CHAIN_CALL;
	got = bp_chain_mc3_decode(data, len, r, n);
	for (i = 0; i < n; i++) {
		if (r[i].nbytes > len || (r[i].bytes != NULL) != (r[i].nbytes > 0))
			abort();
		if (got == -1 && (r[i].err.kind != BP_CHAIN_ERR_DECODE || r[i].bytes != NULL))
			abort();
		if (got >= 0 && r[i].err.kind == BP_CHAIN_OK)
			ok++;
		else if (got >= 0 && (r[i].err.kind != BP_CHAIN_ERR_RPC || r[i].err.code != 3))
			abort();
	}
	if (got >= 0 && (size_t)got != ok)
		abort();
	bp_chain_reads_free(r, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bp_chain_read r[4];
	size_t n, i;
	char *copy;

	if (size < 1)
		return 0;
	n = 1 + (data[0] & 3);
	memset(r, 0, sizeof(r));
	for (i = 0; i < n; i++) {
		r[i].op = (enum bp_chain_op)(((size_t)(data[0] >> 2) + i) % BP_CHAIN_OP__MAX);
		r[i].block = BP_CHAIN_LATEST;
	}
	if ((copy = malloc(size - 1 > 0 ? size - 1 : 1)) == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	check_parse(r, n, copy, size - 1);
	check_mc3(r, n, (const uint8_t *)copy, size - 1);
	free(copy);
	return 0;
}
