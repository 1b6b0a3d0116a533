#!/usr/bin/env bash
# lab:stuck by hand: an ordinary delete while the node's kubelet is down stays
# Terminating; the out-of-service taint lets the pod garbage collector
# force-delete it, while its container runs on until the kubelet returns.
#
#   scripts/stuck.sh                     the whole experiment, as you would type it
#   scripts/stuck.sh <action> <target>   one action; `go tool mage lab:stuck -by=script`
#                                        runs them this way and decides the lab's claims
#                                        from the API server's audit log and the node
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-stuck-by-hand), NODE (the worker, default termlab-worker2), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-stuck-by-hand}"
NODE="${NODE:-termlab-worker2}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The actions, one function each.
stop-kubelet() { docker exec "$1" systemctl stop kubelet; }
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }
taint-node() { kubectl taint node "$1" node.kubernetes.io/out-of-service=nodeshutdown:NoExecute --overwrite; }
untaint-node() { kubectl taint node "$1" node.kubernetes.io/out-of-service:NoExecute-; }
start-kubelet() { docker exec "$1" systemctl start kubelet; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# Whatever happens below, the taint goes and the kubelet comes back when this script ends.
trap 'untaint-node "$NODE" 2>/dev/null || true; start-kubelet "$NODE"' EXIT
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete pod stuck -n "$NS" --ignore-not-found --grace-period=0 --force --wait=true

# 1. Pod stuck on the worker; stop only its kubelet.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/stuck.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/stuck -n "$NS" --for=condition=Ready --timeout=90s
stop-kubelet "$NODE"

# 2. An ordinary delete: nobody can finish it. The node turns NotReady, gets
#    the unreachable taints; the pod stays Terminating.
delete stuck
for i in 1 2 3 4 5; do
  kubectl get pod stuck -n "$NS" --no-headers
  kubectl get node "$NODE" -o jsonpath='{.spec.taints}{"\n"}'
  sleep 10
done

# 3. The out-of-service taint: the pod GC force-deletes the pod (see the
#    audit log: DELETE by pod-garbage-collector with gracePeriodSeconds 0) ...
taint-node "$NODE"
sleep 10
kubectl get pod stuck -n "$NS" || echo "(gone)"
# ... while its container still runs on the node.
docker exec "$NODE" crictl ps --label io.kubernetes.pod.name=stuck

# 4. Undo: remove the taint, start the kubelet; it kills the container.
untaint-node "$NODE"
start-kubelet "$NODE"
sleep 5
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=stuck
