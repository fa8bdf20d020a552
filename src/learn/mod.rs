//! `niwatori learn`: extract → train → report, iterated.
//!
//! Iteration k labels the siblings with model k−1 (material for k = 1),
//! trains model k on the training games' rows and reports its agreement on
//! the held-out games. Each iteration writes `iter-K.model`, the history
//! (`history.json`) and, with the best held-out agreement so far,
//! `best.model`; an interrupted run resumes at the first iteration whose
//! model is missing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};

use crate::corpus::{rated_at_least, read_all_games};
use crate::eval::{Evaluator, Learned, Material};
use crate::extract::{ExtractOptions, extract};
use crate::features::Blocks;
use crate::report::{Report, SiblingValue};
use crate::rows::model::LinearModel;
use crate::rows::{Base, FeaturesAt, Labels, RowFormat};
use crate::train::params::{SolverArgs, SolverDefaults};
use crate::train::{LossKind, TrainOptions, train_files_with};

/// Arguments of `niwatori learn`.
#[derive(Args, Debug, Clone)]
pub struct LearnArgs {
    /// Folder of game records (CSA, KIF).
    #[arg(long, default_value = "kifu")]
    pub kifu: PathBuf,
    /// Number of iterations.
    #[arg(long, default_value_t = 2)]
    pub iterations: u32,
    /// Where models, the history and the learning curve go.
    #[arg(long, default_value = "models")]
    pub out: PathBuf,
    /// Where extracted features go (one folder per iteration).
    #[arg(long, default_value = "features")]
    pub features: PathBuf,
    #[command(flatten)]
    pub solver: SolverArgs<LearnDefaults>,
    #[command(flatten)]
    pub split: crate::corpus::SplitArgs,
    /// Stop after this many iterations without a better held-out top-1.
    #[arg(long, default_value_t = 1)]
    pub patience: u32,
    /// Train on rows whose label is at the clamp (mates) too; by default
    /// they are left out (`train --drop-clamped`).
    #[arg(long)]
    pub keep_clamped: bool,
    /// Which position a row describes (see `extract --features-at`). Leaf
    /// rows make an evaluation for search: measured far stronger in play.
    #[arg(long, value_enum, default_value_t = FeaturesAt::Leaf)]
    pub features_at: FeaturesAt,
    /// Expand only this fraction of each game's positions (see `extract
    /// --sample`), in training and held-out rows alike; held-out agreement
    /// still covers every held-out position. Labelling with a learned model
    /// costs about 20 times material's, so large sets need this.
    #[arg(long, default_value_t = 1.0)]
    pub sample: f64,
    /// Margin in centipawns of the game move over better-scored siblings
    /// (see `extract --margin`). Two pawns ranked held-out game moves
    /// better than one or three in a measured sweep.
    #[arg(long, default_value_t = 200)]
    pub margin: i32,
    /// Which rows a position gives (see `extract --labels`): every sibling
    /// labelled by the depth-1 search, or with the record's own score for
    /// the game move (games played by a stronger engine, its `'**` scores).
    #[arg(long, value_enum, default_value_t = Labels::Siblings)]
    pub labels: Labels,
    /// What targets are measured from (see `extract --base`): the
    /// score itself, or the score less material (the model learns what
    /// material misses and evaluates as material plus the model). Material
    /// ranked held-out game moves better, on the bundled games and on the
    /// shared ones, and costs less in the search.
    #[arg(long, value_enum, default_value_t = Base::Material)]
    pub base: Base,
    /// The rows' blocks beside the hand block (see `extract --blocks`).
    /// The king-piece block alone ranked held-out moves as well as with
    /// the attack relations and played 67 Elo stronger at equal time.
    #[arg(long, value_enum, default_value_t = Blocks::KingPiece)]
    pub blocks: Blocks,
    /// Run the extract and train stages under this launcher, e.g.
    /// "mpirun -np 16 --hostfile hosts": extraction in shards, one a rank,
    /// and training on every rank (a niwatori built with `--features mpi`).
    /// The rows and models are those of a run on one machine, byte for
    /// byte.
    #[arg(long, value_name = "COMMAND")]
    pub mpirun: Option<String>,
    /// How rows are stored (see `extract --format`): compact binary by
    /// default, about a tenth of text's bytes, read as fast.
    #[arg(long, value_enum, default_value_t = RowFormat::Bin)]
    pub format: RowFormat,
    /// Only games whose players are both rated at least R (see `extract
    /// --min-rating`), in training and held-out games alike.
    #[arg(long, value_name = "R")]
    pub min_rating: Option<f64>,
    /// `rank`: each position's game move at least the margin above each
    /// sibling (see `train --loss`); `svr`: fit every sibling's target.
    /// On the same rows' positions ranking agreed with more held-out game
    /// moves (33.4 % against 29.5 %) and played 177 Elo stronger at equal
    /// time.
    #[arg(long, value_enum, default_value_t = LossKind::Rank)]
    pub loss: LossKind,
}

/// `learn`'s solver defaults, chosen on held-out games: p is in scaled
/// label units (0.002 = 20 centipawns; of 0.002, 0.005 and 0.02 the
/// smallest ranked held-out moves best).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct LearnDefaults;

impl SolverDefaults for LearnDefaults {
    const C: &'static str = "0.1";
    const P: &'static str = "0.002";
    const E: &'static str = "0.001";
}

/// One line of the learning history.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IterationRecord {
    pub iteration: u32,
    pub model: PathBuf,
    pub labelled_by: String,
    pub train_rows: usize,
    pub heldout_top1: f64,
    pub heldout_top3: Option<f64>,
    pub train_top1: f64,
    pub material_top1: f64,
    pub rmse_cp: Option<f64>,
    pub r2: Option<f64>,
    pub objective: f64,
    pub seconds: f64,
    pub report: Report,
}

/// What makes a run's models and rows what they are: a resumed run must
/// ask for the same, or it would mix another run's iterations (or, with
/// another split, another split's rows) into its own. Written as
/// `learn.json` in `--out` and `--features`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LearnSettings {
    pub kifu: PathBuf,
    pub c: f64,
    pub p: f64,
    pub e: f64,
    pub holdout: f64,
    pub seed: u64,
    pub keep_clamped: bool,
    pub features_at: FeaturesAt,
    pub sample: f64,
    pub margin: i32,
    /// Runs recorded before `--format` existed wrote text.
    #[serde(default)]
    pub format: RowFormat,
    #[serde(default)]
    pub min_rating: Option<f64>,
    #[serde(default)]
    pub split_opening: Option<u32>,
    /// Runs recorded before `--labels` existed labelled every sibling.
    #[serde(default)]
    pub labels: Labels,
    /// Runs recorded before `--base` existed had none.
    #[serde(default, skip_serializing_if = "Base::is_none")]
    pub base: Base,
    /// Runs recorded before `--blocks` existed had no king-piece block.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub king_piece: bool,
    /// Runs recorded before `--blocks` existed had the attack blocks.
    #[serde(
        default = "crate::rows::yes",
        skip_serializing_if = "crate::rows::is_true"
    )]
    pub attacks: bool,
    /// Runs recorded before `--loss` existed fitted by SVR.
    #[serde(default, skip_serializing_if = "LossKind::is_svr")]
    pub loss: LossKind,
}

impl LearnSettings {
    pub fn of(args: &LearnArgs) -> Self {
        Self {
            kifu: args.kifu.clone(),
            c: args.solver.c,
            p: args.solver.p,
            e: args.solver.e,
            holdout: args.split.holdout,
            seed: args.split.seed,
            keep_clamped: args.keep_clamped,
            features_at: args.features_at,
            sample: args.sample,
            margin: args.margin,
            format: args.format,
            min_rating: args.min_rating,
            split_opening: args.split.split_opening,
            labels: args.labels,
            base: args.base,
            king_piece: args.blocks != Blocks::Attacks,
            attacks: args.blocks != Blocks::KingPiece,
            loss: args.loss,
        }
    }

    /// The settings that differ, as `name: recorded → asked`.
    pub fn differences(&self, asked: &Self) -> Vec<String> {
        let (a, b) = (
            serde_json::to_value(self).unwrap_or_default(),
            serde_json::to_value(asked).unwrap_or_default(),
        );
        let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
            return vec!["unreadable settings".into()];
        };
        // both sides' keys: a setting left out at its default on one side
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let null = serde_json::Value::Null;
        keys.into_iter()
            .filter(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                format!(
                    "{k}: {} → {}",
                    a.get(k).unwrap_or(&null),
                    b.get(k).unwrap_or(&null)
                )
            })
            .collect()
    }
}

/// Refuses to resume into `dir` when it holds a run of other settings (or
/// earlier iterations whose settings were not recorded); records the
/// settings in a fresh folder.
pub fn check_settings(dir: &Path, asked: &LearnSettings) -> Result<()> {
    let path = dir.join("learn.json");
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let recorded: LearnSettings = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a learn settings file", path.display()))?;
            let diff = recorded.differences(asked);
            anyhow::ensure!(
                diff.is_empty(),
                "{}: this folder holds a run with other settings ({}); use another --out and --features, or delete them",
                path.display(),
                diff.join(", ")
            );
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let earlier = ["history.json", "iter-1.model", "iter-1"]
                .iter()
                .map(|f| dir.join(f))
                .find(|p| p.exists());
            if let Some(p) = earlier {
                anyhow::bail!(
                    "{}: from a learn run whose settings were not recorded; use another --out and --features, or delete it",
                    p.display()
                );
            }
            crate::atomic::write_atomic(&path, serde_json::to_string_pretty(asked)?.as_bytes())
                .with_context(|| format!("writing {}", path.display()))
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn read_history(path: &Path) -> Vec<IterationRecord> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

fn copy_model(from: &Path, to: &Path) -> Result<()> {
    for (a, b) in [
        (from.to_path_buf(), to.to_path_buf()),
        (
            crate::rows::model::sidecar_path(from),
            crate::rows::model::sidecar_path(to),
        ),
    ] {
        let bytes = std::fs::read(&a).with_context(|| format!("reading {}", a.display()))?;
        crate::atomic::write_atomic(&b, &bytes)
            .with_context(|| format!("writing {}", b.display()))?;
    }
    Ok(())
}

/// Runs `niwatori learn`.
pub fn run(args: LearnArgs) -> Result<()> {
    anyhow::ensure!(args.iterations >= 1, "--iterations must be at least 1");
    crate::extract::check_sample(args.sample)?;
    anyhow::ensure!(
        args.margin >= 0,
        "--margin must be >= 0, got {}",
        args.margin
    );
    let params =
        linfa::ParamGuard::check(args.solver.params()).map_err(|e| anyhow::anyhow!("{e}"))?;
    let settings = LearnSettings::of(&args);
    for dir in [&args.out, &args.features] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        check_settings(dir, &settings)?;
    }
    let (train_files_list, held_files) = args.split.files(&args.kifu)?;
    let train_games = rated_at_least(read_all_games(&train_files_list), args.min_rating);
    // A held-out game that replays a training game would be judged on
    // what was learnt from it.
    let mut seen = crate::records::Duplicates::default();
    for g in &train_games {
        seen.first_seen(g);
    }
    let held_games: Vec<_> = rated_at_least(read_all_games(&held_files), args.min_rating)
        .into_iter()
        .filter(|g| match seen.first_seen(g) {
            Some(first) => {
                eprintln!(
                    "{} game {}: held out but repeats training game {first}; left out of the held-out games",
                    g.source.display(),
                    g.index + 1
                );
                false
            }
            None => true,
        })
        .collect();
    println!(
        "learn: {} training games ({} files), {} held-out games ({} files); C {} p {} e {}, margin {}",
        train_games.len(),
        train_files_list.len(),
        held_games.len(),
        held_files.len(),
        args.solver.c,
        args.solver.p,
        args.solver.e,
        args.margin
    );
    let history_path = args.out.join("history.json");
    let mut history = read_history(&history_path);
    history.retain(|r| r.iteration <= args.iterations && r.model.exists());
    let mut since_best = 0;
    for k in 1..=args.iterations {
        if let Some(done) = history.iter().find(|r| r.iteration == k) {
            println!(
                "iteration {k}: done before (held-out top-1 {:.1}%), skipped",
                100.0 * done.heldout_top1
            );
            continue;
        }
        let start = Instant::now();
        let labeller: Arc<dyn Evaluator> = match history.iter().rfind(|r| r.iteration == k - 1) {
            Some(prev) => Arc::new(Learned::load(&prev.model)?),
            None => Arc::new(Material),
        };
        let labelled_by = if k == 1 {
            "material".to_string()
        } else {
            format!("iter-{}", k - 1)
        };
        let dir = args.features.join(format!("iter-{k}"));
        let options = ExtractOptions {
            resume: true,
            // a bar on a terminal, plain periodic lines otherwise
            progress: true,
            root: Some(args.kifu.clone()),
            features_at: args.features_at,
            sample: args.sample,
            margin: args.margin,
            labels: args.labels,
            base: args.base,
            features: args.blocks.with(Default::default()),
            format: args.format,
            min_rating: args.min_rating,
            ..ExtractOptions::default()
        };
        let train_dir = dir.join("train");
        let held_dir = dir.join("heldout");
        let model_path = args.out.join(format!("iter-{k}.model"));
        let previous = history
            .iter()
            .rfind(|r| r.iteration == k - 1)
            .map(|r| r.model.clone());
        let trained = match &args.mpirun {
            None => {
                extract(&train_files_list, &train_dir, &options, labeller.clone())?;
                if !held_files.is_empty() {
                    extract(&held_files, &held_dir, &options, labeller.clone())?;
                }
                let trained = train_files_with(
                    std::slice::from_ref(&train_dir),
                    &params,
                    &model_path,
                    &TrainOptions {
                        // the loaded rows, then a line per Newton iteration
                        progress: true,
                        checkpoint: false,
                        drop_clamped: !args.keep_clamped,
                        loss: args.loss,
                    },
                )?;
                (trained.rows, trained.objective)
            }
            Some(launcher) => {
                let stage = Launched {
                    launcher,
                    args: &args,
                };
                stage.extract(&train_files_list, &train_dir, previous.as_deref())?;
                if !held_files.is_empty() {
                    stage.extract(&held_files, &held_dir, previous.as_deref())?;
                }
                stage.train(&train_dir, &model_path)?
            }
        };
        let (train_rows, objective) = trained;
        let model = Arc::new(Learned::load(&model_path)?);
        let rows = (!held_files.is_empty()).then_some(held_dir.as_path());
        let siblings = SiblingValue::for_model(&model);
        let report = Report::build(&train_games, &held_games, &model, 1, siblings, 1.0, rows)?;
        let record = IterationRecord {
            iteration: k,
            model: model_path.clone(),
            labelled_by,
            train_rows,
            heldout_top1: report.learned.top1,
            heldout_top3: report.learned.top3,
            train_top1: report.learned_on_training_games.top1,
            material_top1: report.material.top1,
            rmse_cp: report.regression.as_ref().map(|r| r.rmse_cp),
            r2: report.regression.as_ref().map(|r| r.r2),
            objective,
            seconds: start.elapsed().as_secs_f64(),
            report,
        };
        println!(
            "iteration {k}: held-out top-1 {:.1}% (material {:.1}%), training games {:.1}%, RMSE {} cp, {:.0} s",
            100.0 * record.heldout_top1,
            100.0 * record.material_top1,
            100.0 * record.train_top1,
            record.rmse_cp.map_or("-".into(), |r| format!("{r:.0}")),
            record.seconds
        );
        let best_before = history
            .iter()
            .map(|r| r.heldout_top1)
            .fold(f64::MIN, f64::max);
        let improved = record.heldout_top1 > best_before;
        // best.model before the history: an iteration recorded as done
        // (and skipped when the run is started again) has its copy made
        if improved {
            copy_model(&model_path, &args.out.join("best.model"))?;
        }
        history.push(record);
        crate::atomic::write_atomic(
            &history_path,
            serde_json::to_string_pretty(&history)?.as_bytes(),
        )?;
        draw_curve(&args.out, &history)?;
        if improved {
            since_best = 0;
        } else {
            since_best += 1;
            if since_best >= args.patience {
                println!("held-out agreement stopped improving: stopping after iteration {k}");
                break;
            }
        }
    }
    // the first iteration at the best agreement, as the loop copies it
    let best = history.iter().reduce(|best, r| {
        if r.heldout_top1 > best.heldout_top1 {
            r
        } else {
            best
        }
    });
    if let Some(best) = best {
        // a run cut between its history and its copy by an older build
        let path = args.out.join("best.model");
        if !path.exists() {
            copy_model(&best.model, &path)?;
        }
        println!(
            "best: iteration {} (held-out top-1 {:.1}%), {}",
            best.iteration,
            100.0 * best.heldout_top1,
            args.out.join("best.model").display()
        );
    }
    Ok(())
}

/// `learning-curve.png`: agreement and RMSE by iteration.
fn draw_curve(out: &Path, history: &[IterationRecord]) -> Result<()> {
    let points: Vec<crate::plot::CurvePoint> = history
        .iter()
        .map(|r| crate::plot::CurvePoint {
            iteration: r.iteration,
            top1_heldout: r.heldout_top1,
            top1_train: r.train_top1,
            top1_material: r.material_top1,
            rmse: r.rmse_cp.unwrap_or(0.0),
        })
        .collect();
    crate::plot::learning_curve(&out.join("learning-curve.png"), &points)?;
    if let Some(last) = history.last() {
        last.report.plot(&out.join("agreement.png"))?;
    }
    Ok(())
}

/// `learn`'s extract and train stages as `niwatori extract` and `niwatori
/// train` under a launcher (`--mpirun`).
struct Launched<'a> {
    launcher: &'a str,
    args: &'a LearnArgs,
}

impl Launched<'_> {
    fn command(&self, stage: &str) -> Result<std::process::Command> {
        let mut words = self.launcher.split_whitespace();
        let program = words.next().context("--mpirun is empty")?;
        let mut cmd = std::process::Command::new(program);
        cmd.args(words)
            .arg(std::env::current_exe().context("finding the niwatori binary")?)
            .arg(stage);
        Ok(cmd)
    }

    fn run(&self, mut cmd: std::process::Command) -> Result<()> {
        let status = cmd.status().with_context(|| format!("starting {cmd:?}"))?;
        anyhow::ensure!(status.success(), "{cmd:?} failed: {status}");
        Ok(())
    }

    /// `extract --resume` with `learn`'s options, labelled by `model` (or
    /// material).
    fn extract(&self, files: &[PathBuf], out: &Path, model: Option<&Path>) -> Result<()> {
        let a = self.args;
        let mut cmd = self.command("extract")?;
        cmd.arg("--resume")
            .arg("--root")
            .arg(&a.kifu)
            .arg("--features-at")
            .arg(a.features_at.as_str())
            .arg("--sample")
            .arg(a.sample.to_string())
            .arg("--margin")
            .arg(a.margin.to_string())
            .arg("--labels")
            .arg(a.labels.as_str())
            .arg("--base")
            .arg(a.base.as_str())
            .arg("--format")
            .arg(a.format.name())
            .arg("--out")
            .arg(out);
        if let Some(m) = model {
            cmd.arg("--model").arg(m);
        }
        if let Some(r) = a.min_rating {
            cmd.arg("--min-rating").arg(r.to_string());
        }
        cmd.arg("--blocks").arg(a.blocks.as_str());
        cmd.args(files);
        self.run(cmd)
    }

    /// `train` with `learn`'s solver: the rows and objective it reached.
    fn train(&self, rows: &Path, model: &Path) -> Result<(usize, f64)> {
        let a = self.args;
        let mut cmd = self.command("train")?;
        cmd.arg("-c")
            .arg(a.solver.c.to_string())
            .arg("-p")
            .arg(a.solver.p.to_string())
            .arg("-e")
            .arg(a.solver.e.to_string())
            .arg("--out")
            .arg(model)
            .arg(rows);
        if !a.keep_clamped {
            cmd.arg("--drop-clamped");
        }
        cmd.arg("--loss").arg(a.loss.as_str());
        self.run(cmd)?;
        let meta = LinearModel::load(model)?
            .metadata()
            .cloned()
            .with_context(|| format!("{}: no sidecar", model.display()))?;
        Ok((meta.data.rows, meta.objective))
    }
}
