//! `niwatori report`: next-move agreement of a model and of material.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};

use super::split::is_held_out;
use super::{Agreement, SiblingValue, agreement_on_sample, read_all_games, regression};
use crate::eval::{Evaluator, Learned, Material};
use crate::records::{Game, find_record_files};

/// Arguments of `niwatori report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Folder of game records (CSA, KIF).
    #[arg(long, default_value = "kifu")]
    pub kifu: PathBuf,
    /// The learned model (LIBLINEAR format with its .json sidecar).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// 1: rank siblings by their value; more: the search's best move.
    #[arg(long, default_value_t = 1)]
    pub depth: u32,
    /// At depth 1, value siblings statically or by the depth-1 search
    /// (default: search for a model trained on leaf rows, else static).
    #[arg(long, value_enum)]
    pub siblings: Option<SiblingValue>,
    /// Fraction of record files held out of training (seeded hash of the path).
    #[arg(long, default_value_t = 0.1)]
    pub holdout: f64,
    /// Seed of the held-out split.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Extracted rows of the held-out games, for RMSE and R².
    #[arg(long)]
    pub rows: Option<PathBuf>,
    /// Write the report as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Draw top-1 agreement by phase for each evaluation (PNG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Measure agreement on this fraction of each game's positions, picked
    /// as `extract --sample` picks them (1: every position). Valuing
    /// siblings by search is costly; a sample makes sweeps affordable.
    #[arg(long, default_value_t = 1.0)]
    pub sample: f64,
    /// Print the split (`train`/`held` TAB file, one per line) and stop.
    #[arg(long)]
    pub list_split: bool,
}

/// Record games split into (training, held-out).
pub fn split_games(
    kifu: &std::path::Path,
    holdout: f64,
    seed: u64,
) -> Result<(Vec<Game>, Vec<Game>)> {
    let (train, held) = split_files(kifu, holdout, seed)?;
    Ok((read_all_games(&train), read_all_games(&held)))
}

/// Record files under `kifu` split into (training, held-out).
pub fn split_files(
    kifu: &std::path::Path,
    holdout: f64,
    seed: u64,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    anyhow::ensure!(
        (0.0..=1.0).contains(&holdout),
        "--holdout {holdout} is not in 0..=1"
    );
    let files = find_record_files(&[kifu.to_path_buf()])
        .with_context(|| format!("listing records in {}", kifu.display()))?;
    anyhow::ensure!(
        !files.is_empty(),
        "{}: no record files (.csa, .kif, .kifu)",
        kifu.display()
    );
    Ok(files.into_iter().partition(|f| {
        let rel = f.strip_prefix(kifu).unwrap_or(f);
        !is_held_out(rel, holdout, seed)
    }))
}

/// The full report as JSON, and printed as text.
pub fn build_report(
    train: &[Game],
    held: &[Game],
    model: &Arc<Learned>,
    depth: u32,
    siblings: SiblingValue,
    sample: f64,
    rows: Option<&std::path::Path>,
) -> Result<Value> {
    let eval_games = if held.is_empty() { train } else { held };
    let with_top3 = depth == 1;
    let run = |eval: &dyn Evaluator, games: &[Game]| -> Agreement {
        agreement_on_sample(games, eval, depth, siblings, sample)
    };
    // Valuing siblings by search costs a search per sibling: the training
    // games' figure then comes from an even sample as large as the held-out
    // set, not from all of them.
    let train_sample: Vec<Game> = match siblings {
        SiblingValue::Search if !held.is_empty() => {
            let step = train.len() / held.len();
            train.iter().step_by(step.max(1)).cloned().collect()
        }
        _ => train.to_vec(),
    };
    let material = run(&Material, eval_games).summary(with_top3);
    let learned = run(model.as_ref(), eval_games).summary(with_top3);
    let learned_train = run(model.as_ref(), &train_sample).summary(with_top3);
    let mut report = json!({
        "depth": depth,
        "siblings": siblings.as_str(),
        "positions_sampled": sample,
        "games": { "train": train.len(), "held_out": held.len(), "train_sampled": train_sample.len() },
        "evaluated_on": if held.is_empty() { "training games (nothing held out)" } else { "held-out games" },
        "material": material,
        "learned": learned,
        "learned_on_training_games": learned_train,
    });
    if let Some(dir) = rows {
        let loaded = crate::train::load::load(&[dir.to_path_buf()], -1.0, false)
            .with_context(|| format!("loading held-out rows from {}", dir.display()))?;
        let reg = regression(&loaded.data, &model.weights_f64(), model.label_scale());
        report["regression"] = serde_json::to_value(reg)?;
    }
    Ok(report)
}

/// Prints the report's agreement table.
pub fn print_report(report: &Value) {
    let pct = |v: &Value| {
        v.as_f64()
            .map_or("   -  ".into(), |x| format!("{:5.1}%", 100.0 * x))
    };
    let siblings = match (report["depth"].as_u64(), report["siblings"].as_str()) {
        (Some(1), Some(s)) => format!(" (siblings valued: {s})"),
        _ => String::new(),
    };
    let sampled = match report["positions_sampled"].as_f64() {
        Some(f) if f < 1.0 => format!(", a {:.0}% sample of positions", 100.0 * f),
        _ => String::new(),
    };
    println!(
        "next-move agreement at depth {}{siblings} on {}{sampled} ({} training games, {} held out)",
        report["depth"],
        report["evaluated_on"].as_str().unwrap_or(""),
        report["games"]["train"],
        report["games"]["held_out"]
    );
    println!(
        "{:<28} {:>9} {:>7} {:>7}   by phase (top-1)",
        "evaluation", "positions", "top-1", "top-3"
    );
    for key in ["material", "learned", "learned_on_training_games"] {
        let e = &report[key];
        let phases: Vec<String> = super::PHASES
            .iter()
            .map(|(p, _, _)| format!("{p} {}", pct(&e["by_phase"][*p]["top1"])))
            .collect();
        println!(
            "{:<28} {:>9} {:>7} {:>7}   {}",
            key,
            e["positions"],
            pct(&e["top1"]),
            pct(&e["top3"]),
            phases.join("  ")
        );
    }
    if let Some(r) = report.get("regression") {
        println!(
            "held-out rows: {}  RMSE {:.1} cp  R² {:.3}  (least-squares fit of the same rows: RMSE {:.1} cp)",
            r["rows"],
            r["rmse_cp"].as_f64().unwrap_or(f64::NAN),
            r["r2"].as_f64().unwrap_or(f64::NAN),
            r["least_squares_rmse_cp"].as_f64().unwrap_or(f64::NAN)
        );
    }
}

/// Runs `niwatori report`.
pub fn run(args: ReportArgs) -> Result<()> {
    anyhow::ensure!(args.depth >= 1, "--depth must be at least 1");
    if args.list_split {
        let (train, held) = split_files(&args.kifu, args.holdout, args.seed)?;
        for (side, files) in [("train", train), ("held", held)] {
            for f in files {
                println!("{side}\t{}", f.display());
            }
        }
        return Ok(());
    }
    crate::extract::check_sample(args.sample)?;
    let model_path = args.model.as_ref().context("--model is required")?;
    let model = Arc::new(Learned::load(model_path)?);
    let (train, held) = split_games(&args.kifu, args.holdout, args.seed)?;
    let siblings = args.siblings.unwrap_or(SiblingValue::for_model(&model));
    let report = build_report(
        &train,
        &held,
        &model,
        args.depth,
        siblings,
        args.sample,
        args.rows.as_deref(),
    )?;
    print_report(&report);
    if let Some(path) = &args.plot {
        plot_report(path, &report)?;
    }
    if let Some(path) = &args.json {
        crate::atomic::write_atomic(path, serde_json::to_string_pretty(&report)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Draws top-1 agreement by phase (and overall) of each evaluation.
pub fn plot_report(path: &std::path::Path, report: &Value) -> Result<()> {
    let series: Vec<crate::plot::PhaseSeries> = ["material", "learned"]
        .iter()
        .map(|&key| crate::plot::PhaseSeries {
            name: key.to_string(),
            values: super::PHASES
                .iter()
                .map(|(p, _, _)| {
                    (
                        p.to_string(),
                        report[key]["by_phase"][*p]["top1"].as_f64().unwrap_or(0.0),
                    )
                })
                .chain(std::iter::once((
                    "all".to_string(),
                    report[key]["top1"].as_f64().unwrap_or(0.0),
                )))
                .collect(),
        })
        .collect();
    let title = format!("next-move agreement, depth {}", report["depth"]);
    crate::plot::agreement_by_phase(path, &title, &series)?;
    Ok(())
}
