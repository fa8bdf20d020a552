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
        /// Evaluation: material, material-hand or learned:MODEL.
        #[arg(long, default_value = "material")]
        eval: String,
        /// Also bench this evaluation, alternating with --eval, and print
        /// both with the ratios (medians of --runs runs).
        #[arg(long)]
        baseline: Option<String>,
        /// Runs of each evaluation with --baseline.
        #[arg(long, default_value_t = 3)]
        runs: usize,
    },
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
    /// Turn game records into libsvm training rows (every sibling of every position).
    Extract(niwatori::extract::ExtractArgs),
    /// Fit evaluation weights (L2-loss SVR, LIBLINEAR -s 11) from libsvm feature files.
    Train(niwatori::train::cli::TrainArgs),
    /// Compare our linear SVR with a Gaussian-kernel SVR on a small sample.
    Diagnose(niwatori::train::diagnose::DiagnoseArgs),
    /// Time and peak memory of `train` against liblinear-train on one file.
    TrainBench(niwatori::train::bench::BenchArgs),
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
        Some(Command::Bench {
            depth,
            movetime,
            threads,
            hash,
            eval: eval_spec,
            baseline,
            runs,
        }) => {
            let eval = niwatori::eval::from_spec(&eval_spec)?;
            let config = niwatori::bench::BenchConfig {
                depth,
                movetime_ms: movetime,
                threads,
                hash_mb: hash,
            };
            if let Some(baseline_spec) = baseline {
                let baseline = niwatori::eval::from_spec(&baseline_spec)?;
                let c = niwatori::bench::compare(eval.as_ref(), baseline.as_ref(), &config, runs);
                println!("bench depth {depth}, {runs} runs each (median time)");
                println!(
                    "{:<12} {:>12} {:>10} {:>12}",
                    "", "nodes", "time ms", "nodes/s"
                );
                for (name, r) in [(eval.name(), &c.eval), (baseline.name(), &c.baseline)] {
                    println!(
                        "{:<12} {:>12} {:>10.0} {:>12.0}",
                        name,
                        r.nodes,
                        r.seconds * 1000.0,
                        r.nps()
                    );
                }
                println!(
                    "{:<12} {:>11.2}x {:>9.2}x {:>11.2}x",
                    "ratio",
                    c.nodes_ratio(),
                    c.time_ratio(),
                    c.nps_ratio()
                );
                return Ok(());
            }
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
        Some(Command::Learn(args)) => niwatori::learn::run(args)?,
        Some(Command::Report(args)) => niwatori::report::cli::run(args)?,
        Some(Command::Usi) | None => niwatori::usi::run(),
    }
    Ok(())
}
