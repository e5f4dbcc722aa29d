/*
 * lib/evm/address.c: parsing in any case, EIP-55 checksum checking and formatting. The
 * checksummed vectors are the ones in EIP-55's "Test Cases".
 */
#include <stdint.h>
#include <string.h>

#include "evm/address.h"
#include "unit.h"

#define S(x)	x, sizeof(x) - 1

static const char *const eip55[] = {
	/* All caps */
	"0x52908400098527886E0F7030069857D2E4169EE7",
	"0x8617E340B3D01FA5F11F306F4090FD50E238070D",
	/* All lower */
	"0xde709f2102306220921060314715629080e2fb77",
	"0x27b1fdb04752bbc536007a920d24acb045561c26",
	/* Normal */
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
	"0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
	"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
	"0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
};

static void
lower(const char *in, char *out)
{
	size_t i;

	for (i = 0; in[i] != '\0'; i++)
		out[i] = (in[i] >= 'A' && in[i] <= 'F') ? (char)(in[i] - 'A' + 'a') : in[i];
	out[i] = '\0';
}

static void
test_eip55_vectors(void)
{
	size_t i;

	for (i = 0; i < sizeof(eip55) / sizeof(eip55[0]); i++) {
		uint8_t a[BP_ADDR_LEN], b[BP_ADDR_LEN];
		char lc[BP_ADDR_STR_MAX], out[BP_ADDR_STR_MAX];

		/* The vector passes the checksum check, in its own case. */
		CU_ASSERT_EQUAL(bp_addr_parse(eip55[i], 42, BP_ADDR_CHECKSUM, a), 0);
		/* Formatting the bytes gives the vector back (EIP-55 output is unique). */
		CU_ASSERT_EQUAL(bp_addr_format_checksum(a, out, sizeof(out)), 0);
		CU_ASSERT_STRING_EQUAL(out, eip55[i]);
		lower(eip55[i], lc);
		CU_ASSERT_EQUAL(bp_addr_format_lower(a, out, sizeof(out)), 0);
		CU_ASSERT_STRING_EQUAL(out, lc);
		CU_ASSERT_EQUAL(bp_addr_parse(lc, 42, BP_ADDR_CHECKSUM, b), 0);
		CU_ASSERT(memcmp(a, b, BP_ADDR_LEN) == 0);
	}
}

/* Flipping the case of one letter of a mixed-case address breaks its checksum. */
static void
test_bad_checksum(void)
{
	size_t i, j;

	for (i = 4; i < sizeof(eip55) / sizeof(eip55[0]); i++) {
		for (j = 2; j < 42; j++) {
			char s[BP_ADDR_STR_MAX];
			uint8_t a[BP_ADDR_LEN];
			char c;

			memcpy(s, eip55[i], 43);
			c = s[j];
			if (c >= 'a' && c <= 'f')
				s[j] = (char)(c - 'a' + 'A');
			else if (c >= 'A' && c <= 'F')
				s[j] = (char)(c - 'A' + 'a');
			else
				continue;
			CU_ASSERT_EQUAL(bp_addr_parse(s, 42, BP_ADDR_CHECKSUM, a), -1);
			/* Without the flag any case is taken. */
			CU_ASSERT_EQUAL(bp_addr_parse(s, 42, 0, a), 0);
		}
	}
}

struct arow {
	const char	*s;
	size_t		 len;
	int		 ok;		/* without BP_ADDR_CHECKSUM */
	int		 ok_cs;		/* with it */
};

static const struct arow arows[] = {
	{ S("0x0000000000000000000000000000000000000000"), 1, 1 },
	{ S("0xffffffffffffffffffffffffffffffffffffffff"), 1, 1 },
	{ S("0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), 1, 1 },
	{ S("0X5aaeb6053f3e94c9b9a09f33669435e7ef1beaed"), 1, 1 },
	{ S("0x5aaeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), 1, 0 },	/* one letter off */
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe"), 0, 0 },	/* 39 digits */
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAedd"), 0, 0 },	/* 41 */
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed00"), 0, 0 },	/* 42 */
	{ S("5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), 0, 0 },	/* no prefix */
	{ S("005aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), 0, 0 },
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg"), 0, 0 },
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe\0"), 0, 0 },
	{ S("0x\0aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"), 0, 0 },
	{ S("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe\xff"), 0, 0 },
	{ S("0x 5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe"), 0, 0 },
	{ S(""), 0, 0 },
	{ S("0x"), 0, 0 },
};

static void
test_parse_table(void)
{
	size_t i;

	for (i = 0; i < sizeof(arows) / sizeof(arows[0]); i++) {
		uint8_t a[BP_ADDR_LEN];

		memset(a, 0xee, sizeof(a));
		CU_ASSERT_EQUAL(bp_addr_parse(arows[i].s, arows[i].len, 0, a),
		    arows[i].ok ? 0 : -1);
		if (!arows[i].ok) {
			CU_ASSERT_EQUAL(a[0], 0xee);	/* untouched */
		}
		CU_ASSERT_EQUAL(bp_addr_parse(arows[i].s, arows[i].len, BP_ADDR_CHECKSUM, a),
		    arows[i].ok_cs ? 0 : -1);
	}
	CU_ASSERT_EQUAL(bp_addr_parse(NULL, 42, 0, (uint8_t[20]){ 0 }), -1);
}

static void
test_format_caps(void)
{
	uint8_t a[BP_ADDR_LEN];
	char out[BP_ADDR_STR_MAX];

	memset(a, 0xab, sizeof(a));
	CU_ASSERT_EQUAL(bp_addr_format_lower(a, out, BP_ADDR_STR_MAX - 1), -1);
	CU_ASSERT_STRING_EQUAL(out, "");
	CU_ASSERT_EQUAL(bp_addr_format_checksum(a, out, BP_ADDR_STR_MAX - 1), -1);
	CU_ASSERT_EQUAL(bp_addr_format_checksum(a, out, 0), -1);
	CU_ASSERT_EQUAL(bp_addr_format_checksum(a, NULL, 43), -1);
	CU_ASSERT_EQUAL(bp_addr_format_lower(a, out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "0xabababababababababababababababababababab");
}

BP_UNIT_SUITE(evm_address, NULL, NULL,
	{ "EIP-55 spec vectors", test_eip55_vectors },
	{ "one flipped case fails the checksum", test_bad_checksum },
	{ "parse table", test_parse_table },
	{ "format caps", test_format_caps })
