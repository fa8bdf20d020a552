//! Move policy: which move a strong player picks in a position.
//!
//! [`labels`] names each move of a position as one class of a fixed set.
pub mod labels;
