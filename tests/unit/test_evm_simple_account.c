/*
 * lib/evm/simple_account.c: salt parsing (with hostile rows), the embedded proxy creation code,
 * and the counterfactual addresses and calldata against vectors read from the devchain.
 *
 * How the vectors were obtained (once, by hand): devchain/start.sh 28545, then
 * node devchain/deploy.mjs --rpc http://127.0.0.1:28545 (SimpleAccountFactory v0.6 at
 * 0x9406cc6185a346906296840746125a0e44976454, implementation
 * 0x8abb13360b87be5eeb1b98647a016add927a136c), then for each row ethers v6
 * factory.getFunction('getAddress')(owner, salt) through eth_call. The calldata rows are
 * ethers' Interface.encodeFunctionData of the artifacts' ABIs, the topics ethers' id().
 */
#include <stdint.h>
#include <string.h>

#include "core/hex.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/simple_account.h"
#include "unit.h"

#define FACTORY	"0x9406cc6185a346906296840746125a0e44976454"
#define IMPL	"0x8abb13360b87be5eeb1b98647a016add927a136c"

static void
addr(const char *s, uint8_t out[20])
{
	CU_ASSERT_FATAL(bp_addr_parse(s, strlen(s), 0, out) == 0);
}

static void
hex_is(const uint8_t *p, size_t n, const char *want)
{
	char got[1024];

	CU_ASSERT_FATAL(bp_hex_encode(p, n, got, sizeof(got)) == 0);
	CU_ASSERT_STRING_EQUAL(got, want);
}

/* The embedded creation code: its size, its ends, its Keccak-256 (lib/evm/simple_account.c). */
static void
test_proxy_code(void)
{
	uint8_t h[32];

	CU_ASSERT_EQUAL(bp_simple_account_proxy_code_len, 1985);
	/* It starts with the usual free-memory-pointer setup and reads its constructor args. */
	CU_ASSERT(memcmp(bp_simple_account_proxy_code, "\x60\x80\x60\x40\x52", 5) == 0);
	bp_keccak256(bp_simple_account_proxy_code, bp_simple_account_proxy_code_len, h);
	hex_is(h, 32, "0x2ef949a1ea043e392e2f802f6c9ec056aff8e49b896b4888b937c948d1f9f9fe");
}

/* Rows of getAddress(owner, salt) read from the devchain's factory. */
static const struct {
	const char	*owner;
	const char	*salt;
	const char	*want;	/* as the factory returned it, EIP-55 */
} addr_rows[] = {
	{ "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", "0",
	    "0x2C6626618678dE393f0A0467E960B34Aaab969Be" },
	{ "0x70997970c51812dc3a010c7d01b50e0d17dc79c8", "1",
	    "0x1f8eA1aBA839147D5ca077Ee0d35f1cDb2A0db9c" },
	{ "0x0000000000000000000000000000000000000000", "0x0",
	    "0x82d117f06D5FB3bBa93B28C20Fc626Ab2d17404E" },
	{ "0xffffffffffffffffffffffffffffffffffffffff",
	    "115792089237316195423570985008687907853269984665640564039457584007913129639935",
	    "0x0Ce14ac66c0FfC12521407f656dA2A8eAdAf7A47" },
	{ "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", "123456789",
	    "0xafbC536bB1d1e59cfd690301281d315a4dc7D092" },
	{ "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
	    "0xdeadbeef00000000000000000000000000000000",
	    "0xd9e0B71dF60aD9B975190c39d4B51B04DAcB4c7C" },
	/* The same value as row 4, in upper-case hex with its full 64 digits. */
	{ "0xffffffffffffffffffffffffffffffffffffffff",
	    "0XFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
	    "0x0Ce14ac66c0FfC12521407f656dA2A8eAdAf7A47" },
};

static void
test_address_vectors(void)
{
	uint8_t factory[20], impl[20], owner[20], salt[32], out[20];
	char got[BP_ADDR_STR_MAX];
	size_t i;

	addr(FACTORY, factory);
	addr(IMPL, impl);
	for (i = 0; i < sizeof(addr_rows) / sizeof(addr_rows[0]); i++) {
		addr(addr_rows[i].owner, owner);
		CU_ASSERT_FATAL(bp_simple_account_parse_salt(addr_rows[i].salt,
		    strlen(addr_rows[i].salt), salt) == 0);
		bp_simple_account_address(factory, impl, owner, salt, out);
		CU_ASSERT_FATAL(bp_addr_format_checksum(out, got, sizeof(got)) == 0);
		CU_ASSERT_STRING_EQUAL(got, addr_rows[i].want);
	}
}

/* A wallet's address changes with every input: factory, implementation, owner and salt. */
static void
test_address_inputs(void)
{
	uint8_t factory[20], impl[20], owner[20], salt[32] = { 0 }, base[20], out[20];

	addr(FACTORY, factory);
	addr(IMPL, impl);
	addr("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266", owner);
	bp_simple_account_address(factory, impl, owner, salt, base);
	factory[19] ^= 1;
	bp_simple_account_address(factory, impl, owner, salt, out);
	CU_ASSERT(memcmp(base, out, 20) != 0);
	factory[19] ^= 1;
	impl[0] ^= 0x80;
	bp_simple_account_address(factory, impl, owner, salt, out);
	CU_ASSERT(memcmp(base, out, 20) != 0);
	impl[0] ^= 0x80;
	salt[0] = 1;
	bp_simple_account_address(factory, impl, owner, salt, out);
	CU_ASSERT(memcmp(base, out, 20) != 0);
	salt[0] = 0;
	bp_simple_account_address(factory, impl, owner, salt, out);
	CU_ASSERT(memcmp(base, out, 20) == 0);
}

/*
 * v0.7 and v0.8: getAddress(0x1111...1111, 42) of the canonical SimpleAccountFactory v0.7
 * (0x91E6..8985) and v0.8 (0x13E9..5944) on the devchain, whose account implementations are
 * the factories' first CREATE; each version's proxy code gives its own address, and v0.6's
 * code would not.
 */
static void
test_address_versions(void)
{
	static const struct {
		enum bp_ep_version	 v;
		const char		*factory, *impl, *want;
	} rows[] = {
		{ BP_EP_V07, "0x91e60e0613810449d098b0b5ec8b51a0fe8c8985",
		    "0x68641de71cfea5a5d0d29712449ee254bb1400c2",
		    "0x9f54298476fe3e49104fd3c0c8f30a5b52db6c92" },
		{ BP_EP_V08, "0x13e9ed32155810fdbd067d4522c492d6f68e5944",
		    "0x28426d752372d68d34340bd94390950dce3c9ec3",
		    "0xe78305a1f05203cca1d0e8429e69c9cad73f1de2" },
	};
	uint8_t factory[20], impl[20], owner[20], salt[32] = { 0 }, out[20];
	char got[BP_ADDR_STR_MAX];
	enum bp_ep_version v;
	size_t i;

	memset(owner, 0x11, 20);
	salt[31] = 42;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		addr(rows[i].factory, factory);
		addr(rows[i].impl, impl);
		bp_simple_account_address_v(rows[i].v, factory, impl, owner, salt, out);
		bp_addr_format_lower(out, got, sizeof(got));
		CU_ASSERT_STRING_EQUAL(got, rows[i].want);
		bp_simple_account_address(factory, impl, owner, salt, out);
		bp_addr_format_lower(out, got, sizeof(got));
		CU_ASSERT_STRING_NOT_EQUAL(got, rows[i].want);
	}
	CU_ASSERT_EQUAL(bp_simple_account_proxy_code_v07_len, 1047);
	CU_ASSERT_EQUAL(bp_simple_account_proxy_code_v08_len, 680);
	CU_ASSERT(bp_ep_version_parse("0.7", &v) == 0 && v == BP_EP_V07);
	CU_ASSERT(bp_ep_version_parse("0.8", &v) == 0 && v == BP_EP_V08);
	CU_ASSERT(bp_ep_version_parse("0.6", &v) == 0 && v == BP_EP_V06);
	CU_ASSERT_EQUAL(bp_ep_version_parse("0.9", &v), -1);
	CU_ASSERT_EQUAL(bp_ep_version_parse("v0.7", &v), -1);
	CU_ASSERT_EQUAL(bp_ep_version_parse("", &v), -1);
	CU_ASSERT_STRING_EQUAL(bp_ep_version_name(BP_EP_V08), "0.8");
}

/* CREATE2 alone, EIP-1014's example 1 (deployer 0, salt 0, init code 0x00). */
static void
test_create2_eip1014(void)
{
	uint8_t deployer[20] = { 0 }, salt[32] = { 0 }, code = 0, h[32], out[20];
	char got[BP_ADDR_STR_MAX];

	bp_keccak256(&code, 1, h);
	bp_simple_account_create2(deployer, salt, h, out);
	CU_ASSERT_FATAL(bp_addr_format_checksum(out, got, sizeof(got)) == 0);
	CU_ASSERT_STRING_EQUAL(got, "0x4D1A2e2bB4F88F0250f26Ffff098B0b30B26BF38");
}

static void
test_calldata(void)
{
	uint8_t factory[20], owner[20], sender[20], salt[32];
	uint8_t ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN], call[BP_SIMPLE_ACCOUNT_CALL2_LEN], topic[32];

	addr(FACTORY, factory);
	addr("0x70997970c51812dc3a010c7d01b50e0d17dc79c8", owner);
	CU_ASSERT_FATAL(bp_simple_account_parse_salt("1", 1, salt) == 0);
	bp_simple_account_init_code(factory, owner, salt, ic);
	hex_is(ic, sizeof(ic), "0x9406cc6185a346906296840746125a0e449764545fbfb9cf"
	    "00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
	    "0000000000000000000000000000000000000000000000000000000000000001");

	addr("0x2C6626618678dE393f0A0467E960B34Aaab969Be", sender);
	bp_simple_account_get_nonce_call(sender, 0, call);
	hex_is(call, sizeof(call), "0x35567e1a"
	    "0000000000000000000000002c6626618678de393f0a0467e960b34aaab969be"
	    "0000000000000000000000000000000000000000000000000000000000000000");

	addr("0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc", owner);
	CU_ASSERT_FATAL(bp_simple_account_parse_salt("123456789", 9, salt) == 0);
	bp_simple_account_get_address_call(owner, salt, call);
	hex_is(call, sizeof(call), "0x8cb84e18"
	    "0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc"
	    "00000000000000000000000000000000000000000000000000000000075bcd15");

	bp_simple_account_account_deployed_topic(topic);
	hex_is(topic, 32, "0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d");
	bp_simple_account_initialized_topic(topic);
	hex_is(topic, 32, "0x47e55c76e7a6f1fd8996a1da8008c1ea29699cca35e7bcd057f2dec313b6e5de");
}

#define S(x)	x, sizeof(x) - 1

/* Salt text: what passes (with its decimal value) and what must not. */
static const struct {
	const char	*s;
	size_t		 len;
	const char	*dec;	/* NULL: must be refused */
} salt_rows[] = {
	{ S("0"), "0" },
	{ S("00"), "0" },
	{ S("42"), "42" },
	{ S("0x2a"), "42" },
	{ S("0X2A"), "42" },
	{ S("0x0"), "0" },
	{ S("0x00000000000000000000000000000000000000000000000000000000000000ff"), "255" },
	/* 2^256 - 1: 78 decimal digits, the largest that passes. */
	{ S("115792089237316195423570985008687907853269984665640564039457584007913129639935"),
	    "115792089237316195423570985008687907853269984665640564039457584007913129639935" },
	/* 2^256: 78 digits, one too many in value. */
	{ S("115792089237316195423570985008687907853269984665640564039457584007913129639936"),
	    NULL },
	/* 78 nines, far above 2^256. */
	{ S("999999999999999999999999999999999999999999999999999999999999999999999999999999"),
	    NULL },
	/* 79 digits, even with a leading zero (the text bound comes first). */
	{ S("0115792089237316195423570985008687907853269984665640564039457584007913129639935"),
	    NULL },
	/* 2^256 in hex: 65 digits. */
	{ S("0x10000000000000000000000000000000000000000000000000000000000000000"), NULL },
	{ S(""), NULL },
	{ S("0x"), NULL },
	{ S("0X"), NULL },
	{ S("x1"), NULL },
	{ S("-1"), NULL },
	{ S("+1"), NULL },
	{ S("-0"), NULL },
	{ S(" 1"), NULL },
	{ S("1 "), NULL },
	{ S("1.0"), NULL },
	{ S("1e3"), NULL },
	{ S("0x1g"), NULL },
	{ S("0x-1"), NULL },
	{ S("0b1"), NULL },
	{ S("0o7"), NULL },
	{ S("abc"), NULL },
	{ S("١"), NULL },		/* an Arabic-Indic digit one, two UTF-8 bytes */
	{ S("1\0"), NULL },		/* a NUL after a digit */
	{ S("\0" "1"), NULL },
	{ S("0x1\0" "2"), NULL },
	{ S("12\xff"), NULL },
};

static void
test_salt_rows(void)
{
	size_t i;

	for (i = 0; i < sizeof(salt_rows) / sizeof(salt_rows[0]); i++) {
		uint8_t salt[32], keep[32];
		char dec[80];
		int rc;

		memset(salt, 0xa5, sizeof(salt));
		memcpy(keep, salt, sizeof(keep));
		rc = bp_simple_account_parse_salt(salt_rows[i].s, salt_rows[i].len, salt);
		if (salt_rows[i].dec == NULL) {
			CU_ASSERT_EQUAL(rc, -1);
			CU_ASSERT(memcmp(salt, keep, sizeof(salt)) == 0);	/* untouched */
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		CU_ASSERT_EQUAL(bp_simple_account_format_salt(salt, dec, sizeof(dec)), 0);
		CU_ASSERT_STRING_EQUAL(dec, salt_rows[i].dec);
	}
	CU_ASSERT_EQUAL(bp_simple_account_parse_salt(NULL, 0, (uint8_t[32]){ 0 }), -1);
}

/* Formatting needs 79 bytes for the largest salt and says so when given less. */
static void
test_salt_format_cap(void)
{
	uint8_t salt[32];
	char out[79];

	memset(salt, 0xff, sizeof(salt));
	CU_ASSERT_EQUAL(bp_simple_account_format_salt(salt, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strlen(out), 78);
	CU_ASSERT_EQUAL(bp_simple_account_format_salt(salt, out, 78), -1);
}

/* The selectors and topics of lib/evm/simple_account.c equal the hashes of their signatures. */
static void
test_constants(void)
{
	static const char *const sigs[] = {
		"initialize(address)", "createAccount(address,uint256)",
		"getNonce(address,uint192)", "getAddress(address,uint256)",
	};
	uint8_t factory[20] = { 0 }, a[20] = { 0 }, salt[32] = { 0 }, sel[4], topic[32];
	uint8_t ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN], call[BP_SIMPLE_ACCOUNT_CALL2_LEN];
	struct bp_keccak k;
	uint8_t h[32], args[160];

	bp_abi_selector(sigs[1], sel);
	bp_simple_account_init_code(factory, a, salt, ic);
	CU_ASSERT(memcmp(ic + 20, sel, 4) == 0);
	bp_abi_selector(sigs[2], sel);
	bp_simple_account_get_nonce_call(a, 0, call);
	CU_ASSERT(memcmp(call, sel, 4) == 0);
	bp_abi_selector(sigs[3], sel);
	bp_simple_account_get_address_call(a, salt, call);
	CU_ASSERT(memcmp(call, sel, 4) == 0);
	bp_abi_event_topic("AccountDeployed(bytes32,address,address,address)", h);
	bp_simple_account_account_deployed_topic(topic);
	CU_ASSERT(memcmp(h, topic, 32) == 0);
	bp_abi_event_topic("SimpleAccountInitialized(address,address)", h);
	bp_simple_account_initialized_topic(topic);
	CU_ASSERT(memcmp(h, topic, 32) == 0);
	/* initialize(owner) inside the init code hash: rebuild it with the hashed selector. */
	memset(args, 0, sizeof(args));
	args[63] = 0x40;
	args[95] = 36;
	bp_abi_selector(sigs[0], args + 96);
	bp_keccak_init(&k);
	bp_keccak_update(&k, bp_simple_account_proxy_code, bp_simple_account_proxy_code_len);
	bp_keccak_update(&k, args, sizeof(args));
	bp_keccak_final(&k, h);
	bp_simple_account_init_code_hash(a, a, topic);
	CU_ASSERT(memcmp(h, topic, 32) == 0);
}

BP_UNIT_SUITE(evm_simple_account, NULL, NULL,
	{ "proxy creation code", test_proxy_code },
	{ "selectors and topics", test_constants },
	{ "addresses from the devchain factory", test_address_vectors },
	{ "address depends on every input", test_address_inputs },
	{ "addresses of the v0.7 and v0.8 factories", test_address_versions },
	{ "CREATE2 (EIP-1014 example)", test_create2_eip1014 },
	{ "initCode, getNonce, getAddress, topics", test_calldata },
	{ "salt rows", test_salt_rows },
	{ "salt format cap", test_salt_format_cap },
)
