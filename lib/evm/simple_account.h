/*
 * ERC-4337 smart wallets as SimpleAccountFactory v0.6 makes them (docs/wallets.md): the
 * counterfactual address, the initCode of the first UserOperation, and the few calls and events
 * lib/wallet/wallets.c reads from the chain. Everything here is a pure function of its arguments, so
 * the unit tests check it without a chain (tests/unit/test_evm_simple_account.c).
 *
 * The factory deploys each wallet as an ERC1967Proxy with CREATE2:
 *
 *	address  = keccak256(0xff ++ factory ++ salt ++ keccak256(initCode))[12:]
 *	initCode = proxy creation code ++ abi.encode(implementation,
 *		       abi.encodeCall(SimpleAccount.initialize, (owner)))
 *
 * The proxy creation code is bp_simple_account_proxy_code, copied from the factory's own
 * bytecode; a factory with other code gives other addresses (lib/wallet/wallets.c checks the configured
 * factory once per process against its getAddress).
 */
#ifndef BP_EVM_SIMPLE_ACCOUNT_H
#define BP_EVM_SIMPLE_ACCOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "entry_point.h"

#define BP_SIMPLE_ACCOUNT_SALT_LEN		32
/* factory (20) ++ createAccount selector (4) ++ owner word ++ salt word. */
#define BP_SIMPLE_ACCOUNT_INIT_CODE_LEN		(20 + 4 + 32 + 32)
/* selector ++ two words: getNonce(address,uint192) and getAddress(address,uint256). */
#define BP_SIMPLE_ACCOUNT_CALL2_LEN		(4 + 32 + 32)
/* A salt as text: at most 78 decimal digits, or "0x" and at most 64 hex digits. */
#define BP_SIMPLE_ACCOUNT_SALT_DEC_MAX		78
#define BP_SIMPLE_ACCOUNT_SALT_HEX_MAX		66

/* The ERC1967Proxy creation code of SimpleAccountFactory v0.6 (1985 bytes). */
extern const uint8_t	bp_simple_account_proxy_code[];
extern const size_t	bp_simple_account_proxy_code_len;
/* The same of SimpleAccountFactory v0.7 (1047 bytes) and v0.8 (680), simple_account_code.c. */
extern const uint8_t	bp_simple_account_proxy_code_v07[];
extern const size_t	bp_simple_account_proxy_code_v07_len;
extern const uint8_t	bp_simple_account_proxy_code_v08[];
extern const size_t	bp_simple_account_proxy_code_v08_len;

/*
 * What the creation code deploys: the proxy's runtime code, the same for every wallet of such
 * a factory (no immutables), at these bytes of bp_simple_account_proxy_code (checked against
 * a deployed wallet of the devchain). Which implementation it runs is in the EIP-1967 slot.
 */
#define BP_SIMPLE_ACCOUNT_PROXY_RUNTIME_OFF	1101
#define BP_SIMPLE_ACCOUNT_PROXY_RUNTIME_LEN	845
/*
 * The same runtime of v0.7's and v0.8's proxies: the tail of their creation code (checked
 * against deployed wallets of the devchain, tests/e2e/entrypoints.test.mjs through sponsorship).
 */
#define BP_SIMPLE_ACCOUNT_PROXY_V07_RUNTIME_OFF	864
#define BP_SIMPLE_ACCOUNT_PROXY_V07_RUNTIME_LEN	183
#define BP_SIMPLE_ACCOUNT_PROXY_V08_RUNTIME_OFF	539
#define BP_SIMPLE_ACCOUNT_PROXY_V08_RUNTIME_LEN	141
/* The proxy runtime of version's wallets, its length into *len. */
const uint8_t	*bp_simple_account_proxy_runtime(enum bp_ep_version version, size_t *len);
/* bytes32(uint256(keccak256("eip1967.proxy.implementation")) - 1). */
#define BP_SIMPLE_ACCOUNT_IMPL_SLOT \
	"0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"

/*
 * Parses a salt as the API takes it (SPEC.md section 4): a uint256 written in decimal ("0",
 * "42", up to 78 digits) or in hex ("0x2a", "0X2A", up to 64 digits); leading zeros are allowed
 * within those lengths. No sign, space, NUL or other byte. Writes the 32-byte big-endian word.
 * Returns 0, or -1 for anything else, "", "0x" and values >= 2^256 included (out untouched).
 */
int	bp_simple_account_parse_salt(const char *s, size_t len, uint8_t out[32]);

/* Writes the salt in decimal + NUL to out (room for cap bytes, 79 suffice); 0 or -1. */
int	bp_simple_account_format_salt(const uint8_t salt[32], char *out, size_t cap);

/*
 * Writes the Keccak-256 of the proxy's initCode for implementation impl and owner: the hash
 * CREATE2 takes. Cannot fail.
 */
void	bp_simple_account_init_code_hash(const uint8_t impl[20], const uint8_t owner[20],
	    uint8_t hash[32]);

/* Writes the CREATE2 address of code_hash deployed by deployer with salt. Cannot fail. */
void	bp_simple_account_create2(const uint8_t deployer[20], const uint8_t salt[32],
	    const uint8_t code_hash[32], uint8_t out[20]);

/*
 * Writes the counterfactual address of the wallet that factory (whose implementation is impl)
 * deploys for owner and salt: what the factory's getAddress(owner, salt) answers. Cannot fail.
 */
void	bp_simple_account_address(const uint8_t factory[20], const uint8_t impl[20],
	    const uint8_t owner[20], const uint8_t salt[32], uint8_t out[20]);
/* The same for version's SimpleAccountFactory (v0.6: bp_simple_account_address). */
void	bp_simple_account_address_v(enum bp_ep_version version, const uint8_t factory[20],
	    const uint8_t impl[20], const uint8_t owner[20], const uint8_t salt[32],
	    uint8_t out[20]);

/*
 * Simple7702Account of @account-abstraction/contracts 0.8.0, the account an EOA delegates to
 * with EIP-7702, at its canonical address (the deterministic deployer, salt 0: the address
 * commits to the code, the same on every chain). Its execute(address,uint256,bytes) and
 * executeBatch((address,uint256,bytes)[]) are BaseAccount's, as v0.8's SimpleAccount's; it
 * serves EntryPoint v0.8 only (its entryPoint() is a constant).
 */
extern const uint8_t	bp_simple_account_7702[20];

/*
 * Writes the initCode of the wallet's first UserOperation:
 * factory ++ createAccount(owner, salt) calldata (BP_SIMPLE_ACCOUNT_INIT_CODE_LEN bytes).
 * Cannot fail.
 */
void	bp_simple_account_init_code(const uint8_t factory[20], const uint8_t owner[20],
	    const uint8_t salt[32], uint8_t out[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN]);

/* Calldata of EntryPoint.getNonce(sender, key) with a key below 2^64 (the API reads key 0). */
void	bp_simple_account_get_nonce_call(const uint8_t sender[20], uint64_t key,
	    uint8_t out[BP_SIMPLE_ACCOUNT_CALL2_LEN]);

/* Calldata of SimpleAccountFactory.getAddress(owner, salt). */
void	bp_simple_account_get_address_call(const uint8_t owner[20], const uint8_t salt[32],
	    uint8_t out[BP_SIMPLE_ACCOUNT_CALL2_LEN]);

/*
 * Topic 0 of EntryPoint v0.6's AccountDeployed(bytes32 indexed userOpHash, address indexed
 * sender, address factory, address paymaster): sender is topic 2.
 */
void	bp_simple_account_account_deployed_topic(uint8_t out[32]);

/*
 * Topic 0 of SimpleAccount's SimpleAccountInitialized(address indexed entryPoint, address
 * indexed owner), which the wallet itself emits when it is deployed, however that happened.
 */
void	bp_simple_account_initialized_topic(uint8_t out[32]);

#endif
