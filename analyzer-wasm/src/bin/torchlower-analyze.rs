//! Development CLI: `torchlower-analyze FILE.py` prints the JSON report (`--export FILE.py`:
//! lowered as `torchlower export`'s crate); `torchlower-analyze --rules-md` prints
//! docs/rules.md; `--rules-json` the registry.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--rules-md" => {
            print!("{}", torchlower_analyzer::rules::rules_markdown());
            ExitCode::SUCCESS
        }
        [flag] if flag == "--rules-json" => {
            println!("{}", torchlower_analyzer::rules::registry_json());
            ExitCode::SUCCESS
        }
        [path] | [_, path] if !path.starts_with('-') && (args.len() == 1 || args[0] == "--export") => match std::fs::read(path) {
            Ok(bytes) => {
                let target = if args.len() == 2 { torchlower_analyzer::Target::Crate } else { torchlower_analyzer::Target::Extension };
                println!("{}", torchlower_analyzer::analyze_bytes_for(&bytes, path.as_bytes(), target).to_json_pretty());
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("torchlower-analyze: cannot read {path}: {err}");
                ExitCode::from(2)
            }
        },
        _ => {
            eprintln!("usage: torchlower-analyze [--export] FILE.py | --rules-md | --rules-json");
            ExitCode::from(2)
        }
    }
}
