/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_CM_MSG_H
#define ROCE_CM_MSG_H

/**
 * @file
 * The IB communication manager's messages (IBA vol. 1 chapter 12, management class 0x07,
 * class version 2) as structs of host-order fields, parsed from and built into a whole MAD.
 *
 * Field positions are IBA's tables 106-120, which Linux lays out in
 * include/rdma/ibta_vol1_c12.h: byte offsets count from the end of the MAD header, bit
 * offsets from a byte's most significant bit. Each message is described once, in a field
 * table in cm_msg.c, which both directions walk, so parse and build cannot disagree.
 *
 * Reserved bits are not kept: parsing ignores them and building writes zeros (as Linux
 * does: its messages are zeroed before the fields are set). Private data is always the whole
 * area the message has (the MAD is fixed size); the RDMA CM's header at its start is in
 * roce_cma.h.
 *
 * What Linux's ib_cm does with each attribute on a RoCE port is in roce_cm_linux_action().
 */

#include <stddef.h>
#include <stdint.h>

#include "roce_mad.h"

#define ROCE_CM_CLASS_VERSION 2	/**< the only one Linux registers for */

/** CM attribute IDs (IBA table 103). */
enum roce_cm_attr {
	ROCE_CM_ATTR_CLASS_PORT_INFO = 0x0001,
	ROCE_CM_ATTR_REQ = 0x0010,
	ROCE_CM_ATTR_MRA = 0x0011,
	ROCE_CM_ATTR_REJ = 0x0012,
	ROCE_CM_ATTR_REP = 0x0013,
	ROCE_CM_ATTR_RTU = 0x0014,
	ROCE_CM_ATTR_DREQ = 0x0015,
	ROCE_CM_ATTR_DREP = 0x0016,
	ROCE_CM_ATTR_SIDR_REQ = 0x0017,
	ROCE_CM_ATTR_SIDR_REP = 0x0018,
	ROCE_CM_ATTR_LAP = 0x0019,
	ROCE_CM_ATTR_APR = 0x001A,
};

/** @name Private data and information area lengths, bytes. @{ */
#define ROCE_CM_REQ_PDATA_LEN 92
#define ROCE_CM_MRA_PDATA_LEN 222
#define ROCE_CM_REJ_ARI_LEN 72
#define ROCE_CM_REJ_PDATA_LEN 148
#define ROCE_CM_REP_PDATA_LEN 196
#define ROCE_CM_RTU_PDATA_LEN 224
#define ROCE_CM_DREQ_PDATA_LEN 220
#define ROCE_CM_DREP_PDATA_LEN 224
#define ROCE_CM_LAP_PDATA_LEN 168
#define ROCE_CM_APR_INFO_LEN 72
#define ROCE_CM_APR_PDATA_LEN 148
#define ROCE_CM_SIDR_REQ_PDATA_LEN 216
#define ROCE_CM_SIDR_REP_INFO_LEN 72
#define ROCE_CM_SIDR_REP_PDATA_LEN 136
/** @} */

/** REQ transport service types (2 bits; XRC is 3 with extended transport type 1). */
enum roce_cm_transport {
	ROCE_CM_TRANSPORT_RC = 0,
	ROCE_CM_TRANSPORT_UC = 1,
	ROCE_CM_TRANSPORT_RD = 2,
	ROCE_CM_TRANSPORT_XRC = 3,
};

/** MRA's "message MRAed" and REJ's "message rejected" (2 bits; 3 is refused). */
enum roce_cm_msg_ref {
	ROCE_CM_MSG_REF_REQ = 0,
	ROCE_CM_MSG_REF_REP = 1,
	ROCE_CM_MSG_REF_OTHER = 2,	/**< LAP for an MRA */
};

/** REJ reasons (IBA table 112, Linux's enum ib_cm_rej_reason). */
enum roce_cm_rej_reason {
	ROCE_CM_REJ_NO_QP = 1,
	ROCE_CM_REJ_NO_EEC = 2,
	ROCE_CM_REJ_NO_RESOURCES = 3,
	ROCE_CM_REJ_TIMEOUT = 4,
	ROCE_CM_REJ_UNSUPPORTED = 5,
	ROCE_CM_REJ_INVALID_COMM_ID = 6,
	ROCE_CM_REJ_INVALID_COMM_INSTANCE = 7,
	ROCE_CM_REJ_INVALID_SERVICE_ID = 8,
	ROCE_CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	ROCE_CM_REJ_STALE_CONN = 10,
	ROCE_CM_REJ_RDC_NOT_EXIST = 11,
	ROCE_CM_REJ_INVALID_GID = 12,
	ROCE_CM_REJ_INVALID_LID = 13,
	ROCE_CM_REJ_INVALID_SL = 14,
	ROCE_CM_REJ_INVALID_TRAFFIC_CLASS = 15,
	ROCE_CM_REJ_INVALID_HOP_LIMIT = 16,
	ROCE_CM_REJ_INVALID_PACKET_RATE = 17,
	ROCE_CM_REJ_PORT_CM_REDIRECT = 24,
	ROCE_CM_REJ_PORT_REDIRECT = 25,
	ROCE_CM_REJ_INVALID_MTU = 26,
	ROCE_CM_REJ_INSUFFICIENT_RESP_RESOURCES = 27,
	ROCE_CM_REJ_CONSUMER_DEFINED = 28,
	ROCE_CM_REJ_INVALID_RNR_RETRY = 29,
	ROCE_CM_REJ_DUPLICATE_LOCAL_COMM_ID = 30,
	ROCE_CM_REJ_INVALID_CLASS_VERSION = 31,
	ROCE_CM_REJ_INVALID_FLOW_LABEL = 32,
	ROCE_CM_REJ_INVALID_ALT_FLOW_LABEL = 33,
};

/** SIDR_REP status (IBA table 121, Linux's enum ib_cm_sidr_status). */
enum roce_cm_sidr_status {
	ROCE_CM_SIDR_SUCCESS = 0,
	ROCE_CM_SIDR_UNSUPPORTED = 1,	/**< no listener for the service ID */
	ROCE_CM_SIDR_REJECT = 2,
	ROCE_CM_SIDR_NO_QP = 3,
	ROCE_CM_SIDR_REDIRECT = 4,
	ROCE_CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/**
 * A path of a REQ (primary or alternate). On RoCE the LIDs are 0xFFFF (permissive) for the
 * primary path and the GIDs are the ports' addresses, IPv4 ones IPv4-mapped (::ffff:a.b.c.d).
 */
struct roce_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];		/**< network order */
	uint8_t remote_gid[16];		/**< network order */
	uint32_t flow_label;		/**< 20 bits */
	uint8_t packet_rate;		/**< 6 bits, IB rate code */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;			/**< 4 bits */
	uint8_t subnet_local;		/**< 1 bit */
	uint8_t local_ack_timeout;	/**< 5 bits: 4.096 us * 2^n */
};

/** REQ: connect request (IBA table 106). */
struct roce_cm_req {
	uint32_t local_comm_id;
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn;			/**< 24 bits */
	uint8_t responder_resources;		/**< RDMA READ/atomics we accept in flight */
	uint32_t local_eecn;			/**< 24 bits */
	uint8_t initiator_depth;		/**< RDMA READ/atomics we issue in flight */
	uint32_t remote_eecn;			/**< 24 bits */
	uint8_t remote_cm_response_timeout;	/**< 5 bits */
	uint8_t transport_type;			/**< 2 bits, enum roce_cm_transport */
	uint8_t e2e_flow_control;		/**< 1 bit */
	uint32_t starting_psn;			/**< 24 bits */
	uint8_t local_cm_response_timeout;	/**< 5 bits */
	uint8_t retry_count;			/**< 3 bits */
	uint16_t pkey;
	uint8_t path_mtu;			/**< 4 bits, IB MTU code (3: 1024) */
	uint8_t rdc_exists;			/**< 1 bit */
	uint8_t rnr_retry_count;		/**< 3 bits */
	uint8_t max_cm_retries;			/**< 4 bits */
	uint8_t srq;				/**< 1 bit */
	uint8_t ext_transport_type;		/**< 3 bits */
	struct roce_cm_path primary;
	struct roce_cm_path alternate;
	uint8_t sap_supported;			/**< 1 bit */
	uint8_t private_data[ROCE_CM_REQ_PDATA_LEN];
};

/** MRA: message receipt acknowledgement (IBA table 107). */
struct roce_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_mraed;		/**< 2 bits, enum roce_cm_msg_ref */
	uint8_t service_timeout;	/**< 5 bits */
	uint8_t private_data[ROCE_CM_MRA_PDATA_LEN];
};

/** REJ: reject (IBA table 108). */
struct roce_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_rejected;	/**< 2 bits, enum roce_cm_msg_ref */
	uint8_t ari_length;		/**< 7 bits, at most ROCE_CM_REJ_ARI_LEN */
	uint16_t reason;		/**< enum roce_cm_rej_reason */
	uint8_t ari[ROCE_CM_REJ_ARI_LEN];
	uint8_t private_data[ROCE_CM_REJ_PDATA_LEN];
};

/** REP: connect reply (IBA table 110). */
struct roce_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn;		/**< 24 bits */
	uint32_t local_eecn;		/**< 24 bits */
	uint32_t starting_psn;		/**< 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	/**< 5 bits */
	uint8_t failover_accepted;	/**< 2 bits */
	uint8_t e2e_flow_control;	/**< 1 bit */
	uint8_t rnr_retry_count;	/**< 3 bits */
	uint8_t srq;			/**< 1 bit */
	uint64_t local_ca_guid;
	uint8_t private_data[ROCE_CM_REP_PDATA_LEN];
};

/** RTU: ready to use (IBA table 111). */
struct roce_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[ROCE_CM_RTU_PDATA_LEN];
};

/** DREQ: disconnect request (IBA table 112). */
struct roce_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn;	/**< 24 bits: the receiver's QPN */
	uint8_t private_data[ROCE_CM_DREQ_PDATA_LEN];
};

/** DREP: disconnect reply (IBA table 113). */
struct roce_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[ROCE_CM_DREP_PDATA_LEN];
};

/** LAP: load alternate path (IBA table 115); Linux drops it on RoCE. */
struct roce_cm_lap {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn;		/**< 24 bits */
	uint8_t remote_cm_response_timeout;	/**< 5 bits */
	uint16_t alt_local_lid;
	uint16_t alt_remote_lid;
	uint8_t alt_local_gid[16];
	uint8_t alt_remote_gid[16];
	uint32_t alt_flow_label;		/**< 20 bits */
	uint8_t alt_traffic_class;
	uint8_t alt_hop_limit;
	uint8_t alt_packet_rate;		/**< 6 bits */
	uint8_t alt_sl;				/**< 4 bits */
	uint8_t alt_subnet_local;		/**< 1 bit */
	uint8_t alt_local_ack_timeout;		/**< 5 bits */
	uint8_t private_data[ROCE_CM_LAP_PDATA_LEN];
};

/** APR: alternate path response (IBA table 116); Linux drops it on RoCE. */
struct roce_cm_apr {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t info_length;		/**< at most ROCE_CM_APR_INFO_LEN */
	uint8_t ap_status;
	uint8_t info[ROCE_CM_APR_INFO_LEN];
	uint8_t private_data[ROCE_CM_APR_PDATA_LEN];
};

/** SIDR_REQ: service ID resolution request (IBA table 119). */
struct roce_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[ROCE_CM_SIDR_REQ_PDATA_LEN];
};

/** SIDR_REP: service ID resolution reply (IBA table 120). */
struct roce_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;			/**< enum roce_cm_sidr_status */
	uint8_t info_length;		/**< at most ROCE_CM_SIDR_REP_INFO_LEN */
	uint32_t qpn;			/**< 24 bits */
	uint64_t service_id;
	uint32_t qkey;
	uint8_t info[ROCE_CM_SIDR_REP_INFO_LEN];
	uint8_t private_data[ROCE_CM_SIDR_REP_PDATA_LEN];
};

/** A CM MAD: the header, and the message its attribute ID names. */
struct roce_cm_msg {
	struct roce_mad_hdr hdr;	/**< hdr.attr_id selects the member of the union */
	union {
		struct roce_cm_req req;
		struct roce_cm_mra mra;
		struct roce_cm_rej rej;
		struct roce_cm_rep rep;
		struct roce_cm_rtu rtu;
		struct roce_cm_dreq dreq;
		struct roce_cm_drep drep;
		struct roce_cm_lap lap;
		struct roce_cm_apr apr;
		struct roce_cm_sidr_req sidr_req;
		struct roce_cm_sidr_rep sidr_rep;
	};
};

/** Why roce_cm_parse() refused a MAD: one counter each for the caller. */
enum roce_cm_verdict {
	ROCE_CM_OK = 0,
	ROCE_CM_BAD_LEN,		/**< not ROCE_MAD_SIZE bytes */
	ROCE_CM_BAD_BASE_VERSION,	/**< not ROCE_MAD_BASE_VERSION */
	ROCE_CM_BAD_CLASS,		/**< not ROCE_MAD_CLASS_CM */
	ROCE_CM_BAD_CLASS_VERSION,	/**< not ROCE_CM_CLASS_VERSION */
	ROCE_CM_BAD_METHOD,		/**< not Send() */
	ROCE_CM_BAD_ATTR,		/**< an attribute ID with no message */
	ROCE_CM_BAD_FIELD,		/**< a field out of its range (e.g. an ARI length over 72) */
	ROCE_CM_VERDICT_MAX
};

/**
 * What Linux's ib_cm (drivers/infiniband/core/cm.c) does with a message it received on a RoCE
 * port, before any connection state is looked at.
 */
enum roce_cm_linux_action {
	/** The connection state machine handles it. */
	ROCE_CM_ACT_HANDLE = 0,
	/** Dropped, nothing sent: LAP and APR ("alternate path messages are not supported for
	 *  RoCE link layer"), ClassPortInfo and unknown attributes (cm_recv_handler frees them). */
	ROCE_CM_ACT_DROP,
	/** SIDR_REQ: a SIDR_REP with the request ID answers it; with no listener for the service
	 *  ID, status ROCE_CM_SIDR_UNSUPPORTED (cm_sidr_req_handler). */
	ROCE_CM_ACT_SIDR_REP,
	/** SIDR_REP: matched against our SIDR_REQs by request ID, dropped when none is pending. */
	ROCE_CM_ACT_MATCH_SIDR,
};

/**
 * Parse a whole CM MAD.
 * @param len  must be ROCE_MAD_SIZE.
 * @return ROCE_CM_OK with @msg filled, or the reason for refusing it (@msg is then
 *   undefined).
 */
enum roce_cm_verdict roce_cm_parse(struct roce_cm_msg *msg, const void *buf, size_t len);

/**
 * Build @msg into a whole MAD: ROCE_MAD_SIZE bytes at @buf, reserved bits zero.
 * @return ROCE_MAD_SIZE; -ENOSPC when @cap is below it; -EINVAL for an attribute ID with no
 *   message or a header that is not the CM's (base version, class, class version); -ERANGE
 *   when a field does not fit its width or range.
 */
int roce_cm_build(const struct roce_cm_msg *msg, void *buf, size_t cap);

/**
 * Fill the MAD header of a CM message: base version 1, class 0x07, class version 2,
 * method Send(), status 0, @tid, @attr_id, attribute modifier 0 (Linux's cm_format_mad_hdr).
 */
void roce_cm_hdr_init(struct roce_mad_hdr *h, enum roce_cm_attr attr_id, uint64_t tid);

/** @return Linux's action for an attribute ID (ROCE_CM_ACT_DROP for unknown ones). */
enum roce_cm_linux_action roce_cm_linux_action(uint16_t attr_id);

/** @return "REQ", "DREP", ... or NULL for an attribute ID with no message. */
const char *roce_cm_attr_name(uint16_t attr_id);

/** @return a verdict's counter name ("bad_len", ...), or NULL when out of range. */
const char *roce_cm_verdict_name(enum roce_cm_verdict v);

#endif /* ROCE_CM_MSG_H */
