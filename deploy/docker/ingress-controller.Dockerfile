# ingress-controller: docker build -f deploy/docker/ingress-controller.Dockerfile -t kube-node-net/ingress-controller .
#
# Also a drop-in image for ingress-nginx's own manifests, which run the container's args
# through the image's entrypoint (args[0] is /nginx-ingress-controller), as uid 101 gid 82 with
# only NET_BIND_SERVICE and no privilege escalation, nginx on 80 and 443, and /wait-shutdown
# as the preStop hook.
FROM rust:1.95-bookworm AS build
# etcd-client (the etcd lease store) compiles etcd's .proto files.
RUN apt-get update \
    && apt-get install -y --no-install-recommends protobuf-compiler libprotobuf-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --locked --profile dist -p ingress-controller --bin ingress-controller

FROM debian:bookworm-slim
COPY --from=build /src/target/dist/ingress-controller /usr/local/bin/ingress-controller
# Debian's nginx with the Lua module the balancer runs in; procps for kill(1), which stops
# nginx and the controller (/wait-shutdown); libcap2-bin for setcap, removed after use.
#
# Binding 80 and 443 without root, as ingress-nginx's image: a file capability on each
# program of the chain (the entrypoint, then nginx), since with allowPrivilegeEscalation: false
# an exec keeps no capability the program before it did not hold. Containers that run it must
# keep NET_BIND_SERVICE (the kernel refuses to start a program whose file capability it cannot
# grant): ingress-nginx's manifests add it, and so do ours.
#
# ingress-nginx's program name and preStop hook are this binary: given first in the args, the
# name is skipped; invoked as wait-shutdown, it stops the controller and waits for nginx.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx libnginx-mod-http-lua procps libcap2-bin \
    && setcap cap_net_bind_service=+ep /usr/sbin/nginx \
    && setcap cap_net_bind_service=+ep /usr/local/bin/ingress-controller \
    && apt-get purge -y libcap2-bin \
    && rm -rf /var/lib/apt/lists/* \
    && ln -s /usr/local/bin/ingress-controller /nginx-ingress-controller \
    && ln -s /usr/local/bin/ingress-controller /wait-shutdown \
    && groupadd --gid 65532 ingress \
    && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin ingress \
    && install -d -o 65532 -g 82 -m 0775 /var/lib/ingress-controller /var/lib/nginx /var/log/nginx
# Non-root; the directories above are writable by this user and by ingress-nginx's (101:82).
USER 65532:65532
EXPOSE 80/tcp 443/tcp 8080/tcp 8443/tcp 10254/tcp
# The binary itself (not a shell, which holds no capability): it is pid 1, which
# /wait-shutdown signals.
ENTRYPOINT ["/usr/local/bin/ingress-controller"]
CMD ["run", "--manifests=/etc/ingress-controller/objects", "--http-port=8080", "--https-port=8443"]
