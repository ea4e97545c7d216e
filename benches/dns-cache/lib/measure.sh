# shellcheck shell=bash
# One measured run: a fresh server process, checked, warmed, loaded by dnsperf for DURATION
# seconds, optionally paced at LAT_RATE q/s for the latency percentiles, then stopped. Its
# numbers become one row of the results file.

# The columns of the results file, in order.
RESULT_COLUMNS="server	kind	mode	proto	rep	qps	lost_pct	avg_ms	user_us_q	sys_us_q	server_cpu_pct	client_cpu_pct	other_cpu_pct	rss_mib	lat_rate	p50_ms	p90_ms	p99_ms	p999_ms	rcodes"

# dnsperf_field FILE FIELD : one figure of dnsperf's summary.
dnsperf_field() {
	case "$2" in
	qps) awk '/Queries per second:/ { print $4 }' "$1" ;;
	completed) awk '/Queries completed:/ { print $3 }' "$1" ;;
	lost) awk '/Queries lost:/ { gsub(/[(%)]/, "", $4); print $4 }' "$1" ;;
	# The first average is the queries' (a TCP run adds the connections' after it).
	avg_ms) awk '/Average Latency \(s\):/ { printf "%.3f", $4 * 1000; exit }' "$1" ;;
	rcodes) sed -n 's/^ *Response codes: *//p' "$1" | sed 's/ *([0-9.]*%)//g; s/, /,/g; s/ /:/g' ;;
	esac
}

# percentiles FILE : "P50 P90 P99 P99.9" in ms, nearest rank, over the latencies of a
# verbose dnsperf run (one `> RCODE NAME TYPE SECONDS` line per answered query).
percentiles() {
	awk '$1 == ">" { print $NF * 1000 }' "$1" | sort -g | awk '
		{ v[NR] = $1 }
		function rank(p,    r) { r = int(p * NR + 0.999999); return r < 1 ? 1 : r }
		END {
			if (NR == 0) { print "- - - -"; exit }
			printf "%.3f %.3f %.3f %.3f\n", v[rank(0.5)], v[rank(0.9)], v[rank(0.99)], v[rank(0.999)]
		}'
}

# load ARGS... : dnsperf on the client CPUs at the harness's priority, against PORT.
load() {
	"${PRIORITY[@]}" taskset -c "$CLIENT_CPUS" dnsperf -s 127.0.0.1 -p "$PORT" -m "$PROTO" -t 2 "$@"
}

# answers_first_name : does the server on PORT answer h1.bench with its address?
answers_first_name() {
	local transport=+notcp
	[ "$PROTO" = tcp ] && transport=+tcp
	[ "$(dig @127.0.0.1 -p "$PORT" "$transport" +time=1 +tries=1 +short h1.bench A 2>/dev/null | tail -n 1)" = "$(host_address 1)" ]
}

# measure SERVER KIND MODE REP PORT : one run; appends its row to RESULTS.
measure() {
	local server=$1 kind=$2 mode=$3 rep=$4
	PORT=$5
	local dir=$SCRATCH/$rep-$mode-$server queries once=() expected
	mkdir -p "$dir"
	case "$mode" in
	hit) queries=$SCRATCH/q-hit expected=NOERROR ;;
	nx) queries=$SCRATCH/q-nx expected=NXDOMAIN ;;
	miss) queries=$SCRATCH/q-miss expected=NOERROR once=(-n 1) ;;
	esac
	if [ "$kind" = build ]; then
		write_corefile "$PORT" "$dir/Corefile"
		CMD=("${BUILD_PATHS[$server]}" -conf "$dir/Corefile")
	else
		peer_command "$server" "$PORT" "$dir"
	fi

	wait_until_quiet "$QUIET_WAIT"
	spawn "$SERVER_CPUS" "$dir/server.log" "${CMD[@]}"
	local sid=$SPAWNED tries=0
	until answers_first_name; do
		tries=$((tries + 1))
		if [ "$tries" -ge 50 ] || [ -z "$(session_pids "$sid")" ]; then
			note "$server does not answer h1.bench on port $PORT; skipped ($(tail -n 2 "$dir/server.log" | tr '\n' ' '))"
			stop_session "$sid"
			return 1
		fi
		sleep 0.2
	done
	if [ "$mode" != miss ]; then
		load -d "$queries" -n 1 -c 1 -q 50 -Q 20000 >"$dir/warm.txt" 2>&1
	fi

	local ticks0 ticks1 busy0 busy1 ns0 ns1
	ticks0=$(session_ticks "$sid")
	busy0=$(busy_ticks)
	ns0=$(date +%s%N)
	{
		TIMEFORMAT='%U %S'
		time load -d "$queries" "${once[@]}" -l "$DURATION" -c "$CLIENTS" -q "$OUTSTANDING" >"$dir/load.txt" 2>&1
	} 2>"$dir/client-time.txt"
	ns1=$(date +%s%N)
	busy1=$(busy_ticks)
	ticks1=$(session_ticks "$sid")
	local rss_kib
	rss_kib=$(session_rss_kib "$sid")

	local p50=- p90=- p99=- p999=-
	if [ "$LAT_RATE" -gt 0 ]; then
		local paced=$queries
		[ "$mode" = miss ] && paced=$SCRATCH/q-miss-lat
		load -d "$paced" "${once[@]}" -l "$LAT_DURATION" -c "$CLIENTS" -q "$OUTSTANDING" \
			-Q "$LAT_RATE" -v >"$dir/latency.txt" 2>&1
		read -r p50 p90 p99 p999 < <(percentiles "$dir/latency.txt")
	fi
	stop_session "$sid"

	local qps completed lost avg rcodes
	qps=$(dnsperf_field "$dir/load.txt" qps)
	completed=$(dnsperf_field "$dir/load.txt" completed)
	lost=$(dnsperf_field "$dir/load.txt" lost)
	avg=$(dnsperf_field "$dir/load.txt" avg_ms)
	rcodes=$(dnsperf_field "$dir/load.txt" rcodes)
	case "$rcodes" in
	"$expected":*) ;;
	*) note "$server, $mode: answers were ${rcodes:-none}, not all $expected" ;;
	esac
	# CPU shares over the wall time of the load run; µs per answered query, user and system.
	local row
	row=$(awk -v server="$server" -v kind="$kind" -v mode="$mode" -v proto="$PROTO" -v rep="$rep" \
		-v qps="${qps:-0}" -v answered="${completed:-0}" -v lost="${lost:--}" -v avg="${avg:--}" \
		-v t0="$ticks0" -v t1="$ticks1" -v b0="$busy0" -v b1="$busy1" -v ns0="$ns0" -v ns1="$ns1" \
		-v hz="$TICKS_PER_S" -v cpus="$NCPU" -v rss="$rss_kib" -v rate="$LAT_RATE" \
		-v p50="$p50" -v p90="$p90" -v p99="$p99" -v p999="$p999" -v rcodes="${rcodes:--}" \
		-v client="$(cat "$dir/client-time.txt")" '
		BEGIN {
			split(t0, a, " "); split(t1, b, " "); split(client, c, " ")
			wall = (ns1 - ns0) / 1e9
			user = (b[1] - a[1]) / hz; sys = (b[2] - a[2]) / hz
			server_pct = (user + sys) / wall * 100
			client_pct = (c[1] + c[2]) / wall * 100
			other_pct = (b1 - b0) / hz / wall * 100 - server_pct - client_pct
			per_q = answered > 0 ? 1e6 / answered : 0
			printf "%s\t%s\t%s\t%s\t%d\t%.0f\t%s\t%s\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%s\t%s\t%s\t%s\t%s\n",
				server, kind, mode, proto, rep, qps, lost, avg, user * per_q, sys * per_q,
				server_pct, client_pct, other_pct, rss / 1024, rate, p50, p90, p99, p999, rcodes
		}')
	echo "$row" >>"$RESULTS"
	progress "$row"
}
