# Markdown tables from the harness's results file (tab-separated, one header line, one row
# per run; columns named in measure.sh). For each transport and mode: every server's
# medians over its repetitions, fastest first, then each build of ours against the best peer
# of every repetition.
#
# Variables (-v): duration, lat_duration (seconds of the load and latency runs), clients,
# outstanding (dnsperf's sockets and queries in flight).

BEGIN { FS = "\t" }

NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }

{
	group = $col["proto"] SUBSEP $col["mode"]
	if (!(group in seen_group)) { seen_group[group] = 1; groups[++ngroups] = group }
	key = group SUBSEP $col["server"]
	if (!(key in runs)) { servers[group, ++nservers[group]] = $col["server"]; kind[key] = $col["kind"] }
	n = ++runs[key]
	for (name in col) cell[key, name, n] = $col[name]
	rep = $col["rep"]
	reps[group, rep] = 1
	us = $col["user_us_q"] + $col["sys_us_q"]
	if ($col["kind"] == "peer") {
		if (best_qps[group, rep] == "" || $col["qps"] + 0 > best_qps[group, rep] + 0) {
			best_qps[group, rep] = $col["qps"]; best_qps_by[group, rep] = $col["server"]
		}
		if (best_us[group, rep] == "" || us < best_us[group, rep] + 0) {
			best_us[group, rep] = us; best_us_by[group, rep] = $col["server"]
		}
	} else {
		build_qps[key, rep] = $col["qps"]; build_us[key, rep] = us
	}
	lat_rate[group] = $col["lat_rate"]
}

# median of the numbers in a[1..n] (sorted in place); "-" when there are none.
function median(a, n,    i, j, t) {
	if (n == 0) return "-"
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}

# the median of one column over a server's runs, and its range in lo / hi.
function column(key, name,    i, n, a, v) {
	n = 0
	for (i = 1; i <= runs[key]; i++) {
		v = cell[key, name, i]
		if (v != "-" && v != "") a[++n] = v + 0
	}
	v = median(a, n)
	lo = n ? a[1] : "-"; hi = n ? a[n] : "-"
	return v
}

function kilo(q) { return sprintf("%.1fk", q / 1000) }

function title(group,    parts) {
	split(group, parts, SUBSEP)
	return toupper(parts[1]) " " (parts[2] == "hit" ? "cache hits" : parts[2] == "nx" ? "cached NXDOMAIN" : "forwarded misses (a new name each)")
}

END {
	for (g = 1; g <= ngroups; g++) {
		group = groups[g]
		nrep = 0
		for (k in reps) { split(k, p, SUBSEP); if (p[1] SUBSEP p[2] == group) nrep++ }
		printf "### %s\n\n", title(group)
		printf "Medians of %d repetition(s) of %d s at full load (%d clients × %d outstanding)", nrep, duration, clients, outstanding
		if (lat_rate[group] > 0) printf "; latency from a %d s run at %d q/s", lat_duration, lat_rate[group]
		printf ".\n\n"
		print "| server | q/s (min-max) | µs server CPU per query (user + system) | lost % | avg ms | p50 / p99 / p99.9 ms | RSS MiB | CPU % server / client / other |"
		print "|---|---|---|---|---|---|---|---|"
		# fastest first: order the servers by median q/s
		ns = nservers[group]
		for (i = 1; i <= ns; i++) { order[i] = servers[group, i]; rate[i] = column(group SUBSEP order[i], "qps") }
		for (i = 2; i <= ns; i++) {
			for (j = i; j > 1 && rate[j] > rate[j - 1]; j--) {
				t = rate[j]; rate[j] = rate[j - 1]; rate[j - 1] = t
				t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
			}
		}
		for (i = 1; i <= ns; i++) {
			key = group SUBSEP order[i]
			qps = column(key, "qps"); qlo = lo; qhi = hi
			user = column(key, "user_us_q"); sys = column(key, "sys_us_q")
			name = kind[key] == "build" ? "**" order[i] "**" : order[i]
			printf "| %s | %s (%s-%s) | %.2f (%.2f + %.2f) | %s | %s | %s / %s / %s | %s | %s / %s / %s |\n",
				name, kilo(qps), kilo(qlo), kilo(qhi), user + sys, user, sys,
				column(key, "lost_pct"), column(key, "avg_ms"),
				column(key, "p50_ms"), column(key, "p99_ms"), column(key, "p999_ms"),
				column(key, "rss_mib"), column(key, "server_cpu_pct"), column(key, "client_cpu_pct"),
				column(key, "other_cpu_pct")
		}
		print ""
		for (i = 1; i <= ns; i++) {
			key = group SUBSEP servers[group, i]
			if (kind[key] != "build") continue
			line = ""; nq = 0; nu = 0
			delete rq; delete ru
			for (r = 1; r <= nrep; r++) {
				if (!((key, r) in build_qps) || best_qps[group, r] == "") continue
				rq[++nq] = build_qps[key, r] / best_qps[group, r]
				ru[++nu] = best_us[group, r] / build_us[key, r]
				line = line sprintf("%s rep %d: %.2fx %s in q/s, %.2fx %s in CPU per query", nq > 1 ? ";" : "",
					r, rq[nq], best_qps_by[group, r], ru[nu], best_us_by[group, r])
			}
			if (nq == 0) continue
			printf "%s over the best peer of each repetition (above 1: %s is ahead):%s. Medians %.2fx in q/s, %.2fx in CPU per query.\n\n",
				servers[group, i], servers[group, i], line, median(rq, nq), median(ru, nu)
		}
	}
}
