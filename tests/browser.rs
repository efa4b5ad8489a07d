use base64::Engine;
use serde_json::json;

use crate::cdp::{chromium, Browser};
use crate::util::Lab;

#[test]
fn the_html_report_renders_offline_without_errors_and_escapes_names() {
    require_root!();
    let Some(binary) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium (.ci/run)"
        );
        eprintln!("SKIPPED: chromium is not installed");
        return;
    };
    let lab = Lab::new();
    let data = lab.path().join("d");
    std::fs::create_dir(&data).unwrap();
    let evil = "<script>alert(1)</script>";
    let file = lab.file(
        "r.toml",
        &format!(
            "name = \"browser\"\ndescription = \"<b>not bold</b>\"\n[plan]\nrepetitions = 3\n\
             [[target]]\nname = \"disk\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"{evil}\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
             [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"16M\"\nruntime = \"2s\"\n",
            data.display()
        ),
    );
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let html = lab.path().join("report.html");
    lab.ok(&["report", "-o", html.to_str().unwrap()]);

    let mut b = Browser::launch(&binary);
    let url = format!("file://{}", html.display());
    b.call("Page.navigate", json!({"url": url}), true);
    b.wait_for("Page.loadEventFired");

    let sizes = b.eval("Array.from(document.querySelectorAll('.chart svg')).map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })");
    let sizes = sizes.as_array().unwrap();
    assert!(
        sizes.len() >= 4,
        "expected bar, difference, over-time and latency charts, got {sizes:?}"
    );
    for s in sizes {
        assert!(
            s[0].as_f64().unwrap() > 100.0 && s[1].as_f64().unwrap() > 100.0,
            "a chart rendered at {s}"
        );
    }
    assert_eq!(
        b.eval("document.querySelectorAll('script').length"),
        json!(0)
    );
    assert_eq!(
        b.eval(&format!(
            "document.body.innerText.includes({})",
            json!(evil)
        )),
        json!(true)
    );
    assert_eq!(
        b.eval("document.body.innerText.includes('<b>not bold</b>')"),
        json!(true)
    );

    let metrics = b.call("Page.getLayoutMetrics", json!({}), true);
    let (w, h) = (
        metrics["cssContentSize"]["width"].clone(),
        metrics["cssContentSize"]["height"].clone(),
    );
    let shot = b.call(
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true, "clip": {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}}),
        true,
    );
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    let out = std::env::temp_dir().join("storlab-report-screenshot.png");
    std::fs::write(&out, &png).unwrap();
    assert!(png.len() > 10_000, "screenshot of {} bytes", png.len());
    eprintln!("screenshot written to {}", out.display());

    let requests: Vec<&str> = b
        .events
        .iter()
        .filter(|e| e["method"] == "Network.requestWillBeSent")
        .filter_map(|e| e["params"]["request"]["url"].as_str())
        .collect();
    assert!(
        requests.iter().all(|u| *u == url),
        "the report made network requests: {requests:?}"
    );
    let errors: Vec<String> = b
        .events
        .iter()
        .filter(|e| {
            e["method"] == "Runtime.exceptionThrown"
                || (e["method"] == "Runtime.consoleAPICalled" && e["params"]["type"] == "error")
                || (e["method"] == "Log.entryAdded" && e["params"]["entry"]["level"] == "error")
        })
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}
