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
 * The common checks of both methods: params [op, entryPoint, chainIdHex, {policyId}], an
 * entry point of this network (any of its versions: *version) and its chain, and the caller's
 * policy, of the key's kind (test or live network), which must pass bp_sponsor_allowed
 * (active, of this chain and network, that version's paymaster, a paymaster key). 0 with p
 * filled, or -1 with c->err set.
 */
static int
pm_checks(struct bp_bundler_call *c, struct bp_policy *p, enum bp_ep_version *version)
{
	struct bp_sponsor_result res;
	struct bp_entry_point epc;
	const cJSON *ctx, *pid;
	const char *ep, *cid;
	char why[sizeof(res.message)];
	uint8_t a[20];
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
	    bp_entry_point_find(c->net, a, &epc) == -1)
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
	if (bp_sponsor_allowed(p, c->net, c->pm_key, ep, version, &res) != 0)
		return pm_refused(c, &res);
	return 0;
}

/*
 * Appends the v0.7/v0.8 form of a paymasterAndData pnd (pnd_len bytes) to the result:
 * paymaster, paymasterData and the two gas limits; 0, or -1 when full.
 */
static int
pm_v07_members(struct bp_bundler_call *c, const uint8_t *pnd, size_t pnd_len)
{
	char pm[BP_ADDR_STR_MAX], data[2 * BP_PAYMASTER_PND_MAX + 3], gas[2][67];
	struct bp_u256 v;
	size_t i;

	bp_addr_format_checksum(pnd, pm, sizeof(pm));
	bp_hex_encode(pnd + 52, pnd_len - 52, data, sizeof(data));
	for (i = 0; i < 2; i++) {
		bp_u256_from_be(&v, pnd + 20 + 16 * i, 16);
		bp_u256_to_quantity(&v, gas[i], sizeof(gas[i]));
	}
	return bp_buf_printf(c->result, "\"paymaster\":\"%s\",\"paymasterData\":\"%s\","
	    "\"paymasterVerificationGasLimit\":\"%s\",\"paymasterPostOpGasLimit\":\"%s\"", pm,
	    data, gas[0], gas[1]);
}

int
bp_bundler_pm_stub(struct bp_bundler_call *c)
{
	struct bp_entry_point epc;
	struct bp_policy p;
	enum bp_ep_version v;
	uint8_t pnd[BP_PAYMASTER_PND_MAX];
	char hex[2 * BP_PAYMASTER_PND_MAX + 3];
	size_t off;

	if (pm_checks(c, &p, &v) == -1)
		return -1;
	bp_entry_point_of(c->net, v, &epc);
	memset(pnd, 0, sizeof(pnd));
	if (bp_addr_parse(epc.paymaster, strlen(epc.paymaster), 0, pnd) == -1)
		return bp_bundler_fail(c, BP_USEROP_VALIDATE_INTERNAL, "no paymaster configured");
	/* The final data's layout and length, a signature that recovers, no validity window. */
	off = v == BP_EP_V06 ? 20 : 52;
	memcpy(pnd + off + 64, bp_bundler_dummy_sig, sizeof(bp_bundler_dummy_sig));
	if (v == BP_EP_V06) {
		bp_hex_encode(pnd, BP_PAYMASTER_PND_LEN, hex, sizeof(hex));
		return bp_buf_printf(c->result, "{\"paymasterAndData\":\"%s\",\"isFinal\":false}",
		    hex);
	}
	/* The verification gas the final data will be signed over (the op may bring its own). */
	{
		struct bp_u256 gas;
		uint8_t w[32];

		bp_u256_from_u64(&gas, BP_PAYMASTER_V07_VERIFICATION_GAS);
		bp_u256_to_be32(&gas, w);
		memcpy(pnd + 20, w + 16, 16);
	}
	return bp_buf_adds(c->result, "{") == -1 ||
	    pm_v07_members(c, pnd, BP_PAYMASTER_V07_PND_LEN) == -1 ||
	    bp_buf_adds(c->result, ",\"isFinal\":false}") == -1 ? -1 : 0;
}

int
bp_bundler_pm_data(struct bp_bundler_call *c)
{
	struct bp_sponsor_result res;
	struct bp_policy p;
	enum bp_ep_version v;
	char hex[2 * BP_PAYMASTER_PND_MAX + 3];

	if (pm_checks(c, &p, &v) == -1)
		return -1;
	if (bp_sponsor(c->r->db, NULL, c->up, c->r->cfg, c->net, c->pm_key, &c->r->key, &p, v,
	    cJSON_GetArrayItem(c->params, 0), &res) != 200)
		return pm_refused(c, &res);
	if (v != BP_EP_V06)
		return bp_buf_adds(c->result, "{") == -1 ||
		    pm_v07_members(c, res.grant.pnd, res.grant.pnd_len) == -1 ||
		    bp_buf_adds(c->result, "}") == -1 ? -1 : 0;
	bp_hex_encode(res.grant.pnd, res.grant.pnd_len, hex, sizeof(hex));
	return bp_buf_printf(c->result, "{\"paymasterAndData\":\"%s\"}", hex);
}
