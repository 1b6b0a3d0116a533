#!/usr/bin/env bash
# lab:sidecar by hand: a pod with a main container and two native sidecars
# (init containers with restartPolicy: Always), deleted. The sidecars get
# SIGTERM only after the main container exited, in reverse start order; their
# preStops run alongside the main container's. In pod sidecars-overrun the
# main container outlasts the 6 s grace period: the sidecars are ended right
# after it is killed, together.
#
#   scripts/sidecar.sh                   the whole experiment, as you would type it
#   scripts/sidecar.sh <action> <pod>    one action; `go tool mage lab:sidecar -by=script`
#                                        runs them this way and decides the lab's claims
#                                        from the API server's audit log
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-sidecar-by-hand), NODE (the worker, default termlab-worker), IMAGE
# (the workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-sidecar-by-hand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"

# The one action that changes something: an ordinary delete (the pod's own grace period).
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

pods="sidecars sidecars-overrun"

# 1. A namespace and the two pods on the worker. Whatever an earlier run left goes first.
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
for pod in $pods; do
  kubectl delete pod "$pod" -n "$NS" --ignore-not-found --wait=true
  sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
      -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" "manifests/pods/$pod.yaml" |
    kubectl create -n "$NS" -f -
done
for pod in $pods; do kubectl wait "pod/$pod" -n "$NS" --for=condition=Ready --timeout=90s; done
docker exec "$NODE" crictl ps -a --label "io.kubernetes.pod.namespace=$NS"

# 2. Follow every container's log (the kubelet removes a deleted pod's
#    containers soon after they exit), then delete both pods. The kubelet's
#    Killing events come for all six containers at once: that is when each
#    container's preStop starts.
for pod in $pods; do
  for id in $(docker exec "$NODE" crictl ps -q --label "io.kubernetes.pod.namespace=$NS" --label "io.kubernetes.pod.name=$pod"); do
    name=$(docker exec "$NODE" crictl inspect -o go-template --template '{{.status.metadata.name}}' "$id")
    docker exec "$NODE" crictl logs -f "$id" 2>&1 | grep --line-buffered -E '^(signal|exit)' | sed -u "s#^#$pod/$name: #" &
  done
done
for pod in $pods; do delete "$pod"; done

# 3. Each container's SIGTERM and exit, from its own log, as they come: app
#    first, then sidecar-b, then sidecar-a; in sidecars-overrun app is killed
#    at 6 s (no exit line: SIGKILL) and both sidecars are signalled together
#    right after.
wait
kubectl get events -n "$NS" --field-selector reason=Killing
