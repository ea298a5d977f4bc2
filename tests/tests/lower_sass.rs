//! The division lowerings (`ptx_opt::lower`) through ptxas: the programs
//! assemble and verify (the project's verifier, for old and new targets),
//! and the programs take fewer SASS instructions than the `div`/`rem` they
//! replace, on every path. Run with `--nocapture` to see the tables
//! (`ptx-opt/src/lower/README.md` records them).

use ptx_ir::ir::{Operand, RegId};
use ptx_ir::isa::{Opcode, ScalarType};
use ptx_opt::lower::builder::{imm, type_mod, Builder};
use ptx_opt::lower::text::write_kernel;
use ptx_opt::lower::{div64_bypass, div_by_const, Program};
use ptx_tests::ptxas;
use std::collections::HashMap;

fn module(target: &str, kernels: &[(String, Program)]) -> String {
    let mut out = format!(".version 7.0\n.target {target}\n.address_size 64\n\n");
    for (name, p) in kernels {
        write_kernel(&mut out, p, name).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.push('\n');
    }
    out
}

/// The instruction itself as a one-instruction program: `op.ty d, x, divisor`
/// (or `op.ty d, x, y` without a divisor).
fn original(ty: ScalarType, rem: bool, divisor: Option<u128>) -> Program {
    let inputs = if divisor.is_some() { vec![ty] } else { vec![ty, ty] };
    let mut b = Builder::new(&inputs);
    let y = match divisor {
        Some(d) => imm(d, ty),
        None => Operand::reg(RegId(1)),
    };
    let x = b.input(0);
    b.push(if rem { Opcode::REM } else { Opcode::DIV }, &[type_mod(ty)], &[x, y]);
    b.finish().unwrap()
}

/// `mov` of the input: the kernel without a computation.
fn identity(ty: ScalarType) -> Program {
    let mut b = Builder::new(&[ty]);
    let x = b.input(0);
    b.push(Opcode::MOV, &[type_mod(ty)], &[x]);
    b.finish().unwrap()
}

fn identity_name(ty: ScalarType) -> String {
    format!("identity_{}", ty.bits())
}

fn name(ty: ScalarType, rem: bool, d: i128) -> String {
    let d = if d < 0 { format!("m{}", d.unsigned_abs()) } else { d.to_string() };
    format!("{}_{}_{d}", if rem { "rem" } else { "div" }, &ty.text()[1..])
}

fn bits(ty: ScalarType, d: i128) -> u128 {
    d as u128 & ptx_ir::eval::bits_mask(ty.bits())
}

/// A few dozen programs of every shape, for every type.
fn shapes() -> Vec<(String, Program)> {
    use ScalarType as T;
    let mut out = Vec::new();
    for ty in [T::U16, T::S16, T::U32, T::S32, T::U64, T::S64] {
        let n = ty.bits();
        let signed = ty.class() == ptx_ir::isa::TypeClass::Signed;
        let max = if signed { (1i128 << (n - 1)) - 1 } else { (1i128 << n) - 1 };
        let mut ds = vec![1, 3, 7, 8, 10, 14, 641, max, max - 2, (1 << (n - 1)) + 1];
        if signed {
            ds.extend([-1, -2, -7, -8, -(1 << (n - 1))]);
        }
        for d in ds {
            for rem in [false, true] {
                let p = div_by_const(ty, rem, bits(ty, d), 50).unwrap_or_else(|| panic!("{ty:?} {d}"));
                out.push((name(ty, rem, d), p));
            }
        }
    }
    for ty in [T::U64, T::S64] {
        for rem in [false, true] {
            out.push((format!("bypass_{}_{}", if rem { "rem" } else { "div" }, &ty.text()[1..]), div64_bypass(ty, rem).unwrap()));
        }
    }
    out
}

#[test]
fn programs_assemble_and_verify() {
    let kernels = shapes();
    assert!(kernels.len() > 150, "{} programs", kernels.len());
    for target in ["sm_50", "sm_80"] {
        let text = module(target, &kernels);
        let parsed = ptx_ir::parse("lowered.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
        let errors: Vec<String> = ptx_ir::verify::verify(&parsed.module, &parsed.source_map, "lowered.ptx", text.as_bytes()).iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        let assembled = ptxas::assemble(&text, target).unwrap_or_else(|e| panic!("{target}: {e}"));
        assert!(!assembled.cubin.is_empty());
    }
}

/// SASS instruction counts per kernel (sm_80, -O3).
fn counts(kernels: &[(String, Program)]) -> HashMap<String, usize> {
    let text = module("sm_80", kernels);
    ptxas::sass_instruction_counts(&text, Some("sm_80")).unwrap().into_iter().collect()
}

#[test]
fn programs_take_fewer_sass_instructions() {
    use ScalarType as T;
    let cases: &[(ScalarType, i128)] = &[(T::U32, 7), (T::U32, 8), (T::U32, 14), (T::U32, 0x8000_0001), (T::U32, 10), (T::S32, 7), (T::S32, -8), (T::S32, 3), (T::U64, 10), (T::U64, 7), (T::S64, 3), (T::S64, -8), (T::U16, 5), (T::U16, 8), (T::S16, 5), (T::S16, -8)];
    // The kernel's own instructions (loads, store, exit), per type, subtracted from the counts.
    let mut kernels: Vec<(String, Program)> = [T::U16, T::U32, T::U64].iter().map(|&ty| (identity_name(ty), identity(ty))).collect();
    for &(ty, d) in cases {
        for rem in [false, true] {
            let n = name(ty, rem, d);
            kernels.push((format!("orig_{n}"), original(ty, rem, Some(bits(ty, d)))));
            kernels.push((n, div_by_const(ty, rem, bits(ty, d), 80).unwrap()));
        }
    }
    let c = counts(&kernels);
    eprintln!("kernel overhead (loads, store, exit), subtracted: {} (16-bit), {} (32-bit), {} (64-bit) SASS instructions", c["identity_16"], c["identity_32"], c["identity_64"]);
    eprintln!("| instruction | original | program | PTX instructions |\n|---|---|---|---|");
    for &(ty, d) in cases {
        for rem in [false, true] {
            let n = name(ty, rem, d);
            let (orig, prog) = (c[&format!("orig_{n}")], c[&n]);
            let ptx = kernels.iter().find(|(k, _)| *k == n).unwrap().1.body.len();
            let overhead = c[&identity_name(ty)];
            eprintln!("| `{}.{} x, {d}` | {} | {} | {ptx} |", if rem { "rem" } else { "div" }, &ty.text()[1..], orig - overhead, prog - overhead);
            assert!(prog < orig, "{n}: {prog} SASS instructions, the original {orig}");
        }
    }
}

/// One SASS instruction of a listing.
struct Sass {
    predicated: bool,
    op: String,
    /// The label a `BRA` or `CALL` names.
    target: Option<String>,
}

/// The instructions of one function's section of `nvdisasm -c` output, and
/// its labels (label name → index of the next instruction).
fn listing(text: &str, function: &str) -> (Vec<Sass>, HashMap<String, usize>) {
    let mut ins = Vec::new();
    let mut labels = HashMap::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix(".section").filter(|r| r.starts_with(char::is_whitespace)) {
            inside = rest.trim_start().starts_with(&format!(".text.{function},"));
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(l) = t.strip_suffix(':') {
            labels.insert(l.to_string(), ins.len());
            continue;
        }
        let Some(body) = t.strip_prefix("/*").and_then(|r| r.split_once("*/")).map(|(_, b)| b.trim().trim_end_matches(';').trim()) else { continue };
        let mut toks = body.split_whitespace().peekable();
        let predicated = toks.peek().is_some_and(|t| t.starts_with('@'));
        if predicated {
            toks.next();
        }
        let op = toks.next().unwrap_or("").to_string();
        let target = body.split_once("`(").and_then(|(_, r)| r.split_once(')')).map(|(l, _)| l.to_string());
        ins.push(Sass { predicated, op, target });
    }
    (ins, labels)
}

/// Every path through a function's SASS (each predicated branch or exit
/// taken and not taken; calls followed into the callee): its length in
/// executed instructions and whether it calls a subroutine.
fn paths(ins: &[Sass], labels: &HashMap<String, usize>) -> Vec<(usize, bool)> {
    let mut done = Vec::new();
    // (position, instructions so far, return stack, called)
    let mut todo = vec![(0usize, 0usize, Vec::<usize>::new(), false)];
    while let Some((mut at, mut count, mut stack, mut called)) = todo.pop() {
        loop {
            assert!(count < 10_000, "a loop in the SASS");
            let Some(i) = ins.get(at) else { panic!("ran off the end of the listing") };
            count += 1;
            let jump = |t: &Option<String>| labels[t.as_deref().expect("a branch target")];
            if i.op.starts_with("BRA") {
                if i.predicated {
                    todo.push((at + 1, count, stack.clone(), called));
                }
                at = jump(&i.target);
            } else if i.op.starts_with("CALL") {
                stack.push(at + 1);
                called = true;
                at = jump(&i.target);
            } else if i.op.starts_with("RET") {
                at = stack.pop().expect("a return without a call");
            } else if i.op.starts_with("EXIT") {
                if i.predicated {
                    todo.push((at + 1, count, stack.clone(), called));
                }
                done.push((count, called));
                break;
            } else {
                at += 1;
            }
        }
    }
    done
}

/// The same division with a branch around each path instead of the
/// bypass's guard (what a CFG-level pass could emit; a program cannot).
fn branch_kernel(ty: ScalarType, rem: bool, name: &str) -> String {
    let (op, t) = (if rem { "rem" } else { "div" }, ty.text());
    format!(
        ".visible .entry {name}(.param .u64 out, .param {t} in0, .param {t} in1)\n{{\n\
         \t.reg .u64 %out;\n\t.reg {t} %x, %y, %q, %t;\n\t.reg .u32 %xl, %yl, %ql;\n\t.reg .pred %p;\n\
         \tld.param.u64 %out, [out];\n\tld.param{t} %x, [in0];\n\tld.param{t} %y, [in1];\n\
         \tor.b64 %t, %x, %y;\n\tsetp.le.u64 %p, %t, 4294967295;\n\t@!%p bra SLOW;\n\
         \tcvt.u32.u64 %xl, %x;\n\tcvt.u32.u64 %yl, %y;\n\t{op}.u32 %ql, %xl, %yl;\n\tcvt{t}.u32 %q, %ql;\n\tbra DONE;\n\
         SLOW:\n\t{op}{t} %q, %x, %y;\nDONE:\n\tst.global{t} [%out], %q;\n\tret;\n}}\n\n"
    )
}

/// (static count, shortest and longest path without a call, shortest and
/// longest path with one) of each kernel of a module.
type PathCounts = (usize, Option<(usize, usize)>, Option<(usize, usize)>);

fn path_counts(text: &str, names: &[String]) -> HashMap<String, PathCounts> {
    let static_counts = ptxas::sass_instruction_counts(text, Some("sm_80")).unwrap();
    let cubin = ptxas::assemble(text, "sm_80").unwrap().cubin;
    let sass = ptxas::disassemble(&cubin).unwrap();
    let range = |v: Vec<usize>| (!v.is_empty()).then(|| (*v.iter().min().unwrap(), *v.iter().max().unwrap()));
    names
        .iter()
        .map(|k| {
            let (ins, labels) = listing(&sass, k);
            let ps = paths(&ins, &labels);
            let fast = range(ps.iter().filter(|p| !p.1).map(|p| p.0).collect());
            let slow = range(ps.iter().filter(|p| p.1).map(|p| p.0).collect());
            (k.clone(), (static_counts[k], fast, slow))
        })
        .collect()
}

#[test]
fn bypass_paths_in_sass() {
    let mut kernels = vec![(identity_name(ScalarType::U64), identity(ScalarType::U64))];
    let mut branches = String::new();
    let mut cases = Vec::new();
    for ty in [ScalarType::U64, ScalarType::S64] {
        for rem in [false, true] {
            let n = format!("{}_{}", if rem { "rem" } else { "div" }, &ty.text()[1..]);
            kernels.push((format!("orig_{n}"), original(ty, rem, None)));
            kernels.push((format!("bypass_{n}"), div64_bypass(ty, rem).unwrap()));
            branches.push_str(&branch_kernel(ty, rem, &format!("branch_{n}")));
            cases.push(n);
        }
    }
    let text = module("sm_80", &kernels) + &branches;
    let mut names: Vec<String> = kernels.iter().map(|(k, _)| k.clone()).collect();
    names.extend(cases.iter().map(|n| format!("branch_{n}")));
    let c = path_counts(&text, &names);
    let overhead = c[&identity_name(ScalarType::U64)].0;
    let show = |r: Option<(usize, usize)>| match r {
        None => "—".to_string(),
        Some((a, b)) if a == b => (a - overhead).to_string(),
        Some((a, b)) => format!("{}–{}", a - overhead, b - overhead),
    };
    eprintln!("kernel overhead (loads, store, exit): {overhead} SASS instructions, subtracted below");
    eprintln!("| instruction | original: static / executed | bypass (guards): static / 32-bit path / 64-bit path | branches: static / 32-bit path / 64-bit path |\n|---|---|---|---|");
    for n in &cases {
        let (os, ofast, oslow) = c[&format!("orig_{n}")];
        let (bs, bfast, bslow) = c[&format!("bypass_{n}")];
        let (rs, rfast, rslow) = c[&format!("branch_{n}")];
        eprintln!("| `{}` x, y | {} / {} | {} / {} / {} | {} / {} / {} |", n.replace('_', "."), os - overhead, show(oslow.or(ofast)), bs - overhead, show(bfast), show(bslow), rs - overhead, show(rfast), show(rslow));
        // The original always calls the subroutine; the bypass's 32-bit path never does and is shorter.
        assert!(ofast.is_none() && oslow.is_some(), "{n}: {:?}", c[&format!("orig_{n}")]);
        let (bfast, bslow, oslow) = (bfast.unwrap(), bslow.unwrap(), oslow.unwrap());
        assert!(bfast.1 < oslow.0, "{n}: 32-bit path {bfast:?}, original {oslow:?}");
        assert!(bslow.0 > oslow.0, "{n}: the 64-bit path costs the test and the branch");
    }
}
