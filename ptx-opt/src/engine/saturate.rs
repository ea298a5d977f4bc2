//! Equality saturation: the engine's loop of search, apply and rebuild
//! over the rules ([`RuleSet`]), with egg's backoff scheduling.
//!
//! It computes what `egg::Runner` with `egg::BackoffScheduler` (egg 0.11,
//! default settings) computes: the same searches, unions in the same order,
//! the same bans, the same stop. It leaves out the runner's work that this
//! result does not depend on, which a module of many small functions paid
//! for every function (complex.ptx at -O2: 247 e-graphs, about 10 M host
//! instructions of 145 M):
//! - no check of the rule names for repeats at each run (the rule table's
//!   names are unique: `rules::tests`), and rule statistics kept by rule
//!   number instead of hashed by name at every search;
//! - a rule that found nothing is not applied (applying nothing changes
//!   nothing, and the limits were checked after the application before);
//! - an iteration that changed nothing, as the last one of a saturated run
//!   does, is not followed by a rebuild: with as many e-nodes and classes
//!   as before it, no class was merged and no node added, so the e-graph
//!   is as the last rebuild left it.
//!
//! egg's runner also times every phase; this loop does not (the engine's
//! limits are counts: [`Limits`]).

use super::facts::EGraph;
use crate::rules::rule_set::Found;
use crate::rules::{RootIndex, RuleSet};
use egg::StopReason;

/// When the loop stops (besides saturation).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub iterations: usize,
    /// E-nodes; the loop stops once the e-graph has more.
    pub nodes: usize,
    /// E-nodes searched, summed over the iterations (each iteration searches
    /// the whole e-graph): an iteration that would take the sum past this
    /// does not search.
    pub search_budget: usize,
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct Saturation {
    /// Applications that changed the e-graph, by rule, in first-fired
    /// order, summed over the iterations.
    pub applied: Vec<(&'static str, usize)>,
    pub stop: StopReason,
}

/// The backoff scheduler's defaults (egg's `BackoffScheduler::default`): a
/// rule matching more than `MATCH_LIMIT << bans` times in one iteration is
/// banned for `BAN_LENGTH << bans` iterations.
const MATCH_LIMIT: usize = 1_000;
const BAN_LENGTH: usize = 5;

/// A rule's bans.
#[derive(Clone, Copy, Default)]
struct Backoff {
    banned_until: usize,
    times_banned: u32,
}

/// Runs the rules on `eg` until it saturates or a limit stops it. The
/// e-graph is rebuilt first if it is not clean; it is left rebuilt.
pub fn saturate(eg: &mut EGraph, rules: &RuleSet, limits: &Limits) -> Saturation {
    if !eg.clean {
        eg.rebuild();
    }
    let mut backoff = vec![Backoff::default(); rules.len()];
    let mut searched = 0usize;
    let mut applied: Vec<(&'static str, usize)> = Vec::new();
    let mut iteration = 0usize;
    let stop = loop {
        let (nodes, classes) = (eg.total_size(), eg.number_of_classes());
        let mut result = check(limits, iteration, eg);
        if result.is_ok() {
            searched += nodes;
            if searched > limits.search_budget {
                result = Err(StopReason::Other(format!("search budget of {} e-nodes", limits.search_budget)));
            }
        }
        let mut applied_now = false;
        if result.is_ok() {
            let found = search(&mut backoff, iteration, eg, rules);
            for (k, matches) in found.iter().enumerate().filter(|(_, m)| !m.is_empty()) {
                let n = rules.apply(k, eg, matches);
                if n > 0 {
                    applied_now = true;
                    match applied.iter_mut().find(|(name, _)| *name == rules.name(k)) {
                        Some(e) => e.1 += n,
                        None => applied.push((rules.name(k), n)),
                    }
                }
                if let Err(e) = check(limits, iteration, eg) {
                    result = Err(e);
                    break;
                }
            }
        }
        let unchanged = nodes == eg.total_size() && classes == eg.number_of_classes();
        if unchanged {
            // Only unions of classes with themselves, which mark the
            // e-graph dirty and leave nothing to rebuild.
            eg.clean = true;
        } else {
            eg.rebuild();
        }
        let saturated = !applied_now && can_stop(&mut backoff, iteration) && nodes == eg.total_size() && classes == eg.number_of_classes();
        if saturated && result.is_ok() {
            result = Err(StopReason::Saturated);
        }
        iteration += 1;
        // The limits are checked again after the iteration (the iteration
        // limit stops the run here).
        if let Some(stop) = result.err().or_else(|| check(limits, iteration, eg).err()) {
            break stop;
        }
    };
    Saturation { applied, stop }
}

/// The node and iteration limits, as egg's runner checks them (the node
/// limit first).
fn check(limits: &Limits, iteration: usize, eg: &EGraph) -> Result<(), StopReason> {
    let size = eg.total_size();
    if size > limits.nodes {
        return Err(StopReason::NodeLimit(size));
    }
    if iteration >= limits.iterations {
        return Err(StopReason::IterationLimit(iteration));
    }
    Ok(())
}

/// Every rule's matches in this iteration: none for a rule that is
/// banned, or that matched more than its limit (it is banned from now).
fn search(backoff: &mut [Backoff], iteration: usize, eg: &EGraph, rules: &RuleSet) -> Vec<Found> {
    // A rule is banned at most once an iteration, so `times_banned` stays
    // far below a shift that would overflow.
    let threshold = |b: &Backoff| MATCH_LIMIT.checked_shl(b.times_banned).unwrap_or(usize::MAX);
    let limits: Vec<Option<usize>> = backoff.iter().map(|b| (iteration >= b.banned_until).then(|| threshold(b).saturating_add(1))).collect();
    let mut found = rules.search_all(eg, &RootIndex::of(eg), &limits);
    for (b, matches) in backoff.iter_mut().zip(&mut found) {
        if matches.len() > threshold(b) {
            let length = BAN_LENGTH.checked_shl(b.times_banned).unwrap_or(usize::MAX);
            b.times_banned += 1;
            b.banned_until = iteration.saturating_add(length);
            matches.clear();
        }
    }
    found
}

/// Whether no rule is banned; if some are, the bans are moved forward so
/// that the first to end ends now (egg's `BackoffScheduler::can_stop`: a
/// run saturates only with every rule searched).
fn can_stop(backoff: &mut [Backoff], iteration: usize) -> bool {
    let Some(first_end) = backoff.iter().filter(|b| b.banned_until > iteration).map(|b| b.banned_until).min() else {
        return true;
    };
    let delta = first_end - iteration;
    for b in backoff.iter_mut().filter(|b| b.banned_until > iteration) {
        b.banned_until -= delta;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{build, facts, lang::Node, tests::kernel};
    use crate::rules::Target;
    use ptx_ir::analysis::DomTree;
    use ptx_ir::cfg::Cfg;
    use ptx_ir::eval::Dialect;

    const TARGET: Target = Target { sm: 80, ptx: (8, 0) };

    /// The e-graph the engine builds of the kernel with `body`.
    fn built(body: &str) -> facts::EGraph {
        built_of(&kernel(body))
    }

    fn built_of(f: &ptx_ir::ir::Function) -> facts::EGraph {
        let f = f.clone();
        let cfg = Cfg::build(&f);
        let dom = DomTree::dominators(&cfg);
        let view = crate::values::ValueView::build(&f, &cfg, &dom);
        build::build(&f, &cfg, &dom, &view, Dialect::MODERN, TARGET.sm, &[]).egraph
    }

    /// egg's runner and backoff scheduler, driving the same rules the way
    /// the engine drove them before it had its own loop.
    fn by_egg(eg: facts::EGraph, limits: &Limits, o3: bool) -> (facts::EGraph, String, Vec<(String, usize)>) {
        let mut searched = 0usize;
        let budget = limits.search_budget;
        let rewrites = crate::rules::rewrites(TARGET, o3);
        let runner: egg::Runner<Node, facts::Facts, ()> = egg::Runner::new(facts::Facts::new(Dialect::MODERN))
            .with_egraph(eg)
            .with_iter_limit(limits.iterations)
            .with_node_limit(limits.nodes)
            .with_hook(move |r| {
                searched += r.egraph.total_size();
                match searched <= budget {
                    true => Ok(()),
                    false => Err(format!("search budget of {budget} e-nodes")),
                }
            })
            .with_scheduler(egg::BackoffScheduler::default())
            .run(rewrites.iter());
        let mut applied: Vec<(String, usize)> = Vec::new();
        for it in &runner.iterations {
            for (name, n) in &it.applied {
                match applied.iter_mut().find(|(x, _)| x == name.as_str()) {
                    Some(e) => e.1 += n,
                    None => applied.push((name.to_string(), *n)),
                }
            }
        }
        (runner.egraph, format!("{:?}", runner.stop_reason.unwrap()), applied)
    }

    /// Every id's class and every class's nodes (ids are handed out in
    /// order, so two runs doing the same adds and unions agree on them).
    fn classes(eg: &facts::EGraph) -> Vec<(usize, Vec<Node>)> {
        let bound = eg.classes().map(|c| usize::from(c.id) + 1).max().unwrap_or(0);
        (0..bound)
            .map(|k| {
                let c = eg.find(egg::Id::from(k));
                let mut nodes = eg[c].nodes.clone();
                nodes.sort();
                (usize::from(c), nodes)
            })
            .collect()
    }

    /// Signed adds of many inputs: `unsigned-twin` matches each, past the
    /// backoff scheduler's limit of 1,000 in one iteration.
    fn many_signed_adds(n: usize) -> String {
        let mut body = format!(".reg .b32 %r<{}>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p];", 2 * n + 2);
        for k in 0..n {
            body += &format!(" ld.global.u32 %r{}, [%rd1+{}]; add.s32 %r{}, %r{}, {};", 2 * k, 4 * k, 2 * k + 1, 2 * k, k + 1);
        }
        for k in 0..n {
            body += &format!(" st.global.u32 [%rd1+{}], %r{};", 4 * k, 2 * k + 1);
        }
        body + " ret;"
    }

    /// Runs `eg` (built twice by `make`) through egg's runner and through the
    /// loop, and compares the results.
    fn compare(make: &dyn Fn() -> facts::EGraph, limits: &Limits, o3: bool, what: &str) -> String {
        let (egg_graph, egg_stop, egg_applied) = by_egg(make(), limits, o3);
        let mut mine = make();
        let run = saturate(&mut mine, &RuleSet::shared(TARGET, o3), limits);
        assert_eq!(format!("{:?}", run.stop), egg_stop, "{what}");
        let applied: Vec<(String, usize)> = run.applied.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(applied, egg_applied, "{what}");
        assert_eq!((mine.total_size(), mine.number_of_classes()), (egg_graph.total_size(), egg_graph.number_of_classes()), "{what}");
        assert!(classes(&mine) == classes(&egg_graph), "{what}: the e-graphs differ");
        assert!(mine.clean, "{what}: the e-graph is left dirty");
        egg_stop
    }

    /// The same on the functions of a kernel NVIDIA Warp generated, whose
    /// classes hold several nodes a rule matches (the order of its matches
    /// shows in the e-graph).
    #[test]
    fn saturates_a_compilers_kernels_as_eggs_runner_does() {
        let m = ptx_ir::parse_str(include_str!("../../tests/data/k_warp.sm_80.lineinfo.ptx")).unwrap();
        let unlimited = Limits { iterations: 16, nodes: 1_000_000, search_budget: 10_000_000 };
        let mut compared = 0;
        for f in m.items.iter().filter_map(|i| match i {
            ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(f),
            _ => None,
        }) {
            for o3 in [false, true] {
                for limits in [unlimited, Limits { iterations: 1, ..unlimited }, Limits { nodes: 300, ..unlimited }] {
                    compare(&|| built_of(f), &limits, o3, &f.name);
                    compared += 1;
                }
            }
        }
        assert!(compared >= 6);
    }

    /// The loop gives egg's runner's result: the same e-graph (every id's
    /// class and nodes), stop and applications, under each kind of stop
    /// (saturation, the iteration, node and search limits, and bans).
    #[test]
    fn saturates_as_eggs_runner_does() {
        let shifts = ".reg .b32 %r<8>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; shl.b32 %r3, %r1, 2; shl.b32 %r2, %r3, 3; mul.lo.s32 %r4, %r2, 8; sub.s32 %r5, %r4, 0; add.s32 %r6, %r5, %r5; st.global.u32 [%rd1], %r6; ret;";
        // A class holding `add.s32` and its unsigned twin, each of which
        // `reassociate-const` rewrites: the order of a class's matches shows.
        let twins = ".reg .b32 %r<8>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; add.s32 %r2, %r1, 5; add.s32 %r3, %r2, 7; sub.s32 %r4, %r3, 3; mul.lo.s32 %r5, %r4, 4; mul.lo.s32 %r6, %r5, 8; st.global.u32 [%rd1], %r6; ret;";
        let adds = many_signed_adds(1_100);
        let unlimited = Limits { iterations: 16, nodes: 1_000_000, search_budget: 10_000_000 };
        let cases: [(&str, Limits, &str); 7] = [
            (shifts, unlimited, "Saturated"),
            (twins, unlimited, "Saturated"),
            (shifts, Limits { iterations: 1, ..unlimited }, "IterationLimit"),
            (shifts, Limits { search_budget: 1, ..unlimited }, "search budget"),
            (adds.as_str(), unlimited, "Saturated"),
            (adds.as_str(), Limits { nodes: 4_000, ..unlimited }, "NodeLimit"),
            (adds.as_str(), Limits { iterations: 2, ..unlimited }, "IterationLimit"),
        ];
        for (body, limits, stop) in cases {
            for o3 in [false, true] {
                let egg_stop = compare(&|| built(body), &limits, o3, stop);
                assert!(egg_stop.contains(stop), "expected {stop}, egg: {egg_stop}");
            }
        }
    }
}
