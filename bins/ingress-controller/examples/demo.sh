#!/usr/bin/env bash
# Serves examples/manifests through a real nginx: two tiny backends (python3 http.server on
# this host's own address, ports 18080 "web" and 18081 "api": an EndpointSlice may not name a
# loopback address, as the API server checks, so the manifests' 192.0.2.1 is replaced by the
# address of the default route), and the controller with nginx on 127.0.0.1:8080 (HTTP) and
# :8443 (HTTPS), /healthz and /metrics on 127.0.0.1:10254. Ctrl-C stops everything.
#
#   bins/ingress-controller/examples/demo.sh
#   curl -H 'Host: demo.example.com' http://127.0.0.1:8080/          # web
#   curl -H 'Host: demo.example.com' http://127.0.0.1:8080/api/      # api
#   curl -H 'Host: x.apps.example.com' http://127.0.0.1:8080/        # api (wildcard host)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
address=$(ip -4 route get 192.0.2.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
if [ -z "$address" ]; then
    echo "demo.sh: no IPv4 address with a default route for the backends" >&2
    exit 1
fi
mkdir -p "$work/manifests"
for file in "$here"/manifests/*.yaml; do
    sed "s/192\.0\.2\.1/$address/g" "$file" > "$work/manifests/$(basename "$file")"
done
for backend in web:18080 api:18081; do
    name=${backend%%:*} port=${backend##*:}
    mkdir -p "$work/$name/api" && echo "$name" > "$work/$name/index.html" && echo "$name" > "$work/$name/api/index.html"
    python3 -m http.server "$port" --bind "$address" --directory "$work/$name" >/dev/null 2>&1 &
    pids+=($!)
done
cargo run -q -p ingress-controller -- --manifests "$work/manifests" --prefix "$work/nginx" \
    --listen-address 127.0.0.1 --http-port 8080 --https-port 8443 \
    --healthz-host 127.0.0.1 --healthz-port 10254 &
pids+=($!)
wait "${pids[-1]}"
