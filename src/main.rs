use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

/// niwatori: a shogi engine that learns its evaluation from game records.
///
/// With no subcommand it speaks USI on stdin/stdout, as GUIs expect.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// The learning loop: extract, train, report, iterated (the main job).
    Learn(niwatori::learn::LearnArgs),
    /// Next-move agreement of a learned model and of material on game records.
    Report(niwatori::report::cli::ReportArgs),
    /// Speak USI on stdin/stdout (the default).
    Usi,
    /// Benches: `bench` (or `bench search`) searches fixed positions to a
    /// fixed depth and prints the node signature; `bench extract`, `bench train`.
    Bench(niwatori::bench::BenchArgs),
    /// Count legal move sequences of DEPTH plies (move generator check).
    Perft {
        depth: u32,
        /// Start position (default: the standard start position).
        #[arg(long)]
        sfen: Option<String>,
    },
    /// Play a match between two engines (USI child processes) and report Elo.
    Match(niwatori::play::cli::MatchArgs),
    /// Play on a CSA protocol server (floodgate, shogi-server) through a USI engine.
    Csa(niwatori::play::cli::CsaArgs),
    /// Turn game records into training rows (libsvm text or compact binary) (every sibling of every position).
    Extract(niwatori::extract::ExtractArgs),
    /// Row files from libsvm text to compact binary rows or back, lossless.
    Convert(niwatori::extract::convert::ConvertArgs),
    /// Fit evaluation weights (L2-loss SVR, LIBLINEAR -s 11) from libsvm feature files.
    Train(niwatori::train::cli::TrainArgs),
    /// Move policy: `policy train` fits a linear softmax policy to game moves.
    #[command(subcommand)]
    Policy(niwatori::policy::cli::PolicyCommand),
    /// Compare our linear SVR with a Gaussian-kernel SVR on a small sample.
    Diagnose(niwatori::train::diagnose::DiagnoseArgs),
}

/// The CPU features the build targets (`.cargo/config.toml`), checked
/// before any of them is used, so an older CPU gets a message rather than an
/// illegal instruction.
fn check_cpu() -> Result<()> {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    if !(std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("bmi2"))
    {
        anyhow::bail!(
            "this build needs a CPU with AVX2 and BMI2 (x86-64-v3); rebuild with \
             RUSTFLAGS=\"-C target-cpu=x86-64-v2\" cargo build --release"
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    check_cpu()?;
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Perft { depth, sfen }) => {
            let sfen = sfen.unwrap_or_else(|| rsshogi::board::STARTPOS_SFEN.to_string());
            let mut pos = rsshogi::board::position_from_sfen(&sfen)
                .map_err(|e| anyhow::anyhow!("{e}"))
                .with_context(|| format!("bad --sfen {sfen:?}"))?;
            let start = Instant::now();
            let nodes = niwatori::perft::perft(&mut pos, depth);
            let secs = start.elapsed().as_secs_f64();
            println!(
                "perft {depth}: {nodes} nodes, {secs:.3} s, {:.0} nodes/s",
                nodes as f64 / secs.max(1e-9)
            );
        }
        Some(Command::Match(args)) => niwatori::play::cli::run_match_cli(args)?,
        Some(Command::Csa(args)) => niwatori::play::cli::run_csa_cli(args)?,
        Some(Command::Bench(args)) => niwatori::bench::run_cli(args)?,
        Some(Command::Extract(args)) => niwatori::extract::run(args)?,
        Some(Command::Convert(args)) => niwatori::extract::convert::run(args)?,
        Some(Command::Train(args)) => niwatori::train::cli::run(args)?,
        Some(Command::Diagnose(args)) => niwatori::train::diagnose::run(args)?,
        Some(Command::Policy(command)) => niwatori::policy::cli::run(command)?,
        Some(Command::Learn(args)) => niwatori::learn::run(args)?,
        Some(Command::Report(args)) => niwatori::report::cli::run(args)?,
        Some(Command::Usi) | None => niwatori::usi::run(),
    }
    Ok(())
}
