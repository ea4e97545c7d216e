#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# dns-cache against the caching servers a user would pick instead, on loopback, in one
# invocation: same upstream, same pinning, same priority, servers interleaved within each
# repetition. Prints Markdown tables on stdout (progress goes to stderr).
#
# Usage: benches/dns-cache/bench.sh [OPTIONS]   (root: it installs what is missing, and --rt)
#
#   --peers LIST        peers to run, comma-separated, or `all` or `none`
#                       (dnsdist,unbound,pdns,kresd,bind,dnsmasq,hickory,coredns)  [unbound,dnsdist]
#   --build NAME=PATH   a dns-cache binary to measure; repeat to compare builds
#                       [ours=target/dist/dns-cache under the repository]; `none`: peers only
#   --modes LIST        hit (1000 cached names), nx (1000 cached NXDOMAINs),
#                       miss (a new name each query, forwarded)               [hit,nx,miss]
#   --proto udp|tcp     dnsperf's transport (tcp: CLIENTS pipelined connections)  [udp]
#   --reps N            repetitions; each runs every mode and every server     [3]
#   --duration S        seconds of each full-load run, at most 60              [10]
#   --lat-rate Q        then a run paced at Q q/s for p50/p90/p99/p99.9; 0 skips  [20000]
#   --lat-duration S    seconds of that run, at most 60                        [5]
#   --clients N         dnsperf clients (sockets)                              [10]
#   --outstanding N     queries in flight, at most                             [100]
#   --names N           names in the hit and nx query lists                    [1000]
#   --server-cpus LIST  CPUs of the server under test; peers get one worker each   [0]
#   --client-cpus LIST  CPUs of dnsperf and of the upstream                    [1]
#   --rt                run server, upstream and dnsperf SCHED_RR (chrt -r 1), so other
#                       work on the machine does not delay their wake-ups
#   --quiet-wait S      before each run, wait up to S s for the machine to be idle  [0]
#   --out DIR           keep results.tsv, tables.md and every run's logs here
#                       [a temporary directory, removed at exit]
#   --no-install        do not apt-get install missing tools and peers
#
# Everything listens on 127.0.0.1: the upstream on 5300, the servers from 5390 up.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
# shellcheck source=lib/procs.sh
. "$HERE/lib/procs.sh"
# shellcheck source=lib/zone.sh
. "$HERE/lib/zone.sh"
# shellcheck source=lib/peers.sh
. "$HERE/lib/peers.sh"
# shellcheck source=lib/measure.sh
. "$HERE/lib/measure.sh"
# shellcheck source=lib/install.sh
. "$HERE/lib/install.sh"

note() { echo "bench: $*" >&2; }
progress() {
	# one line per run: server mode rep, q/s, µs/q (user + system)
	awk -F'\t' '{ printf "bench: %-10s %-4s %s rep %s  %8.0f q/s  %5.2f us/q (%.2f + %.2f)  lost %s %%  p99 %s ms  rss %s MiB\n",
		$1, $3, $4, $5, $6, $9 + $10, $9, $10, $7, $18, $14 }' <<<"$1" >&2
}
usage() { sed -n '2,/^set -euo/{/^set -euo/d;/^# shellcheck/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }

PEERS=unbound,dnsdist
BUILDS=()
MODES=hit,nx,miss
PROTO=udp
REPS=3
DURATION=10
LAT_RATE=20000
LAT_DURATION=5
CLIENTS=10
OUTSTANDING=100
NAMES=1000
SERVER_CPUS=0
CLIENT_CPUS=1
RT=0
QUIET_WAIT=0
QUIET_PCT=25
OUT=""
INSTALL=1
UPSTREAM_PORT=5300
FIRST_PORT=5390

while [ $# -gt 0 ]; do
	case "$1" in
	--peers) PEERS=$2 && shift ;;
	--build) BUILDS+=("$2") && shift ;;
	--modes | --mode) MODES=$2 && shift ;;
	--proto) PROTO=$2 && shift ;;
	--reps) REPS=$2 && shift ;;
	--duration) DURATION=$2 && shift ;;
	--lat-rate) LAT_RATE=$2 && shift ;;
	--lat-duration) LAT_DURATION=$2 && shift ;;
	--clients) CLIENTS=$2 && shift ;;
	--outstanding) OUTSTANDING=$2 && shift ;;
	--names) NAMES=$2 && shift ;;
	--server-cpus) SERVER_CPUS=$2 && shift ;;
	--client-cpus) CLIENT_CPUS=$2 && shift ;;
	--rt) RT=1 ;;
	--quiet-wait) QUIET_WAIT=$2 && shift ;;
	--out) OUT=$2 && shift ;;
	--no-install) INSTALL=0 ;;
	-h | --help) usage && exit 0 ;;
	*) note "unknown option $1 (see --help)" && exit 2 ;;
	esac
	shift
done

for n in "$REPS" "$DURATION" "$LAT_RATE" "$LAT_DURATION" "$CLIENTS" "$OUTSTANDING" "$NAMES" "$QUIET_WAIT"; do
	[[ $n =~ ^[0-9]+$ ]] || { note "not a whole number: $n" && exit 2; }
done
[ "$DURATION" -le 60 ] || { note "--duration is at most 60 s" && exit 2; }
[ "$LAT_DURATION" -le 60 ] || { note "--lat-duration is at most 60 s" && exit 2; }
case "$PROTO" in udp | tcp) ;; *) note "--proto is udp or tcp" && exit 2 ;; esac
IFS=, read -r -a MODE_LIST <<<"$MODES"
for m in "${MODE_LIST[@]}"; do
	case "$m" in hit | nx | miss) ;; *) note "unknown mode $m" && exit 2 ;; esac
done
case "$PEERS" in
all) PEER_LIST=("${ALL_PEERS[@]}") ;;
none) PEER_LIST=() ;;
*) IFS=, read -r -a PEER_LIST <<<"$PEERS" ;;
esac
for p in "${PEER_LIST[@]}"; do
	peer_binary "$p" >/dev/null || { note "unknown peer $p" && exit 2; }
done

# Our builds, by name.
declare -A BUILD_PATHS=()
BUILD_NAMES=()
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("ours=$REPO/target/dist/dns-cache")
[ "${BUILDS[*]}" = none ] && BUILDS=()
for b in "${BUILDS[@]}"; do
	name=${b%%=*} path=${b#*=}
	if [ "$name" = "$b" ] || [ -z "$name" ]; then
		note "--build wants NAME=PATH, not $b" && exit 2
	fi
	[ -x "$path" ] || { note "no dns-cache binary at $path (cargo build --profile dist -p dns-cache)" && exit 2; }
	BUILD_PATHS[$name]=$(cd "$(dirname "$path")" && pwd)/$(basename "$path")
	BUILD_NAMES+=("$name")
done

# One CPU alone cannot hold both sides apart: everything shares it then.
NCPU=$(nproc)
if [ "$NCPU" -lt 2 ]; then
	SERVER_CPUS=0 CLIENT_CPUS=0
	note "one CPU: server, dnsperf and upstream share it"
fi
WORKERS=$(taskset -c "$SERVER_CPUS" nproc)
TICKS_PER_S=$(getconf CLK_TCK)
if [ "$RT" = 1 ]; then
	PRIORITY=(chrt --rr 1)
else
	PRIORITY=(env)
fi

ensure_tools
PEERS_RUN=()
for p in "${PEER_LIST[@]}"; do
	if ensure_peer "$p"; then PEERS_RUN+=("$p"); fi
done

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/dns-cache-bench.XXXXXX")
finish() {
	stop_all
	if [ -n "$OUT" ]; then
		mkdir -p "$OUT" && cp -r "$SCRATCH/." "$OUT/" && note "results and logs in $OUT"
	fi
	rm -rf "$SCRATCH"
}
trap finish EXIT
trap 'exit 130' INT TERM HUP
RESULTS=$SCRATCH/results.tsv
echo "$RESULT_COLUMNS" >"$RESULTS"

write_upstream_config "$SCRATCH/upstream.conf"
write_query_files "$SCRATCH"
spawn "$CLIENT_CPUS" "$SCRATCH/upstream.log" unbound -d -c "$SCRATCH/upstream.conf"
PORT=$UPSTREAM_PORT
for _ in $(seq 50); do
	if answers_first_name; then break; fi
	sleep 0.2
done
answers_first_name || { note "the upstream did not start: $(tail -n 3 "$SCRATCH/upstream.log")" && exit 1; }

# Servers in the order they run within a repetition, each with its own port.
SERVERS=() KINDS=() PORTS=()
port=$FIRST_PORT
for b in "${BUILD_NAMES[@]}"; do SERVERS+=("$b") KINDS+=(build) PORTS+=("$port") && port=$((port + 1)); done
for p in "${PEERS_RUN[@]}"; do SERVERS+=("$p") KINDS+=(peer) PORTS+=("$port") && port=$((port + 1)); done

header() {
	local cpu memory os
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	memory=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	os=$(. /etc/os-release && echo "$PRETTY_NAME")
	echo "## dns-cache against its peers, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "- commit: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	echo "- machine: $NCPU × $cpu, $memory, $os, Linux $(uname -r); load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
	echo "- layout: server on CPU $SERVER_CPUS ($WORKERS worker(s) for the peers), dnsperf and the upstream on CPU $CLIENT_CPUS; priority: ${PRIORITY[*]}"
	echo "- load: $(dnsperf -H 2>&1 | awk '/^Version/ { print "dnsperf " $2 }') over $PROTO, $CLIENTS clients × $OUTSTANDING outstanding, $DURATION s per run, $REPS repetition(s)"
	local s line="- servers:"
	for s in "${BUILD_NAMES[@]}"; do line="$line $s (${BUILD_PATHS[$s]}),"; done
	for s in "${PEERS_RUN[@]}"; do line="$line $s $(peer_version "$s"),"; done
	echo "${line%,}"
	echo
}
header >"$SCRATCH/tables.md"
cat "$SCRATCH/tables.md"

for rep in $(seq "$REPS"); do
	for mode in "${MODE_LIST[@]}"; do
		for i in "${!SERVERS[@]}"; do
			measure "${SERVERS[$i]}" "${KINDS[$i]}" "$mode" "$rep" "${PORTS[$i]}" || true
		done
	done
done

awk -v duration="$DURATION" -v lat_duration="$LAT_DURATION" -v clients="$CLIENTS" \
	-v outstanding="$OUTSTANDING" -f "$HERE/lib/tables.awk" "$RESULTS" | tee -a "$SCRATCH/tables.md"
