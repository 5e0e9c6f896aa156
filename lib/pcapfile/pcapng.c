/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcapng reader. The file is outside input: a block's length is checked against its minimum,
 * its alignment, the reader's buffer and the trailing copy of the length before anything in
 * it is used; every field and option is read only after checking it lies inside the block.
 * Blocks of unknown types are skipped without being read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "pcapfile_private.h"

#define BOM 0x1A2B3C4Du

/* Block types (draft-ietf-opsawg-pcapng, section 11.1). */
#define BT_IDB 0x00000001u
#define BT_OPB 0x00000002u     /* obsolete Packet Block */
#define BT_SPB 0x00000003u
#define BT_EPB 0x00000006u

/* Block: type, length, body, length again. */
#define BLOCK_HDR 8
#define BLOCK_MIN 12

/* Options. */
#define OPT_END 0
#define OPT_IF_NAME 2
#define OPT_IF_TSRESOL 9
#define OPT_IF_TSOFFSET 14
#define OPT_EPB_FLAGS 2

/* Fixed parts of the bodies. */
#define SHB_FIXED 16            /* byte-order magic, major, minor, section length */
#define IDB_FIXED 8             /* link type, reserved, snaplen */
#define EPB_FIXED 20            /* interface, timestamp high, low, captured, original */
#define OPB_FIXED 20            /* interface (16), drops (16), timestamp, captured, original */
#define SPB_FIXED 4             /* original length */

#define DEFAULT_TSRESOL 6

static uint16_t
get16(const struct roce_pcap *pc, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return pc->swapped ? rte_bswap16(v) : v;
}

static uint32_t
get32(const struct roce_pcap *pc, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return pc->swapped ? rte_bswap32(v) : v;
}

static uint64_t
get64(const struct roce_pcap *pc, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return pc->swapped ? rte_bswap64(v) : v;
}

static int
damaged(struct roce_pcap *pc, const char *why)
{
	pc->error = why;
	return -EINVAL;
}

/*
 * Walk the options in [p, p + len): @fn gets each one but the end marker. An option that
 * runs past the block is damage; so is a block whose options do not end cleanly (a few
 * stray bytes shorter than an option header are padding some writers leave: ignored).
 */
typedef int (*opt_fn)(struct roce_pcap *pc, uint16_t code, const uint8_t *v, uint16_t len,
		void *arg);

static int
options(struct roce_pcap *pc, const uint8_t *p, uint32_t len, opt_fn fn, void *arg)
{
	uint32_t off = 0;

	while (len - off >= 4) {
		uint16_t code = get16(pc, p + off);
		uint16_t olen = get16(pc, p + off + 2);
		uint32_t padded = ((uint32_t)olen + 3) & ~3u;

		off += 4;
		if (code == OPT_END)
			return 0;
		if (padded > len - off)
			return damaged(pc, "an option runs past the end of its block");
		if (fn != NULL && fn(pc, code, p + off, olen, arg) != 0)
			return -EINVAL;
		off += padded;
	}
	return 0;
}

/* if_tsresol: 10^-n up to nanoseconds and beyond (n <= 19 fits 64 bits), 2^-n up to 63. */
static int
tsresol_ok(uint8_t r)
{
	return (r & 0x80) ? (r & 0x7F) <= 63 : r <= 19;
}

static int
idb_opt(struct roce_pcap *pc, uint16_t code, const uint8_t *v, uint16_t len, void *arg)
{
	struct roce_pcap_iface *ifc = arg;

	switch (code) {
	case OPT_IF_NAME:
		len = len < sizeof(ifc->name) - 1 ? len : sizeof(ifc->name) - 1;
		memcpy(ifc->name, v, len);
		ifc->name[len] = '\0';
		/* A name is text: an embedded NUL ends it. */
		ifc->name[strnlen(ifc->name, len)] = '\0';
		break;
	case OPT_IF_TSRESOL:
		if (len != 1 || !tsresol_ok(v[0]))
			return damaged(pc, "interface with a timestamp resolution out of range");
		ifc->tsresol = v[0];
		break;
	case OPT_IF_TSOFFSET:
		if (len != 8)
			return damaged(pc, "interface with an if_tsoffset that is not 8 bytes");
		ifc->tsoffset = (int64_t)get64(pc, v);
		break;
	default:
		break;
	}
	return 0;
}

static int
epb_opt(struct roce_pcap *pc, uint16_t code, const uint8_t *v, uint16_t len, void *arg)
{
	if (code == OPT_EPB_FLAGS && len == 4)
		*(uint32_t *)arg = get32(pc, v);
	return 0;
}

/* Timestamp units of @ifc to ns since the epoch (wrapping past the year 2554). */
static uint64_t
ts_ns(const struct roce_pcap_iface *ifc, uint64_t ts)
{
	static const uint64_t pow10[20] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000,
		10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
		100000000000000ull, 1000000000000000ull, 10000000000000000ull,
		100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
	};
	uint8_t n = ifc->tsresol & 0x7F;
	uint64_t ns;

	if (ifc->tsresol & 0x80)
		ns = (uint64_t)(((unsigned __int128)ts * 1000000000u) >> n);
	else if (n <= 9)
		ns = ts * pow10[9 - n];
	else
		ns = ts / pow10[n - 9];
	return ns + (uint64_t)ifc->tsoffset * 1000000000u;
}

/*
 * Read the block at pc->off: its type and length (byte order settled first for a Section
 * Header Block), then, when @want says so, its body into pc->buf; the trailing length is
 * always checked. *body_len gets the body's length (read or skipped).
 *
 * @return 1 with a block, 0 at the end of the file, -EINVAL.
 */
static int
block_read(struct roce_pcap *pc, uint32_t *type, uint32_t *body_len, int (*want)(uint32_t))
{
	uint8_t hdr[BLOCK_HDR + 4];
	uint32_t len, trail, blen;
	size_t n = fread(hdr, 1, BLOCK_HDR, pc->f);

	if (n == 0 && feof(pc->f))
		return 0;
	if (n != BLOCK_HDR)
		return damaged(pc, "the file ends inside a block header");
	memcpy(type, hdr, 4);
	if (*type == PCAPNG_SHB_TYPE) {
		uint32_t bom;

		/* The byte-order magic decides how this and every later block of the section is
		 * read, the length in front of it included. */
		if (fread(hdr + BLOCK_HDR, 4, 1, pc->f) != 1)
			return damaged(pc, "the file ends inside a section header");
		memcpy(&bom, hdr + BLOCK_HDR, 4);
		if (bom == BOM)
			pc->swapped = 0;
		else if (bom == rte_bswap32(BOM))
			pc->swapped = 1;
		else
			return damaged(pc, "section header with a bad byte-order magic");
	}
	*type = get32(pc, hdr);
	len = get32(pc, hdr + 4);
	if (len < BLOCK_MIN || len % 4 != 0)
		return damaged(pc, "block length below 12 or not a multiple of 4");
	blen = len - BLOCK_MIN;
	*body_len = blen;
	if (want(*type)) {
		uint32_t have = *type == PCAPNG_SHB_TYPE ? 4 : 0;

		if (len > ROCE_PCAPNG_BLOCK_MAX)
			return damaged(pc, "block longer than the reader's 256 KiB");
		if (blen < have)
			return damaged(pc, "section header shorter than its fixed fields");
		memcpy(pc->buf, hdr + BLOCK_HDR, have);
		if (blen > have && fread(pc->buf + have, blen - have, 1, pc->f) != 1)
			return damaged(pc, "the file ends inside a block");
	} else {
		/* Skipped unread: its length is only believed once the trailer agrees. */
		if (fseek(pc->f, (long)blen, SEEK_CUR) != 0)
			return damaged(pc, "cannot seek past a block");
	}
	if (fread(&trail, 4, 1, pc->f) != 1)
		return damaged(pc, "the file ends inside a block");
	if ((pc->swapped ? rte_bswap32(trail) : trail) != len)
		return damaged(pc, "block lengths at its start and end differ");
	return 1;
}

static int
want_block(uint32_t type)
{
	return type == PCAPNG_SHB_TYPE || type == BT_IDB || type == BT_EPB || type == BT_SPB ||
		type == BT_OPB;
}

static int
want_shb(uint32_t type)
{
	return type == PCAPNG_SHB_TYPE;
}

static int
section_start(struct roce_pcap *pc, uint32_t blen)
{
	if (blen < SHB_FIXED)
		return damaged(pc, "section header shorter than its fixed fields");
	if (get16(pc, pc->buf + 4) != 1)
		return damaged(pc, "pcapng major version is not 1");
	if (options(pc, pc->buf + SHB_FIXED, blen - SHB_FIXED, NULL, NULL) != 0)
		return -EINVAL;
	pc->nb_ifaces = 0;
	pc->sections++;
	return 0;
}

static int
iface_add(struct roce_pcap *pc, uint32_t blen)
{
	struct roce_pcap_iface *ifc;

	if (blen < IDB_FIXED)
		return damaged(pc, "interface description shorter than its fixed fields");
	if (pc->nb_ifaces == ROCE_PCAPNG_MAX_IFACES)
		return damaged(pc, "more than 256 interfaces in one section");
	ifc = &pc->iface[pc->nb_ifaces];
	memset(ifc, 0, sizeof(*ifc));
	ifc->linktype = get16(pc, pc->buf);
	ifc->snaplen = get32(pc, pc->buf + 4);
	ifc->tsresol = DEFAULT_TSRESOL;
	if (options(pc, pc->buf + IDB_FIXED, blen - IDB_FIXED, idb_opt, ifc) != 0)
		return -EINVAL;
	pc->nb_ifaces++;
	return 0;
}

/* A packet block's data, as the record: checked against the block and the reader's limit. */
static int
record_fill(struct roce_pcap *pc, struct roce_pcap_rec *rec, uint64_t block_off,
		uint32_t fixed, uint32_t blen, uint32_t iface, uint32_t caplen)
{
	if (iface >= pc->nb_ifaces)
		return damaged(pc, "packet of an interface the section did not describe");
	if (caplen > blen - fixed)
		return damaged(pc, "packet longer than its block");
	if (caplen > ROCE_PCAP_SNAP_MAX)
		return damaged(pc, "packet longer than 65535 bytes");
	memcpy(rec->data, pc->buf + fixed, caplen);
	rec->caplen = caplen;
	rec->iface = iface;
	rec->linktype = pc->iface[iface].linktype;
	rec->off = block_off + BLOCK_HDR + fixed;
	rec->flags = 0;
	pc->linktype = rec->linktype;
	return 0;
}

static int
packet(struct roce_pcap *pc, struct roce_pcap_rec *rec, uint32_t type, uint32_t blen,
		uint64_t block_off)
{
	const uint8_t *b = pc->buf;
	uint32_t caplen, padded, iface, flags = 0;
	uint64_t ts;

	switch (type) {
	case BT_EPB:
	case BT_OPB:
		if (blen < EPB_FIXED)
			return damaged(pc, "packet block shorter than its fixed fields");
		iface = type == BT_EPB ? get32(pc, b) : get16(pc, b);
		caplen = get32(pc, b + 12);
		if (record_fill(pc, rec, block_off, EPB_FIXED, blen, iface, caplen) != 0)
			return -EINVAL;
		ts = (uint64_t)get32(pc, b + 4) << 32 | get32(pc, b + 8);
		rec->ts_ns = ts_ns(&pc->iface[iface], ts);
		rec->origlen = get32(pc, b + 16);
		padded = (caplen + 3) & ~3u;
		/* A packet ending flush with its block has no options, and no room for pad. */
		if (padded < blen - EPB_FIXED &&
				options(pc, b + EPB_FIXED + padded, blen - EPB_FIXED - padded,
					epb_opt, &flags) != 0)
			return -EINVAL;
		rec->flags = flags;
		return 0;
	case BT_SPB:
		/* No captured length: the block's, bounded by the interface's snap length. */
		if (blen < SPB_FIXED)
			return damaged(pc, "simple packet block shorter than its fixed field");
		if (pc->nb_ifaces == 0)
			return damaged(pc, "simple packet block before any interface");
		rec->origlen = get32(pc, b);
		caplen = rec->origlen;
		if (pc->iface[0].snaplen != 0 && caplen > pc->iface[0].snaplen)
			caplen = pc->iface[0].snaplen;
		if (caplen > blen - SPB_FIXED)
			caplen = blen - SPB_FIXED;
		if (record_fill(pc, rec, block_off, SPB_FIXED, blen, 0, caplen) != 0)
			return -EINVAL;
		rec->ts_ns = 0;
		return 0;
	}
	return damaged(pc, "not a packet block");
}

int
pcapng_open(struct roce_pcap *pc)
{
	uint32_t type, blen;
	int ret;

	pc->ng = 1;
	pc->buf = malloc(ROCE_PCAPNG_BLOCK_MAX);
	if (pc->buf == NULL) {
		roce_pcap_close(pc);
		return -ENOMEM;
	}
	/* The four bytes of the type were read to tell the formats apart: start again. */
	if (fseek(pc->f, 0, SEEK_SET) != 0) {
		ret = damaged(pc, "cannot seek to the start");
		goto fail;
	}
	ret = block_read(pc, &type, &blen, want_shb);
	if (ret == 0)
		ret = damaged(pc, "the file ends inside a section header");
	if (ret < 0)
		goto fail;
	ret = section_start(pc, blen);
	if (ret < 0)
		goto fail;
	pc->off = BLOCK_MIN + (uint64_t)blen;
	return 0;
fail:
	/* pc->error stays readable after the file is closed. */
	roce_pcap_close(pc);
	return ret;
}

int
pcapng_next(struct roce_pcap *pc, struct roce_pcap_rec *rec)
{
	for (;;) {
		uint64_t start = pc->off;
		uint32_t type, blen;
		int ret = block_read(pc, &type, &blen, want_block);

		if (ret <= 0)
			return ret;
		pc->off = start + BLOCK_MIN + blen;
		switch (type) {
		case PCAPNG_SHB_TYPE:
			ret = section_start(pc, blen);
			break;
		case BT_IDB:
			ret = iface_add(pc, blen);
			break;
		case BT_EPB:
		case BT_SPB:
		case BT_OPB:
			ret = packet(pc, rec, type, blen, start);
			if (ret == 0) {
				pc->records++;
				return 1;
			}
			break;
		default:
			pc->skipped++;
			ret = 0;
		}
		if (ret < 0) {
			pc->off = start;
			return ret;
		}
	}
}
