//! Static evaluation: a score in centipawns from the side to move's view.
//!
//! Every evaluation sits behind [`Evaluator`], so search, extraction and
//! matches are written once and the evaluation is chosen at run time (the
//! USI option `Eval`). A pawn is worth 100.
//!
//! ```
//! use niwatori::eval::{Evaluator, Material};
//! let pos = rsshogi::board::hirate_position();
//! assert_eq!(Material::default().evaluate(&pos), 0);
//! ```

pub mod inaniwa;
mod learned;
mod material;
mod noise;

pub use inaniwa::AntiInaniwa;
pub use learned::{Accumulator, KingSums, Learned, LearnedError, RESIDUAL_LIMIT};
pub use material::{Material, MaterialHand, piece_value};
pub use noise::Noisy;

use rsshogi::board::Position;
use rsshogi::types::{Move32, PieceType};

impl<E: Evaluator + ?Sized> Evaluator for std::sync::Arc<E> {
    fn evaluate(&self, pos: &Position) -> i32 {
        (**self).evaluate(pos)
    }
    fn name(&self) -> &str {
        (**self).name()
    }
    fn quiet_gain_bound(&self) -> Option<i32> {
        (**self).quiet_gain_bound()
    }
    fn move_delta(&self, pos: &Position, mv: Move32) -> Option<i32> {
        (**self).move_delta(pos, mv)
    }
    fn promotion_gain(&self, pt: PieceType) -> Option<i32> {
        (**self).promotion_gain(pt)
    }
    fn null_move_negates(&self) -> bool {
        (**self).null_move_negates()
    }
    fn identity(&self) -> String {
        (**self).identity()
    }
    fn learned(&self) -> Option<&Learned> {
        (**self).learned()
    }
    fn material_spread(&self) -> Option<i32> {
        (**self).material_spread()
    }
}

/// A static evaluation of a position.
pub trait Evaluator: Send + Sync {
    /// Score in centipawns from the point of view of the side to move.
    fn evaluate(&self, pos: &Position) -> i32;

    /// The name used by the USI option `Eval` and in reports.
    fn name(&self) -> &str;

    /// An upper bound on how much a move that neither captures nor promotes
    /// can raise the mover's evaluation, if one is known exactly. Search
    /// uses it to skip such moves at the frontier without changing the
    /// result (for material, a quiet move changes nothing: `Some(0)`).
    fn quiet_gain_bound(&self) -> Option<i32> {
        None
    }

    /// How much the legal move `mv` (not yet played in `pos`) raises the
    /// mover's evaluation, when that is known without a full evaluation:
    /// `evaluate(after) == -(evaluate(pos) + delta)` exactly. Search carries
    /// the score down the tree with it; [`Evaluator::evaluate`] stays the
    /// reference (debug builds check every incremental score against it).
    /// `None` (the default): not incremental.
    fn move_delta(&self, _pos: &Position, _mv: Move32) -> Option<i32> {
        None
    }

    /// What promoting a piece of type `pt` (lance, knight, silver, bishop
    /// or rook) without capturing raises the mover's evaluation by, when
    /// that is a fixed amount: [`Evaluator::move_delta`] of every such
    /// promotion. For material, the difference of the two values. With the
    /// quiet gain bound it lets the depth-1 sibling search tell, before
    /// generating the quiet moves, that none of them can matter. An
    /// evaluator that gives it must give [`Evaluator::move_delta`] too.
    fn promotion_gain(&self, _pt: PieceType) -> Option<i32> {
        None
    }

    /// Whether passing the turn exactly negates the evaluation (material
    /// ignores whose move it is; a learned model does not), so that the null
    /// move may reuse the parent's score.
    fn null_move_negates(&self) -> bool {
        false
    }

    /// What scores depend on, for metadata that must change when they may:
    /// the name, plus for a learned model a fingerprint of its weights (so
    /// `extract --resume` never mixes rows labelled by different models).
    fn identity(&self) -> String {
        self.name().to_string()
    }

    /// How far this evaluation may stray from material, if that is bounded:
    /// with `Some(r)`, `|evaluate(pos) − Material.evaluate(pos)| ≤ r` for
    /// every position. Quiescence then stands pat on material alone when
    /// material is more than `r` outside the window, without the full
    /// evaluation. `None` (the default): unbounded, or not worth it (a
    /// wrapper that changes the scores must not pass it on).
    fn material_spread(&self) -> Option<i32> {
        None
    }

    /// This evaluation as a learned model, whose sums the search carries
    /// per ply when it can ([`Learned::accumulate_before_move`]); `None`
    /// for any other (a wrapper that changes the scores must not pass it on).
    fn learned(&self) -> Option<&Learned> {
        None
    }
}

/// The name of an evaluation, parsed once for the command line, the USI
/// options and match specs: `material`, `material-hand` or
/// `learned:MODEL`.
///
/// ```
/// use niwatori::eval::EvalSpec;
/// let spec: EvalSpec = "learned:models/best.model".parse().unwrap();
/// assert_eq!(spec, EvalSpec::Learned("models/best.model".into()));
/// assert_eq!(spec.usi_options(), [("Eval", "learned".to_string()), ("EvalFile", "models/best.model".to_string())]);
/// assert_eq!(EvalSpec::from_usi("learned", "m.model"), Ok(EvalSpec::Learned("m.model".into())));
/// assert!("learned:".parse::<EvalSpec>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalSpec {
    Material,
    MaterialHand,
    /// A model file (`learned:MODEL`).
    Learned(std::path::PathBuf),
}

/// The values of the USI option `Eval`.
pub const EVAL_NAMES: &[&str] = &["material", "material-hand", "learned"];

impl std::str::FromStr for EvalSpec {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, String> {
        match spec {
            "material" => Ok(Self::Material),
            "material-hand" => Ok(Self::MaterialHand),
            _ => match spec.strip_prefix("learned:") {
                Some("") => Err("learned: needs a model path".into()),
                Some(path) => Ok(Self::Learned(path.into())),
                None => Err(format!(
                    "unknown evaluation {spec:?} (material, material-hand, learned:MODEL)"
                )),
            },
        }
    }
}

impl EvalSpec {
    /// The evaluation the USI options `Eval` and `EvalFile` name.
    pub fn from_usi(eval: &str, eval_file: &str) -> Result<Self, String> {
        match eval {
            "learned" if eval_file.is_empty() => {
                Err("Eval learned needs EvalFile (a model file)".into())
            }
            "learned" => Ok(Self::Learned(eval_file.into())),
            "material" | "material-hand" => eval.parse(),
            other => Err(format!("unknown evaluation {other:?}")),
        }
    }

    /// The USI options that select this evaluation in `niwatori usi`.
    pub fn usi_options(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::Material => vec![("Eval", "material".into())],
            Self::MaterialHand => vec![("Eval", "material-hand".into())],
            Self::Learned(path) => vec![
                ("Eval", "learned".into()),
                ("EvalFile", path.display().to_string()),
            ],
        }
    }

    /// The evaluation itself (a learned one is loaded from its file).
    pub fn load(&self) -> Result<std::sync::Arc<dyn Evaluator>, LearnedError> {
        use std::sync::Arc;
        Ok(match self {
            Self::Material => Arc::new(Material),
            Self::MaterialHand => Arc::new(MaterialHand),
            Self::Learned(path) => Arc::new(Learned::load(path)?),
        })
    }
}

/// The evaluation a command-line spec names (see [`EvalSpec`]).
pub fn from_spec(spec: &str) -> Result<std::sync::Arc<dyn Evaluator>, LearnedError> {
    spec.parse::<EvalSpec>().map_err(LearnedError::Spec)?.load()
}
