#!/usr/bin/env bash
# Shows Caravan's main job on the local cluster: two operators, each
# reconciling only its own integrations; a kit built by Maven whose Camel
# routes run in JVMs; and integrations, the kit-built one included, moving
# from one operator to the other without restarting their JVMs. As root the pods run on a real
# kubelet with containerd, otherwise on the process node. The first run builds the cluster
# binaries (about 15 minutes); later runs take a couple of minutes.
# Stop everything with `bin/caravan local down`.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
k() { bin/caravan local kubectl -- "$@"; }

step "Building caravan into bin/"
go build -o bin/caravan ./cmd/caravan

step "Starting the local cluster"
bin/caravan local up
KUBECONFIG="$(bin/caravan local kubeconfig)"
export KUBECONFIG

step "Installing two operators, operator-a and operator-b, side by side in namespace caravan (the first run builds the operator image)"
for id in operator-a operator-b; do
  bin/caravan install -n caravan -x "$id" --force --wait --maven-cache 2Gi
done
k get integrationoperators
echo "Each operator is a pod of node $(k get nodes -l caravan.dev/node-kind=process -o jsonpath='{.items[0].metadata.name}'), running the operator image built from this tree:"
k get pods -n caravan -o wide

step "An integration built from source: operator-a builds its kit with Maven, in a builder pod, and Camel runs it in a JVM"
k create namespace demo --dry-run=client -o yaml | k apply -f -
bin/caravan run hack/demo/routes.yaml -n demo --name greeter -x operator-a -d camel:jackson --wait
bin/caravan get kits -n demo -o wide
k get builds -n demo -o custom-columns=BUILD:.metadata.name,PHASE:.status.phase,DURATION:.status.duration,RESULT:'.status.conditions[?(@.type=="Ready")].message'
k wait -n demo --for=condition=Ready integration/greeter --timeout=120s
echo "The greeter's pod runs camel-main on $(k get pods -n demo -l camel.apache.org/integration=greeter -o jsonpath='{.items[0].spec.nodeName}'); its log:"
for _ in $(seq 60); do bin/caravan logs -n demo greeter 2>/dev/null | grep -q "Built by Caravan" && break; sleep 2; done
bin/caravan logs -n demo greeter --tail 3
ip=$(k get service greeter -n demo -o jsonpath='{.spec.clusterIP}')
if command -v curl >/dev/null; then
  echo "Its HTTP route got a Service, as on Camel K; at its address: curl http://$ip/hello"
  curl -sS --max-time 10 "http://$ip/hello"; echo
else
  echo "Its HTTP route, through the API server's pod proxy (this machine has no curl):"
  k get --raw "/api/v1/namespaces/demo/pods/$(k get pods -n demo -l camel.apache.org/integration=greeter -o jsonpath='{.items[0].metadata.name}'):8080/proxy/hello"; echo
fi

step "An integration of that kit's image, under operator-a"
kit=$(k get integration greeter -n demo -o jsonpath='{.status.image}')
sed "s|KIT_IMAGE|$kit|" hack/demo/hello.yaml | k apply -f -
k wait -n demo --for=condition=Ready integration/hello --timeout=180s
k get integrations -n demo
uid=$(k get deployment hello -n demo -o jsonpath='{.metadata.uid}')
pods() { k get pods -n demo -l camel.apache.org/integration=hello -o jsonpath='{.items[*].metadata.name}'; }
restarts() { k get pods -n demo -l camel.apache.org/integration=hello -o jsonpath='{.items[*].status.containerStatuses[0].restartCount}'; }
before=$(pods)
for _ in $(seq 60); do bin/caravan logs -n demo hello 2>/dev/null | grep -q "Hello from Caravan #3" && break; sleep 1; done
echo "Its JVMs log, before the move:"
bin/caravan logs -n demo hello --tail 2

step "Moving it to operator-b"
k annotate integration hello -n demo camel.apache.org/operator.id=operator-b --overwrite
k wait -n demo --for=jsonpath='{.status.ownership.owner}'=operator-b integration/hello --timeout=120s
k wait -n demo --for=jsonpath='{.status.phase}'=Running integration/hello --timeout=120s
k get integrations -n demo
k get deployment hello -n demo \
  -o jsonpath='{"Deployment "}{.metadata.name}{": same object: "}{.metadata.uid}{", operator "}{.metadata.labels.camel\.apache\.org/operator\.id}{", "}{.status.readyReplicas}{"/"}{.spec.replicas}{" ready"}{"\n"}'
echo "Pods before the move: $before"
echo "Pods after the move:  $(pods) (restarts: $(restarts))"
[ "$(k get deployment hello -n demo -o jsonpath='{.metadata.uid}')" = "$uid" ] || { echo "the Deployment was recreated" >&2; exit 1; }
[ "$(pods)" = "$before" ] || { echo "the move restarted the pods" >&2; exit 1; }
[ "$(restarts)" = "0 0" ] || { echo "the move restarted a JVM" >&2; exit 1; }
k get events -n demo --field-selector reason=Adopted -o custom-columns=REASON:.reason,MESSAGE:.message
sleep 4
echo "The same JVMs keep logging after the move:"
bin/caravan logs -n demo hello --tail 2

step "Moving the greeter, built from source, to operator-b: it would build the same kit, so its kit wraps the image the pod runs"
greeter_pod=$(k get pods -n demo -l camel.apache.org/integration=greeter -o jsonpath='{.items[*].metadata.name}')
k annotate integration greeter -n demo camel.apache.org/operator.id=operator-b --overwrite
k wait -n demo --for=jsonpath='{.status.ownership.owner}'=operator-b integration/greeter --timeout=120s
k wait -n demo --for=jsonpath='{.status.phase}'=Running integration/greeter --timeout=120s
bin/caravan get kits -n demo -o wide
echo "The greeter's pod before the move: $greeter_pod; after: $(k get pods -n demo -l camel.apache.org/integration=greeter -o jsonpath='{.items[*].metadata.name}')"
[ "$(k get pods -n demo -l camel.apache.org/integration=greeter -o jsonpath='{.items[*].metadata.name}')" = "$greeter_pod" ] ||
  { echo "the move replaced the greeter's pod" >&2; exit 1; }

step "A canary: four integrations of team a move from operator-a to operator-b in waves of 1, then the rest, each wave once its JVMs are ready"
for i in 1 2 3 4; do
  sed -e "s|KIT_IMAGE|$kit|" -e "s/^  name: hello\$/  name: team-a-$i\n  labels:\n    team: a/" -e 's/replicas: 2/replicas: 1/' hack/demo/hello.yaml | k apply -f -
done
for i in 1 2 3 4; do
  k wait -n demo --for=condition=Ready "integration/team-a-$i" --timeout=180s >/dev/null
done
bin/caravan reassign -n demo --from operator-a --to operator-b -l team=a --waves 1,4 --wave-timeout 2m --rollback-on-failure
bin/caravan get -n demo

step "Done. Stop everything with: bin/caravan local down"
