/*
 * The quick pass of ERC-7562 (docs/bundler.md, "ERC-7562"): a struct-log trace WITHOUT stacks
 * (a tenth of the node's work: the stacks are most of a trace), the call tree of the callTracer
 * and the accounts of the prestateTracer, all three of the same validation call, prove most ops
 * clean: the frames come from the call tree (aligned with the steps' depths), so banned opcodes,
 * GAS, CREATE2, calls into the EntryPoint and with value are judged as by lib/bundler/erc7562.c;
 * storage is only proven clean when every access is the sender's or the EntryPoint's, code
 * reads when every code-less account touched is the sender, a precompile or the caller. Anything
 * else is left to the full engine (the trace with stacks), which gives the verdict.
 */
#ifndef BP_ERC7562_QUICK_H
#define BP_ERC7562_QUICK_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "erc7562.h"

/*
 * 1 when the validation is clean, 0 when the full engine must judge it (a rule may be broken,
 * or the traces do not read or do not align). The traces are the three results (not consumed).
 */
int	bp_erc7562_quick(const cJSON *steps, const cJSON *calls, const cJSON *prestate,
	    const struct bp_erc7562_input *in);

/*
 * The static pass (docs/bundler.md, "ERC-7562"): the call tree and the prestate alone, each
 * judged frame's reachable code read for what a rule forbids instead of its steps. 1 when the
 * validation is clean, 0 when the steps must judge it (a frame that can CREATE2 passes only
 * when its own gas proves it ran no CREATE2 the tree does not show).
 */
int	bp_erc7562_quick_static(const cJSON *calls, const cJSON *prestate,
	    const struct bp_erc7562_input *in);

/* What code[0, n)'s reachable instructions hold that a rule may forbid (bits; for the tests). */
unsigned	bp_erc7562_code_flags(const uint8_t *code, size_t n);

#endif
