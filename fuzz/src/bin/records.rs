//! CSA and KIF game records (the first byte picks the format).
//!
//! rsshogi's KIF reader sums times with unchecked u32 arithmetic
//! (`parse_colon_time_to_ms`): it wraps in release builds, as users run
//! it, but panics in this checked build. Those panics, in rsshogi and on
//! overflow only, are passed over so that the search goes on.
use std::cell::RefCell;
use std::path::Path;

use niwatori::records::{Format, parse_games};

thread_local! {
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| l.file().to_string()).unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{at}: {info}"));
    }));
    afl::fuzz_nohook!(|data: &[u8]| {
        let Some((&which, text)) = data.split_first() else {
            return;
        };
        let format = if which & 1 == 0 { Format::Csa } else { Format::Kif };
        let read = std::panic::catch_unwind(|| parse_games(Path::new("fuzz"), format, text));
        let read = match read {
            Ok(read) => read,
            Err(e) => {
                let what = LAST_PANIC.with(|p| p.borrow().clone());
                if what.contains("rsshogi") && what.contains("overflow") {
                    return;
                }
                eprintln!("{what}");
                std::panic::resume_unwind(e);
            }
        };
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
