//! A function of 100,000 instructions goes through `-O2` and `-O3`: the
//! engine's node and iteration limits keep it finite, and the output
//! is a valid module (no timing is asserted; the bench figures are in the
//! closing notes).

/// A kernel whose body is a chain of `n` dependent integer instructions.
fn chain(n: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry big(.param .u64 p)\n{\n");
    s.push_str(&format!("\t.reg .b32 %r<{}>;\n\t.reg .b64 %rd<2>;\n\tld.param.u64 %rd1, [p];\n", n + 3));
    for k in 0..3 {
        s.push_str(&format!("\tld.global.u32 %r{k}, [%rd1+{}];\n", 4 * k));
    }
    let ops = ["add.s32", "xor.b32", "mul.lo.s32"];
    for k in 3..n + 3 {
        let op = ops[k % 3];
        if k % 7 == 0 {
            s.push_str(&format!("\t{op} %r{k}, %r{}, {};\n", k - 1, k % 97 + 1));
        } else {
            s.push_str(&format!("\t{op} %r{k}, %r{}, %r{};\n", k - 1, k - 3));
        }
    }
    s.push_str(&format!("\tst.global.u32 [%rd1], %r{};\n\tret;\n}}\n", n + 2));
    s
}

#[test]
fn a_function_of_100k_instructions_is_optimized_within_the_limits() {
    let text = chain(100_000);
    for level in [ptx_opt::OptLevel::O2, ptx_opt::OptLevel::O3] {
        let checked = ptx_opt::optimize_checked("big.ptx", text.as_bytes(), level).unwrap_or_else(|d| panic!("{:?}", d.first().map(|d| d.to_string())));
        let printed = ptx_print::print_module(&checked.module);
        let (again, _) = ptx_ir::verify::parse_and_verify("big.O.ptx", printed.as_bytes()).unwrap_or_else(|d| panic!("{level:?}: {:?}", d.first().map(|d| d.to_string())));
        let instructions: usize = again.module.items.iter().filter_map(|i| if let ptx_ir::ir::Item::Func(f) = i { Some(f.instructions().count()) } else { None }).sum();
        // Nothing here folds: every instruction feeds the stored value.
        assert!(instructions > 100_000, "{level:?}: {instructions} instructions");
    }
}
