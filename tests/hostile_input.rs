//! Hostile input, round 4 (issue #40), each as the case that broke: a
//! found experiment file that erased a device, `check` approving what
//! exhausts the host, an imported store that panicked `check` and `run`,
//! foreign characters in exports and reports, and smaller faults.

use std::path::{Path, PathBuf};

use crate::hostile::{crafted, mock_experiment, text};
use crate::util::Lab;

/// A mock experiment named `name` on the directory `dir` of the lab.
fn mock_on(lab: &Lab, name: &str, dir: &str) -> PathBuf {
    let data = lab.path().join(dir);
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        &format!("{name}.toml"),
        &format!(
            "name = \"{name}\"\n[plan]\nrepetitions = 2\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"1ms\"\n",
            data.display()
        ),
    )
}

/// `storlab ARGS` on the store `db` of the lab.
fn on(lab: &Lab, db: &Path, args: &[&str]) -> std::process::Output {
    lab.cmd().env("STORLAB_DB", db).args(args).output().unwrap()
}

fn assert_no_panic(what: &str, out: &std::process::Output) {
    let (o, e) = text(out);
    assert!(
        !e.contains("panicked") && out.status.code() != Some(101),
        "{what} panicked:\n{o}\n{e}"
    );
}

/// Item 6: an imported store whose campaign began after its runs, whose
/// run lasted 1e300 s or 1e9 s, neither panics `check` nor `run` (which
/// panicked after provisioning), and the estimate leaves the absurd
/// history out with a note rather than saying `estimated 37838871m26s`.
#[test]
fn item6_absurd_history_is_left_out_of_estimates_with_a_note() {
    let lab = Lab::new();
    let before = mock_experiment(&lab, 2);
    let source = lab.path().join("source.db");
    let out = on(&lab, &source, &["run", "--quiet", before.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    // The same kinds on another directory: what the estimate scales.
    let other = mock_on(&lab, "other", "elsewhere");
    let cases = [
        (
            "late.db",
            "UPDATE campaigns SET started_at = '2999-01-01T00:00:00Z'",
            "its span of -3.1e10 s",
        ),
        (
            "huge.db",
            "UPDATE runs SET duration_s = 1e300",
            "run 1 of 1.0e300 s",
        ),
        (
            "long.db",
            "UPDATE runs SET duration_s = 1e9",
            "run 1 of 1.0e9 s",
        ),
        (
            "nan.db",
            "UPDATE runs SET duration_s = -5, started_at = 'not a time'",
            "run 1 of -5.0 s",
        ),
    ];
    for (name, sql, said) in cases {
        let hostile = crafted(&lab, &source, name, sql);
        let db = lab.path().join(format!("into-{name}"));
        let out = on(&lab, &db, &["import", hostile.to_str().unwrap()]);
        assert_no_panic(&format!("{name}: import"), &out);
        // What import refuses (a negative duration) a store can still
        // hold: then it is the store itself.
        let db = match out.status.success() {
            true => db,
            false => hostile,
        };
        for exp in [&other, &before] {
            let out = on(&lab, &db, &["check", exp.to_str().unwrap()]);
            assert_no_panic(&format!("{name}: check"), &out);
            assert!(out.status.success(), "{name}: {out:?}");
            let (o, e) = text(&out);
            assert!(
                e.contains("the estimate leaves out") && e.contains(said),
                "{name}: no note on {said}:\n{e}"
            );
            // Two runs of 1 ms: seconds, not `37838871m26s`.
            let line = o.lines().find(|l| l.contains(" runs, estimated ")).unwrap();
            let total = line.split(" runs, estimated ").nth(1).unwrap();
            let total = total.split(" (").next().unwrap();
            let total = total.trim_end_matches(" at this load");
            assert!(
                total.ends_with(" s") || total.ends_with(" ms"),
                "{name}: an estimate learned from absurd history: {line}"
            );
        }
        let out = on(&lab, &db, &["run", "--quiet", other.to_str().unwrap()]);
        assert_no_panic(&format!("{name}: run"), &out);
        assert!(out.status.success(), "{name}: {out:?}");
        let list = String::from_utf8_lossy(&on(&lab, &db, &["list"]).stdout).into_owned();
        assert!(!list.contains("interrupted"), "{name}: {list}");
    }
}

/// Item 9: a campaign whose only pair failed prints that pair's row (it
/// printed a header with no rows) and where its failures were (it printed
/// `failed runs 2 of 2 runs, `); `COLUMNS=1` lays out as the narrowest
/// width storlab fits to, not one character per line; a spool beside the
/// store is refused as an output file.
#[test]
fn item9_a_failed_pair_narrow_columns_and_the_spool() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let exp = lab.file(
        "failing.toml",
        &format!(
            "name = \"failing\"\n[plan]\nrepetitions = 2\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"evil\"\nkind = \"command\"\ncommand = [\"false\"]\n",
            data.display()
        ),
    );
    let out = lab.run(&["run", "--quiet", exp.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let out = lab.run(&["show"]);
    let (o, e) = text(&out);
    let row = o
        .lines()
        .find(|l| l.starts_with("evil "))
        .unwrap_or_else(|| panic!("no row:\n{o}"));
    assert!(row.contains("all 2 runs failed"), "{row}");
    let failed = e.lines().find(|l| l.contains("failed runs")).unwrap();
    assert!(
        failed.trim_end().ends_with("2 of 2 runs, evil on d"),
        "{failed:?}"
    );
    assert!(!e.contains(", \n"), "{e}");
    // One character per line: lines of one character.
    let out = lab.cmd().env("COLUMNS", "1").arg("show").output().unwrap();
    let (o, e) = text(&out);
    let one_char = format!("{o}{e}")
        .lines()
        .filter(|l| l.trim().chars().count() == 1)
        .count();
    assert_eq!(one_char, 0, "{o}{e}");
    assert!(o.starts_with("campaign 1 `failing` (finished)"), "{o}");
    // The spool of a campaign, by its name and through a symlink.
    let spool = format!("{}.spool-1", lab.db().display());
    std::fs::write(&spool, b"a spooled run\n").unwrap();
    std::os::unix::fs::symlink(&spool, lab.path().join("innocent.csv")).unwrap();
    for target in [
        spool.as_str(),
        "innocent.csv",
        &format!("{}.spool-7", lab.db().display()),
    ] {
        let out = lab.run(&["export", "--format", "csv", "-o", target]);
        assert!(!out.status.success(), "{target} accepted");
        assert!(text(&out).1.contains("spool"), "{out:?}");
    }
    assert_eq!(std::fs::read(&spool).unwrap(), b"a spooled run\n");
}

/// The experiment of item 1: `quick` on `cwd` and, with `device`, a
/// target called `tmpfs` that is that block device, erased by a write.
fn found_experiment(data: &Path, device: Option<&str>) -> String {
    let tmpfs = device.map_or(String::new(), |d| {
        format!("[[target]]\nname = \"tmpfs\"\nkind = \"block\"\ndevice = \"{d}\"\nallow_destroy = true\n")
    });
    format!(
        "name = \"quick\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"cwd\"\nkind = \"dir\"\npath = \"{}\"\n{tmpfs}\
         [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nbs = \"4k\"\nsize = \"64k\"\n",
        data.display()
    )
}

/// Item 1: a found `./experiment.toml` owned by another user (`nobody`)
/// in a sticky world-writable directory, whose `tmpfs` is a block device
/// with `allow_destroy`, is announced with its path and owner (even with
/// `-q`) and refused by `run` and `check`, saying how to run it; the
/// device keeps its data. Owned by the caller in a private directory, it
/// is still refused while it erases a device, which `check` names; named
/// on the command line, it runs.
#[test]
#[ignore = "needs root"]
fn item1_a_found_file_is_announced_and_trusted_only_when_safe() {
    require_root!();
    let lab = Lab::new();
    let dev = crate::block_target::LoopDev::new(&lab, 8 << 20);
    std::fs::write(&dev.image, vec![0xa5u8; 8 << 20]).unwrap();
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let shared = lab.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let mode = |m| std::os::unix::fs::PermissionsExt::from_mode(m);
    std::fs::set_permissions(&shared, mode(0o1777)).unwrap();
    let file = shared.join("experiment.toml");
    std::fs::write(&file, found_experiment(&data, Some(&dev.dev))).unwrap();
    std::os::unix::fs::chown(&file, Some(65534), Some(65534)).unwrap();
    let here = |args: &[&str]| lab.cmd().current_dir(&shared).args(args).output().unwrap();
    for args in [
        vec!["run"],
        vec!["run", "-q"],
        vec!["check"],
        vec!["-q", "check"],
    ] {
        let out = here(&args);
        let (o, e) = text(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {o}{e}");
        let real = std::fs::canonicalize(&file).unwrap();
        assert!(
            e.contains(&format!("using {} (owned by nobody)", real.display())),
            "{args:?}: {e}"
        );
        for said in [
            "is owned by nobody (uid 65534), neither you (root) nor root",
            "is writable by everyone (mode 1777, sticky)",
            &format!("it would erase {} (target `tmpfs`, block)", dev.dev),
            &format!("name it to run it: `storlab run {}`", real.display()),
        ] {
            assert!(e.contains(said), "{args:?}: no {said:?} in {e}");
        }
    }
    assert!(!lab.db().exists() || crate::util::runs_in_store(&lab.db()) == 0);
    let image = std::fs::read(&dev.image).unwrap();
    assert!(image.iter().all(|&b| b == 0xa5), "the device was written");
    // Owned by root in a private directory: only the erasing stands, and
    // `check` names it.
    std::fs::set_permissions(&shared, mode(0o755)).unwrap();
    std::os::unix::fs::chown(&file, Some(0), Some(0)).unwrap();
    let out = here(&["check"]);
    let (o, e) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{o}{e}");
    assert!(
        o.contains(&format!(
            "destroys: will erase {} (target `tmpfs`, block)",
            dev.dev
        )),
        "{o}"
    );
    assert!(
        !e.contains("owned by nobody") && !e.contains("writable by"),
        "{e}"
    );
    assert!(e.contains("it would erase"), "{e}");
    // Named, it is checked as any file (the device still named) and runs.
    let out = here(&["check", "experiment.toml"]);
    let (o, e) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{o}{e}");
    assert!(o.contains("destroys: will erase"), "{o}");
    let out = here(&["run", "-q", "experiment.toml"]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(e.contains(&format!("will erase {}", dev.dev)), "{e}");
    // Without the erasing target, a found file of root's runs, announced.
    std::fs::write(&file, found_experiment(&data, None)).unwrap();
    let out = here(&["run", "-q"]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{o}{e}");
    assert!(e.contains("(owned by root)"), "{e}");
}

/// What every foreign text of the hostile store carries: ESC (a clear
/// screen), the C1 CSI, a right-to-left override, CR, BEL and a paragraph
/// separator.
const HOSTILE: &str =
    "char(27) || '[2J' || char(155) || '31m' || char(8238) || char(13) || char(7) || char(8233)";

/// No raw active character in `text` (line breaks and tabs aside).
fn assert_inert_text(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
        })
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?}:\n{text}");
}

/// A store of three campaigns whose every foreign text holds [`HOSTILE`]
/// — campaign, target and workload names, descriptions, tags, errors,
/// warnings — and whose durations and times cannot be (1e300 s, -5 s, a
/// time that is none, a campaign that began after it ended).
fn hostile_store(lab: &Lab) -> PathBuf {
    let db = crate::hostile::source_store(lab);
    let exp = mock_on(lab, "two", "data2");
    let text = std::fs::read_to_string(&exp).unwrap().replace(
        "[[workload]]",
        &format!(
            "[[target]]\nname = \"e\"\nkind = \"dir\"\npath = \"{}\"\n[[workload]]",
            lab.path().join("data2").display()
        ),
    );
    std::fs::write(&exp, text).unwrap();
    for tag in ["k=one", "k=two"] {
        let out = on(
            lab,
            &db,
            &["run", "--quiet", "--tag", tag, exp.to_str().unwrap()],
        );
        assert!(out.status.success(), "{out:?}");
    }
    let x = HOSTILE;
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(&format!(
        "UPDATE campaigns SET name = name || {x}, description = 'about ' || {x};
         UPDATE targets SET name = name || {x};
         UPDATE workloads SET name = name || {x};
         UPDATE campaign_facts SET value = value || {x} WHERE kind IN ('tag', 'host', 'version');
         INSERT INTO campaign_facts (campaign_id, kind, name, value) VALUES (2, 'tag', 'evil' || {x}, 'v' || {x});
         UPDATE warning_texts SET message = message || {x};
         UPDATE runs SET status = 'failed', error = 'it broke' || {x} WHERE id = (SELECT MAX(id) FROM runs WHERE campaign_id = 3);
         UPDATE runs SET duration_s = 1e300 WHERE id = (SELECT MIN(id) FROM runs WHERE campaign_id = 2);
         UPDATE runs SET duration_s = -5, started_at = 'not a time' WHERE id = (SELECT MAX(id) FROM runs WHERE campaign_id = 2);
         UPDATE campaigns SET started_at = '2999-01-01T00:00:00Z' WHERE id = 3;
         PRAGMA wal_checkpoint(TRUNCATE);"
    ))
    .unwrap();
    db
}

/// Item 8: one rule for foreign text in every output. The hostile store
/// goes through every command that reads a store, in every format, to
/// the terminal, a pipe and files: none panics, and no output holds a raw
/// control, C1 or bidirectional character (JSON escapes them as `\u…`
/// and still reads back as stored). Before, `export` wrote raw ESC, the
/// HTML report raw ESC, BEL and CR, the Markdown report and `show
/// --format json` a raw U+202E.
#[test]
fn item8_a_hostile_store_through_every_command_and_format() {
    let lab = Lab::new();
    let db = hostile_store(&lab);
    let out_dir = lab.path().join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let file = |name: &str| out_dir.join(name).display().to_string();
    let mock = mock_on(&lab, "fresh", "data3");
    let commands: Vec<Vec<String>> = [
        vec!["list"],
        vec!["list", "--where", "k=one"],
        vec!["show"],
        vec!["show", "1"],
        vec!["show", "2", "-v"],
        vec!["show", "3", "--warnings"],
        vec!["show", "3", "--format", "json"],
        vec!["show", "2", "--format", "json"],
        vec!["export"],
        vec!["export", "2", "--format", "json"],
        vec!["export", "--all"],
        vec!["export", "--all", "--format", "json"],
        vec!["export", "3", "--excel-safe"],
        vec!["report", "2", "--format", "md"],
        vec!["report", "3", "--format", "json"],
        vec!["report", "3", "--format", "csv"],
        vec!["report", "3", "--format", "html"],
        vec!["report", "2", "3", "--format", "md"],
        vec!["report", "2", "3", "--format", "json"],
        vec!["report", "2", "3", "--format", "html"],
        vec!["compare"],
        vec!["compare", "3", "--format", "json"],
        vec!["compare", "2", "3"],
        vec!["compare", "2", "3", "--format", "json"],
        vec!["compare", "2", "3", "--fail-on-regression", "1"],
        vec!["history"],
        vec!["history", "--format", "json"],
        vec!["history", "--by", "tag:k"],
        vec!["check", mock.to_str().unwrap()],
    ]
    .iter()
    .map(|a| a.iter().map(|s| s.to_string()).collect())
    .collect();
    let mut files = Vec::new();
    for (i, args) in commands.iter().enumerate() {
        let mut args = args.clone();
        // Each report and export also to a file of its format.
        let to_file = match args.first().map(String::as_str) {
            Some("report" | "export" | "history") => {
                let ext = match args.iter().position(|a| a == "--format") {
                    Some(p) => args[p + 1].clone(),
                    None if args[0] == "report" => "html".into(),
                    None if args[0] == "history" => "txt".into(),
                    None => "csv".into(),
                };
                Some(file(&format!("{i}.{ext}")))
            }
            _ => None,
        };
        for output in [None, to_file] {
            let mut a = args.clone();
            if let Some(o) = &output {
                a.extend(["-o".to_string(), o.clone()]);
            }
            let refs: Vec<&str> = a.iter().map(String::as_str).collect();
            let out = on(&lab, &db, &refs);
            assert_no_panic(&format!("{a:?}"), &out);
            assert!(matches!(out.status.code(), Some(0 | 1)), "{a:?}: {out:?}");
            crate::hostile::assert_inert(&format!("{a:?}"), &out);
            if let Some(o) = output {
                files.push(o);
            }
        }
        // At 80 columns, as a terminal shows it.
        args.insert(0, "--color".into());
        args.insert(1, "never".into());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = lab
            .cmd()
            .env("STORLAB_DB", &db)
            .env("COLUMNS", "80")
            .args(&refs)
            .output()
            .unwrap();
        assert_no_panic(&format!("{args:?} at 80 columns"), &out);
        crate::hostile::assert_inert(&format!("{args:?} at 80 columns"), &out);
    }
    let html = file("history.html");
    let out = on(&lab, &db, &["history", "-o", &html]);
    assert!(out.status.success(), "{out:?}");
    files.push(html);
    assert!(files.len() > 15, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert_inert_text(f, &text);
    }
    // JSON keeps the names as stored, escaped.
    let out = on(&lab, &db, &["export", "2", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let name = json["campaign"]["name"].as_str().unwrap();
    assert!(
        name.ends_with("\u{1b}[2J\u{9b}31m\u{202e}\r\u{7}\u{2029}"),
        "{name:?}"
    );
    // The store moves on: imported, forgotten, run into.
    let fresh = lab.path().join("fresh.db");
    for args in [
        vec!["import", db.to_str().unwrap()],
        vec!["forget", "--yes", "1"],
        vec!["run", mock.to_str().unwrap()],
        vec!["list"],
    ] {
        let out = on(&lab, &fresh, &args);
        assert_no_panic(&format!("{args:?}"), &out);
        // Import refuses the campaign with a negative duration (exit 2).
        let refused = args[0] == "import" && out.status.code() == Some(2);
        assert!(out.status.success() || refused, "{args:?}: {out:?}");
        crate::hostile::assert_inert(&format!("{args:?}"), &out);
    }
}

/// Free bytes of the filesystem holding `dir`.
fn free_bytes(dir: &Path) -> u64 {
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// Item 2: `check` sums what a campaign takes and refuses past it with
/// the figures, and `run` refuses it again before provisioning: io_uring
/// buffers of 16 MiB × 4096 (64 GiB; `run` aborted on the allocation,
/// leaving its tmpfs mounted), a 64G tmpfs written 30G on a host with less
/// memory, and images that each fit their directory but not together (each
/// was checked alone; `run` filled the filesystem at the fourth).
#[test]
fn item2_check_sums_memory_and_space_and_run_refuses_before_provisioning() {
    let lab = Lab::new();
    let memory = lab.file(
        "memory.toml",
        "name = \"memory\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
         [[target]]\nname = \"t\"\nkind = \"tmpfs\"\nsize = \"64G\"\n\
         [[workload]]\nname = \"big\"\nkind = \"io\"\nrw = \"write\"\nbs = \"16M\"\niodepth = 4096\n\
         ioengine = \"io_uring\"\nsize = \"30G\"\n",
    );
    let images = lab.path().join("images");
    std::fs::create_dir_all(&images).unwrap();
    // Each alone fits; together they miss 4 GiB (room for what other
    // processes free meanwhile).
    let half = free_bytes(&images) / 2 + (2 << 30);
    let space = lab.file(
        "space.toml",
        &format!(
            "name = \"space\"\n[plan]\nrepetitions = 1\n\
             [[target]]\nname = \"a\"\nkind = \"loop\"\nsize = \"{half}\"\nallocation = \"preallocated\"\ndir = \"{0}\"\n\
             [[target]]\nname = \"b\"\nkind = \"vm-disk\"\nsize = \"{half}\"\ndir = \"{0}\"\n\
             [[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nsize = \"1M\"\n",
            images.display()
        ),
    );
    let in_images = format!("the images in {} need", images.display());
    let said = [
        (
            &memory,
            vec![
                "of memory at once",
                "tmpfs `t` holds up to 30.0 GiB",
                "a run of `big` holds 64.0 GiB of its own",
                "available and",
            ],
        ),
        (
            &space,
            vec![in_images.as_str(), "together (`a` ", ", `b` ", "free; "],
        ),
    ];
    for (file, figures) in said {
        for command in ["check", "run"] {
            let out = lab.run(&[command, "-q", file.to_str().unwrap()]);
            let (o, e) = text(&out);
            assert_eq!(out.status.code(), Some(1), "{command} {file:?}: {o}{e}");
            for f in &figures {
                assert!(e.contains(f), "{command} {file:?}: no {f:?} in {e}");
            }
        }
    }
    // Nothing was made: no image, no campaign.
    assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0);
    assert!(!lab.db().exists() || crate::util::runs_in_store(&lab.db()) == 0);
    // Within the host, the same shapes pass.
    let fits = lab.file(
        "fits.toml",
        &std::fs::read_to_string(&memory)
            .unwrap()
            .replace("16M", "1M")
            .replace("iodepth = 4096", "iodepth = 4")
            .replace("30G", "64M"),
    );
    let out = lab.run(&["check", fits.to_str().unwrap()]);
    assert!(!text(&out).1.contains("memory at once"), "{out:?}");
}
