//! What passes between the stages, in one place: the feature scheme rows
//! are written with ([`Scheme`], [`FeaturesAt`], [`LABEL_SCALE`]), their
//! libsvm text ([`libsvm`]: writer and strict reader) or compact binary rows
//! ([`binary`], read either way through [`format`]), and the model file that
//! training writes and the evaluation reads ([`model::LinearModel`],
//! LIBLINEAR's format with a JSON sidecar). `extract`, `train`, `eval` and
//! `report` depend on this module, not on one another's internals.

pub mod binary;
pub mod format;
pub mod libsvm;
pub mod model;
mod scheme;

pub use format::RowFormat;
pub use scheme::{Base, FeaturesAt, LABEL_SCALE, Labels, Scheme};
pub(crate) use scheme::{is_true, yes};
