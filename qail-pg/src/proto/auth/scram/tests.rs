use super::*;

const NONCE: &str = "rOprNGfwEbeRWgbNEkqO";
const FULL_NONCE: &str = "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0";
const SERVER_FIRST: &str =
    "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";

fn client(password: &[u8], binding: Gs2Binding) -> ScramSha256 {
    ScramSha256::with_nonce(password, binding, NONCE).expect("a valid nonce")
}

fn text(scram: &ScramSha256) -> &str {
    std::str::from_utf8(scram.message()).expect("SCRAM messages are ASCII")
}

fn update_err(server_first: &str) -> AuthError {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    scram
        .update(server_first.as_bytes())
        .expect_err("a bad server-first-message")
}

// RFC 7677 §3, with its user name "user".
#[test]
fn rfc7677_vector() {
    let mut scram =
        ScramSha256::start(b"pencil", Gs2Binding::Unsupported, "user", NONCE.to_owned());
    assert_eq!(scram.mechanism(), "SCRAM-SHA-256");
    assert_eq!(text(&scram), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert_eq!(
        text(&scram),
        "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,\
         p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
    );
    scram
        .finish(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
        .expect("the RFC's server signature");
}

// The same exchange as PostgreSQL clients send it: empty user name. Expected values from an
// independent implementation (Python hashlib/hmac).
#[test]
fn postgres_style_empty_user() {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    assert_eq!(text(&scram), "n,,n=,r=rOprNGfwEbeRWgbNEkqO");
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert_eq!(
        text(&scram),
        format!("c=biws,r={FULL_NONCE},p=qvT2SWdEH5Q06albL+hjSYuUhCG7VndFyzIb7CK4n9k=")
    );
    scram
        .finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
        .expect("server signature");
}

#[test]
fn unrequested_binding_sends_y() {
    let mut scram = client(b"pencil", Gs2Binding::Unrequested);
    assert_eq!(scram.mechanism(), "SCRAM-SHA-256");
    assert_eq!(text(&scram), "y,,n=,r=rOprNGfwEbeRWgbNEkqO");
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert_eq!(
        text(&scram),
        format!("c=eSws,r={FULL_NONCE},p=VpuC5DGQa5ro9tXE9MnKs69NH1nxnuregZZcclqIGfM=")
    );
    scram
        .finish(b"v=FOmOj9BpTGwvnzwBtWQjBaPmVxT9I8IeHBOhcIPu3us=")
        .expect("server signature");
}

// SCRAM-SHA-256-PLUS bound to testdata/rsa-sha256.der; expected values from Python.
#[test]
fn plus_exchange_with_tls_server_end_point() {
    let cert = include_bytes!("../testdata/rsa-sha256.der");
    let binding = crate::proto::auth::tls_server_end_point(cert).expect("an RSA-SHA256 binding");
    let mut scram = client(b"pencil", Gs2Binding::TlsServerEndPoint(binding));
    assert_eq!(scram.mechanism(), "SCRAM-SHA-256-PLUS");
    assert_eq!(
        text(&scram),
        "p=tls-server-end-point,,n=,r=rOprNGfwEbeRWgbNEkqO"
    );
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert_eq!(
        text(&scram),
        format!(
            "c=cD10bHMtc2VydmVyLWVuZC1wb2ludCws4pDPXMFQ4C7okve7msnN0De/aFLDjSTZP3lSHpguLWY=,\
             r={FULL_NONCE},p=drN2ctYFyib2KURbVayzBg5vTI/ejEJwBtV7pdE+aos="
        )
    );
    scram
        .finish(b"v=wzxLur8dxYJ5vVjjuM0Co488nSZmgceOH1OVAjX8lv8=")
        .expect("server signature");
}

#[test]
fn saslprep_maps_non_ascii_space() {
    // "pen\u{a0}cil" normalizes to "pen cil": same proof as the plain-space password.
    let mut nbsp = client("pen\u{a0}cil".as_bytes(), Gs2Binding::Unsupported);
    let mut space = client(b"pen cil", Gs2Binding::Unsupported);
    nbsp.update(SERVER_FIRST.as_bytes()).expect("server-first");
    space.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert_eq!(nbsp.message(), space.message());
    assert!(text(&nbsp).ends_with(",p=o6gP/rqq5E5GLlHQW58UIoGkMb5WwP0KHTicDQ+h46g="));
}

#[test]
fn prohibited_password_is_used_raw() {
    let mut scram = client(b"pen\x07cil", Gs2Binding::Unsupported);
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    assert!(text(&scram).ends_with(",p=GhkGzlZxcSP/zC66pmLvAR7c0ckUCHvbE2GCbKlrmb0="));
}

// SCRAM secrets computed by PostgreSQL 15 (`SET password_encryption = 'scram-sha-256';
// CREATE ROLE … PASSWORD …` then pg_authid.rolpassword): the client's derivation, SASLprep
// included, must give the server's StoredKey and ServerKey.
#[test]
fn key_derivation_agrees_with_postgres() {
    let cases: [(&[u8], &str); 4] = [
        (
            b"pencil",
            "SCRAM-SHA-256$4096:xPw6WaXqYpz6MAHJ3fZBaw==$HThbsFYJIt9BWiuNtmOC2ZCnd9Nk4+gzxs3zuQa/9Xg=\
             :Gzw+VXDoZ1pi2WZteNbrXc1ihIhNjIXOePG5yrciZEQ=",
        ),
        (
            "pen\u{a0}cil".as_bytes(),
            "SCRAM-SHA-256$4096:yplI5EiAKxbiqPXcPrZaLg==$wYDQB0Eyml+KNkYABeGEOyyfBR4ahXG2qGSngL6ewi4=\
             :Gw09SLyO4cyA2EGKxovwLiJmtewONMRkvxKLF50j8fU=",
        ),
        (
            b"pass\x07word",
            "SCRAM-SHA-256$4096:bjBc+A7sSVyoN1PZuKtfXw==$FMlbYsWa28YtZKCrn0ArPgTkGs//ELncrDETnQm/zok=\
             :XJiZ+ddj7FDYJb6/J/AmiGk+E02uydDqZ+KjbON8Sog=",
        ),
        (
            "I\u{ad}X\u{2168}".as_bytes(),
            "SCRAM-SHA-256$4096:vkiUSz9KlpU637Nf3Eo36Q==$hbbUJ1aJPHE9KToaga34KIdV5L/r89zWj5Ep+3gi7hE=\
             :rAh6wvpUG5a/Nf5mta4zCL2h8TeEC3u4SHdzFA060z0=",
        ),
    ];
    for (password, secret) in cases {
        let server = FakeServer::from_secret(secret);
        let salted = hi(
            &saslprep::normalize(password),
            &server.salt,
            server.iterations,
        );
        let stored_key: [u8; 32] = Sha256::digest(hmac(&salted, b"Client Key")).into();
        assert_eq!(stored_key, server.stored_key, "StoredKey for {password:?}");
        assert_eq!(hmac(&salted, b"Server Key"), server.server_key);

        // And the whole exchange against a server holding only that secret.
        let mut scram = client(password, Gs2Binding::Unsupported);
        let server_first = server.first(NONCE);
        scram.update(server_first.as_bytes()).expect("server-first");
        let server_final = server
            .verify(&scram, &server_first)
            .expect("the server accepts the proof");
        scram
            .finish(server_final.as_bytes())
            .expect("server signature");
    }
}

#[test]
fn wrong_password_is_rejected_by_the_server_secret() {
    let server = FakeServer::from_secret(
        "SCRAM-SHA-256$4096:xPw6WaXqYpz6MAHJ3fZBaw==$HThbsFYJIt9BWiuNtmOC2ZCnd9Nk4+gzxs3zuQa/9Xg=\
         :Gzw+VXDoZ1pi2WZteNbrXc1ihIhNjIXOePG5yrciZEQ=",
    );
    let mut scram = client(b"pencil2", Gs2Binding::Unsupported);
    let server_first = server.first(NONCE);
    scram.update(server_first.as_bytes()).expect("server-first");
    assert!(server.verify(&scram, &server_first).is_none());
}

/// A server side of SCRAM built from a PostgreSQL secret, for the tests above.
struct FakeServer {
    iterations: u32,
    salt: Vec<u8>,
    stored_key: [u8; 32],
    server_key: [u8; 32],
}

impl FakeServer {
    fn from_secret(secret: &str) -> FakeServer {
        let rest = secret
            .strip_prefix("SCRAM-SHA-256$")
            .expect("a SCRAM secret");
        let (iterations, rest) = rest.split_once(':').expect("iterations");
        let (salt, rest) = rest.split_once('$').expect("salt");
        let (stored, server) = rest.split_once(':').expect("keys");
        let key = |b64: &str| -> [u8; 32] {
            let bytes = BASE64.decode(b64).expect("base64 key");
            bytes.try_into().expect("a 32-byte key")
        };
        FakeServer {
            iterations: iterations.parse().expect("iteration count"),
            salt: BASE64.decode(salt).expect("base64 salt"),
            stored_key: key(stored),
            server_key: key(server),
        }
    }

    fn first(&self, client_nonce: &str) -> String {
        format!(
            "r={client_nonce}SERVERpart,s={},i={}",
            BASE64.encode(&self.salt),
            self.iterations
        )
    }

    /// Checks the client proof as PostgreSQL does; returns the server-final-message.
    fn verify(&self, scram: &ScramSha256, server_first: &str) -> Option<String> {
        let client_final = text(scram);
        let (without_proof, proof) = client_final.split_once(",p=")?;
        let auth_message = format!("n=,r={NONCE},{server_first},{without_proof}");
        let signature = hmac(&self.stored_key, auth_message.as_bytes());
        let proof = BASE64.decode(proof).ok()?;
        let client_key: Vec<u8> = proof.iter().zip(signature).map(|(p, s)| p ^ s).collect();
        if <[u8; 32]>::from(Sha256::digest(&client_key)) != self.stored_key {
            return None;
        }
        let v = hmac(&self.server_key, auth_message.as_bytes());
        Some(format!("v={}", BASE64.encode(v)))
    }
}

#[test]
fn malformed_server_first_messages() {
    let malformed = |m: &str| {
        assert!(
            matches!(
                update_err(m),
                AuthError::Malformed {
                    message: "server-first-message",
                    ..
                }
            ),
            "{m:?} is malformed"
        );
    };
    malformed("");
    malformed("s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"); // no r=
    malformed(&format!("r={FULL_NONCE},i=4096")); // no s=
    malformed(&format!("r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==")); // no i=
    malformed(&format!("r={FULL_NONCE},s=not base64!,i=4096"));
    malformed(&format!("r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ=,i=4096")); // bad padding
    malformed(&format!(
        "r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=+4096"
    ));
    malformed(&format!(
        "r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4294967296"
    ));
    malformed(&format!("r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=-1"));
    malformed(&format!(
        "m=ext,r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    ));
    malformed(&format!(
        "r={NONCE}\u{e9},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
    ));
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    let err = scram.update(b"r=\xff,s=,i=1").expect_err("not UTF-8");
    assert!(matches!(err, AuthError::Malformed { .. }));
}

#[test]
fn extensions_after_the_iteration_count_are_ignored() {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    scram
        .update(format!("{SERVER_FIRST},x=future").as_bytes())
        .expect("extensions are allowed");
}

#[test]
fn wrong_nonce_is_refused() {
    let wrong = |nonce: &str| {
        let m = format!("r={nonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
        assert_eq!(update_err(&m), AuthError::NonceMismatch, "{nonce}");
    };
    wrong("XOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0");
    wrong("rOprNGfwEbeRWgbNEkq"); // a prefix of ours
    wrong(NONCE); // the server added nothing
}

#[test]
fn iteration_count_bounds() {
    let with = |i: &str| format!("r={FULL_NONCE},s=W22ZaJ0SNY7soEsUEjb6gQ==,i={i}");
    assert_eq!(update_err(&with("0")), AuthError::IterationCount(0));
    assert_eq!(
        update_err(&with("10000001")),
        AuthError::IterationCount(10_000_001)
    );
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    scram.update(with("1").as_bytes()).expect("one iteration");
    assert!(text(&scram).ends_with(",p=FAARM7AVvFwIboLWTCdUs0xTxvANekNuXVyJ5RVHUOo="));
}

fn after_update() -> ScramSha256 {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    scram
}

#[test]
fn bad_server_final_messages() {
    let finish = |m: &[u8]| {
        after_update()
            .finish(m)
            .expect_err("a bad server-final-message")
    };
    // A valid signature for another exchange (the RFC's, with user "user").
    assert_eq!(
        finish(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
        AuthError::ServerSignature
    );
    assert_eq!(finish(b"v="), AuthError::ServerSignature);
    assert!(matches!(finish(b"v=***"), AuthError::Malformed { .. }));
    assert!(matches!(finish(b""), AuthError::Malformed { .. }));
    assert!(matches!(finish(b"x=1"), AuthError::Malformed { .. }));
    assert!(matches!(finish(b"v=\xff"), AuthError::Malformed { .. }));
    assert_eq!(
        finish(b"e=invalid-proof"),
        AuthError::Server("invalid-proof".to_owned())
    );
    let long = format!("e={}", "x".repeat(10_000));
    match finish(long.as_bytes()) {
        AuthError::Server(e) => assert_eq!(e.len(), 100, "a long server error is cut"),
        other => panic!("expected a server error, got {other:?}"),
    }
}

#[test]
fn steps_out_of_order_are_errors() {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    let err = scram.finish(b"v=AAAA").expect_err("finish before update");
    assert!(matches!(
        err,
        AuthError::OutOfOrder {
            called: "finish",
            ..
        }
    ));
    // The misplaced call had no effect: the exchange continues.
    scram.update(SERVER_FIRST.as_bytes()).expect("server-first");
    let err = scram
        .update(SERVER_FIRST.as_bytes())
        .expect_err("update twice");
    assert!(matches!(
        err,
        AuthError::OutOfOrder {
            called: "update",
            ..
        }
    ));
    scram
        .finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
        .expect("server signature");
    let err = scram.finish(b"v=AAAA").expect_err("finish after success");
    assert!(err.to_string().contains("completed"), "{err}");
}

#[test]
fn a_failed_exchange_stays_failed() {
    let mut scram = client(b"pencil", Gs2Binding::Unsupported);
    scram.update(b"garbage").expect_err("malformed");
    let err = scram
        .update(SERVER_FIRST.as_bytes())
        .expect_err("already failed");
    assert!(err.to_string().contains("failed"), "{err}");
    let mut scram = after_update();
    scram.finish(b"v=AAAA").expect_err("bad signature");
    scram
        .finish(b"v=3HO6Qt1M4MKJrmlKaoOqLAI0/0TV0HZe7J9H3MBtSOg=")
        .expect_err("no second chance after a bad signature");
}

#[test]
fn invalid_nonces_are_refused() {
    for nonce in ["", "a,b", "caf\u{e9}", "with space", "tab\t"] {
        let err = ScramSha256::with_nonce(b"p", Gs2Binding::Unsupported, nonce)
            .expect_err("an invalid nonce");
        assert_eq!(err, AuthError::InvalidNonce, "{nonce:?}");
    }
}

#[test]
fn user_names_are_escaped() {
    let scram = ScramSha256::start(b"p", Gs2Binding::Unsupported, "a=b,c", "n".to_owned());
    assert_eq!(text(&scram), "n,,n=a=3Db=2Cc,r=n");
}

#[test]
fn debug_and_errors_never_show_the_password() {
    let password = b"hunter2-secret";
    let mut scram = client(password, Gs2Binding::TlsServerEndPoint(vec![1, 2, 3]));
    let debug = format!("{scram:?}");
    assert!(!debug.contains("hunter2"), "{debug}");
    assert!(debug.contains("SCRAM-SHA-256-PLUS"));
    let err = scram.update(b"r=x,s=AAAA,i=1").expect_err("wrong nonce");
    assert!(!err.to_string().contains("hunter2"));
}

#[cfg(feature = "runtime")]
#[test]
fn new_uses_a_fresh_random_nonce() {
    let a = ScramSha256::new(b"p", Gs2Binding::Unsupported);
    let b = ScramSha256::new(b"p", Gs2Binding::Unsupported);
    assert_ne!(a.message(), b.message());
    let nonce = text(&a).strip_prefix("n,,n=,r=").expect("client-first");
    assert_eq!(nonce.len(), 24, "18 random bytes in base64");
    assert!(nonce.bytes().all(message::is_nonce_char));
}
