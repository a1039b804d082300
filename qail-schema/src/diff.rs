//! The semantic difference between two snapshots.
