//! Authentication: trust, cleartext password, MD5, SCRAM-SHA-256(-PLUS), with
//! `require_auth` and `channel_binding` enforced on the client side; and the protocol
//! version, which a server that lacks the one requested negotiates down first.
//!
//! See <https://www.postgresql.org/docs/current/sasl-authentication.html> and
//! <https://www.postgresql.org/docs/18/protocol-overview.html#PROTOCOL-VERSIONS>.

use crate::config::{AuthMethod, ChannelBinding, Config};
use crate::conn::{Connection, server_error};
use crate::error::{Error, Kind};
use crate::proto::ProtocolVersion;
use crate::proto::auth::md5_password;
use crate::proto::auth::scram::{self, ScramSha256};
use crate::proto::message::{
    Authentication, Backend, PasswordMessage, SaslInitialResponse, SaslResponse,
};
use crate::proto::version::{self, NegotiationError};

/// A server request, copied out of the read buffer.
enum Request {
    Ok,
    Cleartext,
    Md5([u8; 4]),
    Sasl(Vec<String>),
    SaslContinue(Vec<u8>),
    SaslFinal(Vec<u8>),
    Unexpected(&'static str),
    Unsupported(i32),
    /// NegotiateProtocolVersion, and the version it leaves the session with.
    Negotiated(Result<ProtocolVersion, NegotiationError>),
}

/// Runs the authentication exchange up to AuthenticationOk.
pub(crate) async fn authenticate(
    conn: &mut Connection,
    config: &Config,
    server_cert: Option<&[u8]>,
) -> Result<(), Error> {
    let mut used = AuthMethod::None;
    let mut channel_bound = false;
    // Note: the server sends NegotiateProtocolVersion, if at all, as its first reply.
    let mut first = true;
    loop {
        let request = next_request(conn, config).await?;
        match request {
            Request::Negotiated(outcome) if first => {
                conn.protocol_version = outcome.map_err(|e| negotiation_error(conn, e))?;
            }
            Request::Negotiated(_) => {
                return Err(conn.protocol_error("a second NegotiateProtocolVersion"));
            }
            Request::Ok => {
                check_allowed(config, used)?;
                if config.channel_binding == ChannelBinding::Require && !channel_bound {
                    return Err(channel_binding_error(used));
                }
                return Ok(());
            }
            Request::Cleartext => {
                used = AuthMethod::Password;
                check_allowed(config, used)?;
                refuse_without_binding(config, used)?;
                let password = password(config)?;
                send_password(conn, password.as_bytes()).await?;
            }
            Request::Md5(salt) => {
                used = AuthMethod::Md5;
                check_allowed(config, used)?;
                refuse_without_binding(config, used)?;
                let hash = md5_password(&config.user, password(config)?.as_bytes(), salt);
                send_password(conn, hash.as_bytes()).await?;
            }
            Request::Sasl(mechanisms) => {
                used = AuthMethod::ScramSha256;
                check_allowed(config, used)?;
                channel_bound = sasl(conn, config, &mechanisms, server_cert).await?;
            }
            Request::SaslContinue(_) | Request::SaslFinal(_) => {
                return Err(conn.protocol_error("a SASL message outside a SASL exchange"));
            }
            Request::Unexpected(what) => return Err(conn.protocol_error(what)),
            Request::Unsupported(code) => {
                return Err(Error::new(
                    Kind::Auth,
                    format!(
                        "the server asks for authentication method {code} (Kerberos, GSSAPI or \
                         SSPI), which qail-pg does not support; configure scram-sha-256 in pg_hba.conf"
                    ),
                ));
            }
        }
        first = false;
    }
}

/// The error when the server's NegotiateProtocolVersion ends the attempt.
fn negotiation_error(conn: &mut Connection, e: NegotiationError) -> Error {
    conn.stream.set_broken();
    let kind = if e.is_protocol_violation() {
        Kind::Protocol
    } else {
        Kind::Config
    };
    Error::new(kind, e.to_string())
}

/// Reads the next Authentication message (or the protocol version negotiation); an
/// ErrorResponse becomes the server's error.
async fn next_request(conn: &mut Connection, config: &Config) -> Result<Request, Error> {
    let (requested, min) = (conn.protocol_version, config.min_protocol_version);
    let message = conn.recv().await?;
    let request = match conn.stream.decode(message) {
        Ok(Backend::Authentication(request)) => match request {
            Authentication::Ok => Request::Ok,
            Authentication::CleartextPassword => Request::Cleartext,
            Authentication::Md5Password { salt } => Request::Md5(salt),
            Authentication::Sasl { mechanisms } => {
                Request::Sasl(mechanisms.into_iter().map(str::to_owned).collect())
            }
            Authentication::SaslContinue { data } => Request::SaslContinue(data.to_vec()),
            Authentication::SaslFinal { data } => Request::SaslFinal(data.to_vec()),
            Authentication::Unsupported { code } => Request::Unsupported(code),
        },
        Ok(Backend::NegotiateProtocolVersion(offer)) => {
            Request::Negotiated(version::negotiate(requested, min, &offer))
        }
        Ok(Backend::ErrorResponse(db)) => {
            conn.stream.set_broken();
            return Err(server_error(db));
        }
        Ok(_) => Request::Unexpected("a message other than Authentication"),
        Err(e) => return Err(conn.decode_error(e)),
    };
    Ok(request)
}

/// Runs a SCRAM-SHA-256(-PLUS) exchange up to the server's final message; returns whether
/// it bound to the TLS channel.
async fn sasl(
    conn: &mut Connection,
    config: &Config,
    mechanisms: &[String],
    server_cert: Option<&[u8]>,
) -> Result<bool, Error> {
    let offers = |name: &str| mechanisms.iter().any(|m| m == name);
    // Note: without the `tls` feature no connection has a certificate, and the hashes a
    // binding may need (SHA-224 to SHA-512) stay out of the program.
    #[cfg(feature = "tls")]
    let end_point = server_cert.and_then(crate::proto::auth::tls_server_end_point);
    #[cfg(not(feature = "tls"))]
    let end_point: Option<Vec<u8>> = server_cert.and(None);
    let binding = match (config.channel_binding, end_point) {
        (ChannelBinding::Disable, _) => scram::Gs2Binding::Unsupported,
        (_, Some(data)) if offers("SCRAM-SHA-256-PLUS") => {
            scram::Gs2Binding::TlsServerEndPoint(data)
        }
        (ChannelBinding::Require, _) => {
            return Err(Error::new(
                Kind::Auth,
                "channel_binding=require, but the server does not offer SCRAM-SHA-256-PLUS over \
                 this connection; connect with TLS (sslmode=require or stricter) or lower channel_binding",
            ));
        }
        (ChannelBinding::Prefer, Some(_)) => scram::Gs2Binding::Unrequested,
        (ChannelBinding::Prefer, None) => scram::Gs2Binding::Unsupported,
    };
    let bound = matches!(binding, scram::Gs2Binding::TlsServerEndPoint(_));
    if !bound && !offers("SCRAM-SHA-256") {
        return Err(Error::new(
            Kind::Auth,
            format!(
                "the server offers SASL mechanisms {mechanisms:?}, none of which qail-pg \
                 supports; configure scram-sha-256 in pg_hba.conf"
            ),
        ));
    }
    let mut scram = ScramSha256::new(password(config)?.as_bytes(), binding);
    SaslInitialResponse {
        mechanism: scram.mechanism(),
        data: scram.message(),
    }
    .encode(conn.stream.write_buf())
    .map_err(|e| Error::with_source(Kind::Auth, "the SCRAM message cannot be sent", e))?;
    conn.stream.flush().await?;
    let Request::SaslContinue(server_first) = next_request(conn, config).await? else {
        return Err(conn.protocol_error("a message other than AuthenticationSASLContinue"));
    };
    scram.update(&server_first).map_err(scram_error)?;
    SaslResponse {
        data: scram.message(),
    }
    .encode(conn.stream.write_buf())
    .map_err(|e| Error::with_source(Kind::Auth, "the SCRAM message cannot be sent", e))?;
    conn.stream.flush().await?;
    let Request::SaslFinal(server_final) = next_request(conn, config).await? else {
        return Err(conn.protocol_error("a message other than AuthenticationSASLFinal"));
    };
    scram.finish(&server_final).map_err(scram_error)?;
    Ok(bound)
}

fn scram_error(e: crate::proto::auth::AuthError) -> Error {
    Error::with_source(Kind::Auth, "SCRAM authentication failed", e)
}

async fn send_password(conn: &mut Connection, password: &[u8]) -> Result<(), Error> {
    PasswordMessage { password }
        .encode(conn.stream.write_buf())
        .map_err(|e| Error::with_source(Kind::Auth, "the password cannot be sent", e))?;
    conn.stream.flush().await
}

fn password(config: &Config) -> Result<&str, Error> {
    config.password.as_deref().ok_or_else(|| {
        Error::new(
            Kind::Auth,
            "the server asks for a password but none was given; set password in the \
             connection string or PGPASSWORD, or add a line for this server to the password \
             file (~/.pgpass, or the file named by passfile or PGPASSFILE)",
        )
    })
}

fn method_name(method: AuthMethod) -> &'static str {
    match method {
        AuthMethod::Password => "password",
        AuthMethod::Md5 => "md5",
        AuthMethod::ScramSha256 => "scram-sha-256",
        AuthMethod::None => "none",
    }
}

fn check_allowed(config: &Config, method: AuthMethod) -> Result<(), Error> {
    match &config.require_auth {
        Some(require) if !require.allows(method) => Err(Error::new(
            Kind::Auth,
            format!(
                "the server authenticates with \"{}\", which require_auth refuses; change \
                 require_auth or the server's pg_hba.conf",
                method_name(method)
            ),
        )),
        _ => Ok(()),
    }
}

fn refuse_without_binding(config: &Config, method: AuthMethod) -> Result<(), Error> {
    if config.channel_binding == ChannelBinding::Require {
        return Err(channel_binding_error(method));
    }
    Ok(())
}

fn channel_binding_error(method: AuthMethod) -> Error {
    Error::new(
        Kind::Auth,
        format!(
            "channel_binding=require, but the server authenticates with \"{}\", which cannot \
             bind to the TLS channel; use SCRAM-SHA-256 over TLS or lower channel_binding",
            method_name(method)
        ),
    )
}
