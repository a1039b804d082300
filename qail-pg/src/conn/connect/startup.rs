//! The startup handshake: StartupMessage (with the protocol version requested), the version
//! negotiation and authentication, then the server's parameters and key data up to the first
//! ReadyForQuery.
//!
//! See <https://www.postgresql.org/docs/18/protocol-flow.html#PROTOCOL-FLOW-START-UP>.

use super::auth;
use crate::config::Config;
use crate::conn::stream::Stream;
use crate::conn::{Connection, cache, server_error};
use crate::error::{Error, Kind};
use crate::proto::ProtocolVersion;
use crate::proto::message::{Backend, Startup};

/// Starts a session over an open `stream`. `server_cert` is the TLS server's leaf
/// certificate (DER), for SCRAM channel binding.
pub(crate) async fn startup(
    stream: Stream,
    config: &Config,
    server_cert: Option<Vec<u8>>,
) -> Result<Connection, Error> {
    let pooled = config.pooler == crate::config::Pooler::Transaction;
    let cache_size = if pooled { 0 } else { cache::DEFAULT_SIZE };
    let mut conn = Connection::new(stream, cache_size);
    conn.pooled_transactions = pooled;
    let mut params = vec![
        ("user", config.user.as_str()),
        ("database", config.dbname.as_str()),
        ("client_encoding", "UTF8"),
    ];
    if let Some(name) = &config.application_name {
        params.push(("application_name", name));
    }
    if let Some(options) = &config.options {
        params.push(("options", options));
    }
    let version = config.requested_protocol_version();
    if config.min_protocol_version > version {
        return Err(Error::new(
            Kind::Config,
            format!(
                "min_protocol_version ({}) is greater than max_protocol_version ({version}); \
                 raise max_protocol_version or lower min_protocol_version",
                config.min_protocol_version
            ),
        ));
    }
    conn.protocol_version = version;
    Startup {
        version,
        params: &params,
    }
    .encode(conn.stream.write_buf())
    .map_err(|e| Error::with_source(Kind::Config, "the connection options cannot be sent", e))?;
    conn.stream.flush().await?;
    auth::authenticate(&mut conn, config, server_cert.as_deref()).await?;
    after_auth(&mut conn).await?;
    Ok(conn)
}

/// Reads BackendKeyData and ParameterStatus up to ReadyForQuery.
async fn after_auth(conn: &mut Connection) -> Result<(), Error> {
    // Note: the StartupMessage opens a cycle that the first ReadyForQuery ends.
    conn.syncs.sent(1);
    loop {
        let message = conn.recv().await?;
        match conn.stream.decode(message) {
            // Note: the key is 4 bytes in protocol 3.0 and 4 to 256 bytes in 3.2 (32 from
            // PostgreSQL 18); the CancelRequest sends it back whole.
            Ok(Backend::BackendKeyData(key))
                if conn.protocol_version == ProtocolVersion::V3_0 && key.secret_key.len() != 4 =>
            {
                return Err(conn.protocol_error(
                    "a cancel key longer than protocol 3.0's 4 bytes in BackendKeyData",
                ));
            }
            Ok(Backend::BackendKeyData(key)) => {
                conn.process_id = key.process_id;
                conn.secret_key = key.secret_key.to_vec();
            }
            Ok(Backend::ReadyForQuery(r)) => {
                conn.on_ready(r);
                conn.stream.start_session();
                break;
            }
            Ok(Backend::ErrorResponse(db)) => {
                conn.stream.set_broken();
                return Err(server_error(db));
            }
            Ok(_) => return Err(conn.protocol_error("an unexpected message during startup")),
            Err(e) => return Err(conn.decode_error(e)),
        }
    }
    match conn.parameter_status("client_encoding") {
        Some("UTF8") | None => Ok(()),
        Some(other) => {
            let other = other.to_owned();
            conn.stream.set_broken();
            Err(Error::new(
                Kind::Protocol,
                format!(
                    "the server uses client_encoding {other}; qail-pg only speaks UTF8, so \
                     remove client_encoding from the server's or role's settings"
                ),
            ))
        }
    }
}
