//! Prints where the engine spends its time on a file (ignored: a tool).
//! `PTX_FILE=path cargo test --release -p ptx-opt --test engine_phases -- --ignored --nocapture`

#[test]
#[ignore]
fn phases() {
    let path = std::env::var("PTX_FILE").expect("PTX_FILE");
    let text = std::fs::read_to_string(&path).unwrap();
    let m = ptx_ir::parse_str(&text).unwrap();
    let ctx = ptx_opt::ModuleContext::of_module(&m);
    let config = ptx_opt::engine::Config { dialect: ctx.dialect, target: ptx_opt::rules::Target { sm: ctx.sm, ptx: (ctx.version.major, ctx.version.minor) }, limits: ptx_opt::engine::Limits::O2 };
    let mut t = [std::time::Duration::ZERO; 4];
    let start = std::time::Instant::now();
    for item in &m.items {
        if let ptx_ir::ir::Item::Func(f) = item {
            if let Some((_, r)) = ptx_opt::engine::optimize(f, &config) {
                for k in 0..4 {
                    t[k] += r.times[k];
                }
            }
        }
    }
    println!("total {:?}; build {:?} saturate {:?} extract {:?} emit {:?}", start.elapsed(), t[0], t[1], t[2], t[3]);
}
