//! A worker process (`syscost __worker`) ends quietly when its parent lets it go in the
//! middle of a round: the parent's end of the socket closes, as when a Ctrl-C stops the
//! run, or a second one ends it at once. A worker's own error is still said.
//!
//! The test process is the worker's parent here: it speaks the run's side of the
//! conversation over a socket pair (`session::worker::wire`).

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use syscost::harness::{Held, Profile};
use syscost::session::worker::wire::{self, Reply, Request, Start};

const SYSCOST: &str = env!("CARGO_BIN_EXE_syscost");

/// The start of benchmark `bench` (one without parameters), measured with the smoke
/// profile on the monotonic clock.
fn start(bench: &str) -> Start {
    Start {
        bench: bench.into(),
        params: Vec::new(),
        profile: Profile::SMOKE,
        clock: "monotonic".into(),
        ns_per_tick: 1.0,
        granularity_ns: 1.0,
        resolution_ns: 1.0,
        batch: None,
        spans: false,
        begin: 0,
        keep_samples: false,
        max_rounds: 2,
        dir: None,
        drop_caches: false,
        context_profile: Some("smoke".into()),
        explain: 0,
        resume: false,
        home: None,
    }
}

/// Starts a worker with the other end of a socket pair, as a run does.
fn spawn() -> (UnixStream, Child) {
    let (mine, theirs) = UnixStream::pair().expect("a socket pair");
    // The worker inherits its end: not closed on exec.
    rustix::io::fcntl_setfd(&theirs, rustix::io::FdFlags::empty()).expect("fcntl");
    let child = Command::new(SYSCOST)
        .args([
            "__worker".to_string(),
            theirs.as_raw_fd().to_string(),
            std::process::id().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the worker starts");
    drop(theirs);
    (mine, child)
}

/// Waits for the worker: its exit code and what it wrote on standard error.
fn finish(mut child: Child) -> (Option<i32>, String) {
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap().code(), err)
}

#[test]
fn a_worker_let_go_in_the_middle_of_a_round_ends_quietly() {
    let (mut link, child) = spawn();
    wire::send(&mut link, &Request::Start(Box::new(start("call.empty")))).unwrap();
    match wire::recv::<Reply>(&mut link).unwrap() {
        Some(Reply::Ready { .. }) => {}
        other => panic!("the worker answered {other:?} to its start"),
    }
    wire::send(
        &mut link,
        &Request::Visit {
            round: 0,
            canary_ns: 0.0,
            limit_ns: 0.0,
            held: Held::default(),
        },
    )
    .unwrap();
    // The parent goes before the round's answer: the worker's reply meets a closed
    // socket (a broken pipe), which is no news to anyone.
    link.shutdown(std::net::Shutdown::Both).unwrap();
    drop(link);
    let (code, err) = finish(child);
    assert_eq!(err, "", "the worker said something");
    assert_eq!(code, Some(0));
}

#[test]
fn a_workers_own_error_is_still_said() {
    let (mut link, child) = spawn();
    wire::send(&mut link, &Request::Start(Box::new(start("no.such.bench")))).unwrap();
    let (code, err) = finish(child);
    assert!(
        err.starts_with("syscost worker: no benchmark is named no.such.bench"),
        "{err}"
    );
    assert_eq!(code, Some(2));
    drop(link);
}
