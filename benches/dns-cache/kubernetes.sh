#!/usr/bin/env bash
# The kubernetes plugin at scale (issue 33): SERVICES Services with ENDPOINTS ready endpoints
# in all (default 10,000 and 50,000) from a manifest folder; prints, as Markdown rows for
# BENCHMARKS.md: the server's memory with and without the objects, the time from writing a
# Service to its first answer, and the server CPU per query (dnsperf) for cluster names
# answered by the plugin, the same names as cache hits, and unbound answering them from
# local-data, in the same run.
#
#   cargo build --release -p dns-cache
#   benches/dns-cache/kubernetes.sh [--binary target/release/dns-cache] [--services N]
#                                   [--endpoints N] [--duration S] [--cpu N]
#
# Needs python3, dig, dnsperf and unbound. Everything on 127.0.0.1, ports from 5490.
set -euo pipefail

binary=target/release/dns-cache
services=10000
endpoints=50000
duration=10
cpu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --services) services=$2; shift 2 ;;
    --endpoints) endpoints=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --cpu) cpu=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

# 100 namespaces; Service i has ENDPOINTS/SERVICES ready endpoints and two named ports.
python3 - "$work/objects" "$services" "$endpoints" <<'PY'
import os, sys
out, services, endpoints = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
per = endpoints // services
os.makedirs(out)
namespaces = 100
for n in range(namespaces):
    docs = [f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: ns{n}}}\n"]
    for i in range(n, services, namespaces):
        ip = f"10.{96 + i // 65536}.{i // 256 % 256}.{i % 256}"
        docs.append(
            f"apiVersion: v1\nkind: Service\nmetadata: {{name: svc{i}, namespace: ns{n}}}\n"
            f"spec:\n  clusterIP: {ip}\n  ports:\n  - {{name: http, protocol: TCP, port: 80}}\n"
            f"  - {{name: grpc, protocol: TCP, port: 9000}}\n")
        eps = "".join(
            f"- addresses: [10.{128 + (i * per + e) // 65536}.{(i * per + e) // 256 % 256}.{(i * per + e) % 256}]\n"
            f"  conditions: {{ready: true}}\n" for e in range(per))
        docs.append(
            f"apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
            f"metadata:\n  name: svc{i}-1\n  namespace: ns{n}\n  labels: {{kubernetes.io/service-name: svc{i}}}\n"
            f"addressType: IPv4\nendpoints:\n{eps}ports:\n- {{name: http, protocol: TCP, port: 8080}}\n")
    with open(f"{out}/ns{n}.yaml", "w") as f:
        f.write("---\n".join(docs))
PY
mkdir "$work/empty"
# The names asked: 1000 Services spread over the namespaces.
for i in $(seq 0 10 9999); do
  [ "$i" -lt "$services" ] && echo "svc$i.ns$((i % 100)).svc.cluster.local A"
done > "$work/names"

server() { # PORT CACHE(0|1) DIR: starts dns-cache, prints its PID
  local cache=""
  [ "$2" = 1 ] && cache="cache 30"
  printf 'cluster.local:%s {\n    bind 127.0.0.1\n    %s\n    kubernetes\n}\n' "$1" "$cache" > "$work/Corefile.$1"
  taskset -c "$cpu" "$binary" -conf "$work/Corefile.$1" -manifests "$3" >"$work/log.$1" 2>&1 &
  echo $!
}
answered() { dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short "$2" A 2>/dev/null | grep -q .; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# A change to its answer: a new Service in a new file, three times right after the first
# answer (while the start-up's work may still run), then three times once the server has
# settled.
change() { # K WHEN
  local t0 t1
  t0=$(date +%s.%N)
  printf 'apiVersion: v1\nkind: Service\nmetadata: {name: new%s, namespace: ns0}\nspec:\n  clusterIP: 10.99.0.%s\n  ports: [{port: 80}]\n' "$1" "$1" > "$work/objects/new$1.yaml"
  until answered 5491 "new$1.ns0.svc.cluster.local"; do sleep 0.01; done
  t1=$(date +%s.%N)
  echo "| Service new$1 added, $2 | $(python3 -c "print(round(($t1 - $t0) * 1000))") |"
}

# Memory and start-up.
empty=$(server 5490 0 "$work/empty"); pids+=("$empty")
start=$(date +%s.%N)
full=$(server 5491 0 "$work/objects"); pids+=("$full")
until answered 5491 svc1.ns1.svc.cluster.local; do sleep 0.05; done
loaded=$(date +%s.%N)
rss_full=$(rss "$full")
early=$(for k in 1 2 3; do change "$k" "in the first seconds"; done)
echo "| objects | RSS MiB | index built and answering after s |"
echo "|---|---|---|"
echo "| none | $(( $(rss "$empty") / 1024 )) | |"
echo "| $services Services, $endpoints endpoints | $(( rss_full / 1024 )) | $(python3 -c "print(round($loaded - $start, 2))") |"
echo

echo "| change | first answer after ms |"
echo "|---|---|"
echo "$early"
sleep 10
for k in 4 5 6; do change "$k" "settled"; done
echo
echo "RSS after the six changes: $(( $(rss "$full") / 1024 )) MiB"
echo

# CPU per query: the plugin, cache hits, unbound local-data.
cached=$(server 5492 1 "$work/objects"); pids+=("$cached")
until answered 5492 svc1.ns1.svc.cluster.local; do sleep 0.05; done
{
  printf 'server:\n  interface: 127.0.0.1\n  port: 5493\n  num-threads: 1\n  do-daemonize: no\n  chroot: ""\n  username: ""\n  directory: "%s"\n  pidfile: ""\n  use-syslog: no\n  do-ip6: no\n  msg-cache-size: 64m\n  local-zone: "cluster.local." static\n' "$work"
  for i in $(seq 0 10 9999); do
    [ "$i" -lt "$services" ] && printf '  local-data: "svc%s.ns%s.svc.cluster.local. 5 IN A 10.%s.%s.%s"\n' "$i" $((i % 100)) $((96 + i / 65536)) $((i / 256 % 256)) $((i % 256))
  done
  printf 'remote-control:\n  control-enable: no\n'
} > "$work/unbound.conf"
taskset -c "$cpu" unbound -d -c "$work/unbound.conf" >"$work/log.unbound" 2>&1 &
ub=$!; pids+=("$ub")
until answered 5493 svc0.ns0.svc.cluster.local; do sleep 0.05; done
hz=$(getconf CLK_TCK)
measure() { # NAME PORT PID
  dnsperf -s 127.0.0.1 -p "$2" -d "$work/names" -l 1 -Q 20000 >/dev/null 2>&1 # warm (and fill the cache)
  local before after out queries
  before=$(cpu_ticks "$3")
  out=$(dnsperf -s 127.0.0.1 -p "$2" -d "$work/names" -l "$duration" -c 10 -q 100 2>&1)
  after=$(cpu_ticks "$3")
  queries=$(echo "$out" | awk '/Queries completed:/ {print $3}')
  local qps
  qps=$(echo "$out" | awk '/Queries per second:/ {print int($4)}')
  echo "| $1 | $qps | $(python3 -c "print(round(($after - $before) / $hz / $queries * 1e6, 2))") |"
}
echo "| answered by | q/s | µs server CPU per query |"
echo "|---|---|---|"
measure "kubernetes plugin (no cache)" 5491 "$full"
measure "cache hit (cache 30 before kubernetes)" 5492 "$cached"
measure "unbound local-data" 5493 "$ub"
