//! The slot's side of copies: a round of an instance run as N copies (calibrated
//! alone, then measured by every copy over one window), and the per-copy figures
//! drawn from its samples at the end.

use super::{round, shared_dir, Job};
use crate::bench::copies::Copies;
use crate::error::BenchError;
use crate::harness::clock;
use crate::harness::{EmptyLoop, Harness, Measurement, Sample};
use crate::method;
use crate::results::CopiesFigures;
use crate::session::slot::{Env, Slot};

impl Slot<'_> {
    /// One round of an instance run as `copies` (N > 1): the batch size and the
    /// empty loop's overhead found alone in the first round (one setup, calibrated and
    /// timed once, then dropped), then every copy sets up, warms, and times its batches
    /// over one window. The copies' samples are pooled for the round-level interval,
    /// each marked with its copy; kernel-event culling does not apply to copies.
    pub(in crate::session) fn visit_copies(
        &mut self,
        env: &mut Env<'_>,
        round: u32,
        begin: u64,
        canary: f64,
        copies: Copies,
    ) -> Result<(), BenchError> {
        let p = env.settings.profile;
        self.c.canaries.push(canary);
        let mut settings = env.settings;
        settings.spans = false;
        settings.usage_per_round =
            crate::bench::via::stays_in_user_space(self.bench, &self.params);
        let h = Harness::new(env.clock, settings);
        let c = env.clock;
        let t0 = c.now();
        let (k, overhead) = match self.c.setup.clone() {
            Some(mut s) => {
                h.remeasure(&mut EmptyLoop, s.0, self.c.plan, &mut s.1, round)?;
                s
            }
            None => {
                let prepared = self.bench.prepare(&self.params, env.context)?;
                self.c.result.op = prepared.op.to_string();
                let (plan, mut body) = (prepared.plan, prepared.body);
                let k = h.calibrate(body.as_mut(), plan)?;
                h.warm(body.as_mut(), k, p.round_warmup_ns)?;
                body.reset(k)?;
                let b0 = c.now();
                body.run(k)?;
                self.batch_ns = c.to_ns(c.now().wrapping_sub(b0));
                drop(body);
                self.c.plan = plan;
                let o = h.overhead(&mut EmptyLoop, k, plan)?;
                (k, o)
            }
        };
        self.c.setup = Some((k, overhead));
        let round_ns = p.round_ns as f64;
        let window_ns =
            (p.round_min_samples as f64 * self.batch_ns * method::COPIES_WINDOW_MARGIN)
                .clamp(
                    round_ns,
                    (method::COPIES_WINDOW_ROUNDS * round_ns).max(round_ns + 1.0),
                );
        let job = Job {
            bench: self.bench,
            params: &self.params,
            files: env.context.files().clone(),
            profile: env.context.profile(),
            clock: clock::same_as(env.clock).ok_or_else(|| {
                BenchError::Failed(format!(
                    "copies need a clock every copy can read (not the {} clock)",
                    env.clock.name()
                ))
            })?,
            settings,
            copies,
            k,
            round,
            begin,
            warm_ns: if round == 0 {
                p.warmup_ns
            } else {
                p.round_warmup_ns
            },
            window_ns,
            dir: shared_dir(env.context)?,
        };
        let t1 = c.now();
        let got = self::round(&job)?;
        let t2 = c.now();
        self.gather()?; // after the copies, forked from this process, are done
        self.c.warmup_ns += c.to_ns(t1.wrapping_sub(t0));
        let spent = c.to_ns(t2.wrapping_sub(t1));
        self.c.elapsed_ns += window_ns.min(spent);
        self.c.setup_ns += (spent - window_ns).max(0.0);
        let mut marked: Vec<(u16, Sample)> = got
            .samples
            .into_iter()
            .enumerate()
            .flat_map(|(i, v)| v.into_iter().map(move |x| (i as u16, x)))
            .collect();
        // In time order, as a round's samples are.
        marked.sort_by(|a, b| a.1.at_ns.total_cmp(&b.1.at_ns));
        for (i, x) in marked {
            self.copy_of.push(i);
            self.c.samples.push(x);
        }
        self.copy_cpus = (got.cpus, got.oversubscribed);
        // Copies never wait out a slow state nor record placements: their look is a
        // plain one.
        self.count_round(&h, p);
        Ok(())
    }

    /// The figures of an instance run as copies: each copy's own figure (its samples
    /// analysed alone), their median (the per-copy cost), the slowest, and the
    /// throughput of all copies together: the sum of 1e9 / each copy's figure, or,
    /// oversubscribed, each copy's operations over the time all its batches took
    /// (overhead subtracted), so a copy that waited for its CPU counts fewer. A single
    /// copy is the instance's own.
    pub(in crate::session) fn copy_figures(
        &self,
        h: &Harness<'_>,
        m: &Measurement,
        copies: Copies,
    ) -> CopiesFigures {
        let n = copies.n.max(1);
        let solo = copies.n <= 1 || self.copy_of.len() != m.samples.len();
        let of = |i: usize| -> Vec<Sample> {
            match solo {
                true => m.samples.clone(),
                false => m
                    .samples
                    .iter()
                    .zip(&self.copy_of)
                    .filter(|(_, &c)| c as usize == i)
                    .map(|(x, _)| *x)
                    .collect(),
            }
        };
        let per_batch = (m.batch * self.c.plan.per_iter.max(1)) as f64;
        let (mut copy_ns, mut rate) = (Vec::new(), Vec::new());
        for i in 0..n {
            let mine = of(i);
            if mine.is_empty() {
                copy_ns.push(f64::NAN);
                rate.push(f64::NAN);
                continue;
            }
            let figure = match solo {
                true => m.analysis.figure(),
                false => h
                    .conclude(&mine, m.batch, &m.overhead, self.c.plan)
                    .0
                    .figure(),
            };
            copy_ns.push(figure);
            rate.push(if self.copy_cpus.1 {
                // Oversubscribed: every batch, perturbed ones too, since a copy that
                // waited for its CPU did fewer operations; that is what is measured.
                let busy_ns: f64 = mine
                    .iter()
                    .map(|x| {
                        let o = m.overhead.ticks_for(x.round);
                        h.clock().to_ns(x.ticks.saturating_sub(o))
                    })
                    .sum();
                mine.len() as f64 * per_batch / busy_ns * 1e9
            } else {
                // One CPU each: the copy's own figure, culled of what other work on
                // the machine did to it, as every figure is.
                1e9 / figure
            });
        }
        let online = crate::os::affinity::allowed_cpus().map_or(0, |c| c.len());
        CopiesFigures::new(copies, copy_ns, &rate, self.copy_cpus.clone(), online)
    }
}
