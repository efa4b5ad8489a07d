//! The Gluster command line as storlab uses it (`gluster --mode=script`):
//! whether glusterd answers, volumes deleted, `volume info`/`volume get`
//! parsed, `volume create` argument vectors. Knows no target kind: the
//! `gluster` target and the journal's undo (`storlab cleanup`) both stand
//! on it.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};

use super::cmd;

pub const GLUSTER: &str = "gluster";
pub const SCRIPT: &str = "--mode=script";

/// Runs `gluster --mode=script args…`.
pub fn gluster(args: &[&str]) -> Result<String> {
    let mut all = vec![SCRIPT];
    all.extend_from_slice(args);
    cmd::run(GLUSTER, &all)
}

pub fn glusterd_reachable() -> bool {
    cmd::succeeds(GLUSTER, &[SCRIPT, "volume", "list"])
}

/// Stops and deletes volume `name` if it exists.
pub fn delete_volume(name: &str) -> Result<()> {
    if !glusterd_reachable() {
        bail!("cannot reach glusterd to delete volume {name}; start glusterd and run `storlab cleanup` again");
    }
    if gluster(&["volume", "info", name]).is_err() {
        return Ok(());
    }
    let _ = gluster(&["volume", "stop", name, "force"]); // may already be stopped
    cmd::retry(10, 1000, || {
        gluster(&["volume", "delete", name]).map(|_| ())
    })
    .with_context(|| format!("deleting Gluster volume {name}; run `gluster volume delete {name}`"))
}

/// `Key: value` lines of `gluster volume info`.
pub fn parse_info(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The table printed by `gluster volume get VOL OPTION|all`.
pub fn parse_get(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .skip_while(|l| !l.starts_with("------"))
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.to_string(), f.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// Whether `got` (as gluster reports it) is the value `want` asked for.
pub fn same_value(want: &str, got: &str) -> bool {
    let norm = |s: &str| {
        let s = s
            .trim()
            .trim_end_matches("(DEFAULT)")
            .trim()
            .to_ascii_lowercase();
        match s.as_str() {
            "on" | "true" | "yes" | "enable" | "1" => "on".to_string(),
            "off" | "false" | "no" | "disable" | "0" => "off".to_string(),
            _ => s,
        }
    };
    norm(want) == norm(got)
}

/// The `gluster volume create` arguments.
pub fn create_args(volume: &str, layout: Option<(&str, i64)>, bricks: &[String]) -> Vec<String> {
    let mut args = vec![
        SCRIPT.to_string(),
        "volume".into(),
        "create".into(),
        volume.into(),
    ];
    if let Some((kind, n)) = layout {
        args.push(kind.to_string());
        args.push(n.to_string());
    }
    args.extend(bricks.iter().cloned());
    args.push("force".into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn volume_get_and_info_are_parsed() {
        let get = "Option                                   Value\n------                                   -----\nperformance.write-behind                 off\nperformance.cache-size                   32MB\n";
        let g = parse_get(get);
        assert_eq!(g["performance.write-behind"], "off");
        assert_eq!(g.len(), 2);
        let info = parse_info("\nVolume Name: v\nType: Replicate\nNumber of Bricks: 1 x 2 = 2\n");
        assert_eq!(info["Type"], "Replicate");
        assert!(
            same_value("false", "off") && same_value("Enable", "on") && !same_value("on", "off")
        );
    }

    #[test]
    fn create_arguments_name_every_brick_and_force() {
        let a = create_args("v", Some(("replica", 2)), &["h:/b0".into(), "h:/b1".into()]);
        assert_eq!(
            a,
            vec![
                "--mode=script",
                "volume",
                "create",
                "v",
                "replica",
                "2",
                "h:/b0",
                "h:/b1",
                "force"
            ]
        );
    }
}
