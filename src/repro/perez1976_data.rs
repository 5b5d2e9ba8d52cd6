//! The figures of Perez & Raleigh, "UNIX System Call Measurements" (Bell Laboratories,
//! 16 September 1976), typed in from the memo. All times are microseconds on the
//! PDP-11/40, /45 and /70.

/// Median, mean and standard deviation, µs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Median (read by hand from the trace data).
    pub med: u32,
    /// Mean (from the reduction program).
    pub mean: u32,
    /// Standard deviation.
    pub sd: u32,
}

const fn s(med: u32, mean: u32, sd: u32) -> Option<Stat> {
    Some(Stat { med, mean, sd })
}

/// One row of a figure: a call on the three machines (`None` where not measured).
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The memo's name for the call.
    pub call: &'static str,
    /// PDP-11/40.
    pub m40: Option<Stat>,
    /// PDP-11/45.
    pub m45: Option<Stat>,
    /// PDP-11/70.
    pub m70: Option<Stat>,
}

/// Figure 4: system call timing without floating-point hardware.
pub const FIG4: &[Row] = &[
    Row {
        call: "alarm",
        m40: s(540, 582, 157),
        m45: s(480, 488, 34),
        m70: s(220, 244, 82),
    },
    Row {
        call: "csw",
        m40: s(510, 521, 29),
        m45: s(460, 477, 115),
        m70: s(220, 216, 8),
    },
    Row {
        call: "dup",
        m40: s(790, 838, 60),
        m45: s(680, 679, 39),
        m70: s(320, 323, 22),
    },
    Row {
        call: "ggid",
        m40: s(520, 545, 45),
        m45: s(460, 495, 156),
        m70: s(220, 228, 53),
    },
    Row {
        call: "gpid",
        m40: s(520, 537, 44),
        m45: s(460, 471, 43),
        m70: s(230, 236, 52),
    },
    Row {
        call: "guid",
        m40: s(530, 564, 155),
        m45: s(460, 465, 25),
        m70: s(220, 241, 77),
    },
    Row {
        call: "gtty(s)",
        m40: s(1310, 1381, 227),
        m45: s(1010, 1049, 177),
        m70: s(560, 578, 55),
    },
    Row {
        call: "gtty(m)",
        m40: s(1310, 1366, 196),
        m45: s(1200, 1209, 58),
        m70: s(600, 594, 32),
    },
    Row {
        call: "kill",
        m40: s(880, 942, 219),
        m45: s(720, 725, 33),
        m70: s(380, 379, 12),
    },
    Row {
        call: "nice",
        m40: s(550, 567, 44),
        m45: s(480, 500, 112),
        m70: s(240, 249, 61),
    },
    Row {
        call: "time",
        m40: s(560, 584, 49),
        m45: s(490, 506, 118),
        m70: s(230, 242, 53),
    },
    Row {
        call: "times",
        m40: s(1320, 1346, 66),
        m45: s(1020, 1028, 47),
        m70: s(520, 527, 15),
    },
    Row {
        call: "sig",
        m40: s(970, 993, 55),
        m45: s(770, 779, 41),
        m70: s(390, 396, 56),
    },
    Row {
        call: "stme",
        m40: s(800, 849, 97),
        m45: s(530, 554, 74),
        m70: s(290, 305, 54),
    },
    Row {
        call: "sgid",
        m40: s(810, 918, 246),
        m45: s(540, 580, 157),
        m70: s(270, 291, 91),
    },
    Row {
        call: "suid",
        m40: s(720, 764, 196),
        m45: s(480, 493, 53),
        m70: s(260, 269, 64),
    },
];

/// Figure 5: system call timing with floating-point hardware (11/45 and 11/70 only).
pub const FIG5: &[Row] = &[
    Row {
        call: "alarm",
        m40: None,
        m45: s(630, 640, 31),
        m70: s(350, 363, 17),
    },
    Row {
        call: "csw",
        m40: None,
        m45: s(610, 620, 38),
        m70: s(310, 318, 14),
    },
    Row {
        call: "dup",
        m40: None,
        m45: s(830, 826, 37),
        m70: s(460, 455, 26),
    },
    Row {
        call: "ggid",
        m40: None,
        m45: s(620, 653, 171),
        m70: s(350, 357, 53),
    },
    Row {
        call: "gpid",
        m40: None,
        m45: s(620, 636, 121),
        m70: s(330, 345, 56),
    },
    Row {
        call: "guid",
        m40: None,
        m45: s(620, 643, 122),
        m70: s(340, 350, 56),
    },
    Row {
        call: "gtty(s)",
        m40: None,
        m45: s(1180, 1177, 32),
        m70: s(730, 732, 17),
    },
    Row {
        call: "gtty(m)",
        m40: None,
        m45: s(1390, 1414, 146),
        m70: s(720, 717, 45),
    },
    Row {
        call: "kill",
        m40: None,
        m45: s(870, 896, 110),
        m70: s(490, 516, 34),
    },
    Row {
        call: "nice",
        m40: None,
        m45: s(640, 651, 108),
        m70: s(350, 374, 82),
    },
    Row {
        call: "time",
        m40: None,
        m45: s(650, 655, 43),
        m70: s(350, 362, 56),
    },
    Row {
        call: "times",
        m40: None,
        m45: s(1180, 1197, 138),
        m70: s(660, 653, 58),
    },
    Row {
        call: "sig",
        m40: None,
        m45: s(930, 972, 207),
        m70: s(500, 507, 18),
    },
    Row {
        call: "stme",
        m40: None,
        m45: s(700, 715, 116),
        m70: s(420, 424, 13),
    },
    Row {
        call: "sgid",
        m40: None,
        m45: s(700, 720, 109),
        m70: s(430, 435, 61),
    },
    Row {
        call: "suid",
        m40: None,
        m45: s(650, 660, 118),
        m70: s(380, 386, 16),
    },
];

/// One row of Figure 3, direct vs indirect calls. The 11/45 and 11/70 ran with
/// floating-point hardware; the memo gives their medians corrected to none in
/// parentheses (`med_nofpp`).
#[derive(Debug, Clone, Copy)]
pub struct CallRow {
    /// The memo's label.
    pub call: &'static str,
    /// Arguments besides r0.
    pub args: u32,
    /// Whether the call is indirect.
    pub indirect: bool,
    /// PDP-11/40.
    pub m40: Stat,
    /// PDP-11/45, with floating point.
    pub m45: Stat,
    /// PDP-11/45 median corrected to no floating point.
    pub m45_nofpp: u32,
    /// PDP-11/70, with floating point.
    pub m70: Stat,
    /// PDP-11/70 median corrected to no floating point.
    pub m70_nofpp: u32,
}

const fn st(med: u32, mean: u32, sd: u32) -> Stat {
    Stat { med, mean, sd }
}

/// Figure 3: direct vs indirect system call timing.
pub const FIG3: &[CallRow] = &[
    CallRow {
        call: "D(r0+0args)",
        args: 0,
        indirect: false,
        m40: st(520, 549, 153),
        m45: st(615, 616, 5),
        m45_nofpp: 445,
        m70: st(360, 367, 43),
        m70_nofpp: 220,
    },
    CallRow {
        call: "I(r0+1arg)",
        args: 1,
        indirect: true,
        m40: st(790, 812, 52),
        m45: st(800, 861, 161),
        m45_nofpp: 630,
        m70: st(420, 436, 70),
        m70_nofpp: 280,
    },
    CallRow {
        call: "I(r0+2args)",
        args: 2,
        indirect: true,
        m40: st(890, 909, 53),
        m45: st(870, 904, 84),
        m45_nofpp: 700,
        m70: st(470, 481, 13),
        m70_nofpp: 330,
    },
    CallRow {
        call: "I(r0+3args)",
        args: 3,
        indirect: true,
        m40: st(980, 1005, 52),
        m45: st(940, 1005, 169),
        m45_nofpp: 770,
        m70: st(500, 523, 21),
        m70_nofpp: 360,
    },
    CallRow {
        call: "I(r0+4args)",
        args: 4,
        indirect: true,
        m40: st(1080, 1106, 60),
        m45: st(1005, 1069, 169),
        m45_nofpp: 835,
        m70: st(520, 524, 16),
        m70_nofpp: 380,
    },
];

/// Figure 6: subroutine call overhead (C save/restore), on the 11/40, /45, /70.
pub const FIG6: [Stat; 3] = [st(64, 64, 2), st(37, 37, 1), st(18, 18, 5)];

/// The memo's per-argument increment, µs, on the 11/40, /45, /70 (Analysis).
pub const PER_ARG_US: [u32; 3] = [95, 70, 30];

/// The event (trace) call on one machine, µs: (system, user) without floating point,
/// and with it where the machine had it.
#[derive(Debug, Clone, Copy)]
pub struct EventCall {
    /// The machine.
    pub machine: &'static str,
    /// (system, user) without floating point.
    pub nofpp: (u32, u32),
    /// (system, user) with floating point.
    pub fpp: Option<(u32, u32)>,
}

/// Figure 2: the event call timing (the 11/40 had no floating point).
pub const FIG2_EVENT: [EventCall; 3] = [
    EventCall {
        machine: "11/40",
        nofpp: (220, 1340),
        fpp: None,
    },
    EventCall {
        machine: "11/45",
        nofpp: (150, 870),
        fpp: Some((150, 1040)),
    },
    EventCall {
        machine: "11/70",
        nofpp: (77, 420),
        fpp: Some((77, 560)),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn row(call: &str) -> &'static Row {
        FIG4.iter().find(|r| r.call == call).unwrap()
    }

    #[test]
    fn figures_hold_the_memos_numbers() {
        assert_eq!(row("gpid").m40, s(520, 537, 44));
        assert_eq!(row("gpid").m70.unwrap().med, 230);
        assert_eq!(row("times").m45, s(1020, 1028, 47));
        assert_eq!(row("gtty(m)").m45.unwrap().med, 1200);
        assert_eq!(FIG4.len(), 16);
        assert_eq!(
            FIG5.iter().find(|r| r.call == "stme").unwrap().m70,
            s(420, 424, 13)
        );
        assert_eq!(FIG6[1], st(37, 37, 1));
    }

    #[test]
    fn figure3_matches_the_memos_rules_of_thumb() {
        // "a direct system call takes a minimum of 520, 450, and 220 usec"
        assert_eq!(FIG3[0].m40.med, 520);
        assert_eq!(FIG3[0].m70_nofpp, 220);
        // Floating point adds 170 (11/45) and 140 (11/70) to every row.
        for r in FIG3 {
            assert_eq!(r.m45.med - r.m45_nofpp, 170, "{}", r.call);
            assert_eq!(r.m70.med - r.m70_nofpp, 140, "{}", r.call);
        }
        // The indirect rows grow by roughly the stated increment per argument.
        let slope40 = (FIG3[4].m40.med - FIG3[1].m40.med) / 3;
        assert!(slope40.abs_diff(PER_ARG_US[0]) <= 5, "{slope40}");
        let slope70 = (FIG3[4].m70.med - FIG3[1].m70.med) / 3;
        assert!(slope70.abs_diff(PER_ARG_US[2]) <= 5, "{slope70}");
    }
}
