#!/usr/bin/env bash
# lab:mount by hand: a process on the node keeps a pod's memory-backed
# emptyDir (a tmpfs) busy; the pod is deleted, its container exits, and the
# object stays Terminating because the kubelet cannot unmount the volume.
# Release the mount and the pod goes at the kubelet's next retry.
#
#   scripts/mount.sh                     the whole experiment, as you would type it
#   scripts/mount.sh <action> <target>   one action; `go tool mage lab:mount -by=script`
#                                        runs them this way and decides the lab's claims
#                                        from the API server's audit log and the node
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-mount-by-hand), NODE (the worker, default termlab-worker), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-mount-by-hand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"
POD=mounted
HOLDER=termlab-hold-mount.service

# The actions, one function each.
# hold-mount: a process whose working directory is the pod's tmpfs, as a
# shell cd-ed into it would be; systemd ends it by itself after 5 minutes.
hold-mount() {
  local uid
  uid=$(kubectl get pod "$POD" -n "$NS" -o jsonpath='{.metadata.uid}')
  docker exec "$1" systemd-run --unit="$HOLDER" --collect --property=RuntimeMaxSec=300 \
    --property=WorkingDirectory="/var/lib/kubelet/pods/$uid/volumes/kubernetes.io~empty-dir/scratch" sleep infinity
}
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }
release-mount() { docker exec "$1" systemctl stop "$HOLDER"; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# Whatever happens below, the mount is released when this script ends.
trap 'release-mount "$NODE" 2>/dev/null || true' EXIT
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete pod "$POD" -n "$NS" --ignore-not-found --wait=true

# 1. Pod mounted on the worker, its volume a tmpfs the kubelet mounted.
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/mounted.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/"$POD" -n "$NS" --for=condition=Ready --timeout=90s
docker exec "$NODE" grep kubernetes.io~empty-dir/scratch /proc/1/mountinfo

# 2. Keep it busy, then an ordinary delete: the container exits at once ...
hold-mount "$NODE"
delete "$POD"
sleep 5
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.name="$POD"
# ... and the object stays, while the kubelet's unmount fails and backs off.
for i in 1 2 3; do
  kubectl get pod "$POD" -n "$NS" --no-headers
  sleep 5
done
docker exec "$NODE" journalctl -u kubelet --since=-1min --no-pager | grep 'UnmountVolume.TearDown failed' | tail -3

# 3. Release: the pod goes at the kubelet's next retry.
release-mount "$NODE"
kubectl wait pod/"$POD" -n "$NS" --for=delete --timeout=120s
docker exec "$NODE" grep -c kubernetes.io~empty-dir/scratch /proc/1/mountinfo || echo "(unmounted)"
