/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PCAPFILE_H
#define ROCE_PCAPFILE_H

/**
 * @file
 * Classic pcap files (not pcapng), Ethernet link type: reading captures for tools and tests,
 * writing frames for offline decoders (tshark, scapy). Files are outside input: every header
 * is checked, and a record longer than the reader's limit is refused.
 */

#include <stdint.h>
#include <stdio.h>

/** Largest record the reader accepts. */
#define ROCE_PCAP_SNAP_MAX 65535

/** An open pcap file. */
struct roce_pcap {
	FILE *f;
	int swapped;     /**< file written on a host of the other byte order */
	int nsec;        /**< nanosecond timestamps */
	int writing;
	uint32_t linktype;
	uint64_t records; /**< records read or written so far */
};

/** One record. */
struct roce_pcap_rec {
	uint64_t ts_ns;      /**< timestamp in ns since the epoch */
	uint32_t caplen;     /**< bytes in data */
	uint32_t origlen;    /**< length on the wire */
	uint8_t data[ROCE_PCAP_SNAP_MAX];
};

/**
 * Open a pcap file for reading.
 *
 * @return
 *   0, -errno from fopen(), -EINVAL (not a classic pcap file), -EPROTONOSUPPORT (link type is
 *   not Ethernet).
 */
int roce_pcap_open(struct roce_pcap *pc, const char *path);

/**
 * Open a pcap file for writing (Ethernet, microsecond timestamps), truncating it.
 *
 * @return
 *   0 or -errno.
 */
int roce_pcap_create(struct roce_pcap *pc, const char *path);

/**
 * Read the next record.
 *
 * @return
 *   1 with a record, 0 at the end of the file, -EINVAL for a damaged record (too long, or
 *   truncated file).
 */
int roce_pcap_next(struct roce_pcap *pc, struct roce_pcap_rec *rec);

/**
 * Append a record.
 *
 * @return
 *   0, -EINVAL (longer than ROCE_PCAP_SNAP_MAX), -EIO.
 */
int roce_pcap_write(struct roce_pcap *pc, const void *data, uint32_t len, uint64_t ts_ns);

/** Close the file; flushes when writing. @return 0 or -EIO. */
int roce_pcap_close(struct roce_pcap *pc);

#endif /* ROCE_PCAPFILE_H */
