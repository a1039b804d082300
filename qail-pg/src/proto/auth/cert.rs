//! `tls-server-end-point` channel binding data (RFC 5929 §4.1).
//!
//! The binding is a hash of the server's DER certificate, with the hash function of the
//! certificate's signature algorithm, except that MD5 and SHA-1 are replaced by SHA-256.
//! PostgreSQL computes the same on the server side (`be_tls_get_certificate_hash`).

use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// The hash function a certificate binds with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hash {
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

// DER contents of the OBJECT IDENTIFIERs of signature algorithms (without tag and length).
const PKCS1: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01]; // 1.2.840.113549.1.1
const ECDSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01]; // 1.2.840.10045.4.1
const ECDSA_SHA2: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03]; // 1.2.840.10045.4.3
const DSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x38, 0x04, 0x03]; // 1.2.840.10040.4.3
const NIST_SIG: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03]; // 2.16.840.1.101.3.4.3
const NIST_HASH: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02]; // 2.16.840.1.101.3.4.2
const SHA1: &[u8] = &[0x2b, 0x0e, 0x03, 0x02, 0x1a]; // 1.3.14.3.2.26
const MD5: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05]; // 1.2.840.113549.2.5

const TAG_SEQUENCE: u8 = 0x30;
const TAG_OID: u8 = 0x06;
/// `[0] EXPLICIT`, constructed, context-specific.
const TAG_CONTEXT_0: u8 = 0xa0;

/// The `tls-server-end-point` channel binding data for the server certificate `cert_der`.
///
/// Returns `None` when the certificate cannot be parsed or its signature algorithm names no
/// single hash function (Ed25519, Ed448, unknown algorithms): channel binding is then not
/// possible with this certificate.
///
/// Hashes: MD5 and SHA-1 signatures bind with SHA-256 (RFC 5929 §4.1); SHA-224/256/384/512
/// signatures (RSA PKCS#1 v1.5, ECDSA, DSA) with that hash. For RSASSA-PSS the hash is read
/// from the algorithm's parameters (absent means SHA-1, hence SHA-256). Note: PostgreSQL
/// servers built with OpenSSL cannot compute the binding for RSASSA-PSS certificates at all,
/// so with such a certificate the server refuses the exchange whatever the client sends.
pub fn tls_server_end_point(cert_der: &[u8]) -> Option<Vec<u8>> {
    let hash = signature_hash(cert_der)?;
    Some(match hash {
        Hash::Sha224 => Sha224::digest(cert_der).to_vec(),
        Hash::Sha256 => Sha256::digest(cert_der).to_vec(),
        Hash::Sha384 => Sha384::digest(cert_der).to_vec(),
        Hash::Sha512 => Sha512::digest(cert_der).to_vec(),
    })
}

/// Reads `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }`
/// (RFC 5280 §4.1) far enough to find the signature algorithm's hash.
fn signature_hash(cert_der: &[u8]) -> Option<Hash> {
    let (certificate, rest) = read_tlv(cert_der, TAG_SEQUENCE)?;
    if !rest.is_empty() {
        return None;
    }
    let (_tbs, after_tbs) = read_tlv(certificate, TAG_SEQUENCE)?;
    let (algorithm, _signature) = read_tlv(after_tbs, TAG_SEQUENCE)?;
    let (oid, params) = read_tlv(algorithm, TAG_OID)?;
    binding_hash(oid, params)
}

/// The binding hash for a signature algorithm OID (its DER contents) and its parameters.
fn binding_hash(oid: &[u8], params: &[u8]) -> Option<Hash> {
    if let Some(&[arc]) = oid.strip_prefix(PKCS1) {
        return match arc {
            4 | 5 => Some(Hash::Sha256), // md5WithRSAEncryption, sha1WithRSAEncryption
            10 => pss_hash(params),      // id-RSASSA-PSS
            11 => Some(Hash::Sha256),
            12 => Some(Hash::Sha384),
            13 => Some(Hash::Sha512),
            14 => Some(Hash::Sha224),
            _ => None,
        };
    }
    if oid == ECDSA_SHA1 || oid == DSA_SHA1 {
        return Some(Hash::Sha256);
    }
    if let Some(&[arc]) = oid.strip_prefix(ECDSA_SHA2) {
        return sha2_by_arc(arc); // ecdsa-with-SHA224 (1) … ecdsa-with-SHA512 (4)
    }
    if let Some(&[arc]) = oid.strip_prefix(NIST_SIG) {
        return match arc {
            1 => Some(Hash::Sha224), // dsa-with-sha224
            2 => Some(Hash::Sha256), // dsa-with-sha256
            _ => None,
        };
    }
    // Ed25519 (1.3.101.112), Ed448 (1.3.101.113) and anything unknown: no hash to use.
    None
}

/// `1 → SHA-224`, … as numbered in ecdsa-with-SHA2.
fn sha2_by_arc(arc: u8) -> Option<Hash> {
    match arc {
        1 => Some(Hash::Sha224),
        2 => Some(Hash::Sha256),
        3 => Some(Hash::Sha384),
        4 => Some(Hash::Sha512),
        _ => None,
    }
}

/// The hash of `RSASSA-PSS-params ::= SEQUENCE { hashAlgorithm [0] HashAlgorithm DEFAULT
/// sha1, … }` (RFC 4055 §3.1). Absent parameters or hash mean SHA-1, bound with SHA-256.
fn pss_hash(params: &[u8]) -> Option<Hash> {
    if params.is_empty() {
        return Some(Hash::Sha256);
    }
    let (seq, _) = read_tlv(params, TAG_SEQUENCE)?;
    if seq.first() != Some(&TAG_CONTEXT_0) {
        return Some(Hash::Sha256);
    }
    let (explicit, _) = read_tlv(seq, TAG_CONTEXT_0)?;
    let (hash_alg, _) = read_tlv(explicit, TAG_SEQUENCE)?;
    let (oid, _) = read_tlv(hash_alg, TAG_OID)?;
    if oid == SHA1 || oid == MD5 {
        return Some(Hash::Sha256);
    }
    match oid.strip_prefix(NIST_HASH)? {
        [1] => Some(Hash::Sha256),
        [2] => Some(Hash::Sha384),
        [3] => Some(Hash::Sha512),
        [4] => Some(Hash::Sha224),
        _ => None,
    }
}

/// Reads one DER TLV with tag `tag` at the start of `input`: returns (contents, rest).
/// Only definite lengths, in at most 4 length bytes, are accepted.
fn read_tlv(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = input.split_first()?;
    if first != tag {
        return None;
    }
    let (&len_byte, rest) = rest.split_first()?;
    let (len, rest) = if len_byte < 0x80 {
        (usize::from(len_byte), rest)
    } else {
        let count = usize::from(len_byte & 0x7f);
        if count == 0 || count > 4 {
            return None; // indefinite length (BER only) or absurdly long
        }
        let (len_bytes, rest) = rest.split_at_checked(count)?;
        let len = len_bytes
            .iter()
            .fold(0u32, |acc, &b| (acc << 8) | u32::from(b));
        (usize::try_from(len).ok()?, rest)
    };
    rest.split_at_checked(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Generated with `openssl req -x509 -newkey … -outform der`; the expected values are
    // `openssl x509 -inform der -in F -outform der | openssl dgst -sha256|-sha384|-sha512`.
    const RSA_SHA256: &[u8] = include_bytes!("testdata/rsa-sha256.der");
    const RSA_SHA1: &[u8] = include_bytes!("testdata/rsa-sha1.der");
    const RSA_SHA512: &[u8] = include_bytes!("testdata/rsa-sha512.der");
    const RSA_PSS_SHA384: &[u8] = include_bytes!("testdata/rsa-pss-sha384.der");
    const ECDSA_SHA384: &[u8] = include_bytes!("testdata/ecdsa-sha384.der");
    const ED25519: &[u8] = include_bytes!("testdata/ed25519.der");

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn binding(cert: &[u8]) -> String {
        hex(&tls_server_end_point(cert).expect("a binding for this certificate"))
    }

    #[test]
    fn rsa_sha256_binds_with_sha256() {
        assert_eq!(
            binding(RSA_SHA256),
            "e290cf5cc150e02ee892f7bb9ac9cdd037bf6852c38d24d93f79521e982e2d66"
        );
    }

    #[test]
    fn sha1_signature_binds_with_sha256() {
        assert_eq!(
            binding(RSA_SHA1),
            "22cd3c70c42509a7091ec0cea5927e9bc9a406f77f72af381f3da27e9f5fdd8e"
        );
    }

    #[test]
    fn rsa_sha512_binds_with_sha512() {
        assert_eq!(
            binding(RSA_SHA512),
            "50af4e85aad2e688a98afafeae8cfae4ae2fabd61a8780bf471f56d23abc7781\
             b5ec7bbcfe4cb31a4d759fb0cf59797f41642710485641188cd2039277d4c719"
        );
    }

    #[test]
    fn ecdsa_sha384_binds_with_sha384() {
        assert_eq!(
            binding(ECDSA_SHA384),
            "8b1ba98f2c81f13164cff0a9b387d8bcd3fad5e4e96f6fcb\
             c48b18b5279e64784b6ba9b6f5fbbb40ed5ce5b7eb87140f"
        );
    }

    #[test]
    fn rsa_pss_uses_the_hash_in_its_parameters() {
        assert_eq!(
            binding(RSA_PSS_SHA384),
            "2d6e888bd4851a7e5b88185b542ea18f549fa6ecdb7decb1\
             d256f2ccbf18e4a9eb6cd135201bafa91e6c7fa93fd092ca"
        );
    }

    #[test]
    fn ed25519_cannot_bind() {
        assert_eq!(tls_server_end_point(ED25519), None);
    }

    #[test]
    fn garbage_and_truncation_are_refused() {
        assert_eq!(tls_server_end_point(b""), None);
        assert_eq!(tls_server_end_point(b"\x30"), None);
        assert_eq!(tls_server_end_point(b"\x30\x84\xff\xff\xff\xff"), None);
        assert_eq!(tls_server_end_point(b"\x30\x80\x00\x00"), None);
        for len in 0..RSA_SHA256.len() {
            assert_eq!(
                tls_server_end_point(&RSA_SHA256[..len]),
                None,
                "prefix {len}"
            );
        }
        let mut trailing = RSA_SHA256.to_vec();
        trailing.push(0);
        assert_eq!(tls_server_end_point(&trailing), None);
    }

    #[test]
    fn pss_parameters() {
        // Absent parameters: SHA-1 by default, bound with SHA-256.
        assert_eq!(pss_hash(&[]), Some(Hash::Sha256));
        // SEQUENCE {} : all defaults.
        assert_eq!(pss_hash(&[0x30, 0x00]), Some(Hash::Sha256));
        // SEQUENCE { [0] { SEQUENCE { OID sha512 } } }
        let sha512 = [
            0x30, 0x0f, 0xa0, 0x0d, 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03,
            0x04, 0x02, 0x03,
        ];
        assert_eq!(pss_hash(&sha512), Some(Hash::Sha512));
        // A truncated one is refused rather than guessed.
        assert_eq!(pss_hash(&sha512[..10]), None);
    }

    #[test]
    fn long_form_lengths() {
        let mut der = vec![0x04, 0x81, 0x80];
        der.extend([7u8; 0x80]);
        let (contents, rest) = read_tlv(&der, 0x04).expect("long-form length");
        assert_eq!(contents.len(), 0x80);
        assert!(rest.is_empty());
        assert_eq!(read_tlv(&der, 0x30), None, "wrong tag");
    }
}
