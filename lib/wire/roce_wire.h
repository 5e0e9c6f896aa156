/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef ROCE_WIRE_H
#define ROCE_WIRE_H

/**
 * @file
 * The RoCEv2 wire format: header layouts, opcode table, classifier, builders and ICRC.
 */

#include "roce_build.h"
#include "roce_classify.h"
#include "roce_grh.h"
#include "roce_hdr.h"
#include "roce_icrc.h"
#include "roce_opcode.h"
#include "roce_pkt.h"

#endif /* ROCE_WIRE_H */
