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
    edit: Some(edit),
};

/// The engine's configuration at `level`; `None` at `-O0` (the pass does nothing).
fn config(ctx: &ModuleContext, level: OptLevel) -> Option<Config> {
    let limits = match level {
        OptLevel::O0 => return None,
        OptLevel::O1 => Limits::O1,
        OptLevel::O2 => Limits::O2,
        OptLevel::O3 => Limits::O3,
    };
    Some(Config { dialect: ctx.dialect, target: Target { sm: ctx.sm, ptx: (ctx.version.major, ctx.version.minor) }, limits })
}

fn run(f: &Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> Option<Function> {
    let config = config(ctx, level)?;
    let given = analyses.values(f);
    let (g, report) = engine::optimize_with(f, &config, Some(given));
    analyses.engine_report = Some(report);
    g
}

/// [`run`] in place: the statements the engine keeps move into its output
/// instead of being copied.
fn edit(f: &mut Function, analyses: &mut Analyses, ctx: &ModuleContext, level: OptLevel) -> bool {
    let Some(config) = config(ctx, level) else { return false };
    let given = analyses.values(f);
    let (changed, report) = engine::optimize_in_place(f, &config, Some(given));
    analyses.engine_report = Some(report);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn egraph(body: &str) -> (Function, Option<Function>) {
        let text = format!(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{{\n{body}\n}}\n");
        let m = ptx_ir::parse_str(&text).unwrap();
        let ctx = ModuleContext::of_module(&m);
        let ptx_ir::ir::Item::Func(f) = &m.items[0] else { panic!() };
        let g = run(f, &mut Analyses::default(), &ctx, OptLevel::O2);
        ((**f).clone(), g)
    }

    /// A function the engine writes back as it was is no change (`None`),
    /// one it rewrites is given back.
    #[test]
    fn unchanged_is_none_changed_is_some() {
        let (_, g) = egraph(".reg .b32 %r<4>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            mul.lo.u32 %r2, %r1, %r1;
            st.global.u32 [%rd1], %r2;
            ret;");
        assert!(g.is_none(), "nothing to rewrite: {:?}", g.map(|g| g.body));
        let (f, g) = egraph(".reg .b32 %r<4>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            add.u32 %r2, %r1, 0;
            mul.lo.u32 %r3, %r2, %r2;
            st.global.u32 [%rd1], %r3;
            ret;");
        let g = g.expect("`x + 0` is `x`");
        assert_ne!(g, f);
        assert!(g.instructions().count() < f.instructions().count());
    }

    /// A value that needs a new register (a constant the store reads, whose
    /// instruction folded away) gets a declaration at the top, made in the
    /// copy of the input's body taken on the first new register; the input's
    /// other statements are moved out of that copy as they were.
    #[test]
    fn new_register_declared_with_the_input_statements_kept() {
        let (f, g) = egraph(".reg .b32 %r<5>; .reg .b64 %rd<2>;
            ld.param.u64 %rd1, [p];
            ld.param.u32 %r1, [n];
            and.b32 %r2, %r1, 0;
            st.global.u32 [%rd1], %r2;
            ret;");
        let g = g.expect("`x & 0` is 0");
        let body = g.body.as_ref().unwrap();
        // The store reads the constant from a new register, declared first.
        assert_eq!(g.regs.len(), f.regs.len() + 1);
        assert_eq!(body.len(), f.body.as_ref().unwrap().len() + 1);
        assert!(matches!(&body[0], ptx_ir::ir::Stmt::Decl(d) if d.name(0).is_some_and(|n| n.range == Some(1))));
        // The input's loads and `ret` are kept as they were, in order (the
        // store reads another register).
        let kept = |b: &[ptx_ir::ir::Stmt]| b.iter().filter(|s| matches!(s, ptx_ir::ir::Stmt::Instr(i) if matches!(i.opcode, ptx_ir::isa::Opcode::LD | ptx_ir::isa::Opcode::RET))).cloned().collect::<Vec<_>>();
        assert_eq!(kept(body), kept(f.body.as_ref().unwrap()));
        // Every register the output names is declared by it.
        let printed = ptx_print::print_module(&ptx_ir::ir::Module { version: ptx_ir::ir::Version { major: 8, minor: 0 }, target: vec!["sm_80".into()], address_size: Some(64), items: vec![ptx_ir::ir::Item::Func(Box::new(g))] });
        ptx_ir::verify::parse_and_verify("<out>", printed.as_bytes()).unwrap_or_else(|_| panic!("the output verifies:\n{printed}"));
    }
}
