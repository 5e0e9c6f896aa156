-- SPDX-License-Identifier: BSD-3-Clause
--
-- rocedp-sr.lua: Wireshark/tshark dissector for rocedp's selective-repeat opcodes (BTH
-- opcodes 0xC0-0xD7 of the manufacturer range, doc/selective-repeat.md): SR SEND and WRITE
-- packets with their RETH, ImmDt, IETH and SRETH, and SR ACKs with their AETH and SACK
-- bitmap.
--
--   tshark -X lua_script:tools/wireshark/rocedp-sr.lua -r capture.pcapng
--   wireshark -X lua_script:tools/wireshark/rocedp-sr.lua capture.pcapng
--   (or copy it to ~/.local/lib/wireshark/plugins/)
--
-- How it hooks in: Wireshark's InfiniBand dissector (RRoCE on UDP 4791, or "Decode As
-- infiniband") decodes the BTH of every packet; for an opcode it does not know it offers no
-- table or heuristic to call (the "infiniband.payload" heuristics only see payloads of
-- opcodes it knows): it shows "Unknown OpCode" and the rest as vendor-specific data. This
-- script is a post-dissector: after the built-in one has run, it finds the BTH through the
-- built-in's infiniband.bth.opcode field, and for a rocedp SR opcode adds a "rocedp Selective
-- Repeat" tree over the same bytes and names the packet in the Info column. The BTH stays the
-- built-in's (infiniband.bth.*), and every other packet, RC and UD alike, is left to it
-- untouched (infiniband.reth.*, infiniband.aeth.*). The SR extension headers are this
-- script's fields (rocedp_sr.*): the built-in dissector cannot be asked to parse them.
--
-- Fields: rocedp_sr.opcode, .reth.va, .reth.r_key, .reth.dmalen, .immdt, .ieth.r_key,
-- .sreth.reserved, .sreth.rsn, .sreth.offset, .aeth.syndrome, .aeth.type, .aeth.value,
-- .aeth.msn, .sack.cumulative_psn, .sack.first_missing, .sack.count, .sack.highest,
-- .sack.ranges, .sack.bitmap, .payload_len, .payload, .icrc, .truncated.

local sr = Proto("rocedp_sr", "rocedp Selective Repeat")

local RETH, IMMDT, IETH, SRETH, AETH = 1, 2, 3, 4, 5
local HLEN = { [RETH] = 16, [IMMDT] = 4, [IETH] = 4, [SRETH] = 8, [AETH] = 4 }

-- opcode -> name, headers after the BTH in wire order (lib/wire/opcode.c)
local OPS = {
	[0xC0] = { "SR_SEND_FIRST", "Send First", { SRETH } },
	[0xC1] = { "SR_SEND_MIDDLE", "Send Middle", { SRETH } },
	[0xC2] = { "SR_SEND_LAST", "Send Last", { SRETH } },
	[0xC3] = { "SR_SEND_LAST_IMM", "Send Last with Immediate", { IMMDT, SRETH } },
	[0xC4] = { "SR_SEND_ONLY", "Send Only", { SRETH } },
	[0xC5] = { "SR_SEND_ONLY_IMM", "Send Only with Immediate", { IMMDT, SRETH } },
	[0xC6] = { "SR_WRITE_FIRST", "RDMA Write First", { RETH, SRETH } },
	[0xC7] = { "SR_WRITE_MIDDLE", "RDMA Write Middle", { RETH, SRETH } },
	[0xC8] = { "SR_WRITE_LAST", "RDMA Write Last", { RETH, SRETH } },
	[0xC9] = { "SR_WRITE_LAST_IMM", "RDMA Write Last with Immediate", { RETH, IMMDT, SRETH } },
	[0xCA] = { "SR_WRITE_ONLY", "RDMA Write Only", { RETH, SRETH } },
	[0xCB] = { "SR_WRITE_ONLY_IMM", "RDMA Write Only with Immediate", { RETH, IMMDT, SRETH } },
	[0xD1] = { "SR_ACK", "Acknowledge (SACK)", { AETH } },
	[0xD6] = { "SR_SEND_LAST_INV", "Send Last with Invalidate", { IETH, SRETH } },
	[0xD7] = { "SR_SEND_ONLY_INV", "Send Only with Invalidate", { IETH, SRETH } },
}

local opnames = {}
for op, d in pairs(OPS) do
	opnames[op] = d[1]
end

local aeth_types = { [0] = "ACK", [1] = "RNR NAK", [2] = "Reserved", [3] = "NAK" }

local pf = {
	opcode = ProtoField.uint8("rocedp_sr.opcode", "Opcode", base.HEX, opnames),
	reth = ProtoField.none("rocedp_sr.reth", "RETH - RDMA Extended Transport Header"),
	va = ProtoField.uint64("rocedp_sr.reth.va", "Virtual Address (message start)", base.HEX),
	rkey = ProtoField.uint32("rocedp_sr.reth.r_key", "Remote Key", base.HEX),
	dmalen = ProtoField.uint32("rocedp_sr.reth.dmalen", "DMA Length (whole message)",
		base.DEC),
	immdt = ProtoField.uint32("rocedp_sr.immdt", "Immediate Data", base.HEX),
	ieth = ProtoField.uint32("rocedp_sr.ieth.r_key", "RKey to Invalidate", base.HEX),
	sreth = ProtoField.none("rocedp_sr.sreth",
		"SRETH - Selective Repeat Extended Transport Header"),
	sreth_rsv = ProtoField.uint8("rocedp_sr.sreth.reserved", "Reserved", base.HEX),
	rsn = ProtoField.uint24("rocedp_sr.sreth.rsn", "Receive WQE Sequence Number", base.DEC),
	offset = ProtoField.uint32("rocedp_sr.sreth.offset", "Payload Offset in the Message",
		base.DEC),
	aeth = ProtoField.none("rocedp_sr.aeth", "AETH - ACK Extended Transport Header"),
	syndrome = ProtoField.uint8("rocedp_sr.aeth.syndrome", "Syndrome", base.HEX),
	aeth_type = ProtoField.uint8("rocedp_sr.aeth.type", "Type", base.DEC, aeth_types, 0x60),
	aeth_value = ProtoField.uint8("rocedp_sr.aeth.value", "Credit Count / Timer / Code",
		base.DEC, nil, 0x1F),
	msn = ProtoField.uint24("rocedp_sr.aeth.msn", "Message Sequence Number", base.DEC),
	sack = ProtoField.none("rocedp_sr.sack", "SACK"),
	cum = ProtoField.uint24("rocedp_sr.sack.cumulative_psn",
		"Cumulative PSN (last received in order)", base.DEC),
	missing = ProtoField.uint24("rocedp_sr.sack.first_missing", "First Missing PSN", base.DEC),
	sack_count = ProtoField.uint32("rocedp_sr.sack.count",
		"Number of PSNs Received Past the Hole", base.DEC),
	highest = ProtoField.uint24("rocedp_sr.sack.highest", "Highest PSN Received", base.DEC),
	ranges = ProtoField.string("rocedp_sr.sack.ranges", "PSNs Received Past the Hole"),
	bitmap = ProtoField.bytes("rocedp_sr.sack.bitmap", "Bitmap (bit i: PSN cumulative+1+i)"),
	payload_len = ProtoField.uint32("rocedp_sr.payload_len", "Payload Length", base.DEC),
	payload = ProtoField.bytes("rocedp_sr.payload", "Payload"),
	icrc = ProtoField.uint32("rocedp_sr.icrc", "Invariant CRC", base.HEX),
	truncated = ProtoField.bool("rocedp_sr.truncated", "Cut by the Snap Length"),
}
sr.fields = pf

local ex = {
	short = ProtoExpert.new("rocedp_sr.short", "Shorter than the opcode's headers and ICRC",
		expert.group.MALFORMED, expert.severity.ERROR),
	unknown = ProtoExpert.new("rocedp_sr.unknown_opcode",
		"Opcode in rocedp's SR range that rocedp does not use",
		expert.group.PROTOCOL, expert.severity.WARN),
	bitmap = ProtoExpert.new("rocedp_sr.bad_bitmap",
		"SACK bitmap not a multiple of 4 bytes, longer than 128, or with bit 0 set",
		expert.group.PROTOCOL, expert.severity.WARN),
	cut = ProtoExpert.new("rocedp_sr.cut", "Cut by the snap length: decoded as far as captured",
		expert.group.SEQUENCE, expert.severity.NOTE),
}
sr.experts = { ex.short, ex.unknown, ex.bitmap, ex.cut }

local f_opcode = Field.new("infiniband.bth.opcode")
local f_udp_src = Field.new("udp.srcport")
local f_udp_len = Field.new("udp.length")

local function psn_add(a, b)
	return (a + b) % 0x1000000
end

-- "5-7, 9" from the bitmap's set bits, PSNs relative to the cumulative point.
local function sack_ranges(cum, bits)
	local out, n, hi, first, last = {}, 0, nil, nil, nil
	local function flush()
		if first == nil then
			return
		end
		local a, b = psn_add(cum, first + 1), psn_add(cum, last + 1)
		out[#out + 1] = a == b and tostring(a) or (a .. "-" .. b)
	end
	for i = 0, bits:len() * 8 - 1 do
		local byte = bits:get_index(math.floor(i / 8))
		if math.floor(byte / 2 ^ (i % 8)) % 2 == 1 then
			n = n + 1
			hi = i
			if last ~= nil and last == i - 1 then
				last = i
			else
				flush()
				first, last = i, i
			end
		end
	end
	flush()
	return table.concat(out, ", "), n, hi
end

function sr.dissector(tvb, pinfo, tree)
	local ops = { f_opcode() }
	if #ops == 0 then
		return
	end
	local opfi = ops[1]
	local op = opfi.value
	if op < 0xC0 or op > 0xD7 then
		return
	end
	local bth = opfi.offset
	-- The UDP header in front of this BTH gives where the packet ends (frames may be padded).
	local udp_off, udp_len
	local srcs, lens = { f_udp_src() }, { f_udp_len() }
	for i = #srcs, 1, -1 do
		if srcs[i].offset < bth and lens[i] ~= nil then
			udp_off, udp_len = srcs[i].offset, lens[i].value
			break
		end
	end
	if udp_off == nil then
		return
	end
	local desc = OPS[op]
	local name = desc and desc[1] or string.format("SR_0x%02X", op)
	local stop = udp_off + udp_len                 -- end of the RoCE packet (ICRC included)
	local have = tvb:len()                         -- captured bytes
	local cut = have < stop
	local t = tree:add(sr, tvb(bth, math.min(stop, have) - bth))
	t:append_text(": " .. name)
	t:add(pf.opcode, tvb(bth, 1))
	local info = "rocedp SR " .. (desc and desc[2] or string.format("opcode 0x%02X", op))
	if desc == nil then
		t:add_proto_expert_info(ex.unknown)
		pinfo.cols.info:set(info)
		return
	end
	local bth_b1 = tvb(bth + 1, 1):uint()
	local pad = math.floor(bth_b1 / 16) % 4
	local psn = tvb(bth + 9, 3):uint()
	local qpn = tvb(bth + 5, 3):uint()
	local off = bth + 12
	local need = 12 + 4
	for _, h in ipairs(desc[3]) do
		need = need + HLEN[h]
	end
	if stop - bth < need then
		t:add_proto_expert_info(ex.short)
		pinfo.cols.info:set(info .. " [malformed]")
		return
	end
	if cut then
		t:add(pf.truncated, true):set_generated()
		t:add_proto_expert_info(ex.cut)
	end
	local extra = ""
	for _, h in ipairs(desc[3]) do
		if off + HLEN[h] > have then
			break
		end
		if h == RETH then
			local r = t:add(pf.reth, tvb(off, 16))
			r:add(pf.va, tvb(off, 8))
			r:add(pf.rkey, tvb(off + 8, 4))
			r:add(pf.dmalen, tvb(off + 12, 4))
		elseif h == IMMDT then
			t:add(pf.immdt, tvb(off, 4))
		elseif h == IETH then
			t:add(pf.ieth, tvb(off, 4))
		elseif h == SRETH then
			local s = t:add(pf.sreth, tvb(off, 8))
			s:add(pf.sreth_rsv, tvb(off, 1))
			s:add(pf.rsn, tvb(off + 1, 3))
			s:add(pf.offset, tvb(off + 4, 4))
			extra = string.format(" RSN=%d Off=%d", tvb(off + 1, 3):uint(),
				tvb(off + 4, 4):uint())
		elseif h == AETH then
			local a = t:add(pf.aeth, tvb(off, 4))
			a:add(pf.syndrome, tvb(off, 1))
			a:add(pf.aeth_type, tvb(off, 1))
			a:add(pf.aeth_value, tvb(off, 1))
			a:add(pf.msn, tvb(off + 1, 3))
			local syn = tvb(off, 1):uint()
			extra = string.format(" %s MSN=%d", aeth_types[math.floor(syn / 32) % 4],
				tvb(off + 1, 3):uint())
		end
		off = off + HLEN[h]
	end
	local plen = stop - 4 - pad - (bth + need - 4)
	if plen < 0 then
		plen = 0
	end
	t:add(pf.payload_len, plen):set_generated()
	if op == 0xD1 then
		-- SR ACK: the payload is the SACK bitmap; the BTH PSN is the cumulative point.
		local k = t:add(pf.sack, tvb(off, math.max(0, math.min(plen, have - off))))
		k:add(pf.cum, psn):set_generated()
		k:add(pf.missing, psn_add(psn, 1)):set_generated()
		if plen % 4 ~= 0 or plen > 128 then
			k:add_proto_expert_info(ex.bitmap)
		end
		if plen > 0 and off + plen <= have then
			local bits = tvb(off, plen):bytes()
			local ranges, n, hi = sack_ranges(psn, bits)
			if bits:get_index(0) % 2 == 1 then
				k:add_proto_expert_info(ex.bitmap)
			end
			k:add(pf.bitmap, tvb(off, plen))
			k:add(pf.sack_count, n):set_generated()
			if hi ~= nil then
				k:add(pf.highest, psn_add(psn, hi + 1)):set_generated()
				k:add(pf.ranges, ranges):set_generated()
				extra = extra .. " SACK=" .. ranges
			end
		elseif plen == 0 then
			k:add(pf.sack_count, 0):set_generated()
		end
		extra = string.format(" CumPSN=%d", psn) .. extra
	elseif plen > 0 and off < have then
		t:add(pf.payload, tvb(off, math.min(plen, have - off)))
	end
	if stop <= have then
		t:add(pf.icrc, tvb(stop - 4, 4))
	end
	pinfo.cols.info:set(string.format("%s QP=0x%06x PSN=%d%s", info, qpn, psn, extra))
end

register_postdissector(sr)
