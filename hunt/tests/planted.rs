//! The hunter on a tiny module with one planted missed peephole and one
//! DAG that has no cheaper equivalent: the first must be reported with the
//! right candidate, the second must not be.
//!
//! The planted rewrite, `(x & 0xff) | (x & 0xff00)` -> `x & 0xffff`, is one
//! the engine has no rule for at the time of writing (the test checks that
//! `-O2` leaves it in place). If the engine learns it, plant another.

use ptx_hunt::dag::{Dag, Node};
use ptx_hunt::{harvest::Limits, hunt, report, search::Config, Options};
use std::time::Duration;

const PTX: &str = r#".version 8.0
.target sm_80
.address_size 64

.visible .entry k(.param .u64 p, .param .u32 a, .param .u32 b, .param .u32 c)
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [a];
  ld.param.u32 %r5, [b];
  ld.param.u32 %r6, [c];
  and.b32 %r2, %r1, 255;
  and.b32 %r3, %r1, 65280;
  or.b32 %r4, %r2, %r3;
  st.global.u32 [%rd1], %r4;
  add.u32 %r7, %r5, %r6;
  xor.b32 %r8, %r7, %r1;
  st.global.u32 [%rd1+4], %r8;
  ret;
}
"#;

fn input_file() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ptx-hunt-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("planted.ptx");
    std::fs::write(&path, PTX).unwrap();
    path
}

/// Evaluates both DAGs on the same inputs (their inputs are numbered alike).
fn same_values(a: &Dag, b: &Dag) -> bool {
    let d = ptx_ir::eval::Dialect::MODERN;
    let mut gen = ptx_hunt::inputs::InputGen::new(&a.inputs, 42);
    (0..20_000).all(|_| {
        let v = gen.assignment();
        a.eval(&d, &v) == b.eval(&d, &v)
    })
}

#[test]
fn the_planted_peephole_is_found_and_the_optimal_dag_is_not_reported() {
    // The engine keeps the planted DAG at -O2.
    let checked = ptx_opt::optimize_checked("planted.ptx", PTX.as_bytes(), ptx_opt::OptLevel::O2).unwrap();
    let out = ptx_print::print_module(&checked.module);
    assert!(out.contains("65280") && out.contains("or.b32"), "the engine now rewrites the planted DAG; plant another:\n{out}");

    let opts = Options {
        files: vec![input_file()],
        limits: Limits::default(),
        target: "sm_80".into(),
        jobs: 1,
        min_count: 1,
        time_budget: Duration::from_secs(600),
        search: Config::default(),
        deep: usize::MAX,
    };
    let o = hunt(&opts);
    assert!(o.skipped.is_empty(), "{:?}", o.skipped);
    assert_eq!(o.findings.len(), 1, "{}", report::text(&o, 10));
    let f = &o.findings[0];
    assert_eq!(f.pattern, "// in: %a0:32\nand.b32 %t0, %a0, 0xff;\nand.b32 %t1, %a0, 0xff00;\nor.b32 %t2, %t0, %t1;\n");
    assert_eq!(report::candidate_text(&f.found.candidate), "and.b32 %t0, %a0, 0xffff;\n");
    assert_eq!((f.found.cost_before, f.found.cost_after, f.count, f.files), (3, 1, 1, 1));
    // The add/xor DAG (two instructions over three inputs) was searched and
    // nothing is reported for it.
    assert!(o.searched >= 4, "{}", report::summary(&o));
    assert!(o.findings.iter().all(|f| !f.pattern.contains("xor.b32")));

    // Independently of the search's own verification: the candidate computes the pattern.
    let pattern = ptx_hunt::dag::Dag {
        nodes: f.found.candidate.nodes.clone(),
        inputs: f.found.candidate.inputs.clone(),
    };
    let planted = Dag {
        nodes: vec![
            Node::Input { index: 0, width: 32 },
            Node::Const { width: 32, bits: 0xff },
            Node::Op { shape: shape("and.b32"), kids: vec![0, 1] },
            Node::Const { width: 32, bits: 0xff00 },
            Node::Op { shape: shape("and.b32"), kids: vec![0, 3] },
            Node::Op { shape: shape("or.b32"), kids: vec![2, 4] },
        ],
        inputs: vec![32],
    };
    assert_eq!(planted.text(), f.pattern);
    assert!(same_values(&planted, &pattern));
    // And the check can fail: a different mask is told apart.
    let mut wrong = pattern.clone();
    wrong.nodes[1] = Node::Const { width: 32, bits: 0xfffe };
    assert!(!same_values(&planted, &wrong));
}

fn shape(head: &str) -> ptx_opt::engine::lang::Shape {
    ptx_opt::engine::lang::Shape::new(ptx_opt::engine::lang::template(head, 2).unwrap(), 32)
}
