//! The `match` and `csa` subcommands.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use super::clock::{Limit, TimeControl};
use super::csa_client::{CsaOptions, run_csa};
use super::matches::{MatchOptions, OpeningChoice, run_match};
use super::spec::EngineSpec;

/// Arguments of `niwatori match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Engine A: material | material-hand | learned:PATH | "usi:COMMAND [ARGS]", each optionally
    /// followed by --option Name=Value, --name LABEL, --time-margin MS, --nodes-fallback-byoyomi MS
    #[arg(long)]
    pub a: String,
    /// Engine B (same forms as --a).
    #[arg(long)]
    pub b: String,
    /// Number of games (pairs of games share an opening, colours swapped).
    #[arg(long, default_value_t = 2)]
    pub games: usize,
    /// Nodes per move (`go nodes`).
    #[arg(long, conflicts_with_all = ["byoyomi", "time", "depth"])]
    pub nodes: Option<u64>,
    /// Search depth per move (`go depth`): compares evaluations at equal
    /// depth, whatever each costs.
    #[arg(long, conflicts_with_all = ["byoyomi", "time"])]
    pub depth: Option<u32>,
    /// Byoyomi per move in milliseconds.
    #[arg(long)]
    pub byoyomi: Option<u64>,
    /// Main time and increment in milliseconds: MS or MS+INC.
    #[arg(long)]
    pub time: Option<String>,
    /// A folder of CSA records whose prefixes are the openings, or a file of
    /// USI lines (`startpos moves …`, `sfen … moves …`) whose positions are
    /// (default: random play).
    #[arg(long)]
    pub openings: Option<PathBuf>,
    /// Opening plies taken from records: MIN-MAX.
    #[arg(long, default_value = "16-30")]
    pub opening_plies: String,
    /// Plies of random opening play when no --openings folder is given.
    #[arg(long, default_value_t = 12)]
    pub random_plies: usize,
    /// Play each opening once rather than twice with colours swapped (for
    /// generating games: one deterministic engine against itself would play
    /// the second game move for move as the first).
    #[arg(long)]
    pub one_game_per_opening: bool,
    /// Seed for openings.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games played at the same time.
    #[arg(long, alias = "threads", default_value_t = 1)]
    pub concurrency: usize,
    /// Draw after this many plies.
    #[arg(long, default_value_t = 256)]
    pub max_plies: u32,
    /// Write each game as CSA here (and results.jsonl, which makes the match resumable).
    #[arg(long)]
    pub csa_out: Option<PathBuf>,
    /// Write the summary as JSON here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Sequential probability ratio test for A: ELO0,ELO1.
    #[arg(long)]
    pub sprt: Option<String>,
    /// Milliseconds of lateness forgiven (pipe latency) before a time loss.
    #[arg(long, default_value_t = 100)]
    pub time_tolerance: u64,
    /// Milliseconds a nodes-limited search may take before the engine counts as hung.
    #[arg(long, default_value_t = 60_000)]
    pub hang_ms: u64,
    /// The niwatori binary for in-process SPECs (default: this program).
    #[arg(long)]
    pub niwatori: Option<PathBuf>,
}

fn own_exe(given: Option<PathBuf>) -> Result<PathBuf> {
    match given {
        Some(p) => Ok(p),
        None => std::env::current_exe().context("finding niwatori's own executable"),
    }
}

/// Runs `niwatori match`.
pub fn run_match_cli(args: MatchArgs) -> Result<()> {
    let a = EngineSpec::parse(&args.a).context("--a")?;
    let b = EngineSpec::parse(&args.b).context("--b")?;
    let limit = match (args.nodes, args.depth) {
        (Some(n), _) => Limit::Nodes(n),
        (None, Some(d)) => Limit::Depth(d),
        (None, None) => Limit::Time(
            TimeControl::from_args(args.time.as_deref(), args.byoyomi).context("time control")?,
        ),
    };
    let openings = match args.openings {
        Some(path) if path.is_file() => OpeningChoice::File { path },
        Some(path) => {
            let (lo, hi) = args
                .opening_plies
                .split_once('-')
                .and_then(|(l, h)| Some((l.trim().parse().ok()?, h.trim().parse().ok()?)))
                .with_context(|| {
                    format!("--opening-plies {:?} is not MIN-MAX", args.opening_plies)
                })?;
            OpeningChoice::Dir {
                path,
                min_ply: lo,
                max_ply: hi,
            }
        }
        None => OpeningChoice::Random {
            plies: args.random_plies,
        },
    };
    let sprt = match &args.sprt {
        Some(s) => {
            let Some((e0, e1)) = s.split_once(',').and_then(|(a, b)| {
                Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?))
            }) else {
                bail!("--sprt {s:?} is not ELO0,ELO1");
            };
            Some((e0, e1))
        }
        None => None,
    };
    if args.games == 0 {
        bail!("--games must be at least 1");
    }
    let opts = MatchOptions {
        a,
        b,
        games: args.games,
        limit,
        openings,
        one_game_per_opening: args.one_game_per_opening,
        seed: args.seed,
        concurrency: args.concurrency.max(1),
        max_plies: args.max_plies,
        csa_out: args.csa_out,
        sprt,
        tolerance_ms: args.time_tolerance,
        hang_ms: args.hang_ms,
        niwatori_exe: own_exe(args.niwatori)?,
        progress: true,
    };
    let summary = run_match(&opts)?;
    print!("{}", summary.report());
    if let Some(path) = args.json {
        let text = serde_json::to_string_pretty(&summary).expect("summary serializes");
        crate::atomic::write_atomic(&path, &(text + "\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Arguments of `niwatori csa`.
#[derive(Debug, Args)]
pub struct CsaArgs {
    #[arg(long)]
    pub host: String,
    #[arg(long, default_value_t = 4081)]
    pub port: u16,
    #[arg(long)]
    pub user: String,
    #[arg(long)]
    pub password: String,
    /// Game name (e.g. floodgate-300-10F); sent as GAMENAME,PASSWORD.
    #[arg(long)]
    pub game: Option<String>,
    /// Games to play (one login each).
    #[arg(long, default_value_t = 1)]
    pub games: usize,
    /// The engine that plays (same forms as `match --a`).
    #[arg(long, default_value = "material")]
    pub engine: String,
    /// Folder for transcripts and CSA records.
    #[arg(long, default_value = "csa-games")]
    pub out: PathBuf,
    /// Milliseconds per move kept in reserve for network latency.
    #[arg(long, default_value_t = 1000)]
    pub margin_ms: u64,
    /// Seconds of silence before an empty keep-alive line.
    #[arg(long, default_value_t = 30)]
    pub keepalive: u64,
    /// Send score and PV with each move (floodgate's `,'*` extension).
    #[arg(long)]
    pub send_pv: bool,
    /// Connection attempts before giving up.
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// The niwatori binary for in-process SPECs (default: this program).
    #[arg(long)]
    pub niwatori: Option<PathBuf>,
}

/// Runs `niwatori csa`.
pub fn run_csa_cli(args: CsaArgs) -> Result<()> {
    let opts = CsaOptions {
        host: args.host,
        port: args.port,
        user: args.user,
        password: args.password,
        game: args.game,
        games: args.games,
        engine: EngineSpec::parse(&args.engine).context("--engine")?,
        niwatori_exe: own_exe(args.niwatori)?,
        out_dir: args.out,
        margin_ms: args.margin_ms,
        keepalive_secs: args.keepalive,
        send_pv: args.send_pv,
        connect_retries: args.retries,
    };
    let outcomes = run_csa(&opts)?;
    let (mut w, mut d, mut l) = (0, 0, 0);
    for o in &outcomes {
        match o.result.as_str() {
            "#WIN" => w += 1,
            "#LOSE" => l += 1,
            _ => d += 1,
        }
    }
    println!("{} games: +{w} ={d} -{l}", outcomes.len());
    Ok(())
}
