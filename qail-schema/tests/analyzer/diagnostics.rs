//! Diagnostics as the user sees them.
