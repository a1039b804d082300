//! A [`Query`]: a template with its [`Params`]; and [`NoRows`], the row type of a statement
//! that returns none.

use std::marker::PhantomData;

use super::{Arg, Template};
use crate::error::Error;
use crate::types::Encode;

/// The row type of a statement that returns no rows (INSERT/UPDATE/DELETE without RETURNING).
/// It is no [`Decoder`](super::Decoder): fetching is a compile error ([`ReturnsRows`]); run it with `execute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRows {}

/// Never implemented: the bound that makes fetching from a [`NoRows`] query a compile error
/// with this message (the inherent `fetch_*` methods of `Query<'_, NoRows>` require it).
#[diagnostic::on_unimplemented(
    message = "this statement returns no rows, so its rows cannot be fetched",
    label = "use `.execute(…)`, which returns the number of rows affected",
    note = "add a RETURNING clause to get rows back from INSERT, UPDATE or DELETE"
)]
pub trait ReturnsRows {}

/// Fetching from a statement without rows: each method fails to compile, saying to use
/// `execute` (or RETURNING).
impl Query<'_, NoRows> {
    /// Does not compile: the statement returns no rows.
    pub fn fetch_all<E: ReturnsRows>(
        self,
        _: E,
    ) -> std::future::Pending<Result<Vec<NoRows>, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch_one<E: ReturnsRows>(self, _: E) -> std::future::Pending<Result<NoRows, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch_optional<E: ReturnsRows>(
        self,
        _: E,
    ) -> std::future::Pending<Result<Option<NoRows>, Error>> {
        std::future::pending()
    }

    /// Does not compile: the statement returns no rows.
    pub fn fetch<E: ReturnsRows>(self, _: E) -> std::iter::Empty<NoRows> {
        std::iter::empty()
    }
}

/// The parameters of a [`Query`], in `$n` order: up to 8 inline, without allocating.
pub struct Params<'a> {
    inline: [Arg<'a>; INLINE],
    len: usize,
    heap: Vec<Arg<'a>>,
}

/// Note: 8, not 16: a `Query` is moved several times on its way into a pipeline, and with 16
/// inline arguments it was 424 bytes (232 now). An atomic pipeline of one-parameter queries
/// took ~110 instructions less per query, a query of 16 parameters one allocation (~60) more.
const INLINE: usize = 8;

impl<'a> Params<'a> {
    /// Collects borrowed parameters.
    pub fn new<const N: usize>(params: [&'a (dyn Encode + Sync); N]) -> Params<'a> {
        Params::args(params.map(Arg::Ref))
    }

    /// Collects parameters, each borrowed or held by value ([`Arg`]); what `qail!` emits.
    #[inline]
    pub fn args<const N: usize>(params: [Arg<'a>; N]) -> Params<'a> {
        if N > INLINE {
            return Params {
                inline: [Arg::Null; INLINE],
                len: N,
                heap: params.to_vec(),
            };
        }
        let mut inline = [Arg::Null; INLINE];
        inline[..N].copy_from_slice(&params);
        Params {
            inline,
            len: N,
            heap: Vec::new(),
        }
    }

    /// The parameters as a slice, ready for the Bind encoder.
    #[inline]
    pub fn as_slice(&self) -> &[Arg<'a>] {
        if self.len > INLINE {
            &self.heap
        } else {
            &self.inline[..self.len]
        }
    }
}

impl std::fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Params").field("len", &self.len).finish()
    }
}

/// A compiled statement with its parameters; `D` decodes its rows (see [`Decoder`](super::Decoder)), or is
/// [`NoRows`]. Built by `qail!`; run it on a connection.
pub struct Query<'a, D> {
    // Note: the methods that run a query read these fields, not `template()` and `params()`,
    // which would be compiled once per row type `D`.
    pub(crate) template: &'static Template,
    pub(crate) params: Params<'a>,
    _rows: PhantomData<fn() -> D>,
}

impl<'a, D> Query<'a, D> {
    /// Pairs a template with its parameters. The caller guarantees the parameters match the
    /// template's types and count (`qail!` checks both at compile time); the connection checks
    /// the count again before sending.
    pub fn new(template: &'static Template, params: Params<'a>) -> Query<'a, D> {
        Query {
            template,
            params,
            _rows: PhantomData,
        }
    }

    /// The compiled statement.
    pub fn template(&self) -> &'static Template {
        self.template
    }

    /// The parameters, in `$n` order.
    pub fn params(&self) -> &[Arg<'a>] {
        self.params.as_slice()
    }
}

impl<D> std::fmt::Debug for Query<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("statement", &self.template.name)
            .field("sql", &self.template.sql())
            .field("params", &self.params.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_inline_and_heap() {
        let values: Vec<i32> = (0..20).collect();
        let small = Params::new([&values[0] as &(dyn Encode + Sync), &values[1]]);
        assert_eq!(small.as_slice().len(), 2);
        let refs: [&(dyn Encode + Sync); 20] = std::array::from_fn(|i| &values[i] as _);
        let big = Params::new(refs);
        assert_eq!(big.as_slice().len(), 20);
        assert_eq!(Params::new([]).as_slice().len(), 0);
    }
}
