//! Optimizing one input: parse, verify (unless `--no-verify`), run the
//! pipeline under the pass manager's observer (bisection, printing,
//! validation, timing, and the changes `--stats` and `--remarks` report),
//! and print PTX or the CFG. Gives what it found and the kernels and PTX
//! instructions before and after; writes nothing.

use crate::args::{Emit, OptimizeArgs};
use ptx_ir::ir::{FuncKind, Item, Module, Stmt};
use ptx_ir::source::Diagnostic;
use ptx_opt::passes::{Observer, Pipeline};

/// Kernels and instructions of one input (or, summed, of many).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// `.entry` functions with a body.
    pub kernels: usize,
    /// PTX instructions in every function body, before and after the passes.
    pub instrs_before: usize,
    pub instrs_after: usize,
}

impl std::ops::AddAssign for Counts {
    fn add_assign(&mut self, o: Counts) {
        self.kernels += o.kernels;
        self.instrs_before += o.instrs_before;
        self.instrs_after += o.instrs_after;
    }
}

/// What to write for one input: the optimized module, printed as it is
/// written (the whole text is never held), or a text already made.
#[derive(Debug)]
pub enum Output {
    Module(Module),
    Text(String),
}

impl Output {
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        match self {
            Output::Module(m) => ptx_print::write_module(m, w),
            Output::Text(t) => w.write_all(t.as_bytes()),
        }
    }
}

/// What optimizing one input gave.
#[derive(Debug, Default)]
pub struct Outcome {
    /// What to write; `None` when the input failed, and with `--verify`.
    pub output: Option<Output>,
    /// The parse error, or the verifier's errors and warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// What the observer logged (bisection steps, functions after each
    /// pass), then the timing table with `--time-passes`.
    pub log: Vec<String>,
    /// A pass whose output failed validation (`--validate-after-all`).
    pub validation_failure: Option<String>,
    pub failed: bool,
    pub counts: Counts,
    /// With `--stats` or `--stats-file`.
    pub stats: Option<crate::stats::FileStats>,
    /// With `--remarks` or `--remarks-missed`, in step order.
    pub remarks: Vec<crate::remarks::Remark>,
}

/// The pipeline the options ask for: `--passes`, or the level's. `Err` for
/// an unknown pass name (a usage error).
pub fn pipeline(o: &OptimizeArgs) -> Result<Pipeline, String> {
    let level = o.level.opt_level();
    match &o.passes {
        Some(names) => Pipeline::named(&names.iter().map(|s| s.trim()).filter(|s| !s.is_empty()).collect::<Vec<_>>(), level),
        None => Ok(Pipeline::of_level(level)),
    }
}

/// Kernels and instructions in a module.
fn count(m: &Module) -> (usize, usize) {
    let (mut kernels, mut instrs) = (0, 0);
    for item in &m.items {
        let Item::Func(f) = item else { continue };
        let Some(body) = &f.body else { continue };
        kernels += usize::from(f.kind == FuncKind::Entry);
        instrs += body.iter().filter(|s| matches!(s, Stmt::Instr(_))).count();
    }
    (kernels, instrs)
}

/// An input parsed and verified: the module the passes start from, and
/// what `--stats` and `--remarks` need of the input. It holds no source
/// text and no positions, so the caller can free the input before the
/// passes run.
pub struct Verified {
    module: Module,
    sizes_before: Option<Vec<(String, FuncKind, crate::stats::Size)>>,
    input_lines: Option<crate::remarks::InputLines>,
}

/// Optimizes `bytes` (named `name` in diagnostics) as `o` says. With
/// `leak`, what is not given back is not freed (the process is about to
/// end: freeing a large module piece by piece is measurable time for
/// nothing); the caller does the same with the output.
pub fn optimize_text(name: &str, bytes: &[u8], o: &OptimizeArgs, leak: bool) -> Outcome {
    let mut out = Outcome::default();
    if let Some(verified) = verify_text(name, bytes, o, &mut out) {
        optimize_verified(name, verified, o, leak, &mut out);
    }
    out
}

/// The first half of [`optimize_text`]: parses and verifies `bytes`,
/// recording the diagnostics and counts in `out`. `None` when the input
/// failed, and with `--verify`.
pub fn verify_text(name: &str, bytes: &[u8], o: &OptimizeArgs, out: &mut Outcome) -> Option<Verified> {
    let parsed = match ptx_ir::parse(name, bytes) {
        Ok(p) => p,
        Err(d) => {
            out.diagnostics.push(d);
            out.failed = true;
            return None;
        }
    };
    // The optimizer reasons only about verified input: an error stops here.
    if !o.no_verify {
        out.diagnostics = ptx_ir::verify::verify_parsed(&parsed, name, bytes);
        if out.diagnostics.iter().any(Diagnostic::is_error) {
            out.failed = true;
            return None;
        }
    }
    let (kernels, before) = count(&parsed.module);
    out.counts = Counts { kernels, instrs_before: before, instrs_after: before };
    if o.verify {
        return None;
    }
    let sizes_before = wants_stats(o).then(|| crate::stats::sizes(&parsed.module));
    let input_lines = wants_remarks(o).then(|| crate::remarks::InputLines::new(&parsed.module, &parsed.source_map, bytes));
    Some(Verified { module: parsed.module, sizes_before, input_lines })
}

fn wants_stats(o: &OptimizeArgs) -> bool {
    o.stats.is_some() || o.stats_file.is_some()
}

fn wants_remarks(o: &OptimizeArgs) -> bool {
    o.remarks.is_some() || o.remarks_missed
}

/// The second half of [`optimize_text`]: runs the pipeline over a verified
/// input and records in `out` what to write and what happened.
pub fn optimize_verified(name: &str, verified: Verified, o: &OptimizeArgs, leak: bool, out: &mut Outcome) {
    let Verified { module, sizes_before, input_lines } = verified;
    let pipeline = match pipeline(o) {
        Ok(p) => p,
        Err(m) => {
            out.validation_failure = Some(m);
            out.failed = true;
            return;
        }
    };
    let filter = match crate::remarks::Filter::new(o.remarks.as_deref().unwrap_or("")) {
        Ok(f) => f,
        Err(m) => {
            out.validation_failure = Some(m);
            out.failed = true;
            return;
        }
    };
    let mut obs = Observer::default();
    obs.bisect_limit = o.bisect_limit;
    obs.print_after_all = o.print_after_all;
    obs.validate_after_all = o.validate_after_all;
    obs.time_passes = o.time_passes;
    obs.record_changes = wants_stats(o) || wants_remarks(o);
    obs.keep_functions = o.remarks.is_some();
    let module = pipeline.run_module(module, &mut obs);
    out.log = std::mem::take(&mut obs.log);
    if o.time_passes {
        out.log.push(obs.timing_table().trim_end().to_string());
    }
    if let Some(failure) = &obs.failure {
        out.validation_failure = Some(format!("validation failed {failure}"));
        out.failed = true;
        return;
    }
    out.counts.instrs_after = count(&module).1;
    if let Some(before) = &sizes_before {
        out.stats = Some(crate::stats::collect(name, before, &module, &obs.changes, &obs.missed));
    }
    if let Some(lines) = &input_lines {
        out.remarks = crate::remarks::remarks(&obs.changes, &obs.missed, lines, &filter, o.remarks_missed, o.remarks.is_some());
    }
    out.output = Some(match o.emit {
        Emit::Ptx => Output::Module(module),
        Emit::CfgDot => {
            let dot = ptx_ir::cfg::module_dot(&module, &|f, s| match s {
                Stmt::Instr(i) => {
                    let mut t = String::new();
                    ptx_print::write_instruction(&mut t, f, i);
                    t
                }
                _ => String::new(),
            });
            if leak {
                std::mem::forget(module);
            }
            Output::Text(dot)
        }
    });
}
