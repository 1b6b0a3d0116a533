#!/usr/bin/env bash
# lab:statefulset by hand: a StatefulSet's pod on a node whose kubelet is
# down. An ordinary delete leaves it Terminating and the controller makes no
# second ident-0; a force delete lets it make one on the other worker while
# the old process still runs: two writers under one identity (see the ledger)
# until the old kubelet comes back and kills its container.
#
#   scripts/statefulset.sh                     the whole experiment, as you would type it
#   scripts/statefulset.sh <action> <target>   one action; `go tool mage lab:statefulset -by=script`
#                                              runs them this way (termlab creates the ledger
#                                              and the StatefulSet) and decides the lab's claims
#                                              from the API server's audit log and the node
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-statefulset-by-hand), NODE (the worker ident-0 runs on, default
# termlab-worker2). The whole experiment needs the objects a lab:statefulset
# run saved: RUN=results/statefulset/latest (default). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-statefulset-by-hand}"
NODE="${NODE:-termlab-worker2}"
RUN="${RUN:-results/statefulset/latest}"

# The actions, one function each.
stop-kubelet() { docker exec "$1" systemctl stop kubelet; }
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }
force-delete() { kubectl delete pod "$1" -n "$NS" --force --grace-period=0 --wait=false; }
start-kubelet() { docker exec "$1" systemctl start kubelet; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

ledger() { kubectl get --raw "/api/v1/namespaces/$NS/services/ledger:8080/proxy/" | tail -"${1:-4}"; }

trap 'start-kubelet "$NODE"' EXIT
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete statefulset ident -n "$NS" --ignore-not-found --wait=true

# 1. The ledger (a Deployment and a Service on the control plane) and the
#    StatefulSet ident, as the last lab:statefulset run created them.
kubectl apply -n "$NS" -f "$RUN/inputs/objects/service-ledger.sent.yaml" -f "$RUN/inputs/objects/deployment-ledger.sent.yaml"
kubectl rollout status deployment/ledger -n "$NS" --timeout=90s
kubectl apply -n "$NS" -f "$RUN/inputs/objects/statefulset-ident.sent.yaml"
kubectl wait pod/ident-0 -n "$NS" --for=condition=Ready --timeout=90s
kubectl get pod ident-0 -n "$NS" -o wide
ledger

# 2. Stop only the kubelet of ident-0's node.
stop-kubelet "$NODE"

# 3. An ordinary delete: Terminating, and no second ident-0.
delete ident-0
sleep 10
kubectl get pod ident-0 -n "$NS" -o custom-columns=NAME:.metadata.name,UID:.metadata.uid,NODE:.spec.nodeName,DELETING:.metadata.deletionTimestamp

# 4. A force delete: a new ident-0 on the other worker, the old one still writing.
force-delete ident-0
kubectl wait pod/ident-0 -n "$NS" --for=condition=Ready --timeout=90s
sleep 5
ledger 6   # two UIDs, interleaved
docker exec "$NODE" crictl ps --label io.kubernetes.pod.name=ident-0

# 5. Start the kubelet: it kills the old container; one writer again.
start-kubelet "$NODE"
sleep 10
ledger 4
