use crate::util::Lab;

const GOOD_TARGET: &str = "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n";
const GOOD_WORKLOAD: &str = "[[workload]]\nname = \"w\"\nkind = \"io\"\n";

/// Each case: file text, expected `line:column`, and a phrase of the message.
const CASES: &[(&str, &str, &str, &str)] = &[
    ("unknown_key", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nruntme = \"5s\"\n", "8:1", "did you mean `runtime`?"),
    ("unknown_short_key", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nbz = \"4k\"\n", "8:1", "did you mean `bs`?"),
    ("unknown_top_key", "nmae = \"x\"\n", "1:1", "did you mean `name`?"),
    ("wrong_type", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nnumjobs = \"four\"\n", "8:11", "must be an integer"),
    ("bad_unit", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nbs = \"4q\"\n", "8:6", "unknown size unit"),
    ("bad_duration", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nruntime = \"5 fortnights\"\n", "8:11", "unknown duration unit"),
    ("duplicate_target", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\n", "6:8", "duplicate target name `a`"),
    ("two_baselines", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\nbaseline = true\n[[target]]\nname = \"b\"\nkind = \"dir\"\npath = \"/tmp\"\nbaseline = true\n[[workload]]\nname = \"w\"\nkind = \"io\"\n", "10:12", "second baseline"),
    ("unknown_kind", "[[target]]\nname = \"a\"\nkind = \"tmpsf\"\n", "3:8", "did you mean `tmpfs`?"),
    ("workload_without_target", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\ntargets = [\"b\"]\n", "8:11", "does not define"),
    ("syntax", "[[target]\nname = \"a\"\n", "1:10", "syntax error"),
    ("bad_choice", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"randred\"\n", "8:6", "did you mean `randread`?"),
    ("bs_above_size", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nbs = \"1M\"\nsize = \"4k\"\n", "8:6", "larger than size"),
    ("root_dir", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\n", "4:8", "refusing `/`"),
    ("no_workload", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n", "1:1", "no [[workload]]"),
    ("plan_order", "[plan]\norder = \"shuffled\"\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\n", "2:9", "must be one of interleaved"),
    ("repetitions_zero", "[plan]\nrepetitions = 0\n[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\n", "2:15", "between 1 and"),
    ("fio_missing_job_file", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"fio\"\njob = \"nope.fio\"\n", "8:7", "cannot open the fio job file `nope.fio`"),
    ("fio_job_and_options", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"fio\"\njob = \"a.fio\"\noptions = { rw = \"read\" }\n", "9:11", "not both"),
    ("fio_inline_directory", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"fio\"\noptions = { rw = \"read\", directory = \"/mnt\" }\n", "8:11", "`directory` is storlab's to set"),
    ("command_shell_list", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"command\"\nshell = true\ncommand = [\"make\", \"-j2\"]\n", "9:11", "is one string for sh -c"),
    ("ramp_without_runtime", "[[target]]\nname = \"a\"\nkind = \"dir\"\npath = \"/tmp\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nramp_time = \"1s\"\n", "8:13", "needs runtime"),
];

#[test]
fn malformed_files_give_a_located_error_line_then_the_line_with_a_caret_and_exit_2() {
    let lab = Lab::new();
    for (name, text, at, phrase) in CASES {
        let file = lab.file(&format!("{name}.toml"), text);
        for cmd in ["check", "run"] {
            let out = lab.run(&[cmd, file.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{name} ({cmd}): status {:?}, stderr {stderr}",
                out.status
            );
            let lines: Vec<&str> = stderr.lines().collect();
            let expected = format!("error: {}:{at}: ", file.display());
            assert!(
                lines[0].starts_with(&expected),
                "{name}: `{}` does not start with `{expected}`",
                lines[0]
            );
            assert!(
                lines[0].contains(phrase),
                "{name}: `{}` lacks `{phrase}`",
                lines[0]
            );
            assert!(!stderr.contains("panicked"), "{name}: panic");
            assert!(
                !stderr.contains('\x1b'),
                "{name}: colour on a pipe: {stderr}"
            );
            let (line, column) = at.split_once(':').unwrap();
            let (line, column): (usize, usize) = (line.parse().unwrap(), column.parse().unwrap());
            if *name == "no_workload" {
                // Nothing in the file to point at: the message alone.
                assert_eq!(lines.len(), 1, "{name}: {stderr}");
                continue;
            }
            assert_eq!(
                caret_under(&lines, text, line),
                Some(column),
                "{name} ({cmd}): no caret under {line}:{column}:\n{stderr}"
            );
        }
    }
    assert!(
        !lab.db().exists(),
        "no store is created for invalid experiments"
    );
}

/// The column of the first caret under the shown line `line` of `text`
/// (`8 | runtme = "5s"` then `  | ^^^^^^`), as a 1-based column of that line.
fn caret_under(lines: &[&str], text: &str, line: usize) -> Option<usize> {
    let source = text.lines().nth(line - 1)?;
    let gutter = format!("{line} | ");
    let shown = lines.iter().position(|l| {
        l.strip_prefix(&gutter) == Some(source)
            || (source.is_empty() && l.trim_end() == gutter.trim_end())
    })?;
    let under = lines.get(shown + 1)?;
    let bar = under.find('|')?;
    assert!(under[..bar].trim().is_empty(), "{under}");
    under[bar + 2..].find('^').map(|i| i + 1)
}

/// fio's other names for a parameter are answered with storlab's, under
/// the key: `blocksize` and `bsize` are `bs`, `readwrite` is `rw`, also
/// when swept.
#[test]
fn fio_aliases_are_answered_with_the_name_to_write() {
    let lab = Lab::new();
    for (key, value, name) in [
        ("blocksize", "\"4k\"", "bs"),
        ("bsize", "\"4k\"", "bs"),
        ("readwrite", "\"randread\"", "rw"),
        ("timeout", "\"5s\"", "runtime"),
        ("iodepth_batch", "8", "iodepth_batch_submit"),
    ] {
        for line in [
            format!("{key} = {value}"),
            format!("sweep = {{ {key} = [{value}] }}"),
        ] {
            let file = lab.file(
                "alias.toml",
                &format!("{GOOD_TARGET}{GOOD_WORKLOAD}{line}\n"),
            );
            let out = lab.run(&["check", file.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{line}: {stderr}");
            assert!(
                stderr.contains(&format!("`{key}` is written `{name}` here")),
                "{line}: {stderr}"
            );
            let column = line.find(key).unwrap() + 1;
            let lines: Vec<&str> = stderr.lines().collect();
            let text = format!("{GOOD_TARGET}{GOOD_WORKLOAD}{line}\n");
            assert_eq!(caret_under(&lines, &text, 8), Some(column), "{stderr}");
        }
    }
}

/// The error's colour follows `--color`, then NO_COLOR and CLICOLOR_FORCE;
/// a pipe gets none by default (the test above).
#[test]
fn error_colour_follows_the_flag_and_the_environment() {
    let lab = Lab::new();
    let file = lab.file(
        "bad.toml",
        &format!("{GOOD_TARGET}{GOOD_WORKLOAD}numjobs = \"four\"\n"),
    );
    let stderr = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = lab.cmd();
        cmd.args(args)
            .arg("check")
            .arg(&file)
            .envs(env.iter().copied());
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let red = "\x1b[";
    assert!(stderr(&["--color", "always"], &[]).contains(red));
    assert!(stderr(&["--color=always"], &[("NO_COLOR", "1")]).contains(red));
    assert!(stderr(&[], &[("CLICOLOR_FORCE", "1")]).contains(red));
    assert!(!stderr(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains(red));
    assert!(!stderr(&["--color", "never"], &[("CLICOLOR_FORCE", "1")]).contains(red));
    // Coloured or not, the same words.
    let plain = stderr(&["--color", "never"], &[]);
    let coloured = stderr(&["--color", "always"], &[]);
    assert!(plain.contains("numjobs = \"four\""), "{plain}");
    assert_eq!(strip_ansi(&coloured), plain);
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // CSI: ESC [ parameters… final byte (@ to ~).
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) && d != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Without a file, `check` and `run` take ./experiment.toml when there is
/// one and say so; without one, the built-in quick experiment, said too.
#[test]
fn without_a_file_experiment_toml_is_found_and_named() {
    let lab = Lab::new();
    let out = lab.run(&["check"]);
    assert!(out.status.success());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        stdout.starts_with("built-in:quick: valid experiment `quick`"),
        "{stdout}"
    );
    assert!(
        stderr.contains("no ./experiment.toml here: the built-in quick experiment"),
        "{stderr}"
    );
    let data = lab.path().join("data");
    std::fs::create_dir(&data).unwrap();
    lab.file(
        "experiment.toml",
        &format!(
            "name = \"mine\"\n[plan]\nrepetitions = 1\ndrop_caches = false\n[[target]]\nname = \"here\"\nkind = \"dir\"\npath = \"{}\"\n[[workload]]\nname = \"w\"\nkind = \"io\"\nrw = \"write\"\nsize = \"1M\"\n",
            data.display()
        ),
    );
    let out = lab.run(&["check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("(owned by root): ./experiment.toml found here, no experiment file given"),
        "{stderr}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("experiment.toml: valid experiment `mine`"),
        "{out:?}"
    );
    let out = lab.run(&["run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("(owned by root): ./experiment.toml found here, no experiment file given"),
        "{stderr}"
    );
    let listed = lab.ok(&["list"]);
    assert!(
        listed.contains("mine") && !listed.contains("quick"),
        "{listed}"
    );
    // -q still names a file nobody named: it could have been put here by anyone.
    let out = lab.run(&["-q", "check"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("./experiment.toml found here"),
        "{out:?}"
    );
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let lab = Lab::new();
    let out = lab.run(&["check", "nope.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nope.toml: cannot read the experiment file")
    );
}

#[test]
fn a_valid_file_is_planned_with_an_estimate() {
    let lab = Lab::new();
    let file = lab.file(
        "ok.toml",
        &format!("[plan]\nrepetitions = 2\n{GOOD_TARGET}{GOOD_WORKLOAD}runtime = \"2s\"\n"),
    );
    let out = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(out.contains("2 runs, estimated"), "{out}");
}

/// A command workload's own estimate is a nominal 5 s; once a campaign of
/// the experiment has run, `check` estimates from what it took (its runs
/// as measured and the time outside them), which a second run then takes.
#[test]
fn once_the_experiment_ran_the_estimate_is_what_it_took() {
    let lab = Lab::new();
    let dir = lab.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let file = lab.file(
        "slow.toml",
        &format!(
            "name = \"slow\"\n[plan]\nrepetitions = 2\ndrop_caches = false\n\
             [[target]]\nname = \"d\"\nkind = \"dir\"\npath = \"{}\"\n\
             [[workload]]\nname = \"w\"\nkind = \"command\"\ncommand = [\"sleep\", \"0.6\"]\n",
            dir.display()
        ),
    );
    let first = lab.ok(&["check", file.to_str().unwrap()]);
    assert!(!first.contains("as recorded"), "{first}");
    lab.ok(&["run", "--quiet", file.to_str().unwrap()]);
    let out = lab.ok(&["check", file.to_str().unwrap()]);
    let last = out
        .lines()
        .find(|l| l.contains(" runs, estimated "))
        .unwrap_or_else(|| panic!("no estimate: {out}"));
    assert!(last.contains("as recorded"), "{last}");
    let secs: f64 = last
        .split("estimated ")
        .nth(1)
        .and_then(|r| r.split(" s ").next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an estimate in seconds: {last}"));
    assert!(secs >= 1.2, "two runs of 0.6 s at least: {last}");
    let per_run = out
        .lines()
        .filter(|l| l.contains("measured rep"))
        .all(|l| !l.ends_with("~5.0 s"));
    assert!(per_run, "each run as measured: {out}");
}
