//! `niwatori policy train`: a move policy from game records.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};

use super::model::PolicyMeta;
use super::train::{PolicyData, PolicySettings, train};
use crate::corpus::{SplitArgs, is_file_held_out, opening_key, rated_at_least, read_all_games};
use crate::progress::{Progress, Unit};
use crate::records::find_record_files;

/// `niwatori policy ...`.
#[derive(Subcommand, Debug, Clone)]
pub enum PolicyCommand {
    /// Fit a softmax policy (linear, or with `--hidden` units) to the game moves of records.
    Train(PolicyTrainArgs),
}

/// Arguments of `niwatori policy train`.
#[derive(Args, Debug, Clone)]
pub struct PolicyTrainArgs {
    /// Folder of game records (CSA, KIF, .psv, .hcpe).
    #[arg(long, default_value = "kifu")]
    pub kifu: PathBuf,
    /// More record folders to train on, wholly (never held out or used for
    /// validation): generated games, say. Beware of games that share
    /// openings with the held-out ones.
    #[arg(long, value_name = "DIR")]
    pub extra: Vec<PathBuf>,
    /// The model file to write (and `MODEL.json`, `MODEL.state`).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub split: crate::corpus::SplitArgs,
    /// Fraction of the training files that choose the epoch kept (never
    /// the held-out ones).
    #[arg(long, default_value_t = 0.1)]
    pub validation: f64,
    /// Passes over the training positions.
    #[arg(long, default_value_t = PolicySettings::default().epochs)]
    pub epochs: u32,
    /// AdaGrad step size.
    #[arg(long, default_value_t = PolicySettings::default().eta)]
    pub eta: f64,
    /// L2 penalty.
    #[arg(long, default_value_t = PolicySettings::default().lambda)]
    pub lambda: f64,
    /// Hidden relu units between the features and the score (0: linear).
    #[arg(long, default_value_t = PolicySettings::default().hidden)]
    pub hidden: usize,
    /// Only games whose players are both rated at least R.
    #[arg(long, value_name = "R")]
    pub min_rating: Option<f64>,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
}

/// Runs `niwatori policy ...`.
pub fn run(command: PolicyCommand) -> Result<()> {
    match command {
        PolicyCommand::Train(args) => run_train(&args),
    }
}

/// The training files split into (fitting, validation).
pub fn validation_split(
    kifu: &Path,
    split: &SplitArgs,
    validation: f64,
) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    anyhow::ensure!(
        (0.0..1.0).contains(&validation),
        "--validation {validation} is not in 0..1"
    );
    let (train, _) = split.files(kifu)?;
    Ok(train
        .into_iter()
        .partition(|f| !is_file_held_out(kifu, f, validation, !split.seed, split.split_opening)))
}

fn run_train(args: &PolicyTrainArgs) -> Result<()> {
    let settings = PolicySettings {
        epochs: args.epochs,
        eta: args.eta,
        lambda: args.lambda,
        seed: args.split.seed,
        hidden: args.hidden,
    };
    settings.check()?;
    let (fit_files, validation_files) = validation_split(&args.kifu, &args.split, args.validation)?;
    let mut fit_games = rated_at_least(read_all_games(&fit_files), args.min_rating);
    if !args.extra.is_empty() {
        let extra =
            read_all_games(&find_record_files(&args.extra).context("listing --extra records")?);
        let extra = rated_at_least(extra, args.min_rating);
        let before = extra.len();
        // split by opening: an extra game that opens as a held-out one would leak
        let extra: Vec<_> = match args.split.split_opening {
            Some(n) => {
                let (_, held_files) = args.split.files(&args.kifu)?;
                let held: std::collections::HashSet<String> = read_all_games(&held_files)
                    .iter()
                    .map(|g| opening_key(g, n))
                    .collect();
                extra
                    .into_iter()
                    .filter(|g| !held.contains(&opening_key(g, n)))
                    .collect()
            }
            None => extra,
        };
        if extra.len() < before {
            eprintln!(
                "policy: {} of {before} --extra games left out: they open as a held-out game does",
                before - extra.len()
            );
        }
        fit_games.extend(extra);
    }
    let validation_games = rated_at_least(read_all_games(&validation_files), args.min_rating);
    anyhow::ensure!(
        !fit_games.is_empty(),
        "{}: no training games",
        args.kifu.display()
    );
    let total = (fit_games.len() + validation_games.len()) as u64;
    let progress = Progress::start(
        "features",
        total,
        Unit::Items("games"),
        Some("positions"),
        !args.quiet,
    );
    let fit = PolicyData::from_games(&fit_games, &progress);
    let validation = PolicyData::from_games(&validation_games, &progress);
    progress.finish();
    eprintln!(
        "policy: {} training games ({} positions), {} validation games ({} positions)",
        fit_games.len(),
        fit.positions(),
        validation_games.len(),
        validation.positions()
    );
    let meta = PolicyMeta {
        features_version: super::features::VERSION,
        features: super::features::COUNT,
        settings,
        kifu: args.kifu.clone(),
        extra: args.extra.clone(),
        split_opening: args.split.split_opening,
        train_games: fit_games.len(),
        train_positions: fit.positions(),
        validation_games: validation_games.len(),
        validation_positions: validation.positions(),
        best_epoch: 0,
        history: Vec::new(),
    };
    train(&fit, &validation, meta, &args.out, args.quiet)
        .with_context(|| format!("training {}", args.out.display()))?;
    eprintln!("policy: wrote {}", args.out.display());
    Ok(())
}
