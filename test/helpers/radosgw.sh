#!/usr/bin/env bash
# A throw-away single-node Ceph cluster with one S3 gateway (radosgw) on 127.0.0.1, for the S3 storage
# backend's tests and bench:s3 (issue 25). Debian's packages: radosgw ceph-mon ceph-osd
# (--no-install-recommends). Everything (config, monitor, OSD block file, logs, sockets) lives under one
# scratch directory, so nothing is written under /var/lib/ceph or /var/log/ceph.
#
#   radosgw.sh start [DIR]        make and start the cluster; prints `export NAME=value` lines:
#                                 KVC_S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION,
#                                 KVC_RADOSGW_CONF (for radosgw-admin), KVC_RADOSGW_DIR
#   radosgw.sh gateway DIR PORT   one more gateway on PORT over the same cluster (a test kills it);
#                                 prints its pid
#   radosgw.sh tls-gateway DIR PORT CERT KEY
#                                 one more gateway serving HTTPS on PORT with the PEM certificate
#                                 chain CERT and key KEY (the TLS test makes them with openssl);
#                                 prints its pid
#   radosgw.sh stop [DIR]         stops every daemon started under DIR and removes DIR
#
# Why these settings: auth none keeps the scratch cluster keyless, but without `ms mon client mode =
# crc` radosgw retries an auth error forever; pool size 1 (and `mon allow pool size one`) because
# there is one OSD; chooseleaf type 0 so placement groups map to OSDs, not hosts; 8 placement groups
# per pool (the monitor refuses more PGs per OSD than its limit otherwise); a bluestore OSD on a
# sparse file (memstore keeps everything in RAM and caps at 1 GiB); the usage log flushed every second,
# so a test reads the server's own byte counts (radosgw-admin usage show) right after a run.
set -euo pipefail

DEFAULT_DIR=/tmp/kvc-radosgw
ACCESS_KEY=kvcbenchaccesskey0001
SECRET_KEY=kvcbenchsecretkey0000000000000000000001
PORT=${KVC_RADOSGW_PORT:-7480}
# The monitor's port: another cluster on this host (another checkout's tests) keeps 6789.
MON_PORT=${KVC_RADOSGW_MON_PORT:-6789}
OSD_GB=${KVC_RADOSGW_OSD_GB:-20}

die() {
  echo "radosgw.sh: $*" >&2
  exit 1
}

write_conf() {
  local dir=$1 fsid=$2
  cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$MON_PORT
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon data = $dir/mon/\$cluster-\$id
osd data = $dir/osd/\$cluster-\$id
osd objectstore = bluestore
bluestore block path = $dir/osd/block
bluestore block create = true
bluestore block size = $((OSD_GB * 1024 * 1024 * 1024))
bluestore block db create = false
bluestore block wal create = false
osd max object name len = 460
osd max object namespace len = 64
rgw data = $dir/rgw
rgw enable usage log = true
rgw usage log tick interval = 1
rgw usage log flush threshold = 1
[client.rgw.main]
rgw frontends = beast endpoint=127.0.0.1:$PORT
EOF
}

wait_for() {
  local what=$1 tries=$2
  shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  die "$what did not come up (logs in $DIR/log)"
}

start() {
  command -v radosgw >/dev/null && command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null ||
    die 'radosgw, ceph-mon and ceph-osd are needed: apt-get install --no-install-recommends radosgw ceph-mon ceph-osd'
  [ -e "$DIR" ] && die "$DIR exists: stop the earlier cluster first (radosgw.sh stop $DIR)"
  # A monitor still listening (an earlier cluster not yet gone) would hand the new OSD a wrong fsid.
  for _ in $(seq 40); do ss -ltn 2>/dev/null | grep -Eq ":($MON_PORT|$PORT) " || break; sleep 0.25; done
  ss -ltn 2>/dev/null | grep -Eq ":($MON_PORT|$PORT) " && die "port $MON_PORT or $PORT is in use: another cluster is running (KVC_RADOSGW_MON_PORT, KVC_RADOSGW_PORT choose others)"
  mkdir -p "$DIR"/{run,log,mon,osd/ceph-0,rgw}
  local fsid conf
  fsid=$(cat /proc/sys/kernel/random/uuid)
  conf=$DIR/ceph.conf
  write_conf "$DIR" "$fsid"
  # Monitor: a one-monitor map and an empty store.
  monmaptool --create --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
  ceph-authtool --create-keyring "$DIR/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-mon -c "$conf" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/mon.keyring"
  ceph-mon -c "$conf" -i a
  wait_for 'the monitor' 60 ceph -c "$conf" --connect-timeout 2 mon stat
  # One bluestore OSD on a sparse file.
  local uuid
  uuid=$(cat /proc/sys/kernel/random/uuid)
  ceph -c "$conf" osd new "$uuid" 0 >/dev/null
  ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$uuid" >"$DIR/log/osd-mkfs.out" 2>&1 || die "OSD mkfs failed: $(tail -3 "$DIR/log/osd-mkfs.out")"
  ceph-osd -c "$conf" -i 0
  wait_for 'the OSD' 60 bash -c "ceph -c '$conf' osd stat | grep -q '1 up'"
  # The gateway: radosgw daemonises once it has reached the cluster.
  radosgw -c "$conf" -n client.rgw.main
  wait_for 'radosgw' 120 curl -fsS "http://127.0.0.1:$PORT/"
  radosgw-admin -c "$conf" user create --uid kvc-bench --display-name 'kvc-bench tests' \
    --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" >/dev/null
  echo "export KVC_S3_ENDPOINT=http://127.0.0.1:$PORT"
  echo "export AWS_ACCESS_KEY_ID=$ACCESS_KEY"
  echo "export AWS_SECRET_ACCESS_KEY=$SECRET_KEY"
  echo "export AWS_REGION=us-east-1"
  echo "export KVC_RADOSGW_CONF=$conf"
  echo "export KVC_RADOSGW_DIR=$DIR"
}

gateway() {
  local port=$1 name="rgw.p$1"
  local conf=$DIR/ceph.conf
  [ -f "$conf" ] || die "no cluster under $DIR"
  radosgw -c "$conf" -n "client.$name" --rgw-frontends "beast endpoint=127.0.0.1:$port" --pid-file "$DIR/run/client.$name.pid"
  wait_for "the gateway on $port" 120 curl -fsS "http://127.0.0.1:$port/"
  cat "$DIR/run/client.$name.pid"
}

tls_gateway() {
  local port=$1 cert=$2 key=$3 name="rgw.tls$1"
  local conf=$DIR/ceph.conf
  [ -f "$conf" ] || die "no cluster under $DIR"
  [ -f "$cert" ] && [ -f "$key" ] || die "certificate $cert or key $key missing"
  radosgw -c "$conf" -n "client.$name" --rgw-frontends "beast ssl_endpoint=127.0.0.1:$port ssl_certificate=$cert ssl_private_key=$key" \
    --pid-file "$DIR/run/client.$name.pid"
  # Up when it answers TLS at all: the certificate is the test's business, not this check's.
  wait_for "the TLS gateway on $port" 120 curl -ksS "https://127.0.0.1:$port/"
  cat "$DIR/run/client.$name.pid"
}

stop() {
  [ -d "$DIR" ] || return 0
  local pid
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    kill "$pid" 2>/dev/null || true
  done
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] || continue
    pid=$(cat "$f")
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$DIR"
}

case "${1:-}" in
start)
  DIR=${2:-$DEFAULT_DIR}
  start
  ;;
gateway)
  DIR=${2:?DIR}
  gateway "${3:?PORT}"
  ;;
tls-gateway)
  DIR=${2:?DIR}
  tls_gateway "${3:?PORT}" "${4:?CERT}" "${5:?KEY}"
  ;;
stop)
  DIR=${2:-$DEFAULT_DIR}
  stop
  ;;
*) die 'usage: radosgw.sh start [DIR] | gateway DIR PORT | tls-gateway DIR PORT CERT KEY | stop [DIR]' ;;
esac
