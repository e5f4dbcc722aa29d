/*
 * Keccak-f[1600] and the Keccak-256 sponge (rate 1088 bits = 136 bytes, capacity 512 bits),
 * written from the Keccak reference ("The Keccak reference", version 3.0, sections 1.2 and
 * 5.1). Ethereum's Keccak-256 pads with 0x01 (multi-rate padding with no domain bits), which
 * is why OpenSSL's SHA3-256 (padding 0x06) gives different digests.
 *
 * Lanes are loaded and stored little-endian byte by byte, so this works on any host order.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "evm/keccak.h"

#define RATE	136

/* Round constants RC[i] of the iota step. */
static const uint64_t rc[24] = {
	0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL,
	0x8000000080008000ULL, 0x000000000000808bULL, 0x0000000080000001ULL,
	0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL,
	0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
	0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
	0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
	0x000000000000800aULL, 0x800000008000000aULL, 0x8000000080008081ULL,
	0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/*
 * The rho offsets and pi lane order, walked as one cycle starting from lane (1, 0): lane
 * piln[i] receives the previous lane rotated by rotc[i]. Lane (x, y) is st[x + 5y].
 */
static const unsigned int rotc[24] = {
	1, 3, 6, 10, 15, 21, 28, 36, 45, 55, 2, 14,
	27, 41, 56, 8, 25, 43, 62, 18, 39, 61, 20, 44,
};
static const unsigned int piln[24] = {
	10, 7, 11, 17, 18, 3, 5, 16, 8, 21, 24, 4,
	15, 23, 19, 13, 12, 2, 20, 14, 22, 9, 6, 1,
};

static uint64_t
rotl64(uint64_t x, unsigned int n)
{
	return (x << n) | (x >> (64 - n));	/* n is 1..63 here, never 0 */
}

static void
keccakf(uint64_t st[25])
{
	uint64_t bc[5], t;
	int round, i, j;

	for (round = 0; round < 24; round++) {
		/* theta */
		for (i = 0; i < 5; i++)
			bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
		for (i = 0; i < 5; i++) {
			t = bc[(i + 4) % 5] ^ rotl64(bc[(i + 1) % 5], 1);
			for (j = 0; j < 25; j += 5)
				st[j + i] ^= t;
		}
		/* rho and pi */
		t = st[1];
		for (i = 0; i < 24; i++) {
			j = (int)piln[i];
			bc[0] = st[j];
			st[j] = rotl64(t, rotc[i]);
			t = bc[0];
		}
		/* chi */
		for (j = 0; j < 25; j += 5) {
			for (i = 0; i < 5; i++)
				bc[i] = st[j + i];
			for (i = 0; i < 5; i++)
				st[j + i] ^= (~bc[(i + 1) % 5]) & bc[(i + 2) % 5];
		}
		/* iota */
		st[0] ^= rc[round];
	}
}

/* XORs byte b into position pos (0..RATE-1) of the state, little-endian within lanes. */
static void
xor_byte(uint64_t st[25], size_t pos, uint8_t b)
{
	st[pos / 8] ^= (uint64_t)b << (8 * (pos % 8));
}

void
bp_keccak_init(struct bp_keccak *k)
{
	memset(k, 0, sizeof(*k));
}

void
bp_keccak_update(struct bp_keccak *k, const void *p, size_t n)
{
	const uint8_t *in = p;
	size_t i;

	/* Whole blocks at a block boundary: lane by lane. */
	while (k->pos == 0 && n >= RATE) {
		for (i = 0; i < RATE / 8; i++) {
			uint64_t lane = 0;
			int b;

			for (b = 7; b >= 0; b--)
				lane = lane << 8 | in[8 * i + (size_t)b];
			k->st[i] ^= lane;
		}
		keccakf(k->st);
		in += RATE;
		n -= RATE;
	}
	for (i = 0; i < n; i++) {
		xor_byte(k->st, k->pos, in[i]);
		if (++k->pos == RATE) {
			keccakf(k->st);
			k->pos = 0;
		}
	}
}

void
bp_keccak_final(struct bp_keccak *k, uint8_t out[32])
{
	size_t i;

	/* pad10*1 with Keccak's 0x01 first bit; both bits land in one byte when pos == 135. */
	xor_byte(k->st, k->pos, 0x01);
	xor_byte(k->st, RATE - 1, 0x80);
	keccakf(k->st);
	for (i = 0; i < 32; i++)
		out[i] = (uint8_t)(k->st[i / 8] >> (8 * (i % 8)));
	memset(k, 0, sizeof(*k));
}

void
bp_keccak256(const void *p, size_t n, uint8_t out[32])
{
	struct bp_keccak k;

	bp_keccak_init(&k);
	bp_keccak_update(&k, p, n);
	bp_keccak_final(&k, out);
}
