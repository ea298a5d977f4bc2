//! The `ptx-hunt` command: arguments, the hunt, the ranked report.

use ptx_hunt::{hunt, report, search::Config, harvest::Limits, Options};
use std::time::Duration;

const USAGE: &str = "usage: ptx-hunt [options] PATH...
  PATH               a directory (its .ptx files), a MANIFEST.tsv, @LIST (one path a line) or a .ptx file
  --max-insns N      instructions per harvested DAG (default 6)
  --max-inputs N     distinct inputs per DAG (default 3, at most 8)
  --min-count N      search patterns occurring at least N times (default 2)
  --limit N          findings to print (default 40)
  --target sm_NN     cost table and candidate set of this target (default sm_80)
  --jobs N           threads (default 2)
  --time-budget S    stop starting searches after S seconds (default 240)
  --verify N         random inputs a candidate is verified on (default 100000)
  --deep N           two-instruction candidates for the N most promising patterns (default 1000)
  --one-insn         candidates of at most one instruction for every pattern
  --json             JSON instead of text";

fn parse_num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse().map_err(|_| format!("{flag}: `{v}` is not a valid number"))
}

fn run() -> Result<(), String> {
    let mut opts = Options {
        files: Vec::new(),
        limits: Limits::default(),
        target: "sm_80".into(),
        jobs: 2,
        min_count: 2,
        time_budget: Duration::from_secs(240),
        search: Config::default(),
        deep: 1000,
    };
    let mut limit = 40;
    let mut json = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            "--max-insns" => opts.limits.max_insns = parse_num(&a, args.next())?,
            "--max-inputs" => opts.limits.max_inputs = parse_num(&a, args.next())?,
            "--min-count" => opts.min_count = parse_num(&a, args.next())?,
            "--limit" => limit = parse_num(&a, args.next())?,
            "--target" => opts.target = args.next().ok_or("--target needs a value")?,
            "--jobs" => opts.jobs = parse_num(&a, args.next())?,
            "--time-budget" => opts.time_budget = Duration::from_secs_f64(parse_num(&a, args.next())?),
            "--verify" => opts.search.verify = parse_num(&a, args.next())?,
            "--one-insn" => opts.search.two_insns = false,
            "--deep" => opts.deep = parse_num(&a, args.next())?,
            "--json" => json = true,
            s if s.starts_with('-') && s.len() > 1 => return Err(format!("unknown option `{s}`\n{USAGE}")),
            path => opts.files.extend(ptx_hunt::corpus::files_of(path)?),
        }
    }
    if opts.files.is_empty() {
        return Err(format!("no input files\n{USAGE}"));
    }
    if opts.limits.max_insns == 0 || !(1..=8).contains(&opts.limits.max_inputs) {
        return Err("--max-insns must be at least 1 and --max-inputs between 1 and 8".into());
    }
    if opts.jobs == 0 {
        return Err("--jobs must be at least 1".into());
    }
    if !opts.target.starts_with("sm_") {
        return Err(format!("--target: `{}` is not an sm_NN target", opts.target));
    }
    let outcome = hunt(&opts);
    if json {
        print!("{}", report::json(&outcome, limit));
    } else {
        println!("# {}", report::summary(&outcome));
        for s in &outcome.skipped {
            println!("# skipped: {}", s.lines().next().unwrap_or(""));
        }
        println!();
        print!("{}", report::text(&outcome, limit));
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("ptx-hunt: {e}");
        std::process::exit(2);
    }
}
