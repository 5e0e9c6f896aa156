/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCECTL_PERF_CTL_H
#define ROCECTL_PERF_CTL_H

/*
 * rocectl perf's backend (perf_ctl.c): the perftest session's daemon side as requests to roced
 * over the control socket. Its context is the connected struct roce_ctl_client.
 */

#include "roce_perf_session.h"

extern const struct roce_perf_backend_ops rc_perf_ctl_ops;

#endif /* ROCECTL_PERF_CTL_H */
