#!/usr/bin/env bash
# README command 1: set everything up, then discover the built-in fabric and print its HyperNode tree.
# The HyperNode manifests are written to out/demo-hypernodes.yaml (kubectl apply -f accepts them).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
mkdir -p out
echo
build/bin/hypertopo discover --source demo --write-manifests out/demo-hypernodes.yaml "$@"
# Coloured by GPU capacity (8 GPUs per node assumed: the built-in fabric has no node list).
build/bin/hypertopo discover --source demo:model -o dot --assume-gpus-per-node 8 2>/dev/null > out/demo-tree.dot
# The same as one page for a browser: expandable, searchable, nothing fetched.
build/bin/hypertopo discover --source demo:model -o html --assume-gpus-per-node 8 2>/dev/null > out/demo-tree.html
echo "the tree as a page for a browser: out/demo-tree.html"
if command -v dot >/dev/null 2>&1; then
  dot -Tsvg out/demo-tree.dot -o out/demo-tree.svg
  echo "picture of the tree, coloured by GPU capacity and use: out/demo-tree.svg (Graphviz source: out/demo-tree.dot)"
else
  echo "Graphviz source of the tree: out/demo-tree.dot (install graphviz for an SVG)"
fi
