#!/usr/bin/env bash
# The lldpd lab: network namespaces joined by veth pairs, one lldpd per namespace.
#
#   leaf-1 (swp1 swp2 swp3)     leaf-2 (swp1 swp2)     leaf-3 (swp1 swp2)
#     |      |      |              |       |              |       |
#    h1     h2     h6.rail0       h3     h5.rail0        h4     h5.rail1
#
# h5 has a rail on leaf-2 and on leaf-3 and so bridges them; h6's rail1 goes to a management
# switch (oob-1) on a NIC named mgmt0, which the probe must ignore. Each host namespace runs
# `hypertopo probe --source lldp` against its own lldpd and writes <OUT>/<host>.json.
#
# Usage: lldp_lab.sh HYPERTOPO_BINARY OUT_DIR
# Exit: 0 = all NodeReports written, 77 = prerequisites missing (not root, no lldpd, no netns),
#       other = failure. Everything it creates is removed on exit, whatever the outcome.
set -euo pipefail

BIN=${1:?usage: lldp_lab.sh HYPERTOPO_BINARY OUT_DIR}
OUT=${2:?usage: lldp_lab.sh HYPERTOPO_BINARY OUT_DIR}
LLDPD=${LLDPD:-/usr/sbin/lldpd}
LLDPCLI=${LLDPCLI:-/usr/sbin/lldpcli}
WAIT_S=${LAB_WAIT_S:-20}

[[ $(id -u) -eq 0 ]] || { echo "lab: needs root (network namespaces)" >&2; exit 77; }
[[ -x $LLDPD && -x $LLDPCLI ]] || { echo "lab: lldpd/lldpcli not found ($LLDPD)" >&2; exit 77; }
command -v ip >/dev/null || { echo "lab: iproute2 'ip' not found" >&2; exit 77; }

TAG="ht$$"
WORK=$(mktemp -d "/tmp/hypertopo-lldp-lab.XXXXXX")
# lldpd runs lldpcli as its unprivileged user to apply the configuration: it must reach the sockets.
chmod 0755 "$WORK"
mkdir -p "$OUT"
NAMESPACES=()
LLDPD_PIDS=()

cleanup() {
  local rc=$?
  for pid in "${LLDPD_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for ns in "${NAMESPACES[@]}"; do
    # lldpd's privilege-separated child lives in the namespace too.
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null || true; done
  done
  sleep 0.2
  for ns in "${NAMESPACES[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
    ip netns del "$ns" 2>/dev/null || true
  done
  if [[ $rc -ne 0 && $rc -ne 77 ]]; then
    for log in "$WORK"/*.log; do [[ -f $log ]] && { echo "--- $log"; tail -n 20 "$log"; } >&2; done
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ns() { echo "$TAG-$1"; }

add_ns() {
  local n
  n=$(ns "$1")
  ip netns add "$n" || { echo "lab: cannot create network namespaces" >&2; exit 77; }
  NAMESPACES+=("$n")
  ip -n "$n" link set lo up
}

# link SWITCH SWITCH_PORT HOST HOST_NETDEV
link() {
  ip link add "$2" netns "$(ns "$1")" type veth peer name "$4" netns "$(ns "$3")"
  ip -n "$(ns "$1")" link set "$2" up
  ip -n "$(ns "$3")" link set "$4" up
}

# start_lldpd NODE SYSTEM_NAME IFACES
start_lldpd() {
  local n sock conf
  n=$(ns "$1")
  sock="$WORK/$1.socket"
  conf="$WORK/$1.conf"
  printf 'configure system hostname %s\nconfigure lldp tx-interval 1\nconfigure lldp portidsubtype ifname\n' \
    "$2" >"$conf"
  ip netns exec "$n" "$LLDPD" -d -u "$sock" -O "$conf" -I "$3" -L "$LLDPCLI" >"$WORK/$1.log" 2>&1 &
  LLDPD_PIDS+=($!)
}

for s in leaf-1 leaf-2 leaf-3 oob-1; do add_ns "$s"; done
for h in h1 h2 h3 h4 h5 h6; do add_ns "$h"; done
link leaf-1 swp1 h1 rail0
link leaf-1 swp2 h2 rail0
link leaf-1 swp3 h6 rail0
link leaf-2 swp1 h3 rail0
link leaf-2 swp2 h5 rail0
link leaf-3 swp1 h4 rail0
link leaf-3 swp2 h5 rail1
link oob-1 swp1 h6 mgmt0

start_lldpd leaf-1 leaf-1 'swp*'
start_lldpd leaf-2 leaf-2 'swp*'
start_lldpd leaf-3 leaf-3 'swp*'
start_lldpd oob-1 oob-1 'swp*'
for h in h1 h2 h3 h4 h5 h6; do start_lldpd "$h" "$h" 'rail*,mgmt*'; done

# A host is done when every rail has its leaf as neighbour and the kernel reports the rail "up".
# The kernel sets a veth's operstate from its linkwatch work, apart from (and on a loaded machine
# well after) the carrier that already lets LLDP frames through: the probe reports what the kernel
# says at that moment, so the lab probes again until the kernel has settled, never on a fixed delay.
declare -A RAILS=([h1]=1 [h2]=1 [h3]=1 [h4]=1 [h5]=2 [h6]=1)
deadline=$((SECONDS + WAIT_S))
pending=(h1 h2 h3 h4 h5 h6)
while ((${#pending[@]} > 0)); do
  still=()
  for h in "${pending[@]}"; do
    if ip netns exec "$(ns "$h")" timeout 10 "$BIN" probe --source lldp --lldpd-socket "$WORK/$h.socket" \
      --node-name "$h" -o json >"$WORK/$h.json" 2>"$WORK/$h.probe.log" &&
      [[ $(grep -c '"systemName": "leaf-' "$WORK/$h.json" || true) -eq ${RAILS[$h]} ]] &&
      [[ $(grep -c '"operState": "up"' "$WORK/$h.json" || true) -eq ${RAILS[$h]} ]]; then
      cp "$WORK/$h.json" "$OUT/$h.json"
    else
      still+=("$h")
    fi
  done
  pending=("${still[@]+"${still[@]}"}")
  ((${#pending[@]} == 0)) && break
  if ((SECONDS >= deadline)); then
    echo "lab: no LLDP neighbours after ${WAIT_S}s on: ${pending[*]}" >&2
    for h in "${pending[@]}"; do cat "$WORK/$h.json" "$WORK/$h.probe.log" >&2 || true; done
    exit 1
  fi
  sleep 0.5
done
echo "lab: ${#RAILS[@]} NodeReports in $OUT"
