#!/bin/bash
# run-one.sh NAME WHO TOOL "ARGS"   WHO = new-client | new-server | both-new
# NEWDIR=p628 picks the 6.28 build (default p629); EXTRA_NEW adds options on the new side only.
# vm0 (10.99.0.1) is always the server, vm1 (10.99.0.2) the client.
set -u
NAME=$1 WHO=$2 TOOL=$3 ARGS=$4
H=/work/shared/rxe-vm
OUT=/var/tmp/perftest-new/rec
NEWDIR=${NEWDIR:-p629}
NEW="LD_LIBRARY_PATH=/host/p629 /host/$NEWDIR/$TOOL ${EXTRA_NEW:-}"
OLD="$TOOL"
case $WHO in new-client) SRV=$OLD; CLI=$NEW;; new-server) SRV=$NEW; CLI=$OLD;; both-new) SRV=$NEW; CLI=$NEW;; esac
tcpdump -i br-rxe -s 0 -U -w $OUT/$NAME.pcap 'tcp port 18515' 2>/dev/null & T1=$!
tcpdump -i br-rxe -s 96 -U -w $OUT/$NAME.roce.pcap 'udp port 4791' 2>/dev/null & T2=$!
sleep 1
echo "server (vm0): $SRV $ARGS" > $OUT/$NAME.server.txt
echo "client (vm1): $CLI $ARGS 10.99.0.1" > $OUT/$NAME.client.txt
$H/vm-run.sh -T 120 vm0 "$SRV $ARGS" >> $OUT/$NAME.server.txt 2>&1 & S=$!
sleep 3
$H/vm-run.sh -T 120 vm1 "$CLI $ARGS 10.99.0.1" >> $OUT/$NAME.client.txt 2>&1; CRC=$?
wait $S; SRC=$?
sleep 1
kill $T1 $T2; wait $T1 $T2 2>/dev/null
echo "$NAME: rc client=$CRC server=$SRC" | tee -a $OUT/run.log
/usr/bin/python3 /work/shared/captures/perftest-oob/oobflow.py $OUT/$NAME.pcap $OUT/$NAME.flow.json > $OUT/$NAME.flow.txt
sed -n 3,5p $OUT/$NAME.flow.txt
