//! `errors`: every error the chain returns is logged as
//! `[ERROR] plugin/errors: RCODE QNAME QTYPE: ERROR` (rcode as a number, name lower-cased).
//! `consolidate` rules are accepted but each error is still logged on its own line.

use dns_wire::Rcode;

use crate::request::Request;

/// The `errors` plugin of a block.
#[derive(Clone, Debug, Default)]
pub struct Errors;

impl Errors {
    /// Logs `error`, returned with `rcode` for `req`.
    pub fn log(&self, req: &Request<'_>, rcode: Rcode, error: &str) {
        tracing::error!(plugin = "errors", "{}", line(req, rcode, error));
    }
}

/// The text after the prefix.
pub fn line(req: &Request<'_>, rcode: Rcode, error: &str) -> String {
    let name = req.question.name.to_name().to_lowercase();
    format!("{} {} {}: {}", rcode.0, name, req.question.qtype, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::tests::{client, query};
    use crate::request::{Admission, Proto, admit};
    use dns_wire::Type;

    #[test]
    fn error_line_as_coredns_prints_it() {
        let q = query("Example.ORG.", Type::A, None);
        let Admission::Query(req) = admit(&q, Proto::Udp, client()) else {
            panic!()
        };
        assert_eq!(
            line(
                &req,
                Rcode::SERVFAIL,
                "read udp 10.0.0.1:53->8.8.8.8:53: i/o timeout"
            ),
            "2 example.org. A: read udp 10.0.0.1:53->8.8.8.8:53: i/o timeout"
        );
    }
}
