/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocectl perf's backend: each operation of the perftest session is a request to roced
 * (doc/control-protocol.md). Every failure is printed here, with the request's name and the
 * daemon's message. The MR and QPs go in the connection's own PD, so roced frees them if
 * rocectl dies without tearing down.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "perf_ctl.h"
#include "rocectl.h"

#define PERF_REQ_MS 10000

/* One control request; prints the daemon's error. @return 0 or -errno. */
static int
perf_req(void *ctx, const char *cmd, json_t *args, json_t **reply)
{
	const char *code, *msg;
	json_t *r = NULL;
	int ret;

	ret = roce_ctl_client_request(ctx, cmd, args, &r, PERF_REQ_MS);
	json_decref(args);
	if (ret != 0) {
		fprintf(stderr, "rocectl perf: %s: %s\n", cmd, strerror(-ret));
		return ret;
	}
	ret = roce_ctl_reply_status(r, &code, &msg);
	if (ret != 0) {
		fprintf(stderr, "rocectl perf: %s: %s\n", cmd, msg != NULL ? msg : "failed");
		json_decref(r);
		return ret;
	}
	if (reply != NULL)
		*reply = r;
	else
		json_decref(r);
	return 0;
}

static uint64_t
ju64(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 0);
	return 0;
}

static double
jreal(const json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* ---- the daemon ---- */

/* status.limits members and where they go; absent ones keep the session's default. */
static const struct {
	const char *name;
	size_t off;
	size_t size;
} limit_fields[] = {
#define LIMIT(n, m) { n, offsetof(struct roce_perf_daemon, m), \
		sizeof(((struct roce_perf_daemon *)0)->m) }
	LIMIT("max_qps", max_qps),
	LIMIT("max_qp_depth", max_qp_depth),
	LIMIT("max_mr_size", max_mr_size),
	LIMIT("max_rd_atomic", max_rd_atomic),
	LIMIT("max_inflight", max_inflight),
	LIMIT("mr_dump_max", mr_read_max),
#undef LIMIT
};

static void
set_field(void *base, size_t off, size_t size, uint64_t v)
{
	if (size == sizeof(uint64_t)) {
		memcpy((char *)base + off, &v, sizeof(v));
	} else {
		unsigned int u = v > UINT32_MAX ? UINT32_MAX : (unsigned int)v;

		memcpy((char *)base + off, &u, sizeof(u));
	}
}

static int
ctl_status(void *ctx, struct roce_perf_daemon *d)
{
	const json_t *lim;
	json_t *r;
	unsigned int i;
	int ret = perf_req(ctx, "status", json_object(), &r);

	if (ret != 0)
		return ret;
	d->heap_bytes = ju64(r, "heap_bytes");
	d->ports = (unsigned int)ju64(r, "ports");
	lim = json_object_get(r, "limits");
	for (i = 0; i < sizeof(limit_fields) / sizeof(limit_fields[0]); i++)
		if (ju64(lim, limit_fields[i].name) != 0)
			set_field(d, limit_fields[i].off, limit_fields[i].size,
					ju64(lim, limit_fields[i].name));
	json_decref(r);
	return 0;
}

static int
ctl_port_info(void *ctx, unsigned int port, struct roce_perf_port *info)
{
	const json_t *p;
	const char *ip, *dev;
	json_t *r;
	int ret = perf_req(ctx, "port.show", json_pack("{s:i}", "port", port), &r);

	if (ret != 0)
		return ret;
	p = json_array_get(json_object_get(r, "ports"), 0);
	ip = json_string_value(json_object_get(p, "ip"));
	dev = json_string_value(json_object_get(p, "device"));
	snprintf(info->device, sizeof(info->device), "%s", dev != NULL ? dev : "");
	snprintf(info->ip, sizeof(info->ip), "%s", ip != NULL ? ip : "");
	info->prefix = (unsigned int)ju64(p, "prefix");
	/* The MTU roced was configured with: some PMDs (memif) report a default they ignore. */
	info->ip_mtu = (unsigned int)ju64(p, "ip_mtu");
	json_decref(r);
	return 0;
}

/* ---- MRs ---- */

static const char *const access_names[] = { "local_write", "remote_write", "remote_read",
	"remote_atomic" };

static json_t *
access_list(unsigned int access)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++)
		if (access & (1u << i))
			json_array_append_new(a, json_string(access_names[i]));
	return a;
}

static int
ctl_mr_create(void *ctx, uint64_t size, unsigned int access, struct roce_perf_mr *mr)
{
	json_t *r;
	int ret = perf_req(ctx, "mr.reg", json_pack("{s:o, s:o}", "size",
			json_integer((json_int_t)size), "access", access_list(access)), &r);

	if (ret != 0)
		return ret;
	mr->iova = ju64(json_object_get(r, "mr"), "iova");
	mr->key = (uint32_t)ju64(json_object_get(r, "mr"), "rkey");
	json_decref(r);
	return 0;
}

static int
ctl_mr_destroy(void *ctx, uint32_t key)
{
	return perf_req(ctx, "mr.dereg", json_pack("{s:o}", "rkey", json_integer(key)), NULL);
}

static int
ctl_mr_fill(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t seed)
{
	char pat[32];

	snprintf(pat, sizeof(pat), "random:%u", seed);
	return perf_req(ctx, "mr.fill", json_pack("{s:o, s:s, s:o, s:o}", "rkey",
			json_integer(key), "pattern", pat, "offset", json_integer((json_int_t)off),
			"length", json_integer((json_int_t)len)), NULL);
}

static int
ctl_mr_digest(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint32_t *crc)
{
	const char *hex;
	json_t *r;
	int ret = perf_req(ctx, "mr.digest", json_pack("{s:o, s:o, s:o}", "rkey",
			json_integer(key), "offset", json_integer((json_int_t)off), "length",
			json_integer((json_int_t)len)), &r);

	if (ret != 0)
		return ret;
	hex = json_string_value(json_object_get(r, "crc32"));
	if (hex == NULL) {
		fprintf(stderr, "rocectl perf: mr.digest: no crc32 in the reply\n");
		ret = -EPROTO;
	} else {
		*crc = (uint32_t)strtoul(hex, NULL, 16);
	}
	json_decref(r);
	return ret;
}

static int
hex_nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 0;
}

static int
ctl_mr_read(void *ctx, uint32_t key, uint64_t off, uint64_t len, uint8_t *buf, uint64_t *got)
{
	const char *hex;
	uint64_t i, n;
	json_t *r;
	int ret = perf_req(ctx, "mr.dump", json_pack("{s:o, s:o, s:o}", "rkey",
			json_integer(key), "offset", json_integer((json_int_t)off), "length",
			json_integer((json_int_t)len)), &r);

	if (ret != 0)
		return ret;
	hex = json_string_value(json_object_get(r, "hex"));
	n = hex != NULL ? strlen(hex) / 2 : 0;
	n = n < len ? n : len;
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(hex_nibble(hex[2 * i]) << 4 | hex_nibble(hex[2 * i + 1]));
	*got = n;
	json_decref(r);
	return 0;
}

/* ---- QPs ---- */

static int
ctl_qp_create(void *ctx, const struct roce_perf_qp_conf *conf, uint32_t *qpn, uint32_t *psn)
{
	const json_t *q;
	json_t *a = json_pack("{s:i, s:i, s:i}", "port", conf->port, "sq_depth", conf->sq_depth,
			"rq_depth", conf->rq_depth), *r;
	int ret;

	/* a UD QP grants no remote rights: it takes a Q_Key (and a path MTU) instead */
	if (conf->ud) {
		json_object_set_new(a, "type", json_string("ud"));
		json_object_set_new(a, "qkey", json_integer(conf->qkey));
		if (conf->mtu != 0)
			json_object_set_new(a, "mtu", json_integer(conf->mtu));
	} else {
		json_object_set_new(a, "access", access_list(conf->access));
	}
	ret = perf_req(ctx, "qp.create", a, &r);
	if (ret != 0)
		return ret;
	q = json_object_get(r, "qp");
	*qpn = (uint32_t)ju64(q, "qpn");
	*psn = (uint32_t)ju64(q, "psn");
	json_decref(r);
	return 0;
}

static int
ctl_qp_connect(void *ctx, const struct roce_perf_qp_connect *c)
{
	return perf_req(ctx, "qp.connect", json_pack("{s:i, s:{s:i, s:i, s:s}, s:i, s:i, s:i, "
			"s:i, s:b}", "qpn", c->qpn, "remote", "qpn", c->remote_qpn, "psn",
			c->remote_psn, "ip", c->remote_ip, "mtu", c->mtu, "max_rd_atomic",
			c->max_rd_atomic, "sr_rto_us", c->sr_rto_us, "max_inflight",
			c->max_inflight, "sr", c->sr), NULL);
}

static int
ctl_qp_destroy(void *ctx, uint32_t qpn)
{
	return perf_req(ctx, "qp.destroy", json_pack("{s:i}", "qpn", qpn), NULL);
}

/* ---- jobs ---- */

static const char *const job_ops[] = {
	[ROCE_PERF_JOB_WRITE] = "write",
	[ROCE_PERF_JOB_READ] = "read",
	[ROCE_PERF_JOB_SEND] = "send",
	[ROCE_PERF_JOB_FAA] = "faa",
	[ROCE_PERF_JOB_RECV] = "recv",
	[ROCE_PERF_JOB_CAS] = "cas",
};

static int
ctl_job_start(void *ctx, const struct roce_perf_job *j)
{
	json_t *a = json_pack("{s:i, s:s, s:o, s:o, s:o}", "qpn", j->qpn, "op", job_ops[j->op],
			"lkey", json_integer(j->lkey), "offset", json_integer((json_int_t)j->offset),
			"length", json_integer((json_int_t)j->length));

	if (j->duration_ms != 0)
		json_object_set_new(a, "duration_ms", json_integer((json_int_t)j->duration_ms));
	else
		json_object_set_new(a, "count", json_integer((json_int_t)j->count));
	if (j->remote) {
		/* above 2^63 - 1 a "0x" string: JSON integers here are signed 64-bit */
		json_object_set_new(a, "remote_addr", roce_ctl_u64(j->remote_addr));
		json_object_set_new(a, "rkey", json_integer(j->rkey));
	}
	if (j->depth != 0)
		json_object_set_new(a, "depth", json_integer(j->depth));
	if (j->rate_mbps != 0)
		json_object_set_new(a, "rate_mbps", json_integer((json_int_t)j->rate_mbps));
	if (j->post_list > 1)
		json_object_set_new(a, "post_list", json_integer(j->post_list));
	if (j->cq_mod > 1)
		json_object_set_new(a, "cq_mod", json_integer(j->cq_mod));
	if (j->bidi) {
		json_object_set_new(a, "mode", json_string("bidi"));
		json_object_set_new(a, "recv_offset", json_integer((json_int_t)j->recv_offset));
	}
	if (j->lat) {
		json_object_set_new(a, "mode", json_string("lat"));
		json_object_set_new(a, "initiator", json_boolean(j->initiator));
		json_object_set_new(a, "recv_offset", json_integer((json_int_t)j->recv_offset));
	}
	if (j->ah != 0) {
		json_object_set_new(a, "ah", json_integer(j->ah));
		json_object_set_new(a, "remote", json_pack("{s:i, s:o}", "qpn", j->remote_qpn,
				"qkey", json_integer(j->remote_qkey)));
	}
	return perf_req(ctx, "job.start", a, NULL);
}

static int
ctl_job_stop(void *ctx, uint32_t qpn)
{
	return perf_req(ctx, "job.stop", json_pack("{s:i}", "qpn", qpn), NULL);
}

static const char *const rtt_keys[] = { "min", "max", "median", "avg", "stdev", "p99", "p999" };

static void
job_stats(const json_t *j, struct roce_perf_job_stats *st)
{
	const json_t *rtt = json_object_get(j, "rtt_ns");
	const char *first = json_string_value(json_object_get(j, "first_error"));
	double *v[] = { &st->rtt.min, &st->rtt.max, &st->rtt.median, &st->rtt.avg,
		&st->rtt.stdev, &st->rtt.p99, &st->rtt.p999 };
	unsigned int i;

	/* job.show says whether its job runs, job.total how many do */
	st->running = json_is_true(json_object_get(j, "running")) ? 1 : ju64(j, "running");
	st->bytes = ju64(j, "bytes");
	st->completed = ju64(j, "completed");
	st->errors = ju64(j, "errors");
	st->peak_gbps = jreal(j, "peak_gbps");
	st->seconds = jreal(j, "seconds");
	snprintf(st->first_error, sizeof(st->first_error), "%s", first != NULL ? first : "");
	st->rtt.samples = ju64(rtt, "samples");
	for (i = 0; i < sizeof(rtt_keys) / sizeof(rtt_keys[0]); i++)
		*v[i] = jreal(rtt, rtt_keys[i]);
}

static int
ctl_job_show(void *ctx, uint32_t qpn, struct roce_perf_job_stats *st)
{
	json_t *r;
	int ret = perf_req(ctx, "job.show", json_pack("{s:i}", "qpn", qpn), &r);

	if (ret == 0) {
		job_stats(json_object_get(r, "job"), st);
		json_decref(r);
	}
	return ret;
}

static int
ctl_job_total(void *ctx, struct roce_perf_job_stats *st)
{
	json_t *r;
	int ret = perf_req(ctx, "job.total", json_pack("{s:b}", "owned", 1), &r);

	if (ret == 0) {
		job_stats(json_object_get(r, "total"), st);
		json_decref(r);
	}
	return ret;
}

/* ---- address handles (-c UD) ---- */

static int
ctl_ah_create(void *ctx, unsigned int port, const char *ip, uint32_t *ah)
{
	json_t *r;
	/* perftest's UD address handles: hop limit 0xFF, traffic class 0 */
	int ret = perf_req(ctx, "ah.create", json_pack("{s:i, s:s, s:i}", "port", port, "ip", ip,
			"hop_limit", 255), &r);

	if (ret != 0)
		return ret;
	*ah = (uint32_t)ju64(json_object_get(r, "ah"), "ah");
	json_decref(r);
	return *ah != 0 ? 0 : -EPROTO;
}

static int
ctl_ah_destroy(void *ctx, uint32_t ah)
{
	return perf_req(ctx, "ah.destroy", json_pack("{s:i}", "ah", ah), NULL);
}

/* ---- -R: the connection manager and the side channel's QP ---- */

static int
ctl_cm_listen(void *ctx, unsigned int tcp_port, unsigned int backlog)
{
	return perf_req(ctx, "cm.listen", json_pack("{s:i, s:i, s:s, s:b}", "port", tcp_port,
			"backlog", backlog, "accept", "manual", "owned", 1), NULL);
}

static int
ctl_cm_unlisten(void *ctx, unsigned int tcp_port)
{
	return perf_req(ctx, "cm.unlisten", json_pack("{s:i}", "port", tcp_port), NULL);
}

static int
ctl_cm_connect(void *ctx, const struct roce_perf_cm_connect *c, uint32_t *conn)
{
	json_t *a = json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i}", "qpn", c->qpn, "ip", c->ip,
			"port", c->tcp_port, "retry_count", c->retry_count, "rnr_retry_count",
			c->rnr_retry_count, "responder_resources", c->rd_atomic, "initiator_depth",
			c->rd_atomic), *r;
	int ret;

	if (c->mtu != 0)
		json_object_set_new(a, "mtu", json_integer(c->mtu));
	if ((ret = perf_req(ctx, "cm.connect", a, &r)) != 0)
		return ret;
	*conn = (uint32_t)ju64(json_object_get(r, "conn"), "conn");
	json_decref(r);
	return *conn != 0 ? 0 : -EPROTO;
}

static int
ctl_cm_accept(void *ctx, uint32_t conn, uint32_t qpn, unsigned int rd_atomic)
{
	return perf_req(ctx, "cm.accept", json_pack("{s:i, s:i, s:i, s:i}", "conn", conn, "qpn",
			qpn, "responder_resources", rd_atomic, "initiator_depth", rd_atomic), NULL);
}

/* Dropping a connection that is gone already is not a failure worth a line. */
static int
perf_req_quiet(void *ctx, const char *cmd, json_t *args)
{
	json_t *r = NULL;
	int ret = roce_ctl_client_request(ctx, cmd, args, &r, PERF_REQ_MS);

	json_decref(args);
	if (ret == 0)
		ret = roce_ctl_reply_status(r, NULL, NULL);
	json_decref(r);
	return ret;
}

static int
ctl_cm_reject(void *ctx, uint32_t conn)
{
	return perf_req_quiet(ctx, "cm.reject", json_pack("{s:i}", "conn", conn));
}

static int
ctl_cm_disconnect(void *ctx, uint32_t conn)
{
	return perf_req_quiet(ctx, "cm.disconnect", json_pack("{s:i}", "conn", conn));
}

static const char *const cm_event_names[] = {
	[ROCE_PERF_CM_CONNECT_REQUEST] = "connect_request",
	[ROCE_PERF_CM_ESTABLISHED] = "established",
	[ROCE_PERF_CM_REJECTED] = "rejected",
	[ROCE_PERF_CM_UNREACHABLE] = "unreachable",
	[ROCE_PERF_CM_CONNECT_ERROR] = "connect_error",
	[ROCE_PERF_CM_DISCONNECTED] = "disconnected",
	[ROCE_PERF_CM_TIMEWAIT_EXIT] = "timewait_exit",
};

static enum roce_perf_cm_event_type
cm_event_type(const char *name)
{
	unsigned int i;

	for (i = 0; name != NULL && i < sizeof(cm_event_names) / sizeof(cm_event_names[0]); i++)
		if (cm_event_names[i] != NULL && strcmp(cm_event_names[i], name) == 0)
			return (enum roce_perf_cm_event_type)i;
	return ROCE_PERF_CM_OTHER;
}

static int
ctl_cm_events(void *ctx, uint64_t *since, struct roce_perf_cm_event *ev, unsigned int max,
		unsigned int *n)
{
	const json_t *list, *e;
	json_t *r;
	size_t i;
	int ret = perf_req(ctx, "cm.events", json_pack("{s:o, s:i}", "since",
			roce_ctl_u64(*since), "max", max), &r);

	if (ret != 0)
		return ret;
	list = json_object_get(r, "events");
	*n = 0;
	json_array_foreach(list, i, e) {
		const char *ip = json_string_value(json_object_get(e, "remote_ip"));
		struct roce_perf_cm_event *o;

		if (*n >= max)
			break;
		o = &ev[(*n)++];
		memset(o, 0, sizeof(*o));
		o->type = cm_event_type(json_string_value(json_object_get(e, "event")));
		o->conn = (uint32_t)ju64(e, "conn");
		o->qpn = (uint32_t)ju64(e, "qpn");
		o->remote_qpn = (uint32_t)ju64(e, "remote_qpn");
		o->service_port = (unsigned int)ju64(e, "service_port");
		o->reason = (unsigned int)ju64(e, "reason");
		snprintf(o->remote_ip, sizeof(o->remote_ip), "%s", ip != NULL ? ip : "");
	}
	*since = ju64(r, "next");
	json_decref(r);
	return 0;
}

static int
ctl_post(void *ctx, const char *cmd, uint32_t qpn, uint32_t lkey, uint64_t off, uint32_t len,
		uint64_t wr_id)
{
	return perf_req(ctx, cmd, json_pack("{s:i, s:i, s:o, s:i, s:o}", "qpn", qpn, "lkey", lkey,
			"offset", json_integer((json_int_t)off), "length", len, "wr_id",
			roce_ctl_u64(wr_id)), NULL);
}

static int
ctl_post_send(void *ctx, uint32_t qpn, uint32_t lkey, uint64_t off, uint32_t len,
		uint64_t wr_id)
{
	return ctl_post(ctx, "post.send", qpn, lkey, off, len, wr_id);
}

static int
ctl_post_recv(void *ctx, uint32_t qpn, uint32_t lkey, uint64_t off, uint32_t len,
		uint64_t wr_id)
{
	return ctl_post(ctx, "post.recv", qpn, lkey, off, len, wr_id);
}

static int
ctl_cq_poll(void *ctx, uint32_t qpn, struct roce_perf_wc *wc, unsigned int max, unsigned int *n)
{
	const json_t *list, *w;
	json_t *r;
	size_t i;
	int ret = perf_req(ctx, "cq.poll", json_pack("{s:i, s:i}", "qpn", qpn, "max",
			max > 64 ? 64 : max), &r);

	if (ret != 0)
		return ret;
	list = json_object_get(r, "wc");
	*n = 0;
	json_array_foreach(list, i, w) {
		const char *op = json_string_value(json_object_get(w, "opcode"));

		if (*n >= max)
			break;
		wc[*n].wr_id = ju64(w, "wr_id");
		wc[*n].status = (int)ju64(w, "status");
		/* a flushed receive may come without an opcode: its wr_id says which */
		wc[*n].recv = op != NULL ? strncmp(op, "recv", 4) == 0 : wc[*n].wr_id < 0x1000;
		wc[*n].byte_len = (uint32_t)ju64(w, "byte_len");
		(*n)++;
	}
	json_decref(r);
	return 0;
}

static int
ctl_mr_write(void *ctx, uint32_t key, uint64_t off, const uint8_t *buf, uint64_t len)
{
	char *hex = malloc(2 * len + 1);
	uint64_t i;
	int ret;

	if (hex == NULL)
		return -ENOMEM;
	for (i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", buf[i]);
	hex[2 * len] = '\0';
	ret = perf_req(ctx, "mr.write", json_pack("{s:i, s:o, s:s}", "rkey", key, "offset",
			json_integer((json_int_t)off), "hex", hex), NULL);
	free(hex);
	return ret;
}

/* ---- congestion control for the run (cc.show, cc.set) ---- */

json_t *
rc_perf_cc_save(struct roce_ctl_client *ctl)
{
	json_t *r, *saved;

	if (perf_req(ctl, "cc.show", json_object(), &r) != 0)
		return NULL;
	/* what cc.set takes back: the profile, the ECN codepoint, every knob as it is */
	saved = json_pack("{s:O, s:O}", "profile", json_object_get(r, "profile"), "ecn",
			json_object_get(r, "ecn"));
	if (saved != NULL && json_is_object(json_object_get(r, "knobs")))
		json_object_update(saved, json_object_get(r, "knobs"));
	json_decref(r);
	return saved;
}

int
rc_perf_cc_set(struct roce_ctl_client *ctl, const char *profile)
{
	return perf_req(ctl, "cc.set", json_pack("{s:s}", "profile", profile), NULL);
}

int
rc_perf_cc_restore(struct roce_ctl_client *ctl, json_t *saved)
{
	return perf_req(ctl, "cc.set", json_incref(saved), NULL);
}

const struct roce_perf_backend_ops rc_perf_ctl_ops = {
	.status = ctl_status,
	.port_info = ctl_port_info,
	.mr_create = ctl_mr_create,
	.mr_destroy = ctl_mr_destroy,
	.mr_fill = ctl_mr_fill,
	.mr_digest = ctl_mr_digest,
	.mr_read = ctl_mr_read,
	.qp_create = ctl_qp_create,
	.qp_connect = ctl_qp_connect,
	.qp_destroy = ctl_qp_destroy,
	.job_start = ctl_job_start,
	.job_stop = ctl_job_stop,
	.job_show = ctl_job_show,
	.job_total = ctl_job_total,
	.ah_create = ctl_ah_create,
	.ah_destroy = ctl_ah_destroy,
	.cm_listen = ctl_cm_listen,
	.cm_unlisten = ctl_cm_unlisten,
	.cm_connect = ctl_cm_connect,
	.cm_accept = ctl_cm_accept,
	.cm_reject = ctl_cm_reject,
	.cm_disconnect = ctl_cm_disconnect,
	.cm_events = ctl_cm_events,
	.post_send = ctl_post_send,
	.post_recv = ctl_post_recv,
	.cq_poll = ctl_cq_poll,
	.mr_write = ctl_mr_write,
};
