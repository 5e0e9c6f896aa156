/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CNPs (IBA annex A17.9.3): BTH opcode 0x81 with BECN set, 16 reserved bytes, ICRC; built by
 * lib/wire from the QP's path with the NP's DSCP and priority.
 */

#include <errno.h>

#include "roce_pkt.h"

#include "cc_private.h"

int
roce_cc_cnp_path(const struct roce_cc_params *p, const struct roce_path *qp_path,
		struct roce_path *cnp_path)
{
	*cnp_path = *qp_path;
	cnp_path->dscp = (uint8_t)p->v[ROCE_CC_NP_CNP_DSCP];
	/* A CNP is not itself subject to congestion control: it goes Not-ECT. */
	cnp_path->ecn = ROCE_ECN_NOT_ECT;
	if (cnp_path->vlan)
		cnp_path->vlan_tci = (uint16_t)((cnp_path->vlan_tci & 0x1FFF) |
				(p->v[ROCE_CC_NP_CNP_PRIO] << 13));
	return roce_path_init(cnp_path);
}

int
roce_cc_cnp_build(struct rte_mbuf *m, const struct roce_path *cnp_path, uint32_t dest_qpn)
{
	const struct roce_pkt_desc d = {
		.opcode = ROCE_OPCODE_CNP,
		.becn = 1,
		.dest_qpn = dest_qpn,
		.psn = 0,
	};

	return roce_build_pkt(m, cnp_path, &d, NULL, 0);
}
