//! Hostile input and faults, round 3 (issue #29), each as the case that
//! broke: the store overwritten by an output file, fio jobs escaping the
//! working directory, unbounded sweeps, imports of bad rows, foreign text
//! driving the terminal, cleanup stopping at a failure, daemons left
//! running, exit codes, symlinks followed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::Lab;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A mock experiment of `runs` runs on a directory of the lab.
fn mock_experiment(lab: &Lab, runs: u32) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    lab.file(
        "mock.toml",
        &format!(
            "name = \"mock\"\n[plan]\nrepetitions = {runs}\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nduration = \"1ms\"\n",
            data.display()
        ),
    )
}

fn sha(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Item 1: No output file is the store: not by its name, a symlink to it, its
/// WAL, and an extension no format claims is no reason to write HTML.
#[test]
fn no_output_file_overwrites_the_store() {
    let lab = Lab::new();
    let file = mock_experiment(&lab, 2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let db = lab.db();
    std::os::unix::fs::symlink(&db, lab.path().join("link.db")).unwrap();
    let before = sha(&db);
    let d = db.to_str().unwrap();
    let attempts: Vec<Vec<&str>> = vec![
        vec!["report", "-o", d],
        vec!["report", "--format", "html", "-o", d],
        vec!["report", "--format", "md", "-o", d],
        vec!["report", "1", "1", "--format", "html", "-o", d],
        vec!["export", "--format", "csv", "-o", d],
        vec!["export", "--format", "json", "-o", d],
        vec!["history", "-o", d],
        vec!["report", "--format", "html", "-o", "link.db"],
        vec!["export", "--format", "csv", "-o", "./results.db"],
        vec!["report", "--format", "html", "-o", "results.db-wal"],
    ];
    for args in &attempts {
        let out = lab.run(args);
        let (_, err) = text(&out);
        assert!(!out.status.success(), "{args:?} succeeded: {err}");
        assert!(
            err.contains("results store") && !err.contains("wrote"),
            "{args:?}: {err}"
        );
        assert_eq!(sha(&db), before, "{args:?} changed the store");
    }
    // An unknown extension without --format is refused, naming a way out.
    let out = lab.run(&["report", "-o", "other.db"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--format html"), "{out:?}");
    assert!(!lab.path().join("other.db").exists());
    // The store still answers.
    assert!(lab.ok(&["list"]).contains("mock"));
}

/// Item 10: `init --force` and `man DIR` replace a symlink at their file's name
/// instead of writing through it; `init` without --force counts a dangling
/// symlink as something there.
#[test]
fn init_and_man_do_not_write_through_symlinks() {
    let lab = Lab::new();
    let victim = lab.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = lab.path().join("experiment.toml");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    lab.ok(&["init", "--force"]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(std::fs::read_to_string(&link)
        .unwrap()
        .contains("[[target]]"));
    // A dangling symlink is something there: refused without --force, and
    // its target is not created.
    let nowhere = lab.path().join("nowhere.toml");
    std::os::unix::fs::symlink(&nowhere, lab.path().join("e2.toml")).unwrap();
    let out = lab.run(&["init", "e2.toml"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!nowhere.exists());
    // man DIR: a page's name linked to another file.
    let dir = lab.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("storlab-run.1")).unwrap();
    lab.ok(&["man", dir.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let page = dir.join("storlab-run.1");
    assert!(!std::fs::symlink_metadata(&page).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&page).unwrap().contains("storlab"));
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Every file below `root` but the store's and the journals'.
fn files_below(root: &Path) -> std::collections::BTreeSet<PathBuf> {
    fn walk(dir: &Path, out: &mut std::collections::BTreeSet<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("results.db") || name == "state" {
                continue;
            }
            if p.is_dir() && !p.is_symlink() {
                walk(&p, out);
            }
            out.insert(p);
        }
    }
    let mut out = std::collections::BTreeSet::new();
    walk(root, &mut out);
    out
}

/// A fio experiment on a directory three levels below the lab, with the
/// job file `job`.
fn fio_experiment(lab: &Lab, job: &str) -> PathBuf {
    let data = lab.path().join("a/b/data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(lab.path().join("job.fio"), job).unwrap();
    lab.file(
        "fio.toml",
        &format!(
            "name = \"fio-names\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"f\"\nkind = \"fio\"\njob = \"job.fio\"\n",
            data.display()
        ),
    )
}

/// Item 2: A job's name becomes its default file name: `[../../x]`, `name=`
/// and `filename_format` that climb out are refused by check and run, and
/// nothing is created outside the working directory.
#[test]
fn fio_job_names_cannot_escape_the_working_directory() {
    crate::util::require_program("fio");
    for (job, line) in [
        ("[../../x]\nrw=write\nsize=1M\n", 1),
        ("[j]\nname=../../../y\nrw=write\nsize=1M\n", 2),
        (
            "[j]\nrw=write\nsize=1M\nfilename_format=../../z.$jobnum.$filenum\n",
            4,
        ),
        ("[global]\nrw=write\n[/tmp/storlab-escape]\nsize=1M\n", 3),
    ] {
        let lab = Lab::new();
        let file = fio_experiment(&lab, job);
        let before = files_below(lab.path());
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let (_, err) = text(&out);
            assert_eq!(out.status.code(), Some(2), "{cmd} {job:?}: {err}");
            assert!(
                err.contains(&format!("job.fio:{line}:")),
                "{cmd} {job:?}: {err}"
            );
        }
        assert_eq!(files_below(lab.path()), before, "{job:?}");
        assert!(!Path::new("/tmp/storlab-escape.0.0").exists());
    }
}

/// Item 2: What fio accepts and stays inside runs: aliases of allowed options,
/// `threads`, `zonemode=strided`, `verify_dump`, `$jobnum`/`$filenum` in
/// `filename_format`; and the files land in the working directory only.
#[test]
fn fio_aliases_strided_zones_and_filename_tokens_run() {
    crate::util::require_program("fio");
    let lab = Lab::new();
    let job = "[global]\nioengine=psync\nbs=4k\nsize=1M\nthreads=1\ndisable_bw=1\n\
               [w]\nrw=write\nnr_files=2\nfileoffset=0\nfilename_format=$jobname.$jobnum.$filenum\n\
               verify=crc32c\nverify_dump=1\nratemin=1\nratecycle=1000\n\
               [r]\nwait_for_previous\nrw=randread\nzonemode=strided\nzonesize=64k\nzonerange=256k\n";
    let file = fio_experiment(&lab, job);
    let check = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(check.contains("valid experiment"), "{check}");
    let before = files_below(lab.path());
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let run = &crate::util::runs(&export)[0];
    assert_eq!(run["status"], "ok", "{}", run["error"]);
    // The working directory is removed after the run: nothing is left.
    assert_eq!(files_below(lab.path()), before);
}

/// Item 2: `fio --create_only` runs under a time limit: a fio that hangs
/// laying out its files fails the run instead of hanging the campaign.
/// (fio does not hang on demand, so the `fio` found first on PATH runs
/// the real one, but sleeps on --create_only.)
#[test]
fn a_hanging_fio_layout_is_killed_at_its_limit() {
    crate::util::require_program("fio");
    let lab = Lab::new();
    let bin = lab.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v fio"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = bin.join("fio");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --create_only=1 ] && exec sleep 600; done\nexec {} \"$@\"\n",
            real.trim()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let file = fio_experiment(&lab, "[j]\nrw=read\nsize=1M\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = lab
        .cmd()
        .env("PATH", path)
        .env("STORLAB_COMMAND_TIMEOUT", "2")
        .args(["run", "--quiet", file.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A watchdog, not a timing claim: without a limit the run never ends.
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("storlab run still waits for the hung fio --create_only after 120 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    let export = lab.export_json();
    let run = &crate::util::runs(&export)[0];
    assert_eq!(run["status"], "failed", "{out:?}");
    let error = run["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("--create_only") && error.contains("STORLAB_COMMAND_TIMEOUT"),
        "{error}"
    );
}

/// An experiment whose mock workload sweeps `axes` parameters of ten
/// values each (10^axes variants), with `[plan] extra`.
fn swept_experiment(lab: &Lab, axes: usize, extra: &str) -> PathBuf {
    let data = lab.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let lists = [
        ("value", (1..=10).map(|i| i.to_string()).collect::<Vec<_>>()),
        ("noise", (0..10).map(|i| format!("0.{i}")).collect()),
        ("drift", (0..10).map(|i| format!("0.0{i}")).collect()),
        ("seed", (0..10).map(|i| i.to_string()).collect()),
        ("duration", (0..10).map(|i| format!("\"{i}ms\"")).collect()),
        ("factor", (1..=10).map(|i| i.to_string()).collect()),
    ];
    let sweep: Vec<String> = lists[..axes]
        .iter()
        .map(|(k, v)| match *k {
            // A table parameter sweeps its entries.
            "factor" => format!("factor = {{ d = [{}] }}", v.join(", ")),
            k => format!("{k} = [{}]", v.join(", ")),
        })
        .collect();
    lab.file(
        "big.toml",
        &format!(
            "name = \"big\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n{extra}\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nsweep = {{ {} }}\n",
            data.display(),
            sweep.join(", ")
        ),
    )
}

/// Item 3: a sweep of six parameters of ten values (10^6 variants) is
/// refused before any variant is made, naming the count, the limit and
/// `[plan] max_variants`; under a 1 GiB address-space limit it ends with
/// exit 2, not an abort. Raising the limit admits the study.
#[test]
fn sweeps_are_bounded_before_their_variants_are_made() {
    use std::os::unix::process::CommandExt;
    let lab = Lab::new();
    let file = swept_experiment(&lab, 6, "");
    let mut cmd = lab.cmd();
    cmd.args(["check", file.to_str().unwrap()]);
    // SAFETY: setrlimit is async-signal-safe; only the child is limited.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1 << 30,
                rlim_max: 1 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("1000000 target-workload pairs")
            && err.contains("max_variants = 10000")
            && err.contains("big.toml:13:"),
        "{err}"
    );
    let out = lab.run(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    // Targets count too: a target standing on a swept one is made once
    // per variant of it.
    let t = lab.file(
        "targets.toml",
        &format!(
            "[plan]\nmax_variants = 5\n[[target]]\nname = \"a\"\nkind = \"dir\"\nsweep = {{ path = [\"{0}\", \"{0}/.\", \"{0}/./.\"] }}\n\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\n",
            lab.path().join("data").display()
        ),
    );
    let out = lab.run(&["check", t.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let t2 = std::fs::read_to_string(&t)
        .unwrap()
        .replace("max_variants = 5", "max_variants = 2");
    std::fs::write(&t, t2).unwrap();
    let out = lab.run(&["check", t.to_str().unwrap()]);
    assert!(text(&out).1.contains("3 target variants"), "{out:?}");
    // Raised, a study of 10^4 is checked.
    let file = swept_experiment(&lab, 4, "max_variants = 10000");
    let out = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(out.contains("10000 variants"), "{out}");
}
