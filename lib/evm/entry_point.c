/*
 * The EntryPoint versions and their contracts in the config (entry_point.h).
 */
#include <stdint.h>
#include <string.h>

#include "core/log.h"
#include "address.h"
#include "entry_point.h"

static const char *const version_names[BP_EP__MAX] = { "0.6", "0.7", "0.8" };

const char *
bp_ep_version_name(enum bp_ep_version v)
{
	return (unsigned)v < BP_EP__MAX ? version_names[v] : "?";
}

int
bp_ep_version_parse(const char *s, enum bp_ep_version *v)
{
	int i;

	for (i = 0; s != NULL && i < BP_EP__MAX; i++)
		if (strcmp(s, version_names[i]) == 0) {
			*v = (enum bp_ep_version)i;
			return 0;
		}
	return -1;
}

void
bp_entry_point_of(const struct bp_network *net, enum bp_ep_version version,
    struct bp_entry_point *ep)
{
	ep->version = version;
	switch (version) {
	case BP_EP_V07:
		ep->entry_point = net->entry_point_v07;
		ep->factory = net->account_factory_v07;
		ep->implementation = net->account_implementation_v07;
		ep->paymaster = net->paymaster_v07;
		break;
	case BP_EP_V08:
		ep->entry_point = net->entry_point_v08;
		ep->factory = net->account_factory_v08;
		ep->implementation = net->account_implementation_v08;
		ep->paymaster = net->paymaster_v08;
		break;
	default:
		ep->version = BP_EP_V06;
		ep->entry_point = net->entry_point;
		ep->factory = net->account_factory;
		ep->implementation = net->account_implementation;
		ep->paymaster = net->paymaster;
		break;
	}
}

int
bp_entry_point_default(const struct bp_network *net, enum bp_ep_version *v)
{
	if (net->entry_point_version[0] == '\0') {
		*v = BP_EP_V06;
		return 0;
	}
	return bp_ep_version_parse(net->entry_point_version, v);
}

int
bp_entry_point_find(const struct bp_network *net, const uint8_t address[20],
    struct bp_entry_point *ep)
{
	uint8_t a[20];
	int i;

	for (i = 0; i < BP_EP__MAX; i++) {
		bp_entry_point_of(net, (enum bp_ep_version)i, ep);
		if (ep->entry_point[0] != '\0' &&
		    bp_addr_parse(ep->entry_point, strlen(ep->entry_point), 0, a) == 0 &&
		    memcmp(a, address, 20) == 0)
			return 0;
	}
	return -1;
}

int
bp_entry_point_check(const struct bp_config *cfg)
{
	enum bp_ep_version v;
	size_t i;

	for (i = 0; i < cfg->nnets; i++)
		if (bp_entry_point_default(&cfg->nets[i], &v) == -1) {
			bp_err("[chain %s.%s] entry_point_version: \"%s\" is not one of 0.6, 0.7, "
			    "0.8", cfg->nets[i].chain, cfg->nets[i].network,
			    cfg->nets[i].entry_point_version);
			return -1;
		}
	return 0;
}
