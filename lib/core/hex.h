/*
 * Hex strings as Ethereum JSON-RPC uses them (see docs/evm.md), and plain hex digits: the one
 * hex parser and the one hex encoder of Blockport (lib/core/http.c, the JSON-RPC proxy, the EVM
 * modules, API keys all use these).
 *
 * Two kinds: DATA ("0x" + an even number of hex digits, any case, one byte per pair) and
 * QUANTITY ("0x" + at least one hex digit, an integer). Every parser takes a pointer and a
 * length, so an embedded NUL is just a non-hex byte and is rejected. Parsers do not log: they
 * see untrusted input all day, and the caller knows which field it was.
 */
#ifndef BP_HEX_H
#define BP_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Room for "0x" + 16 digits + NUL: enough for any uint64 quantity. */
#define BP_HEX_QUANTITY64_MAX	19

/*
 * Returns the value 0..15 of the hex digit c (either case), or -1 when c is not a hex digit.
 */
int	bp_hex_digit(int c);

/*
 * Decodes DATA: s[0..len) must be "0x" or "0X" followed by an even number of hex digits of
 * either case. Writes the bytes to out (room for cap bytes) and their count to *outlen.
 * Returns 0, or -1 on a missing prefix, odd length, a non-hex byte or more than cap bytes; out
 * may have been written on failure.
 */
int	bp_hex_decode(const char *s, size_t len, uint8_t *out, size_t cap, size_t *outlen);

/*
 * Decodes DATA of exactly n bytes (a hash, a key): as bp_hex_decode, and -1 unless the string
 * holds exactly n bytes.
 */
int	bp_hex_decode_fixed(const char *s, size_t len, uint8_t *out, size_t n);

/*
 * Encodes n bytes as "0x" + 2n lower-case digits + NUL into out (room for cap bytes; 2n + 3 are
 * needed). n == 0 gives "0x". Returns 0, or -1 when cap is too small (out is then "" if cap > 0).
 */
int	bp_hex_encode(const void *in, size_t n, char *out, size_t cap);

/*
 * Encodes n bytes as 2n lower-case digits + NUL, without "0x" (API keys, digests), into out
 * (room for cap bytes; 2n + 1 are needed). Returns 0, or -1 when cap is too small (out is then
 * "" if cap > 0).
 */
int	bp_hex_encode_digits(const void *in, size_t n, char *out, size_t cap);

/*
 * The one QUANTITY parser, for any width: s[0..len) into n big-endian bytes at be. strict: "0x"
 * (lower-case x), at most 2n digits, no leading zero except the single digit of "0x0". Else
 * lenient: "0x" or "0X", leading zeros allowed in any number, only the value must fit n bytes.
 * Digits of either case; "0x" alone is rejected by both. Returns 0, or -1 (be may then have
 * been written).
 */
int	bp_hex_quantity_be(const char *s, size_t len, int strict, uint8_t *be, size_t n);

/*
 * Parses a JSON-RPC QUANTITY strictly: "0x" (lower-case x) and 1 to 16 hex digits of either
 * case, no leading zero except the single digit of "0x0", value <= UINT64_MAX. Rejects "0x",
 * "0x00", "0x01", "0X1" and anything longer. Returns 0, or -1 (then *out is untouched).
 */
int	bp_hex_quantity_strict(const char *s, size_t len, uint64_t *out);

/*
 * Parses a QUANTITY leniently, for values from nodes and users that pad: "0x" or "0X" and at
 * least one hex digit, leading zeros allowed in any number; only the value must fit a uint64.
 * "0x" alone is still rejected. Returns 0, or -1 (then *out is untouched).
 */
int	bp_hex_quantity_lenient(const char *s, size_t len, uint64_t *out);

/*
 * Formats v as a QUANTITY ("0x0", "0x1a": lower case, no leading zeros) into out (room for cap
 * bytes; BP_HEX_QUANTITY64_MAX always suffices). Returns 0, or -1 when cap is too small.
 */
int	bp_hex_quantity_encode(uint64_t v, char *out, size_t cap);

/*
 * Formats the n big-endian bytes at be as a QUANTITY, as bp_hex_quantity_encode does (u256
 * values: n is 32). Returns 0, or -1 when cap is too small (out is then "" if cap > 0).
 */
int	bp_hex_quantity_encode_be(const uint8_t *be, size_t n, char *out, size_t cap);

#endif
