//! `niwatori report`: next-move agreement of a model and of material.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;

use super::{PolicyReport, Report, SiblingValue};
use crate::eval::Learned;
use crate::policy::PolicyModel;

/// Arguments of `niwatori report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Folder of game records (CSA, KIF).
    #[arg(long, default_value = "kifu")]
    pub kifu: PathBuf,
    /// The learned model (LIBLINEAR format with its .json sidecar).
    #[arg(long)]
    pub model: Option<PathBuf>,
    /// A move policy (`niwatori policy train`): its top-1/top-3 on the same
    /// games, under the JSON key `policy`. Without `--model`, the policy alone.
    #[arg(long)]
    pub policy: Option<PathBuf>,
    /// 1: rank siblings by their value; more: the search's best move.
    #[arg(long, default_value_t = 1)]
    pub depth: u32,
    /// At depth 1, value siblings statically or by the depth-1 search
    /// (default: search for a model trained on leaf rows, else static).
    #[arg(long, value_enum)]
    pub siblings: Option<SiblingValue>,
    #[command(flatten)]
    pub split: crate::corpus::SplitArgs,
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
    /// Only games whose players are both rated at least R (see `extract
    /// --min-rating`).
    #[arg(long, value_name = "R")]
    pub min_rating: Option<f64>,
    /// Print the split (`train`/`held` TAB file, one per line) and stop.
    #[arg(long)]
    pub list_split: bool,
}

/// Runs `niwatori report`.
pub fn run(args: ReportArgs) -> Result<()> {
    anyhow::ensure!(args.depth >= 1, "--depth must be at least 1");
    if args.list_split {
        let (train, held) = args.split.files(&args.kifu)?;
        for (side, files) in [("train", train), ("held", held)] {
            for f in files {
                println!("{side}\t{}", f.display());
            }
        }
        return Ok(());
    }
    crate::extract::check_sample(args.sample)?;
    let policy = match &args.policy {
        Some(path) => Some(PolicyModel::load(path)?.0),
        None => None,
    };
    let (train, held) = args.split.games(&args.kifu, args.min_rating)?;
    let (model_path, policy) = match (&args.model, policy) {
        (Some(m), policy) => (m, policy),
        (None, Some(policy)) => {
            let report = PolicyReport::build(&train, &held, &policy);
            report.print();
            return write_json(args.json.as_deref(), &report);
        }
        (None, None) => anyhow::bail!("--model or --policy is required"),
    };
    let model = Arc::new(Learned::load(model_path)?);
    let siblings = args.siblings.unwrap_or(SiblingValue::for_model(&model));
    let report = Report::build(
        &train,
        &held,
        &model,
        args.depth,
        siblings,
        args.sample,
        args.rows.as_deref(),
    )?;
    let report = Report {
        policy: policy.map(|p| {
            let games = if held.is_empty() { &train } else { &held };
            super::policy_agreement(games, &p).summary(true)
        }),
        ..report
    };
    report.print();
    if let Some(path) = &args.plot {
        report.plot(path)?;
    }
    write_json(args.json.as_deref(), &report)
}

fn write_json(path: Option<&std::path::Path>, report: &impl serde::Serialize) -> Result<()> {
    if let Some(path) = path {
        crate::atomic::write_atomic(path, serde_json::to_string_pretty(report)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
