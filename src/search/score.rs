//! Score constants and mate-distance arithmetic.

/// Plies the search can go from the root (main search plus quiescence).
pub const MAX_PLY: usize = 128;
/// The score of delivering mate now.
pub const MATE: i32 = 32000;
/// Larger than any score.
pub const INFINITE: i32 = 32001;
/// Scores beyond this are mates found within the search.
pub const MATE_IN_MAX_PLY: i32 = MATE - MAX_PLY as i32;
/// Static evaluations are clamped inside this, away from mate scores.
pub const EVAL_LIMIT: i32 = MATE_IN_MAX_PLY - 1;

/// The score of mating at `ply` plies from the root.
pub const fn mate_in(ply: usize) -> i32 {
    MATE - ply as i32
}

/// The score of being mated at `ply` plies from the root.
pub const fn mated_in(ply: usize) -> i32 {
    -MATE + ply as i32
}

pub const fn is_mate_score(score: i32) -> bool {
    score.abs() >= MATE_IN_MAX_PLY
}

/// Mate scores are stored relative to the node, not the root.
pub const fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_IN_MAX_PLY {
        score + ply as i32
    } else if score <= -MATE_IN_MAX_PLY {
        score - ply as i32
    } else {
        score
    }
}

pub const fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_IN_MAX_PLY {
        score - ply as i32
    } else if score <= -MATE_IN_MAX_PLY {
        score + ply as i32
    } else {
        score
    }
}

/// USI `score` field: `cp N` or `mate N` (N in plies, negative when mated).
pub fn to_usi(score: i32) -> String {
    if score >= MATE_IN_MAX_PLY {
        format!("mate {}", MATE - score)
    } else if score <= -MATE_IN_MAX_PLY {
        format!("mate -{}", MATE + score)
    } else {
        format!("cp {score}")
    }
}
