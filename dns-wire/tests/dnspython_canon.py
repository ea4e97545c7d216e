#!/usr/bin/env python3
"""Canonical form of DNS messages as dnspython reads them, for dns-wire's differential test.

Reads one message per line as hex on stdin; prints one line per message on stdout:

    h=ID,FLAGS;q=Q,...;an=RR,...;ns=RR,...;ar=RR,...;e=EDNS;len=N

Q is NAMEHEX/TYPE/CLASS with the name in uncompressed wire form (case kept). RR is
LOWERNAMEHEX/TYPE/CLASS/TTL/RDATAHEX with RDATA in uncompressed wire form; records are grouped
into RRsets as dnspython does (duplicates dropped, the RRset's TTL being the smallest), then
sorted. EDNS is PAYLOAD/TTLFIELD/CODE:DATAHEX... or '-'. N is the length of dnspython's own
re-encoding. A message dnspython rejects prints 'error=ExceptionName: message'.
"""
import sys

import dns.exception
import dns.message
import dns.name
import dns.rdatatype


def wire_name(name):
    return name.to_wire().hex()


def rr_lines(section):
    out = set()
    for rrset in section:
        owner = wire_name(rrset.name.canonicalize())
        for rd in rrset:
            out.add(f"{owner}/{rrset.rdtype:d}/{rrset.rdclass:d}/{rrset.ttl}/{rd.to_wire().hex()}")
    return ",".join(sorted(out))


def canon(wire):
    try:
        msg = dns.message.from_wire(wire)
    except Exception as e:  # noqa: BLE001 - the exception's name is the answer
        return f"error={type(e).__name__}: {e}"
    qs = ",".join(f"{wire_name(q.name)}/{q.rdtype:d}/{q.rdclass:d}" for q in msg.question)
    if msg.opt is None:
        edns = "-"
    else:
        opt = msg.opt
        opts = "".join(f"{o.otype:d}:{o.to_wire().hex()}." for o in opt[0].options)
        edns = f"{opt.rdclass:d}/{opt.ttl}/{opts}"
    try:
        relen = len(msg.to_wire(want_shuffle=False))
    except Exception:  # noqa: BLE001
        relen = -1
    return (
        f"h={msg.id},{wire[2] << 8 | wire[3]};q={qs};an={rr_lines(msg.answer)};"
        f"ns={rr_lines(msg.authority)};ar={rr_lines(msg.additional)};e={edns};len={relen}"
    )


def main():
    for line in sys.stdin:
        line = line.strip()
        if line:
            print(canon(bytes.fromhex(line)))


if __name__ == "__main__":
    main()
