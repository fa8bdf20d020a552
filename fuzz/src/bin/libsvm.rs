//! libsvm rows, the strict reader `train` uses.
use niwatori::rows::libsvm::{Rows, parse_block};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let mut rows = Rows::default();
        let _ = parse_block(data, &mut rows);
    });
}
