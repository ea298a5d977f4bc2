//! The e-graph engine: function-wide equality saturation over every pure
//! instruction, in the manner of Cranelift's aegraph.
//!
//! 1. [`build`]: the function's pure instructions become e-graph nodes over
//!    the values their register reads see ([`crate::values`]); everything
//!    else is the skeleton, kept in order.
//! 2. The rules ([`crate::rules`]) run to saturation ([`saturate`]: egg's
//!    runner and backoff scheduler, without their per-run overhead),
//!    within node, iteration and search limits; constants fold in the
//!    analysis ([`facts`]).
//! 3. [`extract`] chooses one node per class, paying shared values once,
//!    under the cost model ([`cost`]); if the chosen program costs more than
//!    the input under that model, the function is left as it was.
//! 4. [`emit`] writes the skeleton back in order and computes each demanded
//!    value where the input computed it (or where first needed), reusing a
//!    value available in a dominating register (GVN) and dropping values
//!    nothing needs (dead code).
//!
//! The engine returns `None` when it leaves a function alone: no body, no
//! pure instruction, a limit hit before anything was learned, or an
//! internal inconsistency (a broken rule merging unequal classes).

pub mod build;
pub mod cost;
pub mod emit;
pub mod extract;
pub mod facts;
pub mod known;
pub mod lang;
pub mod saturate;

use crate::rules;
use crate::values::ValueView;
use build::Plan;
/// E-class ids (egg's), for code that builds e-graphs of this engine.
pub use egg::Id;
use ptx_ir::analysis::DomTree;
use ptx_ir::cfg::Cfg;
use ptx_ir::eval::Dialect;
use ptx_ir::ir::Function;
use rustc_hash::FxHashMap;

/// How much work the engine may do on one function. Every limit is a
/// count, never a clock, so that the output does not depend on the
/// machine or on its load.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub iterations: usize,
    /// E-nodes the rules may search, summed over the iterations: an
    /// iteration that would take the sum past this does not start. Each
    /// iteration searches the whole e-graph, so this bounds the time of a
    /// large function (at about 3 µs per node and iteration on an
    /// e-graph of 100,000 nodes) where the iteration limit alone would
    /// not; the largest corpus functions search about 60,000 at `-O3`.
    pub search_budget: usize,
    /// E-nodes, as a multiple of the function's value statements (plus a floor).
    pub nodes_per_value: usize,
    pub min_nodes: usize,
    /// Functions with more value statements than this are not optimized
    /// by the engine at all (the other passes still run).
    pub max_values: usize,
    /// Whether the rules taken at `-O3` only run ([`rules::Rule::only_o3`]).
    pub o3_rules: bool,
}

impl Limits {
    pub const O1: Limits = Limits { iterations: 4, search_budget: 100_000, nodes_per_value: 4, min_nodes: 2_000, max_values: 50_000, o3_rules: false };
    pub const O2: Limits = Limits { iterations: 8, search_budget: 400_000, nodes_per_value: 8, min_nodes: 5_000, max_values: 200_000, o3_rules: false };
    pub const O3: Limits = Limits { iterations: 16, search_budget: 800_000, nodes_per_value: 16, min_nodes: 10_000, max_values: 400_000, o3_rules: true };
}

/// What the engine needs to know about the module.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub dialect: Dialect,
    pub target: rules::Target,
    pub limits: Limits,
}

/// What one run did, for statistics.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub values_before: usize,
    pub instructions_emitted: usize,
    pub cost_before: u64,
    pub cost_after: u64,
    /// Rewrites that changed the e-graph, by rule name, in first-fired
    /// order (egg's per-iteration `applied`, summed), whether or not the
    /// function was then changed.
    pub rules_applied: Vec<(String, usize)>,
    /// Why the rules stopped (`None` when they never ran). Kept as it is,
    /// not formatted: a module of many small functions formatted it for
    /// each (complex -O2: 247 runs, 0.17 M host instructions).
    pub stop: Option<egg::StopReason>,
    /// Why the function was left as it was after the rules ran (the
    /// extracted program was not cheaper, ...); `None` when it was
    /// changed, or when the rules never ran.
    pub declined: Option<String>,
    /// Time in each phase: building, saturating, extracting, emitting.
    pub times: [std::time::Duration; 4],
}

/// Optimizes one function; `None` when it is left as it was.
pub fn optimize(f: &Function, config: &Config) -> Option<(Function, Report)> {
    let (g, report) = optimize_reporting(f, config);
    g.map(|g| (g, report))
}

/// [`optimize`], with the report also when the function is left as it was
/// (rules may have fired and extraction declined: [`Report::declined`]).
/// The function is the one [`optimize`] gives.
pub fn optimize_reporting(f: &Function, config: &Config) -> (Option<Function>, Report) {
    optimize_with(f, config, None)
}

/// The analyses of the function the engine is given, when the caller has
/// them (the pass manager's cache): the CFG, its dominator tree and the
/// value view of exactly that function.
pub type GivenAnalyses<'a> = (&'a Cfg, &'a DomTree, &'a ValueView);

/// [`optimize_reporting`] with the analyses of `f` when the caller has
/// them; the engine builds its own otherwise, and whenever it renames
/// registers first (blocks that declare registers).
pub fn optimize_with(f: &Function, config: &Config, given: Option<GivenAnalyses<'_>>) -> (Option<Function>, Report) {
    optimize_emitting(f, config, given, true)
}

/// [`optimize_with`]; with `emit_fast_paths` off, as the emitter's general
/// work alone gives it (see `run`).
fn optimize_emitting(f: &Function, config: &Config, given: Option<GivenAnalyses<'_>>, emit_fast_paths: bool) -> (Option<Function>, Report) {
    let mut report = Report::default();
    let rewrite = quanta::with_clock(egg_clock(), || run(f, config, given, &mut report, emit_fast_paths));
    let g = rewrite.map(|r| match r {
        Rewrite::Whole(g) => g,
        Rewrite::Statements(r) => {
            let body = f.body.as_deref().unwrap_or(&[]);
            let mut g = emit::without_body(f);
            report.instructions_emitted = r.write(&mut g, |k| body[k].clone());
            g
        }
    });
    // A function written back as it was is no change: the pass manager
    // keeps the analyses of `f`, and an -O3 round in which no other pass
    // changes anything is the last.
    (g.filter(|g| g != f), report)
}

/// [`optimize_with`] on a function the caller gives up, edited in place:
/// the input's statements move into the output instead of being copied,
/// and a function to rename first is renamed in place (and put back when
/// the engine leaves it alone) instead of in a copy.
/// Says whether `f` changed; `f` is then the function [`optimize_with`]
/// gives, else it is left as it was.
pub fn optimize_in_place(f: &mut Function, config: &Config, given: Option<GivenAnalyses<'_>>) -> (bool, Report) {
    let mut report = Report::default();
    let changed = quanta::with_clock(egg_clock(), || {
        // A function to rename first is renamed in place, and put back
        // when the engine leaves it alone.
        let (pinned, unflatten) = match names_of(f) {
            None => return false,
            Some(Names::Kept { pinned }) => (pinned, None),
            Some(Names::Flattened) => match ptx_ir::ir::scopes::flatten_names_undoably(f) {
                Ok(undo) => (Vec::new(), Some(undo)),
                Err(_) => return false,
            },
        };
        // Renamed: the given analyses are of the function before.
        let given = if unflatten.is_some() { None } else { given };
        match run_on(f, config, given, &pinned, &mut report, true) {
            None => {
                if let Some(undo) = unflatten {
                    undo.undo(f);
                }
                false
            }
            // Written back as it was: changed if renamed.
            Some(emit::Emitted::Unchanged) => unflatten.is_some_and(|u| u.changed()),
            // A statement moved or changed, or a register was made (the walk
            // tells a function written back as it was: `emit::Emitted`).
            Some(emit::Emitted::Changed(r)) => {
                let mut stmts = f.body.take().unwrap_or_default();
                report.instructions_emitted = r.write(f, |k| taken(&mut stmts, k));
                true
            }
        }
    });
    (changed, report)
}

/// What the engine makes of a function it does not leave as it was.
enum Rewrite {
    /// The function renamed first (see `run`), whole.
    Whole(Function),
    /// The input's statements, rearranged and with new ones.
    Statements(emit::Rewritten),
}

/// Statement `k` taken out of a body that is given up.
fn taken(stmts: &mut [ptx_ir::ir::Stmt], k: usize) -> ptx_ir::ir::Stmt {
    std::mem::replace(&mut stmts[k], ptx_ir::ir::Stmt::ScopeEnd)
}

/// The input's cost: every value statement (`values`: their classes) once,
/// at the dearest node of its class. A large class is priced once:
/// statements whose values are equal share a class, and one that absorbed
/// a constant can hold thousands of nodes (pricing it per statement was
/// quadratic). Read on the rebuilt input (congruent classes merged), its
/// classes found by id in a table ([`facts::classes_by_id`]: egg hashes
/// the id into its class map, renderer at -O2: 58,723 look-ups, 2.8 M
/// host instructions).
fn input_cost(eg: &facts::EGraph, values: &[Id], costs: &cost::CostModel) -> u64 {
    const PRICED_ONCE_FROM: usize = 8;
    let dearest = |nodes: &[lang::Node]| nodes.iter().map(|n| extract::NodeCost::node_cost(costs, eg, n)).max().unwrap_or(0);
    let mut large: FxHashMap<Id, u64> = FxHashMap::default();
    let by_id = facts::classes_by_id(eg);
    let mut class_cost = |c: Id| {
        let class = by_id[usize::from(eg.find(c))].expect("the id of a class");
        match class.nodes.len() < PRICED_ONCE_FROM {
            true => dearest(&class.nodes),
            false => *large.entry(class.id).or_insert_with(|| dearest(&class.nodes)),
        }
    };
    values.iter().map(|c| class_cost(*c)).sum()
}

/// The clock egg reads for its statistics: a mock that never moves. egg
/// times every rebuild and iteration with `quanta`, whose default clock
/// first calibrates the CPU's time-stamp counter against the system clock
/// for 10-200 ms (longer on a busy machine): most of the time of a small
/// module's -O2 run. A clock that never moves also keeps egg's own time
/// limit from firing: the engine's limits are counts ([`Limits`]).
fn egg_clock() -> &'static quanta::Clock {
    static CLOCK: std::sync::OnceLock<quanta::Clock> = std::sync::OnceLock::new();
    CLOCK.get_or_init(|| quanta::Clock::mock().0)
}

/// How a function's names are made to mean one register wherever a
/// value moves (see [`names_of`]).
enum Names {
    /// Left as they are; the instructions naming a register of a `{ }`
    /// block stay in place (by statement).
    Kept { pinned: Vec<bool> },
    /// Every name made unique and every register visible everywhere first
    /// ([`ptx_ir::ir::scopes::flatten_names`]).
    Flattened,
}

/// Whether the engine works on `f` at all (`None`: a declaration, or no
/// value statement), and how its names are made safe to move values
/// across blocks. Values move between blocks, so a name must mean the
/// same register wherever a value goes. Registers of `{ }` blocks that
/// shadow nothing stay where they are declared and the instructions
/// naming them stay in place; otherwise every name is made unique and
/// every register visible everywhere first.
fn names_of(f: &Function) -> Option<Names> {
    f.body.as_ref()?;
    // A function without a value statement is left alone before anything
    // is renamed or built (renaming registers makes none).
    if !f.instructions().any(|ins| build::value_dest(f, ins).is_some()) {
        return None;
    }
    if !declares_registers_in_blocks(f) {
        return Some(Names::Kept { pinned: Vec::new() });
    }
    Some(match ptx_ir::ir::scopes::block_register_users(f) {
        Some(pinned) => Names::Kept { pinned },
        None => Names::Flattened,
    })
}

/// The engine's work on `f`; with `emit_fast_paths` off, the emitter
/// decides every statement by its general work (the reference its fast
/// path is tested against: `emit::Emitter::without_fast_paths`).
fn run(f: &Function, config: &Config, given: Option<GivenAnalyses<'_>>, report: &mut Report, emit_fast_paths: bool) -> Option<Rewrite> {
    match names_of(f)? {
        Names::Kept { pinned } => match run_on(f, config, given, &pinned, report, emit_fast_paths)? {
            // Written back as it was: no copy is made.
            emit::Emitted::Unchanged => None,
            // Its instructions are counted where the caller writes it.
            emit::Emitted::Changed(r) => Some(Rewrite::Statements(r)),
        },
        Names::Flattened => {
            let mut g = f.clone();
            ptx_ir::ir::scopes::flatten_names(&mut g).ok()?;
            // Renamed: the given analyses are of the other function.
            match run_on(&g, config, None, &[], report, emit_fast_paths)? {
                emit::Emitted::Unchanged => {}
                // The renamed function's statements move into the output.
                emit::Emitted::Changed(r) => {
                    let mut stmts = g.body.take().unwrap_or_default();
                    report.instructions_emitted = r.write(&mut g, |k| taken(&mut stmts, k));
                }
            }
            Some(Rewrite::Whole(g))
        }
    }
}

/// The engine's work on `f`, whose names are safe to move values across
/// blocks but for the instructions `pinned` (see [`names_of`]), given its
/// analyses or not: what the emitter made of it, `None` when the engine
/// declines (the reason in `report`).
fn run_on(f: &Function, config: &Config, given: Option<GivenAnalyses<'_>>, pinned: &[bool], report: &mut Report, emit_fast_paths: bool) -> Option<emit::Emitted> {
    let t0 = std::time::Instant::now();
    let owned;
    let (cfg, dom, view) = match given {
        Some(g) => g,
        None => {
            let cfg = Cfg::build(f);
            let dom = DomTree::dominators(&cfg);
            let view = ValueView::build(f, &cfg, &dom);
            owned = (cfg, dom, view);
            (&owned.0, &owned.1, &owned.2)
        }
    };
    let mut built = build::build(f, cfg, dom, view, config.dialect, config.target.sm, pinned);
    if built.values == 0 || built.values > config.limits.max_values {
        return None;
    }
    let costs = cost::CostModel::for_target(config.target, config.limits.o3_rules);
    let values: Vec<Id> = built.plans.iter().filter_map(|p| match p {
        Plan::Value { class, .. } => Some(*class),
        _ => None,
    }).collect();
    let t1 = std::time::Instant::now();
    let rules = rules::RuleSet::shared(config.target, config.limits.o3_rules);
    let limits = saturate::Limits {
        iterations: config.limits.iterations,
        nodes: config.limits.min_nodes.max(built.values * config.limits.nodes_per_value),
        search_budget: config.limits.search_budget,
    };
    // The input is priced on the rebuilt e-graph (congruent classes merged),
    // before the rules add anything.
    built.egraph.rebuild();
    let cost_before = input_cost(&built.egraph, &values, &costs);
    let run = saturate::saturate(&mut built.egraph, &rules, &limits);
    report.values_before = built.values;
    report.cost_before = cost_before;
    report.rules_applied = run.applied.iter().map(|(name, n)| (name.to_string(), *n)).collect();
    report.stop = Some(run.stop);
    let t2 = std::time::Instant::now();
    if built.egraph.analysis.contradiction.is_some() {
        report.declined = Some("an inconsistency in the e-graph (two constants or widths merged)".to_string());
        return None;
    }
    // What the skeleton needs: its reads, and the values of physical writes.
    let mut roots: Vec<Id> = Vec::new();
    for p in &built.plans {
        match p {
            Plan::Skeleton { reads } => roots.extend(reads.iter().map(|(_, c)| *c)),
            Plan::Value { class, physical: true, .. } => roots.push(*class),
            _ => {}
        }
    }
    // The classes by id, for the extraction and the walk (the e-graph does
    // not change between them).
    let classes = facts::classes_by_id(&built.egraph);
    let choice = extract::extract(&built.egraph, &classes, &roots, &costs);
    let t3 = std::time::Instant::now();
    report.cost_after = choice.dag_cost;
    if choice.dag_cost > cost_before {
        report.declined = Some(format!("the extracted program is not cheaper (cost {cost_before} -> {})", choice.dag_cost));
        return None;
    }
    let emitter = emit::Emitter::new(f, &built, classes, &choice, &costs, view, cfg, dom, &roots);
    let emitted = if emit_fast_paths { emitter.run() } else { emitter.without_fast_paths().run() };
    let times = [t1 - t0, t2 - t1, t3 - t2, t3.elapsed()];
    match emitted {
        Some(emit::Emitted::Unchanged) => {
            report.instructions_emitted = built.instructions;
            report.times = times;
            emitted
        }
        Some(emit::Emitted::Changed(_)) => {
            report.times = times;
            emitted
        }
        None => {
            report.declined = Some("the chosen program could not be written back".to_string());
            None
        }
    }
}

/// Does the body declare registers inside `{ }` blocks (where a name may
/// mean another register than elsewhere)?
fn declares_registers_in_blocks(f: &Function) -> bool {
    let mut depth = 0usize;
    for s in f.body.iter().flatten() {
        match s {
            ptx_ir::ir::Stmt::ScopeBegin => depth += 1,
            ptx_ir::ir::Stmt::ScopeEnd => depth = depth.saturating_sub(1),
            ptx_ir::ir::Stmt::Decl(d) if depth > 0 && d.space() == ptx_ir::isa::StateSpace::Reg => return true,
            _ => {}
        }
    }
    false
}

/// The classes the chosen nodes reach from the roots, by canonical id
/// (`classes`: the e-graph's classes by id, [`facts::classes_by_id`]);
/// constants only where a root reads one (elsewhere they are immediates).
/// A flag per class id, not a hash set: the walk asks it at every value
/// statement (renderer at -O2: 4.7 M host instructions hashing and probing).
fn demanded_classes(eg: &facts::EGraph, choice: &extract::Choice, roots: &[Id], classes: &[Option<&facts::EClass>]) -> Vec<bool> {
    let class = |id: Id| classes[usize::from(id)].expect("the id of a class");
    let mut seen = vec![false; classes.len()];
    let mut stack: Vec<Id> = roots.iter().map(|r| eg.find(*r)).collect();
    while let Some(c) = stack.pop() {
        if std::mem::replace(&mut seen[usize::from(c)], true) {
            continue;
        }
        if let Some(k) = choice.index(c) {
            // Pushed one by one: a filtered `extend` cost renderer at -O2
            // 2.7 M host instructions.
            for &kid in egg::Language::children(&class(c).nodes[k]) {
                let kid = eg.find(kid);
                // A constant operand is an immediate: it needs no register of its own.
                if eg.analysis.constant(class(kid).data).is_none() {
                    stack.push(kid);
                }
            }
        }
    }
    seen
}


/// The engine tests' sample modules: a compiler's kernel (NVCC 12, with
/// line info) and the suite's corpus files of each instruction family.
#[cfg(test)]
const SAMPLE_TEXTS: [&str; 10] = [
    include_str!("../../tests/data/k_warp.sm_80.lineinfo.ptx"),
    include_str!("../../../tests/corpus/integer.ptx"),
    include_str!("../../../tests/corpus/control-flow.ptx"),
    include_str!("../../../tests/corpus/logic-shift.ptx"),
    include_str!("../../../tests/corpus/convert.ptx"),
    include_str!("../../../tests/corpus/compare-select.ptx"),
    include_str!("../../../tests/corpus/float-f32-f64.ptx"),
    include_str!("../../../tests/corpus/extended-precision.ptx"),
    include_str!("../../../tests/corpus/legacy-1x.ptx"),
    include_str!("../../../tests/corpus/half-bf16.ptx"),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel `k` with `body` (the engine's modules' tests share it).
    pub(super) fn kernel(body: &str) -> Function {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.global .u32 g;\n.visible .entry k(.param .u64 p)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ptx_ir::ir::Item::Func(f) = m.items.into_iter().find(|i| matches!(i, ptx_ir::ir::Item::Func(_))).unwrap() else { unreachable!() };
        *f
    }

    const CONFIG: Config = Config { dialect: Dialect::MODERN, target: rules::Target { sm: 80, ptx: (8, 0) }, limits: Limits::O2 };

    fn optimized(body: &str) -> (Function, Option<Function>) {
        let f = kernel(body);
        let (g, report) = optimize_reporting(&f, &CONFIG);
        if g.is_none() {
            // Left alone after a full run: the report says what was written.
            assert!(report.declined.is_some() || report.instructions_emitted == f.instructions().count(), "{report:?}");
        }
        (f, g)
    }

    /// The search budget counts the e-nodes each iteration searches: an
    /// iteration that would pass it does not start, whatever the time.
    #[test]
    fn the_search_budget_stops_the_iterations() {
        let f = kernel(".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; shl.b32 %r3, %r1, 2; shl.b32 %r2, %r3, 3; st.global.u32 [%rd1], %r2; ret;");
        let with_budget = |search_budget| Config { limits: Limits { search_budget, ..Limits::O2 }, ..CONFIG };
        let (_, full) = optimize_reporting(&f, &with_budget(Limits::O2.search_budget));
        assert!(!full.rules_applied.is_empty() && !matches!(&full.stop, Some(egg::StopReason::Other(s)) if s.contains("budget")), "{full:?}");
        let (_, none) = optimize_reporting(&f, &with_budget(1));
        assert!(none.rules_applied.is_empty() && matches!(&none.stop, Some(egg::StopReason::Other(s)) if s == "search budget of 1 e-nodes"), "{none:?}");
    }

    /// Edited in place, a function becomes the one [`optimize_with`]
    /// gives, and the answer says whether it changed: written back as it
    /// was, renamed first (then written back as it was, or rewritten),
    /// changed without and with a new register; and each of them left
    /// alone (too many values): a function renamed in place is put back.
    #[test]
    fn in_place_gives_the_function_optimize_gives() {
        let bodies = [
            ".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; mul.lo.u32 %r2, %r1, %r1; st.global.u32 [%rd1], %r2; ret;",
            ".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; { .reg .b32 %r1; ld.global.u32 %r1, [%rd1+4]; st.global.u32 [%rd1+8], %r1; } add.u32 %r2, %r1, 1; st.global.u32 [%rd1+12], %r2; ret;",
            ".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; { .reg .b32 %r1; ld.global.u32 %r1, [%rd1+4]; add.u32 %r3, %r1, 0; st.global.u32 [%rd1+8], %r3; } add.u32 %r2, %r1, 1; st.global.u32 [%rd1+12], %r2; ret;",
            ".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; add.u32 %r2, %r1, 0; mul.lo.u32 %r3, %r2, %r2; st.global.u32 [%rd1], %r3; ret;",
            ".reg .b32 %r<4>; .reg .b64 %rd<2>; ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; and.b32 %r2, %r1, 0; st.global.u32 [%rd1], %r2; ret;",
        ];
        let no_values = Config { limits: Limits { max_values: 0, ..Limits::O2 }, ..CONFIG };
        let mut changed_some = 0;
        for (config, body) in bodies.iter().flat_map(|b| [(&CONFIG, b), (&no_values, b)]) {
            let f = kernel(body);
            let (g, _) = optimize_with(&f, config, None);
            let mut h = f.clone();
            let (changed, _) = optimize_in_place(&mut h, config, None);
            assert_eq!(changed, g.is_some(), "{body}");
            assert_eq!(h, g.unwrap_or(f), "{body}");
            changed_some += changed as usize;
        }
        assert_eq!(changed_some, 4, "the two renamed and the two rewritten functions change, with values allowed");
    }

    /// Special registers and symbol addresses read with `mov` (whose
    /// instructions the emitter writes anew), a copy, and rules that fire
    /// without a cheaper program: the function comes back unchanged (`None`).
    #[test]
    fn written_back_as_it_was_is_none() {
        let (_, g) = optimized(".reg .b32 %r<6>; .reg .b64 %rd<4>;
            ld.param.u64 %rd1, [p];
            mov.u32 %r1, %tid.x;
            mov.u64 %rd2, g;
            ld.global.u32 %r2, [%rd2];
            add.s32 %r3, %r2, %r1;
            mov.u32 %r4, %r3;
            mul.wide.u32 %rd3, %r4, 4;
            add.s64 %rd3, %rd1, %rd3;
            st.global.u32 [%rd3], %r4;
            ret;");
        assert!(g.is_none(), "{:?}", g.map(|g| g.body));
    }

    /// A function whose `{ }` blocks declare a register that shadows an
    /// outer one is renamed before the engine runs: written back otherwise
    /// as it was, it is still given back (renamed), as before.
    #[test]
    fn renamed_function_written_back_is_some() {
        let (f, g) = optimized(".reg .b32 %r<4>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.global.u32 %r1, [%rd1];
            {
            .reg .b32 %r1;
            ld.global.u32 %r1, [%rd1+4];
            st.global.u32 [%rd1+8], %r1;
            }
            add.u32 %r2, %r1, 1;
            st.global.u32 [%rd1+12], %r2;
            ret;");
        let g = g.expect("renamed");
        assert_ne!(g, f);
        assert_eq!(g.instructions().count(), f.instructions().count());
    }

    /// The emitter's fast path for a value statement written back as it
    /// was (`emit::Emitter::written_back_as_it_was`) gives what its general
    /// work gives: on the functions of a compiler's kernel and of the
    /// suite's corpus files, at each level's limits.
    #[test]
    fn the_emitters_fast_path_gives_what_its_general_work_gives() {
        let texts = super::SAMPLE_TEXTS;
        let (mut functions, mut changed) = (0, 0);
        for text in texts {
            let m = ptx_ir::parse_str(text).unwrap();
            let ctx = crate::ModuleContext::of_module(&m);
            for limits in [Limits::O1, Limits::O2, Limits::O3] {
                let config = Config { dialect: ctx.dialect, target: rules::Target { sm: ctx.sm, ptx: (ctx.version.major, ctx.version.minor) }, limits };
                for f in m.items.iter().filter_map(|i| match i {
                    ptx_ir::ir::Item::Func(f) if f.body.is_some() => Some(f),
                    _ => None,
                }) {
                    let (fast, fast_report) = optimize_emitting(f, &config, None, true);
                    let (general, general_report) = optimize_emitting(f, &config, None, false);
                    assert!(fast == general, "{}: the fast path's output differs from the general work's", f.name);
                    assert_eq!((fast_report.instructions_emitted, &fast_report.declined), (general_report.instructions_emitted, &general_report.declined), "{}", f.name);
                    functions += 1;
                    changed += fast.is_some() as usize;
                }
            }
        }
        assert!(functions >= 30 && changed >= 5, "{functions} functions, {changed} changed");
    }

    /// A lone foldable instruction, a duplicate of an expensive value, and
    /// a dead value each change the function.
    #[test]
    fn folds_duplicates_and_dead_values_change_it() {
        for body in [
            "ld.param.u64 %rd1, [p]; mov.u32 %r1, 6; shl.b32 %r2, %r1, 2; st.global.u32 [%rd1], %r2; ret;",
            "ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; div.u32 %r2, 1000, %r1; div.u32 %r3, 1000, %r1; st.global.u32 [%rd1], %r2; st.global.u32 [%rd1+4], %r3; ret;",
            "ld.param.u64 %rd1, [p]; ld.global.u32 %r1, [%rd1]; mul.lo.u32 %r2, %r1, %r1; st.global.u32 [%rd1], %r1; ret;",
        ] {
            let (f, g) = optimized(&format!(".reg .b32 %r<4>; .reg .b64 %rd<2>;\n{body}"));
            let g = g.unwrap_or_else(|| panic!("changed: {body}"));
            assert_ne!(g, f);
        }
    }
}
