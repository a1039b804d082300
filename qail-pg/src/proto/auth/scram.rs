//! The client side of SCRAM-SHA-256 and SCRAM-SHA-256-PLUS (RFC 5802, RFC 7677).
//!
//! See <https://www.postgresql.org/docs/current/sasl-authentication.html>. The exchange:
//!
//! 1. [`ScramSha256::new`] (or [`ScramSha256::with_nonce`]); send
//!    [`mechanism`](ScramSha256::mechanism) and [`message`](ScramSha256::message) in
//!    SASLInitialResponse.
//! 2. On AuthenticationSASLContinue, [`update`](ScramSha256::update) with its data; send
//!    [`message`](ScramSha256::message) in SASLResponse.
//! 3. On AuthenticationSASLFinal, [`finish`](ScramSha256::finish) with its data. Only when it
//!    returns `Ok` has the server proved that it knows the password.
//!
//! Each step consumes the state of the previous one; a step called out of order, or after a
//! failure, returns [`AuthError::OutOfOrder`] and never panics.

use std::fmt;
use std::mem;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::AuthError;
use super::saslprep;

mod message;

type HmacSha256 = Hmac<Sha256>;

/// The largest iteration count accepted from a server.
///
/// PostgreSQL's default is 4096 (`scram_iterations`). Each iteration is two SHA-256
/// compressions, so ten million take a few seconds of CPU: a higher count is treated as a
/// hostile server trying to stall the client. libpq has no limit.
pub const MAX_ITERATIONS: u32 = 10_000_000;

/// The length in bytes of the random part of the client nonce (before base64).
#[cfg(feature = "runtime")]
const NONCE_BYTES: usize = 18;

/// The channel binding the client announces in its GS2 header (`gs2-cbind-flag`, RFC 5802
/// §6) for this exchange, with the binding data when it binds. The user's policy, which
/// decides it, is [`ChannelBinding`](crate::ChannelBinding).
#[derive(Clone, PartialEq, Eq)]
pub enum Gs2Binding {
    /// The client cannot bind to the channel (no TLS, or binding disabled): GS2 header `n,,`.
    Unsupported,
    /// The client could bind but the server did not offer SCRAM-SHA-256-PLUS: GS2 header
    /// `y,,`, so that a server which did offer it detects the downgrade.
    Unrequested,
    /// Bind with `tls-server-end-point` data (see
    /// [`tls_server_end_point`](super::tls_server_end_point)): mechanism
    /// SCRAM-SHA-256-PLUS, GS2 header `p=tls-server-end-point,,`.
    TlsServerEndPoint(Vec<u8>),
}

impl Gs2Binding {
    fn gs2_header(&self) -> &'static str {
        match self {
            Gs2Binding::Unsupported => "n,,",
            Gs2Binding::Unrequested => "y,,",
            Gs2Binding::TlsServerEndPoint(_) => "p=tls-server-end-point,,",
        }
    }

    fn cbind_data(&self) -> &[u8] {
        match self {
            Gs2Binding::TlsServerEndPoint(data) => data,
            Gs2Binding::Unsupported | Gs2Binding::Unrequested => &[],
        }
    }
}

impl fmt::Debug for Gs2Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Gs2Binding::Unsupported => f.write_str("Unsupported"),
            Gs2Binding::Unrequested => f.write_str("Unrequested"),
            Gs2Binding::TlsServerEndPoint(data) => {
                write!(f, "TlsServerEndPoint({} bytes)", data.len())
            }
        }
    }
}

/// A SCRAM-SHA-256(-PLUS) client exchange. See the [module documentation](self).
pub struct ScramSha256 {
    mechanism: &'static str,
    message: Vec<u8>,
    state: State,
}

enum State {
    ExpectServerFirst {
        /// The normalized password.
        password: Vec<u8>,
        nonce: String,
        client_first_bare: String,
        channel_binding: Gs2Binding,
    },
    ExpectServerFinal {
        server_key: [u8; 32],
        auth_message: String,
    },
    Done,
    Failed,
}

impl State {
    /// What the exchange waits for in this state, for [`AuthError::OutOfOrder`].
    fn expecting(&self) -> &'static str {
        match self {
            State::ExpectServerFirst { .. } => "`update` with the server-first-message",
            State::ExpectServerFinal { .. } => "`finish` with the server-final-message",
            State::Done => "nothing more: it has completed",
            State::Failed => "nothing more: it has failed",
        }
    }
}

impl ScramSha256 {
    /// Starts an exchange with a fresh random nonce (18 bytes from the thread-local CSPRNG,
    /// base64-encoded). Available with the `runtime` feature; without it use
    /// [`with_nonce`](Self::with_nonce).
    ///
    /// `password` is normalized with SASLprep; when it is not UTF-8 or SASLprep rejects it,
    /// its bytes are used as they are, as PostgreSQL does.
    #[cfg(feature = "runtime")]
    pub fn new(password: &[u8], channel_binding: Gs2Binding) -> ScramSha256 {
        use rand::RngCore as _;
        let mut random = [0u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut random);
        ScramSha256::start(password, channel_binding, "", BASE64.encode(random))
    }

    /// Starts an exchange with the client nonce `nonce`: printable ASCII without `,`, which
    /// must be unpredictable (base64 of at least 18 random bytes) outside tests.
    pub fn with_nonce(
        password: &[u8],
        channel_binding: Gs2Binding,
        nonce: &str,
    ) -> Result<ScramSha256, AuthError> {
        if nonce.is_empty() || !nonce.bytes().all(message::is_nonce_char) {
            return Err(AuthError::InvalidNonce);
        }
        Ok(ScramSha256::start(
            password,
            channel_binding,
            "",
            nonce.to_owned(),
        ))
    }

    /// Note: PostgreSQL takes the user name from the startup message and ignores the one in
    /// SCRAM, so the connection sends an empty one (`n=`), as libpq does.
    fn start(
        password: &[u8],
        channel_binding: Gs2Binding,
        user: &str,
        nonce: String,
    ) -> ScramSha256 {
        let mechanism = match channel_binding {
            Gs2Binding::TlsServerEndPoint(_) => "SCRAM-SHA-256-PLUS",
            Gs2Binding::Unsupported | Gs2Binding::Unrequested => "SCRAM-SHA-256",
        };
        let client_first_bare = format!("n={},r={nonce}", message::escape_user(user));
        let message = format!("{}{client_first_bare}", channel_binding.gs2_header()).into_bytes();
        ScramSha256 {
            mechanism,
            message,
            state: State::ExpectServerFirst {
                password: saslprep::normalize(password).into_owned(),
                nonce,
                client_first_bare,
                channel_binding,
            },
        }
    }

    /// The SASL mechanism name to send: `"SCRAM-SHA-256"`, or `"SCRAM-SHA-256-PLUS"` when
    /// binding to the channel.
    pub fn mechanism(&self) -> &'static str {
        self.mechanism
    }

    /// The message to send: the client-first-message, and after [`update`](Self::update)
    /// the client-final-message.
    pub fn message(&self) -> &[u8] {
        &self.message
    }

    /// Takes the server-first-message (AuthenticationSASLContinue) and computes the
    /// client-final-message with the client proof.
    ///
    /// Fails when the message is malformed, its nonce does not extend the client's, or its
    /// iteration count is 0 or above [`MAX_ITERATIONS`]. Any failure ends the exchange.
    pub fn update(&mut self, server_first: &[u8]) -> Result<(), AuthError> {
        let (password, nonce, client_first_bare, channel_binding) =
            match mem::replace(&mut self.state, State::Failed) {
                State::ExpectServerFirst {
                    password,
                    nonce,
                    client_first_bare,
                    channel_binding,
                } => (password, nonce, client_first_bare, channel_binding),
                other => return Err(self.out_of_order(other, "update")),
            };
        let parsed = message::parse_server_first(server_first)?;
        if !(parsed.nonce.starts_with(nonce.as_str()) && parsed.nonce.len() > nonce.len()) {
            return Err(AuthError::NonceMismatch);
        }
        if parsed.iterations == 0 || parsed.iterations > MAX_ITERATIONS {
            return Err(AuthError::IterationCount(parsed.iterations));
        }

        let mut cbind_input = channel_binding.gs2_header().as_bytes().to_vec();
        cbind_input.extend_from_slice(channel_binding.cbind_data());
        let without_proof = format!("c={},r={}", BASE64.encode(&cbind_input), parsed.nonce);
        let auth_message = format!(
            "{client_first_bare},{},{without_proof}",
            parsed.text // the server-first-message exactly as received
        );

        let salted_password = hi(&password, &parsed.salt, parsed.iterations);
        let client_key = hmac(&salted_password, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let client_signature = hmac(&stored_key, auth_message.as_bytes());
        let mut proof = client_key;
        for (p, s) in proof.iter_mut().zip(client_signature) {
            *p ^= s;
        }

        self.message = format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes();
        self.state = State::ExpectServerFinal {
            server_key: hmac(&salted_password, b"Server Key"),
            auth_message,
        };
        Ok(())
    }

    /// Takes the server-final-message (AuthenticationSASLFinal) and verifies the server's
    /// signature in constant time.
    ///
    /// Returns [`AuthError::Server`] when the server reports an error (`e=`) and
    /// [`AuthError::ServerSignature`] when its signature does not verify.
    pub fn finish(&mut self, server_final: &[u8]) -> Result<(), AuthError> {
        let (server_key, auth_message) = match mem::replace(&mut self.state, State::Failed) {
            State::ExpectServerFinal {
                server_key,
                auth_message,
            } => (server_key, auth_message),
            other => return Err(self.out_of_order(other, "finish")),
        };
        let signature = message::parse_server_final(server_final)?;
        let mut mac = HmacSha256::new_from_slice(&server_key).expect("HMAC takes any key length");
        mac.update(auth_message.as_bytes());
        mac.verify_slice(&signature)
            .map_err(|_| AuthError::ServerSignature)?;
        self.state = State::Done;
        Ok(())
    }

    /// Puts back `state`, taken by a step called in the wrong state, and describes the
    /// mistake. The call has no other effect.
    fn out_of_order(&mut self, state: State, called: &'static str) -> AuthError {
        let expected = state.expecting();
        self.state = state;
        AuthError::OutOfOrder { called, expected }
    }
}

impl fmt::Debug for ScramSha256 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never shows the password or keys.
        f.debug_struct("ScramSha256")
            .field("mechanism", &self.mechanism)
            .field("expecting", &self.state.expecting())
            .finish_non_exhaustive()
    }
}

/// `HMAC-SHA-256(key, data)`.
fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// `Hi(password, salt, i)` of RFC 5802 §2.2: PBKDF2 with HMAC-SHA-256, one output block.
fn hi(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    // The keyed state is computed once and cloned for every iteration.
    let prf = HmacSha256::new_from_slice(password).expect("HMAC takes any key length");
    let mut mac = prf.clone();
    mac.update(salt);
    mac.update(&1u32.to_be_bytes());
    let mut u: [u8; 32] = mac.finalize().into_bytes().into();
    let mut out = u;
    for _ in 1..iterations {
        let mut mac = prf.clone();
        mac.update(&u);
        u = mac.finalize().into_bytes().into();
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

#[cfg(test)]
mod tests;
