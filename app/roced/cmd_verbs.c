/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control commands on PDs, MRs, AHs, QPs, work requests and completions: JSON to and from the
 * dataplane's verbs façade (roce_dp_verbs.h), which holds every object.
 *
 * PDs: a client's objects go in its own PD unless the request names one ("pd"); the PD and
 * all in it go when the client does. PD 0 is shared and lives as long as the daemon; pd.create
 * makes more, which live until pd.destroy, or until their client goes with "owned".
 * A client cannot touch what sits in another live client's PD.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_common.h>

#include "roced_cmd.h"

#define POLL_MAX 64

const char *const roced_access_names[ROCED_ACCESS_NAMES] = {
	"local_write", "remote_write", "remote_read", "remote_atomic",
	[16] = "remote_invalidate",
};

static const char *const qp_type_names[] = { [ROCE_QPT_RC] = "rc", [ROCE_QPT_UD] = "ud" };

static const char *const opcode_names[] = {
	[ROCE_WC_SEND] = "send", [ROCE_WC_RDMA_WRITE] = "write", [ROCE_WC_RDMA_READ] = "read",
	[ROCE_WC_COMP_SWAP] = "cas", [ROCE_WC_FETCH_ADD] = "faa",
};

json_t *
roced_ip_json(const uint8_t *ip, int v6)
{
	char buf[INET6_ADDRSTRLEN];

	inet_ntop(v6 ? AF_INET6 : AF_INET, ip, buf, sizeof(buf));
	return json_string(buf);
}

json_t *
roced_mac_json(const struct rte_ether_addr *mac)
{
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_format_addr(buf, sizeof(buf), mac);
	return json_string(buf);
}

static uint64_t
client(const struct roced_state *st)
{
	return roce_ctl_server_client(st->srv);
}

/* ---- PDs ---- */

/* Whether the asking client may use PD @pdn: it is nobody's, or the client's. */
static int
pd_usable(struct roced_state *st, json_t *reply, uint32_t pdn)
{
	struct roce_dp_pd_info pd;

	if (roce_dp_pd_query(st->dp, pdn, &pd) != 0)
		return roce_ctl_error(reply, -ENOENT, "no PD %u", pdn);
	if (pd.owner != 0 && pd.owner != client(st))
		return roce_ctl_error(reply, -EPERM, "PD %u belongs to another client", pdn);
	return 0;
}

/* "pd": the PD a new object goes in; the client's own when not given. */
static int
arg_pd(struct roced_state *st, json_t *req, json_t *reply, uint32_t *pdn)
{
	int ret = roce_ctl_arg_u32(req, reply, "pd", pdn, false, 0, ROCE_DP_MAX_PDS - 1);

	if (ret < 0)
		return ret;
	if (ret == 1)
		return pd_usable(st, reply, *pdn);
	ret = roce_dp_pd_default(st->dp, client(st), pdn);
	return ret == 0 ? 0 : roce_ctl_error(reply, ret, "no PD for this client: %s",
			strerror(-ret));
}

static json_t *
pd_json(const struct roce_dp_pd_info *pd)
{
	json_t *o = json_pack("{s:i, s:i, s:i, s:b}", "pd", pd->pdn, "mrs", pd->nb_mrs,
			"qps", pd->nb_qps, "default", pd->is_default);

	if (pd->owner != 0)
		json_object_set_new(o, "owner", roce_ctl_u64(pd->owner));
	return o;
}

int
roced_cmd_pd_create(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_pd_info pd;
	bool owned = false;
	uint32_t pdn;
	int ret;

	if ((ret = roce_ctl_arg_bool(req, reply, "owned", &owned, false)) < 0)
		return ret;
	ret = roce_dp_pd_alloc(st->dp, owned ? client(st) : 0, &pdn);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot allocate a PD: %s", strerror(-ret));
	roce_dp_pd_query(st->dp, pdn, &pd);
	json_object_set_new(reply, "pd", pd_json(&pd));
	return 0;
}

int
roced_cmd_pd_destroy(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	unsigned int nq = 0, nm = 0;
	bool force = false;
	uint32_t pdn;
	int ret;

	if ((ret = roce_ctl_arg_u32(req, reply, "pd", &pdn, true, 0, ROCE_DP_MAX_PDS - 1)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "force", &force, false)) < 0 ||
			(ret = pd_usable(st, reply, pdn)) < 0)
		return ret;
	if (pdn == ROCE_DP_PD_SHARED)
		return roce_ctl_error(reply, -EPERM, "PD 0 is the shared one: it cannot go");
	ret = force ? roce_dp_pd_release(st->dp, pdn, &nq, &nm) : roce_dp_pd_free(st->dp, pdn);
	if (nq != 0)
		roced_cm_prune(st);
	if (ret == -EBUSY)
		return roce_ctl_error(reply, ret, "PD %u still holds MRs or QPs (force=true frees "
				"them)", pdn);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot destroy PD %u: %s", pdn, strerror(-ret));
	json_object_set_new(reply, "qps", json_integer(nq));
	json_object_set_new(reply, "mrs", json_integer(nm));
	return 0;
}

int
roced_cmd_pd_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint32_t pdns[ROCE_DP_MAX_PDS], pdn = 0;
	struct roce_dp_pd_info pd;
	json_t *list;
	unsigned int i, n;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "pd", &pdn, false, 0, ROCE_DP_MAX_PDS - 1);
	if (ret < 0)
		return ret;
	if (ret == 1 && roce_dp_pd_query(st->dp, pdn, &pd) != 0)
		return roce_ctl_error(reply, -ENOENT, "no PD %u", pdn);
	n = roce_dp_pd_list(st->dp, ROCE_DP_PD_ANY, pdns, RTE_DIM(pdns));
	list = json_array();
	for (i = 0; i < n; i++)
		if ((ret == 0 || pdns[i] == pdn) && roce_dp_pd_query(st->dp, pdns[i], &pd) == 0)
			json_array_append_new(list, pd_json(&pd));
	json_object_set_new(reply, "pds", list);
	return 0;
}

void
roced_client_closed(void *arg, uint64_t id)
{
	struct roced_state *st = arg;
	uint32_t pdns[ROCE_DP_MAX_PDS];
	unsigned int i, n, nq, nm, tq = 0, tm = 0;

	n = roce_dp_pd_list(st->dp, id, pdns, RTE_DIM(pdns));
	for (i = 0; i < n; i++)
		if (roce_dp_pd_release(st->dp, pdns[i], &nq, &nm) == 0) {
			tq += nq;
			tm += nm;
		}
	if (tq != 0)
		roced_cm_prune(st);
	roced_cm_client_closed(st, id);
	if (tq + tm != 0)
		ROCED_LOG(INFO, "control client %" PRIu64 " went: freed its %u QP(s) and %u MR(s)\n",
				id, tq, tm);
}

/* ---- MRs ---- */

static json_t *
mr_json(const struct roce_dp_mr_info *m)
{
	return json_pack("{s:i, s:i, s:o, s:o, s:o, s:o, s:o}", "id", m->id, "pd", m->pdn,
			"lkey", roce_ctl_u64(m->key), "rkey", roce_ctl_u64(m->key),
			"iova", roce_ctl_u64(m->iova), "length", roce_ctl_u64(m->length),
			"access", roce_ctl_flags(roced_access_names, ROCED_ACCESS_NAMES, m->access));
}

/* The MR of key "@key", which the client may use. */
static int
arg_mr(struct roced_state *st, json_t *req, json_t *reply, const char *key,
		struct roce_dp_mr_info *m)
{
	uint32_t k;
	int ret = roce_ctl_arg_u32(req, reply, key, &k, true, 0, UINT32_MAX);

	if (ret < 0)
		return ret;
	if (roce_dp_mr_query(st->dp, k, m) != 0)
		return roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", k);
	return pd_usable(st, reply, m->pdn);
}

/* An MR argument and a range in it: "rkey" (or @key), "offset", "length". */
/* Without "length": the rest of the MR, at most @max_len. */
int
roced_arg_mr_range(struct roced_state *st, json_t *req, json_t *reply, const char *key,
		struct roce_dp_mr_info *m, uint64_t *off, uint64_t *len, uint64_t max_len)
{
	int ret = arg_mr(st, req, reply, key, m);

	if (ret < 0)
		return ret;
	*off = 0;
	ret = roce_ctl_arg_u64(req, reply, "offset", off, false, 0, m->length);
	if (ret < 0)
		return ret;
	*len = RTE_MIN(m->length - *off, max_len);
	ret = roce_ctl_arg_u64(req, reply, "length", len, false, 0, max_len);
	if (ret < 0)
		return ret;
	if (*len > m->length - *off)
		return roce_ctl_error(reply, -EINVAL, "offset + length beyond the MR (%lu bytes)",
				(unsigned long)m->length);
	return 0;
}

int
roced_cmd_mr_reg(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint64_t size, access = ROCE_ACCESS_LOCAL_WRITE;
	struct roce_dp_mr_info m;
	int socket = SOCKET_ID_ANY;
	uint32_t pdn;
	int ret;

	if ((ret = roce_ctl_arg_u64(req, reply, "size", &size, true, 1, ROCED_MR_MAX)) < 0 ||
			(ret = roce_ctl_arg_int(req, reply, "socket", &socket, false, -1,
				RTE_MAX_NUMA_NODES - 1)) < 0 ||
			(ret = roce_ctl_arg_flags(req, reply, "access", roced_access_names,
				ROCED_ACCESS_NAMES, &access, false)) < 0 ||
			(ret = arg_pd(st, req, reply, &pdn)) < 0)
		return ret;
	ret = roce_dp_mr_reg(st->dp, pdn, size, (unsigned int)access, socket, &m);
	if (ret == -EINVAL)
		return roce_ctl_error(reply, ret,
				"registration refused (remote write/atomic need local_write)");
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot register %lu bytes: %s",
				(unsigned long)size, strerror(-ret));
	json_object_set_new(reply, "mr", mr_json(&m));
	return 0;
}

int
roced_cmd_mr_dereg(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_mr_info m;
	int ret = arg_mr(st, req, reply, "rkey", &m);

	return ret < 0 ? ret : roce_dp_mr_dereg(st->dp, m.key);
}

int
roced_cmd_mr_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_mr_info *mrs;
	unsigned int i, n;
	uint32_t key = 0;
	json_t *list;
	int ret;

	ret = roce_ctl_arg_u32(req, reply, "rkey", &key, false, 0, UINT32_MAX);
	if (ret < 0)
		return ret;
	mrs = malloc(ROCE_DP_MAX_MRS * sizeof(*mrs));
	if (mrs == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory");
	n = RTE_MIN(roce_dp_mr_list(st->dp, ROCE_DP_PD_ANY, mrs, ROCE_DP_MAX_MRS),
			ROCE_DP_MAX_MRS);
	list = json_array();
	for (i = 0; i < n; i++)
		if (ret == 0 || mrs[i].key == key)
			json_array_append_new(list, mr_json(&mrs[i]));
	free(mrs);
	json_object_set_new(reply, "mrs", list);
	return ret == 1 && json_array_size(list) == 0 ?
		roce_ctl_error(reply, -ENOENT, "no MR with key 0x%x", key) : 0;
}

int
roced_cmd_mr_fill(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	const char *pat = "inc";
	struct roce_dp_mr_info m;
	uint64_t off, len;
	int ret;

	if ((ret = roced_arg_mr_range(st, req, reply, "rkey", &m, &off, &len, UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_str(req, reply, "pattern", &pat, false, 64)) < 0)
		return ret;
	if (roce_dp_pattern_fill(m.addr + off, len, off, pat) != 0)
		return roce_ctl_error(reply, -EINVAL,
				"pattern: '%s' is not inc, zero, byte:N or random:SEED", pat);
	json_object_set_new(reply, "length", roce_ctl_u64(len));
	return 0;
}

int
roced_cmd_mr_dump(void *arg, json_t *req, json_t *reply)
{
	static const char hex[] = "0123456789abcdef";
	struct roced_state *st = arg;
	char out[2 * ROCED_DUMP_MAX + 1];
	struct roce_dp_mr_info m;
	uint64_t off, len, i;
	int ret;

	if (json_object_get(req, "length") == NULL)
		json_object_set_new(req, "length", roce_ctl_u64(256));
	ret = roced_arg_mr_range(st, req, reply, "rkey", &m, &off, &len, ROCED_DUMP_MAX);
	if (ret < 0)
		return ret;
	for (i = 0; i < len; i++) {
		out[2 * i] = hex[m.addr[off + i] >> 4];
		out[2 * i + 1] = hex[m.addr[off + i] & 15];
	}
	out[2 * len] = '\0';
	json_object_set_new(reply, "offset", roce_ctl_u64(off));
	json_object_set_new(reply, "hex", json_string(out));
	return 0;
}

/* A hex digit's value, or -1. */
static int
hex_val(char c)
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
roced_cmd_mr_write(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_mr_info m;
	const char *hex = NULL;
	uint64_t off, len, i;
	size_t n;
	int ret;

	if ((ret = roce_ctl_arg_str(req, reply, "hex", &hex, true, 2 * ROCED_DUMP_MAX)) < 0)
		return ret;
	n = strlen(hex);
	if (n % 2 != 0)
		return roce_ctl_error(reply, -EINVAL, "hex: an even number of hex digits");
	for (i = 0; i < n; i++)
		if (hex_val(hex[i]) < 0)
			return roce_ctl_error(reply, -EINVAL, "hex: hex digits only");
	/* The range is the data's: "length" is not an argument of this command. */
	if (json_object_get(req, "length") != NULL)
		return roce_ctl_error(reply, -EINVAL, "length: the hex string's");
	json_object_set_new(req, "length", roce_ctl_u64(n / 2));
	ret = roced_arg_mr_range(st, req, reply, "rkey", &m, &off, &len, ROCED_DUMP_MAX);
	if (ret < 0)
		return ret;
	for (i = 0; i < len; i++)
		m.addr[off + i] = (uint8_t)(hex_val(hex[2 * i]) << 4 | hex_val(hex[2 * i + 1]));
	json_object_set_new(reply, "length", roce_ctl_u64(len));
	return 0;
}

int
roced_cmd_mr_digest(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_mr_info m;
	uint64_t off, len;
	char buf[16];
	int ret;

	ret = roced_arg_mr_range(st, req, reply, "rkey", &m, &off, &len, UINT64_MAX);
	if (ret < 0)
		return ret;
	snprintf(buf, sizeof(buf), "0x%08x", crc32_gzip_refl(0, m.addr + off, len));
	json_object_set_new(reply, "crc32", json_string(buf));
	json_object_set_new(reply, "length", roce_ctl_u64(len));
	return 0;
}

/* ---- QPs ---- */

int
roced_arg_qp(struct roced_state *st, json_t *req, json_t *reply, struct roce_dp_qp_info *q)
{
	uint32_t qpn;
	int ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, true, 0, 0xFFFFFF);

	if (ret < 0)
		return ret;
	if (roce_dp_qp_query(st->dp, qpn, q) != 0)
		return roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn);
	return pd_usable(st, reply, q->pdn);
}

bool
roced_qp_connected(const struct roce_dp_qp_info *q)
{
	return q->attr.dest_qp_num != 0;
}

static bool
qp_is_ud(const struct roce_dp_qp_info *q)
{
	return q->init.qp_type == ROCE_QPT_UD;
}

static json_t *
qp_json(struct roced_state *st, const struct roce_dp_qp_info *q)
{
	const struct roce_port *port = roce_dp_port(st->dp, q->port);
	const struct roce_dp_addr *a = roce_dp_addr(st->dp, q->port);
	const struct roce_path *ah = &q->attr.ah;
	json_t *o = json_pack("{s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:b, s:o}", "qpn", q->qpn,
			"psn", q->psn, "pd", q->pdn, "port", q->port, "worker", q->worker,
			"ip", roced_ip_json(a->ip4, 0), "mac", roced_mac_json(&port->mac),
			"connected", roced_qp_connected(q),
			"access", roce_ctl_flags(roced_access_names, ROCED_ACCESS_NAMES,
				q->attr.qp_access_flags));

	json_object_set_new(o, "type", json_string(qp_type_names[q->init.qp_type]));
	if (qp_is_ud(q)) {
		json_object_set_new(o, "qkey", roce_ctl_u64(q->attr.qkey));
		json_object_set_new(o, "mtu", json_integer(roce_mtu_bytes(q->attr.path_mtu)));
	}
	if (roced_qp_connected(q)) {
		json_object_set_new(o, "sr", json_boolean(q->attr.sr));
		json_object_set_new(o, "remote", json_pack("{s:i, s:i, s:o, s:o}",
				"qpn", q->attr.dest_qp_num, "psn", q->attr.rq_psn,
				"ip", roced_ip_json(ah->dst_ip, ah->ipv6),
				"mac", roced_mac_json(&ah->dst_mac)));
	}
	return o;
}

/* "access": remote rights the QP grants (exactly those named; none by default). */
static int
arg_qp_access(json_t *req, json_t *reply, uint64_t *access)
{
	int ret = roce_ctl_arg_flags(req, reply, "access", roced_access_names, ROCED_ACCESS_NAMES,
			access, false);

	if (ret == 1 && (*access & ~(uint64_t)(ROCE_ACCESS_REMOTE_WRITE | ROCE_ACCESS_REMOTE_READ |
			ROCE_ACCESS_REMOTE_ATOMIC)) != 0)
		return roce_ctl_error(reply, -EINVAL,
				"access: a QP grants remote_write, remote_read, remote_atomic");
	return ret;
}

int
roced_cmd_qp_create(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_qp_init in = { .worker = -1, .sq_depth = 128, .rq_depth = 128,
		.max_inline = 64 };
	struct roce_dp_qp_info q;
	uint32_t worker = 0, port = 0, qpn, pmax;
	unsigned int type = ROCE_QPT_RC;
	uint64_t access = 0;
	int ret = 0, hw, ha = 0, hq = 0, hm = 0;

	if ((ret = roce_ctl_arg_enum(req, reply, "type", qp_type_names, RTE_DIM(qp_type_names),
				&type, false)) < 0 ||
			(hq = roce_ctl_arg_u32(req, reply, "qkey", &in.qkey, false, 0,
				UINT32_MAX)) < 0 ||
			(hm = roce_ctl_arg_u32(req, reply, "mtu", &in.mtu, false, 256, 4096)) < 0)
		return ret < 0 ? ret : hq < 0 ? hq : hm;
	if ((hw = roce_ctl_arg_u32(req, reply, "worker", &worker, false, 0,
				roce_dp_nb_workers(st->dp) - 1)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "sq_depth", &in.sq_depth, false, 1,
				ROCE_DP_MAX_DEPTH)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rq_depth", &in.rq_depth, false, 1,
				ROCE_DP_MAX_DEPTH)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_inline", &in.max_inline, false, 0,
				ROCE_MAX_INLINE)) < 0 ||
			(ha = arg_qp_access(req, reply, &access)) < 0 ||
			(ret = arg_pd(st, req, reply, &in.pdn)) < 0)
		return hw < 0 ? hw : ha < 0 ? ha : ret;
	if (hw == 1)
		in.worker = (int16_t)worker;
	in.port = (uint16_t)port;
	in.access = (unsigned int)access;
	in.type = (enum roce_qp_type)type;
	if (type == ROCE_QPT_RC && (hq == 1 || hm == 1))
		return roce_ctl_error(reply, -EINVAL, "qkey and mtu are a UD QP's (an RC QP gets "
				"its mtu in qp.connect)");
	if (type == ROCE_QPT_UD && ha == 1)
		return roce_ctl_error(reply, -EINVAL, "access: a UD QP grants no remote rights");
	if (type == ROCE_QPT_UD && (in.qkey & ROCE_QKEY_CONTROLLED))
		return roce_ctl_error(reply, -EPERM, "qkey 0x%x is a controlled Q_Key (high bit "
				"set): for privileged consumers only, as Linux has it", in.qkey);
	if (type == ROCE_QPT_UD && hm == 1) {
		pmax = roce_dp_path_mtu_max(st->dp, port, true, false);
		if (!rte_is_power_of_2(in.mtu))
			return roce_ctl_error(reply, -EINVAL, "mtu: 256, 512, 1024, 2048 or 4096");
		if (in.mtu > pmax)
			return roce_ctl_error(reply, -EMSGSIZE, "mtu %u: port %u carries IP MTU %u, "
					"which fits path MTU %u at most", in.mtu, port,
					roce_dp_port(st->dp, port)->mtu, pmax);
	}
	ret = roce_dp_qp_create(st->dp, &in, &qpn);
	if (ret == 0)
		ret = roce_dp_qp_query(st->dp, qpn, &q);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot create the QP: %s", strerror(-ret));
	json_object_set_new(reply, "qp", qp_json(st, &q));
	return 0;
}

/* The attributes of INIT -> RTR -> RTS from the request, with perftest's defaults. */
static int
connect_args(struct roced_state *st, json_t *req, json_t *reply,
		const struct roce_dp_qp_info *q, struct roce_qp_attr *a, int *access_mask)
{
	uint32_t rqpn, rpsn, timeout = 14, retry = 7, rnr = 7, minrnr = 12, rd = 16, dscp = 0;
	uint32_t drd = 16, rto = 0, inflight = 0, mtu = 1024, pmax;
	uint64_t access = 0;
	uint8_t ip[16], mac[6];
	int family, ret = 0, hm = 0;
	bool sr = false;
	char txt[INET6_ADDRSTRLEN];

	if ((ret = roce_ctl_arg_u32(req, reply, "remote.qpn", &rqpn, true, 2, 0xFFFFFF)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "remote.psn", &rpsn, true, 0,
				ROCE_PSN_MASK)) < 0 ||
			(ret = roce_ctl_arg_ip(req, reply, "remote.ip", &family, ip, true)) < 0 ||
			(hm = roce_ctl_arg_mac(req, reply, "remote.mac", mac, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "mtu", &mtu, false, 256, 4096)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "timeout", &timeout, false, 0, 31)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "retry_cnt", &retry, false, 0, 7)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "rnr_retry", &rnr, false, 0, 7)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "min_rnr_timer", &minrnr, false, 0,
				31)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_rd_atomic", &rd, false, 0,
				ROCED_RD_ATOMIC_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_dest_rd_atomic", &drd, false, 0,
				ROCED_RD_ATOMIC_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "dscp", &dscp, false, 0, 63)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "sr", &sr, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "sr_rto_us", &rto, false, 0,
				10000000)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max_inflight", &inflight, false, 0,
				ROCE_MAX_INFLIGHT_MAX)) < 0 ||
			(ret = arg_qp_access(req, reply, &access)) < 0)
		return hm < 0 ? hm : ret;
	/* Given: exactly those rights from now on; else what the QP was created with. */
	*access_mask = ret == 1 ? ROCE_QP_ACCESS_FLAGS : 0;
	if (!rte_is_power_of_2(mtu))
		return roce_ctl_error(reply, -EINVAL, "mtu: 256, 512, 1024, 2048 or 4096");
	pmax = roce_dp_path_mtu_max(st->dp, q->port, family == AF_INET6, sr);
	if (mtu > pmax)
		return roce_ctl_error(reply, -EMSGSIZE, "mtu %u: port %u carries IP MTU %u, "
				"which fits path MTU %u at most (start roced with a larger --mtu)",
				mtu, q->port, roce_dp_port(st->dp, q->port)->mtu, pmax);
	ret = roce_dp_path(st->dp, q->port, ip, family == AF_INET6, hm == 1 ? mac : NULL,
			(uint8_t)dscp, 3000, &a->ah);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot resolve the MAC of %s: %s",
				inet_ntop(family, ip, txt, sizeof(txt)), strerror(-ret));
	a->ah.udp_sport = roce_udp_sport(q->qpn, rqpn);
	a->path_mtu = (enum roce_mtu)(rte_log2_u32(mtu) - 7);
	a->dest_qp_num = rqpn;
	a->rq_psn = rpsn;
	a->sq_psn = q->psn;
	a->timeout = (uint8_t)timeout;
	a->retry_cnt = (uint8_t)retry;
	a->rnr_retry = (uint8_t)rnr;
	a->min_rnr_timer = (uint8_t)minrnr;
	a->max_rd_atomic = (uint8_t)rd;
	a->max_dest_rd_atomic = (uint8_t)drd;
	a->qp_access_flags = (uint32_t)access;
	a->sr = sr;
	a->sr_rto_us = rto;
	a->max_inflight = inflight;
	return 0;
}

int
roced_cmd_qp_connect(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_qp_attr a = {0};
	struct roce_dp_qp_info q;
	int ret, access_mask;

	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0)
		return ret;
	if (qp_is_ud(&q))
		return roce_ctl_error(reply, -EINVAL, "QP 0x%06x is UD: it is not connected, its "
				"sends name an address (post.send ah or remote.ip)", q.qpn);
	if ((ret = connect_args(st, req, reply, &q, &a, &access_mask)) < 0)
		return ret;
	if (roced_qp_connected(&q))
		return roce_ctl_error(reply, -EBUSY, "QP 0x%06x is connected already", q.qpn);
	a.qp_state = ROCE_QPS_RTR;
	ret = roce_dp_qp_modify(st->dp, q.qpn, &a, ROCE_QP_STATE | ROCE_QP_AV | ROCE_QP_PATH_MTU |
			ROCE_QP_DEST_QPN | ROCE_QP_RQ_PSN | ROCE_QP_MAX_DEST_RD_ATOMIC |
			ROCE_QP_MIN_RNR_TIMER | access_mask | ROCE_QP_SR | ROCE_QP_SR_RTO |
			ROCE_QP_MAX_INFLIGHT);
	if (ret == 0) {
		a.qp_state = ROCE_QPS_RTS;
		ret = roce_dp_qp_modify(st->dp, q.qpn, &a, ROCE_QP_STATE | ROCE_QP_SQ_PSN |
				ROCE_QP_TIMEOUT | ROCE_QP_RETRY_CNT | ROCE_QP_RNR_RETRY |
				ROCE_QP_MAX_QP_RD_ATOMIC);
	}
	if (ret == 0)
		ret = roce_dp_qp_query(st->dp, q.qpn, &q);
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot connect: %s", strerror(-ret));
	json_object_set_new(reply, "qp", qp_json(st, &q));
	return 0;
}

/* What rocectl top turns into rates (with the reply's clock_ns). */
static void
qp_traffic_json(json_t *o, const struct roce_dp_qp_info *q)
{
	json_object_set_new(o, "tx_bytes", roce_ctl_u64(q->cnt[ROCE_XC_TX_BYTES]));
	json_object_set_new(o, "rx_bytes", roce_ctl_u64(q->cnt[ROCE_XC_RX_BYTES]));
	json_object_set_new(o, "timeouts", roce_ctl_u64(q->cnt[ROCE_XC_TIMEOUTS]));
	json_object_set_new(o, "cnp_rx", roce_ctl_u64(q->cnt[ROCE_XC_CNP_RX]));
	json_object_set_new(o, "cnp_tx", roce_ctl_u64(q->cnt[ROCE_XC_CNP_TX]));
	json_object_set_new(o, "wqe_completed", roce_ctl_u64(q->cnt[ROCE_XC_WQE_COMPLETED]));
	json_object_set_new(o, "recv_completed", roce_ctl_u64(q->cnt[ROCE_XC_RECV_COMPLETED]));
}

int
roced_cmd_qp_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint32_t qpn = 0, *qpns;
	json_t *list;
	int ret, n, i;

	ret = roce_ctl_arg_u32(req, reply, "qpn", &qpn, false, 0, 0xFFFFFF);
	if (ret < 0)
		return ret;
	n = ret == 1 ? 1 : roce_dp_qp_list(st->dp, ROCE_DP_PD_ANY, NULL, 0);
	if (n < 0)
		return roce_ctl_error(reply, n, "workers did not answer");
	qpns = malloc(((size_t)n + 1) * sizeof(*qpns));
	if (qpns == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory");
	if (ret == 1)
		qpns[0] = qpn;
	else
		n = RTE_MIN(n, roce_dp_qp_list(st->dp, ROCE_DP_PD_ANY, qpns, (unsigned int)n));
	list = json_array();
	for (i = 0; i < n; i++) {
		struct roce_dp_qp_info q;
		struct roce_dp_cc_qp cq;
		json_t *o;

		if (roce_dp_qp_query(st->dp, qpns[i], &q) != 0)
			continue;
		o = qp_json(st, &q);
		json_object_set_new(o, "state", json_string(roce_qp_state_name(q.attr.qp_state)));
		json_object_set_new(o, "tx_pkts", roce_ctl_u64(q.cnt[ROCE_XC_TX_PKTS]));
		json_object_set_new(o, "rx_pkts", roce_ctl_u64(q.cnt[ROCE_XC_RX_PKTS]));
		json_object_set_new(o, "retransmits", roce_ctl_u64(q.cnt[ROCE_XC_RETRANSMITS]));
		qp_traffic_json(o, &q);
		if (roce_dp_cc_qp_get(st->dp, qpns[i], &cq) == 0)
			json_object_set_new(o, "cc", roced_cc_qp_json(&cq));
		json_array_append_new(list, o);
	}
	free(qpns);
	json_object_set_new(reply, "clock_ns", roce_ctl_u64(roce_dp_now()));
	json_object_set_new(reply, "qps", list);
	return ret == 1 && json_array_size(list) == 0 ?
		roce_ctl_error(reply, -ENOENT, "no QP 0x%06x", qpn) : 0;
}

int
roced_cmd_qp_destroy(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_qp_info q;
	int ret = roced_arg_qp(st, req, reply, &q);

	if (ret < 0 || (ret = roce_dp_qp_destroy(st->dp, q.qpn)) != 0)
		return ret;
	roced_cm_prune(st);
	return 0;
}

/* ---- address handles ---- */

static json_t *
ah_json(const struct roce_dp_ah_info *a)
{
	return json_pack("{s:i, s:i, s:i, s:o, s:o, s:i, s:i}", "ah", a->ahn, "pd", a->pdn,
			"port", a->port, "ip", roced_ip_json(a->path.dst_ip, a->path.ipv6),
			"mac", roced_mac_json(&a->path.dst_mac), "dscp", a->path.dscp,
			"hop_limit", a->path.ttl != 0 ? a->path.ttl : 64);
}

/* The AH named by "ah", which the client may use. */
static int
arg_ah(struct roced_state *st, json_t *req, json_t *reply, bool required,
		struct roce_dp_ah_info *a)
{
	uint32_t ahn;
	int ret = roce_ctl_arg_u32(req, reply, "ah", &ahn, required, 1, ROCE_DP_MAX_AHS);

	if (ret <= 0)
		return ret;
	if (roce_dp_ah_query(st->dp, ahn, a) != 0)
		return roce_ctl_error(reply, -ENOENT, "no AH %u", ahn);
	ret = pd_usable(st, reply, a->pdn);
	return ret < 0 ? ret : 1;
}

/*
 * An address from "@prefix.ip", "@prefix.mac", "dscp", "hop_limit" made into an AH of PD @pdn
 * on @port. @return 0 with @ahn set, or the error replied.
 */
static int
make_ah(struct roced_state *st, json_t *req, json_t *reply, const char *prefix, uint32_t pdn,
		uint32_t port, uint32_t *ahn)
{
	uint32_t dscp = 0, hop = 64;
	char key_ip[32], key_mac[32], txt[INET6_ADDRSTRLEN];
	uint8_t ip[16], mac[6];
	int family, ret, hm = 0;

	snprintf(key_ip, sizeof(key_ip), "%s%sip", prefix, *prefix != '\0' ? "." : "");
	snprintf(key_mac, sizeof(key_mac), "%s%smac", prefix, *prefix != '\0' ? "." : "");
	if ((ret = roce_ctl_arg_ip(req, reply, key_ip, &family, ip, true)) < 0 ||
			(hm = roce_ctl_arg_mac(req, reply, key_mac, mac, false)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "dscp", &dscp, false, 0, 63)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "hop_limit", &hop, false, 1, 255)) < 0)
		return hm < 0 ? hm : ret;
	ret = roce_dp_ah_create(st->dp, pdn, port, ip, family == AF_INET6, hm == 1 ? mac : NULL,
			(uint8_t)dscp, (uint8_t)hop, 3000, ahn);
	if (ret == -EHOSTUNREACH)
		return roce_ctl_error(reply, ret, "cannot resolve the MAC of %s: no answer",
				inet_ntop(family, ip, txt, sizeof(txt)));
	if (ret != 0)
		return roce_ctl_error(reply, ret, "cannot make an address handle: %s",
				strerror(-ret));
	return 0;
}

int
roced_cmd_ah_create(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_ah_info a;
	uint32_t pdn, port = 0, ahn;
	int ret;

	if ((ret = roce_ctl_arg_u32(req, reply, "port", &port, false, 0,
				st->conf.nb_ports - 1)) < 0 ||
			(ret = arg_pd(st, req, reply, &pdn)) < 0 ||
			(ret = make_ah(st, req, reply, "", pdn, port, &ahn)) < 0)
		return ret;
	roce_dp_ah_query(st->dp, ahn, &a);
	json_object_set_new(reply, "ah", ah_json(&a));
	return 0;
}

int
roced_cmd_ah_destroy(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_dp_ah_info a;
	int ret = arg_ah(st, req, reply, true, &a);

	return ret < 0 ? ret : roce_dp_ah_destroy(st->dp, a.ahn);
}

int
roced_cmd_ah_show(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	uint32_t ahns[ROCE_DP_MAX_AHS];
	struct roce_dp_ah_info a;
	unsigned int i, n;
	json_t *list;
	int ret = arg_ah(st, req, reply, false, &a);

	if (ret < 0)
		return ret;
	list = json_array();
	if (ret == 1) {
		json_array_append_new(list, ah_json(&a));
	} else {
		n = RTE_MIN(roce_dp_ah_list(st->dp, ROCE_DP_PD_ANY, ahns, RTE_DIM(ahns)),
				RTE_DIM(ahns));
		for (i = 0; i < n; i++)
			if (roce_dp_ah_query(st->dp, ahns[i], &a) == 0)
				json_array_append_new(list, ah_json(&a));
	}
	json_object_set_new(reply, "ahs", list);
	return 0;
}

/* ---- work requests and completions ---- */

/* Local buffer of a work request: "lkey" (an MR's key), "offset", "length". */
int
roced_arg_local(struct roced_state *st, json_t *req, json_t *reply, struct roce_sge *sge,
		uint64_t def_len, struct roce_dp_mr_info *m)
{
	uint64_t off, len;
	int ret;

	if (json_object_get(req, "length") == NULL)
		json_object_set_new(req, "length", roce_ctl_u64(def_len));
	ret = roced_arg_mr_range(st, req, reply, "lkey", m, &off, &len, ROCE_MAX_MSG_SIZE);
	if (ret < 0)
		return ret;
	sge->addr = m->iova + off;
	sge->length = (uint32_t)len;
	sge->lkey = m->key;
	return 0;
}

/* Post @count copies of @wr (or @rwr), wr_id counting up from @wr_id. */
static int
post_copies(struct roced_state *st, json_t *reply, uint32_t qpn, const struct roce_send_wr *wr,
		const struct roce_recv_wr *rwr, uint64_t wr_id, uint32_t count)
{
	size_t one = wr != NULL ? sizeof(*wr) : sizeof(*rwr);
	uint8_t *wrs = malloc(one * count);
	uint32_t i;
	int ret;

	if (wrs == NULL)
		return roce_ctl_error(reply, -ENOMEM, "no memory");
	for (i = 0; i < count; i++) {
		memcpy(wrs + i * one, wr != NULL ? (const void *)wr : (const void *)rwr, one);
		if (wr != NULL)
			((struct roce_send_wr *)(void *)(wrs + i * one))->wr_id = wr_id + i;
		else
			((struct roce_recv_wr *)(void *)(wrs + i * one))->wr_id = wr_id + i;
	}
	ret = wr != NULL ? roce_dp_post_send(st->dp, qpn, (void *)wrs, count) :
		roce_dp_post_recv(st->dp, qpn, (void *)wrs, count);
	free(wrs);
	if (ret < 0)
		return roce_ctl_error(reply, ret, "post refused: %s", strerror(-ret));
	json_object_set_new(reply, "posted", json_integer(ret));
	return 0;
}

/* What each post command adds to a WR: remote address, immediate, atomic operands. */
static int
post_args(json_t *req, json_t *reply, struct roce_send_wr *wr)
{
	enum roce_wr_opcode op = wr->opcode;
	int atomic = op == ROCE_WR_ATOMIC_CMP_AND_SWP || op == ROCE_WR_ATOMIC_FETCH_AND_ADD;
	uint32_t imm;
	int ret;

	if (op != ROCE_WR_SEND &&
			((ret = roce_ctl_arg_u64(req, reply, "remote_addr", &wr->remote_addr, true,
				0, UINT64_MAX)) < 0 ||
			 (ret = roce_ctl_arg_u32(req, reply, "rkey", &wr->rkey, true, 0,
				UINT32_MAX)) < 0))
		return ret;
	ret = roce_ctl_arg_u32(req, reply, "imm", &imm, false, 0, UINT32_MAX);
	if (ret < 0)
		return ret;
	if (ret == 1 && (op == ROCE_WR_SEND || op == ROCE_WR_RDMA_WRITE)) {
		wr->opcode = op == ROCE_WR_SEND ? ROCE_WR_SEND_WITH_IMM :
			ROCE_WR_RDMA_WRITE_WITH_IMM;
		wr->imm_data = imm;
	}
	if (atomic &&
			((ret = roce_ctl_arg_u64(req, reply, op == ROCE_WR_ATOMIC_CMP_AND_SWP ?
				"compare" : "add", &wr->compare_add, true, 0, UINT64_MAX)) < 0 ||
			 (op == ROCE_WR_ATOMIC_CMP_AND_SWP &&
			  (ret = roce_ctl_arg_u64(req, reply, "swap", &wr->swap, true, 0,
				UINT64_MAX)) < 0)))
		return ret;
	return 0;
}

/*
 * Where a UD SEND goes: "remote.qpn", "remote.qkey" (default: a controlled Q_Key, i.e. the
 * QP's own) and either "ah" or an address ("remote.ip", "remote.mac", "dscp", "hop_limit")
 * made into a one-off AH, returned in @tmp_ahn for the caller to destroy after the post.
 */
static int
ud_dest(struct roced_state *st, json_t *req, json_t *reply, const struct roce_dp_qp_info *q,
		struct roce_send_wr *wr, uint32_t *tmp_ahn)
{
	uint32_t rqpn, qkey = ROCE_QKEY_CONTROLLED;
	struct roce_dp_ah_info a;
	int ret, has_ah;

	if ((ret = roce_ctl_arg_u32(req, reply, "remote.qpn", &rqpn, true, 0, 0xFFFFFF)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "remote.qkey", &qkey, false, 0,
				UINT32_MAX)) < 0 ||
			(has_ah = arg_ah(st, req, reply, false, &a)) < 0)
		return ret < 0 ? ret : has_ah;
	if (has_ah == 1 && json_object_get(json_object_get(req, "remote"), "ip") != NULL)
		return roce_ctl_error(reply, -EINVAL, "ah or remote.ip, not both");
	if (has_ah == 1) {
		if (a.pdn != q->pdn)
			return roce_ctl_error(reply, -EINVAL, "AH %u is in PD %u, QP 0x%06x in PD %u",
					a.ahn, a.pdn, q->qpn, q->pdn);
		if (a.port != q->port)
			return roce_ctl_error(reply, -EINVAL, "AH %u is for port %u, QP 0x%06x sends "
					"on port %u", a.ahn, a.port, q->qpn, q->port);
	} else {
		if (json_object_get(json_object_get(req, "remote"), "ip") == NULL)
			return roce_ctl_error(reply, -EINVAL, "a UD send needs ah or remote.ip");
		ret = make_ah(st, req, reply, "remote", q->pdn, q->port, tmp_ahn);
		if (ret < 0)
			return ret;
		a.ahn = *tmp_ahn;
	}
	wr->ud.ah = roce_dp_ah_get(st->dp, a.ahn);
	wr->ud.remote_qpn = rqpn;
	wr->ud.remote_qkey = qkey;
	return 0;
}

int
roced_arg_ud_job(struct roced_state *st, json_t *req, json_t *reply,
		const struct roce_dp_qp_info *q, bool sends, struct roce_ah **ah, uint32_t *rqpn,
		uint32_t *qkey)
{
	struct roce_dp_ah_info a;
	int ret, has_ah;

	*ah = NULL;
	*rqpn = 0;
	*qkey = ROCE_QKEY_CONTROLLED;
	if ((ret = roce_ctl_arg_u32(req, reply, "remote.qpn", rqpn, sends, 0, 0xFFFFFF)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "remote.qkey", qkey, false, 0,
				UINT32_MAX)) < 0 ||
			(has_ah = arg_ah(st, req, reply, sends, &a)) < 0)
		return ret < 0 ? ret : has_ah;
	if (has_ah != 1)
		return 0;
	if (a.pdn != q->pdn)
		return roce_ctl_error(reply, -EINVAL, "AH %u is in PD %u, QP 0x%06x in PD %u",
				a.ahn, a.pdn, q->qpn, q->pdn);
	if (a.port != q->port)
		return roce_ctl_error(reply, -EINVAL, "AH %u is for port %u, QP 0x%06x sends on "
				"port %u", a.ahn, a.port, q->qpn, q->port);
	*ah = roce_dp_ah_get(st->dp, a.ahn);
	return 0;
}

static int
post_common(struct roced_state *st, json_t *req, json_t *reply, enum roce_wr_opcode op)
{
	int atomic = op == ROCE_WR_ATOMIC_CMP_AND_SWP || op == ROCE_WR_ATOMIC_FETCH_AND_ADD;
	struct roce_send_wr wr = { .opcode = op, .num_sge = 1 };
	bool signaled = true, inl = false;
	struct roce_dp_qp_info q;
	struct roce_dp_mr_info m;
	uint64_t wr_id = 0;
	uint32_t count = 1;
	int ret;

	uint32_t tmp_ahn = 0;

	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0 ||
			(ret = roced_arg_local(st, req, reply, &wr.sg_list[0], atomic ? 8 : 64,
				&m)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "count", &count, false, 1,
				q.init.max_send_wr)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "wr_id", &wr_id, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "inline", &inl, false)) < 0 ||
			(ret = roce_ctl_arg_bool(req, reply, "signaled", &signaled, false)) < 0 ||
			(ret = post_args(req, reply, &wr)) < 0)
		return ret;
	if (qp_is_ud(&q) && op != ROCE_WR_SEND)
		return roce_ctl_error(reply, -EINVAL, "QP 0x%06x is UD: it only sends", q.qpn);
	if (!qp_is_ud(&q) && (json_object_get(req, "ah") != NULL ||
			json_object_get(req, "remote") != NULL ||
			json_object_get(req, "dscp") != NULL ||
			json_object_get(req, "hop_limit") != NULL))
		return roce_ctl_error(reply, -EINVAL, "ah, remote, dscp, hop_limit: a UD QP's "
				"(QP 0x%06x is RC: its address is its connection's)", q.qpn);
	if (qp_is_ud(&q) && (ret = ud_dest(st, req, reply, &q, &wr, &tmp_ahn)) < 0)
		return ret;
	wr.send_flags = signaled ? ROCE_SEND_SIGNALED : 0;
	if (inl) {
		/* Inline data is copied from the local address at post time. */
		wr.send_flags |= ROCE_SEND_INLINE;
		wr.sg_list[0].addr = (uintptr_t)m.addr + (wr.sg_list[0].addr - m.iova);
	}
	ret = post_copies(st, reply, q.qpn, &wr, NULL, wr_id, count);
	/* The WRs took their copy of the address: a one-off AH can go now. */
	if (tmp_ahn != 0)
		roce_dp_ah_destroy(st->dp, tmp_ahn);
	return ret;
}

#define POST_CMD(fn, op) \
int \
fn(void *arg, json_t *req, json_t *reply) \
{ \
	return post_common(arg, req, reply, op); \
}
POST_CMD(roced_cmd_post_write, ROCE_WR_RDMA_WRITE)
POST_CMD(roced_cmd_post_read, ROCE_WR_RDMA_READ)
POST_CMD(roced_cmd_post_send, ROCE_WR_SEND)
POST_CMD(roced_cmd_post_cas, ROCE_WR_ATOMIC_CMP_AND_SWP)
POST_CMD(roced_cmd_post_faa, ROCE_WR_ATOMIC_FETCH_AND_ADD)

int
roced_cmd_post_recv(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_recv_wr rwr = { .num_sge = 1 };
	struct roce_dp_qp_info q;
	struct roce_dp_mr_info m;
	uint64_t wr_id = 0;
	uint32_t count = 1;
	int ret;

	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0 ||
			(ret = roced_arg_local(st, req, reply, &rwr.sg_list[0], 4096, &m)) < 0 ||
			(ret = roce_ctl_arg_u64(req, reply, "wr_id", &wr_id, false, 0,
				UINT64_MAX)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "count", &count, false, 1,
				q.init.max_recv_wr)) < 0)
		return ret;
	return post_copies(st, reply, q.qpn, NULL, &rwr, wr_id, count);
}

static json_t *
wc_json(const struct roce_wc *wc)
{
	const char *op = wc->opcode == ROCE_WC_RECV ? "recv" :
		wc->opcode == ROCE_WC_RECV_RDMA_WITH_IMM ? "recv_rdma_imm" :
		(unsigned int)wc->opcode < RTE_DIM(opcode_names) ? opcode_names[wc->opcode] : "?";
	json_t *o = json_pack("{s:o, s:i, s:s, s:s, s:i}", "wr_id", roce_ctl_u64(wc->wr_id),
			"status", wc->status, "status_str", roce_wc_status_str(wc->status),
			"opcode", op, "byte_len", wc->byte_len);

	if (wc->wc_flags & ROCE_WC_WITH_IMM)
		json_object_set_new(o, "imm", roce_ctl_u64(wc->imm_data));
	if (wc->vendor_err != 0)
		json_object_set_new(o, "vendor_err", json_integer(wc->vendor_err));
	if (wc->wc_flags & ROCE_WC_GRH) {
		/* UD: the sender, as its GRH area tells it; byte_len counts those 40 bytes. */
		static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
		int v4 = memcmp(wc->sgid, mapped, sizeof(mapped)) == 0;

		json_object_set_new(o, "grh", json_true());
		json_object_set_new(o, "src_qp", json_integer(wc->src_qp));
		json_object_set_new(o, "qkey", roce_ctl_u64(wc->qkey));
		json_object_set_new(o, "src_ip", roced_ip_json(v4 ? wc->sgid + 12 : wc->sgid, !v4));
		json_object_set_new(o, "sgid", roced_ip_json(wc->sgid, 1));
		json_object_set_new(o, "network", json_string(
				wc->network_hdr_type == ROCE_NETWORK_IPV6 ? "ipv6" : "ipv4"));
		json_object_set_new(o, "slid", json_integer(wc->slid));
		json_object_set_new(o, "pkey_index", json_integer(wc->pkey_index));
	}
	return o;
}

int
roced_cmd_cq_poll(void *arg, json_t *req, json_t *reply)
{
	struct roced_state *st = arg;
	struct roce_wc wc[POLL_MAX];
	struct roce_dp_qp_info q;
	uint32_t max = 16;
	json_t *list;
	int ret, i, n;

	if ((ret = roced_arg_qp(st, req, reply, &q)) < 0 ||
			(ret = roce_ctl_arg_u32(req, reply, "max", &max, false, 1, POLL_MAX)) < 0)
		return ret;
	n = roce_dp_cq_poll(st->dp, q.qpn, wc, max);
	list = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(list, wc_json(&wc[i]));
	json_object_set_new(reply, "wc", list);
	return 0;
}
