#!/usr/bin/env bash
# lab:kwok by hand: the same deletions of a pod with a finalizer on a real
# worker and on a kwok fake node, to see which kwok stages delete a pod the
# way a kubelet does (the lab runs it under three stage sets; this script
# uses whichever stages the cluster has).
#
#   scripts/kwok.sh                    the whole experiment, as you would type it
#   scripts/kwok.sh <action> <pod>     one action; `go tool mage lab:kwok -by=script`
#                                      runs them this way and decides the lab's claims
#                                      from the API server's audit log
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-kwok-by-hand), NODE (the real worker, default termlab-worker), IMAGE
# (the workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-kwok-by-hand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The actions, one function each.
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }
force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; }
remove-finalizers() { kubectl patch pod "$1" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}'; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
for p in $(kubectl get pods -n "$NS" -o name); do
  kubectl patch "$p" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' || true
done
kubectl delete pods --all -n "$NS" --wait=true

# 1. The same pod with a finalizer twice: on the real worker and on a fake node.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" -e "s#^  name: .*#  name: real#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/kwok-finalizer.yaml |
  kubectl create -n "$NS" -f -
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" -e "s#^  name: .*#  name: fake#" \
    -e "/^spec:/a\\  nodeSelector: {type: kwok}\n  tolerations: [{key: kwok.x-k8s.io/node, operator: Equal, value: fake, effect: NoSchedule}]" \
    manifests/pods/kwok-finalizer.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod --all -n "$NS" --for=condition=Ready --timeout=90s
kubectl get pods -n "$NS" -o wide

# 2. Ordinary delete of both; watch what each node does with it.
delete real; delete fake
sleep 10
kubectl get pods -n "$NS" -o custom-columns=POD:.metadata.name,DELETION:.metadata.deletionTimestamp,GRACE:.metadata.deletionGracePeriodSeconds,FINALIZERS:.metadata.finalizers,PHASE:.status.phase

# 3. Force delete: the finalizers still hold both.
force-delete real; force-delete fake
sleep 3
kubectl get pods -n "$NS" -o wide

# 4. Remove the finalizers: both go.
remove-finalizers real; remove-finalizers fake
kubectl get pods -n "$NS"
