/*
 * The quick pass of ERC-7562 (erc7562_quick.h). It never refuses: it answers "clean" or "ask
 * the full engine", so the verdicts and their messages are the full engine's alone.
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "erc7562_quick.h"
#include "evm/address.h"

#define DEPTH_MAX	1025
#define PHASE_NONE	(-1)
#define SEL_DEPOSIT_TO	"0xb760faf9"

struct qframe {
	const cJSON	*node;		/* its call in the callTracer's tree */
	const cJSON	*child;		/* the next child call to meet */
	uint8_t		 code[20];
	uint8_t		 storage[20];
	int		 phase;
};

/* The member name of node as an address into a; 0 or -1. */
static int
addr_of(const cJSON *node, const char *name, uint8_t a[20])
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(node, name);

	if (!cJSON_IsString(j))
		return -1;
	return bp_addr_parse(j->valuestring, strlen(j->valuestring), 0, a);
}

static int
same(const uint8_t a[20], const uint8_t b[20])
{
	return memcmp(a, b, 20) == 0;
}

/* 1 when a string member is a hex quantity other than zero (value), or absent/zero 0. */
static int
nonzero(const cJSON *node, const char *name)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(node, name);
	const char *s;

	if (!cJSON_IsString(j))
		return 0;
	for (s = j->valuestring + (strncmp(j->valuestring, "0x", 2) == 0 ? 2 : 0); *s; s++)
		if (*s != '0')
			return 1;
	return 0;
}

/* 1 when the call (a callTracer node) from phase into the EntryPoint is allowed (OP-052/053). */
static int
ep_call_ok(const cJSON *call, int phase)
{
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(call, "input");

	if (!cJSON_IsString(in))
		return 0;
	if (strcmp(in->valuestring, "0x") == 0 || in->valuestring[0] == '\0')
		return phase == BP_ERC7562_ACCOUNT;
	return strncasecmp(in->valuestring, SEL_DEPOSIT_TO, 10) == 0 &&
	    (phase == BP_ERC7562_ACCOUNT || phase == BP_ERC7562_FACTORY);
}

/* 1 when the step at op in frame f (judged) may pass; the call it makes is c (or NULL). */
static int
step_ok(const struct bp_erc7562_input *in, const struct qframe *f, const char *op,
    const cJSON *s, const cJSON *next, int *create2)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(s, "error");
	const cJSON *nop = cJSON_GetObjectItemCaseSensitive(next, "op");
	int cures;

	if (cJSON_IsString(err) && strcasestr(err->valuestring, "gas") != NULL)
		return 0;
	if (bp_erc7562_banned(op, &cures))
		return 0;
	if (strcmp(op, "GAS") == 0 && (!cJSON_IsString(nop) ||
	    !bp_erc7562_call_family(nop->valuestring)))
		return 0;
	if (strcmp(op, "CREATE2") == 0 && (f->phase != BP_ERC7562_FACTORY || ++*create2 > 1))
		return 0;
	if ((strcmp(op, "SLOAD") == 0 || strcmp(op, "SSTORE") == 0 || strcmp(op, "TLOAD") == 0 ||
	    strcmp(op, "TSTORE") == 0) && !same(f->storage, in->addr[BP_ERC7562_ACCOUNT]) &&
	    !same(f->storage, in->entry_point))
		return 0;
	return 1;
}

/* 1 when the call c that step op of frame f makes may pass (value, EntryPoint, created address). */
static int
call_ok(const struct bp_erc7562_input *in, const struct qframe *f, const char *op, const cJSON *c,
    int entered)
{
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(c, "error");
	uint8_t to[20];

	if (addr_of(c, "to", to) == -1)
		return strcmp(op, "CREATE2") != 0 && strcmp(op, "CREATE") != 0 ? 0 : !entered;
	if (cJSON_IsString(err) && strcasestr(err->valuestring, "gas") != NULL)
		return 0;
	if (strcmp(op, "CREATE2") == 0)
		return same(to, in->addr[BP_ERC7562_ACCOUNT]);
	if (nonzero(c, "value") && !same(to, in->entry_point))
		return 0;
	if (same(to, in->entry_point))
		return strcmp(op, "CALL") == 0 && ep_call_ok(c, f->phase);
	/* A call that opened no frame went to a precompile, or to an address without code. */
	return entered || bp_erc7562_precompile(to) || same(to, in->addr[BP_ERC7562_ACCOUNT]);
}

/* 1 when every code-less account touched is the sender, a precompile or the caller (OP-041). */
static int
codeless_ok(const cJSON *prestate, const cJSON *calls, const struct bp_erc7562_input *in)
{
	const cJSON *acct, *code;
	uint8_t a[20], from[20];

	if (!cJSON_IsObject(prestate) || addr_of(calls, "from", from) == -1)
		return 0;
	cJSON_ArrayForEach(acct, prestate) {
		code = cJSON_GetObjectItemCaseSensitive(acct, "code");
		if (cJSON_IsString(code) && strlen(code->valuestring) > 2)
			continue;
		if (acct->string == NULL || bp_addr_parse(acct->string, strlen(acct->string), 0,
		    a) == -1)
			return 0;
		if (!same(a, in->addr[BP_ERC7562_ACCOUNT]) && !same(a, from) &&
		    !bp_erc7562_precompile(a))
			return 0;
	}
	return 1;
}

static int
type_is(const cJSON *c, const char *op)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");

	return cJSON_IsString(t) && strcasecmp(t->valuestring, op) == 0;
}

int
bp_erc7562_quick(const cJSON *steps, const cJSON *calls, const cJSON *prestate,
    const struct bp_erc7562_input *in)
{
	static struct qframe zero;
	struct qframe st[DEPTH_MAX + 1];
	const cJSON *logs, *s, *next, *jop, *jd, *nd, *c;
	const char *op;
	int sp = 1, d, nextd, create2 = 0, judged, call;

	logs = cJSON_GetObjectItemCaseSensitive(steps, "structLogs");
	if (!cJSON_IsArray(logs) || !cJSON_IsObject(calls) ||
	    addr_of(calls, "to", st[1].code) == -1 || !same(st[1].code, in->entry_point) ||
	    !codeless_ok(prestate, calls, in))
		return 0;
	st[1] = zero;
	st[1].node = calls;
	st[1].child = cJSON_GetObjectItemCaseSensitive(calls, "calls") != NULL ?
	    cJSON_GetObjectItemCaseSensitive(calls, "calls")->child : NULL;
	memcpy(st[1].code, in->entry_point, 20);
	memcpy(st[1].storage, in->entry_point, 20);
	st[1].phase = PHASE_NONE;
	for (s = logs->child; s != NULL; s = next) {
		next = s->next;
		jop = cJSON_GetObjectItemCaseSensitive(s, "op");
		jd = cJSON_GetObjectItemCaseSensitive(s, "depth");
		if (!cJSON_IsString(jop) || !cJSON_IsNumber(jd) || (d = (int)jd->valuedouble) != sp)
			return 0;
		op = jop->valuestring;
		nd = next != NULL ? cJSON_GetObjectItemCaseSensitive(next, "depth") : NULL;
		nextd = cJSON_IsNumber(nd) ? (int)nd->valuedouble : 0;
		judged = st[d].phase != PHASE_NONE && !same(st[d].code, in->entry_point);
		if (judged && !step_ok(in, &st[d], op, s, next, &create2))
			return 0;
		call = bp_erc7562_call_family(op) || strcmp(op, "CREATE") == 0 ||
		    strcmp(op, "CREATE2") == 0;
		if (call) {
			/* The call tree has this call next, of this type, or the traces do not align. */
			if ((c = st[d].child) == NULL || !type_is(c, op))
				return 0;
			st[d].child = c->next;
			if (judged && !call_ok(in, &st[d], op, c, nextd == d + 1))
				return 0;
			if (nextd == d + 1) {
				if (d + 1 > DEPTH_MAX)
					return 0;
				st[d + 1] = zero;
				st[d + 1].node = c;
				st[d + 1].child = cJSON_GetObjectItemCaseSensitive(c, "calls") != NULL ?
				    cJSON_GetObjectItemCaseSensitive(c, "calls")->child : NULL;
				if (addr_of(c, "to", st[d + 1].code) == -1)
					return 0;
				if (strcmp(op, "DELEGATECALL") == 0 || strcmp(op, "CALLCODE") == 0)
					memcpy(st[d + 1].storage, st[d].storage, 20);
				else
					memcpy(st[d + 1].storage, st[d + 1].code, 20);
				st[d + 1].phase = d == 1 ? bp_erc7562_phase(in, st[d + 1].code) : st[d].phase;
				sp = d + 1;
				continue;
			}
		}
		if (next != NULL && (nextd < 1 || nextd > d))
			return 0;
		if (next != NULL)
			sp = nextd;
	}
	return 1;
}
