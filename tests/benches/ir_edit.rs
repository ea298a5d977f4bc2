//! Editing costs of the IR API on large bodies: a cursor sweep that gives
//! every instruction a fresh result register (new_reg + for_each_def_mut +
//! a copy inserted after), at 10k and 100k instructions. Linear work shows
//! as a 10x ratio between the two sizes.
//! `cargo bench -p ptx-tests --bench ir_edit`

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ptx_ir::ir::{FuncKind, Function, Instruction, Operand};
use ptx_ir::isa::{Mod, Opcode, ScalarType};

fn body(n: usize) -> Function {
    let mut f = Function::new(FuncKind::Entry, "big");
    let r = f.new_reg(ScalarType::U32);
    let body = f.body.as_mut().unwrap();
    for k in 0..n as i64 {
        body.push(Instruction::new(Opcode::ADD, &[Mod::U32], [Operand::reg(r), Operand::reg(r), k.into()]).unwrap().into());
    }
    // A fresh function: its names are scanned on the first new_reg of the sweep.
    f.fresh = Default::default();
    f
}

fn sweep(f: &mut Function) {
    let mut cur = f.cursor();
    while let Some(ins) = cur.next_instruction() {
        let d = ins.defs()[0];
        let t = cur.new_reg(ScalarType::U32);
        cur.instruction_mut().unwrap().for_each_def_mut(|r| *r = t);
        cur.insert_after(Instruction::new(Opcode::MOV, &[Mod::U32], [Operand::reg(d), Operand::reg(t)]).unwrap());
        cur.next();
    }
}

fn ir_edit(c: &mut Criterion) {
    let mut g = c.benchmark_group("cursor sweep with fresh registers");
    g.sample_size(10);
    for n in [10_000, 100_000] {
        g.throughput(Throughput::Elements(n as u64));
        let f = body(n);
        g.bench_function(format!("{n} instructions"), |b| b.iter_batched(|| f.clone(), |mut f| sweep(&mut f), BatchSize::LargeInput));
    }
    g.finish();
}

criterion_group!(benches, ir_edit);
criterion_main!(benches);
