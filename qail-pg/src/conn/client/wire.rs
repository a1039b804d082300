//! Parameters encoded by the calling task ([`Wire`]): a shared client's I/O task binds them
//! long after the caller's borrowed values are gone, so each value travels as the bytes a
//! Bind carries for it (its length, then its binary form). A query's values travel together
//! ([`Wires`]); a few small ones take no allocation.

use std::cell::RefCell;

use crate::error::{Error, Kind};
use crate::proto::message::EncodeError;
use crate::template::{Arg, Template};
use crate::types::{BoxError, Encode, IsNull, Oid, Param};

/// Values up to this many bytes (with their 4-byte length) are kept without allocating.
const INLINE: usize = 22;

/// One parameter as a Bind carries it: its 4-byte length (-1 for NULL), then its binary form.
pub(crate) enum Wire {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Wire {
    /// A placeholder for the unused places of [`Wires::Few`].
    const EMPTY: Wire = Wire::Inline {
        len: 0,
        bytes: [0; INLINE],
    };

    fn new(bytes: &[u8]) -> Wire {
        match u8::try_from(bytes.len()) {
            Ok(len) if bytes.len() <= INLINE => {
                let mut inline = [0; INLINE];
                inline[..bytes.len()].copy_from_slice(bytes);
                Wire::Inline { len, bytes: inline }
            }
            _ => Wire::Heap(bytes.into()),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Wire::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Wire::Heap(bytes) => bytes,
        }
    }
}

impl Encode for Wire {
    fn encode(&self, _: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        match self.bytes().split_at_checked(4) {
            Some((len, value)) if len != (-1i32).to_be_bytes() => {
                buf.extend_from_slice(value);
                Ok(IsNull::No)
            }
            _ => Ok(IsNull::Yes),
        }
    }
    fn accepts(_: Oid) -> bool {
        true
    }
    fn type_oid(&self) -> Oid {
        0
    }
    fn encode_checked(&self, ty: Oid, buf: &mut Vec<u8>) -> Result<IsNull, BoxError> {
        self.encode(ty, buf)
    }
}

impl Param for Wire {
    fn as_encode(&self) -> &(dyn Encode + Sync) {
        self
    }

    /// Note: the bytes were encoded for the type the statement was prepared with (the
    /// template's, or the value's own for run-time SQL), so they are copied as they are.
    #[inline]
    fn put_fixed(&self, _: Oid, buf: &mut Vec<u8>) -> bool {
        buf.extend_from_slice(self.bytes());
        true
    }
}

/// How many values [`Wires`] holds without allocating.
const FEW: usize = 2;

/// The parameters of one query, in order: up to [`FEW`] in place.
pub(crate) enum Wires {
    Few { len: u8, wires: [Wire; FEW] },
    Many(Vec<Wire>),
}

impl Wires {
    fn with_capacity(count: usize) -> Wires {
        if count <= FEW {
            Wires::Few {
                len: 0,
                wires: [Wire::EMPTY; FEW],
            }
        } else {
            Wires::Many(Vec::with_capacity(count))
        }
    }

    fn push(&mut self, wire: Wire) {
        match self {
            Wires::Few { len, wires } => match wires.get_mut(usize::from(*len)) {
                Some(place) => {
                    *place = wire;
                    *len += 1;
                }
                None => {
                    let mut many = Vec::with_capacity(2 * FEW);
                    many.extend(std::mem::replace(wires, [Wire::EMPTY; FEW]));
                    many.push(wire);
                    *self = Wires::Many(many);
                }
            },
            Wires::Many(wires) => wires.push(wire),
        }
    }

    /// The values, in order.
    pub(crate) fn as_slice(&self) -> &[Wire] {
        match self {
            Wires::Few { len, wires } => &wires[..usize::from(*len)],
            Wires::Many(wires) => wires,
        }
    }
}

thread_local! {
    /// Where a value is encoded before it is kept as a [`Wire`]: one buffer per thread,
    /// reused by every query.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with an empty scratch buffer: the thread's, or a new one if the thread's is in
/// use (an `Encode` implementation that encodes a query of its own).
fn with_scratch<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut buf) => {
            buf.clear();
            let out = f(&mut buf);
            // Note: a long value's memory is not kept for every later query.
            if buf.capacity() > 4096 {
                *buf = Vec::new();
            }
            out
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// Encodes a compiled query's parameters for its template's types.
pub(crate) fn template_params(template: &Template, params: &[Arg<'_>]) -> Result<Wires, Error> {
    crate::template::conformance::check_count(template, params.len())?;
    let mut wires = Wires::with_capacity(params.len());
    with_scratch(|scratch| {
        for (index, (param, ty)) in params.iter().zip(template.param_oids).enumerate() {
            scratch.clear();
            if !param.put_fixed(*ty, scratch) {
                encode(scratch, index, param.as_encode(), *ty, true)?;
            }
            wires.push(Wire::new(scratch));
        }
        Ok::<_, Error>(())
    })?;
    Ok(wires)
}

/// Encodes run-time SQL parameters, each as its own type ([`Encode::type_oid`]); returns
/// them with those types, which the statement is prepared with.
pub(crate) fn sql_params(params: &[&(dyn Encode + Sync)]) -> Result<(Wires, Vec<Oid>), Error> {
    if params.len() > usize::from(u16::MAX) {
        return Err(crate::conn::prepare::encode_error(EncodeError::TooMany {
            field: "parameters",
            count: params.len(),
        }));
    }
    let mut wires = Wires::with_capacity(params.len());
    let mut types = Vec::with_capacity(params.len());
    with_scratch(|scratch| {
        for (index, param) in params.iter().enumerate() {
            let ty = param.type_oid();
            scratch.clear();
            encode(scratch, index, *param, ty, false)?;
            wires.push(Wire::new(scratch));
            types.push(ty);
        }
        Ok::<_, Error>(())
    })?;
    Ok((wires, types))
}

/// Writes one parameter as a Bind does: a length (-1 = NULL), then the value.
fn encode(
    buf: &mut Vec<u8>,
    index: usize,
    param: &(dyn Encode + Sync),
    ty: Oid,
    checked: bool,
) -> Result<(), Error> {
    let len_at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let encoded = if checked && ty != 0 {
        param.encode_checked(ty, buf)
    } else {
        param.encode(ty, buf)
    };
    let is_null = encoded.map_err(|source| {
        crate::conn::prepare::encode_error(EncodeError::Param { index, source })
    })?;
    let len = match is_null {
        IsNull::Yes => {
            buf.truncate(len_at + 4);
            -1
        }
        IsNull::No => i32::try_from(buf.len() - len_at - 4).map_err(|_| {
            Error::new(
                Kind::Encode,
                format!("parameter {index} is longer than PostgreSQL accepts (2 GiB); send less"),
            )
        })?,
    };
    buf[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_keep_the_bytes_a_bind_carries() {
        let text = "x".repeat(40);
        let none: Option<i32> = None;
        let (wires, types) = sql_params(&[&7i32, &text.as_str(), &none]).unwrap();
        assert_eq!(types, [23, 25, 0]);
        let mut buf = Vec::new();
        for wire in wires.as_slice() {
            assert!(wire.put_fixed(0, &mut buf));
        }
        let mut expected = vec![0, 0, 0, 4, 0, 0, 0, 7, 0, 0, 0, 40];
        expected.extend_from_slice(text.as_bytes());
        expected.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(buf, expected);
        let mut value = Vec::new();
        let wires = wires.as_slice();
        assert_eq!(wires[2].encode(0, &mut value).unwrap(), IsNull::Yes);
        assert_eq!(wires[0].encode(0, &mut value).unwrap(), IsNull::No);
        assert_eq!(value, [0, 0, 0, 7]);
    }
}
