/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet capture (doc/control-protocol.md: capture.start, capture.stop, capture.show): the
 * dataplane's pcapng capture (roce_dp_capture.h) to a file the daemon opens for the client,
 * and rte_pdump for dpdk-dumpcap. The file name comes from a client: it must be absolute, and
 * the daemon writes only a regular file (created, or truncated), never through a symbolic
 * link at its last component, never into a FIFO or a device.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_pdump.h>

#include "roce_dp_capture.h"
#include "roced_cmd.h"

static const char *const dir_names[] = { "rx", "tx", "both" };

static const char *const cnt_names[ROCE_CAPTURE_CNT_NUM] = {
	"seen", "copied", "drop_ring", "drop_nombuf", "tx_reoffer", "written", "past_count",
	"write_err",
};

static int
mp_probe(const struct rte_mp_msg *msg, const void *peer)
{
	RTE_SET_USED(msg);
	RTE_SET_USED(peer);
	return 0;
}

int
roced_pdump_init(void)
{
	int ret = rte_pdump_init();

	if (ret != 0) {
		ROCED_LOG(WARNING, "dpdk-dumpcap cannot attach: rte_pdump_init: %s\n",
				rte_strerror(rte_errno));
		return ret;
	}
	/* rte_pdump_init() takes multi-process being off (--in-memory, --no-shconf) quietly. */
	if (rte_mp_action_register("roced_mp_probe", mp_probe) != 0) {
		if (rte_errno == ENOTSUP)
			ROCED_LOG(WARNING, "dpdk-dumpcap cannot attach: multi-process is off "
					"(--in-memory or --no-shconf); rocectl capture works\n");
		return -rte_errno;
	}
	rte_mp_action_unregister("roced_mp_probe");
	return 0;
}

/* {file, state, error, ports, dir, snaplen, count, start_ns, duration_s, bytes, ...}. */
static json_t *
info_json(const struct roced_state *st, const struct roce_capture_info *in)
{
	const struct roce_capture_conf *c = &in->conf;
	uint64_t end = in->end_ns;
	json_t *ports = json_array(), *cnt = json_object(), *o;
	unsigned int p, i;
	struct timespec now;

	for (p = 0; p < ROCE_DP_MAX_PORTS; p++)
		if (c->ports & (1u << p))
			json_array_append_new(ports, json_integer(p));
	for (i = 0; i < ROCE_CAPTURE_CNT_NUM; i++)
		json_object_set_new(cnt, cnt_names[i], roce_ctl_u64(in->cnt[i]));
	if (end == 0) {
		clock_gettime(CLOCK_REALTIME, &now);
		end = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	}
	o = json_pack("{s:s, s:s, s:o, s:s, s:I, s:o, s:o, s:f, s:o, s:i, s:i, s:i, s:o}",
			"file", st->capture_file, "state", roce_capture_end_name(in->end),
			"ports", ports,
			"dir", dir_names[c->dirs == (ROCE_CAPTURE_RX | ROCE_CAPTURE_TX) ? 2 :
				c->dirs == ROCE_CAPTURE_TX],
			"snaplen", (json_int_t)c->snaplen, "count", roce_ctl_u64(c->count),
			"start_ns", roce_ctl_u64(in->start_ns),
			"duration_s", end > in->start_ns ? (double)(end - in->start_ns) / 1e9 : 0.0,
			"bytes", roce_ctl_u64(in->bytes), "rings", (int)in->nb_rings,
			"ring_size", (int)in->ring_size, "pool", (int)in->pool_size,
			"counters", cnt);
	if (in->end == ROCE_CAPTURE_WRITE_ERROR)
		json_object_set_new(o, "error", json_string(strerror(in->error)));
	return o;
}

/* An errno the protocol names (doc/control-protocol.md), the message keeping the exact one. */
static int
listed(int err)
{
	return strcmp(roce_ctl_errno_name(err), "EUNKNOWN") != 0 ? err : EIO;
}

/*
 * Open the capture file for writing: absolute, a regular file (made 0644 if new), never
 * through a symbolic link at its end; truncated only once all that is known.
 */
static int
file_open(json_t *reply, const char *path)
{
	struct stat stb;
	int fd, err;

	if (path[0] != '/')
		return roce_ctl_error(reply, -EINVAL, "file: \"%s\" is not an absolute path "
				"(rocectl makes it one)", path);
	/* Told apart first for the message; the open below checks again, race or not. */
	if (lstat(path, &stb) == 0 && S_ISLNK(stb.st_mode))
		return roce_ctl_error(reply, -EINVAL, "cannot write %s: it is a symbolic link",
				path);
	if (lstat(path, &stb) == 0 && !S_ISREG(stb.st_mode))
		return roce_ctl_error(reply, -EINVAL, "cannot write %s: not a regular file", path);
	/* O_NONBLOCK: opening a FIFO must not hang the control thread (ENXIO instead). */
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = errno;
		if (err == ELOOP || err == ENXIO || err == EISDIR)
			return roce_ctl_error(reply, -EINVAL, "cannot write %s: not a regular file",
					path);
		return roce_ctl_error(reply, -listed(err), "cannot open %s: %s", path,
				strerror(err));
	}
	if (fstat(fd, &stb) != 0 || !S_ISREG(stb.st_mode)) {
		close(fd);
		return roce_ctl_error(reply, -EINVAL, "cannot write %s: not a regular file", path);
	}
	if (fcntl(fd, F_SETFL, 0) != 0 || ftruncate(fd, 0) != 0) {
		err = errno;
		close(fd);
		return roce_ctl_error(reply, -listed(err), "cannot write %s: %s", path,
				strerror(err));
	}
	return fd;
}

int
roced_cmd_capture_start(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_capture_conf c = { .fd = -1 };
	struct roce_capture_info info;
	unsigned int dir = 2;
	uint32_t port = 0;
	const char *path;
	int hp, ret, fd;

	if ((ret = roce_ctl_arg_str(req, reply, "file", &path, true, PATH_MAX - 1)) < 0 ||
			(hp = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = roce_ctl_arg_enum(req, reply, "dir", dir_names, RTE_DIM(dir_names),
				&dir, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "snaplen", &c.snaplen, false, 1,
				ROCE_CAPTURE_SNAPLEN_MAX)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "count", &c.count, false, 0,
				UINT64_MAX)) < 0)
		return -EINVAL;
	if (strlen(path) != json_string_length(json_object_get(req, "file")) || path[0] == '\0')
		return roce_ctl_error(reply, -EINVAL, "file: an empty name, or one with a NUL");
	/* Busy before the file is touched: a running capture's file must not be truncated. */
	if (roce_dp_capture_info(st->dp, &info) == 0 && info.end == ROCE_CAPTURE_RUNNING)
		return roce_ctl_error(reply, -EBUSY, "a capture to %s is running: stop it first",
				st->capture_file);
	c.ports = hp ? 1u << port : (1u << st->conf.nb_ports) - 1;
	c.dirs = dir == 2 ? ROCE_CAPTURE_RX | ROCE_CAPTURE_TX : 1u << dir;
	fd = file_open(reply, path);
	if (fd < 0)
		return fd;
	c.fd = fd;
	ret = roce_dp_capture_start(st->dp, &c);
	close(fd);
	if (ret == -ENOMEM)
		return roce_ctl_error(reply, ret, "no memory for the capture's buffers (a smaller "
				"snaplen needs less)");
	if (ret != 0)
		return roce_ctl_error(reply, -listed(-ret), "capture to %s: %s", path,
				strerror(-ret));
	snprintf(st->capture_file, sizeof(st->capture_file), "%s", path);
	if (roce_dp_capture_info(st->dp, &info) == 0)
		json_object_set_new(reply, "capture", info_json(st, &info));
	return 0;
}

int
roced_cmd_capture_stop(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_capture_info info;

	RTE_SET_USED(req);
	if (roce_dp_capture_stop(st->dp, &info) != 0)
		return roce_ctl_error(reply, -ENOENT, "no capture to stop");
	json_object_set_new(reply, "capture", info_json(st, &info));
	return 0;
}

int
roced_cmd_capture_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_capture_info info;

	RTE_SET_USED(req);
	if (roce_dp_capture_info(st->dp, &info) != 0)
		return roce_ctl_error(reply, -ENOENT, "no capture has run");
	json_object_set_new(reply, "capture", info_json(st, &info));
	return 0;
}
