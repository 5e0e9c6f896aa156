/* SPDX-License-Identifier: BSD-3-Clause */
/* The services of the worker loop (dp_private.h struct dp_service), in one table. */
#include <string.h>

#include "dp_private.h"

const struct dp_service *const dp_services[] = {
	&dp_gen_service,
	&dp_cc_service,
	&dp_gsi_service,
};

const unsigned int dp_nb_services = RTE_DIM(dp_services);

int
dp_services_init(struct roce_worker *w)
{
	unsigned int i;
	int ret;

	for (i = 0; i < dp_nb_services; i++) {
		ret = dp_services[i]->init != NULL ? dp_services[i]->init(w) : 0;
		if (ret != 0) {
			ROCE_LOG(ERR, "worker %u: %s: %s\n", w->idx, dp_services[i]->name,
					strerror(-ret));
			return ret;
		}
	}
	return 0;
}

/* Also after a failed init: each fini copes with what its init did not make. */
void
dp_services_fini(struct roce_worker *w)
{
	unsigned int i;

	for (i = 0; i < dp_nb_services; i++)
		if (dp_services[i]->fini != NULL)
			dp_services[i]->fini(w);
}

unsigned int
dp_services_poll(struct roce_worker *w, uint64_t now)
{
	unsigned int i, work = 0;

	for (i = 0; i < dp_nb_services; i++)
		if (dp_services[i]->poll != NULL)
			work += dp_services[i]->poll(w, now);
	return work;
}

void
dp_services_mr_revoke(struct roce_worker *w, uint32_t lkey)
{
	unsigned int i;

	for (i = 0; i < dp_nb_services; i++)
		if (dp_services[i]->mr_revoke != NULL)
			dp_services[i]->mr_revoke(w, lkey);
}

void
dp_services_qp_gone(struct roce_worker *w, uint32_t qpn)
{
	unsigned int i;

	for (i = 0; i < dp_nb_services; i++)
		if (dp_services[i]->qp_gone != NULL)
			dp_services[i]->qp_gone(w, qpn);
}

void
dp_services_ah_revoke(struct roce_worker *w, const struct roce_ah *ah)
{
	unsigned int i;

	for (i = 0; i < dp_nb_services; i++)
		if (dp_services[i]->ah_revoke != NULL)
			dp_services[i]->ah_revoke(w, ah);
}
