//! A TLS Secret's certificate chain and key, checked before nginx sees them: every PEM block
//! decodes, every certificate parses as X.509, the key is one nginx and rustls can sign with,
//! and it is the key of the first (end-entity) certificate. nginx -t refuses a whole
//! configuration over one such Secret, so a Secret that fails here is left out on its own.

use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ParsedCertificate;
use rustls::sign::CertifiedKey;

/// Why `tls.crt` and `tls.key` cannot be served (a sentence for the Ingress's event).
///
/// # Errors
///
/// What is wrong with the chain or the key.
pub fn check(cert: &[u8], key: &[u8]) -> Result<(), String> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tls.crt is not valid PEM: {e}"))?;
    if chain.is_empty() {
        return Err("tls.crt holds no CERTIFICATE block".into());
    }
    for (i, der) in chain.iter().enumerate() {
        ParsedCertificate::try_from(der)
            .map_err(|e| format!("certificate {} of tls.crt does not parse: {e}", i + 1))?;
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| format!("tls.key holds no valid PEM private key: {e}"))?;
    let signer =
        any_supported_type(&key).map_err(|e| format!("tls.key is not a usable key: {e}"))?;
    CertifiedKey::new(chain, signer)
        .keys_match()
        .map_err(|e| format!("tls.key is not the key of the certificate in tls.crt: {e}"))
}

/// When the end-entity (first) certificate of `cert` expires, in seconds since the Unix
/// epoch (`notAfter`), or `None` when `cert` has no certificate that parses.
pub fn not_after(cert: &[u8]) -> Option<i64> {
    let der = CertificateDer::pem_slice_iter(cert).next()?.ok()?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&der).ok()?;
    Some(parsed.validity().not_after.timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CERT: &[u8] = include_bytes!("../tests/fixtures/tls.crt");
    const KEY: &[u8] = include_bytes!("../tests/fixtures/tls.key");
    const OTHER_KEY: &[u8] = include_bytes!("../tests/fixtures/other.key");

    #[test]
    fn a_matching_pair_passes() {
        assert_eq!(check(CERT, KEY), Ok(()));
        // A chain: the end-entity certificate first, then more certificates.
        let chain = [CERT, CERT].concat();
        assert_eq!(check(&chain, KEY), Ok(()));
    }

    #[test]
    fn junk_between_pem_markers_is_refused() {
        let junk = b"-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n";
        assert!(check(junk, KEY).unwrap_err().contains("tls.crt"));
        // Valid base64 of bytes that are no certificate.
        let not_der = b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
        assert!(check(not_der, KEY).unwrap_err().contains("does not parse"));
        let junk_key =
            b"-----BEGIN PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END PRIVATE KEY-----\n";
        assert!(check(CERT, junk_key).unwrap_err().contains("tls.key"));
        let unterminated = b"-----BEGIN CERTIFICATE-----\nxx\n";
        assert!(check(unterminated, KEY).is_err());
    }

    #[test]
    fn no_certificate_or_no_key_is_refused() {
        assert!(check(b"", KEY).unwrap_err().contains("no CERTIFICATE"));
        assert!(check(KEY, KEY).unwrap_err().contains("no CERTIFICATE"));
        assert!(check(CERT, CERT).unwrap_err().contains("tls.key"));
    }

    #[test]
    fn a_key_of_another_certificate_is_refused() {
        let message = check(CERT, OTHER_KEY).unwrap_err();
        assert!(
            message.contains("not the key of the certificate"),
            "{message}"
        );
    }

    #[test]
    fn the_expiry_is_the_first_certificates() {
        // `openssl x509 -in tests/fixtures/tls.crt -noout -enddate`: Nov  6 08:41:46 2126 GMT.
        assert_eq!(not_after(CERT), Some(4_949_628_106));
        assert_eq!(not_after(KEY), None);
        assert_eq!(
            not_after(b"-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"),
            None
        );
    }

    #[test]
    fn a_bad_certificate_later_in_the_chain_is_refused() {
        let bad = b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
        let chain = [CERT, bad.as_slice()].concat();
        assert!(check(&chain, KEY).unwrap_err().contains("certificate 2"));
    }
}
