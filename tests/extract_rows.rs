//! Extraction end to end: rows against an independent replay with rsshogi,
//! labels, determinism across thread counts, resume, bad inputs, LIBLINEAR.

mod required;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use niwatori::eval::Material;
use niwatori::extract::output::{GameMeta, RunMeta};
use niwatori::extract::{ExtractOptions, Shard, extract, targets};
use niwatori::features::{RelationEncoding, features};
use niwatori::rows::libsvm;
use niwatori::search::SiblingScorer;
use rsshogi::board::{Move32List, generate_legal_all_move32, position_from_sfen};
use rsshogi::records::formats::csa;

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("kifu").join(rel)
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn run(
    paths: &[PathBuf],
    out: &Path,
    options: &ExtractOptions,
) -> niwatori::extract::ExtractSummary {
    extract(paths, out, options, Arc::new(Material)).unwrap()
}

/// A copy of record `rel` cut after `plies` moves (header, comments and the
/// start position kept), so that tests using the real depth-1 search stay
/// quick. Multi-game files keep every game, each cut.
fn short(rel: &str, plies: usize, dir: &Path) -> PathBuf {
    let text = String::from_utf8_lossy(&std::fs::read(sample(rel)).unwrap()).into_owned();
    let mut out = String::new();
    let mut moves = 0;
    for line in text.lines() {
        let t = line.trim_start_matches('\u{feff}');
        if t == "/" {
            out.push_str("%CHUDAN\n/\n");
            moves = 0;
            continue;
        }
        let is_move = (t.starts_with('+') || t.starts_with('-')) && t.len() >= 7;
        if is_move {
            moves += 1;
        }
        if (moves > plies && (is_move || t.starts_with("'**")))
            || t.starts_with('%')
            || (moves >= plies && t.starts_with('T'))
        {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("%CHUDAN\n");
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(Path::new(rel).file_name().unwrap());
    std::fs::write(&path, out).unwrap();
    path
}

/// Every file below `dir` (relative path -> bytes).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn svm_files(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir)
        .into_keys()
        .filter(|p| p.extension().is_some_and(|e| e == "svm"))
        .map(|p| dir.join(p))
        .collect()
}

#[test]
fn rows_are_every_legal_move_with_the_right_features_and_targets() {
    let out = fresh_dir("rows");
    let src = fresh_dir("rows-in");
    let inputs = [
        short("pro/kifu25654.csa", 30, &src.join("pro")),
        short("multi/selfplay_0013_0014.csa", 30, &src.join("multi")),
    ];
    let s = run(&inputs, &out, &ExtractOptions::default());
    assert_eq!((s.games_written, s.games_skipped), (3, 0));

    // the records, parsed independently by rsshogi
    let mut records = Vec::new();
    for f in &inputs {
        records.extend(csa::parse_csa_games_bytes(&std::fs::read(f).unwrap()).unwrap());
    }
    let files = svm_files(&out);
    assert_eq!(files.len(), 3);
    let mut total_rows = 0;
    for (svm, record) in files.iter().zip(&records) {
        let side: GameMeta =
            serde_json::from_slice(&std::fs::read(format!("{}.json", svm.display())).unwrap())
                .unwrap();
        let rows = libsvm::read_file(svm).unwrap().pairs();
        assert_eq!(side.rows, rows.len());
        assert_eq!(side.bytes, std::fs::metadata(svm).unwrap().len());
        assert_eq!(
            side.scheme.num_features,
            RelationEncoding::Value.num_features()
        );

        let mut pos = position_from_sfen(record.init_position_sfen()).unwrap();
        pos.init_stack();
        let moves: Vec<_> = record.main_moves().map(|m| m.mv()).collect();
        assert_eq!(side.positions.len(), moves.len());
        let mut scorer = SiblingScorer::new(Arc::new(Material));
        let mut row = 0;
        for (mv, p) in moves.iter().zip(&side.positions) {
            let mut legal = Move32List::new();
            generate_legal_all_move32(&pos, &mut legal);
            assert_eq!(p.first_row, row);
            assert_eq!(p.num_rows, legal.len());
            assert_eq!(p.game_move, mv.to_usi());
            let game = legal.iter().position(|m| m.to_move() == *mv).unwrap();
            assert_eq!(p.game_row, row + game);

            let mut scores = Vec::new();
            for (k, &m) in legal.iter().enumerate() {
                pos.apply_move32(m);
                scores.push(scorer.score(&mut pos));
                let want: Vec<(u32, f64)> = features(&pos, RelationEncoding::Value)
                    .into_iter()
                    .map(|(i, v)| (i + 1, f64::from(v)))
                    .collect();
                assert_eq!(rows[row + k].1, want, "row {}", row + k);
                pos.undo_move32(m).unwrap();
            }
            let want = targets(&scores, game, 100);
            for (k, t) in want.iter().enumerate() {
                assert_eq!(rows[row + k].0, f64::from(*t) / 10000.0);
            }
            // the game move's row has the largest target of its position
            let best = rows[row..row + legal.len()]
                .iter()
                .map(|r| r.0)
                .fold(f64::MIN, f64::max);
            assert_eq!(rows[p.game_row].0, best);
            row += legal.len();
            pos.apply_move32(pos.move32_from_move(*mv));
        }
        assert_eq!(row, rows.len());
        total_rows += row;
    }
    assert_eq!(s.rows, total_rows);

    let meta: RunMeta =
        serde_json::from_slice(&std::fs::read(out.join("extract.json")).unwrap()).unwrap();
    assert_eq!(meta.scheme.scheme, "attack2");
    assert_eq!(meta.scheme.label_scale, 10000.0);
    assert_eq!(meta.scheme.relation_encoding, "value");
}

#[test]
fn output_is_identical_for_one_and_two_threads() {
    let (a, b) = (fresh_dir("det1"), fresh_dir("det2"));
    let src = fresh_dir("det-in");
    for n in 1..=8 {
        short(&format!("selfplay/{n:04}.csa"), 24, &src);
    }
    let inputs = [src];
    let one = ExtractOptions {
        jobs: Some(1),
        ..Default::default()
    };
    let two = ExtractOptions {
        jobs: Some(2),
        ..Default::default()
    };
    run(&inputs, &a, &one);
    run(&inputs, &b, &two);
    let (mut sa, mut sb) = (snapshot(&a), snapshot(&b));
    // the run summary holds the elapsed time; everything else must match
    let meta = PathBuf::from("extract.json");
    assert!(sa.remove(&meta).is_some() && sb.remove(&meta).is_some());
    assert_eq!(sa.len(), 16);
    assert!(sa == sb, "outputs differ between 1 and 2 threads");
}

/// Shards 0/3, 1/3 and 2/3, each into its own folder, are together the
/// whole run: every game file and sidecar, byte for byte, each in one shard
/// only; their row counts add up to the whole run's.
#[test]
fn shards_together_are_the_whole_run() {
    let src = fresh_dir("shard-in");
    for n in 1..=8 {
        short(&format!("selfplay/{n:04}.csa"), 16, &src);
    }
    let inputs = [src];
    let whole_dir = fresh_dir("shard-whole");
    let whole = run(&inputs, &whole_dir, &ExtractOptions::default());
    let mut want = snapshot(&whole_dir);
    let meta = want.remove(&PathBuf::from("extract.json")).unwrap();
    let mut union = BTreeMap::new();
    let (mut rows, mut written) = (0, Vec::new());
    for index in 0..3 {
        let dir = fresh_dir(&format!("shard-{index}"));
        let shard = Shard { index, count: 3 };
        let s = run(
            &inputs,
            &dir,
            &ExtractOptions {
                shard: Some(shard),
                ..Default::default()
            },
        );
        written.push(s.games_written);
        rows += s.rows;
        let mut got = snapshot(&dir);
        // The scheme without totals; the shard's totals beside it.
        let shard_meta: RunMeta =
            serde_json::from_slice(&got.remove(&PathBuf::from("extract.json")).unwrap()).unwrap();
        let whole_meta: RunMeta = serde_json::from_slice(&meta).unwrap();
        assert_eq!(shard_meta.scheme, whole_meta.scheme);
        assert!(shard_meta.summary.is_none());
        let totals = PathBuf::from(format!("extract.shard-{index}-of-3.json"));
        assert!(got.remove(&totals).is_some(), "{totals:?}");
        for (path, bytes) in got {
            assert!(
                union.insert(path.clone(), bytes).is_none(),
                "{path:?} twice"
            );
        }
    }
    // Games go round: shard i has the i-th, (i+3)-th, … of the run's.
    let n = whole.games_written;
    assert_eq!(
        written,
        (0..3)
            .map(|i| n / 3 + usize::from(i < n % 3))
            .collect::<Vec<_>>()
    );
    assert_eq!(want.len(), 2 * n);
    assert!(n >= 6, "{n} games");
    assert!(union == want, "the shards differ from the whole run");
    assert_eq!(rows, whole.rows);
}

#[test]
fn resume_redoes_only_missing_or_damaged_games() {
    let out = fresh_dir("resume");
    let src = fresh_dir("resume-in");
    for f in std::fs::read_dir(sample("misc")).unwrap() {
        let name = f.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".csa") {
            short(&format!("misc/{name}"), 20, &src);
        }
    }
    let inputs = [src];
    let first = run(&inputs, &out, &ExtractOptions::default());
    assert_eq!(first.games_written, 5);
    let before = snapshot(&out);
    let files = svm_files(&out);
    std::fs::remove_file(&files[0]).unwrap();
    let damaged = std::fs::read(&files[1]).unwrap();
    std::fs::write(&files[1], &damaged[..damaged.len() / 2]).unwrap();

    let resume = ExtractOptions {
        resume: true,
        ..Default::default()
    };
    let again = run(&inputs, &out, &resume);
    // The summary counts the whole output; 3 games of it were already there.
    assert_eq!((again.games_resumed, again.games_written), (3, 5));
    assert_eq!(
        (again.rows, again.bytes, again.nnz),
        (first.rows, first.bytes, first.nnz)
    );
    assert_eq!(again.positions, first.positions);
    assert!(again.rows_resumed > 0 && again.rows_resumed < again.rows);
    let after = snapshot(&out);
    for (k, v) in &before {
        if k != Path::new("extract.json") {
            assert!(after[k] == *v, "{} differs after resume", k.display());
        }
    }

    // resuming with other settings is refused, naming the metadata file
    let other = ExtractOptions {
        resume: true,
        margin: 50,
        ..Default::default()
    };
    let err = extract(&inputs, &out, &other, Arc::new(Material)).unwrap_err();
    assert!(
        err.to_string().contains("extract.json: written with"),
        "{err}"
    );
}

#[test]
fn a_sample_of_positions_gives_exactly_their_rows() {
    let src = fresh_dir("sample-in");
    for n in 1..=8 {
        short(&format!("selfplay/{n:04}.csa"), 40, &src);
    }
    let inputs = [src];
    let (all, some) = (fresh_dir("sample-all"), fresh_dir("sample-some"));
    run(&inputs, &all, &ExtractOptions::default());
    let third = ExtractOptions {
        sample: 0.3,
        ..Default::default()
    };
    let s = run(&inputs, &some, &third);
    assert_eq!(s.games_written, 8);
    let (mut positions, mut taken) = (0, 0);
    for svm in svm_files(&all) {
        let sampled = some.join(svm.strip_prefix(&all).unwrap());
        let side = |p: &Path| -> GameMeta {
            serde_json::from_slice(&std::fs::read(format!("{}.json", p.display())).unwrap())
                .unwrap()
        };
        let (full, part) = (side(&svm), side(&sampled));
        assert_eq!(part.scheme.sample, 0.3);
        let full_text = std::fs::read_to_string(&svm).unwrap();
        let full_rows: Vec<&str> = full_text.lines().collect();
        let part_text = std::fs::read_to_string(&sampled).unwrap();
        let part_rows: Vec<&str> = part_text.lines().collect();
        assert_eq!(part.rows, part_rows.len());
        // every sampled position is one of the game's, with the same rows
        // (renumbered from 0) and the same game move
        let mut next_row = 0;
        for p in &part.positions {
            let f = full.positions.iter().find(|f| f.ply == p.ply).unwrap();
            assert_eq!((p.num_rows, p.first_row), (f.num_rows, next_row));
            assert_eq!(p.game_row - p.first_row, f.game_row - f.first_row);
            assert_eq!(
                part_rows[p.first_row..p.first_row + p.num_rows],
                full_rows[f.first_row..f.first_row + f.num_rows],
                "ply {}",
                p.ply
            );
            next_row += p.num_rows;
        }
        positions += full.positions.len();
        taken += part.positions.len();
    }
    assert_eq!(positions, 8 * 40);
    let share = taken as f64 / positions as f64;
    assert!(
        (0.2..0.4).contains(&share),
        "sampled {taken} of {positions}"
    );

    // a run with another sample is not resumed into this one
    let other = ExtractOptions {
        resume: true,
        sample: 0.5,
        ..Default::default()
    };
    let err = extract(&inputs, &some, &other, Arc::new(Material)).unwrap_err();
    assert!(err.to_string().contains("written with"), "{err}");
}

#[test]
fn bad_records_are_reported_and_the_run_goes_on() {
    let dir = fresh_dir("bad-in");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::rename(short("selfplay/0001.csa", 20, &dir), dir.join("good.csa")).unwrap();
    std::fs::write(
        dir.join("illegal.csa"),
        "PI\n+\n+7776FU\n-3334FU\n+7776FU\n",
    )
    .unwrap();
    std::fs::write(dir.join("junk.kif"), "this is not a record\n").unwrap();
    std::fs::write(dir.join("notes.txt"), "ignored: not a record extension\n").unwrap();
    let out = fresh_dir("bad-out");
    let s = run(std::slice::from_ref(&dir), &out, &ExtractOptions::default());
    assert_eq!(s.files, 3);
    assert_eq!(
        (s.games_complete, s.games_truncated, s.games_skipped),
        (1, 1, 1)
    );
    assert_eq!(s.games_written, 2);
    let illegal = s
        .problems
        .iter()
        .find(|p| p.contains("illegal.csa"))
        .unwrap();
    assert!(
        illegal.ends_with(
            "illegal.csa:5: game 1: illegal move \"+7776FU\" (move 3); its first 2 moves are used"
        ),
        "{illegal}"
    );
    let junk = s.problems.iter().find(|p| p.contains("junk.kif")).unwrap();
    assert!(junk.contains("junk.kif:1: game 1: "), "{junk}");
    assert_eq!(s.problems_by_kind.values().sum::<usize>(), 2);
}

/// The same game in two files (here also under another name) is
/// extracted once, and the summary names the repeat and its first copy.
#[test]
fn a_game_in_two_files_is_extracted_once() {
    let dir = fresh_dir("dup-in");
    let first = short("selfplay/0001.csa", 12, &dir.join("a"));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::copy(&first, dir.join("b/copy.csa")).unwrap();
    // 0002 opens as 0001 does: cut at another ply, it is another game
    short("selfplay/0002.csa", 14, &dir.join("b"));
    let out = fresh_dir("dup-out");
    let s = run(std::slice::from_ref(&dir), &out, &ExtractOptions::default());
    assert_eq!((s.files, s.games_complete), (3, 3));
    assert_eq!((s.games_duplicate, s.games_written), (1, 2));
    assert_eq!(svm_files(&out).len(), 2);
    assert!(
        s.duplicates[0].contains("copy.csa game 1 repeats ")
            && s.duplicates[0].contains("0001.csa game 1"),
        "{:?}",
        s.duplicates
    );
}

// LIBLINEAR writes one weight line per feature (5M): ~15-25 s here
#[test]
#[ignore]
fn liblinear_reads_an_extracted_file() {
    if required::tool("liblinear-train").is_none() {
        return;
    }
    let out = fresh_dir("liblinear");
    run(
        &[sample("misc/sugyan_floodgate.csa")],
        &out,
        &ExtractOptions::default(),
    );
    // the first 20 positions' rows keep the test quick (5M-wide weights)
    let full = std::fs::read_to_string(&svm_files(&out)[0]).unwrap();
    let side: GameMeta = serde_json::from_slice(
        &std::fs::read(format!("{}.json", svm_files(&out)[0].display())).unwrap(),
    )
    .unwrap();
    let keep = side.positions[20].first_row;
    let head: String = full.lines().take(keep).flat_map(|l| [l, "\n"]).collect();
    let svm = &out.join("head.svm");
    std::fs::write(svm, head).unwrap();
    let model = out.join("m.model");
    let st = std::process::Command::new("liblinear-train")
        .args(["-s", "11", "-q"])
        .arg(svm)
        .arg(&model)
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&model).unwrap();
    let nr: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("nr_feature "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        nr > 1000 && nr <= RelationEncoding::Value.num_features(),
        "{nr}"
    );
    let pred = out.join("pred");
    let st = std::process::Command::new("liblinear-predict")
        .arg(svm)
        .arg(&model)
        .arg(&pred)
        .output()
        .unwrap();
    assert!(st.status.success());
    let rows = std::fs::read_to_string(svm).unwrap().lines().count();
    assert_eq!(std::fs::read_to_string(pred).unwrap().lines().count(), rows);
}

#[test]
fn cli_names_a_missing_input() {
    let out = fresh_dir("cli");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_niwatori"))
        .args(["extract", "no/such/dir", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no/such/dir: No such file or directory"),
        "{err}"
    );
}

#[test]
fn files_with_one_name_in_two_folders_need_a_root() {
    let src = fresh_dir("root-in");
    let (x, y) = (src.join("x"), src.join("y"));
    // one name, two games (cut at different plies: the same game twice
    // would be extracted once)
    let files = [
        short("selfplay/0001.csa", 4, &x),
        short("selfplay/0001.csa", 5, &y),
    ];
    // named by their own file name, the two records would overwrite each other
    let clash = extract(
        &files,
        &fresh_dir("root-clash"),
        &ExtractOptions::default(),
        Arc::new(Material),
    );
    assert!(
        clash
            .unwrap_err()
            .to_string()
            .contains("both map to output")
    );
    // named by their path below the common root, both are kept
    let out = fresh_dir("root-out");
    let options = ExtractOptions {
        root: Some(src.clone()),
        ..Default::default()
    };
    run(&files, &out, &options);
    assert!(out.join("x/0001.csa.0.svm").is_file());
    assert!(out.join("y/0001.csa.0.svm").is_file());
}

/// `--features-at leaf`: the same rows, each describing the end of its
/// sibling search's principal variation (seen from its side to move), its
/// target the sibling's label for the player not to move at the leaf, which
/// is that leaf's material balance.
#[test]
fn leaf_rows_describe_the_principal_variation_leaf() {
    use niwatori::eval::Evaluator;
    use niwatori::rows::FeaturesAt;

    let src = fresh_dir("leaf-in");
    let input = [short("pro/kifu25654.csa", 40, &src)];
    let (sib, leaf) = (fresh_dir("leaf-sibling"), fresh_dir("leaf-leaf"));
    run(&input, &sib, &ExtractOptions::default());
    let options = ExtractOptions {
        features_at: FeaturesAt::Leaf,
        ..Default::default()
    };
    run(&input, &leaf, &options);
    let meta: RunMeta =
        serde_json::from_slice(&std::fs::read(leaf.join("extract.json")).unwrap()).unwrap();
    assert_eq!(meta.scheme.features_at, FeaturesAt::Leaf);

    let read = |dir: &Path| {
        let f = svm_files(dir);
        assert_eq!(f.len(), 1);
        libsvm::read_file(&f[0]).unwrap().pairs()
    };
    let (sib_rows, leaf_rows) = (read(&sib), read(&leaf));
    assert_eq!(sib_rows.len(), leaf_rows.len());

    let record = &csa::parse_csa_games_bytes(&std::fs::read(&input[0]).unwrap()).unwrap()[0];
    let mut pos = position_from_sfen(record.init_position_sfen()).unwrap();
    pos.init_stack();
    let mut scorer = SiblingScorer::new(Arc::new(Material));
    let (mut row, mut differ, mut quiet, mut exact) = (0, 0, 0, 0);
    for mv in record.main_moves().map(|m| m.mv()) {
        let mut legal = Move32List::new();
        generate_legal_all_move32(&pos, &mut legal);
        scorer.start_position();
        for &m in legal.iter() {
            pos.apply_move32(m);
            let mover = pos.turn().flip();
            let score = scorer.score(&mut pos);
            let pv = scorer.pv().to_vec();
            assert!(!pv.is_empty(), "a reply or a mate: row {row}");
            for &p in &pv {
                pos.apply_move32(p);
            }
            let want: Vec<(u32, f64)> = features(&pos, RelationEncoding::Value)
                .into_iter()
                .map(|(i, v)| (i + 1, f64::from(v)))
                .collect();
            assert_eq!(leaf_rows[row].1, want, "row {row}");
            // the mover's label, for whoever is not to move at the leaf
            let sign = if pos.turn() == mover { -1.0 } else { 1.0 };
            assert_eq!(
                leaf_rows[row].0,
                sign * sib_rows[row].0,
                "label of row {row}"
            );
            differ += usize::from(leaf_rows[row].1 != sib_rows[row].1);
            if score.abs() < 10_000 {
                quiet += 1;
                let for_mover = if pos.turn() == mover { 1 } else { -1 } * Material.evaluate(&pos);
                exact += usize::from(for_mover == score);
            }
            for &p in pv.iter().rev() {
                pos.undo_move32(p).unwrap();
            }
            pos.undo_move32(m).unwrap();
            row += 1;
        }
        pos.apply_move32(pos.move32_from_move(mv));
    }
    assert_eq!(row, leaf_rows.len());
    assert!(differ * 2 > row, "{differ} of {row} rows moved to a leaf");
    assert_eq!(exact, quiet, "labels that are the leaf's material");
}

/// `--base material`: each row's target is its score less the row
/// position's material for the same player. With material labels at the
/// leaf that leaves exactly 0 for every sibling labelled by its own score,
/// the margin-raised or pushed-down residual for the others, and the mates
/// at the clamp where `train --drop-clamped` finds them.
#[test]
fn material_base_rows_hold_what_material_misses() {
    use niwatori::rows::{Base, FeaturesAt};

    let src = fresh_dir("base-in");
    let input = [short("pro/kifu25654.csa", 60, &src)];
    let (plain, over) = (fresh_dir("base-none"), fresh_dir("base-material"));
    let leaf = ExtractOptions {
        features_at: FeaturesAt::Leaf,
        margin: 200,
        ..Default::default()
    };
    run(&input, &plain, &leaf);
    let options = ExtractOptions {
        base: Base::Material,
        ..leaf.clone()
    };
    run(&input, &over, &options);
    let meta: RunMeta =
        serde_json::from_slice(&std::fs::read(over.join("extract.json")).unwrap()).unwrap();
    assert_eq!(meta.scheme.base, Base::Material);
    let plain_meta = std::fs::read_to_string(plain.join("extract.json")).unwrap();
    assert!(
        !plain_meta.contains("\"base\""),
        "the default stays out of metadata"
    );

    let read = |dir: &Path| {
        let f = svm_files(dir);
        assert_eq!(f.len(), 1);
        libsvm::read_file(&f[0]).unwrap().pairs()
    };
    let (plain_rows, over_rows) = (read(&plain), read(&over));
    assert_eq!(plain_rows.len(), over_rows.len());
    let (mut zero, mut raised, mut clamped) = (0, 0, 0);
    for (k, (p, o)) in plain_rows.iter().zip(&over_rows).enumerate() {
        assert_eq!(p.1, o.1, "row {k}: the same features");
        if p.0.abs() >= 1.0 {
            assert_eq!(o.0, p.0, "row {k}: a mate keeps its clamped target");
            clamped += 1;
        } else if o.0 == 0.0 {
            zero += 1;
        } else {
            // only the margin's moves (the game move raised, siblings pushed
            // below it) are off material at a leaf labelled by material
            assert!(o.0.abs() >= 0.0199, "row {k}: residual {} of {}", o.0, p.0);
            raised += 1;
        }
    }
    let positions = 60;
    assert!(zero > 20 * positions, "{zero} rows at material");
    assert!(
        raised >= positions,
        "{raised}: the game move of each position at least"
    );
    assert!(raised < zero / 4, "{raised} rows off material");
    eprintln!("{zero} rows at material, {raised} off it, {clamped} mates");
}

/// `bench extract` runs extraction's own code with other row sinks: each
/// stage sees exactly the rows, non-zeros and bytes that `extract` writes.
#[test]
fn the_extract_bench_counts_what_extract_writes() {
    use niwatori::bench::extract::{Stage, bench};
    let src = fresh_dir("bench-in");
    for n in 1..=3 {
        short(&format!("selfplay/{n:04}.csa"), 20, &src);
    }
    let inputs = [src];
    let options = ExtractOptions {
        jobs: Some(2),
        ..Default::default()
    };
    let s = run(&inputs, &fresh_dir("bench-out"), &options);
    let scorer = || SiblingScorer::new(Arc::new(Material));
    let reports = bench(&inputs, &options, 1, None, &[scorer, scorer]).unwrap();
    assert_eq!(reports.len(), 2, "one report a scorer");
    let r = &reports[0];
    assert_eq!((r.games, r.positions), (3, s.positions));
    let stages: Vec<Stage> = r.stages.iter().map(|f| f.stage).collect();
    assert_eq!(stages, [Stage::Score, Stage::Features, Stage::Write]);
    for f in &r.stages {
        assert_eq!(f.rows, s.rows, "{:?}", f.stage);
        let nnz = (f.nnz_per_row * f.rows as f64).round() as usize;
        let bytes = (f.bytes_per_row * f.rows as f64).round() as u64;
        match f.stage {
            Stage::Score => assert_eq!((nnz, bytes), (0, 0)),
            Stage::Features => assert_eq!((nnz, bytes), (s.nnz, 0)),
            Stage::Write => assert_eq!((nnz, bytes), (s.nnz, s.bytes)),
        }
    }
}

/// `--labels record`: one row a scored position, the game move's sibling,
/// its target the record's `'**` score for the mover; `record-siblings`:
/// every sibling, the game move's target that score raised by the margin.
#[test]
fn record_labels_are_the_games_own_scores() {
    use niwatori::rows::Labels;

    let src = fresh_dir("record-in");
    let input = [short("selfplay/0001.csa", 60, &src)];
    // the scores, read independently: the first number of a `'**` comment,
    // Black's view, for the move just before it
    let text = std::fs::read_to_string(&input[0]).unwrap();
    let mut recorded: Vec<Option<i32>> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("'**") {
            let v: i32 = rest.split_whitespace().next().unwrap().parse().unwrap();
            *recorded.last_mut().unwrap() = Some(v);
        } else if (line.starts_with('+') || line.starts_with('-')) && line.len() >= 7 {
            recorded.push(None);
        }
    }
    let scored = recorded.iter().filter(|s| s.is_some()).count();
    assert!(
        scored >= 30,
        "{scored} scored moves in {}",
        input[0].display()
    );

    let read = |dir: &Path| {
        let f = svm_files(dir);
        assert_eq!(f.len(), 1);
        libsvm::read_file(&f[0]).unwrap().pairs()
    };
    let (alone, all) = (fresh_dir("record-alone"), fresh_dir("record-siblings"));
    let with = |labels| ExtractOptions {
        labels,
        margin: 100,
        ..Default::default()
    };
    run(&input, &alone, &with(Labels::Record));
    run(&input, &all, &with(Labels::RecordSiblings));
    let (alone_rows, all_rows) = (read(&alone), read(&all));
    assert_eq!(alone_rows.len(), scored);

    let record = &csa::parse_csa_games_bytes(text.as_bytes()).unwrap()[0];
    let mut pos = position_from_sfen(record.init_position_sfen()).unwrap();
    pos.init_stack();
    let mut scorer = SiblingScorer::new(Arc::new(Material));
    let (mut row, mut sibling_row) = (0, 0);
    for (i, mv) in record.main_moves().map(|m| m.mv()).enumerate() {
        let mut legal = Move32List::new();
        generate_legal_all_move32(&pos, &mut legal);
        let game = legal.iter().position(|m| m.to_move() == mv).unwrap();
        let mover_sign = if pos.turn() == rsshogi::types::Color::BLACK {
            1
        } else {
            -1
        };
        if let Some(black_view) = recorded[i] {
            let g = (mover_sign * black_view).clamp(-10_000, 10_000);
            let scaled = |cp: i32| f64::from(cp.clamp(-10_000, 10_000)) / 10_000.0;
            scorer.start_position();
            for (k, &m) in legal.iter().enumerate() {
                pos.apply_move32(m);
                let v = scorer.score(&mut pos);
                let want: Vec<(u32, f64)> = features(&pos, RelationEncoding::Value)
                    .into_iter()
                    .map(|(i, v)| (i + 1, f64::from(v)))
                    .collect();
                pos.undo_move32(m).unwrap();
                // record-siblings: the game move at the record's score plus
                // the margin, a sibling the search scores above it pushed
                // below it, the others as searched
                let target = if k == game {
                    g + 100
                } else if v.clamp(-10_000, 10_000) > g {
                    g - 100
                } else {
                    v
                };
                assert_eq!(
                    all_rows[sibling_row + k],
                    (scaled(target), want.clone()),
                    "ply {}",
                    i + 1
                );
                if k == game {
                    assert_eq!(
                        alone_rows[row],
                        (scaled(g), want),
                        "row {row}, ply {}",
                        i + 1
                    );
                }
            }
            row += 1;
            sibling_row += legal.len();
        }
        pos.apply_move32(legal[game]);
    }
    assert_eq!((row, sibling_row), (alone_rows.len(), all_rows.len()));
}
