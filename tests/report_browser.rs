//! The HTML report in a real browser: when `/usr/bin/chromium` exists, a report of a
//! recorded smoke run (tests/fixtures/report-smoke.json: a few benchmarks, sweeps over
//! args, n, size) and a comparison is written to a temporary directory, screenshotted,
//! and its DOM dumped to check that every `<svg>` arrived and the console stayed quiet.
//! Without chromium the test prints why it skipped and passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use syscost::compare::{compare, RunLabel};
use syscost::results::Run;

const CHROMIUM: &str = "/usr/bin/chromium";

fn fixture() -> Run {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-smoke.json");
    let text = std::fs::read_to_string(&path).expect("the fixture run");
    let mut run =
        syscost::store::parse_document(text.as_bytes()).expect("a valid run document");
    // An explanation recorded by `syscost explain syscall.getpid --profile smoke`, so
    // the report draws its flame graph.
    let explain =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain-getpid.json");
    let explain = std::fs::read_to_string(explain).expect("the explanation fixture");
    if let Some(r) = run.results.iter_mut().find(|r| r.name == "syscall.getpid") {
        r.explain = Some(serde_json::from_str(&explain).expect("a valid explanation"));
    }
    run.sweeps = syscost::derived::sweep::fits(&run.results);
    run.rings = syscost::derived::ring::tables(&run.results);
    run
}

/// The fixture, and a copy 10% slower, compared.
fn report() -> String {
    let a = fixture();
    let mut b = a.clone();
    for r in &mut b.results {
        if let Some(m) = r.measured.as_mut() {
            m.median_ns *= 1.1;
            m.ci_low_ns *= 1.1;
            m.ci_high_ns *= 1.1;
        }
    }
    let la = RunLabel::of("base.json", None, &a);
    let lb = RunLabel::of("slower.json", Some(2), &b);
    let c = compare((&la, &a), (&lb, &b), 0.05);
    syscost::report::html::html(&[(la, a), (lb, b)], &[c])
}

fn scratch(name: &str) -> PathBuf {
    // Under cargo's scratch directory for tests (in target/), replaced on every run, so
    // the screenshot stays for a person to look at and nothing piles up in /tmp.
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("syscost-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a scratch directory");
    d
}

/// What chromium printed, and whether it succeeded.
struct Output {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Runs chromium headless on `url` with `args`, with a fresh profile, killed after two
/// minutes. Its output goes to files: unread pipes would fill and stall it.
fn chromium(url: &str, args: &[String]) -> Output {
    let profile = scratch("chromium-profile");
    let (out_path, err_path) = (profile.join("stdout"), profile.join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).expect("an output file");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(file(&out_path))
        .stderr(file(&err_path))
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within two minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let read = |p: &Path| {
        String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned()
    };
    let out = Output {
        ok: status.success(),
        stdout: read(&out_path),
        stderr: read(&err_path),
    };
    let _ = std::fs::remove_dir_all(&profile);
    out
}

#[test]
fn report_renders_in_chromium_or_says_it_skipped() {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: chromium not installed ({CHROMIUM} is absent)");
        return;
    }
    let dir = scratch("report-browser");
    let html = report();
    let page = dir.join("report.html");
    std::fs::write(&page, &html).expect("the report is written");
    let url = format!("file://{}", page.display());

    let png = dir.join("report.png");
    let shot = chromium(
        &url,
        &[
            format!("--screenshot={}", png.display()),
            "--window-size=1200,3000".into(),
        ],
    );
    assert!(shot.ok, "the screenshot failed: {}", shot.stderr);
    let size = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 20_000,
        "the screenshot is nearly empty ({size} bytes)"
    );

    let dump = chromium(
        &url,
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
        ],
    );
    assert!(dump.ok, "--dump-dom failed: {}", dump.stderr);
    let (dom, log) = (&dump.stdout, &dump.stderr);
    let want = html.matches("<svg").count();
    assert!(
        dom.contains("syscall.getpid's time goes")
            || dom.contains("syscall.getpid&#39;s time goes"),
        "the flame graph is drawn"
    );
    assert!(want > 10, "the report holds only {want} graphs");
    assert_eq!(dom.matches("<svg").count(), want, "graphs lost in the DOM");
    for bad in ["Uncaught", "ERROR:CONSOLE"] {
        let line = log.lines().find(|l| l.contains(bad));
        assert!(line.is_none(), "console error: {}", line.unwrap_or(""));
    }
    eprintln!("screenshot at {} ({size} bytes)", png.display());
}
