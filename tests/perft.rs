//! Exact perft counts from `../shared/positions/perft.tsv` (published figures).

use niwatori::perft::perft;
use rsshogi::board::position_from_sfen;

fn check(sfen: &str, expected: &[u64]) {
    for (i, &nodes) in expected.iter().enumerate() {
        let mut pos = position_from_sfen(sfen).unwrap();
        let depth = i as u32 + 1;
        assert_eq!(perft(&mut pos, depth), nodes, "perft {depth} of {sfen}");
    }
}

#[test]
fn startpos_perft_1_to_5() {
    check(
        rsshogi::board::STARTPOS_SFEN,
        &[30, 900, 25_470, 719_731, 19_861_490],
    );
}

#[test]
fn matsuri_perft_1_to_3() {
    check(
        "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w GR5pnsg 1",
        &[207, 28_684, 4_809_015],
    );
}

#[test]
fn pawn_drop_mate_edge_cases() {
    // Dropping the pawn would mate: it must not be generated.
    check("8k/9/6NG1/9/9/9/9/9/K8 b P 1", &[78, 7, 543, 17_457]);
    check("5+N1k1/9/7G1/9/9/9/9/9/K8 b P 3", &[82, 91, 2_680, 27_539]);
}

#[test]
fn drop_heavy_position() {
    check(
        "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1",
        &[593, 105_677],
    );
}
