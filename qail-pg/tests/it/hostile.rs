//! A scripted fake server sending what a real one never would.
