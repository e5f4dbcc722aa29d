/*
 * Ethereum addresses: 20 bytes, written "0x" + 40 hex digits. EIP-55 puts a checksum in the
 * case of the letters. Blockport writes EIP-55 in JSON responses (what wallets and ethers'
 * getAddress show) and lower case where a string is a key (database rows, comparisons); see
 * docs/evm.md.
 */
#ifndef BP_EVM_ADDRESS_H
#define BP_EVM_ADDRESS_H

#include <stddef.h>
#include <stdint.h>

#define BP_ADDR_LEN	20
/* "0x" + 40 digits + NUL. */
#define BP_ADDR_STR_MAX	43

/* Flags of bp_addr_parse. */
#define BP_ADDR_CHECKSUM	0x01	/* a mixed-case string must carry a valid EIP-55 checksum */

/*
 * Parses s[0..len): "0x" or "0X" and exactly 40 hex digits. Any case is accepted; with
 * BP_ADDR_CHECKSUM a string that mixes upper- and lower-case letters must match its EIP-55
 * checksum (all-lower and all-upper strings carry no checksum and pass). Writes 20 bytes to
 * out. Returns 0, or -1 on a bad prefix, wrong length, non-hex byte (NUL included) or bad
 * checksum (then out is untouched).
 */
int	bp_addr_parse(const char *s, size_t len, int flags, uint8_t out[BP_ADDR_LEN]);

/*
 * Writes addr as "0x" + 40 lower-case digits + NUL to out (room for cap bytes,
 * BP_ADDR_STR_MAX needed). Returns 0, or -1 when cap is too small.
 */
int	bp_addr_format_lower(const uint8_t addr[BP_ADDR_LEN], char *out, size_t cap);

/*
 * Writes addr in EIP-55 mixed case ("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed") + NUL to
 * out (room for cap bytes, BP_ADDR_STR_MAX needed). Returns 0, or -1 when cap is too small.
 */
int	bp_addr_format_checksum(const uint8_t addr[BP_ADDR_LEN], char *out, size_t cap);

struct bp_req;
/*
 * The :name path parameter of r's route as an address (bp_addr_parse with BP_ADDR_CHECKSUM),
 * the request helper of every program whose path names an address. It lives here and not
 * beside the other request helpers in lib/core because the checksum needs Keccak, which core
 * may not include (scripts/layers.sh). Returns 0, or 400 with the error naming the parameter
 * set in r.
 */
int	bp_addr_param(struct bp_req *r, const char *name, uint8_t out[BP_ADDR_LEN]);

#endif
