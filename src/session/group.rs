//! One group of a run's instances measured in rounds (`Session::group`): the cycles,
//! who gets the next round, the canary before each visit and the pace that spreads a
//! small selection's rounds in time.

use super::*;
use crate::method;

impl Session {
    /// Measures one group of instances; returns whether the run was interrupted.
    /// `concluded` is told each result once, with its index in `instances`, as soon
    /// as it is final.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group(
        &self,
        instances: &[(&dyn Bench, Params)],
        progress: &mut dyn FnMut(Step<'_>),
        concluded: &mut dyn FnMut(usize, &BenchResult),
        budget: &Budget,
        rng: &mut u64,
        (machine, window): (&mut Vec<f64>, &mut Window),
        results: &mut Vec<BenchResult>,
    ) -> bool {
        let p = self.settings.profile;
        let spread = budget.spread;
        let base = self.measured.get();
        self.measured.set(base + instances.len());
        let (mut all, kinds, gated) = self.instances(instances, budget.cap);
        // How many of each instance's visits the canary gate held back.
        let mut held_back = vec![0u32; all.len()];
        let begin = self.clock.now();
        // Which results `concluded` has been told of.
        let mut told = vec![false; all.len()];
        // `held_back` is its rounds measured again, as in the result returned.
        let mut tell = |i: usize, inst: &Instance<'_>, held_back: u32| {
            if let Some(r) = inst.concluded().filter(|_| !told[i]) {
                told[i] = true;
                let mut r = r.clone();
                if let Some(m) = r.measured.as_mut() {
                    m.rounds_redone = held_back;
                }
                concluded(i, &r);
            }
        };
        // A cycle visits every open instance once; an instance's rounds are its own
        // count, not the cycle's (a round measured again is one more visit).
        let mut cycle: u32 = 0;
        // Whether the run was interrupted.
        let interrupted = 'rounds: loop {
            let mut order: Vec<usize> =
                (0..all.len()).filter(|&i| all[i].open()).collect();
            if order.is_empty() {
                break false;
            }
            shuffle(rng, &mut order);
            let past_min = cycle as usize >= p.min_rounds;
            if past_min {
                order = budget.choose(&all, order);
            }
            for (n, &i) in order.iter().enumerate() {
                // Held to its kind's floor as the run knows it now.
                let held = self.floors.borrow().held(kinds[i]);
                all[i].hold(held);
                // An instance with a round measured again may still be short of its
                // minimum: it gets it whatever the budget.
                if past_min && all[i].progress().rounds >= p.min_rounds {
                    if let Some(why) = budget.stops(&all[i], held.own_target(&p)) {
                        all[i].stop(self, why);
                        tell(i, &all[i], held_back[i]);
                        continue;
                    }
                }
                let round = all[i].progress().rounds as u32;
                progress(Step {
                    round,
                    index: n,
                    of: order.len(),
                    name: all[i].bench().name(),
                    params: all[i].params(),
                });
                let limit = window.limit();
                let Ok(canary) = self.canary_before(limit, machine, window) else {
                    break 'rounds true;
                };
                let kept = round as usize;
                if budget.holds_back((canary, limit), gated[i], held_back[i], kept) {
                    held_back[i] += 1;
                    continue;
                }
                // Its kept rounds are judged by the last limit before the budget was
                // spent (`slot::slow_rounds`).
                let limit = if budget.redoes() { limit } else { 0.0 };
                match all[i].visit(self, round, begin, canary, limit) {
                    Err(_) => break 'rounds true,
                    Ok(Some(probes)) => self.floors.borrow_mut().push(base + i, probes),
                    Ok(None) => {}
                }
                tell(i, &all[i], held_back[i]);
                if interrupt::interrupted() {
                    break 'rounds true;
                }
            }
            // Spread the rounds in time: the first ones over the profile's span, and
            // later ones at the same pace, so that a small selection's extra rounds see
            // the machine's drift as the first ones do rather than one moment of it (a
            // whole catalogue's cycles take longer than that anyway).
            if spread && all.iter().any(Instance::open) {
                let until = p.span_ns as f64 * (cycle + 1) as f64 / p.min_rounds as f64;
                if self.pace(begin, until, machine, window).is_err() {
                    break 'rounds true;
                }
            }
            cycle += 1;
        };
        self.finish_group(all, &held_back, &told, interrupted, concluded, results);
        interrupted
    }

    /// Concludes a group's instances into `results`, telling `concluded` of those it
    /// has not been told of; `held_back` is each one's rounds measured again.
    fn finish_group(
        &self,
        all: Vec<Instance<'_>>,
        held_back: &[u32],
        told: &[bool],
        interrupted: bool,
        concluded: &mut dyn FnMut(usize, &BenchResult),
        results: &mut Vec<BenchResult>,
    ) {
        let h = self.harness();
        for (n, i) in all.into_iter().enumerate() {
            if let Some((mut r, samples)) =
                i.finish(&h, self.opts.keep_samples, interrupted)
            {
                if let Some(m) = r.measured.as_mut() {
                    m.rounds_redone = held_back[n];
                }
                self.keep(&mut r, samples);
                if !told[n] {
                    concluded(n, &r);
                }
                results.push(r);
            }
        }
    }

    /// The instances of a group, each with its cap of rounds, the kind of work it is,
    /// and whether the canary gate applies to it ([`Budget::holds_back`]).
    fn instances<'a>(
        &self,
        instances: &'a [(&'a dyn Bench, Params)],
        cap: usize,
    ) -> (Vec<Instance<'a>>, Vec<WorkKind>, Vec<bool>) {
        let all = instances
            .iter()
            .map(|(b, params)| Instance::new(*b, params, &self.opts.workers, cap))
            .collect();
        let kinds = instances
            .iter()
            .map(|(b, params)| crate::bench::facts::work_kind(*b, params))
            .collect();
        let gated = instances
            .iter()
            .map(|(_, params)| self.explain == 0 && slot::waits(params))
            .collect();
        (all, kinds, gated)
    }

    /// The canary before a visit: read until it is within `limit` (0: none), at most
    /// [`method::SLOW_WAIT_READINGS`] more times, in a slow episode, for it to pass (the round
    /// is measured again if it does not). Only the first reading describes the
    /// machine (`machine`, `window`): the others are taken because the machine was
    /// slow, and counting them would let a slow spell raise the limit. Err when
    /// interrupted.
    fn canary_before(
        &self,
        limit: f64,
        machine: &mut Vec<f64>,
        window: &mut Window,
    ) -> Result<f64, BenchError> {
        let mut canary = f64::INFINITY;
        for n in 0..=method::SLOW_WAIT_READINGS {
            canary = self.canary()?;
            if n == 0 {
                machine.push(canary);
                window.push(std::time::Instant::now(), canary);
            }
            if limit == 0.0 || canary <= limit {
                break;
            }
        }
        Ok(canary)
    }

    /// Reads the canary until `until` ns after `begin`: the pace that spreads a small
    /// selection's rounds in time. Err when interrupted.
    fn pace(
        &self,
        begin: u64,
        until: f64,
        machine: &mut Vec<f64>,
        window: &mut Window,
    ) -> Result<(), BenchError> {
        let c = self.clock.as_ref();
        while c.to_ns(c.now().wrapping_sub(begin)) < until {
            let v = self.canary()?;
            machine.push(v);
            window.push(std::time::Instant::now(), v);
            if interrupt::interrupted() {
                return Err(BenchError::Interrupted);
            }
        }
        Ok(())
    }
}
