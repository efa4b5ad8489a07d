//! What smallfiles leaves on disk: files created, appended to, renamed and
//! deleted, counted on the filesystem itself.

use super::*;
use crate::metric::MetricDef;
use crate::params::Value;

fn validate(p: &Params) -> Result<(), Fault> {
    SmallfilesParams::from_params(p)?.validate()
}

fn params(ops: &str, threads: i64) -> Params {
    let mut p = Params::defaults(SmallfilesParams::PARAMS);
    p.set("threads", Value::Int(threads));
    p.set("files", Value::Int(50));
    p.set("dirs", Value::Int(4));
    p.set("file_size", Value::Size(1000));
    p.set(
        "operations",
        Value::List(ops.split(',').map(String::from).collect()),
    );
    assert_eq!(validate(&p), Ok(()));
    p
}

/// Runs the workload (without cleanup) and returns its output.
fn run(dir: &Path, p: &Params) -> RunOutput {
    let mut w = Smallfiles::new(&SmallfilesParams::from_params(p).unwrap());
    let cx = RunContext::standalone(3);
    w.prepare(dir, &cx).unwrap();
    w.run(dir, &cx).unwrap()
}

/// (name prefix, size) of every file in the tree.
fn files_on_disk(dir: &Path) -> Vec<(char, u64)> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(Smallfiles::base(dir)).unwrap() {
        for d in std::fs::read_dir(t.unwrap().path()).unwrap() {
            for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
                let f = f.unwrap();
                let first = f.file_name().to_string_lossy().chars().next().unwrap();
                out.push((first, f.metadata().unwrap().len()));
            }
        }
    }
    out
}

/// The value of `def` for operation `name`.
fn of_op(out: &RunOutput, def: &MetricDef, name: &str) -> Option<f64> {
    out.labelled(def, &Labels::new().with(&OP, name))
}

#[test]
fn create_and_append_leave_every_file_at_twice_the_size() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &params("create,append", 2));
    let files = files_on_disk(dir.path());
    assert_eq!(files.len(), 100);
    assert!(
        files.iter().all(|&(c, len)| c == 'f' && len == 2000),
        "{files:?}"
    );
    assert_eq!(of_op(&out, &m::OPS, "create"), Some(100.0));
    assert_eq!(of_op(&out, &m::OPS, "append"), Some(100.0));
    assert_eq!(out.metric(&m::OPS), Some(200.0));
    assert!(out.metric(&m::OPS_PER_S).unwrap() > 0.0);
    assert!(
        of_op(&out, &m::LAT_P99_NS, "create").unwrap()
            >= of_op(&out, &m::LAT_P50_NS, "create").unwrap()
    );
}

#[test]
fn rename_renames_every_file_and_readdir_sees_them() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &params("create,stat,read,rename,readdir", 3));
    let files = files_on_disk(dir.path());
    assert_eq!(files.len(), 150);
    assert!(
        files.iter().all(|&(c, len)| c == 'r' && len == 1000),
        "{files:?}"
    );
    assert_eq!(of_op(&out, &m::OPS, "rename"), Some(150.0));
    assert_eq!(of_op(&out, &m::OPS, "readdir"), Some(12.0));
    assert_eq!(out.metric(&m::READDIR_ENTRIES), Some(150.0));
}

#[test]
fn the_whole_storm_deletes_what_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        dir.path(),
        &params("create,stat,read,append,rename,readdir,delete", 2),
    );
    assert!(files_on_disk(dir.path()).is_empty());
    for op in ["create", "stat", "read", "append", "rename", "delete"] {
        assert_eq!(of_op(&out, &m::OPS, op), Some(100.0), "{op}");
    }
    let mut w = Smallfiles::new(&SmallfilesParams::from_params(&params("create", 1)).unwrap());
    w.cleanup(dir.path()).unwrap();
    assert!(!Smallfiles::base(dir.path()).exists());
}

#[test]
fn without_create_the_files_are_laid_out_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &params("stat,delete", 1));
    assert_eq!(of_op(&out, &m::OPS, "create"), None);
    assert_eq!(of_op(&out, &m::OPS, "delete"), Some(50.0));
    assert!(files_on_disk(dir.path()).is_empty());
}

#[test]
fn unknown_operations_are_refused_with_the_list() {
    let mut p = Params::defaults(SmallfilesParams::PARAMS);
    p.set("operations", Value::List(vec!["unlink".into()]));
    let (key, msg) = validate(&p).unwrap_err();
    assert_eq!(key, "operations");
    assert!(msg.contains("delete"), "{msg}");
}
