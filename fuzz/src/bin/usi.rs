//! USI commands: `position`, `go` and `setoption` lines.
use niwatori::usi::{Options, parse_go, parse_position};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.split_first() {
                Some((&"position", rest)) => {
                    let _ = parse_position(rest);
                }
                Some((&"go", rest)) => {
                    let _ = parse_go(rest);
                }
                Some((&"setoption", rest)) => {
                    // name N value V, as the engine reads it
                    let name_at = rest.iter().position(|w| *w == "name");
                    let value_at = rest.iter().position(|w| *w == "value");
                    if let Some(n) = name_at {
                        let end = value_at.filter(|&v| v > n).unwrap_or(rest.len());
                        let name = rest[n + 1..end].join(" ");
                        let value = value_at.map_or(String::new(), |v| rest[v + 1..].join(" "));
                        let _ = Options::default().set(&name, &value);
                    }
                }
                _ => {}
            }
        }
    });
}
