//! The interpreter's barriers: a named barrier with a thread count that
//! one warp waits at while the other waits at another, and the reductions
//! of `bar.red`, checked against what the manual says each thread gets (on
//! both the fast and the reference path).

use ptx_ir::interp::{self, KernelArg, Launch, RunOutput};

const KERNEL: &str = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
	.shared .align 4 .b32 s[64];
	.reg .pred %p<4>;
	.reg .b32 %r<10>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r9, s;
	shl.b32 %r2, %r1, 2;
	add.s32 %r3, %r9, %r2;
	st.shared.u32 [%r3], %r1;
	setp.ge.u32 %p1, %r1, 32;
	@!%p1 bar.sync 1, 32;
	and.b32 %r5, %r1, 1;
	setp.ne.u32 %p2, %r5, 0;
	bar.red.popc.u32 %r6, 2, %p2;
	xor.b32 %r4, %r2, 128;
	add.s32 %r4, %r9, %r4;
	ld.shared.u32 %r4, [%r4];
	bar.red.and.pred %p3, 3, %p2;
	selp.u32 %r7, 1, 0, %p3;
	bar.red.or.pred %p3, 15, !%p2;
	selp.u32 %r8, 1, 0, %p3;
	mul.wide.u32 %rd2, %r1, 16;
	add.s64 %rd3, %rd1, %rd2;
	st.global.v4.u32 [%rd3], {%r4, %r6, %r7, %r8};
	ret;
}";

const THREADS: u32 = 64;

fn run(fast_path: bool) -> RunOutput {
    let parsed = ptx_ir::parse("barriers.ptx", KERNEL.as_bytes()).unwrap();
    let mut launch = Launch::new("k", [1, 1, 1], [THREADS, 1, 1]);
    launch.buffers.push(vec![0; THREADS as usize * 16]);
    launch.args = vec![KernelArg::Buffer(0)];
    let run = if fast_path { interp::run } else { interp::run_without_fast_path };
    run(&parsed.module, &parsed.source_map, "barriers.ptx", KERNEL.as_bytes(), &launch).unwrap()
}

#[test]
fn named_barriers_and_reductions_give_each_thread_what_the_manual_says() {
    let out = run(true);
    assert_eq!(out, run(false));
    let words: Vec<u32> = out.buffers[0].bytes.chunks(4).map(|b| u32::from_le_bytes(b.try_into().unwrap())).collect();
    let odd = (0..THREADS).filter(|t| t % 2 == 1).count() as u32;
    for tid in 0..THREADS {
        let got = &words[4 * tid as usize..4 * tid as usize + 4];
        // Each thread reads what the other warp's thread stored before the barrier;
        // popc of the odd threads; `and` of "odd" (false); `or` of "even" (true).
        assert_eq!(got, [tid ^ 32, odd, 0, 1], "thread {tid}");
    }
}
