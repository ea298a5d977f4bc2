//! Tests of asynchronous copies, mbarriers and the cluster of one CTA on
//! small kernels (the spec tests `tests/spec/run/async-*`, `mbarrier-*`
//! cover the main paths through `ptx-opt run`).

use super::{run, KernelArg, Launch, RunError};

const HEAD: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

/// Runs `k(.param .u64 buf)` on one CTA of `block` threads with a buffer of
/// 64 words `in[i] = i + 1`; the buffer's words after the run.
fn go(body: &str, block: u32) -> Result<Vec<u32>, RunError> {
    let text = format!("{HEAD}.visible .entry k(.param .u64 buf)\n{{\n\t.shared .align 16 .b8 sh[256];\n\t.shared .align 8 .b64 bar;\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<16>;\n\tld.param.u64 %rd1, [buf];\n\tmov.u32 %r1, %tid.x;\n{body}\n\tret;\n}}\n");
    let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
    let mut l = Launch::new("k", [1, 1, 1], [block, 1, 1]);
    l.buffers.push((1..=64u32).flat_map(|x| x.to_le_bytes()).collect());
    l.args.push(KernelArg::Buffer(0));
    l.max_steps = 1_000_000;
    let out = run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)?;
    Ok(out.buffers[0].bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect())
}

fn undefined(r: Result<Vec<u32>, RunError>) -> String {
    match r {
        Err(RunError::Undefined { message, .. }) => message,
        other => panic!("expected undefined behaviour, got {other:?}"),
    }
}

/// §9.7.9.25.1: modifying the source before the copy completes is undefined.
#[test]
fn writing_the_source_of_a_copy_in_flight_is_reported() {
    let m = undefined(go("\tcp.async.ca.shared.global [sh], [%rd1], 16;\n\tst.global.u32 [%rd1+8], %r1;\n\tcp.async.wait_all;", 1));
    assert!(m.contains("writes 4 byte(s) of global memory") && m.contains("the source of `cp.async`"), "{m}");
    // After the wait the source is free again.
    let out = go("\tcp.async.ca.shared.global [sh], [%rd1], 16;\n\tcp.async.wait_all;\n\tst.global.u32 [%rd1+8], %r1;\n\tld.shared.u32 %r2, [sh+8];\n\tst.global.u32 [%rd1+4], %r2;", 1).unwrap();
    assert_eq!(&out[..3], &[1, 3, 0]);
}

/// §9.7.9.25.3.2: two copies of one group to the same bytes are undefined.
#[test]
fn overlapping_copies_in_flight_are_reported() {
    let m = undefined(go("\tcp.async.ca.shared.global [sh], [%rd1], 8;\n\tcp.async.ca.shared.global [sh+4], [%rd1+16], 4;\n\tcp.async.wait_all;", 1));
    assert!(m.contains("the destination of `cp.async`"), "{m}");
}

/// A thread's copies that no wait completes before it exits never become
/// visible to the others: another thread reading them is reported.
#[test]
fn copies_of_an_exited_thread_stay_in_flight() {
    let body = "\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra L;\n\tcp.async.ca.shared.global [sh], [%rd1], 4;\n\texit;\nL:\n\tbar.sync 0, 32;\n\tld.shared.u32 %r2, [sh];";
    let m = undefined(go(body, 2));
    assert!(m.contains("issued by thread ctaid (0,0,0) tid (0,0,0)"), "{m}");
}

/// §9.7.13.15: only mbarrier instructions may touch a valid mbarrier object.
#[test]
fn ordinary_accesses_to_an_mbarrier_are_reported() {
    let m = undefined(go("\tmbarrier.init.shared.b64 [bar], 1;\n\tld.shared.u32 %r2, [bar+4];", 1));
    assert!(m.contains("hold the mbarrier object"), "{m}");
    // After mbarrier.inval the bytes are memory again.
    go("\tmbarrier.init.shared.b64 [bar], 1;\n\tmbarrier.inval.shared.b64 [bar];\n\tst.shared.u32 [bar+4], 1;", 1).unwrap();
    let m = undefined(go("\tmbarrier.arrive.shared.b64 %rd2, [bar];", 1));
    assert!(m.contains("no mbarrier object is initialized"), "{m}");
}

/// §9.7.13.15.4: a phase must be observed complete (a test returning True)
/// before an arrive-on of the next phase; counts beyond the pending count
/// and init of a valid object are undefined.
#[test]
fn mbarrier_phase_rules_are_checked() {
    let m = undefined(go("\tmbarrier.init.shared.b64 [bar], 1;\n\tmbarrier.arrive.shared.b64 %rd2, [bar];\n\tmbarrier.arrive.shared.b64 %rd2, [bar];", 1));
    assert!(m.contains("before any test_wait/try_wait returned True for phase 0"), "{m}");
    go("\tmbarrier.init.shared.b64 [bar], 1;\n\tmbarrier.arrive.shared.b64 %rd2, [bar];\n\tmbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n\tmbarrier.arrive.shared.b64 %rd2, [bar];", 1).unwrap();
    let m = undefined(go("\tmbarrier.init.shared.b64 [bar], 2;\n\tmbarrier.arrive.shared.b64 %rd2, [bar], 3;", 1));
    assert!(m.contains("count 3") && m.contains("pending arrival count is 2"), "{m}");
    let m = undefined(go("\tmbarrier.init.shared.b64 [bar], 2;\n\tmbarrier.init.shared.b64 [bar], 2;", 1));
    assert!(m.contains("mbarrier.inval it first"), "{m}");
    // A state two phases old.
    let body = "\tmbarrier.init.shared.b64 [bar], 1;\n\tmbarrier.arrive.shared.b64 %rd2, [bar];\n\tmbarrier.test_wait.shared.b64 %p1, [bar], %rd2;\n\tmbarrier.arrive.shared.b64 %rd3, [bar];\n\tmbarrier.test_wait.shared.b64 %p1, [bar], %rd3;\n\tmbarrier.test_wait.shared.b64 %p1, [bar], %rd2;";
    assert!(undefined(go(body, 1)).contains("neither the current phase 2 nor the preceding one"));
}

/// expect_tx / complete_tx (§9.7.13.15.5): the phase completes when both the
/// pending count and the tx-count are zero; arrive_drop lowers the expected
/// count of later phases.
#[test]
fn tx_count_and_arrive_drop() {
    // Thread 0: expect 32 bytes, arrive; thread 1 completes 16 + 16 bytes.
    // The phase completes only after the second complete_tx.
    let body = "\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra T1;\n\tmbarrier.init.shared.b64 [bar], 2;\nT1:\n\tbar.sync 0;\n\t@%p1 bra C;\n\tmbarrier.arrive.expect_tx.shared.b64 %rd2, [bar], 32;\n\tbra W;\nC:\n\tmbarrier.complete_tx.shared.b64 [bar], 16;\n\tmbarrier.test_wait.parity.shared.b64 %p2, [bar], 0;\n\tselp.u32 %r3, 1, 0, %p2;\n\tst.global.u32 [%rd1], %r3;\n\tmbarrier.complete_tx.shared.b64 [bar], 16;\n\tmbarrier.arrive_drop.shared.b64 %rd2, [bar];\nW:\n\tmbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;\n\t@!%p2 bra W;\n\t@%p1 bra E;\n\tmbarrier.arrive.shared.b64 %rd3, [bar];\n\tmbarrier.test_wait.parity.shared.b64 %p3, [bar], 1;\n\tselp.u32 %r4, 1, 0, %p3;\n\tst.global.u32 [%rd1+4], %r4;\nE:";
    let out = go(body, 2).unwrap();
    // The first test ran with 16 bytes outstanding (incomplete); the second
    // phase expects 1 arrival after the drop: thread 0's completes it.
    assert_eq!(&out[..2], &[0, 1]);
}

/// §9.7.13.3 with a cluster of one CTA: the n-th wait waits for every
/// thread's n-th arrive; mapa maps to rank 0 only.
#[test]
fn cluster_barrier_and_mapa() {
    // Thread 1 stores, arrives; thread 0 arrives, waits, then reads it.
    let body = "\tsetp.ne.u32 %p1, %r1, 0;\n\t@%p1 bra T1;\n\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\n\tld.shared.u32 %r2, [sh];\n\tst.global.u32 [%rd1], %r2;\n\tbra E;\nT1:\n\tst.shared.u32 [sh], 77;\n\tbarrier.cluster.arrive;\n\tbarrier.cluster.wait;\nE:\n\tbarrier.cluster.arrive.relaxed;\n\tbarrier.cluster.wait;";
    assert_eq!(go(body, 2).unwrap()[0], 77);
    let m = undefined(go("\tbarrier.cluster.wait;", 1));
    assert!(m.contains("without a barrier.cluster.arrive"), "{m}");
    let out = go("\tmov.u32 %r2, sh;\n\tmapa.shared::cluster.u32 %r3, %r2, 0;\n\tsub.u32 %r4, %r3, %r2;\n\tst.global.u32 [%rd1], %r4;", 1).unwrap();
    assert_eq!(out[0], 0);
    assert!(undefined(go("\tmov.u32 %r2, sh;\n\tmapa.shared::cluster.u32 %r3, %r2, 1;", 1)).contains("outside the cluster of 1 CTA"));
}

/// A bulk copy to global memory that the thread never waits for is
/// performed when the CTA ends.
#[test]
fn bulk_copies_to_global_complete_at_the_end() {
    let out = go("\tst.shared.v4.u32 [sh], {%r1, %r1, %r1, %r1};\n\tfence.proxy.async.shared::cta;\n\tcp.async.bulk.global.shared::cta.bulk_group [%rd1+16], [sh], 16;\n\tcp.async.bulk.commit_group;", 1).unwrap();
    assert_eq!(&out[3..9], &[4, 0, 0, 0, 0, 9]);
}

/// Hints and grid dependences run as no-ops (a launch has no prerequisite
/// grids); `setmaxnreg` with a count the manual rules out (§9.7.19.5: 24 to
/// 256, a multiple of 8) is undefined.
#[test]
fn hints_and_grid_dependences_change_nothing() {
    let text = |count: u32| {
        format!(".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 buf)\n{{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [buf];\n\tgriddepcontrol.wait;\n\tsetmaxnreg.inc.sync.aligned.u32 {count};\n\tapplypriority.global.L2::evict_normal [%rd1], 128;\n\tld.global.u32 %r1, [%rd1];\n\tadd.u32 %r1, %r1, 1;\n\tst.global.u32 [%rd1], %r1;\n\tgriddepcontrol.launch_dependents;\n\tret;\n}}\n")
    };
    let go = |count: u32| {
        let text = text(count);
        let parsed = crate::parse("k.ptx", text.as_bytes()).unwrap_or_else(|d| panic!("{d}\n{text}"));
        let mut l = Launch::new("k", [1, 1, 1], [128, 1, 1]);
        l.buffers.push(vec![0; 128]);
        l.args.push(KernelArg::Buffer(0));
        run(&parsed.module, &parsed.source_map, "k.ptx", text.as_bytes(), &l)
    };
    let out = go(232).unwrap();
    // 128 threads each added one (the increments race; one of them wins).
    assert!(u32::from_le_bytes(out.buffers[0].bytes[..4].try_into().unwrap()) >= 1);
    match go(230) {
        Err(RunError::Undefined { message, .. }) => assert!(message.contains("multiple of 8"), "{message}"),
        other => panic!("expected undefined behaviour, got {other:?}"),
    }
}
