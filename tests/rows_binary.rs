//! Compact binary rows end to end on real rows: `extract --format bin`,
//! `convert` both ways, `train` on either folder, and damage refused.

use std::path::{Path, PathBuf};
use std::process::Command;

fn niwatori(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = niwatori(args);
    assert!(
        out.status.success(),
        "niwatori {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn fails(args: &[&str]) -> String {
    let out = niwatori(args);
    assert!(!out.status.success(), "niwatori {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `niwatori extract --format EXT --out OUT GAME` (positions).
fn extract_positions(ext: &str, out: &Path, game: &Path) {
    ok(&[
        "extract",
        "--quiet",
        "--format",
        ext,
        "--out",
        s(out),
        s(game),
    ]);
}

/// `niwatori convert --to TO --out OUT FROM`.
fn convert<'a>(to: &'a str, out: &'a Path, from: &'a Path) -> [&'a str; 7] {
    ["convert", "--quiet", "--to", to, "--out", s(out), s(from)]
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every file below `dir` by relative path.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_path_buf();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn bytes_with(dir: &Path, ext: &str) -> u64 {
    files(dir)
        .iter()
        .filter(|(p, _)| p.extension().is_some_and(|e| e == ext))
        .map(|(_, b)| b.len() as u64)
        .sum()
}

fn objective(model: &Path) -> f64 {
    let mut json = model.as_os_str().to_owned();
    json.push(".json");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(PathBuf::from(json)).unwrap()).unwrap();
    meta["objective"].as_f64().unwrap()
}

#[test]
fn real_rows_round_trip_and_train_alike() {
    let kifu = Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu");
    let records = [kifu.join("pro"), kifu.join("misc/WCSC32_F7_NBS_DLS.csa")];
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    for (out, format) in [("text", "text"), ("bin", "bin")] {
        let out = d(out);
        let mut args = vec![
            "extract",
            "--quiet",
            "--features-at",
            "leaf",
            "--sample",
            "0.3",
        ];
        args.extend(["--format", format, "--out", s(&out)]);
        args.extend(records.iter().map(|p| s(p)));
        ok(&args);
    }
    let text_bytes = bytes_with(&d("text"), "svm");
    let bin_bytes = bytes_with(&d("bin"), "bin");
    assert!(text_bytes > 10_000_000, "{text_bytes} bytes of text rows");
    assert!(
        bin_bytes * 5 <= text_bytes,
        ".bin is {bin_bytes} bytes, text {text_bytes}: more than a fifth"
    );

    // convert: text to bin is what extract --format bin writes, and back.
    ok(&convert("bin", &d("to-bin"), &d("text")));
    ok(&convert("text", &d("back"), &d("to-bin")));
    let is_rows = |p: &Path| p.file_name().unwrap() != "extract.json";
    let rows_of = |dir: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        files(dir).into_iter().filter(|(p, _)| is_rows(p)).collect()
    };
    assert_eq!(
        rows_of(&d("to-bin")),
        rows_of(&d("bin")),
        "convert --to bin ≠ extract --format bin"
    );
    assert_eq!(
        files(&d("back")),
        files(&d("text")),
        "text → bin → text is not the same bytes"
    );
    let meta = std::fs::read_to_string(d("to-bin/extract.json")).unwrap();
    assert!(meta.contains(".bin per game"), "{meta}");

    // train on either folder: the same model, byte for byte.
    for f in ["text", "bin"] {
        let model = d(&format!("{f}.model"));
        ok(&[
            "train",
            "-q",
            "-c",
            "0.1",
            "-p",
            "0.002",
            "--out",
            s(&model),
            s(&d(f)),
        ]);
    }
    let (a, b) = (objective(&d("text.model")), objective(&d("bin.model")));
    assert!((a - b).abs() <= 1e-9 * a.abs(), "objectives {a} and {b}");
    assert_eq!(
        std::fs::read(d("text.model")).unwrap(),
        std::fs::read(d("bin.model")).unwrap()
    );

    // A folder with both formats would count rows twice: refused.
    let (from, _) = rows_of(&d("bin"))
        .into_iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "bin"))
        .unwrap();
    std::fs::copy(d("bin").join(&from), d("text").join("extra.bin")).unwrap();
    let e = fails(&["train", "-q", "--out", s(&d("m")), s(&d("text"))]);
    assert!(e.contains("holds both .svm and .bin rows"), "{e}");
}

#[test]
fn damaged_or_unfit_rows_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    let text = d("rows.svm");
    std::fs::write(&text, "0.5 1:1 3:2\n-0.25 2:1 3:1\n").unwrap();
    ok(&convert("bin", &d("b"), &text));
    let bin = d("b/rows.bin");
    let good = std::fs::read(&bin).unwrap();
    ok(&["train", "-q", "--out", s(&d("m")), s(&bin)]);

    // Cut short: the writer never finished; train says so and writes nothing.
    std::fs::write(&bin, &good[..good.len() - 3]).unwrap();
    let e = fails(&["train", "-q", "--out", s(&d("cut.model")), s(&bin)]);
    assert!(e.contains("rows.bin: truncated"), "{e}");
    assert!(!d("cut.model").exists());

    // One changed byte: the chunk's checksum fails.
    let mut flipped = good.clone();
    flipped[30] ^= 1;
    std::fs::write(&bin, &flipped).unwrap();
    let e = fails(&["train", "-q", "--out", s(&d("m2")), s(&bin)]);
    assert!(
        e.contains("rows.bin: chunk at byte 8: checksum mismatch"),
        "{e}"
    );

    // Text that .bin cannot hold exactly names its line.
    let refused = |rows: &str| {
        std::fs::write(&text, rows).unwrap();
        let out = d("c");
        fails(&convert("bin", &out, &text))
    };
    let e = refused("0.5 1:1\n0.25 2:0.5\n");
    assert!(
        e.contains("rows.svm:2: value 0.5 is not an integer 0-255"),
        "{e}"
    );
    let e = refused("0.5 1:1\n0.25 2:1\n0.123456 3:1\n");
    assert!(
        e.contains("rows.svm:3: label 0.123456 is not a multiple of 1/10000"),
        "{e}"
    );
    assert!(
        !d("c/rows.bin").exists(),
        "a failed conversion leaves no file"
    );
}

use niwatori::positions::{PositionRecord, hcpe::Hcpe, psv::PackedSfenValue};
use niwatori::records::Outcome;
use rsshogi::types::Color;

/// `extract --format psv|hcpe` writes one record a position; extracting
/// that file gives the game's own rows, byte for byte.
fn positions_round_trip<R: PositionRecord>(ext: &str, result: fn(&R, Color) -> i8) {
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    // A game that ends in %TORYO: the results are known.
    let game = Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu/wcsc28/utf8_WCSC28_L1_CGP_PAL.csa");
    let out = d("positions");
    extract_positions(ext, &out, &game);
    ok(&["extract", "--quiet", "--out", s(&d("rows")), s(&game)]);
    let find = |dir: &Path, end: &str| {
        files(dir)
            .into_iter()
            .filter(|(p, _)| p.to_str().unwrap().ends_with(end))
            .collect::<Vec<_>>()
    };
    let [(path, bytes)] = &find(&out, &format!(".0.{ext}"))[..] else {
        panic!("one .{ext} file")
    };
    let [(_, side)] = &find(&out, &format!(".0.{ext}.json"))[..] else {
        panic!("one sidecar")
    };
    let meta: serde_json::Value = serde_json::from_slice(side).unwrap();
    let positions = meta["positions"].as_array().unwrap();
    assert_eq!(bytes.len(), positions.len() * R::SIZE);
    let outcome = niwatori::records::read_games(&game).unwrap().games[0].outcome();
    assert_ne!(outcome, Outcome::Unknown, "a resigned game");
    for (k, (b, p)) in bytes.chunks_exact(R::SIZE).zip(positions).enumerate() {
        let r = R::read(b);
        let sfen = p["sfen"].as_str().unwrap();
        let board = |s: &str| s.rsplit_once(' ').unwrap().0.to_string();
        assert_eq!(board(&r.sfen().unwrap()), board(sfen), "record {k}");
        assert_eq!(r.game_move().to_usi(), p["game_move"].as_str().unwrap());
        let side = if k % 2 == 0 {
            Color::BLACK
        } else {
            Color::WHITE
        };
        let want = match outcome {
            Outcome::Win(c) if c == side => 1,
            Outcome::Win(_) => -1,
            _ => 0,
        };
        assert_eq!(result(&r, side), want, "record {k}");
    }

    // Their positions here: each record a one-move game, the same rows.
    let copy = d(&format!("their.{ext}"));
    std::fs::copy(out.join(path), &copy).unwrap();
    ok(&[
        "extract",
        "--quiet",
        "--out",
        s(&d("from-positions")),
        s(&copy),
    ]);
    // Records go 4,096 to an output file: this one holds them all.
    let [(_, joined)] = &find(&d("from-positions"), ".svm")[..] else {
        panic!("one .svm for the file's records")
    };
    let [(_, side)] = &find(&d("from-positions"), ".svm.json")[..] else {
        panic!("one sidecar")
    };
    let meta: serde_json::Value = serde_json::from_slice(side).unwrap();
    assert_eq!(meta["positions"].as_array().unwrap().len(), positions.len());
    let first_rows = |m: &serde_json::Value| -> Vec<u64> {
        let p = m["positions"].as_array().unwrap();
        p.iter().map(|p| p["first_row"].as_u64().unwrap()).collect()
    };
    let game_meta: serde_json::Value =
        serde_json::from_slice(&find(&d("rows"), ".svm.json")[0].1).unwrap();
    assert_eq!(first_rows(&meta), first_rows(&game_meta));
    let [(_, want)] = &find(&d("rows"), ".svm")[..] else {
        panic!("one .svm")
    };
    assert!(
        joined == want,
        "rows from the .{ext} differ from the game's rows"
    );

    // A cut file names what is wrong and keeps the whole records.
    std::fs::write(&copy, &bytes[..R::SIZE * 3 + 7]).unwrap();
    let r = niwatori::records::read_games(&copy).unwrap();
    assert_eq!(r.games.len(), 3);
    let cut = format!(
        "7 bytes after the last whole {}-byte {} record",
        R::SIZE,
        R::NAME
    );
    assert!(r.problems[0].message.contains(&cut), "{:?}", r.problems);
    // train refuses positions for rows.
    let e = fails(&["train", "-q", "--out", s(&d("m")), s(&copy)]);
    assert!(e.contains("not training rows"), "{e}");
}

#[test]
fn psv_positions_round_trip_through_extract() {
    positions_round_trip::<PackedSfenValue>("psv", |r, _| r.game_result);
}

#[test]
fn hcpe_positions_round_trip_through_extract() {
    positions_round_trip::<Hcpe>("hcpe", |r, side| match (r.game_result, side) {
        (0, _) => 0,
        (1, Color::BLACK) | (2, Color::WHITE) => 1,
        _ => -1,
    });
}

/// cshogi, an independent reader of both formats, finds in the files
/// `extract` writes the game's positions, moves, plies and result.
#[test]
fn cshogi_reads_what_extract_writes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pyc = root.join("target/python");
    assert!(
        pyc.join("cshogi").is_dir(),
        "cshogi is not installed in {}: `bash scripts/setup.sh` installs it (from PyPI)",
        pyc.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let game = root.join("kifu/wcsc28/utf8_WCSC28_L1_CGP_PAL.csa");
    for ext in ["hcpe", "psv"] {
        let out = dir.path().join(ext);
        extract_positions(ext, &out, &game);
    }
    let script = r#"
import glob, json, sys, numpy as np, cshogi
d = sys.argv[1]
h = glob.glob(d + '/hcpe/*.hcpe')[0]; p = glob.glob(d + '/psv/*.psv')[0]
meta = json.load(open(h + '.json'))['positions']
hc = np.fromfile(h, dtype=cshogi.HuffmanCodedPosAndEval)
ps = np.fromfile(p, dtype=cshogi.PackedSfenValue)
b = cshogi.Board()
same = 0
for m, x, y in zip(meta, hc, ps):
    want = m['sfen'].rsplit(' ', 1)[0]
    b.set_hcp(x['hcp'])
    ok = b.sfen().rsplit(' ', 1)[0] == want
    ok &= cshogi.move_to_usi(b.move_from_move16(int(x['bestMove16']))) == m['game_move']
    b.set_psfen(y['sfen'])
    ok &= b.sfen().rsplit(' ', 1)[0] == want and int(y['gamePly']) == m['ply']
    ok &= cshogi.move_to_usi(b.move_from_psv(int(y['move']))) == m['game_move']
    # The game ends %TORYO after 138 moves: white won.
    ok &= int(x['gameResult']) == cshogi.WHITE_WIN
    ok &= int(y['game_result']) == (1 if b.turn == cshogi.WHITE else -1)
    same += ok
print(len(meta), len(hc), len(ps), same)
"#;
    let out = Command::new("python3")
        .env("PYTHONPATH", &pyc)
        .args(["-c", script, s(dir.path())])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.trim(), "138 138 138 138");
}

/// Positions formats write no features: asking for other blocks is an
/// error that names the option, and nothing is written.
#[test]
fn positions_formats_refuse_feature_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("psv");
    let game = concat!(env!("CARGO_MANIFEST_DIR"), "/kifu/selfplay/0001.csa");
    let run = Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .args([
            "extract",
            game,
            "--format",
            "psv",
            "--blocks",
            "king-piece",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("--blocks") && err.contains("psv"), "{err}");
    assert!(!out.exists());
}
