/*
 * 256-bit unsigned integers (EVM words): token amounts, wei, ABI uint256 values.
 *
 * Representation: four uint64 limbs, least significant first (w[0] holds bits 0..63). It is a
 * plain value type that callers keep on the stack and copy; the limbs are public so a zero
 * initializer ({0}) is the number 0, but use the functions below rather than poking limbs.
 * Conversions to and from the 32-byte big-endian EVM form are bp_u256_from_be32/to_be32.
 * No floating point anywhere. Parsers take a pointer and a length and do not log.
 */
#ifndef BP_EVM_U256_H
#define BP_EVM_U256_H

#include <stddef.h>
#include <stdint.h>

struct bp_u256 {
	uint64_t	w[4];	/* w[0] least significant */
};

/* 2^256 - 1 has 78 decimal digits: 78 + NUL. */
#define BP_U256_DEC_MAX		79
/* "0x" + 64 digits + NUL. */
#define BP_U256_HEX_MAX		67
/* The largest decimals for bp_u256_format_units/parse_units (ERC-20 decimals() is a uint8). */
#define BP_U256_MAX_DECIMALS	255
/* Room for any bp_u256_format_units result: "0." + 255 digits + NUL, or 78 digits + NUL. */
#define BP_U256_UNITS_MAX	(2 + BP_U256_MAX_DECIMALS + 1)

/* Sets *r to v. */
void	bp_u256_from_u64(struct bp_u256 *r, uint64_t v);

/* Stores a in *out. Returns 0, or -1 when a > UINT64_MAX (then *out is untouched). */
int	bp_u256_to_u64(const struct bp_u256 *a, uint64_t *out);

/* Returns 1 when a is zero, else 0. */
int	bp_u256_is_zero(const struct bp_u256 *a);

/* Returns -1, 0 or 1 as a is less than, equal to or greater than b. */
int	bp_u256_cmp(const struct bp_u256 *a, const struct bp_u256 *b);

/* Sets *r to the 32 big-endian bytes in (an EVM word). */
void	bp_u256_from_be32(struct bp_u256 *r, const uint8_t in[32]);

/* Writes a as 32 big-endian bytes to out. */
void	bp_u256_to_be32(const struct bp_u256 *a, uint8_t out[32]);

/*
 * Sets *r from n big-endian bytes (n <= 32; n == 0 gives zero), as RLP integers come. Returns
 * 0, or -1 when n > 32.
 */
int	bp_u256_from_be(struct bp_u256 *r, const uint8_t *in, size_t n);

/*
 * r = a + b modulo 2^256. Returns the carry out: 0, or 1 when the sum overflowed 256 bits.
 * r may alias a or b.
 */
int	bp_u256_add(struct bp_u256 *r, const struct bp_u256 *a, const struct bp_u256 *b);

/*
 * r = a - b modulo 2^256. Returns the borrow: 0, or 1 when b > a (r then wrapped).
 * r may alias a or b.
 */
int	bp_u256_sub(struct bp_u256 *r, const struct bp_u256 *a, const struct bp_u256 *b);

/*
 * r = a * m modulo 2^256. Returns 0, or 1 when the product overflowed 256 bits. r may alias a.
 */
int	bp_u256_mul_u64(struct bp_u256 *r, const struct bp_u256 *a, uint64_t m);

/*
 * q = a / d and, when rem is not NULL, *rem = a % d. Returns 0, or -1 when d == 0 (then
 * nothing is written). q may alias a.
 */
int	bp_u256_div_u64(struct bp_u256 *q, const struct bp_u256 *a, uint64_t d, uint64_t *rem);

/* *rem = a % d. Returns 0, or -1 when d == 0. */
int	bp_u256_mod_u64(const struct bp_u256 *a, uint64_t d, uint64_t *rem);

/*
 * Parses a decimal string: one or more ASCII digits and nothing else (no sign, space, point or
 * exponent); leading zeros are allowed. Returns 0, or -1 on a bad byte or a value >= 2^256
 * (then *r is untouched).
 */
int	bp_u256_from_dec(struct bp_u256 *r, const char *s, size_t len);

/*
 * Parses hex leniently: "0x" or "0X" and at least one hex digit of either case, leading zeros
 * allowed. Returns 0, or -1 on a bad string or a value >= 2^256 (then *r is untouched).
 */
int	bp_u256_from_hex(struct bp_u256 *r, const char *s, size_t len);

/*
 * Parses a JSON-RPC QUANTITY strictly: "0x" and 1 to 64 hex digits, no leading zero except
 * "0x0" (the rules of bp_hex_quantity_strict). Returns 0, or -1 (then *r is untouched).
 */
int	bp_u256_from_quantity(struct bp_u256 *r, const char *s, size_t len);

/*
 * Parses user input: hex as bp_u256_from_hex when it starts with "0x"/"0X", else decimal as
 * bp_u256_from_dec. Returns 0, or -1.
 */
int	bp_u256_parse(struct bp_u256 *r, const char *s, size_t len);

/*
 * Writes a in decimal ("0" for zero, no leading zeros) + NUL to out (room for cap bytes;
 * BP_U256_DEC_MAX always suffices). Returns 0, or -1 when cap is too small.
 */
int	bp_u256_to_dec(const struct bp_u256 *a, char *out, size_t cap);

/*
 * Writes a as a QUANTITY ("0x0", lower case, no leading zeros) + NUL to out (room for cap
 * bytes; BP_U256_HEX_MAX always suffices). Returns 0, or -1 when cap is too small.
 */
int	bp_u256_to_quantity(const struct bp_u256 *a, char *out, size_t cap);

/*
 * Writes value / 10^decimals as an exact decimal string to out (room for cap bytes;
 * BP_U256_UNITS_MAX always suffices): 1234567800 with 6 decimals is "1234.5678", trailing
 * fractional zeros are trimmed and the point goes with them ("1" not "1.0"), zero is "0", a
 * value below one keeps its leading "0." ("0.000001"). Returns 0, or -1 when decimals >
 * BP_U256_MAX_DECIMALS or cap is too small.
 */
int	bp_u256_format_units(const struct bp_u256 *value, unsigned int decimals, char *out,
	    size_t cap);

/*
 * The inverse of bp_u256_format_units: parses "1234.5678" with decimals 6 as 1234567800.
 * Accepts digits, optionally a point followed by at least one digit; a point needs a digit on
 * both sides (".5" and "5." are rejected). Fractional digits beyond decimals must be zeros.
 * Returns 0, or -1 on a bad string, decimals > BP_U256_MAX_DECIMALS or a result >= 2^256.
 */
int	bp_u256_parse_units(struct bp_u256 *r, const char *s, size_t len, unsigned int decimals);

#endif
