//! The search: keeps the smallest interesting module found so far, offers
//! it each family's changes in shrinking chunks, and repeats whole rounds of
//! families until a round changes nothing.
//!
//! For one family with `n` sites, the chunk size starts at `n` (everything
//! at once), then halves down to 1. At each size the search walks the sites
//! in chunks; when a chunk's candidate is accepted the sites are listed
//! again and the walk stays at the same index (the next chunk has moved
//! there); otherwise it moves on. This is the ddmin idea without its
//! complement step: about `2n` candidates per family in the worst case and
//! far fewer when large chunks go at once.
//!
//! A candidate is accepted when its text parses, verifies, weighs less than
//! the current module ([`check::weight`]) and the test holds on it. Texts
//! that were rejected once are remembered (by hash) and not run again.

use super::check::{self, Size};
use super::family::{self, Family};
use super::{Progress, ReduceOptions};
use ptx_ir::ir::Module;
use rustc_hash::FxHashSet;
use std::hash::{Hash, Hasher};

/// Counters the result reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub tests_run: u64,
    pub accepted: u64,
    pub invalid: u64,
    pub repeated: u64,
    pub rounds: u32,
    pub out_of_tests: bool,
}

pub(crate) struct Search<'t> {
    pub current: Module,
    pub text: String,
    weight: usize,
    test: &'t mut dyn FnMut(&str) -> bool,
    progress: &'t mut dyn FnMut(&Progress),
    options: ReduceOptions,
    /// Hashes of candidate texts already found invalid, no smaller, or not interesting.
    rejected: FxHashSet<u64>,
    pub counts: Counts,
}

impl<'t> Search<'t> {
    /// Starts from a module that is valid and interesting, printed as `text`.
    pub fn new(current: Module, text: String, test: &'t mut dyn FnMut(&str) -> bool, progress: &'t mut dyn FnMut(&Progress), options: &ReduceOptions) -> Search<'t> {
        let weight = check::weight(&current);
        Search { current, text, weight, test, progress, options: options.clone(), rejected: FxHashSet::default(), counts: Counts::default() }
    }

    /// Runs rounds of every family until one changes nothing (or the
    /// round or test limit is reached).
    pub fn run(&mut self) {
        let families = family::all();
        while self.counts.rounds < self.options.max_rounds && !self.counts.out_of_tests {
            self.counts.rounds += 1;
            let before = self.weight;
            for f in &families {
                self.run_family(&**f);
            }
            if self.weight == before {
                break;
            }
        }
    }

    fn run_family(&mut self, family: &dyn Family) {
        let mut sites = family.sites(&self.current);
        if sites.is_empty() {
            return;
        }
        self.report(family.name());
        let mut chunk = sites.len();
        loop {
            let mut at = 0;
            while at < sites.len() && !self.counts.out_of_tests {
                let end = (at + chunk).min(sites.len());
                let candidate = family.apply(&self.current, &sites[at..end]);
                if self.offer(family.name(), candidate) {
                    sites = family.sites(&self.current);
                } else {
                    at = end;
                }
            }
            if chunk <= 1 || sites.is_empty() || self.counts.out_of_tests {
                return;
            }
            chunk = chunk.div_ceil(2).min(sites.len());
        }
    }

    /// Tries one candidate; `true` when it became the current module.
    fn offer(&mut self, step: &'static str, candidate: Module) -> bool {
        if self.options.max_tests.is_some_and(|max| self.counts.tests_run >= max) {
            self.counts.out_of_tests = true;
            return false;
        }
        let text = ptx_print::print_module(&candidate);
        let key = text_hash(&text);
        if text == self.text || self.rejected.contains(&key) {
            self.counts.repeated += 1;
            return false;
        }
        let Some(parsed) = check::valid(&text) else {
            self.counts.invalid += 1;
            self.rejected.insert(key);
            return false;
        };
        let weight = check::weight(&parsed);
        if weight >= self.weight {
            self.rejected.insert(key);
            return false;
        }
        self.counts.tests_run += 1;
        if !(self.test)(&text) {
            self.rejected.insert(key);
            return false;
        }
        self.current = parsed;
        self.text = text;
        self.weight = weight;
        self.counts.accepted += 1;
        self.report(step);
        true
    }

    fn report(&mut self, step: &'static str) {
        let p = Progress { round: self.counts.rounds, step, size: Size::of(&self.current, &self.text), tests_run: self.counts.tests_run, accepted: self.counts.accepted };
        (self.progress)(&p);
    }
}

/// A hash of a candidate's text with fixed keys (SipHash: texts that
/// differ a little do not collide), the same in every run, so the search
/// stays deterministic.
fn text_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}
