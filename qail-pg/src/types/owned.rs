//! Owned copies of text read from a row: every `String` a row decodes (a text column, each
//! key and string of a JSON value) is made here.
//!
//! Note: why not `str::to_owned`. `String::from(&str)` goes through `RawVec`'s allocation
//! path, which the standard library keeps out of line and generic over the allocator: a call
//! with six arguments, a capacity and layout check and a `Result` returned through memory,
//! about 45 instructions around `malloc` for each string. A row of the `wide` benchmark
//! makes five strings (a text column, three JSON keys and a JSON string), about 4% of its
//! decoding. Here the buffer is requested from the global allocator directly with the
//! string's exact layout, which is what `String` itself would hold.

#![allow(
    unsafe_code,
    reason = "String::from_raw_parts on a buffer just allocated with the global allocator \
              for exactly the string's bytes; std offers no safe way around RawVec's path"
)]

use std::alloc::{Layout, alloc, handle_alloc_error};

/// An owned copy of `s`, with capacity equal to its length (as `str::to_owned` makes it).
#[inline]
pub(crate) fn string(s: &str) -> String {
    let len = s.len();
    if len == 0 {
        return String::new();
    }
    // Note: infallible, a slice that exists has a valid layout.
    let layout = Layout::for_value(s.as_bytes());
    // SAFETY: `layout` has a nonzero size (`len > 0`).
    let ptr = unsafe { alloc(layout) };
    if ptr.is_null() {
        handle_alloc_error(layout);
    }
    // SAFETY: `ptr` is valid for `len` bytes of writes (just allocated with that size), `s`
    // for `len` bytes of reads, and a fresh allocation does not overlap `s`.
    unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), ptr, len) };
    // SAFETY: `ptr` was allocated by the global allocator with size `len` and alignment 1
    // (the layout of `[u8; len]`), which is a `String` of capacity `len`; its `len` bytes
    // are initialized with `s`'s, which are valid UTF-8.
    unsafe { String::from_raw_parts(ptr, len, len) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_text_exactly_with_its_length_as_capacity() {
        for s in ["", "a", "tag", "ünïcödé ✓", &"x".repeat(1000)] {
            let mut owned = string(s);
            assert_eq!(owned, s);
            assert_eq!(owned.capacity(), s.len());
            // The copy is a String like any other: it grows, shrinks and is freed.
            owned.push_str("more");
            assert_eq!(owned.len(), s.len() + 4);
            owned.truncate(s.len());
            owned.shrink_to_fit();
            assert_eq!(owned, s);
        }
    }
}
