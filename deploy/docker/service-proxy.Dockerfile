# service-proxy: docker build -f deploy/docker/service-proxy.Dockerfile -t kube-node-net/service-proxy .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p service-proxy --bin service-proxy

FROM debian:bookworm-slim
# iptables-restore and iptables-save, legacy and nft builds (--iptables-variant), and nft
# (--proxy-mode nftables, and removing that mode's table when starting in the iptables mode).
RUN apt-get update \
    && apt-get install -y --no-install-recommends iptables nftables \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/dist/service-proxy /usr/local/bin/service-proxy
# Runs as root with only NET_ADMIN and NET_RAW (the DaemonSet drops every other capability):
# iptables-restore needs them and a non-root child would not inherit them.
EXPOSE 10256/tcp
ENTRYPOINT ["/usr/local/bin/service-proxy"]
