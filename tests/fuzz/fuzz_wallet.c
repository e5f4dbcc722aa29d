/*
 * libFuzzer harness for what the smart-wallet API (fcgi/wallets.c) takes from a client: the
 * salt (bp_simple_account_parse_salt, lib/evm/simple_account.c), the owner and the path's wallet
 * address (bp_addr_parse, with the EIP-55 checksum for the owner), and the POST body around them
 * (bp_req_json, then the members read as wallet_create reads them). Each input goes through all
 * three: as a salt, as an address, and as a body whose string members are parsed again.
 *
 * Beyond memory safety it checks, aborting on a violation:
 *
 *  - bp_simple_account_parse_salt accepts exactly what SPEC.md section 4 allows, decided here by a
 *    reference written from the header's rules (decimal: 1 to 78 digits and below 2^256; hex:
 *    "0x"/"0X" and 1 to 64 digits), writes the value those digits name, and leaves out untouched
 *    when it refuses;
 *  - bp_simple_account_format_salt prints a decimal that is the input without its leading zeros and
 *    parses back to the same word; with too small a buffer it fails and stays in it;
 *  - bp_addr_parse accepts "0x"/"0X" and 40 hex digits and nothing else; with the checksum flag
 *    a mixed-case string passes exactly when it is the EIP-55 form of its bytes;
 *  - a body bp_req_json refuses answers 400 in the uniform error body;
 *  - the table of the body's members (bp_valid_body, lib/core/valid.c) takes a member exactly
 *    when a reference of the rules takes it, names the member it refuses, and bp_req_valid
 *    answers its refusals in the uniform error body;
 *  - bp_json_find_nul (lib/core/http.c: the handler's scan for the NULs cJSON would hide, raw or
 *    \u0000) agrees with a reference written from its header comment that walks the JSON
 *    grammar (a container stack, member names where an object expects one, escapes decoded),
 *    on what cJSON parsed, and names the same top-level member; the body cJSON prints back from
 *    the parsed tree has no NUL left;
 *  - what the handler derives from a parsed owner and salt is consistent: the wallet address is
 *    CREATE2 of the init code hash, and the initCode and eth_call calldata decode back (ABI
 *    readers) to the owner, salt and key they were built from, behind the right selectors.
 *
 * Seeds: the corpus starts empty, as for the other harnesses; tests/fuzz/wallet.dict holds the
 * member names, a checksummed address and the largest salts. An input that does not start with
 * '{' is also sent as the body {"owner": LINE1, "salt": REST, "chain": "ethereum"}, so the
 * fuzzer reaches the members' parsing without having to write JSON.
 *
 *   bash tests/fuzz/run.sh 60      (builds every tests/fuzz/fuzz_*.c and runs each 60 s)
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/hex.h"
#include "core/http.h"
#include "core/util.h"
#include "core/valid.h"
#include "evm/abi.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/simple_account.h"
#include "evm/u256.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* 2^256 - 1, the largest salt. */
static const char u256_max_dec[] =
    "115792089237316195423570985008687907853269984665640564039457584007913129639935";

/* A factory and an implementation, as the config would name them (any 20 bytes do). */
static const uint8_t factory[20] = {
	0x94, 0x06, 0xcc, 0x61, 0x85, 0xa3, 0x46, 0x90, 0x6b, 0x9b,
	0x31, 0x4d, 0x6e, 0x06, 0x4a, 0x84, 0x3a, 0xeb, 0x40, 0x6f,
};
static const uint8_t impl[20] = {
	0x8a, 0xbb, 0x13, 0x36, 0x0b, 0x87, 0xbe, 0x5e, 0xeb, 0x1b,
	0x98, 0x64, 0x7a, 0x01, 0x6a, 0xdd, 0x92, 0x7a, 0x13, 0x6c,
};

static uint8_t sel_create_account[4], sel_get_nonce[4], sel_get_address[4];
static struct bp_req *req;

static int
setup(void)
{
	uint8_t t[32], want[32];

	if (req != NULL)
		return 0;
	bp_abi_selector("createAccount(address,uint256)", sel_create_account);
	bp_abi_selector("getNonce(address,uint192)", sel_get_nonce);
	bp_abi_selector("getAddress(address,uint256)", sel_get_address);
	/* The topics lib/evm/simple_account.c writes out are the hashes of their signatures. */
	bp_simple_account_account_deployed_topic(t);
	bp_abi_event_topic("AccountDeployed(bytes32,address,address,address)", want);
	if (memcmp(t, want, 32) != 0)
		abort();
	bp_simple_account_initialized_topic(t);
	bp_abi_event_topic("SimpleAccountInitialized(address,address)", want);
	if (memcmp(t, want, 32) != 0)
		abort();
	if ((req = malloc(sizeof(*req))) == NULL)
		return -1;
	bp_req_init(req);
	return 0;
}

/* ---- salts ---- */

static int
all(const char *s, size_t len, int (*is)(int))
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!is((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Whether the salt rules accept s, and if so the 32-byte word it names into w: decimal words
 * are left to the round trip through bp_simple_account_format_salt (*dec is set), hex ones are
 * decoded here digit by digit.
 */
static int
salt_reference(const char *s, size_t len, uint8_t w[32], int *dec)
{
	size_t i, z, nd;

	memset(w, 0, 32);
	*dec = 0;
	if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		nd = len - 2;
		if (nd < 1 || nd > 64 || !all(s + 2, nd, isxdigit))
			return 0;
		/* Digit k from the right is the low or high half of byte 31 - k / 2. */
		for (i = 0; i < nd; i++) {
			int c = (unsigned char)s[len - 1 - i], v;

			v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
			w[31 - i / 2] |= (uint8_t)(i % 2 ? v << 4 : v);
		}
		return 1;
	}
	if (len < 1 || len > 78 || !all(s, len, isdigit))
		return 0;
	*dec = 1;
	for (z = 0; z < len - 1 && s[z] == '0'; z++)
		;
	nd = len - z;
	/* Below 2^256: fewer digits than its 78, or as many and not greater. */
	return nd < 78 || memcmp(s + z, u256_max_dec, 78) <= 0;
}

/* Parses s as a salt and checks it against the reference; 0 with the word in w, or -1. */
static int
check_salt(const char *s, size_t len, unsigned int cap, uint8_t w[32])
{
	uint8_t want[32], back[32];
	char buf[BP_SIMPLE_ACCOUNT_SALT_DEC_MAX + 2], small[BP_SIMPLE_ACCOUNT_SALT_DEC_MAX + 2];
	size_t z;
	int dec, ok;

	memset(w, 0xa5, 32);
	ok = bp_simple_account_parse_salt(s, len, w) == 0;
	if (ok != salt_reference(s, len, want, &dec))
		abort();
	if (!ok) {
		memset(want, 0xa5, 32);
		if (memcmp(w, want, 32) != 0)
			abort();	/* out untouched on failure */
		return -1;
	}
	if (!dec && memcmp(w, want, 32) != 0)
		abort();
	/* The decimal form: the input's digits without leading zeros, and back to w. */
	if (bp_simple_account_format_salt(w, buf, sizeof(buf)) != 0 || strlen(buf) > 78)
		abort();
	if (dec) {
		for (z = 0; z < len - 1 && s[z] == '0'; z++)
			;
		if (strlen(buf) != len - z || memcmp(buf, s + z, len - z) != 0)
			abort();
	}
	if (bp_simple_account_parse_salt(buf, strlen(buf), back) != 0 || memcmp(w, back, 32) != 0)
		abort();
	/* Any buffer: it fits with its NUL, or the call fails; nothing is written past cap. */
	cap %= sizeof(small);
	memset(small, 'Z', sizeof(small));
	if (bp_simple_account_format_salt(w, small, cap) == 0) {
		if (strlen(buf) + 1 > cap || strcmp(small, buf) != 0)
			abort();
	} else if (strlen(buf) + 1 <= cap)
		abort();
	for (z = cap; z < sizeof(small); z++)
		if (small[z] != 'Z')
			abort();
	return 0;
}

/* ---- addresses ---- */

/* Parses s as an address, with and without the checksum flag; 0 with a, or -1. */
static int
check_address(const char *s, size_t len, uint8_t a[20])
{
	uint8_t b[20], canary[20];
	char sum[BP_ADDR_STR_MAX], low[BP_ADDR_STR_MAX];
	int plain, checked, upper = 0, lower = 0, shape;
	size_t i;

	memset(canary, 0xa5, sizeof(canary));
	memcpy(a, canary, 20);
	memcpy(b, canary, 20);
	plain = bp_addr_parse(s, len, 0, a) == 0;
	checked = bp_addr_parse(s, len, BP_ADDR_CHECKSUM, b) == 0;
	shape = len == 42 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    all(s + 2, 40, isxdigit);
	if (plain != shape)
		abort();
	if (!plain) {
		if (checked || memcmp(a, canary, 20) != 0 || memcmp(b, canary, 20) != 0)
			abort();
		return -1;
	}
	for (i = 2; i < 42; i++) {
		upper |= isupper((unsigned char)s[i]) != 0;
		lower |= islower((unsigned char)s[i]) != 0;
	}
	if (bp_addr_format_checksum(a, sum, sizeof(sum)) != 0 ||
	    bp_addr_format_lower(a, low, sizeof(low)) != 0)
		abort();
	for (i = 2; i < 42; i++)
		if (low[i] != tolower((unsigned char)s[i]))
			abort();
	/* Mixed case is a checksum claim: it passes exactly when it is the EIP-55 form. */
	if (checked != (!(upper && lower) || memcmp(s + 2, sum + 2, 40) == 0))
		abort();
	if (checked && memcmp(a, b, 20) != 0)
		abort();
	if (!checked && memcmp(b, canary, 20) != 0)
		abort();
	/* Both printed forms parse back, the EIP-55 one under the checksum rule. */
	if (bp_addr_parse(sum, 42, BP_ADDR_CHECKSUM, b) != 0 || memcmp(a, b, 20) != 0 ||
	    bp_addr_parse(low, 42, BP_ADDR_CHECKSUM, b) != 0 || memcmp(a, b, 20) != 0)
		abort();
	return checked ? 0 : -1;
}

/* ---- what the handler derives ---- */

static void
check_derived(const uint8_t owner[20], const uint8_t salt[32], uint64_t key)
{
	uint8_t code_hash[32], addr[20], again[20], ic[BP_SIMPLE_ACCOUNT_INIT_CODE_LEN];
	uint8_t call[BP_SIMPLE_ACCOUNT_CALL2_LEN], w[32], a[20];
	uint64_t k;

	bp_simple_account_init_code_hash(impl, owner, code_hash);
	bp_simple_account_create2(factory, salt, code_hash, addr);
	bp_simple_account_address(factory, impl, owner, salt, again);
	if (memcmp(addr, again, 20) != 0)
		abort();

	bp_simple_account_init_code(factory, owner, salt, ic);
	if (memcmp(ic, factory, 20) != 0 || memcmp(ic + 20, sel_create_account, 4) != 0 ||
	    bp_abi_read_address(ic + 24, 64, 0, a) != 0 || memcmp(a, owner, 20) != 0 ||
	    bp_abi_read_bytes32(ic + 24, 64, 1, w) != 0 || memcmp(w, salt, 32) != 0)
		abort();

	bp_simple_account_get_address_call(owner, salt, call);
	if (memcmp(call, sel_get_address, 4) != 0 ||
	    bp_abi_read_address(call + 4, 64, 0, a) != 0 || memcmp(a, owner, 20) != 0 ||
	    bp_abi_read_bytes32(call + 4, 64, 1, w) != 0 || memcmp(w, salt, 32) != 0)
		abort();

	bp_simple_account_get_nonce_call(addr, key, call);
	if (memcmp(call, sel_get_nonce, 4) != 0 ||
	    bp_abi_read_address(call + 4, 64, 0, a) != 0 || memcmp(a, addr, 20) != 0 ||
	    bp_abi_read_u64(call + 4, 64, 1, &k) != 0 || k != key)
		abort();
}

/* ---- the body ---- */

/*
 * A string member as wallet_create's body_string takes it: NULL when absent, wrong type, empty
 * or longer than max (each a 400 there).
 */
static const char *
member(const cJSON *body, const char *name, size_t max)
{
	const cJSON *j = cJSON_GetObjectItemCaseSensitive(body, name);

	if (!cJSON_IsString(j) || j->valuestring == NULL || j->valuestring[0] == '\0' ||
	    strlen(j->valuestring) > max)
		return NULL;
	return j->valuestring;
}

static void
check_error_body(const struct bp_req *r)
{
	cJSON *j = cJSON_ParseWithLength(r->out.data, r->out.len);

	if (r->status != 400 || j == NULL ||
	    !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "error")))
		abort();
	cJSON_Delete(j);
}

/*
 * The table of the create body (lib/core/valid.h), as fcgi/wallets.c declares it. Each row alone
 * must agree with member(): a present member passes exactly when member() takes it, and then
 * with the same string; an absent one passes exactly when it is optional; a refusal names the
 * member first. The whole table through bp_req_valid answers the uniform 400 or passes.
 */
static const struct bp_valid_field create_fields[] = {
	{ "owner", BP_VALID_STRING, 1, 64, NULL },
	{ "chain", BP_VALID_STRING, 1, BP_NAME_MAX - 1, NULL },
	{ "network", BP_VALID_STRING, 0, BP_NAME_MAX - 1, NULL },
	{ "salt", BP_VALID_STRING, 0, 128, "a uint256 in decimal or 0x-prefixed hex" },
};

static void
check_valid(const cJSON *body)
{
	const char *v[BP_NITEMS(create_fields)], *want;
	const struct bp_valid_field *f;
	char why[256];
	size_t i;
	int rc;

	for (i = 0; i < BP_NITEMS(create_fields); i++) {
		f = &create_fields[i];
		want = member(body, f->name, f->max);
		rc = bp_valid_body(body, f, 1, v, why, sizeof(why));
		if (cJSON_GetObjectItemCaseSensitive(body, f->name) == NULL) {
			if (rc != (f->required ? -1 : 0) || (rc == 0 && v[0] != NULL))
				abort();
		} else if ((want == NULL) != (rc == -1) || (rc == 0 && v[0] != want))
			abort();
		if (rc == -1 && (strncmp(why, f->name, strlen(f->name)) != 0 ||
		    why[strlen(f->name)] != ' '))
			abort();
	}
	bp_req_reset(req);
	rc = bp_req_valid(req, body, create_fields, BP_NITEMS(create_fields), v);
	if (rc != 0)
		check_error_body(req);
}

/* The value of the 4 hex digits at s, or -1. */
static long
hex4(const char *s)
{
	long v = 0;
	size_t i;

	for (i = 0; i < 4; i++) {
		int c = (unsigned char)s[i];

		if (!isxdigit(c))
			return -1;
		v = v * 16 + (isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
	}
	return v;
}

/*
 * What bp_json_find_nul must answer for s, JSON text that cJSON parsed to its end: 1 when a
 * string holds a raw 0 byte or an escape that decodes to U+0000, with the top-level member's
 * raw name in want (room for cap) when it is printable ASCII without a backslash and fits, else
 * "". Written from the header comment, walking the grammar instead of scanning for quotes: a
 * stack of containers, and a string is a member name when its object expects one (after '{' or
 * ','). -1 when nested deeper than the stack (bp_req_json refused those already).
 */
static int
nul_reference(const char *s, size_t len, char *want, size_t cap)
{
	char stack[BP_JSON_DEPTH + 1];	/* 'o' or 'a' */
	int expect_name[BP_JSON_DEPTH + 1];
	const char *key = NULL;
	size_t depth = 0, i, j, k, klen = 0;

	want[0] = '\0';
	for (i = 0; i < len; i++) {
		int nul = 0, name;

		switch (s[i]) {
		case '{':
		case '[':
			if (depth == BP_JSON_DEPTH + 1)
				return -1;
			stack[depth] = s[i] == '{' ? 'o' : 'a';
			expect_name[depth++] = s[i] == '{';
			continue;
		case '}':
		case ']':
			if (depth > 0)
				depth--;
			continue;
		case ',':
			if (depth > 0 && stack[depth - 1] == 'o')
				expect_name[depth - 1] = 1;
			continue;
		case '"':
			break;
		default:
			continue;
		}
		for (j = i + 1; j < len && s[j] != '"'; j++) {
			if (s[j] == '\0')
				nul = 1;
			else if (s[j] == '\\' && j + 1 < len) {
				if (s[j + 1] == 'u' && j + 5 < len && hex4(s + j + 2) == 0)
					nul = 1;
				j++;	/* the escaped byte; \uXXXX's digits are plain bytes */
			}
		}
		name = depth > 0 && stack[depth - 1] == 'o' && expect_name[depth - 1];
		if (name) {
			expect_name[depth - 1] = 0;
			if (depth == 1) {
				key = s + i + 1;
				klen = j - i - 1;
			}
		}
		if (nul) {
			if (key == NULL || klen + 1 > cap)
				return 1;
			for (k = 0; k < klen; k++)
				if (!isprint((unsigned char)key[k]) || key[k] == '\\')
					return 1;
			memcpy(want, key, klen);
			want[klen] = '\0';
			return 1;
		}
		i = j;
	}
	return 0;
}

/*
 * bp_json_find_nul on a body bp_req_json took, as wallet_create calls it: on the whole body
 * (the exact-length copy, so a read past it shows), then on the part cJSON parsed against the
 * reference; and on what cJSON prints back from its tree, which must have no NUL left.
 */
static void
check_nul(const char *body, size_t len, const cJSON *tree, unsigned int cap)
{
	char name[BP_NAME_MAX + 1], want[BP_NAME_MAX + 1], *text;
	const char *end = NULL;
	cJSON *j;
	int found, ref;

	cap = cap % (BP_NAME_MAX + 1) + 1;	/* the room for the name: 1 to BP_NAME_MAX + 1 */
	found = bp_json_find_nul(body, len, name, BP_NAME_MAX);
	if ((found != 0 && found != 1) || memchr(name, '\0', BP_NAME_MAX) == NULL ||
	    (found == 0 && name[0] != '\0'))
		abort();
	if ((j = cJSON_ParseWithLengthOpts(body, len, &end, 0)) == NULL)
		abort();	/* bp_req_json parsed it */
	cJSON_Delete(j);
	if (end < body || end > body + len)
		abort();
	memset(name, 'Z', sizeof(name));
	found = bp_json_find_nul(body, (size_t)(end - body), name, cap);
	ref = nul_reference(body, (size_t)(end - body), want, cap);
	if (ref != -1 && (found != ref || strcmp(name, want) != 0))
		abort();
	if ((text = cJSON_PrintUnformatted(tree)) == NULL)
		return;
	if (bp_json_find_nul(text, strlen(text), name, sizeof(name)) != 0)
		abort();
	cJSON_free(text);
}

/*
 * Runs a body through bp_req_json and the members wallet_create reads. want_owner and
 * want_salt, when not NULL, are the strings the body was built with: the members must read
 * back as them (when the handler takes them at all: not empty, not too long).
 */
static void
check_body(const uint8_t *in, size_t size, unsigned int cap, const char *want_owner,
    const char *want_salt)
{
	uint8_t owner[20], salt[32], key[8];
	const char *owner_s, *salt_s;
	cJSON *body;
	char *copy;
	uint64_t k;
	size_t i;

	bp_req_reset(req);
	/* An exact-length copy, so a read one byte past the body is caught. */
	if ((copy = malloc(size > 0 ? size : 1)) == NULL)
		return;
	if (size > 0)
		memcpy(copy, in, size);
	req->body = size > 0 ? copy : NULL;
	req->body_len = size;
	if ((body = bp_req_json(req)) == NULL) {
		check_error_body(req);
		goto out;
	}
	check_nul(copy, size, body, cap);
	if (!cJSON_IsObject(body))
		goto out;
	check_valid(body);
	owner_s = member(body, "owner", 64);
	salt_s = member(body, "salt", 128);
	if (want_owner != NULL && want_owner[0] != '\0' && strlen(want_owner) <= 64 &&
	    (owner_s == NULL || strcmp(owner_s, want_owner) != 0))
		abort();
	if (want_salt != NULL && want_salt[0] != '\0' && strlen(want_salt) <= 128 &&
	    (salt_s == NULL || strcmp(salt_s, want_salt) != 0))
		abort();
	(void)member(body, "chain", BP_NAME_MAX - 1);
	(void)member(body, "network", BP_NAME_MAX - 1);
	if (owner_s == NULL || check_address(owner_s, strlen(owner_s), owner) != 0)
		goto out;
	memset(salt, 0, sizeof(salt));	/* an absent salt is 0 */
	if (salt_s != NULL && check_salt(salt_s, strlen(salt_s), cap, salt) != 0)
		goto out;
	memcpy(key, salt + 24, 8);
	for (k = 0, i = 0; i < 8; i++)
		k = k << 8 | key[i];
	check_derived(owner, salt, k);
out:
	cJSON_Delete(body);
	req->body = NULL;
	req->body_len = 0;
	free(copy);
}

/*
 * The body a client would send for owner and salt text: the input up to its first newline is
 * the owner, the rest the salt (each up to a NUL, as C strings), written with cJSON.
 */
static void
built_body(const char *s, size_t size, unsigned int cap)
{
	const char *nl = memchr(s, '\n', size);
	size_t olen = nl != NULL ? (size_t)(nl - s) : size;
	char *owner = NULL, *salt = NULL, *text = NULL;
	cJSON *o;

	if ((o = cJSON_CreateObject()) == NULL)
		return;
	if ((owner = strndup(s, olen)) == NULL ||
	    (nl != NULL && (salt = strndup(nl + 1, size - olen - 1)) == NULL))
		goto out;
	if (cJSON_AddStringToObject(o, "owner", owner) == NULL ||
	    (salt != NULL && cJSON_AddStringToObject(o, "salt", salt) == NULL) ||
	    cJSON_AddStringToObject(o, "chain", "ethereum") == NULL ||
	    (text = cJSON_PrintUnformatted(o)) == NULL)
		goto out;
	/* cJSON writes no NUL into what it prints: strndup stopped at the first. */
	if (bp_json_find_nul(text, strlen(text), (char[2]){ 0 }, 2) != 0)
		abort();
	check_body((const uint8_t *)text, strlen(text), cap, owner, salt);
out:
	cJSON_free(text);
	free(owner);
	free(salt);
	cJSON_Delete(o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t a[20], salt[32];
	unsigned int cap;
	char *s;

	if (setup() != 0)
		return 0;
	/* Exact-size, not NUL-terminated: the parsers take a length. */
	if ((s = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	if (size > 0)
		memcpy(s, data, size);
	cap = size > 0 ? data[size - 1] : 0;	/* a buffer size for format_salt */
	if (check_salt(s, size, cap, salt) == 0)
		check_derived(factory, salt, 0);
	if (check_address(s, size, a) == 0)
		check_derived(a, (const uint8_t[32]){ 0 }, UINT64_MAX);
	if (size > 0 && data[0] == '{')
		check_body(data, size, cap, NULL, NULL);
	else
		built_body(s, size, cap);
	free(s);
	return 0;
}
