//! Default tensor maps for the corpus survey's generic launch (a default of
//! this test harness only: `ptx-opt run` asks for every map with
//! `--arg tmap:...`).
//!
//! A kernel parameter `.b8 name[128]` is taken for a tensor map when the
//! kernel names it in a tensor instruction's `[tensorMap, coords]` operand
//! or in `prefetch.tensormap`, or takes its address (`mov`) in a kernel
//! that has tensor instructions. It gets a map over a fresh 64 KiB buffer of
//! random bytes, of the rank of the first tensor instruction (2 when none
//! says): f16 elements, 128 in dimension 0 and 32 768 in all, a box row of
//! 64 elements (128 bytes, 128B swizzle, the usual GEMM tile) and as many
//! rows as the kernel's first immediate `expect_tx` byte count asks for
//! (8 when it gives none).

use crate::gen::Choices;
use ptx_ir::interp::tensor::{rank_of, ElemType, Swizzle, TensorMap};
use ptx_ir::interp::{KernelArg, Launch};
use ptx_ir::ir::{FuncKind, Function, Item, Module, Operand, Stmt};
use ptx_ir::isa::{Mod, Opcode};

fn is_tensor_instruction(op: Opcode) -> bool {
    matches!(op, Opcode::CP_ASYNC_BULK_TENSOR | Opcode::CP_REDUCE_ASYNC_BULK_TENSOR | Opcode::CP_ASYNC_BULK_PREFETCH_TENSOR)
}


/// Is parameter `name` used as a tensor map in `f`?
fn used_as_map(f: &Function, name: &str) -> bool {
    let names_it = |o: &Operand| match o {
        Operand::Sym(s) => &*s.name == name,
        Operand::Addr(a) => matches!(&a.base, ptx_ir::ir::AddrBase::Sym(n) if &**n == name),
        _ => false,
    };
    let mut has_tensor = false;
    let mut address_taken = false;
    for s in f.body.iter().flatten() {
        let Stmt::Instr(ins) = s else { continue };
        if is_tensor_instruction(ins.opcode) {
            has_tensor = true;
            if ins.operands.iter().any(|o| matches!(o, Operand::AddrList(v) if v.first().is_some_and(names_it))) {
                return true;
            }
        }
        if ins.opcode == Opcode::PREFETCH && ins.has(Mod::TENSORMAP) && ins.operands.iter().any(names_it) {
            return true;
        }
        if ins.opcode == Opcode::MOV && ins.operands.iter().any(names_it) {
            address_taken = true;
        }
    }
    has_tensor && address_taken
}

/// Adds default maps to a generic launch of `kernel` (see the module doc).
pub fn bind_default_tensor_maps(module: &Module, kernel: &str, launch: &mut Launch) {
    let Some(kf) = module.items.iter().find_map(|i| match i {
        Item::Func(f) if f.kind == FuncKind::Entry && &*f.name == kernel && f.body.is_some() => Some(f),
        _ => None,
    }) else {
        return;
    };
    let mut rank = None;
    let mut tx_bytes = None;
    for s in kf.body.iter().flatten() {
        let Stmt::Instr(ins) = s else { continue };
        if is_tensor_instruction(ins.opcode) && rank.is_none() {
            rank = rank_of(ins);
        }
        let expects = (matches!(ins.opcode, Opcode::MBARRIER_ARRIVE | Opcode::MBARRIER_ARRIVE_DROP) && ins.has(Mod::EXPECT_TX)) || ins.opcode == Opcode::MBARRIER_EXPECT_TX;
        if let (true, None, Some(Operand::Imm(ptx_ir::ir::Imm::Int(v)))) = (expects, tx_bytes, ins.operands.last()) {
            tx_bytes = Some(v.value);
        }
    }
    let rank = rank.unwrap_or(2);
    let params = kf.params.iter().flatten().flat_map(|d| d.names.iter().map(move |n| (d, n)));
    for (k, (d, nm)) in params.enumerate() {
        let is_128_bytes = d.ty.bits() == 8 && d.vector.is_none() && nm.dims.len() == 1 && nm.dims[0] == Some(128);
        if k >= launch.args.len() || !is_128_bytes || !used_as_map(kf, &nm.name) {
            continue;
        }
        let dims: &[u64] = match rank {
            1 => &[32768],
            2 => &[128, 256],
            3 => &[128, 16, 16],
            4 => &[128, 8, 8, 4],
            _ => &[128, 4, 4, 4, 4],
        };
        let strides: Vec<u64> = (1..rank).map(|j| dims[..j].iter().product::<u64>() * 2).collect();
        let rows = tx_bytes.filter(|b| b % 128 == 0).map_or(8, |b| (b / 128).clamp(1, 256)).min(dims.get(1).copied().unwrap_or(1)) as u32;
        let mut box_dims = vec![64u32, rows];
        box_dims.truncate(rank);
        box_dims.resize(rank, 1);
        let mut map = TensorMap::new(ElemType::F16, dims, &strides, &box_dims);
        map.swizzle = Swizzle::B128;
        launch.buffers.push(Choices::seeded(1000 + launch.buffers.len() as u64).bytes(crate::corpus::BUFFER_BYTES));
        launch.args[k] = KernelArg::TensorMap { buffer: launch.buffers.len() - 1, offset: 0, map };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of a TMA kernel as nvcc writes it for a `__grid_constant__
    /// CUtensorMap`: the parameter's address taken, made generic, used by
    /// the copy; 2048 bytes expected on the mbarrier.
    const KERNEL: &str = ".version 8.0\n.target sm_90a\n.address_size 64
.visible .entry tma(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 x)
{
	.shared .align 1024 .b8 tile[2048];
	.shared .align 8 .b64 bar;
	.reg .pred %p<4>;
	.reg .b32 %r<10>;
	.reg .b64 %rd<10>;
	mov.b64 %rd1, tmap;
	cvta.param.u64 %rd2, %rd1;
	ld.param.u32 %r2, [x];
	mov.u32 %r3, 0;
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 0;
	@%p1 bra INITED;
	mbarrier.init.shared::cta.b64 [bar], 1;
INITED:
	bar.sync 0;
	@%p1 bra POLL;
	mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar], 2048;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [tile], [%rd2, {%r2, %r3}], [bar];
POLL:
	mbarrier.try_wait.parity.shared::cta.b64 %p2, [bar], 0;
	@!%p2 bra POLL;
	shl.b32 %r4, %r1, 2;
	mov.u32 %r5, tile;
	add.u32 %r5, %r5, %r4;
	ld.shared.u32 %r6, [%r5];
	ld.param.u64 %rd4, [out];
	mul.wide.u32 %rd5, %r4, 1;
	add.u64 %rd4, %rd4, %rd5;
	st.global.u32 [%rd4], %r6;
	ret;
}
";

    #[test]
    fn a_tma_kernel_gets_a_map_and_runs() {
        let parsed = ptx_ir::parse("tma.ptx", KERNEL.as_bytes()).unwrap();
        let params = crate::corpus::kernels(&parsed.module).into_iter().find(|(k, _)| k == "tma").unwrap().1;
        let launch = crate::corpus::generic_launch_in(&parsed.module, "tma", &params);
        let KernelArg::TensorMap { buffer, map, .. } = &launch.args[0] else { panic!("{:?}", launch.args[0]) };
        assert_eq!((*buffer, map.rank, map.box_dims[..2].to_vec(), map.box_bytes()), (1, 2, vec![64, 16], 2048));
        let out = ptx_ir::interp::run(&parsed.module, &parsed.source_map, "tma.ptx", KERNEL.as_bytes(), &launch).unwrap();
        // Thread 0 of the last CTA wrote word 0 of row 0 of the box at
        // (16, 0): unit 0 of row 0 is not swizzled, so elements 16 and 17.
        assert_eq!(out.buffers[0].bytes[..4], launch.buffers[1][32..36]);
    }
}
