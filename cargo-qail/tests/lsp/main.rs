//! The language server (`cargo qail lsp`) driven over standard input and output: scripted
//! sessions for `.rs` and `.sql` files, and headless Neovim as a real client.

mod client;
mod nvim;
mod sessions;
