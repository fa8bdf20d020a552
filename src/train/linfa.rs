//! linfa traits for our solver: [`SvrParams`](super::SvrParams) is a [`ParamGuard`] (see
//! [`crate::train::params`]; linfa then lets it fit directly), [`SvrValidParams`] fits a sparse [`Dataset`]
//! through [`Fit`], and the resulting [`LinearModel`] predicts through
//! [`Predict`], so niwatori's SVR can be used as a linfa algorithm.
//!
//! The linfa dataset's targets are the labels that are fitted (the labels
//! stored in the sparse rows are ignored).
//!
//! ```
//! use linfa::prelude::*;
//! use ndarray::array;
//! use niwatori::rows::libsvm::{parse_block, Rows};
//! use niwatori::train::{dataset::Dataset, SvrParams};
//! let mut rows = Rows::default();
//! parse_block(b"0 1:1\n0 2:1\n", &mut rows).unwrap();
//! let x = Dataset::from_rows(rows, 0, -1.0).unwrap();
//! let train = DatasetBase::new(x.clone(), array![2.0, -1.0]);
//! let model = SvrParams::default().c(100.0).p(0.0).fit(&train).unwrap();
//! let pred = model.predict(&x);
//! assert!((pred[0] - 2.0).abs() < 0.05 && (pred[1] + 1.0).abs() < 0.05);
//! ```

use linfa::dataset::{DatasetBase, Records};
use linfa::error::Error as LinfaBaseError;
use linfa::traits::{Fit, Predict};
use ndarray::Array1;
use thiserror::Error;

use super::dataset::Dataset;
use super::params::{ParamError, SvrValidParams};
use crate::rows::model::LinearModel;

/// An error fitting through linfa.
#[derive(Debug, Error)]
pub enum SvrFitError {
    #[error(transparent)]
    Linfa(#[from] LinfaBaseError),
    #[error(transparent)]
    Params(#[from] ParamError),
    #[error("{targets} targets for {rows} rows")]
    Shape { rows: usize, targets: usize },
}

impl Records for Dataset {
    type Elem = f64;

    fn nsamples(&self) -> usize {
        self.n_rows()
    }

    fn nfeatures(&self) -> usize {
        self.n_features()
    }
}

impl Fit<Dataset, Array1<f64>, SvrFitError> for SvrValidParams {
    type Object = LinearModel;

    fn fit(&self, dataset: &DatasetBase<Dataset, Array1<f64>>) -> Result<LinearModel, SvrFitError> {
        let x = dataset.records();
        let y = dataset.targets();
        if y.len() != x.n_rows() {
            return Err(SvrFitError::Shape {
                rows: x.n_rows(),
                targets: y.len(),
            });
        }
        let data = x.with_labels(y.to_vec(), self.bias());
        let (w, _) = super::fit_quiet(&data, self);
        Ok(LinearModel::new(w, self.bias(), None))
    }
}

impl Predict<&Dataset, Array1<f64>> for LinearModel {
    fn predict(&self, x: &Dataset) -> Array1<f64> {
        (0..x.n_rows())
            .map(|i| {
                let (idx, val) = x.row(i);
                let mut s: f64 = idx
                    .iter()
                    .zip(&val)
                    .filter(|(j, _)| (**j as usize) < self.nr_feature())
                    .map(|(j, v)| self.weights()[*j as usize] * v)
                    .sum();
                if let Some(wb) = self.bias_weight() {
                    s += self.bias() * wb;
                }
                s
            })
            .collect()
    }
}
