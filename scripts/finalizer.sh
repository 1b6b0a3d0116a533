#!/usr/bin/env bash
# lab:finalizer by hand: a pod with a finalizer nobody removes. An ordinary
# delete and a force delete both leave the object (deletionTimestamp set,
# finalizer kept) while the kubelet still stops the container; removing the
# finalizer lets it go. Then the same on a kwok fake node (pod held-kwok).
#
#   scripts/finalizer.sh                   the whole experiment, as you would type it
#   scripts/finalizer.sh <action> <pod>    one action; `go tool mage lab:finalizer -by=script`
#                                          runs them this way and decides the lab's claims
#                                          from the API server's audit log
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-finalizer-by-hand), NODE (the worker, default termlab-worker), IMAGE
# (the workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-finalizer-by-hand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The actions, one function each.
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }                                  # the pod's 30 s grace
force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; }    # gracePeriodSeconds 0
remove-finalizers() { kubectl patch pod "$1" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}'; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

show() {
  kubectl get pod "$1" -n "$NS" -o jsonpath='{.metadata.deletionTimestamp} grace={.metadata.deletionGracePeriodSeconds} finalizers={.metadata.finalizers} phase={.status.phase}{"\n"}'
}

kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
for pod in held held-kwok; do
  # Whatever an earlier run left goes first (--wait=false: a finalizer would hold it).
  kubectl patch pod "$pod" -n "$NS" --type=merge -p '{"metadata":{"finalizers":null}}' 2>/dev/null || true
  kubectl delete pod "$pod" -n "$NS" --ignore-not-found --wait=true
done

# 1. Pod held, with finalizer lab.example.com/cleanup, on the real worker.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/held.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/held -n "$NS" --for=condition=Ready --timeout=90s

# 2. Ordinary delete: deletionTimestamp set, the object stays; the kubelet
#    stops the container anyway (SIGTERM, exit 0, phase Succeeded).
delete held
sleep 5
show held
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=held

# 3. Force delete: grace 0 now, and still the finalizer holds the object.
force-delete held
sleep 5
show held

# 4. Remove the finalizer: now it goes.
remove-finalizers held
kubectl get pod held -n "$NS" || echo "(gone)"

# 5. The same on a kwok fake node: only the API record exists there.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" manifests/pods/held-kwok.yaml | kubectl create -n "$NS" -f -
kubectl wait pod/held-kwok -n "$NS" --for=condition=Ready --timeout=90s
delete held-kwok; sleep 5; show held-kwok
force-delete held-kwok; sleep 5; show held-kwok
remove-finalizers held-kwok
kubectl get pod held-kwok -n "$NS" || echo "(gone)"
