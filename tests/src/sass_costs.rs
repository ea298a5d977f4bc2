//! The measurements behind the SASS cost table (`ptx-opt/src/cost/sass_costs.tsv`):
//! one micro-kernel per pure instruction instance, assembled by ptxas `-O3`
//! for each target family, its SASS instructions counted against a baseline
//! kernel of the same shape without the instruction.
//!
//! The instances are the generator's catalog ([`crate::gen::catalog`]: every
//! opcode the evaluator knows, with its modifiers and types, already checked
//! to parse, verify and evaluate) plus the carry-chain instructions the
//! generator writes itself (`add.cc`, `addc`, `madc.hi.cc` ...). Every
//! operand is a register (`lop3`'s truth table is the one immediate the
//! syntax demands).
//!
//! A micro-kernel loads each source with `ld.volatile.global` (the load
//! stays, and ptxas cannot fold the value), runs the instruction and stores
//! each result with `st.global`. Its baseline has the same loads and stores,
//! storing zero instead of a result. A predicate source is loaded as a word
//! and compared with zero, and a store guarded by it (in both kernels) keeps
//! it alive; a predicate result guards its store. An instruction that reads
//! the carry flag is preceded, in both kernels, by an `add.cc` whose result
//! is stored. Both end with one more unguarded store (else ptxas turns a
//! guarded store at the end into a guarded `EXIT`). The cost is the
//! difference of the two counts. Several instances with the same head
//! (`setp` with one result or two, video instructions with different byte
//! selectors) cost the cheapest one, the head in its plainest use: keeping
//! two guarded stores costs ptxas a register move or two, an artifact of the
//! kernel's shape rather than of the instruction.
//!
//! All kernels of a family go into one module and one ptxas run (ptxas
//! compiles each entry on its own); instances ptxas rejects for the family
//! (`.bf16` arithmetic before sm_80 ...) are dropped at the line ptxas names
//! and the module is assembled again. Counting: nvdisasm from sm_75 on (the
//! latency class comes from the SASS opcodes the instruction adds), the
//! bytes of the `.text` sections before ([`crate::sass_raw`]). The bytes
//! give the count everywhere: nvdisasm 13 prints a few valid sm_75
//! instructions as blank lines (`F2FP` with `.SATFINITE`), so from sm_75 on
//! it must show no more instructions than the bytes hold, and the ones it
//! leaves blank count as ALU instructions.
//!
//! With `SASS_COSTS_DUMP=DIR` in the environment, [`measure`] writes each
//! family's module (`DIR/sm_80.ptx`) and the counts of every kernel and its
//! baseline (`DIR/sm_80.instances.tsv`), to look at the SASS of one entry.

use crate::gen::{catalog, probe_decl, How, Tmpl};
use crate::ptxas::{assemble_with, disassemble, parse_nvdisasm, text_sections, Assembler};
use crate::sass_raw;
use ptx_ir::isa::ScalarType as T;
use ptx_opt::cost::{arch_number, Cell, LatencyClass, Row, Table};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// A target family of the table: the arch, the PTX version its kernels
/// declare, and the ptxas that assembles them.
#[derive(Clone, Copy, Debug)]
pub struct Family {
    pub name: &'static str,
    pub version: &'static str,
    pub assembler: Assembler,
}

/// The measured families, oldest first: Maxwell, Volta, Turing, Ampere,
/// Hopper (CUDA 12.9 ptxas) and Blackwell (CUDA 13 ptxas).
pub const FAMILIES: [Family; 6] = [
    Family { name: "sm_52", version: "8.3", assembler: Assembler::Ptxas12 },
    Family { name: "sm_70", version: "8.3", assembler: Assembler::Ptxas12 },
    Family { name: "sm_75", version: "8.3", assembler: Assembler::Ptxas12 },
    Family { name: "sm_80", version: "8.3", assembler: Assembler::Ptxas12 },
    Family { name: "sm_90", version: "8.3", assembler: Assembler::Ptxas12 },
    Family { name: "sm_100", version: "8.7", assembler: Assembler::Ptxas13 },
];

/// A family by name.
pub fn family(name: &str) -> Option<Family> {
    FAMILIES.iter().copied().find(|f| f.name == name)
}

/// One operand of a measured instruction.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Operand {
    /// A register of this declaration type, with a selector (`.b1`, `.h0` of the video instructions).
    Reg(T, &'static str),
    Pred,
    Imm(String),
}

/// One instruction instance to measure.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The head as ptx-print prints it (the table's key).
    pub head: String,
    /// The head as the catalog writes it.
    written: String,
    /// Result declaration types (`Pred` for predicates).
    dsts: Vec<T>,
    /// Two results written `d|p`.
    pair: bool,
    srcs: Vec<Operand>,
    /// The type of the `add.cc` that sets the carry flag before the instruction.
    carry_in: Option<T>,
}

impl Entry {
    fn from_template(t: &Tmpl) -> Entry {
        let srcs = t
            .srcs
            .iter()
            .map(|s| match s.how {
                How::ImmBelow(n) => Operand::Imm(format!("{}", 0x96 % n)),
                _ if s.ty == T::Pred => Operand::Pred,
                _ => Operand::Reg(probe_decl(s.ty), s.sel),
            })
            .collect();
        assert!(t.dsel.is_empty(), "{}: destination selectors are not measured", t.head);
        Entry {
            head: String::new(),
            written: t.head.clone(),
            dsts: t.dsts.iter().map(|&d| if d == T::Pred { T::Pred } else { probe_decl(d) }).collect(),
            pair: t.pair,
            srcs,
            carry_in: None,
        }
    }

    /// The instruction line, registers named as [`Entry::kernel`] declares them.
    fn instruction(&self) -> String {
        let dsts: Vec<String> = (0..self.dsts.len()).map(|k| format!("%d{k}")).collect();
        let mut ops = if self.pair { vec![dsts.join("|")] } else { dsts };
        for (k, s) in self.srcs.iter().enumerate() {
            ops.push(match s {
                Operand::Reg(_, sel) => format!("%s{k}{sel}"),
                Operand::Pred => format!("%p{k}"),
                Operand::Imm(v) => v.clone(),
            });
        }
        format!("{} {};", self.written, ops.join(", "))
    }

    /// The kernel `name`: with the instruction (`measured`) or its baseline.
    /// Also returns the instruction's index among the body's instructions.
    fn kernel(&self, name: &str, measured: bool) -> (String, usize) {
        let bits = |t: T| if t == T::Pred { 32 } else { t.bits() };
        let mut decls = String::from("\t.reg .u64 %ad<2>;\n\t.reg .b32 %one;\n\t.reg .b16 %z16;\n\t.reg .b32 %z32;\n\t.reg .b64 %z64;\n");
        let mut body: Vec<String> = vec!["ld.param.u64 %ad0, [in];".into(), "ld.param.u64 %ad1, [out];".into(), "mov.b32 %one, 1;".into()];
        for (k, s) in self.srcs.iter().enumerate() {
            match s {
                Operand::Reg(t, _) => {
                    let _ = writeln!(decls, "\t.reg {} %s{k};", t.text());
                    body.push(format!("ld.volatile.global.b{} %s{k}, [%ad0+{}];", t.bits(), 16 * k));
                }
                Operand::Pred => {
                    let _ = writeln!(decls, "\t.reg .b32 %pw{k};\n\t.reg .pred %p{k};");
                    body.push(format!("ld.volatile.global.b32 %pw{k}, [%ad0+{}];", 16 * k));
                    body.push(format!("setp.ne.b32 %p{k}, %pw{k}, 0;"));
                    body.push(format!("@%p{k} st.global.b32 [%ad1+{}], %one;", 256 + 16 * k));
                }
                Operand::Imm(_) => {}
            }
        }
        if let Some(t) = self.carry_in {
            let _ = writeln!(decls, "\t.reg {} %c<3>;", t.text());
            body.push(format!("ld.volatile.global.b{} %c1, [%ad0+128];", t.bits()));
            body.push(format!("ld.volatile.global.b{} %c2, [%ad0+144];", t.bits()));
            body.push(format!("add.cc{} %c0, %c1, %c2;", t.text()));
            body.push(format!("st.global.b{} [%ad1+128], %c0;", t.bits()));
        }
        let at = body.len();
        if measured {
            body.push(self.instruction());
        }
        for (k, &d) in self.dsts.iter().enumerate() {
            let _ = writeln!(decls, "\t.reg {} %d{k};", d.text());
            let addr = format!("[%ad1+{}]", 16 * k);
            body.push(match (d == T::Pred, measured) {
                (true, true) => format!("@%d{k} st.global.b32 {addr}, %one;"),
                (true, false) => format!("st.global.b32 {addr}, %one;"),
                (false, true) => format!("st.global.b{} {addr}, %d{k};", bits(d)),
                (false, false) => {
                    let b = bits(d);
                    format!("mov.b{b} %z{b}, 0;\n\tst.global.b{b} {addr}, %z{b};")
                }
            });
        }
        // A last unguarded store: without it ptxas turns a guarded store at
        // the end into a guarded `EXIT`, an artifact of the kernel's shape.
        body.push("st.global.b32 [%ad1+512], %one;".into());
        body.push("ret;".into());
        let mut s = format!(".visible .entry {name}(.param .u64 in, .param .u64 out)\n{{\n{decls}");
        for l in body {
            let _ = writeln!(s, "\t{l}");
        }
        s.push_str("}\n");
        (s, at)
    }
}

/// The carry-chain instances (the catalog leaves them to the generator).
fn carry_entries() -> Vec<Entry> {
    let mut out = Vec::new();
    for ty in [T::U32, T::S32, T::U64, T::S64] {
        let producer = if ty.bits() == 64 { T::U64 } else { T::U32 };
        let heads = [
            ("add.cc", false),
            ("sub.cc", false),
            ("mad.lo.cc", false),
            ("mad.hi.cc", false),
            ("addc", true),
            ("addc.cc", true),
            ("subc", true),
            ("subc.cc", true),
            ("madc.lo", true),
            ("madc.hi", true),
            ("madc.lo.cc", true),
            ("madc.hi.cc", true),
        ];
        for (op, carry_in) in heads {
            let n = if op.starts_with("mad") { 3 } else { 2 };
            out.push(Entry {
                head: String::new(),
                written: format!("{op}{}", ty.text()),
                dsts: vec![ty],
                pair: false,
                srcs: vec![Operand::Reg(ty, ""); n],
                carry_in: carry_in.then_some(producer),
            });
        }
    }
    out
}

/// Every instance to measure, with its printed head (from parsing the kernels).
pub fn entries() -> Vec<Entry> {
    let mut all: Vec<Entry> = catalog().templates.iter().map(Entry::from_template).collect();
    all.extend(carry_entries());
    let mut text = format!(".version 8.3\n.target sm_90\n.address_size 64\n\n");
    let mut at = Vec::new();
    for (k, e) in all.iter().enumerate() {
        let (s, i) = e.kernel(&format!("c{k}"), true);
        text.push_str(&s);
        at.push(i);
    }
    let parsed = ptx_ir::parse("sass-costs.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("the measured kernels do not parse: {d}"));
    let funcs = parsed.module.items.iter().filter_map(|i| match i {
        ptx_ir::ir::Item::Func(f) => Some(f),
        _ => None,
    });
    let mut n = 0;
    for ((e, f), i) in all.iter_mut().zip(funcs).zip(&at) {
        let ins = f.body.as_ref().expect("kernel body").iter().filter_map(|s| match s {
            ptx_ir::ir::Stmt::Instr(x) => Some(&**x),
            _ => None,
        });
        let ins = ins.clone().nth(*i).expect("the measured instruction");
        e.head = ptx_print::instruction_head(ins);
        n += 1;
    }
    assert_eq!(n, all.len());
    all
}

/// One family's measurements.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    /// Per head: the cost (the cheapest instance).
    pub cells: BTreeMap<String, Cell>,
    /// Heads ptxas rejects for the family, with its message.
    pub rejected: BTreeMap<String, String>,
    /// Heads whose SASS has instructions nvdisasm printed blank.
    pub unprinted: Vec<String>,
}

/// The opcode recorded for an instruction nvdisasm leaves blank.
pub const UNPRINTED: &str = "?";

/// What one kernel's SASS is: the opcodes (from nvdisasm, sm_75 on) or only a count.
struct Sass {
    count: usize,
    opcodes: Option<Vec<String>>,
}

/// Measures `entries` on `fam`. Errors: ptxas failing outside the
/// instructions, or the two ways of counting disagreeing.
pub fn measure(entries: &[Entry], fam: Family) -> Result<Measured, String> {
    let mut alive: Vec<usize> = (0..entries.len()).collect();
    let mut rejected: BTreeMap<String, String> = BTreeMap::new();
    for _round in 0..64 {
        // The module: baselines (one per distinct shape), then the measured kernels.
        let mut text = format!(".version {}\n.target {}\n.address_size 64\n\n", fam.version, fam.name);
        let mut owner: Vec<Option<usize>> = vec![None; text.lines().count()];
        let mut baselines: HashMap<String, String> = HashMap::new();
        let mut baseline_of: Vec<String> = Vec::new();
        for &k in &alive {
            let (b, _) = entries[k].kernel("BASE", false);
            let next = baselines.len();
            let name = baselines.entry(b.clone()).or_insert_with(|| format!("b{next}")).clone();
            if name == format!("b{next}") {
                let s = b.replacen("BASE", &name, 1);
                owner.extend(std::iter::repeat(None).take(s.lines().count()));
                text.push_str(&s);
            }
            baseline_of.push(name);
        }
        for &k in &alive {
            let (s, _) = entries[k].kernel(&format!("c{k}"), true);
            owner.extend(std::iter::repeat(Some(k)).take(s.lines().count()));
            text.push_str(&s);
        }
        if let Some(d) = std::env::var_os("SASS_COSTS_DUMP") {
            let _ = std::fs::write(std::path::Path::new(&d).join(format!("{}.ptx", fam.name)), &text);
        }
        let assembled = match assemble_with(&text, fam.name, fam.assembler) {
            Ok(a) => a,
            Err(e) => {
                let mut dropped = Vec::new();
                for (line, msg) in error_lines(&e) {
                    match owner.get(line.wrapping_sub(1)) {
                        Some(Some(k)) => {
                            rejected.entry(entries[*k].head.clone()).or_insert(msg);
                            dropped.push(*k);
                        }
                        _ => return Err(format!("{}: ptxas fails outside the measured instructions (line {line}): {e}", fam.name)),
                    }
                }
                if dropped.is_empty() {
                    return Err(format!("{}: ptxas fails without naming a line: {e}", fam.name));
                }
                alive.retain(|k| !dropped.contains(k));
                continue;
            }
        };
        let sass = count(&assembled.cubin, fam)?;
        let mut cells: BTreeMap<String, Cell> = BTreeMap::new();
        let mut unprinted = Vec::new();
        let mut instances = String::from("kernel\tbaseline\thead\tinstruction\tkernel_sass\tbaseline_sass\n");
        for (&k, base) in alive.iter().zip(&baseline_of) {
            let name = format!("c{k}");
            let (m, b) = (&sass[&name], &sass[base]);
            let _ = writeln!(instances, "{name}\t{base}\t{}\t{}\t{}\t{}", entries[k].head, entries[k].instruction(), m.count, b.count);
            let sass_n = m.count.checked_sub(b.count).ok_or_else(|| {
                format!("{}: `{}` has fewer SASS instructions ({}) than its baseline ({})", fam.name, entries[k].written, m.count, b.count)
            })? as u32;
            let class = match (&m.opcodes, &b.opcodes) {
                (Some(m), Some(b)) => Some(if sass_n == 0 { LatencyClass::Free } else { class_of_added(m, b) }),
                _ => None,
            };
            if m.opcodes.as_ref().is_some_and(|o| o.iter().any(|x| x == UNPRINTED)) {
                unprinted.push(entries[k].head.clone());
            }
            let cell = Cell { sass: sass_n, class };
            let slot = cells.entry(entries[k].head.clone()).or_insert(cell);
            if (cell.sass, cell.class) < (slot.sass, slot.class) {
                *slot = cell;
            }
        }
        // A head rejected in one instance but measured in another is measured.
        rejected.retain(|h, _| !cells.contains_key(h));
        unprinted.dedup();
        if let Some(d) = std::env::var_os("SASS_COSTS_DUMP") {
            let _ = std::fs::write(std::path::Path::new(&d).join(format!("{}.instances.tsv", fam.name)), instances);
        }
        return Ok(Measured { cells, rejected, unprinted });
    }
    Err(format!("{}: ptxas kept rejecting lines after 64 rounds", fam.name))
}

/// `(line, message)` of each error in ptxas's output (`ptxas input.ptx, line 57; error   : ...`).
fn error_lines(log: &str) -> Vec<(usize, String)> {
    log.lines()
        .filter_map(|l| {
            let rest = &l[l.find(", line ")? + 7..];
            let (n, msg) = rest.split_once(';')?;
            let msg = msg.trim();
            msg.starts_with("error").then(|| (n.trim().parse().ok(), msg.trim_start_matches("error").trim_start_matches([' ', ':']).to_string()))
        })
        .filter_map(|(n, m)| Some((n?, m)))
        .collect()
}

/// Per kernel, its SASS.
fn count(cubin: &[u8], fam: Family) -> Result<BTreeMap<String, Sass>, String> {
    let arch = arch_number(fam.name).expect("family arch");
    let sections = text_sections(cubin)?;
    let opcodes = if arch >= 75 { Some(parse_nvdisasm(&disassemble(cubin)?)) } else { None };
    let mut out = BTreeMap::new();
    for (f, bytes) in sections {
        let raw = sass_raw::instructions(&bytes, arch).len();
        let mut ops = opcodes.as_ref().map(|o| o.get(&f).cloned().unwrap_or_default());
        if let Some(ops) = &mut ops {
            if ops.len() > raw {
                return Err(format!("{} {f}: nvdisasm shows {} instructions, the section's bytes hold {raw}", fam.name, ops.len()));
            }
            // nvdisasm 13 prints some valid instructions as blank lines (sm_75's
            // F2FP with .SATFINITE, ...): they count, as an unnamed ALU instruction.
            ops.resize(raw, UNPRINTED.to_string());
        }
        out.insert(f, Sass { count: raw, opcodes: ops });
    }
    Ok(out)
}

/// The class of the opcodes `measured` has beyond `baseline` (a multiset difference): the slowest one's.
fn class_of_added(measured: &[String], baseline: &[String]) -> LatencyClass {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for b in baseline {
        *left.entry(b).or_default() += 1;
    }
    let mut class = LatencyClass::Free;
    for m in measured {
        match left.get_mut(m.as_str()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => class = class.max(opcode_class(m)),
        }
    }
    class
}

/// The latency class of one SASS opcode (`IMAD.WIDE.U32`, `MUFU.RCP`, `CALL.REL.NOINC` ...).
pub fn opcode_class(op: &str) -> LatencyClass {
    let mut parts = op.split('.');
    let base = parts.next().unwrap_or("");
    let mods: Vec<&str> = parts.collect();
    match base {
        "CALL" => LatencyClass::Call,
        "DADD" | "DMUL" | "DFMA" | "DSETP" | "DMNMX" | "DSET" => LatencyClass::F64,
        "MUFU" => LatencyClass::Mufu,
        "I2F" | "F2I" | "F2F" | "I2I" | "FRND" => LatencyClass::Conv,
        "IMUL" | "IDP" => LatencyClass::Mul,
        "IMAD" if mods.iter().any(|m| matches!(*m, "MOV" | "SHL" | "IADD")) || mods == ["X"] => LatencyClass::Alu,
        "IMAD" => LatencyClass::Mul,
        _ => LatencyClass::Alu,
    }
}

/// Measures every family of `names` (in parallel, `jobs` at a time) and
/// returns the table's columns plus each family's rejected heads.
pub fn measure_families(entries: &[Entry], names: &[&str], jobs: usize) -> Result<BTreeMap<String, Measured>, String> {
    let fams: Vec<Family> = names.iter().map(|n| family(n).ok_or_else(|| format!("unknown family {n}"))).collect::<Result<_, _>>()?;
    let next = std::sync::Mutex::new(0usize);
    let results = std::sync::Mutex::new(BTreeMap::new());
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(&fam) = fams.get(k) else { break };
                let r = measure(entries, fam);
                results.lock().unwrap().insert(fam.name.to_string(), r);
            });
        }
    });
    results.into_inner().unwrap().into_iter().map(|(f, r)| r.map(|m| (f, m))).collect()
}

/// Puts measured columns into `table` (replacing those families' cells; heads
/// no family measures any more are removed).
pub fn merge(table: &mut Table, measured: &BTreeMap<String, Measured>) {
    let fams: Vec<String> = FAMILIES.iter().map(|f| f.name.to_string()).collect();
    let mut rows: BTreeMap<String, Vec<Option<Cell>>> = BTreeMap::new();
    for r in &table.rows {
        let cells = fams.iter().map(|f| table.family_index(f).and_then(|k| r.cells[k])).collect();
        rows.insert(r.head.clone(), cells);
    }
    for (f, m) in measured {
        let k = fams.iter().position(|x| x == f).expect("a family of FAMILIES");
        for cells in rows.values_mut() {
            cells[k] = None;
        }
        for (head, cell) in &m.cells {
            rows.entry(head.clone()).or_insert_with(|| vec![None; fams.len()])[k] = Some(*cell);
        }
    }
    table.families = fams;
    table.rows = rows.into_iter().filter(|(_, c)| c.iter().any(Option::is_some)).map(|(head, cells)| Row { head, cells }).collect();
}
