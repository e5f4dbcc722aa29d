/*
 * lib/rpc/rpc_scan.c: the answer scanners (bp_rpc_scan_member, its strict form, the array walker)
 * and the folding of member names that the envelope scanner refuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "rpc/rpc_scan.h"
#include "unit.h"

static void
test_answer_scanners(void)
{
	static const char obj[] =
	    " {\"jsonrpc\":\"2.0\",\"result\":{\"id\":5,\"x\":[1,2]},\"\\u0069d\":\"abc\",\"id\":9}";
	static const char arr[] = "[ {\"id\":0} , 1 ,\"x\",[[]] ]";
	struct bp_rpc_scan_iter it;
	struct bp_rpc_scan_span v, e;
	int n = 0;

	/* The member at the top level, spelt with an escape, first one wins. */
	CU_ASSERT_EQUAL(bp_rpc_scan_member(obj, sizeof(obj) - 1, "id", &v), 1);
	CU_ASSERT_EQUAL(v.len, 5);
	CU_ASSERT(memcmp(obj + v.off, "\"abc\"", 5) == 0);
	CU_ASSERT_EQUAL(bp_rpc_scan_member(obj, sizeof(obj) - 1, "error", &v), 0);
	CU_ASSERT_EQUAL(bp_rpc_scan_member("[1]", 3, "id", &v), -1);
	CU_ASSERT_EQUAL(bp_rpc_scan_member("{\"a\":", 5, "id", &v), -1);
	CU_ASSERT_EQUAL(bp_rpc_scan_member("{}", 2, "id", &v), 0);
	CU_ASSERT_EQUAL(bp_rpc_scan_member("", 0, "id", &v), -1);

	bp_rpc_scan_iter_init(&it, arr, sizeof(arr) - 1);
	while (bp_rpc_scan_iter_next(&it, &e) == 1)
		n++;
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), 0);
	bp_rpc_scan_iter_init(&it, "[]", 2);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), 0);
	bp_rpc_scan_iter_init(&it, "[1,", 3);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), 1);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), -1);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), -1);
	bp_rpc_scan_iter_init(&it, "{\"a\":1}", 7);
	CU_ASSERT_EQUAL(bp_rpc_scan_iter_next(&it, &e), -1);
}

/* Folding: ASCII case and the four letters whose case mappings reach ASCII; nothing else. */
static void
test_fold(void)
{
	static const struct {
		const char	*in;
		const char	*out;	/* NULL: folds to no ASCII name */
	} rows[] = {
		{ "METHOD", "method" },
		{ "mEtHoD", "method" },
		{ "param\xc5\xbf", "params" },		/* U+017F LONG S */
		{ "\xe2\x84\xaa" "ey", "key" },		/* U+212A KELVIN SIGN */
		{ "\xc4\xb1" "d", "id" },			/* U+0131 DOTLESS I */
		{ "\xc4\xb0" "D", "id" },			/* U+0130 DOTTED CAPITAL I */
		{ "m\xc3\xa9thod", NULL },			/* U+00E9: no fold to ASCII */
		{ "\xef\xbd\x8d" "ethod", NULL },		/* U+FF4D FULLWIDTH M */
		{ "\xc5", NULL },				/* a cut sequence */
		{ "", "" },
	};
	char out[16];
	size_t i, n;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		n = bp_rpc_scan_fold(rows[i].in, strlen(rows[i].in), out, sizeof(out));
		if (rows[i].out == NULL || rows[i].out[0] == '\0') {
			CU_ASSERT_EQUAL(n, 0);
		} else {
			CU_ASSERT_EQUAL(n, strlen(rows[i].out));
			CU_ASSERT(n == strlen(rows[i].out) && memcmp(out, rows[i].out, n) == 0);
		}
	}
	/* No room: no fold. */
	CU_ASSERT_EQUAL(bp_rpc_scan_fold("METHOD", 6, out, 5), 0);
}

/* The strict member lookup: -2 whenever a node could read another value. */
static void
test_member_strict(void)
{
	static const struct {
		const char	*obj;
		int		 rc;
		const char	*val;	/* for rc 1 */
	} rows[] = {
		{ "{\"blockNumber\":\"0x1\"}", 1, "\"0x1\"" },
		{ "{\"a\":1, \"blockNumber\" : [2] }", 1, "[2]" },
		{ "{\"a\":1}", 0, NULL },
		{ "{}", 0, NULL },
		{ "{\"blockNumber\":1,\"blockNumber\":2}", -2, NULL },
		{ "{\"blockNumber\":1,\"BlockNumber\":2}", -2, NULL },
		{ "{\"BLOCKNUMBER\":2}", -2, NULL },
		{ "{\"blockNumber\":1,\"bl\\u006FckNumber\":2}", -2, NULL },
		{ "{\"blockNumber\":1,\"blockNumber\\u0000\":2}", 1, "1" },
		{ "{\"blockNumber\":1", -1, NULL },
		{ "[1]", -1, NULL },
	};
	struct bp_rpc_scan_span v;
	size_t i;

	for (i = 0; i < BP_NITEMS(rows); i++) {
		int rc = bp_rpc_scan_member_strict(rows[i].obj, strlen(rows[i].obj), "blockNumber", &v);

		if (rc != rows[i].rc)
			fprintf(stderr, "\nmember strict %s: %d\n", rows[i].obj, rc);
		CU_ASSERT_EQUAL(rc, rows[i].rc);
		if (rc == 1 && rows[i].val != NULL) {
			CU_ASSERT_EQUAL(v.len, strlen(rows[i].val));
			CU_ASSERT(v.len == strlen(rows[i].val) &&
			    memcmp(rows[i].obj + v.off, rows[i].val, v.len) == 0);
		}
	}
	/* The lax form keeps the first, as answers from nodes are read. */
	CU_ASSERT_EQUAL(bp_rpc_scan_member("{\"id\":1,\"id\":2}", 15, "id", &v), 1);
	CU_ASSERT_EQUAL(v.len, 1);
}

BP_UNIT_SUITE(rpc_scan, NULL, NULL,
	{ "answer scanners", test_answer_scanners },
	{ "fold", test_fold },
	{ "member strict", test_member_strict },
)
