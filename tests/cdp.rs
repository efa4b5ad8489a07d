//! A minimal Chrome DevTools Protocol client over a WebSocket, enough to load
//! a page in headless Chromium, watch console and network events, evaluate
//! an expression and take a screenshot.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tungstenite::{stream::MaybeTlsStream, Message, WebSocket};

pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    session: String,
    /// Every event received, in order.
    pub events: Vec<Value>,
}

pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

impl Browser {
    pub fn launch(binary: &Path) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--remote-debugging-address=127.0.0.1",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let port_file = profile.path().join("DevToolsActivePort");
        let t0 = Instant::now();
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&port_file) {
                if t.lines().count() >= 2 {
                    break t;
                }
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "chromium did not open its DevTools port"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut lines = text.lines();
        let (port, path) = (lines.next().unwrap(), lines.next().unwrap());
        let (ws, _) = tungstenite::connect(format!("ws://127.0.0.1:{port}{path}"))
            .expect("connect to DevTools");
        let mut b = Browser {
            child,
            _profile: profile,
            ws,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
        };
        let target = b.call("Target.createTarget", json!({"url": "about:blank"}), false);
        let attached = b.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
            false,
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        for domain in ["Runtime", "Log", "Network", "Page"] {
            b.call(&format!("{domain}.enable"), json!({}), true);
        }
        b
    }

    /// Sends a command and waits for its result, collecting events meanwhile.
    pub fn call(&mut self, method: &str, params: Value, in_session: bool) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if in_session {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .expect("send to DevTools");
        loop {
            let v = self.read();
            if v["id"] == id {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
            self.events.push(v);
        }
    }

    fn read(&mut self) -> Value {
        loop {
            match self.ws.read().expect("read from DevTools") {
                Message::Text(t) => {
                    return serde_json::from_str(t.as_str()).expect("DevTools JSON")
                }
                _ => continue,
            }
        }
    }

    /// Waits until an event named `method` has been seen.
    pub fn wait_for(&mut self, method: &str) {
        let t0 = Instant::now();
        while !self.events.iter().any(|e| e["method"] == method) {
            assert!(t0.elapsed() < Duration::from_secs(30), "no {method} event");
            let v = self.read();
            self.events.push(v);
        }
    }

    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
            true,
        );
        r["result"]["value"].clone()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
