//! The pass manager: runs a pipeline over each function, keeping the
//! shared analyses between passes ([`Analyses`]), and, when asked, numbers
//! every pass×function step for bisection (`--opt-bisect-limit`), prints
//! the function after each step, validates it (verifier and a re-parse of
//! the printed text), times each pass, and records the steps that changed
//! a function (with the e-graph rules that fired) and the e-graph runs
//! that fired rules but left the function alone, for statistics and
//! remarks.
//!
//! Steps are numbered as if they ran in order: functions in module order,
//! and for each function the pipeline's passes in order (round after round
//! at `-O3`). Functions are optimized in parallel (rayon) unless bisecting,
//! printing or validating after each pass; what each one's observer saw is
//! merged in module order, so statistics and remarks do not depend on it. A bisection limit `N` runs steps `1..=N` and skips the rest,
//! so a miscompile is found in log₂ runs, as with LLVM's `-opt-bisect-limit`.

use super::{by_name, pipeline, rounds, Analyses, Pass, PASSES};
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::{Function, Item, Module};
use std::time::{Duration, Instant};

/// A sequence of passes to run over each function.
pub struct Pipeline {
    pub passes: Vec<&'static Pass>,
    pub level: OptLevel,
    /// At most this many runs of the whole sequence per function, stopping
    /// at the first round that changes nothing.
    pub rounds: usize,
}

/// Time spent in one pass, summed over functions.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassTiming {
    pub pass: &'static str,
    pub time: Duration,
    pub runs: u64,
    /// Runs that changed the function.
    pub changed: u64,
}

/// A function that failed validation after a pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PassFailure {
    pub pass: &'static str,
    pub function: String,
    pub messages: Vec<String>,
}

impl std::fmt::Display for PassFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "after pass `{}` on function `{}`: {}", self.pass, self.function, self.messages.join("; "))
    }
}

/// A step that changed a function (recorded with [`Observer::record_changes`]).
#[derive(Clone, Debug)]
pub struct Change {
    /// The step's number (as `--opt-bisect-limit` counts).
    pub step: u64,
    pub pass: &'static str,
    pub function: String,
    /// The e-graph rules that changed the e-graph in this step, by name,
    /// with how many times each did (the `egraph` pass; empty for others).
    pub rules: Vec<(String, usize)>,
    /// The function before and after the step (with [`Observer::keep_functions`]).
    pub before_after: Option<Box<(Function, Function)>>,
}

/// An e-graph run whose rules fired but that left the function as it was
/// (recorded with [`Observer::record_changes`]).
#[derive(Clone, Debug)]
pub struct Missed {
    pub step: u64,
    pub pass: &'static str,
    pub function: String,
    pub rules: Vec<(String, usize)>,
    /// Why the engine kept the input.
    pub reason: String,
}

/// What to watch while passes run. The default watches nothing and costs
/// nothing.
#[derive(Default)]
pub struct Observer {
    /// Run only steps `1..=N`.
    pub bisect_limit: Option<u64>,
    /// Steps numbered so far.
    pub steps: u64,
    /// Log each step (`BISECT: running pass (3) egraph on k`) when bisecting.
    pub print_after_all: bool,
    pub validate_after_all: bool,
    pub time_passes: bool,
    /// Per pass, in first-run order (filled when `time_passes`).
    pub timings: Vec<PassTiming>,
    /// Bisection lines and printed functions, in order.
    pub log: Vec<String>,
    /// The first validation failure; no pass runs after it.
    pub failure: Option<PassFailure>,
    /// Record each step that changed its function in [`Observer::changes`]
    /// (a pass giving back an equal function changed nothing) and each
    /// e-graph run that fired rules without a change in [`Observer::missed`].
    pub record_changes: bool,
    /// With `record_changes`: keep each changed function before and after.
    pub keep_functions: bool,
    pub changes: Vec<Change>,
    pub missed: Vec<Missed>,
    /// The module the function is checked in (header, variables and
    /// prototypes of the other functions), set by [`Pipeline::run_module`].
    context: Option<Module>,
}

impl Pipeline {
    /// The pipeline of a level ([`pipeline`]).
    pub fn of_level(level: OptLevel) -> Pipeline {
        let passes = pipeline(level).iter().map(|n| by_name(n).expect("pipelines name existing passes")).collect();
        Pipeline { passes, level, rounds: rounds(level) }
    }

    /// The named passes, in order, with the limits of `level`, run once.
    pub fn named(names: &[&str], level: OptLevel) -> Result<Pipeline, String> {
        let passes = names
            .iter()
            .map(|n| by_name(n.trim()).ok_or_else(|| format!("unknown pass `{n}` (passes: {})", PASSES.iter().map(|p| p.name).collect::<Vec<_>>().join(", "))))
            .collect::<Result<_, _>>()?;
        Ok(Pipeline { passes, level, rounds: 1 })
    }

    /// Runs the pipeline over every function of a module.
    pub fn run_module(&self, mut module: Module, obs: &mut Observer) -> Module {
        if self.passes.is_empty() {
            return module;
        }
        let ctx = ModuleContext::of_module(&module);
        if obs.validate_after_all {
            obs.context = Some(context_of(&module));
        }
        if worth_parallel(&module) && obs.order_free() {
            // Functions are optimized independently: in parallel, each with
            // its own observer, merged in module order.
            use rayon::prelude::*;
            let funcs: Vec<&mut Box<Function>> = module
                .items
                .iter_mut()
                .filter_map(|i| match i {
                    Item::Func(f) if f.body.is_some() => Some(f),
                    _ => None,
                })
                .collect();
            let watch = obs.child();
            let children: Vec<Observer> = funcs
                .into_par_iter()
                .map(|f| {
                    let mut child = watch.child();
                    self.run_function_in_place(f, &ctx, &mut child);
                    child
                })
                .collect();
            for child in children {
                obs.merge(child);
            }
        } else {
            for item in &mut module.items {
                if let Item::Func(f) = item {
                    if f.body.is_some() {
                        self.run_function_in_place(f, &ctx, obs);
                    }
                }
            }
        }
        obs.context = None;
        if self.passes.iter().any(|p| p.name == super::dead_decls::PASS.name) && obs.failure.is_none() {
            super::dead_decls::dead_symbols(&mut module);
        }
        module
    }

    /// Runs the pipeline over one function, giving a new one (the input is
    /// not changed, so the incremental database can keep it).
    pub fn run_function(&self, f: &Function, ctx: &ModuleContext, obs: &mut Observer) -> Function {
        self.run_passes(f, None, ctx, obs).unwrap_or_else(|| f.clone())
    }

    /// Runs the pipeline over a function the caller owns (a module's), in
    /// place: passes with an in-place form ([`Pass::edit`]) edit it from
    /// the first pass on, so the first change costs no copy of the function.
    pub fn run_function_in_place(&self, f: &mut Function, ctx: &ModuleContext, obs: &mut Observer) {
        // `f` becomes an empty function of the same name (what steps are
        // logged under) while the passes own its body.
        let mut owned = Function::new(f.kind, &f.name);
        std::mem::swap(f, &mut owned);
        *f = self.run_passes(f, Some(owned), ctx, obs).expect("the passes start from a function of their own");
    }

    /// The passes over `f`, or over `cur` when the caller gives one of its
    /// own (then `f` is only its name): the function they leave when some
    /// pass changed it or `cur` was given, else `None`.
    fn run_passes(&self, f: &Function, mut cur: Option<Function>, ctx: &ModuleContext, obs: &mut Observer) -> Option<Function> {
        let mut analyses = Analyses::default();
        for _ in 0..self.rounds {
            let mut round_changed = false;
            for pass in &self.passes {
                if obs.failure.is_some() {
                    return cur;
                }
                obs.steps += 1;
                let step = obs.steps;
                if let Some(limit) = obs.bisect_limit {
                    let run = step <= limit;
                    obs.log.push(format!("BISECT: {} pass ({step}) {} on {}", if run { "running" } else { "NOT running" }, pass.name, f.name));
                    if !run {
                        continue;
                    }
                }
                analyses.engine_report = None;
                // When changed: did the body keep its length?
                // A pass with an in-place form edits the copy this run gives
                // back, once a pass before it made one (the function given
                // is left as it is: the first change makes the copy).
                let changed: Option<bool> = match pass.edit.filter(|_| cur.is_some()) {
                    Some(edit) => {
                        let g = cur.as_mut().expect("filtered above");
                        let before = obs.record_changes.then(|| g.clone());
                        let len = g.body.as_ref().map(Vec::len);
                        let t0 = obs.time_passes.then(Instant::now);
                        let changed = edit(g, &mut analyses, ctx, self.level);
                        if let Some(t0) = t0 {
                            obs.time(pass.name, t0.elapsed(), changed);
                        }
                        if let Some(before) = before {
                            obs.record(step, pass.name, &before, changed.then_some(&*g), analyses.engine_report.take());
                        }
                        changed.then(|| g.body.as_ref().map(Vec::len) == len)
                    }
                    None => {
                        let input = cur.as_ref().unwrap_or(f);
                        let t0 = obs.time_passes.then(Instant::now);
                        let out = (pass.run)(input, &mut analyses, ctx, self.level);
                        if let Some(t0) = t0 {
                            obs.time(pass.name, t0.elapsed(), out.is_some());
                        }
                        if obs.record_changes {
                            obs.record(step, pass.name, input, out.as_ref(), analyses.engine_report.take());
                        }
                        match out {
                            Some(g) => {
                                let same_len = g.body.as_ref().map(Vec::len) == input.body.as_ref().map(Vec::len);
                                cur = Some(g);
                                Some(same_len)
                            }
                            None => None,
                        }
                    }
                };
                if let Some(same_len) = changed {
                    // A declaration a pass adds (a fresh register's `.reg`
                    // line) shifts statement indices: blocks are ranges.
                    analyses.invalidate(if same_len { pass.preserves } else { super::Preserves::Nothing });
                    round_changed = true;
                }
                let now = cur.as_ref().unwrap_or(f);
                if obs.print_after_all {
                    let mut text = format!("// *** after {} on {} ***\n", pass.name, now.name);
                    ptx_print::write_function(&mut text, now);
                    obs.log.push(text);
                }
                if obs.validate_after_all {
                    if let Err(messages) = validate(now, obs.context.as_ref(), ctx) {
                        obs.failure = Some(PassFailure { pass: pass.name, function: now.name.to_string(), messages });
                    }
                }
            }
            if !round_changed {
                break;
            }
        }
        cur
    }
}

impl Observer {
    /// Records one step's outcome: a change, or rules that fired for nothing.
    fn record(&mut self, step: u64, pass: &'static str, input: &Function, out: Option<&Function>, report: Option<crate::engine::Report>) {
        let rules = report.as_ref().map(|r| r.rules_applied.clone()).unwrap_or_default();
        match out.filter(|g| *g != input) {
            Some(g) => {
                let before_after = self.keep_functions.then(|| Box::new((input.clone(), g.clone())));
                self.changes.push(Change { step, pass, function: input.name.to_string(), rules, before_after });
            }
            None if !rules.is_empty() => {
                let reason = report.and_then(|r| r.declined).unwrap_or_else(|| "the extracted program is the input's".to_string());
                self.missed.push(Missed { step, pass, function: input.name.to_string(), rules, reason });
            }
            None => {}
        }
    }

    /// Can functions run in any order (in parallel) and their observations
    /// be merged after: nothing depends on the steps before a function
    /// (bisection, the log, a validation failure that stops the rest).
    fn order_free(&self) -> bool {
        self.bisect_limit.is_none() && !self.print_after_all && !self.validate_after_all && self.failure.is_none()
    }

    /// An observer watching what this one watches, with nothing seen yet.
    fn child(&self) -> Observer {
        Observer { time_passes: self.time_passes, record_changes: self.record_changes, keep_functions: self.keep_functions, ..Observer::default() }
    }

    /// Adds what `child` saw over the next function: its steps are numbered
    /// after the ones seen so far.
    fn merge(&mut self, child: Observer) {
        let offset = self.steps;
        self.steps += child.steps;
        for t in child.timings {
            match self.timings.iter_mut().find(|p| p.pass == t.pass) {
                Some(e) => {
                    e.time += t.time;
                    e.runs += t.runs;
                    e.changed += t.changed;
                }
                None => self.timings.push(t),
            }
        }
        self.changes.extend(child.changes.into_iter().map(|c| Change { step: c.step + offset, ..c }));
        self.missed.extend(child.missed.into_iter().map(|m| Missed { step: m.step + offset, ..m }));
        self.log.extend(child.log);
    }

    fn time(&mut self, pass: &'static str, t: Duration, changed: bool) {
        let k = match self.timings.iter().position(|p| p.pass == pass) {
            Some(k) => k,
            None => {
                self.timings.push(PassTiming { pass, ..PassTiming::default() });
                self.timings.len() - 1
            }
        };
        let e = &mut self.timings[k];
        e.time += t;
        e.runs += 1;
        e.changed += u64::from(changed);
    }

    /// The timings as a table, slowest first (`--time-passes`).
    pub fn timing_table(&self) -> String {
        let total: Duration = self.timings.iter().map(|t| t.time).sum();
        let mut rows = self.timings.clone();
        rows.sort_by_key(|r| std::cmp::Reverse(r.time));
        let mut out = format!("{:>12}  {:>6}  {:>8}  {:>8}  pass\n", "time (ms)", "share", "runs", "changed");
        for r in &rows {
            let share = if total.is_zero() { 0.0 } else { 100.0 * r.time.as_secs_f64() / total.as_secs_f64() };
            out.push_str(&format!("{:>12.3}  {:>5.1}%  {:>8}  {:>8}  {}\n", r.time.as_secs_f64() * 1e3, share, r.runs, r.changed, r.pass));
        }
        out.push_str(&format!("{:>12.3}  {:>5.1}%  {:>8}  {:>8}  total\n", total.as_secs_f64() * 1e3, 100.0, rows.iter().map(|r| r.runs).sum::<u64>(), rows.iter().map(|r| r.changed).sum::<u64>()));
        out
    }
}

/// The module a function is validated in: the header, every item but the
/// functions' bodies (each function as its prototype, kernels left out:
/// nothing calls them).
fn context_of(m: &Module) -> Module {
    let items = m
        .items
        .iter()
        .filter_map(|it| match it {
            Item::Func(f) if f.kind == ptx_ir::ir::FuncKind::Entry => None,
            Item::Func(f) => {
                let mut proto = Function::new(f.kind, &f.name);
                proto.linkage = f.linkage;
                proto.attributes = f.attributes.clone();
                proto.ret = f.ret.clone();
                proto.params = f.params.clone();
                proto.directives = f.directives.clone();
                proto.body = None;
                Some(Item::Func(Box::new(proto)))
            }
            other => Some(other.clone()),
        })
        .collect();
    Module { version: m.version, target: m.target.clone(), address_size: m.address_size, items }
}

/// Verifies `f` in its module and checks that its printed text parses back
/// to the same text: the messages of what failed.
fn validate(f: &Function, context: Option<&Module>, ctx: &ModuleContext) -> Result<(), Vec<String>> {
    let mut m = match context {
        Some(m) => m.clone(),
        None => Module { version: ctx.version, target: Vec::new(), address_size: Some(ctx.address_size), items: Vec::new() },
    };
    m.items.push(Item::Func(Box::new(f.clone())));
    let text = ptx_print::print_module(&m);
    let (parsed, _) = ptx_ir::verify::parse_and_verify("<after pass>", text.as_bytes()).map_err(|ds| ds.iter().filter(|d| d.severity == ptx_ir::source::Severity::Error).map(|d| format!("{}:{}: {}", d.line, d.col, d.message)).collect::<Vec<_>>())?;
    let mut again = String::new();
    if let Some(Item::Func(g)) = parsed.module.items.last() {
        ptx_print::write_function(&mut again, g);
    }
    let mut printed = String::new();
    ptx_print::write_function(&mut printed, f);
    if again != printed {
        return Err(vec!["the printed function does not parse back to the same text".to_string()]);
    }
    Ok(())
}

/// Statements below which a module's functions are optimized on the calling
/// thread: handing a few small functions to other threads costs more than
/// it saves (generated fuzz kernels, small JIT modules).
pub const PARALLEL_MIN_STATEMENTS: usize = 2_000;

/// Should the functions of `module` be optimized on all threads: more than
/// one body and enough statements in all.
fn worth_parallel(module: &Module) -> bool {
    let mut bodies = 0;
    let mut statements = 0;
    for item in &module.items {
        if let Item::Func(f) = item {
            if let Some(body) = &f.body {
                bodies += 1;
                statements += body.len();
            }
        }
    }
    bodies > 1 && statements >= PARALLEL_MIN_STATEMENTS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{Analyses, Preserves};
    use ptx_ir::ir::Stmt;

    /// A broken pass: drops every `.reg` declaration.
    fn drop_decls(f: &Function, _: &mut Analyses, _: &ModuleContext, _: OptLevel) -> Option<Function> {
        let mut g = f.clone();
        g.body.as_mut()?.retain(|s| !matches!(s, Stmt::Decl(_)));
        Some(g)
    }
    static BROKEN: Pass = Pass { name: "broken", description: "drops declarations", run: drop_decls, preserves: Preserves::Nothing, edit: None };

    const TEXT: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.func (.param .b32 r) f(.param .b32 a)\n{\n\t.reg .b32 %r<2>;\n\tld.param.b32 %r1, [a];\n\tst.param.b32 [r], %r1;\n\tret;\n}\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n\tcvta.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\tmov.b32 %r0, %r1;\n\t{\n\t.param .b32 a0;\n\t.param .b32 r0;\n\tst.param.b32 [a0], %r1;\n\tcall.uni (r0), f, (a0);\n\tld.param.b32 %r2, [r0];\n\t}\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";

    #[test]
    fn validation_names_the_pass_and_the_function() {
        let m = ptx_ir::parse_str(TEXT).unwrap();
        // The real pipeline validates (calls to `f` are checked against its prototype).
        let mut obs = Observer { validate_after_all: true, ..Observer::default() };
        Pipeline::of_level(OptLevel::O2).run_module(m.clone(), &mut obs);
        assert_eq!(obs.failure, None);
        assert_eq!(obs.steps, 2 * crate::passes::pipeline(OptLevel::O2).len() as u64);
        let broken = Pipeline { passes: vec![&BROKEN], level: OptLevel::O2, rounds: 1 };
        let mut obs = Observer { validate_after_all: true, ..Observer::default() };
        broken.run_module(m, &mut obs);
        let failure = obs.failure.expect("the broken pass is caught");
        assert_eq!((failure.pass, failure.function.as_str()), ("broken", "f"));
        assert!(failure.to_string().contains("after pass `broken` on function `f`"), "{failure}");
    }

    const REDUNDANT: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r1, %tid.x;\n\txor.b32 %r2, %r1, %r1;\n\tadd.s32 %r3, %r1, %r2;\n\tld.global.u32 %r4, [%rd2+4];\n\tst.global.u32 [%rd2], %r3;\n\tret;\n}\n";

    #[test]
    fn records_the_steps_that_change_a_function_and_the_rules_that_fired() {
        let m = ptx_ir::parse_str(REDUNDANT).unwrap();
        let pipeline = Pipeline::named(&["copy-prop", "egraph", "dce"], OptLevel::O2).unwrap();
        let mut obs = Observer { record_changes: true, keep_functions: true, ..Observer::default() };
        pipeline.run_module(m.clone(), &mut obs);
        let passes: Vec<_> = obs.changes.iter().map(|c| (c.step, c.pass, c.function.as_str())).collect();
        // copy-prop finds nothing; the engine folds x^x and x+0; dce drops the unused load.
        assert_eq!(passes, [(2, "egraph", "k"), (3, "dce", "k")]);
        let rules = &obs.changes[0].rules;
        assert!(rules.iter().any(|(r, n)| r == "self-zero" && *n >= 1), "{rules:?}");
        assert!(obs.changes[1].rules.is_empty());
        let (before, after) = &**obs.changes[1].before_after.as_ref().unwrap();
        let loads = |f: &Function| f.body.iter().flatten().filter(|s| matches!(s, Stmt::Instr(i) if i.opcode == ptx_ir::isa::Opcode::LD)).count();
        assert_eq!((loads(before), loads(after)), (2, 1));
        assert!(obs.missed.is_empty());
        // Nothing is recorded unless asked, and the output is the same.
        let mut quiet = Observer::default();
        let out = pipeline.run_module(m.clone(), &mut quiet);
        assert!(quiet.changes.is_empty());
        assert_eq!(out, pipeline.run_module(m, &mut Observer { record_changes: true, ..Observer::default() }));
    }

    #[test]
    fn functions_in_parallel_are_observed_as_in_order() {
        // Three functions, the middle one with nothing to change: run in
        // parallel (recording) and in order (validating forces it), the
        // output, the step numbers and the timings' counts agree.
        let k = |name: &str| REDUNDANT.split_once(".visible").unwrap().1.replace("entry k", &format!("entry {name}"));
        // Enough statements in all for the parallel path ([`worth_parallel`]).
        let quiet = format!(".visible .entry q(.param .u64 p)\n{{\n\t.reg .b32 %q<2>;\n{}\tret;\n}}\n", "\tadd.s32 %q1, %q1, 1;\n".repeat(PARALLEL_MIN_STATEMENTS));
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible{}{quiet}.visible{}", k("a"), k("b"));
        let m = ptx_ir::parse_str(&text).unwrap();
        assert!(worth_parallel(&m));
        let pipeline = Pipeline::of_level(OptLevel::O2);
        let mut parallel = Observer { record_changes: true, time_passes: true, ..Observer::default() };
        assert!(parallel.order_free());
        let out = pipeline.run_module(m.clone(), &mut parallel);
        let mut ordered = Observer { record_changes: true, time_passes: true, validate_after_all: true, ..Observer::default() };
        assert!(!ordered.order_free());
        assert_eq!(out, pipeline.run_module(m, &mut ordered));
        let steps = |o: &Observer| o.changes.iter().map(|c| (c.step, c.pass, c.function.clone())).collect::<Vec<_>>();
        assert_eq!(steps(&parallel), steps(&ordered));
        assert!(steps(&parallel).iter().any(|(_, _, f)| f == "b"), "{:?}", steps(&parallel));
        assert_eq!(parallel.steps, ordered.steps);
        let counts = |o: &Observer| o.timings.iter().map(|t| (t.pass, t.runs, t.changed)).collect::<Vec<_>>();
        assert_eq!(counts(&parallel), counts(&ordered));
    }

    #[test]
    fn small_modules_are_optimized_on_the_calling_thread() {
        // Two bodies, a dozen statements: not worth other threads.
        assert!(!worth_parallel(&ptx_ir::parse_str(TEXT).unwrap()));
    }

    #[test]
    fn in_place_forms_give_what_run_gives() {
        // Functions each in-place pass changes (a copy to propagate, dead
        // code, a branch to the next statement, unused declarations) and
        // ones it leaves alone.
        let dead = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry d(.param .u64 p)\n{\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<3>;\n\t.reg .pred %p<2>;\n\t.reg .b16 %h<3>;\n\t.local .align 4 .b8 buf[8];\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %r1;\n\tadd.s32 %r3, %r2, 1;\n\tmul.lo.s32 %r4, %r3, %r3;\n\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra L1;\n\tbra L1;\nL1:\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";
        let mut changed_by: Vec<&str> = Vec::new();
        for text in [TEXT, REDUNDANT, dead] {
            let m = ptx_ir::parse_str(text).unwrap();
            let ctx = ModuleContext::of_module(&m);
            for f in m.items.iter().filter_map(|i| if let Item::Func(f) = i { Some(f) } else { None }) {
                for pass in PASSES {
                    let Some(edit) = pass.edit else { continue };
                    let by_run = (pass.run)(f, &mut Analyses::default(), &ctx, OptLevel::O2);
                    let mut g = (**f).clone();
                    let changed = edit(&mut g, &mut Analyses::default(), &ctx, OptLevel::O2);
                    assert_eq!(changed, by_run.is_some(), "{} on {}", pass.name, f.name);
                    assert_eq!(&g, by_run.as_ref().unwrap_or(f), "{} on {}", pass.name, f.name);
                    if changed {
                        changed_by.push(pass.name);
                    }
                }
            }
        }
        for name in ["dce", "copy-prop", "simplify-cfg", "dead-decls"] {
            assert!(changed_by.contains(&name), "{name} changed nothing: {changed_by:?}");
        }
    }

    #[test]
    fn a_function_optimized_in_place_is_the_one_optimized_from_a_reference() {
        let dead = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry d(.param .u64 p)\n{\n\t.reg .b32 %r<9>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %r1;\n\tadd.s32 %r3, %r2, 1;\n\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";
        let mut changed = 0;
        for text in [TEXT, REDUNDANT, dead] {
            let m = ptx_ir::parse_str(text).unwrap();
            let ctx = ModuleContext::of_module(&m);
            for f in m.items.iter().filter_map(|i| if let Item::Func(f) = i { Some(f) } else { None }) {
                for level in [OptLevel::O1, OptLevel::O2, OptLevel::O3] {
                    let pipeline = Pipeline::of_level(level);
                    let given = (**f).clone();
                    let by_ref = pipeline.run_function(&given, &ctx, &mut Observer::default());
                    assert_eq!(&given, &**f, "the function given is left as it was");
                    let mut own = (**f).clone();
                    pipeline.run_function_in_place(&mut own, &ctx, &mut Observer::default());
                    assert_eq!(own, by_ref, "{} at {level:?}", f.name);
                    changed += usize::from(by_ref != given);
                }
            }
        }
        assert!(changed >= 3, "some pipeline changed something: {changed}");
    }

    #[test]
    fn analyses_are_reused_until_a_pass_changes_the_function() {
        let m = ptx_ir::parse_str(TEXT).unwrap();
        let Some(Item::Func(f)) = m.items.iter().find(|i| matches!(i, Item::Func(f) if f.name.as_ref() == "k")) else { panic!() };
        let ctx = ModuleContext::of_module(&m);
        let mut an = Analyses::default();
        // address-space and copy-prop look (a cvta, a copy) but change
        // nothing here: one computation serves both.
        for name in ["address-space", "copy-prop"] {
            assert!((by_name(name).unwrap().run)(f, &mut an, &ctx, OptLevel::O2).is_none());
        }
        assert_eq!((an.computed, an.reused), (1, 1));
        an.invalidate(Preserves::Cfg);
        let _ = an.cfg_dom(f);
        assert_eq!(an.computed, 1);
        an.invalidate(Preserves::Nothing);
        let _ = an.cfg_dom(f);
        assert_eq!(an.computed, 2);
    }
}
