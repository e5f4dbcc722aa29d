/*
 * ERC-7677 paymaster methods of the bundler (bundler_paymaster.h).
 */
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "bundler.h"
#include "bundler_paymaster.h"
#include "core/hex.h"
#include "core/http.h"
#include "evm/address.h"
#include "gas/paymaster.h"
#include "gas/policy.h"
#include "gas/sponsor.h"

/* 0x + f x31 + 0 x33 + 7 + a x63 + 1c (docs/devchain.md): r, s and v that recover. */
const uint8_t bp_bundler_dummy_sig[65] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xf0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x7a, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
	0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa,
	0xaa, 0xaa, 0xaa, 0xaa, 0x1c,
};

/*
 * A refusal of sponsorship as an ERC-7677 error: a policy's refusal (403) is a rejected
 * paymaster, a bad member (400) bad params, the rest internal. Returns -1 with c->err set.
 */
static int
pm_refused(struct bp_bundler_call *c, const struct bp_sponsor_result *res)
{
	switch (res->status) {
	case 400:
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "%s", res->message);
	case 403:
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_REJECTED_PAYMASTER,
		    "the policy refused: %s", res->message);
	default:
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "%s", res->message);
	}
}

/*
 * The common checks of both methods: params [op, entryPoint, chainIdHex, {policyId}], the
 * entry point and chain of this network, and the caller's policy, of the key's kind (test or
 * live network), which must pass bp_sponsor_allowed (active, of this chain and network, a
 * paymaster key). 0 with p filled, or -1 with c->err set.
 */
static int
pm_checks(struct bp_bundler_call *c, struct bp_policy *p)
{
	struct bp_sponsor_result res;
	const cJSON *ctx, *pid;
	const char *ep, *cid;
	char why[sizeof(res.message)];
	uint8_t a[20], want[20];
	uint64_t id;
	int found;

	if (cJSON_GetArraySize(c->params) < 4)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "params must be [userOperation, "
		    "entryPoint, chainId, {\"policyId\": \"gp_...\"}]");
	if (!cJSON_IsObject(cJSON_GetArrayItem(c->params, 0)))
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "userOperation must be an object");
	if ((ep = bp_bundler_param_str(c, 1, "entryPoint")) == NULL ||
	    (cid = bp_bundler_param_str(c, 2, "chainId")) == NULL)
		return -1;
	if (bp_addr_parse(ep, strlen(ep), BP_ADDR_CHECKSUM, a) == -1 ||
	    bp_addr_parse(c->net->entry_point, strlen(c->net->entry_point), 0, want) == -1 ||
	    memcmp(a, want, 20) != 0)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "unsupported entry point %.42s", ep);
	if (bp_hex_quantity_lenient(cid, strlen(cid), &id) == -1 ||
	    id != (uint64_t)c->net->chain_id)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "chainId %.20s is not the chain "
		    "of this endpoint (0x%llx)", cid, (unsigned long long)c->net->chain_id);
	ctx = cJSON_GetArrayItem(c->params, 3);
	pid = cJSON_GetObjectItemCaseSensitive(ctx, "policyId");
	if (!cJSON_IsString(pid))
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "the context must be "
		    "{\"policyId\": \"gp_...\"}");
	if ((found = bp_policy_find(c->r->db, &c->r->key, pid->valuestring, p, why,
	    sizeof(why))) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "database error");
	if (found == 0)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "no gas policy %.40s",
		    pid->valuestring);
	if (found == BP_POLICY_OTHER_KIND)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INVALID_PARAMS, "%s", why);
	/* The rules POST /v1/gas/sponsor applies too, without the member names of its body. */
	if (bp_sponsor_allowed(p, c->net, c->pm_key, &res) != 0)
		return pm_refused(c, &res);
	return 0;
}

int
bp_bundler_pm_stub(struct bp_bundler_call *c)
{
	struct bp_policy p;
	uint8_t pnd[BP_PAYMASTER_PND_LEN];
	char hex[2 * BP_PAYMASTER_PND_LEN + 3];

	if (pm_checks(c, &p) == -1)
		return -1;
	memset(pnd, 0, sizeof(pnd));
	if (bp_addr_parse(c->net->paymaster, strlen(c->net->paymaster), 0, pnd) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "no paymaster configured");
	memcpy(pnd + 20 + 64, bp_bundler_dummy_sig, sizeof(bp_bundler_dummy_sig));
	bp_hex_encode(pnd, sizeof(pnd), hex, sizeof(hex));
	return bp_buf_printf(c->result, "{\"paymasterAndData\":\"%s\",\"isFinal\":false}", hex);
}

int
bp_bundler_pm_data(struct bp_bundler_call *c)
{
	struct bp_sponsor_result res;
	struct bp_policy p;
	char hex[2 * BP_PAYMASTER_PND_LEN + 3];

	if (pm_checks(c, &p) == -1)
		return -1;
	if (bp_sponsor(c->r->db, c->up, c->r->cfg, c->net, c->pm_key, &c->r->key, &p,
	    cJSON_GetArrayItem(c->params, 0), &res) != 200)
		return pm_refused(c, &res);
	bp_hex_encode(res.grant.pnd, sizeof(res.grant.pnd), hex, sizeof(hex));
	return bp_buf_printf(c->result, "{\"paymasterAndData\":\"%s\"}", hex);
}
