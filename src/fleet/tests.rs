use super::*;
use crate::results::tests::run_with_medians;

/// Twenty hosts' figures around 100 ns, ±3% scatter, each with a ±1% interval.
fn steady() -> Vec<(f64, f64, f64)> {
    (0..20)
        .map(|i| {
            let m = 100.0 + ((i * 7) % 13) as f64 * 0.5 - 3.0;
            (m, m * 0.99, m * 1.01)
        })
        .collect()
}

#[test]
fn a_host_thirty_percent_slower_stands_out() {
    let mut f = steady();
    f[7] = (130.0, 128.7, 131.3);
    let s = odd_ones(&f, 0.05).unwrap();
    assert_eq!(s.odd.iter().filter(|o| **o).count(), 1);
    assert!(s.odd[7]);
    assert!((s.median_ns - 100.0).abs() < 3.0, "{s:?}");
}

#[test]
fn a_steady_fleet_flags_none() {
    let s = odd_ones(&steady(), 0.05).unwrap();
    assert!(s.odd.iter().all(|o| !o), "{s:?}");
}

#[test]
fn a_wide_interval_or_a_small_group_is_never_flagged() {
    let mut f = steady();
    // As slow, but the host's own interval reaches back into the band.
    f[3] = (130.0, 95.0, 165.0);
    assert!(!odd_ones(&f, 0.05).unwrap().odd[3]);
    // Two hosts cannot outvote each other.
    let two = [(100.0, 99.0, 101.0), (200.0, 199.0, 201.0)];
    assert!(odd_ones(&two, 0.05).unwrap().odd.iter().all(|o| !o));
    // Below the threshold, never, however steady the others.
    let mut flat = vec![(100.0, 99.99, 100.01); 10];
    flat.push((104.0, 103.99, 104.01));
    assert!(odd_ones(&flat, 0.05).unwrap().odd.iter().all(|o| !o));
    assert!(odd_ones(&[], 0.05).is_none());
}

#[test]
fn hosts_are_grouped_by_the_facts_that_decide_costs() {
    let mut latest = Vec::new();
    for i in 0..6 {
        let mut run =
            run_with_medians(&[("syscall.getpid", if i == 4 { 130.0 } else { 100.0 })]);
        run.host.hostname = Some(format!("web-{i}"));
        latest.push((format!("web-{i}"), i as i64 + 1, run));
    }
    for i in 0..2 {
        let mut run = run_with_medians(&[("syscall.getpid", 300.0), ("x.other", 5.0)]);
        run.host.hostname = Some(format!("db-{i}"));
        run.host.kernel = Some("5.10-old".into());
        latest.push((format!("db-{i}"), 10 + i as i64, run));
    }
    let f = fleet(&latest, &["syscall.*".to_string()], 0.05);
    assert_eq!(f.groups.len(), 2);
    assert_eq!(f.groups[0].id, "G1");
    assert_eq!(f.groups[0].hosts.len(), 6);
    assert_eq!(f.rows.len(), 1, "x.other is not selected");
    assert_eq!(f.rows[0].cells.len(), 2);
    let odd: Vec<&str> = f
        .odd_hosts()
        .iter()
        .map(|(_, _, h)| h.host.as_str())
        .collect();
    assert_eq!(
        odd,
        ["web-4"],
        "the old kernel's hosts are another group, not odd"
    );
    let all = fleet(&latest, &[], 0.05);
    assert_eq!(all.rows.len(), 2);
}

#[test]
fn a_group_of_one_host_shows_no_spread() {
    let mut run = run_with_medians(&[("syscall.getpid", 100.0)]);
    run.host.hostname = Some("lone".into());
    let f = fleet(&[("lone".into(), 1, run)], &[], 0.05);
    let text = render::text_at(&f, 100);
    let row = text
        .lines()
        .find(|l| l.starts_with("syscall.getpid"))
        .unwrap();
    assert!(row.contains("(1)") && !row.contains('±'), "{row}");
}
