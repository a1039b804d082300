//! SQL text below the parser: the lexical pieces PostgreSQL's scanner knows (quotes, dollar
//! quotes, comments) and cutting a file into its statements. The DDL import, the analyzer's
//! pre-pass, `cargo qail analyze` and the language server all cut text with these.

pub mod lex;
mod split;

pub use split::{Piece, split};
