#!/usr/bin/env python3
"""Peak memory of `hypertopo extender` for one filter call with full Node objects (nodeCacheCapable: false).

Starts the extender on loopback (its watches point at a closed port: the cluster view stays empty,
which the filter's parse of the body does not need), sends one filter body of N generated Node
objects per size, and prints the growth of the process's peak resident size (VmHWM) against the body.

  scripts/extender-filter-memory.py build-asan/bin/hypertopo 2500 5000
"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time


def node(i):
    return {
        "metadata": {"name": f"gpu-node-{i:05d}", "uid": f"uid-{i}", "resourceVersion": "12345",
                     "labels": {f"label.example.com/key{j}": f"value-{j}-{i}" for j in range(12)},
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": {"podCIDR": f"10.{i % 256}.0.0/24", "providerID": f"aws:///us-east-1a/i-{i:016x}"},
        "status": {
            "capacity": {"cpu": "96", "memory": "1056763456Ki", "nvidia.com/gpu": "8", "pods": "110"},
            "allocatable": {"cpu": "95", "memory": "1056661056Ki", "nvidia.com/gpu": "8", "pods": "110"},
            "conditions": [{"type": t, "status": "False", "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                            "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "KubeletHasNoPressure",
                            "message": "kubelet has no pressure"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "addresses": [{"type": "InternalIP", "address": f"10.0.{i // 256 % 256}.{i % 256}"},
                          {"type": "Hostname", "address": f"gpu-node-{i:05d}"}],
            "images": [{"names": [f"registry.example.com/team/image-{k}@sha256:{'a' * 64}",
                                  f"registry.example.com/team/image-{k}:v1.{k}"], "sizeBytes": 123456789}
                       for k in range(10)],
            "nodeInfo": {"kernelVersion": "5.15.0", "osImage": "Ubuntu 22.04",
                         "containerRuntimeVersion": "containerd://1.7", "kubeletVersion": "v1.30.0"}}}


def hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def main():
    binary, sizes = sys.argv[1], [int(n) for n in sys.argv[2:]] or [2500]
    with tempfile.TemporaryDirectory() as d:
        with open(f"{d}/extender.yaml", "w") as f:
            f.write(f"apiVersion: hypertopo.io/v1alpha1\nkind: ExtenderConfig\nstateFile: {d}/state.json\n")
        with open(f"{d}/kubeconfig", "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: http://127.0.0.1:1\n"
                    "users:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context:\n    cluster: c\n"
                    "    user: u\ncurrent-context: c\n")
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:quarantine_size_mb=16")
        log = open(f"{d}/extender.log", "w+")
        proc = subprocess.Popen([binary, "extender", "--config", f"{d}/extender.yaml", "--kubeconfig",
                                 f"{d}/kubeconfig", "--listen", "127.0.0.1:0"], stderr=log, env=env)
        try:
            port = None
            for _ in range(600):
                log.seek(0)
                text = log.read()
                if " on 127.0.0.1:" in text:
                    port = int(text.split(" on 127.0.0.1:")[1].split()[0])
                    break
                time.sleep(0.1)
            if port is None:
                sys.exit("the extender did not start: " + text)
            pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": "8"}}}]}}
            for n in sizes:
                body = json.dumps({"pod": pod, "nodes": {"items": [node(i) for i in range(n)]},
                                   "nodenames": None}).encode()
                before = hwm_kib(proc.pid)
                with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
                    s.sendall(b"POST /scheduler/filter HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                              b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    answer = b""
                    while chunk := s.recv(1 << 20):
                        answer += chunk
                after = hwm_kib(proc.pid)
                mib = len(body) / 2**20
                print(f"{n} nodes, body {mib:.1f} MiB: {answer[:12].decode()}; VmHWM {before / 1024:.0f} -> "
                      f"{after / 1024:.0f} MiB, growth {(after - before) / 1024 / mib:.1f}x the body")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
