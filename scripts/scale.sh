#!/usr/bin/env bash
# lab:scale by hand: a namespace of many pods on kwok fake nodes, every fifth
# with a finalizer, is deleted; the finalizers hold their pods (and the
# namespace) until they are released. The lab does it with thousands of pods
# and checks its watch record against LISTs; this script does it with fewer.
#
#   scripts/scale.sh                   the whole experiment, as you would type it
#   scripts/scale.sh <action> <name>   one action (remove-finalizers <pod>, delete-namespace <ns>)
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-scale-by-hand), PODS (default 200), IMAGE (the workload image, default
# termlab.local/heartbeat:v1). Needs the cluster's kwok fake nodes (label type=kwok).
# Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-scale-by-hand}"
PODS="${PODS:-200}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The actions, one function each.
remove-finalizers() { kubectl patch pod "$1" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}'; }
delete-namespace() { kubectl delete namespace "$1" --wait=false; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# An earlier run's namespace goes first (its finalizers released).
if kubectl get namespace "$NS" >/dev/null 2>&1; then
  for p in $(kubectl get pods -n "$NS" -o name); do
    kubectl patch "$p" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null || true
  done
  kubectl delete namespace "$NS" --wait=true
fi
kubectl create namespace "$NS"

# 1. The pods, on the fake nodes; every fifth carries a finalizer.
for i in $(seq -f %05g 0 $((PODS - 1))); do
  fin=(-e "s#^metadata:#metadata:\n  finalizers: [lab.example.com/cleanup]#")
  if [ $((10#$i % 5)) -ne 0 ]; then fin=(); fi
  sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" -e "s#^  name: .*#  name: scale-$i#" "${fin[@]}" \
      -e "/^spec:/a\\  nodeSelector: {type: kwok}\n  tolerations: [{key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}]" \
      manifests/pods/scale.yaml
  echo ---
done | kubectl create -n "$NS" -f - >/dev/null
kubectl wait pod --all -n "$NS" --for=condition=Ready --timeout=5m >/dev/null
kubectl get pods -n "$NS" --no-headers | awk '{print $3}' | sort | uniq -c

# 2. Delete the namespace: the pods without a finalizer go, the others stay Terminating.
delete-namespace "$NS"
sleep 10
kubectl get pods -n "$NS" --no-headers | wc -l
kubectl get namespace "$NS" -o jsonpath='{.status.conditions}{"\n"}'

# 3. Release the finalizers: now the namespace goes too.
for p in $(kubectl get pods -n "$NS" -o name); do remove-finalizers "${p#pod/}"; done
kubectl wait namespace "$NS" --for=delete --timeout=2m
