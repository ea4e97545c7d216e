# shellcheck shell=bash
# Processes the harness starts: each in a session of its own, pinned and prioritised, and
# stopped by that session only. Also what a session costs: CPU ticks, memory.

# Every session this harness started, by its leader's pid (= session and group id).
SESSIONS=()

# spawn CPUS LOG CMD... : runs CMD in a new session on CPUS, at the harness's priority,
# output to LOG. Sets SPAWNED to the session's id.
spawn() {
	local cpus=$1 log=$2
	shift 2
	# A background job of this (non-interactive) shell is no group leader, so setsid(1)
	# makes it a session leader in place: its pid is the session id.
	setsid "${PRIORITY[@]}" taskset -c "$cpus" "$@" >"$log" 2>&1 </dev/null &
	SPAWNED=$!
	SESSIONS+=("$SPAWNED")
	local tries=0
	until [ "$(ps -o sid= -p "$SPAWNED" 2>/dev/null | tr -d ' ')" = "$SPAWNED" ]; do
		tries=$((tries + 1))
		[ "$tries" -gt 50 ] && break
		kill -0 "$SPAWNED" 2>/dev/null || break
		sleep 0.02
	done
}

# session_pids SID : the pids of every process still in session SID.
session_pids() {
	ps -e -o pid=,sid= | awk -v s="$1" '$2 == s { print $1 }'
}

# stop_session SID : TERM to the session's process group, KILL after 3 s if any is left.
stop_session() {
	local sid=$1 waited=0
	kill -TERM -- "-$sid" 2>/dev/null || return 0
	while [ -n "$(session_pids "$sid")" ]; do
		waited=$((waited + 1))
		if [ "$waited" -ge 30 ]; then
			kill -KILL -- "-$sid" 2>/dev/null
			sleep 0.1
			break
		fi
		sleep 0.1
	done
	wait "$sid" 2>/dev/null || true
}

# stop_all : stops every session still running (called on exit, also after Ctrl-C).
stop_all() {
	local sid
	for sid in "${SESSIONS[@]}"; do
		[ -n "$(session_pids "$sid")" ] && stop_session "$sid"
	done
	SESSIONS=()
}

# session_ticks SID : "USER SYSTEM", the clock ticks spent so far by the session's processes
# (all their threads). Fields 14 and 15 of /proc/PID/stat, counted after the command name,
# which may hold spaces.
session_ticks() {
	local pid user=0 sys=0 u s
	for pid in $(session_pids "$1"); do
		read -r u s < <(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{ print $12, $13 }')
		user=$((user + ${u:-0}))
		sys=$((sys + ${s:-0}))
	done
	echo "$user $sys"
}

# session_rss_kib SID : resident memory of the session's processes, KiB.
session_rss_kib() {
	local pid total=0 kib
	for pid in $(session_pids "$1"); do
		kib=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
		total=$((total + ${kib:-0}))
	done
	echo "$total"
}

# busy_ticks : non-idle clock ticks of all CPUs since boot (user, nice, system, irq,
# softirq, steal).
busy_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}

# wait_until_quiet MAX_SECONDS : waits, at most MAX_SECONDS, until the other processes of
# the machine use less than QUIET_PCT % of all its CPUs over one second.
wait_until_quiet() {
	local limit=$1 waited=0 before after pct
	[ "$limit" -gt 0 ] || return 0
	while :; do
		before=$(busy_ticks)
		sleep 1
		after=$(busy_ticks)
		pct=$(((after - before) * 100 / (TICKS_PER_S * NCPU)))
		[ "$pct" -lt "$QUIET_PCT" ] && return 0
		waited=$((waited + 1))
		if [ "$waited" -ge "$limit" ]; then
			note "the machine is still ${pct} % busy after ${limit} s; measuring anyway"
			return 0
		fi
	done
}
