/*
 * The quick pass of ERC-7562 (erc7562_quick.h). It never refuses: it answers "clean" or "ask
 * the full engine", so the verdicts and their messages are the full engine's alone.
 */
#include <stdint.h>
#include <stdlib.h>
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

/*
 * The static pass: the call tree and the prestate alone, with each judged frame's code read
 * instead of its steps. What a frame can execute is a subset of its reachable instructions:
 * from byte 0 and from every JUMPDEST (the only jump targets) on to the next instruction that
 * ends the block (STOP, JUMP, RETURN, REVERT, INVALID, SELFDESTRUCT, an undefined opcode), PUSH
 * data skipped as the EVM does. When no reachable instruction could break a rule, no executed
 * one did. Storage comes from the prestate (every slot read or written, by account); the
 * calls, their values and targets from the tree. The factory's one CREATE2 rests on the tree
 * showing every CREATE2 run, failed ones too (anvil 1.7.1's shows one failed for want of
 * balance, without an address: not proven here). Not trusting that alone: every CREATE2 costs
 * the frame that runs it 32,000 gas, so a frame that can CREATE2 passes only when the gas it
 * used itself (its gasUsed less its children's) is under 32,000 more than its visible CREATE2s
 * need, that is when it ran no CREATE2 the tree does not show.
 */

#define STATIC_DEPTH_MAX	1000	/* deeper trees may hide calls failed at 1024: not proven */
#define STATIC_CODES_MAX	64
#define CREATE2_GAS		32000	/* the least a CREATE2 costs the frame that runs it */

/* The code of one address: the prestate's, or the runtime a CREATE frame of the tree made. */
struct scode {
	uint8_t		 addr[20];
	const char	*hex;
};

struct sctx {
	const struct bp_erc7562_input	*in;
	const cJSON			*prestate;
	struct scode			 made[STATIC_CODES_MAX];
	int				 nmade;
	uint8_t				*buf;		/* decoded code, reused */
	size_t				 cap;
	int				 create2;	/* the CREATE2 calls met */
};

/* What a code's reachable instructions hold that a rule may forbid (bits). */
#define SC_BANNED	0x01	/* banned opcode, BALANCE/SELFBALANCE, undefined, GAS not before a call */
#define SC_CREATE	0x02	/* CREATE or CREATE2 (CREATE is SC_BANNED too) */
#define SC_TRANSIENT	0x04	/* TLOAD or TSTORE */

static int
defined_op(uint8_t op)
{
	return op <= 0x0b || (op >= 0x10 && op <= 0x1d) || op == 0x20 ||
	    (op >= 0x30 && op <= 0x4a) || (op >= 0x50 && op <= 0xa4) ||
	    (op >= 0xf0 && op <= 0xf5) || op == 0xfa || op >= 0xfd;
}

static int
banned_op(uint8_t op)
{
	switch (op) {
	case 0x31: case 0x32: case 0x3a: case 0x40: case 0x41: case 0x42: case 0x43: case 0x44:
	case 0x45: case 0x47: case 0x48: case 0x49: case 0x4a: case 0xf0: case 0xfe: case 0xff:
		return 1;
	}
	return !defined_op(op);
}

static int
ends_block(uint8_t op)
{
	return op == 0x00 || op == 0x56 || op == 0xf3 || op == 0xfd || op == 0xfe || op == 0xff ||
	    !defined_op(op);
}

static int
call_op(uint8_t op)
{
	return op == 0xf1 || op == 0xf2 || op == 0xf4 || op == 0xfa;
}

/* The SC_ bits of code[0, n)'s reachable instructions. */
unsigned
bp_erc7562_code_flags(const uint8_t *code, size_t n)
{
	unsigned flags = 0;
	size_t pc, next;
	int live = 1;
	uint8_t op;

	for (pc = 0; pc < n; pc = next) {
		op = code[pc];
		next = pc + 1 + (op >= 0x60 && op <= 0x7f ? (size_t)(op - 0x5f) : 0);
		if (op == 0x5b)
			live = 1;
		if (!live)
			continue;
		if (banned_op(op) || (op == 0x5a && (next >= n || !call_op(code[next]))))
			flags |= SC_BANNED;
		if (op == 0xf0 || op == 0xf5)
			flags |= SC_CREATE;
		if (op == 0x5c || op == 0x5d)
			flags |= SC_TRANSIENT;
		if (ends_block(op))
			live = 0;
	}
	return flags;
}

/* Records the runtime each successful CREATE/CREATE2 frame of the tree made. 0, or -1: too many. */
static int
collect_made(struct sctx *x, const cJSON *node)
{
	const cJSON *out, *c;

	if (type_is(node, "CREATE") || type_is(node, "CREATE2")) {
		out = cJSON_GetObjectItemCaseSensitive(node, "output");
		if (cJSON_IsString(out) && cJSON_GetObjectItemCaseSensitive(node, "error") == NULL) {
			if (x->nmade >= STATIC_CODES_MAX)
				return -1;
			if (addr_of(node, "to", x->made[x->nmade].addr) == 0)
				x->made[x->nmade++].hex = out->valuestring;
		}
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(node, "calls"))
		if (collect_made(x, c) == -1)
			return -1;
	return 0;
}

/* The code at a (hex text), "" for none; NULL when it cannot be told. */
static const char *
code_at(const struct sctx *x, const uint8_t a[20])
{
	char key[BP_ADDR_STR_MAX];
	const cJSON *acct, *code;
	int i;

	for (i = x->nmade - 1; i >= 0; i--)
		if (same(x->made[i].addr, a))
			return x->made[i].hex;
	bp_addr_format_lower(a, key, sizeof(key));
	if ((acct = cJSON_GetObjectItemCaseSensitive(x->prestate, key)) == NULL)
		return NULL;
	code = cJSON_GetObjectItemCaseSensitive(acct, "code");
	return cJSON_IsString(code) ? code->valuestring : "";
}

/* The SC_ bits of hex (a frame's code; an EIP-7702 designator: its delegate's). -1: unknown. */
static int
hex_flags(struct sctx *x, const char *hex, int hops)
{
	size_t len = strlen(hex), n;
	uint8_t *b;

	if (len <= 2)
		return len == 0 || strcmp(hex, "0x") == 0 ? 0 : -1;
	if (len / 2 > x->cap) {
		if ((b = realloc(x->buf, len / 2)) == NULL)
			return -1;
		x->buf = b;
		x->cap = len / 2;
	}
	if (bp_hex_decode(hex, len, x->buf, x->cap, &n) == -1)
		return -1;
	if (n == 23 && memcmp(x->buf, "\xef\x01\x00", 3) == 0) {
		uint8_t d[20];

		memcpy(d, x->buf + 3, 20);
		if (hops > 0 || (hex = code_at(x, d)) == NULL)
			return -1;
		return hex_flags(x, hex, hops + 1);
	}
	return (int)bp_erc7562_code_flags(x->buf, n);
}

/* 1 when the call c that judged frame (phase, storage) makes may pass, by the tree alone. */
static int
static_call_ok(struct sctx *x, const cJSON *c, int phase)
{
	const struct bp_erc7562_input *in = x->in;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(c, "error");
	const char *code;
	uint8_t to[20];

	if (type_is(c, "CREATE") || addr_of(c, "to", to) == -1)
		return 0;
	if (cJSON_IsString(err) && strcasestr(err->valuestring, "gas") != NULL)
		return 0;
	/* OP-031: the factory's one CREATE2, of the sender (and no value: the rule below). */
	if (type_is(c, "CREATE2"))
		return phase == BP_ERC7562_FACTORY && ++x->create2 == 1 && !nonzero(c, "value") &&
		    same(to, in->addr[BP_ERC7562_ACCOUNT]);
	if (nonzero(c, "value") && !same(to, in->entry_point))
		return 0;
	if (same(to, in->entry_point))
		return type_is(c, "CALL") && ep_call_ok(c, phase);
	if (bp_erc7562_precompile(to) || same(to, in->addr[BP_ERC7562_ACCOUNT]))
		return 1;
	return (code = code_at(x, to)) != NULL && strlen(code) > 2;
}

/* A hex quantity member of node; -1 when absent or not one. */
static int64_t
gas_of(const cJSON *node, const char *name)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(node, name);
	uint64_t v;

	if (!cJSON_IsString(j) || bp_hex_quantity_lenient(j->valuestring, strlen(j->valuestring),
	    &v) == -1 || v > INT64_MAX)
		return -1;
	return (int64_t)v;
}

/* 1 when frame node ran no CREATE2 but the ones its children show (its own gas says so). */
static int
create2_all_seen(const cJSON *node)
{
	const cJSON *c;
	int64_t own = gas_of(node, "gasUsed"), g;
	int64_t seen = 0;

	if (own < 0)
		return 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(node, "calls")) {
		if ((g = gas_of(c, "gasUsed")) < 0)
			return 0;
		own -= g;
		seen += type_is(c, "CREATE2");
	}
	return own < (seen + 1) * CREATE2_GAS;
}

/* 1 when frame node (at depth, of phase, storage context st) and all below it may pass. */
static int
static_frame(struct sctx *x, const cJSON *node, int depth, int phase, const uint8_t st[20])
{
	const struct bp_erc7562_input *in = x->in;
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(node, "error"), *c, *input;
	const char *code;
	uint8_t to[20], cst[20];
	int judged, flags, cphase;

	if (depth > STATIC_DEPTH_MAX || addr_of(node, "to", to) == -1)
		return 0;
	judged = phase != PHASE_NONE && !same(to, in->entry_point);
	if (judged) {
		if (cJSON_IsString(err) && strcasestr(err->valuestring, "gas") != NULL)
			return 0;
		if (type_is(node, "CREATE") || type_is(node, "CREATE2")) {
			input = cJSON_GetObjectItemCaseSensitive(node, "input");
			code = cJSON_IsString(input) ? input->valuestring : NULL;
		} else
			code = code_at(x, to);
		if (code == NULL || (flags = hex_flags(x, code, 0)) == -1 || (flags & SC_BANNED))
			return 0;
		if ((flags & SC_CREATE) && (phase != BP_ERC7562_FACTORY || !create2_all_seen(node)))
			return 0;
		if ((flags & SC_TRANSIENT) && !same(st, in->addr[BP_ERC7562_ACCOUNT]) &&
		    !same(st, in->entry_point))
			return 0;
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(node, "calls")) {
		if (judged && !static_call_ok(x, c, phase))
			return 0;
		if (addr_of(c, "to", cst) == -1)
			return 0;
		cphase = depth == 1 ? bp_erc7562_phase(in, cst) : phase;
		if (type_is(c, "DELEGATECALL") || type_is(c, "CALLCODE"))
			memcpy(cst, st, 20);
		if (!static_frame(x, c, depth + 1, cphase, cst))
			return 0;
	}
	return 1;
}

/* 1 when every account whose storage the validation touched is the sender or the EntryPoint. */
static int
storage_ok(const cJSON *prestate, const struct bp_erc7562_input *in)
{
	const cJSON *acct, *st;
	uint8_t a[20];

	cJSON_ArrayForEach(acct, prestate) {
		st = cJSON_GetObjectItemCaseSensitive(acct, "storage");
		if (st == NULL || (cJSON_IsObject(st) && st->child == NULL))
			continue;
		if (acct->string == NULL || bp_addr_parse(acct->string, strlen(acct->string), 0,
		    a) == -1)
			return 0;
		if (!same(a, in->addr[BP_ERC7562_ACCOUNT]) && !same(a, in->entry_point))
			return 0;
	}
	return 1;
}

int
bp_erc7562_quick_static(const cJSON *calls, const cJSON *prestate,
    const struct bp_erc7562_input *in)
{
	struct sctx x;
	uint8_t to[20];
	int rc;

	if (!cJSON_IsObject(calls) || !cJSON_IsObject(prestate) || addr_of(calls, "to", to) == -1 ||
	    !same(to, in->entry_point) || !codeless_ok(prestate, calls, in) ||
	    !storage_ok(prestate, in))
		return 0;
	memset(&x, 0, sizeof(x));
	x.in = in;
	x.prestate = prestate;
	rc = collect_made(&x, calls) == 0 && static_frame(&x, calls, 1, PHASE_NONE, to);
	free(x.buf);
	return rc;
}
