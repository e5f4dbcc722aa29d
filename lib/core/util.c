#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "log.h"
#include "util.h"

int
bp_parse_int64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	uint64_t v = 0, lim;
	int neg = 0;
	const char *p = s;

	if (s == NULL || *p == '\0')
		return -1;
	if (*p == '-') {
		neg = 1;
		p++;
	}
	if (*p == '\0' || (p[0] == '0' && p[1] != '\0'))
		return -1;
	/* The magnitude limit: INT64_MAX, or INT64_MAX + 1 for a negative number. */
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; *p != '\0'; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return -1;
		d = (unsigned)(*p - '0');
		if (v > (lim - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg && v == 0)
		return -1;	/* "-0" */
	{
		int64_t r = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v)
		    : (int64_t)v;

		if (r < min || r > max)
			return -1;
		*out = r;
	}
	return 0;
}

void
bp_time_iso(time_t t, char *buf, size_t len)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && len > 0)
		buf[0] = '\0';
}

int
bp_random(void *buf, size_t n)
{
	return RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

/* Set once (pthread_once), read by every thread. */
static EVP_MD *sha256_md;
/* Each thread's digest context, made on its first hash and freed as it ends. */
static pthread_key_t sha256_key;
static int sha256_keyed;

static void
free_sha256_ctx(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void
fetch_sha256(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	sha256_keyed = pthread_key_create(&sha256_key, free_sha256_ctx) == 0;
}

void
bp_sha256(const void *data, size_t len, unsigned char out[32])
{
	/*
	 * OpenSSL 3's one-shot SHA256() looks the algorithm up on every call, which costs as much as
	 * hashing an API key; the fetched method is kept for the life of the process instead, and
	 * each thread keeps its context (EVP_Digest made and freed one, and the algorithm's state
	 * in it, on every call: most of the cost of hashing a key on every request).
	 */
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	EVP_MD_CTX *ctx = NULL;

	pthread_once(&once, fetch_sha256);
	if (sha256_md != NULL && sha256_keyed &&
	    (ctx = pthread_getspecific(sha256_key)) == NULL &&
	    (ctx = EVP_MD_CTX_new()) != NULL && pthread_setspecific(sha256_key, ctx) != 0) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	if (ctx != NULL && EVP_DigestInit_ex2(ctx, sha256_md, NULL) == 1 &&
	    EVP_DigestUpdate(ctx, data, len) == 1 && EVP_DigestFinal_ex(ctx, out, NULL) == 1)
		return;
	SHA256(data, len, out);
}

int
bp_ct_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

int
bp_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (len == 0)
		return -1;
	if (n >= len) {
		memcpy(dst, src, len - 1);
		dst[len - 1] = '\0';
		return -1;
	}
	memcpy(dst, src, n + 1);
	return 0;
}

int64_t
bp_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t
bp_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void *
bp_map_file(const char *path, size_t len)
{
	struct stat sb;
	void *p;
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660)) == -1) {
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) == -1 || ((size_t)sb.st_size < len && ftruncate(fd, (off_t)len) == -1)) {
		bp_err("%s: %s: %s", __func__, path, strerror(errno));
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		bp_err("%s: mmap %s: %s", __func__, path, strerror(errno));
		return NULL;
	}
	return p;
}

uint64_t
bp_fnv1a_str(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return h;
}

void *
bp_slot_claim(void *slots, size_t stride, size_t nslots, size_t probes, uint64_t k)
{
	size_t i;

	for (i = 0; i < probes; i++) {
		uint64_t *key = (uint64_t *)((char *)slots + (size_t)((k + i) % nslots) * stride);
		uint64_t cur = __atomic_load_n(key, __ATOMIC_ACQUIRE), zero = 0;

		if (cur == k)
			return key;
		if (cur == 0 && (__atomic_compare_exchange_n(key, &zero, k, 0,
		    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || zero == k))
			return key;
	}
	return NULL;
}
