//! What `check` says before a campaign: what `run` would refuse on this
//! host, and how long the campaign will take — learned from the store's
//! past runs of the same workloads and targets.

use crate::util::Lab;

/// `check` exits 1 (valid, but not here) and says why, as `run` does.
fn refused(lab: &Lab, file: &std::path::Path, why: &str) {
    let out = lab.run(&["check", file.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("valid experiment"), "{stdout}");
    assert!(
        stderr.contains("`storlab run` would refuse this experiment on this host"),
        "{stderr}"
    );
    assert!(stderr.contains(why), "{stderr}");
    let run = lab.run(&["run", file.to_str().unwrap()]);
    let run_err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{run_err}");
    assert!(run_err.contains(why), "run says the same: {run_err}");
    assert_eq!(crate::util::runs_in_store(&lab.db()), 0, "nothing ran");
}

#[test]
fn check_says_what_run_would_refuse() {
    let lab = Lab::new();
    // A program not installed: PostgreSQL's, looked for where bindir says.
    let empty = lab.path().join("no-postgres");
    std::fs::create_dir(&empty).unwrap();
    let file = lab.file(
        "pg.toml",
        &format!(
            "[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \".\"\n\
             [[workload]]\nname = \"oltp\"\nkind = \"pgbench\"\nduration = \"5s\"\nbindir = \"{}\"\n",
            empty.display()
        ),
    );
    refused(
        &lab,
        &file,
        "PostgreSQL program(s) not found: initdb, postgres, pgbench, psql",
    );

    // A kernel without the NFS client (this machine's): the target cannot
    // be mounted, whatever the export.
    let lacks_nfs = !std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.ends_with("nfs") || l.ends_with("nfs4"));
    if crate::util::is_root() && lacks_nfs {
        let file = lab.file(
            "nfs.toml",
            "[[target]]\nname = \"gl-nfs\"\nkind = \"nfs\"\nserver = \"127.0.0.1\"\nexport = \"/gl\"\nvers = \"3\"\n\
             [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
        );
        refused(&lab, &file, "this kernel has no NFS client");
    }
}

#[test]
#[ignore = "needs root"]
fn check_says_a_provisioning_target_needs_root() {
    require_root!();
    // Run check and run as `nobody`: a tmpfs needs root to mount.
    let lab = Lab::new();
    let file = lab.file(
        "t.toml",
        "[[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
         [[workload]]\nname = \"w\"\nkind = \"mock\"\n",
    );
    std::fs::set_permissions(
        lab.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let as_nobody = |cmd: &str| {
        lab.as_nobody(&[cmd, file.to_str().unwrap()])
            .output()
            .expect("setpriv")
    };
    let check = as_nobody("check");
    let err = String::from_utf8_lossy(&check.stderr);
    assert_eq!(check.status.code(), Some(1), "{err}");
    assert!(err.contains("mounting a tmpfs needs root"), "{err}");
    let run = as_nobody("run");
    let run_err = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && run_err.contains("mounting a tmpfs needs root"),
        "{run_err}"
    );
}

/// The seconds in check's "N runs, estimated X" line.
fn estimated_seconds(stdout: &str) -> f64 {
    let line = stdout
        .lines()
        .find(|l| l.contains(" runs, estimated "))
        .unwrap_or_else(|| panic!("no estimate in:\n{stdout}"));
    let text = line.split(" runs, estimated ").nth(1).unwrap();
    let text = text.split(" (").next().unwrap();
    // A busy host's range, "1m10s quiet, up to 2m20s at this load": its
    // busy end, the estimate at the load.
    let text = text.rsplit("up to ").next().unwrap();
    parse_seconds(text.trim_end_matches(" at this load"))
}

/// `1m05s`, `2h03m`, `3d04h`, `12.3 s`, `850 ms` as storlab formats them.
fn parse_seconds(text: &str) -> f64 {
    let t = text.trim();
    if let Some(ms) = t.strip_suffix(" ms") {
        return ms.trim().parse::<f64>().unwrap() / 1000.0;
    }
    if let Some(s) = t.strip_suffix(" s") {
        return s.trim().parse().unwrap();
    }
    let mut total = 0.0;
    let mut num = String::new();
    for c in t.chars() {
        match c {
            '0'..='9' | '.' => num.push(c),
            'd' => total += std::mem::take(&mut num).parse::<f64>().unwrap() * 86400.0,
            'h' => total += std::mem::take(&mut num).parse::<f64>().unwrap() * 3600.0,
            'm' => total += std::mem::take(&mut num).parse::<f64>().unwrap() * 60.0,
            's' => total += std::mem::take(&mut num).parse::<f64>().unwrap(),
            _ => {}
        }
    }
    total
}

/// Seconds from a campaign's start to its end, as the store recorded them.
fn campaign_seconds(db: &std::path::Path, id: i64) -> f64 {
    let conn = rusqlite::Connection::open(db).unwrap();
    let (a, b): (String, String) = conn
        .query_row(
            "SELECT started_at, finished_at FROM campaigns WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let a = chrono::DateTime::parse_from_rfc3339(&a).unwrap();
    let b = chrono::DateTime::parse_from_rfc3339(&b).unwrap();
    (b - a).num_milliseconds() as f64 / 1000.0
}

/// A real, short campaign on a loop device, remounted and with caches
/// dropped before every run (what the workloads' own estimates leave out:
/// a few seconds a run here against a 1 s sleep), then `check` of the
/// same file against that store: the estimate of its rerun, learned from
/// the first, is within 0.8–1.25× of what the first took. (Against the
/// rerun itself the ratio follows the host's load between the two, 0.55
/// to 1.1 on this shared 2-core machine: that belongs in a benchmark, not
/// a test.)
#[test]
#[ignore = "needs root"]
fn the_estimate_of_a_recorded_campaigns_rerun_holds() {
    require_root!();
    let lab = Lab::new();
    let file = lab.file(
        "rerun.toml",
        "name = \"rerun\"\n[plan]\nrepetitions = 3\ndrop_caches = true\nremount = \"between-runs\"\n\
         [[target]]\nname = \"ext4\"\nkind = \"loop\"\nfs = \"ext4\"\nsize = \"64M\"\n\
         [[workload]]\nname = \"sleep\"\nkind = \"mock\"\nduration = \"1s\"\n\
         [[workload]]\nname = \"writes\"\nkind = \"io\"\nrw = \"write\"\nbs = \"64k\"\nsize = \"16M\"\nfsync = 16\n",
    );
    let f = file.to_str().unwrap();
    let before = lab.ok(&["check", f]);
    lab.ok(&["run", "--quiet", f]);
    let took = campaign_seconds(&lab.db(), 1);
    let check = lab.ok(&["check", f]);
    assert!(check.contains("2 as recorded"), "{check}");
    let estimate = estimated_seconds(&check);
    let ratio = estimate / took;
    assert!(
        (0.8..=1.25).contains(&ratio),
        "estimated {estimate:.1} s, the campaign it learned from took {took:.1} s (×{ratio:.2}):\n{check}"
    );
    // The workloads' own model knew nothing of remounts and cache drops.
    let model = estimated_seconds(&before);
    assert!(
        (estimate - took).abs() < (model - took).abs(),
        "learned {estimate:.1} s is no nearer {took:.1} s than the model's {model:.1} s"
    );
}

#[test]
fn check_reads_seconds_as_storlab_prints_them() {
    assert_eq!(parse_seconds("1m05s"), 65.0);
    assert_eq!(parse_seconds("12.5 s"), 12.5);
    assert_eq!(parse_seconds("850 ms"), 0.85);
}
