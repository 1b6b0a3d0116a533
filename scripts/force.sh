#!/usr/bin/env bash
# lab:force by hand: force-delete a pod on a healthy worker and watch its
# container outlive the API object by the kubelet's 2 s minimum grace.
#
#   scripts/force.sh                   the whole experiment, as you would type it
#   scripts/force.sh <action> <target> one action; `go tool mage lab:force -by=script`
#                                      runs them this way and decides the lab's claims
#                                      from the API server's audit log
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-force-by-hand), NODE (the worker, default termlab-worker), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-force-by-hand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The one action that changes something: DeleteOptions gracePeriodSeconds 0.
force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# 1. A namespace and pod slow-exit on the worker (its workload takes 8 s to
#    exit after SIGTERM). Whatever an earlier run left goes first.
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete pod slow-exit -n "$NS" --ignore-not-found --wait=true
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/slow-exit.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/slow-exit -n "$NS" --for=condition=Ready --timeout=90s
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=slow-exit

# 2. Force delete: the API object is gone at once ...
force-delete slow-exit
kubectl get pod slow-exit -n "$NS" || echo "(the API object is gone)"

# 3. ... while crictl on the node still shows the container running,
#    until the kubelet kills it 2 s after its SIGTERM (exit code 137).
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=slow-exit
sleep 4
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=slow-exit
id=$(docker exec "$NODE" crictl ps -aq --label io.kubernetes.pod.name=slow-exit | head -1)
[ -z "$id" ] || docker exec "$NODE" crictl logs "$id" | tail -3
