use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;

use super::*;

choices! {
    enum Mode { Fast = "fast", Slow = "slow" }
}

declare! {
    struct Group {
        allocation: one_of(&["thin", "preallocated"]) = "thin" => "how",
        dir: string = "/var/tmp" => "where",
    }
}

declare! {
    struct Kind {
        bs: size = "4k" => "block size",
        group: flatten(Group),
        jobs: int(u16, 1, 1024) = "2" => "jobs",
        runtime: duration => "time",
        mode: choice(Mode) = "slow" => "mode",
        ratio: float(0.0, 1.0) => "ratio",
        tags: list = "a,b" => "tags",
        options: map => "options",
    }
}

#[test]
fn one_declaration_gives_the_table_in_order_with_groups_in_place() {
    let names: Vec<&str> = Kind::PARAMS.iter().map(|s| s.name).collect();
    assert_eq!(
        names,
        [
            "bs",
            "allocation",
            "dir",
            "jobs",
            "runtime",
            "mode",
            "ratio",
            "tags",
            "options"
        ]
    );
    assert_eq!(Kind::PARAMS[3].ty, ParamType::Int { min: 1, max: 1024 });
    assert_eq!(Kind::PARAMS[5].ty, ParamType::Choice(&["fast", "slow"]));
    assert_eq!(Kind::PARAMS[4].default, None);
    assert!(help_table(Kind::PARAMS).contains("    jobs        jobs (integer) [default: 2]\n"));
}

#[test]
fn defaults_are_read_in_base_units_into_typed_fields() {
    let p = Params::defaults(Kind::PARAMS);
    assert_eq!(
        p.to_json(),
        json!({"bs": 4096, "allocation": "thin", "dir": "/var/tmp", "jobs": 2, "mode": "slow", "tags": ["a", "b"]})
    );
    let k = Kind::from_params(&p).unwrap();
    assert_eq!(k.bs, 4096);
    assert_eq!(k.group.dir, "/var/tmp");
    assert_eq!(k.jobs, 2u16);
    assert_eq!(k.runtime, None);
    assert_eq!(k.mode, Mode::Slow);
    assert_eq!(k.ratio, None);
    assert_eq!(k.tags, ["a", "b"]);
    assert_eq!(k.options, None);
}

#[test]
fn overridden_values_are_read_again() {
    let mut p = Params::defaults(Kind::PARAMS);
    p.set("runtime", Value::Duration(Duration::from_secs(3)));
    p.set("mode", Value::Str("fast".into()));
    p.set_entry("options", "a.b", "on").unwrap();
    let k = Kind::from_params(&p).unwrap();
    assert_eq!(k.runtime, Some(Duration::from_secs(3)));
    assert_eq!(k.mode, Mode::Fast);
    assert_eq!(
        k.options,
        Some(BTreeMap::from([("a.b".to_string(), "on".to_string())]))
    );
    assert!(p.set_entry("bs", "x", "y").is_err());
}

#[test]
fn a_value_of_the_wrong_type_is_a_fault_not_a_panic() {
    let mut p = Params::defaults(Kind::PARAMS);
    p.set("jobs", Value::Int(70_000));
    assert_eq!(Kind::from_params(&p).unwrap_err().0, "jobs");
    let mut p = Params::defaults(Kind::PARAMS);
    p.set("mode", Value::Str("medium".into()));
    assert_eq!(Kind::from_params(&p).unwrap_err().0, "mode");
    assert_eq!(Kind::from_params(&Params::default()).unwrap_err().0, "bs");
}

#[test]
fn numbers_are_checked_against_their_range_here() {
    let int = ParamType::Int { min: 1, max: 10 };
    assert_eq!(int.integer(3), Some(Ok(Value::Int(3))));
    assert!(int
        .integer(11)
        .unwrap()
        .unwrap_err()
        .contains("between 1 and 10"));
    assert_eq!(int.number(1.5), None);
    let float = ParamType::Float {
        min: 0.0,
        max: 1e18,
    };
    for bad in [f64::INFINITY, f64::NAN, -1.0, 1e300] {
        assert!(float.number(bad).unwrap().is_err(), "{bad}");
    }
    assert_eq!(float.integer(5), Some(Ok(Value::Float(5.0))));
    let d = ParamType::Duration;
    for bad in [f64::INFINITY, f64::NAN, 1e300, 1.8e19, -1.0] {
        assert!(d.number(bad).unwrap().is_err(), "{bad}");
    }
    assert_eq!(
        d.integer(2),
        Some(Ok(Value::Duration(Duration::from_secs(2))))
    );
    assert_eq!(ParamType::Size.integer(5), Some(Ok(Value::Size(5))));
    assert!(ParamType::Size.integer(-5).unwrap().is_err());
    assert_eq!(ParamType::Size.number(1.5), None);
    assert_eq!(ParamType::Bool.integer(1), None);
    assert_eq!(ParamType::Str.expected(), "must be a string");
    assert_eq!(int.expected(), "must be an integer");
}
