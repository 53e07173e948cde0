#!/usr/bin/env bash
# Local stand-ins for the base images compose/docker-compose.yml and compose/Dockerfile name, for a
# machine with podman but without Docker Hub (only Debian mirrors and the npm registry reachable).
# Each stand-in is built on a Debian bookworm minbase (debootstrap) and tagged with exactly the name
# the compose file uses, so the compose file and the Dockerfile run unchanged:
#   docker.io/library/node:20-bookworm-slim   the host's Node 20 (node + npm), user node (uid 1000)
#   docker.io/library/nats:2.10-alpine        the host's nats-server (Debian's 2.9.10), entrypoint nats-server
#   docker.io/library/haproxy:2.9-alpine      Debian's haproxy (2.6), run as user haproxy
#   docker.io/prom/prometheus:v3.5.0          only with WITH_PROMETHEUS=1: Debian's prometheus 2.42 rejects
#                                             compose/prometheus.yml (http_headers needs a newer Prometheus)
# Grafana has no Debian package: no stand-in (leave it out, e.g. SMOKE_SERVICES in smoke.sh).
# They are stand-ins, not the official images: other versions of nats, haproxy and prometheus.
# Needs root, podman, debootstrap, and the host's node and nats-server:
#   apt-get install -y --no-install-recommends podman uidmap slirp4netns fuse-overlayfs runc \
#     netavark aardvark-dns debootstrap nats-server docker-compose   (+ a docker CLI: smoke.sh runs docker info)
#   compose/podman-stand-ins.sh               # builds all; STANDIN_DIR=/tmp/standin (the rootfs cache)
#   WITH_PROMETHEUS=1 compose/podman-stand-ins.sh   # also the (config-incompatible) Prometheus stand-in
# Then the smoke test through podman's Docker-compatible socket (docker CLI + docker-compose 1.29):
#   /etc/containers/containers.conf:  [containers] default_ulimits = []   (rlimits cannot be set here)
#                                     [engine] runtime = "runc"            (crun: "cgroups in hybrid mode")
#                                     [network] network_backend = "netavark"  (with aardvark-dns: service
#                                       names resolve; CNI without the dnsname plugin does not)
#   podman system service --time=0 unix:///run/podman/podman.sock &
#   DOCKER_HOST=unix:///run/podman/podman.sock SMOKE_WAIT_S=900 \
#     SMOKE_SERVICES="lb producer-sim worker-1 worker-2" compose/smoke.sh
set -euo pipefail

dir="${STANDIN_DIR:-/tmp/standin}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base="localhost/mdp-standin-debian:bookworm"
# apt-get inside a build needs the host's network (the default bridge may not reach the mirror).
build() { podman build --network host "$@"; }
mkdir -p "$dir"

# ---- Debian bookworm minbase --------------------------------------------------------------------
if ! podman image exists "$base"; then
  if [ ! -x "$dir/rootfs/bin/bash" ]; then
    echo "debootstrap bookworm minbase into $dir/rootfs..."
    debootstrap --variant=minbase bookworm "$dir/rootfs" "$mirror" >"$dir/debootstrap.log" 2>&1
  fi
  rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"*
  tar -C "$dir/rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$base"
fi

# ---- node:20-bookworm-slim ----------------------------------------------------------------------
node_bin="$(command -v node)"
case "$("$node_bin" -v)" in v20.*) ;; *) echo "host node is not v20: $("$node_bin" -v)" >&2; exit 1 ;; esac
npm_dir="$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")"
ctx="$dir/node"
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$node_bin" "$ctx/node"
cp -a "$npm_dir" "$ctx/npm"
# The host's built-in npmrc (a cafile, nodedir) is not the official image's: none.
rm -f "$ctx/npm/npmrc"
# Extra CAs the host trusts (a TLS-intercepting egress proxy): without them `npm ci` in the build
# fails with "self-signed certificate in certificate chain". Node reads NODE_EXTRA_CA_CERTS.
cat /dev/null ${STANDIN_EXTRA_CA:-/usr/local/share/ca-certificates/*.crt} >"$ctx/extra-ca.pem" 2>/dev/null || true
cat >"$ctx/Containerfile" <<EOF
FROM $base
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY extra-ca.pem /usr/local/share/mdp-standin-extra-ca.pem
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \\
 && node -v && npm -v
ENV NODE_VERSION=$("$node_bin" -v | tr -d v) NODE_EXTRA_CA_CERTS=/usr/local/share/mdp-standin-extra-ca.pem
CMD ["node"]
EOF
build -t docker.io/library/node:20-bookworm-slim "$ctx"

# ---- nats:2.10-alpine ---------------------------------------------------------------------------
# The official image's entrypoint runs nats-server with the given flags (compose passes -c <file>).
ctx="$dir/nats"
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$(command -v nats-server)" "$ctx/nats-server"
cat >"$ctx/Containerfile" <<EOF
FROM $base
COPY nats-server /usr/local/bin/nats-server
EXPOSE 4222 6222 8222
ENTRYPOINT ["nats-server"]
CMD ["-c", "/etc/nats/nats-server.conf"]
EOF
build -t docker.io/library/nats:2.10-alpine "$ctx"

# ---- haproxy:2.9-alpine -------------------------------------------------------------------------
# As the official image: config in /usr/local/etc/haproxy, master-worker in the foreground, user haproxy.
ctx="$dir/haproxy"
rm -rf "$ctx" && mkdir -p "$ctx"
cat >"$ctx/Containerfile" <<EOF
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends haproxy \\
 && rm -rf /var/lib/apt/lists/* && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \\
 && chown haproxy:haproxy /var/lib/haproxy
USER haproxy
WORKDIR /var/lib/haproxy
STOPSIGNAL SIGUSR1
ENTRYPOINT ["haproxy", "-W", "-db"]
CMD ["-f", "/usr/local/etc/haproxy/haproxy.cfg"]
EOF
build -t docker.io/library/haproxy:2.9-alpine "$ctx"

# ---- prom/prometheus:v3.5.0 ---------------------------------------------------------------------
if [ "${WITH_PROMETHEUS:-0}" = "1" ]; then
  ctx="$dir/prometheus"
  rm -rf "$ctx" && mkdir -p "$ctx"
  cat >"$ctx/Containerfile" <<EOF
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends prometheus \\
 && rm -rf /var/lib/apt/lists/* && mkdir -p /prometheus && chown nobody:nogroup /prometheus
USER nobody
WORKDIR /prometheus
EXPOSE 9090
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
EOF
  build -t docker.io/prom/prometheus:v3.5.0 "$ctx"
fi

podman images --format '{{.Repository}}:{{.Tag}}  {{.Size}}' | grep -E 'node|nats|haproxy|prometheus|standin'
