//! The method's constants: every number that changes a row's figure, its interval or
//! its verdict, in the order docs/method.md introduces them, each with what it does,
//! its reason and the measurement behind it (a section of docs/measurements.md by its
//! heading, or the words "no measurement"). The profiles (`harness::profile`) hold the
//! rest: rounds, spans, targets and budgets. docs/method.md §8 lists every constant
//! here with its value, and `tests/tunables.rs` checks both that list and that no
//! other number in `harness`, `session`, `stats` or `store` is a tunable. "The VM"
//! below is the 2-vCPU machine this project is developed on.

// The samples.

/// A batch is calibrated to last at least this many steps of the clock (and the
/// profile's `min_batch_ns`): the clock's rounding is then at most half a step in a
/// thousand. No measurement chose it.
pub const MIN_BATCH_STEPS: f64 = 1000.0;

/// Calibration aims a batch this much above its target, so that the batch measured at
/// the new size, a little faster than the one that set it, still reaches the target.
/// No measurement chose it.
pub const BATCH_AIM: f64 = 1.2;

/// The most a batch size grows in one step of calibration: a first batch is often
/// slow and cold, and a too-fast one may read 0 below the clock's step. No
/// measurement chose it.
pub const BATCH_GROWTH_MAX: u64 = 100;

/// The most empty-loop batches a round times when it measures the empty loop again
/// (`Harness::remeasure`); the first measurement takes the profile's
/// `overhead_samples` (5 smoke to 101 thorough). Their median is the loop's cost, to
/// subtract from that round's batches. No measurement chose it.
pub const EMPTY_LOOP_SAMPLES_MAX: usize = 11;

/// A round ends at this many times the profile's `round_ns` even short of its minimum
/// samples (a cold read of megabytes): rounds, not samples, carry the interval. No
/// measurement chose it.
pub const ROUND_TIME_CAP: f64 = 4.0;

/// How long the TSC's rate is measured against `CLOCK_MONOTONIC`, each of five
/// times (their median is taken): long enough that a read's own cost is a part in
/// 10⁵ of it. No measurement chose it.
pub const TSC_RATE_NS: u64 = 10_000_000;

/// Successive clock reads taken to find a clock's step and read cost. No measurement
/// chose it.
pub const CLOCK_READS: u64 = 20_000;

/// Steps between successive reads seen fewer times than this are left out of the
/// clock's quantum: one odd step (a read across a migration) must not decide it
/// (docs/measurements/rounds.md, "The clock's step").
pub const QUANTUM_MIN_SEEN: u64 = 3;

// The figure.

/// The share of the round figures left out at each end of the trimmed mean: a slow
/// round moves the figure no more than any high round.
pub const TRIM: f64 = 0.2;

/// The fewest clean samples a figure may rest on; a result with fewer (or with fewer
/// than a tenth of its samples clean) rests on all its samples instead: a median of a
/// handful says nothing.
pub const MIN_CLEAN: usize = 30;

/// A figure rests on its clean samples only when at least one in this many is clean
/// (besides [`MIN_CLEAN`]): where nine in ten samples were perturbed, the clean tenth
/// is a selection, not the operation. No measurement chose it.
pub const MIN_CLEAN_ONE_IN: usize = 10;

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

/// The fewest samples of a round in which two modes are looked for before its MAD
/// test: fewer cannot show two modes. No measurement chose it.
pub const MODE_MIN_SAMPLES: usize = 8;

/// The fewest samples of a result in which its modes (JSON `modes`) are looked for.
/// No measurement chose it.
pub const MODES_MIN: usize = 20;

/// Two peaks of a density are two modes only when the valley between them is below
/// this fraction of the smaller peak. No measurement chose it.
pub const MODE_VALLEY: f64 = 0.5;

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

/// The fewest readings at one place (an instance's workers) that count toward what
/// the machine allows: fewer say nothing of how that place moves
/// (docs/measurements/intervals.md, "One model: the rounds' interval, what the machine allows,
/// and the runs").
pub const MIN_AT_PLACE: usize = 3;

/// How many sets of a profile's `min_rounds` readings what the machine allows is
/// drawn from (`stats::rounds::floor`): enough that its
/// 2.5th and 97.5th percentiles are ten draws from the ends. No measurement chose it.
pub const RESAMPLES: usize = 400;

/// What the machine allows a kind is computed again once its readings grew by a
/// twentieth (or by [`FLOOR_STALE_MIN`]), not at every reading: the draws cost
/// milliseconds, and a twentieth more readings barely move them. No measurement chose it.
pub const FLOOR_STALE_DIV: usize = 20;

/// The fewest new readings after which what the machine allows is computed again
/// ([`FLOOR_STALE_DIV`]).
pub const FLOOR_STALE_MIN: usize = 4;

/// The fewest runs (this one included) a spread between runs is taken from: a row's
/// `runs` interval from its third run, a kind's movement between runs from three
/// earlier runs; two give a spread with one degree of freedom (docs/measurements/intervals.md,
/// "The runs' own spread, and C loops measured as syscost measures").
pub const MIN_RUNS_SPREAD: usize = 3;

/// The history's interval uses at most this many earlier runs: the machine of a month
/// ago is not the machine of today.
pub const PAST_RUNS: usize = 20;

/// How far the machine moved between runs is read from at most this many earlier
/// runs under the same conditions, the newest (and the footer sets the run's canary
/// beside theirs): over ten isolation series, the newest ten earlier documents held
/// the whole run's figure in 92.8% of rows against 85.0% without them
/// (docs/measurements/movement.md, "The machine's movement between runs").
pub const PAST_MACHINE_RUNS: usize = 10;

// The machine's state.

/// getpid calls in one batch of the canary: five batches of 500, about a third of a
/// millisecond, catch a machine's slow spells as a spinning getpid loop of 2,500 calls
/// does (docs/measurements/canary.md, "Slow episodes" and "Free rings leave the catalogue, and
/// the faster vCPU").
pub const CANARY_BATCH: u64 = 500;

/// Batches of the canary: its reading is their median ([`CANARY_BATCH`]).
pub const CANARY_BATCHES: usize = 5;

/// How many of the first CPUs a run may use the canary is read on, the next worker
/// measuring on the one reading fastest: a VM's vCPUs can run at different speeds and
/// trade places within seconds (docs/measurements/isolation.md,
/// "Free rings leave the catalogue, and the faster vCPU").
pub const HOMES: usize = 2;

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

/// The fewest canary readings a base state is read from; with fewer there is none and
/// no round waits. No measurement chose it.
pub const BASE_MIN_READINGS: usize = 5;

/// How long a run reads the canary before its first round, so that the first rounds
/// have a base state to be read against: ten readings of the window, unless the
/// session's window already holds [`BASE_SEED_READINGS`]. No measurement chose it.
pub const BASE_SEED_NS: u64 = 100_000_000;

/// The readings of the canary's window that spare a run the reading before its first
/// round ([`BASE_SEED_NS`]).
pub const BASE_SEED_READINGS: usize = 10;

/// The fewest canary readings in which the footer looks for the machine's states (as
/// modes; fewer are told apart by [`STATE_GAP`] alone). No measurement chose it.
pub const STATES_MIN_READINGS: usize = 20;

/// The least share of the canary's readings a state of the machine holds. No
/// measurement chose it.
pub const STATE_SHARE: f64 = 0.05;

/// The one gate for the machine's state: a round is measured later when the getpid
/// canary read just before it (by the run's own process) is more than this fraction
/// above the base state: 5% leaves the base state's own spread in and the next slow
/// state (system calls some 8% slower) out (docs/measurements/canary.md, "Slow
/// episodes"). While the budget lasts a round waits; without one, at most [`REDO_PER_KEPT`]
/// times as many rounds are measured again as are kept, so that a benchmark that slows
/// the canary itself, or a machine that stays slow, is measured as it is.
pub const REDO_ABOVE: f64 = 0.05;

/// How many rounds may be measured again for each one kept, without a budget (counting
/// the profile's minimum as kept from the start).
pub const REDO_PER_KEPT: u32 = 3;

/// How many more canary readings a visit takes, at most, while they read above the
/// gate, before it goes ahead (and its round is measured again): most slow episodes a
/// spinning getpid loop meets end within 16 readings, a quarter of a round's visit
/// (docs/measurements/canary.md, "Slow episodes").
pub const SLOW_WAIT_READINGS: usize = 16;

// What the machine allows each kind of work: its probes.

/// getpid calls in one batch of the syscall probe: 5 batches of 300 read a machine's
/// speeds as 40 fresh C processes do (docs/measurements/rounds.md, "States of a fresh
/// process").
pub const PROBE_SYSCALL_BATCH: u64 = 300;

/// Steps of the add-multiply chain in one batch of the user probe. No measurement
/// chose it.
pub const PROBE_USER_BATCH: u64 = 4_000;

/// Pages faulted in one batch of the memory probe. No measurement chose it.
pub const PROBE_MEMORY_PAGES: usize = 32;

/// Round trips with another CPU in one batch of the cross probe. No measurement chose
/// it.
pub const PROBE_CROSS_BATCH: u64 = 8;

/// Bytes of the io probe's file, evicted whole before each of its reads. No
/// measurement chose it.
pub const PROBE_IO_FILE: usize = 64 * 1024;

/// Bytes the io probe reads, from its file's start. No measurement chose it.
pub const PROBE_IO_READ: usize = 4096;

/// Batches of each probe: its reading is their median.
pub const PROBE_BATCHES: usize = 5;

/// How long a probe process warms up before its reading, as long as a standard
/// round's warm-up and samples: a process fresh from exec reads slow for its first
/// milliseconds (docs/measurements/rounds.md, "States of a fresh process").
pub const PROBE_WARMUP_NS: u64 = 12_000_000;

/// Probe readings a session takes in probe processes of their own before its first
/// round, so that the header states what the machine allows each kind from the start
/// (docs/measurements/intervals.md, "The reach: rows held to what their kept rounds allow").
pub const FIRST_PROBES: usize = 24;

// The rounds.

/// Each look at a row's interval comes when its rounds have grown to this many halves
/// of the last look's (8, 12, 18, 27, 41 …): each look is a chance to stop on a
/// narrow interval by luck, so they are few. No measurement chose it.
pub const LOOK_GROWTH_HALVES: usize = 3;

/// How many instances are measured together at most, in one group with its share of
/// the budget, so the first rows print within seconds (docs/measurements/intervals.md, "Floors,
/// time to answer and coverage", groups of 32 and of 64).
pub const GROUP: usize = 64;

/// The copies of a benchmark (`copies=N`) time their samples in a common window
/// this much longer than the profile's minimum samples take (at least a round,
/// [`COPIES_WINDOW_ROUNDS`] rounds at most). No measurement chose it.
pub const COPIES_WINDOW_MARGIN: f64 = 1.2;

/// The longest window of the copies, in the profile's round times.
pub const COPIES_WINDOW_ROUNDS: f64 = 4.0;

/// The most samples a copy takes in its window, in the profile's `round_max_samples`.
pub const COPIES_MAX_SAMPLES: usize = 4;

/// How far ahead of their release the copies' common start lies, ns: time for every
/// copy to wake, so that all of them are timed together. No measurement chose it.
pub const COPIES_START_AHEAD_NS: f64 = 2e6;

/// The rounds a worker measures before it hands its samples to a fresh process, which
/// measures the next ones (`SYSCOST_ROUNDS_PER_WORKER` overrides it; 0 keeps one
/// worker for all of an instance's rounds). A process has states of its own that last
/// its life (one worker of twelve read getpid 20% slow in every round; one C process
/// of forty, 5%: docs/measurements/rounds.md, "States of a fresh process"). Measured by
/// one worker, such a state is the whole figure and its interval cannot see it;
/// measured by a fresh process each round, it is one round that the trimmed mean leaves
/// out, and the spread between rounds includes the spread between processes, as a
/// figure of the machine should. A hand-over costs a few milliseconds, mostly the fresh
/// process's `exec`, which runs while the old one packs its samples
/// (docs/measurements/rounds.md, "Workers and hand-overs").
pub const ROUNDS_PER_WORKER: usize = 1;

/// How long a round of work that leaves a CPU idle while it waits (a wake-up on another
/// CPU, a timed sleep: `bench::via::leaves_cpus_idle`) runs its operation after the
/// machine's probes and before its first sample: such work costs less for some 30–40 ms
/// after both CPUs were busy, and the probes just before a round are such work; without
/// the settling, short rounds read a cross-CPU round trip 20–30% cheaper than a plain C
/// loop that has run that long (docs/measurements/harness.md, "Work that leaves a CPU
/// idle").
pub const SETTLE_NS: u64 = 50_000_000;

// The time a run may take.

/// The time a small selection may take for each of its instances, in the profile's
/// spans (10 s standard): a cap, not a time to fill, as a row stops once it converges.
/// A selection's budget is this much a row, at most [`SMALL_RUN_MAX_SPANS`], and never
/// less than its share of the profile's budget for a whole catalogue
/// (`session::budget`). With two spans a run, as until 2026-12-07, one benchmark
/// alone ended "the time budget ended" in 48 of 135 single-benchmark results beside
/// the peers; scripts/alone.py measures what this allowance does (docs/measurements/budget.md,
/// "A benchmark alone").
pub const SMALL_RUN_ROW_SPANS: u64 = 10;

/// The most a selection smaller than a whole catalogue may take by
/// [`SMALL_RUN_ROW_SPANS`], in spans (60 s standard): a family of fifty rows waits no
/// more than a minute for the rows that converge slowly.
pub const SMALL_RUN_MAX_SPANS: u64 = 60;

/// How many instances make a whole catalogue: a run of this many or more has the
/// profile's whole budget, a smaller one its share of it (or [`SMALL_RUN_ROW_SPANS`]
/// a row). The catalogue's default selection is about this size.
pub const WHOLE_CATALOGUE: usize = 250;

/// The least share of its proportion of the budget a group gets, however much the
/// groups before it overran: a group after a slow spell still measures its rows
/// (docs/measurements/budget.md, "A benchmark alone").
pub const MIN_GROUP_SHARE: f64 = 0.5;

// Paired alternatives.

/// The rounds a pair gets (`--reference`), with no early stop, unless the profile's
/// `budget_max_rounds` is fewer (quick: 8) or its `max_rounds` more: enough for an
/// interval from the rounds' spread, few enough that a pair takes seconds (a standard
/// round is about 60 ms). Stopping at the first narrow look (5–8 rounds) held the median of ten
/// runs' ratios in 6–8 of 10; all 41, in 8–10 of 10 for the ping-pong pairs
/// (scripts/paired.py, 2026-11-27; the pipe pair, 4 of 10 on a quiet machine, is an
/// open question).
pub const MAX_PAIR_ROUNDS: usize = 41;

/// A paired round rests on its clean quartets only when it has at least this many;
/// else on all of them. No measurement chose it.
pub const MIN_CLEAN_QUARTETS: usize = 3;

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

// A sample's summary (`stats::summarize`, the JSON `summary` of a result).

/// The confidence level of a summary's interval of the median.
pub const SUMMARY_CI_CONFIDENCE: f64 = 0.95;

/// Largest sample for which the summary's interval of the median uses the exact
/// binomial distribution; above it, the normal approximation, which is then exact to
/// well within one rank.
pub const EXACT_BINOMIAL_MAX_N: usize = 1000;
