//! The upstreams `forward` takes from a resolv.conf-style file (CoreDNS `parse.HostPortOrFile`
//! reading it with miekg/dns `ClientConfigFromReader`).
//!
//! The rules, from that reader: the text is read line by line; a line's fields are split at
//! Unicode whitespace; a line whose first field is `nameserver` adds its second field, as
//! written, and every other line (`search`, `options`, comments starting with `#` or `;`,
//! blank lines) adds nothing. Nothing else is checked: a comment after the address is just a
//! further field, but `nameserver #x` adds `#x`. Reading stops, keeping what it found, at a
//! line of 64 KiB or more (Go's `bufio.Scanner` limit, whose error the reader drops). CoreDNS
//! then joins each server with the file's port, always 53, as Go's `net.JoinHostPort` does
//! (`[fe80::1%eth0]:53` for an IPv6 address, with its zone).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The longest line Go's `bufio.Scanner` reads (`MaxScanTokenSize` minus the newline).
const MAX_LINE: usize = 64 * 1024 - 1;

/// The upstreams (`HOST:53`) CoreDNS's `forward` takes from the text of a resolv.conf-style
/// file, in file order.
///
/// ```
/// let text = "# from DHCP\nsearch cluster.local\nnameserver 10.0.0.10\nnameserver fe80::1%eth0 # link-local\n";
/// assert_eq!(
///     corefile::plugins::resolv_conf_upstreams(text),
///     ["10.0.0.10:53", "[fe80::1%eth0]:53"]
/// );
/// ```
pub fn resolv_conf_upstreams(text: &str) -> Vec<String> {
    let mut upstreams = Vec::new();
    for line in text.split('\n') {
        if line.len() > MAX_LINE {
            break;
        }
        let mut fields = line.split(char::is_whitespace).filter(|f| !f.is_empty());
        if fields.next() == Some("nameserver")
            && let Some(server) = fields.next()
        {
            upstreams.push(join_host_port(server, "53"));
        }
    }
    upstreams
}

/// Go's `net.JoinHostPort`: brackets around a host that holds a colon.
fn join_host_port(host: &str, port: &str) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nameserver_lines_in_order_with_port_53() {
        let text = "nameserver 10.0.0.1\nnameserver\t10.0.0.2 extra\n  nameserver 2001:db8::1\n";
        assert_eq!(
            resolv_conf_upstreams(text),
            ["10.0.0.1:53", "10.0.0.2:53", "[2001:db8::1]:53"]
        );
    }

    #[test]
    fn ipv6_keeps_its_zone() {
        assert_eq!(
            resolv_conf_upstreams("nameserver fe80::1%eth0\n"),
            ["[fe80::1%eth0]:53"]
        );
    }

    #[test]
    fn comments_and_other_keywords_add_nothing() {
        let text = "# nameserver 1.1.1.1\n; nameserver 1.0.0.1\n#nameserver 9.9.9.9\n\
                    search a.example b.example\ndomain a.example\noptions ndots:5\n\
                    nameserver\n\nNAMESERVER 8.8.8.8\nnameserver 8.8.4.4 # secondary\n";
        assert_eq!(resolv_conf_upstreams(text), ["8.8.4.4:53"]);
    }

    #[test]
    fn fields_are_taken_as_written() {
        // miekg/dns checks nothing: a comment right after the keyword is the server.
        assert_eq!(
            resolv_conf_upstreams("nameserver #x\nnameserver dns.example\n"),
            ["#x:53", "dns.example:53"]
        );
    }

    #[test]
    fn crlf_unicode_spaces_and_a_last_line_without_newline() {
        let text = "nameserver 10.0.0.1\r\nnameserver\u{a0}10.0.0.2\r\nnameserver 10.0.0.3";
        assert_eq!(
            resolv_conf_upstreams(text),
            ["10.0.0.1:53", "10.0.0.2:53", "10.0.0.3:53"]
        );
    }

    #[test]
    fn reading_stops_at_a_line_go_cannot_scan() {
        let long = "#".repeat(MAX_LINE);
        let ok = format!("nameserver 10.0.0.1\n{long}\nnameserver 10.0.0.2\n");
        assert_eq!(resolv_conf_upstreams(&ok), ["10.0.0.1:53", "10.0.0.2:53"]);
        let too_long = format!("nameserver 10.0.0.1\n{long}#\nnameserver 10.0.0.2\n");
        assert_eq!(resolv_conf_upstreams(&too_long), ["10.0.0.1:53"]);
    }
}
