/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCECTL_PERF_CTL_H
#define ROCECTL_PERF_CTL_H

/*
 * rocectl perf's backend (perf_ctl.c): the perftest session's daemon side as requests to roced
 * over the control socket. Its context is the connected struct roce_ctl_client.
 */

#include <jansson.h>

#include "roce_ctl.h"
#include "roce_perf_session.h"

extern const struct roce_perf_backend_ops rc_perf_ctl_ops;

/*
 * rocectl perf --cc: the daemon's congestion control around a run. Save what cc.show says
 * (NULL on failure, said), set a profile with cc.set, put the saved settings back. The two
 * setters return 0 or -errno, and print why they failed.
 */
json_t *rc_perf_cc_save(struct roce_ctl_client *ctl);
int rc_perf_cc_set(struct roce_ctl_client *ctl, const char *profile);
int rc_perf_cc_restore(struct roce_ctl_client *ctl, json_t *saved);

#endif /* ROCECTL_PERF_CTL_H */
