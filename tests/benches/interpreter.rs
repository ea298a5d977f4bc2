//! Reference-interpreter speed, in executed instructions per second, on
//! three kinds of kernel: an integer loop, a shared-memory reduction with
//! barriers, and the differential harness's generated kernels; each from
//! its text (parse and run), from a module parsed once (layout,
//! pre-decoding and run) and from a module prepared once (run only).
//! `cargo bench -p ptx-tests --bench interpreter`

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ptx_ir::interp::{self, KernelArg, Launch};

/// Each thread runs `n` iterations of a 5-instruction integer loop.
const LOOP: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, 0;
	mov.u32 %r4, 0;
L:
	mad.lo.s32 %r4, %r4, 3, %r3;
	xor.b32 %r4, %r4, %r2;
	add.s32 %r3, %r3, 1;
	setp.lt.u32 %p1, %r3, %r1;
	@%p1 bra L;
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r4;
	ret;
}";

/// A 256-thread tree reduction in shared memory, 8 levels of `bar.sync`.
const REDUCE: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 in, .param .u64 out)
{
	.shared .align 4 .b8 buf[1024];
	.reg .pred %p<3>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [in];
	ld.param.u64 %rd2, [out];
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd3, %r1, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.f32 %r4, [%rd4];
	mov.u32 %r5, buf;
	shl.b32 %r6, %r1, 2;
	add.s32 %r7, %r5, %r6;
	st.shared.u32 [%r7], %r4;
	bar.sync 0;
	mov.u32 %r8, 128;
LEVEL:
	setp.ge.u32 %p1, %r1, %r8;
	@%p1 bra SKIP;
	shl.b32 %r9, %r8, 2;
	add.s32 %r10, %r7, %r9;
	ld.shared.f32 %r11, [%r10];
	ld.shared.f32 %r12, [%r7];
	add.f32 %r12, %r12, %r11;
	st.shared.f32 [%r7], %r12;
SKIP:
	bar.sync 0;
	shr.u32 %r8, %r8, 1;
	setp.ne.s32 %p2, %r8, 0;
	@%p2 bra LEVEL;
	setp.ne.s32 %p1, %r1, 0;
	@%p1 bra END;
	ld.shared.f32 %r13, [buf];
	st.global.f32 [%rd2], %r13;
END:
	ret;
}";

/// A kernel's text, and the launch it runs with.
struct Case {
    text: String,
    launch: Launch,
}

fn parse(text: &str) -> ptx_ir::Parsed {
    ptx_ir::parse("bench.ptx", text.as_bytes()).unwrap()
}

/// Runs a parsed kernel (laying it out and pre-decoding it first, as every
/// run does); gives the instructions executed.
fn run_parsed(p: &ptx_ir::Parsed, c: &Case) -> u64 {
    interp::run(&p.module, &p.source_map, "bench.ptx", c.text.as_bytes(), &c.launch).unwrap().steps
}

/// The three benchmarks: a name and its kernels.
fn cases() -> Vec<(&'static str, Vec<Case>)> {
    let mut l = Launch::new("k", [1, 1, 1], [64, 1, 1]);
    l.buffers.push(vec![0; 64 * 4]);
    l.args = vec![KernelArg::Buffer(0), KernelArg::Scalar { ty: ptx_ir::isa::ScalarType::U32, bits: 2000 }];
    let int_loop = vec![Case { text: LOOP.to_string(), launch: l }];

    let mut l = Launch::new("k", [1, 1, 1], [256, 1, 1]);
    l.buffers = vec![vec![0; 256 * 4], vec![0; 4]];
    l.args = vec![KernelArg::Buffer(0), KernelArg::Buffer(1)];
    let reduce = vec![Case { text: REDUCE.to_string(), launch: l }];

    let generated = (0..20)
        .map(|s| {
            let k = ptx_tests::gen::kernel(s, &ptx_tests::gen::GenOptions::default());
            let launch = ptx_tests::differential::launch_for(&k.spec, &ptx_tests::differential::SHAPES[0], 1);
            Case { text: k.text, launch }
        })
        .collect();
    vec![("integer loop, 64 threads", int_loop), ("shared reduction, 256 threads", reduce), ("20 generated kernels, 32 threads", generated)]
}

/// Each benchmark timed three times: parsing its text and running it, as a
/// caller with only the text does; running a module parsed once (the
/// interpreter's own speed: layout, pre-decoding and execution); and
/// running a module prepared once (execution only, as the differential
/// harness runs a module on several launches).
fn interpreter(c: &mut Criterion) {
    let cases = cases();
    let mut g = c.benchmark_group("interpreter (elements = executed instructions)");
    g.sample_size(10);
    for (name, kernels) in &cases {
        timed(&mut g, name, || kernels.iter().map(|k| run_parsed(&parse(&k.text), k)).sum());
    }
    g.finish();
    let mut g = c.benchmark_group("interpreter, parsed once (elements = executed instructions)");
    g.sample_size(10);
    for (name, kernels) in &cases {
        let parsed: Vec<_> = kernels.iter().map(|k| parse(&k.text)).collect();
        timed(&mut g, name, || kernels.iter().zip(&parsed).map(|(k, p)| run_parsed(p, k)).sum());
    }
    g.finish();
    let mut g = c.benchmark_group("interpreter, prepared once (elements = executed instructions)");
    g.sample_size(10);
    for (name, kernels) in &cases {
        let parsed: Vec<_> = kernels.iter().map(|k| parse(&k.text)).collect();
        let prepared: Vec<_> = kernels.iter().zip(&parsed).map(|(k, p)| interp::Prepared::new(&p.module, &p.source_map, "bench.ptx", k.text.as_bytes(), k.launch.buffers.len()).unwrap()).collect();
        timed(&mut g, name, || kernels.iter().zip(&prepared).map(|(k, p)| p.run(&k.launch).unwrap().steps).sum());
    }
    g.finish();
}

/// Times `all` (which runs a benchmark's kernels and gives the instructions
/// they executed) under `name`, counting those instructions as elements.
fn timed(g: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>, name: &str, all: impl Fn() -> u64) {
    g.throughput(Throughput::Elements(all()));
    g.bench_function(name, |b| b.iter(&all));
}

criterion_group!(benches, interpreter);
criterion_main!(benches);
