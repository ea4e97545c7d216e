# ingress-controller: docker build -f deploy/docker/ingress-controller.Dockerfile -t kube-node-net/ingress-controller .
FROM rust:1.95-bookworm AS build
# etcd-client (the etcd lease store) compiles etcd's .proto files.
RUN apt-get update \
    && apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p ingress-controller --bin ingress-controller

FROM debian:bookworm-slim
# Debian's nginx with the Lua module the balancer runs in.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx libnginx-mod-http-lua \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --gid 65532 ingress \
    && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin ingress \
    && install -d -o 65532 -g 65532 /var/lib/ingress-controller /var/lib/nginx /var/log/nginx
COPY --from=build /src/target/dist/ingress-controller /usr/local/bin/ingress-controller
# Non-root: nginx listens on 8080 and 8443 (the Deployment's --http-port/--https-port; its
# Service maps 80 and 443).
USER 65532:65532
EXPOSE 8080/tcp 8443/tcp 10254/tcp
ENTRYPOINT ["/usr/local/bin/ingress-controller"]
CMD ["run", "--manifests=/etc/ingress-controller/objects", "--http-port=8080", "--https-port=8443"]
