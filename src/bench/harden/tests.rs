use super::*;

fn args(v: &[&str]) -> Vec<ParamArg> {
    v.iter().map(|s| s.parse().unwrap()).collect()
}

fn labels(name: &str, a: &[&str]) -> Result<Vec<String>, UsageError> {
    let b = crate::bench::find(name).unwrap();
    Ok(crate::bench::copies::expand(b, &args(a))?
        .iter()
        .map(Params::label)
        .collect())
}

#[test]
fn hardening_values_cross_the_instances_and_only_when_given() {
    assert_eq!(
        labels("syscall.getppid", &["via=raw", "seccomp=0,256"]).unwrap(),
        ["via=raw seccomp=0", "via=raw seccomp=256"]
    );
    assert_eq!(
        labels("syscall.getppid", &["via=raw"]).unwrap(),
        ["via=raw"]
    );
    assert_eq!(
        labels(
            "syscall.getppid",
            &["via=raw", "seccomp=1", "seccomp_kind=nr"]
        )
        .unwrap(),
        ["via=raw seccomp=1 seccomp_kind=nr"]
    );
}

#[test]
fn hardening_is_refused_where_it_makes_no_sense() {
    let e = labels("syscall.getppid", &["cgroup=sibling"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no partner task"), "{e}");
    assert!(labels("ctx.pingpong", &["cgroup=same,sibling"]).is_ok());
    assert!(labels("syscall.getppid", &["seccomp_kind=nr"]).is_err());
    let e = labels("syscall.getppid", &["seccomp=1"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("seccomp_kind=nr"), "{e}");
    let e = labels("syscall.getppid", &["seccomp=4096", "seccomp_stack=9"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("per call"), "{e}");
    assert!(labels("call.empty", &["seccomp=8"]).is_err());
    assert!(labels("syscall.getppid", &["rseq=off"]).is_err());
    assert!(labels("ctx.pingpong", &["rseq=off", "userns=1"]).is_ok());
}

#[test]
fn what_an_instance_asks_for() {
    let b = crate::bench::find("syscall.getppid").unwrap();
    let p = &crate::bench::copies::expand(
        b,
        &args(&["seccomp=16", "seccomp_stack=3", "spec=both", "userns=1"]),
    )
    .unwrap()[0];
    let a = Asked::of(p);
    assert_eq!(
        a.filter,
        Some(Filter {
            insns: 16,
            args: true,
            stack: 3
        })
    );
    assert_eq!(a.spec.len(), 2);
    assert!(a.userns && !a.rseq_off && a.cgroup.is_none());
    assert_eq!(label(p), "seccomp=16 seccomp_stack=3 userns=1 spec=both");
    assert!(!Asked::of(&Params(vec![("seccomp", "0".into())])).any());
}

#[test]
fn in_process_an_instance_that_asks_for_hardening_is_skipped() {
    // This test process is no worker: nothing may be put on it.
    let p = Params(vec![("seccomp", "16".into())]);
    match check(&p) {
        Err(BenchError::Skip(why)) => assert!(why.contains("worker"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(check(&Params(vec![("via", "raw".into())])).is_ok());
    assert_eq!(os::seccomp_status().unwrap().0, 0);
}
