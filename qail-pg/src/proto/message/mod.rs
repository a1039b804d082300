//! Protocol messages, one per file.
//!
//! Frontend messages are encoded straight into a caller's `Vec<u8>`; when encoding fails the
//! buffer is left as it was. Backend messages are cut out of a byte buffer with [`frame`] and
//! decoded, borrowing from it, with [`Backend::decode`].
//! See <https://www.postgresql.org/docs/current/protocol-message-formats.html>.

mod authentication;
mod backend;
mod backend_key_data;
mod bind;
mod cancel_request;
mod close;
mod command_complete;
mod copy;
mod copy_response;
mod data_row;
mod describe;
mod error;
pub mod error_response;
mod execute;
mod frame;
mod negotiate_protocol_version;
mod notification_response;
mod parameter_description;
mod parameter_status;
mod parse;
mod password;
mod query;
mod reader;
mod ready_for_query;
mod row_description;
mod sasl;
mod ssl_request;
mod startup;
mod trivial;
mod write;

pub use authentication::Authentication;
pub use backend::Backend;
pub use backend_key_data::BackendKeyData;
pub use bind::{Bind, Format, bind_execute, bind_execute_sync, bind_prefix};
pub use cancel_request::CancelRequest;
pub use close::Close;
pub use command_complete::CommandComplete;
pub use copy::{CopyData, CopyFail, copy_done};
pub use copy_response::CopyResponse;
pub use data_row::{DataRow, DataRowColumns};
pub use describe::Describe;
pub use error::{DecodeError, EncodeError};
pub use execute::Execute;
pub use frame::{
    Frame, MAX_MESSAGE_LEN, MAX_SMALL_MESSAGE_LEN, Phase, claimed_body_len, frame, max_body_len,
};
pub use negotiate_protocol_version::NegotiateProtocolVersion;
pub use notification_response::NotificationResponse;
pub use parameter_description::ParameterDescription;
pub use parameter_status::ParameterStatus;
pub use parse::Parse;
pub use password::PasswordMessage;
pub use query::Query;
pub use ready_for_query::{ReadyForQuery, TransactionStatus};
pub use row_description::{Field, RowDescription};
pub use sasl::{SaslInitialResponse, SaslResponse};
pub use ssl_request::ssl_request;
pub use startup::Startup;
pub use trivial::{flush, sync, terminate};

/// What [`Close`] and [`Describe`] act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A prepared statement (`S`).
    Statement,
    /// A portal (`P`).
    Portal,
}

impl Target {
    fn byte(self) -> u8 {
        match self {
            Target::Statement => b'S',
            Target::Portal => b'P',
        }
    }
}
