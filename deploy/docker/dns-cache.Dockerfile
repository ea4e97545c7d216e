# dns-cache: docker build -f deploy/docker/dns-cache.Dockerfile -t kube-node-net/dns-cache .
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p dns-cache --bin dns-cache

FROM debian:bookworm-slim
# node-local mode keeps its NOTRACK rules with iptables-restore / iptables-save.
RUN apt-get update \
    && apt-get install -y --no-install-recommends iptables \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/target/dist/dns-cache /usr/local/bin/dns-cache
# Runs as root with only NET_BIND_SERVICE (port 53), NET_ADMIN and NET_RAW (node-local mode's
# link and NOTRACK rules): the DaemonSet drops every other capability.
EXPOSE 53/udp 53/tcp 9253/tcp
ENTRYPOINT ["/usr/local/bin/dns-cache"]
CMD ["-conf", "/etc/coredns/Corefile"]
