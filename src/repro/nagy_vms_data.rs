//! The VAX/VMS system service timings (Fermilab ACNET design note 16.0), typed in from
//! `../shared/seeds/004_798c24c67863a0f0.txt`: Table I (each service in µs, the null
//! timing overhead already subtracted) and Table III (mailbox echo round trips between
//! a master and a slave process: overhead in ms and "bandwidth" in KB/s).
//!
//! Each Table I row carries the modern Linux services that stand for it, as catalogue
//! names and parameters; `syscost repro nagy-vms` measures them.

/// One modern counterpart of a VMS service: a benchmark instance.
#[derive(Debug, Clone, Copy)]
pub struct Analog {
    /// The catalogue name.
    pub bench: &'static str,
    /// Parameters that differ from the benchmark's defaults.
    pub params: &'static [(&'static str, &'static str)],
    /// When the benchmark's operation covers this row and its partner (mmap+munmap for
    /// $CRETVA and $DELTVA), the partner's name: the ratio is then taken against the
    /// two rows' sum.
    pub pair: Option<&'static str>,
}

const fn one(bench: &'static str) -> Analog {
    Analog {
        bench,
        params: &[],
        pair: None,
    }
}

const fn with(
    bench: &'static str,
    params: &'static [(&'static str, &'static str)],
) -> Analog {
    Analog {
        bench,
        params,
        pair: None,
    }
}

const fn pair(
    bench: &'static str,
    params: &'static [(&'static str, &'static str)],
    partner: &'static str,
) -> Analog {
    Analog {
        bench,
        params,
        pair: Some(partner),
    }
}

/// A row of Table I.
#[derive(Debug, Clone, Copy)]
pub struct Service {
    /// The VMS service, as the table names it.
    pub service: &'static str,
    /// The table's description.
    pub what: &'static str,
    /// The time in µs on the VAX (an 11/780 of the early 1980s).
    pub us: f64,
    /// Today's counterparts, in order of closeness.
    pub analogs: &'static [Analog],
}

/// A group of Table I, as the paper heads it.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    /// The heading.
    pub title: &'static str,
    /// Its rows.
    pub rows: &'static [Service],
}

const fn svc(
    service: &'static str,
    what: &'static str,
    us: f64,
    analogs: &'static [Analog],
) -> Service {
    Service {
        service,
        what,
        us,
        analogs,
    }
}

/// Table I, group by group. Memory management rows affect 5 pages each.
pub const TABLE_I: &[Group] = &[
    Group {
        title: "Event flag services",
        rows: &[
            svc("$CLREF", "clear event flag", 81.0, &[one("svc.ef.clear")]),
            svc(
                "$SETEF",
                "set event flag",
                135.0,
                &[one("svc.ef.set"), one("svc.ef.set_futex")],
            ),
            svc("$READEF", "read event flags", 87.0, &[one("svc.ef.read")]),
            svc(
                "$WAITFR",
                "wait for a (set) event flag",
                83.0,
                &[one("svc.ef.wait")],
            ),
            svc(
                "$WFLAND",
                "wait for logical AND of (set) event flags",
                89.0,
                &[
                    with("svc.ef.wait_all", &[("api", "poll")]),
                    with("svc.ef.wait_all", &[("api", "epoll")]),
                ],
            ),
            svc(
                "$WFLOR",
                "wait for logical OR of (set) event flags",
                84.0,
                &[
                    with("svc.ef.wait_any", &[("api", "poll")]),
                    with("svc.ef.wait_any", &[("api", "epoll")]),
                ],
            ),
        ],
    },
    Group {
        title: "Miscellaneous services",
        rows: &[
            svc(
                "$GETJPI",
                "return current process id",
                250.0,
                &[one("svc.getrusage"), one("svc.procstat")],
            ),
            svc(
                "$CMEXEC",
                "change mode to executive",
                99.0,
                &[one("syscall.getpid.raw")],
            ),
            svc(
                "$SETPRI",
                "set (raise) process priority",
                123.0,
                &[one("syscall.setpriority"), one("svc.setpri")],
            ),
        ],
    },
    Group {
        title: "Process control services",
        rows: &[
            svc(
                "$CANWAK",
                "cancel wakeups (same process)",
                152.0,
                &[one("svc.canwak")],
            ),
            svc("$CANWAK", "cancel wakeups (other process)", 175.0, &[]),
            svc(
                "$WAKE",
                "wakeup (same process)",
                106.0,
                &[one("svc.wake.self")],
            ),
            svc(
                "$WAKE",
                "wakeup (other process)",
                127.0,
                &[one("svc.wake.other"), one("svc.wake.latency")],
            ),
            svc(
                "$WAKE+$HIBER",
                "hibernate with pending wakeup",
                196.0,
                &[one("svc.hiber.pending")],
            ),
            svc(
                "$SUSPND",
                "suspend other process",
                234.0,
                &[one("signal.stop")],
            ),
            svc(
                "$RESUME",
                "resume other process",
                123.0,
                &[one("signal.cont")],
            ),
        ],
    },
    Group {
        title: "Time and timer services",
        rows: &[
            svc(
                "$SCHDWK",
                "schedule wakeups (other process)",
                252.0,
                &[with("svc.timer.arm", &[("api", "timerfd")])],
            ),
            svc("$GETTIM", "get system time", 76.0, &[one("clock.realtime")]),
            svc(
                "$NUMTIM",
                "get system time in numeric format",
                278.0,
                &[one("svc.gmtime"), one("svc.localtime")],
            ),
            svc(
                "$SETIMR",
                "set event flag at specified time",
                278.0,
                &[with("svc.timer.arm", &[("api", "timerfd")])],
            ),
            svc(
                "$SETIMR",
                "call AST at specified time",
                279.0,
                &[
                    with("svc.timer.arm", &[("api", "posix")]),
                    with("svc.timer.arm", &[("api", "itimer")]),
                    with("svc.timer.arm", &[("api", "alarm")]),
                ],
            ),
            svc(
                "$CANTIM",
                "cancel all timer requests",
                265.0,
                &[one("svc.timer.cancel_all")],
            ),
            svc(
                "$CANTIM",
                "cancel selected timer request",
                285.0,
                &[
                    with("svc.timer.cancel", &[("api", "posix")]),
                    with("svc.timer.cancel", &[("api", "timerfd")]),
                ],
            ),
        ],
    },
    Group {
        title: "AST services",
        rows: &[
            svc(
                "$SETAST",
                "enable/disable ASTs",
                117.0,
                &[one("signal.mask")],
            ),
            svc(
                "$DCLAST",
                "declare and call an AST",
                484.0,
                &[one("signal.catch")],
            ),
            svc(
                "$DCLAST",
                "declare AST (delivery disabled)",
                201.0,
                &[one("signal.raise_blocked"), one("signal.pending")],
            ),
        ],
    },
    Group {
        title: "User-written network AST services",
        rows: &[
            svc(
                "USER_SETINA",
                "enable/disable internal network AST",
                115.0,
                &[one("signal.mask")],
            ),
            svc(
                "USER_DCLINA",
                "queue network AST for another process",
                371.0,
                &[one("signal.queue")],
            ),
            svc(
                "USER_DCLNPA",
                "queue and deliver network process AST",
                982.0,
                &[one("signal.queue_rtt")],
            ),
        ],
    },
    Group {
        title: "I/O system services",
        rows: &[
            svc(
                "$QIO",
                "to NLA0:",
                813.0,
                &[with("svc.uring.write", &[("wait", "reap")])],
            ),
            svc(
                "$QIO",
                "to NLA0: with AST called",
                1094.0,
                &[with("svc.uring.write", &[("wait", "wait")])],
            ),
            svc(
                "$QIOW",
                "to NLA0:",
                871.0,
                &[
                    one("svc.null.write"),
                    with("svc.uring.write", &[("wait", "wait")]),
                ],
            ),
        ],
    },
    Group {
        title: "Memory management services (5 pages affected)",
        rows: &[
            svc("$EXPREG", "expand P0 region", 408.0, &[]),
            svc(
                "$CNTREG",
                "contract P0 region",
                639.0,
                &[pair("mem.brk", &[("n", "5")], "$EXPREG")],
            ),
            svc("$CRETVA", "create specified virtual addresses", 383.0, &[]),
            svc(
                "$DELTVA",
                "delete specified virtual addresses",
                626.0,
                &[pair("mem.mmap", &[("n", "5"), ("touch", "no")], "$CRETVA")],
            ),
            svc(
                "$SETPRT",
                "set protection on pages",
                3690.0,
                &[with("mem.mprotect", &[("n", "5")])],
            ),
            svc(
                "$MGBLSC",
                "map global section to specified addresses",
                1839.0,
                &[with("mem.map_shared", &[("n", "5"), ("at", "fixed")])],
            ),
            svc(
                "$MGBLSC",
                "map global section by extending P0 region",
                1867.0,
                &[with("mem.map_shared", &[("n", "5"), ("at", "any")])],
            ),
            svc(
                "$MGBLSC",
                "change mapping of specified addresses",
                2431.0,
                &[with("mem.mremap", &[("n", "5")])],
            ),
        ],
    },
];

/// Why a Table I row has no counterpart of its own.
pub fn no_analog_reason(service: &Service) -> Option<&'static str> {
    match (service.service, service.what) {
        ("$CANWAK", "cancel wakeups (other process)") => Some(
            "no counterpart: a futex or eventfd wake-up count is cleared by whoever holds \
             it; the same-process row measures that",
        ),
        ("$EXPREG", _) => Some("measured with $CNTREG as one brk grow-and-shrink pair"),
        ("$CRETVA", _) => Some("measured with $DELTVA as one mmap-and-munmap pair"),
        _ => None,
    }
}

/// The paper's timing overhead (the null operation), subtracted from every Table I
/// figure, in µs.
pub const NULL_OVERHEAD_US: f64 = 143.0;

/// Which conditions Table III compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// The operational VAX, no other users.
    SingleUser,
    /// The development VAX during normal timesharing.
    MultiUser,
    /// Master and slave on two VAXes, the mailboxes in MA780 shared memory.
    SharedMemory,
}

impl Condition {
    /// The paper's heading.
    pub fn title(self) -> &'static str {
        match self {
            Condition::SingleUser => "Single user",
            Condition::MultiUser => "Multi-user",
            Condition::SharedMemory => "Shared memory",
        }
    }
}

/// A row of Table III.
#[derive(Debug, Clone, Copy)]
pub struct Mailbox {
    /// The condition.
    pub condition: Condition,
    /// The master's VMS priority (0..31; 16 and above are real-time).
    pub master: u8,
    /// The slave's VMS priority.
    pub slave: u8,
    /// Overhead per echo, in ms.
    pub overhead_ms: f64,
    /// "Bandwidth", in KB/s, as the paper quotes it.
    pub kb_per_s: f64,
}

const fn mbx(
    condition: Condition,
    master: u8,
    slave: u8,
    overhead_ms: f64,
    kb_per_s: f64,
) -> Mailbox {
    Mailbox {
        condition,
        master,
        slave,
        overhead_ms,
        kb_per_s,
    }
}

/// Table III.
pub const TABLE_III: &[Mailbox] = &[
    mbx(Condition::SingleUser, 30, 17, 2.796, 795.0),
    mbx(Condition::SingleUser, 17, 30, 2.745, 794.0),
    mbx(Condition::SingleUser, 30, 30, 2.770, 791.0),
    mbx(Condition::SingleUser, 4, 4, 2.796, 795.0),
    mbx(Condition::MultiUser, 14, 14, 2.941, 785.0),
    mbx(Condition::MultiUser, 4, 4, 2.949, 787.0),
    mbx(Condition::MultiUser, 2, 2, 2.973, 787.0),
    mbx(Condition::SharedMemory, 30, 30, 2.393, 366.0),
];

/// The message sizes of the mailbox test: "from 4 bytes up to 10 Kbytes" (the paper
/// does not list the steps; these are the `ipc.rtt` defaults within that range).
pub const SIZES: &[u64] = &[4, 64, 512, 1024, 4096, 10240];

/// A VMS priority as a Linux `ipc.rtt` priority: the real-time range 16..31 becomes
/// SCHED_FIFO 1..16 (`rtN`); the normal range becomes a nice value, VMS's default
/// interactive priority 4 being nice 0 and each level above it one nice level lower.
pub fn linux_priority(vms: u8) -> String {
    if vms >= 16 {
        format!("rt{}", vms - 15)
    } else {
        (4 - i32::from(vms)).to_string()
    }
}

/// What the paper says of the mailbox results.
pub const TABLE_III_READING: &str = "priorities seemed to have very little effect; the busy \
     timesharing machine was about 6% slower than the idle one; shared memory between two \
     VAXes cut the overhead but, with a 128-byte pool block size, halved the bandwidth";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_i_has_the_papers_rows() {
        let rows: Vec<&Service> = TABLE_I.iter().flat_map(|g| g.rows).collect();
        assert_eq!(TABLE_I.len(), 8);
        assert_eq!(rows.len(), 40);
        let total: f64 = rows.iter().map(|r| r.us).sum();
        // The column's sum, added by hand from the seed.
        assert_eq!(total, 20_788.0);
        let dclast = rows
            .iter()
            .find(|r| r.what == "declare and call an AST")
            .unwrap();
        assert_eq!(dclast.us, 484.0);
    }

    #[test]
    fn every_row_has_a_counterpart_or_a_reason() {
        for g in TABLE_I {
            for r in g.rows {
                assert!(
                    !r.analogs.is_empty() || no_analog_reason(r).is_some(),
                    "{} {}",
                    r.service,
                    r.what
                );
            }
        }
    }

    #[test]
    fn pairs_name_a_row_of_the_same_group() {
        for g in TABLE_I {
            for r in g.rows {
                for a in r.analogs {
                    if let Some(p) = a.pair {
                        assert!(g.rows.iter().any(|o| o.service == p), "{p}");
                    }
                }
            }
        }
    }

    #[test]
    fn table_iii_and_priorities() {
        assert_eq!(TABLE_III.len(), 8);
        let single: Vec<_> = TABLE_III
            .iter()
            .filter(|m| m.condition == Condition::SingleUser)
            .collect();
        assert_eq!(single.len(), 4);
        assert_eq!(linux_priority(30), "rt15");
        assert_eq!(linux_priority(17), "rt2");
        assert_eq!(linux_priority(16), "rt1");
        assert_eq!(linux_priority(14), "-10");
        assert_eq!(linux_priority(4), "0");
        assert_eq!(linux_priority(2), "2");
    }
}
