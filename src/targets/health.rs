//! Whether a target stayed whole during a run: what a kind can read of its
//! own state (a Gluster volume's bricks online, a pool ONLINE) and the pids
//! of the daemons serving it. Taken before and after each run; a run after
//! which something is wrong, or a daemon has another pid (it died and was
//! restarted), measured a degraded target and says so ([`degraded`]).

/// A target's state at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Health {
    /// What is wrong, in words (`brick srv:/b/1 offline`, `pool p is
    /// DEGRADED`); empty when whole.
    pub problems: Vec<String>,
    /// The daemons serving it: what each serves, and its pid.
    pub daemons: Vec<(String, u32)>,
}

/// The warning for a run that began with the target `before` and ended
/// with it `after`: problems at either end, and daemons that went away or
/// came back under another pid.
pub fn degraded(before: &Health, after: &Health) -> Option<String> {
    let mut said: Vec<String> = Vec::new();
    for p in after.problems.iter().chain(&before.problems) {
        if !said.contains(p) {
            said.push(p.clone());
        }
    }
    for (what, pid) in &before.daemons {
        let now = after
            .daemons
            .iter()
            .find(|(w, _)| w == what)
            .map(|(_, p)| *p);
        match now {
            Some(p) if p == *pid => {}
            Some(p) => said.push(format!("{what} restarted (pid {pid}, then {p})")),
            None => said.push(format!("{what} (pid {pid}) stopped")),
        }
    }
    (!said.is_empty()).then(|| {
        format!(
            "degraded target: {} during the run: it measured the target in that state, not as configured",
            said.join("; ")
        )
    })
}

/// The bricks and daemons of `gluster volume status VOLUME --xml`: each
/// node's name (a brick as `host:path`, a daemon by its name and the
/// server it runs on: every server of a replicated volume runs its own
/// Self-heal Daemon), whether it is online, and its pid.
pub fn gluster_status(xml: &str) -> Health {
    let mut h = Health::default();
    for node in xml.split("<node>").skip(1) {
        let node = node.split("</node>").next().unwrap_or("");
        let (host, path) = (tag(node, "hostname"), tag(node, "path"));
        let what = match (host, path) {
            (Some(h), Some(p)) if h.contains("Daemon") => format!("{h} on {p}"),
            (Some(h), None) if h.contains("Daemon") => h.to_string(),
            (Some(h), Some(p)) => format!("brick {h}:{p}"),
            (Some(h), None) => h.to_string(),
            (None, Some(p)) => format!("brick {p}"),
            (None, None) => continue,
        };
        let online = tag(node, "status") == Some("1");
        let pid = tag(node, "pid")
            .and_then(|p| p.parse::<i64>().ok())
            .filter(|p| *p > 0);
        match (online, pid) {
            (true, Some(pid)) => h.daemons.push((what, pid as u32)),
            (true, None) => {}
            (false, _) => h.problems.push(format!("{what} offline")),
        }
    }
    h
}

/// The text of the first `<name>…</name>` in `xml`.
fn tag<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let len = xml[start..].find(&format!("</{name}>"))?;
    Some(xml[start..start + len].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str = "<cliOutput><volStatus><volumes><volume><volName>v</volName>\
        <node><hostname>srv</hostname><path>/b/0</path><status>1</status><port>49152</port><pid>4101</pid></node>\
        <node><hostname>srv</hostname><path>/b/1</path><status>0</status><port>N/A</port><pid>-1</pid></node>\
        <node><hostname>Self-heal Daemon</hostname><path>localhost</path><status>1</status><pid>4200</pid></node>\
        </volume></volumes></volStatus></cliOutput>";

    #[test]
    fn a_brick_offline_is_a_problem_and_online_ones_are_daemons() {
        let h = gluster_status(STATUS);
        assert_eq!(h.problems, vec!["brick srv:/b/1 offline".to_string()]);
        assert_eq!(
            h.daemons,
            vec![
                ("brick srv:/b/0".to_string(), 4101),
                ("Self-heal Daemon on localhost".to_string(), 4200)
            ]
        );
    }

    // Seed 004's two servers (scripts/simcluster): each runs a Self-heal
    // Daemon, and `gluster volume status` lists them in either order. Told
    // apart by server only, every run read "Self-heal Daemon restarted
    // (pid 20447, then 20419)": a degraded target that was whole.
    #[test]
    fn the_self_heal_daemons_of_two_servers_are_two_daemons() {
        let shd = |host: &str, pid: u32| {
            format!("<node><hostname>Self-heal Daemon</hostname><path>{host}</path><status>1</status><pid>{pid}</pid></node>")
        };
        let status = |nodes: [String; 2]| format!("<volume>{}{}</volume>", nodes[0], nodes[1]);
        let before = gluster_status(&status([shd("s1", 20447), shd("s2", 20419)]));
        let after = gluster_status(&status([shd("s2", 20419), shd("s1", 20447)]));
        assert_eq!(degraded(&before, &after), None);
        let restarted = gluster_status(&status([shd("s2", 20419), shd("s1", 31000)]));
        let w = degraded(&before, &restarted).unwrap();
        assert!(
            w.contains("Self-heal Daemon on s1 restarted (pid 20447, then 31000)"),
            "{w}"
        );
    }

    #[test]
    fn a_run_is_degraded_by_problems_and_restarted_or_stopped_daemons() {
        let whole = Health {
            problems: vec![],
            daemons: vec![("brick srv:/b/0".into(), 10), ("brick srv:/b/1".into(), 11)],
        };
        assert_eq!(degraded(&whole, &whole), None);
        let killed = gluster_status(STATUS);
        let w = degraded(&whole, &killed).unwrap();
        assert!(w.starts_with("degraded target: brick srv:/b/1 offline; brick srv:/b/0 restarted (pid 10, then 4101)"), "{w}");
        let restarted = Health {
            problems: vec![],
            daemons: vec![("brick srv:/b/0".into(), 10), ("brick srv:/b/1".into(), 12)],
        };
        let w = degraded(&whole, &restarted).unwrap();
        assert!(
            w.contains("brick srv:/b/1 restarted (pid 11, then 12)"),
            "{w}"
        );
        let pool = Health {
            problems: vec!["pool p is DEGRADED".into()],
            daemons: vec![],
        };
        let w = degraded(&Health::default(), &pool).unwrap();
        assert!(w.contains("pool p is DEGRADED"), "{w}");
    }
}
