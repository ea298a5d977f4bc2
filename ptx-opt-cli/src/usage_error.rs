//! Usage errors as the command writes them: one line saying what is wrong
//! (with clap's "did you mean" suggestion when it has one), then where the
//! help is. Never the whole help: it would bury the one line that matters.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// `command: what is wrong` and `see `command --help``, for our own checks.
pub fn usage_line(command: &str, message: &str) -> String {
    format!("{command}: {message}\nsee `{command} --help`\n")
}

/// A clap error as [`usage_line`]: its first paragraph on one line, plus
/// the suggested argument, subcommand or value.
pub fn from_clap(command: &str, e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first: Vec<&str> = rendered.lines().take_while(|l| !l.trim().is_empty()).map(str::trim).collect();
    let mut line = first.join(" ");
    if let Some(rest) = line.strip_prefix("error: ") {
        line = rest.to_string();
    }
    let mut suggestions = Vec::new();
    for kind in [ContextKind::SuggestedArg, ContextKind::SuggestedSubcommand, ContextKind::SuggestedValue] {
        match e.get(kind) {
            Some(ContextValue::String(s)) => suggestions.push(format!("`{s}`")),
            Some(ContextValue::Strings(v)) => suggestions.extend(v.iter().map(|s| format!("`{s}`"))),
            _ => {}
        }
    }
    if !suggestions.is_empty() {
        line.push_str(&format!("; did you mean {}?", suggestions.join(" or ")));
    } else if e.kind() == ErrorKind::UnknownArgument {
        // `ptx-opt -- -weird.ptx` reads a file whose name starts with `-`.
        if let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) {
            if !arg.starts_with("--") {
                line.push_str(&format!(" (a file named `{arg}`: write `-- {arg}`)"));
            }
        }
    }
    usage_line(command, &line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct T {
        #[arg(long)]
        verify: bool,
        #[arg(long, required = false)]
        kernel: Option<String>,
    }

    #[test]
    fn one_line_with_the_suggestion() {
        let e = T::try_parse_from(["t", "--verif"]).unwrap_err();
        let s = from_clap("ptx-opt", &e);
        assert_eq!(s, "ptx-opt: unexpected argument '--verif' found; did you mean `--verify`?\nsee `ptx-opt --help`\n");
        let e = T::try_parse_from(["t", "--kernel"]).unwrap_err();
        let s = from_clap("ptx-opt run", &e);
        assert!(s.starts_with("ptx-opt run: a value is required for '--kernel <KERNEL>'"), "{s}");
        assert_eq!(s.lines().count(), 2, "{s}");
    }
}
