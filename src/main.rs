//! storlab's entry point: parse, dispatch, print the error chain, exit.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = storlab::cli::Cli::parse();
    match storlab::commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            storlab::errln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
