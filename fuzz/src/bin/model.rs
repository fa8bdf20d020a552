//! LIBLINEAR model files: no header size allocates before it is checked.
use std::path::Path;

use niwatori::rows::model::LinearModel;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        if let Ok(model) = LinearModel::parse_text(Path::new("fuzz.model"), text) {
            assert!(model.raw_weights().len() <= text.len());
        }
    });
}
