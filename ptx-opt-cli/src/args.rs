//! The command line's grammar (clap derive): the subcommands and the
//! options of each. Nothing here reads a file; [`crate::command`] turns the
//! parsed arguments into work.
//!
//! `ptx-opt FILE -O2 -o out.ptx` optimizes without naming a subcommand: the
//! optimize options are flattened into the top level, and a subcommand name
//! counts only before any of them (`ptx-opt -O2 run` optimizes a file named
//! `run`; so does `ptx-opt -- run`).

use crate::diagnostics::{ColorChoice, ErrorFormat};
use crate::launch_args::{ArgSpec, Dims};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The whole command line.
#[derive(Parser, Debug)]
#[command(name = "ptx-opt", version, about = "Optimizes NVIDIA PTX, or runs a kernel on the reference interpreter.", args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Sub>,
    /// Without a subcommand: `ptx-opt [OPTIONS] [INPUT]...` is `ptx-opt opt`.
    #[command(flatten)]
    pub optimize: OptimizeArgs,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Sub {
    /// Optimize PTX (the default: `ptx-opt FILE` is `ptx-opt opt FILE`)
    Opt(OptimizeArgs),
    /// Run a kernel on the reference interpreter (no GPU) and print its buffers as JSON
    Run(RunArgs),
    /// Shrink a PTX file while a test command keeps succeeding on it (a test-case reducer)
    Reduce(ReduceArgs),
    /// Optimize a file in memory and compare the SASS ptxas makes of the input and the output, per kernel
    Check(CheckArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(CompletionsArgs),
}

/// Optimization level (`-O0` .. `-O3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Level {
    /// no optimization: parse, verify and print back
    #[value(name = "0")]
    O0,
    /// cheap clean-up: stack slots to registers, the e-graph engine with small limits, dead code, branches, declarations
    #[value(name = "1")]
    O1,
    /// every pass that never made a corpus kernel worse in SASS instructions or registers (the default)
    #[value(name = "2")]
    O2,
    /// -O2 with the largest limits and -O3-only rules, a 32-bit fast path for 64-bit division, ptxas free to unroll loops of promoted slots, passes to a fixed point
    #[value(name = "3")]
    O3,
}

impl Level {
    pub fn opt_level(self) -> ptx_opt::OptLevel {
        match self {
            Level::O0 => ptx_opt::OptLevel::O0,
            Level::O1 => ptx_opt::OptLevel::O1,
            Level::O2 => ptx_opt::OptLevel::O2,
            Level::O3 => ptx_opt::OptLevel::O3,
        }
    }
}

/// What the optimize command writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// PTX (the default)
    Ptx,
    /// graphviz: one subgraph per function, edges labeled taken/fall-through
    CfgDot,
}

/// How `--stats` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    /// a table
    Text,
    /// one JSON document
    Json,
}

/// How diagnostics are written (shared by every subcommand that reads PTX).
#[derive(Args, Clone, Copy, Debug, PartialEq)]
pub struct ReportArgs {
    /// Color diagnostics: auto = when stderr is a terminal and NO_COLOR is not set
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// human: the source line with a caret under the span; short: one `file:line:col: error: message` line;
    /// json: one JSON object per line (file, line, column, end_line, end_column, severity, message, notes)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ErrorFormat::Human)]
    pub error_format: ErrorFormat,
}

/// The options of the optimize command (`ptx-opt [opt]`).
#[derive(Args, Clone, Debug)]
pub struct OptimizeArgs {
    /// PTX files, or directories (every *.ptx under them, with --out-dir); `-` or nothing: standard input
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Write the output to PATH (default: standard output); written only on success: a file through a temporary file
    /// renamed into place (a link's target; its permissions kept), a device or pipe (`/dev/null`) written in place
    #[arg(short = 'o', value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Write each input's output under DIR, at its path relative to the directory given (a file given by name: its name);
    /// needed for several inputs or a directory
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub out_dir: Option<PathBuf>,
    /// Optimization level: -O0, -O1, -O2 (default), -O3
    #[arg(short = 'O', value_enum, value_name = "LEVEL", default_value_t = Level::O2)]
    pub level: Level,
    /// Run these passes, in order, instead of the level's pipeline (comma-separated; the limits of the -O level given)
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub passes: Option<Vec<String>>,
    /// Print every pass with a one-line description, and each level's pipeline
    #[arg(long)]
    pub list_passes: bool,
    /// Print each function after each pass (stderr)
    #[arg(long)]
    pub print_after_all: bool,
    /// Verify and re-parse each function after each pass; a failure names the pass and the function (exit 1)
    #[arg(long)]
    pub validate_after_all: bool,
    /// Print time per pass, summed over functions (stderr)
    #[arg(long)]
    pub time_passes: bool,
    /// Run only the first N pass×function steps (each step is logged on stderr: `BISECT: running pass (3) ...`)
    #[arg(long = "opt-bisect-limit", value_name = "N")]
    pub bisect_limit: Option<u64>,
    /// Per function: instructions and declared registers before and after, the passes that changed it
    /// and the e-graph rules that fired, with counts; a table (text, the default) or one JSON document (json),
    /// on stderr or in --stats-file
    #[arg(long, value_enum, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    pub stats: Option<StatsFormat>,
    /// Write the statistics to PATH instead of stderr (JSON unless --stats=text)
    #[arg(long, value_name = "PATH")]
    pub stats_file: Option<PathBuf>,
    /// A remark on stderr for each pass×function step that changed the function: the instructions removed
    /// (with their input lines) and added; FILTER (a regular expression or a pass name) picks the passes
    #[arg(long, value_name = "FILTER", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub remarks: Option<String>,
    /// A remark for each e-graph run whose rules fired but that kept the function as it was (and why)
    #[arg(long)]
    pub remarks_missed: bool,
    /// Parse and verify only; diagnostics on stderr, nothing written (so not with -o or --out-dir)
    #[arg(long, conflicts_with_all = ["no_verify", "output", "out_dir", "emit", "stats", "stats_file", "remarks", "remarks_missed"])]
    pub verify: bool,
    /// Skip the verifier (for input verified before); by default a verifier error stops before anything is written
    #[arg(long)]
    pub no_verify: bool,
    /// What to write
    #[arg(long, value_enum, value_name = "KIND", default_value_t = Emit::Ptx)]
    pub emit: Emit,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The options of `ptx-opt run`.
#[derive(Args, Clone, Debug, PartialEq)]
pub struct RunArgs {
    /// The PTX file (required; `-` for standard input)
    #[arg(value_name = "INPUT")]
    pub input: Option<String>,
    /// The kernel (.entry) to run
    #[arg(long, value_name = "NAME", required = true)]
    pub kernel: String,
    /// Blocks in the grid
    #[arg(long, value_name = "X[,Y[,Z]]", required = true)]
    pub grid: Dims,
    /// Threads in a block
    #[arg(long, value_name = "X[,Y[,Z]]", required = true)]
    pub block: Dims,
    /// One kernel parameter, in order (see SPECs below)
    #[arg(long = "arg", value_name = "SPEC")]
    pub args: Vec<ArgSpec>,
    /// Write the JSON to FILE instead of standard output (only on success)
    #[arg(long, value_name = "FILE")]
    pub out_json: Option<PathBuf>,
    /// Stop with an error after N instructions (all threads together)
    #[arg(long, value_name = "N", default_value_t = ptx_ir::interp::DEFAULT_MAX_STEPS)]
    pub max_steps: u64,
    /// Bytes of dynamic shared memory (for `.extern .shared` arrays)
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub dynamic_shared: usize,
    /// Run without verifying the module first
    #[arg(long)]
    pub no_verify: bool,
    /// Binds a module-scope .texref/.tex name to a texture (see SPECs below)
    #[arg(long = "texture", value_name = "NAME:SPEC")]
    pub textures: Vec<crate::texture_args::TextureOpt>,
    /// Binds a module-scope .surfref name to a surface
    #[arg(long = "surface", value_name = "NAME:SPEC")]
    pub surfaces: Vec<crate::texture_args::SurfaceOpt>,
    /// Binds a module-scope .samplerref name to a sampler
    #[arg(long = "sampler", value_name = "NAME:SPEC")]
    pub samplers: Vec<crate::texture_args::SamplerOpt>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The options of `ptx-opt reduce`.
#[derive(Args, Clone, Debug)]
pub struct ReduceArgs {
    /// The PTX file to shrink (valid PTX on which the test succeeds; `-` for standard input)
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// The interestingness test, a shell command run by `sh -c` for each candidate; exit status 0 means
    /// "still interesting". The candidate's path is appended as the last argument (`grep -q mul.wide`
    /// runs `grep -q mul.wide FILE`), unless CMD names it itself as `$0` (`ptxas \"$0\" 2>&1 | grep -q error`)
    #[arg(long = "test", value_name = "CMD", required = true)]
    pub test: String,
    /// Write the reduced PTX to OUT (required; not the input); written only on success
    #[arg(short = 'o', value_name = "OUT", required = true)]
    pub output: PathBuf,
    /// Kill a test run after SECS seconds (it then counts as not interesting)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
    /// Run the test at most N times (the check of the input included), then keep the smallest file found
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_tests: Option<u64>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// A positive number of seconds (`2`, `0.5`).
fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    let secs: f64 = s.trim().parse().map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(secs > 0.0 && secs.is_finite() && secs < 1e9) {
        return Err(format!("`{s}`: the time limit must be a positive number of seconds"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// The options of `ptx-opt check`.
#[derive(Args, Clone, Debug)]
pub struct CheckArgs {
    /// The PTX file (`-` for standard input)
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// Optimization level: -O0, -O1, -O2 (default), -O3
    #[arg(short = 'O', value_enum, value_name = "LEVEL", default_value_t = Level::O2)]
    pub level: Level,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// What `ptx-opt check --help` says after the options.
pub const CHECK_AFTER_HELP: &str = "\
Both files are assembled for the input's .target (a target before sm_75 for
sm_75), with -O3 unless the target says `debug`, relocatable when ptxas asks;
a function's SASS instructions are the 16-byte words of its .text section
without the trailing padding, its registers what `ptxas -v` says (as
tools/sass-report counts them).
ptxas: $PTXAS, ~/.cache/ptx-opt-tools/bin, ~/.cache/ptx-tools/bin, then PATH
(tools/setup-ptx-tools.sh installs it); $PTXAS13 or ptxas13 beside it for
.versions the first one refuses.
exit status: 0 success; 1 invalid input, ptxas missing, ptxas rejects the input,
or the output does not assemble (with ptxas's message); 2 usage error";

/// The options of `ptx-opt completions`.
#[derive(Args, Clone, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

/// What `ptx-opt --help` says after the options.
pub const AFTER_HELP: &str = "\
`ptx-opt --list-passes` lists the passes and each level's pipeline. Subcommands
are named first: `ptx-opt run --help`, `ptx-opt reduce --help`, `ptx-opt check --help`,
`ptx-opt completions bash`.
exit status: 0 success, 1 invalid input (any file failed), 2 usage error";

/// What `ptx-opt run --help` says after the options.
pub const RUN_AFTER_HELP: &str = "\
argument SPECs, one per kernel parameter, in order; each is checked against the
parameter's type before the run:
  TYPE:VALUE              a scalar: u32:1000, s64:-3, f32:0.5, f64:0x3ff0000000000000
                          (a hex value of a float type is its bit pattern); an
                          integer fits an integer or .bN parameter of its size, a
                          float a float or .bN parameter of its size
  buf:TYPE:COUNT=INIT     a pointer (a .u64/.s64/.b64 parameter) to a fresh global
                          buffer of COUNT elements; INIT is zeros, random:SEED
                          (integers: random bits; floats: uniform in [-1, 1)),
                          V1,V2,... (COUNT values) or file:PATH (the file holds
                          exactly the buffer's bytes)
  bytes:HEX               a parameter passed by value (a .b8 array, a struct):
                          its bytes in memory order, bytes:0100000002000000
  tex:SPEC, surf:SPEC, sampler:SPEC
                          a texture, surface or sampler handle (below)
  tmap:SPEC               a tensor map (a .param .align 64 .b8 NAME[128]
                          parameter) over a buffer argument (below)

textures, samplers and surfaces: a kernel parameter takes --arg tex:SPEC,
surf:SPEC or sampler:SPEC (a .texref/.surfref/.samplerref parameter, or a .u64
texture or surface object); a module-scope .texref/.tex, .surfref or
.samplerref name takes --texture NAME:SPEC, --surface NAME:SPEC or --sampler
NAME:SPEC. A SPEC is comma-separated items:
  format=F                texel format: CHANNEL[xN], CHANNEL one of u8 s8 u16 s16
                          u32 s32 f16 f32, N 1, 2 or 4 channels (f32x4, u8)
  size=W[xH[xD]]          texels per dimension: 1d, 2d or 3d
  layers=N                an array of N layers (for .a1d/.a2d)
  data=INIT               zeros (default), random:SEED, file:PATH, V1/V2/...
                          (channel values in memory order), or arg:K: the bytes
                          of buffer --arg K (0-based as in the output) — a
                          surface's stores then show in that buffer
  filter=nearest|linear   (default nearest)
  address=M[/M[/M]]       wrap, mirror, clamp (default), border, clamp_ogl;
                          one for every dimension or one per dimension
  border=R/G/B/A          the border colour (default 0/0/0/0)
  normalized              normalized coordinates ([0, 1) rather than [0, N))
  read=element|normalized integer texels read as integers (default) or as
                          floats in [0, 1] / [-1, 1]
A sampler takes filter=, address=, border= and unnormalized
(force_unnormalized_coords); a surface takes format=, size=, layers=, data=.
Example: --texture 'tex:format=f32,size=16x16,data=random:1,filter=linear'

tensor maps (cp.async.bulk.tensor ...): --arg tmap:SPEC, SPEC comma-separated:
  buf=K                   the buffer --arg K (0-based) holds the tensor
  type=T                  u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16 tf32
                          tf32.ftz
  dims=D0xD1...           elements per dimension, innermost first (1 to 5)
  strides=S1xS2...        byte strides of dimensions 1 and up, multiples of 16
                          (default: packed)
  box=B0xB1...            the bounding box, elements per dimension (1 to 256;
                          B0 times the element size a multiple of 16 bytes)
  estrides=E0xE1...       traversal strides (default 1; E0 must be 1)
  swizzle=none|32B|64B|128B, atomicity=16B|32B|64B, fill=zero|nan
  offset=BYTES            the tensor starts this far into the buffer
Example: --arg buf:f16:4096=random:1 --arg 'tmap:buf=0,type=f16,dims=64x64,box=64x8,swizzle=128B'

output: [{\"arg\": INDEX, \"type\": \"f32\", \"values\": [...], \"bits\": [...]}, ...], one
object per buffer argument. Integers are JSON numbers; finite floats are
numbers in the shortest form that reads back to the same value; non-finite
floats are the strings \"inf\", \"-inf\" and \"nan\" (any NaN: the payload is in
\"bits\", the hex bit patterns of float elements); \"inexact\" lists the elements
whose value the program does not determine exactly. When the kernel called
printf (vprintf), one more element follows: {\"printed\": [{\"thread\": \"ctaid
(0,0,0) tid (3,0,0)\", \"text\": \"...\"}, ...]}, in the order the interpreter
ran the calls (\"inexact\": true when the text shows a value the program does
not determine exactly).

exit status: 0 success; 1 invalid input, unsupported instruction,
out-of-bounds access, deadlock, trap, failed assert, undefined behaviour or
step limit; 2 usage error";

/// What `ptx-opt reduce --help` says after the options.
pub const REDUCE_AFTER_HELP: &str = "\
Each candidate is valid PTX (printed, parsed back and verified) written to a
file `ptx-opt-reduce-PID-N.ptx` in the current directory, which is also where
the test runs, and removed after the run. The test's standard streams are
closed. Examples:
  ptx-opt reduce big.ptx --test 'grep -q mul.wide.u32' -o small.ptx
  ptx-opt reduce big.ptx --test 'ptxas -arch=sm_80 \"$0\" -o /dev/null 2>&1 | grep -q \"Internal\"' -o small.ptx
  ptx-opt reduce big.ptx --test ./differs.sh --timeout 10 -o small.ptx

Progress is shown on stderr when it is a terminal; the last line sums up
(bytes, lines and instructions before and after, tests run, time).
exit status: 0 success; 1 invalid input, or the test does not succeed on the
input; 2 usage error (OUT is the input, an unknown option ...)";
