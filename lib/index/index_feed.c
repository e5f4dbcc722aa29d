/*
 * The heads feed (index_feed.h): written by the indexer from the index's heads, read by every
 * WebSocket connection without SQLite. The format is this file's: a head a line,
 * "NUMBER HASH PARENTHASH RESULT", oldest first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/config.h"
#include "core/db.h"
#include "core/hex.h"
#include "core/util.h"
#include "evm/u256.h"
#include "index_feed.h"
#include "index_read.h"

/* Appends ,"name":"0x.." for v to out at *at; 0 or -1. */
static int
put_qty(char *out, size_t cap, size_t *at, const char *name, uint64_t v)
{
	char q[24];
	int w;

	if (bp_hex_quantity_encode(v, q, sizeof(q)) == -1)
		return -1;
	w = snprintf(out + *at, cap - *at, ",\"%s\":\"%s\"", name, q);
	if (w < 0 || (size_t)w >= cap - *at)
		return -1;
	*at += (size_t)w;
	return 0;
}

int
bp_index_feed_head_json(const struct bp_index_block_head *h, char *out, size_t cap)
{
	struct bp_u256 fee;
	char q[80];
	size_t at;
	int w;

	if (h->number < 0 || h->timestamp < 0 || h->gas_used < 0 || h->gas_limit < 0)
		return -1;
	w = snprintf(out, cap, "{\"hash\":\"%s\",\"parentHash\":\"%s\"", h->hash, h->parent_hash);
	if (w < 0 || (size_t)w >= cap)
		return -1;
	at = (size_t)w;
	if (put_qty(out, cap, &at, "number", (uint64_t)h->number) == -1 ||
	    put_qty(out, cap, &at, "timestamp", (uint64_t)h->timestamp) == -1 ||
	    put_qty(out, cap, &at, "gasUsed", (uint64_t)h->gas_used) == -1 ||
	    put_qty(out, cap, &at, "gasLimit", (uint64_t)h->gas_limit) == -1)
		return -1;
	if (h->base_fee[0] != '\0') {
		if (bp_u256_from_dec(&fee, h->base_fee, strlen(h->base_fee)) == -1 ||
		    bp_u256_to_quantity(&fee, q, sizeof(q)) == -1)
			return -1;
		w = snprintf(out + at, cap - at, ",\"baseFeePerGas\":\"%s\"", q);
		if (w < 0 || (size_t)w >= cap - at)
			return -1;
		at += (size_t)w;
	}
	if (at + 2 > cap)
		return -1;
	out[at++] = '}';
	out[at] = '\0';
	return 0;
}

const char *
bp_index_feed_result(const struct bp_index_block_head *h, char *out, size_t cap)
{
	if (h->header != NULL && h->header[0] == '{')
		return h->header;
	return bp_index_feed_head_json(h, out, cap) == 0 ? out : NULL;
}

int
bp_index_feed_path(const struct bp_config *cfg, const char *chain, char *out, size_t cap)
{
	char suffix[160];
	int n = snprintf(suffix, sizeof(suffix), ".heads.%s", chain);

	if (n < 0 || (size_t)n >= sizeof(suffix))
		return -1;
	return bp_config_state_path(cfg, suffix, out, cap);
}

/* Writes all of b to fd; 0 or -1. */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Sets fd's modification time after the current feed's (at path), to the nanosecond: readers
 * tell a new feed by inode, time and size, and a freed inode number comes back at once, the
 * size is often the same, and the kernel's own clock for file times ticks in milliseconds.
 */
static int
stamp(int fd, const char *path)
{
	struct timespec ts[2];
	struct stat sb;

	if (clock_gettime(CLOCK_REALTIME, &ts[1]) == -1)
		return -1;
	if (stat(path, &sb) == 0 && (sb.st_mtim.tv_sec > ts[1].tv_sec ||
	    (sb.st_mtim.tv_sec == ts[1].tv_sec && sb.st_mtim.tv_nsec >= ts[1].tv_nsec))) {
		ts[1] = sb.st_mtim;
		if (++ts[1].tv_nsec == 1000000000) {
			ts[1].tv_sec++;
			ts[1].tv_nsec = 0;
		}
	}
	ts[0] = ts[1];
	return futimens(fd, ts);
}

/* The lines of the newest heads as bp_index_heads_recent gives them, newest first. */
struct feed_lines {
	struct bp_buf	line[BP_INDEX_FEED_HEADS];
	size_t		n;
};

static int
add_line(const struct bp_index_block_head *h, void *arg)
{
	struct feed_lines *fl = arg;
	struct bp_buf *b = &fl->line[fl->n];
	char core[640];
	const char *res;

	if (fl->n == BP_INDEX_FEED_HEADS)
		return 1;
	bp_buf_init(b, BP_INDEX_FEED_MAX);
	/* A result with a newline (never the store's compact JSON) would break the line. */
	if ((res = bp_index_feed_result(h, core, sizeof(core))) == NULL ||
	    strchr(res, '\n') != NULL ||
	    bp_buf_printf(b, "%lld %s %s ", (long long)h->number, h->hash, h->parent_hash) == -1 ||
	    bp_buf_adds(b, res) == -1 || bp_buf_adds(b, "\n") == -1) {
		bp_buf_free(b);
		return 1;	/* older heads left out: a reader behind them sees a gap */
	}
	fl->n++;
	return 0;
}

int
bp_index_feed_write(struct bp_db *db, const char *chain, const char *path)
{
	struct feed_lines fl;
	struct bp_buf out;
	char tmp[4200];
	size_t i, total;
	int fd, ok, rc = -1;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -1;
	bp_buf_init(&out, BP_INDEX_FEED_MAX);
	fl.n = 0;
	if (bp_index_heads_recent(db, chain, BP_INDEX_FEED_HEADS, add_line, &fl) == -1)
		goto out;
	/* The newest heads that fit the cap together (line[0] is the newest), oldest first. */
	for (i = 0, total = 0; i < fl.n && total + fl.line[i].len <= BP_INDEX_FEED_MAX; i++)
		total += fl.line[i].len;
	for (; i > 0; i--)
		(void)bp_buf_add(&out, fl.line[i - 1].data, fl.line[i - 1].len);
	/* Written whole, then renamed over the feed: a reader sees the old or the new file. */
	if (fl.n == 0 || out.len == 0 ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0664)) == -1)
		goto out;
	ok = write_all(fd, out.data, out.len) == 0 && stamp(fd, path) == 0;
	if (close(fd) == -1)
		ok = 0;
	if (!ok || rename(tmp, path) == -1) {
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	/* No feed rather than a stale one: the readers go back to SQLite. */
	if (rc == -1)
		unlink(path);
	for (i = 0; i < fl.n; i++)
		bp_buf_free(&fl.line[i]);
	bp_buf_free(&out);
	return rc;
}

/* Reads the file at path into buf (reset first), NUL-terminated. 0, or -1. */
static int
read_file(const char *path, struct bp_buf *buf)
{
	char chunk[16384];
	ssize_t n;
	int fd;

	bp_buf_reset(buf);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0 || bp_buf_add(buf, chunk, (size_t)n) == -1)
			break;
	}
	close(fd);
	return n == 0 && bp_buf_add(buf, "", 1) == 0 ? 0 : -1;
}

/* Splits one feed line (NUL-terminated, without its newline) into h. 0, or -1 when malformed. */
static int
parse_line(char *line, struct bp_index_block_head *h)
{
	char *hash, *parent, *res, *end;
	long long number;

	memset(h, 0, sizeof(*h));
	errno = 0;
	number = strtoll(line, &end, 10);
	if (errno != 0 || end == line || *end != ' ' || number < 0)
		return -1;
	hash = end + 1;
	if ((parent = strchr(hash, ' ')) == NULL)
		return -1;
	*parent++ = '\0';
	if ((res = strchr(parent, ' ')) == NULL)
		return -1;
	*res++ = '\0';
	if (*res != '{' || bp_strlcpy(h->hash, hash, sizeof(h->hash)) == -1 ||
	    bp_strlcpy(h->parent_hash, parent, sizeof(h->parent_hash)) == -1)
		return -1;
	h->number = number;
	h->header = res;
	return 0;
}

int
bp_index_feed_read(const char *path, struct bp_index_feed_seen *seen, struct bp_buf *buf,
    int (*fn)(const struct bp_index_block_head *, void *), void *arg)
{
	struct bp_index_block_head h;
	struct stat sb;
	char *line, *nl;
	int64_t mtime;

	if (stat(path, &sb) == -1)
		return -1;
	mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
	if ((uint64_t)sb.st_ino == seen->ino && mtime == seen->mtime_ns &&
	    (int64_t)sb.st_size == seen->size)
		return 0;
	if (read_file(path, buf) == -1)
		return -1;
	/* What was read may be newer than the stat: read again next time, no harm. */
	seen->ino = (uint64_t)sb.st_ino;
	seen->mtime_ns = mtime;
	seen->size = (int64_t)sb.st_size;
	for (line = buf->data; line != NULL && *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) == NULL)
			return -1;	/* a cut line: not a feed this module wrote */
		*nl = '\0';
		if (parse_line(line, &h) == -1)
			return -1;
		if (fn(&h, arg) != 0)
			break;
	}
	return 1;
}
