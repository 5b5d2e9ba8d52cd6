//! Every `syscost` command line that README.md and the pages of docs/ quote is
//! accepted as shown.
//!
//! The command lines are taken from their code blocks (fenced, or indented four
//! spaces) and from their inline code spans that begin with `syscost` or with one of
//! its commands (`history show RUN`). Each is made quick and harmless, then run:
//!
//! - synopsis syntax is expanded: `[...]` groups give two forms, without any group and
//!   with every group; `a|b` gives one form per alternative; `…` is dropped;
//! - placeholders (RUN, FILE, N, ...) become real values ([`placeholder`]): runs saved a
//!   moment before in a temporary history (`SYSCOST_DB`), a synthetic trace file, a
//!   results document, files in a temporary directory for every `-o`;
//! - `run`, `repro` and `explain` get `--profile smoke` (they save into the temporary history);
//!   a `run` or `explain` that names a profile with a time budget gets `--budget`
//!   [`QUOTED_BUDGET`] unless it gives one;
//!   a `> FILE` redirection is dropped and the output checked to be non-empty;
//! - a line listed in [`SKIPPED`] is not run, for the reason given there;
//! - the lines run [`AT_ONCE`] at a time (`history rm` last, alone).
//!
//! A command line is accepted when syscost neither refuses it as a usage error (exit
//! code 2) nor panics nor dies of a signal. A measuring command may still exit 1 or 3
//! (selftest on a noisy machine, kernel events without the privilege): that is about
//! the machine, not about the command line.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const SYSCOST: &str = env!("CARGO_BIN_EXE_syscost");

/// Quoted command lines that are not run, with the reason: a reviewer sees here what
/// this test does not cover.
const SKIPPED: &[(&str, &str)] = &[
    (
        "syscost compare libc.json raw.json --ignore-param via",
        "compares the two documents the two explain lines above it write (into the \
         reader's directory); tests/cli.rs runs compare --ignore-param on documents of its own",
    ),
    (
        "syscost compare label:kernel=6.12 label:kernel=6.12+fix",
        "needs the two runs the lines above it make, and the lines run two at a time in \
         any order; tests/bisect.rs compares label sides made by run --runs --label, and \
         src/store/tests.rs resolves label:, ranges and lists",
    ),
    (
        "man syscost-run",
        "the man program reading an installed page, not a syscost command",
    ),
    (
        "syscost plot flame RUN [--bench NAME] [-o FILE.svg]",
        "needs an explained run, which the temporary history lacks: tests/explain.rs \
         plots one",
    ),
];

/// The `.md` pages of `dir` (from the repository's root) and of its subdirectories.
fn pages(root: &Path, dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root.join(dir)).expect("the directory is there") {
        let entry = entry.unwrap();
        let name = format!("{dir}/{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            out.extend(pages(root, &name));
        } else if name.ends_with(".md") {
            out.push(name);
        }
    }
    out
}

/// README.md and every page of docs/ and its subdirectories (docs/measurements/),
/// each with its path from the repository's root.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec!["README.md".to_string()];
    let mut pages = pages(root, "docs");
    pages.sort();
    names.extend(pages);
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root.join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

/// The spans and lines every document quotes, whitespace collapsed, each once:
/// (where, text).
fn quoted_in_all() -> Vec<(String, String)> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (name, text) in documents() {
        for (where_, line) in quoted_commands(&name, &text) {
            if seen.insert(line.clone()) {
                out.push((where_, line));
            }
        }
    }
    out
}

/// The spans and lines document `name` quotes, whitespace collapsed: (where, text).
fn quoted_commands(name: &str, readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut prose = String::new();
    let (mut fenced, mut indented, mut previous_blank) = (false, false, true);
    // A block fenced as ```text is a program's output, quoted: not command lines.
    let mut output = false;
    for (i, line) in readme.lines().enumerate() {
        let where_ = format!("{name}:{}", i + 1);
        if line.starts_with("```") {
            fenced = !fenced;
            output = fenced && line.trim() == "```text";
            prose.push('\n');
            previous_blank = false;
            continue;
        }
        if output {
            continue;
        }
        let code = fenced || (line.starts_with("    ") && (previous_blank || indented));
        indented = !fenced && code;
        previous_blank = line.trim().is_empty();
        if code {
            let text = line.split(" #").next().unwrap_or("").trim();
            if text.starts_with("syscost ") {
                out.push((where_, collapse(text)));
            }
            prose.push('\n');
        } else {
            // Line numbers of spans: marked, so that a span over two lines keeps its
            // first line's.
            prose.push_str(&format!("\u{1}{}\u{1}{line}\n", i + 1));
        }
    }
    let mut line_no = 0;
    let mut in_span = false;
    let mut span = String::new();
    let mut chars = prose.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1}' => {
                let n: String = chars.by_ref().take_while(|c| *c != '\u{1}').collect();
                if !in_span {
                    line_no = n.parse().unwrap_or(0);
                }
            }
            '`' if in_span => {
                in_span = false;
                let text = collapse(&span);
                let first = text.split(' ').next().unwrap_or("");
                let command = first == "syscost" || COMMANDS.contains(&first);
                if command && text.contains(' ') {
                    let text = if first == "syscost" {
                        text
                    } else {
                        format!("syscost {text}")
                    };
                    out.push((format!("{name}:{line_no}"), text));
                }
            }
            '`' => {
                in_span = true;
                span.clear();
            }
            c if in_span => span.push(c),
            _ => {}
        }
    }
    let mut seen = BTreeSet::new();
    out.retain(|(_, t)| seen.insert(t.clone()));
    out
}

/// Whether `args` only names a command (`trace`, `history export`), with nothing
/// for it to work on.
fn is_command_path(args: &[String]) -> bool {
    const SUBCOMMANDS: &[&str] =
        &["list", "show", "rm", "import", "export", "record", "reduce"];
    args.iter().enumerate().all(|(i, a)| {
        (i == 0 && COMMANDS.contains(&a.as_str()))
            || (i > 0 && SUBCOMMANDS.contains(&a.as_str()))
    })
}

/// syscost's commands, as a span may begin (`history show RUN`).
const COMMANDS: &[&str] = &[
    "list",
    "run",
    "explain",
    "env",
    "clocks",
    "selftest",
    "repro",
    "history",
    "compare",
    "report",
    "plot",
    "fleet",
    "trace",
    "exec",
    "completions",
    "man",
];

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A command line's words, shell quotes removed; `[` and `]` that open or close a
/// synopsis group are words of their own.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut started = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            '[' if !quoted && !started => out.push("[".into()),
            c => {
                word.push(c);
                started = true;
            }
        }
        if !quoted && started && word.ends_with(']') && word.len() > 1 {
            word.pop();
            out.push(std::mem::take(&mut word));
            out.push("]".into());
            started = false;
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// The forms of a synopsis: without its optional groups and with all of them, each
/// `a|b` word as every alternative; `…`, `...` and a redirection dropped.
fn forms(words: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for with_groups in [false, true] {
        let mut depth = 0;
        let mut chosen: Vec<String> = Vec::new();
        let mut iter = words.iter();
        while let Some(w) = iter.next() {
            match w.as_str() {
                "[" => depth += 1,
                "]" => depth -= 1,
                ">" => {
                    iter.next();
                }
                _ if depth > 0 && !with_groups => {}
                // An option's value shown as "…" stays, for placeholder() to fill.
                "…" | "..." if !chosen.last().is_some_and(|p| p.starts_with("--")) => {}
                "…" | "..." => chosen.push(w.into()),
                w => chosen.push(w.trim_end_matches('…').trim_end_matches("...").into()),
            }
        }
        // Alternatives: one form per choice at each word that offers some.
        let mut expanded: Vec<Vec<String>> = vec![Vec::new()];
        for w in &chosen {
            let choices: Vec<&str> = if w.contains('|') && !w.contains(' ') {
                w.split('|').collect()
            } else {
                vec![w.as_str()]
            };
            expanded = expanded
                .iter()
                .flat_map(|f| {
                    choices.iter().map(move |c| {
                        let mut f = f.clone();
                        f.push(c.to_string());
                        f
                    })
                })
                .collect();
        }
        for f in expanded {
            if !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// What the test made for the command lines to work on.
struct Fixtures {
    dir: PathBuf,
    db: PathBuf,
    trace: PathBuf,
    document: PathBuf,
    /// The ids of three runs of syscall.getpid, oldest first.
    ids: Vec<String>,
    /// The id of a run with data for every graph of `plot`.
    plots: String,
}

/// The real value of placeholder `word` after `previous` in command `command`; None
/// when `word` is no placeholder.
fn placeholder(
    f: &Fixtures,
    command: &str,
    previous: &str,
    word: &str,
) -> Option<String> {
    let out = |name: &str| f.dir.join("out").join(name).display().to_string();
    Some(match (previous, word) {
        ("-o" | "--output", w) => out(w),
        ("--dir", "DIR") => f.dir.join("dir").display().to_string(),
        ("--kernel", "LIST") => "all".into(),
        ("--buffer", "BYTES") => "4m".into(),
        ("--thread", "TID") => "7".into(),
        ("--cpu", "N") => "0".into(),
        ("--limit", "N") => "3".into(),
        ("--from", "T") => "10ns".into(),
        ("--to", "T") => "1ms".into(),
        ("--spec", "SPEC") => "interval call = begin -> end".into(),
        ("--bench", "NAME") => "syscall.args args=0 copies=1 copies_as=process".into(),
        ("--format", "…") => "json".into(),
        ("-n", "RUNS") => "2".into(),
        ("--runs", "K") => "2".into(),
        (_, "NAME") => "begin".into(),
        (_, "ID") if command.starts_with("syscost history rm") => f.ids[0].clone(),
        (_, "ID") => "1".into(),
        (_, "CMD") => "true".into(),
        (_, "ARGS") => "an-argument".into(),
        (_, "FILE") if command.starts_with("syscost trace") => {
            f.trace.display().to_string()
        }
        (_, "FILE.json") => f.document.display().to_string(),
        (_, "RUN") if command.starts_with("syscost plot") => f.plots.clone(),
        (_, "RUN") => f.ids[2].clone(),
        (_, "A") => f.ids[1].clone(),
        (_, "B") => f.ids[2].clone(),
        (_, "C") => f.ids[0].clone(),
        (_, "FILTER") => "syscall".into(),
        (_, "BENCH") => "syscall.getpid".into(),
        (_, "COMMAND") => "run".into(),
        (_, "SHELL") => "bash".into(),
        (_, "DIR") => f.dir.join("dir").display().to_string(),
        _ => return None,
    })
}

/// Whether a word still looks like a placeholder (an upper-case word).
fn looks_like_placeholder(w: &str) -> bool {
    let stem = w.split('.').next().unwrap_or("");
    !stem.is_empty() && stem.chars().all(|c| c.is_ascii_uppercase() || c == '_')
}

/// The argument vectors (without `syscost`) to run for one quoted line, and whether its
/// output was redirected (and so must not be empty).
fn invocations(f: &Fixtures, line: &str) -> (Vec<Vec<String>>, bool) {
    let ws = words(line);
    let redirected = ws.iter().any(|w| w == ">");
    let mut out = Vec::new();
    for form in forms(&ws) {
        let mut args: Vec<String> = Vec::new();
        for (i, w) in form.iter().enumerate().skip(1) {
            let previous = if i > 0 { form[i - 1].as_str() } else { "" };
            match placeholder(f, line, previous, w) {
                Some(v) => args.push(v),
                None => {
                    assert!(
                        !looks_like_placeholder(w),
                        "{line}: the test does not know the placeholder {w}: add it to \
                         placeholder() in tests/readme.rs"
                    );
                    args.push(w.clone());
                }
            }
        }
        if matches!(
            args.first().map(String::as_str),
            Some("run" | "repro" | "explain")
        ) && !args.iter().any(|a| a == "--profile")
        {
            args.extend(["--profile".into(), "smoke".into()]);
        } else if matches!(args.first().map(String::as_str), Some("run" | "explain"))
            && !args.iter().any(|a| a == "--budget")
            && !args.windows(2).any(|w| w == ["--profile", "smoke"])
        {
            // A profile with a time budget: the line's words are what is checked, not
            // how long the profile measures (tests/cli.rs checks the budget itself).
            args.extend(["--budget".into(), QUOTED_BUDGET.into()]);
        }
        out.push(args);
    }
    (out, redirected)
}

struct Outcome {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn syscost(f: &Fixtures, args: &[String]) -> Outcome {
    syscost_in(f, &f.dir, args)
}

/// [`syscost`] with `cwd` as the working directory (where a relative `-o` lands).
fn syscost_in(f: &Fixtures, cwd: &Path, args: &[String]) -> Outcome {
    let o = Command::new(SYSCOST)
        .args(args)
        .env("SYSCOST_DB", &f.db)
        .env("TMPDIR", &f.dir)
        .current_dir(cwd)
        .output()
        .expect("syscost starts");
    Outcome {
        code: o.status.code(),
        stdout: o.stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// A trace with events named `begin` (1) and `end` (2) on thread 7, CPU 0.
fn synthetic_trace(path: &Path) {
    use syscost::trace::format::{file_header, write_chunk, write_meta, ChunkKind};
    use syscost::trace::format::{Meta, UserEvent};
    let mut out = Vec::new();
    out.extend_from_slice(&file_header());
    let names = vec![(1, "begin".into()), (2, "end".into())];
    write_meta(&mut out, &Meta::Names { names }).unwrap();
    let mut p = Vec::new();
    for i in 1..=50u64 {
        for (ts, id) in [(i * 1000, 1), (i * 1000 + 100, 2)] {
            UserEvent {
                ts,
                arg: 0,
                id,
                cpu: 0,
            }
            .put(&mut p);
        }
    }
    write_chunk(&mut out, ChunkKind::User, 7, 100, &p).unwrap();
    std::fs::write(path, out).unwrap();
}

/// Three runs saved in a temporary history, a results document and a trace.
fn fixtures() -> Fixtures {
    let dir = std::env::temp_dir().join(format!("syscost-readme-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for d in ["out", "dir"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    let mut f = Fixtures {
        db: dir.join("history.db"),
        trace: dir.join("events.trace"),
        document: dir.join("run.json"),
        dir,
        ids: Vec::new(),
        plots: String::new(),
    };
    synthetic_trace(&f.trace);
    for _ in 0..3 {
        let args = ["run", "syscall.getpid", "--profile", "smoke"].map(String::from);
        let o = syscost(&f, &args);
        assert_eq!(o.code, Some(0), "a run to compare: {}", o.stderr);
    }
    let doc = f.document.display().to_string();
    let args = ["run", "syscall.getpid", "--profile", "smoke", "--no-save"];
    let mut args: Vec<String> = args.map(String::from).to_vec();
    args.extend(["--format".into(), "json".into(), "-o".into(), doc]);
    assert_eq!(syscost(&f, &args).code, Some(0));
    let plots = "run syscall.args ctx.ring file.read ipc.rtt -p args=0,2 -p n=2,4 \
                 -p size=8,4k -p transport=pipe -p copies=1,2 --profile smoke";
    let plots: Vec<String> = plots.split_whitespace().map(String::from).collect();
    let o = syscost(&f, &plots);
    assert_eq!(o.code, Some(0), "a run to plot: {}", o.stderr);
    let list = syscost(&f, &["history", "--format", "json"].map(String::from));
    let list: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let mut ids: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].to_string())
        .collect();
    ids.reverse();
    assert_eq!(ids.len(), 4, "{list}");
    f.plots = ids.pop().unwrap();
    f.ids = ids;
    f
}

/// The budget given to a quoted `run` or `explain` that names a budgeted profile
/// (quick, standard, thorough): the profile is accepted and measures as it does, only
/// for less time than a whole catalogue's 17 to 900 s.
const QUOTED_BUDGET: &str = "5s";

/// How many quoted lines run at once: most measure, and a measuring command line is
/// checked for being accepted, not for its figures, so two share the machine's CPUs.
const AT_ONCE: usize = 2;

/// Runs one quoted line in every form: what it covered, or what went wrong.
fn check_line(
    f: &Fixtures,
    cwd: &Path,
    where_: &str,
    line: &str,
) -> Vec<Result<String, String>> {
    let (runs, redirected) = invocations(f, line);
    let mut out = Vec::new();
    for mut args in runs {
        let started = std::time::Instant::now();
        let mut o = syscost_in(f, cwd, &args);
        if o.code == Some(2) && is_command_path(&args) {
            // A command named in prose (`syscost trace`, `history export`): it
            // needs arguments README gives elsewhere; it must exist.
            args.push("--help".into());
            o = syscost_in(f, cwd, &args);
        }
        let shown = format!("{where_}: {line}\n    as: syscost {}", args.join(" "));
        let wrong = if o.code == Some(2) {
            Some("refused as a usage error (exit 2)")
        } else if o.code.is_none() {
            Some("killed by a signal")
        } else if o.stderr.contains("panicked") {
            Some("panicked")
        } else if redirected && o.stdout.is_empty() {
            Some("printed nothing to redirect")
        } else {
            None
        };
        out.push(match wrong {
            Some(w) => Err(format!("{shown}\n    {w}: {}", o.stderr.trim())),
            None => Ok(format!(
                "{shown}  (exit {}, {:.1} s)",
                o.code.unwrap_or(-1),
                started.elapsed().as_secs_f64()
            )),
        });
    }
    out
}

#[test]
#[ignore = "slow: every command line of README and docs/; .ci/run runs it"]
fn every_command_line_in_the_readme_and_docs_is_accepted() {
    let quoted = quoted_in_all();
    let f = fixtures();
    let mut skipped = Vec::new();
    let mut lines = Vec::new();
    for (where_, line) in quoted {
        let bare = line.trim_start_matches("syscost ");
        match SKIPPED.iter().find(|(l, _)| *l == line || *l == bare) {
            Some((_, why)) => skipped.push(format!("{where_}: {line}  ({why})")),
            None => lines.push((where_, line)),
        }
    }
    // `history rm` last and alone: it removes a run the others may name. The others
    // run AT_ONCE at a time, each worker in a directory of its own (a relative `-o`
    // of one line does not meet another's).
    let (lines, rm): (Vec<_>, Vec<_>) = lines
        .into_iter()
        .partition(|(_, l)| !l.starts_with("syscost history rm"));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Vec<Result<String, String>>)> =
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..AT_ONCE)
                .map(|w| {
                    let (f, lines, next) = (&f, &lines, &next);
                    s.spawn(move || {
                        let cwd = f.dir.join(format!("cwd{w}"));
                        std::fs::create_dir_all(&cwd).unwrap();
                        let mut done = Vec::new();
                        loop {
                            let i =
                                next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some((where_, line)) = lines.get(i) else {
                                return done;
                            };
                            done.push((i, check_line(f, &cwd, where_, line)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().expect("a worker of the test panicked"))
                .collect()
        });
    results.sort_by_key(|r| r.0);
    for (where_, line) in &rm {
        results.push((results.len(), check_line(&f, &f.dir, where_, line)));
    }
    let (covered, failures): (Vec<_>, Vec<_>) = results
        .into_iter()
        .flat_map(|r| r.1)
        .partition(Result::is_ok);
    let covered: Vec<String> = covered.into_iter().map(Result::unwrap).collect();
    let failures: Vec<String> = failures.into_iter().map(Result::unwrap_err).collect();
    println!("covered:\n  {}", covered.join("\n  "));
    println!("skipped:\n  {}", skipped.join("\n  "));
    let _ = std::fs::remove_dir_all(&f.dir);
    assert!(
        failures.is_empty(),
        "README or docs/ show:\n{}",
        failures.join("\n")
    );
    // Every entry of SKIPPED is still quoted (else it is stale and should go).
    for (l, _) in SKIPPED {
        assert!(
            skipped.iter().any(|s| s.contains(l)),
            "SKIPPED names '{l}', which neither README nor docs/ quote any more"
        );
    }
}

#[test]
fn the_extraction_finds_blocks_spans_and_synopses() {
    let readme = "Intro `syscost run mem.brk n=1,64` and `history show RUN`, `run`.\n\
                  A span over two lines: `syscost history [--limit N]\n  [--format json]`.\n\
                  \n    syscost exec [-n RUNS] -- CMD [ARGS...]\n    \
                  syscost man > ~/x.1   # a comment\n\n```c\nnot syscost\n```\n";
    let found: Vec<String> = quoted_commands("README.md", readme)
        .into_iter()
        .map(|(_, l)| l)
        .collect();
    assert_eq!(
        found,
        [
            "syscost exec [-n RUNS] -- CMD [ARGS...]",
            "syscost man > ~/x.1",
            "syscost run mem.brk n=1,64",
            "syscost history show RUN",
            "syscost history [--limit N] [--format json]",
        ]
    );
    let ws =
        words("syscost trace export FILE --format perfetto|chrome-json [-o OUT] 'a b*'");
    let fs = forms(&ws);
    assert_eq!(fs.len(), 4, "{ws:?} {fs:?}");
    assert_eq!(
        fs[3],
        [
            "syscost",
            "trace",
            "export",
            "FILE",
            "--format",
            "chrome-json",
            "-o",
            "OUT",
            "a b*"
        ]
    );
    assert_eq!(fs[0].len(), 7);
    assert!(looks_like_placeholder("FILE.json") && !looks_like_placeholder("last~1"));
}

#[test]
fn the_real_readme_and_docs_quote_the_commands_this_test_relies_on() {
    let found: Vec<String> = quoted_in_all().into_iter().map(|(_, l)| l).collect();
    assert!(
        found.iter().any(|l| l.starts_with("syscost run ")),
        "README quotes a run"
    );
    let in_docs = quoted_in_all()
        .iter()
        .filter(|(w, _)| w.starts_with("docs/"))
        .count();
    assert!(in_docs >= 20, "docs/ quote commands too: {found:#?}");
    assert!(
        quoted_in_all()
            .iter()
            .any(|(w, _)| w.starts_with("docs/measurements/")),
        "the topic files under docs/measurements/ are read too"
    );
    for must in [
        "syscost history [--limit N] [--format json]",
        "syscost completions bash > ~/.local/share/bash-completion/completions/syscost",
        "syscost man > ~/.local/share/man/man1/syscost.1",
        "syscost trace reduce FILE --spec SPEC [--guard 1us] [--format json]",
        "syscost repro sloan1992",
        "syscost plot forest A B [-o FILE.svg]",
    ] {
        assert!(
            found.iter().any(|l| l == must),
            "{must} not found in {found:#?}"
        );
    }
    assert!(found.len() >= 30, "{found:#?}");
}
