/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * memif (DPDK 22.11) unmaps the shared memory of a peer that went away on the EAL interrupt
 * thread, while a worker may be copying to or from it inside rx/tx burst: the survivor died in
 * the PMD once in a dozen peer stops. The PMD marks itself disconnected before it unmaps, and a
 * burst that starts after that returns at once; so roced defines munmap() (exported to the
 * PMDs, see meson.build), and an unmap from the interrupt thread first waits until every worker
 * passed a quiescent point, i.e. left the bursts that began before.
 */
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_interrupts.h>
#include <rte_pause.h>

#include "roced.h"

static struct roce_dp *quiesce_dp;
static unsigned int quiesce_busy;

void
roced_quiesce_attach(struct roce_dp *dp)
{
	__atomic_store_n(&quiesce_dp, dp, __ATOMIC_RELEASE);
}

void
roced_quiesce_detach(void)
{
	__atomic_store_n(&quiesce_dp, NULL, __ATOMIC_SEQ_CST);
	/* An unmap that saw the dataplane finishes with it before it is freed. */
	while (__atomic_load_n(&quiesce_busy, __ATOMIC_SEQ_CST) != 0)
		rte_pause();
}

int
munmap(void *addr, size_t len)
{
	struct roce_dp *dp;

	if (rte_thread_is_intr()) {
		__atomic_fetch_add(&quiesce_busy, 1, __ATOMIC_SEQ_CST);
		dp = __atomic_load_n(&quiesce_dp, __ATOMIC_SEQ_CST);
		roce_dp_quiesce(dp);
		__atomic_fetch_sub(&quiesce_busy, 1, __ATOMIC_SEQ_CST);
	}
	return (int)syscall(SYS_munmap, addr, len);
}
