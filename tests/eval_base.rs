//! A learned evaluation over a material base (`--base material`): material
//! plus the model's clamped part, never further from material than its
//! spread, and quiescence's stand pat on material alone (outside the window
//! by more than the spread) changes no depth-1 score.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use niwatori::eval::{Evaluator, Learned, Material, RESIDUAL_LIMIT};
use niwatori::rows::Base;
use niwatori::search::SiblingScorer;
use rsshogi::board::{Move32List, generate_legal_all_move32};

/// A model with a distinct pseudo-random weight per feature, large enough
/// that some positions reach the residual's clamp.
fn random_model(base: Base) -> Learned {
    let leaf = niwatori::rows::FeaturesAt::Leaf;
    common::random_model(
        0x2545_f491_4f6c_dd1d,
        0.02,
        10_000.0,
        leaf,
        base,
        Default::default(),
    )
}

/// The same evaluation, its calls counted, with its spread (quiescence may
/// stand pat on material) or without (it evaluates in full).
struct Counted {
    model: Arc<Learned>,
    spread: bool,
    calls: AtomicUsize,
}

impl Evaluator for Counted {
    fn evaluate(&self, pos: &rsshogi::board::Position) -> i32 {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.model.evaluate(pos)
    }
    fn name(&self) -> &str {
        "counted"
    }
    fn material_spread(&self) -> Option<i32> {
        self.model.material_spread().filter(|_| self.spread)
    }
}

fn games() -> Vec<niwatori::records::Game> {
    let dir = common::shared("kifu/wcsc28");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (see ../shared/README.md)", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.truncate(16);
    niwatori::corpus::read_all_games(&files)
}

#[test]
fn a_material_base_adds_the_clamped_model_to_material() {
    let (plain, based) = (random_model(Base::None), random_model(Base::Material));
    assert_eq!(based.material_spread(), Some(RESIDUAL_LIMIT));
    assert_eq!(plain.material_spread(), None);
    assert_ne!(plain.fingerprint(), based.fingerprint());
    let (mut positions, mut clamped) = (0, 0);
    for game in games() {
        let mut pos = game.start_position();
        for &mv in &game.moves {
            let model = plain.evaluate(&pos);
            let want = Material.evaluate(&pos) + model.clamp(-RESIDUAL_LIMIT, RESIDUAL_LIMIT);
            assert_eq!(based.evaluate(&pos), want, "{}", pos.to_sfen(None));
            clamped += usize::from(model.abs() > RESIDUAL_LIMIT);
            positions += 1;
            pos.apply_move32(pos.move32_from_move(mv));
        }
    }
    assert!(positions > 500, "{positions} positions");
    assert!(
        clamped > 0 && clamped < positions,
        "{clamped} of {positions} clamped"
    );
}

#[test]
fn standing_pat_on_material_changes_no_depth_one_score() {
    let model = Arc::new(random_model(Base::Material));
    let counted = |spread| {
        Arc::new(Counted {
            model: model.clone(),
            spread,
            calls: AtomicUsize::new(0),
        })
    };
    let (lazy_eval, full_eval) = (counted(true), counted(false));
    let mut lazy = SiblingScorer::new(lazy_eval.clone());
    let mut full = SiblingScorer::new(full_eval.clone());
    let mut siblings = 0;
    for game in games() {
        let mut pos = game.start_position();
        for (i, &mv) in game.moves.iter().enumerate() {
            if i % 3 == 0 {
                let mut legal = Move32List::new();
                generate_legal_all_move32(&pos, &mut legal);
                lazy.start_position();
                full.start_position();
                for &m in legal.iter() {
                    pos.apply_move32(m);
                    let (a, b) = (lazy.score(&mut pos), full.score(&mut pos));
                    assert_eq!(a, b, "{} after {}", pos.to_sfen(None), m.to_usi());
                    pos.undo_move32(m).unwrap();
                    siblings += 1;
                }
            }
            pos.apply_move32(pos.move32_from_move(mv));
        }
    }
    assert!(siblings > 20_000, "{siblings} siblings");
    let calls = |e: &Counted| e.calls.load(Ordering::Relaxed);
    let (a, b) = (calls(&lazy_eval), calls(&full_eval));
    assert!(a < b * 9 / 10, "{a} evaluations against {b} in full");
    eprintln!("{siblings} siblings: {a} evaluations against {b} in full");
}
