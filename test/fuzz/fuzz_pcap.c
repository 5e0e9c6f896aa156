/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the classic pcap reader of lib/pcapfile (pcapng: fuzz_pcapng). The input
 * is a whole file, written to a memfd and opened by its /proc path. Every record is read; each
 * must lie inside the input, and writing the records out and reading them back must give the
 * same records.
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

#define FILE_HDR 24
#define REC_HDR 16
#define MAX_RECS 4096

#define FUZZ_ASSERT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "fuzz_pcap: %s: ", #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		abort(); \
	} \
} while (0)

static int in_fd = -1, out_fd = -1;
static char in_path[64], out_path[64];

/* What was read, to compare with the copy read back. */
struct seen_rec {
	uint32_t caplen;
	uint32_t off;     /* of the data in the input */
	uint64_t ts_ns;
};

static struct seen_rec recs[MAX_RECS];

static struct roce_pcap_rec rec;

static int
open_memfd(const char *name, char *path, size_t cap)
{
	int fd = memfd_create(name, 0);

	if (fd < 0) {
		perror("memfd_create");
		exit(2);
	}
	snprintf(path, cap, "/proc/self/fd/%d", fd);
	return fd;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	in_fd = open_memfd("fuzz_pcap_in", in_path, sizeof(in_path));
	out_fd = open_memfd("fuzz_pcap_out", out_path, sizeof(out_path));
	return 0;
}

static void
put_input(const uint8_t *data, size_t size)
{
	FUZZ_ASSERT(ftruncate(in_fd, 0) == 0 &&
			(size == 0 || pwrite(in_fd, data, size, 0) == (ssize_t)size),
			"cannot write the input: %s", strerror(errno));
}

/* Read every record; @return how many, each checked against the input bytes. */
static unsigned int
read_all(const uint8_t *data, size_t size)
{
	struct roce_pcap pc;
	uint64_t off = FILE_HDR;
	unsigned int n = 0;
	int ret = roce_pcap_open(&pc, in_path);

	if (ret != 0) {
		FUZZ_ASSERT(ret == -EINVAL || ret == -EPROTONOSUPPORT, "open: %d", ret);
		FUZZ_ASSERT(pc.f == NULL, "file left open after an error");
		return 0;
	}
	/* pcapng has a target of its own (fuzz_pcapng): this one checks the classic layout. */
	if (pc.ng) {
		FUZZ_ASSERT(roce_pcap_close(&pc) == 0, "close");
		return 0;
	}
	FUZZ_ASSERT(size >= FILE_HDR && pc.linktype == 1, "opened a %zu-byte file", size);
	while ((ret = roce_pcap_next(&pc, &rec)) == 1) {
		FUZZ_ASSERT(rec.caplen <= ROCE_PCAP_SNAP_MAX &&
				off + REC_HDR + rec.caplen <= size &&
				memcmp(rec.data, data + off + REC_HDR, rec.caplen) == 0,
				"record %u: %u bytes at %lu of %zu", n, rec.caplen,
				(unsigned long)off, size);
		if (n < MAX_RECS)
			recs[n] = (struct seen_rec){ rec.caplen, off + REC_HDR, rec.ts_ns };
		off += REC_HDR + rec.caplen;
		n++;
		FUZZ_ASSERT(pc.records == n, "records %lu, read %u", (unsigned long)pc.records, n);
	}
	/* The end of the file is the end of a record; anything else is a damaged record. */
	FUZZ_ASSERT(ret == 0 ? off == size : (ret == -EINVAL && off < size),
			"next: %d at %lu of %zu", ret, (unsigned long)off, size);
	FUZZ_ASSERT(roce_pcap_close(&pc) == 0, "close");
	return n;
}

/* Whether a timestamp survives the writer's microsecond, 32-bit-seconds format. */
static int
ts_exact(uint64_t ts_ns)
{
	return ts_ns % 1000 == 0 && ts_ns / 1000000000u <= UINT32_MAX;
}

/* Write the records to a new file and read them back. */
static void
round_trip(const uint8_t *data, unsigned int n)
{
	struct roce_pcap pc;
	unsigned int i;

	FUZZ_ASSERT(roce_pcap_create(&pc, out_path) == 0, "create");
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(roce_pcap_write(&pc, data + recs[i].off, recs[i].caplen,
					recs[i].ts_ns) == 0, "write record %u", i);
	FUZZ_ASSERT(roce_pcap_close(&pc) == 0, "close after writing");
	FUZZ_ASSERT(roce_pcap_open(&pc, out_path) == 0, "reopen");
	for (i = 0; i < n; i++) {
		FUZZ_ASSERT(roce_pcap_next(&pc, &rec) == 1 && rec.caplen == recs[i].caplen &&
				rec.origlen == recs[i].caplen &&
				memcmp(rec.data, data + recs[i].off, rec.caplen) == 0,
				"record %u read back differs", i);
		FUZZ_ASSERT(!ts_exact(recs[i].ts_ns) || rec.ts_ns == recs[i].ts_ns,
				"record %u: timestamp %lu read back as %lu", i,
				(unsigned long)recs[i].ts_ns, (unsigned long)rec.ts_ns);
	}
	FUZZ_ASSERT(roce_pcap_next(&pc, &rec) == 0, "extra record read back");
	roce_pcap_close(&pc);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int n;

	put_input(data, size);
	n = read_all(data, size);
	if (n <= MAX_RECS)
		round_trip(data, n);
	return 0;
}
