//! Move policy: which move a strong player picks in a position.
//!
//! [`labels`] names each move of a position as one class of a fixed set;
//! [`features`] describes a move in its position; [`model`] holds a linear
//! softmax policy over those features and its file; [`train`] fits it to
//! game moves; [`cli`] is `niwatori policy train`.
pub mod cli;
pub mod features;
pub mod labels;
pub mod model;
pub mod train;

pub use model::PolicyModel;
