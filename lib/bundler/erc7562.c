/*
 * The ERC-7562 rules over a struct-log trace (erc7562.h).
 *
 * One pass over the steps keeps a stack of frames (the contract whose code runs, the one whose
 * storage it uses, the entity it belongs to), a shadow of each frame's memory as far as MSTORE
 * wrote it (enough to learn the first word of a KECCAK256 input: a Solidity mapping's key), and
 * the storage slots touched. Opcode and call rules are judged as the steps go; storage once the
 * addresses of created contracts are known (a CREATE2 frame learns its address when it returns).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "core/config.h"
#include "core/hex.h"
#include "erc7562.h"
#include "evm/address.h"
#include "evm/u256.h"

#define FRAMES_MAX	1100	/* the EVM's 1024 call depth, and some */
#define FRAMES_TOTAL	2048	/* frames a validation may open: more is refused */
#define ACCESS_MAX	4096	/* storage accesses judged; more is refused */
#define KECCAK_MAX	4096	/* KECCAK256 results kept for the association of slots */
#define SHADOW_WORDS	16	/* MSTOREs remembered per frame */
#define ASSOC_SPAN	128	/* keccak(A || x) + n is A's for n <= 128 (ERC-7562) */

/* ERC-7562's phases are its entities; NONE is the EntryPoint's own code, never judged. */
#define PHASE_NONE	(-1)

struct word {
	uint8_t	b[32];
};

struct shadow {
	uint64_t	off[SHADOW_WORDS];
	struct word	val[SHADOW_WORDS];
	int		n, next;
};

struct frame {
	uint8_t		code[20];	/* whose code runs */
	int		storage;	/* the frame whose address holds the storage (itself, or a caller's) */
	int		known;		/* code (and so address) known: false while a CREATE runs */
	int		creates;	/* opened by CREATE/CREATE2: its address comes on return */
	int		phase;
	int		ep_call;	/* a call into the EntryPoint whose selector is not judged yet */
	struct shadow	mem;
};

struct access {
	int		frame;		/* its storage frame */
	int		phase;
	int		write;
	struct word	slot;
};

struct keccak {
	struct word	first;		/* the first input word */
	struct word	hash;
};

struct run {
	const struct bp_erc7562_input *in;
	struct bp_erc7562_verdict *v;
	struct frame	*fr;		/* every frame opened, by id */
	int		 nfr;
	int		 at[FRAMES_MAX];	/* the frame id at each depth */
	struct access	*acc;
	int		 nacc;
	struct keccak	*kec;
	int		 nkec;
	int		 create2;	/* CREATE2s of the factory so far */
	int		 create2_frame;	/* the frame that CREATE2 opened */
};

static const char *const entity_names[BP_ERC7562__MAX] = {
	"factory",	/* 0 */
	"account",	/* 1 */
	"paymaster",	/* 2 */
	"aggregator",	/* 3 */
};

const char *
bp_erc7562_entity_name(enum bp_erc7562_entity e)
{
	return (unsigned)e < BP_ERC7562__MAX ? entity_names[e] : "entity";
}

int
bp_erc7562_staked(const uint8_t stake_be[32], uint64_t unstake_delay)
{
	static const uint8_t zero[32];

	return memcmp(stake_be, zero, 32) != 0 && unstake_delay >= BP_ERC7562_MIN_UNSTAKE_DELAY;
}

/* Sets the verdict (the first one wins) and returns 1, so a caller can stop at once. */
static int
refuse(struct run *r, int code, const char *rule, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (r->v->code != 0)
		return 1;
	r->v->code = code;
	snprintf(r->v->rule, sizeof(r->v->rule), "%s", rule);
	n = snprintf(r->v->message, sizeof(r->v->message), "[%s] ", rule);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(r->v->message))
		vsnprintf(r->v->message + n, sizeof(r->v->message) - (size_t)n, fmt, ap);
	va_end(ap);
	return 1;
}

static const char *
phase_name(int phase)
{
	return bp_erc7562_entity_name((enum bp_erc7562_entity)phase);
}

/* Stack item i from the top (0 = top) as a word; -1 when there is none or it does not read. */
static int
stack_word(const cJSON *stack, int i, struct word *w)
{
	int n = cJSON_GetArraySize(stack);
	const cJSON *it;

	if (i >= n || !cJSON_IsString(it = cJSON_GetArrayItem(stack, n - 1 - i)))
		return -1;
	return bp_hex_quantity_be(it->valuestring, strlen(it->valuestring), 0, w->b, 32);
}

/* Stack item i as a number, saturated at UINT64_MAX (memory offsets, sizes). */
static uint64_t
stack_u64(const cJSON *stack, int i)
{
	struct word w;
	size_t k;
	uint64_t v = 0;

	if (stack_word(stack, i, &w) == -1)
		return UINT64_MAX;
	for (k = 0; k < 24; k++)
		if (w.b[k] != 0)
			return UINT64_MAX;
	for (k = 24; k < 32; k++)
		v = v << 8 | w.b[k];
	return v;
}

static void
word_addr(const struct word *w, uint8_t a[20])
{
	memcpy(a, w->b + 12, 20);
}

static void
addr_word(const uint8_t a[20], struct word *w)
{
	memset(w->b, 0, 12);
	memcpy(w->b + 12, a, 20);
}

static int
is_zero(const struct word *w)
{
	static const uint8_t zero[32];

	return memcmp(w->b, zero, 32) == 0;
}

int
bp_erc7562_precompile(const uint8_t a[20])
{
	static const uint8_t zero[18];
	unsigned v;

	if (memcmp(a, zero, 18) != 0)
		return 0;
	v = (unsigned)a[18] << 8 | a[19];
	return (v >= 1 && v <= 0x11) || v == 0x100;
}

static void
fmt_addr(const uint8_t a[20], char out[BP_ADDR_STRLEN])
{
	bp_addr_format_lower(a, out, BP_ADDR_STRLEN);
}

static void
shadow_store(struct shadow *m, uint64_t off, const struct word *w)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->off[i] == off) {
			m->val[i] = *w;
			return;
		}
	m->off[m->next] = off;
	m->val[m->next] = *w;
	m->next = (m->next + 1) % SHADOW_WORDS;
	if (m->n < SHADOW_WORDS)
		m->n++;
}

/* Forgets what [off, off + len) overwrote. */
static void
shadow_clobber(struct shadow *m, uint64_t off, uint64_t len)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (len == UINT64_MAX || off == UINT64_MAX ||
		    (m->off[i] < off + len && m->off[i] + 32 > off))
			m->off[i] = UINT64_MAX - 64;	/* never looked up */
}

static int
shadow_load(const struct shadow *m, uint64_t off, struct word *w)
{
	int i;

	for (i = 0; i < m->n; i++)
		if (m->off[i] == off) {
			*w = m->val[i];
			return 0;
		}
	return -1;
}

/* The address whose storage frame id uses; 0, or -1 while unknown. */
static int
storage_addr(const struct run *r, int id, uint8_t a[20])
{
	const struct frame *f = &r->fr[r->fr[id].storage];

	if (!f->known)
		return -1;
	memcpy(a, f->code, 20);
	return 0;
}

static int
same(const uint8_t a[20], const uint8_t b[20])
{
	return memcmp(a, b, 20) == 0;
}

int
bp_erc7562_phase(const struct bp_erc7562_input *in, const uint8_t to[20])
{

	if (same(to, in->entry_point))
		return PHASE_NONE;
	if (same(to, in->addr[BP_ERC7562_ACCOUNT]))
		return BP_ERC7562_ACCOUNT;
	if (in->present[BP_ERC7562_PAYMASTER] && same(to, in->addr[BP_ERC7562_PAYMASTER]))
		return BP_ERC7562_PAYMASTER;
	if (in->present[BP_ERC7562_AGGREGATOR] && same(to, in->addr[BP_ERC7562_AGGREGATOR]))
		return BP_ERC7562_AGGREGATOR;
	if (in->present[BP_ERC7562_FACTORY])
		return BP_ERC7562_FACTORY;
	return in->init_account ? BP_ERC7562_ACCOUNT : PHASE_NONE;
}

/* Opens a frame at depth for a call (to, code known) or a create; its id, or -1. */
static int
open_frame(struct run *r, int depth, const uint8_t code[20], int storage_parent, int phase,
    int creates)
{
	struct frame *f;
	int id;

	if (depth < 1 || depth >= FRAMES_MAX)
		return -1;
	if (r->nfr >= FRAMES_TOTAL)
		return -2;
	id = r->nfr++;
	f = &r->fr[id];
	memset(f, 0, sizeof(*f));
	if (code != NULL) {
		memcpy(f->code, code, 20);
		f->known = 1;
	}
	f->storage = storage_parent >= 0 ? r->fr[storage_parent].storage : id;
	f->phase = phase;
	f->creates = creates;
	r->at[depth] = id;
	return id;
}

int
bp_erc7562_banned(const char *op, int *stake_cures)
{
	static const char *const names[] = {
		"GASPRICE", "GASLIMIT", "DIFFICULTY", "PREVRANDAO", "RANDOM", "TIMESTAMP", "BASEFEE",
		"BLOCKHASH", "NUMBER", "ORIGIN", "COINBASE", "SELFDESTRUCT", "INVALID", "BLOBHASH",
		"BLOBBASEFEE", "CREATE",
	};
	size_t i;

	*stake_cures = strcmp(op, "BALANCE") == 0 || strcmp(op, "SELFBALANCE") == 0;
	if (*stake_cures)
		return 1;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(op, names[i]) == 0)
			return 1;
	/* An opcode the node could not name (OP-013). */
	return strncasecmp(op, "opcode", 6) == 0 || strncasecmp(op, "unknown", 7) == 0;
}

int
bp_erc7562_call_family(const char *op)
{
	return strcmp(op, "CALL") == 0 || strcmp(op, "CALLCODE") == 0 ||
	    strcmp(op, "DELEGATECALL") == 0 || strcmp(op, "STATICCALL") == 0;
}

/* The selectors an entity may call on the EntryPoint: depositTo(address) (OP-052). */
#define SEL_DEPOSIT_TO	0xb760faf9u

static const char *
ep_function(uint32_t sel)
{
	switch (sel) {
	case 0x1fad948cu: return "handleOps";
	case 0x4b1d7cf5u: return "handleAggregatedOps";
	case 0x205c2878u: return "withdrawTo";
	case 0x0396cb60u: return "addStake";
	case 0xbb9fe6bfu: return "unlockStake";
	case 0xc23a5ceau: return "withdrawStake";
	case 0xee219423u: return "simulateValidation";
	case 0xd6383f94u: return "simulateHandleOp";
	case 0x1b2e01b8u: return "getNonce";
	case 0x70a08231u: return "balanceOf";
	case 0x5287ce12u: return "getDepositInfo";
	case 0xa6193531u: return "getUserOpHash";
	default: return NULL;
	}
}

/* A call from an entity into the EntryPoint, once its selector is known (OP-051..054). */
static int
judge_ep_call(struct run *r, int phase, int has_sel, uint32_t sel)
{
	const char *name;
	char what[48];

	if (!has_sel) {		/* the fallback: the account's deposit of its prefund */
		if (phase == BP_ERC7562_ACCOUNT)
			return 0;
		return refuse(r, -32502, "OP-053", "%s calls the EntryPoint's fallback: only the "
		    "account may", phase_name(phase));
	}
	if (sel == SEL_DEPOSIT_TO && (phase == BP_ERC7562_ACCOUNT || phase == BP_ERC7562_FACTORY))
		return 0;
	if ((name = ep_function(sel)) != NULL)
		snprintf(what, sizeof(what), "%s", name);
	else
		snprintf(what, sizeof(what), "function 0x%08x", sel);
	return refuse(r, -32502, "OP-054", "%s calls the EntryPoint's %s from validation: only "
	    "depositTo (account, factory) and the fallback (account) are allowed", phase_name(phase),
	    what);
}

/* What a call or create at one step leaves for the next: the frame it may open. */
struct pending {
	int		kind;		/* 0 none, 1 call, 2 delegate (storage stays), 3 create */
	uint8_t		to[20];
	int		ep;		/* a call into the EntryPoint (args given) */
	int		fallback;	/* ... without calldata */
	int		phase;
	int		from;		/* the calling frame */
	int		create2;
};

/* Judges one step; 1 to stop (a verdict), 0 to go on, -1 on a trace that does not read. */
static int
step(struct run *r, const cJSON *s, const cJSON *next, struct pending *pend)
{
	const cJSON *jop = cJSON_GetObjectItemCaseSensitive(s, "op");
	const cJSON *jd = cJSON_GetObjectItemCaseSensitive(s, "depth");
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(s, "stack");
	const cJSON *err = cJSON_GetObjectItemCaseSensitive(s, "error");
	const cJSON *nop = NULL, *nst = NULL, *nd;
	const char *op;
	struct frame *f;
	struct word w, w2;
	char a[BP_ADDR_STRLEN];
	uint8_t to[20];
	int depth, ndepth = -1, id, phase, cures;

	if (!cJSON_IsString(jop) || !cJSON_IsNumber(jd) || jd->valuedouble < 1 ||
	    jd->valuedouble >= FRAMES_MAX)
		return -1;
	op = jop->valuestring;
	depth = (int)jd->valuedouble;
	if (next != NULL) {
		nop = cJSON_GetObjectItemCaseSensitive(next, "op");
		nst = cJSON_GetObjectItemCaseSensitive(next, "stack");
		nd = cJSON_GetObjectItemCaseSensitive(next, "depth");
		ndepth = cJSON_IsNumber(nd) ? (int)nd->valuedouble : -1;
	}
	if (r->at[depth] < 0)
		return -1;
	f = &r->fr[r->at[depth]];
	phase = f->phase;
	/* The steps of the EntryPoint itself (depth 1 and its calls to itself) are trusted. */
	if (phase == PHASE_NONE && depth > 1)
		goto frames;
	if (depth == 1 || (f->known && same(f->code, r->in->entry_point))) {
		if (f->ep_call && strcmp(op, "CALLDATALOAD") == 0 && stack_word(st, 0, &w) == 0 &&
		    is_zero(&w) && cJSON_IsArray(nst) && stack_word(nst, 0, &w2) == 0) {
			f->ep_call = 0;
			if (judge_ep_call(r, phase, 1, (uint32_t)w2.b[0] << 24 |
			    (uint32_t)w2.b[1] << 16 | (uint32_t)w2.b[2] << 8 | w2.b[3]))
				return 1;
		}
		goto frames;
	}
	if (cJSON_IsString(err) && strcasestr(err->valuestring, "gas") != NULL)
		return refuse(r, -32502, "OP-020", "%s ran out of gas in validation",
		    phase_name(phase));
	if (bp_erc7562_banned(op, &cures)) {
		if (!cures)
			return refuse(r, -32502, "OP-011", "%s uses banned opcode %s", phase_name(phase), op);
		if (!r->in->staked[phase])
			return refuse(r, -32505, "OP-080", "unstaked %s uses opcode %s: allowed only to a "
			    "staked entity", phase_name(phase), op);
	}
	if (strcmp(op, "GAS") == 0 && (!cJSON_IsString(nop) || !bp_erc7562_call_family(nop->valuestring)))
		return refuse(r, -32502, "OP-012", "%s uses banned opcode GAS (allowed only right "
		    "before a call)", phase_name(phase));
	if (strcmp(op, "CREATE2") == 0) {
		if (phase != BP_ERC7562_FACTORY)
			return refuse(r, -32502, "OP-031", "%s uses CREATE2: only the factory may, once",
			    phase_name(phase));
		if (++r->create2 > 1)
			return refuse(r, -32502, "OP-031", "factory uses CREATE2 more than once");
	}
	if (strcmp(op, "SLOAD") == 0 || strcmp(op, "SSTORE") == 0 || strcmp(op, "TLOAD") == 0 ||
	    strcmp(op, "TSTORE") == 0) {
		if (r->nacc >= ACCESS_MAX)
			return refuse(r, -32502, "STO-000", "%s touches more than %d storage slots",
			    phase_name(phase), ACCESS_MAX);
		if (stack_word(st, 0, &r->acc[r->nacc].slot) == -1)
			return -1;
		r->acc[r->nacc].frame = r->at[depth];
		r->acc[r->nacc].phase = phase;
		r->acc[r->nacc].write = op[1] == 'S';
		r->nacc++;
	}
	if ((strcmp(op, "EXTCODESIZE") == 0 || strcmp(op, "EXTCODEHASH") == 0) &&
	    stack_word(st, 0, &w) == 0 && ndepth == depth && cJSON_IsArray(nst) &&
	    stack_word(nst, 0, &w2) == 0) {
		static const uint8_t empty_hash[32] = {
			0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d, 0xb2,
			0xdc, 0xc7, 0x03, 0xc0, 0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82, 0x27, 0x3b,
			0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70,
		};

		word_addr(&w, to);
		if ((is_zero(&w2) || memcmp(w2.b, empty_hash, 32) == 0) && !bp_erc7562_precompile(to) &&
		    !same(to, r->in->addr[BP_ERC7562_ACCOUNT])) {
			fmt_addr(to, a);
			return refuse(r, -32502, "OP-041", "%s reads the code of %s, which has none",
			    phase_name(phase), a);
		}
	}
	if (bp_erc7562_call_family(op)) {
		int plain = op[0] == 'C' && op[4] != 'C';	/* CALL, CALLCODE carry a value */
		uint64_t args = stack_u64(st, plain || strcmp(op, "CALLCODE") == 0 ? 4 : 3);

		if (stack_word(st, 1, &w) == -1)
			return -1;
		word_addr(&w, to);
		if ((plain || strcmp(op, "CALLCODE") == 0) && stack_word(st, 2, &w2) == 0 &&
		    !is_zero(&w2) && !same(to, r->in->entry_point)) {
			fmt_addr(to, a);
			return refuse(r, -32502, "OP-061", "%s calls %s with value: only the EntryPoint "
			    "may get value", phase_name(phase), a);
		}
		if (ndepth == depth && !bp_erc7562_precompile(to) && !same(to, r->in->addr[BP_ERC7562_ACCOUNT])) {
			fmt_addr(to, a);
			return refuse(r, -32502, "OP-041", "%s calls %s, which has no code",
			    phase_name(phase), a);
		}
		if (same(to, r->in->entry_point)) {
			if (strcmp(op, "DELEGATECALL") == 0 || strcmp(op, "CALLCODE") == 0)
				return refuse(r, -32502, "OP-054", "%s runs the EntryPoint's code in its "
				    "own frame", phase_name(phase));
			if (args == 0 && judge_ep_call(r, phase, 0, 0))
				return 1;
			pend->ep = args != 0;
		}
	}
	if (strcmp(op, "MSTORE") == 0 && stack_word(st, 1, &w) == 0)
		shadow_store(&f->mem, stack_u64(st, 0), &w);
	else if (strcmp(op, "MSTORE8") == 0)
		shadow_clobber(&f->mem, stack_u64(st, 0), 1);
	else if (strcmp(op, "CALLDATACOPY") == 0 || strcmp(op, "CODECOPY") == 0 ||
	    strcmp(op, "RETURNDATACOPY") == 0 || strcmp(op, "MCOPY") == 0)
		shadow_clobber(&f->mem, stack_u64(st, 0), stack_u64(st, 2));
	else if (strcmp(op, "EXTCODECOPY") == 0)
		shadow_clobber(&f->mem, stack_u64(st, 1), stack_u64(st, 3));
	else if ((strcmp(op, "KECCAK256") == 0 || strcmp(op, "SHA3") == 0) && r->nkec < KECCAK_MAX &&
	    stack_u64(st, 1) >= 32 && shadow_load(&f->mem, stack_u64(st, 0), &w) == 0 &&
	    ndepth == depth && cJSON_IsArray(nst) && stack_word(nst, 0, &w2) == 0) {
		r->kec[r->nkec].first = w;
		r->kec[r->nkec].hash = w2;
		r->nkec++;
	}
frames:
	/* A call or create at depth d opens a frame when the next step is at d + 1. */
	if (bp_erc7562_call_family(op) || strcmp(op, "CREATE") == 0 || strcmp(op, "CREATE2") == 0) {
		pend->kind = bp_erc7562_call_family(op) ? (strcmp(op, "DELEGATECALL") == 0 ||
		    strcmp(op, "CALLCODE") == 0 ? 2 : 1) : 3;
		pend->create2 = strcmp(op, "CREATE2") == 0;
		if (pend->kind != 3) {
			if (stack_word(st, 1, &w) == -1)
				return -1;
			word_addr(&w, pend->to);
		}
		pend->from = r->at[depth];
		pend->phase = depth == 1 && pend->kind != 3 ? bp_erc7562_phase(r->in, pend->to) : phase;
	}
	if (ndepth == depth + 1 && pend->kind != 0) {
		if ((id = open_frame(r, ndepth, pend->kind == 3 ? NULL : pend->to,
		    pend->kind == 2 ? pend->from : -1, pend->phase, pend->kind == 3)) == -2)
			return refuse(r, -32502, "OP-000", "validation opens more than %d frames",
			    FRAMES_TOTAL);
		if (id == -1)
			return -1;
		r->fr[id].ep_call = pend->ep;
		if (pend->create2)
			r->create2_frame = id;
	}
	if (ndepth >= 1 && ndepth < depth) {
		/* A return: a created contract's address is the top of the caller's next stack. */
		for (; depth > ndepth; depth--) {
			struct frame *g = &r->fr[r->at[depth]];

			if (g->creates && !g->known && cJSON_IsArray(nst) &&
			    stack_word(nst, 0, &w) == 0 && !is_zero(&w)) {
				word_addr(&w, g->code);
				g->known = 1;
			}
			if (g->ep_call && judge_ep_call(r, g->phase, 1, 0))
				return 1;
		}
	}
	if (bp_erc7562_call_family(op) || strcmp(op, "CREATE") == 0 || strcmp(op, "CREATE2") == 0)
		if (ndepth != depth + 1)
			memset(pend, 0, sizeof(*pend));
	if (ndepth == depth + 1)
		memset(pend, 0, sizeof(*pend));
	return 0;
}

/* 1 when slot is associated with address a: a itself, or keccak(a || ...) + n, n <= 128. */
static int
associated(const struct run *r, const struct word *slot, const uint8_t a[20])
{
	struct bp_u256 s, h, d, span;
	struct word aw;
	int i;

	addr_word(a, &aw);
	if (memcmp(slot->b, aw.b, 32) == 0)
		return 1;
	bp_u256_from_be32(&s, slot->b);
	bp_u256_from_u64(&span, ASSOC_SPAN);
	for (i = 0; i < r->nkec; i++) {
		if (memcmp(r->kec[i].first.b, aw.b, 32) != 0)
			continue;
		bp_u256_from_be32(&h, r->kec[i].hash.b);
		if (bp_u256_cmp(&s, &h) >= 0 && bp_u256_sub(&d, &s, &h) == 0 &&
		    bp_u256_cmp(&d, &span) <= 0)
			return 1;
	}
	return 0;
}

/* 1 when the phase wrote slot of the storage of frame fid's address. */
static int
written(const struct run *r, int phase, const uint8_t c[20], const struct word *slot)
{
	uint8_t a[20];
	int i;

	for (i = 0; i < r->nacc; i++)
		if (r->acc[i].write && r->acc[i].phase == phase &&
		    memcmp(r->acc[i].slot.b, slot->b, 32) == 0 &&
		    storage_addr(r, r->acc[i].frame, a) == 0 && same(a, c))
			return 1;
	return 0;
}

/* The storage rules (STO-010 .. STO-033) over every access recorded. */
static int
storage_rules(struct run *r)
{
	const struct bp_erc7562_input *in = r->in;
	char a[BP_ADDR_STRLEN], slot[67];
	const struct access *x;
	const char *rule = NULL, *what = "";
	uint8_t c[20];
	int i, p;

	for (i = 0; i < r->nacc; i++) {
		x = &r->acc[i];
		p = x->phase;
		if (storage_addr(r, x->frame, c) == -1)
			continue;	/* a CREATE that failed: nothing was stored */
		if (same(c, in->entry_point) || same(c, in->addr[BP_ERC7562_ACCOUNT]))
			continue;	/* the EntryPoint's deposits; STO-010 the account's own */
		if (associated(r, &x->slot, in->addr[BP_ERC7562_ACCOUNT])) {
			/* STO-021/022: while the account is deployed, only with a staked factory. */
			if (!in->present[BP_ERC7562_FACTORY] ||
			    (p == BP_ERC7562_ACCOUNT && in->staked[BP_ERC7562_FACTORY]))
				continue;
			rule = "STO-021";
			what = "storage associated with the account while it is deployed";
		} else if (same(c, in->addr[p])) {
			rule = "STO-031";
			what = "its own storage";
		} else if (associated(r, &x->slot, in->addr[p])) {
			rule = "STO-032";
			what = "storage associated with it";
		} else if (!written(r, p, c, &x->slot)) {
			rule = "STO-033";
			what = "the storage of another contract (read only)";
		} else {
			fmt_addr(c, a);
			bp_hex_encode(x->slot.b, 32, slot, sizeof(slot));
			return refuse(r, -32502, "STO-033", "%s writes the storage of %s (slot %s), "
			    "neither its own nor associated with it or the account", phase_name(p), a,
			    slot);
		}
		if (in->staked[p])
			continue;
		fmt_addr(c, a);
		bp_hex_encode(x->slot.b, 32, slot, sizeof(slot));
		return refuse(r, -32505, rule, "unstaked %s accesses %s: %s slot %s; allowed only to "
		    "a staked %s", phase_name(p), what, a, slot, phase_name(p));
	}
	return 0;
}

int
bp_erc7562_check(const char *trace, size_t len, const struct bp_erc7562_input *in,
    struct bp_erc7562_verdict *v)
{
	cJSON *root;
	int rc;

	memset(v, 0, sizeof(*v));
	if ((root = cJSON_ParseWithLength(trace, len)) == NULL) {
		snprintf(v->message, sizeof(v->message), "the trace is not JSON");
		return -1;
	}
	rc = bp_erc7562_check_json(root, in, v);
	cJSON_Delete(root);
	return rc;
}

int
bp_erc7562_check_json(const cJSON *trace, const struct bp_erc7562_input *in,
    struct bp_erc7562_verdict *v)
{
	struct pending pend;
	struct run r;
	const cJSON *res, *logs, *s, *next;
	char a[BP_ADDR_STRLEN];
	int rc = -1, k;

	memset(v, 0, sizeof(*v));
	memset(&r, 0, sizeof(r));
	memset(&pend, 0, sizeof(pend));
	r.in = in;
	r.v = v;
	r.fr = calloc(FRAMES_TOTAL, sizeof(*r.fr));
	r.acc = calloc(ACCESS_MAX, sizeof(*r.acc));
	r.kec = calloc(KECCAK_MAX, sizeof(*r.kec));
	for (k = 0; k < FRAMES_MAX; k++)
		r.at[k] = -1;
	if (r.fr == NULL || r.acc == NULL || r.kec == NULL) {
		snprintf(v->message, sizeof(v->message), "out of memory");
		goto out;
	}
	res = cJSON_GetObjectItemCaseSensitive(trace, "result");
	logs = cJSON_GetObjectItemCaseSensitive(res != NULL ? res : trace, "structLogs");
	if (!cJSON_IsArray(logs)) {
		snprintf(v->message, sizeof(v->message), "the trace has no structLogs");
		goto out;
	}
	open_frame(&r, 1, in->entry_point, -1, PHASE_NONE, 0);
	for (s = logs->child; s != NULL; s = next) {
		next = s->next;
		if ((k = step(&r, s, next, &pend)) == -1) {
			snprintf(v->message, sizeof(v->message), "a step of the trace does not read");
			goto out;
		}
		if (k == 1)
			break;
	}
	if (v->code == 0 && r.create2 == 1 && r.create2_frame > 0 &&
	    r.fr[r.create2_frame].known &&
	    !same(r.fr[r.create2_frame].code, in->addr[BP_ERC7562_ACCOUNT])) {
		fmt_addr(r.fr[r.create2_frame].code, a);
		refuse(&r, -32502, "OP-031", "factory's CREATE2 deploys %s, not the sender", a);
	}
	if (v->code == 0)
		storage_rules(&r);
	rc = 0;
out:
	if (rc == -1)
		v->code = 0;
	free(r.fr);
	free(r.acc);
	free(r.kec);
	return rc;
}
