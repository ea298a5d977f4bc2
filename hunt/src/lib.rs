//! ptx-hunt: a missed-peephole hunter for ptx-opt, after Souper.
//!
//! Over a corpus of PTX files optimized at `-O2`, it harvests the small
//! pure dataflow DAGs the output still contains ([`harvest`]), groups them
//! into patterns by canonical text ([`dag`], [`corpus`]), and searches each
//! frequent pattern for a strictly cheaper equivalent program over the
//! ISA's cheap integer instructions ([`ops`], [`search`]), verified on the
//! evaluator ([`inputs`]). What it finds is a list of rewrites the engine's
//! rules miss, ranked by occurrences times SASS instructions saved
//! ([`report`]).

pub mod corpus;
pub mod dag;
pub mod harvest;
pub mod inputs;
pub mod ops;
pub mod report;
pub mod search;

use corpus::{attribute, harvest_file, Patterns};
use search::{Config, Found, Searcher};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What to hunt over and how.
#[derive(Clone, Debug)]
pub struct Options {
    pub files: Vec<PathBuf>,
    pub limits: harvest::Limits,
    pub target: String,
    pub jobs: usize,
    /// Search only patterns occurring at least this often.
    pub min_count: u64,
    /// Stop starting new searches after this long.
    pub time_budget: Duration,
    pub search: Config,
    /// Two-instruction candidates only for this many patterns (the most
    /// promising); one instruction for the rest.
    pub deep: usize,
}

/// One missed rewrite.
#[derive(Clone, Debug)]
pub struct Finding {
    pub pattern: String,
    pub found: Found,
    /// Roots attributed to this pattern, and their files and kernels.
    pub count: u64,
    pub files: u32,
    pub kernels: u32,
    /// Occurrences of the pattern in all (including roots attributed to a
    /// smaller stage with the same saving).
    pub total: u64,
    /// Heads of the pattern the cost table has no cell for (priced by a
    /// fallback: the saving may be an artefact).
    pub unmeasured: Vec<String>,
}

impl Finding {
    pub fn saving(&self) -> u32 {
        self.found.cost_before - self.found.cost_after
    }

    pub fn score(&self) -> u64 {
        self.count * self.saving() as u64
    }
}

/// The result of a hunt.
pub struct Outcome {
    /// Ranked, best first.
    pub findings: Vec<Finding>,
    pub files: usize,
    pub skipped: Vec<String>,
    pub kernels: u32,
    pub roots: usize,
    pub patterns: usize,
    /// Patterns eligible for the search (frequent enough, not free) and searched.
    pub eligible: usize,
    pub searched: usize,
    pub harvest_time: Duration,
    pub search_time: Duration,
}

/// Runs `n` jobs on `threads` threads, each taking the next index.
fn parallel(n: usize, threads: usize, job: impl Fn(usize) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                job(i);
            });
        }
    });
}

fn seed_of(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    text.hash(&mut h);
    h.finish()
}

/// Harvests the files, searches the patterns, ranks the findings.
pub fn hunt(opts: &Options) -> Outcome {
    let t0 = Instant::now();
    let patterns = Mutex::new(Patterns::default());
    let skipped = Mutex::new(Vec::new());
    parallel(opts.files.len(), opts.jobs, |i| match harvest_file(&opts.files[i], &opts.limits) {
        Ok(h) => patterns.lock().unwrap().add(h),
        Err(e) => skipped.lock().unwrap().push(e),
    });
    let patterns = patterns.into_inner().unwrap();
    let mut skipped = skipped.into_inner().unwrap();
    skipped.sort();
    let harvest_time = t0.elapsed();

    let t1 = Instant::now();
    let table = ptx_opt::cost::CostModel::for_target(&opts.target);
    let ops = ops::candidate_ops(&table);
    let deep = Searcher { ops: &ops, table: &table, dialect: ptx_ir::eval::Dialect::MODERN, config: opts.search };
    let shallow = Searcher { config: Config { two_insns: false, ..opts.search }, ..deep };
    // Most promising first: occurrences times cost (the most that can be saved).
    let mut order: Vec<(u64, usize)> = patterns
        .list
        .iter()
        .enumerate()
        .filter(|(_, p)| p.count >= opts.min_count)
        .map(|(i, p)| (p.count * p.dag.cost(&table) as u64, i))
        .filter(|(score, _)| *score > 0)
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let found: Mutex<Vec<Option<Found>>> = Mutex::new(vec![None; patterns.list.len()]);
    let searched = AtomicUsize::new(0);
    parallel(order.len(), opts.jobs, |i| {
        if t1.elapsed() > opts.time_budget {
            return;
        }
        let p = &patterns.list[order[i].1];
        let searcher = if i < opts.deep { &deep } else { &shallow };
        let f = searcher.search(&p.dag, seed_of(&p.text));
        searched.fetch_add(1, Ordering::Relaxed);
        if f.is_some() {
            found.lock().unwrap()[order[i].1] = f;
        }
    });
    let found = found.into_inner().unwrap();
    let saving: Vec<u32> = found.iter().map(|f| f.as_ref().map_or(0, |f| f.cost_before - f.cost_after)).collect();
    let attributed = attribute(&patterns, &saving);
    let mut findings: Vec<Finding> = found
        .into_iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let f = f?;
            let a = &attributed[i];
            (a.count > 0).then(|| Finding { pattern: patterns.list[i].text.clone(), found: f, count: a.count, files: a.files, kernels: a.kernels, total: patterns.list[i].count, unmeasured: patterns.list[i].dag.unmeasured(&table) })
        })
        .collect();
    findings.sort_by(|a, b| b.score().cmp(&a.score()).then(b.count.cmp(&a.count)).then(a.pattern.cmp(&b.pattern)));
    Outcome {
        findings,
        files: opts.files.len(),
        skipped,
        kernels: patterns.kernels,
        roots: patterns.roots.len(),
        patterns: patterns.list.len(),
        eligible: order.len(),
        searched: searched.into_inner(),
        harvest_time,
        search_time: t1.elapsed(),
    }
}
