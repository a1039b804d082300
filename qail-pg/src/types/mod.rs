//! Binary-format conversion between Rust values and PostgreSQL values.
//!
//! [`Encode`] writes a parameter, [`Decode`] reads a result column. Both speak PostgreSQL's
//! binary format only and check the type OID they are given with `accepts` first.

/// A PostgreSQL type OID (`pg_type.oid`).
pub type Oid = u32;

/// The error type of a failed conversion. Messages say what the value was and what to do.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Whether an encoded value is SQL NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsNull {
    /// The value is NULL; nothing was written.
    Yes,
    /// The value was written to the buffer.
    No,
}

/// A Rust value that can be sent to PostgreSQL as a parameter in binary format.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be sent as a PostgreSQL parameter",
    note = "implement `qail::Encode` for it, or derive `QailType` for an enum"
)]
pub trait Encode {
    /// Writes the value's binary representation for type `ty` to `buf`, without the length
    /// prefix. Returns [`IsNull::Yes`] (and writes nothing) for NULL.
    fn encode(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError>;

    /// Whether values of this Rust type can be sent as PostgreSQL type `ty`.
    fn accepts(ty: Oid) -> bool
    where
        Self: Sized;

    /// The OID this value is sent as when nothing else fixes the parameter's type.
    fn type_oid(&self) -> Oid;

    /// [`accepts`](Encode::accepts) then [`encode`](Encode::encode); usable through `dyn Encode`.
    fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError>;
}

/// A Rust value that can be read from a PostgreSQL result column in binary format.
///
/// `'r` is the lifetime of the row's bytes, so `&'r str` and `&'r [u8]` borrow without copying.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read from a PostgreSQL column",
    note = "implement `qail::Decode` for it, or derive `QailType` for an enum"
)]
pub trait Decode<'r>: Sized {
    /// Whether a column of PostgreSQL type `ty` can be read as this Rust type.
    fn accepts(ty: Oid) -> bool;

    /// Reads a non-NULL value of type `ty` from its binary representation.
    fn decode(ty: Oid, raw: &'r [u8]) -> Result<Self, BoxError>;

    /// Reads a SQL NULL. The default is an error: only `Option<T>` accepts NULL.
    fn decode_null(ty: Oid) -> Result<Self, BoxError> {
        let _ = ty;
        Err("unexpected NULL: read the column as Option<T>".into())
    }

    /// Reads a value that may be NULL (`None`).
    fn decode_nullable(ty: Oid, raw: Option<&'r [u8]>) -> Result<Self, BoxError> {
        match raw {
            Some(raw) => Self::decode(ty, raw),
            None => Self::decode_null(ty),
        }
    }
}
