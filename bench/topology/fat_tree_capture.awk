# A rail-optimised fat tree as `ibnetdiscover` prints it, for discover at scale (scripts/bench.sh):
# NODES hosts x RAILS HCAs of one port each, leaves of 32 hosts of one rail, pods of 32 leaves under
# 32 spines, spine k of every pod up to the 32 core switches of plane k (a core has a port per pod).
#   awk -v NODES=12500 -v RAILS=8 -f bench/topology/fat_tree_capture.awk > fabric.out
function guid(kind, i) { return sprintf("%02x%014x", kind, i) }
function sw(i) { return "S-" guid(1, i) }
function ca(i) { return "H-" guid(2, i) }
BEGIN {
  hosts_per_leaf = 32; leaves_per_pod = 32; spines_per_pod = 32; cores = 32
  cas = NODES * RAILS
  leaves = int((NODES + hosts_per_leaf - 1) / hosts_per_leaf) * RAILS
  pods = int((leaves + leaves_per_pod - 1) / leaves_per_pod)
  spines = pods * spines_per_pod
  # switch ids: leaves 0.., spines after, cores after
  for (l = 0; l < leaves; l++) {
    pod = int(l / leaves_per_pod)
    printf "vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x%s\nswitchguid=0x%s(%s)\n", guid(1, l), guid(1, l), guid(1, l)
    printf "Switch\t65 \"%s\"\t\t# \"MF0;leaf-%05d:MQM9700/U1\" enhanced port 0 lid %d lmc 0\n", sw(l), l, l + 1
    group = int(l / RAILS); rail = l % RAILS
    for (p = 1; p <= hosts_per_leaf; p++) {
      n = group * hosts_per_leaf + p - 1
      if (n >= NODES) break
      c = n * RAILS + rail
      printf "[%d]\t\"%s\"[1](%s) \t\t# \"gpu%05d mlx5_%d\" lid %d 4xNDR\n", p, ca(c), guid(2, c), n, rail, 100000 + c
    }
    for (s = 0; s < spines_per_pod; s++) {
      sid = leaves + pod * spines_per_pod + s
      printf "[%d]\t\"%s\"[%d]\t\t# \"MF0;spine-%05d:MQM9700/U1\" lid %d 4xNDR\n", 33 + s, sw(sid), (l % leaves_per_pod) + 1, sid - leaves, sid + 1
    }
    printf "\n"
  }
  for (s = 0; s < spines; s++) {
    sid = leaves + s; pod = int(s / spines_per_pod)
    printf "vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x%s\nswitchguid=0x%s(%s)\n", guid(1, sid), guid(1, sid), guid(1, sid)
    printf "Switch\t65 \"%s\"\t\t# \"MF0;spine-%05d:MQM9700/U1\" enhanced port 0 lid %d lmc 0\n", sw(sid), s, sid + 1
    for (k = 0; k < leaves_per_pod; k++) {
      l = pod * leaves_per_pod + k
      if (l >= leaves) break
      printf "[%d]\t\"%s\"[%d]\t\t# \"MF0;leaf-%05d:MQM9700/U1\" lid %d 4xNDR\n", k + 1, sw(l), 33 + (s % spines_per_pod), l, l + 1
    }
    plane = s % spines_per_pod
    for (c = 0; c < cores; c++) {
      core = plane * cores + c; cid = leaves + spines + core
      printf "[%d]\t\"%s\"[%d]\t\t# \"MF0;core-%04d:MQM9700/U1\" lid %d 4xNDR\n", 33 + c, sw(cid), pod + 1, core, cid + 1
    }
    printf "\n"
  }
  for (core = 0; core < spines_per_pod * cores; core++) {
    cid = leaves + spines + core; plane = int(core / cores); c = core % cores
    printf "vendid=0x2c9\ndevid=0xd2f2\nsysimgguid=0x%s\nswitchguid=0x%s(%s)\n", guid(1, cid), guid(1, cid), guid(1, cid)
    printf "Switch\t%d \"%s\"\t\t# \"MF0;core-%04d:MQM9700/U1\" enhanced port 0 lid %d lmc 0\n", pods + 1, sw(cid), core, cid + 1
    for (pod = 0; pod < pods; pod++) {
      s = pod * spines_per_pod + plane
      printf "[%d]\t\"%s\"[%d]\t\t# \"MF0;spine-%05d:MQM9700/U1\" lid %d 4xNDR\n", pod + 1, sw(leaves + s), 33 + c, s, leaves + s + 1
    }
    printf "\n"
  }
  for (c = 0; c < cas; c++) {
    n = int(c / RAILS); rail = c % RAILS
    l = int(n / hosts_per_leaf) * RAILS + rail; p = n % hosts_per_leaf + 1
    printf "vendid=0x2c9\ndevid=0x1021\nsysimgguid=0x%s\ncaguid=0x%s\n", guid(2, c), guid(2, c)
    printf "Ca\t1 \"%s\"\t\t# \"gpu%05d mlx5_%d\"\n", ca(c), n, rail
    printf "[1](%s) \t\"%s\"[%d]\t\t# lid %d lmc 0 \"MF0;leaf-%05d:MQM9700/U1\" lid %d 4xNDR\n\n", guid(2, c), sw(l), p, 100000 + c, l, l + 1
  }
}
