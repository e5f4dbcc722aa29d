/*
 * Small helpers every program uses: bounded number parsing, timestamps, random tokens, hashing.
 */
#ifndef BP_UTIL_H
#define BP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define BP_NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Parses a whole string as a decimal integer within [min, max] (lighttpd's restricted strtoint):
 * optional '-', digits only, no spaces, no '+', no leading zeros beyond "0", no overflow.
 * Returns 0 and sets *out, or -1 for anything else.
 */
int	bp_parse_int64(const char *, int64_t min, int64_t max, int64_t *out);

/* Writes t as ISO 8601 UTC ("2026-11-21T21:06:13Z") into buf (at least 21 bytes). */
void	bp_time_iso(time_t t, char *buf, size_t len);

/* Fills buf with n cryptographically random bytes (OpenSSL RAND_bytes); 0 or -1. */
int	bp_random(void *buf, size_t n);

/* SHA-256 of data into out[32]. */
void	bp_sha256(const void *data, size_t len, unsigned char out[32]);

/* Compares two equal-length byte strings in constant time; 1 when equal. */
int	bp_ct_equal(const void *, const void *, size_t);

/* Copies src into dst of size len, always NUL-terminated; -1 when src did not fit. */
int	bp_strlcpy(char *dst, const char *src, size_t len);

/* Wall clock in microseconds, and monotonic clock in microseconds. */
int64_t	bp_now_us(void);
int64_t	bp_mono_us(void);

/*
 * Maps len bytes of the file at path shared (created 0660 and grown to len when needed; a new
 * file reads as zeros), for counters every process updates with atomics. Returns the mapping
 * (munmap(p, len)), or NULL after logging why.
 */
void	*bp_map_file(const char *path, size_t len);

/* FNV-1a over s (NUL-terminated), continuing from h; start from BP_FNV1A_BASIS. */
#define BP_FNV1A_BASIS	UINT64_C(14695981039346656037)
uint64_t bp_fnv1a_str(uint64_t h, const char *s);

/*
 * In a table of nslots slots of stride bytes shared lock-free between processes (a bp_map_file
 * mapping), each starting with its uint64_t key (0 = free): the slot of key k (never 0), probed
 * from k's home slot, claimed with one compare-and-swap when it has none. Returns it, or NULL
 * when the probes slots are all taken by other keys.
 */
void	*bp_slot_claim(void *slots, size_t stride, size_t nslots, size_t probes, uint64_t k);

#endif
