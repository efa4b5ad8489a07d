//! The JSON export against its published layout, `docs/export.schema.json`
//! (JSON Schema 2020-12): real exports (the v3 fixture's campaigns after
//! migration, and a campaign run now) must validate, and the schema must
//! refuse what it promises to refuse.

use std::path::Path;

use serde_json::Value;

use crate::util::Lab;

fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/export.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("the schema is JSON");
    jsonschema::draft202012::new(&schema).expect("a valid JSON Schema")
}

fn assert_valid(v: &jsonschema::Validator, export: &Value, what: &str) {
    let errors: Vec<String> = v
        .iter_errors(export)
        .take(10)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

#[test]
fn exports_of_the_migrated_v3_store_follow_the_schema() {
    let lab = Lab::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v3/all-kinds.db");
    std::fs::copy(fixture, lab.db()).unwrap();
    let v = validator();
    for c in ["1", "2"] {
        let text = lab.ok(&["export", c, "--format", "json"]);
        let export: Value = serde_json::from_str(&text).unwrap();
        assert_valid(&v, &export, &format!("campaign {c}"));
        let runs = export["runs"].as_array().unwrap();
        assert!(runs
            .iter()
            .any(|r| !r["histograms"].as_array().unwrap().is_empty()));
    }
}

#[test]
fn a_new_campaign_exports_labels_and_histograms_the_schema_accepts() {
    let lab = Lab::new();
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let file = lab.file(
        "exp.toml",
        &format!(
            "name = \"schema\"\n[plan]\nrepetitions = 1\n[[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"meta\"\nkind = \"smallfiles\"\nfiles = 20\ndirs = 2\noperations = [\"create\", \"delete\"]\n",
            data.display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    let v = validator();
    assert_valid(&v, &export, "new campaign");
    let run = &export["runs"][0];
    let create = crate::util::labelled_value(run, "ops", &[("op", "create")]);
    assert_eq!(create, Some(20.0));
    let hist = run["histograms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["labels"] == serde_json::json!({"op": "delete"}))
        .expect("the delete latency histogram");
    assert_eq!(hist["count"], 20);
    let mut broken = export.clone();
    broken["runs"][0]["metrics"][0]["labels"] = serde_json::json!({"op": 1});
    assert!(!v.is_valid(&broken), "a label value must be text");
    broken["schema_version"] = serde_json::json!(1);
    assert!(!v.is_valid(&broken));
}

#[test]
fn a_swept_campaign_exports_its_factors_the_schema_accepts() {
    let lab = Lab::new();
    let file = lab.file(
        "swept.toml",
        &format!(
            "name = \"swept-schema\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"io\"\nkind = \"io\"\nsize = \"256k\"\nsweep = {{ bs = [\"4k\", \"64k\"] }}\ncompare_levels = [\"bs\"]\n",
            lab.path().display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let export = lab.export_json();
    assert_valid(&validator(), &export, "a swept campaign");
    let w = &export["workloads"][1];
    assert_eq!(w["name"], "io[bs=64k]");
    assert_eq!(w["family"], "io");
    assert_eq!(w["compare_levels"], serde_json::json!(["bs"]));
    assert_eq!(
        w["factors"],
        serde_json::json!([{"key": "bs", "value": "65536", "text": "64k", "scale": "size"}])
    );
    for r in export["runs"].as_array().unwrap() {
        let bs = if r["workload"] == "io[bs=4k]" {
            "4096"
        } else {
            "65536"
        };
        for m in r["metrics"].as_array().unwrap() {
            assert_eq!(m["labels"]["bs"], bs, "{m}");
        }
    }
}

#[test]
fn every_unit_storlab_knows_is_in_the_schema() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/export.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let listed = schema["$defs"]["unit"]["enum"]
        .as_array()
        .expect("the schema lists the units at $defs.unit.enum");
    let missing: Vec<&str> = storlab::metric::UNITS
        .iter()
        .map(|u| u.as_str())
        .filter(|u| !listed.iter().any(|l| l == u))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/export.schema.json lacks the units {missing:?}: an export with them would not validate"
    );
}
