//! The attack2 features: exact lists for hand-built positions (the index
//! formula of features/README.md written out independently here), colour
//! symmetry and index bounds on real game positions.

use std::collections::HashSet;

use niwatori::features::{
    FeatureSet, NUM_FEATURES, RelationEncoding, features, for_each_feature, for_each_term,
};
use niwatori::records::read_games;
use rsshogi::board::{Move32List, generate_legal_all_move32, position_from_sfen};

const BOARD: u32 = 2268 * 2268;

/// 28 * square (seen from the side to move) + 14 * owner + piece type - 1.
fn code(sq: u32, owner: u32, piece_type: u32) -> u32 {
    28 * sq + 14 * owner + piece_type - 1
}

fn pair(a: u32, b: u32) -> u32 {
    2268 * a + b
}

fn sorted(mut v: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    v.sort_by_key(|x| x.0);
    v
}

/// First index of the kind block (after the pair and hand blocks).
const KINDS: u32 = BOARD + 12_312;

/// Kind-block index: piece codes without squares, relation 1..=11.
fn kind(a: u32, b: u32, rel: u32) -> u32 {
    KINDS + 11 * (28 * (a % 28) + b % 28) + rel - 1
}

/// Completes a list of pair (and hand) features: adds the "piece itself"
/// feature (A, A) of every listed piece, value 1, and the kind block that
/// counts every pair by (kind A, kind B, relation), self-pairs as relation 11.
fn with_pieces(mut v: Vec<(u32, f32)>, pieces: &[u32]) -> Vec<(u32, f32)> {
    let mut counts = std::collections::BTreeMap::<u32, f32>::new();
    for &(i, rel) in v.iter().filter(|(i, _)| *i < BOARD) {
        *counts
            .entry(kind(i / 2268, i % 2268, rel as u32))
            .or_default() += 1.0;
    }
    for &p in pieces {
        v.push((pair(p, p), 1.0));
        *counts.entry(kind(p, p, 11)).or_default() += 1.0;
    }
    v.extend(counts);
    sorted(v)
}

/// The one-hot twin of a value-encoded list: pair `i` with kind `k` becomes
/// `10 i + k - 1` (self-pairs use kind 1), the other blocks move up by 9 BOARD.
fn onehot(v: &[(u32, f32)], pieces: &[u32]) -> Vec<(u32, f32)> {
    let selfs: Vec<u32> = pieces.iter().map(|&p| pair(p, p)).collect();
    sorted(
        v.iter()
            .map(|&(i, x)| {
                if i >= BOARD {
                    (i + 9 * BOARD, x)
                } else if selfs.contains(&i) {
                    (10 * i, 1.0)
                } else {
                    (10 * i + x as u32 - 1, 1.0)
                }
            })
            .collect(),
    )
}

#[test]
fn rook_and_lance_on_one_file_black_to_move() {
    // Black: rook 5e (sq 40), lance 5g (42), king 5i (44), a pawn in hand.
    // White: pawn 5c (38), king 5a (36).
    let pos = position_from_sfen("4k4/9/4p4/9/4R4/9/4L4/9/4K4 b P 1").unwrap();
    let (rook, lance, king) = (code(40, 0, 6), code(42, 0, 2), code(44, 0, 8));
    let (pawn_w, king_w) = (code(38, 1, 1), code(36, 1, 8));
    let expected = with_pieces(
        vec![
            (pair(rook, pawn_w), 5.0),  // attack, capture may promote (5c in zone)
            (pair(rook, lance), 1.0),   // defend, the lance is not attacked
            (pair(rook, king_w), 10.0), // x-ray to the enemy king through the pawn
            (pair(rook, king), 7.0),    // x-ray to its own king through the lance
            (pair(lance, rook), 1.0),   // defend
            (pair(lance, pawn_w), 8.0), // x-ray through its own rook to the pawn
            // one pawn in Black's hand (owner 0, slot 0) with each king
            (BOARD + 44, 1.0),
            (BOARD + 81 + 36, 1.0),
        ],
        &[rook, lance, king, pawn_w, king_w],
    );
    assert_eq!(features(&pos, RelationEncoding::Value), expected);
}

#[test]
fn bishop_gold_silver_black_to_move() {
    // Black: bishop 8g (69), king 5i. White: gold 7f (59), silver 6e (49), king 5a.
    let pos = position_from_sfen("4k4/9/9/9/3s5/2g6/1B7/9/4K4 b - 1").unwrap();
    let (bishop, king) = (code(69, 0, 5), code(44, 0, 8));
    let (gold, silver, king_w) = (code(59, 1, 7), code(49, 1, 4), code(36, 1, 8));
    let expected = with_pieces(
        vec![
            (pair(bishop, gold), 3.0),   // attack, the gold is defended by the silver
            (pair(bishop, silver), 9.0), // x-ray through the enemy gold
            (pair(gold, bishop), 4.0),   // attack on an undefended piece
            (pair(silver, gold), 2.0),   // defends a piece under attack
        ],
        &[bishop, king, gold, silver, king_w],
    );
    assert_eq!(features(&pos, RelationEncoding::Value), expected);
}

#[test]
fn check_and_flip_white_to_move() {
    // White to move, so squares are turned round: s -> 80 - s, White owns 0.
    // White: king 5a (36 -> 44), lance 5b (37 -> 43).
    // Black: gold 4b (28 -> 52) giving check, pawn 5h (43 -> 37), king 5i (44 -> 36).
    let pos = position_from_sfen("4k4/4lG3/9/9/9/9/9/4P4/4K4 w - 1").unwrap();
    let (king_w, lance_w) = (code(44, 0, 8), code(43, 0, 2));
    let (gold_b, pawn_b, king_b) = (code(52, 1, 7), code(37, 1, 1), code(36, 1, 8));
    let pieces = [king_w, lance_w, gold_b, pawn_b, king_b];
    let expected = with_pieces(
        vec![
            (pair(gold_b, king_w), 6.0),   // check
            (pair(gold_b, lance_w), 3.0),  // attack on a defended lance
            (pair(king_w, gold_b), 4.0),   // the checking gold is undefended
            (pair(king_w, lance_w), 2.0),  // defends the attacked lance
            (pair(lance_w, pawn_b), 5.0),  // 5h is in White's zone: may promote
            (pair(lance_w, king_b), 10.0), // x-ray to the black king
            (pair(king_b, pawn_b), 2.0),   // defends the attacked pawn
        ],
        &pieces,
    );
    assert_eq!(features(&pos, RelationEncoding::Value), expected);

    // one-hot: the same pairs, 10 indices each, value 1
    assert_eq!(
        features(&pos, RelationEncoding::OneHot),
        onehot(&expected, &pieces)
    );
}

#[test]
fn hand_pieces_count_slots_for_both_owners() {
    // Black has 2 pawns and a bishop in hand, White a rook; Black to move.
    let pos = position_from_sfen("4k4/9/9/9/9/9/9/9/4K4 b 2PBr 1").unwrap();
    let slot = |owner: u32, base: u32, nth: u32| 38 * owner + base + nth;
    let pieces = [code(44, 0, 8), code(36, 1, 8)];
    let mut expected = Vec::new();
    for s in [slot(0, 0, 0), slot(0, 0, 1), slot(0, 30, 0), slot(1, 32, 0)] {
        expected.push((BOARD + 162 * s + 44, 1.0)); // own king 5i
        expected.push((BOARD + 162 * s + 81 + 36, 1.0)); // enemy king 5a
    }
    let expected = with_pieces(expected, &pieces);
    assert_eq!(features(&pos, RelationEncoding::Value), expected);
    // one-hot moves the hand block after the 10x pair block
    assert_eq!(
        features(&pos, RelationEncoding::OneHot),
        onehot(&expected, &pieces)
    );
}

/// Every position of the bundled sample and all its siblings.
fn sample_positions() -> Vec<rsshogi::board::Position> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/selfplay/0001.csa");
    let games = read_games(dir.as_ref()).unwrap().games;
    let mut out = Vec::new();
    for g in games {
        let mut pos = g.start_position();
        for mv in g.moves32() {
            let mut list = Move32List::new();
            generate_legal_all_move32(&pos, &mut list);
            for &m in list.iter() {
                pos.apply_move32(m);
                out.push(pos.clone());
                pos.undo_move32(m).unwrap();
            }
            pos.apply_move32(mv);
        }
    }
    out
}

/// The feature sets: each relation encoding, with and without the
/// king-piece block, and the king-piece block without the attack blocks.
fn feature_sets() -> Vec<FeatureSet> {
    let mut sets = Vec::new();
    for encoding in [RelationEncoding::Value, RelationEncoding::OneHot] {
        for (attacks, king_piece) in [(true, false), (true, true), (false, true)] {
            sets.push(FeatureSet {
                encoding,
                attacks,
                king_piece,
            });
        }
    }
    sets
}

/// King-piece index: king owner (0 = side to move), its square, the other
/// piece's code and square, all seen from the side to move.
fn king_piece(king_owner: u32, king_sq: u32, owner: u32, piece_type: u32, sq: u32) -> u32 {
    NUM_FEATURES as u32 + ((81 * king_owner + king_sq) * 28 + 14 * owner + piece_type - 1) * 81 + sq
}

#[test]
fn king_piece_block_pairs_each_king_with_every_other_piece() {
    let kp = FeatureSet {
        encoding: RelationEncoding::Value,
        attacks: true,
        king_piece: true,
    };
    // Black: king 5i (44), gold 5h (43), pawn 1g (6). White: king 5a (36),
    // in hand a silver. Black to move: squares as they are.
    let pos = position_from_sfen("4k4/9/9/9/9/9/8P/4G4/4K4 b s 1").unwrap();
    let plain = features(&pos, RelationEncoding::Value);
    let with = features(&pos, kp);
    assert_eq!(
        &with[..plain.len()],
        &plain[..],
        "the other blocks unchanged"
    );
    let mut expected: Vec<u32> = vec![
        king_piece(0, 44, 0, 7, 43), // own king: own gold
        king_piece(0, 44, 0, 1, 6),  // own king: own pawn
        king_piece(0, 44, 1, 8, 36), // own king: enemy king
        king_piece(1, 36, 0, 7, 43), // enemy king: own gold
        king_piece(1, 36, 0, 1, 6),
        king_piece(1, 36, 0, 8, 44), // enemy king: own king
    ];
    expected.sort_unstable();
    let got: Vec<(u32, f32)> = with[plain.len()..].to_vec();
    assert_eq!(got, expected.iter().map(|&i| (i, 1.0)).collect::<Vec<_>>());
    assert!(got.iter().all(|&(i, _)| (i as usize) < kp.num_features()));
    assert_eq!(kp.num_features(), NUM_FEATURES + 2 * 81 * 28 * 81);
    // Without the attack blocks: the hand features (a silver in White's
    // hand, slot 38 + 26, near each king) and the same king-piece block.
    let alone = FeatureSet {
        attacks: false,
        ..kp
    };
    let hand = |king_owner: u32, king_sq: u32| BOARD + 162 * (38 + 26) + 81 * king_owner + king_sq;
    let mut want = vec![(hand(0, 44), 1.0), (hand(1, 36), 1.0)];
    want.extend(got.iter().copied());
    assert_eq!(features(&pos, alone), want);
    assert_eq!(alone.num_features(), kp.num_features());

    // White to move: the board turns round (s -> 80 - s) and White owns.
    let pos = position_from_sfen("4k4/9/9/9/9/9/8P/4G4/4K4 w s 1").unwrap();
    let plain = features(&pos, RelationEncoding::Value);
    let with = features(&pos, kp);
    let mut expected: Vec<u32> = vec![
        king_piece(0, 80 - 36, 1, 7, 80 - 43), // own (White) king: enemy gold
        king_piece(0, 80 - 36, 1, 1, 80 - 6),
        king_piece(0, 80 - 36, 1, 8, 80 - 44),
        king_piece(1, 80 - 44, 1, 7, 80 - 43), // enemy (Black) king
        king_piece(1, 80 - 44, 1, 1, 80 - 6),
        king_piece(1, 80 - 44, 0, 8, 80 - 36),
    ];
    expected.sort_unstable();
    assert_eq!(
        with[plain.len()..].to_vec(),
        expected.iter().map(|&i| (i, 1.0)).collect::<Vec<_>>()
    );
}

#[test]
fn colour_flipped_twin_has_identical_features() {
    let positions = sample_positions();
    assert!(positions.len() > 1000);
    for pos in &positions {
        let twin = position_from_sfen(&pos.to_sfen_flipped(None)).unwrap();
        assert_ne!(pos.turn(), twin.turn());
        for enc in feature_sets() {
            assert_eq!(
                features(pos, enc),
                features(&twin, enc),
                "{}",
                pos.to_sfen(None)
            );
        }
    }
}

/// Rows are written in the order the features come, and libsvm wants
/// ascending indices: no index may repeat or come after a larger one.
#[test]
fn indices_ascend_and_are_in_range() {
    for pos in sample_positions() {
        for enc in feature_sets() {
            let mut seen = HashSet::new();
            let mut last = None;
            for_each_feature(&pos, enc, |i, v| {
                assert!((i as usize) < enc.num_features());
                assert!(seen.insert(i), "index {i} twice in {}", pos.to_sfen(None));
                assert!(
                    last < Some(i),
                    "index {i} after {last:?} in {}",
                    pos.to_sfen(None)
                );
                last = Some(i);
                let kinds = enc.encoding.num_features();
                let kind_block = (kinds - 28 * 28 * 11..kinds).contains(&(i as usize));
                match enc.encoding {
                    _ if (i as usize) >= kinds => assert_eq!(v, 1), // king-piece
                    _ if kind_block => assert!(v >= 1),
                    RelationEncoding::Value => assert!((1..=10).contains(&v)),
                    RelationEncoding::OneHot => assert_eq!(v, 1),
                }
            });
        }
    }
    assert_eq!(NUM_FEATURES, RelationEncoding::Value.num_features());
    assert_eq!(NUM_FEATURES, 5_143_824 + 12_312 + 28 * 28 * 11);
}

#[test]
fn terms_add_up_to_the_features() {
    for pos in sample_positions() {
        for enc in feature_sets() {
            let mut summed = std::collections::BTreeMap::new();
            for_each_term(&pos, enc, |i, v| *summed.entry(i).or_insert(0.0) += v);
            let summed: Vec<(u32, f32)> = summed.into_iter().collect();
            assert_eq!(summed, features(&pos, enc), "{}", pos.to_sfen(None));
        }
    }
}
