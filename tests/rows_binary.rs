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

/// `extract --format psv` writes YaneuraOu's PackedSfenValue, one record a
/// position; extracting that file gives the game's own rows, byte for byte.
#[test]
fn psv_positions_round_trip_through_extract() {
    use niwatori::psv::{PackedSfenValue, SIZE};
    let dir = tempfile::tempdir().unwrap();
    let d = |n: &str| dir.path().join(n);
    // A game that ends in %TORYO: the results are known.
    let game = Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu/wcsc28/utf8_WCSC28_L1_CGP_PAL.csa");
    ok(&[
        "extract",
        "--quiet",
        "--format",
        "psv",
        "--out",
        s(&d("psv")),
        s(&game),
    ]);
    ok(&["extract", "--quiet", "--out", s(&d("rows")), s(&game)]);
    let find = |dir: &Path, ext: &str| {
        files(dir)
            .into_iter()
            .filter(|(p, _)| p.to_str().unwrap().ends_with(ext))
            .collect::<Vec<_>>()
    };
    let [(psv_path, psv)] = &find(&d("psv"), ".0.psv")[..] else {
        panic!("one .psv file")
    };
    let [(_, side)] = &find(&d("psv"), ".0.psv.json")[..] else {
        panic!("one sidecar")
    };
    let meta: serde_json::Value = serde_json::from_slice(side).unwrap();
    let positions = meta["positions"].as_array().unwrap();
    assert_eq!(psv.len(), positions.len() * SIZE);
    let records = niwatori::records::read_games(&game).unwrap();
    let outcome = records.games[0].outcome();
    for (k, (bytes, p)) in psv.chunks_exact(SIZE).zip(positions).enumerate() {
        let r = PackedSfenValue::from_bytes(bytes.try_into().unwrap());
        assert_eq!(r.sfen().unwrap(), p["sfen"].as_str().unwrap(), "record {k}");
        assert_eq!(r.usi_move(), p["game_move"].as_str().unwrap(), "record {k}");
        assert_eq!(usize::from(r.game_ply), k + 1);
        let side = if k % 2 == 0 {
            rsshogi::types::Color::Black
        } else {
            rsshogi::types::Color::White
        };
        let want = match outcome {
            niwatori::records::Outcome::Win(c) if c == side => 1,
            niwatori::records::Outcome::Win(_) => -1,
            _ => 0,
        };
        assert_eq!(r.game_result, want, "record {k}");
    }
    assert_ne!(
        outcome,
        niwatori::records::Outcome::Unknown,
        "a finished pro game"
    );

    // Their positions here: each record a one-move game, the same rows.
    let copy = d("their.psv");
    std::fs::copy(d("psv").join(psv_path), &copy).unwrap();
    ok(&["extract", "--quiet", "--out", s(&d("from-psv")), s(&copy)]);
    let mut parts = find(&d("from-psv"), ".svm");
    let index = |p: &Path| -> usize {
        let name = p.file_stem().unwrap().to_str().unwrap();
        name.rsplit('.').next().unwrap().parse().unwrap()
    };
    parts.sort_by_key(|(p, _)| index(p));
    assert_eq!(parts.len(), positions.len());
    let joined: Vec<u8> = parts.into_iter().flat_map(|(_, b)| b).collect();
    let [(_, want)] = &find(&d("rows"), ".svm")[..] else {
        panic!("one .svm")
    };
    assert!(
        joined == *want,
        "rows from the .psv differ from the game's rows"
    );

    // A cut file names what is wrong and keeps the whole records.
    std::fs::write(&copy, &psv[..SIZE * 3 + 7]).unwrap();
    let r = niwatori::records::read_games(&copy).unwrap();
    assert_eq!(r.games.len(), 3);
    assert!(
        r.problems[0]
            .message
            .contains("7 bytes after the last whole 40-byte record")
    );
    // train refuses positions for rows.
    let e = fails(&["train", "-q", "--out", s(&d("m")), s(&copy)]);
    assert!(
        e.contains("PackedSfenValue positions, not training rows"),
        "{e}"
    );
}
