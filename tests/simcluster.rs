//! The simulated cluster (`scripts/simcluster`): hosts that are network,
//! mount and UTS namespaces on a private bridge, commands run in them,
//! tbf shaping of their links, and removal of everything `up` made — also
//! when the test that made it fails, and (`gc`) when it was killed.
//!
//! [`Sim`] is the guard other tests build their clusters with.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

pub const SIMCLUSTER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/simcluster");
const CTL_ROOT: &str = "/var/lib/storlab-sim";

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// A simulated cluster, brought down on drop (even when the test fails).
/// Its `--owner` is the test process, so that `simcluster gc` removes it
/// when the test binary was killed before its guards ran.
pub struct Sim {
    pub name: String,
}

impl Sim {
    /// `simcluster up` with the `hosts` and `options` (`--rate 1gbit`,
    /// `--glusterd s1,s2`) given; panics naming what it printed when it fails.
    /// Clusters of earlier test runs that were killed before their guards
    /// ran (their owner is gone) are removed first.
    pub fn up(hosts: &[&str], options: &[&str]) -> Sim {
        let _ = Command::new(SIMCLUSTER).arg("gc").output();
        let name = format!(
            "t{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let out = Command::new(SIMCLUSTER)
            .args(["up", &name, "--owner", &std::process::id().to_string()])
            .args(options)
            .args(hosts)
            .output()
            .expect("run scripts/simcluster");
        assert!(
            out.status.success(),
            "simcluster up {name} {options:?} {hosts:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Sim { name }
    }

    /// A command that runs `args` on `host`, as over ssh.
    pub fn cmd(&self, host: &str, args: &[&str]) -> Command {
        let mut c = Command::new(SIMCLUSTER);
        c.args(["exec", &self.name, host]).args(args);
        c
    }

    pub fn exec(&self, host: &str, args: &[&str]) -> Output {
        self.cmd(host, args)
            .output()
            .expect("run scripts/simcluster")
    }

    /// Runs `args` on `host` and returns its stdout; panics when it fails.
    pub fn ok(&self, host: &str, args: &[&str]) -> String {
        let out = self.exec(host, args);
        assert!(
            out.status.success(),
            "{args:?} on {host} failed ({:?}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The remote shell that reaches its hosts (`STORLAB_RSH`, Open MPI's
    /// `plm_rsh_agent`).
    pub fn agent(&self) -> String {
        format!("{SIMCLUSTER} agent {}", self.name)
    }

    pub fn ctl(&self) -> PathBuf {
        Path::new(CTL_ROOT).join(&self.name)
    }

    /// The bridge's name (`sb<id>`).
    pub fn bridge(&self) -> String {
        let id = std::fs::read_to_string(self.ctl().join("id")).expect("a cluster id");
        format!("sb{}", id.trim())
    }

    /// Each host's holder process (pid, start time).
    pub fn holders(&self) -> Vec<(u32, String)> {
        let hosts = std::fs::read_to_string(self.ctl().join("hosts")).unwrap();
        hosts
            .lines()
            .map(|h| {
                let t = std::fs::read_to_string(self.ctl().join("hosts.d").join(h).join("pid"))
                    .unwrap();
                let mut w = t.split_whitespace();
                (
                    w.next().unwrap().parse().unwrap(),
                    w.next().unwrap().to_string(),
                )
            })
            .collect()
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        match Command::new(SIMCLUSTER).args(["down", &self.name]).output() {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "simcluster down {} failed: {}",
                self.name,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("simcluster down {}: {e}", self.name),
        }
    }
}

/// Whether process `pid` started at `start` (field 22 of its stat) still
/// lives (a zombie does not).
pub fn alive(pid: u32, start: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let f: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
    f[0] != "Z" && f[19] == start
}

fn link_exists(name: &str) -> bool {
    Command::new("ip")
        .args(["link", "show", name])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Asserts that nothing of cluster `sim` is left: its bridge and veths,
/// its hosts' processes, its directories.
fn assert_gone(name: &str, bridge: &str, holders: &[(u32, String)]) {
    assert!(!link_exists(bridge), "bridge {bridge} is left");
    let links = String::from_utf8(
        Command::new("ip")
            .args(["-o", "link"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        !links.contains(&format!("{bridge}h")),
        "a veth of {bridge} is left:\n{links}"
    );
    for (pid, start) in holders {
        assert!(!alive(*pid, start), "host process {pid} is left");
    }
    assert!(!Path::new(CTL_ROOT).join(name).exists());
    assert!(!Path::new(&format!("/var/tmp/storlab-sim-{name}")).exists());
}

/// Bytes per second from `from` to `to` over TCP, sending `mib` MiB.
fn throughput(sim: &Sim, from: &str, to: &str, mib: usize) -> f64 {
    const SERVER: &str = "import socket\ns=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1); s.bind(('0.0.0.0',5001)); s.listen(1); print('ready', flush=True)\nc,_=s.accept()\nwhile c.recv(1<<20): pass\nc.sendall(b'k')";
    const CLIENT: &str = "import socket,sys,time\nc=socket.create_connection((sys.argv[1],5001)); b=b'x'*(1<<20); t=time.time()\nfor _ in range(int(sys.argv[2])): c.sendall(b)\nc.shutdown(socket.SHUT_WR); c.recv(1); print(int(sys.argv[2])*(1<<20)/(time.time()-t))";
    let mut server = sim
        .cmd(to, &["python3", "-c", SERVER])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut ready = [0u8; 5];
    std::io::Read::read_exact(server.stdout.as_mut().unwrap(), &mut ready).unwrap();
    let out = sim.ok(from, &["python3", "-c", CLIENT, to, &mib.to_string()]);
    assert!(server.wait().unwrap().success());
    out.trim().parse().unwrap()
}

#[test]
#[ignore = "needs root"]
fn hosts_are_namespaces_on_a_shaped_bridge() {
    require_root!();
    let sim = Sim::up(&["a1", "a2"], &["--rate", "100mbit"]);
    assert_eq!(sim.ok("a1", &["hostname"]).trim(), "a1");
    assert_eq!(sim.ok("a2", &["hostname"]).trim(), "a2");
    // Each host has its own mounts: a tmpfs on a1 is seen neither on a2
    // nor on the machine.
    sim.ok("a1", &["mount", "-t", "tmpfs", "simcluster-test", "/mnt"]);
    let on = |host: &str| {
        sim.ok(host, &["cat", "/proc/self/mountinfo"])
            .contains("simcluster-test")
    };
    assert!(on("a1"));
    assert!(!on("a2"));
    assert!(!std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .contains("simcluster-test"));
    // Commands run as over ssh: a clean environment naming the agent.
    let env = sim.ok("a2", &["env"]);
    assert!(
        env.contains(&format!("OMPI_MCA_plm_rsh_agent={}", sim.agent())),
        "{env}"
    );
    // The agent takes a line for the remote shell, as ssh does.
    let agent: Vec<String> = sim.agent().split(' ').map(String::from).collect();
    let out = Command::new(&agent[0])
        .args(&agent[1..])
        .args(["a2", "echo", "'two words'", "$(hostname)"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "two words a2\n");
    // Shaped to 100 Mbit/s (12.5 MB/s; tbf's 512 KiB burst adds a little).
    let shaped = throughput(&sim, "a1", "a2", 10);
    assert!(
        shaped < 16e6 && shaped > 5e6,
        "shaped to 100mbit: {shaped} B/s"
    );
    let out = Command::new(SIMCLUSTER)
        .args(["shape", &sim.name, "off"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let free = throughput(&sim, "a1", "a2", 40);
    assert!(
        free > 3.0 * shaped,
        "unshaped {free} B/s, shaped {shaped} B/s"
    );
    let (name, bridge, holders) = (sim.name.clone(), sim.bridge(), sim.holders());
    assert!(link_exists(&bridge));
    drop(sim);
    assert_gone(&name, &bridge, &holders);
}

#[test]
#[ignore = "needs root"]
fn a_failing_test_and_a_killed_one_leave_nothing() {
    require_root!();
    // The guard brings the cluster down while the test panics, with a
    // process still running on one of its hosts.
    let mut seen = None;
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let sim = Sim::up(&["b1", "b2"], &[]);
        let child = sim.cmd("b2", &["sleep", "300"]).spawn().unwrap();
        seen = Some((sim.name.clone(), sim.bridge(), sim.holders(), child));
        panic!("the test fails here");
    }));
    assert!(failed.is_err());
    let (name, bridge, holders, mut child) = seen.unwrap();
    assert_gone(&name, &bridge, &holders);
    // It leaves its namespaces early in its exit, a moment before its
    // parent (this test) can reap it.
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(5),
            "the process on b2 was ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }

    // A cluster whose owner died (a test binary killed before its guards
    // ran) is removed by `simcluster gc`, and only such a one.
    let mut owner = Command::new("sleep").arg("60").spawn().unwrap();
    let orphan = format!("t{}-orphan", std::process::id());
    let st = Command::new(SIMCLUSTER)
        .args(["up", &orphan, "--owner", &owner.id().to_string(), "c1"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    owner.kill().unwrap();
    owner.wait().unwrap();
    assert!(st.success());
    let orphan_guard = Sim {
        name: orphan.clone(),
    };
    let orphan_ctl = Path::new(CTL_ROOT).join(&orphan);
    let orphan_holders = orphan_guard.holders();
    // (Sim::up runs gc itself.)
    let live = Sim::up(&["c1"], &[]);
    let st = Command::new(SIMCLUSTER)
        .arg("gc")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    // (Its bridge's name may be the live cluster's now.)
    assert!(!orphan_ctl.exists(), "gc removed the orphan");
    for (pid, start) in &orphan_holders {
        assert!(!alive(*pid, start), "the orphan's host {pid} was ended");
    }
    assert!(live.ctl().exists(), "gc left the live cluster alone");
}
