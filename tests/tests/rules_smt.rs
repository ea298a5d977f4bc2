//! The SMT semantics of the rule prover (`ptx_opt::rules::smt`) tied to the
//! evaluator: every instruction of the generator's catalog that the encoder
//! accepts (built as an e-graph node the way the engine builds one) is
//! evaluated both ways on thousands of random and edge inputs; the
//! bit-vector expression must give the evaluator's value wherever the
//! evaluator gives one, and be undefined exactly where it gives none. Then
//! the SMT-LIB2 text of those expressions is checked against their
//! concrete evaluation by z3 itself, so that a printing bug cannot hide.

use ptx_ir::eval::{bits_mask, Dialect};
use ptx_ir::ir::Stmt;
use ptx_opt::engine::build::{value_shape, SourceOf};
use ptx_opt::engine::lang::Shape;
use ptx_opt::rules::proof::{edge_values, Rng};
use ptx_opt::rules::smt::bv::{Bv, Ctx};
use ptx_opt::rules::smt::encode::{encode, Enc};
use ptx_opt::rules::smt::solve::{available, Answer, Z3};
use std::collections::BTreeMap;

/// Every value shape of the catalog: its text, shape and sources.
fn catalog() -> Vec<(String, Shape, Vec<SourceOf>)> {
    let f = &ptx_tests::gen::catalog_kernel();
    let mut out = Vec::new();
    for s in f.body.as_ref().unwrap() {
        let Stmt::Instr(ins) = s else { continue };
        let Some((tmpl, width, sources)) = value_shape(f, ins) else { continue };
        let head = format!("{}{}", ins.opcode.name(), ins.modifiers().map(|(_, m)| m.text()).collect::<String>());
        out.push((head, Shape::new(tmpl, width), sources));
    }
    out
}

fn source_width(s: &SourceOf) -> u8 {
    match s {
        SourceOf::Reg(w) | SourceOf::Imm(_, w) | SourceOf::Leaf(w) => *w,
    }
}

/// The shape encoded over fresh variables (immediates as constants); gives
/// the context, the encoding and the variable of each source (`None`: immediate).
fn encoded(shape: &Shape, sources: &[SourceOf]) -> Result<(Ctx, Enc, Vec<Option<u32>>), String> {
    let mut cx = Ctx::new();
    let mut kids: Vec<Bv> = Vec::new();
    let mut vars = Vec::new();
    for s in sources {
        match s {
            SourceOf::Imm(b, w) => {
                kids.push(cx.c(*w, *b));
                vars.push(None);
            }
            SourceOf::Reg(w) | SourceOf::Leaf(w) => {
                let (v, k) = cx.var(*w);
                kids.push(v);
                vars.push(Some(k));
            }
        }
    }
    let e = encode(&mut cx, shape, &Dialect::MODERN, &kids)?;
    Ok((cx, e, vars))
}

/// Inputs for the sources: edge values of each source with the others
/// random, then random values (small ones half of the time).
fn inputs(sources: &[SourceOf], random: usize, rng: &mut Rng) -> Vec<Vec<u128>> {
    let ws: Vec<u8> = sources.iter().map(source_width).collect();
    let fixed = |k: usize| match sources[k] {
        SourceOf::Imm(b, _) => Some(b),
        _ => None,
    };
    let mut out = Vec::new();
    let rand = |rng: &mut Rng, w: u8| {
        let r = (rng.next() as u128) << 64 | rng.next() as u128;
        let r = match rng.next() % 4 {
            0 => r % 300,
            1 => bits_mask(w as u32).wrapping_sub(r % 40),
            _ => r,
        };
        r & bits_mask(w as u32)
    };
    for k in 0..ws.len() {
        if fixed(k).is_some() {
            continue;
        }
        for e in edge_values(ws[k]).into_iter().chain([32, 31, 33, 63, 64, 255, 256, 0x1f]) {
            out.push((0..ws.len()).map(|j| fixed(j).unwrap_or_else(|| if j == k { e & bits_mask(ws[j] as u32) } else { rand(rng, ws[j]) })).collect());
        }
    }
    for _ in 0..random {
        out.push((0..ws.len()).map(|j| fixed(j).unwrap_or_else(|| rand(rng, ws[j]))).collect());
    }
    out
}

#[test]
fn encoder_agrees_with_the_evaluator_on_the_catalog() {
    let mut rng = Rng(0x5417);
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    let mut accepted: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    let (mut shapes, mut checked) = (0usize, 0usize);
    for (head, shape, sources) in catalog() {
        shapes += 1;
        let (cx, enc, vars) = match encoded(&shape, &sources) {
            Ok(x) => x,
            Err(why) => {
                *refused.entry(why.split(':').next().unwrap_or("").to_string()).or_default() += 1;
                continue;
            }
        };
        *accepted.entry(shape.ins.opcode.name()).or_default() += 1;
        let top = enc.value.max(enc.defined);
        let widths: Vec<u8> = sources.iter().map(source_width).collect();
        let mut defined_seen = false;
        for input in inputs(&sources, 2000, &mut rng) {
            let mut env = vec![0u128; cx.var_widths().len()];
            for (k, v) in vars.iter().enumerate() {
                if let Some(v) = v {
                    env[*v as usize] = input[k];
                }
            }
            let vals = cx.eval_all(top, &env);
            let (value, defined) = (vals[enc.value.index()], vals[enc.defined.index()]);
            let kids: Vec<(u128, u8)> = input.iter().copied().zip(widths.iter().copied()).collect();
            checked += 1;
            match shape.eval(&Dialect::MODERN, &kids) {
                Some(x) if defined == 1 && value == x => defined_seen = true,
                Some(x) => failures.push(format!("`{head}` on {input:x?}: evaluator {x:#x}, encoding {value:#x} (defined {defined})")),
                None if defined == 0 => {}
                None => failures.push(format!("`{head}` on {input:x?}: the evaluator gives no value, the encoding {value:#x}")),
            }
            if failures.len() > 40 {
                break;
            }
        }
        if !defined_seen {
            failures.push(format!("`{head}`: never defined on the inputs tried"));
        }
    }
    eprintln!("{shapes} catalog shapes; encoded, by opcode: {accepted:?}");
    eprintln!("not encoded (reason prefix: count): {refused:?}");
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures[..failures.len().min(40)].join("\n"));
    assert!(shapes > 1000);
    // The rules' instructions must be encoded (a refusal of one of these is a regression).
    for op in ["add", "sub", "mul", "mad", "div", "rem", "min", "max", "and", "or", "xor", "not", "neg", "shl", "shr", "selp", "setp", "cvt", "bfe", "bfi", "prmt", "shf", "lop3", "mov"] {
        assert!(accepted.contains_key(op), "no `{op}` encoded");
    }
    assert!(checked > 500_000, "only {checked} evaluations");
}

#[test]
fn smt_text_agrees_with_concrete_evaluation() {
    if !available() {
        eprintln!("\n*** SMT PROOFS SKIPPED: z3 not installed (tools/test.sh installs it; or `apt-get install z3`) ***\n");
        return;
    }
    let mut z3 = Z3::start(20_000).expect("z3 starts");
    let mut rng = Rng(0x7e57);
    let (mut shapes, mut queries) = (0, 0);
    let mut failures = Vec::new();
    for (head, shape, sources) in catalog() {
        let Ok((cx, enc, vars)) = encoded(&shape, &sources) else { continue };
        shapes += 1;
        let (wv, wd) = (shape.width, 1);
        z3.send(&format!(
            "(push)\n{}(define-fun rv () (_ BitVec {wv}) {})\n(define-fun rd () (_ BitVec {wd}) {})\n",
            cx.smt_defs(&[enc.value, enc.defined]),
            cx.smt_ref(enc.value),
            cx.smt_ref(enc.defined)
        ))
        .unwrap();
        let all = inputs(&sources, 3, &mut rng);
        // Three random inputs and two edge cases per shape.
        let picked: Vec<&Vec<u128>> = all.iter().rev().take(3).chain(all.iter().take(2)).collect();
        for input in picked {
            let mut env = vec![0u128; cx.var_widths().len()];
            let mut asserts = String::new();
            for (k, v) in vars.iter().enumerate() {
                if let Some(v) = v {
                    env[*v as usize] = input[k];
                    asserts.push_str(&format!("(assert (= v{v} (_ bv{} {})))\n", input[k], cx.var_widths()[*v as usize]));
                }
            }
            let top = enc.value.max(enc.defined);
            let vals = cx.eval_all(top, &env);
            let want = [vals[enc.value.index()], vals[enc.defined.index()]];
            z3.send(&format!("(push)\n{asserts}")).unwrap();
            queries += 1;
            match z3.check() {
                Ok(Answer::Sat) => {
                    let got = z3.values(&["rv".into(), "rd".into()]).unwrap();
                    if got != want {
                        failures.push(format!("`{head}` on {input:x?}: z3 {got:x?}, Rust {want:x?}"));
                    }
                }
                other => failures.push(format!("`{head}` on {input:x?}: {other:?}")),
            }
            z3.send("(pop)\n").unwrap();
        }
        z3.send("(pop)\n").unwrap();
    }
    eprintln!("{shapes} shapes, {queries} concrete queries evaluated by z3");
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures[..failures.len().min(40)].join("\n"));
    assert!(shapes > 300);
}
