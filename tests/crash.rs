use std::time::{Duration, Instant};

use crate::util::{runs_in_store, Lab};

#[test]
fn a_killed_campaign_keeps_its_finished_runs_and_the_next_run_cleans_up() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "long.toml",
        &format!(
            "name = \"long\"\n[plan]\nrepetitions = 20\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"8M\"\nruntime = \"300ms\"\n",
            data.display()
        ),
    );
    let mut child = lab
        .cmd()
        .args(["run", "--quiet", file.to_str().unwrap()])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while runs_in_store(&lab.db()) < 3 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no runs recorded in time"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        data.join("storlab-work-d").exists(),
        "a killed campaign leaves its working directory"
    );

    let export = lab.export_json();
    let runs = export["runs"].as_array().unwrap();
    assert!(runs.len() >= 3 && runs.len() < 20, "{} runs", runs.len());
    for r in runs {
        assert_eq!(r["status"], "ok");
        assert!(crate::util::value_of(r, "bw_bytes_per_s").unwrap() > 0.0);
    }
    // Its process is gone: shown as interrupted (resumable), not running.
    assert_eq!(export["campaign"]["status"], "interrupted");

    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    assert!(
        !data.join("storlab-work-d").exists(),
        "the next campaign removed the leftover working directory"
    );
    let listed = lab.ok(&["list"]);
    assert!(listed.contains("finished"), "{listed}");
}
