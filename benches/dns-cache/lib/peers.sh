# shellcheck shell=bash
# The peers: how each is installed, configured as a forwarder of `.` to the upstream (no
# DNSSEC validation, its cache at a size that holds every name of a run) and started in the
# foreground on 127.0.0.1:PORT with WORKERS threads (one per CPU of --server-cpus).

# Every peer the harness knows, in the order `--peers all` runs them.
ALL_PEERS=(dnsdist unbound pdns kresd bind dnsmasq hickory coredns)

# peer_binary NAME : the executable that must be on PATH.
peer_binary() {
	case "$1" in
	dnsdist) echo dnsdist ;;
	unbound) echo unbound ;;
	pdns) echo pdns_recursor ;;
	kresd) echo kresd ;;
	bind) echo named ;;
	dnsmasq) echo dnsmasq ;;
	hickory) echo hickory-dns ;;
	coredns) echo coredns ;;
	*) return 1 ;;
	esac
}

# peer_package NAME : the Debian package that provides it; nothing when Debian has none.
peer_package() {
	case "$1" in
	dnsdist) echo dnsdist ;;
	unbound) echo unbound ;;
	pdns) echo pdns-recursor ;;
	kresd) echo knot-resolver ;;
	bind) echo bind9 ;;
	dnsmasq) echo dnsmasq-base ;; # the binary without the system service
	esac
}

# peer_hint NAME : how to get a peer Debian does not package.
peer_hint() {
	case "$1" in
	hickory) echo "cargo install hickory-dns --version 0.26.3 --no-default-features --features resolver, then put ~/.cargo/bin on PATH" ;;
	coredns) echo "put a coredns binary (https://github.com/coredns/coredns/releases) on PATH" ;;
	*) echo "apt-get install $(peer_package "$1")" ;;
	esac
}

# peer_version NAME : the installed version, for the report's header.
peer_version() {
	local package
	package=$(peer_package "$1")
	if [ -n "$package" ]; then
		dpkg-query -W -f '${Version}' "$package" 2>/dev/null && return 0
	fi
	"$(peer_binary "$1")" --version 2>&1 | head -n 1
}

# peer_command NAME PORT DIR : writes the peer's configuration into DIR and sets CMD to the
# command line that runs it.
peer_command() {
	local name=$1 port=$2 dir=$3 k
	case "$name" in
	dnsdist)
		{
			echo "setLocal('127.0.0.1:$port', { reusePort = true })"
			for ((k = 2; k <= WORKERS; k++)); do
				echo "addLocal('127.0.0.1:$port', { reusePort = true })"
			done
			cat <<CONF
setACL({ '127.0.0.0/8' })
newServer({ address = '127.0.0.1:$UPSTREAM_PORT', checkName = 'h1.bench.', checkInterval = 1 })
getPool(''):setCache(newPacketCache(100000, { maxTTL = 86400, minTTL = 0, temporaryFailureTTL = 60, staleTTL = 60, dontAge = false }))
CONF
		} >"$dir/dnsdist.conf"
		CMD=(dnsdist --supervised --disable-syslog -C "$dir/dnsdist.conf")
		;;
	unbound)
		cat >"$dir/unbound.conf" <<CONF
server:
  interface: 127.0.0.1
  port: $port
  do-ip6: no
  num-threads: $WORKERS
  so-reuseport: yes
  access-control: 127.0.0.0/8 allow
  do-not-query-localhost: no
  module-config: "iterator"
  qname-minimisation: no
  minimal-responses: yes
  msg-cache-size: 64m
  rrset-cache-size: 128m
  num-queries-per-thread: 4096
  outgoing-range: 8192
  do-daemonize: no
  use-syslog: no
  logfile: ""
  pidfile: ""
  chroot: ""
  username: ""
  directory: "$dir"
  verbosity: 0
remote-control:
  control-enable: no
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@$UPSTREAM_PORT
CONF
		CMD=(unbound -d -c "$dir/unbound.conf")
		;;
	pdns)
		: >"$dir/recursor.conf"
		CMD=(pdns_recursor --config-dir="$dir" --socket-dir="$dir" --daemon=no
			--disable-syslog --quiet=yes --loglevel=3
			--local-address=127.0.0.1 --local-port="$port" --reuseport=yes
			--threads="$WORKERS" --pdns-distributes-queries=no
			--forward-zones-recurse=".=127.0.0.1:$UPSTREAM_PORT" --dont-query=
			--dnssec=off --max-cache-entries=1000000)
		;;
	kresd)
		cat >"$dir/kresd.conf" <<CONF
net.ipv6 = false
net.listen('127.0.0.1', $port, { kind = 'dns' })
cache.size = 256 * MB
trust_anchors.remove('.')
policy.add(policy.all(policy.STUB('127.0.0.1@$UPSTREAM_PORT')))
CONF
		mkdir -p "$dir/rundir"
		if [ "$WORKERS" -eq 1 ]; then
			CMD=(kresd -n -q -c "$dir/kresd.conf" "$dir/rundir")
		else
			# kresd runs one process per worker; they share the socket and the cache.
			# shellcheck disable=SC2016 # the inner shell expands its own arguments
			CMD=(sh -c 'i=0; while [ "$i" -lt "$1" ]; do kresd -n -q -c "$2" "$3" & i=$((i + 1)); done; wait' \
				kresd-workers "$WORKERS" "$dir/kresd.conf" "$dir/rundir")
		fi
		;;
	bind)
		cat >"$dir/named.conf" <<CONF
options {
  directory "$dir";
  pid-file none;
  listen-on port $port { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion yes;
  allow-query { 127.0.0.0/8; };
  allow-recursion { 127.0.0.0/8; };
  forward only;
  forwarders { 127.0.0.1 port $UPSTREAM_PORT; };
  dnssec-validation no;
  minimal-responses yes;
  max-cache-size 256M;
  querylog no;
};
controls { };
CONF
		CMD=(named -g -4 -n "$WORKERS" -c "$dir/named.conf")
		;;
	dnsmasq)
		CMD=(dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts --no-poll
			--listen-address=127.0.0.1 --bind-interfaces --port="$port"
			--server="127.0.0.1#$UPSTREAM_PORT" --cache-size=10000 --dns-forward-max=10000
			--pid-file="$dir/dnsmasq.pid" --log-facility=- --user=root)
		;;
	hickory)
		cat >"$dir/hickory.toml" <<CONF
listen_addrs_ipv4 = ["127.0.0.1"]
listen_port = $port
user = "nobody"
group = "nogroup"

[[zones]]
zone = "."
zone_type = "External"

[zones.stores]
type = "forward"

[[zones.stores.name_servers]]
ip = "127.0.0.1"
trust_negative_responses = true
connections = [{ port = $UPSTREAM_PORT, protocol = { type = "udp" } }]
CONF
		CMD=(hickory-dns --config "$dir/hickory.toml" --zonedir "$dir" --port "$port" --workers "$WORKERS")
		;;
	coredns)
		write_corefile "$port" "$dir/Corefile"
		CMD=(coredns -conf "$dir/Corefile")
		;;
	*) return 1 ;;
	esac
}
