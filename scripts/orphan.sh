#!/usr/bin/env bash
# lab:orphan by hand: stop only the kubelet of a worker, force-delete its pod,
# and watch the container keep running on the node while the API object is
# gone; the kubelet, started again, kills it (exit 137, no SIGTERM).
#
#   scripts/orphan.sh                     the whole experiment, as you would type it
#   scripts/orphan.sh <action> <target>   one action; `go tool mage lab:orphan -by=script`
#                                         runs them this way and decides the lab's claims
#                                         from the API server's audit log and the node
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-orphan-by-hand), NODE (the worker, default termlab-worker2), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-orphan-by-hand}"
NODE="${NODE:-termlab-worker2}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The actions, one function each.
stop-kubelet() { docker exec "$1" systemctl stop kubelet; }     # containerd and the containers keep running
force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; }
start-kubelet() { docker exec "$1" systemctl start kubelet; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# Whatever happens below, the kubelet comes back when this script ends.
trap 'start-kubelet "$NODE"' EXIT
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete pod orphan-process -n "$NS" --ignore-not-found --wait=true

# 1. Pod orphan-process on the worker.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/orphan-process.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/orphan-process -n "$NS" --for=condition=Ready --timeout=90s

# 2. Stop only the kubelet.
stop-kubelet "$NODE"
docker exec "$NODE" systemctl is-active kubelet || true

# 3. Force delete: the object is gone at once; nobody tells the node.
force-delete orphan-process
kubectl get pod orphan-process -n "$NS" || echo "(the API object is gone)"

# 4. The container keeps running and logging heartbeats; the node turns NotReady after about 40 s.
for i in 1 2 3 4 5 6; do
  docker exec "$NODE" crictl ps --label io.kubernetes.pod.name=orphan-process
  kubectl get node "$NODE" --no-headers
  sleep 10
done

# 5. Start the kubelet: it finds a container of a pod it no longer knows and kills it.
start-kubelet "$NODE"
sleep 5
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name=orphan-process
