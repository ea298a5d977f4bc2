//! `--stats`: what optimizing one input did, per function: PTX
//! instructions and declared registers before and after, the passes that
//! changed the function (how many times each), and the e-graph rules that
//! fired in the runs that changed it (how many times each). Collected
//! from the pass manager's observer ([`ptx_opt::passes::manager::Change`]);
//! written as a table or as one JSON document.

use ptx_ir::ir::{FuncKind, Function, Item, Module, Stmt};
use ptx_ir::isa::StateSpace;
use ptx_opt::passes::manager::{Change, Missed};
use serde_json::json;

/// The sizes of one function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// `Stmt::Instr` statements of the body.
    pub instructions: usize,
    /// Registers the body's `.reg` declarations declare (`%r<8>` is 8).
    pub registers: u64,
}

impl Size {
    pub fn of(f: &Function) -> Size {
        let mut s = Size::default();
        for stmt in f.body.iter().flatten() {
            match stmt {
                Stmt::Instr(_) => s.instructions += 1,
                Stmt::Decl(d) if d.space() == StateSpace::Reg => s.registers += d.names().map(|n| u64::from(n.range.unwrap_or(1))).sum::<u64>(),
                _ => {}
            }
        }
        s
    }
}

/// The functions with bodies of a module, in order, with their sizes.
pub fn sizes(m: &Module) -> Vec<(String, FuncKind, Size)> {
    m.items
        .iter()
        .filter_map(|it| match it {
            Item::Func(f) if f.body.is_some() => Some((f.name.to_string(), f.kind, Size::of(f))),
            _ => None,
        })
        .collect()
}

/// One function's statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionStats {
    pub name: String,
    pub kernel: bool,
    pub before: Size,
    /// `None`: the function is gone (an internal function nothing calls).
    pub after: Option<Size>,
    /// Passes that changed the function, in first-change order, with how many steps did.
    pub passes: Vec<(&'static str, u64)>,
    /// E-graph rules that fired in the runs that changed the function.
    pub rules: Vec<(String, usize)>,
    /// E-graph runs whose rules fired but that left the function as it was.
    pub declined: u64,
}

/// The statistics of one input.
#[derive(Clone, Debug, PartialEq)]
pub struct FileStats {
    pub file: String,
    pub functions: Vec<FunctionStats>,
}

fn add<K: PartialEq>(list: &mut Vec<(K, usize)>, key: K, n: usize) {
    match list.iter_mut().find(|(k, _)| *k == key) {
        Some(e) => e.1 += n,
        None => list.push((key, n)),
    }
}

/// Puts together the sizes before, the module after, and what the observer recorded.
pub fn collect(file: &str, before: &[(String, FuncKind, Size)], after: &Module, changes: &[Change], missed: &[Missed]) -> FileStats {
    let after_sizes = sizes(after);
    let functions = before
        .iter()
        .map(|(name, kind, size)| {
            let mut passes: Vec<(&'static str, usize)> = Vec::new();
            let mut rules: Vec<(String, usize)> = Vec::new();
            for c in changes.iter().filter(|c| c.function == *name) {
                add(&mut passes, c.pass, 1);
                for (r, n) in &c.rules {
                    add(&mut rules, r.clone(), *n);
                }
            }
            FunctionStats {
                name: name.clone(),
                kernel: *kind == FuncKind::Entry,
                before: *size,
                after: after_sizes.iter().find(|(n, _, _)| n == name).map(|(_, _, s)| *s),
                passes: passes.into_iter().map(|(p, n)| (p, n as u64)).collect(),
                rules,
                declined: missed.iter().filter(|m| m.function == *name).count() as u64,
            }
        })
        .collect();
    FileStats { file: file.to_string(), functions }
}

fn pair(before: u64, after: Option<u64>) -> String {
    match after {
        Some(a) if a == before => format!("{before} -> {a}"),
        Some(a) => format!("{before} -> {a} ({:+})", a as i64 - before as i64),
        None => format!("{before} -> removed"),
    }
}

fn list<K: std::fmt::Display>(items: &[(K, impl std::fmt::Display)]) -> String {
    if items.is_empty() {
        return "-".to_string();
    }
    items.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
}

impl FileStats {
    /// Sizes summed over the functions (a removed function counts 0 after).
    pub fn total(&self) -> (Size, Size) {
        let mut b = Size::default();
        let mut a = Size::default();
        for f in &self.functions {
            b.instructions += f.before.instructions;
            b.registers += f.before.registers;
            let after = f.after.unwrap_or_default();
            a.instructions += after.instructions;
            a.registers += after.registers;
        }
        (b, a)
    }

    /// The table: a row per function (instructions, registers, the passes
    /// that changed it), a total, then the rules that fired, per function.
    pub fn text(&self) -> String {
        let name_w = self.functions.iter().map(|f| f.name.len()).max().unwrap_or(0).max(8);
        let mut out = format!("statistics for {}\n", self.file);
        out.push_str(&format!("{:<name_w$}  {:<22}  {:<22}  changed by\n", "function", "instructions", "registers"));
        for f in &self.functions {
            let instrs = pair(f.before.instructions as u64, f.after.map(|a| a.instructions as u64));
            let regs = pair(f.before.registers, f.after.map(|a| a.registers));
            out.push_str(&format!("{:<name_w$}  {instrs:<22}  {regs:<22}  {}\n", f.name, list(&f.passes)));
        }
        let (b, a) = self.total();
        let instrs = pair(b.instructions as u64, Some(a.instructions as u64));
        let regs = pair(b.registers, Some(a.registers));
        out.push_str(format!("{:<name_w$}  {instrs:<22}  {regs}", "total").trim_end());
        out.push('\n');
        let fired: Vec<&FunctionStats> = self.functions.iter().filter(|f| !f.rules.is_empty() || f.declined > 0).collect();
        if !fired.is_empty() {
            out.push_str("e-graph rules fired (in runs that changed the function)\n");
            for f in fired {
                out.push_str(&format!("{:<name_w$}  {}", f.name, list(&f.rules)));
                if f.declined > 0 {
                    out.push_str(&format!("  ({} run{} fired rules but kept the input)", f.declined, if f.declined == 1 { "" } else { "s" }));
                }
                out.push('\n');
            }
        }
        out
    }

    /// One JSON document.
    pub fn json(&self) -> serde_json::Value {
        let size = |s: Option<Size>| s.map_or(serde_json::Value::Null, |s| json!({"instructions": s.instructions, "registers": s.registers}));
        let functions: Vec<serde_json::Value> = self
            .functions
            .iter()
            .map(|f| {
                json!({
                    "name": f.name,
                    "kernel": f.kernel,
                    "before": size(Some(f.before)),
                    "after": size(f.after),
                    "passes": f.passes.iter().map(|(p, n)| json!({"pass": p, "changes": n})).collect::<Vec<_>>(),
                    "rules": f.rules.iter().map(|(r, n)| json!({"rule": r, "count": n})).collect::<Vec<_>>(),
                    "egraph_runs_declined": f.declined,
                })
            })
            .collect();
        let (b, a) = self.total();
        json!({"file": self.file, "functions": functions, "total": {"before": size(Some(b)), "after": size(Some(a))}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_instructions_and_declared_registers() {
        let m = ptx_ir::parse_str(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred p, q;\n\tmov.u32 %r1, 1;\n$L:\n\tret;\n}\n").unwrap();
        assert_eq!(sizes(&m), [("k".to_string(), FuncKind::Entry, Size { instructions: 2, registers: 6 })]);
    }

    #[test]
    fn a_table_row_per_function_and_the_rules() {
        let s = FileStats {
            file: "k.ptx".into(),
            functions: vec![FunctionStats {
                name: "k".into(),
                kernel: true,
                before: Size { instructions: 10, registers: 8 },
                after: Some(Size { instructions: 7, registers: 8 }),
                passes: vec![("egraph", 1), ("dce", 2)],
                rules: vec![("self-zero".into(), 3)],
                declined: 0,
            }],
        };
        let t = s.text();
        assert!(t.contains("10 -> 7 (-3)") && t.contains("8 -> 8") && t.contains("egraph 1, dce 2") && t.contains("self-zero 3"), "{t}");
        assert_eq!(s.json()["functions"][0]["rules"][0]["count"], 3);
    }
}
