//! What syscost says about itself: `--help` of every command is plain text (no rustdoc
//! syntax), the shell completions are valid scripts, and the man page is roff that
//! `man` and `groff` render. A check that needs a program this machine lacks (bash,
//! zsh, fish, man, groff) says SKIPPED and why; CI does not need them.

use std::io::Write;
use std::process::{Command, Stdio};

const SYSCOST: &str = env!("CARGO_BIN_EXE_syscost");

fn syscost(args: &[&str]) -> (Option<i32>, String, String) {
    let o = Command::new(SYSCOST).args(args).output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The subcommands a `--help` text lists under "Commands:", without `help`.
fn listed_commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// Every command path, from the top (empty) down, found through `--help`.
fn command_paths() -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut todo = vec![Vec::<String>::new()];
    while let Some(path) = todo.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let (code, help, _) = syscost(&args);
        assert_eq!(code, Some(0), "syscost {}", args.join(" "));
        for c in listed_commands(&help) {
            let mut p = path.clone();
            p.push(c);
            todo.push(p);
        }
        out.push(path);
    }
    out
}

/// Rustdoc or Markdown syntax in a help text: the offending lines.
fn rustdoc_syntax(help: &str) -> Vec<&str> {
    help.lines()
        .filter(|l| {
            l.contains("[`") || l.contains("`]") || l.contains("](") || l.contains('`')
        })
        .collect()
}

#[test]
fn the_scanner_sees_rustdoc_links() {
    assert_eq!(
        rustdoc_syntax("ok\n  - json: One JSON document (see [`json`])\nfine"),
        ["  - json: One JSON document (see [`json`])"]
    );
    assert_eq!(rustdoc_syntax("see [the memo](https://x)").len(), 1);
    assert_eq!(rustdoc_syntax("a `kernel` word").len(), 1);
    assert!(
        rustdoc_syntax("Usage: syscost [OPTIONS] <COMMAND>\n  [default: table]")
            .is_empty()
    );
    assert_eq!(
        listed_commands(
            "Usage: x\n\nCommands:\n  list  Lists\n  help  Print\n\nOptions:\n"
        ),
        ["list"]
    );
}

#[test]
fn help_of_every_command_is_plain_text() {
    let paths = command_paths();
    // The tree as README describes it: the check reached every level.
    for must in [
        vec!["run"],
        vec!["history", "list"],
        vec!["trace", "reduce"],
        vec!["completions"],
        vec!["man"],
    ] {
        assert!(
            paths.iter().any(|p| *p == must),
            "{must:?} not in {paths:?}"
        );
    }
    let mut bad = Vec::new();
    for path in &paths {
        for flag in ["-h", "--help"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let (_, help, _) = syscost(&args);
            for line in rustdoc_syntax(&help) {
                bad.push(format!("syscost {}: {}", args.join(" "), line.trim()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "rustdoc syntax in --help:\n{}",
        bad.join("\n")
    );
}

/// Whether `program` can be started.
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Runs `program args` with `input` on standard input: (success, stdout, stderr).
fn feed(program: &str, args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let o = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn completions_are_valid_scripts_naming_every_command() {
    let top = listed_commands(&syscost(&["--help"]).1);
    assert!(top.len() >= 10, "{top:?}");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (code, script, err) = syscost(&["completions", shell]);
        assert_eq!(code, Some(0), "{shell}: {err}");
        for c in &top {
            assert!(script.contains(c.as_str()), "{shell} completion lacks {c}");
        }
    }
    let (code, _, err) = syscost(&["completions", "tcsh"]);
    assert_eq!(code, Some(2), "an unknown shell is a usage error: {err}");
    // Syntax checks, by each shell that is installed.
    for (shell, check) in [
        ("bash", &["-n"][..]),
        ("zsh", &["-n"]),
        ("fish", &["--no-execute"]),
    ] {
        if !have(shell) {
            println!(
                "SKIPPED: {shell} is not installed, so its completion is not checked"
            );
            continue;
        }
        let script = syscost(&["completions", shell]).1;
        let (ok, _, err) = feed(shell, check, &script);
        assert!(
            ok && err.is_empty(),
            "{shell} {check:?} refuses the completion: {err}"
        );
        // The check can fail: the same shell refuses a broken script.
        let (ok, _, _) = feed(shell, check, &format!("{script}\nif then fi {{\n"));
        assert!(!ok, "{shell} {check:?} accepted a broken script");
    }
    if have("bash") {
        // Bash offers the subcommands after `syscost `.
        let script = syscost(&["completions", "bash"]).1;
        let probe = format!(
            "{script}\nCOMP_WORDS=(syscost hist); COMP_CWORD=1; COMP_LINE='syscost hist'; \
             COMP_POINT=${{#COMP_LINE}}; _syscost syscost hist syscost; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
        );
        let (ok, out, err) = feed("bash", &[], &probe);
        assert!(ok, "{err}");
        assert_eq!(out.trim(), "history", "{err}");
    }
}

#[test]
fn the_man_page_is_roff_naming_every_command() {
    let (code, page, err) = syscost(&["man"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        page.lines().any(|l| l.starts_with(".TH syscost 1")),
        "no .TH line: {}",
        &page[..page.len().min(300)]
    );
    for c in listed_commands(&syscost(&["--help"]).1) {
        assert!(
            page.contains(&format!("syscost\\-{c}")),
            "the page lacks {c}"
        );
    }
    if have("groff") {
        // -ww: every warning; -z: no output, only the diagnostics.
        let (ok, _, err) = feed("groff", &["-man", "-Tutf8", "-ww", "-z"], &page);
        assert!(ok && err.is_empty(), "groff warns: {err}");
    } else {
        println!("SKIPPED: groff is not installed, so the page's roff is not checked");
    }
    if have("man") {
        let (ok, text, err) = feed("man", &["-l", "-"], &page);
        assert!(ok, "man -l - fails: {err}");
        for heading in ["NAME", "SYNOPSIS", "SUBCOMMANDS"] {
            assert!(text.contains(heading), "man renders no {heading}:\n{text}");
        }
        assert!(!text.contains(".TH"), "man shows raw roff:\n{text}");
    } else {
        println!("SKIPPED: man is not installed, so the page is not rendered");
    }
}

#[test]
fn man_dir_writes_a_page_per_command() {
    let dir = std::env::temp_dir().join(format!("syscost-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (code, _, err) = syscost(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    for path in command_paths() {
        let name = if path.is_empty() {
            "syscost.1".to_string()
        } else {
            format!("syscost-{}.1", path.join("-"))
        };
        let page = std::fs::read_to_string(dir.join(&name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(page.contains(".TH"), "{name}");
        if have("groff") {
            let (ok, _, err) = feed("groff", &["-man", "-Tutf8", "-ww", "-z"], &page);
            assert!(ok && err.is_empty(), "groff warns about {name}: {err}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let missing = dir.join("no-such-dir");
    let (code, _, err) = syscost(&["man", "--dir", missing.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("man --dir") && err.lines().count() == 1,
        "{err}"
    );
}
