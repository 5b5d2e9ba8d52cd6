//! The method's constants: every number that changes a row's figure, its interval or
//! its verdict, in the order docs/method.md introduces them, each with its reason. The
//! profiles (`harness::profile`) hold the rest: rounds, spans, targets and budgets.
//! "The VM" below is the 2-vCPU machine this project is developed on; the scripts that
//! measured each choice are named in docs/method.md §8.

// The figure.

/// The share of the round figures left out at each end of the trimmed mean: a slow
/// round moves the figure no more than any high round.
pub const TRIM: f64 = 0.2;

/// The fewest clean samples a figure may rest on; a result with fewer (or with fewer
/// than a tenth of its samples clean) rests on all its samples instead: a median of a
/// handful says nothing.
pub const MIN_CLEAN: usize = 30;

/// The modified z-score above which a sample is an outlier of its round (the MAD test,
/// the one outlier test): Iglewicz & Hoaglin's recommendation.
pub const MAD_THRESHOLD: f64 = 3.5;

/// The least MAD, as a fraction of the round's median: samples of a fast operation can
/// be so tight that the plain score would label half of them for differences far below
/// anything that matters; with 0.5%, nothing within about 2.6% of the median is an
/// outlier.
pub const MAD_FLOOR: f64 = 0.005;

/// A round whose samples fall in two modes, each holding at least this share of them
/// and [`MODE_GAP`] apart, is left out of the MAD test: both modes are the operation's,
/// and the test would label the minority.
pub const MODE_SHARE: f64 = 0.05;

/// How far apart (relative) two modes must lie to count as two ([`MODE_SHARE`]).
pub const MODE_GAP: f64 = 0.03;

// The interval.

/// How much wider than a confidence interval for the mean the interval is, so that it
/// holds a rerun's figure: √2, as the difference of two figures of the same standard
/// error has √2 times that error.
pub const RERUN: f64 = std::f64::consts::SQRT_2;

/// The narrowest relative half-width a result resting on all its samples may show:
/// its samples hold time that is not the operation's, in amounts the counters do not
/// say, so it claims no more precision than this (or the profile's target if wider).
pub const FEW_FLOOR: f64 = 0.01;

/// The fewest probe readings what the machine allows a kind of work is drawn from.
pub const MIN_FLOOR_READINGS: usize = 10;

/// The history's interval uses at most this many earlier runs: the machine of a month
/// ago is not the machine of today.
pub const PAST_RUNS: usize = 20;

// The machine's state.

/// How far apart (relative) two groups of readings (round figures, or the canary's)
/// must be to count as two states of the machine.
pub const STATE_GAP: f64 = 0.03;

/// Where in the canary's readings the machine's base state is read: the 10th
/// percentile, a low quantile that a slow spell taking most of a run does not move and
/// one lucky reading does not set.
pub const BASE_QUANTILE: f64 = 0.1;

/// How far back in time the run's canary readings set its base state: longer than the
/// VM's slow spells (seconds, at most about a minute), so that a spell does not become
/// the base; short enough that a machine that moved for good is measured as it is now.
pub const BASE_WINDOW_NS: u64 = 60_000_000_000;

/// The least time between two readings the base state's window takes, so that it
/// weighs the machine's states by the time spent in them.
pub const BASE_THIN_NS: u64 = 10_000_000;

/// The one gate for the machine's state: a round is measured later when the getpid
/// canary read just before it (by the run's own process) is more than this fraction
/// above the base state. On the VM the base state read 137–143 ns and the slow ones
/// 149–156 ns (system calls 8% slower, for hundreds of ms) and 180–207 ns (every kind
/// of work 20–40% slower, for seconds at a time); 5% leaves the base state's own spread
/// in. While the budget lasts a round waits; without one, at most [`REDO_PER_KEPT`]
/// times as many rounds are measured again as are kept, so that a benchmark that slows
/// the canary itself, or a machine that stays slow, is measured as it is.
pub const REDO_ABOVE: f64 = 0.05;

/// How many rounds may be measured again for each one kept, without a budget (counting
/// the profile's minimum as kept from the start).
pub const REDO_PER_KEPT: u32 = 3;

/// How many more canary readings a visit takes, at most, while they read above the
/// gate, before it goes ahead (and its round is measured again). On the VM a slow
/// episode met by a spinning getpid loop ended within 4 readings of 2,500 calls in 14
/// of 24 cases and within 16 in 21: 16 readings take about 6 ms there, a quarter of a
/// round's visit.
pub const SLOW_WAIT_READINGS: usize = 16;

// The rounds.

/// The rounds a worker measures before it hands its samples to a fresh process, which
/// measures the next ones (`SYSCOST_ROUNDS_PER_WORKER` overrides it; 0 keeps one
/// worker for all of an instance's rounds). A process has states of its own that last
/// its life: on the VM `syscall.getpid.raw` read 127.5 ns in every round of one worker
/// and 104.8–105.4 ns in eleven others, and a plain C loop of `syscall(SYS_getpid)`
/// read 148.8 ns in one process of forty and 140.0–143.2 ns in the rest. Measured by
/// one worker, such a state is the whole figure and its interval cannot see it;
/// measured by a fresh process each round, it is one round that the trimmed mean leaves
/// out, and the spread between rounds includes the spread between processes, as a
/// figure of the machine should. A hand-over took 2.2 ms there (median of 531), mostly
/// the fresh process's `exec`, which runs while the old one packs its samples.
pub const ROUNDS_PER_WORKER: usize = 1;

/// How long a round of work that leaves a CPU idle while it waits (a wake-up on another
/// CPU, a timed sleep: `bench::via::leaves_cpus_idle`) runs its operation after the
/// machine's probes and before its first sample. On the VM, such work costs less for
/// some 30–40 ms after both CPUs were busy, and the probes just before a round are such
/// work: a thorough round of cross-CPU pipe round trips read 30–46 µs in its first three
/// or four 10 ms windows and 45–65 µs after, as a plain C loop reads once it has run that
/// long; 10 ms rounds read 36.4 µs and the thorough profile's 100 ms rounds 46.3,
/// `sync.futex.lock_pi` 183 and 213 µs (docs/measurements.md, "Work that leaves a CPU
/// idle"). With it: 44.1 and 46.6 µs, 197 and 207 µs.
pub const SETTLE_NS: u64 = 50_000_000;

// The time a run may take.

/// The time a small selection may take for each of its instances, in the profile's
/// spans (10 s standard): a cap, not a time to fill, as a row stops once it converges.
/// A selection's budget is this much a row, at most [`SMALL_RUN_MAX_SPANS`], and never
/// less than its share of the profile's budget for a whole catalogue
/// (`session::budget`). With two spans a run, as until 2026-12-07, one benchmark
/// alone ended "the time budget ended" in 48 of 135 single-benchmark results beside
/// the peers; scripts/alone.py measures what this allowance does (docs/measurements.md,
/// "A benchmark alone").
pub const SMALL_RUN_ROW_SPANS: u64 = 10;

/// The most a selection smaller than a whole catalogue may take by
/// [`SMALL_RUN_ROW_SPANS`], in spans (60 s standard): a family of fifty rows waits no
/// more than a minute for the rows that converge slowly.
pub const SMALL_RUN_MAX_SPANS: u64 = 60;

// Paired alternatives.

/// The rounds a pair gets (`--reference`), with no early stop: enough for an interval
/// from the rounds' spread, few enough that a pair takes seconds (a standard round is
/// about 60 ms). Stopping at the first narrow look (5–8 rounds) held the median of ten
/// runs' ratios in 6–8 of 10; all 41, in 8–10 of 10 for the ping-pong pairs
/// (scripts/paired.py, 2026-11-27; the pipe pair, 4 of 10 on a quiet machine, is an
/// open question).
pub const MAX_PAIR_ROUNDS: usize = 41;

// Comparing runs and sides.

/// The normal quantile of the power a comparison's "smallest visible change" is given
/// at: the change these runs call slower four times in five.
pub const VISIBLE_POWER_Z: f64 = 0.8416;

/// The change, as a multiple of the threshold, that the runs a side `compare` asks for
/// would see ([`VISIBLE_POWER_Z`]): half again the threshold, so a change just past it
/// is seen, not only one far past it.
pub const ASK_FOR_CHANGE: f64 = 1.5;

/// The most runs a side `compare` asks for; a row that would need more says so.
pub const MAX_RUNS_ASKED: usize = 30;
