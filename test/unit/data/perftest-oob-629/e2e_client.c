/* e2e HOST TEST CAPS: our lib/perf driver as a perftest client against a real perftest server */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "roce_perf_oob.h"

static int
traffic(void *arg, struct roce_perf_report *rep)
{
	(void)arg;
	rep->size = 4096;
	rep->iters = 20;
	rep->bw_peak = 1.5;
	rep->bw_avg = 1.25;
	rep->msg_rate = 0.000321;
	return 0;
}

int
main(int argc __attribute__((unused)), char **argv)
{
	struct roce_perf_key key = { .out_reads = 1, .qpn = 0x77, .psn = 0x123456, .rkey = 0x4242,
		.vaddr = 0x7f0000001000ull,
		.gid = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 99, 0, 254 } };
	struct roce_perf_oob_cfg cfg = {
		.role = ROCE_PERF_CLIENT, .nqps = 1, .timeout_ms = 20000, .traffic_timeout_ms = -1,
		.local = { .page_size = 4096, .cache_line = 64, .mtu = 3 },
		.keys = &key, .hooks = { .traffic = traffic },
	};
	struct roce_perf_oob_result res;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(18515) };
	int fd, ret;

	cfg.test = (enum roce_perf_test)atoi(argv[2]);
	cfg.local.caps = (uint32_t)strtoul(argv[3], NULL, 0);
	if (cfg.test == ROCE_PERF_READ_BW || cfg.test == ROCE_PERF_ATOMIC_BW)
		key.out_reads = 128;
	inet_pton(AF_INET, argv[1], &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("connect");
		return 2;
	}
	ret = roce_perf_oob_run(fd, &cfg, &res);
	close(fd);
	printf("e2e %s: ret %d peer version %u caps 0x%x agreed caps 0x%x mtu %u peer qpn 0x%x\n",
		roce_perf_test_name(cfg.test), ret, res.peer.version, res.peer.caps, res.agreed.caps,
		res.agreed.mtu, res.peer_keys[0].qpn);
	return ret != 0;
}
