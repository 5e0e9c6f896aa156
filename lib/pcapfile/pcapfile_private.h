/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PCAPFILE_PRIVATE_H
#define PCAPFILE_PRIVATE_H

#include "roce_pcapfile.h"

/* The Section Header Block's type reads the same in both byte orders. */
#define PCAPNG_SHB_TYPE 0x0A0D0D0Au

/* pcapng.c: the rest of a file whose first four bytes were PCAPNG_SHB_TYPE. */
int pcapng_open(struct roce_pcap *pc);
int pcapng_next(struct roce_pcap *pc, struct roce_pcap_rec *rec);

#endif /* PCAPFILE_PRIVATE_H */
