//! The incremental database on a module of 1,000 functions: a cold run
//! (parse, analyse, optimize, print everything) against re-running after one
//! function's text changed. `cargo bench -p ptx-tests --bench incremental`
//! prints both times and their ratio (the goal is ≤ 1 %), for functions of
//! about 40 and about 120 instructions, at -O0 and at -O2.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ptx_opt::db::Database;
use ptx_opt::OptLevel;
use std::time::{Duration, Instant};

const FUNCTIONS: usize = 1000;

/// A function of about 40 instructions, plus 16 per `extra` block, with a
/// loop and a branch, like compiler output; `k` varies its constants.
fn function(i: usize, k: usize, extra: usize) -> String {
    let mut more = String::new();
    for j in 0..extra {
        more.push_str(&format!(
            "\tadd.s32 %r12, %r11, {j};\n\tmul.lo.s32 %r13, %r12, %r5;\n\tshr.u32 %r14, %r13, 3;\n\tand.b32 %r15, %r14, 1023;\n\tcvt.rn.f32.u32 %f6, %r15;\n\tfma.rn.f32 %f5, %f6, %f1, %f5;\n\tsetp.gt.f32 %p3, %f5, 0f42C80000;\n\tselp.f32 %f7, %f6, %f5, %p3;\n\tmul.wide.u32 %rd5, %r15, 4;\n\tadd.s64 %rd6, %rd2, %rd5;\n\tld.global.f32 %f6, [%rd6];\n\tadd.f32 %f5, %f5, %f6;\n\tmax.f32 %f5, %f5, %f7;\n\tst.global.f32 [%rd6], %f5;\n\txor.b32 %r11, %r11, %r15;\n\tadd.s32 %r11, %r11, 1;\n"
        ));
    }
    format!(
        ".visible .entry kernel_{i}(.param .u64 p, .param .u32 n)
{{
	.reg .pred %p<4>;
	.reg .b32 %r<24>;
	.reg .f32 %f<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [n];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.s32 %p1, %r5, %r1;
	@%p1 bra $L_{i}_done;
	cvta.to.global.u64 %rd2, %rd1;
	mul.wide.s32 %rd3, %r5, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f1, [%rd4];
	mov.u32 %r6, 0;
	mov.f32 %f2, 0f00000000;
$L_{i}_loop:
	cvt.rn.f32.s32 %f3, %r6;
	fma.rn.f32 %f2, %f1, %f3, %f2;
	mul.f32 %f4, %f2, 0f3F000000;
	add.s32 %r6, %r6, {k};
	and.b32 %r7, %r6, 255;
	shl.b32 %r8, %r7, 2;
	xor.b32 %r9, %r8, %r5;
	setp.lt.s32 %p2, %r6, 64;
	@%p2 bra $L_{i}_loop;
	add.f32 %f5, %f2, %f4;
	cvt.rzi.s32.f32 %r10, %f5;
	add.s32 %r11, %r10, %r9;
	st.global.f32 [%rd4], %f5;
	st.global.u32 [%rd4+4], %r11;
{more}$L_{i}_done:
	ret;
}}
"
    )
}

fn module(edited: usize, extra: usize) -> String {
    let mut s = String::from(".version 8.0\n.target sm_80\n.address_size 64\n");
    for i in 0..FUNCTIONS {
        s.push_str(&function(i, if i == FUNCTIONS / 2 { edited } else { 1 }, extra));
    }
    s
}

fn incremental(c: &mut Criterion) {
    for level in [OptLevel::O0, OptLevel::O2] {
        for (extra, label) in [(0, "~40"), (5, "~120")] {
            run(c, level, extra, label);
        }
    }
}

fn run(c: &mut Criterion, level: OptLevel, extra: usize, label: &str) {
    let texts = [module(1, extra), module(2, extra)];
    let mut g = c.benchmark_group(format!("1000 functions of {label} instructions at {level:?}"));
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("cold: parse, analyse, optimize, print", |b| {
        b.iter_batched(Database::default, |mut db| {
            let f = db.add_file("m.ptx", &texts[0], level);
            db.printed(f).unwrap().len()
        }, BatchSize::PerIteration)
    });
    let mut db = Database::default();
    let file = db.add_file("m.ptx", &texts[0], level);
    db.printed(file).unwrap();
    // The edit as an editor reports it: one constant of the middle function.
    let at = texts[0].find(&format!("kernel_{}(", FUNCTIONS / 2)).unwrap();
    let at = at + texts[0][at..].find("add.s32 %r6, %r6, ").unwrap() + "add.s32 %r6, %r6, ".len();
    let mut which = 0;
    let mut edit = |db: &mut Database| {
        which ^= 1;
        db.edit(file, at..at + 1, if which == 1 { "2" } else { "1" }).unwrap();
        db.printed_pieces(file).unwrap().len()
    };
    g.bench_function("one function edited", |b| b.iter(|| edit(&mut db)));
    g.bench_function("one function edited, whole text given", |b| {
        let mut w = 0;
        b.iter(|| {
            w ^= 1;
            db.set_text(file, &texts[w]);
            db.printed_pieces(file).unwrap().len()
        })
    });
    g.finish();

    // The ratio, measured here in one run (criterion's figures above are the detailed ones).
    let cold = median(|| {
        let mut db = Database::default();
        let f = db.add_file("m.ptx", &texts[0], level);
        db.printed_pieces(f).unwrap().len();
    });
    db.set_text(file, &texts[0]);
    let edit = median(|| {
        edit(&mut db);
    });
    println!(
        "incremental at {level:?}, 1000 functions of {label} instructions: cold {:.2} ms, one function edited {:.3} ms: {:.2} % of cold",
        ms(cold),
        ms(edit),
        100.0 * edit.as_secs_f64() / cold.as_secs_f64()
    );
}

fn median(mut f: impl FnMut()) -> Duration {
    let mut v: Vec<Duration> = (0..9)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    v.sort();
    v[4]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

criterion_group!(benches, incremental);
criterion_main!(benches);
