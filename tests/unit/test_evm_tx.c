/*
 * lib/evm/tx.c: EIP-1559 transactions against ethers v6 (Transaction.unsignedHash,
 * Wallet.signTransaction) signed by anvil's dev account 0. RFC 6979 on both sides makes the
 * raw bytes identical.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "evm/address.h"
#include "evm/keccak.h"
#include "evm/rlp.h"
#include "evm/secp.h"
#include "evm/tx.h"
#include "evm/u256.h"
#include "unit.h"

#define KEY0	"0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
#define ADDR0	"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266"

struct txrow {
	const char	*name;
	uint64_t	 chain_id;
	uint64_t	 nonce;
	const char	*prio;		/* decimal */
	const char	*maxfee;	/* decimal */
	uint64_t	 gas;
	const char	*to;		/* NULL: contract creation */
	const char	*value;		/* decimal */
	const char	*data;		/* hex */
	const char	*signing_hash;
	const char	*raw;
	const char	*hash;
};

static const struct txrow txrows[] = {
	{ "1 ETH transfer on anvil", 31337, 0, "1000000000", "2000000000", 21000,
	    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "1000000000000000000", "0x",
	    "0xb74b50b3bba4accb52a758871e49bc78918a27c080727efb8b3c8306e46a3edd",
	    "0x"
	    "02f874827a6980843b9aca0084773594008252089470997970c51812dc3a010c"
	    "7d01b50e0d17dc79c8880de0b6b3a764000080c080a074128fd7d42631897474"
	    "d93692787a2e56b813754468caaca4993c641c986a37a06d5a3b027177cc2841"
	    "199b70400fece0a29ac5eabee2fa9cbf9b6aa213716c48",
	    "0x7d4c13ed95c0cee830d7457ec5a5976db1fc301cfa7a23fef0039a7ccf6aea87" },
	{ "ERC-20 transfer on mainnet, zero tip", 1, 7, "0", "30000000000", 100000,
	    "0xdAC17F958D2ee523a2206206994597C13D831ec7", "0",
	    "0xa9059cbb00000000000000000000000070997970c51812dc3a010c7d01b50e0d17dc79c8"
	    "00000000000000000000000000000000000000000000000000000000000f4240",
	    "0x3d1b6b49f0a3a65be528f7e31222f5086309546e5941b85f91ad07cec8a218b0",
	    "0x"
	    "02f8ad0107808506fc23ac00830186a094dac17f958d2ee523a2206206994597"
	    "c13d831ec780b844a9059cbb00000000000000000000000070997970c51812dc"
	    "3a010c7d01b50e0d17dc79c80000000000000000000000000000000000000000"
	    "0000000000000000000f4240c001a073eb21ed398c825df06c9da6943de00219"
	    "62c3722696ac97ecd7e41b6547b88ea062d0babc52166584608cc5500a48d848"
	    "0375cf24a5f5ea720715e2d7d2f1302f",
	    "0xa405d11f4ff79b8253060b926985fa08db125166e6f8c7a54de6692dc4bf2c8c" },
	{ "contract creation, max fee 2^256 - 1", 31337, 300, "1",
	    "115792089237316195423570985008687907853269984665640564039457584007913129639935",
	    3000000, NULL, "0", "0x6080604052",
	    "0x1102b12af87c7e288ee72e2ea5a929fbe7a2d5bc7f42658ecd02da1d2dc1519e",
	    "0x"
	    "02f878827a6982012c01a0ffffffffffffffffffffffffffffffffffffffffff"
	    "ffffffffffffffffffffff832dc6c08080856080604052c080a0c02fa151244d"
	    "63a9152fe33b56ac01b34fb28e94ed2795145a3a785888b1dc96a01bbaa94f49"
	    "1e67344766de3d99e32db3ad7de52a571c630fbf64b42903455dec",
	    "0x6d46f1e97a90e407058ae6694e1494fb8994a0976a4763a5907da2e5e007d221" },
};

static uint8_t key0[32];

static int
setup(void)
{
	return bp_hex_decode_fixed(KEY0, strlen(KEY0), key0, 32);
}

static int
teardown(void)
{
	bp_secp_cleanup();
	return 0;
}

/* Fills tx from row r; data goes to buf (room for cap bytes). */
static void
fill(struct bp_tx1559 *tx, const struct txrow *r, uint8_t *buf, size_t cap)
{
	memset(tx, 0, sizeof(*tx));
	tx->chain_id = r->chain_id;
	tx->nonce = r->nonce;
	CU_ASSERT_FATAL(bp_u256_from_dec(&tx->max_priority_fee_per_gas, r->prio,
	    strlen(r->prio)) == 0);
	CU_ASSERT_FATAL(bp_u256_from_dec(&tx->max_fee_per_gas, r->maxfee,
	    strlen(r->maxfee)) == 0);
	tx->gas_limit = r->gas;
	if (r->to != NULL) {
		tx->has_to = 1;
		CU_ASSERT_FATAL(bp_addr_parse(r->to, strlen(r->to), BP_ADDR_CHECKSUM,
		    tx->to) == 0);
	}
	CU_ASSERT_FATAL(bp_u256_from_dec(&tx->value, r->value, strlen(r->value)) == 0);
	CU_ASSERT_FATAL(bp_hex_decode(r->data, strlen(r->data), buf, cap, &tx->data_len) == 0);
	tx->data = buf;
}

static void
test_vectors(void)
{
	size_t i;

	for (i = 0; i < sizeof(txrows) / sizeof(txrows[0]); i++) {
		const struct txrow *r = &txrows[i];
		struct bp_tx1559 tx;
		uint8_t data[128], h[32], want[32], th[32], wraw[256], *raw = NULL;
		size_t rawlen = 0, wn;

		fill(&tx, r, data, sizeof(data));
		CU_ASSERT_EQUAL(bp_tx_signing_hash(&tx, h), 0);
		CU_ASSERT_FATAL(bp_hex_decode_fixed(r->signing_hash, 66, want, 32) == 0);
		CU_ASSERT(memcmp(h, want, 32) == 0);

		CU_ASSERT_EQUAL_FATAL(bp_tx_sign(&tx, key0, &raw, &rawlen, th), 0);
		CU_ASSERT_FATAL(bp_hex_decode(r->raw, strlen(r->raw), wraw, sizeof(wraw),
		    &wn) == 0);
		CU_ASSERT_EQUAL(rawlen, wn);
		CU_ASSERT(rawlen == wn && memcmp(raw, wraw, wn) == 0);
		CU_ASSERT_FATAL(bp_hex_decode_fixed(r->hash, 66, want, 32) == 0);
		CU_ASSERT(memcmp(th, want, 32) == 0);
		free(raw);
		/* txhash is optional. */
		CU_ASSERT_EQUAL(bp_tx_sign(&tx, key0, &raw, &rawlen, NULL), 0);
		free(raw);
	}
}

/* Takes the signed bytes apart: 12 fields, and (y, r, s) recovers the signer. */
static void
test_structure(void)
{
	const struct txrow *r = &txrows[1];
	struct bp_tx1559 tx;
	struct bp_rlp_item list, it, f[12];
	struct bp_rlp_iter iter;
	uint8_t data[128], h[32], sig[65], addr[20], addr0[20], *raw = NULL;
	size_t rawlen, k = 0;
	uint64_t y;

	fill(&tx, r, data, sizeof(data));
	CU_ASSERT_FATAL(bp_tx_sign(&tx, key0, &raw, &rawlen, NULL) == 0);
	CU_ASSERT_EQUAL(raw[0], 0x02);
	CU_ASSERT_FATAL(bp_rlp_decode(raw + 1, rawlen - 1, &list) == 0);
	CU_ASSERT_FATAL(bp_rlp_iter_init(&iter, &list) == 0);
	while (k < 12 && bp_rlp_iter_next(&iter, &it) == 1)
		f[k++] = it;
	CU_ASSERT_EQUAL_FATAL(k, 12);
	CU_ASSERT_EQUAL(bp_rlp_iter_next(&iter, &it), 0);
	CU_ASSERT_EQUAL(f[8].list, 1);		/* access list */
	CU_ASSERT_EQUAL(f[8].len, 0);
	CU_ASSERT(f[5].len == 20 && memcmp(f[5].p, tx.to, 20) == 0);
	CU_ASSERT(f[7].len == tx.data_len && memcmp(f[7].p, data, tx.data_len) == 0);
	CU_ASSERT_EQUAL(bp_rlp_item_u64(&f[9], &y), 0);
	CU_ASSERT(y <= 1);
	memset(sig, 0, sizeof(sig));
	CU_ASSERT_FATAL(f[10].len <= 32 && f[11].len <= 32);
	memcpy(sig + 32 - f[10].len, f[10].p, f[10].len);
	memcpy(sig + 64 - f[11].len, f[11].p, f[11].len);
	sig[64] = (uint8_t)y;
	CU_ASSERT_EQUAL(bp_tx_signing_hash(&tx, h), 0);
	CU_ASSERT_EQUAL(bp_secp_recover(h, sig, addr), 0);
	CU_ASSERT_EQUAL(bp_addr_parse(ADDR0, strlen(ADDR0), BP_ADDR_CHECKSUM, addr0), 0);
	CU_ASSERT(memcmp(addr, addr0, 20) == 0);
	free(raw);
}

static void
test_errors(void)
{
	struct bp_tx1559 tx;
	uint8_t data[8], h[32], rs[32], *raw = NULL, *big, bad[32];
	size_t rawlen;

	fill(&tx, &txrows[0], data, sizeof(data));
	memset(rs, 0x01, sizeof(rs));
	CU_ASSERT_EQUAL(bp_tx_encode_signed(&tx, 2, rs, rs, &raw, &rawlen), -1);
	CU_ASSERT_EQUAL(bp_tx_encode_signed(&tx, 1, NULL, rs, &raw, &rawlen), -1);
	CU_ASSERT_EQUAL(bp_tx_encode_signed(&tx, 1, rs, rs, NULL, &rawlen), -1);
	CU_ASSERT_EQUAL(bp_tx_encode_signed(&tx, 1, rs, rs, &raw, &rawlen), 0);
	free(raw);
	CU_ASSERT_EQUAL(bp_tx_sign(&tx, key0, NULL, &rawlen, NULL), -1);
	/* Invalid key. */
	memset(bad, 0, sizeof(bad));
	CU_ASSERT_EQUAL(bp_tx_sign(&tx, bad, &raw, &rawlen, NULL), -1);
	/* data NULL with a length. */
	tx.data = NULL;
	tx.data_len = 1;
	CU_ASSERT_EQUAL(bp_tx_signing_hash(&tx, h), -1);
	CU_ASSERT_EQUAL(bp_tx_signing_hash(NULL, h), -1);
	/* Data of the whole size limit cannot fit with its fields; a bit less can. */
	big = calloc(1, BP_TX_MAX_SIZE);
	CU_ASSERT_FATAL(big != NULL);
	tx.data = big;
	tx.data_len = BP_TX_MAX_SIZE;
	CU_ASSERT_EQUAL(bp_tx_signing_hash(&tx, h), -1);
	CU_ASSERT_EQUAL(bp_tx_sign(&tx, key0, &raw, &rawlen, NULL), -1);
	tx.data_len = SIZE_MAX;
	CU_ASSERT_EQUAL(bp_tx_signing_hash(&tx, h), -1);
	tx.data_len = BP_TX_MAX_SIZE - 200;
	CU_ASSERT_EQUAL(bp_tx_sign(&tx, key0, &raw, &rawlen, NULL), 0);
	CU_ASSERT(rawlen <= BP_TX_MAX_SIZE);
	free(raw);
	free(big);
}

BP_UNIT_SUITE(evm_tx, setup, teardown,
	{ "ethers vectors: signing hash, raw, tx hash", test_vectors },
	{ "signed bytes decode and recover", test_structure },
	{ "errors and size limit", test_errors })
