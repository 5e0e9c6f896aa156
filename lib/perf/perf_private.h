/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_PRIVATE_H
#define PERF_PRIVATE_H

#include <stddef.h>
#include <stdio.h>

/* The OOB code runs before and outside the EAL, so it logs to stderr. */
#define ROCE_PERF_LOG(fmt, ...) fprintf(stderr, "roce_perf: " fmt "\n", ##__VA_ARGS__)

/* Classify a key message that roce_perf_oob_key_decode() refused: -EPROTONOSUPPORT (logged)
 * for a perftest variant we do not implement, else -EPROTO. */
int
roce_perf_key_diagnose(const void *buf, size_t len);

#endif /* PERF_PRIVATE_H */
