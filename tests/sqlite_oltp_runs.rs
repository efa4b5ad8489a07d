use storlab::experiment::parse_experiment;
use storlab::workload::RunContext;

use crate::util::{metric, Lab};

const WORKLOAD: &str = r#"
[[workload]]
name = "oltp"
kind = "sqlite-oltp"
clients = 4
duration = "2s"
journal_mode = "wal"
synchronous = "normal"
"#;

#[test]
fn a_run_through_storlab_reports_tps_and_one_history_row_per_transaction() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "oltp.toml",
        &format!(
            "name = \"oltp\"\n[plan]\nrepetitions = 2\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n{WORKLOAD}",
            data.display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let tps = metric(&export, "oltp", "d", "tps");
    assert_eq!(tps.len(), 2);
    assert!(tps.iter().all(|t| *t > 0.0), "{tps:?}");
    assert_eq!(
        metric(&export, "oltp", "d", "history_rows"),
        metric(&export, "oltp", "d", "transactions")
    );
    for p in ["lat_p50_ns", "lat_p99_ns"] {
        assert!(metric(&export, "oltp", "d", p).iter().all(|v| *v > 0.0));
    }
    assert!(!data.join("storlab-work").exists());
}

#[test]
fn after_a_run_the_tpcb_balances_agree_with_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let exp = parse_experiment(
        "t.toml",
        &format!(
            "name = \"t\"\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \".\"\n{WORKLOAD}"
        ),
    )
    .unwrap();
    let spec = &exp.workloads[0];
    let mut w = spec.config.build();
    let cx = RunContext::standalone(3);
    w.prepare(dir.path(), &cx).unwrap();
    let out = w.run(dir.path(), &cx).unwrap();
    // Checked here, independently of the workload's own check, before cleanup.
    let conn = rusqlite::Connection::open(dir.path().join("oltp.db")).unwrap();
    let sum = |sql: &str| -> i64 { conn.query_row(sql, [], |r| r.get(0)).unwrap() };
    let history = sum("SELECT COALESCE(SUM(delta), 0) FROM pgbench_history");
    let rows = sum("SELECT COUNT(*) FROM pgbench_history");
    assert!(rows > 0);
    assert_eq!(
        rows as f64,
        out.metric(&storlab::metric::catalogue::TRANSACTIONS)
            .unwrap()
    );
    assert_eq!(sum("SELECT SUM(abalance) FROM pgbench_accounts"), history);
    assert_eq!(sum("SELECT SUM(tbalance) FROM pgbench_tellers"), history);
    assert_eq!(sum("SELECT SUM(bbalance) FROM pgbench_branches"), history);
    assert_eq!(sum("SELECT COUNT(*) FROM pgbench_accounts"), 100_000);
    assert!(out.metric(&storlab::metric::catalogue::TPS).unwrap() > 0.0);
    drop(conn);
    w.cleanup(dir.path()).unwrap();
    assert!(!dir.path().join("oltp.db").exists());
}
