/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Verbs over the control socket (verbs_ctl.h): each call is one request to roced, or a few
 * for MR bytes beyond what one request carries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs_ctl.h"

int
rc_verbs_open(struct rc_verbs *v, const char *socket, int timeout_ms, const char *who)
{
	memset(v, 0, sizeof(*v));
	v->who = who;
	v->timeout_ms = timeout_ms;
	v->ctl = roce_ctl_client_connect(socket, timeout_ms);
	if (v->ctl != NULL)
		return 0;
	fprintf(stderr, "%s: cannot connect to roced at %s: %s\n", who, socket, strerror(errno));
	return -errno;
}

void
rc_verbs_close(struct rc_verbs *v)
{
	roce_ctl_client_close(v->ctl);
	v->ctl = NULL;
}

int
rc_verbs_req(struct rc_verbs *v, const char *cmd, json_t *args, json_t **reply)
{
	const char *code, *msg;
	json_t *r = NULL;
	int ret;

	if (reply != NULL)
		*reply = NULL;
	ret = roce_ctl_client_request(v->ctl, cmd, args, &r, v->timeout_ms);
	json_decref(args);
	if (ret != 0) {
		fprintf(stderr, "%s: %s: %s\n", v->who, cmd, ret == -ETIMEDOUT ?
				"no reply from roced in time" : strerror(-ret));
		return ret;
	}
	ret = roce_ctl_reply_status(r, &code, &msg);
	if (ret != 0) {
		if (!v->quiet)
			fprintf(stderr, "%s: %s: %s\n", v->who, cmd, msg != NULL ? msg : "failed");
		json_decref(r);
		return ret;
	}
	if (reply != NULL)
		*reply = r;
	else
		json_decref(r);
	return 0;
}

uint64_t
rc_verbs_u64(const json_t *o, const char *key)
{
	const json_t *x = json_object_get(o, key);

	if (json_is_integer(x))
		return (uint64_t)json_integer_value(x);
	if (json_is_string(x))
		return strtoull(json_string_value(x), NULL, 0);
	return 0;
}

static const char *const access_names[] = { "local_write", "remote_write", "remote_read",
	"remote_atomic" };

json_t *
rc_verbs_access(unsigned int access)
{
	json_t *a = json_array();
	unsigned int i;

	for (i = 0; i < sizeof(access_names) / sizeof(access_names[0]); i++)
		if (access & (1u << i))
			json_array_append_new(a, json_string(access_names[i]));
	return a;
}

int
rc_verbs_port_ip(struct rc_verbs *v, unsigned int port, char *ip, size_t iplen,
		unsigned int *prefix)
{
	const json_t *p;
	const char *s;
	json_t *r;
	int ret = rc_verbs_req(v, "port.show", json_pack("{s:i}", "port", port), &r);

	if (ret != 0)
		return ret;
	p = json_array_get(json_object_get(r, "ports"), 0);
	s = json_string_value(json_object_get(p, "ip"));
	snprintf(ip, iplen, "%s", s != NULL ? s : "");
	*prefix = (unsigned int)rc_verbs_u64(p, "prefix");
	json_decref(r);
	return 0;
}

int
rc_verbs_nb_ports(struct rc_verbs *v, unsigned int *n)
{
	json_t *r;
	int ret = rc_verbs_req(v, "status", json_object(), &r);

	if (ret != 0)
		return ret;
	*n = (unsigned int)rc_verbs_u64(r, "ports");
	json_decref(r);
	return 0;
}

int
rc_verbs_mr_reg(struct rc_verbs *v, uint64_t size, unsigned int access, struct rc_verbs_mr *mr)
{
	const json_t *m;
	json_t *r;
	int ret = rc_verbs_req(v, "mr.reg", json_pack("{s:o, s:o}", "size",
			json_integer((json_int_t)size), "access", rc_verbs_access(access)), &r);

	if (ret != 0)
		return ret;
	m = json_object_get(r, "mr");
	mr->iova = rc_verbs_u64(m, "iova");
	mr->key = (uint32_t)rc_verbs_u64(m, "rkey");
	mr->length = rc_verbs_u64(m, "length");
	json_decref(r);
	return 0;
}

int
rc_verbs_mr_write(struct rc_verbs *v, uint32_t key, uint64_t off, const void *buf, uint64_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = buf;
	char s[2 * RC_VERBS_CHUNK + 1];
	uint64_t done, i, n;
	int ret;

	for (done = 0; done < len; done += n) {
		n = len - done < RC_VERBS_CHUNK ? len - done : RC_VERBS_CHUNK;
		for (i = 0; i < n; i++) {
			s[2 * i] = hex[p[done + i] >> 4];
			s[2 * i + 1] = hex[p[done + i] & 15];
		}
		s[2 * n] = '\0';
		ret = rc_verbs_req(v, "mr.write", json_pack("{s:o, s:o, s:s}", "rkey",
				json_integer(key), "offset", json_integer((json_int_t)(off + done)),
				"hex", s), NULL);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
rc_verbs_mr_read(struct rc_verbs *v, uint32_t key, uint64_t off, void *buf, uint64_t len)
{
	uint8_t *p = buf;
	uint64_t done, i, n;
	const char *s;
	json_t *r;
	int ret;

	for (done = 0; done < len; done += n) {
		n = len - done < RC_VERBS_CHUNK ? len - done : RC_VERBS_CHUNK;
		ret = rc_verbs_req(v, "mr.dump", json_pack("{s:o, s:o, s:o}", "rkey",
				json_integer(key), "offset", json_integer((json_int_t)(off + done)),
				"length", json_integer((json_int_t)n)), &r);
		if (ret != 0)
			return ret;
		s = json_string_value(json_object_get(r, "hex"));
		if (s == NULL || strlen(s) != 2 * n) {
			fprintf(stderr, "%s: mr.dump: %s bytes instead of %lu\n", v->who,
					s == NULL ? "no" : "other", (unsigned long)n);
			json_decref(r);
			return -EPROTO;
		}
		for (i = 0; i < n; i++) {
			int hi = nibble(s[2 * i]), lo = nibble(s[2 * i + 1]);

			if (hi < 0 || lo < 0) {
				fprintf(stderr, "%s: mr.dump: not hex\n", v->who);
				json_decref(r);
				return -EPROTO;
			}
			p[done + i] = (uint8_t)(hi << 4 | lo);
		}
		json_decref(r);
	}
	return 0;
}

int
rc_verbs_qp_create(struct rc_verbs *v, unsigned int port, unsigned int sq_depth,
		unsigned int rq_depth, unsigned int access, uint32_t *qpn)
{
	json_t *r;
	int ret = rc_verbs_req(v, "qp.create", json_pack("{s:i, s:i, s:i, s:o}", "port", port,
			"sq_depth", sq_depth, "rq_depth", rq_depth, "access",
			rc_verbs_access(access)), &r);

	if (ret != 0)
		return ret;
	*qpn = (uint32_t)rc_verbs_u64(json_object_get(r, "qp"), "qpn");
	json_decref(r);
	return 0;
}

int
rc_verbs_post(struct rc_verbs *v, const char *op, uint32_t qpn, uint64_t wr_id, uint32_t lkey,
		uint64_t off, uint64_t len, uint64_t remote_addr, uint32_t rkey)
{
	char cmd[32];
	json_t *a = json_pack("{s:i, s:o, s:o, s:o, s:o}", "qpn", qpn, "wr_id",
			roce_ctl_u64(wr_id), "lkey", json_integer(lkey), "offset",
			json_integer((json_int_t)off), "length", json_integer((json_int_t)len));

	if (strcmp(op, "send") != 0) {
		json_object_set_new(a, "remote_addr", roce_ctl_u64(remote_addr));
		json_object_set_new(a, "rkey", json_integer(rkey));
	}
	snprintf(cmd, sizeof(cmd), "post.%s", op);
	return rc_verbs_req(v, cmd, a, NULL);
}

int
rc_verbs_post_recv(struct rc_verbs *v, uint32_t qpn, uint64_t wr_id, uint32_t lkey,
		uint64_t off, uint64_t len)
{
	return rc_verbs_req(v, "post.recv", json_pack("{s:i, s:o, s:o, s:o, s:o}", "qpn", qpn,
			"wr_id", roce_ctl_u64(wr_id), "lkey", json_integer(lkey), "offset",
			json_integer((json_int_t)off), "length", json_integer((json_int_t)len)),
			NULL);
}

static void
copy_str(char *dst, size_t n, const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(dst, n, "%s", s != NULL ? s : "");
}

int
rc_verbs_poll(struct rc_verbs *v, uint32_t qpn, struct rc_verbs_wc *wc, unsigned int max)
{
	const json_t *list, *w;
	json_t *r;
	size_t i;
	int ret = rc_verbs_req(v, "cq.poll", json_pack("{s:i, s:i}", "qpn", qpn, "max", max), &r);

	if (ret != 0)
		return ret;
	list = json_object_get(r, "wc");
	json_array_foreach(list, i, w) {
		if (i >= max)
			break;
		wc[i].wr_id = rc_verbs_u64(w, "wr_id");
		wc[i].status = (int)json_integer_value(json_object_get(w, "status"));
		wc[i].byte_len = (uint32_t)rc_verbs_u64(w, "byte_len");
		copy_str(wc[i].opcode, sizeof(wc[i].opcode), w, "opcode");
	}
	ret = (int)(json_array_size(list) < max ? json_array_size(list) : max);
	json_decref(r);
	return ret;
}

int
rc_verbs_cm_events(struct rc_verbs *v, uint64_t *since, uint32_t conn,
		struct rc_verbs_cm_event *ev, unsigned int max)
{
	json_t *a = json_pack("{s:o, s:i}", "since", roce_ctl_u64(*since), "max", max);
	const json_t *list, *e;
	json_t *r;
	size_t i;
	int ret;

	if (conn != 0)
		json_object_set_new(a, "conn", json_integer(conn));
	ret = rc_verbs_req(v, "cm.events", a, &r);
	if (ret != 0)
		return ret;
	list = json_object_get(r, "events");
	json_array_foreach(list, i, e) {
		if (i >= max)
			break;
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].seq = rc_verbs_u64(e, "seq");
		copy_str(ev[i].event, sizeof(ev[i].event), e, "event");
		ev[i].conn = (uint32_t)rc_verbs_u64(e, "conn");
		ev[i].qpn = (uint32_t)rc_verbs_u64(e, "qpn");
		ev[i].remote_qpn = (uint32_t)rc_verbs_u64(e, "remote_qpn");
		ev[i].service_port = (uint32_t)rc_verbs_u64(e, "service_port");
		ev[i].reason = (int)rc_verbs_u64(e, "reason");
		copy_str(ev[i].remote_ip, sizeof(ev[i].remote_ip), e, "remote_ip");
		copy_str(ev[i].status, sizeof(ev[i].status), e, "status");
	}
	*since = rc_verbs_u64(r, "next") > *since ? rc_verbs_u64(r, "next") : *since;
	ret = (int)(json_array_size(list) < max ? json_array_size(list) : max);
	json_decref(r);
	return ret;
}
