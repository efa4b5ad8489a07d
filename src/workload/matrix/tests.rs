//! What the matrix's tests leave on disk: sizes and, through the stamp each
//! writing test puts in every record, which test last wrote each record.

use std::fs::File;
use std::sync::atomic::AtomicBool;

use super::cell::{read_stamp, run_test, Timing};
use super::grid::{Cell, Test};
use super::*;
use crate::params::Value;

fn validate(p: &Params) -> Result<(), Fault> {
    MatrixParams::from_params(p)?.validate()
}

const CELL: Cell = Cell {
    file_size: 64 << 10,
    record: 4 << 10,
};

fn timing() -> Timing {
    Timing {
        include_close: true,
        include_flush: true,
        direct: false,
        seed: 3,
    }
}

/// Runs `test` on CELL and returns the stamps of every record afterwards.
fn run_and_stamps(test: Test, path: &Path, buf: &mut AlignedBuf) -> Vec<(Test, u64)> {
    let stop = AtomicBool::new(false);
    let r = run_test(test, CELL, path, timing(), buf.as_mut_slice(), &stop).unwrap();
    assert_eq!(r.ops, CELL.records(), "{}", test.name());
    assert_eq!(r.bytes, CELL.file_size, "{}", test.name());
    assert!(r.elapsed_s > 0.0 && r.lat_sum_ns > 0);
    assert_eq!(
        std::fs::metadata(path).unwrap().len(),
        CELL.file_size,
        "{}",
        test.name()
    );
    let f = File::open(path).unwrap();
    (0..CELL.records())
        .map(|i| {
            let (tag, idx) = read_stamp(&f, CELL.record, i).unwrap();
            let t = Test::ALL.iter().copied().find(|t| t.tag() == tag).unwrap();
            (t, idx)
        })
        .collect()
}

fn all(test: Test) -> Vec<(Test, u64)> {
    (0..CELL.records()).map(|i| (test, i)).collect()
}

#[test]
fn each_test_leaves_the_file_it_should() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("matrix.dat");
    let mut buf = AlignedBuf::new(CELL.record as usize, 1);
    assert_eq!(
        run_and_stamps(Test::Write, &path, &mut buf),
        all(Test::Write)
    );
    assert_eq!(
        run_and_stamps(Test::Rewrite, &path, &mut buf),
        all(Test::Rewrite)
    );
    for t in [
        Test::Read,
        Test::Reread,
        Test::RandRead,
        Test::BkwdRead,
        Test::StrideRead,
    ] {
        assert_eq!(
            run_and_stamps(t, &path, &mut buf),
            all(Test::Rewrite),
            "{}",
            t.name()
        );
    }
    assert_eq!(
        run_and_stamps(Test::RandWrite, &path, &mut buf),
        all(Test::RandWrite)
    );
    let mut expected = all(Test::RandWrite);
    expected[0] = (Test::RecRewrite, 0);
    assert_eq!(run_and_stamps(Test::RecRewrite, &path, &mut buf), expected);
    assert_eq!(
        run_and_stamps(Test::FWrite, &path, &mut buf),
        all(Test::FWrite)
    );
    assert_eq!(
        run_and_stamps(Test::FRead, &path, &mut buf),
        all(Test::FWrite)
    );
    // Beyond the stamp, every record holds the engine's data, not zeros.
    let data = std::fs::read(&path).unwrap();
    for rec in data.chunks(CELL.record as usize) {
        assert_eq!(&rec[16..], &buf.as_mut_slice()[16..CELL.record as usize]);
    }
}

#[test]
fn a_run_yields_one_metric_pair_per_cell_and_test() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("max_file_size", Value::Size(256 << 10));
    p.set("max_record_size", Value::Size(64 << 10));
    assert_eq!(validate(&p), Ok(()));
    let mut m = Matrix::new(&MatrixParams::from_params(&p).unwrap());
    let cx = RunContext::standalone(7);
    m.prepare(dir.path(), &cx).unwrap();
    let out = m.run(dir.path(), &cx).unwrap();
    // 64k: 4k..64k (5), 128k: 5, 256k: 5 → 15 cells.
    assert_eq!(out.metric(&m::CELLS), Some(15.0));
    // Per cell and test: throughput, latency, bytes read or written.
    assert_eq!(out.metrics.len(), 15 * 11 * 3 + 11 + 6);
    let cell = |file_size: u64, record: u64| Cell { file_size, record };
    let write = cell_labels(Test::Write, cell(64 << 10, 4 << 10));
    let fread = cell_labels(Test::FRead, cell(256 << 10, 64 << 10));
    assert!(out.labelled(&m::BW_BYTES_PER_S, &write).unwrap() > 0.0);
    assert!(out.labelled(&m::LAT_MEAN_NS, &fread).unwrap() > 0.0);
    assert!(out.metric(&m::GEOMEAN_BW_BYTES_PER_S).unwrap() > 0.0);
    let rewrite = test_labels(Test::Rewrite);
    assert!(out.labelled(&m::GEOMEAN_BW_BYTES_PER_S, &rewrite).unwrap() > 0.0);
    // bytes: every cell's file once per test.
    let per_test: u64 = ((64 + 128 + 256) * 5) << 10;
    assert_eq!(out.metric(&m::BYTES), Some((per_test * 11) as f64));
    // write, rewrite, randwrite, recrewrite, fwrite write; six tests read.
    assert_eq!(out.metric(&m::WRITE_BYTES), Some((per_test * 5) as f64));
    assert_eq!(out.metric(&m::READ_BYTES), Some((per_test * 6) as f64));
    m.cleanup(dir.path()).unwrap();
    assert!(!Matrix::file(dir.path()).exists());
}

#[test]
fn with_the_devices_watched_each_read_cell_says_what_the_device_read() {
    use crate::measure::telemetry::{Chain, DeviceProbe};
    let dir = tempfile::tempdir().unwrap();
    let Some(devices) = DeviceProbe::of_chain(&Chain::of_paths(&[dir.path().to_path_buf()])) else {
        eprintln!("skipped: the temporary directory is on no block device");
        return;
    };
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("max_file_size", Value::Size(128 << 10));
    p.set("max_record_size", Value::Size(64 << 10));
    p.set("tests", Value::List(vec!["write".into(), "read".into()]));
    let mut m = Matrix::new(&MatrixParams::from_params(&p).unwrap());
    let cx = RunContext {
        devices: Some(devices),
        ..RunContext::standalone(7)
    };
    let out = m.run(dir.path(), &cx).unwrap();
    let read = cell_labels(
        Test::Read,
        Cell {
            file_size: 64 << 10,
            record: 4 << 10,
        },
    );
    let write = cell_labels(
        Test::Write,
        Cell {
            file_size: 64 << 10,
            record: 4 << 10,
        },
    );
    assert_eq!(out.labelled(&m::READ_BYTES, &read), Some(65536.0));
    assert!(out.labelled(&m::DEV_READ_RATIO, &read).unwrap() >= 0.0);
    assert!(out.labelled(&m::DEV_READ_BYTES, &read).is_some());
    assert_eq!(out.labelled(&m::DEV_READ_RATIO, &write), None);
    m.cleanup(dir.path()).unwrap();
}

#[test]
fn reading_tests_alone_lay_the_file_out_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("max_file_size", Value::Size(128 << 10));
    p.set("tests", Value::List(vec!["reread".into()]));
    let mut m = Matrix::new(&MatrixParams::from_params(&p).unwrap());
    let cx = RunContext::standalone(1);
    let out = m.run(dir.path(), &cx).unwrap();
    let cell = |file_size: u64, record: u64| Cell { file_size, record };
    let reread = cell_labels(Test::Reread, cell(128 << 10, 128 << 10));
    let write = cell_labels(Test::Write, cell(64 << 10, 4 << 10));
    assert!(out.labelled(&m::BW_BYTES_PER_S, &reread).unwrap() > 0.0);
    assert_eq!(out.labelled(&m::BW_BYTES_PER_S, &write), None);
}

#[test]
fn direct_io_reaches_the_disk_with_the_same_contents() {
    // /var/tmp is disk-backed here; tmpfs would refuse O_DIRECT.
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let path = dir.path().join("matrix.dat");
    let mut buf = AlignedBuf::new(CELL.record as usize, 1);
    let stop = AtomicBool::new(false);
    let t = Timing {
        direct: true,
        ..timing()
    };
    for test in [Test::Write, Test::Rewrite, Test::Reread] {
        match run_test(test, CELL, &path, t, buf.as_mut_slice(), &stop) {
            Ok(r) => assert_eq!(r.bytes, CELL.file_size),
            Err(e) => {
                assert!(format!("{e:#}").contains("O_DIRECT"), "{e:#}");
                eprintln!("SKIPPED: /var/tmp refuses O_DIRECT");
                return;
            }
        }
    }
    let f = File::open(&path).unwrap();
    assert_eq!(
        read_stamp(&f, CELL.record, 3).unwrap(),
        (Test::Rewrite.tag(), 3)
    );
}

#[test]
fn bad_axes_and_unknown_tests_are_refused() {
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("max_file_size", Value::Size(3 << 20));
    assert_eq!(validate(&p).unwrap_err().0, "max_file_size");
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("tests", Value::List(vec!["rereed".into()]));
    assert!(validate(&p).unwrap_err().1.contains("reread"));
    let mut p = Params::defaults(MatrixParams::PARAMS);
    p.set("direct", Value::Bool(true));
    assert!(validate(&p).unwrap_err().1.contains("fwrite"));
}

#[test]
fn the_largest_sizes_estimate_without_overflow() {
    let mut p = Params::defaults(MatrixParams::PARAMS);
    for key in ["max_file_size", "max_record_size", "min_record_size"] {
        p.set(key, Value::Size(1 << 63));
    }
    p.set("min_file_size", Value::Size(1 << 62));
    let m = MatrixParams::from_params(&p).unwrap();
    assert_eq!(m.validate(), Ok(()));
    assert_eq!(m.settings().0.len(), 1);
    assert_eq!(m.bytes_needed(), 1 << 63);
    assert!(m.estimate() > Duration::from_secs(1 << 30));
}
