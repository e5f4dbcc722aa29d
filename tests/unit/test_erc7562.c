/*
 * The ERC-7562 rules engine (lib/bundler/erc7562.c) on traces as anvil records them: each case
 * writes the struct-log steps of a validation (depth, op, stack bottom to top) as debug_traceCall
 * answers them, for an op of the account A, the paymaster P and the factory F on the EntryPoint E,
 * and checks the verdict: the rule, the code (-32502, -32505 when stake would allow it), or a pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundler/erc7562.h"
#include "bundler/erc7562_quick.h"
#include "core/buf.h"
#include "evm/address.h"
#include "unit.h"

#define E	"0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789"
#define A	"0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define P	"0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define F	"0xcccccccccccccccccccccccccccccccccccccccc"
#define X	"0xdddddddddddddddddddddddddddddddddddddddd"
#define SC	"0x7fc98430eaedbb6070b35b39d798725049088348"	/* v0.6's SenderCreator */
#define E07	"0x0000000071727de22e5e9d8baf0edac6f37da032"	/* EntryPoint v0.7 */
#define SC07	"0xefc2c1444ebcc4db75e7613d20c6a62ff67a167c"	/* v0.7's SenderCreator */

/* The EntryPoint's call of an entity: CALL(gas, to, 0, 0, 4, 0, 0), stack bottom to top. */
#define EP_CALLS(to)	"1 CALL 0x0 0x0 0x4 0x0 0x0 " to " 0xffff"

/* The trace of lines "DEPTH OP [STACK...] [!ERROR]" as debug_traceCall's answer, in b. */
static const char *
trace(struct bp_buf *b, const char *const *lines)
{
	char tok[128];
	const char *p;
	int first, n, k, depth;

	bp_buf_reset(b);
	bp_buf_adds(b, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"failed\":true,\"structLogs\":[");
	for (k = 0; lines[k] != NULL; k++) {
		p = lines[k];
		sscanf(p, "%d %127s%n", &depth, tok, &n);	/* test data only */
		bp_buf_printf(b, "%s{\"pc\":0,\"op\":\"%s\",\"gas\":100000,\"gasCost\":3,\"depth\":%d,"
		    "\"stack\":[", k ? "," : "", tok, depth);
		p += n;
		first = 1;
		while (sscanf(p, " %127s%n", tok, &n) == 1) {
			p += n;
			if (tok[0] == '!') {
				bp_buf_printf(b, "],\"error\":\"%s\"", tok + 1);
				first = -1;
				break;
			}
			bp_buf_printf(b, "%s\"%s\"", first ? "" : ",", tok);
			first = 0;
		}
		bp_buf_adds(b, first == -1 ? "}" : "]}");
	}
	bp_buf_adds(b, "]}}");
	bp_buf_add(b, "", 1);
	return b->data;
}

static void
input(struct bp_erc7562_input *in, int factory, int paymaster)
{
	memset(in, 0, sizeof(*in));
	bp_addr_parse(E, 42, 0, in->entry_point);
	bp_addr_parse(A, 42, 0, in->addr[BP_ERC7562_ACCOUNT]);
	in->present[BP_ERC7562_ACCOUNT] = 1;
	bp_addr_parse(F, 42, 0, in->addr[BP_ERC7562_FACTORY]);
	in->present[BP_ERC7562_FACTORY] = factory;
	bp_addr_parse(P, 42, 0, in->addr[BP_ERC7562_PAYMASTER]);
	in->present[BP_ERC7562_PAYMASTER] = paymaster;
}

/* Runs the engine on lines; the verdict's code, with its message in v. */
static int
judge(const struct bp_erc7562_input *in, const char *const *lines, struct bp_erc7562_verdict *v)
{
	struct bp_buf b;
	int rc;

	bp_buf_init(&b, 1 << 20);
	trace(&b, lines);
	rc = bp_erc7562_check(b.data, strlen(b.data), in, v);
	bp_buf_free(&b);
	return rc == -1 ? 1 : v->code;
}

static void
test_opcodes(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	const char *ts[] = { "1 NUMBER", "1 TIMESTAMP", EP_CALLS(A), "2 TIMESTAMP", "2 STOP",
	    "1 STOP", NULL };
	const char *gas_bad[] = { EP_CALLS(A), "2 GAS", "2 POP 0x1", "2 STOP", "1 STOP", NULL };
	const char *gas_ok[] = { EP_CALLS(A), "2 GAS", "2 STATICCALL 0x0 0x0 0x0 0x0 0x1 0x5",
	    "2 STOP", "1 STOP", NULL };
	const char *bal[] = { EP_CALLS(P), "2 SELFBALANCE", "2 STOP", "1 STOP", NULL };
	const char *oog[] = { EP_CALLS(P), "2 SLOAD 0x1 !OutOfGas", "1 STOP", NULL };
	const char *nocode[] = { EP_CALLS(A), "2 CALL 0x0 0x0 0x0 0x0 0x0 " X " 0x5", "2 STOP",
	    "1 STOP", NULL };
	const char *value[] = { EP_CALLS(A), "2 CALL 0x0 0x0 0x0 0x0 0x1 " X " 0x5", "3 STOP",
	    "2 STOP", "1 STOP", NULL };
	const char *selfcall[] = { "1 STATICCALL 0x0 0x0 0x4 0x0 " E " 0xff", "2 EXTCODESIZE " A,
	    "2 REVERT 0x0 0x0", "1 NUMBER", NULL };

	input(&in, 0, 1);
	CU_ASSERT_EQUAL(judge(&in, ts, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-011] account uses banned opcode TIMESTAMP");
	CU_ASSERT_EQUAL(judge(&in, gas_bad, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-012");
	CU_ASSERT_EQUAL(judge(&in, gas_ok, &v), 0);
	/* OP-080: BALANCE and SELFBALANCE only with stake. */
	CU_ASSERT_EQUAL(judge(&in, bal, &v), -32505);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-080");
	in.staked[BP_ERC7562_PAYMASTER] = 1;
	CU_ASSERT_EQUAL(judge(&in, bal, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, oog, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-020] paymaster ran out of gas in validation");
	CU_ASSERT_EQUAL(judge(&in, nocode, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-041");
	CU_ASSERT_EQUAL(judge(&in, value, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-061");
	/* The EntryPoint's own code (NUMBER at depth 1, its call to itself) is not judged. */
	CU_ASSERT_EQUAL(judge(&in, selfcall, &v), 0);
}

static void
test_create2(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	/* SenderCreator -> factory -> CREATE2 of the sender, whose constructor writes its storage. */
	const char *once[] = { EP_CALLS(SC), "2 CALL 0x0 0x0 0x4 0x0 0x0 " F " 0xff",
	    "3 CREATE2 0x0 0x20 0x0 0x0", "4 SSTORE 0x1 0x0", "4 RETURN 0x0 0x0", "3 POP " A,
	    "3 RETURN 0x0 0x0", "2 RETURN 0x0 0x0", EP_CALLS(A), "2 SLOAD 0x0", "2 STOP", "1 STOP",
	    NULL };
	const char *twice[] = { EP_CALLS(SC), "2 CALL 0x0 0x0 0x4 0x0 0x0 " F " 0xff",
	    "3 CREATE2 0x0 0x20 0x0 0x0", "4 RETURN 0x0 0x0", "3 CREATE2 0x1 0x20 0x0 0x0",
	    "4 RETURN 0x0 0x0", "3 STOP", NULL };
	const char *other[] = { EP_CALLS(SC), "2 CALL 0x0 0x0 0x4 0x0 0x0 " F " 0xff",
	    "3 CREATE2 0x0 0x20 0x0 0x0", "4 RETURN 0x0 0x0", "3 POP " X, "3 STOP", NULL };
	const char *create[] = { EP_CALLS(SC), "2 CALL 0x0 0x0 0x4 0x0 0x0 " F " 0xff",
	    "3 CREATE 0x0 0x20 0x0", "4 RETURN 0x0 0x0", "3 STOP", NULL };
	const char *acc[] = { EP_CALLS(A), "2 CREATE2 0x0 0x20 0x0 0x0", "3 STOP", NULL };

	input(&in, 1, 0);
	CU_ASSERT_EQUAL(judge(&in, once, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, twice, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-031] factory uses CREATE2 more than once");
	CU_ASSERT_EQUAL(judge(&in, other, &v), -32502);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.message, "not the sender"));
	CU_ASSERT_EQUAL(judge(&in, create, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-011] factory uses banned opcode CREATE");
	CU_ASSERT_EQUAL(judge(&in, acc, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-031");
}

static void
test_storage(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	const char *own[] = { EP_CALLS(P), "2 SLOAD 0x7", "2 STOP", "1 STOP", NULL };
	const char *x_write[] = { EP_CALLS(P), "2 CALL 0x0 0x0 0x0 0x0 0x0 " X " 0x5",
	    "3 SSTORE 0x1 0x1", "3 STOP", "2 STOP", "1 STOP", NULL };
	const char *x_read[] = { EP_CALLS(P), "2 STATICCALL 0x0 0x0 0x0 0x0 " X " 0x5",
	    "3 SLOAD 0x1", "3 STOP", "2 STOP", "1 STOP", NULL };
	/* balanceOf(A) in a token X: keccak(A . 0) and the slot right after it. */
	const char *assoc[] = { EP_CALLS(P), "2 STATICCALL 0x0 0x0 0x0 0x0 " X " 0x5",
	    "3 MSTORE " A " 0x0", "3 MSTORE 0x0 0x20", "3 KECCAK256 0x40 0x0",
	    "3 SLOAD 0x1234", "3 SLOAD 0x1235", "3 STOP", "2 STOP", "1 STOP", NULL };
	const char *far[] = { EP_CALLS(P), "2 STATICCALL 0x0 0x0 0x0 0x0 " X " 0x5",
	    "3 MSTORE " A " 0x0", "3 KECCAK256 0x40 0x0", "3 POP 0x1234", "3 SSTORE 0x0 0x12b5",
	    "3 STOP",
	    "2 STOP", "1 STOP", NULL };
	/* The account's storage, and the EntryPoint's (deposits), are anyone's. */
	const char *free_[] = { EP_CALLS(P), "2 STATICCALL 0x0 0x0 0x0 0x0 " A " 0x5",
	    "3 SLOAD 0x0", "3 STOP", "2 SSTORE 0x0 " A, "2 STOP", "1 SSTORE 0x1 0x1", NULL };

	input(&in, 0, 1);
	CU_ASSERT_EQUAL(judge(&in, own, &v), -32505);
	CU_ASSERT_STRING_EQUAL(v.rule, "STO-031");
	CU_ASSERT_PTR_NOT_NULL(strstr(v.message, "unstaked paymaster accesses its own storage"));
	CU_ASSERT_EQUAL(judge(&in, x_write, &v), -32502);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.message, "[STO-033] paymaster writes the storage of " X));
	CU_ASSERT_EQUAL(judge(&in, x_read, &v), -32505);
	CU_ASSERT_STRING_EQUAL(v.rule, "STO-033");
	CU_ASSERT_EQUAL(judge(&in, assoc, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, far, &v), -32502);	/* 0x12b5 - 0x1234 = 129: not A's */
	CU_ASSERT_EQUAL(judge(&in, free_, &v), 0);
	in.staked[BP_ERC7562_PAYMASTER] = 1;
	CU_ASSERT_EQUAL(judge(&in, own, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, x_read, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, x_write, &v), -32502);	/* even staked */
	/* While the account is deployed by an unstaked factory, its associated slots need stake. */
	input(&in, 1, 1);
	CU_ASSERT_EQUAL(judge(&in, assoc, &v), -32505);
	CU_ASSERT_STRING_EQUAL(v.rule, "STO-021");
}

static void
test_entry_point(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	/* The callee's first CALLDATALOAD(0) shows the selector the entity called. */
	const char *handle_ops[] = { EP_CALLS(A), "2 CALL 0x0 0x0 0x84 0x0 0x0 " E " 0x5",
	    "3 CALLDATALOAD 0x0",
	    "3 SHR 0x1fad948c00000000000000000000000000000000000000000000000000000000",
	    "3 STOP", "2 STOP", "1 STOP", NULL };
	const char *deposit[] = { EP_CALLS(A), "2 CALL 0x0 0x0 0x24 0x0 0x10 " E " 0x5",
	    "3 CALLDATALOAD 0x0",
	    "3 SHR 0xb760faf9000000000000000000000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "3 SSTORE 0x5 0x1", "3 STOP", "2 STOP", "1 STOP", NULL };
	const char *prefund[] = { EP_CALLS(A), "2 CALL 0x0 0x0 0x0 0x0 0x10 " E " 0x5",
	    "3 STOP", "2 STOP", "1 STOP", NULL };
	const char *pm_prefund[] = { EP_CALLS(P), "2 CALL 0x0 0x0 0x0 0x0 0x10 " E " 0x5",
	    "3 STOP", "2 STOP", "1 STOP", NULL };

	input(&in, 0, 1);
	CU_ASSERT_EQUAL(judge(&in, handle_ops, &v), -32502);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.message, "[OP-054] account calls the EntryPoint's handleOps"));
	CU_ASSERT_EQUAL(judge(&in, deposit, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, prefund, &v), 0);
	CU_ASSERT_EQUAL(judge(&in, pm_prefund, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.rule, "OP-053");
}

static void
test_hostile(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	static const char *const bad[] = {
		"", "not json", "{}", "{\"result\":{\"structLogs\":7}}",
		"{\"structLogs\":[{\"depth\":1}]}",
		"{\"structLogs\":[{\"op\":\"CALL\",\"depth\":1,\"stack\":[]}]}",
		"{\"structLogs\":[{\"op\":\"STOP\",\"depth\":5000}]}",
		"{\"structLogs\":[{\"op\":\"STOP\",\"depth\":3}]}",
	};
	size_t i;

	input(&in, 0, 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(bp_erc7562_check(bad[i], strlen(bad[i]), &in, &v), -1);
	CU_ASSERT_EQUAL(bp_erc7562_check("{\"structLogs\":[]}", 17, &in, &v), 0);
	CU_ASSERT_EQUAL(v.code, 0);
}

/* The quick pass on the steps of lines (no stacks), a call tree and a prestate (JSON texts). */
static int
quick(const struct bp_erc7562_input *in, const char *const *lines, const char *calls,
    const char *prestate)
{
	struct bp_buf b;
	cJSON *st, *c, *p;
	int rc;

	bp_buf_init(&b, 1 << 20);
	st = cJSON_Parse(trace(&b, lines));
	c = cJSON_Parse(calls);
	p = cJSON_Parse(prestate);
	rc = bp_erc7562_quick(cJSON_GetObjectItemCaseSensitive(st, "result"), c, p, in);
	cJSON_Delete(st);
	cJSON_Delete(c);
	cJSON_Delete(p);
	bp_buf_free(&b);
	return rc;
}

#define CALLS(inner)	"{\"type\":\"CALL\",\"from\":\"0x0000000000000000000000000000000000000000\"," \
	"\"to\":\"" E "\",\"calls\":[{\"type\":\"CALL\",\"from\":\"" E "\",\"to\":\"" A "\"," \
	"\"value\":\"0x0\",\"input\":\"0x\",\"calls\":[" inner "]}]}"
#define PRESTATE(more)	"{\"0x0000000000000000000000000000000000000000\":{\"balance\":\"0x1\"}," \
	"\"0x0000000000000000000000000000000000000001\":{\"balance\":\"0x0\"}," \
	"\"" E "\":{\"code\":\"0x60\"},\"" A "\":{\"code\":\"0x60\"}" more "}"
#define ECRECOVER	"{\"type\":\"STATICCALL\",\"from\":\"" A "\"," \
	"\"to\":\"0x0000000000000000000000000000000000000001\",\"input\":\"0x\"}"
#define X_CALL	"{\"type\":\"CALL\",\"from\":\"" A "\",\"to\":\"" X "\",\"value\":\"0x0\"," \
	"\"input\":\"0x\"}"
#define EP_HANDLE_OPS	"{\"type\":\"CALL\",\"from\":\"" A "\",\"to\":\"" E "\"," \
	"\"value\":\"0x5\",\"input\":\"0x1fad948c\"}"
#define EP_FUND	"{\"type\":\"CALL\",\"from\":\"" A "\",\"to\":\"" E "\",\"value\":\"0x5\"," \
	"\"input\":\"0x\"}"

static void
test_quick(void)
{
	struct bp_erc7562_input in;
	const char *clean[] = { "1 NUMBER", "1 CALL", "2 SLOAD", "2 GAS", "2 STATICCALL", "2 STOP",
	    "1 STOP", NULL };
	const char *ts[] = { "1 CALL", "2 TIMESTAMP", "2 GAS", "2 STATICCALL", "2 STOP", "1 STOP",
	    NULL };
	const char *nested[] = { "1 CALL", "2 CALL", "3 SLOAD", "3 STOP", "2 STOP", "1 STOP", NULL };

	input(&in, 0, 0);
	CU_ASSERT_EQUAL(quick(&in, clean, CALLS(ECRECOVER), PRESTATE("")), 1);
	/* Each of these is left to the full engine. */
	CU_ASSERT_EQUAL(quick(&in, ts, CALLS(ECRECOVER), PRESTATE("")), 0);
	CU_ASSERT_EQUAL(quick(&in, clean, CALLS(""), PRESTATE("")), 0);	/* the tree lacks a call */
	CU_ASSERT_EQUAL(quick(&in, clean, CALLS(ECRECOVER),
	    PRESTATE(",\"" X "\":{\"balance\":\"0x0\"}")), 0);		/* a code-less account touched */
	CU_ASSERT_EQUAL(quick(&in, nested, CALLS(""), PRESTATE("")), 0);
	CU_ASSERT_EQUAL(quick(&in, nested, "{\"type\":\"CALL\",\"to\":\"" E "\"}", PRESTATE("")), 0);
	/* Another contract's storage, a call of handleOps: the full engine's; the prefund: clean. */
	nested[2] = "3 SLOAD";
	CU_ASSERT_EQUAL(quick(&in, nested, CALLS(X_CALL), PRESTATE("")), 0);
	CU_ASSERT_EQUAL(quick(&in, nested, CALLS(EP_HANDLE_OPS), PRESTATE("")), 0);
	nested[2] = "3 SSTORE";
	CU_ASSERT_EQUAL(quick(&in, nested, CALLS(EP_FUND), PRESTATE("")), 1);
}

/* bp_erc7562_code_flags of hex (no 0x). */
static unsigned
flags_of(const char *hex)
{
	uint8_t b[64];
	size_t n = strlen(hex) / 2, i;
	unsigned v;

	for (i = 0; i < n; i++) {
		sscanf(hex + 2 * i, "%2x", &v);
		b[i] = (uint8_t)v;
	}
	return bp_erc7562_code_flags(b, n);
}

/* The static pass on a call tree and a prestate (JSON texts). */
static int
quick_static(const struct bp_erc7562_input *in, const char *calls, const char *prestate)
{
	cJSON *c = cJSON_Parse(calls), *p = cJSON_Parse(prestate);
	int rc;

	CU_ASSERT_PTR_NOT_NULL(c);
	CU_ASSERT_PTR_NOT_NULL(p);
	rc = bp_erc7562_quick_static(c, p, in);
	cJSON_Delete(c);
	cJSON_Delete(p);
	return rc;
}

#define S_PRE(acode, more)	\
	"{\"0x0000000000000000000000000000000000000000\":{\"balance\":\"0x1\"}," \
	"\"0x0000000000000000000000000000000000000001\":{\"balance\":\"0x0\"}," \
	"\"" E "\":{\"code\":\"0x42\",\"storage\":{\"0x01\":\"0x02\"}},\"" A "\":{\"code\":\"" \
	acode "\"}" more "}"
/* PUSH1 1 POP GAS CALL STOP, then dead: INVALID TIMESTAMP. */
#define CLEAN_CODE	"0x6001505af100fe42"
#define X_CODE(c)	",\"" X "\":{\"code\":\"" c "\"}"
#define X_OF(type, value)	"{\"type\":\"" type "\",\"from\":\"" A "\",\"to\":\"" X "\"," \
	"\"value\":\"" value "\",\"input\":\"0x\"}"

/* EntryPoint -> SenderCreator -> the factory F (gasUsed g) -> its calls. */
#define FACTORY_TREE(g, inner)	\
	"{\"type\":\"CALL\",\"from\":\"0x0000000000000000000000000000000000000000\"," \
	"\"to\":\"" E "\",\"gasUsed\":\"0x1\",\"calls\":[{\"type\":\"CALL\",\"from\":\"" E "\"," \
	"\"to\":\"" SC "\",\"value\":\"0x0\",\"input\":\"0x\",\"gasUsed\":\"0x1\",\"calls\":[" \
	"{\"type\":\"CALL\",\"from\":\"" SC "\",\"to\":\"" F "\",\"value\":\"0x0\"," \
	"\"input\":\"0x\",\"gasUsed\":\"" g "\",\"calls\":[" inner "]}]}]}"
#define C2(to, g)	"{\"type\":\"CREATE2\",\"from\":\"" F "\",\"to\":\"" to "\"," \
	"\"value\":\"0x0\",\"input\":\"0x00\",\"output\":\"0x00\",\"gasUsed\":\"" g "\"}"
#define F_PRE	S_PRE(CLEAN_CODE, ",\"" SC "\":{\"code\":\"0x5af100\"},\"" F "\":{\"code\":" \
	"\"0x6000600060006000f500\"}")

static void
test_static(void)
{
	struct bp_erc7562_input in;

	/* What reachable code holds: PUSH data skipped, dead code after a block's end unread. */
	CU_ASSERT_EQUAL(flags_of("604200"), 0);			/* PUSH1 0x42 STOP */
	CU_ASSERT_EQUAL(flags_of("42"), 0x01);			/* TIMESTAMP */
	CU_ASSERT_EQUAL(flags_of("0042"), 0);			/* STOP TIMESTAMP: dead */
	CU_ASSERT_EQUAL(flags_of("005b42"), 0x01);		/* a JUMPDEST makes it live */
	CU_ASSERT_EQUAL(flags_of("60005b"), 0);			/* PUSH1 0x00 ends before the 5b */
	CU_ASSERT_EQUAL(flags_of("615b4200"), 0);		/* 5b as PUSH2 data is no JUMPDEST */
	CU_ASSERT_EQUAL(flags_of("5af1"), 0);			/* GAS CALL */
	CU_ASSERT_EQUAL(flags_of("5a50"), 0x01);		/* GAS POP */
	CU_ASSERT_EQUAL(flags_of("5a"), 0x01);			/* GAS at the end */
	CU_ASSERT_EQUAL(flags_of("47"), 0x01);			/* SELFBALANCE */
	CU_ASSERT_EQUAL(flags_of("0c"), 0x01);			/* undefined */
	CU_ASSERT_EQUAL(flags_of("fe"), 0x01);			/* INVALID */
	CU_ASSERT_EQUAL(flags_of("00fe"), 0);			/* the separator after the end */
	CU_ASSERT_EQUAL(flags_of("f5"), 0x02);			/* CREATE2 */
	CU_ASSERT_EQUAL(flags_of("f0"), 0x03);			/* CREATE: banned too */
	CU_ASSERT_EQUAL(flags_of("5d"), 0x04);			/* TSTORE */
	CU_ASSERT_EQUAL(flags_of("7f"), 0);			/* PUSH32 cut short */

	input(&in, 0, 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE(CLEAN_CODE, "")), 1);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(EP_FUND), S_PRE(CLEAN_CODE, "")), 1);
	/* Each of these is left to the steps. */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE("0x5b42", "")), 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE("0x5a50", "")), 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(EP_HANDLE_OPS), S_PRE(CLEAN_CODE, "")), 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE(CLEAN_CODE,
	    ",\"" X "\":{\"code\":\"0x00\",\"storage\":{\"0x01\":\"0x02\"}}")), 0);	/* X's storage */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x0")), S_PRE(CLEAN_CODE,
	    X_CODE("0x00"))), 1);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x1")), S_PRE(CLEAN_CODE,
	    X_CODE("0x00"))), 0);					/* value to X */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x0")), S_PRE(CLEAN_CODE,
	    X_CODE("0x42"))), 0);					/* X reads TIMESTAMP */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x0")), S_PRE(CLEAN_CODE,
	    ",\"" X "\":{\"balance\":\"0x0\"}")), 0);			/* X has no code */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x0")), S_PRE(CLEAN_CODE, "")),
	    0);							/* X unknown */
	/* Transient storage: the sender's own (a DELEGATECALL keeps it), not X's. */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("DELEGATECALL", "0x0")), S_PRE(CLEAN_CODE,
	    X_CODE("0x5d00"))), 1);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CALL", "0x0")), S_PRE(CLEAN_CODE,
	    X_CODE("0x5d00"))), 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(X_OF("CREATE2", "0x0")), S_PRE(CLEAN_CODE,
	    X_CODE("0x00"))), 0);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS("{\"type\":\"CALL\",\"from\":\"" A "\",\"to\":\""
	    X "\",\"value\":\"0x0\",\"input\":\"0x\",\"error\":\"OutOfGas\"}"), S_PRE(CLEAN_CODE,
	    X_CODE("0x00"))), 0);
	/* More created code than the pass keeps (64): not proven, and nothing written past it. */
	{
		struct bp_buf b;
		int i;

		bp_buf_init(&b, 1 << 20);
		bp_buf_printf(&b, "{\"type\":\"CALL\",\"from\":\"0x0000000000000000000000000000"
		    "000000000000\",\"to\":\"" E "\",\"calls\":[");
		for (i = 0; i < 70; i++)
			bp_buf_printf(&b, "%s{\"type\":\"CREATE\",\"from\":\"" E "\",\"to\":"
			    "\"0x%040x\",\"output\":\"0x00\"}", i ? "," : "", i + 1000);
		bp_buf_printf(&b, "]}");
		bp_buf_add(&b, "", 1);
		CU_ASSERT_EQUAL(quick_static(&in, b.data, S_PRE(CLEAN_CODE, "")), 0);
		bp_buf_free(&b);
	}
	/* An EIP-7702 sender runs its delegate's code. */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE("0xef0100"
	    "dddddddddddddddddddddddddddddddddddddddd", X_CODE("0x00"))), 1);
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE("0xef0100"
	    "dddddddddddddddddddddddddddddddddddddddd", X_CODE("0x42"))), 0);
	/* CREATE2 outside the factory's phase. */
	CU_ASSERT_EQUAL(quick_static(&in, CALLS(ECRECOVER), S_PRE("0x6000600060006000f500", "")),
	    0);
	/*
	 * The factory's CREATE2: once, of the sender, and only when the factory's own gas (its
	 * gasUsed less its children's) shows no CREATE2 the tree leaves out (one failed for want
	 * of balance opens no frame but costs 32,000).
	 */
	input(&in, 1, 0);
	CU_ASSERT_EQUAL(quick_static(&in, FACTORY_TREE("0xa028", C2(A, "0x3e8")), F_PRE), 1);
	CU_ASSERT_EQUAL(quick_static(&in, FACTORY_TREE("0x111e8", C2(A, "0x3e8")), F_PRE), 0);
	CU_ASSERT_EQUAL(quick_static(&in, FACTORY_TREE("0xa028", C2(X, "0x3e8")), F_PRE), 0);
	CU_ASSERT_EQUAL(quick_static(&in, FACTORY_TREE("0x15f90", C2(A, "0x3e8") ","
	    C2(A, "0x3e8")), F_PRE), 0);				/* twice */
	CU_ASSERT_EQUAL(quick_static(&in, FACTORY_TREE("0xa028", C2(A, "0xzz")), F_PRE), 0);
}

/*
 * A v0.7 op's validation as anvil traces EntryPointSimulations put at the EntryPoint's address
 * (bundler_rules.c): no NUMBER markers; its own STATICCALL of itself (_validateSenderAndPaymaster,
 * which reverts), then the calls it opens at depth 2: v0.7's SenderCreator (which calls the
 * factory), the sender's validateUserOp, the paymaster's validatePaymasterUserOp.
 */
/* head's lines (NULL-terminated, two NULL slots inside) with acc and pm in the slots, if any. */
static void
v07_lines(const char *const *head, const char **lines, const char *acc, const char *pm)
{
	const char *put[2] = { acc, pm };
	size_t i, k = 0, slot = 0;

	for (i = 0; head[i] != NULL || slot < 2; i++) {
		if (head[i] != NULL)
			lines[k++] = head[i];
		else if (put[slot++] != NULL)
			lines[k++] = put[slot - 1];
	}
	lines[k] = NULL;
}

static void
test_v07(void)
{
	struct bp_erc7562_input in;
	struct bp_erc7562_verdict v;
	const char *head[] = { "1 STATICCALL 0x0 0x0 0x4 0x0 " E07 " 0xff", "2 EXTCODESIZE " A,
	    "2 REVERT 0x0 0x0", EP_CALLS(SC07), "2 GAS", "2 CALL 0x0 0x0 0x4 0x0 0x0 " F " 0xff",
	    "3 CREATE2 0x0 0x20 0x0 0x0", "4 SSTORE 0x1 0x0", "4 RETURN 0x0 0x0", "3 POP " A,
	    "3 RETURN 0x0 0x0", "2 RETURN 0x0 0x0", EP_CALLS(A), "2 SLOAD 0x0", NULL, "2 STOP",
	    EP_CALLS(P), NULL, "2 STOP", "1 RETURN 0x0 0x0", NULL };
	const char *lines[sizeof(head) / sizeof(head[0])];
	uint8_t sc[20];

	input(&in, 1, 1);
	bp_addr_parse(E07, 42, 0, in.entry_point);
	v07_lines(head, lines, NULL, NULL);
	CU_ASSERT_EQUAL(judge(&in, lines, &v), 0);
	v07_lines(head, lines, "2 TIMESTAMP", NULL);
	CU_ASSERT_EQUAL(judge(&in, lines, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-011] account uses banned opcode TIMESTAMP");
	v07_lines(head, lines, NULL, "2 SLOAD 0x0");
	CU_ASSERT_EQUAL(judge(&in, lines, &v), -32505);
	CU_ASSERT_STRING_EQUAL(v.rule, "STO-031");
	in.staked[BP_ERC7562_PAYMASTER] = 1;		/* v0.7's paymasterInfo says staked */
	CU_ASSERT_EQUAL(judge(&in, lines, &v), 0);
	/* The factory, called through v0.7's SenderCreator, creating twice. */
	v07_lines(head, lines, NULL, NULL);
	lines[10] = "3 CREATE2 0x1 0x20 0x0 0x0";
	CU_ASSERT_EQUAL(judge(&in, lines, &v), -32502);
	CU_ASSERT_STRING_EQUAL(v.message, "[OP-031] factory uses CREATE2 more than once");
	/* v0.8's EIP-7702 initialisation call: no factory, the SenderCreator's frame the account's. */
	in.present[BP_ERC7562_FACTORY] = 0;
	bp_addr_parse(SC07, 42, 0, sc);
	CU_ASSERT_EQUAL(bp_erc7562_phase(&in, sc), -1);
	in.init_account = 1;
	CU_ASSERT_EQUAL(bp_erc7562_phase(&in, sc), BP_ERC7562_ACCOUNT);
	CU_ASSERT_EQUAL(bp_erc7562_phase(&in, in.entry_point), -1);
}

BP_UNIT_SUITE(erc7562, NULL, NULL,
    { "opcodes: banned, GAS before a call, stake for BALANCE, OOG, no code, value", test_opcodes },
    { "CREATE2: once, by the factory, of the sender", test_create2 },
    { "storage: own, associated, others', stake", test_storage },
    { "calls into the EntryPoint: depositTo and the fallback only", test_entry_point },
    { "traces that do not read", test_hostile },
    { "the quick pass: clean, or left to the full engine", test_quick },
    { "the static pass: reachable code, the tree and the prestate", test_static },
    { "v0.7: EntryPointSimulations' frames, its SenderCreator, stakes", test_v07 })
