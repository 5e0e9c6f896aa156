/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCED_TELEMETRY_H
#define ROCED_TELEMETRY_H

#include "roce_dataplane.h"

/* Register /roce/info, /roce/counters and /roce/worker with DPDK telemetry. */
void roced_telemetry_init(struct roce_dp *dp);

/* Stop answering: the dataplane is about to go. */
void roced_telemetry_fini(void);

#endif /* ROCED_TELEMETRY_H */
