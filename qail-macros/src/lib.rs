//! Procedural macros of qail: `qail!`, `#[derive(QailRow)]`, `#[derive(QailType)]`.
//!
//! Use them through the `qail` crate; this crate's output refers to `::qail::__private`.
