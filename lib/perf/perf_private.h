/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PERF_PRIVATE_H
#define PERF_PRIVATE_H

#include <stdio.h>

/* The OOB code runs before and outside the EAL, so it logs to stderr. */
#define ROCE_PERF_LOG(fmt, ...) fprintf(stderr, "roce_perf: " fmt "\n", ##__VA_ARGS__)

#endif /* PERF_PRIVATE_H */
