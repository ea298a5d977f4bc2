//! sass-costs: regenerates the SASS cost table `ptx-opt/src/cost/sass_costs.tsv`
//! (see `ptx-opt/src/cost/README.md`).
//!
//! ```text
//! cargo run --release -p ptx-tests --bin sass-costs -- [--family sm_80]... [--jobs N] [--out PATH] [--check] [--list-rejected]
//! ```
//!
//! Without `--family` every family is measured; with it only those columns
//! are replaced. `--check` writes nothing and exits 1 when the measurements
//! differ from the file. `--list-rejected` prints, per family, the heads
//! ptxas rejects and its message.

use ptx_opt::cost::Table;
use ptx_tests::ptxas::tools;
use ptx_tests::sass_costs::{entries, measure_families, merge, FAMILIES};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: sass-costs [--family sm_NN]... [--jobs N] [--out PATH] [--check] [--list-rejected]";

fn main() -> ExitCode {
    let mut families: Vec<String> = Vec::new();
    let mut jobs = 2usize;
    let mut out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ptx-opt/src/cost/sass_costs.tsv");
    let mut check = false;
    let mut list_rejected = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        let r: Result<(), String> = match a.as_str() {
            "--family" => value("--family").map(|v| families.push(v)),
            "--jobs" => value("--jobs").and_then(|v| v.parse().map(|n| jobs = n).map_err(|_| format!("bad --jobs {v}"))),
            "--out" => value("--out").map(|v| out = PathBuf::from(v)),
            "--check" => {
                check = true;
                Ok(())
            }
            "--list-rejected" => {
                list_rejected = true;
                Ok(())
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ => Err(format!("unknown argument {a}")),
        };
        if let Err(e) = r {
            eprintln!("sass-costs: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    if families.is_empty() {
        families = FAMILIES.iter().map(|f| f.name.to_string()).collect();
    }
    let old_text = std::fs::read_to_string(&out).unwrap_or_default();
    let mut table = if old_text.is_empty() {
        Table { families: Vec::new(), rows: Vec::new() }
    } else {
        match Table::parse(&old_text) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("sass-costs: {}: {e}", out.display());
                return ExitCode::from(1);
            }
        }
    };
    let t = tools();
    let all = entries();
    let heads: std::collections::BTreeSet<&str> = all.iter().map(|e| e.head.as_str()).collect();
    eprintln!("sass-costs: {} instances, {} heads, families {}", all.len(), heads.len(), families.join(" "));
    let names: Vec<&str> = families.iter().map(String::as_str).collect();
    let start = std::time::Instant::now();
    let measured = match measure_families(&all, &names, jobs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sass-costs: {e}");
            return ExitCode::from(1);
        }
    };
    for (f, m) in &measured {
        eprintln!(
            "sass-costs: {f}: {} heads measured, {} rejected by ptxas, {} with instructions nvdisasm prints blank{}",
            m.cells.len(),
            m.rejected.len(),
            m.unprinted.len(),
            m.unprinted.first().map(|h| format!(" (e.g. {h})")).unwrap_or_default()
        );
        if list_rejected {
            for (h, why) in &m.rejected {
                println!("{f}\t{h}\t{why}");
            }
        }
    }
    eprintln!("sass-costs: measured in {:.1}s", start.elapsed().as_secs_f64());
    merge(&mut table, &measured);
    let comments = vec![
        "SASS instructions per PTX instruction head and target family, measured by".to_string(),
        "`cargo run --release -p ptx-tests --bin sass-costs` (see README.md beside this file):".to_string(),
        "ptxas -O3 on one micro-kernel per instruction, minus a baseline kernel without it.".to_string(),
        format!(
            "ptxas {} for sm_52..sm_90, ptxas {} for sm_100; nvdisasm {}. Cells: N/class, N (not disassembled), - (rejected).",
            t.ptxas_release, t.ptxas13_release, t.nvdisasm_release
        ),
    ];
    let text = table.to_tsv(&comments);
    if check {
        if text == old_text {
            eprintln!("sass-costs: {} is up to date", out.display());
            return ExitCode::SUCCESS;
        }
        let old = Table::parse(&old_text).unwrap_or(Table { families: Vec::new(), rows: Vec::new() });
        let mut shown = 0;
        for r in &table.rows {
            let before = old.row(&r.head).map(|o| o.cells.clone());
            if before.as_ref() != Some(&r.cells) && shown < 40 {
                eprintln!("  {}: {:?} -> {:?}", r.head, before, r.cells);
                shown += 1;
            }
        }
        eprintln!("sass-costs: {} differs from the measurements", out.display());
        return ExitCode::from(1);
    }
    // whole or not at all: a temporary file beside it, renamed into place
    let tmp = out.with_extension("tsv.tmp");
    if let Err(e) = std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, &out)) {
        let _ = std::fs::remove_file(&tmp);
        eprintln!("sass-costs: cannot write {}: {e}", out.display());
        return ExitCode::from(1);
    }
    eprintln!("sass-costs: wrote {} ({} heads)", out.display(), table.rows.len());
    ExitCode::SUCCESS
}
