//! `egraph`: the e-graph engine ([`crate::engine`]) as a pass. The
//! engine's report (rules fired, why a function was left alone) goes to
//! the pass manager through [`Analyses::engine_report`].

use super::{Analyses, Pass, Preserves};
use crate::engine::{self, Config, Limits};
use crate::rules::Target;
use crate::{ModuleContext, OptLevel};
use ptx_ir::ir::Function;

pub const PASS: Pass = Pass {
    name: "egraph",
    description: "equality saturation over pure instructions: folding, GVN, dead values, strength reduction, lop3",
    run,
    preserves: Preserves::Nothing,
};

fn run(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> Option<Function> {
    let limits = match level {
        OptLevel::O0 => return None,
        OptLevel::O1 => Limits::O1,
        OptLevel::O2 => Limits::O2,
        OptLevel::O3 => Limits::O3,
    };
    let config = Config { dialect: ctx.dialect, target: Target { sm: ctx.sm, ptx: (ctx.version.major, ctx.version.minor) }, limits };
    let given = analyses.values(f);
    let (g, report) = engine::optimize_with(f, &config, Some(given));
    analyses.engine_report = Some(report);
    // A function written back as it was is no change: the pass manager
    // keeps the analyses of `f`, and an -O3 round in which no other pass
    // changes anything is the last.
    g.filter(|g| g != f)
}
