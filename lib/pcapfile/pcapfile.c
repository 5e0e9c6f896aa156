/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "pcapfile_private.h"

#define MAGIC_USEC 0xA1B2C3D4u
#define MAGIC_NSEC 0xA1B23C4Du
#define LINKTYPE_ETHERNET ROCE_PCAP_LINKTYPE_ETHERNET

struct file_hdr {
	uint32_t magic;
	uint16_t major;
	uint16_t minor;
	int32_t thiszone;
	uint32_t sigfigs;
	uint32_t snaplen;
	uint32_t linktype;
};

struct rec_hdr {
	uint32_t sec;
	uint32_t frac;
	uint32_t caplen;
	uint32_t origlen;
};

static uint32_t
host32(const struct roce_pcap *pc, uint32_t v)
{
	return pc->swapped ? rte_bswap32(v) : v;
}

int
roce_pcap_open(struct roce_pcap *pc, const char *path)
{
	struct file_hdr h;

	memset(pc, 0, sizeof(*pc));
	pc->f = fopen(path, "rb");
	if (pc->f == NULL)
		return -errno;
	if (fread(&h, sizeof(h.magic), 1, pc->f) != 1)
		goto bad;
	if (h.magic == PCAPNG_SHB_TYPE)
		return pcapng_open(pc);
	if (fread((uint8_t *)&h + sizeof(h.magic), sizeof(h) - sizeof(h.magic), 1, pc->f) != 1)
		goto bad;
	pc->off = sizeof(h);
	switch (h.magic) {
	case MAGIC_USEC:
		break;
	case MAGIC_NSEC:
		pc->nsec = 1;
		break;
	default:
		pc->swapped = 1;
		if (rte_bswap32(h.magic) == MAGIC_NSEC)
			pc->nsec = 1;
		else if (rte_bswap32(h.magic) != MAGIC_USEC)
			goto bad;
	}
	pc->linktype = host32(pc, h.linktype);
	if (pc->linktype != LINKTYPE_ETHERNET) {
		fclose(pc->f);
		pc->f = NULL;
		return -EPROTONOSUPPORT;
	}
	return 0;
bad:
	fclose(pc->f);
	pc->f = NULL;
	return -EINVAL;
}

int
roce_pcap_create(struct roce_pcap *pc, const char *path)
{
	struct file_hdr h = {
		.magic = MAGIC_USEC, .major = 2, .minor = 4,
		.snaplen = ROCE_PCAP_SNAP_MAX, .linktype = LINKTYPE_ETHERNET,
	};

	memset(pc, 0, sizeof(*pc));
	pc->f = fopen(path, "wb");
	if (pc->f == NULL)
		return -errno;
	pc->writing = 1;
	pc->linktype = LINKTYPE_ETHERNET;
	if (fwrite(&h, sizeof(h), 1, pc->f) != 1) {
		fclose(pc->f);
		pc->f = NULL;
		return -EIO;
	}
	return 0;
}

int
roce_pcap_next(struct roce_pcap *pc, struct roce_pcap_rec *rec)
{
	struct rec_hdr h;
	size_t n;

	if (pc->ng)
		return pcapng_next(pc, rec);
	n = fread(&h, 1, sizeof(h), pc->f);
	if (n == 0 && feof(pc->f))
		return 0;
	if (n != sizeof(h))
		return -EINVAL;
	rec->caplen = host32(pc, h.caplen);
	rec->origlen = host32(pc, h.origlen);
	if (rec->caplen > ROCE_PCAP_SNAP_MAX)
		return -EINVAL;
	if (rec->caplen != 0 && fread(rec->data, rec->caplen, 1, pc->f) != 1)
		return -EINVAL;
	rec->ts_ns = (uint64_t)host32(pc, h.sec) * 1000000000u +
		(uint64_t)host32(pc, h.frac) * (pc->nsec ? 1 : 1000);
	rec->iface = 0;
	rec->flags = 0;
	rec->linktype = (uint16_t)pc->linktype;
	rec->off = pc->off + sizeof(h);
	pc->off += sizeof(h) + rec->caplen;
	pc->records++;
	return 1;
}

int
roce_pcap_write(struct roce_pcap *pc, const void *data, uint32_t len, uint64_t ts_ns)
{
	struct rec_hdr h = {
		.sec = (uint32_t)(ts_ns / 1000000000u),
		.frac = (uint32_t)(ts_ns % 1000000000u / 1000),
		.caplen = len,
		.origlen = len,
	};

	if (len > ROCE_PCAP_SNAP_MAX)
		return -EINVAL;
	if (fwrite(&h, sizeof(h), 1, pc->f) != 1 || (len != 0 && fwrite(data, len, 1, pc->f) != 1))
		return -EIO;
	pc->records++;
	return 0;
}

int
roce_pcap_close(struct roce_pcap *pc)
{
	int ret = 0;

	if (pc->f != NULL && fclose(pc->f) != 0 && pc->writing)
		ret = -EIO;
	pc->f = NULL;
	free(pc->buf);
	pc->buf = NULL;
	return ret;
}
