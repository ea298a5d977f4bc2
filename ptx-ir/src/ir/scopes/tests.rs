//! Block scoping: how the parser binds names, what the check reports, what
//! flattening gives.

use super::flatten::flatten_names_without_shortcuts;
use super::*;
use crate::ir::{Item, Module};

/// The first function of a module made of a standard header and `items`.
fn module(items: &str) -> Module {
    let text = format!(".version 8.0\n.target sm_90\n.address_size 64\n{items}");
    crate::parse_str(&text).unwrap_or_else(|d| panic!("{d}\n{text}"))
}

fn func(body: &str) -> Function {
    let m = module(&format!(".visible .entry k(.param .u64 out)\n{{\n.reg .b32 %r<8>;\n.reg .pred %p<4>;\n.reg .b64 %rd<4>;\n{body}\n}}\n"));
    match m.items.into_iter().find_map(|i| if let Item::Func(f) = i { Some(f) } else { None }) {
        Some(f) => *f,
        None => unreachable!(),
    }
}

/// The statements `func` puts before `body`.
const D: usize = 3;

fn body(f: &Function) -> &[Stmt] {
    f.body.as_deref().unwrap()
}

/// The statement index of the `n`-th instruction whose printed opcode is `op`.
fn nth_instr(f: &Function, op: &str, n: usize) -> usize {
    body(f).iter().enumerate().filter(|(_, s)| matches!(s, Stmt::Instr(i) if i.opcode.name() == op)).nth(n).map(|(k, _)| k).unwrap()
}

/// The label a branch instruction at `k` names.
fn target(f: &Function, k: usize) -> LabelId {
    match &body(f)[k] {
        Stmt::Instr(i) => match i.operands.last() {
            Some(Operand::Label(l)) => *l,
            other => panic!("no label operand: {other:?}"),
        },
        _ => panic!("not an instruction"),
    }
}

/// The statement defining label `l`.
fn def(f: &Function, l: LabelId) -> usize {
    body(f).iter().position(|s| label_def(s).is_some_and(|(d, _)| d == l)).unwrap()
}

const WAIT: &str = "{\n.reg .pred P1;\nLAB_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%rd1], %r1;\n@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n";

#[test]
fn sibling_blocks_define_their_own_labels() {
    let f = func(&format!("ld.param.u64 %rd1, [out];\n{WAIT}{WAIT}{WAIT}ret;"));
    assert_eq!(f.labels.len(), 6, "{:?}", f.labels);
    assert_eq!(f.labels.iter().filter(|n| &***n == "LAB_WAIT").count(), 3);
    for n in 0..3 {
        // `@P1 bra DONE` and `bra LAB_WAIT` of each copy go to that copy's labels.
        let (done, again) = (nth_instr(&f, "bra", 2 * n), nth_instr(&f, "bra", 2 * n + 1));
        let tree = ScopeTree::of(body(&f));
        for k in [done, again] {
            assert_eq!(tree.stmt_scope[def(&f, target(&f, k))], tree.stmt_scope[k]);
        }
        assert!(def(&f, target(&f, again)) < again && def(&f, target(&f, done)) > done);
    }
    assert_eq!(check(&f), vec![]);
    // The CFG follows the ids: each branch goes to its own copy's label.
    let cfg = crate::cfg::Cfg::build(&f);
    for k in (0..6).map(|n| nth_instr(&f, "bra", n)) {
        let to = cfg.block_of_stmt[def(&f, target(&f, k))];
        assert!(cfg.successors(cfg.block_of_stmt[k]).any(|s| s == to), "branch at {k}");
    }
}

#[test]
fn a_branch_means_the_label_of_the_innermost_block_defining_it() {
    // Before the block's own `L:` and after an outer one: the block's.
    let f = func("L:\nadd.s32 %r1, %r1, 1;\n{\n@%p1 bra L;\nadd.s32 %r1, %r1, 2;\nL:\n}\n{\nbra L;\n}\nret;");
    let (inner, outer) = (nth_instr(&f, "bra", 0), nth_instr(&f, "bra", 1));
    assert_eq!(def(&f, target(&f, inner)), inner + 2);
    assert_eq!(def(&f, target(&f, outer)), D);
    // Out of nested blocks, forward, to the function's label.
    let f = func("{\n{\n@%p1 bra OUT;\n}\n}\nadd.s32 %r1, %r1, 1;\nOUT:\nret;");
    let k = nth_instr(&f, "bra", 0);
    assert!(matches!(body(&f)[def(&f, target(&f, k))], Stmt::Label(_)));
    assert_eq!(ScopeTree::of(body(&f)).stmt_scope[def(&f, target(&f, k))], 0);
}

#[test]
fn tables_and_prototypes_mean_what_is_defined_so_far() {
    // ptxas: `brx.idx` takes the outer table, defined before it, not the
    // block's later one; `.branchtargets` lists follow the branch rule.
    let f = func("and.b32 %r2, %r1, 1;\nts: .branchtargets A, B;\n{\nbrx.idx %r2, ts;\nts: .branchtargets B, A;\nA:\n}\nA:\nB:\nret;");
    let k = nth_instr(&f, "brx.idx", 0);
    assert_eq!(def(&f, target(&f, k)), D + 1);
    let Stmt::BranchTargets(_, inner) = &body(&f)[k + 1] else { panic!() };
    assert_eq!(def(&f, inner[1]), k + 2, "`A` of the inner table is the inner block's");
    assert_eq!(check(&f), vec![]);
}

#[test]
fn moving_an_instruction_across_a_brace_is_reported() {
    // `add %x` moved out of the block that declares `%x`.
    let mut f = func("{\n.reg .b32 %x;\nmov.u32 %x, 1;\nadd.s32 %x, %x, 1;\n}\nret;");
    assert_eq!(check(&f), vec![]);
    let b = f.body.as_mut().unwrap();
    let add = b.remove(D + 3);
    b.insert(D + 4, add);
    let errors = check(&f);
    assert!(errors.iter().any(|e| e.message.contains("function `k`") && e.message.contains("`%x`") && e.stmt == Some(D + 4)), "{errors:?}");
    // Into a block that declares another `%r1`: the name now means that one.
    let mut f = func("add.s32 %r1, %r1, 1;\n{\n.reg .b32 %r1;\nmov.u32 %r1, 2;\n}\nret;");
    let b = f.body.as_mut().unwrap();
    let add = b.remove(D);
    b.insert(D + 3, add);
    let errors = check(&f);
    assert!(errors.iter().any(|e| e.message.contains("`%r1`") && e.message.contains("another")), "{errors:?}");
    // A copy of it into that block, the original kept: the register is
    // found right before the block and must be looked up again inside it.
    let mut f = func("add.s32 %r1, %r1, 1;\n{\n.reg .b32 %r1;\nmov.u32 %r1, 2;\n}\nadd.s32 %r1, %r1, 1;\nret;");
    let b = f.body.as_mut().unwrap();
    let add = b[D].clone();
    b.insert(D + 3, add);
    let errors = check(&f);
    assert_eq!(errors.iter().filter(|e| e.message.contains("`%r1`")).map(|e| e.stmt).collect::<Vec<_>>(), vec![Some(D + 3)], "{errors:?}");
    // Past a range declared after it in its block that has its name as a
    // member, spelled with a leading zero (`%s05`, member 5 of `%s<8>`):
    // there the name means the member (ptxas finds a block's range
    // members before its registers declared on their own).
    let mut f = func("{\n.reg .b32 %s05;\nmov.u32 %s05, 1;\n.reg .b32 %s<8>;\nmov.u32 %s5, 2;\n}\nret;");
    assert_eq!(check(&f), vec![]);
    let b = f.body.as_mut().unwrap();
    let mov = b.remove(D + 2);
    b.insert(D + 3, mov);
    let errors = check(&f);
    // The moved plain register and the member now have one name there:
    // reported at the second of them found.
    assert!(errors.iter().any(|e| e.message.contains("`%s5`") && e.message.contains("another") && e.stmt == Some(D + 4)), "{errors:?}");
    // A branch moved out of the block that defines its label.
    let mut f = func(&format!("{WAIT}ret;"));
    let k = nth_instr(&f, "bra", 1);
    let b = f.body.as_mut().unwrap();
    let bra = b.remove(k);
    b.insert(k + 2, bra); // after `DONE:` and `}`
    assert!(check(&f).iter().any(|e| e.message.contains("label `LAB_WAIT` is not defined in this block")), "{:?}", check(&f));
}

#[test]
fn ids_outside_the_tables_are_errors_not_panics() {
    let mut f = func("mov.u32 %r1, 1;\nbra L;\nL:\nret;");
    if let Stmt::Instr(i) = &mut f.body.as_mut().unwrap()[D] {
        i.operands[0] = Operand::reg(RegId(999));
    }
    if let Stmt::Instr(i) = &mut f.body.as_mut().unwrap()[D + 1] {
        i.operands[0] = Operand::Label(LabelId(7));
    }
    let errors = check(&f);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|e| e.bad_id));
    assert!(errors[0].message.contains("register #999") && errors[1].message.contains("label #7"));
    let mut m = module("");
    m.items.push(Item::Func(Box::new(f)));
    let diags = crate::verify::verify(&m, &Default::default(), "k.ptx", b"");
    assert!(diags.iter().any(|d| d.message.contains("register #999")), "{diags:?}");
}

#[test]
fn flattening_gives_one_name_per_register_and_label() {
    let text = format!("ld.param.u64 %rd1, [out];\nLAB_WAIT_1:\n{WAIT}{WAIT}{{\n.reg .b32 %r<3>;\nadd.s32 %r2, %r1, 1;\n{{\n.reg .b32 %r2;\nmov.u32 %r2, 5;\n}}\n}}\nret;");
    let mut f = func(&text);
    flatten_names(&mut f).unwrap();
    assert_eq!(check(&f), vec![]);
    let mut labels: Vec<&str> = f.labels.iter().map(|n| &**n).collect();
    labels.sort();
    // `LAB_WAIT_1` was taken: the second copy's label gets the next number.
    assert_eq!(labels, ["DONE", "DONE_1", "LAB_WAIT", "LAB_WAIT_1", "LAB_WAIT_2"]);
    let names: Vec<&str> = f.regs.iter().map(|r| &*r.name).collect();
    for n in ["P1", "P1_1", "%r1_1", "%r2_1", "%r2_2"] {
        assert!(names.contains(&n), "{n} not in {names:?}");
    }
    // Every .reg declaration now opens the body.
    let lead = leading_decls(body(&f));
    assert!(body(&f)[lead..].iter().all(|s| !matches!(s, Stmt::Decl(d) if d.space() == StateSpace::Reg)));
    // So an instruction of the innermost block can move out of all blocks.
    let k = nth_instr(&f, "mov", 0);
    let b = f.body.as_mut().unwrap();
    let mov = b.remove(k);
    let end = b.len() - 1;
    b.insert(end, mov);
    assert_eq!(check(&f), vec![]);
    // Flattening again changes nothing.
    let once = f.clone();
    flatten_names(&mut f).unwrap();
    assert_eq!(f, once);
}

#[test]
fn variables_of_blocks_pin_their_users() {
    let m = module(
        ".visible .func (.param .b32 r) g(.param .b32 a)\n{\n.reg .b32 %x;\nld.param.b32 %x, [a];\nst.param.b32 [r], %x;\nret;\n}\n\
         .visible .entry k(.param .u64 out)\n{\n.reg .b32 %r<4>;\nld.param.u32 %r1, [out];\n{\n.param .b32 param0;\n.param .b32 retval0;\nst.param.b32 [param0], %r1;\ncall (retval0), g, (param0);\nld.param.b32 %r2, [retval0];\n}\nret;\n}\n",
    );
    let Some(Item::Func(k)) = m.items.iter().find(|i| matches!(i, Item::Func(f) if &*f.name == "k")) else { panic!() };
    let users = block_variable_users(k);
    let pinned: Vec<String> = body(k).iter().zip(&users).filter(|(_, u)| **u).map(|(s, _)| match s {
        Stmt::Instr(i) => i.opcode.name().to_string(),
        _ => String::new(),
    }).collect();
    assert_eq!(pinned, ["st", "call", "ld"], "the kernel parameter `out` and the function `g` are visible everywhere");
    assert!(!names_block_variable(k, 1));
}

#[test]
fn parse_errors_name_the_block() {
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n{\nbra L;\n}\n{\nL:\n}\nret;\n}\n";
    let e = crate::parse("k.ptx", text.as_bytes()).unwrap_err().to_string();
    assert!(e.starts_with("k.ptx:7:5: error: label `L` is not defined in this block or an enclosing one"), "{e}");
    let text = ".version 8.0\n.target sm_90\n.address_size 64\n.entry k()\n{\n{\nL:\nL:\n}\nret;\n}\n";
    let e = crate::parse("k.ptx", text.as_bytes()).unwrap_err().to_string();
    assert!(e.starts_with("k.ptx:8:1: error: label `L` is already defined in this block (at 7:1)"), "{e}");
}

#[test]
fn block_registers_that_shadow_nothing_pin_only_their_users() {
    // Sibling blocks may reuse a name: each block's register pins the
    // instructions naming it, nothing else.
    let f = func("{\n.reg .b32 t;\nadd.u32 t, %r1, 1;\nadd.u32 %r2, t, %r1;\n}\n{\n.reg .b32 t;\nmov.u32 t, %r2;\n}\nadd.u32 %r3, %r2, 4;\nret;");
    let users = block_register_users(&f).expect("no block register shadows a visible name");
    let pinned: Vec<usize> = users.iter().enumerate().filter(|(_, u)| **u).map(|(k, _)| k).collect();
    assert_eq!(pinned, vec![nth_instr(&f, "add", 0), nth_instr(&f, "add", 1), nth_instr(&f, "mov", 0)]);
    assert!(!users[nth_instr(&f, "add", 2)]);
    // A block register shadowing an outer one: names must be flattened first.
    let g = func("{\n.reg .b32 %r1;\nadd.u32 %r1, %r2, 1;\n}\nret;");
    assert!(block_register_users(&g).is_none());
    // So must a block range one of whose members is visible.
    let h = func("{\n.reg .b32 %r<2>;\nadd.u32 %r1, %r1, 1;\n}\nret;");
    assert!(block_register_users(&h).is_none());
}

/// [`block_register_users`] looking every register name up at every
/// instruction (it looks up only the names a later declaration declares,
/// once per generation of the walk).
fn block_register_users_looking_up_every_name(f: &Function) -> Vec<bool> {
    let body = body(f);
    let lead = leading_decls(body);
    let mut w = Walk::new(f);
    let mut out = vec![false; body.len()];
    for (k, s) in body.iter().enumerate() {
        w.step(k);
        let Stmt::Instr(ins) = s else { continue };
        ins.for_each_reg(|r, _| {
            out[k] |= matches!(w.lookup(&f.regs[r.0 as usize].name), Some(Meaning::Reg(Site::Body { stmt, .. })) if stmt as usize >= lead);
        });
    }
    out
}

#[test]
fn block_register_users_agree_with_looking_up_every_name() {
    for b in [
        "{\n.reg .b32 t;\nadd.u32 t, %r1, 1;\nadd.u32 %r2, t, %r1;\n}\n{\n.reg .b32 t;\nmov.u32 t, %r2;\n}\nadd.u32 %r3, %r2, 4;\nret;",
        // A range declared in a block, read inside and beside it.
        "{\n.reg .b32 %q<3>;\nadd.u32 %q1, %r1, 1;\nmov.u32 %r2, %q1;\n{\nadd.u32 %q2, %q1, %r2;\n}\n}\nadd.u32 %r3, %r2, 4;\nret;",
        // A register declared after the first instruction, outside any block.
        "add.u32 %r1, %r2, 1;\n.reg .b32 late;\nmov.u32 late, %r1;\nadd.u32 %r3, late, %r1;\nret;",
        // A name past a block range's count means the outer register.
        ".reg .b32 %s5;\n{\n.reg .b32 %s<2>;\nadd.u32 %s1, %s5, 1;\nmov.u32 %r1, %s1;\nadd.u32 %r2, %s5, %r1;\n}\nret;",
    ] {
        let f = func(b);
        let fast = block_register_users(&f).expect("no block register shadows a visible name");
        assert_eq!(fast, block_register_users_looking_up_every_name(&f), "{b}");
        assert!(fast.iter().any(|u| *u), "{b}: some instruction names a block register");
    }
}

#[test]
fn a_name_the_initials_rule_out_means_no_register() {
    for b in [
        "{\n.reg .b32 t;\nmov.u32 t, 1;\n}\nt:\nbra.uni t;\nret;",
        // A label named as a member of a block's range, and a plain register
        // without `%` declared late.
        "{\n.reg .b32 q<3>;\nmov.u32 q1, 1;\n}\nq1:\nadd.u32 %r1, %r2, 1;\n.reg .b32 late;\nmov.u32 late, %r1;\nlate2:\nret;",
        "$L1:\n{\n.reg .pred %p9;\nsetp.eq.u32 %p9, %r1, 0;\n@%p9 bra.uni $L1;\n}\nret;",
    ] {
        let f = func(b);
        let mut names: Vec<&str> = f.regs.iter().map(|r| &*r.name).chain(f.labels.iter().map(|l| &**l)).collect();
        names.extend(["q1", "q2", "t", "late", "late2", "%r1", "%p9", "$L1", "x"]);
        let mut w = Walk::new(&f);
        for k in 0..body(&f).len() {
            w.step(k);
            for n in &names {
                if matches!(w.lookup(n), Some(Meaning::Reg(_))) {
                    assert!(w.may_mean_register(n), "{b}: `{n}` means a register at statement {k}");
                }
            }
        }
    }
}

/// Functions flattening renames in every way: shadowed registers and
/// labels, a block range split into its members and one left with none in
/// use (its declaration removed), names like the new ones already taken
/// (by a label, a variable, a range's members), many blocks declaring one
/// name; and one it leaves as it was.
fn flattening_cases() -> Vec<String> {
    let mut temps = String::new();
    for i in 0..7 {
        temps.push_str(&format!("{{\n.reg .b32 t;\n.reg .b32 %r<3>;\nadd.u32 t, %r{}, 1;\nmov.u32 %r2, t;\n}}\n", i % 3));
    }
    vec![
        format!("ld.param.u64 %rd1, [out];\nLAB_WAIT_1:\n{WAIT}{WAIT}{{\n.reg .b32 %r<3>;\nadd.s32 %r2, %r1, 1;\n{{\n.reg .b32 %r2;\nmov.u32 %r2, 5;\n}}\n}}\nret;"),
        format!(".reg .b32 t;\n.local .b32 t_5;\n.reg .b32 t_<3>;\n.reg .b32 %r2_1;\nmov.u32 t, 0;\n{temps}t_3:\nmov.u32 t_1, t;\nmov.u32 %r2_1, t_1;\nret;"),
        "{\n.reg .b32 %r<2>;\n}\n{\n.reg .pred %p1;\nsetp.eq.u32 %p1, %r1, 0;\n@%p1 bra.uni L;\nL:\n}\nL:\nret;".to_string(),
        "add.u32 %r1, %r2, 1;\n.reg .b32 late;\nmov.u32 late, %r1;\nret;".to_string(),
        "add.u32 %r1, %r2, 1;\nret;".to_string(),
    ]
}

/// Flattening with [`Taken`]'s shortcuts (only names shaped like new ones
/// kept, each base's numbers tried from where the last new name of it
/// stopped) gives what trying every number against every name gives.
#[test]
fn flattening_shortcuts_pick_the_names_trying_every_one_picks() {
    let mut renamed_twice = false;
    for b in flattening_cases() {
        let f = func(&b);
        let (mut fast, mut general) = (f.clone(), f.clone());
        flatten_names(&mut fast).unwrap();
        flatten_names_without_shortcuts(&mut general).unwrap();
        assert_eq!(fast, general, "{b}");
        assert_eq!(check(&fast), vec![], "{b}");
        renamed_twice |= fast.regs.iter().any(|r| &*r.name == "t_7");
    }
    assert!(renamed_twice, "the blocks' `t` take every number up to 7 but those taken");
}

/// Undone, a flattening gives the function back as it was, and it says
/// whether it changed the function.
#[test]
fn flattening_undone_gives_the_function_back() {
    let mut unchanged = 0;
    for b in flattening_cases() {
        let f = func(&b);
        let mut g = f.clone();
        let undo = flatten_names_undoably(&mut g).unwrap();
        let mut flat = f.clone();
        flatten_names(&mut flat).unwrap();
        assert_eq!(g, flat, "{b}");
        assert_eq!(undo.changed(), g != f, "{b}");
        unchanged += !undo.changed() as usize;
        undo.undo(&mut g);
        assert_eq!(g, f, "{b}");
    }
    assert_eq!(unchanged, 1, "one function has nothing to flatten");
}
