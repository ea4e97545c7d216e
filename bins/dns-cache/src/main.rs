//! A CoreDNS-compatible caching DNS server built on dns-wire and corefile.

fn main() {}
