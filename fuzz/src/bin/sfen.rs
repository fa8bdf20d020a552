//! SFEN positions: a position read back writes the SFEN it was read from.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        if let Ok(pos) = rsshogi::board::position_from_sfen(text) {
            let again = pos.to_sfen(None);
            let twice = rsshogi::board::position_from_sfen(&again)
                .expect("an SFEN written reads back")
                .to_sfen(None);
            assert_eq!(again, twice);
        }
    });
}
