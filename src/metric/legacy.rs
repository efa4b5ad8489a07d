//! Names as schema-v3 stores wrote them, which packed labels into the name
//! (`write_64k_4k_bw_bytes_per_s`, `create_ops_per_s`,
//! `stmt_05_begin_lat_mean_ns`, `job0_iops`), decoded into a catalogue
//! name and labels. The store's migration to v4 is the only caller: this
//! is the one place in storlab that takes a metric name apart, and the v3
//! vocabulary it knows (iozone's tests, smallfiles' operations) is frozen
//! with the format.

use super::labels::{FILE_SIZE, JOB, OP, RECORD_SIZE, STATEMENT, TEST};
use super::{lookup, Labels, MetricKey};

/// The matrix tests a v3 name could start with.
const TESTS: &[&str] = &[
    "write",
    "rewrite",
    "read",
    "reread",
    "randread",
    "randwrite",
    "bkwdread",
    "recrewrite",
    "strideread",
    "fwrite",
    "fread",
];

/// The smallfiles operations a v3 name could start with.
const OPS: &[&str] = &[
    "create", "stat", "read", "append", "rename", "delete", "readdir",
];

/// The catalogue name and labels of a v3 metric of a workload of `kind`
/// stored with unit text `unit`; a name that decodes to nothing in the
/// catalogue is kept as it is, without labels.
pub fn decode(kind: &str, name: &str, unit: &str) -> MetricKey {
    let decoded = match kind {
        "matrix" => matrix_cell(name).or_else(|| matrix_test(name)),
        "smallfiles" => operation(name),
        "pgbench" => statement(name),
        "fio" => job(name),
        "io" => steady_criterion(name, unit),
        _ => None,
    };
    decoded.unwrap_or_else(|| MetricKey::plain(name))
}

/// The histogram name and labels of a v3 histogram (`create_lat` of
/// smallfiles is `lat` of operation `create`).
pub fn decode_hist(kind: &str, name: &str) -> MetricKey {
    let op = (kind == "smallfiles")
        .then(|| name.strip_suffix("_lat"))
        .flatten()
        .filter(|op| OPS.contains(op));
    match op {
        Some(op) => MetricKey::new("lat", Labels::new().with(&OP, op)),
        None => MetricKey::plain(name),
    }
}

/// `{test}_{file}_{record}_{metric}` → metric {test, file_size, record_size}.
fn matrix_cell(name: &str) -> Option<MetricKey> {
    let mut parts = name.splitn(4, '_');
    let (test, file, record, rest) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if !TESTS.contains(&test) || !["bw_bytes_per_s", "lat_mean_ns"].contains(&rest) {
        return None;
    }
    let labels = Labels::new()
        .with(&TEST, test)
        .with(&FILE_SIZE, size(file)?)
        .with(&RECORD_SIZE, size(record)?);
    Some(MetricKey::new(rest, labels))
}

/// `{test}_geomean_bw_bytes_per_s` → geomean_bw_bytes_per_s {test}.
fn matrix_test(name: &str) -> Option<MetricKey> {
    let test = name.strip_suffix("_geomean_bw_bytes_per_s")?;
    TESTS
        .contains(&test)
        .then(|| MetricKey::new("geomean_bw_bytes_per_s", Labels::new().with(&TEST, test)))
}

/// `{op}_{metric}` → metric {op} (`readdir_entries` is a metric of its own).
fn operation(name: &str) -> Option<MetricKey> {
    let (op, rest) = name.split_once('_')?;
    (OPS.contains(&op) && lookup(rest).is_some())
        .then(|| MetricKey::new(rest, Labels::new().with(&OP, op)))
}

/// `stmt_{NN}_{slug}_lat_mean_ns` → lat_mean_ns {statement = NN_slug}.
fn statement(name: &str) -> Option<MetricKey> {
    let which = name.strip_prefix("stmt_")?.strip_suffix("_lat_mean_ns")?;
    let labels = Labels::new().with(&STATEMENT, which);
    Some(MetricKey::new("lat_mean_ns", labels))
}

/// `job{N}_{metric}` → metric {job = N}.
fn job(name: &str) -> Option<MetricKey> {
    let (n, rest) = name.strip_prefix("job")?.split_once('_')?;
    let index: u32 = n
        .parse()
        .ok()
        .filter(|_| n.chars().all(|c| c.is_ascii_digit()))?;
    lookup(rest)?;
    Some(MetricKey::new(rest, Labels::new().with(&JOB, index)))
}

/// v3 named a steady-state criterion's absolute value `ss_range` or
/// `ss_slope` whatever its unit; the catalogue names each unit's own.
fn steady_criterion(name: &str, unit: &str) -> Option<MetricKey> {
    let renamed = match (name, unit) {
        ("ss_range", "bytes/s") => "ss_range_bytes_per_s",
        ("ss_range", "ops/s") => "ss_range_iops",
        ("ss_slope", "bytes/s per s") => "ss_slope_bytes_per_s_per_s",
        ("ss_slope", "ops/s per s") => "ss_slope_iops_per_s",
        _ => return None,
    };
    Some(MetricKey::plain(renamed))
}

/// `64k` → 65536, as v3 names wrote sizes.
fn size(token: &str) -> Option<u64> {
    let split = token.find(|c: char| !c.is_ascii_digit())?;
    let (digits, unit) = token.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let scale: u64 = match unit {
        "b" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

#[cfg(test)]
mod tests {
    use super::super::compact_name;
    use super::*;

    fn key(name: &str, labels: &[(&str, &str)]) -> MetricKey {
        let labels = labels
            .iter()
            .fold(Labels::new(), |l, (k, v)| l.with_key(k, v));
        MetricKey::new(name, labels)
    }

    #[test]
    fn v3_names_decode_into_names_and_labels() {
        let cases = [
            (
                "matrix",
                "write_64k_4k_bw_bytes_per_s",
                key(
                    "bw_bytes_per_s",
                    &[
                        ("test", "write"),
                        ("file_size", "65536"),
                        ("record_size", "4096"),
                    ],
                ),
            ),
            (
                "matrix",
                "reread_128m_1m_lat_mean_ns",
                key(
                    "lat_mean_ns",
                    &[
                        ("test", "reread"),
                        ("file_size", "134217728"),
                        ("record_size", "1048576"),
                    ],
                ),
            ),
            (
                "matrix",
                "fread_geomean_bw_bytes_per_s",
                key("geomean_bw_bytes_per_s", &[("test", "fread")]),
            ),
            (
                "matrix",
                "geomean_bw_bytes_per_s",
                key("geomean_bw_bytes_per_s", &[]),
            ),
            (
                "smallfiles",
                "create_ops_per_s",
                key("ops_per_s", &[("op", "create")]),
            ),
            (
                "smallfiles",
                "read_lat_p999_ns",
                key("lat_p999_ns", &[("op", "read")]),
            ),
            ("smallfiles", "readdir_entries", key("readdir_entries", &[])),
            ("smallfiles", "ops_per_s", key("ops_per_s", &[])),
            (
                "pgbench",
                "stmt_06_update_pgbench_accounts_lat_mean_ns",
                key(
                    "lat_mean_ns",
                    &[("statement", "06_update_pgbench_accounts")],
                ),
            ),
            (
                "fio",
                "job12_lat_p99_ns",
                key("lat_p99_ns", &[("job", "12")]),
            ),
            ("fio", "read_lat_p99_ns", key("read_lat_p99_ns", &[])),
            ("io", "read_lat_p99_ns", key("read_lat_p99_ns", &[])),
        ];
        for (kind, name, want) in cases {
            let got = decode(kind, name, "");
            assert_eq!(got, want, "{kind} {name}");
            assert_eq!(compact_name(&got.name, &got.labels), name, "round trip");
        }
    }

    #[test]
    fn anything_else_is_kept_as_it_is() {
        for (kind, name) in [
            ("matrix", "write_64q_4k_bw_bytes_per_s"),
            ("matrix", "nosuch_64k_4k_bw_bytes_per_s"),
            ("matrix", "write_64k_4k_x_bw_bytes_per_s"),
            ("matrix", "write_99999999999999999999k_4k_bw_bytes_per_s"),
            ("smallfiles", "create_nosuch"),
            ("fio", "job_iops"),
            ("fio", "job+1_iops"),
            ("fio", "jobx_iops"),
            ("io", "create_ops_per_s"),
            ("command", "wall_s"),
            ("mock", ""),
        ] {
            assert_eq!(decode(kind, name, ""), MetricKey::plain(name), "{name}");
        }
    }

    #[test]
    fn steady_criteria_get_their_units_name_and_histograms_their_op() {
        assert_eq!(
            decode("io", "ss_range", "ops/s"),
            MetricKey::plain("ss_range_iops")
        );
        assert_eq!(
            decode("io", "ss_slope", "bytes/s per s"),
            MetricKey::plain("ss_slope_bytes_per_s_per_s")
        );
        assert_eq!(
            decode_hist("smallfiles", "stat_lat"),
            key("lat", &[("op", "stat")])
        );
        assert_eq!(
            decode_hist("io", "service_lat"),
            MetricKey::plain("service_lat")
        );
    }
}
