#!/usr/bin/env bash
# lab:graceful by hand: pods behind Services deleted the normal way while a
# client in the cluster sends them requests; which requests fail, and when.
#
#   scripts/graceful.sh                   the whole experiment, as you would type it
#   scripts/graceful.sh <action> <target> one action; `go tool mage lab:graceful -by=script`
#                                         runs them this way and decides the lab's claims
#                                         from the API server's audit log and the nodes
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (namespace, default
# termlab-graceful-by-hand), NODE (the servers' worker, default termlab-worker),
# CLIENT_NODE (the client's worker, default termlab-worker2), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-graceful-by-hand}"
NODE="${NODE:-termlab-worker}"
CLIENT_NODE="${CLIENT_NODE:-termlab-worker2}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"
VARIANTS="exit-now exec-sleep native-sleep ignore-term prestop-overrun"

# The one action that changes something: an ordinary delete (the pod's own
# grace period), as a rollout or a scale-down sends it.
delete() { kubectl delete pod "$1" -n "$NS" --wait=false; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# 1. A namespace; a Service per variant; the steady pod every Service keeps.
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl delete pod --all -n "$NS" --wait=true
server() { # name on-term grace lifecycle(flow YAML or "") backend-of...
  local name=$1 onterm=$2 grace=$3 lifecycle=$4; shift 4
  local labels=""; for b in "$@"; do labels="$labels\\n    termlab.dev/backend-of-$b: \"true\""; done
  { sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" -e "s#name: graceful-server#name: $name#" \
        -e "s#--on-term=exit#--on-term=$onterm#" -e "s#terminationGracePeriodSeconds: 10#terminationGracePeriodSeconds: $grace#" \
        -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" \
        -e "/^  labels:/a\\${labels#\\\\n}" manifests/pods/graceful-server.yaml
    [ -z "$lifecycle" ] || echo "      lifecycle: $lifecycle"
  } | kubectl create -n "$NS" -f -
}
for v in $VARIANTS; do
  kubectl create service clusterip "$v" -n "$NS" --tcp=8080:8080 --dry-run=client -o json |
    jq --arg v "$v" '.spec.selector = {("termlab.dev/backend-of-" + $v): "true"} | .spec.ports[0].name = "http"' |
    kubectl apply -f -
done
# shellcheck disable=SC2086
server steady exit 10 "" $VARIANTS
# 2. The five variants (preStop exec runs /heartbeat sleep: the image has no shell).
server exit-now exit 15 "" exit-now
server exec-sleep exit 15 '{preStop: {exec: {command: [/heartbeat, sleep, 10s]}}}' exec-sleep
server native-sleep drain 15 '{preStop: {sleep: {seconds: 10}}}' native-sleep
server ignore-term ignore 5 "" ignore-term
server prestop-overrun ignore 4 '{preStop: {exec: {command: [/heartbeat, sleep, 16s]}}}' prestop-overrun
kubectl wait pod --all -n "$NS" --for=condition=Ready --timeout=90s

# 3. The client on the other worker, one target per Service's ClusterIP.
targets=""; for v in $VARIANTS; do every=50ms; [ "$v" != exit-now ] || every=10ms
  targets="$targets \"$v@$every=http://$(kubectl get svc "$v" -n "$NS" -o jsonpath='{.spec.clusterIP}'):8080/\","; done
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $CLIENT_NODE}" \
    -e "s#\"--timeout=3s\"\]#\"--timeout=3s\",${targets%,}]#" manifests/pods/graceful-client.yaml | kubectl create -n "$NS" -f -
kubectl wait pod/client -n "$NS" --for=condition=Ready --timeout=90s
docker exec "$CLIENT_NODE" iptables-save -t nat | grep -- "-> " | grep "$NS/" || true
sleep 3

# 4. Delete the five, exit-now last (right after the others, as the next pod of
#    a rollout: kube-proxy has just synced and waits its minSyncPeriod).
for v in exec-sleep native-sleep ignore-term prestop-overrun exit-now; do delete "$v"; done
kubectl get endpointslices -n "$NS" -o custom-columns='SVC:.metadata.labels.kubernetes\.io/service-name,POD:.endpoints[*].targetRef.name,READY:.endpoints[*].conditions.ready,SERVING:.endpoints[*].conditions.serving,TERMINATING:.endpoints[*].conditions.terminating'
sleep 1; docker exec "$CLIENT_NODE" iptables-save -t nat | grep -- "-> " | grep "$NS/" || true
sleep 13
# 5. Every failed request, and what each container's exit was.
kubectl logs client -n "$NS" | grep -v outcome=ok || echo "(no failed request)"
docker exec "$NODE" crictl ps -a --label io.kubernetes.pod.namespace="$NS"
