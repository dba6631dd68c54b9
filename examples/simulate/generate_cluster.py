#!/usr/bin/env python3
"""Writes a synthetic GPU cluster and a job trace for `hypertopo simulate`.

The cluster is a regular tree: --shape 4,2,2 means 4 nodes per leaf, 2 leaves per spine, 2 spines in
one block (tiers 1 leaf, 2 spine, 3 block, 4 core). Every node has --gpus GPUs. The trace is a
Poisson arrival process of gang jobs: 1, 2 or 4 GPUs in one pod, or whole-node pods (8 GPUs each)
in gangs of 2 .. the nodes of one domain of the tier below the top, each `required` inside one
domain of that tier (a spine for --shape 4,2,2); the arrival rate keeps the offered load near --load. Deterministic for a given --seed.

    python3 generate_cluster.py --shape 4,2,2 --jobs 40 --seed 1 --out .
    hypertopo simulate --nodes nodes.json --topology hypernodes.json --trace jobs.jsonl

--priorities also writes jobs-priorities.jsonl: the same trace where half of the gangs of 4 pods or
more (drawn with their own generator, so jobs.jsonl stays as it was) have priority 1000 and every
other job 0: production gangs arriving on a cluster busy with batch work, which they may preempt.
"""
import argparse
import json
import os
import random

TIER_NAMES = ["leaf", "spine", "block", "core", "tier5", "tier6"]


def build(shape, gpus):
    nodes, hypernodes = [], []
    per_leaf = shape[0]
    groups = shape[1:]
    total_leaves = 1
    for g in groups:
        total_leaves *= g
    names = []
    for leaf in range(total_leaves):
        members = []
        for i in range(per_leaf):
            name = "gpu-%05d" % (leaf * per_leaf + i + 1)
            members.append(name)
            nodes.append({
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "128", "memory": "2048Gi", "pods": "110", "nvidia.com/gpu": str(gpus)},
                           "conditions": [{"type": "Ready", "status": "True"}]},
            })
        leaf_name = "leaf-%04d" % (leaf + 1)
        hypernodes.append(hypernode(leaf_name, 1, "Node", members))
        names.append(leaf_name)
    for tier, fanout in enumerate(groups, start=2):
        upper = []
        for u in range(len(names) // fanout):
            name = "%s-%04d" % (TIER_NAMES[tier - 1], u + 1)
            hypernodes.append(hypernode(name, tier, "HyperNode", names[u * fanout:(u + 1) * fanout]))
            upper.append(name)
        names = upper
    return nodes, hypernodes, len(shape)


def hypernode(name, tier, member_type, members):
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1", "kind": "HyperNode", "metadata": {"name": name},
        "spec": {"tier": tier, "tierName": TIER_NAMES[tier - 1],
                 "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}} for m in members]},
    }


def trace(rng, jobs, shape, gpus, load):
    top_nodes = 1
    for f in shape[:-1]:
        top_nodes *= f
    cluster_gpus = gpus
    for f in shape:
        cluster_gpus *= f
    top_level = TIER_NAMES[len(shape) - 2] if len(shape) > 1 else "leaf"
    gang_sizes = [n for n in (2, 4, 8, 16, 32, 64, 128, 256) if n <= top_nodes]
    shapes = []
    for _ in range(jobs):
        r = rng.random()
        if r < 0.4 or not gang_sizes:
            pods, per_pod = 1, rng.choice([1, 2, 4])
        else:
            pods, per_pod = rng.choice(gang_sizes), gpus
        shapes.append((pods, per_pod, rng.choice([600, 1800, 3600, 7200, 14400])))
    mean_gpu_seconds = sum(p * g * d for p, g, d in shapes) / max(len(shapes), 1)
    mean_gap = mean_gpu_seconds / (cluster_gpus * load)
    t = 0.0
    lines = []
    for i, (pods, per_pod, duration) in enumerate(shapes):
        request = {"apiVersion": "hypertopo.io/v1alpha1", "kind": "PlacementRequest", "name": "job-%d" % (i + 1),
                   "podSets": [{"name": "worker", "count": pods,
                                "requests": {"cpu": "8", "nvidia.com/gpu": str(per_pod)},
                                "topology": {"mode": "required", "level": top_level}}]}
        lines.append(json.dumps({"time": int(t), "job": "job-%d" % (i + 1), "duration": duration,
                                 "arrive": request}, separators=(",", ":")))
        t += rng.expovariate(1.0 / mean_gap)
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shape", default="4,2,2", help="nodes per leaf, leaves per spine, ... (comma separated)")
    p.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    p.add_argument("--jobs", type=int, default=40)
    p.add_argument("--load", type=float, default=0.9, help="offered GPU load (1.0 = the cluster's GPU-seconds)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default=".")
    p.add_argument("--priorities", action="store_true", help="also write jobs-priorities.jsonl")
    args = p.parse_args()
    shape = [int(x) for x in args.shape.split(",")]
    rng = random.Random(args.seed)
    nodes, hypernodes, _ = build(shape, args.gpus)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "nodes.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": nodes}, f, indent=1)
        f.write("\n")
    with open(os.path.join(args.out, "hypernodes.json"), "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": hypernodes}, f, indent=1)
        f.write("\n")
    lines = trace(rng, args.jobs, shape, args.gpus, args.load)
    with open(os.path.join(args.out, "jobs.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if args.priorities:
        prio_rng = random.Random(args.seed + 1)
        with open(os.path.join(args.out, "jobs-priorities.jsonl"), "w") as f:
            for line in lines:
                event = json.loads(line)
                pods = event["arrive"]["podSets"][0]["count"]
                event["priority"] = 1000 if pods >= 4 and prio_rng.random() < 0.5 else 0
                f.write(json.dumps(event, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
