//! A compiler back end's view of `ptx_ir`: build a kernel with the builder
//! and print its PTX. `cargo run -p ptx-opt --example build_kernel`
//!
//! The kernel writes `out[i] = i * scale + 7` for each thread's global index `i`.

use ptx_ir::ir::{Address, BuildError, Module, ModuleBuilder};
use ptx_ir::isa::ScalarType::{U32, U64};

/// The module: about as many lines as the PTX it prints.
pub fn build() -> Result<Module, BuildError> {
    let mut m = ModuleBuilder::new("8.0", "sm_80", 64);
    let mut k = m.entry("affine");
    let (out, scale) = (k.param(U64, "out"), k.param(U32, "scale"));
    let [p, addr] = k.regs(U64);
    let [s, tid, ntid, ctaid, i, v] = k.regs(U32);
    k.ins("ld.param.u64", (p, out))?;
    k.ins("ld.param.u32", (s, scale))?;
    k.ins("cvta.to.global.u64", [p, p])?;
    k.ins("mov.u32", (tid, k.sreg("%tid.x")?))?;
    k.ins("mov.u32", (ntid, k.sreg("%ntid.x")?))?;
    k.ins("mov.u32", (ctaid, k.sreg("%ctaid.x")?))?;
    k.ins("mad.lo.s32", [i, ctaid, ntid, tid])?;
    k.ins("mad.lo.s32", (v, i, s, 7))?;
    k.ins("mul.wide.u32", (addr, i, 4))?;
    k.ins("add.s64", [addr, addr, p])?;
    k.ins("st.global.u32", (Address::reg(addr), v))?;
    k.ins("ret", ())?;
    m.finish()
}

#[allow(dead_code)] // the suite includes this file for `build`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    print!("{}", ptx_print::print_module(&build()?));
    Ok(())
}
