use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};

use crate::cdp::{chromium, Browser};
use crate::util::Lab;

/// Chromium's path; a missing Chromium fails the test in one line naming
/// its package.
pub fn chromium_binary() -> PathBuf {
    chromium().unwrap_or_else(|| {
        panic!("chromium is not installed: install the Debian package `chromium` (scripts/test installs every package the tests use)")
    })
}

/// Runs the experiment `toml` and writes the latest campaign's HTML report.
fn report(lab: &Lab, toml: &str) -> PathBuf {
    let file = lab.file("r.toml", toml);
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let html = lab.path().join("report.html");
    lab.ok(&["report", "-o", html.to_str().unwrap()]);
    html
}

/// Loads `html` in a fresh headless Chromium; returns it and the page's URL.
fn open(binary: &Path, html: &Path) -> (Browser, String) {
    let mut b = Browser::launch(binary);
    let url = format!("file://{}", html.display());
    b.call("Page.navigate", json!({"url": url}), true);
    b.wait_for("Page.loadEventFired");
    (b, url)
}

/// Every chart is drawn larger than 100 × 100 px; returns how many there are.
fn assert_charts_rendered(b: &mut Browser) -> usize {
    let sizes = b.eval("Array.from(document.querySelectorAll('.chart svg')).map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })");
    let sizes = sizes.as_array().unwrap();
    for s in sizes {
        assert!(
            s[0].as_f64().unwrap() > 100.0 && s[1].as_f64().unwrap() > 100.0,
            "a chart rendered at {s}"
        );
    }
    sizes.len()
}

/// No script, no request but the page itself, no console error.
fn assert_offline_and_clean(b: &mut Browser, url: &str) {
    assert_eq!(
        b.eval("document.querySelectorAll('script').length"),
        json!(0)
    );
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

/// A PNG of the page region `clip` ({x, y, width, height}) written to `out`.
fn screenshot(b: &mut Browser, clip: Value, out: &Path) {
    let mut clip = clip;
    clip["scale"] = json!(1);
    let shot = b.call(
        "Page.captureScreenshot",
        json!({"format": "png", "captureBeyondViewport": true, "clip": clip}),
        true,
    );
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    std::fs::write(out, &png).unwrap();
    assert!(png.len() > 10_000, "screenshot of {} bytes", png.len());
    eprintln!("screenshot written to {}", out.display());
}

#[test]
#[ignore = "needs root"]
fn the_html_report_renders_offline_without_errors_and_escapes_names() {
    require_root!();
    let binary = chromium_binary();
    let lab = Lab::new();
    let data = lab.path().join("d");
    std::fs::create_dir(&data).unwrap();
    let evil = "<script>alert(1)</script>";
    let html = report(
        &lab,
        &format!(
            "name = \"browser\"\ndescription = \"<b>not bold</b>\"\n[plan]\nrepetitions = 3\n\
             [[target]]\nname = \"disk\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"{evil}\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
             [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"16M\"\nruntime = \"2s\"\n",
            data.display()
        ),
    );
    let (mut b, url) = open(&binary, &html);
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    let charts = assert_charts_rendered(&mut b);
    assert!(
        charts >= 4,
        "expected bar, difference, over-time and latency charts, got {charts}"
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
    let size = b.call("Page.getLayoutMetrics", json!({}), true)["cssContentSize"].clone();
    let page = json!({"x": 0, "y": 0, "width": size["width"], "height": size["height"]});
    let out = std::env::temp_dir().join("storlab-report-screenshot.png");
    screenshot(&mut b, page, &out);
    assert_offline_and_clean(&mut b, &url);
}

#[test]
#[ignore = "needs root"]
fn a_matrix_report_draws_a_heat_map_per_test_and_target() {
    require_root!();
    let binary = chromium_binary();
    let lab = Lab::new();
    let data = lab.path().join("d");
    std::fs::create_dir(&data).unwrap();
    // A disk directory against a tmpfs, fsync inside the timing: writes
    // differ, reads (from the page cache) hardly. 64k..256k files × 4k..16M
    // records: 18 cells, 3 of the 3 × 7 empty.
    let html = report(
        &lab,
        &format!(
            "name = \"matrix-browser\"\n[plan]\nrepetitions = 3\ntelemetry = false\n\
             [[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"b\"\nkind = \"tmpfs\"\nsize = \"16M\"\n\
             [[workload]]\nname = \"iozone\"\nkind = \"matrix\"\nmax_file_size = \"256k\"\n\
             include_flush = true\ntests = [\"write\", \"read\", \"randread\"]\n",
            data.display()
        ),
    );
    let (mut b, url) = open(&binary, &html);
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    // Bar and difference charts of the primary metric, then per test one
    // figure of both targets' maps and one difference map, and per target
    // throughput and latency against file size (iozone's 2-D charts,
    // seed 003's latency charts). The overview first.
    assert_eq!(assert_charts_rendered(&mut b), 1 + 2 + 3 * (2 + 2 * 2));
    let with = |text: &str| {
        format!(
            "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes({})).length",
            json!(text)
        )
    };
    assert_eq!(b.eval(&with("no cell: record larger than file")), json!(6));
    assert_eq!(b.eval(&with("randread on b against a")), json!(1));
    assert_eq!(b.eval(&with("% difference in throughput")), json!(3));
    // Lines against file size, one per record size: 64k..256k files × 4k
    // records and up, 7 record sizes (4k..256k), on each target.
    for what in ["mean throughput", "mean latency of one operation"] {
        for target in ["a", "b"] {
            for test in ["write", "read", "randread"] {
                let title = format!("{test} on {target}: {what}");
                let titled = format!(
                    "Array.from(document.querySelectorAll('.chart svg text')).filter(t => t.textContent.trim() === {}).length",
                    json!(title)
                );
                assert_eq!(b.eval(&titled), json!(1), "{title}");
            }
        }
    }
    assert_eq!(b.eval(&with("latency per record (")), json!(6));
    let legends = b.eval(
        "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('mean latency of one operation')).map(s => Array.from(s.querySelectorAll('text')).filter(t => t.textContent.trim().endsWith(' records')).length)",
    );
    assert_eq!(legends, json!(vec![7; 6]), "a legend entry per record size");
    // Each test's throughput maps: both targets in one figure, with one
    // colour bar (32 slices and a frame, 14 px wide), one colour-bar title
    // and one legend — and one domain: the scale's two ends (viridis'
    // first and last colour) go to the smallest and largest cell of the
    // two maps together, so no panel has both ends unless it holds both
    // extremes; scales of their own would put both ends in each panel.
    let groups = b.eval(
        "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('mean throughput per target')).map(s => {            const texts = Array.from(s.querySelectorAll('text')).map(t => [t.textContent.trim(), t.getBoundingClientRect().top]);            const panel = name => texts.find(t => t[0].startsWith('on ' + name + ','))[1];            const [ya, yb] = [panel('a'), panel('b')];            const rects = Array.from(s.querySelectorAll('rect'));            const ends = ['#440154', '#fde725'];            const inPanel = (r, top) => { const y = r.getBoundingClientRect().top; return top === ya ? (y > ya && y < yb) : y > yb; };            const has = top => ends.map(c => rects.some(r => (r.getAttribute('fill') || '').toLowerCase() === c && inPanel(r, top)));            return { bars: rects.filter(r => r.getAttribute('width') === '14').length,                     titles: texts.filter(t => t[0].startsWith('throughput (')).length,                     legends: texts.filter(t => t[0] === 'no cell: record larger than file').length,                     a: has(ya), b: has(yb), order: ya < yb }; })",
    );
    let groups = groups.as_array().unwrap();
    assert_eq!(groups.len(), 3, "{groups:?}");
    for g in groups {
        assert_eq!(g["bars"], json!(33), "one colour bar: {g}");
        assert_eq!(g["titles"], json!(1), "one colour-bar title: {g}");
        assert_eq!(g["legends"], json!(1), "one legend: {g}");
        assert_eq!(g["order"], json!(true), "a above b: {g}");
        let ends = |p: &str| {
            g[p].as_array()
                .unwrap()
                .iter()
                .filter(|v| **v == json!(true))
                .count()
        };
        assert_eq!(ends("a") + ends("b"), 2, "each end of one scale once: {g}");
    }
    // Values and latency per target and differences, file sizes as rows.
    assert_eq!(
        b.eval("document.querySelectorAll('.matrix table').length"),
        json!(15)
    );
    assert_eq!(
        b.eval(
            "Array.from(document.querySelectorAll('.matrix table')).map(t => t.rows.length - 1)"
        ),
        json!(vec![3; 15])
    );
    // The per-test summary: all tests, then write, read, randread.
    assert_eq!(
        b.eval("document.body.innerText.includes('randread_geomean_bw_bytes_per_s')"),
        json!(true)
    );
    let clip = b.eval(
        "(() => { const h = document.querySelector('h4'); const m = document.querySelector('.matrix'); \
         const a = h.getBoundingClientRect(), z = m.getBoundingClientRect(); \
         return {x: a.left + scrollX - 8, y: a.top + scrollY - 8, width: Math.max(a.width, z.width) + 16, height: z.bottom - a.top + 16}; })()",
    );
    let out = std::env::temp_dir().join("storlab-matrix-heatmaps.png");
    screenshot(&mut b, clip, &out);
    assert_offline_and_clean(&mut b, &url);
}

#[test]
#[ignore = "needs root"]
fn the_report_shows_what_was_compared_the_primary_series_and_open_intervals() {
    require_root!();
    let binary = chromium_binary();
    let lab = Lab::new();
    // `tuned` asks for relatime, which the baseline has by default (a
    // requested difference that is none), and nodev, which it lacks. The
    // mock's noise at seed 1 leaves the baseline's mean not told apart from
    // zero: Fieller's interval of the difference is unbounded.
    let html = report(
        &lab,
        "name = \"compared\"\n[plan]\nrepetitions = 3\nanalysis = \"means\"\n\
         [[target]]\nname = \"plain\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
         [[target]]\nname = \"tuned\"\nkind = \"tmpfs\"\nsize = \"64M\"\nmount_options = [\"relatime\", \"nodev\"]\n\
         [[workload]]\nname = \"rr\"\nkind = \"io\"\nrw = \"randread\"\nsize = \"8M\"\nruntime = \"4s\"\n\
         [[workload]]\nname = \"noisy\"\nkind = \"mock\"\nnoise = 1.5\nseed = 1\n",
    );
    let not_there =
        "tuned: mount option relatime was asked for, but the baseline plain already has it";
    let shown = lab.run(&["show", "--warnings"]);
    assert!(shown.status.success());
    assert!(
        String::from_utf8_lossy(&shown.stderr).contains(not_there),
        "show warns too, on stderr"
    );
    let (mut b, url) = open(&binary, &html);
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    assert_charts_rendered(&mut b);
    let warned = format!(
        "Array.from(document.querySelectorAll('.warnings li')).some(l => l.textContent.startsWith({}))",
        json!(not_there)
    );
    assert_eq!(b.eval(&warned), json!(true));
    // The configuration table: targets as columns, the mount options the
    // kernel reports differ and are marked.
    let row = |label: &str| {
        format!(
            "(() => {{ const r = Array.from(document.querySelectorAll('tr')).find(r => r.cells[0] && r.cells[0].textContent === {}); \
             return r ? Array.from(r.cells).map(c => [c.textContent, c.classList.contains('differs')]) : null; }})()",
            json!(label)
        )
    };
    let options = b.eval(&row("read back: mount options"));
    assert_eq!(options[1][1], json!(false), "{options}");
    assert!(
        options[2][0].as_str().unwrap().contains("nodev"),
        "{options}"
    );
    assert_eq!(options[2][1], json!(true), "{options}");
    assert_eq!(
        b.eval(&row("kind")),
        json!([["kind", false], ["tmpfs", false], ["tmpfs", false]])
    );
    // Over time: the primary metric's series only (named as people say
    // it), a line and a shade per run, each named in the legend; runs of
    // 4 s give 4 samples (under 3 would draw no course over time).
    let over_time = "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('over time'))";
    assert_eq!(
        b.eval(&format!(
            "{over_time}.map(s => s.querySelector('text').textContent.trim())"
        )),
        json!(["rr: throughput over time, per run"])
    );
    let legend = b.eval(&format!("{over_time}[0].textContent"));
    for run in ["plain rep 1", "plain rep 3", "tuned rep 2"] {
        assert!(legend.as_str().unwrap().contains(run), "{run} in {legend}");
    }
    let shades = b.eval(&format!(
        "new Set(Array.from({over_time}[0].querySelectorAll('polyline')).map(p => p.getAttribute('stroke'))).size"
    ));
    assert!(shades.as_u64().unwrap() >= 6, "{shades} shades for 6 runs");
    // The unbounded interval is drawn open and said so, in chart and table.
    let open_ended = "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('noisy: ops_per_s against plain')).map(s => s.textContent.includes('unbounded'))";
    assert_eq!(b.eval(open_ended), json!([true]));
    // Its estimate is an outline, not a solid bar that would look certain.
    let bars = "Array.from(document.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('noisy: ops_per_s against plain')).map(s => Array.from(s.querySelectorAll('rect')).filter(r => r.getAttribute('stroke') !== 'none' && r.getAttribute('fill') === 'none').length + ' outlined, ' + Array.from(s.querySelectorAll('rect')).filter(r => r.getAttribute('stroke') === 'none' && r.getAttribute('fill') !== 'none' && r.getAttribute('fill') !== '#FFFFFF' && r.getAttribute('width') > 2 && r.getAttribute('height') > 2).length + ' solid')";
    assert_eq!(b.eval(bars), json!(["1 outlined, 0 solid"]));
    assert_eq!(
        b.eval("document.body.innerText.includes('unbounded]')"),
        json!(true)
    );
    let clip = b.eval(
        "(() => { const h = Array.from(document.querySelectorAll('h2')).find(h => h.textContent === 'What was compared'); \
         const a = h.getBoundingClientRect(); \
         return {x: 0, y: a.top + scrollY - 8, width: document.body.scrollWidth, height: 900}; })()",
    );
    let out = std::env::temp_dir().join("storlab-compared.png");
    screenshot(&mut b, clip, &out);
    assert_offline_and_clean(&mut b, &url);
}

#[test]
#[ignore = "needs root"]
fn a_swept_campaign_reports_its_pivots_curve_and_heat_maps() {
    require_root!();
    let binary = chromium_binary();
    let lab = Lab::new();
    let data = lab.path().join("d");
    std::fs::create_dir(&data).unwrap();
    // Seed 002's shape, small: time to write and sync against the total
    // size, with and without gzip, on a disk directory and a tmpfs.
    let html = report(
        &lab,
        &format!(
            "name = \"swept-browser\"\n[plan]\nrepetitions = 3\n\
             [[target]]\nname = \"disk\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[target]]\nname = \"ram\"\nkind = \"tmpfs\"\nsize = \"64M\"\n\
             [[workload]]\nname = \"tiny\"\nkind = \"tinywrites\"\nwrite_size = 256\n\
             sweep = {{ total_size = [\"256k\", \"1M\", \"4M\"], compress = [\"none\", \"gzip:1\"] }}\n\
             compare_levels = [\"compress\"]\n",
            data.display()
        ),
    );
    let (mut b, url) = open(&binary, &html);
    let study = "document.querySelector('.study')";
    assert_eq!(
        b.eval(&format!("{study}.querySelector('h2').textContent")),
        json!("tiny (tinywrites) by total_size, compress")
    );
    // The study is a part of its own, right after the overview figure and
    // before anything folded: not inside its last variant's section.
    let order = b.eval(
        "Array.from(document.querySelectorAll('.overview, .study, nav.toc, details')).slice(0, 3).map(e => e.className || e.tagName)",
    );
    assert_eq!(order, json!(["overview", "study", "toc"]));
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    let svgs = |text: &str| {
        format!(
            "Array.from({study}.querySelectorAll('.chart svg')).filter(s => s.textContent.includes({})).length",
            json!(text)
        )
    };
    assert_eq!(
        b.eval(&svgs("total_s against total_size")),
        json!(1),
        "the curve"
    );
    // The two targets' heat maps are one figure on one colour scale: a
    // panel per target.
    assert_eq!(
        b.eval(&svgs("by compress and total_size")),
        json!(1),
        "one figure of heat maps"
    );
    for target in ["disk", "ram"] {
        let panel = format!(
            "Array.from({study}.querySelectorAll('.chart svg')).filter(s => s.textContent.includes('by compress and total_size')).some(s => Array.from(s.querySelectorAll('text')).some(t => t.textContent.includes({})))",
            json!(target)
        );
        assert_eq!(b.eval(&panel), json!(true), "a panel for {target}");
    }
    // The curve: a line per target and level of compress, each with its
    // band, and the swept sizes as ticks.
    let curve = format!("Array.from({study}.querySelectorAll('.chart svg'))[0]");
    assert_eq!(
        b.eval(&format!("{curve}.querySelectorAll('polygon').length")),
        json!(4)
    );
    for tick in ["256k", "1M", "4M"] {
        let has = format!(
            "Array.from({curve}.querySelectorAll('text')).some(t => t.textContent.trim() == {})",
            json!(tick)
        );
        assert_eq!(b.eval(&has), json!(true), "tick {tick}");
    }
    // Pivot tables: rows = target × compress, columns = the sizes; means,
    // differences from the baseline, gzip against none per target.
    let tables = b.eval(&format!(
        "Array.from({study}.querySelectorAll('table')).map(t => [t.rows[0].cells[0].textContent, t.rows.length - 1, t.rows[0].cells.length - 1])"
    ));
    let tables = tables.as_array().unwrap();
    assert!(tables.len() >= 3, "{tables:?}");
    assert_eq!(tables[0], json!(["target \\ total_size", 4, 3]), "means");
    assert_eq!(
        tables[1],
        json!(["target \\ total_size", 4, 3]),
        "differences"
    );
    assert_eq!(
        tables[2],
        json!(["level on target \\ total_size", 2, 3]),
        "gzip against none"
    );
    let text = b.eval(&format!("{study}.innerText"));
    let text = text.as_str().unwrap();
    for phrase in [
        "tiny: total_s (s), mean ± 95% CI, by total_size",
        "% difference from disk",
        "total_s of each compress against compress=none on the same target",
        "ram · compress=gzip:1",
    ] {
        assert!(
            text.contains(phrase),
            "`{phrase}` not in the study:\n{text}"
        );
    }
    assert!(assert_charts_rendered(&mut b) >= 3);
    let clip = b.eval(&format!(
        "(() => {{ const r = {study}.getBoundingClientRect(); return {{x: r.left + scrollX - 8, y: r.top + scrollY - 8, width: r.width + 16, height: r.height + 16}}; }})()"
    ));
    let out = std::env::temp_dir().join("storlab-study.png");
    screenshot(&mut b, clip, &out);
    assert_offline_and_clean(&mut b, &url);
}

/// The HTML report of the busy-host quick campaign (a copy of
/// tests/fixtures/quick-noisy), written by this build.
fn quick_noisy_report(lab: &Lab) -> PathBuf {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/quick-noisy/quick-noisy.db");
    std::fs::copy(&fixture, lab.db()).unwrap();
    let mut perms = std::fs::metadata(lab.db()).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(lab.db(), perms).unwrap();
    let html = lab.path().join("quick.html");
    lab.ok(&["report", "1", "-o", html.to_str().unwrap()]);
    html
}

/// Where the page's first figure and first folded part begin, its height,
/// how many parts fold and how many are open, and whether it overflows
/// the window sideways.
fn layout(b: &mut Browser) -> Value {
    b.eval(
        "(() => { const y = e => e ? Math.round(e.getBoundingClientRect().top + scrollY) : null; \
         const d = document.querySelectorAll('details'); \
         return {first_chart: y(document.querySelector('.chart svg')), first_fold: y(d[0]), \
           folds: d.length, open: Array.from(d).filter(x => x.open).length, \
           height: document.documentElement.scrollHeight, \
           overflow: document.documentElement.scrollWidth > innerWidth}; })()",
    )
}

/// Renders the page as a `width` × 1100 window.
fn resize(b: &mut Browser, width: u32) {
    b.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": width, "height": 1100, "deviceScaleFactor": 1, "mobile": width < 600}),
        true,
    );
}

// Issue #30: the answer first, the rest folded. At 1400 px the quick
// campaign's headline, its overview figure and the contents fit one
// 1100 px screen above the first folded part; at 420 px nothing overflows
// the page sideways and chart text is not shrunk below readable.
#[test]
fn the_quick_campaign_answers_first_folds_the_rest_and_reads_at_420_px() {
    let binary = chromium_binary();
    let lab = Lab::new();
    let html = quick_noisy_report(&lab);
    let (mut b, url) = open(&binary, &html);
    resize(&mut b, 1400);
    let at_1400 = layout(&mut b);
    eprintln!("at 1400 px: {at_1400}");
    let first_chart = at_1400["first_chart"].as_i64().unwrap();
    let first_fold = at_1400["first_fold"].as_i64().unwrap();
    assert!(first_chart < first_fold, "{at_1400}");
    assert!(first_fold < 1100, "the answer fits one screen: {at_1400}");
    assert!(at_1400["folds"].as_i64().unwrap() >= 10, "{at_1400}");
    assert_eq!(at_1400["open"], json!(0), "folded parts start closed");
    assert_eq!(at_1400["overflow"], json!(false));
    // The first figure is the overview: a row per workload, each saying
    // its verdict in words beside the dot.
    let overview = b.eval("document.querySelector('.overview svg').textContent");
    let overview = overview.as_str().unwrap();
    for text in [
        "seqread-1m (throughput)",
        "×12 faster",
        "×1.6 (inconclusive)",
        "19.7% less time, faster",
        "×1",
        "×10",
        // The caveats of the runs behind a row, beside it: the row's own
        // target unnamed (the baseline's would be named).
        "⚠ noisy host",
        "⚠ CPU-bound, noisy host",
    ] {
        assert!(
            overview.contains(text),
            "{text} in the overview: {overview}"
        );
    }
    // The contents link to every part, folded ones too.
    let links = b.eval(
        "Array.from(document.querySelectorAll('nav.toc a')).map(a => !!document.getElementById(a.getAttribute('href').slice(1)))",
    );
    let links = links.as_array().unwrap();
    assert!(
        links.len() >= 10 && links.iter().all(|l| *l == json!(true)),
        "{links:?}"
    );
    let shot = std::env::temp_dir().join("storlab-quick-1400.png");
    screenshot(
        &mut b,
        json!({"x": 0, "y": 0, "width": 1400, "height": 1100}),
        &shot,
    );
    // Opened, every chart draws.
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    assert!(assert_charts_rendered(&mut b) >= 15);
    assert_offline_and_clean(&mut b, &url);

    resize(&mut b, 420);
    b.eval("document.querySelectorAll('details').forEach(d => d.open = false)");
    let at_420 = layout(&mut b);
    eprintln!("at 420 px: {at_420}");
    assert_eq!(at_420["overflow"], json!(false), "{at_420}");
    // The smallest text of the overview figure, in CSS pixels on screen.
    let smallest = b.eval(
        "Math.min(...Array.from(document.querySelectorAll('.overview svg text')).map(t => t.getBoundingClientRect().height).filter(h => h > 0))",
    );
    assert!(
        smallest.as_f64().unwrap() >= 10.0,
        "overview text {smallest} px high at 420 px"
    );
    let shot = std::env::temp_dir().join("storlab-quick-420.png");
    screenshot(
        &mut b,
        json!({"x": 0, "y": 0, "width": 420, "height": 1100}),
        &shot,
    );
}

/// The cells of the page's tables, every fold open, that Chromium lays
/// out on more than one line and are not prose: `[lines, text]` each.
fn wrapped_value_cells(b: &mut Browser) -> Vec<Value> {
    b.eval("document.querySelectorAll('details').forEach(d => d.open = true)");
    let cells = b.eval(
        "Array.from(document.querySelectorAll('td:not(.prose), th:not(.prose), td .nb, th .nb')).map(c => { \
           const r = document.createRange(); r.selectNodeContents(c); \
           const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.top))); \
           return [tops.size, c.textContent]; }).filter(([n]) => n > 1)",
    );
    cells.as_array().unwrap().clone()
}

// A number with its unit (`336.0 MiB`), an interval, a target's name
// (`gluster-no-perf`) is never broken over two lines in a table cell, at
// 1280 px nor at 800: a cell wraps only between values (its `.nb` spans
// each keep one line), a table scrolls sideways where that is not enough,
// and the page itself never overflows.
#[test]
fn no_value_cell_of_the_report_wraps_at_1280_or_800_px() {
    let binary = chromium_binary();
    let lab = Lab::new();
    let html = quick_noisy_report(&lab);
    let (mut b, _) = open(&binary, &html);
    for width in [1280, 800] {
        resize(&mut b, width);
        let cells = b.eval("document.querySelectorAll('td, th').length");
        assert!(cells.as_i64().unwrap() > 100, "{cells} cells");
        let wrapped = wrapped_value_cells(&mut b);
        assert!(
            wrapped.is_empty(),
            "at {width} px these cells wrap: {wrapped:?}"
        );
        assert_eq!(layout(&mut b)["overflow"], json!(false), "at {width} px");
    }
}
