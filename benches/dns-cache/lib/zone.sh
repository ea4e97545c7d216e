# shellcheck shell=bash
# The upstream every server forwards to, and the query files of each mode.
#
# The upstream is unbound answering from local data only (no recursion, no cache effects):
#   hN.bench  A 10.x.y.z  for N in 1..NAMES (h1.bench is 10.0.0.1), TTL 3600;
#   anything.miss.bench   A 10.255.0.1 (a redirect zone), so every miss name has an answer;
#   any other name under bench. (nxN.bench)  NXDOMAIN with the zone's SOA.

# host_address N : the A record of hN.bench.
host_address() {
	echo "10.$((($1 >> 16) & 255)).$((($1 >> 8) & 255)).$(($1 & 255))"
}

# write_upstream_config FILE
write_upstream_config() {
	local i
	{
		cat <<CONF
server:
  interface: 127.0.0.1
  port: $UPSTREAM_PORT
  do-ip6: no
  num-threads: 1
  so-reuseport: yes
  num-queries-per-thread: 4096
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  do-daemonize: no
  use-syslog: no
  logfile: ""
  pidfile: ""
  chroot: ""
  username: ""
  directory: "$SCRATCH"
  verbosity: 0
  local-zone: "." static
  local-data: ". 86400 IN NS ns.bench."
  local-data: ". 86400 IN SOA ns.bench. hostmaster.bench. 1 3600 600 86400 300"
  local-zone: "bench." static
  local-data: "bench. 3600 IN NS ns.bench."
  local-data: "bench. 3600 IN SOA ns.bench. hostmaster.bench. 1 3600 600 86400 300"
  local-data: "ns.bench. 3600 IN A 127.0.0.1"
  local-zone: "miss.bench." redirect
  local-data: "miss.bench. 300 IN A 10.255.0.1"
CONF
		for ((i = 1; i <= NAMES; i++)); do
			printf '  local-data: "h%d.bench. 3600 IN A %s"\n' "$i" "$(host_address "$i")"
		done
		printf 'remote-control:\n  control-enable: no\n'
	} >"$1"
}

# write_query_files DIR : q-hit (the NAMES hosts), q-nx (NAMES absent names), q-miss and
# q-miss-lat (names never asked before: one for the load run, one for the latency run, each
# long enough for 200k q/s over its run; dnsperf reads them once, `-n 1`).
write_query_files() {
	local dir=$1 tag
	awk -v n="$NAMES" 'BEGIN { for (i = 1; i <= n; i++) printf "h%d.bench A\n", i }' >"$dir/q-hit"
	awk -v n="$NAMES" 'BEGIN { for (i = 1; i <= n; i++) printf "nx%d.bench A\n", i }' >"$dir/q-nx"
	# A tag of this invocation, so that no name repeats one a server saw in an earlier run.
	tag=$(date +%s)$$
	awk -v n=$((DURATION * 200000)) -v t="$tag" \
		'BEGIN { for (i = 1; i <= n; i++) printf "u%d-%s.miss.bench A\n", i, t }' >"$dir/q-miss"
	awk -v n=$((LAT_DURATION * 200000)) -v t="$tag" \
		'BEGIN { for (i = 1; i <= n; i++) printf "l%d-%s.miss.bench A\n", i, t }' >"$dir/q-miss-lat"
}

# write_corefile PORT FILE : the NodeLocal-DNSCache-like Corefile dns-cache (and CoreDNS)
# run with: default cache sizes (9984 + 9984), one forward to the upstream.
write_corefile() {
	cat >"$2" <<CONF
.:$1 {
    bind 127.0.0.1
    errors
    cache 30 {
        success 9984
        denial 9984
    }
    forward . 127.0.0.1:$UPSTREAM_PORT
}
CONF
}
