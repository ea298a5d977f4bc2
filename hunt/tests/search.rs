//! The search on hand-built DAGs: what it must find, and what it must not
//! claim.

use ptx_hunt::dag::{Dag, Node};
use ptx_hunt::search::{Config, Searcher};
use ptx_opt::engine::lang::{template, type_width, Shape};

fn op(head: &str, kids: Vec<usize>) -> Node {
    let ins = template(head, kids.len()).unwrap();
    let width = ins.operand_type(0).map(type_width).unwrap();
    Node::Op { shape: Shape::new(ins, width), kids }
}

fn search(d: &Dag) -> Option<ptx_hunt::search::Found> {
    let table = ptx_opt::cost::CostModel::for_target("sm_80");
    let ops = ptx_hunt::ops::candidate_ops(&table);
    let s = Searcher { ops: &ops, table: &table, dialect: ptx_ir::eval::Dialect::MODERN, config: Config::default() };
    s.search(d, 1)
}

#[test]
fn an_identity_is_found_as_its_input() {
    let d = Dag { nodes: vec![Node::Input { index: 0, width: 64 }, Node::Const { width: 64, bits: 0 }, op("add.u64", vec![0, 1])], inputs: vec![64] };
    let f = search(&d).expect("x + 0 is x");
    assert_eq!((f.cost_before, f.cost_after), (2, 0));
    assert_eq!(ptx_hunt::report::candidate_text(&f.candidate), "= %a0\n");
}

#[test]
fn a_compare_that_random_inputs_never_make_true_is_not_a_constant() {
    // rcp(x) == y is false on almost every random pair, and not always false.
    let d = Dag {
        nodes: vec![Node::Input { index: 0, width: 32 }, op("rcp.rn.f32", vec![0]), Node::Input { index: 1, width: 32 }, op("setp.eq.f32", vec![1, 2])],
        inputs: vec![32, 32],
    };
    assert!(search(&d).is_none());
    // Nor is x + 1 == 3 (a 32-bit x): it is x == 2.
    let d = Dag {
        nodes: vec![Node::Input { index: 0, width: 32 }, Node::Const { width: 32, bits: 1 }, op("add.s32", vec![0, 1]), Node::Const { width: 32, bits: 3 }, op("setp.eq.s32", vec![2, 3])],
        inputs: vec![32],
    };
    let f = search(&d).expect("x + 1 == 3 is x == 2");
    assert_eq!(ptx_hunt::report::candidate_text(&f.candidate), "setp.eq.s32 %t0, %a0, 2;\n");
}

#[test]
fn a_single_cheapest_instruction_is_not_reported() {
    let d = Dag { nodes: vec![Node::Input { index: 0, width: 32 }, Node::Const { width: 32, bits: 0xff }, op("and.b32", vec![0, 1])], inputs: vec![32] };
    assert!(search(&d).is_none());
}
