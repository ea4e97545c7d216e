# shellcheck shell=bash
# What the harness needs from Debian, installed when missing (unless --no-install): the
# load generator, dig, the upstream, the pinning tools, and the peers asked for.

# apt_install PACKAGE... : installs from Debian without letting the packages start their
# own services (a policy-rc.d that refuses, only while installing and only if there is
# none already), so that nothing but the harness's own servers ever listens.
apt_install() {
	if [ "$INSTALL" = 0 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
		note "missing: $* (apt-get install $*)"
		return 1
	fi
	note "installing $* from Debian"
	local policy=/usr/sbin/policy-rc.d ours=0 status=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && ours=1
	fi
	{ apt-get install -y --no-install-recommends "$@" >&2 ||
		{ apt-get update >&2 && apt-get install -y --no-install-recommends "$@" >&2; }; } || status=$?
	[ "$ours" = 1 ] && rm -f "$policy"
	return "$status"
}

# ensure_tools : dnsperf, dig, unbound (the upstream), taskset, chrt and setsid.
ensure_tools() {
	local missing=() tool package
	for tool in dnsperf:dnsperf dig:dnsutils unbound:unbound taskset:util-linux chrt:util-linux setsid:util-linux; do
		package=${tool#*:}
		command -v "${tool%%:*}" >/dev/null || missing+=("$package")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	apt_install "${missing[@]}" || exit 2
}

# ensure_peer NAME : is the peer installed (now)? Says why when it is not.
ensure_peer() {
	local name=$1 package
	command -v "$(peer_binary "$name")" >/dev/null && return 0
	package=$(peer_package "$name")
	if [ -n "$package" ] && apt_install "$package" && command -v "$(peer_binary "$name")" >/dev/null; then
		return 0
	fi
	note "skipping $name: $(peer_binary "$name") is not installed ($(peer_hint "$name"))"
	return 1
}
