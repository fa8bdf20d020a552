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
    /// Speak USI on stdin/stdout (the default).
    Usi,
    /// Search fixed positions to a fixed depth; print nodes, time and nodes/second.
    Bench {
        /// Search depth.
        #[arg(long, default_value_t = niwatori::bench::DEFAULT_DEPTH)]
        depth: u32,
        /// Search each position this long instead (ms); reports the depth reached.
        #[arg(long)]
        movetime: Option<u64>,
        /// Search threads (Lazy SMP).
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Transposition table size in MiB.
        #[arg(long, default_value_t = 16)]
        hash: usize,
        /// Evaluation: material or material-hand.
        #[arg(long, default_value = "material")]
        eval: String,
    },
    /// Count legal move sequences of DEPTH plies (move generator check).
    Perft {
        depth: u32,
        /// Start position (default: the standard start position).
        #[arg(long)]
        sfen: Option<String>,
    },
    /// Turn game records into libsvm training rows (every sibling of every position).
    Extract(niwatori::extract::ExtractArgs),
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
        Some(Command::Bench {
            depth,
            movetime,
            threads,
            hash,
            eval,
        }) => {
            let eval: Box<dyn niwatori::eval::Evaluator> = match eval.as_str() {
                "material" => Box::new(niwatori::eval::Material),
                "material-hand" => Box::new(niwatori::eval::MaterialHand),
                other => anyhow::bail!("unknown --eval {other:?} (material, material-hand)"),
            };
            let config = niwatori::bench::BenchConfig {
                depth,
                movetime_ms: movetime,
                threads,
                hash_mb: hash,
            };
            let report = niwatori::bench::run(eval.as_ref(), &config, true);
            println!("===========================");
            println!("Threads         : {threads}");
            println!("Mean depth      : {:.2}", report.mean_depth);
            println!("Total nodes     : {}", report.nodes);
            println!("Total time (ms) : {:.0}", report.seconds * 1000.0);
            println!("Nodes/second    : {:.0}", report.nps());
        }
        Some(Command::Extract(args)) => niwatori::extract::run(args)?,
        Some(Command::Train(args)) => niwatori::train::cli::run(args)?,
        Some(Command::Diagnose(args)) => niwatori::train::diagnose::run(args)?,
        Some(Command::TrainBench(args)) => niwatori::train::bench::run(args)?,
        Some(Command::Usi) | None => niwatori::usi::run(),
    }
    Ok(())
}
