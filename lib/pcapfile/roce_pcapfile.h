/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_PCAPFILE_H
#define ROCE_PCAPFILE_H

/**
 * @file
 * Capture files: classic pcap (Ethernet link type) and pcapng are read, classic pcap is
 * written (frames for offline decoders: tshark, scapy). Files are outside input: every header,
 * block and option length is checked, and a record longer than the reader's limit is refused.
 *
 * pcapng (draft-ietf-opsawg-pcapng): every section (Section Header Block, either byte order)
 * with its Interface Description Blocks; Enhanced, Simple and obsolete Packet Blocks are
 * records; any other block is skipped. Interfaces of any link type are read; the record says
 * which (roce_pcap_rec::linktype).
 */

#include <stdint.h>
#include <stdio.h>

/** Largest record the reader accepts. */
#define ROCE_PCAP_SNAP_MAX 65535

/** Most interfaces one pcapng section may describe. */
#define ROCE_PCAPNG_MAX_IFACES 256
/** Longest pcapng block the reader holds (a record, its options; an interface). */
#define ROCE_PCAPNG_BLOCK_MAX (256 * 1024)

/** LINKTYPE_ETHERNET. */
#define ROCE_PCAP_LINKTYPE_ETHERNET 1

/** A pcapng interface, from its Interface Description Block. */
struct roce_pcap_iface {
	uint16_t linktype;
	uint32_t snaplen;     /**< 0: no limit */
	uint8_t tsresol;      /**< if_tsresol: 10^-n s, or 2^-n s when bit 7 is set (default 6) */
	int64_t tsoffset;     /**< if_tsoffset: seconds added to every timestamp */
	char name[32];        /**< if_name, cut to fit; "" when absent */
};

/** An open capture file. */
struct roce_pcap {
	FILE *f;
	int swapped;     /**< written on a host of the other byte order (pcapng: this section) */
	int nsec;        /**< classic pcap: nanosecond timestamps */
	int writing;
	int ng;          /**< pcapng */
	uint32_t linktype; /**< classic pcap: the file's; pcapng: the last record's interface */
	uint64_t records; /**< records read or written so far */
	/* pcapng only */
	uint64_t off;            /**< file offset of the next block */
	uint64_t sections;       /**< Section Header Blocks read */
	uint64_t skipped;        /**< blocks of other types skipped */
	const char *error;       /**< after -EINVAL: what is wrong, for a message */
	uint8_t *buf;            /**< one block (ROCE_PCAPNG_BLOCK_MAX) */
	uint32_t nb_ifaces;      /**< interfaces of the current section */
	struct roce_pcap_iface iface[ROCE_PCAPNG_MAX_IFACES];
};

/** roce_pcap_rec::flags: the direction bits of pcapng's epb_flags. */
#define ROCE_PCAP_DIR_MASK 0x3
#define ROCE_PCAP_DIR_IN   0x1
#define ROCE_PCAP_DIR_OUT  0x2

/** One record. */
struct roce_pcap_rec {
	uint64_t ts_ns;      /**< timestamp in ns since the epoch (pcapng Simple Packet: 0) */
	uint32_t caplen;     /**< bytes in data */
	uint32_t origlen;    /**< length on the wire */
	uint32_t iface;      /**< pcapng interface (0 in classic pcap) */
	uint32_t flags;      /**< pcapng epb_flags (0 when absent, and in classic pcap) */
	uint16_t linktype;   /**< of the record's interface */
	uint64_t off;        /**< file offset of data */
	uint8_t data[ROCE_PCAP_SNAP_MAX];
};

/**
 * Open a pcap or pcapng file for reading. A pcapng file must start with a Section Header Block
 * of a version this reader knows (1.x).
 *
 * @return
 *   0, -errno from fopen(), -EINVAL (neither pcap nor pcapng, or a damaged first block:
 *   pc->error says why for pcapng), -EPROTONOSUPPORT (classic pcap whose link type is not
 *   Ethernet), -ENOMEM.
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
 * Read the next record (pcapng: the next packet block, skipping the others).
 *
 * @return
 *   1 with a record, 0 at the end of the file, -EINVAL for a damaged record or block (too
 *   long, lengths that disagree, an undeclared interface, a truncated file; pcapng:
 *   pc->error says which, pc->off where the block starts).
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
