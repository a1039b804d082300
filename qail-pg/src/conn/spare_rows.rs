//! The row vector `fetch_all` fills next, allocated while the rows of the last result are
//! still alive.
//!
//! Note: why. glibc's `malloc` serves a request of 1 KiB or more only after merging every
//! small free chunk it keeps for fast reuse (`malloc_consolidate`). `fetch_all` used to
//! reserve its row vector (several KiB for tens of rows) right after the caller had dropped
//! the previous result's strings, so every query first merged those hundreds of chunks and
//! then carved each new string out of the merged memory the slow way: about 40% of the
//! instructions of a 50-row query of four text columns went to the allocator. With the
//! vector ready, a result's strings reuse the chunks the last one freed, and the next vector
//! is allocated once the rows are decoded, when few such chunks are left.

use std::any::Any;

/// The largest spare vector kept between queries, in bytes: a larger result's vector is
/// allocated for the query that needs it, as before.
///
/// Note: glibc merges its fast-reuse chunks when anything over 64 KiB is freed, so when
/// the caller drops a vector that large the merge happens anyway and a spare saves nothing;
/// it would only keep a second large vector alive (the `wide` workload's peak RSS grew by
/// 0.2 MiB with a 256 KiB limit).
const MAX_SPARE: usize = 64 * 1024;

/// One empty vector with room for the rows of the last `fetch_all`, of that query's row type.
#[derive(Default)]
pub(crate) struct SpareRows(Option<Box<dyn Any + Send>>);

impl SpareRows {
    /// The spare vector if it holds rows of type `R` (the same query as last time, or one
    /// with the same row type); an empty one otherwise.
    ///
    /// Note: `take` and `refill` are instantiated for every row type that `fetch_all` returns,
    /// so they are written with `match` rather than `Option` combinators and closures: each
    /// combinator and closure would be one more function per row type to compile.
    #[inline]
    pub(crate) fn take<R: Send + 'static>(&mut self) -> Vec<R> {
        match self.slot::<R>() {
            Some(spare) => std::mem::take(spare),
            None => Vec::new(),
        }
    }

    /// Allocates the spare vector for the next query of row type `R`: room for `rows` rows,
    /// or none when that would be larger than [`MAX_SPARE`] or no rows came.
    #[inline]
    pub(crate) fn refill<R: Send + 'static>(&mut self, rows: usize) {
        let room = room(rows, size_of::<R>());
        // Note: the box is reused while the row type stays the same.
        match self.slot::<R>() {
            Some(slot) => *slot = Vec::with_capacity(room),
            None if room > 0 => self.0 = Some(Box::new(Vec::<R>::with_capacity(room))),
            None => self.0 = None,
        }
    }

    /// The spare vector, if it holds rows of type `R`.
    #[inline]
    fn slot<R: Send + 'static>(&mut self) -> Option<&mut Vec<R>> {
        match &mut self.0 {
            Some(spare) => spare.downcast_mut::<Vec<R>>(),
            None => None,
        }
    }
}

/// The rows a spare vector keeps room for after a result of `rows` rows of `size` bytes: all
/// of them, or none when that would be larger than [`MAX_SPARE`].
fn room(rows: usize, size: usize) -> usize {
    if rows.saturating_mul(size.max(1)) <= MAX_SPARE {
        rows
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spare_is_handed_to_the_same_row_type_only() {
        let mut spare = SpareRows::default();
        assert_eq!(spare.take::<String>().capacity(), 0);
        spare.refill::<String>(50);
        assert!(
            spare.take::<u8>().capacity() == 0,
            "another row type gets a fresh vector"
        );
        let rows = spare.take::<String>();
        assert!(rows.capacity() >= 50);
        assert!(rows.is_empty());
        assert_eq!(spare.take::<String>().capacity(), 0, "taken once");
    }

    #[test]
    fn a_large_or_empty_result_keeps_no_spare() {
        let mut spare = SpareRows::default();
        spare.refill::<[u8; 1024]>(MAX_SPARE);
        assert_eq!(spare.take::<[u8; 1024]>().capacity(), 0);
        spare.refill::<u64>(10);
        spare.refill::<u64>(0);
        assert_eq!(spare.take::<u64>().capacity(), 0);
    }
}
