/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the pcapng reader of lib/pcapfile (classic pcap: fuzz_pcap). The input is
 * a whole file, written to a memfd and opened by its /proc path. Every record is read; each
 * must be bytes of the input at the offset the reader gives, inside the block it came from,
 * of an interface the section declared, with that interface's link type. A read that ends
 * cleanly has consumed the whole input; one that fails says why and where.
 *
 * A second reader, written here from the format's definition alone, walks the same bytes:
 * the two must agree on where every record lies, on its lengths, flags and timestamp, and on
 * whether (and at which block) the file is damaged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "roce_pcapfile.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_pcapng: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

#define SHB 0x0A0D0D0Au
#define MAX_IFS ROCE_PCAPNG_MAX_IFACES

static int in_fd = -1;
static char in_path[64];
static struct roce_pcap_rec rec;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	in_fd = memfd_create("fuzz_pcapng_in", 0);
	if (in_fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	snprintf(in_path, sizeof(in_path), "/proc/self/fd/%d", in_fd);
	return 0;
}

/* ---- the reference reader: whole input in memory, one block at a time ---- */

struct ref_if {
	uint16_t linktype;
	uint32_t snaplen;
	uint8_t tsresol;
	int64_t tsoffset;
};

struct ref {
	const uint8_t *d;
	size_t size;
	size_t off;          /* next block */
	int swap;
	uint32_t nb_ifs;
	struct ref_if ifs[MAX_IFS];
};

/* One record the reference found. */
struct ref_rec {
	uint64_t off;
	uint32_t caplen;
	uint32_t origlen;
	uint32_t iface;
	uint32_t flags;
	uint64_t ts_ns;
};

static uint32_t
r32(const struct ref *r, size_t off)
{
	const uint8_t *p = r->d + off;

	return r->swap ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] :
		(uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint16_t
r16(const struct ref *r, size_t off)
{
	const uint8_t *p = r->d + off;

	return r->swap ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint64_t
r64(const struct ref *r, size_t off)
{
	uint64_t a = r32(r, off), b = r32(r, off + 4);

	return r->swap ? a << 32 | b : b << 32 | a;
}

/*
 * Options in [off, end): -1 when one runs past @end. @idb: interface options are checked
 * (if_tsresol, if_tsoffset) into @ifc; else epb_flags goes to *flags.
 */
static int
ref_options(const struct ref *r, size_t off, size_t end, struct ref_if *ifc, uint32_t *flags)
{
	while (end - off >= 4) {
		uint16_t code = r16(r, off), len = r16(r, off + 2);
		size_t padded = ((size_t)len + 3) / 4 * 4;

		off += 4;
		if (code == 0)
			return 0;
		if (padded > end - off)
			return -1;
		if (ifc != NULL && code == 9) {
			uint8_t v = r->d[off];

			if (len != 1 || ((v & 0x80) ? (v & 0x7F) > 63 : v > 19))
				return -1;
			ifc->tsresol = v;
		} else if (ifc != NULL && code == 14) {
			if (len != 8)
				return -1;
			ifc->tsoffset = (int64_t)r64(r, off);
		} else if (ifc == NULL && code == 2 && len == 4) {
			*flags = r32(r, off);
		}
		off += padded;
	}
	return 0;
}

/* Timestamp to ns, by long arithmetic a different way from the reader's. */
static uint64_t
ref_ts(const struct ref_if *ifc, uint64_t ts)
{
	unsigned int n = ifc->tsresol & 0x7F, i;
	uint64_t ns;

	if (ifc->tsresol & 0x80) {
		ns = (uint64_t)(((unsigned __int128)ts * 1000000000u) >> n);
	} else {
		ns = ts;
		for (i = n; i < 9; i++)
			ns *= 10;
		for (i = 9; i < n; i++)
			ns /= 10;
	}
	return ns + (uint64_t)ifc->tsoffset * 1000000000u;
}

/*
 * The next record: 1 with @out, 0 at a clean end, -1 when the block at r->off is damaged
 * (r->off stays there). @first: the first block must be a section header.
 */
static int
ref_next(struct ref *r, struct ref_rec *out, int first)
{
	for (;;) {
		size_t off = r->off, left = r->size - off, end;
		uint32_t type, len, body;

		if (left == 0)
			return first ? -1 : 0;
		if (left < 8)
			return -1;
		memcpy(&type, r->d + off, 4);
		if (type == SHB) {
			if (left < 12)
				return -1;
			if (memcmp(r->d + off + 8, "\x4d\x3c\x2b\x1a", 4) == 0)
				r->swap = 0;
			else if (memcmp(r->d + off + 8, "\x1a\x2b\x3c\x4d", 4) == 0)
				r->swap = 1;
			else
				return -1;
		} else if (first) {
			return -1;
		}
		type = r32(r, off);
		len = r32(r, off + 4);
		if (len < 12 || len % 4 != 0 || len > left)
			return -1;
		body = len - 12;
		end = off + 8 + body;
		if (r32(r, end) != len)
			return -1;
		switch (type) {
		case SHB:
			if (body < 16 || r16(r, off + 12) != 1 ||
					ref_options(r, off + 24, end, NULL, &(uint32_t){ 0 }) < 0)
				return -1;
			r->nb_ifs = 0;
			break;
		case 1: {
			struct ref_if ifc = { .tsresol = 6 };

			if (body < 8 || r->nb_ifs == MAX_IFS)
				return -1;
			ifc.linktype = r16(r, off + 8);
			ifc.snaplen = r32(r, off + 12);
			if (ref_options(r, off + 16, end, &ifc, NULL) < 0)
				return -1;
			r->ifs[r->nb_ifs++] = ifc;
			break;
		}
		case 2:
		case 6: {
			uint32_t iface, cl, padded, flags = 0;

			if (body < 20)
				return -1;
			iface = type == 6 ? r32(r, off + 8) : r16(r, off + 8);
			cl = r32(r, off + 20);
			if (iface >= r->nb_ifs || cl > body - 20 || cl > ROCE_PCAP_SNAP_MAX)
				return -1;
			padded = (cl + 3) / 4 * 4;
			if (padded < body - 20 &&
					ref_options(r, off + 28 + padded, end, NULL, &flags) < 0)
				return -1;
			*out = (struct ref_rec){
				.off = off + 28, .caplen = cl, .origlen = r32(r, off + 24),
				.iface = iface, .flags = flags,
				.ts_ns = ref_ts(&r->ifs[iface],
					(uint64_t)r32(r, off + 12) << 32 | r32(r, off + 16)),
			};
			break;
		}
		case 3: {
			uint32_t cl, snap;

			if (body < 4 || r->nb_ifs == 0)
				return -1;
			cl = r32(r, off + 8);
			snap = r->ifs[0].snaplen;
			if (snap != 0 && cl > snap)
				cl = snap;
			if (cl > body - 4)
				cl = body - 4;
			if (cl > ROCE_PCAP_SNAP_MAX)
				return -1;
			*out = (struct ref_rec){ .off = off + 12, .caplen = cl,
				.origlen = r32(r, off + 8) };
			break;
		}
		default:
			break;
		}
		/* The reader refuses to hold a block this long (it skips unknown ones unread). */
		if ((type == SHB || type == 1 || type == 2 || type == 3 || type == 6) &&
				len > ROCE_PCAPNG_BLOCK_MAX)
			return -1;
		r->off = end + 4;
		first = 0;
		if (type == 2 || type == 3 || type == 6)
			return 1;
	}
}

static void
put_input(const uint8_t *data, size_t size)
{
	FUZZ_ASSERT(ftruncate(in_fd, 0) == 0 &&
			(size == 0 || pwrite(in_fd, data, size, 0) == (ssize_t)size),
			"cannot write the input: %s", strerror(errno));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref r;
	static struct roce_pcap pc;
	struct ref_rec want;
	uint64_t n = 0;
	int ret, rret;

	/* Classic pcap inputs are fuzz_pcap's. */
	if (size < 4 || memcmp(data, "\x0a\x0d\x0d\x0a", 4) != 0)
		return 0;
	put_input(data, size);
	memset(&r, 0, sizeof(r));
	r.d = data;
	r.size = size;
	rret = ref_next(&r, &want, 1);
	/* The reference stops at the first record: rewind it to re-walk from the start. */
	ret = roce_pcap_open(&pc, in_path);
	if (ret != 0) {
		FUZZ_ASSERT(ret == -EINVAL && pc.error != NULL && pc.f == NULL && pc.buf == NULL,
				"open: %d", ret);
		/* Only a damaged first block keeps the file from opening. */
		FUZZ_ASSERT(rret < 0 && r.off == 0, "open refused a good first block");
		return 0;
	}
	FUZZ_ASSERT(pc.ng && pc.sections == 1, "opened as pcapng");
	for (;;) {
		ret = roce_pcap_next(&pc, &rec);
		if (ret != 1)
			break;
		n++;
		FUZZ_ASSERT(rret == 1, "record %lu read; the reference says %d at %zu",
				(unsigned long)n, rret, r.off);
		FUZZ_ASSERT(rec.off == want.off && rec.caplen == want.caplen &&
				rec.origlen == want.origlen && rec.iface == want.iface &&
				rec.flags == want.flags && rec.ts_ns == want.ts_ns,
				"record %lu: at %lu len %u/%u if %u flags %x ts %lu; reference "
				"at %lu len %u/%u if %u flags %x ts %lu", (unsigned long)n,
				(unsigned long)rec.off, rec.caplen, rec.origlen, rec.iface,
				rec.flags, (unsigned long)rec.ts_ns, (unsigned long)want.off,
				want.caplen, want.origlen, want.iface, want.flags,
				(unsigned long)want.ts_ns);
		FUZZ_ASSERT(rec.off + rec.caplen <= size &&
				memcmp(rec.data, data + rec.off, rec.caplen) == 0,
				"record %lu: data differs from the input", (unsigned long)n);
		FUZZ_ASSERT(rec.iface < pc.nb_ifaces &&
				rec.linktype == pc.iface[rec.iface].linktype,
				"record %lu: interface %u of %u", (unsigned long)n, rec.iface,
				pc.nb_ifaces);
		FUZZ_ASSERT(pc.records == n, "records %lu", (unsigned long)pc.records);
		rret = ref_next(&r, &want, 0);
	}
	if (ret == 0) {
		FUZZ_ASSERT(rret == 0 && pc.off == size, "clean end at %lu of %zu; reference %d",
				(unsigned long)pc.off, size, rret);
	} else {
		FUZZ_ASSERT(ret == -EINVAL && pc.error != NULL, "next: %d", ret);
		FUZZ_ASSERT(rret < 0 && pc.off == r.off,
				"damage at block %lu; the reference says %d at %zu",
				(unsigned long)pc.off, rret, r.off);
	}
	FUZZ_ASSERT(roce_pcap_close(&pc) == 0, "close");
	return 0;
}
