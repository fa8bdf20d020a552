//! CSA server messages: the Game_Summary block a server sends.
use niwatori::play::csa_client::GameSummary;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if let Ok(summary) = GameSummary::parse(&lines) {
            let _ = niwatori::play::csa_client::summary_position(&summary);
        }
    });
}
