#!/usr/bin/env python3
"""Reference model of kube-proxy's iptables-mode rule generation: the test oracle.

What it is for
    `iptables-model/tests/reference_model.rs` feeds random clusters to this script and to the
    crate's generator and requires the same restore text from both. The value of that test is
    that the two sides were written apart: this file was written from kube-proxy's behaviour,
    never by translating the crate's Rust code. When this model and the crate disagree, read
    kube-proxy's source to decide which one is wrong.

Where the behaviour comes from (kubernetes/kubernetes, v1.31/v1.32 development line)
    pkg/proxy/iptables/proxier.go   syncProxyRules (which rules each service port produces, in
                                     which chain and order), writeServiceToEndpointRules (the
                                     affinity and probability rules), the chain-name hashes,
                                     computeProbability
    pkg/proxy/topology.go            CategorizeEndpoints (cluster / local endpoint lists, the
                                     fallback to serving-and-terminating endpoints)
    pkg/proxy/serviceport.go         ExternallyAccessible, UsesClusterEndpoints,
                                     UsesLocalEndpoints, source-range and LB-IP filtering
    pkg/api/v1/service/util.go       ExternalPolicyLocal, NeedsHealthCheck
    pkg/proxy/iptables/proxier_test.go  sortIPTablesRules (the canonical order of `canonical`)
    The input schema (JSON, Kubernetes API field names) and its defaults are those of the
    kube-proxy test vectors in the repository's iptables test data (its README.md).

Scope
    A full sync of one IPv4 proxier: ClusterIP, NodePort, ExternalIP and LoadBalancer ports;
    external and internal traffic policies; terminating-endpoint fallback; source ranges;
    ClientIP affinity; masquerade options; nfacct counters; localhost NodePorts. Not modelled:
    partial syncs and stale-chain deletion, large-cluster mode (over 1000 endpoints), IPv6,
    `nodePortAddresses`, topology hints and duplicate endpoints; inputs that need them are
    refused with an error rather than answered wrongly. Standard library only.

Usage
    kube_proxy.py SPEC.json                restore text, in kube-proxy's emission order
    kube_proxy.py --canonical SPEC.json    the same in the unit tests' canonical order
    kube_proxy.py --jsonl                  one JSON spec per stdin line; one JSON string (the
                                           canonical restore text) per stdout line, flushed
                                           line by line
"""

import base64
import hashlib
import ipaddress
import json
import re
import sys

DEFAULT_OPTIONS = {
    "hostname": "test-hostname",
    "nodeIP": "192.168.0.2",
    "podCIDR": "10.0.0.0/8",
    "masqueradeMark": "0x4000",
    "masqueradeAll": False,
    "localhostNodePorts": True,
    "nfacct": True,
    "conntrackTCPLiberal": False,
    "randomFully": False,
    "ipv6": False,
}

# nfacct counter names kube-proxy creates (pkg/proxy/metrics).
LOCALHOST_NODEPORT_COUNTER = "localhost_nps_accepted_pkts"
INVALID_DROP_COUNTER = "ct_state_invalid_dropped_pkts"
LAST_RULE_COMMENT = "kubernetes service nodeports; NOTE: this must be the last rule in this chain"


class Unsupported(Exception):
    """The input needs a part of kube-proxy this model leaves out."""


# --- addresses -------------------------------------------------------------------------------


def ipv4(text):
    """An IPv4 address read the way Go's ParseIPSloppy reads it (leading zeros allowed)."""
    parts = text.strip().split(".")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise Unsupported(f"not an IPv4 address: {text!r}")
    value = 0
    for part in parts:
        octet = int(part, 10)
        if octet > 255:
            raise Unsupported(f"not an IPv4 address: {text!r}")
        value = value * 256 + octet
    return ipaddress.IPv4Address(value)


def ipv4_net(text):
    """An IPv4 CIDR, leniently parsed, host bits cleared (what Go prints for an IPNet)."""
    address, _, length = text.strip().partition("/")
    if not length.isdigit():
        raise Unsupported(f"not an IPv4 CIDR: {text!r}")
    return ipaddress.IPv4Network((int(ipv4(address)), int(length, 10)), strict=False)


# --- names -----------------------------------------------------------------------------------


def hash16(text):
    """First 16 characters of base32(sha256(text)): the suffix of every per-service chain."""
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode()[:16]


def port_name_string(namespace, name, port_name):
    """ServicePortName.String(): `ns/name:port`, or `ns/name` for an unnamed port."""
    return f"{namespace}/{name}:{port_name}" if port_name else f"{namespace}/{name}"


def probability(n):
    """computeProbability: 1/n printed with ten decimals."""
    return "%0.10f" % (1.0 / n)


def quoted(text):
    return f'"{text}"'


# --- inputs ----------------------------------------------------------------------------------


class Endpoint:
    """One endpoint of one service port: address, port, node and conditions."""

    def __init__(self, raw, port):
        self.ip = str(ipv4(raw["addresses"][0]))
        self.target = f"{self.ip}:{port}"
        conditions = raw.get("conditions") or {}
        self.ready = conditions.get("ready", True)
        self.serving = conditions.get("serving", self.ready)
        self.terminating = conditions.get("terminating", False)
        self.node = raw.get("nodeName")

    def serving_terminating(self):
        return self.serving and self.terminating


def endpoints_of(spec, namespace, name, port_name, protocol):
    """The endpoints of a service port, sorted by `ip:port` as bytes."""
    found = {}
    for sl in spec.get("endpointSlices", []):
        if sl["namespace"] != namespace or sl["service"] != name:
            continue
        for port in sl.get("ports", []):
            if (port.get("name") or "") != port_name or port.get("protocol", "TCP") != protocol:
                continue
            for raw in sl.get("endpoints", []):
                if raw.get("addresses"):
                    ep = Endpoint(raw, port["port"])
                    if ep.target in found:
                        # Which duplicate wins has changed between kube-proxy releases.
                        raise Unsupported(f"endpoint {ep.target} listed twice")
                    found[ep.target] = ep
    return [found[key] for key in sorted(found, key=str.encode)]


class ServicePort:
    """What kube-proxy keeps of one port of one Service (its servicePortInfo)."""

    def __init__(self, svc, port):
        kind = svc.get("type", "ClusterIP")
        self.namespace, self.name = svc["namespace"], svc["name"]
        self.port_name = port.get("name") or ""
        self.spn = port_name_string(self.namespace, self.name, self.port_name)
        self.protocol = port.get("protocol", "TCP")
        self.proto = self.protocol.lower()
        self.cluster_ip = str(ipv4(svc["clusterIP"]))
        self.port = port["port"]
        # The API server allows a node port only on NodePort and LoadBalancer services.
        self.node_port = port.get("nodePort", 0) if kind in ("NodePort", "LoadBalancer") else 0
        self.external_ips = [str(ipv4(ip)) for ip in svc.get("externalIPs", [])]
        self.lb_ips = [str(ipv4(ip)) for ip in svc.get("loadBalancerIPs", [])]
        ranges = [ipv4_net(r) for r in svc.get("loadBalancerSourceRanges", [])]
        # A /0 range allows everyone, which is the same as no ranges at all.
        self.source_ranges = [] if any(r.prefixlen == 0 for r in ranges) else ranges
        reachable_outside = kind in ("NodePort", "LoadBalancer") or (
            kind == "ClusterIP" and bool(self.external_ips)
        )
        self.external_local = (
            reachable_outside and svc.get("externalTrafficPolicy") == "Local"
        )
        self.internal_local = svc.get("internalTrafficPolicy") == "Local"
        needs_health_check = kind == "LoadBalancer" and self.external_local
        self.health_check_port = svc.get("healthCheckNodePort", 0) if needs_health_check else 0
        self.affinity_seconds = (
            svc.get("affinityTimeoutSeconds", 10800)
            if svc.get("sessionAffinity") == "ClientIP"
            else None
        )
        chain_hash = hash16(self.spn + self.proto)
        self.svc_chain = "KUBE-SVC-" + chain_hash
        self.svl_chain = "KUBE-SVL-" + chain_hash
        self.ext_chain = "KUBE-EXT-" + chain_hash
        self.fw_chain = "KUBE-FW-" + chain_hash

    def externally_accessible(self):
        return self.node_port != 0 or bool(self.lb_ips) or bool(self.external_ips)

    def uses_cluster_endpoints(self):
        return not self.internal_local or self.externally_accessible()

    def uses_local_endpoints(self):
        return self.internal_local or (self.external_local and self.externally_accessible())

    def sep_chain(self, ep):
        return "KUBE-SEP-" + hash16(self.spn + self.proto + ep.target)

    def match(self, address, port):
        """`-m PROTO -p PROTO -d ADDRESS --dport PORT`, kube-proxy's spelling."""
        return ["-m", self.proto, "-p", self.proto, "-d", address, "--dport", str(port)]


def categorize(sp, endpoints, hostname):
    """Cluster endpoints, local endpoints, all endpoints this node reaches, and whether any
    endpoint is usable anywhere (topology.go's CategorizeEndpoints, without hints)."""
    cluster, local, anywhere = [], [], False
    if sp.uses_cluster_endpoints():
        cluster = [ep for ep in endpoints if ep.ready]
        if not cluster:
            cluster = [ep for ep in endpoints if ep.serving_terminating()]
        anywhere = bool(cluster)
    if not sp.uses_local_endpoints():
        return cluster, local, cluster, anywhere
    anywhere = anywhere or any(ep.ready or ep.serving_terminating() for ep in endpoints)
    mine = [ep for ep in endpoints if ep.node == hostname]
    local = [ep for ep in mine if ep.ready] or [ep for ep in mine if ep.serving_terminating()]
    if not sp.uses_cluster_endpoints():
        return cluster, local, local, anywhere
    union = {ep.target: ep for ep in cluster + local}
    return cluster, local, list(union.values()), anywhere


# --- generation ------------------------------------------------------------------------------


class Table:
    """The chain declarations and rules of one table, in the order they are written."""

    def __init__(self, name, chains):
        self.name = name
        self.chains = list(chains)
        self.rules = []

    def declare(self, chain):
        self.chains.append(chain)

    def add(self, chain, *words):
        self.rules.append(" ".join(["-A", chain, *words]))

    def text(self):
        lines = [f"*{self.name}"]
        lines += [f":{chain} - [0:0]" for chain in self.chains]
        lines += self.rules
        lines.append("COMMIT")
        return "\n".join(lines) + "\n"


def options_of(spec):
    options = dict(DEFAULT_OPTIONS)
    options.update(spec.get("options") or {})
    if options["ipv6"]:
        raise Unsupported("IPv6 proxier")
    if options.get("nodePortAddresses") is not None:
        raise Unsupported("nodePortAddresses")
    return options


def service_ports(spec):
    """Every proxied service port, ordered by namespace, name and port name (kube-proxy walks
    a Go map; any fixed order gives the same canonical text)."""
    ports = []
    for svc in spec.get("services", []):
        if svc.get("type") == "ExternalName" or svc.get("clusterIP", "") in ("", "None"):
            continue
        ports += [ServicePort(svc, port) for port in svc.get("ports", [])]
    ports.sort(key=lambda sp: (sp.namespace, sp.name, sp.port_name))
    total = sum(
        len(endpoints_of(spec, sp.namespace, sp.name, sp.port_name, sp.protocol)) for sp in ports
    )
    if total > 1000:
        raise Unsupported("large-cluster mode (more than 1000 endpoints)")
    return ports


def generate(spec):
    """The `iptables-restore` input of a full sync, filter table then nat table."""
    o = options_of(spec)
    mark = o["masqueradeMark"]
    pod_cidr = str(ipv4_net(o["podCIDR"])) if o["podCIDR"] else None
    node_ip = ipv4(o["nodeIP"])
    nfacct = o["nfacct"]
    filt = Table(
        "filter",
        ["KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-FORWARD", "KUBE-NODEPORTS",
         "KUBE-PROXY-FIREWALL"],
    )
    nat = Table("nat", ["KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-POSTROUTING", "KUBE-MARK-MASQ"])

    nat.add("KUBE-POSTROUTING", "-m", "mark", "!", "--mark", f"{mark}/{mark}", "-j", "RETURN")
    nat.add("KUBE-POSTROUTING", "-j", "MARK", "--xor-mark", mark)
    masquerade = ["-m", "comment", "--comment", quoted("kubernetes service traffic requiring SNAT"),
                  "-j", "MASQUERADE"]
    nat.add("KUBE-POSTROUTING", *masquerade, *(["--random-fully"] if o["randomFully"] else []))
    nat.add("KUBE-MARK-MASQ", "-j", "MARK", "--or-mark", mark)
    if o["localhostNodePorts"]:
        filt.declare("KUBE-FIREWALL")
        filt.add("KUBE-FIREWALL", "-m", "comment", "--comment",
                 quoted("block incoming localnet connections"), "-d", "127.0.0.0/8", "!", "-s",
                 "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED,DNAT",
                 "-j", "DROP")

    for sp in service_ports(spec):
        endpoints = endpoints_of(spec, sp.namespace, sp.name, sp.port_name, sp.protocol)
        write_service_port(o, filt, nat, sp, endpoints, pod_cidr, node_ip, nfacct)

    last = ["-m", "addrtype", "--dst-type", "LOCAL"]
    if not o["localhostNodePorts"]:
        last += ["!", "-d", "127.0.0.0/8"]
    nat.add("KUBE-SERVICES", "-m", "comment", "--comment", quoted(LAST_RULE_COMMENT), *last,
            "-j", "KUBE-NODEPORTS")
    if not o["conntrackTCPLiberal"]:
        counter = ["-m", "nfacct", "--nfacct-name", INVALID_DROP_COUNTER] if nfacct else []
        filt.add("KUBE-FORWARD", "-m", "conntrack", "--ctstate", "INVALID", *counter, "-j", "DROP")
    filt.add("KUBE-FORWARD", "-m", "comment", "--comment", quoted("kubernetes forwarding rules"),
             "-m", "mark", "--mark", f"{mark}/{mark}", "-j", "ACCEPT")
    filt.add("KUBE-FORWARD", "-m", "comment", "--comment",
             quoted("kubernetes forwarding conntrack rule"), "-m", "conntrack", "--ctstate",
             "RELATED,ESTABLISHED", "-j", "ACCEPT")
    return filt.text() + nat.text()


def write_service_port(o, filt, nat, sp, endpoints, pod_cidr, node_ip, nfacct):
    """Every rule and chain of one service port, in syncProxyRules' order."""
    spn = sp.spn
    cluster, local, reachable, has_endpoints = categorize(sp, endpoints, o["hostname"])
    internal_chain = sp.svl_chain if sp.internal_local else sp.svc_chain
    has_internal = has_endpoints and (bool(local) or not sp.internal_local)
    external_policy_chain = sp.svl_chain if sp.external_local else sp.svc_chain
    has_external = has_endpoints and (bool(local) or not sp.external_local)
    uses_ext_chain = has_endpoints and sp.externally_accessible()
    uses_fw_chain = has_endpoints and bool(sp.lb_ips) and bool(sp.source_ranges)
    lb_chain = sp.fw_chain if uses_fw_chain else sp.ext_chain

    if not has_endpoints:
        internal_verdict = external_verdict = ("REJECT", quoted(f"{spn} has no endpoints"))
    else:
        no_local = ("DROP", quoted(f"{spn} has no local endpoints"))
        internal_verdict = None if has_internal else no_local
        external_verdict = None if has_external else no_local

    # Destinations: cluster IP, external IPs, load-balancer IPs, node port, health check.
    if has_internal:
        nat.add("KUBE-SERVICES", "-m", "comment", "--comment", quoted(f"{spn} cluster IP"),
                *sp.match(sp.cluster_ip, sp.port), "-j", internal_chain)
    else:
        target, comment = internal_verdict
        filt.add("KUBE-SERVICES", "-m", "comment", "--comment", comment,
                 *sp.match(sp.cluster_ip, sp.port), "-j", target)
    for ip in sp.external_ips:
        if has_endpoints:
            nat.add("KUBE-SERVICES", "-m", "comment", "--comment", quoted(f"{spn} external IP"),
                    *sp.match(ip, sp.port), "-j", sp.ext_chain)
        if not has_external:
            target, comment = external_verdict
            filt.add("KUBE-EXTERNAL-SERVICES", "-m", "comment", "--comment", comment,
                     *sp.match(ip, sp.port), "-j", target)
    for ip in sp.lb_ips:
        if has_endpoints:
            nat.add("KUBE-SERVICES", "-m", "comment", "--comment",
                    quoted(f"{spn} loadbalancer IP"), *sp.match(ip, sp.port), "-j", lb_chain)
        if uses_fw_chain:
            filt.add("KUBE-PROXY-FIREWALL", "-m", "comment", "--comment",
                     quoted(f"{spn} traffic not accepted by {sp.fw_chain}"),
                     *sp.match(ip, sp.port), "-j", "DROP")
    if not has_external:
        target, comment = external_verdict
        for ip in sp.lb_ips:
            filt.add("KUBE-EXTERNAL-SERVICES", "-m", "comment", "--comment", comment,
                     *sp.match(ip, sp.port), "-j", target)
    if sp.node_port:
        proto = ["-m", sp.proto, "-p", sp.proto]
        if has_endpoints:
            if o["localhostNodePorts"] and nfacct:
                nat.add("KUBE-NODEPORTS", "-m", "comment", "--comment", spn, *proto,
                        "-d", "127.0.0.0/8", "--dport", str(sp.node_port),
                        "-m", "nfacct", "--nfacct-name", LOCALHOST_NODEPORT_COUNTER,
                        "-j", sp.ext_chain)
            nat.add("KUBE-NODEPORTS", "-m", "comment", "--comment", spn, *proto,
                    "--dport", str(sp.node_port), "-j", sp.ext_chain)
        if not has_external:
            target, comment = external_verdict
            filt.add("KUBE-EXTERNAL-SERVICES", "-m", "comment", "--comment", comment,
                     "-m", "addrtype", "--dst-type", "LOCAL", *proto,
                     "--dport", str(sp.node_port), "-j", target)
    if sp.health_check_port:
        filt.add("KUBE-NODEPORTS", "-m", "comment", "--comment",
                 quoted(f"{spn} health check node port"), "-m", "tcp", "-p", "tcp",
                 "--dport", str(sp.health_check_port), "-j", "ACCEPT")

    # The service's own nat chains.
    if has_internal:
        cluster_ip_match = ["-m", "comment", "--comment", quoted(f"{spn} cluster IP"),
                            *sp.match(sp.cluster_ip, sp.port)]
        if o["masqueradeAll"]:
            nat.add(internal_chain, *cluster_ip_match, "-j", "KUBE-MARK-MASQ")
        elif pod_cidr:
            nat.add(internal_chain, *cluster_ip_match, "!", "-s", pod_cidr,
                    "-j", "KUBE-MARK-MASQ")
    if uses_ext_chain:
        nat.declare(sp.ext_chain)
        ext = sp.ext_chain
        if not sp.external_local:
            nat.add(ext, "-m", "comment", "--comment",
                    quoted(f"masquerade traffic for {spn} external destinations"),
                    "-j", "KUBE-MARK-MASQ")
        else:
            if pod_cidr:
                nat.add(ext, "-m", "comment", "--comment",
                        quoted(f"pod traffic for {spn} external destinations"),
                        "-s", pod_cidr, "-j", sp.svc_chain)
            nat.add(ext, "-m", "comment", "--comment",
                    quoted(f"masquerade LOCAL traffic for {spn} external destinations"),
                    "-m", "addrtype", "--src-type", "LOCAL", "-j", "KUBE-MARK-MASQ")
            nat.add(ext, "-m", "comment", "--comment",
                    quoted(f"route LOCAL traffic for {spn} external destinations"),
                    "-m", "addrtype", "--src-type", "LOCAL", "-j", sp.svc_chain)
        if has_external:
            nat.add(ext, "-j", external_policy_chain)
    if uses_fw_chain:
        nat.declare(sp.fw_chain)
        allowed = ["-m", "comment", "--comment", quoted(f"{spn} loadbalancer IP")]
        for cidr in sp.source_ranges:
            nat.add(sp.fw_chain, *allowed, "-s", str(cidr), "-j", sp.ext_chain)
        if any(node_ip in cidr for cidr in sp.source_ranges):
            for ip in sp.lb_ips:
                nat.add(sp.fw_chain, *allowed, "-s", ip, "-j", sp.ext_chain)
        nat.add(sp.fw_chain, "-m", "comment", "--comment",
                quoted(f"other traffic to {spn} will be dropped by KUBE-PROXY-FIREWALL"))
    if cluster and sp.uses_cluster_endpoints():
        nat.declare(sp.svc_chain)
        write_dispatch(nat, sp, sp.svc_chain, cluster)
    if local and sp.uses_local_endpoints():
        nat.declare(sp.svl_chain)
        write_dispatch(nat, sp, sp.svl_chain, local)
    for ep in reachable:
        sep = sp.sep_chain(ep)
        nat.declare(sep)
        nat.add(sep, "-m", "comment", "--comment", spn, "-s", ep.ip, "-j", "KUBE-MARK-MASQ")
        remember = [] if sp.affinity_seconds is None else ["-m", "recent", "--name", sep, "--set"]
        nat.add(sep, "-m", "comment", "--comment", spn, *remember, "-m", sp.proto, "-p", sp.proto,
                "-j", "DNAT", "--to-destination", ep.target)


def write_dispatch(nat, sp, chain, endpoints):
    """A SVC or SVL chain: affinity checks first, then one rule per endpoint, each taken with
    probability 1/(endpoints left), the last one unconditionally."""
    if sp.affinity_seconds is not None:
        for ep in endpoints:
            sep = sp.sep_chain(ep)
            nat.add(chain, "-m", "comment", "--comment", quoted(f"{sp.spn} -> {ep.target}"),
                    "-m", "recent", "--name", sep, "--rcheck", "--seconds",
                    str(sp.affinity_seconds), "--reap", "-j", sep)
    for i, ep in enumerate(endpoints):
        left = len(endpoints) - i
        odds = [] if left == 1 else ["-m", "statistic", "--mode", "random", "--probability",
                                     probability(left)]
        nat.add(chain, "-m", "comment", "--comment", quoted(f"{sp.spn} -> {ep.target}"), *odds,
                "-j", sp.sep_chain(ep))


# --- canonical order -------------------------------------------------------------------------

COMMENT = re.compile(r'-m comment --comment ("[^"]*"|\S+)')


def service_of(rule):
    """The service name a rule's comment starts with (up to the first space or colon), or
    None for a rule without a comment."""
    found = COMMENT.search(rule)
    if not found:
        return None
    return re.split(r"[ :]", found.group(1).strip('"'), maxsplit=1)[0]


def chain_key(name):
    rank = {"KUBE-NODEPORTS": 0, "KUBE-SERVICES": 1}.get(name)
    if rank is not None:
        return (rank, b"")
    return (2 if name.startswith("KUBE-") else 3, name.encode())


def sort_by_service(rules, last_marker=None):
    """Stable sort by the comment's service name (a rule without a comment sorts as the empty
    name); a rule whose comment holds `last_marker` goes after all others."""
    def key(rule):
        found = COMMENT.search(rule)
        is_last = bool(last_marker and found and last_marker in found.group(1))
        return (is_last, (service_of(rule) or "").encode())
    return sorted(rules, key=key)


def canonical(text):
    """sortIPTablesRules: tables by name; chains NODEPORTS, SERVICES, other KUBE-* by name,
    the rest by name; rules grouped by chain in original order, except KUBE-NODEPORTS and
    KUBE-SERVICES sorted by service name with nat's nodeports jump kept last; -X lines last."""
    tables, current = {}, None
    for line in text.splitlines():
        if line.startswith("*"):
            current = {"chains": [], "rules": {}, "deleted": []}
            tables[line[1:]] = current
        elif line.startswith(":"):
            current["chains"].append(line[1:].split(" ", 1)[0])
        elif line.startswith("-A "):
            chain = line.split(" ", 2)[1]
            current["rules"].setdefault(chain, []).append(line)
        elif line.startswith("-X "):
            current["deleted"].append(line)
    out = []
    for name in sorted(tables, key=str.encode):
        table = tables[name]
        chains = sorted(table["chains"], key=chain_key)
        out.append(f"*{name}")
        out += [f":{chain} - [0:0]" for chain in chains]
        for chain in chains:
            rules = table["rules"].get(chain, [])
            if chain == "KUBE-NODEPORTS":
                rules = sort_by_service(rules)
            elif chain == "KUBE-SERVICES":
                rules = sort_by_service(rules, "must be the last rule" if name == "nat" else None)
            out += rules
        out += table["deleted"]
        out.append("COMMIT")
    return "\n".join(out) + "\n"


# --- command line ----------------------------------------------------------------------------


def main(argv):
    if argv == ["--jsonl"]:
        for line in sys.stdin:
            if line.strip():
                sys.stdout.write(json.dumps(canonical(generate(json.loads(line)))) + "\n")
                sys.stdout.flush()
        return 0
    if len(argv) == 2 and argv[0] == "--canonical":
        with open(argv[1], encoding="utf-8") as f:
            sys.stdout.write(canonical(generate(json.load(f))))
        return 0
    if len(argv) == 1 and not argv[0].startswith("-"):
        with open(argv[0], encoding="utf-8") as f:
            sys.stdout.write(generate(json.load(f)))
        return 0
    sys.stderr.write(__doc__.split("Usage\n", 1)[1])
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
