#!/usr/bin/env bash
# lab:namespace by hand: namespaces that stay Terminating with no pod stuck in
# them — an APIService with no endpoints, a custom resource whose finalizer
# no controller removes, a claim in use — each found from the namespace's own
# conditions and released the right way: never by stripping the namespace's
# finalizers.
#
#   scripts/namespace.sh                     the whole experiment, as you would type it
#   scripts/namespace.sh <action> <target>   one action; `go tool mage lab:namespace -by=script`
#                                            runs them this way and decides the lab's claims
#                                            from the API server's audit log
#
# Environment: KUBECONFIG (default .termlab/kubeconfig), NS (the run's namespace,
# default termlab-namespace-byhand: its run id is what follows
# termlab-namespace-), NODE (the worker, default termlab-worker), IMAGE (the
# workload image, default termlab.local/heartbeat:v1). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export KUBECONFIG="${KUBECONFIG:-$PWD/.termlab/kubeconfig}"
NS="${NS:-termlab-namespace-byhand}"
NODE="${NODE:-termlab-worker}"
IMAGE="${IMAGE:-termlab.local/heartbeat:v1}"
ID="${NS#termlab-namespace-}"
GROUP="$ID.unavailable.termlab.dev"   # the unavailable APIService's group
CRD_GROUP="$ID.orphaned.termlab.dev"  # the custom resource's group

# The actions, one function each.
delete-namespace() { kubectl delete namespace "$1" --wait=false; }
delete-apiservice() { kubectl delete apiservices.apiregistration.k8s.io "$1" --wait=false; }
# Remove the one finalizer, as its controller would (a JSON patch that
# first tests it is the one), not every finalizer.
remove-finalizer() {
  kubectl patch "widgets.$CRD_GROUP" "$1" -n "$NS-orphan" --type=json \
    -p '[{"op":"test","path":"/metadata/finalizers/0","value":"lab.example.com/cleanup"},{"op":"remove","path":"/metadata/finalizers/0"}]'
}
delete-pvc() { kubectl delete pvc "$1" -n "$NS" --wait=false; }

if [ $# -gt 0 ]; then
  declare -F "$1" >/dev/null || { echo "unknown action $1" >&2; exit 2; }
  "$@"; exit
fi

# Whatever happens below, nothing of this script stays: the APIService first
# (while it is unavailable, discovery fails for the whole cluster).
cleanup() {
  kubectl delete apiservices.apiregistration.k8s.io "v1.$GROUP" --ignore-not-found --wait=false
  kubectl patch "widgets.$CRD_GROUP" orphan -n "$NS-orphan" --type=merge -p '{"metadata":{"finalizers":null}}' 2>/dev/null || true
  kubectl delete crd "widgets.$CRD_GROUP" --ignore-not-found --wait=false
  kubectl delete namespace "$NS" "$NS-apiservice" "$NS-orphan" --ignore-not-found --wait=false
  kubectl delete pv "termlab-namespace-$ID" --ignore-not-found --wait=false
}
trap cleanup EXIT
for n in "$NS" "$NS-apiservice" "$NS-orphan"; do
  kubectl create namespace "$n" --dry-run=client -o yaml | kubectl apply -f -
done

# 1. An APIService whose Service has no endpoints: discovery of its group fails.
kubectl create service clusterip nobody -n "$NS" --tcp=443 --dry-run=client -o yaml |
  kubectl set selector --local -f - 'termlab.dev/no-such-pod=true' -o yaml | kubectl apply -f -
kubectl apply -f - <<YAML
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.$GROUP}
spec: {group: $GROUP, version: v1, groupPriorityMinimum: 1000, versionPriority: 15,
       insecureSkipTLSVerify: true, service: {namespace: $NS, name: nobody, port: 443}}
YAML
sleep 3
delete-namespace "$NS-apiservice"
sleep 8
kubectl get namespace "$NS-apiservice" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}: {.message}{"\n"}{end}'
delete-apiservice "v1.$GROUP"
kubectl wait --for=delete namespace/"$NS-apiservice" --timeout=90s

# 2. A custom resource with a finalizer no controller removes.
kubectl apply -f - <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.$CRD_GROUP}
spec:
  group: $CRD_GROUP
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
YAML
kubectl wait --for=condition=Established crd/"widgets.$CRD_GROUP" --timeout=60s
kubectl apply -n "$NS-orphan" -f - <<YAML
apiVersion: $CRD_GROUP/v1
kind: Widget
metadata: {name: orphan, finalizers: [lab.example.com/cleanup]}
YAML
delete-namespace "$NS-orphan"
sleep 8
kubectl get namespace "$NS-orphan" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}: {.message}{"\n"}{end}'
remove-finalizer orphan
kubectl wait --for=delete namespace/"$NS-orphan" --timeout=90s

# 3. A claim in use: bound to a static volume (the node's /tmp, read only),
#    used by a pod that takes 4 s to stop.
kubectl apply -f - <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: termlab-namespace-$ID}
spec:
  capacity: {storage: 1Mi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: $NS, name: data}
  hostPath: {path: /tmp, type: Directory}
  nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [$NODE]}]}]}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: $NS}
spec: {accessModes: [ReadWriteOnce], storageClassName: "", volumeName: termlab-namespace-$ID, resources: {requests: {storage: 1Mi}}}
YAML
sed -e "s#termlab/heartbeat:placeholder#$IMAGE#" \
    -e "/^spec:/a\\  nodeSelector: {kubernetes.io/hostname: $NODE}" manifests/pods/namespace-user.yaml |
  kubectl create -n "$NS" -f -
kubectl wait pod/user -n "$NS" --for=condition=Ready --timeout=90s
delete-pvc data
kubectl get pvc data -n "$NS" -o jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers}{"\n"}'
delete-namespace "$NS"
kubectl get pods,pvc -n "$NS"
kubectl wait --for=delete namespace/"$NS" --timeout=90s
