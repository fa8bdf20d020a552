//! Writing finished games as CSA V2.2 records.
//!
//! Engines' scores and PVs go into `'**` comments after each move, in the
//! floodgate convention: the score from Black's (sente's) view, then the PV after
//! the move played, in CSA notation. Times are whole seconds (`T`), as V2.2 wants.
//! Endings map to the V2.2 markers so other tools (and rsshogi's reader) find the
//! right result: e.g. a crash or a perpetual check is `%+ILLEGAL_ACTION` /
//! `%-ILLEGAL_ACTION` naming the side at fault, with the reason as a comment.

use rsshogi::board::{Position, STARTPOS_SFEN};
use rsshogi::records::formats::csa::board_to_csa;

use super::clock::Limit;
use super::game::{EndReason, GameError, GameRecord, legal_move};

/// `+` for Black (side 0), `-` for White.
fn sign(side: usize) -> char {
    if side == 0 { '+' } else { '-' }
}

/// `YYYY/MM/DD HH:MM:SS` (UTC) for a Unix time.
pub fn csa_datetime(unix: u64) -> String {
    let days = (unix / 86400) as i64;
    let secs = unix % 86400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}/{m:02}/{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The CSA form of `usi` in `pos` (which must be legal there).
fn csa_move(pos: &Position, usi: &str) -> Option<String> {
    legal_move(pos, usi).and_then(|m| m.to_csa())
}

/// A PV in CSA notation, as far as its moves are legal.
fn csa_pv(mut pos: Position, pv: &[String]) -> String {
    let mut out = Vec::new();
    for usi in pv {
        let Some(mv) = legal_move(&pos, usi) else {
            break;
        };
        let Some(csa) = mv.to_csa() else { break };
        out.push(csa);
        pos.apply_move32(mv);
    }
    out.join(" ")
}

/// The record as CSA V2.2 text.
pub fn to_csa(rec: &GameRecord) -> Result<String, GameError> {
    let mut lines: Vec<String> = vec![
        "V2.2".into(),
        format!("N+{}", rec.black),
        format!("N-{}", rec.white),
    ];
    lines.push("$EVENT:niwatori match".into());
    lines.push(format!("$START_TIME:{}", csa_datetime(rec.started_unix)));
    match rec.limit {
        Limit::Time(tc) => {
            let secs = tc.total_ms / 1000;
            lines.push(format!(
                "$TIME_LIMIT:{:02}:{:02}+{:02}",
                secs / 3600,
                secs / 60 % 60,
                tc.byoyomi_ms / 1000
            ));
            lines.push(format!("'time control: {tc}"));
        }
        Limit::Nodes(n) => lines.push(format!("'limit: go nodes {n}")),
        Limit::Depth(d) => lines.push(format!("'limit: go depth {d}")),
    }
    lines.push(format!("'opening: {}", rec.opening.source));
    let start = rec.opening.start_sfen.as_str();
    let mut pos = rsshogi::board::position_from_sfen(start).map_err(|e| GameError::BadOpening {
        sfen: start.to_string(),
        what: e.to_string(),
    })?;
    if start == STARTPOS_SFEN {
        lines.push("PI".into());
        lines.push("+".into());
    } else {
        lines.extend(board_to_csa(&pos).lines().map(str::to_string));
    }
    let bad = |i: usize, usi: &str| GameError::BadOpening {
        sfen: start.to_string(),
        what: format!("move {} ({usi}) is not legal", i + 1),
    };
    for (i, usi) in rec.opening.moves.iter().enumerate() {
        let mv = legal_move(&pos, usi).ok_or_else(|| bad(i, usi))?;
        lines.push(mv.to_csa().ok_or_else(|| bad(i, usi))?);
        pos.apply_move32(mv);
    }
    if !rec.opening.moves.is_empty() {
        lines.push(format!(
            "'end of opening ({} plies)",
            rec.opening.moves.len()
        ));
    }
    for (i, m) in rec.moves.iter().enumerate() {
        let mover = super::game::side_index(pos.turn());
        let i = rec.opening.moves.len() + i;
        lines.push(csa_move(&pos, &m.usi).ok_or_else(|| bad(i, &m.usi))?);
        lines.push(format!("T{}", m.elapsed_ms / 1000));
        let mv = legal_move(&pos, &m.usi).ok_or_else(|| bad(i, &m.usi))?;
        pos.apply_move32(mv);
        if let Some(score) = m.score {
            let black_view = if mover == 0 { score } else { -score };
            let pv_after: &[String] = match m.pv.split_first() {
                Some((first, rest)) if *first == m.usi => rest,
                _ => &[],
            };
            let pv = csa_pv(pos.clone(), pv_after);
            let mut c = format!("'** {black_view}");
            if !pv.is_empty() {
                c.push(' ');
                c.push_str(&pv);
            }
            if let Some(n) = m.nodes {
                c.push_str(&format!(" #{n}"));
            }
            lines.push(c);
        }
    }
    let stm = rec.side_to_move_at_end;
    let loser = rec.winner.map(|w| 1 - w);
    let action = |side: Option<usize>| format!("%{}ILLEGAL_ACTION", sign(side.unwrap_or(stm)));
    let (marker, note) = match &rec.reason {
        EndReason::Resign => ("%TORYO".to_string(), None),
        EndReason::Mated => (
            "%TSUMI".to_string(),
            Some("no legal move: mated".to_string()),
        ),
        EndReason::Repetition => ("%SENNICHITE".to_string(), None),
        EndReason::PerpetualCheck => (
            action(loser),
            Some("repetition with perpetual check".into()),
        ),
        EndReason::Declaration => ("%KACHI".to_string(), None),
        EndReason::IllegalDeclaration => (
            action(loser),
            Some("invalid entering-king declaration".into()),
        ),
        EndReason::IllegalMove(m) => (
            "%ILLEGAL_MOVE".to_string(),
            Some(format!("illegal move {m}")),
        ),
        EndReason::TimeLoss(why) => ("%TIME_UP".to_string(), Some(format!("time loss: {why}"))),
        EndReason::Crash(why) => (action(loser), Some(format!("engine failure: {why}"))),
        EndReason::MaxMoves => ("%HIKIWAKE".to_string(), Some("move limit reached".into())),
        EndReason::Server(line) => {
            let m = match loser {
                Some(l) if l == stm => "%TORYO".to_string(),
                Some(l) => action(Some(l)),
                None => "%HIKIWAKE".to_string(),
            };
            (m, Some(format!("server ended the game: {line}")))
        }
    };
    lines.push(marker);
    if let Some(n) = note {
        lines.push(format!("'{}", n.replace('\n', " ")));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_civil() {
        assert_eq!(csa_datetime(0), "1970/01/01 00:00:00");
        assert_eq!(csa_datetime(951_782_400), "2000/02/29 00:00:00");
        assert_eq!(csa_datetime(1_798_761_599), "2026/12/31 23:59:59");
    }
}
