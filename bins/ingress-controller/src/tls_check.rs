//! A TLS Secret's certificate chain and key, checked before nginx sees them: every PEM block
//! decodes, every certificate parses as X.509, the key is one nginx and rustls can sign with,
//! and it is the key of the first (end-entity) certificate; the end-entity certificate has not
//! expired; and nothing in it is what OpenSSL refuses at its default security level (level 2 on
//! Debian): a signature with MD5 or SHA-1 on a certificate that is not self-signed ("ca md too
//! weak"), an RSA or DSA key under 2048 bits or an EC key under 224 ("ee key too small"). nginx
//! -t refuses a whole configuration over one such Secret, so a Secret that fails here is left
//! out on its own.

use k8s_openapi::api::core::v1::Secret;
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ParsedCertificate;
use rustls::sign::CertifiedKey;

/// The PEM text of field `name` (`tls.crt`, `tls.key`) of a TLS Secret: from `data`, else from
/// `stringData` (how manifests often carry PEM text; the API server folds it into `data`, which
/// wins); `None` unless it starts as a PEM block and holds no NUL byte.
pub fn secret_pem(secret: &Secret, name: &str) -> Option<Vec<u8>> {
    let data = secret
        .data
        .as_ref()
        .and_then(|d| d.get(name))
        .map(|b| b.0.clone());
    let string = || {
        secret
            .string_data
            .as_ref()
            .and_then(|d| d.get(name))
            .map(|s| s.clone().into_bytes())
    };
    data.or_else(string)
        .filter(|pem| pem.starts_with(b"-----BEGIN ") && !pem.contains(&0))
}

/// Why `tls.crt` and `tls.key` cannot be served at `now` (seconds since the Unix epoch; `None`
/// skips the expiry check): a sentence for the Ingress's event.
///
/// # Errors
///
/// What is wrong with the chain or the key.
pub fn check(cert: &[u8], key: &[u8], now: Option<i64>) -> Result<(), String> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("tls.crt is not valid PEM: {e}"))?;
    if chain.is_empty() {
        return Err("tls.crt holds no CERTIFICATE block".into());
    }
    for (i, der) in chain.iter().enumerate() {
        ParsedCertificate::try_from(der)
            .map_err(|e| format!("certificate {} of tls.crt does not parse: {e}", i + 1))?;
        let (_, parsed) = x509_parser::parse_x509_certificate(der)
            .map_err(|e| format!("certificate {} of tls.crt does not parse: {e}", i + 1))?;
        security_level(i, &parsed)?;
        if i == 0
            && let Some(now) = now
        {
            let validity = parsed.validity();
            if now > validity.not_after.timestamp() {
                return Err(format!(
                    "the certificate in tls.crt expired on {}",
                    validity.not_after
                ));
            }
        }
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| format!("tls.key holds no valid PEM private key: {e}"))?;
    let signer =
        any_supported_type(&key).map_err(|e| format!("tls.key is not a usable key: {e}"))?;
    CertifiedKey::new(chain, signer)
        .keys_match()
        .map_err(|e| format!("tls.key is not the key of the certificate in tls.crt: {e}"))
}

/// Signature algorithms OpenSSL refuses at security level 2 (MD2, MD4, MD5 and SHA-1 with RSA,
/// DSA or ECDSA), by OID.
const WEAK_SIGNATURES: &[&str] = &[
    "1.2.840.113549.1.1.2",
    "1.2.840.113549.1.1.3",
    "1.2.840.113549.1.1.4",
    "1.2.840.113549.1.1.5",
    "1.3.14.3.2.29",
    "1.2.840.10040.4.3",
    "1.2.840.10045.4.1",
];

/// What OpenSSL's security level 2 asks of certificate `index` of a chain (`ssl_security_cert`):
/// no weak signature unless self-signed, and keys of at least 112 bits of security.
fn security_level(
    index: usize,
    cert: &x509_parser::certificate::X509Certificate<'_>,
) -> Result<(), String> {
    use x509_parser::public_key::PublicKey;
    let n = index + 1;
    let self_signed = cert.subject().as_raw() == cert.issuer().as_raw();
    let algorithm = cert.signature_algorithm.algorithm.to_id_string();
    if !self_signed && WEAK_SIGNATURES.contains(&algorithm.as_str()) {
        return Err(format!(
            "certificate {n} of tls.crt is signed with MD5 or SHA-1 ({algorithm}), which nginx's \
             OpenSSL refuses"
        ));
    }
    let (kind, bits, minimum) = match cert.public_key().parsed() {
        Ok(PublicKey::RSA(rsa)) => ("RSA", rsa.key_size(), 2048),
        Ok(PublicKey::DSA(y)) => ("DSA", y.len() * 8, 2048),
        Ok(PublicKey::EC(point)) => ("EC", point.key_size(), 224),
        _ => return Ok(()),
    };
    if bits < minimum {
        return Err(format!(
            "certificate {n} of tls.crt has a {bits}-bit {kind} key; nginx's OpenSSL needs at \
             least {minimum}"
        ));
    }
    Ok(())
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
        assert_eq!(check(CERT, KEY, None), Ok(()));
        // A chain: the end-entity certificate first, then more certificates.
        let chain = [CERT, CERT].concat();
        assert_eq!(check(&chain, KEY, None), Ok(()));
    }

    #[test]
    fn junk_between_pem_markers_is_refused() {
        let junk = b"-----BEGIN CERTIFICATE-----\nxx\n-----END CERTIFICATE-----\n";
        assert!(check(junk, KEY, None).unwrap_err().contains("tls.crt"));
        // Valid base64 of bytes that are no certificate.
        let not_der = b"-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n";
        assert!(
            check(not_der, KEY, None)
                .unwrap_err()
                .contains("does not parse")
        );
        let junk_key =
            b"-----BEGIN PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END PRIVATE KEY-----\n";
        assert!(check(CERT, junk_key, None).unwrap_err().contains("tls.key"));
        let unterminated = b"-----BEGIN CERTIFICATE-----\nxx\n";
        assert!(check(unterminated, KEY, None).is_err());
    }

    #[test]
    fn no_certificate_or_no_key_is_refused() {
        assert!(
            check(b"", KEY, None)
                .unwrap_err()
                .contains("no CERTIFICATE")
        );
        assert!(
            check(KEY, KEY, None)
                .unwrap_err()
                .contains("no CERTIFICATE")
        );
        assert!(check(CERT, CERT, None).unwrap_err().contains("tls.key"));
    }

    #[test]
    fn a_key_of_another_certificate_is_refused() {
        let message = check(CERT, OTHER_KEY, None).unwrap_err();
        assert!(
            message.contains("not the key of the certificate"),
            "{message}"
        );
    }

    #[test]
    fn an_expired_certificate_is_refused() {
        // tls.crt's notAfter: 2126-11-06T08:41:46Z.
        let after = 4_949_628_106;
        assert_eq!(check(CERT, KEY, Some(after)), Ok(()));
        let message = check(CERT, KEY, Some(after + 1)).unwrap_err();
        assert!(message.contains("expired on"), "{message}");
    }

    #[test]
    fn what_openssl_refuses_at_level_2_is_refused() {
        // Signed with SHA-1 by another certificate: OpenSSL's "ca md too weak".
        let sha1 = include_bytes!("../tests/fixtures/sha1-signed.crt");
        let sha1_key = include_bytes!("../tests/fixtures/sha1-signed.key");
        let message = check(sha1, sha1_key, None).unwrap_err();
        assert!(message.contains("SHA-1"), "{message}");
        // A 1024-bit RSA key: "ee key too small".
        let small = include_bytes!("../tests/fixtures/rsa1024.crt");
        let small_key = include_bytes!("../tests/fixtures/rsa1024.key");
        let message = check(small, small_key, None).unwrap_err();
        assert!(message.contains("1024-bit RSA key"), "{message}");
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
        assert!(
            check(&chain, KEY, None)
                .unwrap_err()
                .contains("certificate 2")
        );
    }
}
