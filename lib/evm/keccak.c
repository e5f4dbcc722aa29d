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

#include "keccak.h"

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

static uint64_t
rotl64(uint64_t x, unsigned int n)
{
	return (x << n) | (x >> (64 - n));	/* n is 1..63 here, never 0 */
}

/* theta: lane (x, y) ^= column parity (x - 1) ^ rot(column parity (x + 1), 1). */
#define THETA_COL(x, d) do {						\
	st[(x)] ^= (d); st[(x) + 5] ^= (d); st[(x) + 10] ^= (d);	\
	st[(x) + 15] ^= (d); st[(x) + 20] ^= (d);			\
} while (0)
/*
 * rho and pi, walked as one cycle starting from lane (1, 0): lane j receives the previous lane
 * rotated by r. Lane (x, y) is st[x + 5y].
 */
#define RHO_PI(j, r) do {						\
	u = st[(j)];							\
	st[(j)] = rotl64(t, (r));					\
	t = u;								\
} while (0)
/* chi on the row starting at lane y. */
#define CHI_ROW(y) do {							\
	b0 = st[(y)]; b1 = st[(y) + 1]; b2 = st[(y) + 2];		\
	b3 = st[(y) + 3]; b4 = st[(y) + 4];				\
	st[(y)] = b0 ^ (~b1 & b2);					\
	st[(y) + 1] = b1 ^ (~b2 & b3);					\
	st[(y) + 2] = b2 ^ (~b3 & b4);					\
	st[(y) + 3] = b3 ^ (~b4 & b0);					\
	st[(y) + 4] = b4 ^ (~b0 & b1);					\
} while (0)

/* Keccak-f[1600], the steps of each round written out (the same steps as the reference). */
static void
keccakf(uint64_t st[25])
{
	uint64_t b0, b1, b2, b3, b4, t, u;
	int round;

	for (round = 0; round < 24; round++) {
		/* theta */
		b0 = st[0] ^ st[5] ^ st[10] ^ st[15] ^ st[20];
		b1 = st[1] ^ st[6] ^ st[11] ^ st[16] ^ st[21];
		b2 = st[2] ^ st[7] ^ st[12] ^ st[17] ^ st[22];
		b3 = st[3] ^ st[8] ^ st[13] ^ st[18] ^ st[23];
		b4 = st[4] ^ st[9] ^ st[14] ^ st[19] ^ st[24];
		THETA_COL(0, b4 ^ rotl64(b1, 1));
		THETA_COL(1, b0 ^ rotl64(b2, 1));
		THETA_COL(2, b1 ^ rotl64(b3, 1));
		THETA_COL(3, b2 ^ rotl64(b4, 1));
		THETA_COL(4, b3 ^ rotl64(b0, 1));
		/* rho and pi */
		t = st[1];
		RHO_PI(10, 1);
		RHO_PI(7, 3);
		RHO_PI(11, 6);
		RHO_PI(17, 10);
		RHO_PI(18, 15);
		RHO_PI(3, 21);
		RHO_PI(5, 28);
		RHO_PI(16, 36);
		RHO_PI(8, 45);
		RHO_PI(21, 55);
		RHO_PI(24, 2);
		RHO_PI(4, 14);
		RHO_PI(15, 27);
		RHO_PI(23, 41);
		RHO_PI(19, 56);
		RHO_PI(13, 8);
		RHO_PI(12, 25);
		RHO_PI(2, 43);
		RHO_PI(20, 62);
		RHO_PI(14, 18);
		RHO_PI(22, 39);
		RHO_PI(9, 61);
		RHO_PI(6, 20);
		RHO_PI(1, 44);
		/* chi */
		CHI_ROW(0);
		CHI_ROW(5);
		CHI_ROW(10);
		CHI_ROW(15);
		CHI_ROW(20);
		/* iota */
		st[0] ^= rc[round];
	}
}

#undef THETA_COL
#undef RHO_PI
#undef CHI_ROW

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
