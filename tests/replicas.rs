//! `storlab replicate`: a campaign's experiment run again into the same
//! store, its rounds in another order, recorded as a replica of the first.

use crate::util::Lab;

/// A mock campaign of two directory targets, `b` `factor` times `a`.
fn mock_campaign(lab: &Lab, plan: &str, factor: f64) -> std::path::PathBuf {
    lab.file(
        "rep.toml",
        &format!(
            "name = \"rep\"\n[plan]\n{plan}\ndrop_caches = false\ntelemetry = false\n{}{}\
             [[workload]]\nname = \"m\"\nkind = \"mock\"\nnoise = 0.02\nfactor = {{ b = {factor} }}\n",
            crate::util::dir_target(lab, "a"),
            crate::util::dir_target(lab, "b")
        ),
    )
}

/// The targets of campaign `id`'s runs in the order they ran.
fn order(lab: &Lab, id: &str) -> Vec<String> {
    let json: serde_json::Value =
        serde_json::from_str(&lab.ok(&["export", id, "--format", "json"])).unwrap();
    crate::util::targets_in_order(&json)
}

#[test]
fn replicas_run_the_recorded_experiment_again_in_another_order() {
    let lab = Lab::new();
    let file = mock_campaign(&lab, "repetitions = 4", 1.2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    // The file changes after the campaign: the replica runs what campaign 1
    // recorded, not the file.
    std::fs::write(&file, "not toml").unwrap();
    let out = lab.run(&["replicate", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("replica 1 of campaign `rep`"), "{stderr}");
    // A replica of the replica is the second of the first.
    lab.ok(&["replicate", "--quiet", "2", "--tag", "try=3"]);
    let db = rusqlite::Connection::open(lab.db()).unwrap();
    let rows: Vec<(i64, String, i64)> = db
        .prepare("SELECT r.campaign_id, r.of_uuid, r.number FROM replicas r ORDER BY 1")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let first: String = db
        .query_row("SELECT uuid FROM campaigns WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, [(2, first.clone(), 1), (3, first, 2)]);
    // Balanced rounds: A B, B A… in the first; B A, A B… in replica 1.
    assert_eq!(order(&lab, "1"), ["a", "b", "b", "a", "a", "b", "b", "a"]);
    assert_eq!(order(&lab, "2"), ["b", "a", "a", "b", "b", "a", "a", "b"]);
    let list = lab.ok(&["list"]);
    assert!(list.contains("try=3"), "{list}");
}

#[test]
fn a_killed_replica_resumes_in_its_own_order() {
    let lab = Lab::new();
    let file = mock_campaign(&lab, "repetitions = 6\norder = \"randomized\"", 1.0);
    std::fs::write(
        &file,
        std::fs::read_to_string(&file).unwrap() + "duration = \"100ms\"\n",
    )
    .unwrap();
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    lab.ok(&["replicate", "--quiet", "1"]);
    // Replica 2 killed twice and resumed: the order of replica 2 is
    // neither the first's nor replica 1's, and each run kept its place.
    let status = lab.kill_and_resume_command(
        &["replicate", "--quiet", "1"],
        "3",
        &[12 + 12 + 3, 12 + 12 + 8],
        std::time::Duration::from_secs(60),
    );
    assert!(status.success());
    let orders = ["1", "2", "3"].map(|id| order(&lab, id));
    assert!(orders.iter().all(|o| o.len() == 12), "{orders:?}");
    assert_ne!(orders[0], orders[1]);
    assert_ne!(orders[1], orders[2]);
    assert_ne!(orders[0], orders[2]);
    // What replica 2 would run uninterrupted: its plan, replayed.
    let mut exp =
        storlab::experiment::parse_experiment("rep.toml", &std::fs::read_to_string(&file).unwrap())
            .unwrap();
    exp.plan.replica = 2;
    let planned: Vec<String> = storlab::plan::plan(&exp)
        .iter()
        .map(|r| exp.targets[r.target].name.clone())
        .collect();
    assert_eq!(orders[2], planned);
}

// Replicas side by side: show, the report and compare set each replica's
// verdict with its effect and interval beside the others' and say whether
// they agree; history takes the group as one configuration.
#[test]
fn show_report_compare_and_history_set_the_replicas_side_by_side() {
    let lab = Lab::new();
    let file = mock_campaign(&lab, "repetitions = { until = \"decided\" }", 1.2);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    lab.ok(&["replicate", "--quiet"]);
    let out = lab.run(&["replicate", "--quiet"]);
    assert_eq!(out.status.code(), Some(0));
    // What replicate prints at its end is what show prints.
    let printed = String::from_utf8_lossy(&out.stdout);
    let show = lab.ok(&["show"]);
    assert_eq!(printed, show);
    assert!(
        show.contains("Campaigns 1, 2, 3 ran the same experiment"),
        "{show}"
    );
    let row = show
        .lines()
        .find(|l| l.starts_with("m ") && l.contains("agree"))
        .unwrap();
    assert!(row.ends_with("agree: faster in all 3"), "{row}");
    assert_eq!(row.matches("] faster").count(), 3, "{row}");
    // Any campaign of the group shows the group.
    assert!(lab.ok(&["show", "1"]).contains("Campaigns 1, 2, 3 ran"));
    let md = lab.ok(&["report", "--format", "md"]);
    assert!(md.contains("## Replicas"), "{md}");
    assert!(md.contains("| m | b | +"), "{md}");
    assert!(md.contains("| agree: faster in all 3 |"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&lab.ok(&["compare", "--format", "json"])).unwrap();
    let r = &json["replicas"];
    assert_eq!(r["campaigns"], serde_json::json!([1, 2, 3]), "{r}");
    let c = &r["comparisons"][0];
    assert_eq!(c["agreement"], "agree", "{c}");
    let each = c["each"].as_array().unwrap();
    for e in each {
        assert_eq!(e["candidate"]["outcome"], "different", "{e}");
        let ci = &e["candidate"]["comparison"]["diff_pct_ci"];
        assert!(ci["low"].as_f64().unwrap() > 0.0, "{ci}");
    }
    // Each replica measured its own runs (the mock draws each replica's
    // noise anew, as a host would).
    let low = |i: usize| each[i]["candidate"]["comparison"]["diff_pct_ci"]["low"].clone();
    assert_ne!(low(0), low(1));
    assert_ne!(low(0), low(2));
    let json: serde_json::Value =
        serde_json::from_str(&lab.ok(&["show", "--format", "json"])).unwrap();
    assert_eq!(json["replicas"]["comparisons"][0]["agreement"], "agree");
    // One configuration in history: one entry, every replica's runs.
    let history = lab.ok(&["history"]);
    assert!(
        history.contains("campaign 1 with its replicas 2, 3: one configuration"),
        "{history}"
    );
    let runs: usize = [1, 2, 3]
        .iter()
        .map(|id| {
            let e: serde_json::Value =
                serde_json::from_str(&lab.ok(&["export", &id.to_string(), "--format", "json"]))
                    .unwrap();
            e["runs"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["target"] == "a")
                .count()
        })
        .sum();
    let h: serde_json::Value =
        serde_json::from_str(&lab.ok(&["history", "--format", "json"])).unwrap();
    let a = h["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["target"] == "a")
        .unwrap();
    assert_eq!(a["entries"].as_array().unwrap().len(), 1, "{a}");
    assert_eq!(
        a["entries"][0]["stats"]["values"].as_array().unwrap().len(),
        runs
    );
}
