//! A split by opening keeps games that open alike on one side: no held-out
//! game shares its first N plies with a training game, where the split by
//! path lets the generated games (played from prefixes of the WCSC28 games)
//! leak their openings into the held-out set.

mod common;

use std::collections::HashSet;
use std::path::Path;

use niwatori::corpus::split_games;
use niwatori::records::Game;

fn openings(games: &[Game], plies: usize) -> HashSet<Vec<String>> {
    games
        .iter()
        .map(|g| g.usi_moves().into_iter().take(plies).collect())
        .collect()
}

/// Held-out games whose first `plies` moves some training game also opens with.
fn shared(kifu: &Path, split_opening: Option<u32>, plies: usize) -> (usize, usize) {
    let (train, held) = split_games(kifu, 0.2, 1, split_opening, None).unwrap();
    let seen = openings(&train, plies);
    let leaks = held
        .iter()
        .filter(|g| seen.contains(&g.usi_moves().into_iter().take(plies).collect::<Vec<_>>()))
        .count();
    (leaks, held.len())
}

#[test]
fn no_held_out_game_shares_its_opening_with_a_training_game() {
    let tmp = tempfile::tempdir().unwrap();
    for dir in ["wcsc28", "selfplay"] {
        let src = common::shared(&format!("kifu/{dir}"));
        assert!(
            src.is_dir(),
            "{} is missing (see ../shared/README.md)",
            src.display()
        );
        std::os::unix::fs::symlink(&src, tmp.path().join(dir)).unwrap();
    }
    let (leaks_by_path, held_by_path) = shared(tmp.path(), None, 12);
    let (leaks, held) = shared(tmp.path(), Some(12), 12);
    eprintln!(
        "split by path: {leaks_by_path} of {held_by_path} held-out games open as a training game does; by opening: {leaks} of {held}"
    );
    assert!(
        leaks_by_path > 10,
        "the path split was expected to leak openings: {leaks_by_path}"
    );
    assert_eq!(leaks, 0);
    assert!(held > 50, "{held} held-out games");
}
