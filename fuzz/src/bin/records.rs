//! CSA and KIF game records (the first byte picks the format).
use std::path::Path;

use niwatori::records::{Format, parse_games};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Some((&which, text)) = data.split_first() else {
            return;
        };
        let format = if which & 1 == 0 {
            Format::Csa
        } else {
            Format::Kif
        };
        let read = parse_games(Path::new("fuzz"), format, text);
        // What was kept replays: every move legal from the start.
        for game in &read.games {
            let mut pos = game.start_position();
            for mv in game.moves32() {
                assert!(pos.is_legal_move32(mv), "a kept move is illegal");
                pos.apply_move32(mv);
            }
        }
    });
}
