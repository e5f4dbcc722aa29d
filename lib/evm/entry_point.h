/*
 * The ERC-4337 EntryPoint versions a network may serve side by side (v0.6, v0.7, v0.8; issue
 * 23, docs/wallets.md, docs/gas.md) and what the config gives each: the EntryPoint, its
 * SimpleAccountFactory with the factory's account implementation, and its VerifyingPaymaster.
 * v0.6's are the [chain] keys entry_point, account_factory, account_implementation and
 * paymaster; v0.7's and v0.8's the same names with _v07 and _v08. entry_point_version names
 * the network's default version ("0.6" when absent).
 */
#ifndef BP_EVM_ENTRY_POINT_H
#define BP_EVM_ENTRY_POINT_H

#include <stdint.h>

#include "core/config.h"

enum bp_ep_version {
	BP_EP_V06,	/* 0 */
	BP_EP_V07,	/* 1 */
	BP_EP_V08,	/* 2 */
	BP_EP__MAX
};

/* A version's contracts on a network: config strings (lower or mixed case), "" when absent. */
struct bp_entry_point {
	enum bp_ep_version	 version;
	const char		*entry_point;
	const char		*factory;
	const char		*implementation;
	const char		*paymaster;
};

/* "0.6", "0.7", "0.8": the API's and the table's names. */
const char	*bp_ep_version_name(enum bp_ep_version);
/* The version named s (exactly one of the names above) into *v; 0, or -1 for anything else. */
int		 bp_ep_version_parse(const char *s, enum bp_ep_version *v);

/* Fills *ep with version's contracts on net. Cannot fail. */
void		 bp_entry_point_of(const struct bp_network *net, enum bp_ep_version version,
		    struct bp_entry_point *ep);
/*
 * The network's default version (its entry_point_version, "0.6" when absent) into *v; 0, or
 * -1 when the key names no version (checked when a program starts: bp_entry_point_check).
 */
int		 bp_entry_point_default(const struct bp_network *net, enum bp_ep_version *v);
/*
 * The version whose EntryPoint on net is address (20 bytes) into *ep; 0, or -1 when none is.
 */
int		 bp_entry_point_find(const struct bp_network *net, const uint8_t address[20],
		    struct bp_entry_point *ep);
/*
 * Checks every network's entry_point_version; logs and returns -1 for one that names no
 * version, else 0.
 */
int		 bp_entry_point_check(const struct bp_config *cfg);

#endif
