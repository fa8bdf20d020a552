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
    /// Count legal move sequences of DEPTH plies (move generator check).
    Perft {
        depth: u32,
        /// Start position (default: the standard start position).
        #[arg(long)]
        sfen: Option<String>,
    },
    /// Fit evaluation weights (L2-loss SVR, LIBLINEAR -s 11) from libsvm feature files.
    Train(niwatori::train::cli::TrainArgs),
    /// Compare our linear SVR with a Gaussian-kernel SVR on a small sample.
    Diagnose(niwatori::train::diagnose::DiagnoseArgs),
    /// Time and peak memory of `train` against liblinear-train on one file.
    TrainBench(niwatori::train::bench::BenchArgs),
}

fn main() -> Result<()> {
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
        Some(Command::Train(args)) => niwatori::train::cli::run(args)?,
        Some(Command::Diagnose(args)) => niwatori::train::diagnose::run(args)?,
        Some(Command::TrainBench(args)) => niwatori::train::bench::run(args)?,
        None => {}
    }
    Ok(())
}
